"""Random small specs with parameterised action families, for the family evaluator's tests.

Each spec has an array ``a`` of small ints and an array ``b`` of booleans over ``Cells``,
and a scalar ``x``. Its families (``@action(i=Cells)`` or ``@action(i=Cells, j=Cells)``)
combine guard and effect pieces drawn from a menu: reads and writes through the
parameter, through the predecessor (with ``where``), through a state value (dynamic,
possibly outside the index set), writes with a parameter value, copies between two
parameters, a read of the next state, and pieces an int and an array disagree on
(a Python ``if`` on the parameter, ``min``), which the family evaluator must hand
back to the per-instance evaluator. Some pieces may assign outside the declared
domain: the two evaluators must then report the same error.

Some specs also have a ``SetOf(Cells)`` variable ``S`` and an array ``r`` of records
over ``Cells``, with pieces that read and write them through the parameter (a set
value taking the parameter as an element, a record element selected by it), and
some have a family with two branches (``with t.branch(...)``), whose conditions and
effects are drawn from the same menus.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Bool,
    Ids,
    Int,
    Record,
    SetOf,
    Spec,
    action,
    action_property,
    invariant,
    where,
)

__all__ = ["random_family_spec", "GUARDS", "EFFECTS", "COMPOUND_GUARDS", "COMPOUND_EFFECTS"]

Piece = Callable[..., Any]

# guard pieces: (s, i, j, hi) -> boolean expression
GUARDS: dict[str, Piece] = {
    "a_lt": lambda s, i, j, hi: s.a[i] < hi,
    "a_eq_x": lambda s, i, j, hi: s.a[i] == s.x,
    "b": lambda s, i, j, hi: s.b[i],
    "not_b": lambda s, i, j, hi: ~s.b[i],
    "x_is_i": lambda s, i, j, hi: s.x == i,
    "i_even": lambda s, i, j, hi: i % 2 == 0,
    "pred_set": lambda s, i, j, hi: (i == 0) | s.b[where(i > 0, i - 1, i)],
    "b_at_x": lambda s, i, j, hi: s.b[s.x],  # a state index, may be outside Cells
    "mixed": lambda s, i, j, hi: (s.a[i] + i) % 2 == 1,
    "j_differs": lambda s, i, j, hi: (j != i) & (s.a[j] > s.a[i]),
    "py_if": lambda s, i, j, hi: (s.a[i] < hi) if i == 0 else ~s.b[i],
    "np_any": lambda s, i, j, hi: np.any(i == 0) | s.b[i],  # a reduction: per instance
    # an int index -1 for i == 0: an error, whose family form must not read b[0]
    "pred_or_minus_one": lambda s, i, j, hi: s.b[where(i > 0, i - 1, -1)],
}

# effect pieces: (s, t, i, j, hi) -> None
EFFECTS: dict[str, Piece] = {
    "inc_a": lambda s, t, i, j, hi: t.a.__setitem__(i, where(s.a[i] < hi, s.a[i] + 1, 0)),
    "flip_b": lambda s, t, i, j, hi: t.b.__setitem__(i, ~s.b[i]),
    "set_b": lambda s, t, i, j, hi: t.b.__setitem__(i, True),
    "inc_x": lambda s, t, i, j, hi: setattr(t, "x", where(s.x < hi, s.x + 1, 0)),
    "x_from_i": lambda s, t, i, j, hi: setattr(t, "x", i % (hi + 1)),
    "a0_from_i": lambda s, t, i, j, hi: t.a.__setitem__(0, i % (hi + 1)),
    "copy_ij": lambda s, t, i, j, hi: t.a.__setitem__(j, s.a[i]),
    "clear_pred": lambda s, t, i, j, hi: t.b.__setitem__(where(i > 0, i - 1, i), False),
    "b_at_x": lambda s, t, i, j, hi: t.b.__setitem__(s.x, True),
    "x_from_next": lambda s, t, i, j, hi: setattr(t, "x", t.a[i] % (hi + 1)),
    "x_from_next_b0": lambda s, t, i, j, hi: setattr(t, "x", where(t.b[0], 1, 0)),
    "py_min": lambda s, t, i, j, hi: setattr(t, "x", min(i, hi)),
    # errors: outside the domain (through a parameter index, and in a fixed cell), and
    # an int division by zero (for i == 1) that numpy would answer with 0
    "unbounded_inc": lambda s, t, i, j, hi: t.a.__setitem__(i, s.a[i] + 1),
    "x_unbounded": lambda s, t, i, j, hi: setattr(t, "x", s.x + i),
    "div_param": lambda s, t, i, j, hi: setattr(t, "x", (hi // (i - 1)) % (hi + 1)),
}

# pieces over the compound variables: S (SetOf(Cells)), r (Array(Cells, Record(v, on)))
COMPOUND_GUARDS: dict[str, Piece] = {
    "S_has": lambda s, i, j, hi: s.S.has(i),
    "S_lacks_j": lambda s, i, j, hi: ~s.S.has(j),
    "S_small": lambda s, i, j, hi: s.S.size() <= i,
    "r_on": lambda s, i, j, hi: s.r[i].on,
    "r_v_is_x": lambda s, i, j, hi: s.r[i].v == s.x,
    "r_at_x_on": lambda s, i, j, hi: s.r[s.x].on,  # a state index, may be outside Cells
    "r_eq": lambda s, i, j, hi: s.r[i] == s.r[j],
    "S_min_is_i": lambda s, i, j, hi: ~s.S.is_empty() & (s.S.min() == i),
}

COMPOUND_EFFECTS: dict[str, Piece] = {
    "S_add": lambda s, t, i, j, hi: setattr(t, "S", s.S.with_(i)),
    "S_del_j": lambda s, t, i, j, hi: setattr(t, "S", s.S.without(j)),
    "S_toggle": lambda s, t, i, j, hi: setattr(
        t, "S", where(s.S.has(i), s.S.without(i), s.S.with_(i))),
    "r_inc": lambda s, t, i, j, hi: t.r.__setitem__(
        i, s.r[i].with_fields(v=where(s.r[i].v < 1, s.r[i].v + 1, 0))),
    "r_on_from_S": lambda s, t, i, j, hi: t.r.__setitem__(
        i, s.r[i].with_fields(on=s.S.has(j))),
    "r_copy_ij": lambda s, t, i, j, hi: t.r.__setitem__(j, s.r[i]),
    "r_dict": lambda s, t, i, j, hi: t.r.__setitem__(i, {"v": i % 2, "on": s.b[i]}),
    "r_at_x": lambda s, t, i, j, hi: t.r.__setitem__(s.x, {"v": 1, "on": True}),
    "S_from_next_r": lambda s, t, i, j, hi: setattr(
        t, "S", where(t.r[i].on, s.S.with_(i), s.S)),
    # errors: a record field outside its domain, a set element outside Cells
    "r_unbounded": lambda s, t, i, j, hi: t.r.__setitem__(
        i, s.r[i].with_fields(v=s.r[i].v + 1)),
    "S_add_outside": lambda s, t, i, j, hi: setattr(t, "S", s.S.with_(i + 1)),
}

_ERRORS = {"unbounded_inc", "x_unbounded", "div_param", "pred_or_minus_one",
           "r_unbounded", "S_add_outside"}


def _family(guards: list[Piece], join_and: bool, effects: list[Piece], hi: int,
            two: bool) -> Callable[..., Any]:
    def body(s: Any, t: Any, i: Any, j: Any) -> Any:
        for e in effects:
            e(s, t, i, j, hi)
        g = guards[0](s, i, j, hi)
        for more in guards[1:]:
            g = (g & more(s, i, j, hi)) if join_and else (g | more(s, i, j, hi))
        return g

    if two:
        def fn2(self: Any, s: Any, t: Any, i: Any, j: Any) -> Any:
            return body(s, t, i, j)
        return fn2

    def fn1(self: Any, s: Any, t: Any, i: Any) -> Any:
        return body(s, t, i, i)
    return fn1


def _branched(guard: Piece, conds: tuple[Piece, Piece],
              effects: tuple[list[Piece], list[Piece], list[Piece]], hi: int,
              two: bool) -> Callable[..., Any]:
    """A family with effects outside its branches, then branches ``one`` and ``two``
    (written out in each function: the branches of an action are read from its source)."""
    if two:
        def fn2(self: Any, s: Any, t: Any, i: Any, j: Any) -> Any:
            for e in effects[0]:
                e(s, t, i, j, hi)
            with t.branch("one", conds[0](s, i, j, hi)):
                for e in effects[1]:
                    e(s, t, i, j, hi)
            with t.branch("two", conds[1](s, i, j, hi)):
                for e in effects[2]:
                    e(s, t, i, j, hi)
            return guard(s, i, j, hi)
        return fn2

    def fn1(self: Any, s: Any, t: Any, i: Any) -> Any:
        for e in effects[0]:
            e(s, t, i, i, hi)
        with t.branch("one", conds[0](s, i, i, hi)):
            for e in effects[1]:
                e(s, t, i, i, hi)
        with t.branch("two", conds[1](s, i, i, hi)):
            for e in effects[2]:
                e(s, t, i, i, hi)
        return guard(s, i, i, hi)
    return fn1


@st.composite
def random_family_spec(draw: st.DrawFn, *, errors: bool = False) -> type[Spec]:
    """A Spec subclass with 2-5 cells and 1-3 families (deadlock check on), perhaps
    compound variables and a branched family. With ``errors``, effects may assign
    outside the declared domain."""
    k = draw(st.integers(2, 5))
    hi = draw(st.integers(1, 3))
    cells = Ids(0, k - 1)
    ns: dict[str, Any] = {"Cells": cells, "a": Array(cells, Int(0, hi)),
                          "b": Array(cells, Bool()), "x": Int(0, hi)}
    guard_menu, effect_menu = dict(GUARDS), dict(EFFECTS)
    if draw(st.booleans()):
        ns["S"] = SetOf(cells)
        ns["r"] = Array(cells, Record(v=Int(0, 1), on=Bool()))
        guard_menu.update(COMPOUND_GUARDS)
        effect_menu.update(COMPOUND_EFFECTS)
    effect_names = sorted(k for k in effect_menu if errors or k not in _ERRORS)
    guard_names = sorted(k for k in guard_menu if errors or k not in _ERRORS)
    guard_pick = st.sampled_from(guard_names)
    effect_pick = st.sampled_from(effect_names)
    for f in range(draw(st.integers(1, 3))):
        two = draw(st.booleans())
        guards = [guard_menu[g] for g in draw(st.lists(guard_pick, min_size=1, max_size=2))]
        effects = [effect_menu[e] for e in draw(st.lists(effect_pick, min_size=1, max_size=2))]
        fn = _family(guards, draw(st.booleans()), effects, hi, two)
        fn.__name__ = f"F{f}"
        params = {"i": cells, "j": cells} if two else {"i": cells}
        ns[f"F{f}"] = action(**params)(fn)
    if draw(st.booleans()):
        two = draw(st.booleans())
        conds = (guard_menu[draw(guard_pick)], guard_menu[draw(guard_pick)])
        outside, one, other = ([effect_menu[e] for e in draw(st.lists(effect_pick, max_size=n))]
                               for n in (1, 2, 2))
        fn = _branched(guard_menu[draw(guard_pick)], conds, (outside, one, other), hi, two)
        fn.__name__ = "Br"
        ns["Br"] = action(**({"i": cells, "j": cells} if two else {"i": cells}))(fn)
    bound = draw(st.integers(0, 2 * hi))

    def inv(self: Any, s: Any) -> Any:
        return s.a[0] + s.x <= bound

    inv.__name__ = "SumBounded"
    ns["SumBounded"] = invariant(inv)
    if draw(st.booleans()):
        step = draw(st.integers(0, k - 1))

        def prop(self: Any, s: Any, t: Any) -> Any:
            return (t.a[step] >= s.a[step]) | t.b[step]

        prop.__name__ = "Grows"
        ns["Grows"] = action_property(prop)
    return type("FamilySpec", (Spec,), ns)
