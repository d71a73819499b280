"""Chang and Roberts' leader election on a unidirectional ring (tlaplus/Examples chang_roberts).

A port of ``specifications/chang_roberts/ChangRoberts.tla`` (Stephan Merz; the TLA+
translation of its PlusCal algorithm) checked with ``MCChangRoberts.tla``/
``MCChangRoberts.cfg``: ``N = 3``, ``Id == [i \\in 1..N |-> i]``, ``INVARIANTS TypeOK
Correctness``, ``PROPERTY Liveness``, ``CHECK_DEADLOCK FALSE``. Some nodes are
initiators (``initiator \\in [Node -> BOOLEAN]``: eight initial states); an initiator
sends its id to its successor; a node passes on an id smaller than its own (becoming
``"lost"``), swallows a larger one, and wins when its own id comes back. The manifest
gives 137 distinct states, depth 10 (TLC counts states, we count steps: depth 9).

Translation:

* ``msgs[n]``, the ids in transit to node ``n``, is an ``Array`` of ``SetOf(Int(0,
  MaxId), max_size=N)``: the ids are naturals (``Id \\in Seq(Nat)``), bounded here by
  ``MaxId``, and at most the ``N`` ids of the ring are ever in transit to a node. The
  set's form follows from those two numbers (:func:`modelcheck.types.choose_set_form`):
  with ``Id == 1..3`` the element type has 4 values and the bound says nothing, so each
  set is a bit vector of 4 bits; :class:`MCChangRobertsWideIds` numbers the nodes
  ``4096, 8192, 12288`` (``IdStep = 4096``), 12,289 possible ids, beyond the 4,096 a bit
  vector holds, and each set is stored as 3 sorted member codes of 14 bits. The
  algorithm only compares ids, so both models have the same state graph; TLC 2.20
  finds 137 distinct states, 320 generated (with the initial states), depth 10 on each
  (the wide ids: ``MCChangRoberts.tla`` with ``Id == [i \\in 1..N |-> 4096 * i]``).
* ``n1(self)``'s ``\\E id \\in msgs[self]`` is a parameter ``m``, the node whose id is
  received (``id = Id[m]``), with ``msgs[self]`` holding it in the guard: ``msgs`` only
  ever holds ids of nodes (``TypeOK``) and ``Id`` is one-to-one, so the instances are
  the same successors, and there are ``N`` of them rather than one per possible id.
* ``Spec``'s ``\\A self \\in Node: WF_vars(node(self))``, with ``node(self) == n0(self)
  \\/ n1(self)``, is the fairness group ``"n0 | n1(m=*)"``. ``Terminating`` (every
  ``pc`` is ``"Done"``) is never enabled: the PlusCal loop never exits.
* ``Liveness == (\\E n: state[n] = "cand") => <>(\\E n: state[n] = "won")`` is a
  formula of the initial state; it is checked as ``leads_to``: a ``"cand"`` state
  occurs only while no node has won (``Correctness``: the winner's rivals have all
  lost, and nothing becomes ``"cand"`` again) and after an initial state with a
  candidate, so ``[](cand => <>won)`` holds exactly when the formula does.
* ``TypeOK``: the types give ``pc``, ``initiator`` and ``state``; ``msgs[n] \\subseteq
  {Id[n]: n \\in Node}`` is checked over the members held.

``MCChangRobertsBugUnfair`` drops the fairness (a node may stop forever), and
``MCChangRobertsBugStaysCand`` lets a candidate pass on a smaller id without giving
up::

    modelcheck check examples/tla/chang_roberts.py                  # 137 states, Liveness holds
    modelcheck check examples/tla/chang_roberts.py:MCChangRobertsWideIds   # the same
    modelcheck check examples/tla/chang_roberts.py:MCChangRobertsBugUnfair # violates Liveness
    modelcheck check examples/tla/chang_roberts.py:MCChangRobertsBugStaysCand # violates Correctness
"""

from __future__ import annotations

import itertools
from enum import IntEnum
from typing import Any

from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    implies,
    invariant,
    leads_to,
    where,
)

__all__ = ["Pc", "St", "MCChangRoberts", "MCChangRobertsWideIds", "MCChangRobertsBugUnfair",
           "MCChangRobertsBugStaysCand"]


class Pc(IntEnum):
    n0 = 0
    n1 = 1
    Done = 2


class St(IntEnum):
    cand = 0
    lost = 1
    won = 2


N = Const(3, min=2)
IdStep = Const(1, min=1, doc="Id == [i \\in 1..N |-> IdStep * i]")
MaxId = N * IdStep
Node = Ids(1, N)


class MCChangRoberts(Spec):
    """MCChangRoberts.cfg: three nodes, ids 1, 2, 3."""

    check_deadlock = False
    N = N
    IdStep = IdStep
    Node = Node

    msgs = Array(Node, SetOf(Int(0, MaxId), max_size=N))
    pc = Array(Node, Enum(Pc))
    initiator = Array(Node, Bool())
    state = Array(Node, Enum(St))

    fairness = {"n0 | n1(m=*)": "weak"}

    @property
    def Id(self) -> dict[int, int]:
        return {n: self.IdStep * n for n in self.Node}

    def succ(self, n: int) -> int:
        return 1 if n == self.N else n + 1

    def init_states(self) -> Any:
        for ini in itertools.product([False, True], repeat=self.N):
            yield {"initiator": {n: ini[n - 1] for n in self.Node},
                   "state": {n: St.cand if ini[n - 1] else St.lost for n in self.Node}}

    @action(self_=Node)
    def n0(self, s, t, self_):
        nxt = self.succ(self_)
        t.msgs[nxt] = where(s.initiator[self_], s.msgs[nxt].with_(self.Id[self_]),
                            s.msgs[nxt])
        t.pc[self_] = Pc.n1
        return s.pc[self_] == Pc.n0

    @action(self_=Node, m=Node)
    def n1(self, s, t, self_, m):
        """``\\E id \\in msgs[self]`` with ``id = Id[m]``."""
        ident, mine, nxt = self.Id[m], self.Id[self_], self.succ(self_)
        lost = s.state[self_] == St.lost
        forward = lost | (ident < mine)
        t.msgs[self_] = s.msgs[self_].without(ident)
        t.msgs[nxt] = where(forward, s.msgs[nxt].with_(ident), s.msgs[nxt])
        if ident < mine:
            t.state[self_] = self.on_smaller_id(s, self_)
        elif ident == mine:
            t.state[self_] = where(lost, St.lost, St.won)
        return (s.pc[self_] == Pc.n1) & s.msgs[self_].has(ident)

    def on_smaller_id(self, s, n):
        """The state of a node that receives an id smaller than its own."""
        return St.lost

    # -- invariants and the property -------------------------------------------------------
    @invariant
    def TypeOK(self, s):
        """``msgs \\in [Node -> SUBSET {Id[n] : n \\in Node}]`` (the rest by typing)."""
        ids = set(self.Id.values())
        return all_of(self.Node, lambda n: all_of(s.msgs[n], lambda i: i in ids))

    @invariant
    def Correctness(self, s):
        return all_of(self.Node, lambda n: implies(
            s.state[n] == St.won,
            s.initiator[n] & all_of([m for m in self.Node if m != n], lambda m: (
                s.state[m] == St.lost) & implies(s.initiator[m], self.Id[m] > self.Id[n]))))

    Liveness = leads_to(lambda self, s: (
        any_of(self.Node, lambda n: s.state[n] == St.cand),
        any_of(self.Node, lambda n: s.state[n] == St.won)))


class MCChangRobertsWideIds(MCChangRoberts):
    """The same ring with ids ``4096, 8192, 12288``: each ``msgs[n]`` is a set over
    12,289 possible ids, stored as member codes."""

    IdStep = Const(4096, min=1)


class MCChangRobertsBugUnfair(MCChangRoberts):
    """No fairness: a behaviour may stop before anyone wins."""

    fairness: dict[str, str] = {}


class MCChangRobertsBugStaysCand(MCChangRoberts):
    """A candidate passes on a smaller id but stays a candidate: when the smallest id
    wins, another initiator has not lost."""

    def on_smaller_id(self, s, n):
        return s.state[n]
