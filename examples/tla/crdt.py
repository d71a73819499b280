"""A grow-only counter CRDT kept finite by reduction (tlaplus/Examples FiniteMonotonic).

A port of ``specifications/FiniteMonotonic/CRDT.tla`` (Andrew Helwer, Stephan Merz,
Markus Kuppe) checked with ``MCCRDT.tla``/``MCCRDT.cfg``: nodes ``{n1, n2, n3}`` each
hold a vector ``counter[n]`` of what they know of every node's count; a node
increments its own entry (``Increment``) or sends its vector to another, which takes
the element-wise maximum (``Gossip``). The counters only grow; the model keeps them
finite with the *finite monotonic* technique: ``Next <- ReductionNext``, which also
offers each step composed (TLC's ``\\cdot``) with ``Reduction``: subtract the smallest
entry of the whole matrix from every entry. ``CONSTRAINT Constraint`` bounds the rest
(``counter[n][n] <= 3``).

The manifest gives 25,000 distinct states, 1,350,001 generated (with the initial state)
and depth 16 (TLC counts states, we count steps); this port finds 25,000 states and
depth 15. Its 900,000 generated successors are TLC's count without the intermediate
states of the composed steps: TLC counts the state between ``A`` and ``Reduction`` as
generated too (450,000 composed steps: 900,000 + 450,000 + 1 = 1,350,001; the same
holds for ``replicated_log.py``).

Translation choices:

* ``Node`` is ``Ids(1, 3)``; ``counter \\in [Node -> [Node -> Nat]]`` is a nested array
  of ``0..4`` (a successor may reach 4 before the constraint cuts it; ``Safety`` keeps
  every entry at most its owner's own, which the constraint keeps at most 3).
* ``ReductionNext == \\E n, o \\in Node: Increment(n) \\/ Gossip(n, o) \\/ ...``: every
  action has both parameters, as there (``Increment(n)`` is one successor for each
  ``o``, so TLC generates it three times, and so do we). ``Gossip(n, n)`` changes
  nothing, as in TLA+.
* The action composition ``A \\cdot Reduction`` is ``A``'s next values, computed as
  expressions, then reduced (``Reduction`` is a function of the state).
* ``TypeOK`` holds by construction.

Temporal property (``PROPERTIES Convergence`` under ``SPECIFICATION FairSpec``), not
checked here: ``Convergence == []<>(\\A n, o \\in Node: counter[n] = counter[o])`` under
``\\A n, o: WF_vars(Gossip(n, o))`` and ``<>[][\\E n, o: Gossip(n, o)]_vars``. The cfg
checks it with ``CONSTRAINT Constraint``, which our liveness checker refuses, and the
second conjunct (eventually only gossip steps, a property of the behaviour rather than
a fairness condition) is not expressible as modelcheck fairness. ``Monotonicity`` is
left out by the cfg itself (the reduction breaks it).

    modelcheck check examples/tla/crdt.py:MCCRDT                      # 25,000 states
    modelcheck check examples/tla/crdt.py:MCCRDTBugGossipOverwrites   # violates Safety
"""

from __future__ import annotations

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Spec,
    action,
    all_of,
    constraint,
    invariant,
    min_of,
    where,
)

__all__ = ["CRDT", "MCCRDT", "MCCRDTBugGossipOverwrites"]


class CRDT(Spec):
    """CRDT.tla: ``Next == \\E n: Increment(n) \\/ \\E n, o: Gossip(n, o)``.

    Unbounded in TLA+; here every entry is at most ``Max``."""

    Max = Const(4, min=1, doc="largest counter value (unbounded in TLA+)")
    Node = Ids(1, 3, doc="{n1, n2, n3}")

    counter = Array(Node, Array(Node, Int(0, Max)))

    def increment(self, s, n):
        """``Increment(n)``'s next counter, as ``{(n, o): value}``."""
        return {(a, b): s.counter[a][b] + (1 if a == b == n else 0)
                for a in self.Node for b in self.Node}

    def gossip(self, s, n, o):
        """``Gossip(n, o)``'s next counter: ``o`` takes the maximum of both views."""
        return {(a, b): (where(s.counter[n][b] > s.counter[o][b], s.counter[n][b],
                               s.counter[o][b]) if a == o else s.counter[a][b])
                for a in self.Node for b in self.Node}

    @action(n=Node, o=Node)
    def Increment(self, s, t, n, o):
        t.counter[n][n] = s.counter[n][n] + 1
        return True

    @action(n=Node, o=Node)
    def Gossip(self, s, t, n, o):
        nxt = self.gossip(s, n, o)
        t.counter[o] = lambda b: nxt[(o, b)]
        return True

    @invariant
    def Safety(self, s):
        return all_of(self.Node, lambda n: all_of(
            self.Node, lambda o: s.counter[n][n] >= s.counter[o][n]))


class MCCRDT(CRDT):
    """MCCRDT.tla/.cfg: ``Next <- ReductionNext``, ``CONSTRAINT Constraint``."""

    def reduce(self, t, c):
        """``A \\cdot Reduction``: subtract ``Min({counter[n][o]: n, o \\in Node})`` of
        A's next state from every entry."""
        m = min_of([(a, b) for a in self.Node for b in self.Node], lambda ab: c[ab])
        for a, b in c:
            t.counter[a][b] = c[(a, b)] - m

    @action(n=CRDT.Node, o=CRDT.Node)
    def IncrementAndReduction(self, s, t, n, o):
        self.reduce(t, self.increment(s, n))
        return True

    @action(n=CRDT.Node, o=CRDT.Node)
    def GossipAndReduction(self, s, t, n, o):
        self.reduce(t, self.gossip(s, n, o))
        return True

    @constraint
    def Constraint(self, s):
        return all_of(self.Node, lambda n: s.counter[n][n] <= 3)


class MCCRDTBugGossipOverwrites(MCCRDT):
    """Gossip copies the sender's view instead of merging it: the receiver can forget
    its own increments (``Safety`` fails)."""

    def gossip(self, s, n, o):
        return {(a, b): s.counter[n][b] if a == o else s.counter[a][b]
                for a in self.Node for b in self.Node}
