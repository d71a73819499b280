"""Shrinking a counterexample to something a person can read.

:func:`shrink` takes a behaviour (an initial state and a sequence of action
instances) that ends in a violation of a property, and returns a behaviour,
never longer, that ends in a violation of the same property:

1. **Loops.** Where the trace passes twice through the same state, the steps
   between are cut.
2. **Delta debugging** over the action sequence (Zeller's ddmin): drop chunks of
   steps, halving the chunk size, and replay the rest with the scalar evaluator.
   Replay is lenient: a step whose action is not enabled is skipped, and replay
   stops at the first state (or transition) that violates the property. A replay
   that leaves the model (the state constraints, or an action constraint) before
   the violation fails.
3. **Simpler actions.** Each step's action instance is replaced by an earlier one
   (earlier in the spec, or the same action with smaller parameters) when the
   replay still violates the property and is no longer.
4. **Bounded BFS.** The checker itself (:class:`~modelcheck.explorer.Explorer`,
   the same successor function) looks for the property's violation within fewer
   steps, storing at most ``bfs_states`` states: if it finds one, that one is a
   shortest counterexample and is returned; if it explores every state within
   the depth, the shrunk trace is proved minimal in length; otherwise it is left
   as it is (``minimal: unknown``).

Everything is deterministic: the same input gives the same output.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .config import CheckConfig
from .explorer import Explorer
from .kernel import Kernel
from .library import Library
from .library import lookup as library_lookup
from .result import Status, TraceStep, ViolationKind
from .spec import Spec

__all__ = ["Target", "ShrinkReport", "shrink", "replay_until"]


@dataclass(frozen=True)
class Target:
    """The property a counterexample violates: ``kind`` is invariant, action, deadlock
    (or liveness: a lasso, shown as found)."""

    name: str
    kind: ViolationKind

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", ViolationKind(self.kind))


@dataclass(frozen=True)
class ShrinkReport:
    """What shrinking did: lengths in states, replays, and the BFS verdict."""

    found: int
    after_loops: int
    after_ddmin: int
    shrunk: int
    replays: int
    #: ``shorter`` (the BFS found a shortest one), ``minimal`` (proved: none shorter),
    #: ``unknown`` (the BFS hit its state budget), ``skipped``
    bfs: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"found": self.found, "after_loops": self.after_loops,
                "after_ddmin": self.after_ddmin, "shrunk": self.shrunk,
                "replays": self.replays, "bfs": self.bfs, "seconds": round(self.seconds, 3)}


def replay_until(k: Kernel, target: Target, init: Sequence[int], actions: Sequence[int]
                 ) -> tuple[list[int], list[list[int]]] | None:
    """Replay ``actions`` from ``init`` leniently (skipping actions not enabled) until
    ``target`` is violated: ``(actions applied, states)``, or None if it never is."""
    cur = list(init)
    states = [cur]
    applied: list[int] = []
    by_name = {p.name: p for p in (*k.invariants, *k.properties)}
    prop = by_name.get(target.name)

    def inv_bad(cells: Sequence[int]) -> bool:
        return prop is not None and target.kind is ViolationKind.INVARIANT and prop in \
            k.check_invariants(cells)

    if inv_bad(cur):
        return applied, states
    if not k.satisfies_constraints(cur):
        return None
    for a in actions:
        nxt = k.step(cur, k.actions[a])
        if nxt is None:
            continue
        applied.append(a)
        states.append(nxt)
        if target.kind is ViolationKind.ACTION and prop is not None \
                and prop in k.check_properties(cur, nxt):
            return applied, states
        if inv_bad(nxt):
            return applied, states
        if not (k.satisfies_constraints(nxt) and k.satisfies_action_constraints(cur, nxt)):
            return None  # the walk would stop here (outside the model)
        cur = nxt
    if target.kind is ViolationKind.DEADLOCK and not k.successors(cur):
        return applied, states
    return None


class _Shrinker:
    def __init__(self, k: Kernel, target: Target, init: Sequence[int], budget: int) -> None:
        self.k, self.target, self.init = k, target, list(init)
        self.replays = 0
        self.budget = budget

    def test(self, actions: Sequence[int]) -> list[int] | None:
        if self.replays >= self.budget:
            return None
        self.replays += 1
        r = replay_until(self.k, self.target, self.init, actions)
        return None if r is None else r[0]

    def cut_loops(self, actions: list[int]) -> list[int]:
        r = replay_until(self.k, self.target, self.init, actions)
        assert r is not None, "the counterexample does not replay (engine bug)"
        acts, states = r
        while True:
            first: dict[tuple[int, ...], int] = {}
            cut = None
            for i, s in enumerate(states):
                key = tuple(s)
                if key in first:
                    j = first[key]
                    if cut is None or i - j > cut[1] - cut[0]:
                        cut = (j, i)
                else:
                    first[key] = i
            if cut is None:
                return acts
            j, i = cut
            cand = acts[:j] + acts[i:]
            got = self.test(cand)
            if got is None or len(got) >= len(acts):
                return acts
            r = replay_until(self.k, self.target, self.init, got)
            assert r is not None
            acts, states = r

    def ddmin(self, actions: list[int]) -> list[int]:
        acts = actions
        n = 2
        while len(acts) >= 1:
            size = max(1, len(acts) // n)
            reduced = False
            for start in range(0, len(acts), size):
                cand = acts[:start] + acts[start + size:]
                got = self.test(cand)
                if got is not None and len(got) < len(acts):
                    acts = got
                    n = max(n - 1, 2)
                    reduced = True
                    break
            if not reduced:
                if size == 1:
                    break
                n = min(len(acts), n * 2)
        return acts

    def simplify(self, actions: list[int]) -> list[int]:
        acts = list(actions)
        changed = True
        while changed:
            changed = False
            for i in range(len(acts)):
                for b in range(acts[i]):
                    cand = acts[:i] + [b] + acts[i + 1:]
                    got = self.test(cand)
                    if got is not None and (len(got), got) < (len(acts), acts):
                        acts = got
                        changed = True
                        break
                if changed or i >= len(acts) - 1:
                    break
        return acts


def shrink(spec: Spec, kernel: Kernel, target: Target, init: Sequence[int],
           actions: Sequence[int], *, config: CheckConfig | None = None,
           library: Library | None = library_lookup, bfs_states: int = 200_000,
           max_replays: int = 5000) -> tuple[tuple[TraceStep, ...], ShrinkReport]:
    """Shrink the counterexample ``actions`` from ``init`` (see the module docstring).

    ``kernel`` is the simulation's (no symmetry reduction); ``config`` says what the
    bounded BFS checks, as the simulation's (its symmetry flag applies).
    """
    t0 = time.perf_counter()
    sh = _Shrinker(kernel, target, init, max_replays)
    found = len(actions) + 1
    acts = sh.cut_loops(list(actions))
    after_loops = len(acts) + 1
    acts = sh.ddmin(acts)
    after_dd = len(acts) + 1
    acts = sh.simplify(acts)
    steps = _steps(kernel, init, acts)
    verdict = "skipped"
    if bfs_states > 0 and len(acts) > 0:
        verdict, shorter = _bfs(spec, target, len(acts), config or CheckConfig(), library,
                                bfs_states)
        if shorter is not None:
            steps = shorter
    return steps, ShrinkReport(found, after_loops, after_dd, len(steps), sh.replays,
                               verdict, time.perf_counter() - t0)


def _steps(k: Kernel, init: Sequence[int], actions: Sequence[int]) -> tuple[TraceStep, ...]:
    cur = list(init)
    out = [TraceStep(None, {}, k.layout.values_from_cells(cur))]
    for a in actions:
        inst = k.actions[a]
        nxt = k.step(cur, inst)
        assert nxt is not None
        cur = nxt
        out.append(TraceStep(inst.name, dict(inst.params), k.layout.values_from_cells(cur)))
    return tuple(out)


def _bfs(spec: Spec, target: Target, steps: int, config: CheckConfig,
         library: Library | None, budget: int) -> tuple[str, tuple[TraceStep, ...] | None]:
    """Look for ``target`` within fewer than ``steps`` steps with the checker."""
    if target.kind is ViolationKind.DEADLOCK:
        cfg = config.replace(invariants=(), check_deadlock=True, max_depth=steps)
    else:
        cfg = config.replace(invariants=(target.name,), check_deadlock=False,
                             max_depth=steps - 1)
    # whole states: under a view a state with a seen view is not checked, so a BFS over
    # views proves no minimality
    cfg = cfg.replace(max_states=budget, checkpoint_dir=None, resume=False, spill_dir=None,
                      view=False)
    res = Explorer(spec, cfg, library=library).run()
    v = res.violation
    if v is not None and v.property == target.name and len(v.trace) <= steps:
        return "shorter", v.trace
    if res.status is Status.OK or (res.status is Status.INCOMPLETE
                              and (res.reason or "").startswith("--max-depth")):
        return "minimal", None
    return "unknown", None
