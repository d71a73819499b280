"""Paxos without explicit leaders or learners, the base of the SimplifiedFastPaxos example.

Source: tlaplus/Examples ``specifications/SimplifiedFastPaxos/Paxos.tla`` with the model
``specifications/SimplifiedFastPaxos/Paxos.cfg``: replicas ``{r1, r2, r3, r4}``,
values ``{v1, v2, v3}``, ``Ballots = {0, 1, 2}``, quorums the four 3-subsets of the
replicas, ``SPECIFICATION PaxosSpec``, ``INVARIANTS PaxosTypeOK PaxosNontriviality``,
``PROPERTY PaxosConsistency``, ``SYMMETRY PaxosSymmetry`` (``Permutations(Values)
\\union Permutations(Replicas)``), deadlock checked (TLC's default). The repository's
``manifest.json`` gives 1,207 distinct states (TLC's state depth 22, our depth 21).

Translation:

* ``messages \\subseteq Message`` (``P1aMessage \\union P1bMessage \\union P2aMessage
  \\union P2bMessage``) is ``SetOf(Msg)``, ``Msg`` a message union tagged by ``type``:
  ``Union("type", MType, P1a=Record(ballot), P1b=Record(ballot, acceptor, maxVBallot,
  maxValue), P2a=Record(ballot, value), P2b=Record(ballot, acceptor, value))``, one bit
  per message (191 with the cfg's constants). ``none`` is the ``none`` value 0 of
  ``Ref(Values)``. ``any`` (a P2a value of Fast Paxos) is never sent by this spec
  (``PaxosAccept`` sends a ``v \\in Values``) and is left out of the field's type, so
  ``PaxosAccepted``'s ``m.value \\in Values`` always holds. ``PaxosTypeOK`` holds by the
  variables' types.
* Replicas and values are ``Ids`` (model values), both symmetric as in the cfg.
* ``\\E a \\in Replicas, m \\in p1aMessages: ...`` (and ``p2aMessages`` in
  ``PaxosAccepted``) are parameters ``a=Replicas, m=MemberOf("messages", lambda m:
  m.type == MType.P1a)``. ``PaxosAccept``'s ``\\E b, q, v`` and ``PaxosDecide``'s
  ``\\E b, q ... \\E m \\in M: decision' = m.value`` are parameters ``b, v`` with
  ``\\E q \\in Quorums`` a quantifier in the guard (the successor does not depend on q
  or on which m carries v). ``p1bMessages`` is ``s.messages.filter(lambda m: m.type ==
  MType.P1b)``; ``M == {m \\in p1bMessages: m.ballot = b /\\ m.acceptor \\in q}`` is its
  filter by ``m.acceptor in q``, with ``m.ballot = b`` in each quantifier over it (a
  filter's test reads the element alone; a test of the parameter b inside the
  quantifiers lets the whole family of (b, v) instances be evaluated in one call on a
  batch). ``\\A a \\in q: \\E m \\in M: m.acceptor = a`` is tested once per replica and
  shared by the quorums.
* ``ForcedValue(M)`` is the ``maxValue`` of a message of ``M`` with the largest
  ``maxVBallot``. ``CHOOSE`` may pick any such message: they all carry the same value,
  since an acceptor's ``maxVBallot > 0`` comes from the one P2a message of that ballot
  (``PaxosAccept`` sends at most one per ballot). ``v = ForcedValue(M)`` is written as
  "some message of ``M`` of the largest ``maxVBallot`` (``max_of``) has value ``v``".
* ``PROPERTY PaxosConsistency == [][decision = none]_<<decision>>`` is the action
  property ``PaxosConsistency``. ``PaxosSpec``'s ``SF(PaxosDecide)`` is not used by any
  checked property (``PaxosLiveness == FALSE`` is not in the cfg).

``SimplifiedPaxosBug`` lets ``PaxosAccept`` ignore the forced value: two values get
decided, which ``PaxosConsistency`` catches.
"""

from __future__ import annotations

from enum import IntEnum
from itertools import combinations

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    MemberOf,
    Record,
    Ref,
    SetOf,
    Spec,
    Union,
    action,
    action_property,
    all_of,
    any_of,
    implies,
    invariant,
    max_of,
    not_,
    where,
)

__all__ = ["MType", "Msg", "SimplifiedPaxos", "SimplifiedPaxosBug"]


class MType(IntEnum):
    """The ``type`` field of a message."""

    P1a = 0
    P1b = 1
    P2a = 2
    P2b = 3


NONE = 0  # the model value none

NReplicas = Const(4, min=1)
NValues = Const(3, min=1)
MaxBallot = Const(2, min=1, doc="Ballots == 0..MaxBallot")
Replicas = Ids(1, NReplicas)
Values = Ids(1, NValues)
Ballots = Int(0, MaxBallot)
#: ``Message == P1aMessage \\union P1bMessage \\union P2aMessage \\union P2bMessage``
Msg = Union("type", MType,
            P1a=Record(ballot=Int(1, MaxBallot)),
            P1b=Record(ballot=Ballots, acceptor=Replicas, maxVBallot=Ballots,
                       maxValue=Ref(Values, none=NONE)),
            P2a=Record(ballot=Ballots, value=Values),
            P2b=Record(ballot=Ballots, acceptor=Replicas, value=Values))


class SimplifiedPaxos(Spec):
    """Paxos.cfg of SimplifiedFastPaxos: 4 replicas, 3 values, ballots 0..2."""

    check_deadlock = True
    symmetry = ("Replicas", "Values")

    NReplicas = NReplicas
    NValues = NValues
    MaxBallot = MaxBallot
    Replicas = Replicas
    Values = Values

    messages = SetOf(Msg)
    decision = Ref(Values, none=NONE)
    maxBallot = Array(Replicas, Int(0, MaxBallot))
    maxVBallot = Array(Replicas, Int(0, MaxBallot))
    maxValue = Array(Replicas, Ref(Values, none=NONE))

    @property
    def Ballots(self) -> range:
        return range(0, self.MaxBallot + 1)

    @property
    def Quorums(self) -> list[tuple[int, ...]]:
        """The cfg's quorums: every set of more than half of the replicas (for 4 replicas,
        the four 3-subsets)."""
        n = len(self.Replicas)
        return list(combinations(self.Replicas, n // 2 + 1))

    # -- the actions ------------------------------------------------------------------------
    @action(b=lambda self: self.Ballots[1:])
    def PaxosPrepare(self, s, t, b):
        t.messages = s.messages.with_({"type": MType.P1a, "ballot": b})
        return True

    @action(a=Replicas, m=MemberOf("messages", lambda m: m.type == MType.P1a))
    def PaxosPromise(self, s, t, a, m):
        """``\\E a \\in Replicas, m \\in p1aMessages: maxBallot[a] < m.ballot /\\ ...``."""
        t.maxBallot[a] = m.ballot
        t.messages = s.messages.with_({"type": MType.P1b, "ballot": m.ballot, "acceptor": a,
                                       "maxVBallot": s.maxVBallot[a],
                                       "maxValue": s.maxValue[a]})
        return s.maxBallot[a] < m.ballot

    def value_ok(self, M, b, v):
        """``\\/ \\A m \\in M: m.maxValue = none \\/ v = ForcedValue(M)``: the M here holds
        q's P1b messages of every ballot, the TLA+ M those of ballot b."""
        all_none = all_of(M, lambda m: implies(m.ballot == b, m.maxValue == NONE))
        top = max_of(M, lambda m: where(m.ballot == b, m.maxVBallot, 0), default=0)
        forced_v = any_of(M, lambda m: (m.ballot == b) & (m.maxValue == v)
                          & (m.maxVBallot == top))
        return all_none | forced_v

    @staticmethod
    def sent_by(M, a, b):
        """``\\E m \\in M: m.acceptor = a /\\ m.ballot = b``."""
        return any_of(M, lambda m: (m.acceptor == a) & (m.ballot == b))

    @action(b=lambda self: self.Ballots, v=Values)
    def PaxosAccept(self, s, t, b, v):
        """``\\E b \\in Ballots, q \\in Quorums, v \\in Values: ...``."""
        t.messages = s.messages.with_({"type": MType.P2a, "ballot": b, "value": v})
        p1b = s.messages.filter(lambda m: m.type == MType.P1b)
        # \A a \in q: \E m \in M: m.acceptor = a, with M's messages from a those of
        # p1b of ballot b: one test per replica, shared by the quorums
        promised = {a: self.sent_by(p1b, a, b) for a in self.Replicas}

        def quorum(q):
            M = p1b.filter(lambda m: m.acceptor in q)
            return all_of(q, lambda a: promised[a]) & self.value_ok(M, b, v)
        return (not_(any_of(s.messages, lambda m: (m.type == MType.P2a) & (m.ballot == b)))
                & any_of(self.Quorums, quorum))

    @action(a=Replicas, m=MemberOf("messages", lambda m: m.type == MType.P2a))
    def PaxosAccepted(self, s, t, a, m):
        """``\\E a \\in Replicas, m \\in p2aMessages: maxBallot[a] <= m.ballot /\\ ...``."""
        t.maxBallot[a] = m.ballot
        t.maxVBallot[a] = m.ballot
        t.maxValue[a] = m.value
        t.messages = s.messages.with_({"type": MType.P2b, "ballot": m.ballot, "acceptor": a,
                                       "value": m.value})
        return s.maxBallot[a] <= m.ballot

    @action(b=lambda self: self.Ballots, v=Values)
    def PaxosDecide(self, s, t, b, v):
        """``\\E b, q: LET M == ... IN (\\A a \\in q: ...) /\\ \\E m \\in M: decision' =
        m.value``, for the value v of some m."""
        t.decision = v
        p2b = s.messages.filter(lambda m: m.type == MType.P2b)

        def sent(a, value_v):
            # \E m \in M: m.acceptor = a (/\ m.value = v) for M of ballot b and any q
            # holding a: one test per replica, shared by the quorums
            return any_of(p2b, lambda m: (m.acceptor == a) & (m.ballot == b)
                          & ((m.value == v) if value_v else True))
        accepted = {a: sent(a, False) for a in self.Replicas}
        accepted_v = {a: sent(a, True) for a in self.Replicas}
        return any_of(self.Quorums, lambda q: all_of(q, lambda a: accepted[a])
                      & any_of(q, lambda a: accepted_v[a]))

    # -- properties -----------------------------------------------------------------------
    @invariant
    def PaxosTypeOK(self, s):
        """Holds by the variables' types (``messages \\subseteq Message`` is the type of
        ``messages``)."""
        return True

    @invariant
    def PaxosNontriviality(self, s):
        p2a = s.messages.filter(lambda m: m.type == MType.P2a)
        proposed = (s.decision == NONE) | any_of(p2a, lambda m: m.value == s.decision)
        p1b_ok = all_of(s.messages, lambda m: implies(
            m.type == MType.P1b, ((m.maxValue != NONE) | (m.maxVBallot == 0))
            & ((m.maxValue == NONE) | (m.maxVBallot > 0))))
        return proposed & p1b_ok

    @action_property
    def PaxosConsistency(self, s, t):
        """``[][decision = none]_<<decision>>``."""
        return (s.decision == NONE) | (t.decision == s.decision)


class SimplifiedPaxosBug(SimplifiedPaxos):
    """PaxosAccept proposes any value, ignoring ForcedValue(M)."""

    def value_ok(self, M, b, v):
        return True
