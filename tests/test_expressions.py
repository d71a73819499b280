"""The expression language: CHOOSE, folds, quantifiers, booleans. Each construct is
checked on both evaluators (hypothesis), against the brute-force oracle, by replaying
its traces, and for the messages of its mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import assert_replays, brute_force, random_walk
from evalcheck import assert_batch_matches_scalar
from expr_specs import ChooseNone, Tokens
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    SpecEvaluationError,
    choose,
    explore,
    implies,
    max_of,
    min_of,
    not_,
    sum_of,
    where,
)
from modelcheck.kernel import Kernel

SPECS = [Tokens(), Tokens(N=4, Max=1)]


@settings(max_examples=40, deadline=None)
@given(spec_index=st.integers(0, len(SPECS) - 1),
       walks=st.lists(st.lists(st.integers(0, 1000), max_size=30), min_size=1, max_size=6))
def test_batch_and_scalar_agree(spec_index: int, walks: list[list[int]]) -> None:
    k = Kernel(SPECS[spec_index], symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_counts_match_the_oracle(spec) -> None:
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec)


def test_choose_is_first_in_domain_order() -> None:
    assert choose(range(1, 6), lambda x: x % 2 == 0) == 2
    col = np.array([1, 2, 0])
    assert choose(range(4), lambda v: v > col).tolist() == [2, 3, 1]
    assert choose([3, 1, 2], lambda v: v < 3) == 1  # the domain's order, not the smallest


def test_folds_on_columns() -> None:
    a, b = np.array([1, 5]), np.array([4, 2])
    cols = {1: a, 2: b}
    assert max_of([1, 2], lambda i: cols[i]).tolist() == [4, 5]
    assert min_of([1, 2], lambda i: cols[i]).tolist() == [1, 2]
    assert sum_of([1, 2], lambda i: cols[i]).tolist() == [5, 7]
    assert sum_of([], lambda i: 1) == 0
    assert max_of([], lambda i: 1, default=7) == 7


def test_choose_without_value_is_an_error_only_when_enabled() -> None:
    r = explore(ChooseNone())
    assert r.status == "ok" and r.distinct_states == 4
    with pytest.raises(SpecEvaluationError) as e:
        explore(ChooseNone(guarded=False))
    msg = str(e.value)
    assert "CHOOSE found no value" in msg and "expr_specs.py:" in msg and "x=3" in msg
    assert "action Pick is enabled" in msg


def test_booleans_agree_on_python_and_numpy() -> None:
    for a in (True, False, np.True_, np.False_):
        for b in (True, False):
            assert bool(implies(a, b)) == ((not a) or b)
        assert bool(not_(a)) == (not a)
    assert not_(np.array([True, False])).tolist() == [False, True]


@pytest.mark.parametrize("expr", [lambda: where(~(1 == 1), 1, 2), lambda: implies(~True, True),
                                  lambda: not_(-1)])
def test_tilde_on_a_python_bool_is_named(expr) -> None:
    with pytest.raises(SpecEvaluationError) as e:
        expr()
    assert "`~` on a Python bool" in str(e.value) and "not_(p == q)" in str(e.value)


def test_tilde_on_a_python_bool_in_a_guard_is_named(runner) -> None:
    from modelcheck.cli import cli
    r = runner.invoke(cli, ["check", "tests/bad_specs/tilde_on_param.py", "-q"])
    assert r.exit_code == 2, r.output
    assert "tilde_on_param.py:" in r.output and "guard of action Move" in r.output
    assert "`~` on a Python bool" in r.output and "and/or/not" not in r.output


def test_traces_replay() -> None:
    from modelcheck.spec import invariant as inv

    class Bad(Tokens):
        @inv
        def NoElection(self, s):
            return s.leader == 0

    r = explore(Bad())
    assert r.status == "violation"
    assert r.violation.trace[-1].action == "Elect"
    assert_replays(Bad(), r.violation.trace)
