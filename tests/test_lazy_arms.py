"""TLA+'s IF evaluates only the arm it selects: ``where(c, a, choose(...))`` is an error
only in the states (rows) where ``c`` selects the CHOOSE and it finds no value.

Python computes both arms of ``where`` before the call; the undefined value of an arm
(a CHOOSE, or a ``max_of``/``min_of`` without default, that found nothing) is recorded
and ``where`` discharges it in the rows that select the other arm. The oracle below
evaluates random expressions one state at a time with plain Python meanings of IF
(lazy), CHOOSE and the folds (an exception when undefined), and the batch and the
one-state evaluators must agree with it: the same value where it is defined, an error
exactly in the states where it is not.

Writes to the next state pin the undefined values met before them (a helper may write
``t.y = v + 1`` and return its CHOOSE ``v`` as a temporary): such an arm stays an error
in every row, as on main, never a successor computed from no value; a second oracle
test generates such helpers anywhere and checks that no written value is computed
from a discharged row. The reference count that tells a temporary arm from a held one
is calibrated at import; where it is ambiguous, every arm written directly is eager.

What stays eager (documented in :func:`modelcheck.expr.where`, pinned at the end): a
CHOOSE result first stored in a name, or transformed (``choose(...) + 1``), before it
reaches an arm, unless the arm is given as a function (``lambda: choose(...) + 1``);
``&`` and ``|`` evaluate both sides, and so does ``implies`` unless its right side is a
function (TLC does not evaluate ``FALSE /\\ e``'s ``e``; in a guard that makes no
difference, since a disabled state is never in error); quantifiers evaluate their
predicate at every member (TLC stops at the first witness).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
from bruteforce import random_walk
from evalcheck import assert_batch_matches_scalar
from expr_specs import LazyArms
from hypothesis import example, given, settings
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Explorer,
    Ids,
    Int,
    SetOf,
    Spec,
    SpecEvaluationError,
    action,
    all_of,
    any_of,
    choose,
    explore,
    implies,
    invariant,
    max_of,
    min_of,
    not_,
    sum_of,
    where,
)
from modelcheck import expr as mexpr
from modelcheck.expr import collect_undefined
from modelcheck.kernel import Kernel
from modelcheck.views import NextView, StateView

# ------------------------------------------------------------------ whole runs
# TLC 2.20 on this module (-deadlock; SPECIFICATION Spec, INVARIANT Bounded, PROPERTY
# MaxNeverFalls): "684 states generated, 146 distinct states found", depth 10 (TLC
# counts the initial state among the generated ones, and its depth is ours + 1).
# Today's main stops with "max_of found no value".
LAZY_ARMS_TLA = r"""
---- MODULE LazyArms ----
EXTENDS Naturals, FiniteSets
Top == 3
VARIABLES x, y, S
Max(T) == CHOOSE m \in T : \A w \in T : w <= m
Min(T) == CHOOSE m \in T : \A w \in T : m <= w
Init == x = 0 /\ y = 0 /\ S = {}
Tick == /\ y <= x
        /\ x' = IF x = Top THEN 0 ELSE x + 1
        /\ y' = IF x = Top THEN 0 ELSE CHOOSE v \in 0..Top : v > x
        /\ S' = S
Add(v) == /\ v \notin S
          /\ S' = S \cup {v}
          /\ y' = IF S = {} THEN v ELSE Max(S)
          /\ x' = x
Drop(v) == /\ v \in S
           /\ S' = S \ {v}
           /\ y' = IF S \ {v} = {} THEN 0 ELSE IF x = 0 THEN Min(S \ {v}) ELSE Max(S \ {v})
           /\ x' = x
Next == Tick \/ \E v \in 0..Top : Add(v) \/ Drop(v)
Bounded == (IF S = {} THEN 0 ELSE Max(S)) <= Top
MaxNeverFalls == [][(IF S' = {} THEN 0 ELSE Max(S')) >= (IF S = {} THEN 0 ELSE Max(S))
                    \/ S' \subseteq S]_<<x, y, S>>
Spec == Init /\ [][Next]_<<x, y, S>>
====
"""


def test_untaken_arms_are_not_errors_and_give_tlcs_counts() -> None:
    r = explore(LazyArms())
    assert r.status == "ok"
    assert (r.distinct_states, r.depth, r.generated_states) == (146, 10 - 1, 684 - 1)


@settings(max_examples=30, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=20), min_size=1, max_size=6))
def test_lazy_arm_evaluators_agree(walks: list[list[int]]) -> None:
    k = Kernel(LazyArms(), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


class TakenArm(Spec):
    """``y`` takes the first value above ``x``, unless ``x = 0``: the CHOOSE is the
    selected arm when ``x = Top``, where it finds nothing (TLC: "CHOOSE found no
    value"); in an invariant, the same."""

    check_deadlock = False
    x = Int(0, 3)
    y = Int(0, 3)
    in_invariant = False

    @action
    def Step(self, s, t):
        t.x = where(s.x == 3, 3, s.x + 1)
        if not self.in_invariant:
            t.y = where(s.x == 0, 0, choose(range(4), lambda v: v > s.x))
        return s.y <= 3

    @invariant
    def Above(self, s):
        if not self.in_invariant:
            return True
        return where(s.x == 0, 0, choose(range(4), lambda v: v > s.x)) >= s.x


@pytest.mark.parametrize("in_invariant", [False, True])
def test_a_taken_arm_without_value_is_an_error_naming_the_state(in_invariant: bool) -> None:
    spec = TakenArm()
    spec.in_invariant = in_invariant
    with pytest.raises(SpecEvaluationError) as e:
        explore(spec)
    msg = str(e.value)
    assert "CHOOSE found no value" in msg and "test_lazy_arms.py:" in msg
    assert "x=3" in msg
    assert ("invariant Above" if in_invariant else "action Step is enabled") in msg


# ------------------------------------------------- random expressions: the oracle
class Undef(Exception):
    """The plain-Python oracle's undefined value."""


VARS = ("v0", "v1")
SETS = ("S0", "S1")
TOP = 3  # variables range over 0..TOP, sets over subsets of 0..TOP
CMP = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne}


def _ints(total: bool, depth: int, member: bool, w: bool = False
          ) -> st.SearchStrategy[Any]:
    """Integer expressions. ``total``: no CHOOSE or fold without default except as a
    ``where`` arm (the only place where modelcheck is lazy; elsewhere it is eager, so
    such a value must be evaluated in TLA+ too: not under an arm)."""
    leaves: list[st.SearchStrategy[Any]] = [
        st.tuples(st.just("var"), st.sampled_from(VARS)),
        st.tuples(st.just("const"), st.integers(-1, TOP + 1)),
    ]
    if member:
        leaves.append(st.just(("mem",)))
    leaf = st.one_of(leaves)
    if depth <= 0:
        return leaf
    sub = _ints(total, depth - 1, member, w)
    fn = _ints(total, depth - 1, True)
    pred = _bools(True, depth - 1, True)
    dom = st.one_of(st.tuples(st.just("range"), st.integers(1, TOP + 1)),
                    st.tuples(st.just("set"), st.sampled_from(SETS)))
    options = [
        leaf,
        st.tuples(st.just("add"), sub, sub),
        # under an arm (total), an arm's undefined value would not reach this where
        # directly but through an enclosing expression: only total arms there
        st.tuples(st.just("where"), _bools(total, depth - 1, member, w),
                  sub if total else _arm(depth - 1, member, w),
                  sub if total else _arm(depth - 1, member, w)),
        st.tuples(st.just("sum"), st.sampled_from(SETS), fn),
        st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS), fn,
                  st.integers(-1, TOP)),
    ]
    if w and not member:
        # a helper that writes its value (plus 0: a new object) to the next state and
        # returns it; never in a function evaluated at set members
        options.append(st.tuples(st.just("write"), sub))
    if not total:
        options += [
            st.tuples(st.just("choose"), dom, pred),
            st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS), fn,
                      st.none()),
        ]
    return st.one_of(options)


def _arm(depth: int, member: bool, w: bool = False) -> st.SearchStrategy[Any]:
    """A ``where`` arm: a CHOOSE or a fold without default written as the arm, a nested
    ``where`` of such (with a total condition), or a total expression."""
    dom = st.one_of(st.tuples(st.just("range"), st.integers(1, TOP + 1)),
                    st.tuples(st.just("set"), st.sampled_from(SETS)))
    undefined = [
        st.tuples(st.just("choose"), dom, _bools(True, max(depth - 1, 0), True)),
        st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS),
                  _ints(True, max(depth - 1, 0), True), st.none()),
    ]
    options = [
        _ints(True, depth, member, w),
        # an arm given as a function: anything inside it
        st.tuples(st.just("lazy"), _ints(False, max(depth - 1, 0), member, w)),
        *undefined,
    ]
    if w and not member:  # an arm its helper wrote to the next state (in every row)
        options.append(st.tuples(st.just("write"), st.one_of(
            *undefined, _ints(False, max(depth - 1, 0), member, w))))
    if depth > 0:
        options.append(st.tuples(st.just("where"), _bools(True, depth - 1, member, w),
                                 _arm(depth - 1, member, w), _arm(depth - 1, member, w)))
    return st.one_of(options)


def _bools(total: bool, depth: int, member: bool, w: bool = False
           ) -> st.SearchStrategy[Any]:
    sub = _ints(total, max(depth - 1, 0), member, w)
    cmp = st.tuples(st.just("cmp"), st.sampled_from(sorted(CMP)), sub, sub)
    if depth <= 0:
        return cmp
    b = _bools(total, depth - 1, member, w)
    pred = _bools(total, depth - 1, True)
    return st.one_of(
        cmp,
        st.tuples(st.sampled_from(["and", "or", "implies", "implies_lazy"]), b, b),
        st.tuples(st.just("not"), b),
        st.tuples(st.sampled_from(["any", "all"]), st.sampled_from(SETS), pred),
    )


def oracle(node: Any, env: dict[str, Any], eager: bool = False) -> Any:
    """One state, plain Python: IF evaluates one arm; CHOOSE and the folds without
    default raise :class:`Undef` when they find nothing; quantifiers and folds evaluate
    their function at the set's members only (at every member). ``eager``: both arms
    of every IF and both sides of every implication too (today's main, and an upper
    bound for the rows in error)."""
    op = node[0]
    if op == "var":
        return env[node[1]]
    if op == "const":
        return node[1]
    if op == "mem":
        return env["m"]
    if op == "add":
        return oracle(node[1], env, eager) + oracle(node[2], env, eager)
    if op == "where":
        if eager:  # both arms: main's meaning
            c, x, y = (oracle(node[k], env, eager) for k in (1, 2, 3))
            return x if c else y
        return oracle(node[2] if oracle(node[1], env, eager) else node[3], env, eager)
    if op == "write":
        return oracle(node[1], env, eager)
    if op == "lazy":
        return oracle(node[1], env, eager)
    if op == "choose":
        dom = range(node[1][1]) if node[1][0] == "range" else sorted(env[node[1][1]])
        for x in dom:
            if oracle(node[2], {**env, "m": x}, eager):
                return x
        raise Undef
    if op in ("max", "min", "sum"):
        vals = [oracle(node[2], {**env, "m": x}, eager) for x in sorted(env[node[1]])]
        if op == "sum":
            return sum(vals)
        if not vals:
            if node[3] is None:
                raise Undef
            return node[3]
        return max(vals) if op == "max" else min(vals)
    if op == "cmp":
        return CMP[node[1]](oracle(node[2], env, eager), oracle(node[3], env, eager))
    if op in ("and", "or"):
        a, b = oracle(node[1], env, eager), oracle(node[2], env, eager)  # both sides, as modelcheck
        return (a and b) if op == "and" else (a or b)
    if op == "implies":
        a, b = oracle(node[1], env, eager), oracle(node[2], env, eager)
        return not a or b
    if op == "implies_lazy":  # the right side given as a function: TLA+'s =>
        if eager:
            a, b = oracle(node[1], env, eager), oracle(node[2], env, eager)
            return not a or b
        return not oracle(node[1], env, eager) or oracle(node[2], env, eager)
    if op == "not":
        return not oracle(node[1], env, eager)
    if op in ("any", "all"):
        oks = [oracle(node[2], {**env, "m": x}, eager) for x in sorted(env[node[1]])]
        return any(oks) if op == "any" else all(oks)
    raise AssertionError(node)


def evaluate(node: Any, env: dict[str, Any]) -> Any:
    """The same expression with modelcheck's helpers (columns or numpy scalars)."""
    op = node[0]
    if op == "var":
        return env[node[1]]
    if op == "const":
        return node[1]
    if op == "mem":
        return env["m"]
    if op == "add":
        return evaluate(node[1], env) + evaluate(node[2], env)
    if op == "where":
        return where(evaluate(node[1], env), evaluate(node[2], env), evaluate(node[3], env))
    if op == "lazy":
        return lambda: evaluate(node[1], env)
    if op == "write":
        v = evaluate(node[1], env)
        written = v + 0  # computed from the value, a new object: only it is written
        env["t"].y = written
        env["writes"].append((node, written))
        return v
    if op == "choose":
        dom = range(node[1][1]) if node[1][0] == "range" else env[node[1][1]]
        return choose(dom, lambda x: evaluate(node[2], {**env, "m": x}))
    if op in ("max", "min"):
        fold = max_of if op == "max" else min_of
        return fold(env[node[1]], lambda x: evaluate(node[2], {**env, "m": x}),
                    default=node[3])
    if op == "sum":
        return sum_of(env[node[1]], lambda x: evaluate(node[2], {**env, "m": x}))
    if op == "cmp":
        return CMP[node[1]](evaluate(node[2], env), evaluate(node[3], env))
    if op == "and":
        return evaluate(node[1], env) & evaluate(node[2], env)
    if op == "or":
        return evaluate(node[1], env) | evaluate(node[2], env)
    if op == "implies":
        return implies(evaluate(node[1], env), evaluate(node[2], env))
    if op == "implies_lazy":
        return implies(evaluate(node[1], env), lambda: evaluate(node[2], env))
    if op == "not":
        return not_(evaluate(node[1], env))
    if op in ("any", "all"):
        quant = any_of if op == "any" else all_of
        return quant(env[node[1]], lambda x: evaluate(node[2], {**env, "m": x}))
    raise AssertionError(node)


def _collected(node: Any, env: dict[str, Any], n: int) -> tuple[Any, np.ndarray]:
    """``node``'s value and the rows where an undefined value reaches it."""
    with collect_undefined() as undefined:
        value = evaluate(node, env)
    bad = np.zeros(n, dtype=bool)
    for mask, _where, _message in undefined:
        bad |= np.broadcast_to(mask, (n,))
    return value, bad


_SET_TYPE = SetOf(Int(0, TOP)).bound({})


def _members(code: int) -> frozenset[int]:
    return frozenset(v for v in range(TOP + 1) if code >> v & 1)


@settings(max_examples=400, deadline=None)
@given(expr=st.one_of(_ints(False, 3, False), _bools(False, 3, False)),
       rows=st.lists(st.tuples(st.integers(0, TOP), st.integers(0, TOP),
                               st.integers(0, 2 ** (TOP + 1) - 1),
                               st.integers(0, 2 ** (TOP + 1) - 1)),
                     min_size=1, max_size=8))
def test_arms_are_evaluated_only_where_selected(expr: Any, rows: list[tuple[int, ...]]
                                                ) -> None:
    want: list[Any] = []
    for v0, v1, s0, s1 in rows:
        try:
            want.append(oracle(expr, {"v0": v0, "v1": v1, "S0": _members(s0),
                                      "S1": _members(s1)}))
        except Undef:
            want.append(Undef)
    undefined = [w is Undef for w in want]
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows)]
    n = len(rows)
    batch, bad = _collected(expr, {"v0": cols[0], "v1": cols[1],
                                   "S0": _SET_TYPE.view([cols[2]]),
                                   "S1": _SET_TYPE.view([cols[3]])}, n)
    assert bad.tolist() == undefined
    got = np.broadcast_to(np.asarray(batch), (n,)).tolist()
    assert [g for g, u in zip(got, undefined) if not u] == \
        [w for w in want if w is not Undef]
    for j, (v0, v1, s0, s1) in enumerate(rows):  # one state at a time: the same
        one, one_bad = _collected(expr, {"v0": np.int64(v0), "v1": np.int64(v1),
                                         "S0": _SET_TYPE.view([np.int64(s0)]),
                                         "S1": _SET_TYPE.view([np.int64(s1)])}, 1)
        assert bool(one_bad[0]) == undefined[j]
        if not undefined[j]:
            assert np.asarray(one).item() == want[j]


_LAYOUT = Kernel(LazyArms(), symmetry=False).layout  # a next state to write ``y`` of


def _env(v0: Any, v1: Any, s0: Any, s1: Any, n: int | None) -> dict[str, Any]:
    return {"v0": v0, "v1": v1, "S0": _SET_TYPE.view([s0]), "S1": _SET_TYPE.view([s1]),
            "t": NextView(StateView(_LAYOUT, lambda i: np.int64(0), n)), "writes": []}


def _row_oracle(node: Any, row: tuple[int, ...], eager: bool = False) -> Any:
    v0, v1, s0, s1 = row
    try:
        return oracle(node, {"v0": v0, "v1": v1, "S0": _members(s0), "S1": _members(s1)},
                      eager)
    except Undef:
        return Undef


_V0_IS_3 = ("cmp", "==", ("var", "v0"), ("const", TOP))
_ABOVE_V0 = ("choose", ("range", TOP + 1), ("cmp", "<", ("var", "v0"), ("mem",)))


@settings(max_examples=400, deadline=None)
@example(expr=("where", _V0_IS_3, ("const", 0), ("write", _ABOVE_V0)),
         rows=[(TOP, 0, 0, 0), (1, 0, 0, 0)])
@example(expr=("where", _V0_IS_3, ("const", 0), ("lazy", ("add", ("write", _ABOVE_V0),
                                                          ("const", 1)))),
         rows=[(TOP, 0, 0, 0), (1, 0, 0, 0)])
@given(expr=st.one_of(_ints(False, 3, False, True), _bools(False, 3, False, True)),
       rows=st.lists(st.tuples(st.integers(0, TOP), st.integers(0, TOP),
                               st.integers(0, 2 ** (TOP + 1) - 1),
                               st.integers(0, 2 ** (TOP + 1) - 1)),
                     min_size=1, max_size=8))
def test_a_written_value_is_never_computed_from_a_discharged_arm(
        expr: Any, rows: list[tuple[int, ...]]) -> None:
    """Expressions whose helpers write to the next state (``t.y = v + 0``, then return
    ``v``), anywhere Python evaluates them: as an arm (the helper's CHOOSE), inside an
    arm given as a function, in an arm not selected. Every row where the expression
    (lazily) or a written value has no value is in error; no row is in error that
    today's main (every arm evaluated) would not stop on; elsewhere the expression and
    every written value are the oracle's."""
    n = len(rows)
    cols = [np.array(c, dtype=np.int64) for c in zip(*rows)]
    env = _env(*cols, n)
    batch, bad = _collected(expr, env, n)
    want = [_row_oracle(expr, r) for r in rows]
    must = [w is Undef for w in want]
    for node, _written in env["writes"]:
        for j, r in enumerate(rows):
            must[j] |= _row_oracle(node[1], r) is Undef
    may = [_row_oracle(expr, r, eager=True) is Undef for r in rows]
    assert [m and not b for m, b in zip(must, bad)] == [False] * n  # never a dropped error
    assert [b and not m for m, b in zip(may, bad)] == [False] * n  # never more than main
    got = np.broadcast_to(np.asarray(batch), (n,)).tolist()
    for j, r in enumerate(rows):
        if bad[j]:
            continue
        assert got[j] == want[j]
        for node, written in env["writes"]:
            assert np.broadcast_to(np.asarray(written), (n,))[j] == _row_oracle(node[1], r)
    for j, r in enumerate(rows):  # one state at a time: the same verdict
        one_env = _env(*(np.int64(c) for c in r), None)
        one, one_bad = _collected(expr, one_env, 1)
        assert bool(one_bad[0]) == bool(bad[j])
        if not bad[j]:
            assert np.asarray(one).item() == want[j]
            for node, written in one_env["writes"]:
                assert np.asarray(written).item() == _row_oracle(node[1], r)


# ------------------------------------------------------- what stays eager (pinned)
def _undefined_rows(fn: Any) -> list[bool]:
    with collect_undefined() as undefined:
        fn()
    bad = np.zeros(3, dtype=bool)
    for mask, _where, _message in undefined:
        bad |= np.broadcast_to(mask, (3,))
    return bad.tolist()


def test_a_named_arm_stays_eager_in_a_run() -> None:
    with pytest.raises(SpecEvaluationError, match="action Tick is enabled in the state "
                                                  r"\[x=3, .*CHOOSE found no value"):
        explore(LazyArms(eager=True))


def test_a_named_or_transformed_arm_stays_eager() -> None:
    x = np.array([0, 1, 3])

    def pick() -> Any:
        return choose(range(4), lambda v: v > x)  # none when x = 3

    assert _undefined_rows(lambda: where(x == 3, 0, pick())) == [False, False, False]
    assert _undefined_rows(lambda: where(x != 3, pick(), 0)) == [False, False, False]

    def named() -> Any:
        above = pick()
        return where(x == 3, 0, above)  # TLA+'s LET would still be lazy

    assert _undefined_rows(named) == [False, False, True]
    assert _undefined_rows(lambda: where(x == 3, 0, pick() + 1)) == [False, False, True]
    # FALSE /\ e, FALSE => e: TLC does not evaluate e, modelcheck does (in a guard this
    # is harmless: the rows where the left side is false are disabled)
    assert _undefined_rows(lambda: (x != 3) & (pick() > 0)) == [False, False, True]
    assert _undefined_rows(lambda: implies(x != 3, pick() > 0)) == [False, False, True]
    # given as functions, they are lazy again
    assert _undefined_rows(lambda: where(x == 3, 0, lambda: pick() + 1)) == [False] * 3
    assert _undefined_rows(lambda: implies(x != 3, lambda: pick() > 0)) == [False] * 3
    assert _undefined_rows(lambda: where(x != 3, lambda: pick() + 1, 0)) == [False] * 3
    assert _undefined_rows(lambda: where(x == 3, lambda: pick() + 1, 0)) == [False, False, True]


# ------------------------------------- writes to the next state pin undefined values
class WritingHelper(Spec):
    """``y`` is one above the first value above ``x``, set by a helper that returns that
    value as a temporary: ``t.x = where(s.x == 3, 0, self.pick(s, t))``. At ``x = 3`` the
    CHOOSE finds nothing, the ``where`` does not select it, but ``t.y`` was computed from
    it: an error (what main gives), never a successor with a made-up ``y``. ``mode``
    says how the helper writes (``t.y = v + 1``, ``t.f[v] = 1``) and how it is called
    (an arm, inside a branch, an arm given as a function, ``implies``'s right side)."""

    check_deadlock = False
    x = Int(0, 3)
    y = Int(0, 4)
    Vals = Ids(0, 3)
    f = Array(Vals, Int(0, 1))
    mode = "attr"

    def pick(self, s: Any, t: Any) -> Any:
        v = choose(range(4), lambda v: v > s.x)  # none when x = 3
        if self.mode == "index":
            t.f[v] = 1
        else:
            t.y = v + 1
        return v

    @action
    def Step(self, s, t):
        if self.mode == "thunk":
            t.x = where(s.x == 3, 0, lambda: self.pick(s, t))
        elif self.mode == "implies":
            t.x = where(s.x == 3, 0, s.x + 1)
            return implies(s.x != 3, lambda: self.pick(s, t) > 0)
        else:
            t.x = where(s.x == 3, 0, self.pick(s, t))
        return s.x <= 3


class WritingHelperInBranch(WritingHelper):
    """The same inside a branch of the action."""

    @action
    def Step(self, s, t):
        with t.branch("up", s.x >= 0):
            t.x = where(s.x == 3, 0, self.pick(s, t))
        return s.x <= 3


MODES = ["attr", "index", "branch", "thunk", "implies"]


@pytest.mark.parametrize("mode", MODES)
def test_a_value_written_to_the_next_state_keeps_its_undefined_rows(mode: str) -> None:
    spec = WritingHelperInBranch() if mode == "branch" else WritingHelper()
    spec.mode = mode
    with pytest.raises(SpecEvaluationError) as e:
        explore(spec)
    msg = str(e.value)
    assert "CHOOSE found no value" in msg and "x=3" in msg, msg
    k = Kernel(spec, symmetry=False)  # the one-state evaluator too
    x3 = k.layout.cells_from_values({"x": 3, "y": 0, "f": {i: 0 for i in range(4)}})
    with pytest.raises(SpecEvaluationError, match="CHOOSE found no value"):
        k.successors(x3)


class WritesAround(Spec):
    """Writes before a CHOOSE, or a CHOOSE discharged before the write, leave it lazy:
    the common forms ``t.y = where(c, a, choose(...))``, a helper that writes and then
    returns its CHOOSE, and a guard ``where(c, g, lambda: ...)`` after the writes.
    ``total`` writes the first value above ``x`` without CHOOSE (the oracle's run)."""

    check_deadlock = False
    x = Int(0, 3)
    y = Int(0, 4)
    total = False

    def above(self, s: Any) -> Any:
        if self.total:
            return where(s.x < 3, s.x + 1, 0)
        return choose(range(4), lambda v: v > s.x)

    def pick(self, s: Any, t: Any) -> Any:
        t.y = s.x  # written before the CHOOSE exists: nothing to pin
        return self.above(s)

    @action
    def Step(self, s, t):
        t.x = where(s.x == 3, 0, self.pick(s, t))
        t.y = where(s.x == 3, s.y, self.above(s))
        return where(s.x == 3, s.y <= 4, lambda: self.above(s) > 0)


def test_writes_around_a_discharged_arm_leave_it_lazy() -> None:
    lazy, total = WritesAround(), WritesAround()
    total.total = True
    r, want = explore(lazy), explore(total)
    assert r.status == want.status == "ok"
    assert (r.distinct_states, r.generated_states, r.depth) == \
        (want.distinct_states, want.generated_states, want.depth)
    k = Kernel(lazy, symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, list(range(12)))])


class WritingFamily(Spec):
    """The same through an action parameter: on the family evaluator (every instance at
    once) the helper's write ``t.f[p] = ...`` is a scatter."""

    check_deadlock = False
    x = Int(0, 3)
    Vals = Ids(0, 3)
    f = Array(Vals, Int(0, 1))

    def pick_for(self, s: Any, t: Any, p: Any) -> Any:
        v = choose(range(4), lambda v: v > s.x)  # none when x = 3
        t.f[p] = where(v > p, 1, 0)
        return v

    @action(p=Vals)
    def Set(self, s, t, p):
        t.x = where(s.x == 3, 0, self.pick_for(s, t, p))
        return s.x <= 3


def test_a_scatter_of_the_family_evaluator_keeps_its_undefined_rows() -> None:
    ex = Explorer(WritingFamily())
    ex.kernel.family_rows, ex.kernel.family_min = 1 << 20, 2  # every family
    with pytest.raises(SpecEvaluationError, match="CHOOSE found no value"):
        ex.run()


# ---------------------------------- the reference-count calibration (fail-safe)
def _pick3() -> Any:
    return choose(range(4), lambda v: v > np.array([0, 1, 3]))  # none in the last row


class _Holder:
    v: Any = None


def test_a_named_held_or_closed_over_arm_is_never_discharged() -> None:
    assert mexpr._TEMP_REFS is not None  # CPython 3.11: calibrated, lazy
    x = np.array([0, 1, 3])
    assert _undefined_rows(lambda: where(x == 3, 0, _pick3())) == [False] * 3

    def named() -> Any:
        v = _pick3()
        return where(x == 3, 0, v)

    def in_list() -> Any:
        held = [_pick3()]
        return where(x == 3, 0, held[0])

    def in_tuple() -> Any:
        held = (_pick3(),)
        return where(x != 3, held[0], 0)

    def in_attribute() -> Any:
        box = _Holder()
        box.v = _pick3()
        return where(x == 3, 0, box.v)

    def closed_over() -> Any:
        v = _pick3()

        def inner() -> Any:
            return where(x == 3, 0, v)

        return inner() + (lambda: v)()

    def global_held() -> Any:
        global _HELD
        _HELD = _pick3()
        return where(x == 3, 0, _HELD)

    for fn in (named, in_list, in_tuple, in_attribute, closed_over, global_held):
        assert _undefined_rows(fn) == [False, False, True], fn.__name__


_HELD: Any = None


def test_an_ambiguous_reference_count_makes_every_arm_eager(monkeypatch: Any) -> None:
    monkeypatch.setattr(mexpr.sys, "getrefcount", lambda x: 7)  # cannot tell a name
    assert mexpr._temp_refs() is None
    monkeypatch.delattr(mexpr.sys, "getrefcount")  # not CPython
    assert mexpr._temp_refs() is None
    monkeypatch.setattr(mexpr, "_TEMP_REFS", None)
    x = np.array([0, 1, 3])
    assert _undefined_rows(lambda: where(x == 3, 0, _pick3())) == [False, False, True]
    # an arm given as a function needs no reference count: still lazy
    assert _undefined_rows(lambda: where(x == 3, 0, lambda: _pick3())) == [False] * 3
