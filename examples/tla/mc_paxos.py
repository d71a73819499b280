"""Lamport's Paxos consensus algorithm (no explicit leaders or learners), refining Voting.

Source: tlaplus/Examples ``specifications/Paxos/Paxos.tla`` with the model
``specifications/Paxos/MCPaxos.tla`` / ``MCPaxos.cfg``: ``MCAcceptor == {a1}``,
``MCValue == {v1}``, ``MCQuorum == {{a1}}``, ``MCBallot == 0..1`` (also for the
instantiated Voting module), ``None`` a model value, ``INVARIANT Inv1 Inv2 Inv3 Inv4``,
``PROPERTY VotingSpecBar`` (``V!Spec``), ``SYMMETRY MCSymmetry`` (trivial with one
acceptor and one value), deadlock checked (TLC's default). The repository's
``manifest.json`` gives 25 distinct states (TLC's state depth 9, our depth 8).

Translation:

* ``msgs \\in SUBSET Message`` is one ``SetOf`` of a ``Record`` with the union of the
  four message kinds' fields: ``kind`` (the TLA+ ``type``, an ``Enum``; a record field
  cannot be called ``type``, which is the record value's own attribute), ``acc``,
  ``bal``, ``mbal`` and ``val`` (``mval`` of a 1b message, ``val`` of a 2a/2b one).
  Fields a kind does not have hold a fixed filler (``acc = 0``, ``mbal = -1``,
  ``val = 0``), so each TLA+ message is exactly one record value (``msg_1a(b)`` ...
  build them). ``None`` is the
  ``none`` value 0 of ``Ref(Value)``; acceptors and values are ``Ids``.
* ``Phase1b(a)`` and ``Phase2b(a) == \\E m \\in msgs: ...`` take the message's fields
  as parameters (``Phase1b(a, b)``: the 1a message of ballot ``b``), with ``m \\in msgs``
  in the guard: the same successors, one action instance per message.
* ``Phase2a``'s ``LET Q1b == {m \\in msgs: ...}`` and the quantifiers over it are
  written over the finitely many 1b messages a quorum member could have sent
  (membership tests), the same predicate as the set comprehension.
* ``votes`` (the refinement mapping) is ``voted_for(s, a, b, v)``: a 2b message of
  ``a`` for ``<<b, v>>`` is in ``msgs``. ``V!ShowsSafeAt``, ``V!VotesSafe``... are those
  of Voting.tla over it.
* ``PROPERTY VotingSpecBar`` (``V!Init /\\ [][V!Next]_<<votes, maxBal>>``) is the action
  property ``VotingNext``: every step is a stuttering step of ``<<votes, maxBal>>``,
  an ``IncreaseMaxBal(a, b)`` or a ``VoteFor(a, b, v)`` of Voting (its enabling
  conditions evaluated on the pre-state, its effect compared on both). ``V!Init``
  holds in the one initial state (checked in ``tests/test_tla_models_2.py``). The cfg's
  commented-out ``MCLiveness`` (under ``MCLSpec``'s fairness) is not checked there,
  so not here either.

``MCPaxosTwo`` is a larger model of the same spec (two acceptors, two values, quorum
``{{a1, a2}}``) for the tests; ``MCPaxosBug`` lets ``Phase2a`` skip the quorum of 1b
messages and breaks ``Inv3``.
"""

from __future__ import annotations

from enum import IntEnum

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
    implies,
    invariant,
    not_,
    where,
)

__all__ = ["MType", "PaxosBase", "MCPaxos", "MCPaxosTwo", "MCPaxosBug"]


class MType(IntEnum):
    """The ``type`` field of a message (the record field ``kind``)."""

    P1a = 0
    P1b = 1
    P2a = 2
    P2b = 3


NONE = 0  # the None model value: Ref(Value)'s none, and "no acceptor" for 1a/2a messages


class PaxosBase(Spec):
    """Paxos.tla's variables, actions and the Voting definitions over its ``votes``;
    models (the constants and invariants) are subclasses."""

    check_deadlock = True
    symmetry = ("Acceptor", "Value")

    NAcceptors = Const(1, min=1)
    NValues = Const(1, min=1)
    MaxBallot = Const(1, min=0, doc="Ballot == 0..MaxBallot")
    Acceptor = Ids(1, NAcceptors)
    Value = Ids(1, NValues)
    Quorum: tuple[tuple[int, ...], ...] = ((1,),)

    maxBal = Array(Acceptor, Int(-1, MaxBallot), init=-1)
    maxVBal = Array(Acceptor, Int(-1, MaxBallot), init=-1)
    maxVal = Array(Acceptor, Ref(Value, none=NONE))
    msgs = SetOf(Record(kind=Enum(MType), acc=Ref(Acceptor, none=NONE), bal=Int(0, MaxBallot),
                        mbal=Int(-1, MaxBallot), val=Ref(Value, none=NONE)))

    @property
    def Ballot(self) -> range:
        return range(0, self.MaxBallot + 1)

    # -- messages (one record value per TLA+ message) --------------------------------
    @staticmethod
    def msg_1a(b):
        return {"kind": MType.P1a, "acc": NONE, "bal": b, "mbal": -1, "val": NONE}

    @staticmethod
    def msg_1b(a, b, mbal, mval):
        return {"kind": MType.P1b, "acc": a, "bal": b, "mbal": mbal, "val": mval}

    @staticmethod
    def msg_2a(b, v):
        return {"kind": MType.P2a, "acc": NONE, "bal": b, "mbal": -1, "val": v}

    @staticmethod
    def msg_2b(a, b, v):
        return {"kind": MType.P2b, "acc": a, "bal": b, "mbal": -1, "val": v}

    @staticmethod
    def is_message(m) -> bool:
        """``m \\in Message`` for a record value of the msgs element type (a Python test:
        the record's fields are constants): the fields a kind does not have hold the filler."""
        if m.kind == MType.P1a:
            return m.acc == NONE and m.mbal == -1 and m.val == NONE
        if m.kind == MType.P1b:
            return m.acc != NONE
        has_acc = m.kind == MType.P2b
        return (m.acc != NONE) == has_acc and m.mbal == -1 and m.val != NONE

    def sent(self, s, m):
        return s.msgs.has(m)

    # -- the actions ---------------------------------------------------------------------
    @action(b=lambda self: self.Ballot)
    def Phase1a(self, s, t, b):
        t.msgs = s.msgs.with_(self.msg_1a(b))
        return True

    @action(a=Acceptor, b=lambda self: self.Ballot)
    def Phase1b(self, s, t, a, b):
        """``\\E m \\in msgs: m.type = "1a" /\\ m.bal > maxBal[a] /\\ ...`` for m = 1a(b)."""
        t.maxBal[a] = b
        t.msgs = s.msgs.with_(self.msg_1b(a, b, s.maxVBal[a], s.maxVal[a]))
        return self.sent(s, self.msg_1a(b)) & (b > s.maxBal[a])

    def q1b(self, s, q, b):
        """The 1b messages of ballot b that members of q could have sent: ``(a, mbal,
        mval, in_msgs)``; mbal ranges over -1..b-1 (a 1b message's mbal is below its bal)."""
        return [(a, mb, mv, self.sent(s, self.msg_1b(a, b, mb, mv)))
                for a in q for mb in range(-1, self.MaxBallot + 1)
                for mv in [NONE, *self.Value]]

    def phase2a_quorum(self, s, q, b, v):
        """The LET/IN of Phase2a for one quorum Q."""
        q1b = self.q1b(s, q, b)
        q1bv = [m for m in q1b if m[1] >= 0]
        every_member = all_of(q, lambda a: any_of([m for m in q1b if m[0] == a],
                                                  lambda m: m[3]))
        none_voted = all_of(q1bv, lambda m: not_(m[3]))
        highest_is_v = any_of([m for m in q1bv if m[2] == v], lambda m: m[3] & all_of(
            [mm for mm in q1bv if mm[1] > m[1]], lambda mm: not_(mm[3])))
        return every_member & (none_voted | highest_is_v)

    @action(b=lambda self: self.Ballot, v=Value)
    def Phase2a(self, s, t, b, v):
        t.msgs = s.msgs.with_(self.msg_2a(b, v))
        return (all_of(self.Value, lambda w: not_(self.sent(s, self.msg_2a(b, w))))
                & any_of(self.Quorum, lambda q: self.phase2a_quorum(s, q, b, v)))

    @action(a=Acceptor, b=lambda self: self.Ballot, v=Value)
    def Phase2b(self, s, t, a, b, v):
        """``\\E m \\in msgs: m.type = "2a" /\\ m.bal >= maxBal[a] /\\ ...`` for m = 2a(b, v)."""
        t.maxBal[a] = b
        t.maxVBal[a] = b
        t.maxVal[a] = v
        t.msgs = s.msgs.with_(self.msg_2b(a, b, v))
        return self.sent(s, self.msg_2a(b, v)) & (b >= s.maxBal[a])

    # -- the refinement mapping: votes, and Voting.tla's definitions over it --------------
    def voted_for(self, s, a, b, v):
        """``<<b, v>> \\in votes[a]``."""
        return self.sent(s, self.msg_2b(a, b, v))

    def did_not_vote_at(self, s, a, b):
        return all_of(self.Value, lambda v: not_(self.voted_for(s, a, b, v)))

    def cannot_vote_at(self, s, a, b):
        return (s.maxBal[a] > b) & self.did_not_vote_at(s, a, b)

    def none_other_choosable_at(self, s, b, v):
        return any_of(self.Quorum, lambda q: all_of(
            q, lambda a: self.voted_for(s, a, b, v) | self.cannot_vote_at(s, a, b)))

    def safe_at(self, s, b, v):
        return all_of(range(0, b), lambda c: self.none_other_choosable_at(s, c, v))

    def shows_safe_at(self, s, q, b, v):
        def from_c(c):
            voted = True if c == -1 else any_of(q, lambda a: self.voted_for(s, a, c, v))
            return voted & all_of(range(c + 1, b), lambda d: all_of(
                q, lambda a: self.did_not_vote_at(s, a, d)))
        return all_of(q, lambda a: s.maxBal[a] >= b) & any_of(range(-1, b), from_c)

    def votes_safe(self, s):
        return all_of(self.Acceptor, lambda a: all_of(self.Ballot, lambda b: all_of(
            self.Value, lambda v: implies(self.voted_for(s, a, b, v), self.safe_at(s, b, v)))))

    def one_value_per_ballot(self, s):
        return all_of(self.Ballot, lambda b: all_of(self.Value, lambda v1: all_of(
            [w for w in self.Value if w != v1], lambda v2: not_(
                any_of(self.Acceptor, lambda a1: self.voted_for(s, a1, b, v1))
                & any_of(self.Acceptor, lambda a2: self.voted_for(s, a2, b, v2))))))

    def voting_inv(self, s):
        """``V!Inv``: V!TypeOK holds by the types of maxBal and msgs."""
        return self.votes_safe(s) & self.one_value_per_ballot(s)

    def type_ok(self, s):
        """``TypeOK``: maxBal, maxVBal in Ballot \\cup {-1}, maxVal in Value \\cup {None},
        msgs \\subseteq Message (a 1a/2a message has no acceptor, a 2a/2b one a value)."""
        in_range = all_of(self.Acceptor, lambda a: (s.maxBal[a] >= -1) & (s.maxVBal[a] >= -1))
        well_formed = all_of(s.msgs, lambda m: self.is_message(m))
        return in_range & well_formed

    def max_vote_recorded(self, s):
        """``\\A a: IF maxVBal[a] = -1 THEN maxVal[a] = None ELSE <<maxVBal[a], maxVal[a]>>
        \\in votes[a]``."""
        return all_of(self.Acceptor, lambda a: where(
            s.maxVBal[a] == -1, s.maxVal[a] == NONE,
            any_of(self.Ballot, lambda b: any_of(self.Value, lambda v: (
                s.maxVBal[a] == b) & (s.maxVal[a] == v) & self.voted_for(s, a, b, v)))))

    def msg_inv(self, s, m):
        """Inv!3 for one message value m (its fields are constants here: Python tests on
        them pick the conjuncts that apply; values outside Message, never sent (Inv1),
        are skipped)."""
        if not self.is_message(m):
            return True
        if m.kind == MType.P1b:
            mbal_voted = True if m.mbal < 0 else self.voted_for(s, m.acc, m.mbal, m.val)
            return (s.maxBal[m.acc] >= m.bal) & mbal_voted
        if m.kind == MType.P2a:
            return (any_of(self.Quorum, lambda q: self.shows_safe_at(s, q, m.bal, m.val))
                    & all_of([w for w in self.Value if w != m.val],
                             lambda w: not_(self.sent(s, self.msg_2a(m.bal, w)))))
        return True

    # -- PROPERTY VotingSpecBar: [][V!Next]_<<votes, maxBal>> -------------------------------
    @action_property
    def VotingNext(self, s, t):
        def same_votes(a):
            return all_of(self.Ballot, lambda b: all_of(
                self.Value, lambda v: self.voted_for(s, a, b, v) == self.voted_for(t, a, b, v)))

        def others_unchanged(a):
            return all_of([c for c in self.Acceptor if c != a],
                          lambda c: (s.maxBal[c] == t.maxBal[c]) & same_votes(c))

        def increase_max_bal(a, b):
            return (b > s.maxBal[a]) & (t.maxBal[a] == b) & same_votes(a) & others_unchanged(a)

        def vote_for(a, b, v):
            enabled = ((s.maxBal[a] <= b) & self.did_not_vote_at(s, a, b)
                       & all_of([c for c in self.Acceptor if c != a], lambda c: all_of(
                           [w for w in self.Value if w != v],
                           lambda w: not_(self.voted_for(s, c, b, w))))
                       & any_of(self.Quorum, lambda q: self.shows_safe_at(s, q, b, v)))
            def new_vote(c, w):
                was = self.voted_for(s, a, c, w)
                return self.voted_for(t, a, c, w) == (was | ((c == b) & (w == v)))
            new_votes = all_of(self.Ballot, lambda c: all_of(self.Value, lambda w: new_vote(c, w)))
            return enabled & new_votes & (t.maxBal[a] == b) & others_unchanged(a)

        stutter = all_of(self.Acceptor, lambda a: (s.maxBal[a] == t.maxBal[a]) & same_votes(a))
        step = any_of(self.Acceptor, lambda a: any_of(self.Ballot, lambda b: increase_max_bal(
            a, b) | any_of(self.Value, lambda v: vote_for(a, b, v))))
        return stutter | step


class MCPaxos(PaxosBase):
    """MCPaxos.cfg: one acceptor, one value, ballots 0..1; invariants Inv1..Inv4."""

    @invariant
    def Inv1(self, s):
        """``Inv!1 == TypeOK``."""
        return self.type_ok(s)

    @invariant
    def Inv2(self, s):
        """``Inv!2``: the vote <<maxVBal[a], maxVal[a]>> is one of a's votes."""
        return self.max_vote_recorded(s)

    @invariant
    def Inv3(self, s):
        """``\\A m \\in msgs: (m.type = "1b") => ... /\\ (m.type = "2a") => ...``."""
        return all_of(s.msgs, lambda m: self.msg_inv(s, m))

    @invariant
    def Inv4(self, s):
        """``Inv!4 == V!Inv``."""
        return self.voting_inv(s)


class MCPaxosTwo(MCPaxos):
    """The same spec with two acceptors, two values and the quorum {{a1, a2}}."""

    NAcceptors = Const(2, min=1)
    NValues = Const(2, min=1)
    Quorum = ((1, 2),)


class MCPaxosBug(MCPaxosTwo):
    """Phase2a without the quorum of 1b messages: any value may be proposed, so a 2a
    message need not be safe (``Inv3``)."""

    def phase2a_quorum(self, s, q, b, v):
        return True
