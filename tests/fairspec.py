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

from typing import Any

from hypothesis import strategies as st

from modelcheck import Array, Bool, Const, Ids, Spec, action, where
from modelcheck.temporal import always_eventually, eventually, eventually_always, leads_to

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
                 actions: list[str], select: tuple[str, ...]) -> None:
        self.default, self.bound, self.deco = default, bound, deco
        self.table, self.computed, self.actions = table, computed, actions
        #: the ``fairness=(...)`` of the property ``Selected``
        self.select = select


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
            form = draw(st.sampled_from(["name", "label", "label", "group"]))
            if form == "name":
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
            *(k for k, _ in table if "|" in k)]
    select = tuple(draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)))
    ns["Selected"] = always_eventually(fairness=select)(
        _prop(lambda self, s: s.b[self.N], "Selected"))
    cls = type("FairSpec", (Spec,), ns)
    cls._drawn = Drawn(default, bound, deco, table, computed, actions, select)  # type: ignore
    return cls


def _prop(fn: Any, name: str) -> Any:
    def prop(self: Any, s: Any) -> Any:
        return fn(self, s)

    prop.__name__ = name
    return prop


def _instances(name: str, n: int) -> list[str]:
    return [name] if name == "Reset" else [f"{name}({i})" for i in range(1, n + 1)]


def _pairs(key: str, kind: str, n: int) -> list[tuple[str, frozenset[str], set[str]]]:
    """The (kind, instance labels, names that select it) triples of one declaration under
    ``N = n``: a property's ``fairness=(...)`` selects a condition by the action's name
    (or the group's key) and a condition of one instance also by its label."""
    base, family = kind.split("-")[0], kind.endswith("-family")
    parts = [x.strip() for x in key.split("|")]
    if "(" in key:  # one instance: "Set(i=2)"
        name, i = key[:-1].split("(i=")
        return [(base, frozenset([f"{name}({i})"]), {name, key})]
    if family:
        return [(base, frozenset(lbl for p in parts for lbl in _instances(p, n)), {key})]
    if parts == ["Reset"]:
        return [(base, frozenset(["Reset"]), {key})]
    if len(parts) > 1:
        return [(base, frozenset(f"{p}({i})" for p in parts), {key}) for i in range(1, n + 1)]
    return [(base, frozenset([f"{key}({i})"]), {key, f"{key}(i={i})"}) for i in range(1, n + 1)]


def meaning(d: Drawn, select: tuple[str, ...] | None = None
            ) -> list[tuple[str, frozenset[str]]] | None:
    """The fairness the declarations of ``d`` mean under the bound ``N``, conjoined (see
    the module doc); with ``select``, those a property's ``fairness=select`` keeps.
    ``None`` if binding must be refused (by the table, or by ``d.select``)."""
    n = d.bound
    decls = list(d.deco.items())
    if d.computed is not None:
        fam, kind, skip = d.computed
        decls += [(f"{fam}(i={i})", kind) for i in range(1, n + 1) if i != skip]
    else:
        labels = [k for k, _ in d.table if "(" in k]
        if any(int(k[:-1].split("(i=")[1]) > n for k in labels):
            return None  # names no instance under N
        for fam in {k.split("(")[0] for k in labels}:
            named = {int(k[:-1].split("(i=")[1]) for k in labels if k.startswith(fam + "(")}
            if set(range(1, d.default + 1)) <= named and not set(range(1, n + 1)) <= named:
                return None  # written for the default N: the new instances would be unfair
        decls += d.table
    if any("(" in k and int(k[:-1].split("(i=")[1]) > n for k in d.select):
        return None  # the property's fairness names no instance under N
    out: list[tuple[str, frozenset[str]]] = []
    for key, kind in decls:
        for kind_, labels, names in _pairs(key, kind, n):
            if select is not None and not names & set(select):
                continue
            if (kind_, labels) not in out:
                out.append((kind_, labels))
    return out
