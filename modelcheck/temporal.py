"""Temporal properties and fairness: what a spec says about infinite behaviours.

A spec declares **fairness** on its actions and **temporal properties** as decorated
methods returning state predicates; :mod:`modelcheck.liveness` checks them.

Fairness (TLA+'s meaning; a step counts only if it changes the state, and an action
is *enabled* in a state when it has a successor different from that state):

* ``@action(b=Brokers, fair="weak")``: every instance is weakly fair, TLA+'s
  ``\\A b: WF_vars(A(b))``: if it is continuously enabled from some point on, one of its
  steps is eventually taken. ``fair="strong"``: strongly fair, ``SF_vars``: if it is
  enabled infinitely often, a step is eventually taken.
* ``"weak-family"`` / ``"strong-family"``: the family as one action,
  ``WF_vars(\\E b: A(b))`` (some instance's step counts, enabled when some instance is).
* ``fairness = {"Tick": "weak", "Register(b=1)": "strong"}`` on the class: the same by
  action name or instance label (that one instance), added to the ``fair=`` of
  ``@action``: every declared condition holds (TLA+ conjoins them).
* ``fairness = {"Rsp | DoRd": "weak"}``: a disjunction of actions as one action, per
  binding of their parameters (which must be the same): ``\\A p: WF_vars(Rsp(p) \\/
  DoRd(p))``; a part may be an instance label (a branch: ``"MemQWr[QCond] | MemQRd"``);
  with ``"weak-family"`` all their instances are one action.

The table is resolved when the spec is bound with its constants (see
:mod:`modelcheck.fairness`).

Temporal properties (``P``, ``Q`` are state predicates, written as invariants are):

* ``@eventually`` — ``def Name(self, s): return P`` — ``<>P``
* ``@always_eventually`` — ``[]<>P`` (P holds infinitely often)
* ``@eventually_always`` — ``<>[]P`` (from some point on P holds forever)
* ``@leads_to`` — ``def Name(self, s): return P, Q`` — ``P ~> Q``, i.e. ``[](P => <>Q)``

**Properties of steps.** A property whose method takes ``(self, s, t)`` is about the
steps of a behaviour: what it returns (the target ``Q`` of ``~>``) is a *step
formula* ``A``, evaluated on every step ``(s, t)``, including stuttering steps (where
``t`` is ``s``: the steps a behaviour may take anywhere, and forever in a state with
no enabled action). TLA+'s ``<<A>>_v`` (an ``A`` step that changes ``v``; never a
stuttering step) is ``angle(A, s, t, v)``:

* ``@always_eventually`` — ``def Name(self, s, t): return angle(A, s, t)`` —
  ``[]<><<A>>_vars`` (infinitely many A steps)
* ``@eventually`` — ``<><<A>>_v``
* ``@leads_to`` — ``return P, angle(A, s, t, v)`` — ``P ~> <<A>>_v``; ``P`` is a state
  predicate (it must not read ``t``: a ``P`` whose value depends on ``t`` is refused)

A step formula may mix state predicates in: ``[]<>(P \\/ <<A>>_v)`` is ``P |
angle(...)``, which is ``[]<>P \\/ []<><<A>>_v`` (``[]<>`` distributes over ``\\/``):
the shape of weak fairness written as a property, ``[]<>~ENABLED <<A>>_v \\/
[]<><<A>>_v``, as refinement proofs state it with ENABLED computed by hand.
``@eventually_always`` over steps (``<>[][A]_v``) is not supported and is refused
when the class is defined.

Each decorator also takes ``fairness=("Tick", "Register")``: check the property
under only the fairness conditions of these actions (names or instance labels;
``()`` for none). By default a property is checked under all of the spec's fairness.

For example::

    class Clock(Spec):
        h = Int(0, 2)

        @action(fair="weak")
        def Tick(self, s, t):
            t.h = where(s.h < 2, s.h + 1, 0)
            return s.h >= 0

        @always_eventually
        def Midnight(self, s):
            return s.h == 0
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import reduce, update_wrapper
from typing import Any

import numpy as np

from .errors import SpecDefinitionError, SpecEvaluationError
from .fairness import FairnessCondition, label_of, select_fairness
from .spec import PredicateDecl, RoleKind, Spec
from .types import Value
from .undefined import _bool

__all__ = ["TemporalDecl", "FairnessCondition", "FORMS", "STEP_FORMS", "eventually",
           "always_eventually", "eventually_always", "leads_to", "angle", "changed",
           "fairness_conditions", "label_of", "graph_parts"]

#: the temporal forms, with their TLA+ text (``P``, ``Q`` the property's predicates)
FORMS = {"eventually": "<>P", "always_eventually": "[]<>P", "eventually_always": "<>[]P",
         "leads_to": "P ~> Q"}
#: the forms over steps (``A`` the property's step formula), see the module doc
STEP_FORMS = {"eventually": "<>A", "always_eventually": "[]<>A", "leads_to": "P ~> A"}


def changed(s: Any, t: Any, v: Any = None) -> Any:
    """Whether ``v`` differs between the states ``s`` and ``t`` (TLA+'s ``v' # v``).

    ``v`` is ``None`` (every variable: TLA+'s ``vars``), a variable name or a tuple
    of names, or a callable ``v(view)`` returning a value or a tuple of values of one
    state (an expression such as a refinement mapping's ``<<memInt, omem>>``):
    scalars, columns or set, record, sequence and bag values."""
    if v is None or isinstance(v, (str, tuple, list)) and all(isinstance(x, str) for x in v):
        layout = s._layout
        names = layout.vars if v is None else [v] if isinstance(v, str) else list(v)
        cells: list[int] = []
        for name in names:
            info = layout.vars.get(name)
            if info is None:
                raise SpecEvaluationError(
                    f"changed/angle: unknown variable {name!r}; the spec declares: "
                    + ", ".join(layout.vars))
            cells.extend(range(info.first_cell, info.first_cell + info.n_cells))
        diffs: list[Any] = [s._cell(i) != t._cell(i) for i in cells]
    elif callable(v):
        a, b = v(s), v(t)
        a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
        if not isinstance(b, tuple) or len(a) != len(b):
            raise SpecEvaluationError("changed/angle: v must give a tuple of the same length "
                                      "on both states.")
        diffs = []
        for x, y in zip(a, b):
            if not isinstance(x, (Value, np.ndarray, np.generic, int, bool)):
                raise SpecEvaluationError(
                    f"changed/angle: v gave a {type(x).__name__}; give scalars or values "
                    "(for an array variable, its elements or its name).")
            diffs.append(x != y)
    else:
        raise SpecEvaluationError(
            f"changed/angle: v must be None, variable names or a callable, got {v!r}.")
    return reduce(lambda x, y: x | y, (_bool(d, "changed") for d in diffs), np.bool_(False))


def angle(a: Any, s: Any, t: Any, v: Any = None) -> Any:
    """TLA+'s ``<<A>>_v``: the step ``(s, t)`` is an ``A`` step (``a``, a boolean of
    the two states) that changes ``v`` (see :func:`changed`; ``None``: ``vars``).
    False on every stuttering step."""
    return _bool(a, "the action of angle") & changed(s, t, v)


def _pick(fn: Callable[..., Any], i: int | None, name: str, where: str, *,
          stutter: bool = False) -> Callable[..., Any]:
    """The predicate ``fn``'s result (its element ``i`` for a leads-to pair); with
    ``stutter``, on the stuttering step of a state (``fn(spec, s, s)``)."""
    def get(spec: Any, s: Any, *t: Any) -> Any:
        r = fn(spec, s, s) if stutter else fn(spec, s, *t)
        if i is None:
            return r
        if not isinstance(r, tuple) or len(r) != 2:
            raise SpecDefinitionError(
                f"{where}: leads-to property {name} must return a pair "
                f"(P, Q) of predicates, got {type(r).__name__}."
            )
        return r[i]

    out: Callable[..., Any]
    if stutter:
        def one(spec: Any, s: Any) -> Any:
            return get(spec, s)
        out = one
    elif len(inspect.signature(fn).parameters) == 3:
        def two(spec: Any, s: Any, t: Any) -> Any:
            return get(spec, s, t)
        out = two
    else:
        def one_(spec: Any, s: Any) -> Any:
            return get(spec, s)
        out = one_
    sig = inspect.signature(out)
    update_wrapper(out, fn)  # its name, and __wrapped__: errors name fn's lines
    out.__dict__["__signature__"] = sig  # its own arguments, not fn's
    return out


class TemporalDecl(PredicateDecl):
    """A temporal property: its form, its predicate function (of states, or of steps
    when it takes ``(self, s, t)``) and which fairness conditions it is checked under
    (``None``: all of the spec's)."""

    def __init__(self, fn: Callable[..., Any], form: str,
                 fairness: Sequence[str] | None = None) -> None:
        super().__init__(fn, RoleKind.TEMPORAL)
        if isinstance(fairness, str):
            raise SpecDefinitionError(
                f"{self.where}: temporal property {self.name}: fairness must be a tuple of "
                f"action names, e.g. fairness=({fairness!r},)"
            )
        self.form = form
        self.fairness = None if fairness is None else tuple(fairness)
        #: a property of steps: its method takes ``(self, s, t)``
        self.steps = len(inspect.signature(fn).parameters) == 3
        if self.steps and form not in STEP_FORMS:
            raise SpecDefinitionError(
                f"{self.where}: temporal property {self.name}: {FORMS[form]} over steps "
                f"(a method of (self, s, t)) is not supported; the forms over steps are "
                f"{', '.join(STEP_FORMS.values())} (@eventually, @always_eventually, "
                "@leads_to). Write it over states, (self, s)."
            )

    @property
    def formula(self) -> str:
        """The form's TLA+ text: ``P ~> Q``, ``[]<>A`` (``A`` a step formula)..."""
        return STEP_FORMS[self.form] if self.steps else FORMS[self.form]

    def parts(self) -> list[PredicateDecl]:
        """The property's predicates, evaluated by the kernel: as invariant-like
        declarations, the state predicates (``Name`` for ``P``, or ``Name.P``,
        ``Name.Q`` for ``~>``); over steps, ``Name.A`` (kind ``RoleKind.ACTION``, the step
        formula on every transition) and ``Name.A@stutter`` (on the stuttering step of
        each state), and for ``~>`` also ``Name.P`` and ``Name.P@step`` (``P`` on every
        transition: it must be its value on the state alone)."""
        fn, name, where, doc = self.fn, self.name, self.where, self.doc
        pair = self.form == "leads_to"
        if not self.steps:
            if not pair:
                return [PredicateDecl(fn, RoleKind.INVARIANT, name=name, doc=doc)]
            return [PredicateDecl(_pick(fn, 0, name, where), RoleKind.INVARIANT,
                                  name=f"{name}.P", doc=doc),
                    PredicateDecl(_pick(fn, 1, name, where), RoleKind.INVARIANT,
                                  name=f"{name}.Q", doc=doc)]
        a = 1 if pair else None
        out = [PredicateDecl(_pick(fn, a, name, where), RoleKind.ACTION, name=f"{name}.A",
                             doc=doc),
               PredicateDecl(_pick(fn, a, name, where, stutter=True), RoleKind.INVARIANT,
                             name=f"{name}.A@stutter", doc=doc)]
        if pair:
            out += [PredicateDecl(_pick(fn, 0, name, where, stutter=True), RoleKind.INVARIANT,
                                  name=f"{name}.P", doc=doc),
                    PredicateDecl(_pick(fn, 0, name, where), RoleKind.ACTION,
                                  name=f"{name}.P@step", doc=doc)]
        return out


def _decorator(form: str) -> Callable[..., Any]:
    def deco(fn: Callable[..., Any] | None = None, /, *,
             fairness: Sequence[str] | None = None) -> Any:
        if fn is not None:
            return TemporalDecl(fn, form)
        return lambda f: TemporalDecl(f, form, fairness)

    deco.__name__ = form
    deco.__doc__ = (f"Declare the temporal property ``{FORMS[form]}`` "
                    "(see :mod:`modelcheck.temporal`).")
    return deco


eventually = _decorator("eventually")
always_eventually = _decorator("always_eventually")
eventually_always = _decorator("eventually_always")
leads_to = _decorator("leads_to")


def fairness_conditions(spec: Spec, select: Sequence[str] | None = None
                        ) -> list[FairnessCondition]:
    """The bound spec's fairness conditions (``fair=`` and the ``fairness`` table,
    conjoined; resolved when it was bound, see :mod:`modelcheck.fairness`), in action
    order; with ``select``, only those of the named action families, instance labels or
    groups (unknown names are an error)."""
    return select_fairness(spec, spec.fairness_conditions, select)


def graph_parts(per_prop: Sequence[tuple[TemporalDecl, Sequence[FairnessCondition]]]
                ) -> list[PredicateDecl]:
    """What the kernel evaluates on the state graph of the properties ``per_prop`` (each
    with its fairness conditions): the properties' parts, in order, then the state
    predicates of the conditions' selectors (``Return(S=held(c))``), once each."""
    guards = {g.name: g.decl for _, conds in per_prop for c in conds for g in c.predicates}
    return [*(part for p, _ in per_prop for part in p.parts()), *guards.values()]
