"""Dijkstra's self-stabilizing token ring, EWD426 (TokenRing).

Source: tlaplus/Examples ``specifications/ewd426/TokenRing.tla`` (Markus Kuppe and
Murat Demirbas) with ``TokenRing.cfg``: ``N = 6``, ``M = 6``, ``SPECIFICATION Spec``,
``INVARIANT TypeOK``, ``PROPERTIES Stab``, no deadlock check (the cfg's ``ALIAS``
only renames trace values). The manifest gives 46,656 distinct states and TLC
depth 1 (our depth 0): ``Init`` is ``c \\in [Node -> 0..M-1]``, so every one of the
6^6 states is initial, and no step leads outside them.

Node 0 holds a token when ``c[0] = c[N-1]`` and passes it by incrementing ``c[0]``
modulo ``M`` (``CreateToken``); node ``i > 0`` holds one when ``c[i] # c[i-1]`` and
passes it by copying ``c[i-1]`` (``PassToken(i)``). From any state the ring
stabilizes to exactly one token: ``Stab == <>[]UniqueToken`` under
``WF_vars(Next)``.

Translation: ``c`` is an array over ``Node = 0..N-1`` of ``Int(0, M-1)``; ``Init`` is
``init_product(c=functions(Node, 0..M-1))``. ``CreateToken`` and ``PassToken(i)``
(``i \\in Node \\ {0}``, ``Ids(1, N-1)``) are the module's actions; ``Next`` is weakly
fair *as a whole* (``WF_vars(Next)``, not each action), which is the fairness group
``{"CreateToken | PassToken(i=*)": "weak"}``: ``WF_vars(CreateToken \\/ \\E i \\in Node
\\ {0}: PassToken(i))``, one condition of every instance of both.
``TypeOK`` holds by the type of ``c`` (kept as an invariant for its name). ``Stab``
is checked with ``@eventually_always`` and holds.

``TokenRingSmallM`` has ``M = N - 2`` (5 nodes, ``M = 3``), below the module's
``ASSUME N <= M + 1``: the ring may cycle forever with several tokens and ``Stab``
fails with a lasso.
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
    any_of,
    eventually_always,
    functions,
    init_product,
    invariant,
)

__all__ = ["TokenRing", "TokenRingSmallM"]


class TokenRing(Spec):
    """TokenRing.tla's ``Spec``: ``Init /\\ [][Next]_vars /\\ WF_vars(Next)``."""

    check_deadlock = False

    N = Const(6, min=1, doc="number of nodes")
    M = Const(6, min=1, doc="counter values 0..M-1")
    Node = Ids(0, N - 1)

    c = Array(Node, Int(0, M - 1))

    def init_states(self):
        return init_product(c=functions(self.Node, range(self.M)))

    #: ``WF_vars(Next)``, ``Next == CreateToken \/ \E i \in Node \ {0}: PassToken(i)``
    fairness = {"CreateToken | PassToken(i=*)": "weak"}

    @action
    def CreateToken(self, s, t):
        t.c[0] = (s.c[self.N - 1] + 1) % self.M
        return s.c[0] == s.c[self.N - 1]

    @action(i=Ids(1, N - 1))
    def PassToken(self, s, t, i):
        t.c[i] = s.c[i - 1]
        return s.c[i] != s.c[i - 1]

    @invariant
    def TypeOK(self, s):
        """``c \\in [Node -> 0..M-1]``: the type of ``c``."""
        return all_of(self.Node, lambda i: s.c[i] < self.M)

    def unique_token(self, s):
        """``UniqueToken``: ``c = c[0]`` before some ``i``, ``(c[0]-1) % M`` from ``i`` on."""
        n, m = self.N, self.M
        return any_of(range(n + 1), lambda i: all_of(range(i), lambda j: s.c[j] == s.c[0])
                      & all_of(range(i, n), lambda j: s.c[j] == (s.c[0] - 1) % m))

    @eventually_always
    def Stab(self, s):
        return self.unique_token(s)


class TokenRingSmallM(TokenRing):
    """Too few counter values (``N > M + 1``): the ring need not stabilize."""

    N = Const(5, min=1)
    M = Const(3, min=1)
