"""Action constraints (``@action_constraint``) with TLC's ``ACTION_CONSTRAINT`` semantics.

TLC (``ModelChecker.doNext``) takes a successor into the model when
``isInModel(s') && isInActions(s, s')``. A successor of a transition that violates
an action constraint is checked against the invariants and the transition against
the action properties, but it is not enqueued (another transition may still reach
and enqueue it); deadlock is "no successor generated", so such a transition still
counts as enabled. TLC's simulator stops a walk at such a successor. Counts below are
worked out by hand in the comments (``depth`` is in steps); every explorer is also
compared with the brute-force oracle (:func:`bruteforce.brute_force_check`).
"""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from bruteforce import brute_force, brute_force_check, model_states
from hypothesis import HealthCheck, given, settings
from randspec import random_spec

from modelcheck import (
    Array,
    Const,
    Ids,
    Int,
    Spec,
    SpecDefinitionError,
    action,
    action_constraint,
    action_property,
    all_of,
    check_liveness,
    eventually,
    explore,
    implies,
    invariant,
    where,
)
from modelcheck.cli import cli
from modelcheck.graph import build_graph
from modelcheck.kernel import Kernel
from modelcheck.liveness import LivenessError
from modelcheck.simulate import WalkSet, run_walks, simulate
from modelcheck.store import key_columns


class Steps(Spec):
    """``x`` from 0 to 3 by ``Inc`` (+1) or ``Jump`` (+2); ACTION_CONSTRAINT: no jumps."""

    check_deadlock = False
    Bad = Const(-1)  # the value the invariant forbids (-1: none)
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @action
    def Jump(self, s, t):
        t.x = s.x + 2
        return s.x < 2

    @action_constraint
    def NoJump(self, s, t):
        return t.x - s.x <= 1

    @invariant
    def NotBad(self, s):
        return s.x != self.Bad


class StepsFree(Steps):
    """The same with an action constraint that always holds."""

    @action_constraint
    def NoJump(self, s, t):
        return s.x >= 0


def test_excluded_transitions_are_not_taken() -> None:
    # 0 -Inc-> 1 -Inc-> 2 -Inc-> 3: four states, three steps deep; the jumps 0 -> 2 and
    # 1 -> 3 fire (5 transitions: 0: 2, 1: 2, 2: 1) but store nothing: 2 and 3 are
    # stored through Inc, one level later than a jump would reach them
    r = explore(Steps())
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == ("ok", 4, 3, 5)
    assert [(c.name, c.fired, c.new_states) for c in r.coverage] == [("Inc", 3, 3),
                                                                       ("Jump", 2, 0)]
    # without it: 0 -> {1, 2}, then 3: two steps deep, the same transitions
    free = explore(StepsFree())
    assert (free.distinct_states, free.depth, free.generated_states) == (4, 2, 5)


def test_a_successor_out_of_the_model_is_checked_against_the_invariants() -> None:
    # level 0 expands 0: Inc -> 1 (stored), Jump -> 2 (excluded, violates NotBad):
    # reported through the jump, 2 states; the level is finished (0 and 1 counted)
    r = explore(Steps(Bad=2))
    assert (r.status, r.distinct_states, r.depth) == ("violation", 2, 1)
    v = r.violation
    assert (v.property, v.kind) == ("NotBad", "invariant")
    assert [(s.action, s.state["x"]) for s in v.trace] == [(None, 0), ("Jump", 2)]


class Ratchet(Spec):
    """``Flip`` toggles ``x``; ACTION_CONSTRAINT: ``x`` never goes down."""

    Prop = Const(False)
    x = Int(0, 1)

    @action
    def Flip(self, s, t):
        t.x = 1 - s.x
        return s.x >= 0

    @action_constraint
    def Up(self, s, t):
        return t.x >= s.x

    @action_property
    def NeverDown(self, s, t):
        return (t.x >= s.x) | (not self.Prop)


def test_an_excluded_transition_is_enabled_not_a_deadlock() -> None:
    # 0 -> 1 stored; 1 -> 0 fires but is excluded: 1 is not a deadlock
    assert Ratchet.check_deadlock
    r = explore(Ratchet())
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == ("ok", 2, 1, 2)


def test_action_properties_are_checked_on_excluded_transitions() -> None:
    r = explore(Ratchet(Prop=True))
    assert (r.status, r.violation.property, r.violation.kind) == ("violation", "NeverDown",
                                                                  "action")
    assert [s.state["x"] for s in r.violation.trace] == [0, 1, 0]


class Tokens(Spec):
    """Three interchangeable counters; ``Reset`` may not reset a full counter (a
    symmetric action constraint)."""

    check_deadlock = False
    symmetry = ("Procs",)
    Procs = Ids(1, 3)
    c = Array(Procs, Int(0, 2))

    @action(p=Procs)
    def Inc(self, s, t, p):
        t.c[p] = s.c[p] + 1
        return s.c[p] < 2

    @action(p=Procs)
    def Reset(self, s, t, p):
        t.c[p] = 0
        return s.c[p] > 0

    @action_constraint
    def KeepFull(self, s, t):
        return all_of(self.Procs, lambda p: implies(s.c[p] == 2, t.c[p] == 2))

    @invariant
    def NotAllFull(self, s):
        return ~all_of(self.Procs, lambda p: s.c[p] == 2)


SPECS = [Steps(), StepsFree(), Steps(Bad=2), Steps(Bad=3), Ratchet(), Ratchet(Prop=True),
         Tokens()]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_the_oracle_agrees(spec) -> None:
    for batch in (1, 1024):
        r = explore(spec, symmetry=False, batch_size=batch)
        _assert_agrees(spec, r, brute_force_check(spec))


def test_under_symmetry_the_oracle_agrees() -> None:
    spec = Tokens()
    r = explore(spec)
    o = brute_force_check(spec, symmetry_sets=spec.symmetry_sets())
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)
    assert (r.violation.property, len(r.violation.trace)) == ("NotAllFull", len(o.trace))
    assert r.symmetry == ["Procs"]


def _assert_agrees(spec, r, o) -> None:
    """Counts and verdict as the oracle's; a trace that replays, whose steps but the
    last are transitions of the model (states inside the state constraints, reached
    through transitions that satisfy the action constraints)."""
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)
    if o.status == "ok":
        assert r.violation is None
        return
    v = r.violation
    assert (v.kind, len(v.trace)) == (o.kind, len(o.trace)) and v.property in o.names
    k = Kernel(spec, symmetry=False)
    states = [spec.layout.cells_from_values(v.trace[0].state)]
    assert states[0] in k.initial_states()
    for step in v.trace[1:]:
        nxt = k.step(states[-1], spec.action_by_label(step.action, step.params))
        assert nxt == spec.layout.cells_from_values(step.state)
        states.append(nxt)
    for a, b in zip(states, states[1:-1]):
        assert k.satisfies_constraints(b) and k.satisfies_action_constraints(a, b)
    if v.kind == "invariant":
        assert v.property in {p.name for p in k.check_invariants(states[-1])}
    elif v.kind == "action":
        assert v.property in {p.name for p in k.check_properties(states[-2], states[-1])}
    else:
        assert not k.successors(states[-1])


# ------------------------------------------------------------------ random specs
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(action_constraints=True))
def test_random_specs_agree_with_the_oracle(cls) -> None:
    spec = cls()
    assert spec.action_constraints
    r = explore(spec, invariants=[], check_deadlock=False)
    _assert_agrees(spec, r, brute_force_check(spec, invariants=[], check_deadlock=False))
    assert (r.distinct_states, r.depth) == brute_force(spec)
    o = brute_force_check(spec)
    for batch in (1, 3, 1024):
        _assert_agrees(spec, explore(spec, batch_size=batch), o)
    names = [p.name for p in (*spec.invariants, *spec.properties) if p.name != "SumBounded"]
    _assert_agrees(spec, explore(spec, invariants=names),
                   brute_force_check(spec, invariants=names))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(action_constraints=True))
def test_random_walks_stay_in_the_model(cls) -> None:
    """Walks visit only states of the model and the states out of it where they stop;
    a violation they report is one the checker reports."""
    spec = cls()
    k = Kernel(spec, symmetry=False)
    tally = run_walks(k, WalkSet(5, 0, 1, 300), weights=np.ones(len(spec.actions)),
                      depth=30, record_states=True)
    stored, fringe = model_states(spec)
    allowed = {k.fingerprint(list(c)) for c in stored | fringe}
    assert set(tally.states.tolist()) <= allowed
    r = simulate(spec, seed=7, runs=300, depth=30, shrink_states=0)
    exhaustive = explore(spec)
    if r.violation is not None:
        assert exhaustive.status in ("violation", "deadlock")
        trace = [spec.layout.cells_from_values(s.state) for s in r.violation.trace]
        for a, b in zip(trace, trace[1:-1]):
            assert k.satisfies_constraints(b) and k.satisfies_action_constraints(a, b)


class Gate(Spec):
    """``x`` counts to 3; ACTION_CONSTRAINT: not from 1 to 2. The model is {0, 1}; 2 is
    reached (and checked) but 3 only by going on from it."""

    check_deadlock = False
    Bad = Const(-1)
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @action_constraint
    def NotOneToTwo(self, s, t):
        return ~((s.x == 1) & (t.x == 2))

    @invariant
    def NotBad(self, s):
        return s.x != self.Bad


def test_a_walk_stops_at_an_excluded_transition() -> None:
    r = simulate(Gate(), seed=1, runs=50, depth=10)
    assert r.status == "ok" and r.distinct_states == 3  # 0, 1, 2: never 3
    assert r.simulation["walk_ends"]["constraint"] == 50
    k = Kernel(Gate(), symmetry=False)
    tally = run_walks(k, WalkSet(1, 0, 1, 50), weights=np.ones(1), depth=10,
                      record_states=True)
    assert sorted(tally.states.tolist()) == sorted(k.fingerprint([x]) for x in (0, 1, 2))
    # the excluded successor is checked: found by a walk, as by the checker
    r = simulate(Gate(Bad=2), seed=1, runs=5, depth=10)
    assert r.violation is not None and [s.state["x"] for s in r.violation.trace] == [0, 1, 2]
    assert explore(Gate(Bad=2)).violation.trace == r.violation.trace
    assert simulate(Gate(Bad=3), seed=1, runs=50, depth=10).status == "ok"


# ------------------------------------------------------------------ action families
class Cells(Spec):
    """A family of 12 instances, evaluated in one call over (instances x states): each
    cell may be set once its left neighbour is; ACTION_CONSTRAINT: at most three set."""

    check_deadlock = False
    Cells = Ids(0, 11)
    on = Array(Cells, Int(0, 1))
    n = Int(0, 12)

    @action(i=Cells)
    def Set(self, s, t, i):
        t.on[i] = 1
        t.n = s.n + 1
        return (s.on[i] == 0) & ((i == 0) | (s.on[where(i > 0, i - 1, i)] == 1))

    @action_constraint
    def FewSet(self, s, t):
        return t.n <= 3


def test_the_family_evaluator_applies_the_action_constraints() -> None:
    spec = Cells()
    k_grid, k_one = Kernel(spec, symmetry=False), Kernel(spec, symmetry=False, family_rows=0)
    stored, fringe = model_states(spec)
    words = np.stack([spec.layout.pack(list(c)) for c in sorted(stored | fringe)])
    for constrain in (True, False):
        a = k_grid.expand(words, constrain=constrain)
        assert not k_grid._family_failed  # evaluated over (instances x states)
        b = k_one.expand(words, constrain=constrain)
        key = lambda e: np.lexsort((*reversed(key_columns(e.child_fps)),  # noqa: E731
                                    e.action_ids, e.parent_rows))
        ia, ib = key(a), key(b)
        for f in ("child_fps", "action_ids", "parent_rows"):
            assert np.array_equal(getattr(a, f)[ia], getattr(b, f)[ib]), f
        assert a.outside == b.outside and np.array_equal(a.fired, b.fired)
        if constrain:
            assert a.action_ok is None and b.action_ok is None and a.outside > 0
        else:
            assert np.array_equal(a.action_ok[ia], b.action_ok[ib]) and not a.action_ok.all()
    o = brute_force_check(spec)
    r = explore(spec)
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated) == ("ok", 4, 3, 4)


# ------------------------------------------------------------------ the rest
def test_declaration_mistakes() -> None:
    with pytest.raises(SpecDefinitionError, match=r"action_constraint Bad must take "
                                                  r"\(self, s, t\)"):
        class Wrong(Spec):
            x = Int(0, 1)

            @action_constraint
            def Bad(self, s):
                return s.x == 0


def test_temporal_properties_are_refused_with_action_constraints() -> None:
    class Live(Ratchet):
        @eventually
        def One(self, s):
            return s.x == 1

    with pytest.raises(LivenessError, match=r"has action constraints \(Up\)"):
        check_liveness(Live())


def test_the_state_graph_leaves_out_excluded_transitions() -> None:
    """The state graph is the model the explorer stores: a transition that violates an
    action constraint is no edge, and a state reached only through one no node (the
    graph export drew both, marked ``constrained``, before it came from the run)."""
    g = build_graph(Gate())
    xs = {json.loads(a["state"])["x"]: a for _n, a in g.nodes(data=True)}
    assert sorted(xs) == [0, 1]  # 2 is reached only through the excluded 1 -> 2
    assert [a["action"] for _u, _v, a in g.edges(data=True)] == ["Inc"]
    g = build_graph(Steps())  # 2 is excluded through Jump but stored through Inc
    steps = sorted((json.loads(g.nodes[u]["state"])["x"], json.loads(g.nodes[v]["state"])["x"],
                    a["label"]) for u, v, a in g.edges(data=True))
    assert steps == [(0, 1, "Inc"), (1, 2, "Inc"), (2, 3, "Inc")]
    assert not any("constrained" in a for _n, a in g.nodes(data=True))


SPEC_FILE = textwrap.dedent('''
    from modelcheck import Int, Spec, action, action_constraint


    class Steps(Spec):
        check_deadlock = False
        x = Int(0, 3)

        @action
        def Inc(self, s, t):
            t.x = s.x + 1
            return s.x < 3

        @action
        def Jump(self, s, t):
            t.x = s.x + 2
            return s.x < 2

        @action_constraint
        def NoJump(self, s, t):
            return t.x - s.x <= 1
''')


def test_cli(runner, tmp_path) -> None:
    p = tmp_path / "steps.py"
    p.write_text(SPEC_FILE)
    r = runner.invoke(cli, ["check", str(p), "-q", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert (d["distinct_states"], d["depth"], d["generated_states"]) == (4, 3, 5)
    r = runner.invoke(cli, ["inspect", str(p)])
    assert "Action constraints: NoJump" in r.output
    r = runner.invoke(cli, ["simulate", str(p), "--runs", "20", "--seed", "3", "--format",
                            "json", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["simulation"]["walk_ends"]["constraint"] > 0


def test_a_hypothesis_state_machine_stops_at_an_excluded_transition() -> None:
    from hypothesis import settings as hsettings

    from modelcheck.testing import state_machine

    def run(spec) -> None:
        case = state_machine(spec).TestCase
        case.settings = hsettings(max_examples=30, stateful_step_count=6, database=None,
                                  deadline=None, derandomize=True,
                                  suppress_health_check=list(HealthCheck))
        case("runTest").runTest()

    run(Gate(Bad=3))  # 3 lies past the excluded step 1 -> 2: never reached
    with pytest.raises(AssertionError, match="NotBad"):
        run(Gate(Bad=2))  # the excluded successor itself is checked


def test_an_action_constraint_that_is_not_boolean_is_a_spec_error(runner, tmp_path) -> None:
    p = tmp_path / "notbool.py"
    p.write_text(textwrap.dedent('''
        from modelcheck import Int, Spec, action, action_constraint


        class NotBool(Spec):
            x = Int(0, 3)

            @action
            def Inc(self, s, t):
                t.x = s.x + 1
                return s.x < 3

            @action_constraint
            def Count(self, s, t):
                return t.x + 1
    '''))
    for cmd in ("check", "simulate"):
        r = runner.invoke(cli, [cmd, str(p), "-q"])
        assert r.exit_code == 2, r.output
        assert "notbool.py:" in r.output and "action_constraint Count returned" in r.output
        assert "not a boolean" in r.output and "Traceback" not in r.output
