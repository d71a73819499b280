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
  action name or instance label, added to the ``fair=`` of ``@action``.

Temporal properties (``P``, ``Q`` are state predicates, written as invariants are):

* ``@eventually`` — ``def Name(self, s): return P`` — ``<>P``
* ``@always_eventually`` — ``[]<>P`` (P holds infinitely often)
* ``@eventually_always`` — ``<>[]P`` (from some point on P holds forever)
* ``@leads_to`` — ``def Name(self, s): return P, Q`` — ``P ~> Q``, i.e. ``[](P => <>Q)``

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import SpecDefinitionError
from .spec import ActionInstance, PredicateDecl, Spec

__all__ = ["TemporalDecl", "FairnessCondition", "FORMS", "eventually", "always_eventually",
           "eventually_always", "leads_to", "fairness_conditions", "label_of"]

#: the temporal forms, with their TLA+ text (``P``, ``Q`` the property's predicates)
FORMS = {"eventually": "<>P", "always_eventually": "[]<>P", "eventually_always": "<>[]P",
         "leads_to": "P ~> Q"}


class TemporalDecl(PredicateDecl):
    """A temporal property: its form, its state predicate function and which
    fairness conditions it is checked under (``None``: all of the spec's)."""

    def __init__(self, fn: Callable[..., Any], form: str,
                 fairness: Sequence[str] | None = None) -> None:
        super().__init__(fn, "temporal")
        if isinstance(fairness, str):
            raise SpecDefinitionError(
                f"{self.where}: temporal property {self.name}: fairness must be a tuple of "
                f"action names, e.g. fairness=({fairness!r},)"
            )
        self.form = form
        self.fairness = None if fairness is None else tuple(fairness)

    @property
    def formula(self) -> str:
        """``P ~> Q`` etc. with the property's name: ``EventuallyUnfenced: P ~> Q``."""
        return FORMS[self.form]

    def parts(self) -> list[PredicateDecl]:
        """The state predicates of the property as invariant-like declarations (``P``,
        and ``Q`` for ``~>``), evaluated by the kernel like invariants."""
        fn = self.fn
        if self.form != "leads_to":
            return [PredicateDecl(fn, "invariant", name=self.name, doc=self.doc)]
        where = self.where

        def part(i: int) -> Callable[..., Any]:
            def get(spec: Any, s: Any) -> Any:
                r = fn(spec, s)
                if not isinstance(r, tuple) or len(r) != 2:
                    raise SpecDefinitionError(
                        f"{where}: leads-to property {self.name} must return a pair "
                        f"(P, Q) of state predicates, got {type(r).__name__}."
                    )
                return r[i]

            get.__name__ = fn.__name__
            get.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
            get.__module__ = fn.__module__
            get.__wrapped__ = fn  # type: ignore[attr-defined]
            return get

        return [PredicateDecl(part(0), "invariant", name=f"{self.name}.P", doc=self.doc),
                PredicateDecl(part(1), "invariant", name=f"{self.name}.Q", doc=self.doc)]


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


@dataclass(frozen=True)
class FairnessCondition:
    """``WF``/``SF`` of a set of action instances taken as one action."""

    kind: str  # "weak" | "strong"
    #: the action as TLA+ writes it: ``Tick``, ``Register(b=1)``, ``Register(*)`` (family)
    label: str
    #: the action family's name (what ``fairness=(...)`` of a property selects)
    family: str
    action_ids: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{'WF' if self.kind == 'weak' else 'SF'}({self.label})"


def label_of(inst: ActionInstance, branch: bool = True) -> str:
    """``Register(b=1)``, as traces label a step (``Decide[commit](b=1)`` for a branch of
    an action; with ``branch=False`` the action whose disjunct it is, ``Decide(b=1)``)."""
    name = inst.name if branch else inst.decl.name
    if not inst.params:
        return name
    return f"{name}({', '.join(f'{k}={v}' for k, v in inst.params)})"


def fairness_conditions(spec: Spec, select: Sequence[str] | None = None
                        ) -> list[FairnessCondition]:
    """The spec's fairness conditions, in action order; with ``select``, only those of
    the named action families or instance labels (unknown names are an error)."""
    cls = type(spec)
    # the branches of an action (``with t.branch(...)``) are disjuncts of one action:
    # fairness is of the whole action, WF(A) with A = A1 \/ A2, as TLA+ writes it
    by_label: dict[str, list[ActionInstance]] = {}
    for a in spec.actions:
        by_label.setdefault(label_of(a, branch=False), []).append(a)
        if a.branch is not None:
            by_label.setdefault(label_of(a), []).append(a)
    decls = cls._actions
    wanted: dict[str, str] = {}
    for name, d in decls.items():
        if d.fair is not None:
            wanted[name] = d.fair
    for key, kind in dict(cls.fairness).items():
        if key not in decls and key not in by_label:
            raise SpecDefinitionError(
                f"spec {spec.name}: fairness names {key!r}, which is neither an action nor "
                f"an action instance label (such as {next(iter(by_label))!r})."
            )
        if kind not in ("weak", "strong", "weak-family", "strong-family"):
            raise SpecDefinitionError(
                f"spec {spec.name}: fairness[{key!r}] = {kind!r}; use 'weak', 'strong', "
                "'weak-family' or 'strong-family'."
            )
        if key in by_label and kind.endswith("-family"):
            raise SpecDefinitionError(
                f"spec {spec.name}: fairness[{key!r}] names one instance; '-family' applies "
                "to an action name."
            )
        wanted[key] = kind
    if select is not None:
        unknown = [n for n in select if n not in decls and n not in by_label]
        if unknown:
            raise SpecDefinitionError(
                f"spec {spec.name}: a temporal property's fairness names {unknown[0]!r}, "
                f"which is not an action of the spec ({', '.join(decls)})."
            )
    out: list[FairnessCondition] = []
    for key, kind in wanted.items():
        base = kind.split("-")[0]
        if key in by_label and key not in decls:
            insts = by_label[key]
            family = insts[0].decl.name
            if select is None or key in select or family in select:
                out.append(FairnessCondition(base, key, family, tuple(a.id for a in insts)))
            continue
        if select is not None and key not in select:
            continue
        insts = [a for a in spec.actions if a.decl.name == key]
        if kind.endswith("-family") and decls[key].params:
            out.append(FairnessCondition(base, f"{key}(*)", key, tuple(a.id for a in insts)))
        else:
            groups: dict[str, list[int]] = {}
            for a in insts:
                groups.setdefault(label_of(a, branch=False), []).append(a.id)
            out.extend(FairnessCondition(base, lbl, key, tuple(ids))
                       for lbl, ids in groups.items())
    out.sort(key=lambda c: c.action_ids)
    return out
