"""The Echo algorithm: a spanning tree from one initiator (tlaplus/Examples echo).

A port of ``specifications/echo/Echo.tla`` (Stephan Merz; the TLA+ translation of its
PlusCal algorithm, with ``Relation.tla``'s ``TransitiveClosure``) checked with
``MCEcho.tla``/``MCEcho.cfg``: nodes ``{"a", "b", "c"}``, fully meshed (``R1``), the
initiator ``CHOOSE n \\in N1: TRUE``. The initiator sends an ``m`` message to its
neighbours; a node's first message makes its sender the node's parent and the node
forwards ``m`` to its other neighbours; once a node has heard from all its neighbours
it answers its parent with a ``c`` (child) message. The manifest gives 75 distinct
states, 116 generated (with the initial state) and depth 16 (TLC counts states, we
count steps); this port finds 75 states, 115 successors, depth 15.

Translation choices:

* ``Node`` is ``Ids(1, 3)`` (a, b, c); the initiator is node 1 (TLC's ``CHOOSE`` picks
  "a", the first string; on the full mesh every choice gives the same counts).
  ``NoNode`` is ``Ref``'s ``none`` value 0. ``R`` is the constant ``R`` (pairs of
  nodes); ``nbrs`` stays a variable, as in the translation.
* ``inbox[n]``, a set of records ``[kind |-> knd, sndr |-> p]``, is a ``SetOf`` a
  ``Record``; ``children[n]`` a ``SetOf(Node)``; the PlusCal labels are the enum ``Pc``.
* ``n1(self)`` is ``IF rcvd < Cardinality(nbrs) THEN \\E msg \\in inbox[self]: ...
  ELSE pc' = "n2"``: the receiving half is the action ``n1`` with the message's fields
  as parameters (``kind``, ``sndr``; the guard asks that it is in the inbox) and its
  inner ``IF self # initiator /\\ rcvd'[self] = 1`` as the branches ``first`` and
  ``later``; the ``ELSE`` half is the action ``n1_exit``.
* ``Terminating`` (every node done, nothing changes) is an action that steps from the
  final state to itself, so that, as in TLC, the final state is no deadlock.
* The PlusCal ``assert``s (``msg.kind = "m"`` for a node's first message,
  ``parent \\in nbrs`` before answering the parent) are action properties:
  ``FirstMessageIsM`` (the message a non-initiator takes when ``rcvd`` goes from 0 to 1
  is an ``m``) and ``ParentIsNbr`` (a non-initiator that answers has a neighbour as
  parent). TLC stops at a failed ``Assert``; modelcheck reports the step.
* ``TypeOK``'s type conjuncts hold by construction; the invariant ``TypeOK`` checks the
  others (``nbrs``, ``rcvd``, senders are neighbours). ``AncestorProperties`` computes
  ``TransitiveClosure(IsParent, Node)`` as in ``Relation.tla``: ``Cardinality(Node)``
  rounds of squaring.

Not in the cfg, hence not checked: the temporal ``Termination`` (``Spec`` has no
fairness) and the invariants ``InitiatorNoParent``, ``ParentIsNeighbor``,
``ParentChild`` defined in ``Echo.tla``.

    modelcheck check examples/tla/echo.py                            # 75 states
    modelcheck check examples/tla/echo.py:MCEchoBugSelfParent        # violates ParentIsNbr
    modelcheck check examples/tla/echo.py:MCEchoBugInitiatorSendsC   # violates FirstMessageIsM
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Enum,
    Ids,
    Int,
    Record,
    Ref,
    SetOf,
    Spec,
    action,
    action_property,
    all_of,
    any_of,
    implies,
    invariant,
    not_,
    where,
)

__all__ = ["Kind", "Pc", "MCEcho", "MCEchoBugSelfParent", "MCEchoBugInitiatorSendsC"]


class Kind(IntEnum):
    m = 0
    c = 1


class Pc(IntEnum):
    n0 = 0
    n1 = 1
    n2 = 2
    Done = 3


Node = Ids(1, 3, doc='{"a", "b", "c"}')
Msg = Record(kind=Enum(Kind), sndr=Node)


class MCEcho(Spec):
    """Echo.tla with MCEcho.cfg (see the module docstring)."""

    Node = Node
    initiator = 1
    #: ``R1``: the full mesh, ``R[x, y]`` iff ``x # y``
    R = frozenset((x, y) for x in range(1, 4) for y in range(1, 4) if x != y)

    inbox = Array(Node, SetOf(Msg))
    pc = Array(Node, Enum(Pc))
    parent = Array(Node, Ref(Node))  # 0: NoNode
    children = Array(Node, SetOf(Node))
    rcvd = Array(Node, Int(0, 3))
    nbrs = Array(Node, SetOf(Node))

    def neighbors(self, n):
        return [m for m in self.Node if (m, n) in self.R]

    def init_states(self):
        yield {"nbrs": {n: set(self.neighbors(n)) for n in self.Node}}

    def multicast(self, net, p, dest, kind):
        """``multicast(net, p, dest, knd)``: ``net`` and ``dest`` as ``{node: value}``."""
        msg = {"kind": kind, "sndr": p}
        return {n: where(dest.has(n), net[n].with_(msg), net[n]) for n in self.Node}

    def _store_inbox(self, t, net):
        for n in self.Node:
            t.inbox[n] = net[n]

    @action(self_=Node)
    def n0(self, s, t, self_):
        if self_ == self.initiator:
            net = {n: s.inbox[n] for n in self.Node}
            self._store_inbox(t, self.multicast(net, self_, s.nbrs[self_], Kind.m))
        t.pc[self_] = Pc.n1
        return s.pc[self_] == Pc.n0

    @action(self_=Node, kind=list(Kind), sndr=Node)
    def n1(self, s, t, self_, kind, sndr):
        msg = {"kind": kind, "sndr": sndr}
        net = {n: s.inbox[n] for n in self.Node}
        net[self_] = s.inbox[self_].without(msg)  # receive(inbox, self, msg)
        t.rcvd[self_] = s.rcvd[self_] + 1
        first = (self_ != self.initiator) & (s.rcvd[self_] + 1 == 1)
        with t.branch("first", first):
            t.parent[self_] = sndr
            self._store_inbox(t, self.multicast(net, self_, s.nbrs[self_].without(sndr),
                                                Kind.m))
        with t.branch("later", not_(first)):
            t.inbox[self_] = net[self_]
        if kind == Kind.c:
            t.children[self_] = s.children[self_].with_(sndr)
        return ((s.pc[self_] == Pc.n1) & (s.rcvd[self_] < s.nbrs[self_].size())
                & s.inbox[self_].has(msg))

    @action(self_=Node)
    def n1_exit(self, s, t, self_):
        t.pc[self_] = Pc.n2
        return (s.pc[self_] == Pc.n1) & (s.rcvd[self_] >= s.nbrs[self_].size())

    @action(self_=Node)
    def n2(self, s, t, self_):
        if self_ != self.initiator:
            msg = {"kind": Kind.c, "sndr": self_}
            for n in self.Node:  # send(inbox, self, parent[self], "c")
                t.inbox[n] = where(s.parent[self_] == n, s.inbox[n].with_(msg), s.inbox[n])
        t.pc[self_] = Pc.Done
        return s.pc[self_] == Pc.n2

    @action
    def Terminating(self, s, t):
        return all_of(self.Node, lambda n: s.pc[n] == Pc.Done)

    # -- the PlusCal asserts ----------------------------------------------------------
    @action_property
    def FirstMessageIsM(self, s, t):
        """``assert msg.kind = "m"`` on a non-initiator's first message."""
        return all_of(self.Node, lambda n: implies(
            (n != self.initiator) & (s.rcvd[n] == 0) & (t.rcvd[n] == 1),
            all_of(s.inbox[n] - t.inbox[n], lambda msg: msg.kind == Kind.m)))

    @action_property
    def ParentIsNbr(self, s, t):
        """``assert parent \\in nbrs`` before a non-initiator answers its parent."""
        return all_of(self.Node, lambda n: implies(
            (n != self.initiator) & (s.pc[n] == Pc.n2) & (t.pc[n] == Pc.Done),
            s.nbrs[n].has(s.parent[n])))

    # -- invariants -------------------------------------------------------------------
    @invariant
    def TypeOK(self, s):
        """The conjuncts of ``TypeOK`` that the types do not give."""
        return all_of(self.Node, lambda n: (
            (s.nbrs[n] == set(self.neighbors(n)))
            & (s.rcvd[n] <= s.nbrs[n].size())
            & all_of(s.inbox[n], lambda msg: s.nbrs[n].has(msg.sndr))))

    def is_ancestor(self, s):
        """``TransitiveClosure(IsParent, Node)`` with ``IsParent[m, n] == n = parent[m]``."""
        nodes = list(self.Node)
        trcl = {(x, y): s.parent[x] == y for x in nodes for y in nodes}
        for _ in range(len(nodes)):
            prev = trcl
            trcl = {(x, y): prev[(x, y)] | any_of(
                nodes, lambda z, x=x, y=y, prev=prev: prev[(x, z)] & prev[(z, y)])
                for x in nodes for y in nodes}
        return trcl

    @invariant
    def AncestorProperties(self, s):
        """When every node is done, the initiator is everyone's ancestor, and the
        ancestor relation is irreflexive."""
        anc = self.is_ancestor(s)
        done = all_of(self.Node, lambda n: s.pc[n] == Pc.Done)
        return implies(done, all_of([n for n in self.Node if n != self.initiator],
                                    lambda n: anc[(n, self.initiator)])
                       & all_of(self.Node, lambda n: not_(anc[(n, n)])))


class MCEchoBugSelfParent(MCEcho):
    """A node takes itself, not the sender, as its parent: when it answers, the
    PlusCal ``assert parent \\in nbrs`` (``ParentIsNbr``) fails."""

    @action(self_=Node, kind=list(Kind), sndr=Node)
    def n1(self, s, t, self_, kind, sndr):
        msg = {"kind": kind, "sndr": sndr}
        net = {n: s.inbox[n] for n in self.Node}
        net[self_] = s.inbox[self_].without(msg)
        t.rcvd[self_] = s.rcvd[self_] + 1
        first = (self_ != self.initiator) & (s.rcvd[self_] + 1 == 1)
        with t.branch("first", first):
            t.parent[self_] = self_  # the bug: not sndr
            self._store_inbox(t, self.multicast(net, self_, s.nbrs[self_].without(sndr),
                                                Kind.m))
        with t.branch("later", not_(first)):
            t.inbox[self_] = net[self_]
        if kind == Kind.c:
            t.children[self_] = s.children[self_].with_(sndr)
        return ((s.pc[self_] == Pc.n1) & (s.rcvd[self_] < s.nbrs[self_].size())
                & s.inbox[self_].has(msg))


class MCEchoBugInitiatorSendsC(MCEcho):
    """The initiator starts with ``c`` messages: a node's first message is not an ``m``,
    and the PlusCal ``assert msg.kind = "m"`` (``FirstMessageIsM``) fails."""

    @action(self_=Node)
    def n0(self, s, t, self_):
        if self_ == self.initiator:
            net = {n: s.inbox[n] for n in self.Node}
            self._store_inbox(t, self.multicast(net, self_, s.nbrs[self_], Kind.c))
        t.pc[self_] = Pc.n1
        return s.pc[self_] == Pc.n0
