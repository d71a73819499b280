"""Paxos without explicit leaders or learners, the base of the SimplifiedFastPaxos example.

Source: tlaplus/Examples ``specifications/SimplifiedFastPaxos/Paxos.tla`` with the model
``specifications/SimplifiedFastPaxos/Paxos.cfg``: replicas ``{r1, r2, r3, r4}``,
values ``{v1, v2, v3}``, ``Ballots = {0, 1, 2}``, quorums the four 3-subsets of the
replicas, ``SPECIFICATION PaxosSpec``, ``INVARIANTS PaxosTypeOK PaxosNontriviality``,
``PROPERTY PaxosConsistency``, ``SYMMETRY PaxosSymmetry`` (``Permutations(Values)
\\union Permutations(Replicas)``), deadlock checked (TLC's default). The repository's
``manifest.json`` gives 1,207 distinct states (TLC's state depth 22, our depth 21).

Translation:

* ``messages \\subseteq Message`` (the union of four record sets) is one ``SetOf`` of a
  ``Record`` with the union of the fields: ``kind`` (the TLA+ ``type``; a record field
  cannot be called ``type``), ``ballot``, ``acceptor``, ``maxVBallot`` and ``value``
  (``maxValue`` of a P1b message, ``value`` of P2a/P2b). Fields a kind lacks hold a
  filler (``acceptor = 0``, ``maxVBallot = 0``, ``value = none``), so every TLA+
  message is one record value. ``none`` is the ``none`` value 0 of ``Ref(Values)``.
  ``any`` (a P2a value of Fast Paxos) is never sent by this spec (``PaxosAccept`` sends
  a ``v \\in Values``) and is left out of the field's type.
* Replicas and values are ``Ids`` (model values), both symmetric as in the cfg.
* ``\\E a \\in Replicas, m \\in p1aMessages: ...`` (and the same in ``PaxosAccepted``)
  take the message's fields as action parameters, with ``m \\in messages`` in the guard.
  ``\\E q \\in Quorums`` in ``PaxosAccept`` and ``PaxosDecide`` is a quantifier in the
  guard (the successor does not depend on q).
* ``ForcedValue(M)`` is the ``maxValue`` of a message of ``M`` with the largest
  ``maxVBallot``. ``CHOOSE`` may pick any such message: they all carry the same value,
  since an acceptor's ``maxVBallot > 0`` comes from the one P2a message of that ballot
  (``PaxosAccept`` sends at most one per ballot). Written as "some message of ``M``
  with value ``v`` and no message of ``M`` with a larger ``maxVBallot``".
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
    invariant,
    not_,
)

__all__ = ["MType", "SimplifiedPaxos", "SimplifiedPaxosBug"]


class MType(IntEnum):
    """The ``type`` field of a message (the record field ``kind``)."""

    P1a = 0
    P1b = 1
    P2a = 2
    P2b = 3


NONE = 0  # the model value none; also the filler "no acceptor"


class SimplifiedPaxos(Spec):
    """Paxos.cfg of SimplifiedFastPaxos: 4 replicas, 3 values, ballots 0..2."""

    check_deadlock = True
    symmetry = ("Replicas", "Values")

    NReplicas = Const(4, min=1)
    NValues = Const(3, min=1)
    MaxBallot = Const(2, min=1, doc="Ballots == 0..MaxBallot")
    Replicas = Ids(1, NReplicas)
    Values = Ids(1, NValues)

    messages = SetOf(Record(kind=Enum(MType), ballot=Int(0, MaxBallot),
                            acceptor=Ref(Replicas, none=NONE), maxVBallot=Int(0, MaxBallot),
                            value=Ref(Values, none=NONE)))
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

    # -- messages ------------------------------------------------------------------------
    @staticmethod
    def p1a(b):
        return {"kind": MType.P1a, "ballot": b, "acceptor": NONE, "maxVBallot": 0,
                "value": NONE}

    @staticmethod
    def p1b(b, a, mvb, mv):
        return {"kind": MType.P1b, "ballot": b, "acceptor": a, "maxVBallot": mvb, "value": mv}

    @staticmethod
    def p2a(b, v):
        return {"kind": MType.P2a, "ballot": b, "acceptor": NONE, "maxVBallot": 0, "value": v}

    @staticmethod
    def p2b(b, a, v):
        return {"kind": MType.P2b, "ballot": b, "acceptor": a, "maxVBallot": 0, "value": v}

    def sent(self, s, m):
        return s.messages.has(m)

    @staticmethod
    def is_message(m) -> bool:
        """``m \\in Message`` for a value of the messages element type (fields are
        constants here, so this is a Python test)."""
        if m.kind == MType.P1a:
            return m.ballot != 0 and (m.acceptor, m.maxVBallot, m.value) == (NONE, 0, NONE)
        if m.kind == MType.P1b:
            return m.acceptor != NONE
        if m.kind == MType.P2a:
            return (m.acceptor, m.maxVBallot) == (NONE, 0) and m.value != NONE
        return m.acceptor != NONE and m.maxVBallot == 0 and m.value != NONE

    # -- the actions ------------------------------------------------------------------------
    @action(b=lambda self: self.Ballots[1:])
    def PaxosPrepare(self, s, t, b):
        t.messages = s.messages.with_(self.p1a(b))
        return True

    @action(a=Replicas, b=lambda self: self.Ballots[1:])
    def PaxosPromise(self, s, t, a, b):
        """``\\E a \\in Replicas, m \\in p1aMessages`` for m = P1a(b)."""
        t.maxBallot[a] = b
        t.messages = s.messages.with_(self.p1b(b, a, s.maxVBallot[a], s.maxValue[a]))
        return self.sent(s, self.p1a(b)) & (s.maxBallot[a] < b)

    def promises(self, s, b, q):
        """The P1b messages of ballot b any member of q could have sent, as
        ``(acceptor, maxVBallot, maxValue, in_messages)``: M of PaxosAccept is those sent."""
        return [(a, mvb, mv, self.sent(s, self.p1b(b, a, mvb, mv)))
                for a in q for mvb in self.Ballots for mv in [NONE, *self.Values]]

    def value_ok(self, s, M, v):
        """``\\/ \\A m \\in M: m.maxValue = none \\/ v = ForcedValue(M)``."""
        all_none = all_of([m for m in M if m[2] != NONE], lambda m: not_(m[3]))
        # ForcedValue(M) = v: some sent m of value v has no sent n with a higher
        # maxVBallot; per maxVBallot c, whether any message (and one of value v) was
        # sent, so that each is tested once rather than once per lower message
        ballots = sorted({m[1] for m in M})
        sent_at = {c: any_of([m for m in M if m[1] == c], lambda m: m[3]) for c in ballots}
        forced_v = any_of(ballots, lambda c: any_of(
            [m for m in M if m[1] == c and m[2] == v], lambda m: m[3]) & all_of(
            [d for d in ballots if d > c], lambda d: not_(sent_at[d])))
        return all_none | forced_v

    def accept_quorum(self, s, b, q, v, promised=None):
        """The quorum q's conjuncts of PaxosAccept; ``promised`` is :meth:`promises` of
        ballot b over all the replicas when the caller made it already (M is its rows
        of q's members: each membership test is made once, not once per quorum)."""
        if promised is None:
            M = self.promises(s, b, q)
        else:
            M = [m for m in promised if m[0] in q]
        every = all_of(q, lambda a: any_of([m for m in M if m[0] == a], lambda m: m[3]))
        return every & self.value_ok(s, M, v)

    @action(b=lambda self: self.Ballots, v=Values)
    def PaxosAccept(self, s, t, b, v):
        t.messages = s.messages.with_(self.p2a(b, v))
        promised = self.promises(s, b, self.Replicas)
        return (all_of(self.Values, lambda w: not_(self.sent(s, self.p2a(b, w))))
                & any_of(self.Quorums, lambda q: self.accept_quorum(s, b, q, v, promised)))

    @action(a=Replicas, b=lambda self: self.Ballots, v=Values)
    def PaxosAccepted(self, s, t, a, b, v):
        """``\\E a \\in Replicas, m \\in p2aMessages`` for m = P2a(b, v)."""
        t.maxBallot[a] = b
        t.maxVBallot[a] = b
        t.maxValue[a] = v
        t.messages = s.messages.with_(self.p2b(b, a, v))
        return self.sent(s, self.p2a(b, v)) & (s.maxBallot[a] <= b)

    @action(b=lambda self: self.Ballots, v=Values)
    def PaxosDecide(self, s, t, b, v):
        """``\\E b, q: LET M == ... IN (\\A a \\in q: ...) /\\ \\E m \\in M: decision' =
        m.value``, for the value v of some m."""
        t.decision = v

        def quorum(q):
            return (all_of(q, lambda a: any_of(self.Values, lambda w: self.sent(
                s, self.p2b(b, a, w))))
                & any_of(q, lambda a: self.sent(s, self.p2b(b, a, v))))
        return any_of(self.Quorums, quorum)

    # -- properties -----------------------------------------------------------------------
    @invariant
    def PaxosTypeOK(self, s):
        """By the variables' types, all but ``messages \\subseteq Message``."""
        return all_of(s.messages, lambda m: self.is_message(m))

    @invariant
    def PaxosNontriviality(self, s):
        proposed = (s.decision == NONE) | any_of(self.Values, lambda v: (s.decision == v) & any_of(
            self.Ballots, lambda b: self.sent(s, self.p2a(b, v))))

        def p1b_ok(m):
            if not (self.is_message(m) and m.kind == MType.P1b):
                return True
            return (m.value != NONE or m.maxVBallot == 0) and (m.value == NONE or m.maxVBallot > 0)
        return proposed & all_of(s.messages, p1b_ok)

    @action_property
    def PaxosConsistency(self, s, t):
        """``[][decision = none]_<<decision>>``."""
        return (s.decision == NONE) | (t.decision == s.decision)


class SimplifiedPaxosBug(SimplifiedPaxos):
    """PaxosAccept proposes any value, ignoring ForcedValue(M)."""

    def value_ok(self, s, M, v):
        return True

