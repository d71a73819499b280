r"""Random fairness declarations on a small spec whose instances depend on a constant, and
the fairness they mean, built from the TLA+ definitions without :mod:`modelcheck.fairness`.

:func:`fair_spec` draws a spec over ``b = Array(P, Bool())``, ``P = Ids(1, N)`` (``N``
a constant with a drawn default), whose actions are families ``Set(i)``, ``Clr(i)``,
``Flip(i)`` over ``P`` and sometimes ``Reset`` (no parameter), with random guards, and
fairness declared every way the language has: ``@action(fair=...)`` (``weak``,
``strong``, ``weak-family``, ``strong-family``), the class table by action name (the
same kinds, possibly naming an action its decorator already makes fair), by instance
label (``"Set(i=2)"``), by group (``"Set | Clr"``, per binding or ``-family``), and
sometimes a table computed by a method of the bound spec; and a property ``Selected``
checked under the conditions its ``fairness=(...)`` names (action names, instance
labels, group keys). It also draws the constant the spec is bound with (as ``--const
N=..`` gives it).

:func:`meaning` is what those declarations say under the bound ``N``, as a list of
``(kind, set of instance labels)``, the labels as the kernel names a step (``Set(2)``):
per TLA+, ``fair="weak"`` on ``A(i)`` is ``\A i \in P: WF_vars(A(i))``, one pair per
``i``; ``weak-family`` is ``WF_vars(\E i \in P: A(i))``, one pair of every instance; a
label is WF of that instance; a group ``A | B`` is ``\A i: WF_vars(A(i) \/ B(i))``; and
every declaration is conjoined with the others. ``None`` when the binding must be
refused: a label naming an instance that does not exist under ``N``, or a (static)
table of labels naming every instance of an action under the default ``N`` but not
under the bound one, or a property's ``fairness=(...)`` naming such an instance.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from hypothesis import strategies as st

from modelcheck import Array, Bool, Const, Ids, Spec, action, where
from modelcheck.temporal import always_eventually, eventually, eventually_always, leads_to
from tests.livespec import Selected

__all__ = ["fair_spec", "meaning", "Drawn"]

KINDS = ("weak", "strong", "weak-family", "strong-family")
FAMILIES = ("Set", "Clr", "Flip")

# guards (s, i, N) -> boolean, conjoined with the action's own condition
GUARDS = {
    "any": lambda s, i, n: s.b[i] | ~s.b[i],
    "prev_set": lambda s, i, n: s.b[where(i > 1, i - 1, n)],
    "prev_clear": lambda s, i, n: ~s.b[where(i > 1, i - 1, n)],
    "first_set": lambda s, i, n: s.b[1],
    "odd": lambda s, i, n: (s.b[i] | ~s.b[i]) & (i % 2 == 1),
}


class Drawn:
    """What :func:`fair_spec` drew: the decorators' kinds, the table (static entries, or
    the rule of the computed one), the default and the bound ``N``."""

    def __init__(self, default: int, bound: int, deco: dict[str, str],
                 table: list[tuple[str, str]], computed: tuple[str, str, int] | None,
                 actions: list[str], select: tuple[str, ...],
                 selectors: dict[str, Any] | None = None) -> None:
        self.default, self.bound, self.deco = default, bound, deco
        self.table, self.computed, self.actions = table, computed, actions
        #: the ``fairness=(...)`` of the property ``Selected``
        self.select = select
        #: the selector methods of the spec, by name (``pick(self, s, i)``, ``first(self,
        #: s)``): their values select instances of the table's ``Move(j=pick(i))``
        self.selectors = selectors or {}


def _family(name: str, guard: str) -> Any:
    g = GUARDS[guard]
    if name == "Set":
        def Set(self: Any, s: Any, t: Any, i: int) -> Any:
            t.b[i] = True
            return ~s.b[i] & g(s, i, self.N)
        return Set
    if name == "Clr":
        def Clr(self: Any, s: Any, t: Any, i: int) -> Any:
            t.b[i] = False
            return s.b[i] & g(s, i, self.N)
        return Clr

    def Flip(self: Any, s: Any, t: Any, i: int) -> Any:
        t.b[i] = ~s.b[i]
        return g(s, i, self.N)
    return Flip


def _move(self: Any, s: Any, t: Any, i: int, j: int) -> Any:
    t.b[i] = s.b[j]
    return s.b[i] != s.b[j]


_move.__name__ = "Move"

#: selectors ``(self, s, i) -> j`` and ``(self, s) -> i``, valued in ``1..N``
PICKS = {
    "own": lambda self, s, i: where(s.b[i], i, 1),
    "last": lambda self, s, i: where(s.b[1], self.N, i),
    "next": lambda self, s, i: where(s.b[i] & (i < self.N), i + 1, 1),
}
FIRSTS = {
    "flag": lambda self, s: where(s.b[1], self.N, 1),
    "lastset": lambda self, s: where(s.b[self.N], 1, self.N),
}


def _reset(self: Any, s: Any, t: Any) -> Any:
    for i in self.P:
        t.b[i] = False
    return s.b[1]


_reset.__name__ = "Reset"


@st.composite
def fair_spec(draw: st.DrawFn) -> type[Spec]:
    default = draw(st.integers(1, 2))
    bound = draw(st.integers(1, 3))
    ns: dict[str, Any] = {"check_deadlock": False, "N": Const(default, min=1, max=3)}
    ns["P"] = Ids(1, ns["N"])
    ns["b"] = Array(ns["P"], Bool())
    names = draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=3, unique=True))
    deco: dict[str, str] = {}
    for name in names:
        kind = draw(st.sampled_from([None, None, *KINDS]))
        ns[name] = action(i=ns["P"], fair=kind)(_family(name, draw(st.sampled_from(list(GUARDS)))))
        if kind:
            deco[name] = kind
    actions = list(names)
    if draw(st.booleans()):
        kind = draw(st.sampled_from([None, "weak", "strong"]))
        ns["Reset"] = action(fair=kind)(_reset)
        actions.append("Reset")
        if kind:
            deco["Reset"] = kind
    # a family of two parameters, and selectors of a parameter by the state
    if draw(st.booleans()):
        kind = draw(st.sampled_from([None, None, *KINDS]))
        ns["Move"] = action(i=ns["P"], j=ns["P"], fair=kind)(_move)
        actions.append("Move")
        if kind:
            deco["Move"] = kind
    selectors = {"pick": PICKS[draw(st.sampled_from(sorted(PICKS)))],
                 "first": FIRSTS[draw(st.sampled_from(sorted(FIRSTS)))]}
    ns.update(selectors)
    table: list[tuple[str, str]] = []
    computed: tuple[str, str, int] | None = None
    if draw(st.integers(0, 4)) == 0:
        # a table computed from the bound spec: every instance of one family but ``skip``
        fam, kind = draw(st.sampled_from(names)), draw(st.sampled_from(["weak", "strong"]))
        skip = draw(st.integers(0, 3))
        computed = (fam, kind, skip)

        def fairness(self: Any) -> dict[str, str]:
            return {f"{fam}(i={i})": kind for i in self.P if i != skip}

        ns["fairness"] = fairness
    else:
        for _ in range(draw(st.integers(0, 4))):
            form = draw(st.sampled_from(["name", "label", "label", "group", "pattern",
                                         "pattern", "mixed"]))
            if form == "pattern":
                # a parameter taken inside (*), fixed, or selected by the state
                key = draw(st.sampled_from(
                    [*(["Move(j=*)", "Move(i=*)", "Move(i=1, j=*)", "Move(i=1)",
                        "Move(j=pick(i))", "Move(i=1, j=pick(i))"] if "Move" in actions
                       else []),
                     *(f"{a}(i=first())" for a in names), *(f"{a}(i=*)" for a in names)]))
                kind = draw(st.sampled_from(KINDS))
            elif form == "mixed":
                # a group of actions with different parameters
                if len(actions) < 2:
                    continue
                parts = draw(st.lists(st.sampled_from(
                    [*names, *(f"{a}(i=*)" for a in names), *(f"{a}(i=first())" for a in names),
                     *(["Reset"] if "Reset" in actions else []),
                     *(["Move", "Move(j=*)", "Move(j=pick(i))", "Move(i=*, j=*)"]
                       if "Move" in actions else [])]),
                    min_size=2, max_size=3, unique_by=lambda x: x.split("(")[0]))
                key = " | ".join(parts)
                kind = draw(st.sampled_from(KINDS))
            elif form == "name":
                key = draw(st.sampled_from(actions))
                kind = draw(st.sampled_from(KINDS))
            elif form == "label":
                key = f"{draw(st.sampled_from(names))}(i={draw(st.integers(1, 3))})"
                kind = draw(st.sampled_from(["weak", "strong"]))
            else:
                if len(names) < 2:
                    continue
                pair = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2,
                                     unique=True))
                key = " | ".join(pair)
                kind = draw(st.sampled_from(KINDS))
            if key not in dict(table):
                table.append((key, kind))
        ns["fairness"] = dict(table)
    ns["AlwaysFirst"] = always_eventually(_prop(lambda self, s: s.b[1], "AlwaysFirst"))
    ns["AlwaysLast"] = always_eventually(_prop(lambda self, s: s.b[self.N], "AlwaysLast"))
    ns["SettlesClear"] = eventually_always(_prop(lambda self, s: ~s.b[1], "SettlesClear"))
    ns["LastSet"] = eventually(_prop(lambda self, s: s.b[self.N], "LastSet"))
    ns["FirstThenClear"] = leads_to(_prop(lambda self, s: (s.b[1], ~s.b[1]),
                                          "FirstThenClear"))
    # a property checked under some of the conditions: by action name, instance label
    # (possibly of no instance under the bound N) or group key
    keys = [*actions, *(f"{a}(i={i})" for a in names for i in range(1, 4)),
            *(k for k, _ in table if "|" in k or "*" in k or "=" in k and "Move" in k
              or "first" in k)]
    select = tuple(draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)))
    ns["Selected"] = always_eventually(fairness=select)(
        _prop(lambda self, s: s.b[self.N], "Selected"))
    cls = type("FairSpec", (Spec,), ns)
    cls._drawn = Drawn(default, bound, deco, table, computed, actions, select,  # type: ignore
                       selectors)
    return cls


def _prop(fn: Any, name: str) -> Any:
    def prop(self: Any, s: Any) -> Any:
        return fn(self, s)

    prop.__name__ = name
    return prop


LABEL = re.compile(r"(Set|Clr|Flip)\(i=(\d)\)")
PARAMS = {"Set": ("i",), "Clr": ("i",), "Flip": ("i",), "Reset": (), "Move": ("i", "j")}


def _label(name: str, values: dict[str, int]) -> str:
    """An instance's label as the kernel names a step (``Move(1, 2)``)."""
    ps = PARAMS[name]
    return f"{name}({', '.join(str(values[p]) for p in ps)})" if ps else name


def _spec_of(part: str, family: bool) -> tuple[str, dict[str, Any]]:
    """A part of a declaration: its action and, per parameter, ``("fixed", v)``,
    ``("star",)``, ``("sel", method, args)`` or ``("free",)``."""
    name, _, rest = part.partition("(")
    given: dict[str, Any] = {}
    if rest:
        for arg in re.split(r",\s*(?![^()]*\))", rest[:-1]):
            p, v = arg.split("=")
            if v == "*":
                given[p] = ("star",)
            elif v.endswith(")"):
                meth, args = v[:-1].split("(")
                given[p] = ("sel", meth, tuple(a for a in args.split(", ") if a))
            else:
                given[p] = ("fixed", int(v))
    return name, {p: given.get(p, ("star",) if family else ("free",)) for p in PARAMS[name]}


def _pairs(key: str, kind: str, n: int, d: Drawn, spec: Any
           ) -> list[tuple[str, Any, set[str]]] | None:
    r"""The (kind, condition, names that select it) triples of one declaration under
    ``N = n``, from TLA+'s meaning: a parameter not named is free (``\A p``, one
    condition per value), ``*`` is taken inside (``\E p``), a value fixes it, a
    selector picks it by the state (``WF_vars(Move(i, pick(i)))``); the parts of a group
    are one action per binding of the free parameters (which must be the same: else
    None, the declaration is refused), ``-family`` takes every parameter inside. A
    property's ``fairness=(...)`` selects a single action's conditions by its name or
    the key, a group's by the key, an instance's also by its label."""
    base, family = kind.split("-")[0], kind.endswith("-family")
    parts = [_spec_of(x.strip(), family) for x in key.split(" | ")]
    single = len(parts) == 1
    if single and LABEL.fullmatch(key):
        if family:
            return None  # '-family' of one instance
        name, i = LABEL.fullmatch(key).groups()  # type: ignore[union-attr]
        return [(base, frozenset([f"{name}({i})"]), {name, key})]
    sels = any(v[0] == "sel" for _, ps in parts for v in ps.values())
    if family and sels:
        return None  # a selector takes one instance: no '-family'
    frees = {tuple(p for p, v in ps.items() if v[0] == "free") for _, ps in parts}
    if len(frees) > 1:
        return None  # a group whose parts leave different parameters free
    free = list(frees.pop())
    names = {parts[0][0], key} if single else {key}
    out = []
    for binding in itertools.product(range(1, n + 1), repeat=len(free)):
        bound = dict(zip(free, binding))
        labels: set[str] = set()
        picks: dict[str, Any] = {}
        for name, ps in parts:
            if name == "Reset":
                labels.add("Reset")
                continue
            for values in itertools.product(range(1, n + 1), repeat=len(ps)):
                vals = dict(zip(ps, values))
                if any(vals[p] != bound[p] for p in ps if p in bound) or any(
                        vals[p] != v[1] for p, v in ps.items() if v[0] == "fixed"):
                    continue
                lab = _label(name, vals)
                labels.add(lab)
                chosen = [(p, v[1], [vals[a] for a in v[2]]) for p, v in ps.items()
                          if v[0] == "sel"]
                if chosen:
                    picks[lab] = (vals, chosen)
        sel_names = names
        name0, ps0 = parts[0]
        if single and all(v[0] in ("free", "fixed") for v in ps0.values()):
            # one instance: its condition is also selected by its label
            vals = {p: bound.get(p, v[-1]) for p, v in ps0.items()}
            sel_names = names | {f"{name0}({', '.join(f'{p}={vals[p]}' for p in ps0)})"
                                 if ps0 else name0}
        if not picks:
            out.append((base, frozenset(labels), sel_names))
            continue

        def pick(view: Any, lab: str, picks: dict[str, Any] = picks) -> bool:
            if lab not in picks:
                return True
            vals, chosen = picks[lab]
            return all(int(d.selectors[m](spec, view, *args)) == vals[p]
                       for p, m, args in chosen)

        out.append((base, Selected(frozenset(labels), pick), sel_names))
    return out


def meaning(d: Drawn, select: tuple[str, ...] | None = None, spec: Any = None
            ) -> list[tuple[str, Any]] | None:
    """The fairness the declarations of ``d`` mean under the bound ``N``, conjoined (see
    the module doc), a condition being a set of instance labels or, where the state
    selects the action, a :class:`~tests.livespec.Selected` (evaluated on ``spec``, the
    bound spec); with ``select``, those a property's ``fairness=select`` keeps.
    ``None`` if binding must be refused (by the table, or by ``d.select``)."""
    n = d.bound
    decls = list(d.deco.items())
    if d.computed is not None:
        fam, kind, skip = d.computed
        decls += [(f"{fam}(i={i})", kind) for i in range(1, n + 1) if i != skip]
    else:
        labels = [k for k, _ in d.table if LABEL.fullmatch(k)]
        if any(int(k[:-1].split("(i=")[1]) > n for k in labels):
            return None  # names no instance under N
        for fam in {k.split("(")[0] for k in labels}:
            named = {int(k[:-1].split("(i=")[1]) for k in labels if k.startswith(fam + "(")}
            if set(range(1, d.default + 1)) <= named and not set(range(1, n + 1)) <= named:
                return None  # written for the default N: the new instances would be unfair
        decls += d.table
    if any(LABEL.fullmatch(k) and int(k[:-1].split("(i=")[1]) > n for k in d.select):
        return None  # the property's fairness names no instance under N
    out: list[tuple[str, Any]] = []
    for key, kind in decls:
        pairs = _pairs(key, kind, n, d, spec)
        if pairs is None:
            return None
        for kind_, cond, names in pairs:
            if select is not None and not names & set(select):
                continue
            if (kind_, cond) not in out:
                out.append((kind_, cond))
    return out
