"""State constraints (``@constraint``) with TLC's ``CONSTRAINT`` semantics, pinned by hand.

TLC checks a successor outside the constraints against the invariants but never
stores, counts or expands it; an initial state outside them is not counted; a
state whose only successors are outside them is not a deadlock. Every count
below is worked out by hand in the comment beside it (``depth`` is in steps: the
longest shortest path; TLC prints the number of states on it, ``depth + 1``).
"""

from __future__ import annotations

import json
import textwrap

import pytest
from bruteforce import brute_force_check

from modelcheck import Const, Int, Spec, action, action_property, constraint, explore, invariant
from modelcheck.cli import cli


class Minimal(Spec):
    """``x' = x + 1`` while ``x < 3``, from ``x = 0``; CONSTRAINT ``x <= Bound``."""

    Bound = Const(1)
    Start = Const(0)
    x = Int(0, 3)

    def init_states(self):
        yield {"x": self.Start}

    @action
    def Next(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @constraint
    def Bounded(self, s):
        return s.x <= self.Bound


class MinimalBelowBound(Minimal):
    """Minimal with the invariant ``x <= Bound``: only successors outside the
    constraint can violate it."""

    @invariant
    def BelowBound(self, s):
        return s.x <= self.Bound


def test_minimal_constrained_counts() -> None:
    # x = 0 and x = 1 are stored; x = 2 is outside the constraint: generated (the
    # transition 1 -> 2 fires) but neither stored nor expanded. TLC: 2 distinct
    # states, depth 2 (states), i.e. 1 step.
    r = explore(Minimal())
    assert r.status == "ok"
    assert (r.distinct_states, r.depth, r.generated_states) == (2, 1, 2)
    (cov,) = r.coverage
    assert (cov.fired, cov.new_states) == (2, 1)
    assert [(lv.depth, lv.frontier, lv.new) for lv in r.levels] == [(0, 1, 1), (1, 1, 0)]


@pytest.mark.parametrize("bound, distinct, depth", [(0, 1, 0), (1, 2, 1), (2, 3, 2)])
def test_the_constraint_bounds_the_graph(bound: int, distinct: int, depth: int) -> None:
    # x = 0..bound are stored (bound + 1 states, bound steps deep); x = bound + 1
    # is generated and dropped, so it does not deadlock-check x = bound
    r = explore(Minimal(Bound=bound))
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        ("ok", distinct, depth, bound + 1)


def test_every_initial_state_outside_the_constraints() -> None:
    # x = 2 > Bound: the only initial state is dropped, nothing is counted or expanded
    r = explore(Minimal(Start=2))
    assert (r.status, r.distinct_states, r.generated_states, r.depth) == ("ok", 0, 0, 0)


def test_an_initial_state_outside_the_constraints_is_checked_against_the_invariants() -> None:
    r = explore(MinimalBelowBound(Start=2))
    assert r.status == "violation" and r.distinct_states == 0
    v = r.violation
    assert (v.property, v.kind) == ("BelowBound", "invariant")
    assert [s.state for s in v.trace] == [{"x": 2}]


def test_successors_outside_the_constraints_are_not_a_deadlock() -> None:
    # deadlock checking is on (the default); x = Bound has one enabled action,
    # into x = Bound + 1 outside the constraint: not a deadlock
    assert Minimal.check_deadlock
    assert explore(Minimal()).status == "ok"
    # where no action is enabled it still is one: x = 3, reached when Bound = 3
    r = explore(Minimal(Bound=3))
    assert (r.status, r.distinct_states, r.depth) == ("deadlock", 4, 3)
    assert r.violation.kind == "deadlock"
    assert [s.state["x"] for s in r.violation.trace] == [0, 1, 2, 3]


@pytest.mark.parametrize("bound", [0, 1, 2])
def test_invariant_violated_only_outside_the_constraints(bound: int) -> None:
    # stored: x = 0..bound, all satisfy x <= bound; the successor x = bound + 1 is
    # outside the constraint and violates it: reported with the trace to its
    # parent x = bound plus that successor (bound + 2 states); the level that found
    # it is finished first (nothing new), so bound + 1 states, depth bound
    r = explore(MinimalBelowBound(Bound=bound))
    assert r.status == "violation"
    assert (r.distinct_states, r.depth) == (bound + 1, bound)
    v = r.violation
    assert (v.property, v.kind) == ("BelowBound", "invariant")
    assert [s.state["x"] for s in v.trace] == list(range(bound + 2))
    assert [s.action for s in v.trace] == [None] + ["Next"] * (bound + 1)


class Race(Spec):
    """One level with several findings: which one the level rule reports.

    Initial states ``(x, y) = (0, 0)`` and, with ``Stuck``, ``(0, 1)``. ``Inc`` is
    enabled only when ``y = 0``: ``(0, 1)`` is a deadlock. ``(1, 0)`` is outside
    ``x <= 0`` and violates the invariant ``x <= 0``; ``Inc`` also violates the
    action property ``Still`` (``x' = x``).
    """

    check_deadlock = True
    Stuck = Const(True)
    WithInvariant = Const(True)
    x = Int(0, 3)
    y = Int(0, 1)

    def init_states(self):
        yield {"x": 0, "y": 0}
        if self.Stuck:
            yield {"x": 0, "y": 1}

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return (s.y == 0) & (s.x < 3)

    @constraint
    def Zero(self, s):
        return s.x <= 0

    @invariant
    def StaysZero(self, s):
        return (s.x <= 0) if self.WithInvariant else (s.x >= 0)

    @action_property
    def Still(self, s, t):
        return t.x == s.x


def test_level_rule_deadlock_before_a_violation_outside_the_constraints() -> None:
    r = explore(Race())
    assert (r.status, r.distinct_states, r.depth) == ("deadlock", 2, 0)
    assert [s.state for s in r.violation.trace] == [{"x": 0, "y": 1}]


def test_level_rule_outside_invariant_before_action_property() -> None:
    r = explore(Race(Stuck=False))
    assert (r.status, r.distinct_states, r.depth) == ("violation", 1, 0)
    v = r.violation
    assert (v.property, v.kind) == ("StaysZero", "invariant")
    assert [s.state for s in v.trace] == [{"x": 0, "y": 0}, {"x": 1, "y": 0}]


def test_action_properties_are_checked_on_transitions_out_of_the_constraints() -> None:
    r = explore(Race(Stuck=False, WithInvariant=False))
    assert (r.status, r.distinct_states) == ("violation", 1)
    v = r.violation
    assert (v.property, v.kind) == ("Still", "action")
    assert [s.state["x"] for s in v.trace] == [0, 1]


@pytest.mark.parametrize("spec", [
    Minimal(), Minimal(Start=2), Minimal(Bound=3), MinimalBelowBound(Bound=2),
    MinimalBelowBound(Start=2), Race(), Race(Stuck=False),
    Race(Stuck=False, WithInvariant=False),
], ids=repr)
def test_the_oracle_agrees(spec) -> None:
    r = explore(spec)
    o = brute_force_check(spec)
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)
    if r.violation is not None:
        assert (r.violation.kind, len(r.violation.trace)) == (o.kind, len(o.trace))
        assert r.violation.property in o.names


# ------------------------------------------------------------------ the CLI
SPEC_FILE = textwrap.dedent('''
    """x counts up to 3; CONSTRAINT x <= Bound."""
    from modelcheck import Const, Int, Spec, action, constraint, invariant


    class Up(Spec):
        Bound = Const(1)
        x = Int(0, 3)

        @action
        def Next(self, s, t):
            t.x = s.x + 1
            return s.x < 3

        @constraint
        def Bounded(self, s):
            return s.x <= self.Bound


    class UpBelowBound(Up):
        @invariant
        def BelowBound(self, s):
            return s.x <= self.Bound
''')


@pytest.fixture
def spec_file(tmp_path) -> str:
    p = tmp_path / "up.py"
    p.write_text(SPEC_FILE)
    return str(p)


def _check(runner, *args: str) -> tuple[int, dict]:
    r = runner.invoke(cli, ["check", *args, "--format", "json", "-q"])
    return r.exit_code, json.loads(r.stdout)


def test_cli_constrained_counts(runner, spec_file: str) -> None:
    code, d = _check(runner, f"{spec_file}:Up")
    assert code == 0
    assert (d["status"], d["distinct_states"], d["depth"], d["generated_states"]) == \
        ("ok", 2, 1, 2)
    code, d = _check(runner, f"{spec_file}:Up", "--const", "Bound=2")
    assert (code, d["distinct_states"], d["depth"]) == (0, 3, 2)


def test_cli_violation_outside_the_constraints(runner, spec_file: str) -> None:
    code, d = _check(runner, f"{spec_file}:UpBelowBound")
    assert code == 1
    assert (d["status"], d["distinct_states"]) == ("violation", 2)
    v = d["violation"]
    assert (v["property"], v["kind"], v["trace_length"]) == ("BelowBound", "invariant", 3)
    assert [s["state"]["x"] for s in v["trace"]] == [0, 1, 2]


def test_cli_text_report(runner, spec_file: str) -> None:
    r = runner.invoke(cli, ["check", f"{spec_file}:Up", "-q"])
    assert r.exit_code == 0
    assert "2 distinct states" in r.output
