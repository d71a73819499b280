"""TLA+'s IF evaluates only the arm it selects: ``where(c, a, choose(...))`` is an error
only in the states (rows) where ``c`` selects the CHOOSE and it finds no value.

Python computes both arms of ``where`` before the call; the undefined value of an arm
(a CHOOSE, or a ``max_of``/``min_of`` without default, that found nothing) is recorded
and ``where`` discharges it in the rows that select the other arm. The oracle below
evaluates random expressions one state at a time with plain Python meanings of IF
(lazy), CHOOSE and the folds (an exception when undefined), and the batch and the
one-state evaluators must agree with it: the same value where it is defined, an error
exactly in the states where it is not.

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
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
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
from modelcheck.expr import collect_undefined
from modelcheck.kernel import Kernel

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


def _ints(total: bool, depth: int, member: bool) -> st.SearchStrategy[Any]:
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
    sub = _ints(total, depth - 1, member)
    fn = _ints(total, depth - 1, True)
    pred = _bools(True, depth - 1, True)
    dom = st.one_of(st.tuples(st.just("range"), st.integers(1, TOP + 1)),
                    st.tuples(st.just("set"), st.sampled_from(SETS)))
    options = [
        leaf,
        st.tuples(st.just("add"), sub, sub),
        # under an arm (total), an arm's undefined value would not reach this where
        # directly but through an enclosing expression: only total arms there
        st.tuples(st.just("where"), _bools(total, depth - 1, member),
                  sub if total else _arm(depth - 1, member),
                  sub if total else _arm(depth - 1, member)),
        st.tuples(st.just("sum"), st.sampled_from(SETS), fn),
        st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS), fn,
                  st.integers(-1, TOP)),
    ]
    if not total:
        options += [
            st.tuples(st.just("choose"), dom, pred),
            st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS), fn,
                      st.none()),
        ]
    return st.one_of(options)


def _arm(depth: int, member: bool) -> st.SearchStrategy[Any]:
    """A ``where`` arm: a CHOOSE or a fold without default written as the arm, a nested
    ``where`` of such (with a total condition), or a total expression."""
    dom = st.one_of(st.tuples(st.just("range"), st.integers(1, TOP + 1)),
                    st.tuples(st.just("set"), st.sampled_from(SETS)))
    options = [
        _ints(True, depth, member),
        # an arm given as a function: anything inside it
        st.tuples(st.just("lazy"), _ints(False, max(depth - 1, 0), member)),
        st.tuples(st.just("choose"), dom, _bools(True, max(depth - 1, 0), True)),
        st.tuples(st.sampled_from(["max", "min"]), st.sampled_from(SETS),
                  _ints(True, max(depth - 1, 0), True), st.none()),
    ]
    if depth > 0:
        options.append(st.tuples(st.just("where"), _bools(True, depth - 1, member),
                                 _arm(depth - 1, member), _arm(depth - 1, member)))
    return st.one_of(options)


def _bools(total: bool, depth: int, member: bool) -> st.SearchStrategy[Any]:
    sub = _ints(total, max(depth - 1, 0), member)
    cmp = st.tuples(st.just("cmp"), st.sampled_from(sorted(CMP)), sub, sub)
    if depth <= 0:
        return cmp
    b = _bools(total, depth - 1, member)
    pred = _bools(total, depth - 1, True)
    return st.one_of(
        cmp,
        st.tuples(st.sampled_from(["and", "or", "implies", "implies_lazy"]), b, b),
        st.tuples(st.just("not"), b),
        st.tuples(st.sampled_from(["any", "all"]), st.sampled_from(SETS), pred),
    )


def oracle(node: Any, env: dict[str, Any]) -> Any:
    """One state, plain Python: IF evaluates one arm; CHOOSE and the folds without
    default raise :class:`Undef` when they find nothing; quantifiers and folds evaluate
    their function at the set's members only (at every member)."""
    op = node[0]
    if op == "var":
        return env[node[1]]
    if op == "const":
        return node[1]
    if op == "mem":
        return env["m"]
    if op == "add":
        return oracle(node[1], env) + oracle(node[2], env)
    if op == "where":
        return oracle(node[2] if oracle(node[1], env) else node[3], env)
    if op == "lazy":
        return oracle(node[1], env)
    if op == "choose":
        dom = range(node[1][1]) if node[1][0] == "range" else sorted(env[node[1][1]])
        for x in dom:
            if oracle(node[2], {**env, "m": x}):
                return x
        raise Undef
    if op in ("max", "min", "sum"):
        vals = [oracle(node[2], {**env, "m": x}) for x in sorted(env[node[1]])]
        if op == "sum":
            return sum(vals)
        if not vals:
            if node[3] is None:
                raise Undef
            return node[3]
        return max(vals) if op == "max" else min(vals)
    if op == "cmp":
        return CMP[node[1]](oracle(node[2], env), oracle(node[3], env))
    if op in ("and", "or"):
        a, b = oracle(node[1], env), oracle(node[2], env)  # both sides, as modelcheck
        return (a and b) if op == "and" else (a or b)
    if op == "implies":
        a, b = oracle(node[1], env), oracle(node[2], env)
        return not a or b
    if op == "implies_lazy":  # the right side given as a function: TLA+'s =>
        return not oracle(node[1], env) or oracle(node[2], env)
    if op == "not":
        return not oracle(node[1], env)
    if op in ("any", "all"):
        oks = [oracle(node[2], {**env, "m": x}) for x in sorted(env[node[1]])]
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
