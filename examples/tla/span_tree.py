"""A rooted spanning tree by relaxing distances (tlaplus/Examples SpanningTree).

A port of ``specifications/SpanningTree/SpanTree.tla`` (Leslie Lamport) checked with
``SpanTree.cfg``: ``Nodes = {n1, ..., n5}``, ``Edges = {{n1, n2}, {n1, n3}, {n2, n3},
{n2, n4}, {n3, n4}, {n3, n5}, {n4, n5}}``, ``Root = n1``, ``MaxCardinality = 6``
(standing for infinity), ``CHECK_DEADLOCK FALSE``. Repeatedly, a node ``n`` with a
neighbour ``m`` such that ``dist[n] > dist[m] + 1`` lowers ``dist[n]`` to some ``d``
with ``dist[n] > d >= dist[m] + 1`` and makes ``m`` its parent (``mom[n]``). The
manifest gives 1,236 distinct states, 10,278 generated (with the initial state) and
depth 6; this port finds 1,236 states and 10,277 successors, as does an independent
breadth-first search written directly from the TLA+ (``tests/test_tla_models_3.py``),
but depth 4 (5 in TLC's numbering, which counts states): every node's distance is
final after at most one step per non-root node. The manifest's depth is most likely
from a run with several TLC workers, whose search is not strictly breadth-first.

Translation choices:

* ``Nodes`` is ``Ids(1, 5)`` (``n1`` is 1, the root); ``Edges`` is the constant
  ``Edges`` (pairs), ``Nbrs(n)`` a dependent parameter domain. ``mom`` is an array of
  ``Ref(Nodes)`` without a ``none`` value, ``dist`` of ``0..MaxCardinality``.
* ``Next == \\E n \\in Nodes: \\E m \\in Nbrs(n): dist[m] < 1 + dist[n] /\\ \\E d \\in
  (dist[m]+1) .. (dist[n]-1): ...`` is the action ``Next`` with parameters ``n``, ``m``
  and ``d``; ``d`` ranges over ``1..MaxCardinality-1`` (every value the state-dependent
  range can take) and the guard asks that it lies in ``(dist[m]+1) .. (dist[n]-1)``.
* ``ENABLED Next`` is :meth:`enabled`, the same guard under the same quantifiers.
* ``Spec``'s ``WF_vars(Next)`` is ``fair="weak-family"``: weak fairness of ``Next`` as
  one action (all its instances together), not of each instance.
* ``Safety == [](~ENABLED Next => PostCondition)`` (a ``PROPERTY`` of the cfg) is the
  invariant ``Safety``; ``Liveness == <>(~ENABLED Next)`` is a temporal property and is
  checked (``modelcheck check`` checks it: no state constraint, no symmetry).
* ``TypeOK`` holds by construction.

    modelcheck check examples/tla/span_tree.py                     # 1,236 states, Liveness holds
    modelcheck check examples/tla/span_tree.py:SpanTreeBugUnfair   # violates Liveness
    modelcheck check examples/tla/span_tree.py:SpanTreeBugNoMom    # violates Safety
"""

from __future__ import annotations

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Ref,
    Spec,
    action,
    all_of,
    any_of,
    eventually,
    implies,
    invariant,
    not_,
)

__all__ = ["SpanTree", "SpanTreeBugUnfair", "SpanTreeBugNoMom"]


def _nbrs(self, n):
    return self.nbrs(n)


class SpanTree(Spec):
    """SpanTree.tla with SpanTree.cfg (see the module docstring)."""

    check_deadlock = False  # CHECK_DEADLOCK FALSE: the algorithm terminates
    MaxCardinality = Const(6, min=5, doc="stands for infinity; at least Cardinality(Nodes)")
    Nodes = Ids(1, 5, doc="{n1, n2, n3, n4, n5}")
    Root = 1
    Edges = frozenset({(1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 5), (4, 5)})

    mom = Array(Nodes, Ref(Nodes, none=None))
    dist = Array(Nodes, Int(0, MaxCardinality))

    def nbrs(self, n):
        """``Nbrs(n) == {m \\in Nodes: {m, n} \\in Edges}``."""
        return [m for m in self.Nodes if (m, n) in self.Edges or (n, m) in self.Edges]

    def init_states(self):
        yield {"mom": {n: n for n in self.Nodes},
               "dist": {n: 0 if n == self.Root else self.MaxCardinality for n in self.Nodes}}

    def _can(self, s, n, m, d):
        return ((s.dist[m] < 1 + s.dist[n])
                & (s.dist[m] + 1 <= d) & (d <= s.dist[n] - 1))

    @action(n=Nodes, m=_nbrs, d=lambda self: range(1, self.MaxCardinality), fair="weak-family")
    def Next(self, s, t, n, m, d):
        t.dist[n] = d
        t.mom[n] = m
        return self._can(s, n, m, d)

    def enabled(self, s):
        """``ENABLED Next``."""
        return any_of(self.Nodes, lambda n: any_of(self.nbrs(n), lambda m: any_of(
            range(1, self.MaxCardinality), lambda d: self._can(s, n, m, d))))

    def post_condition(self, s):
        mx = self.MaxCardinality
        return all_of(self.Nodes, lambda n: (
            ((n == self.Root) & (s.dist[n] == 0) & (s.mom[n] == n))
            | ((s.dist[n] == mx) & (s.mom[n] == n)
               & all_of(self.nbrs(n), lambda m: s.dist[m] == mx))
            | ((s.dist[n] >= 1) & (s.dist[n] <= mx - 1)
               & any_of(self.nbrs(n), lambda m: s.mom[n] == m)
               & (s.dist[n] == s.dist[s.mom[n]] + 1))))

    @invariant
    def Safety(self, s):
        """``[](~ENABLED Next => PostCondition)``."""
        return implies(not_(self.enabled(s)), self.post_condition(s))

    @eventually
    def Liveness(self, s):
        """``<>(~ENABLED Next)``: the algorithm terminates."""
        return not_(self.enabled(s))


class SpanTreeBugUnfair(SpanTree):
    """``Spec`` without ``WF_vars(Next)``: a behaviour may stop before the algorithm
    has terminated, and ``Liveness`` fails (the initial state stutters forever)."""

    @action(n=SpanTree.Nodes, m=_nbrs, d=lambda self: range(1, self.MaxCardinality),
            fair=None)  # without fair=, the override would keep WF_vars(Next)
    def Next(self, s, t, n, m, d):
        t.dist[n] = d
        t.mom[n] = m
        return self._can(s, n, m, d)


class SpanTreeBugNoMom(SpanTree):
    """``Next`` lowers ``dist[n]`` but leaves ``mom[n]`` alone: when the algorithm has
    terminated a node has a distance but no parent, and ``Safety`` fails."""

    @action(n=SpanTree.Nodes, m=_nbrs, d=lambda self: range(1, self.MaxCardinality),
            fair="weak-family")
    def Next(self, s, t, n, m, d):
        t.dist[n] = d
        return self._can(s, n, m, d)
