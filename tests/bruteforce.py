"""A deliberately naive reference explorer for tests.

Python tuples, the scalar evaluator only, a Python set, and an orbit
canonicaliser that permutes *values* (dicts), not packed words: it shares no code
with the batch explorer, the level rule, the fingerprints or the symmetry module.

:func:`brute_force_check` is the oracle for whole runs. It implements, one state
at a time, TLC's ``CONSTRAINT`` and ``ACTION_CONSTRAINT`` semantics (TLC's
``ModelChecker.doNext``: a successor is in the model when ``isInModel(s') &&
isInActions(s, s')``; one outside the model is checked against the invariants, its
transition against the action properties, and it is never enqueued; deadlock is
"no successor generated", whatever the constraints) and the order in which the
level rule (documented in :mod:`modelcheck.level`) reports what a BFS level finds:

* initial states outside the state constraints are checked against the
  invariants, then dropped (never counted);
* level ``d``, phase 1: a state of the level that violates an invariant ends the
  run (trace of ``d + 1`` states; the level's successors are not counted);
* level ``d``, phase 2: every state is expanded; a successor inside the
  state constraints whose transition satisfies the action constraints is stored
  (if new), any other is checked against the invariants and forgotten (a state
  excluded through one transition may still be stored through another). Then, in
  this order: a state with no enabled action (a deadlock; transitions out of the
  model are enabled actions, so such a state is not one), an invariant violated by
  a successor outside the model, an action property violated by a transition
  (both: trace of ``d + 2`` states). The new states of the level are counted in
  all three cases.

Which state decides among several at the same phase depends on fingerprint order;
the oracle does not compute fingerprints, so it reports every predicate name that
could win (``names``), and the engine's must be one of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from modelcheck.kernel import Kernel

__all__ = ["brute_force", "brute_force_check", "brute_force_view", "brute_force_graph",
           "Oracle", "GraphOracle", "assert_replays", "random_walk", "model_states"]


@dataclass(frozen=True)
class Oracle:
    """What a run must find: status, counts and the kind and length of its counterexample."""

    status: str  # ok | violation | deadlock
    distinct: int
    depth: int
    generated: int
    kind: str | None = None  # invariant | action | deadlock
    #: every predicate the engine may name (the winner depends on fingerprint order)
    names: frozenset[str] = frozenset()
    #: one shortest counterexample (cell tuples), initial state first
    trace: tuple[tuple[int, ...], ...] = ()
    #: (:func:`brute_force_view` only) the states kept at each level checked
    levels: tuple[frozenset[tuple[int, ...]], ...] = ()
    #: (:func:`brute_force_check` only) every state stored, with its BFS level
    stored: tuple[tuple[tuple[int, ...], int], ...] = ()
    #: (:func:`brute_force_check` only) every transition taken between stored states:
    #: (state, successor, action instance id); the successor inside the state
    #: constraints and the transition allowed by the action constraints
    edges: frozenset[tuple[tuple[int, ...], tuple[int, ...], int]] = frozenset()


def brute_force(spec, symmetry_sets=None) -> tuple[int, int]:
    """(distinct states, depth) by a plain BFS over tuples with the scalar evaluator,
    honouring the state and action constraints (no invariants, no deadlock check)."""
    o = brute_force_check(spec, invariants=[], check_deadlock=False,
                          symmetry_sets=symmetry_sets)
    return o.distinct, o.depth


def brute_force_check(spec, *, invariants=None, check_deadlock: bool | None = None,
                      symmetry_sets=None) -> Oracle:
    """The whole run, one state at a time (see the module docstring for the rules).

    ``invariants``: the names of the invariants and action properties to check, as
    for ``explore`` (default: all the spec's); ``check_deadlock`` defaults to the spec's.
    """
    k = Kernel(spec, symmetry=False)
    invs = [p for p in spec.invariants if invariants is None or p.name in invariants]
    props = [p for p in spec.properties if invariants is None or p.name in invariants]
    deadlock = spec.check_deadlock if check_deadlock is None else check_deadlock
    canon = _canonicaliser(spec, symmetry_sets) if symmetry_sets else (lambda c: tuple(c))

    def holds(p, cells, nxt=None) -> bool:
        s = k.scalar_view(cells)
        return bool(p.fn(spec, s) if nxt is None else p.fn(spec, s, k.scalar_view(nxt)))

    def inside(cells) -> bool:
        return all(holds(p, cells) for p in spec.constraints)

    def allowed(cells, nxt) -> bool:
        return all(holds(p, cells, nxt) for p in spec.action_constraints)

    def first_bad_invariant(cells):
        return next((p.name for p in invs if not holds(p, cells)), None)

    parent: dict[tuple[int, ...], tuple[int, ...] | None] = {}
    level_of: dict[tuple[int, ...], int] = {}
    edges: set[tuple[tuple[int, ...], tuple[int, ...], int]] = set()

    def trace_to(key) -> tuple[tuple[int, ...], ...]:
        out = []
        while key is not None:
            out.append(key)
            key = parent[key]
        return tuple(reversed(out))

    def graph() -> dict:
        return {"stored": tuple(level_of.items()), "edges": frozenset(edges)}

    level: list[tuple[int, ...]] = []
    dropped: list[tuple[int, ...]] = []  # initial states outside the constraints
    for cells in k.initial_states():
        key = canon(cells)
        if key in parent or key in dropped:
            continue
        if inside(list(key)):
            parent[key] = None
            level_of[key] = 0
            level.append(key)
        else:
            dropped.append(key)
    depth = 0  # index of the last non-empty level (level 0 counts even when empty)
    generated = 0
    d = 0
    while True:
        # phase 1: the invariants on every state of the level
        checked = level + (dropped if d == 0 else [])
        bad = {(c, n) for c in checked if (n := first_bad_invariant(list(c))) is not None}
        if bad:
            c = min(bad)[0]
            trace = trace_to(c) if c in parent else (c,)
            return Oracle("violation", len(parent), depth, generated, "invariant",
                          frozenset(n for _, n in bad), trace, **graph())
        # phase 2: expand every state
        new: list[tuple[int, ...]] = []
        dead, outside_bad, prop_bad = [], set(), set()
        for c in level:
            succ = k.successors(list(c))
            if deadlock and not succ:
                dead.append(c)
            for inst, nxt in succ:
                generated += 1
                for p in props:
                    if not holds(p, list(c), nxt):
                        prop_bad.add((c, tuple(nxt), p.name))
                        break
                key = canon(nxt)
                if inside(nxt) and allowed(list(c), nxt):
                    edges.add((c, key, inst.id))
                    if key not in parent:
                        parent[key] = c
                        level_of[key] = d + 1
                        new.append(key)
                elif (n := first_bad_invariant(nxt)) is not None:
                    outside_bad.add((c, tuple(nxt), n))
        if new:
            depth = d + 1
        total = len(parent)
        if dead:
            return Oracle("deadlock", total, depth, generated, "deadlock",
                          frozenset({"Deadlock"}), trace_to(min(dead)), **graph())
        for kind, found in (("invariant", outside_bad), ("action", prop_bad)):
            if found:
                c, nxt, _ = min(found)
                return Oracle("violation", total, depth, generated, kind,
                              frozenset(n for _, _, n in found), trace_to(c) + (nxt,),
                              **graph())
        if not new:
            return Oracle("ok", total, depth, generated, **graph())
        level = new
        d += 1


@dataclass(frozen=True)
class GraphOracle:
    """The reachable state graph: ``nodes`` maps each stored state (cell tuple) to its
    ``(BFS level, initial, invariants it violates)``; ``edges`` maps each transition
    between stored states ``(state, successor, action instance id)`` to the action
    properties it violates (names in declaration order)."""

    nodes: dict[tuple[int, ...], tuple[int, bool, tuple[str, ...]]]
    edges: dict[tuple[tuple[int, ...], tuple[int, ...], int], tuple[str, ...]]


def brute_force_graph(spec) -> GraphOracle:
    """The state graph of the model :func:`brute_force_check` explores (symmetry off,
    nothing checked, the state and action constraints applied; every transition
    between two stored states an edge), labelled with the spec's invariants and
    action properties by the scalar evaluator."""
    o = brute_force_check(spec, invariants=[], check_deadlock=False)
    assert o.status == "ok"
    k = Kernel(spec, symmetry=False)

    def holds(p, cells, nxt=None) -> bool:
        s = k.scalar_view(list(cells))
        return bool(p.fn(spec, s) if nxt is None else p.fn(spec, s, k.scalar_view(list(nxt))))

    nodes = {c: (d, d == 0,
                 tuple(p.name for p in spec.invariants if not holds(p, c)))
             for c, d in o.stored}
    edges = {(c, n, a): tuple(p.name for p in spec.properties if not holds(p, c, n))
             for c, n, a in o.edges}
    return GraphOracle(nodes, edges)


def brute_force_view(spec, *, invariants=None, check_deadlock: bool | None = None
                     ) -> Oracle:
    """:func:`brute_force_check` under the spec's view (TLA+'s ``VIEW``, as TLC 2.20
    runs it: ``ModelChecker.doNext`` fingerprints the view of a state in the model, and
    checks the invariants only on a state whose view is new).

    Two states are one when their kept variables' values are equal (compared as cell
    tuples, no packing, no fingerprint). The first state of a view reached is kept,
    checked and expanded; another with a seen view is dropped unchecked. Initial
    states: in the spec's order; one outside the state constraints is checked and
    dropped whatever its view. A successor outside the model is checked, never
    stored. "First reached" follows the explorers' order: a level's states in the
    order of their views' fingerprints (the one thing borrowed from the engine, through
    :meth:`Kernel.fingerprint`, only to order a level), each state's successors in
    action order.
    """
    k = Kernel(spec, symmetry=False, view=False)
    order = Kernel(spec, symmetry=False)  # its fingerprint is the view's
    assert order.view is not None
    kept = [c.index for c in spec.layout.cells if c.var in spec.view]
    invs = [p for p in spec.invariants if invariants is None or p.name in invariants]
    props = [p for p in spec.properties if invariants is None or p.name in invariants]
    deadlock = spec.check_deadlock if check_deadlock is None else check_deadlock

    def view(cells) -> tuple[int, ...]:
        return tuple(cells[i] for i in kept)

    def holds(p, cells, nxt=None) -> bool:
        s = k.scalar_view(cells)
        return bool(p.fn(spec, s) if nxt is None else p.fn(spec, s, k.scalar_view(nxt)))

    def inside(cells) -> bool:
        return all(holds(p, cells) for p in spec.constraints)

    def allowed(cells, nxt) -> bool:
        return all(holds(p, cells, nxt) for p in spec.action_constraints)

    def first_bad_invariant(cells):
        return next((p.name for p in invs if not holds(p, cells)), None)

    parent: dict[tuple[int, ...], tuple[int, ...] | None] = {}  # by view
    rep: dict[tuple[int, ...], tuple[int, ...]] = {}  # the state kept, by view

    def trace_to(v) -> tuple[tuple[int, ...], ...]:
        out = []
        while v is not None:
            out.append(rep[v])
            v = parent[v]
        return tuple(reversed(out))

    level: list[tuple[int, ...]] = []  # states kept
    dropped: list[tuple[int, ...]] = []  # initial states outside the constraints
    for cells in k.initial_states():
        if not inside(cells):
            dropped.append(tuple(cells))
        elif view(cells) not in parent:
            parent[view(cells)] = None
            rep[view(cells)] = tuple(cells)
            level.append(tuple(cells))
    depth = generated = d = 0
    seen: list[frozenset[tuple[int, ...]]] = []

    def oracle(*args, **kw) -> Oracle:
        return Oracle(*args, **kw, levels=tuple(seen))

    while True:
        seen.append(frozenset(level))
        bad = {(c, n) for c in level + (dropped if d == 0 else [])
               if (n := first_bad_invariant(list(c))) is not None}
        if bad:
            c = min(bad)[0]
            trace = trace_to(view(c)) if c in level else (c,)
            return oracle("violation", len(parent), depth, generated, "invariant",
                          frozenset(n for _, n in bad), trace)
        new: list[tuple[int, ...]] = []
        dead, outside_bad, prop_bad = [], set(), set()
        for c in sorted(level, key=lambda c: order.fingerprint(list(c))):
            succ = k.successors(list(c))
            if deadlock and not succ:
                dead.append(c)
            for _inst, nxt in succ:
                generated += 1
                for p in props:
                    if not holds(p, list(c), nxt):
                        prop_bad.add((c, tuple(nxt), p.name))
                        break
                if inside(nxt) and allowed(list(c), nxt):
                    if view(nxt) not in parent:
                        parent[view(nxt)] = view(c)
                        rep[view(nxt)] = tuple(nxt)
                        new.append(tuple(nxt))
                elif (n := first_bad_invariant(nxt)) is not None:
                    outside_bad.add((c, tuple(nxt), n))
        if new:
            depth = d + 1
        total = len(parent)
        if dead:
            return oracle("deadlock", total, depth, generated, "deadlock",
                          frozenset({"Deadlock"}), trace_to(view(min(dead))))
        for kind, found in (("invariant", outside_bad), ("action", prop_bad)):
            if found:
                c, nxt, _ = min(found)
                return oracle("violation", total, depth, generated, kind,
                              frozenset(n for _, _, n in found), trace_to(view(c)) + (nxt,))
        if not new:
            return oracle("ok", total, depth, generated)
        level = new
        d += 1


def model_states(spec) -> tuple[set[tuple[int, ...]], set[tuple[int, ...]]]:
    """``(stored, fringe)``: the states a check stores (symmetry off; invariants,
    deadlocks and action properties ignored), and the states outside the model that it
    reaches: initial states outside the state constraints, and successors of stored
    states outside the state constraints or through a transition that violates an
    action constraint (and not stored through another). A random walk visits only
    these: it stops at a fringe state."""
    k = Kernel(spec, symmetry=False)

    def holds(p, cells, nxt=None) -> bool:
        s = k.scalar_view(cells)
        return bool(p.fn(spec, s) if nxt is None else p.fn(spec, s, k.scalar_view(nxt)))

    stored: set[tuple[int, ...]] = set()
    reached: set[tuple[int, ...]] = set()
    todo = []
    for cells in k.initial_states():
        reached.add(tuple(cells))
        if all(holds(p, cells) for p in spec.constraints) and tuple(cells) not in stored:
            stored.add(tuple(cells))
            todo.append(list(cells))
    while todo:
        c = todo.pop()
        for _inst, nxt in k.successors(c):
            reached.add(tuple(nxt))
            if all(holds(p, nxt) for p in spec.constraints) and \
                    all(holds(p, c, nxt) for p in spec.action_constraints) and \
                    tuple(nxt) not in stored:
                stored.add(tuple(nxt))
                todo.append(nxt)
    return stored, reached - stored


def _canonicaliser(spec, sets):
    """Orbit representative by brute force over values (not packed words)."""
    layout = spec.layout
    (name, ids), = sets.items()
    perms = [dict(zip(ids, p)) for p in itertools.permutations(ids)]

    def permute(values, pi):
        out = {}
        for var, info in layout.vars.items():
            cell = layout.cells[info.first_cell]
            out[var] = _permute_value(values[var], list(info.dim_names), cell, name, pi)
        return out

    def canon(cells):
        values = layout.values_from_cells(cells)
        return min(tuple(layout.cells_from_values(permute(values, pi))) for pi in perms)

    return canon


def _permute_value(v, dim_names, cell, name, pi):
    """Value ``v`` of a variable with (remaining) array dimensions ``dim_names`` under
    the permutation ``pi`` of the id set ``name``: indices over ``name`` are moved,
    leaf references to ``name`` (a single id or a set of ids) are renamed."""
    if dim_names:
        first, rest = dim_names[0], dim_names[1:]
        return {(pi[i] if first == name else i): _permute_value(x, rest, cell, name, pi)
                for i, x in v.items()}
    if cell.ref != name:
        return v
    if cell.kind == "set":
        return sorted(pi[m] for m in v)
    return pi.get(v, v)


def assert_replays(spec, trace) -> None:
    """Every step of a trace is a transition of the spec by the recorded action,
    evaluated with the scalar evaluator (symmetry off: the states are real ones)."""
    k = Kernel(spec, symmetry=False)
    layout = spec.layout
    cells = layout.cells_from_values(trace[0].state)
    assert cells in k.initial_states()
    for step in trace[1:]:
        inst = spec.action_by_label(step.action, step.params)
        assert inst is not None
        nxt = k.step(cells, inst)
        assert nxt == layout.cells_from_values(step.state)
        cells = nxt


def random_walk(kernel: Kernel, choices: list[int], start: int = 0) -> list[int]:
    """The state reached from initial state ``start`` (modulo their number) by taking,
    at each step, successor ``choice`` (modulo their number); stops at a deadlock."""
    inits = kernel.initial_states()
    cells = inits[start % len(inits)]
    for c in choices:
        succ = kernel.successors(cells)
        if not succ:
            break
        cells = succ[c % len(succ)][1]
    return cells
