"""Small specs exercising the expression language (one construct family each); the
expression tests check them against the brute-force oracle and both evaluators."""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    BOOLEAN,
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    Record,
    SetOf,
    Spec,
    action,
    action_property,
    all_of,
    any_of,
    choose,
    count_of,
    excluding,
    functions,
    has,
    implies,
    init_product,
    invariant,
    max_of,
    min_of,
    not_,
    sum_of,
    where,
    with_,
    without,
)


class Tokens(Spec):
    """Processes pass tokens; an election picks the first process holding the most
    (CHOOSE over a maximum); a bump feeds the first process holding the fewest."""

    check_deadlock = False

    N = Const(3, min=2)
    Max = Const(2, min=1)
    Procs = Ids(1, N)

    val = Array(Procs, Int(0, Max))
    leader = Int(0, N)
    top = Int(0, Max)
    total = Int(0, N * Max)

    @action(p=Procs, q=Procs)
    def Give(self, s, t, p, q):
        t.val[p] = s.val[p] - 1
        t.val[q] = s.val[q] + 1
        # p != q is a Python bool: not_ and implies take it as well as numpy bools
        return not_(p == q) & implies(p > q, s.val[q] == 0) & (s.val[p] > 0) & \
            (s.val[q] < self.Max)

    @action
    def Elect(self, s, t):
        m = max_of(self.Procs, lambda p: s.val[p])
        t.leader = choose(self.Procs, lambda p: s.val[p] == m)
        t.top = m
        t.total = sum_of(self.Procs, lambda p: s.val[p])
        return m > 0

    @action
    def Bump(self, s, t):
        low = min_of(self.Procs, lambda p: s.val[p])
        p = choose(self.Procs, lambda p: s.val[p] == low)
        t.val[p] = low + 1
        return (low < self.Max) & (count_of(self.Procs, lambda q: s.val[q] == self.Max) < 2)

    @invariant
    def LeaderHoldsTop(self, s):
        return implies(s.leader != 0, s.top <= self.Max)

    @action_property
    def ElectionKeepsTokens(self, s, t):
        return implies(t.leader != s.leader,
                       sum_of(self.Procs, lambda p: t.val[p]) ==
                       sum_of(self.Procs, lambda p: s.val[p]))


class ChooseNone(Spec):
    """``Pick`` needs a value above ``x``: CHOOSE finds none when ``x = Top``, where the
    guard ``x < Top`` (``Guarded``) disables the action, or not (``Unguarded``)."""

    check_deadlock = False
    Top = Const(3)
    guarded = Const(True)
    x = Int(0, Top)

    @action
    def Pick(self, s, t):
        t.x = choose(range(0, self.Top + 1), lambda v: v > s.x)
        return (s.x < self.Top) | (not self.guarded)


class Speed(IntEnum):
    SLOW = 1
    FAST = 2


class Gossip(Spec):
    """Every node starts up or down, every way (``up \\in [Nodes -> BOOLEAN]``), and
    ``rumour \\in BOOLEAN``; an up node tells another (``q \\in Nodes \\ {p}``), in
    steps of ``Step`` (an enum-valued constant)."""

    check_deadlock = False
    N = Const(3, min=2)
    Step = Const(Speed.FAST)
    Nodes = Ids(1, N)

    up = Array(Nodes, Bool())
    heard = Array(Nodes, Int(0, 2))
    rumour = Bool()

    def init_states(self):
        return init_product(up=functions(self.Nodes, BOOLEAN), rumour=BOOLEAN)

    @action(p=Nodes, q=lambda self, p: excluding(self.Nodes, p))
    def Tell(self, s, t, p, q):
        t.heard[q] = min_of([s.heard[q] + int(self.Step), 2])
        return s.up[p] & s.rumour & (s.heard[q] < 2)

    @action(p=Nodes)
    def Toggle(self, s, t, p):
        t.up[p] = not_(s.up[p])
        return s.heard[p] == 0


class Branching(Spec):
    """Each step of a process either increments, doubles, jumps past the next two values
    (a CHOOSE that has no value near the top, where the branch is disabled) or resets:
    one action, four branches (TLA+'s disjuncts), a shared step counter."""

    check_deadlock = False
    Max = Const(6)
    Procs = Ids(1, 2)
    x = Array(Procs, Int(0, Max))
    steps = Int(0, 3)

    @action(p=Procs)
    def Step(self, s, t, p):
        t.steps = s.steps + 1
        with t.branch("inc", s.x[p] < self.Max):
            t.x[p] = s.x[p] + 1
        with t.branch("double", (s.x[p] > 0) & (2 * s.x[p] <= self.Max)):
            t.x[p] = 2 * s.x[p]
        with t.branch("jump", s.x[p] + 2 < self.Max):
            t.x[p] = choose(range(self.Max + 1), lambda v: v > s.x[p] + 2)
        if p == 1:  # a branch only some parameters have
            with t.branch("reset"):
                t.x[p] = 0
                t.steps = 0
        return s.steps < 3

    @invariant
    def Small(self, s):
        return s.x[1] + s.x[2] <= self.Max + 3


class BranchingByHand(Spec):
    """:class:`Branching` written the old way: one action per branch."""

    check_deadlock = False
    Max = Const(6)
    Procs = Ids(1, 2)
    x = Array(Procs, Int(0, Max))
    steps = Int(0, 3)

    @action(p=Procs)
    def Inc(self, s, t, p):
        t.steps = s.steps + 1
        t.x[p] = s.x[p] + 1
        return (s.steps < 3) & (s.x[p] < self.Max)

    @action(p=Procs)
    def Double(self, s, t, p):
        t.steps = s.steps + 1
        t.x[p] = 2 * s.x[p]
        return (s.steps < 3) & (s.x[p] > 0) & (2 * s.x[p] <= self.Max)

    @action(p=Procs)
    def Jump(self, s, t, p):
        t.steps = s.steps + 1
        t.x[p] = s.x[p] + 3
        return (s.steps < 3) & (s.x[p] + 3 <= self.Max)

    @action(p=Ids(1, 1))
    def Reset(self, s, t, p):
        t.x[p] = 0
        t.steps = 0
        return s.steps < 3


class Votes(Spec):
    """Voters vote for 1 or 2; quantifiers and folds range over the set of voters who
    voted (``s.voted``, a ``SetOf``): a tally, the highest voter, a retraction of the
    first voter for 2 (a CHOOSE over the set)."""

    check_deadlock = False
    N = Const(3, min=1)
    Voters = Ids(1, N)
    voted = SetOf(Voters)
    choice = Array(Voters, Int(0, 2))
    winner = Int(0, 2)
    top = Int(0, N)

    @action(v=Voters, c=Ids(1, 2))
    def Vote(self, s, t, v, c):
        t.voted = with_(s.voted, v)
        t.choice[v] = c
        return ~has(s.voted, v) & (s.winner == 0)

    @action
    def Tally(self, s, t):
        ones = count_of(s.voted, lambda v: s.choice[v] == 1)
        twos = sum_of(s.voted, lambda v: where(s.choice[v] == 2, 1, 0))
        t.winner = where(ones >= twos, 1, 2)
        t.top = max_of(s.voted, lambda v: v, default=0)
        return any_of(s.voted, lambda v: s.choice[v] != 0) & (s.winner == 0)

    @action
    def Retract(self, s, t):
        v = choose(s.voted, lambda v: s.choice[v] == 2)
        t.voted = without(s.voted, v)
        t.choice[v] = 0
        return any_of(s.voted, lambda v: s.choice[v] == 2) & (s.winner == 0)

    @invariant
    def VotersChose(self, s):
        return all_of(s.voted, lambda v: s.choice[v] != 0) & \
            (min_of(s.voted, lambda v: v, default=1) >= 1)


class VotesByHand(Votes):
    """:class:`Votes` with every quantifier spelled over ``Voters`` and ``has``."""

    @action
    def Tally(self, s, t):
        mine = [(v, has(s.voted, v)) for v in self.Voters]
        ones = sum(where(m & (s.choice[v] == 1), 1, 0) for v, m in mine)
        twos = sum(where(m & (s.choice[v] == 2), 1, 0) for v, m in mine)
        top = 0
        for v, m in mine:
            top = where(m, v, top)
        t.winner = where(ones >= twos, 1, 2)
        t.top = top
        return any_of(self.Voters, lambda v: has(s.voted, v) & (s.choice[v] != 0)) & \
            (s.winner == 0)

    @action
    def Retract(self, s, t):
        v = 0
        for u in reversed(self.Voters):
            v = where(has(s.voted, u) & (s.choice[u] == 2), u, v)
        t.voted = without(s.voted, v)
        t.choice[v] = 0
        return any_of(self.Voters, lambda u: has(s.voted, u) & (s.choice[u] == 2)) & \
            (s.winner == 0)


class Rotate(Spec):
    """Whole-array assignment: rotate a ring of values, copy it, reset it, and transpose
    a small matrix (``[i \\in S |-> e]``)."""

    check_deadlock = False
    N = Const(3, min=2)
    Ring = Ids(1, N)
    a = Array(Ring, Int(0, 2))
    b = Array(Ring, Int(0, 2))
    m = Array(Ids(1, 2), Array(Ids(1, 2), Int(0, 1)))

    @action(i=Ring)
    def Bump(self, s, t, i):
        t.a[i] = s.a[i] + 1
        return s.a[i] < 2

    @action
    def Shift(self, s, t):
        t.a = lambda i: s.a[i % self.N + 1]
        return s.a[1] != s.a[2]

    @action
    def Copy(self, s, t):
        t.b = s.a
        return s.b[1] != s.a[1]

    @action
    def Reset(self, s, t):
        t.a = {i: 0 for i in self.Ring}
        t.m[1] = {1: s.m[2][1], 2: 1}
        return s.a[self.N] == 2

    @action
    def Transpose(self, s, t):
        t.m = lambda i: lambda j: s.m[j][i]
        return s.m[1][2] != s.m[2][1]


class RotateByHand(Rotate):
    """:class:`Rotate` with every cell assigned one by one."""

    @action
    def Shift(self, s, t):
        for i in self.Ring:
            t.a[i] = s.a[i % self.N + 1]
        return s.a[1] != s.a[2]

    @action
    def Copy(self, s, t):
        for i in self.Ring:
            t.b[i] = s.a[i]
        return s.b[1] != s.a[1]

    @action
    def Reset(self, s, t):
        for i in self.Ring:
            t.a[i] = 0
        t.m[1][1] = s.m[2][1]
        t.m[1][2] = 1
        return s.a[self.N] == 2

    @action
    def Transpose(self, s, t):
        for i in (1, 2):
            for j in (1, 2):
                t.m[i][j] = s.m[j][i]
        return s.m[1][2] != s.m[2][1]


class Kind(IntEnum):
    REQ = 0
    ACK = 1


class Inbox(Spec):
    """Quantifiers, folds and CHOOSE over sets of records, enums and ints (element
    values of the generic ``SetOf``): senders post requests and acks as records; a
    receiver takes the first request (a CHOOSE over the set), notes its sender and
    the sum of the pending senders; the kinds ever seen form a set of enum values."""

    check_deadlock = False
    N = Const(2, min=1)
    Procs = Ids(1, N)
    msgs = SetOf(Record(src=Procs, kind=Enum(Kind)))
    kinds = SetOf(Enum(Kind))
    sums = SetOf(Int(0, 7))
    last = Int(0, N)

    @action(p=Procs, k=[Kind.REQ, Kind.ACK])
    def Send(self, s, t, p, k):
        t.msgs = s.msgs.with_({"src": p, "kind": k})
        t.kinds = with_(s.kinds, k)
        return ~s.msgs.has({"src": p, "kind": k})

    @action
    def Receive(self, s, t):
        m = choose(s.msgs, lambda m: m.kind == Kind.REQ)
        t.msgs = without(s.msgs, m)
        t.last = m.src
        t.sums = s.sums.with_(sum_of(s.msgs, lambda m: m.src) % 8)
        return any_of(s.msgs, lambda m: m.kind == Kind.REQ)

    @action
    def Forget(self, s, t):
        k = min_of(s.kinds, lambda k: k, default=0)
        t.kinds = s.kinds.without(k)
        t.sums = s.sums - s.sums.without(max_of(s.sums, lambda x: x, default=0)).without(0)
        return (count_of(s.msgs, lambda m: m.kind == k) == 0) & ~s.kinds.is_empty()

    @invariant
    def KindsSeen(self, s):
        return all_of(s.msgs, lambda m: s.kinds.has(m.kind))

    @invariant
    def LastWasARequester(self, s):
        return (s.last == 0) | any_of(self.Procs, lambda p: p == s.last)


class LazyArms(Spec):
    """TLA+'s IF evaluates only the arm it selects: every ``where`` here has an arm with
    no value in some states (a CHOOSE or a fold without default over an empty set) that
    it does not select there. ``Tick`` steps ``x`` round ``0..Top`` and sets ``y`` to the
    first value above ``x`` (none when ``x = Top``); ``Add`` and ``Drop`` change the set
    ``S`` and set ``y`` to a maximum or minimum of it (none when it is empty); the
    invariant reads the maximum of ``S``, the action property its maximum before and
    after. ``eager=True`` stores the CHOOSE of ``Tick`` in a name before the ``where``,
    which TLA+ (a LET) would still evaluate lazily and modelcheck evaluates eagerly (the
    documented difference)."""

    check_deadlock = False
    Top = Const(3)
    eager = Const(False)
    x = Int(0, Top)
    y = Int(0, Top)
    S = SetOf(Int(0, Top))

    @action
    def Tick(self, s, t):
        t.x = where(s.x == self.Top, 0, s.x + 1)
        if self.eager:
            above = choose(range(self.Top + 1), lambda v: v > s.x)
            t.y = where(s.x == self.Top, 0, above)
        else:
            t.y = where(s.x == self.Top, 0, choose(range(self.Top + 1), lambda v: v > s.x))
        return s.y <= s.x

    @action(v=lambda self: range(self.Top + 1))
    def Add(self, s, t, v):
        t.S = s.S.with_(v)
        t.y = where(s.S.is_empty(), v, max_of(s.S))
        return ~s.S.has(v)

    @action(v=lambda self: range(self.Top + 1))
    def Drop(self, s, t, v):
        rest = s.S.without(v)
        t.S = rest
        t.y = where(rest.is_empty(), 0, where(s.x == 0, min_of(rest), max_of(rest)))
        return s.S.has(v)

    @invariant
    def Bounded(self, s):
        return where(s.S.is_empty(), 0, max_of(s.S)) <= self.Top

    @action_property
    def MaxNeverFalls(self, s, t):
        """Unless ``S`` shrinks, its maximum does not fall."""
        return (where(t.S.is_empty(), 0, max_of(t.S)) >= where(s.S.is_empty(), 0, max_of(s.S))
                ) | (t.S <= s.S)
