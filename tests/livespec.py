r"""Random small specs with fairness and temporal properties, and a brute-force liveness oracle.

:func:`live_spec` draws a spec of 1-3 small integer variables, 1-5 guarded actions
(increments, resets, copies; see :mod:`tests.randspec`) and sometimes a parameterised
family ``Bump(i)``, each with random fairness (none, weak, strong, or the family as
one action), and one temporal property of each form over random atoms (``v == c``,
``v <= c``, ``v != c``), some checked under a subset of the fairness, and one of each
form over steps (``[]<>A``, ``<>A``, ``P ~> A``) with a random step formula ``A``:
TLA+'s ``<<B>>_v`` for an action ``B`` (an atom of ``s`` and one of ``t``) and a
subscript ``v`` (every variable, some of them, or a coarser function of them), or
``P \/ <<B>>_v``, or ``B`` alone (true on some stuttering steps). Some fairness
conditions join two actions (``"A0 | A1"``). The class records what it drew in
``_oracle`` for the oracle.

:func:`oracle_verdicts` shares nothing with :mod:`modelcheck.liveness` but the scalar
evaluator: it builds the graph one state at a time with ``Kernel.successors``, and
decides every property **from the definitions**: a behaviour's infinitely-visited
states form a strongly connected set S (a single state stutters), and the best such
behaviour traverses every transition inside S; so a fair cycle exists within a set of
states iff some strongly connected subset S of it satisfies, for every condition,
WF: a step of the action inside S or a state of S where it is disabled; SF: a step
inside S or disabled at every state of S. Every subset of every SCC (networkx) is
enumerated as a bitmask. Over steps, a behaviour that avoids the steps satisfying
``A`` from some point on traverses only the other transitions inside S (S strongly
connected through them, and every one of them traversed), or stutters forever in a
single state where stuttering does not satisfy ``A``; the oracle evaluates ``A``
itself on the states' values (its own ``<<B>>_v``). :func:`check_lasso` checks a
reported lasso the same way, on its own states.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
from hypothesis import strategies as st

from modelcheck import Int, Spec, action, where
from modelcheck.kernel import Kernel
from modelcheck.temporal import (
    always_eventually,
    angle,
    eventually,
    eventually_always,
    leads_to,
)
from tests.randspec import _make_action

__all__ = ["live_spec", "oracle_verdicts", "Conditions", "check_lasso", "weak_fair_verdicts",
           "Selected", "member",
           "ORACLE_MAX_SCC"]

ORACLE_MAX_SCC = 10

FORMS = ("eventually", "always_eventually", "eventually_always", "leads_to")
STEP_FORMS = ("eventually", "always_eventually", "leads_to")


def _atom(var: int, op: str, c: int):
    def f(s: Any) -> Any:
        x = getattr(s, f"v{var}")
        return {"==": x == c, "<=": x <= c, "!=": x != c}[op]

    f.desc = f"v{var} {op} {c}"  # type: ignore[attr-defined]
    return f


def _bump(n: int, hi: int, guard_var: int, guard_val: int):
    def Bump(self: Any, s: Any, t: Any, i: int) -> Any:
        cur = getattr(s, f"v{i}")
        setattr(t, f"v{i}", where(cur < hi, cur + 1, 0))
        return getattr(s, f"v{guard_var}") != guard_val

    return Bump


class StepFormula:
    """A drawn step formula: ``[P \\/] <<B>>_v`` or ``B`` alone, with ``B`` the
    conjunction ``b_s(s) /\\ b_t(t)``. :meth:`fn` is what the spec returns (the
    product's ``angle``); :meth:`holds` is the oracle's own evaluation on two scalar
    views."""

    def __init__(self, p: Any, b_s: Any, b_t: Any, v: Any, kind: str) -> None:
        self.p, self.b_s, self.b_t, self.v, self.kind = p, b_s, b_t, v, kind

    def _subscript(self) -> Any:
        kind, arg = self.v
        if kind == "all":
            return None
        if kind == "names":
            return arg
        return lambda x: tuple(where(getattr(x, f"v{i}") <= c, 0, 1) for i, c in arg)

    def fn(self, s: Any, t: Any) -> Any:
        b = self.b_s(s) & self.b_t(t)
        if self.kind == "raw":
            return b
        a = angle(b, s, t, self._subscript())
        return a if self.kind == "angle" else self.p(s) | a

    def holds(self, s: Any, t: Any, s_cells: tuple[int, ...], t_cells: tuple[int, ...]) -> bool:
        b = bool(self.b_s(s)) and bool(self.b_t(t))
        if self.kind == "raw":
            return b
        kind, arg = self.v
        if kind == "all":
            moved = s_cells != t_cells
        elif kind == "names":
            moved = any(int(getattr(s, n)) != int(getattr(t, n)) for n in arg)
        else:
            moved = any((int(getattr(s, f"v{i}")) <= c) != (int(getattr(t, f"v{i}")) <= c)
                        for i, c in arg)
        return (b and moved) or (self.kind == "or" and bool(self.p(s)))


def _step_fn(form: str, p: Any, f: StepFormula) -> Any:
    if form == "leads_to":
        def fn(self: Any, s: Any, t: Any) -> Any:
            return p(s), f.fn(s, t)
    else:
        def fn(self: Any, s: Any, t: Any) -> Any:
            return f.fn(s, t)
    return fn


def _prop_fn(form: str, p: Any, q: Any) -> Any:
    if form == "leads_to":
        def fn(self: Any, s: Any) -> Any:
            return p(s), q(s)
    else:
        def fn(self: Any, s: Any) -> Any:
            return p(s)
    return fn


@st.composite
def live_spec(draw: st.DrawFn) -> type[Spec]:
    n = draw(st.integers(1, 3))
    his = [draw(st.integers(1, 2)) for _ in range(n)]
    ns: dict[str, Any] = {"check_deadlock": False}
    for i, hi in enumerate(his):
        ns[f"v{i}"] = Int(0, hi)
    fair: dict[str, str] = {}
    names: list[str] = []
    for a in range(draw(st.integers(1, 5))):
        gv = draw(st.integers(0, n - 1))
        fn = _make_action(gv, draw(st.sampled_from(["<", "==", "!="])),
                          draw(st.integers(0, his[gv])),
                          draw(st.sampled_from(["inc", "inc", "reset", "copy"])),
                          draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)), min(his))
        fn.__name__ = f"A{a}"
        kind = draw(st.sampled_from([None, None, "weak", "strong"]))
        ns[f"A{a}"] = action(fair=kind)(fn)
        names.append(f"A{a}")
        if kind:
            fair[f"A{a}"] = kind
    if len(names) >= 2 and draw(st.integers(0, 3)) == 0:
        # WF/SF of the disjunction of two actions, as one condition
        pair = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
        group = " | ".join(pair)
        fair[group] = draw(st.sampled_from(["weak", "strong"]))
        ns["fairness"] = {group: fair[group]}
    if draw(st.booleans()):
        gv = draw(st.integers(0, n - 1))
        kind = draw(st.sampled_from([None, "weak", "strong", "weak-family", "strong-family"]))
        ns["Bump"] = action(i=range(n), fair=kind)(
            _bump(n, min(his), gv, draw(st.integers(0, his[gv]))))
        names.append("Bump")
        if kind:
            fair["Bump"] = kind
    inits = draw(st.lists(st.tuples(*(st.integers(0, hi) for hi in his)), min_size=1,
                          max_size=2))

    def init_states(self: Any) -> Any:
        for values in inits:
            yield {f"v{i}": v for i, v in enumerate(values)}

    ns["init_states"] = init_states

    def atom() -> Any:
        var = draw(st.integers(0, n - 1))
        return _atom(var, draw(st.sampled_from(["==", "<=", "!="])),
                     draw(st.integers(0, his[var])))

    props: dict[str, tuple[str, Any, Any, tuple[str, ...] | None]] = {}
    for form in FORMS:
        p, q = atom(), atom()
        select: tuple[str, ...] | None = None
        if draw(st.integers(0, 3)) == 0:
            select = tuple(draw(st.lists(st.sampled_from(names), max_size=2, unique=True)))
        deco = {"eventually": eventually, "always_eventually": always_eventually,
                "eventually_always": eventually_always, "leads_to": leads_to}[form]
        fn = _prop_fn(form, p, q)
        name = "".join(w.title() for w in form.split("_"))
        fn.__name__ = name
        ns[name] = (deco(fn) if select is None else deco(fairness=select)(fn))
        props[name] = (form, p, q, select, None)
    for form in STEP_FORMS:
        kind = draw(st.sampled_from(["angle", "angle", "or", "raw"]))
        vk = draw(st.sampled_from(["all", "names", "map"]))
        if vk == "all":
            v: Any = ("all", None)
        elif vk == "names":
            v = ("names", tuple(draw(st.lists(st.sampled_from([f"v{i}" for i in range(n)]),
                                              min_size=1, max_size=n, unique=True))))
        else:
            var = draw(st.integers(0, n - 1))
            v = ("map", ((var, draw(st.integers(0, his[var]))),))
        f = StepFormula(atom(), atom(), atom(), v, kind)
        p = atom()
        deco = {"eventually": eventually, "always_eventually": always_eventually,
                "leads_to": leads_to}[form]
        fn = _step_fn(form, p, f)
        name = "Step" + "".join(w.title() for w in form.split("_"))
        fn.__name__ = name
        ns[name] = deco(fn)
        props[name] = (form, p, None, None, f)
    cls = type("LiveSpec", (Spec,), ns)
    cls._oracle = {"fair": fair, "props": props}  # type: ignore[attr-defined]
    return cls


# --------------------------------------------------------------------------- the oracle
def _conditions(spec: Spec, select: tuple[str, ...] | None) -> list[tuple[str, frozenset[str]]]:
    """(kind, set of instance labels) per fairness condition, from what the generator drew."""
    out = []
    for name, kind in type(spec)._oracle["fair"].items():  # type: ignore[attr-defined]
        if select is not None and name not in select:
            continue
        if "|" in name:  # two actions without parameters, one condition
            members = name.split(" | ")
            out.append((kind, frozenset(a.label for a in spec.actions if a.name in members)))
            continue
        labels = [a.label for a in spec.actions if a.name == name]
        if kind.endswith("-family"):
            out.append((kind.split("-")[0], frozenset(labels)))
        else:
            out.extend((kind, frozenset([lab])) for lab in labels)
    return out


def _graph(spec: Spec) -> tuple[list[tuple[int, ...]], set[int], list[list[tuple[str, int]]]]:
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    index: dict[tuple[int, ...], int] = {}
    states: list[tuple[int, ...]] = []
    todo = []
    for cells in k.initial_states():
        t = tuple(cells)
        if t not in index:
            index[t] = len(states)
            states.append(t)
            todo.append(t)
    init = set(range(len(states)))
    out: list[list[tuple[str, int]]] = []
    i = 0
    while i < len(states):
        succ = []
        for inst, nxt in k.successors(list(states[i])):
            t = tuple(nxt)
            if t == states[i]:
                continue  # no step: stuttering
            if t not in index:
                index[t] = len(states)
                states.append(t)
            succ.append((inst.label, index[t]))
        out.append(succ)
        i += 1
    return states, init, out


class Selected:
    """A condition whose action the state selects (TLA+'s ``WF_vars(Return(c,
    alloc[c]))``): of the instances ``labels``, those ``pick(view, label)`` keeps in the
    state ``view``; :func:`member` asks it."""

    def __init__(self, labels: frozenset[str], pick: Any) -> None:
        self.labels, self.pick = labels, pick

    def __repr__(self) -> str:
        return f"Selected({sorted(self.labels)})"


def member(c: Any, view: Any, lab: str) -> bool:
    """Is a step by ``lab`` from the state ``view`` a step of condition ``c`` (a set of
    labels, or :class:`Selected`)?"""
    if isinstance(c, Selected):
        return lab in c.labels and bool(c.pick(view, lab))
    return lab in c


def _fair_sets(n: int, all_edges: list[list[tuple[str, int]]],
               conds: list[tuple[str, Any]],
               edges: list[list[tuple[str, int]]] | None = None,
               stutter: list[bool] | None = None, views: list[Any] | None = None
               ) -> list[int]:
    """Every strongly connected set of states (bitmask) a fair behaviour can visit
    infinitely often, taking only the transitions of ``edges`` (default: all) and, in a
    single state, stuttering only where ``stutter`` allows it (``views``: the states, for
    conditions the state selects)."""
    def has(c: Any, u: int, lab: str) -> bool:
        return member(c, views[u] if views is not None else None, lab)

    enabled = [[any(has(c, u, lab) for lab, _ in all_edges[u]) for u in range(n)]
               for _, c in conds]
    edges = all_edges if edges is None else edges
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from((u, v) for u in range(n) for _, v in edges[u])
    succ = [0] * n
    pred = [0] * n
    for u in range(n):
        for _, v in edges[u]:
            succ[u] |= 1 << v
            pred[v] |= 1 << u
    out = []
    for scc in nx.strongly_connected_components(g):
        members = sorted(scc)
        assert len(members) <= ORACLE_MAX_SCC
        for bits in range(1, 1 << len(members)):
            nodes = [members[j] for j in range(len(members)) if bits >> j & 1]
            s = sum(1 << u for u in nodes)
            if not _connected(s, nodes[0], succ) or not _connected(s, nodes[0], pred):
                continue
            if len(nodes) == 1 and stutter is not None and not stutter[nodes[0]]:
                continue
            ok = True
            for (kind, c), en in zip(conds, enabled):
                taken = any(has(c, u, lab) and s >> v & 1 for u in nodes for lab, v in edges[u])
                off = [not en[u] for u in nodes]
                if not (taken or (any(off) if kind == "weak" else all(off))):
                    ok = False
                    break
            if ok:
                out.append(s)
    return out


def _connected(s: int, start: int, adj: list[int]) -> bool:
    seen = 1 << start
    frontier = seen
    while frontier:
        nxt = 0
        u = 0
        f = frontier
        while f:
            if f & 1:
                nxt |= adj[u]
            f >>= 1
            u += 1
        nxt &= s & ~seen
        seen |= nxt
        frontier = nxt
    return seen == s


def _reach(n: int, edges: list[list[tuple[str, int]]], start: set[int], allowed: int) -> int:
    seen = 0
    todo = [u for u in start if allowed >> u & 1]
    for u in todo:
        seen |= 1 << u
    while todo:
        u = todo.pop()
        for _, v in edges[u]:
            if allowed >> v & 1 and not seen >> v & 1:
                seen |= 1 << v
                todo.append(v)
    return seen


#: (kind, condition): the condition a set of instance labels, or :class:`Selected`
Conditions = list[tuple[str, Any]]


def oracle_verdicts(spec: Spec, conds: Conditions | None = None) -> dict[str, bool]:
    """Per temporal property of a :func:`live_spec` spec: does it hold? ``conds``: the
    fairness as (``"weak"``/``"strong"``, set of instance labels taken as one action)
    pairs, for every property (default: from what the generator drew)."""
    states, init, edges = _graph(spec)
    n = len(states)
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    out = {}
    views = [k.scalar_view(list(c)) for c in states]
    for name, (form, p, q, select, f) in type(spec)._oracle["props"].items():  # type: ignore
        if f is not None:
            out[name] = _step_verdict(n, edges, init,
                                      _conditions(spec, select) if conds is None else conds,
                                      form, [bool(p(v)) for v in views], f, views, states)
            continue
        fair = _fair_sets(n, edges, _conditions(spec, select) if conds is None else conds,
                          views=views)
        pv = [bool(p(k.scalar_view(list(c)))) for c in states]
        qv = [bool(q(k.scalar_view(list(c)))) for c in states]
        notp = sum(1 << u for u in range(n) if not pv[u])
        notq = sum(1 << u for u in range(n) if not qv[u])
        if form == "always_eventually":
            bad = any(s & ~notp == 0 for s in fair)
        elif form == "eventually_always":
            bad = any(s & notp for s in fair)
        elif form == "eventually":
            r = _reach(n, edges, init, notp)
            bad = any(s & ~notp == 0 and s & r for s in fair)
        else:
            bad = False
            inside = [s for s in fair if s & ~notq == 0]
            for u in range(n):
                if pv[u] and not qv[u]:
                    r = _reach(n, edges, {u}, notq)
                    if any(s & r for s in inside):
                        bad = True
                        break
        out[name] = not bad
    return out


def _step_verdict(n: int, edges: list[list[tuple[str, int]]], init: set[int],
                  conds: list[tuple[str, frozenset[str]]], form: str, pv: list[bool],
                  f: StepFormula, views: list[Any], states: list[tuple[int, ...]]) -> bool:
    """Does a property over steps hold? A violating behaviour takes no step satisfying
    ``f`` from some point on (from the start for ``<>``, from a ``P`` state for
    ``~>``)."""
    avoid = [[(lab, v) for lab, v in edges[u]
              if not f.holds(views[u], views[v], states[u], states[v])] for u in range(n)]
    stutter = [not f.holds(views[u], views[u], states[u], states[u]) for u in range(n)]
    fair = _fair_sets(n, edges, conds, avoid, stutter, views)
    everything = (1 << n) - 1
    if form == "always_eventually":
        return not fair
    if form == "eventually":
        r = _reach(n, avoid, init, everything)
        return not any(s & r for s in fair)
    return not any(pv[u] and any(s & _reach(n, avoid, {u}, everything) for s in fair)
                   for u in range(n))


def check_lasso(spec: Spec, violation: Any, conds: Conditions | None = None) -> None:
    """Assert that a reported lasso is a behaviour of ``spec``, fair under the property's
    conditions (``conds``, as for :func:`oracle_verdicts`) and violating the property,
    from the definitions."""
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    layout = spec.layout
    cells = [layout.cells_from_values(s.state) for s in violation.trace]
    loop = violation.loop
    assert loop is not None and 0 <= loop < len(cells)
    assert cells[0] in k.initial_states()
    labels = []
    for i, st_ in enumerate(violation.trace[1:], 1):
        inst = spec.action_by_label(st_.action, st_.params)
        assert inst is not None
        assert k.step(cells[i - 1], inst) == cells[i], f"step {i + 1} is not a transition"
        assert cells[i] != cells[i - 1]
        labels.append(inst.label)
    if loop < len(cells) - 1:
        assert cells[-1] == cells[loop], "the loop does not close"
        cycle = list(range(loop, len(cells) - 1))
        steps = [(labels[i], cells[i], cells[i + 1]) for i in range(loop, len(cells) - 1)]
    else:
        cycle, steps = [loop], []
    form, p, q, select, f = type(spec)._oracle["props"][violation.property]  # type: ignore
    for kind, c in _conditions(spec, select) if conds is None else conds:
        taken = any(member(c, k.scalar_view(s0), lab) for lab, s0, _ in steps)

        def en(i: int, c: Any = c) -> bool:
            return any(member(c, k.scalar_view(cells[i]), inst.label) and nxt != cells[i]
                       for inst, nxt in k.successors(cells[i]))

        off = [not en(i) for i in cycle]
        assert taken or (any(off) if kind == "weak" else all(off)), f"{kind} {set(c)} unfair"
    pv = [bool(p(k.scalar_view(c))) for c in cells]
    if f is not None:
        # the steps of the behaviour from position i on: the rest of the prefix, the
        # loop's steps (or the stuttering step of its single state)
        views = [k.scalar_view(c) for c in cells]
        tc = [tuple(c) for c in cells]
        last = len(cells) - 1
        sat = [f.holds(views[i], views[i + 1], tc[i], tc[i + 1]) for i in range(last)]
        if not steps:
            sat.append(f.holds(views[loop], views[loop], tc[loop], tc[loop]))

        def none_from(i: int) -> bool:
            return not any(sat[min(i, loop):])

        if form == "always_eventually":
            assert none_from(loop), "a loop step satisfies A"
        elif form == "eventually":
            assert none_from(0), "a step satisfies A"
        else:
            assert any(pv[i] and none_from(i) for i in range(len(cells))), \
                "no P state is followed by steps that never satisfy A"
        return
    qv = [bool(q(k.scalar_view(c))) for c in cells]
    if form == "always_eventually":
        assert not any(pv[i] for i in cycle)
    elif form == "eventually_always":
        assert not all(pv[i] for i in cycle)
    elif form == "eventually":
        assert not any(pv)
    else:
        # some P /\ ~Q state after which (the rest of the prefix and the loop) Q never holds
        last = len(cells) - 1 if steps else loop
        ok = any(pv[i] and not any(qv[j] for j in range(min(i, loop), last + 1))
                 for i in range(last + 1))
        assert ok, "no P state is followed by ~Q forever"


# ----------------------------------------------- the oracle for any spec with weak fairness
def weak_fair_verdicts(spec: Spec) -> dict[str, bool]:
    """Per temporal property of states of any spec whose fairness is all weak, per action instance
    (``fair="weak"`` or ``fairness = {name: "weak"}``): does it hold?

    Under weak fairness a strongly connected set S of states is fair iff, per condition,
    an action step lies inside S or the action is disabled at a state of S; that is
    preserved by supersets within one SCC, so only the maximal SCCs (networkx) of the
    relevant subgraph need checking (a single state with no step inside it stutters).
    Shares with the checker only the scalar evaluator (``Kernel.successors``) and the
    properties' predicates."""
    cls = type(spec)
    kinds = {n: d.fair for n, d in cls._actions.items() if d.fair is not None}
    table = cls.fairness(spec) if callable(cls.fairness) else cls.fairness
    # the table's conditions are conjoined with the decorators' (an action in both keeps
    # both kinds: only weak may be asserted below)
    assert set(kinds.values()) | set(table.values()) <= {"weak"}, \
        "only per-instance weak fairness"
    kinds.update(table)
    states, init, edges = _graph(spec)
    n = len(states)
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    views = [k.scalar_view(list(c)) for c in states]

    def groups(select: Any) -> list[frozenset[str]]:
        out = []
        for name in kinds:
            if select is not None and name not in select:
                continue
            labels: dict[tuple[Any, ...], set[str]] = {}
            for a in spec.actions:
                if a.decl.name == name:
                    labels.setdefault(tuple(a.params), set()).add(a.label)
            out.extend(frozenset(ls) for ls in labels.values())
        return out

    def fair_sccs(allowed: set[int], conds: list[frozenset[str]]) -> list[set[int]]:
        g = nx.DiGraph()
        g.add_nodes_from(allowed)
        g.add_edges_from((u, v) for u in allowed for _, v in edges[u] if v in allowed)
        out = []
        for scc in nx.strongly_connected_components(g):
            ok = all(any(lab in c and v in scc for u in scc for lab, v in edges[u])
                     or any(not any(lab in c for lab, _ in edges[u]) for u in scc)
                     for c in conds)
            if ok:
                out.append(scc)
        return out

    def reaches(start: set[int], allowed: set[int], targets: set[int]) -> bool:
        seen = {u for u in start if u in allowed}
        todo = list(seen)
        while todo:
            u = todo.pop()
            if u in targets:
                return True
            for _, v in edges[u]:
                if v in allowed and v not in seen:
                    seen.add(v)
                    todo.append(v)
        return False

    verdicts = {}
    for decl in spec.temporal:
        if decl.steps:
            continue  # properties of states only
        conds = groups(decl.fairness)
        vals = [[bool(part.fn(spec, v)) for v in views] for part in decl.parts()]
        notp = {u for u in range(n) if not vals[0][u]}
        if decl.form == "eventually_always":
            bad = any(scc & notp for scc in fair_sccs(set(range(n)), conds))
        elif decl.form == "always_eventually":
            bad = bool(fair_sccs(notp, conds))
        elif decl.form == "eventually":
            cyc = set().union(*fair_sccs(notp, conds))
            bad = reaches(set(init), notp, cyc)
        else:
            notq = {u for u in range(n) if not vals[1][u]}
            cyc = set().union(*fair_sccs(notq, conds))
            bad = reaches({u for u in notq if vals[0][u]}, notq, cyc)
        verdicts[decl.name] = not bad
    return verdicts
