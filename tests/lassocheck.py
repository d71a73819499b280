"""An independent check of a reported lasso against any spec with temporal properties.

It uses the scalar evaluator only (``Kernel.step``/``successors``), never the liveness
checker's graph: the trace starts in an initial state, every step is a transition of
the named action that changes the state, the loop closes (or is a single stuttering
state), every fairness condition of the property is satisfied on the loop from the
definitions (WF: taken on the loop or disabled at one of its states; SF: taken, or
disabled at all of them), and the property is false on the behaviour (over steps: its
step formula evaluated on the behaviour's steps, a stuttering loop's included).
"""

from __future__ import annotations

from typing import Any

from modelcheck import Spec
from modelcheck.kernel import Kernel
from modelcheck.temporal import TemporalDecl, fairness_conditions
from tests.livespec import Selected, member

__all__ = ["check_lasso_generic", "lasso_shape"]


def _decl(spec: Spec, name: str, library: Any = None) -> TemporalDecl:
    for p in spec.temporal:
        if p.name == name:
            assert isinstance(p, TemporalDecl)
            return p
    found = library(name) if library is not None else None
    assert isinstance(found, TemporalDecl), f"no temporal property {name}"
    return found


def check_lasso_generic(spec: Spec, violation: Any, library: Any = None,
                        conds: list[tuple[str, frozenset[str]]] | None = None) -> None:
    """Assert that ``violation`` (a liveness :class:`~modelcheck.result.Violation`) is a
    fair behaviour of ``spec`` violating its property. ``conds``: the fairness to check
    the loop against, as (``"weak"``/``"strong"``, instance labels such as ``Pass(1)``)
    pairs built without :mod:`modelcheck.fairness` (default: the checker's conditions
    of the property)."""
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    layout = spec.layout
    cells = [layout.cells_from_values(s.state) for s in violation.trace]
    loop = violation.loop
    assert loop is not None and 0 <= loop < len(cells)
    assert cells[0] in k.initial_states()
    ids = []
    labels = []
    for i, st in enumerate(violation.trace[1:], 1):
        inst = spec.action_by_label(st.action, st.params)
        assert inst is not None, f"step {i + 1}: unknown action {st.action}"
        assert k.step(cells[i - 1], inst) == cells[i], f"step {i + 1} is not a transition"
        assert cells[i] != cells[i - 1]
        ids.append(inst.id)
        labels.append(inst.label)
    if loop < len(cells) - 1:
        assert cells[-1] == cells[loop], "the loop does not close"
        cycle = list(range(loop, len(cells) - 1))
    else:
        cycle = [loop]
    decl = _decl(spec, violation.property, library)
    pairs: list[tuple[str, str, Any]] = []
    if conds is None:  # the checker's conditions (a selector's guards as it evaluates them)
        for c in fairness_conditions(spec, decl.fairness):
            labs = frozenset(spec.actions[i].label for i in c.action_ids)
            guards = {spec.actions[a].label: names for a, names in c.guards}
            preds = {g.name: g.decl for g in c.predicates}

            def pick(view: Any, lab: str, guards: Any = guards, preds: Any = preds) -> bool:
                return all(bool(preds[n].fn(spec, view)) for n in guards.get(lab, ()))

            pairs.append((c.kind, c.name, Selected(labs, pick) if guards else labs))
    else:
        pairs = [(kind, f"{kind} {c!r}", c) for kind, c in conds]
        assert all(c.labels if isinstance(c, Selected) else c for _, _, c in pairs), \
            "a condition names no instance"
    views = [k.scalar_view(c) for c in cells]
    for kind, name, c in pairs:
        if any(member(c, views[i], labels[i]) for i in cycle if i < len(labels)):
            continue

        def enabled(i: int, c: Any = c) -> bool:
            return any(member(c, views[i], inst.label) and nxt != cells[i]
                       for inst, nxt in k.successors(cells[i]))

        off = [not enabled(i) for i in cycle]
        assert any(off) if kind == "weak" else all(off), f"{name} is not satisfied"
    last = len(cells) - 1 if loop < len(cells) - 1 else loop
    if decl.steps:
        # the step formula A on each step of the behaviour: the prefix, the loop (or the
        # stuttering step of its single state)
        def a(i: int, j: int) -> bool:
            r = decl.fn(spec, views[i], views[j])
            return bool(r[1] if decl.form == "leads_to" else r)

        sat = [a(i, i + 1) for i in range(len(cells) - 1)]
        if loop == len(cells) - 1:
            sat.append(a(loop, loop))
        if decl.form == "always_eventually":
            assert not any(sat[loop:]), "a step of the loop satisfies A"
        elif decl.form == "eventually":
            assert not any(sat), "a step satisfies A"
        else:
            pv = [bool(decl.fn(spec, v, v)[0]) for v in views]
            assert any(pv[i] and not any(sat[min(i, loop):]) for i in range(last + 1)), \
                "no P state is followed by steps that never satisfy A"
        return
    parts = decl.parts()
    vals = [[bool(part.fn(spec, v)) for v in views] for part in parts]
    if decl.form == "always_eventually":
        assert not any(vals[0][i] for i in cycle)
    elif decl.form == "eventually_always":
        assert not all(vals[0][i] for i in cycle)
    elif decl.form == "eventually":
        assert not any(vals[0])
    else:
        pv, qv = vals
        assert any(pv[i] and not any(qv[j] for j in range(min(i, loop), last + 1))
                   for i in range(last + 1)), "no P state is followed by ~Q forever"


def lasso_shape(violation: Any) -> tuple[int, int, list[str]]:
    """(states, loop index, action names of the steps): what tests pin."""
    return len(violation.trace), violation.loop, [s.action for s in violation.trace[1:]]
