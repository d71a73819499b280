"""Lamport's Paxos consensus algorithm (no explicit leaders or learners), refining Voting.

Source: tlaplus/Examples ``specifications/Paxos/Paxos.tla`` with the model
``specifications/Paxos/MCPaxos.tla`` / ``MCPaxos.cfg``: ``MCAcceptor == {a1}``,
``MCValue == {v1}``, ``MCQuorum == {{a1}}``, ``MCBallot == 0..1`` (also for the
instantiated Voting module), ``None`` a model value, ``INVARIANT Inv1 Inv2 Inv3 Inv4``,
``PROPERTY VotingSpecBar`` (``V!Spec``), ``SYMMETRY MCSymmetry`` (trivial with one
acceptor and one value), deadlock checked (TLC's default). The repository's
``manifest.json`` gives 25 distinct states (TLC's state depth 9, our depth 8).

Translation:

* ``msgs \\in SUBSET Message`` is ``SetOf(Msg)``, ``Message`` (four record sets, one
  per value of the ``type`` field) a message union: ``Msg = Union("type", MType,
  **{"1a": Record(bal), "1b": Record(acc, bal, mbal, mval), "2a": Record(bal, val),
  "2b": Record(acc, bal, val)})``, one bit per message. ``MType`` is an ``IntEnum``
  whose members are named ``"1a"`` ... as the TLA+ strings (made with the functional
  API; ``P1A`` ... are its members), so traces show ``[type |-> "1a", bal |-> 0]``.
  ``None`` is the ``none`` value 0 of ``Ref(Value)``; acceptors and values are ``Ids``.
* ``Phase1b(a) == \\E m \\in msgs: m.type = "1a" /\\ ...`` and ``Phase2b(a)`` take the
  message as a parameter, ``m=MemberOf("msgs", lambda m: m.type == P1A)``.
* ``Phase2a``'s ``LET Q1b == {m \\in msgs: ...}`` and ``Q1bv`` are ``s.msgs.filter(...)``,
  quantified over as in the TLA+.
* ``votes`` (the refinement mapping) is ``voted_for(s, a, b, v)``: the 2b message of
  ``a`` for ``<<b, v>>`` is in ``msgs``. ``V!ShowsSafeAt``, ``V!VotesSafe``... are those
  of Voting.tla over it. They read ``<<b, v>> \\in votes[a]`` many times for the same
  a, b, v: the invariants and ``VotingNext`` test each once per state (``VotesOf``).
* ``TypeOK`` holds by the variables' types (``msgs \\subseteq Message`` is the type of
  ``msgs``); ``Inv3``'s ``\\A m \\in msgs`` visits the members, whose fields are
  constants there, so a Python test on ``m.type`` picks the conjunct that applies.
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
from typing import Any

import numpy as np

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
    not_,
    where,
)

__all__ = ["MType", "Msg", "PaxosBase", "MCPaxos", "MCPaxosTwo", "MCPaxosBug"]

#: The ``type`` field of a message: members named as the TLA+ strings.
MType = IntEnum("MType", [("1a", 0), ("1b", 1), ("2a", 2), ("2b", 3)])
P1A, P1B, P2A, P2B = MType["1a"], MType["1b"], MType["2a"], MType["2b"]

NONE = 0  # the None model value: Ref(Value)'s none

NAcceptors = Const(1, min=1)
NValues = Const(1, min=1)
MaxBallot = Const(1, min=0, doc="Ballot == 0..MaxBallot")
Acceptor = Ids(1, NAcceptors)
Value = Ids(1, NValues)
Ballot = Int(0, MaxBallot)
#: ``Message``: ``[type: {"1a"}, bal: Ballot] \\cup [type: {"1b"}, acc: Acceptor, bal:
#: Ballot, mbal: Ballot \\cup {-1}, mval: Value \\cup {None}] \\cup [type: {"2a"}, bal:
#: Ballot, val: Value] \\cup [type: {"2b"}, acc: Acceptor, bal: Ballot, val: Value]``
Msg = Union("type", MType, **{
    "1a": Record(bal=Ballot),
    "1b": Record(acc=Acceptor, bal=Ballot, mbal=Int(-1, MaxBallot),
                 mval=Ref(Value, none=NONE)),
    "2a": Record(bal=Ballot, val=Value),
    "2b": Record(acc=Acceptor, bal=Ballot, val=Value)})


class VotesOf:
    """A state whose ``votes`` (the refinement mapping) are tested once each: Voting's
    definitions read ``<<b, v>> \\in votes[a]`` many times for the same a, b, v. The
    state's variables are read through it."""

    def __init__(self, s: Any) -> None:
        self.state = s
        self.votes: dict[tuple[int, int, int], Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)


class PaxosBase(Spec):
    """Paxos.tla's variables, actions and the Voting definitions over its ``votes``;
    models (the constants and invariants) are subclasses."""

    check_deadlock = True
    symmetry = ("Acceptor", "Value")

    NAcceptors = NAcceptors
    NValues = NValues
    MaxBallot = MaxBallot
    Acceptor = Acceptor
    Value = Value
    Quorum: tuple[tuple[int, ...], ...] = ((1,),)

    maxBal = Array(Acceptor, Int(-1, MaxBallot), init=-1)
    maxVBal = Array(Acceptor, Int(-1, MaxBallot), init=-1)
    maxVal = Array(Acceptor, Ref(Value, none=NONE))
    msgs = SetOf(Msg)

    @property
    def Ballot(self) -> range:
        return range(0, self.MaxBallot + 1)

    # -- the actions ---------------------------------------------------------------------
    @action(b=lambda self: self.Ballot)
    def Phase1a(self, s, t, b):
        t.msgs = s.msgs.with_({"type": P1A, "bal": b})
        return True

    @action(a=Acceptor, m=MemberOf("msgs", lambda m: m.type == P1A))
    def Phase1b(self, s, t, a, m):
        """``\\E m \\in msgs: m.type = "1a" /\\ m.bal > maxBal[a] /\\ ...``."""
        t.maxBal[a] = m.bal
        t.msgs = s.msgs.with_({"type": P1B, "acc": a, "bal": m.bal,
                               "mbal": s.maxVBal[a], "mval": s.maxVal[a]})
        return m.bal > s.maxBal[a]

    def phase2a_quorum(self, s, q, b, v):
        """The LET/IN of Phase2a for one quorum Q."""
        q1b = s.msgs.filter(lambda m: (m.type == P1B) & (m.bal == b)
                            & any_of(q, lambda a: m.acc == a))
        q1bv = q1b.filter(lambda m: m.mbal >= 0)
        every_member = all_of(q, lambda a: any_of(q1b, lambda m: m.acc == a))
        highest_is_v = any_of(q1bv, lambda m: (m.mval == v) & all_of(
            q1bv, lambda mm: m.mbal >= mm.mbal))
        return every_member & (q1bv.is_empty() | highest_is_v)

    @action(b=lambda self: self.Ballot, v=Value)
    def Phase2a(self, s, t, b, v):
        t.msgs = s.msgs.with_({"type": P2A, "bal": b, "val": v})
        return (not_(any_of(s.msgs, lambda m: (m.type == P2A) & (m.bal == b)))
                & any_of(self.Quorum, lambda q: self.phase2a_quorum(s, q, b, v)))

    @action(a=Acceptor, m=MemberOf("msgs", lambda m: m.type == P2A))
    def Phase2b(self, s, t, a, m):
        """``\\E m \\in msgs: m.type = "2a" /\\ m.bal >= maxBal[a] /\\ ...``."""
        t.maxBal[a] = m.bal
        t.maxVBal[a] = m.bal
        t.maxVal[a] = m.val
        t.msgs = s.msgs.with_({"type": P2B, "acc": a, "bal": m.bal, "val": m.val})
        return m.bal >= s.maxBal[a]

    # -- the refinement mapping: votes, and Voting.tla's definitions over it --------------
    def voted_for(self, s, a, b, v):
        """``<<b, v>> \\in votes[a]``: the 2b message of a for <<b, v>> is in msgs (tested
        once per state and constant a, b, v when s is a ``VotesOf``)."""
        if not isinstance(s, VotesOf):
            return s.msgs.has({"type": P2B, "acc": a, "bal": b, "val": v})
        key = (a, b, v)
        if not all(isinstance(x, (int, np.integer)) for x in key):
            return s.msgs.has({"type": P2B, "acc": a, "bal": b, "val": v})
        key = (int(a), int(b), int(v))
        if key not in s.votes:
            s.votes[key] = s.msgs.has({"type": P2B, "acc": a, "bal": b, "val": v})
        return s.votes[key]

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
        s = VotesOf(s)
        return self.votes_safe(s) & self.one_value_per_ballot(s)

    def type_ok(self, s):
        """``TypeOK``: maxBal, maxVBal in Ballot \\cup {-1}, maxVal in Value \\cup {None},
        msgs \\subseteq Message: the variables' types."""
        return True

    def max_vote_recorded(self, s):
        """``\\A a: IF maxVBal[a] = -1 THEN maxVal[a] = None ELSE <<maxVBal[a], maxVal[a]>>
        \\in votes[a]``."""
        s = VotesOf(s)
        return all_of(self.Acceptor, lambda a: where(
            s.maxVBal[a] == -1, s.maxVal[a] == NONE,
            any_of(self.Ballot, lambda b: any_of(self.Value, lambda v: (
                s.maxVBal[a] == b) & (s.maxVal[a] == v) & self.voted_for(s, a, b, v)))))

    def msg_inv(self, s, m):
        """Inv!3 for one message m of msgs (its fields are constants here: a Python test
        on m.type picks the conjunct that applies)."""
        if m.type == P1B:
            # <<m.mbal, m.mval>> \\in votes[m.acc] (a vote's value is never None)
            mbal_voted = (True if m.mbal < 0 else False if m.mval == NONE
                          else self.voted_for(s, m.acc, m.mbal, m.mval))
            return (s.maxBal[m.acc] >= m.bal) & mbal_voted
        if m.type == P2A:
            return (any_of(self.Quorum, lambda q: self.shows_safe_at(s, q, m.bal, m.val))
                    & all_of(s.msgs, lambda mm: implies((mm.type == P2A) & (mm.bal == m.bal),
                                                        mm.val == m.val)))
        return True

    # -- PROPERTY VotingSpecBar: [][V!Next]_<<votes, maxBal>> -------------------------------
    @action_property
    def VotingNext(self, s, t):
        s, t = VotesOf(s), VotesOf(t)

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
        w = VotesOf(s)
        return all_of(s.msgs, lambda m: self.msg_inv(w, m))

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
