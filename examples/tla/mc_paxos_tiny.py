"""Paxos consensus from Lamport's lecture "The Paxos Algorithm or How to Win a Turing
Award", the tiny model.

Source: tlaplus/Examples ``specifications/PaxosHowToWinATuringAward/Paxos.tla`` (which
refines ``Voting.tla`` of the same directory) with the model ``MCPaxos.tla`` /
``MCPaxosTiny.cfg``: ``MaxBallot = 1`` (``Ballot <- 0..MaxBallot``, also for the
instantiated Voting module), acceptors ``{a1, a2, a3}``, values ``{v1, v2}``, quorums
the three pairs of acceptors, ``None`` a model value, ``INVARIANT Inv``, ``PROPERTY
V!Spec``; no symmetry, deadlock checked (TLC's default). The repository's
``manifest.json`` gives 3,921 distinct states, 23,563 in total and TLC's state depth
17 (our depth 16).

Translation: the variables, actions, messages and the Voting refinement are those of
:mod:`examples.tla.mc_paxos` (this Paxos.tla is that one with other comments; its
``Inv`` differs and is here). ``Inv`` is split into its conjuncts, each an invariant:
``TypeOK``, ``MaxBalAboveMaxVBal`` (``\\A a: maxBal[a] >= maxVBal[a]``),
``MaxVoteRecorded`` (the IF/THEN/ELSE on ``<<maxVBal[a], maxVal[a]>>``) and
``MsgsConsistent`` (the ``\\A m \\in msgs`` conjunct, with the 2b case this version
adds). ``PROPERTY V!Spec`` is the action property ``VotingNext`` (``V!Init`` is checked
on the initial state by the tests). The spec has no fairness, so no liveness.

``MCPaxosTinyBug`` lets an acceptor answer a 2a message of a ballot below its
``maxBal`` (``m.bal >= maxBal[a]`` dropped from ``Phase2b``): its ``maxBal`` falls
below the ballot of a 1b message it sent, and ``MsgsConsistent`` fails.
"""

from __future__ import annotations

from examples.tla.mc_paxos import MType, PaxosBase
from modelcheck import Const, action, all_of, invariant

__all__ = ["MCPaxosTiny", "MCPaxosTinyBug"]


class MCPaxosTiny(PaxosBase):
    """MCPaxosTiny.cfg: three acceptors, two values, ballots 0..1, no symmetry."""

    symmetry = ()
    NAcceptors = Const(3, min=1)
    NValues = Const(2, min=1)
    MaxBallot = Const(1, min=0, doc="Ballot == 0..MaxBallot")
    Quorum = ((1, 2), (1, 3), (2, 3))

    @invariant
    def TypeOK(self, s):
        return self.type_ok(s)

    @invariant
    def MaxBalAboveMaxVBal(self, s):
        return all_of(self.Acceptor, lambda a: s.maxBal[a] >= s.maxVBal[a])

    @invariant
    def MaxVoteRecorded(self, s):
        return self.max_vote_recorded(s)

    def msg_inv(self, s, m):
        """The 1b and 2a conjuncts (as in Paxos/Paxos.tla), and the 2b one."""
        if self.is_message(m) and m.kind == MType.P2b:
            return (s.maxVBal[m.acc] >= m.bal) & self.sent(s, self.msg_2a(m.bal, m.val))
        return super().msg_inv(s, m)

    @invariant
    def MsgsConsistent(self, s):
        return all_of(s.msgs, lambda m: self.msg_inv(s, m))


class MCPaxosTinyBug(MCPaxosTiny):
    """Phase2b accepts a 2a message of a ballot below maxBal[a]."""

    @action(a=PaxosBase.Acceptor, b=lambda self: self.Ballot, v=PaxosBase.Value)
    def Phase2b(self, s, t, a, b, v):
        t.maxBal[a] = b
        t.maxVBal[a] = b
        t.maxVal[a] = v
        t.msgs = s.msgs.with_(self.msg_2b(a, b, v))
        return self.sent(s, self.msg_2a(b, v))
