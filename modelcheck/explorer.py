"""Level-synchronous breadth-first exploration with exact, deterministic results.

Per level the frontier (sorted by fingerprint) is processed in batches by the
:class:`~modelcheck.kernel.Kernel`: invariants on the level's states, then every
action instance, action properties on every transition (also into states seen
before), deadlocks. Successors are de-duplicated within the batch and against
the visited set; at the end of the level the candidates from all batches are
merged, keeping for each new state the parent with the smallest fingerprint
(then the smallest action id). Nothing depends on batch size or timing, so
counts, depth and the counterexample are the same on every run.

Violation rule: the first level with a violation is finished, then the shortest
counterexample is taken: an invariant violated by a state of level ``d`` (trace of
``d + 1`` states; the smallest violating fingerprint) before a deadlock at level
``d`` (also ``d + 1`` states) before an action property violated by a transition
out of level ``d`` (``d + 2`` states; smallest target fingerprint, then parent,
then action). The trace is rebuilt by replaying the spec along stored parents.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .kernel import Expansion, Kernel
from .layout import collision_probability
from .result import ActionCoverage, LevelStats, Result, TraceStep, Violation
from .spec import ActionInstance, PredicateDecl, Spec
from .store import NO_PARENT, FingerprintSet, LevelStore, dedupe_min

__all__ = ["Explorer", "Progress", "coverage_table", "rebuild_trace", "select_checks",
           "invariant_violation", "deadlock_violation", "property_violation"]


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


def select_checks(spec: Spec, names: Sequence[str] | None) -> tuple[list[PredicateDecl],
                                                                    list[PredicateDecl]]:
    """The invariants and action properties to check: all of the spec's (``None``), or
    those named (an empty list checks none).

    Names are looked up in the spec, then in the reusable library
    (``invariants`` package), where a predicate applies to any spec with the
    variables it reads.
    """
    if names is None:
        return list(spec.invariants), list(spec.properties)
    from .errors import UsageError

    invs: list[PredicateDecl] = []
    props: list[PredicateDecl] = []
    own = {p.name: p for p in (*spec.invariants, *spec.properties)}
    for name in names:
        p = own.get(name)
        if p is None:
            try:
                from invariants import lookup
            except ImportError:  # pragma: no cover - the library ships with modelcheck
                lookup = None  # type: ignore[assignment]
            p = lookup(name) if lookup is not None else None
        if p is None:
            known = ", ".join(own) or "none"
            try:
                from invariants import catalog

                lib = ", ".join(catalog())
            except ImportError:  # pragma: no cover
                lib = ""
            raise UsageError(
                f"--invariant {name}: no invariant or action property of that name in spec "
                f"{spec.name} (it declares: {known}) nor in the invariants library "
                f"({lib})."
            )
        (invs if p.kind == "invariant" else props).append(p)
    return invs, props


class Explorer:
    """Breadth-first exhaustive exploration of a bound spec."""

    def __init__(
        self,
        spec: Spec,
        *,
        invariants: Sequence[str] | None = None,
        check_deadlock: bool | None = None,
        symmetry: bool = True,
        max_depth: int | None = None,
        batch_size: int = 1 << 16,
        progress: Callable[[Progress], None] | None = None,
        progress_interval: float = 3.0,
        spill_dir: str | None = None,
    ) -> None:
        invs, props = select_checks(spec, invariants)
        self.spec = spec
        self.kernel = Kernel(spec, invariants=invs, properties=props,
                             check_deadlock=check_deadlock, symmetry=symmetry)
        self.layout = spec.layout
        self.max_depth = max_depth
        self.batch_size = batch_size
        self.progress = progress
        self.progress_interval = progress_interval
        self.spill_dir = spill_dir

    # ------------------------------------------------------------------ run
    def run(self) -> Result:
        """Explore; Ctrl-C returns the levels finished so far with status ``incomplete``."""
        k = self.kernel
        layout = self.layout
        t0 = time.perf_counter()
        res = Result(spec=self.spec.name, constants=dict(self.spec.constants), status="ok",
                     fingerprint="exact" if layout.exact else "hash64",
                     state_bits=layout.bits,
                     symmetry=list(k.symmetry.names) if k.symmetry else [],
                     checked={"invariants": [p.name for p in k.invariants],
                              "properties": [p.name for p in k.properties],
                              "deadlock": ["on" if k.check_deadlock else "off"]})
        levels = LevelStore(self.spill_dir)
        try:
            return self._explore(res, levels, t0)
        finally:
            levels.close()

    def _explore(self, res: Result, levels: LevelStore, t0: float) -> Result:
        k = self.kernel
        layout = self.layout
        n_act = len(k.actions)
        fired = np.zeros(n_act, dtype=np.int64)
        new_by_action = np.zeros(n_act, dtype=np.int64)
        visited = FingerprintSet()

        init_words, init_fps = k.initial_words()
        ufps, _, rows = dedupe_min(init_fps, np.zeros(len(init_fps), dtype=np.int64))
        frontier_words = init_words[rows]
        levels.append(ufps, np.full(len(ufps), NO_PARENT, dtype=np.uint32))
        visited.add_sorted(ufps)
        generated = 0
        depth = 0
        last_report = t0
        violation: Violation | None = None
        try:
            while True:
                lt = time.perf_counter()
                level_fps = levels.levels[depth].fps
                n = len(level_fps)
                can_expand = self.max_depth is None or depth < self.max_depth
                inv_hits: list[tuple[int, int]] = []  # (fp, invariant index)
                deadlocks: list[np.ndarray] = []
                prop_hits: list[tuple[int, int, int, int]] = []  # (child fp, parent, act, prop)
                cand_fps: list[np.ndarray] = []
                cand_keys: list[np.ndarray] = []
                cand_words: list[np.ndarray] = []
                level_fired = np.zeros(n_act, dtype=np.int64)
                for start in range(0, n, self.batch_size):
                    w = frontier_words[start:start + self.batch_size]
                    ex = k.expand(w, expand=can_expand and not inv_hits)
                    for j, bad in enumerate(ex.invariant_rows):
                        for r in bad:
                            inv_hits.append((int(level_fps[start + r]), j))
                    if inv_hits:
                        continue
                    level_fired += ex.fired
                    if len(ex.deadlock_rows):
                        deadlocks.append(ex.deadlock_rows + start)
                    for j, (pr, pa, pf) in enumerate(ex.property_hits):
                        for r, a, f in zip(pr, pa, pf):
                            prop_hits.append((int(f), int(r) + start, int(a), j))
                    self._collect(ex, start, n_act, visited, cand_fps, cand_keys, cand_words)
                    now = time.perf_counter()
                    if self.progress is not None and now - last_report >= self.progress_interval:
                        last_report = now
                        self.progress(Progress(depth, len(visited), n - start - len(w),
                                               sum(len(c) for c in cand_fps),
                                               generated + int(level_fired.sum()), now - t0))
                def path_to(fp: int, d: int = depth) -> list[int]:
                    return levels.path(d, levels.index_of(d, fp))

                if inv_hits:
                    inv_min: dict[int, int] = {}
                    for f, j in inv_hits:
                        inv_min[j] = min(inv_min.get(j, f), f)
                    violation = invariant_violation(k, inv_min, path_to)
                    res.status = "violation"
                    break
                generated += int(level_fired.sum())
                fired += level_fired
                new_fps, new_words, new_parents = self._merge(
                    cand_fps, cand_keys, cand_words, n_act, new_by_action)
                res.levels.append(LevelStats(depth, n, len(new_fps), int(level_fired.sum()),
                                             time.perf_counter() - lt))
                if len(new_fps):
                    levels.append(new_fps, new_parents)
                    visited.add_sorted(new_fps)
                if deadlocks:
                    drows = np.concatenate(deadlocks)
                    violation = deadlock_violation(k, int(level_fps[drows].min()), path_to)
                    res.status = "deadlock"
                    break
                if prop_hits:
                    prop_min: dict[int, tuple[int, int, int]] = {}
                    for f, prow, a, j in prop_hits:
                        hit = (f, int(level_fps[prow]), a)
                        prop_min[j] = min(prop_min.get(j, hit), hit)
                    violation = property_violation(k, prop_min, path_to)
                    res.status = "violation"
                    break
                now = time.perf_counter()
                if self.progress is not None and now - last_report >= self.progress_interval:
                    last_report = now
                    self.progress(Progress(depth + 1, len(visited), 0, len(new_fps), generated,
                                           now - t0))
                if not can_expand:
                    res.status = "incomplete"
                    res.reason = f"--max-depth {self.max_depth} reached"
                    break
                if len(new_fps) == 0:
                    break
                depth += 1
                frontier_words = new_words
        except KeyboardInterrupt:
            res.status = "incomplete"
            res.reason = "interrupted"
        res.violation = violation
        res.distinct_states = len(visited)
        res.generated_states = generated
        res.depth = len(levels) - 1
        res.seconds = time.perf_counter() - t0
        res.coverage = coverage_table(k.actions, fired, new_by_action)
        res.collision_probability = collision_probability(len(visited), layout.exact)
        res.memory = {"visited_bytes": visited.nbytes, "levels_bytes": levels.nbytes,
                      "bytes_per_state": (visited.nbytes + levels.nbytes) // max(1, len(visited)),
                      "levels_spilled": int(levels.spilled)}
        return res

    # ------------------------------------------------------------- helpers
    def _collect(self, ex: Expansion, start: int, n_act: int, visited: FingerprintSet,
                 cand_fps: list[np.ndarray], cand_keys: list[np.ndarray],
                 cand_words: list[np.ndarray]) -> None:
        if len(ex.child_fps) == 0:
            return
        keys = (ex.parent_rows + start) * n_act + ex.action_ids
        u, kmin, rows = dedupe_min(ex.child_fps, keys)
        fresh = ~visited.contains(u)
        cand_fps.append(u[fresh])
        cand_keys.append(kmin[fresh])
        if not self.layout.exact:
            cand_words.append(ex.child_words[rows[fresh]])

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


def rebuild_trace(kernel: Kernel, fps: Sequence[int],
                  last: tuple[PredicateDecl, int] | None = None) -> tuple[TraceStep, ...]:
    """Replay the spec along a path of fingerprints, returning full states and actions.

    At each step the successor with the wanted (canonical) fingerprint is taken,
    the first in action order, so the trace is a real behaviour even under
    symmetry reduction. ``last = (property, fp)`` appends one more step: the first
    transition to ``fp`` that violates the action property.
    """
    layout = kernel.layout
    cur: list[int] | None = None
    for cells in kernel.initial_states():
        if kernel.fingerprint(cells) == fps[0]:
            cur = cells
            break
    if cur is None:  # pragma: no cover - would be an engine bug
        raise RuntimeError("trace rebuild: no initial state has the recorded fingerprint")
    steps = [TraceStep(None, {}, layout.values_from_cells(cur))]
    targets: list[tuple[PredicateDecl | None, int]] = [(None, f) for f in fps[1:]]
    if last is not None:
        targets.append(last)
    for prop, fp in targets:
        found = None
        for inst, nxt in kernel.successors(cur):
            if kernel.fingerprint(nxt) != fp:
                continue
            if prop is not None and prop not in kernel.check_properties(cur, nxt):
                continue
            found = (inst, nxt)
            break
        if found is None:  # pragma: no cover - would be an engine bug
            raise RuntimeError(f"trace rebuild: no successor has fingerprint {fp:#x}")
        inst, cur = found
        steps.append(TraceStep(inst.name, dict(inst.params), layout.values_from_cells(cur)))
    return tuple(steps)


def invariant_violation(kernel: Kernel, inv_min: Mapping[int, int],
                        path_to: Callable[[int], list[int]]) -> Violation:
    """The violation to report for a level's invariant hits (the violation rule).

    ``inv_min`` maps an invariant's index to the smallest fingerprint of the level
    violating it; ``path_to(fp)`` gives the fingerprints from an initial state to
    ``fp``. The smallest fingerprint wins, then the first invariant; the others it
    violates are listed as ``also_violated``.
    """
    fp = min(inv_min.values())
    js = sorted(j for j, f in inv_min.items() if f == fp)
    name = kernel.invariants[js[0]].name
    also = sorted({kernel.invariants[j].name for j in js[1:]} - {name})
    return Violation(name, "invariant", rebuild_trace(kernel, path_to(fp)), tuple(also))


def deadlock_violation(kernel: Kernel, fp: int,
                       path_to: Callable[[int], list[int]]) -> Violation:
    """The deadlock to report: state ``fp`` (the level's smallest deadlocked one)."""
    return Violation("Deadlock", "deadlock", rebuild_trace(kernel, path_to(fp)))


def property_violation(kernel: Kernel, prop_min: Mapping[int, tuple[int, int, int]],
                       path_to: Callable[[int], list[int]]) -> Violation:
    """The violation to report for a level's action-property hits (the violation rule).

    ``prop_min`` maps a property's index to its smallest violating transition
    ``(target fp, parent fp, action id)``; the smallest transition wins, then the
    first property. ``also_violated`` lists the other properties the transition
    violates and the invariants its target state violates.
    """
    best = min(prop_min.values())
    js = sorted(j for j, hit in prop_min.items() if hit == best)
    prop = kernel.properties[js[0]]
    also = sorted({kernel.properties[j].name for j in js[1:]} - {prop.name})
    child, parent, _ = best
    trace = rebuild_trace(kernel, path_to(parent), last=(prop, child))
    final = kernel.layout.cells_from_values(trace[-1].state)
    also += [p.name for p in kernel.check_invariants(final)]
    return Violation(prop.name, "action", trace, tuple(also))


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


def explore(spec: Spec, **kwargs: Any) -> Result:
    """Shorthand for ``Explorer(spec, **kwargs).run()``."""
    return Explorer(spec, **kwargs).run()
