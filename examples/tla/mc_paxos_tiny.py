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

from examples.tla.mc_paxos import P2A, P2B, PaxosBase, VotesOf
from modelcheck import Const, MemberOf, action, all_of, invariant

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
        if m.type == P2B:
            return (s.maxVBal[m.acc] >= m.bal) & s.msgs.has(
                {"type": P2A, "bal": m.bal, "val": m.val})
        return super().msg_inv(s, m)

    @invariant
    def MsgsConsistent(self, s):
        w = VotesOf(s)
        return all_of(s.msgs, lambda m: self.msg_inv(w, m))


class MCPaxosTinyBug(MCPaxosTiny):
    """Phase2b accepts a 2a message of a ballot below maxBal[a]."""

    @action(a=PaxosBase.Acceptor, m=MemberOf("msgs", lambda m: m.type == P2A))
    def Phase2b(self, s, t, a, m):
        t.maxBal[a] = m.bal
        t.maxVBal[a] = m.bal
        t.maxVal[a] = m.val
        t.msgs = s.msgs.with_({"type": P2B, "acc": a, "bal": m.bal, "val": m.val})
        return True
