"""Level-synchronous breadth-first exploration with exact, deterministic results.

Per level the frontier (sorted by fingerprint) is expanded by the level engine
(:class:`~modelcheck.engine.LevelExpansion`), which applies the one level rule of
:mod:`modelcheck.engine` (invariants first, then expansion; the first problem in
fingerprint order decides; spec errors are reported by the same rule). Successors
are de-duplicated per flush and against the visited set; at the end of the level
the candidates are merged, keeping for each new state the parent with the
smallest fingerprint (then the smallest action id). Counts, depth, coverage and
the counterexample therefore do not depend on the batch size or on timing.

Traces are rebuilt by replaying the spec along stored parents.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checkpoint import Checkpoint, CheckpointError, Final, Snapshot
from .config import CheckConfig
from .engine import LevelExpansion, LevelFindings, TransitionHook, Verdict, initial_states, report
from .engine import rebuild_trace as rebuild_trace
from .kernel import Kernel
from .layout import collision_probability
from .library import Library
from .library import catalog as library_catalog
from .library import lookup as library_lookup
from .result import ActionCoverage, LevelStats, Result, Violation
from .spec import ActionInstance, PredicateDecl, Spec
from .store import NO_PARENT, FingerprintSet, LevelStore, dedupe_min

__all__ = ["Explorer", "Progress", "check", "explore", "coverage_table", "rebuild_trace",
           "select_checks", "build_kernel", "new_result", "complete_result"]


@dataclass(frozen=True)
class Progress:
    """A progress report: emitted every few seconds and at the end of each level."""

    depth: int
    distinct: int
    frontier_left: int
    next_level: int
    generated: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.distinct / self.seconds if self.seconds > 0 else 0.0


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
        (invs if p.kind == "invariant" else props).append(p)
    return invs, props


def build_kernel(spec: Spec, config: CheckConfig, library: Library | None = library_lookup
                 ) -> Kernel:
    """The kernel that checks what ``config`` says (every explorer's)."""
    invs, props = select_checks(spec, config.invariants, library)
    return Kernel(spec, invariants=invs, properties=props,
                  check_deadlock=config.check_deadlock, symmetry=config.symmetry)


class Explorer:
    """Breadth-first exhaustive exploration of a bound spec.

    ``config`` says what to check and how (:class:`~modelcheck.config.CheckConfig`);
    keyword ``options`` override its fields (``Explorer(spec, max_depth=5)``).
    ``library`` looks up predicates named in ``config.invariants`` that the spec does
    not declare (default: the registered predicate libraries). ``on_transitions``
    receives every batch of transitions into stored states (see
    :class:`~modelcheck.engine.LevelExpansion`); ``on_level(depth, fps, words)`` every
    level's stored states (sorted fingerprints and packed words) before it is expanded.
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
        **options: Any,
    ) -> None:
        cfg = CheckConfig.of(config, options, "Explorer")
        self.config = cfg
        self.spec = spec
        self.kernel = build_kernel(spec, cfg, library)
        self.layout = spec.layout
        self.progress = progress
        self.progress_interval = progress_interval
        self.on_transitions = on_transitions
        self.on_level = on_level

    # ------------------------------------------------------------------ run
    def run(self) -> Result:
        """Explore; Ctrl-C returns the levels finished so far with status ``incomplete``."""
        t0 = time.perf_counter()
        res = new_result(self.kernel, self.config)
        levels = LevelStore(self.config.spill_dir)
        ckpt = self._checkpoint()
        try:
            return self._explore(res, levels, ckpt, t0)
        finally:
            if ckpt is not None:
                ckpt.close()
            levels.close()

    def _explore(self, res: Result, levels: LevelStore, ckpt: Checkpoint | None,
                 t0: float) -> Result:
        k = self.kernel
        n_act = len(k.actions)
        fired = np.zeros(n_act, dtype=np.int64)
        new_by_action = np.zeros(n_act, dtype=np.int64)
        visited = FingerprintSet()
        snap, final = ckpt.load(levels, visited) if ckpt and self.config.resume else (None, None)
        if final is not None:
            return self._ended(res, final, levels, visited)
        if snap is None:
            init_fps, frontier_words, init_findings = initial_states(k)
            levels.append(init_fps, np.full(len(init_fps), NO_PARENT, dtype=np.uint32))
            visited.add_sorted(init_fps)
            generated = 0
            depth = 0
        else:
            init_findings = LevelFindings(n_act)
            depth, generated = snap.depth, snap.generated
            fired += snap.fired
            new_by_action += snap.new_by_action
            res.levels = list(snap.stats)
            t0 -= snap.seconds
            frontier_words = (snap.words if snap.words is not None
                              else levels.levels[depth].fps.reshape(-1, 1))
        last_report = time.perf_counter()
        violation: Violation | None = None
        verdict: Verdict | None = None
        max_depth = self.config.max_depth
        try:
            while True:
                lt = time.perf_counter()
                level_fps = levels.levels[depth].fps
                n = len(level_fps)
                can_expand = max_depth is None or depth < max_depth
                if self.on_level is not None:
                    self.on_level(depth, level_fps, frontier_words)
                cand_fps: list[np.ndarray] = []
                cand_keys: list[np.ndarray] = []
                cand_words: list[np.ndarray] = []
                lx = LevelExpansion(k, level_fps, frontier_words, expand=can_expand,
                                    batch_size=self.config.batch_size, flush_rows=0,
                                    on_transitions=self.on_transitions)
                for u, kmin, w in lx.candidates():
                    fresh = ~visited.contains(u)
                    cand_fps.append(u[fresh])
                    cand_keys.append(kmin[fresh])
                    if w is not None:
                        cand_words.append(w[fresh])
                    now = time.perf_counter()
                    if self.progress is not None and now - last_report >= self.progress_interval:
                        last_report = now
                        done = int(kmin.max()) // n_act + 1 if len(kmin) else 0
                        self.progress(Progress(depth, len(visited), max(0, n - done),
                                               sum(len(c) for c in cand_fps),
                                               generated + int(lx.findings.fired.sum()),
                                               now - t0))
                found = lx.findings
                if depth == 0:
                    found.merge(init_findings)
                verdict = found.verdict()
                path_to = _path_finder(levels, visited, depth)
                if verdict is not None and verdict.phase1:
                    violation = report(k, verdict, path_to)
                    res.status = "violation"
                    break
                level_fired = int(found.fired.sum())
                generated += level_fired
                fired += found.fired
                new_fps, new_words, new_parents = self._merge(
                    cand_fps, cand_keys, cand_words, n_act, new_by_action)
                res.levels.append(LevelStats(depth, n, len(new_fps), level_fired,
                                             time.perf_counter() - lt))
                if len(new_fps):
                    levels.append(new_fps, new_parents)
                    visited.add_sorted(new_fps)
                if verdict is not None:
                    violation = report(k, verdict, path_to)
                    res.status = "deadlock" if verdict.kind == "deadlock" else "violation"
                    break
                now = time.perf_counter()
                if self.progress is not None and now - last_report >= self.progress_interval:
                    last_report = now
                    self.progress(Progress(depth + 1, len(visited), 0, len(new_fps), generated,
                                           now - t0))
                if not can_expand:
                    res.status = "incomplete"
                    res.reason = f"--max-depth {max_depth} reached"
                    break
                if len(new_fps) == 0:
                    break
                depth += 1
                frontier_words = new_words
                if ckpt is not None:
                    ckpt.commit(levels, Snapshot(
                        depth, generated, fired, new_by_action, res.levels,
                        time.perf_counter() - t0, None if self.layout.exact else new_words))
        except KeyboardInterrupt:
            res.status = "incomplete"
            res.reason = "interrupted"
        complete_result(res, k, violation=violation, distinct=len(visited),
                        generated=generated, depth=len(levels) - 1,
                        seconds=time.perf_counter() - t0, fired=fired,
                        new_by_action=new_by_action)
        res.memory = {"visited_bytes": visited.nbytes, "levels_bytes": levels.nbytes,
                      "bytes_per_state": (visited.nbytes + levels.nbytes) // max(1, len(visited)),
                      "levels_spilled": int(levels.spilled)}
        if ckpt is not None and res.reason != "interrupted":
            with contextlib.suppress(KeyboardInterrupt):  # the run is over: report it
                ckpt.finish(levels, depth, Final(
                    Snapshot(depth, generated, fired, new_by_action, res.levels, res.seconds),
                    res.status, res.reason, max_depth, res.distinct_states, res.depth,
                    res.memory, verdict))
        return res

    def _checkpoint(self) -> Checkpoint | None:
        cfg = self.config
        if cfg.checkpoint_dir is None:
            if cfg.resume:
                raise CheckpointError("--resume needs --checkpoint-dir DIR (the directory "
                                      "of the checkpoint to continue).")
            return None
        return Checkpoint(cfg.checkpoint_dir, self.kernel, cfg)

    def _ended(self, res: Result, final: Final, levels: LevelStore,
               visited: FingerprintSet) -> Result:
        """The result of a run whose checkpoint records its end (no exploration)."""
        c = final.counters
        res.status, res.reason = final.status, final.reason
        violation = None
        if final.verdict is not None:
            path_to = _path_finder(levels, visited, c.depth)
            violation = report(self.kernel, final.verdict, path_to)
        res.levels = list(c.stats)
        complete_result(res, self.kernel, violation=violation, distinct=final.distinct,
                        generated=c.generated, depth=final.result_depth, seconds=c.seconds,
                        fired=c.fired, new_by_action=c.new_by_action)
        res.memory = dict(final.memory)
        return res

    # ------------------------------------------------------------- helpers
    def _merge(self, cand_fps: list[np.ndarray], cand_keys: list[np.ndarray],
               cand_words: list[np.ndarray], n_act: int,
               new_by_action: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not cand_fps:
            z = np.zeros(0, dtype=np.uint64)
            return z, np.zeros((0, self.layout.n_words), dtype=np.uint64), z.astype(np.uint32)
        fps = np.concatenate(cand_fps)
        keys = np.concatenate(cand_keys)
        if len(cand_fps) == 1:
            u, kmin, rows = fps, keys, np.arange(len(fps))
        else:
            u, kmin, rows = dedupe_min(fps, keys)
        parents = (kmin // n_act).astype(np.uint32)
        new_by_action += np.bincount(kmin % n_act, minlength=n_act)
        if self.layout.exact:
            words = u.reshape(-1, 1)
        else:
            words = np.concatenate(cand_words)[rows]
        return u, words, parents


def _path_finder(levels: LevelStore, visited: FingerprintSet,
                 depth: int) -> Callable[[int], list[int]]:
    """``path_to(fp)`` for a state of level ``depth`` (see :func:`~modelcheck.engine.report`)."""

    def path_to(fp: int) -> list[int]:
        if depth == 0 and not visited.contains(np.array([fp], dtype=np.uint64))[0]:
            return [fp]  # an initial state outside the state constraints
        return levels.path(depth, levels.index_of(depth, fp))

    return path_to


def new_result(kernel: Kernel, config: CheckConfig, backend: str = "local") -> Result:
    """An empty result of a check of ``kernel``'s spec with ``config`` (every explorer's)."""
    spec, layout = kernel.spec, kernel.layout
    return Result(spec=spec.name, constants=dict(spec.constants), status="ok",
                  fingerprint="exact" if layout.exact else "hash64",
                  state_bits=layout.bits, backend=backend,
                  symmetry=list(kernel.symmetry.names) if kernel.symmetry else [],
                  checked={"invariants": [p.name for p in kernel.invariants],
                           "properties": [p.name for p in kernel.properties],
                           "deadlock": ["on" if kernel.check_deadlock else "off"]},
                  config=config.decisive())


def complete_result(res: Result, kernel: Kernel, *, violation: Violation | None,
                    distinct: int, generated: int, depth: int, seconds: float,
                    fired: np.ndarray, new_by_action: np.ndarray) -> None:
    """Fill in the totals of a finished (or stopped) run (every explorer's)."""
    res.violation = violation
    res.distinct_states = distinct
    res.generated_states = generated
    res.depth = depth
    res.seconds = seconds
    res.coverage = coverage_table(kernel.actions, fired, new_by_action)
    res.collision_probability = collision_probability(distinct, kernel.layout.exact)


def coverage_table(actions: Sequence[ActionInstance], fired: np.ndarray,
                   new: np.ndarray) -> list[ActionCoverage]:
    """Per-action coverage (summed over parameters) from per-instance counters."""
    out: dict[str, ActionCoverage] = {}
    for inst in actions:
        c = out.get(inst.name)
        if c is None:
            params = "(" + ", ".join(p for p in inst.decl.params) + ")" if inst.decl.params else ""
            c = out[inst.name] = ActionCoverage(inst.name, params)
        c.fired += int(fired[inst.id])
        c.new_states += int(new[inst.id])
    return list(out.values())


def check(spec: Spec, config: CheckConfig | None = None, **kwargs: Any) -> Result:
    """Check a bound spec: ``Explorer(spec, config, **kwargs).run()``.

    ``config`` (:class:`~modelcheck.config.CheckConfig`) and keyword options (its
    fields, and ``library``, ``progress``, ``on_transitions``) as for
    :class:`Explorer`. Spec errors raise
    :class:`~modelcheck.errors.SpecEvaluationError`.
    """
    return Explorer(spec, config, **kwargs).run()


def explore(spec: Spec, **kwargs: Any) -> Result:
    """Shorthand for ``Explorer(spec, **kwargs).run()`` (the same as :func:`check`)."""
    return Explorer(spec, **kwargs).run()
