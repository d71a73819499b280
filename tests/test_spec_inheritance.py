"""Spec classes with several bases: declarations follow Python's MRO.

A spec ``class C(A, B)`` has the constants, variables, actions and properties of every
base; a name declared more than once is the declaration Python resolves for
``C.name`` (the first class of the MRO that declares it), in the place of its first
declaration; a name declared as two kinds of thing (an action in one base, an
invariant in another), or hidden by a plain attribute, is refused. It used to take the
declarations of the first base only.
"""

from __future__ import annotations

import pytest
from bruteforce import brute_force_check
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from modelcheck import (
    Const,
    Int,
    Spec,
    SpecDefinitionError,
    action,
    action_property,
    constraint,
    explore,
    invariant,
)
from modelcheck.spec import ActionDecl, PredicateDecl


class Xs(Spec):
    check_deadlock = False
    MaxX = Const(2)
    x = Int(0, 3)

    @action
    def IncX(self, s, t):
        t.x = s.x + 1
        return s.x < self.MaxX

    @invariant
    def Small(self, s):  # Ys declares a Small too: which one a subclass gets is its MRO's
        return s.x <= 3


class Ys(Spec):
    check_deadlock = False
    y = Int(0, 3)

    @action
    def IncY(self, s, t):
        t.y = s.y + 1
        return s.y < 2

    @invariant
    def Small(self, s):
        return s.y <= 1  # fails at y = 2

    @action_property
    def YGrows(self, s, t):
        return t.y >= s.y


class Both(Xs, Ys):
    """Xs before Ys: Xs.Small wins."""


class BothSwapped(Ys, Xs):
    """Ys before Xs: Ys.Small wins."""


class BothOwn(Xs, Ys):
    """Its own Small wins over both bases'."""

    @invariant
    def Small(self, s):
        return s.x + s.y <= 3


def test_every_base_contributes() -> None:
    assert list(Both._vars) == ["y", "x"]  # first declared first: Ys is the more basic
    assert list(Both._consts) == ["MaxX"]
    assert list(Both._actions) == ["IncY", "IncX"]
    assert list(Both._predicates) == ["Small", "YGrows"]
    spec = Both()
    assert [a.name for a in spec.actions] == ["IncY", "IncX"]
    assert [p.name for p in spec.properties] == ["YGrows"]


def test_overriding_follows_the_mro() -> None:
    assert Both._predicates["Small"] is Xs.__dict__["Small"] is Both.Small
    assert BothSwapped._predicates["Small"] is Ys.__dict__["Small"] is BothSwapped.Small
    assert BothOwn._predicates["Small"] is BothOwn.__dict__["Small"]
    # and the checks use it: x, y in 0..2 each; Xs.Small always holds, Ys.Small fails
    # at y = 2 (two steps), BothOwn's at x + y = 4 (four steps)
    r = explore(Both())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 9, 4)
    r = explore(BothSwapped())
    assert (r.status, r.violation.property, len(r.violation.trace)) == ("violation", "Small", 3)
    assert r.violation.trace[-1].state["y"] == 2
    r = explore(BothOwn())
    assert (r.status, len(r.violation.trace)) == ("violation", 5)
    assert sum(r.violation.trace[-1].state.values()) == 4


@pytest.mark.parametrize("cls", [Both, BothSwapped, BothOwn])
def test_the_oracle_agrees(cls) -> None:
    spec = cls(MaxX=2)
    r, o = explore(spec), brute_force_check(spec)
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)
    if r.violation is not None:
        assert r.violation.property in o.names and len(r.violation.trace) == len(o.trace)


class Base(Spec):
    check_deadlock = False
    n = Int(0, 3)

    @action
    def Step(self, s, t):
        t.n = s.n + 1
        return s.n < 1


class Left(Base):
    @action
    def Step(self, s, t):  # a longer run
        t.n = s.n + 1
        return s.n < 3


class Right(Base):
    @constraint
    def Low(self, s):
        return s.n <= 2


class Diamond(Left, Right):
    pass


def test_a_diamond() -> None:
    assert Diamond._actions["Step"] is Left.__dict__["Step"]
    assert list(Diamond._predicates) == ["Low"]
    assert len(Diamond().actions) == 1
    # Left's Step up to n = 3, Right's constraint stores n <= 2
    r = explore(Diamond())
    assert (r.distinct_states, r.depth, r.generated_states) == (3, 2, 3)


def test_a_plain_mixin_contributes_too() -> None:
    class Checks:
        @invariant
        def NotThree(self, s):
            return s.n != 3

    class Checked(Checks, Left):
        pass

    assert list(Checked._predicates) == ["NotThree"]
    assert explore(Checked()).violation.property == "NotThree"


def test_two_kinds_of_the_same_name_are_refused() -> None:
    class A(Spec):
        v = Int(0, 1)

        @action
        def X(self, s, t):
            return s.v == 0

    class B(Spec):
        w = Int(0, 1)

        @invariant
        def X(self, s):
            return s.w == 0

    with pytest.raises(SpecDefinitionError,
                       match="spec C inherits X from base A as a action and from base B as a "
                             "property"):
        class C(A, B):
            pass


def test_a_plain_attribute_hiding_a_declaration_is_refused() -> None:
    class Plain:
        def Step(self, s, t):  # a helper method of the same name
            return True

    with pytest.raises(SpecDefinitionError, match=r"Hidden.Step \(from base Plain\) overrides "
                                                  "an inherited action"):
        class Hidden(Plain, Base):  # Python resolves Hidden.Step to Plain.Step
            pass

    class Shown(Base, Plain):  # Base.Step comes first: the action stays
        pass

    assert Shown._actions["Step"] is Base.__dict__["Step"]


# ------------------------------------------------------------------ random hierarchies
NAMES = {"a0": "action", "a1": "action", "a2": "action", "i0": "invariant",
         "i1": "invariant", "k0": "constant", "v0": "variable", "v1": "variable"}


def _decl(name: str, kind: str, tag: int):
    if kind == "constant":
        return Const(tag)
    if kind == "variable":
        return Int(0, tag + 1)
    if kind == "action":
        def act(self, s, t):
            return True
        act.__name__ = name
        return action(act)

    def inv(self, s):
        return True
    inv.__name__ = name
    return invariant(inv)


@st.composite
def hierarchies(draw):
    """Up to five spec classes, each declaring some names and deriving from some of the
    earlier ones (or from Spec)."""
    classes: list[type] = []
    for i in range(draw(st.integers(1, 5))):
        picks = draw(st.lists(st.integers(0, len(classes) - 1), unique=True, max_size=3)) \
            if classes else []
        bases = tuple(classes[j] for j in picks) or (Spec,)
        names = draw(st.lists(st.sampled_from(sorted(NAMES)), unique=True, max_size=4))
        ns = {n: _decl(n, NAMES[n], i) for n in names}
        try:
            classes.append(type(f"S{i}", bases, ns))
        except TypeError:  # no consistent MRO for these bases
            assume(False)
    return classes[-1]


@settings(max_examples=60, deadline=None)
@given(hierarchies())
def test_declarations_are_what_python_resolves(cls) -> None:
    # oracle: Python's own attribute lookup, and the first class (from the most basic)
    # that declares each name
    want = {n: getattr(cls, n) for n in NAMES if hasattr(cls, n)}
    order = []
    for klass in reversed(cls.__mro__):
        order += [n for n in vars(klass) if n in NAMES and n not in order]
    got = {**cls._consts, **cls._vars, **cls._actions, **cls._predicates}
    assert got == want
    for table in (cls._consts, cls._vars, cls._actions, cls._predicates):
        assert list(table) == [n for n in order if n in table]
    assert all(isinstance(v, ActionDecl) for v in cls._actions.values())
    assert all(isinstance(v, PredicateDecl) for v in cls._predicates.values())
