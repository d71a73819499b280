"""The spec API: constraints, several initial states, dynamic indexing, Ref, SetOf, where."""

from __future__ import annotations

from enum import IntEnum

import pytest
from bruteforce import brute_force

from modelcheck import (
    Array,
    Bool,
    Const,
    ConstantError,
    Enum,
    Ids,
    Int,
    Ref,
    SetOf,
    Spec,
    action,
    action_property,
    constraint,
    count,
    explore,
    has,
    invariant,
    where,
    with_,
    without,
)


class Walk(Spec):
    """x and y walk up; a constraint bounds x + y; several initial states."""

    check_deadlock = False
    Max = Const(6)
    x = Int(0, 10)
    y = Int(0, 10)

    def init_states(self):
        for v in range(3):
            yield {"x": v}

    @action
    def IncX(self, s, t):
        t.x = s.x + 1
        return s.x < 10

    @action
    def IncY(self, s, t):
        t.y = s.y + 1
        return s.y < 10

    @constraint
    def Bounded(self, s):
        return s.x + s.y <= self.Max


def test_constraint_and_several_initial_states() -> None:
    r = explore(Walk())
    # states with x + y <= 6 (28 of them); successors past the bound (x + y = 7)
    # are checked against the invariants but, as in TLC, never stored or counted
    assert r.distinct_states == 28
    assert r.depth == 6
    assert (r.distinct_states, r.depth) == brute_force(Walk())


class Color(IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


class Tokens(Spec):
    """A token passed around a ring by dynamic indexing, with a set of visited nodes."""

    check_deadlock = False
    N = Const(4, min=2)
    Nodes = Ids(1, N)
    holder = Ref(Nodes, none=None, init=1)
    visited = SetOf(Nodes, init=[1])
    paint = Array(Nodes, Enum(Color))
    hops = Int(0, 20)
    done = Bool()

    @action(d=Ids(1, 2))
    def Pass(self, s, t, d):
        nxt = where(s.holder + d > self.N, s.holder + d - self.N, s.holder + d)
        t.holder = nxt
        t.visited = with_(s.visited, nxt)
        # dynamic index on the left-hand side: paint the node that receives the token
        t.paint[nxt] = where(s.paint[nxt] == Color.BLUE, Color.RED, s.paint[nxt] + 1)
        t.hops = s.hops + 1
        return ~s.done & (s.hops < 5)

    @action
    def Finish(self, s, t):
        t.done = True
        t.visited = without(s.visited, 1)
        return ~s.done & (count(s.visited) == self.N)

    @invariant
    def HolderVisited(self, s):
        return has(s.visited, s.holder) | s.done

    @action_property
    def HopsGrow(self, s, t):
        return (t.hops > s.hops) | (t.done & ~s.done)


def test_dynamic_indexing_sets_refs_and_enums_agree_with_brute_force() -> None:
    spec = Tokens()
    r = explore(spec)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert r.coverage[1].fired > 0  # Finish happens: every node gets the token


def test_bad_constants() -> None:
    with pytest.raises(ConstantError, match="unknown constant 'M'"):
        Tokens(M=3)
    with pytest.raises(ConstantError, match=">= 2"):
        Tokens(N=1)
    with pytest.raises(ConstantError, match="is an integer"):
        Tokens(N=True)
