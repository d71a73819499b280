"""Lamport's Voting algorithm, the abstract consensus algorithm that Paxos refines.

Source: tlaplus/Examples ``specifications/Paxos/Voting.tla`` (the algorithm) with the
model ``specifications/Paxos/MCVoting.tla`` / ``MCVoting.cfg``: acceptors
``{a1, a2, a3}``, values ``{v1, v2}``, quorums the three pairs of acceptors, ballots
``0..1``, ``SYMMETRY Permutations(MCAcceptor) \\cup Permutations(MCValue)``,
``CHECK_DEADLOCK FALSE``, ``INVARIANT Inv``, ``PROPERTY ConsensusSpecBar`` (module
Consensus's ``Spec`` under ``chosen``). The repository's ``manifest.json`` gives 77
distinct states (TLC's state depth 11, our depth 10: TLC counts the initial state).

Translation:

* ``votes \\in [Acceptor -> SUBSET (Ballot \\X Value)]`` is an ``Array`` of ``SetOf``
  a ``Record(bal, val)`` (a record stands for the pair ``<<b, v>>``); ``maxBal`` is an
  ``Array`` of ``Int(-1, MaxBallot)``. Acceptors and values are ``Ids`` (model
  values), both declared symmetric as in the cfg (TLC takes the group the two
  permutation sets generate; our symmetry is the product of both sets' permutations).
* ``Next == \\E a, b: IncreaseMaxBal(a, b) \\/ \\E v: VoteFor(a, b, v)`` is two
  actions with parameters. Quantifiers over the (small) sets ``votes[a]`` are written as
  membership tests of the finitely many candidate votes (``\\A vt \\in votes[a]: vt[1] #
  b`` is "no ``<<b, w>>`` in ``votes[a]``"), which is the same predicate.
* ``Inv == TypeOK /\\ VotesSafe /\\ OneValuePerBallot`` are three invariants
  (``TypeOK`` holds by the variables' types; it is kept and checks the ranges).
* ``PROPERTY ConsensusSpecBar`` is ``C!Init /\\ [][C!Next]_chosen``: its box part is the
  action property ``ConsensusNext`` (every step leaves ``chosen`` unchanged or takes it
  from ``{}`` to a singleton); ``C!Init`` (``chosen = {}`` initially) holds in the one
  initial state, which ``tests/test_tla_models_2.py`` checks. No liveness is checked
  (the cfg's spec has no fairness).
* The cfg's commented-out alternatives (``MCSpec``, ``MCInv``, the inductive-invariant
  check ``MCSpecI``) are not ported.

``MCVotingBug`` drops the ``ShowsSafeAt`` conjunct of ``VoteFor``: two quorums can then
choose different values and ``VotesSafe`` fails.
"""

from __future__ import annotations

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Record,
    SetOf,
    Spec,
    action,
    action_property,
    all_of,
    any_of,
    implies,
    invariant,
    not_,
)

__all__ = ["MCVoting", "MCVotingBug"]

Acceptor = Ids(1, 3, doc="a1, a2, a3")
Value = Ids(1, 2, doc="v1, v2")
MaxBallot = Const(1, min=0, doc="Ballot == 0..MaxBallot")


class MCVoting(Spec):
    """Voting with three acceptors, two values and ballots 0..1 (MCVoting.cfg)."""

    check_deadlock = False
    symmetry = ("Acceptor", "Value")

    Acceptor = Acceptor
    Value = Value
    MaxBallot = MaxBallot
    #: MCQuorum == {{a1, a2}, {a1, a3}, {a2, a3}}
    Quorum = ((1, 2), (1, 3), (2, 3))

    votes = Array(Acceptor, SetOf(Record(bal=Int(0, MaxBallot), val=Value)))
    maxBal = Array(Acceptor, Int(-1, MaxBallot), init=-1)

    # -- definitions of Voting.tla --------------------------------------------------
    @property
    def Ballot(self) -> range:
        return range(0, self.MaxBallot + 1)

    def voted_for(self, s, a, b, v):
        return s.votes[a].has({"bal": b, "val": v})

    def chosen_at(self, s, b, v):
        return any_of(self.Quorum, lambda q: all_of(q, lambda a: self.voted_for(s, a, b, v)))

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

    def chosen_has(self, s, v):
        """``v \\in chosen``."""
        return any_of(self.Ballot, lambda b: self.chosen_at(s, b, v))

    # -- the actions -----------------------------------------------------------------
    @action(a=Acceptor, b=lambda self: self.Ballot)
    def IncreaseMaxBal(self, s, t, a, b):
        t.maxBal[a] = b
        return b > s.maxBal[a]

    @action(a=Acceptor, b=lambda self: self.Ballot, v=Value)
    def VoteFor(self, s, t, a, b, v):
        t.votes[a] = s.votes[a].with_({"bal": b, "val": v})
        t.maxBal[a] = b
        return ((s.maxBal[a] <= b)
                & all_of(self.Value, lambda w: not_(self.voted_for(s, a, b, w)))
                & all_of([c for c in self.Acceptor if c != a], lambda c: all_of(
                    [w for w in self.Value if w != v],
                    lambda w: not_(self.voted_for(s, c, b, w))))
                & self.enabled_safe(s, b, v))

    def enabled_safe(self, s, b, v):
        """``\\E Q \\in Quorum: ShowsSafeAt(Q, b, v)``."""
        return any_of(self.Quorum, lambda q: self.shows_safe_at(s, q, b, v))

    # -- Inv == TypeOK /\ VotesSafe /\ OneValuePerBallot -----------------------------
    @invariant
    def TypeOK(self, s):
        return all_of(self.Acceptor, lambda a: (s.maxBal[a] >= -1)
                      & (s.maxBal[a] <= self.MaxBallot))

    @invariant
    def VotesSafe(self, s):
        return all_of(self.Acceptor, lambda a: all_of(self.Ballot, lambda b: all_of(
            self.Value, lambda v: implies(self.voted_for(s, a, b, v), self.safe_at(s, b, v)))))

    @invariant
    def OneValuePerBallot(self, s):
        return all_of(self.Ballot, lambda b: all_of(self.Value, lambda v1: all_of(
            [w for w in self.Value if w != v1], lambda v2: not_(
                any_of(self.Acceptor, lambda a1: self.voted_for(s, a1, b, v1))
                & any_of(self.Acceptor, lambda a2: self.voted_for(s, a2, b, v2))))))

    # -- PROPERTY ConsensusSpecBar: [][C!Next]_chosen -------------------------------------
    @action_property
    def ConsensusNext(self, s, t):
        unchanged = all_of(self.Value, lambda v: self.chosen_has(s, v) == self.chosen_has(t, v))
        empty = all_of(self.Value, lambda v: not_(self.chosen_has(s, v)))
        singleton = any_of(self.Value, lambda v: all_of(
            self.Value, lambda w: self.chosen_has(t, w) == (w == v)))
        return unchanged | (empty & singleton)


class MCVotingBug(MCVoting):
    """VoteFor without ``\\E Q \\in Quorum: ShowsSafeAt(Q, b, v)``: VotesSafe fails."""

    def enabled_safe(self, s, b, v):
        return True
