"""Level-synchronous breadth-first exploration with exact, deterministic results.

Per level the frontier (sorted by fingerprint) is expanded by the level rule
(:class:`~modelcheck.level.LevelExpansion`), which applies the one level rule of
:mod:`modelcheck.level` (invariants first, then expansion; the first problem in
fingerprint order decides; spec errors are reported by the same rule). Successors
are de-duplicated per flush and against the visited set; at the end of the level
the candidates are merged, keeping for each new state the parent with the
smallest fingerprint (then the smallest action id). Counts, depth, coverage and
the counterexample therefore do not depend on the batch size or on timing.

Traces are rebuilt by replaying the spec along stored parents.

The run's rules (stops, progress, checkpoint commits, the result) are the run loop's
(:class:`~modelcheck.run.loop.RunLoop`); this module is its in-process backend
(:class:`_LocalLevels`): before every batch it checks Ctrl-C
(:mod:`modelcheck.interrupt`) and sizes the batch to the memory budget
(:mod:`modelcheck.budget`); before a level is stored it checks the memory the level
takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .budget import MemoryBudget, StopRun, default_memory_limit, format_size
from .checkpoint import Checkpoint, CheckpointError, Final, Snapshot
from .config import CheckConfig
from .interrupt import Interrupts
from .kernel import Checks, Kernel
from .level import (
    KeptWords,
    LevelExpansion,
    LevelFindings,
    TransitionHook,
    Verdict,
    initial_states,
    report,
)
from .level import rebuild_trace as rebuild_trace
from .library import Library
from .library import catalog as library_catalog
from .library import lookup as library_lookup
from .memtune import arrays_for, keeps_all_freed, release_free
from .result import Result, Violation
from .run.loop import Begin, Pulse, RunLoop, Successors
from .run.observers import Observer
from .run.progress import Progress
from .run.results import complete_result, coverage_table, new_result
from .spec import PredicateDecl, RoleKind, Spec
from .store import (
    NO_PARENT,
    FingerprintSet,
    LevelStore,
    StoredPath,
    act_dtype,
    concat_clear,
    dedupe_min,
    dedupe_min_inverse,
    empty_keys,
    keys_of,
    merge_runs_min,
    take_rows,
)

__all__ = ["Explorer", "Progress", "explore", "coverage_table", "rebuild_trace",
           "select_checks", "build_kernel", "new_result", "complete_result"]

#: the successor rows a batch of the local explorer is sized for (its states: this over
#: the most successors per state seen so far, 1.5 times over; before any is seen, over
#: the action instances). Smaller batches cost per-batch Python; larger ones peak memory
BATCH_SUCCESSORS = 1 << 20


def select_checks(spec: Spec, names: Sequence[str] | None,
                  library: Library | None = library_lookup
                  ) -> tuple[list[PredicateDecl], list[PredicateDecl]]:
    """The invariants and action properties to check: all of the spec's (``None``), or
    those named (an empty list checks none).

    Names are looked up in the spec, then with ``library`` (default: the registered
    predicate libraries, :mod:`modelcheck.library`, such as the reusable
    ``invariants`` package, whose predicates apply to any spec with the variables
    they read).
    """
    if names is None:
        return list(spec.invariants), list(spec.properties)
    from .errors import UsageError

    invs: list[PredicateDecl] = []
    props: list[PredicateDecl] = []
    own = {p.name: p for p in (*spec.invariants, *spec.properties)}
    for name in names:
        p = own.get(name)
        if p is None and library is not None:
            p = library(name)
        if p is None:
            known = ", ".join(own) or "none"
            lib = ""
            if library is library_lookup:
                lib = f" nor in the invariants library ({', '.join(library_catalog())})"
            elif library is not None:
                lib = " nor in the given predicate library"
            raise UsageError(
                f"--invariant {name}: no invariant or action property of that name in spec "
                f"{spec.name} (it declares: {known}){lib}."
            )
        (invs if p.kind is RoleKind.INVARIANT else props).append(p)
    return invs, props


def build_kernel(spec: Spec, config: CheckConfig, library: Library | None = library_lookup,
                 observer: Observer | None = None,
                 labels: tuple[Sequence[PredicateDecl], Sequence[PredicateDecl]] | None = None
                 ) -> Kernel:
    """The kernel that checks what ``config`` says (every explorer's), and evaluates
    the labels ``observer`` asks for (or ``labels``: state and step predicates, for an
    observer in another process)."""
    invs, props = select_checks(spec, config.invariants, library)
    checks = Checks(tuple(invs), tuple(props), config.check_deadlock)
    if observer is not None:
        checks = checks.observing(observer.labels, observer.step_labels)
    elif labels is not None and (labels[0] or labels[1]):
        checks = checks.observing(*labels)
    return Kernel(spec, checks=checks, symmetry=config.symmetry, view=config.view)


class Explorer:
    """Breadth-first exhaustive exploration of a bound spec.

    ``config`` says what to check and how (:class:`~modelcheck.config.CheckConfig`);
    keyword ``options`` override its fields (``Explorer(spec, max_depth=5)``).
    ``library`` looks up predicates named in ``config.invariants`` that the spec does
    not declare (default: the registered predicate libraries). ``on_transitions``
    receives every batch of transitions into stored states (see
    :class:`~modelcheck.level.LevelExpansion`); ``on_level(depth, fps, words)`` every
    level's stored states (sorted fingerprints and packed words) before it is expanded.
    ``notice(line)`` is told where a ``--resume`` run continues its checkpoint
    (``resuming at level D (N states)``, as ``modelcheck spark`` says).
    ``observer`` (:class:`~modelcheck.run.observers.Observer`) is handed every level
    and every batch of its expansion, with the labels it asks the kernel to evaluate;
    the memory budget counts what it holds.
    """

    def __init__(
        self,
        spec: Spec,
        config: CheckConfig | None = None,
        *,
        library: Library | None = library_lookup,
        progress: Callable[[Progress], None] | None = None,
        progress_interval: float = 3.0,
        on_transitions: TransitionHook | None = None,
        on_level: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
        notice: Callable[[str], None] | None = None,
        observer: Observer | None = None,
        **options: Any,
    ) -> None:
        cfg = CheckConfig.of(config, options, "Explorer")
        self.config = cfg
        self.spec = spec
        self.observer = observer
        self.kernel = build_kernel(spec, cfg, library, observer)
        self.layout = spec.layout
        self.progress = progress
        self.progress_interval = progress_interval
        self.on_transitions = on_transitions
        self.on_level = on_level
        #: told, in one line, where a ``--resume`` run continues its checkpoint
        self.notice = notice

    # ------------------------------------------------------------------ run
    def run(self) -> Result:
        """Explore. Ctrl-C (:mod:`modelcheck.interrupt`), ``max_states`` and the memory
        budget (:mod:`modelcheck.budget`) stop the run at the last complete level with
        status ``incomplete``; so does a ``MemoryError`` that the budget did not foresee."""
        arrays_for(self.layout.n_words)
        t0 = time.perf_counter()
        res = new_result(self.kernel, self.config)
        limit = self.config.memory_limit
        budget = MemoryBudget(default_memory_limit() if limit == "auto" else limit,
                              len(self.layout.cells), self.layout.n_words,
                              len(self.kernel.actions), self.kernel.exact,
                              3 + (self.kernel.symmetry is not None)
                              + bool(self.kernel.constraints
                                     or self.kernel.action_constraints),
                              self.kernel.key_width)
        levels = LevelStore(self.config.spill_dir)
        ckpt = self._checkpoint()
        try:
            with Interrupts() as stop:
                backend = _LocalLevels(self, levels, ckpt, budget, stop)
                return RunLoop(backend, self.kernel, self.config, res, stop,
                               progress=self.progress,
                               progress_interval=self.progress_interval, t0=t0).run()
        finally:
            if ckpt is not None:
                ckpt.close()
            levels.close()

    def _checkpoint(self) -> Checkpoint | None:
        cfg = self.config
        if cfg.checkpoint_dir is None:
            if cfg.resume:
                raise CheckpointError("--resume needs --checkpoint-dir DIR (the directory "
                                      "of the checkpoint to continue).")
            return None
        if "://" in str(cfg.checkpoint_dir):
            from .errors import UsageError

            raise UsageError(f"--checkpoint-dir {cfg.checkpoint_dir}: the local explorer "
                             "checkpoints to a local directory; URIs of Hadoop file systems "
                             "are for --backend spark.")
        return Checkpoint(cfg.checkpoint_dir, self.kernel, cfg)

    # ------------------------------------------------------------- helpers
    def _merge(self, cand_fps: list[np.ndarray], cand_keys: list[np.ndarray],
               cand_words: list[np.ndarray], n_act: int
               ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray,
                          np.ndarray | None]:
        """A level's new states ``(fps, words, parent indexes, the action instance
        reaching each from its parent, new states per action, the row of each candidate
        among them)``; the last only for an observer (else None). The words are None
        when the keys are the packed states (an exact kernel)."""
        observed = self.observer is not None
        if not cand_fps:
            return (empty_keys(self.kernel.key_width),
                    np.zeros((0, self.layout.n_words), dtype=np.uint64),
                    np.zeros(0, dtype=np.uint32), np.zeros(0, dtype=act_dtype(n_act)),
                    np.zeros(n_act, dtype=np.int64),
                    np.zeros(0, dtype=np.int32) if observed else None)
        got = None
        if self.kernel.exact and not observed and len(cand_fps) > 1:
            # the states are their keys: no rows needed, only each new key's smallest
            # candidate key (:func:`~modelcheck.store.merge_runs_min`)
            got = merge_runs_min(cand_fps, cand_keys)
        inv: np.ndarray | None = None
        rows: np.ndarray | None = None
        if got is not None:
            cand_fps.clear()
            cand_keys.clear()
            u, kmin = got
        else:
            n_lists = len(cand_fps)
            # each list is emptied once concatenated: its batches are not held twice
            fps = concat_clear(cand_fps)
            keys = concat_clear(cand_keys)
            if n_lists == 1:
                u, kmin, rows = fps, keys, np.arange(len(fps))
                if observed:
                    inv = np.arange(len(fps), dtype=np.int32)
            elif observed:
                u, kmin, rows, inv = dedupe_min_inverse(fps, keys, ordered_runs=True)
            else:
                u, kmin, rows = dedupe_min(fps, keys, ordered_runs=True)
        parents = (kmin // n_act).astype(np.uint32)
        acts: np.ndarray = (kmin % n_act).astype(act_dtype(n_act))
        del kmin
        by_action = np.bincount(acts, minlength=n_act)
        words: np.ndarray | None = None
        if not self.kernel.exact:
            assert rows is not None  # the bucketed merge is for exact kernels only
            words = take_rows(concat_clear(cand_words), rows)
        return u, words, parents, acts, by_action, inv


class _LocalLevels:
    """The in-process backend of the run loop (:class:`~modelcheck.run.loop.Backend`):
    the levels in a :class:`~modelcheck.store.LevelStore`, the visited set in memory,
    a level expanded in batches paced by the memory budget, the checkpoint in a local
    directory (:class:`~modelcheck.checkpoint.Checkpoint`)."""

    def __init__(self, ex: Explorer, levels: LevelStore, ckpt: Checkpoint | None,
                 budget: MemoryBudget, stop: Interrupts) -> None:
        self.ex, self.levels, self.ckpt = ex, levels, ckpt
        self.budget, self.stop = budget, stop
        self.k = ex.kernel
        self.n_act = len(self.k.actions)
        self.visited = FingerprintSet(ex.kernel.key_width, scattered=not ex.kernel.exact)
        self.depth = 0  # the level being expanded
        #: the packed states of the level being expanded; None when they are its keys
        #: (an exact kernel: rebuilt batch by batch from them)
        self.frontier_words: np.ndarray | None = None
        self.init_findings: LevelFindings | None = None
        self.init_fps = empty_keys(ex.kernel.key_width)
        self.cand_fps: list[np.ndarray] = []
        self.cand_keys: list[np.ndarray] = []
        self.cand_words: list[np.ndarray] = []
        self.cand_rows = 0
        self.cand_bytes = 0
        self.fanout_seen: float | None = None  # the most successors per state in a batch
        #: the successor rows a batch is sized for (:meth:`_successor_cap`): fewer for
        #: wider keys, whose de-duplication takes more bytes a row
        self.successor_rows = BATCH_SUCCESSORS // ex.kernel.key_width
        self.level_start = 0.0
        self.merged: tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------ the backend
    def begin(self, resume: bool) -> Begin:
        if self.ckpt is None or not resume:
            return Begin()
        snap, final = self.ckpt.load(self.levels, self.visited)
        notice = self.ex.notice
        if final is not None:
            if notice is not None:
                notice(f"--resume: the checkpoint in {self.ckpt.path} holds the run's end "
                       f"({final.distinct:,} states); reporting it")
            return Begin(final=final)
        if snap is None:
            return Begin()
        if notice is not None:
            notice(f"resuming at level {snap.depth} ({len(self.visited):,} states)")
        self.depth = snap.depth
        if self.ex.observer is None:
            # as the run that wrote them held them: the levels expanded since level 0
            # keep their actions, not their keys (levels of a checkpoint written before
            # actions were recorded keep their keys)
            for d in range(1, snap.depth):
                self.levels.forget_keys(d)
        self.frontier_words = snap.words
        return Begin(snap, sizes=[len(lv) for lv in self.levels.levels])

    def initial(self) -> int:
        self.init_fps, self.frontier_words, self.init_findings = initial_states(self.k)
        return len(self.init_fps)

    def keep_initial(self) -> None:
        self._store(self.init_fps, np.full(len(self.init_fps), NO_PARENT, dtype=np.uint32))

    def expand(self, depth: int, expand: bool, pulse: Pulse) -> LevelFindings:
        ex = self.ex
        self.depth = depth
        self.level_start = time.perf_counter()
        level_fps = self.levels.levels[depth].fps
        n = len(level_fps)
        if ex.on_level is not None or ex.observer is not None:
            words = self.frontier_words
            if words is None:
                words = ex.layout.words_of_keys(level_fps)
            if ex.on_level is not None:
                ex.on_level(depth, level_fps, words)
            if ex.observer is not None:
                ex.observer.on_level(depth, level_fps, words)
            del words
        self._clear_candidates()
        obs = ex.observer
        lx = LevelExpansion(self.k, level_fps, self.frontier_words, expand=expand,
                            batch_size=ex.config.batch_size, flush_rows=0,
                            on_transitions=ex.on_transitions,
                            batch_rows=self._pacer(n, level_fps),
                            on_batch=None if obs is None else obs.on_batch,
                            inverse=obs is not None,
                            stop=lambda: self.stop.requested, lazy_words=True)
        self.lx = lx
        for u, kmin, w in lx.candidates():
            fresh = ~self.visited.contains(u)
            if obs is not None:
                assert lx.inverse is not None
                obs.on_edges(self._targets(depth, u, fresh), lx.inverse)
            # (of a batch's successors' words only those not visited are gathered)
            self._add_candidates(take_rows(u, fresh), kmin[fresh],
                                 None if w is None else w.take(fresh)
                                 if isinstance(w, KeptWords) else take_rows(w, fresh))

            done = int(kmin.max()) // self.n_act + 1 if len(kmin) else 0
            # the batch's successors are let go before the next batch is expanded
            del u, kmin, w, fresh

            def counts(done: int = done) -> tuple[int, int, int]:
                return max(0, n - done), self.cand_rows, int(lx.findings.fired.sum())

            pulse(depth, counts)
        found = lx.findings
        if depth == 0:
            if self.init_findings is None:  # resumed at level 0
                self.init_findings = initial_states(self.k)[2]
            found.merge(self.init_findings)
        return found

    def successors(self, depth: int, verdict: Verdict | None, expand_next: bool,
                   room: int | None) -> Successors:
        # The merge takes the candidate lists (and frees each as it concatenates it);
        # the level's frontier words, once expanded, are rebuilt from its keys when the
        # keys are the packed states, so they go before the merge's peak.
        cands = (self.cand_fps, self.cand_keys, self.cand_words)
        self._clear_candidates()
        if self.k.exact:
            self.frontier_words = None
        new_fps, new_words, new_parents, new_acts, by_action, rows = \
            self.ex._merge(*cands, self.n_act)
        del cands
        if self.ex.observer is not None:
            assert rows is not None
            self.ex.observer.on_new_states(depth, rows)
        self.merged = (new_fps, new_words, new_parents, new_acts)
        return Successors(len(new_fps), by_action, time.perf_counter() - self.level_start)

    def fits(self, depth: int, new: int) -> None:
        assert self.merged is not None
        limit = self.budget.limit
        if limit is None:
            return
        merged_bytes = sum(a.nbytes for a in self.merged if a is not None)
        need = self._held() + merged_bytes + self.visited.growth(new) + \
            (0 if self.levels.spilled else 4 * new)
        if need > limit:
            raise StopRun("memory", self._memory_message(need, 1.0))

    def keep(self, depth: int) -> None:
        assert self.merged is not None
        new_fps, new_words, new_parents, new_acts = self.merged
        self.merged = None
        self._store(new_fps, new_parents, new_acts)
        self.frontier_words = new_words
        del new_fps, new_words, new_parents, new_acts

        if depth >= 2 and self.ex.observer is None and \
                (self.ckpt is None or self.ckpt.levels_written >= depth):
            # the level just expanded: the visited set holds its keys, and a path through
            # it is rebuilt along its actions (an observer looks stored keys up by level)
            self.levels.forget_keys(depth - 1)
        if self.k.key_width > 1 and not keeps_all_freed(self.k.layout.n_words):
            # the level's freed temporaries (see memtune.release_free); not for one-word
            # keys: refaulting the pages costs more than the ~2 bytes a state it saves
            # (KRaft L5: 0.3 s of system time); nor for states wider than two words,
            # whose process keeps every freed block
            release_free()

    def report(self, depth: int, verdict: Verdict) -> Violation:
        return report(self.k, verdict, _path_finder(self.k, self.levels, self.visited, depth))

    def commit(self, snap: Snapshot, sizes: list[int]) -> None:
        if self.ckpt is None:
            return
        if not self.ex.kernel.exact:
            snap.words = self.frontier_words
        self.ckpt.commit(self.levels, snap)

    def finish(self, final: Final) -> None:
        if self.ckpt is not None:
            self.ckpt.finish(self.levels, final.counters.depth, final)

    @property
    def checkpoint(self) -> str | None:
        return None if self.ckpt is None else str(self.ckpt.path)

    def advice(self) -> str:
        ex = self.ex
        tips = []
        if not self.levels.spilled:
            tips.append("--spill-dir DIR (keeps the BFS levels, 6 of the 14 bytes a state, "
                        "22 for two-word keys, on disk)")
        if self.k.symmetry is None:
            if ex.spec.symmetry_sets():
                tips.append("symmetry reduction (drop --no-symmetry)")
            else:
                tips.append("symmetry reduction (declare interchangeable ids in the spec)")
        tips.append("the Spark backend (--backend spark, which spreads the states over a "
                    "cluster)")
        tips.append("smaller constants (--const)")
        tips.append("a larger --memory-limit if the machine has memory to spare")
        return "To go further, try " + "; ".join(tips) + "."

    def out_of_memory(self, detail: str) -> str:
        return (f"Ran out of memory while expanding level {self.depth} ({detail.rstrip('.')})"
                f": the counts cover the complete levels 0..{max(0, len(self.levels) - 1)}. "
                "The memory limit did not foresee this allocation; a lower --memory-limit "
                "or a smaller --batch-size stops earlier and cleanly. " + self.advice())

    def release(self) -> None:
        self._clear_candidates()
        self.merged = None

    def interrupted(self) -> None:
        pass

    def memory(self) -> dict[str, int]:
        levels, visited = self.levels, self.visited
        return {"visited_bytes": visited.nbytes, "levels_bytes": levels.nbytes,
                "bytes_per_state": (visited.nbytes + levels.nbytes) // max(1, len(visited)),
                "levels_spilled": int(levels.spilled)}

    # ------------------------------------------------------------ storage
    def _clear_candidates(self) -> None:
        self.cand_fps, self.cand_keys, self.cand_words = [], [], []
        self.cand_rows = self.cand_bytes = 0

    def _add_candidates(self, fps: np.ndarray, keys: np.ndarray, words: np.ndarray | None
                        ) -> None:
        self.cand_fps.append(fps)
        self.cand_keys.append(keys)
        self.cand_bytes += fps.nbytes + keys.nbytes
        if words is not None:
            self.cand_words.append(words)
            self.cand_bytes += words.nbytes
        self.cand_rows += len(fps)

    def _targets(self, depth: int, u: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """Per successor ``u`` of a batch (sorted, ``fresh`` where not visited): its
        node index, or ``-1 - j`` for a fresh one, the level's ``j``-th candidate
        (see :meth:`~modelcheck.run.observers.Observer.on_edges`)."""
        k = int(np.count_nonzero(fresh))
        if 2 * k > len(u):  # mostly fresh: all numbered at once (the j-th fresh one's
            # count of fresh ones up to it is j + 1)
            out = np.cumsum(fresh, dtype=np.int32)
            np.negative(out, out=out)
            out -= np.int32(self.cand_rows)
        else:
            out = np.empty(len(u), dtype=np.int32)
            new = np.flatnonzero(fresh)
            out[new] = np.arange(-1 - self.cand_rows, -1 - self.cand_rows - k, -1,
                                 dtype=np.int32)
        if k < len(u):
            old = np.flatnonzero(~fresh)
            out[old] = self.levels.nodes(take_rows(u, old), depth)
        return out

    def _held(self) -> int:
        """Bytes of the explorer's data: visited set, levels, frontier, candidates, and
        what the observer holds."""
        front = 0 if self.frontier_words is None or \
            (self.ex.kernel.exact and not self.levels.spilled) else self.frontier_words.nbytes
        return self.visited.nbytes + self.levels.nbytes + front + self.cand_bytes + \
            self._observed()

    def _observed(self) -> int:
        """Bytes the observer holds (the state graph of a liveness check)."""
        return 0 if self.ex.observer is None else self.ex.observer.nbytes()

    def _store(self, fps: np.ndarray, parents: np.ndarray,
               acts: np.ndarray | None = None) -> None:
        """Add a level to the levels and the visited set (both or neither)."""
        self.levels.append(fps, parents, acts)
        try:
            self.visited.add_sorted(fps)
        except BaseException:
            self.levels.pop()
            raise

    # ------------------------------------------------------------ pacing
    def _pacer(self, n: int, level_fps: np.ndarray) -> Callable[[int], int]:
        """``batch_rows`` for the level rule: Ctrl-C and the memory budget, checked
        before every batch; the batch shrinks to what the budget leaves."""
        budget, batch_size = self.budget, self.ex.config.batch_size
        last = [0, 0]  # start row and fired count at the previous batch

        def rows(start: int) -> int:
            if self.stop.requested:
                raise StopRun("interrupted")
            fired = int(self.lx.findings.fired.sum())
            if start > last[0]:
                seen = (fired - last[1]) / (start - last[0])
                self.fanout_seen = max(self.fanout_seen or 0.0, seen)
            last[0], last[1] = start, fired
            fan = budget.fanout(self.fanout_seen)
            size = min(batch_size, self._successor_cap(fan))
            if budget.limit is None:
                return size
            got = budget.batch_rows(self._held(), self.cand_rows, n - start, size, fan)
            done = start / max(1, n)
            # Stop as soon as the level clearly cannot fit (a tenth of it seen), rather
            # than creep towards the limit in ever smaller batches.
            if got == 0 or (done >= 0.1 and self._projected(done) > 1.25 * budget.limit):
                raise StopRun("memory", self._memory_message(None, done))
            return got

        return rows

    def _successor_cap(self, fanout: float) -> int:
        """The states a batch may expand so that its successors stay within
        :data:`BATCH_SUCCESSORS` rows (``fanout``: successors per state to plan with,
        at most every action instance): a batch's temporaries (the successors' words,
        keys, parents and sort permutations, ~30-50 bytes a row) then have a bound that
        does not grow with the model."""
        return max(1, int(self.successor_rows // max(1.0, fanout)))

    # ------------------------------------------------------------ messages
    def _projected(self, done: float) -> int:
        """Bytes the explorer would hold at the end of the level being expanded
        (projected from the part ``done``, a fraction, of it)."""
        b = self.budget
        held = self._held() - self.cand_bytes
        n = len(self.levels.levels[self.depth])
        fan = b.fanout(self.fanout_seen) / 1.5 if self.fanout_seen else b.fanout(None)
        cands = self.cand_rows / done if done > 0 and self.cand_rows else fan * n
        return int(held + cands * (b.per_candidate + b.merge_per_candidate + 12)
                   + min(n, self.ex.config.batch_size) * (b.per_state + fan * b.per_successor))

    def _memory_message(self, need: int | None, done: float) -> str:
        """Why the run stopped for memory, how much more it would need (projected from
        the part of the level done), and what to try."""
        limit = self.budget.limit or 0
        held = self._held() - self.cand_bytes
        if need is None:
            need = self._projected(done)
        what = (f"expanding level {self.depth} ({len(self.levels.levels[self.depth]):,} "
                f"states, {done:.0%} done)" if done < 1 else f"storing level {self.depth + 1}")
        src = " (a safe share of the memory available at start)" \
            if self.ex.config.memory_limit == "auto" else ""
        graph = self._observed()
        of_which = (f" (of which the state graph for the temporal properties holds "
                    f"{format_size(graph)})" if graph else "")
        return (f"Stopped before exceeding the memory limit of {format_size(limit)}{src}: the "
                f"{len(self.visited):,} states of levels 0..{self.depth} hold "
                f"{format_size(held)}{of_which}, and {what} needs about "
                f"{format_size(max(0, need - held))} more, "
                f"{format_size(max(0, need - limit))} beyond the limit (deeper levels "
                f"need more again). The counts cover the complete levels 0..{self.depth}. "
                + self.advice())


def _path_finder(kernel: Kernel, levels: LevelStore, visited: FingerprintSet,
                 depth: int) -> Callable[[int], list[int] | StoredPath]:
    """``path_to(fp)`` for a state of level ``depth`` (see :func:`~modelcheck.level.report`)."""

    def path_to(fp: int) -> list[int] | StoredPath:
        if depth == 0 and not visited.contains(keys_of([fp], visited.width))[0]:
            return [fp]  # an initial state outside the state constraints
        return levels.path(depth, levels.index_of(depth, fp))

    return path_to


def explore(spec: Spec, **kwargs: Any) -> Result:
    """Shorthand for ``Explorer(spec, **kwargs).run()``: the breadth-first explorer alone,
    which checks invariants, action properties and deadlocks but not temporal properties
    (:func:`modelcheck.check` checks those too)."""
    return Explorer(spec, **kwargs).run()
