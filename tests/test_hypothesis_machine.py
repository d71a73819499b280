"""Specs as hypothesis state machines (:mod:`modelcheck.testing`): hypothesis finds a
KRaft bug variant and shrinks it; a correct spec passes; the steps are behaviours."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from examples.counter import Counter
from modelcheck.testing import state_machine
from specs.kraft_broker import KRaftBroker, KRaftBrokerBugNoCatchUpCheck

SETTINGS = settings(max_examples=200, stateful_step_count=10, database=None, deadline=None,
                    derandomize=True, suppress_health_check=list(HealthCheck))


def _run(machine: type) -> None:
    case = machine.TestCase
    case.settings = SETTINGS
    case("runTest").runTest()


def test_hypothesis_finds_and_shrinks_a_bug_variant() -> None:
    with pytest.raises(AssertionError) as e:
        _run(state_machine(KRaftBrokerBugNoCatchUpCheck()))
    msg = str(e.value)
    assert "invariant CaughtUpBeforeUnfence is violated" in msg
    # hypothesis' shrinker brings it down to the shortest counterexample (5 states)
    assert "steps: Start(b=1), Register(b=1), CatchUp(b=1), Unfence(b=1))" in msg


def test_a_correct_spec_passes() -> None:
    machine = state_machine(KRaftBroker())
    case = machine.TestCase
    case.settings = settings(SETTINGS, max_examples=30)
    case("runTest").runTest()


def test_deadlock_and_chosen_invariants() -> None:
    with pytest.raises(AssertionError, match="deadlock: no action is enabled"):
        _run(state_machine(Counter(), check_deadlock=True))
    case = state_machine(KRaftBrokerBugNoCatchUpCheck(), invariants=["UniqueEpochs"]).TestCase
    case.settings = settings(SETTINGS, max_examples=30)
    case("runTest").runTest()


def test_rules_are_the_spec_actions() -> None:
    m = state_machine(KRaftBroker())
    for name in ("Start", "Register", "Unfence", "Stutter", "invariant_UniqueEpochs"):
        assert callable(getattr(m, name))
