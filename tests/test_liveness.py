"""Liveness: temporal properties under fairness against a brute-force oracle, lassos,
refusals and the API."""

from __future__ import annotations

import networkx as nx
import pytest
from hypothesis import HealthCheck, assume, given, settings

from examples.flip import Flip, FlipStrongSet, FlipWeakSet
from modelcheck import Array, Bool, Ids, Int, Spec, action, check_liveness, constraint, where
from modelcheck.errors import SpecDefinitionError, SpecEvaluationError
from modelcheck.kernel import Kernel
from modelcheck.liveness import LivenessError
from modelcheck.temporal import (
    always_eventually,
    angle,
    changed,
    eventually,
    eventually_always,
    fairness_conditions,
    leads_to,
)
from tests.lassocheck import check_lasso_generic
from tests.livespec import (
    ORACLE_MAX_SCC,
    check_lasso,
    live_spec,
    oracle_verdicts,
    weak_fair_verdicts,
)


def _small_enough(spec: Spec) -> bool:
    k = Kernel(spec, symmetry=False, invariants=[], properties=[], check_deadlock=False)
    g = nx.DiGraph()
    todo = [tuple(c) for c in k.initial_states()]
    seen = set(todo)
    while todo:
        u = todo.pop()
        g.add_node(u)
        for _, nxt in k.successors(list(u)):
            t = tuple(nxt)
            g.add_edge(u, t)
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return max(len(c) for c in nx.strongly_connected_components(g)) <= ORACLE_MAX_SCC


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(live_spec())
def test_random_specs_agree_with_the_oracle_and_lassos_are_fair_violations(cls):
    spec = cls()
    assume(_small_enough(spec))
    res = check_liveness(spec, batch_size=3)
    want = oracle_verdicts(spec)
    got = {n: v == "holds" for n, v in res.liveness["properties"].items()}
    assert got == want
    if all(want.values()):
        assert res.status == "ok" and res.violation is None
        return
    v = res.violation
    assert res.status == "violation" and v is not None and v.kind == "liveness"
    first = next(n for n in want if not want[n])
    assert v.property == first
    assert set(v.also_violated) == {n for n in want if not want[n]} - {first}
    check_lasso(spec, v)
    # every violated property's own lasso, alone
    for name in v.also_violated:
        r = check_liveness(spec, temporal=[p for p in spec.temporal if p.name == name])
        assert r.violation is not None and r.violation.property == name
        check_lasso(spec, r.violation)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(live_spec())
def test_two_word_states_give_the_verdicts_and_lassos_of_one_word(cls):
    """The same spec with two constant 41-bit variables (two-word states, exact
    two-column fingerprints): the graph, the verdicts and fair lassos are the same."""
    wide = type("Wide" + cls.__name__, (cls,), {"pad": Int(0, 2**40), "pad2": Int(0, 2**40)})
    spec = wide()
    assert spec.layout.n_words == 2
    res = check_liveness(spec, batch_size=3)
    base = check_liveness(cls(), batch_size=3)
    assert res.liveness["properties"] == base.liveness["properties"]
    assert (res.distinct_states, res.generated_states) == \
        (base.distinct_states, base.generated_states)
    if res.violation is not None:
        check_lasso(spec, res.violation)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.filter_too_much])
@given(live_spec())
def test_the_weak_fairness_oracle_agrees_with_the_subset_oracle(cls):
    """``weak_fair_verdicts`` (maximal SCCs, any spec with weak fairness; it checks the
    KRaft lease liveness spec) against the subset enumeration on random specs."""
    assume(set(cls._oracle["fair"].values()) <= {"weak"})
    # per-action fairness and state properties only (what the lease spec needs)
    assume(not any("|" in name for name in cls._oracle["fair"]))
    spec = cls()
    assume(_small_enough(spec))
    mine = weak_fair_verdicts(spec)
    theirs = oracle_verdicts(spec)
    assert mine == {name: theirs[name] for name in mine}


# ------------------------------------------------------------------ hand-made cases
class Clock(Spec):
    """A clock that must be started; Tick is weakly fair."""

    check_deadlock = False
    h = Int(0, 2)
    on = Bool()

    @action(fair="weak")
    def Tick(self, s, t):
        t.h = where(s.h < 2, s.h + 1, 0)
        return s.on

    @action
    def Start(self, s, t):
        t.on = True
        return ~s.on

    @always_eventually
    def Midnight(self, s):
        return s.h == 0

    @eventually
    def Running(self, s):
        return s.on

    @leads_to
    def OnThenTwo(self, s):
        return s.on, s.h == 2


class ClockStarts(Clock):
    fairness = {"Start": "weak"}


def test_an_unfair_action_may_never_happen_a_terminal_state_stutters_forever():
    res = check_liveness(Clock())
    assert res.liveness["properties"] == {"Midnight": "holds", "Running": "violated",
                                          "OnThenTwo": "holds"}
    v = res.violation
    assert v.property == "Running" and v.loop == 0 and len(v.trace) == 1
    assert v.fairness == ("WF(Tick): disabled at state 1 on the loop",)
    assert check_liveness(ClockStarts()).status == "ok"


def test_weak_fairness_of_an_action_enabled_every_other_state_is_not_enough():
    r = check_liveness(FlipWeakSet())
    assert r.liveness["properties"] == {"SetWeak": "violated", "SetStrong": "violated"}
    v = r.violation
    assert v.loop == 0 and len(v.trace) == 3  # b: F -> T -> F, back to the start
    assert v.fairness == ("WF(Toggle): taken on the loop (step to state 2, Toggle)",)
    r = check_liveness(FlipStrongSet())
    assert r.liveness["properties"] == {"SetWeak": "violated", "SetStrong": "holds"}
    w = check_liveness(FlipWeakSet(), temporal=[FlipWeakSet().temporal[1]]).violation
    assert "WF(Set): disabled at state 1 on the loop" in w.fairness


class Procs(Spec):
    check_deadlock = False
    P = Ids(1, 2)
    done = Int(0, 3)
    turn = Int(1, 2)

    @action(p=P, fair="weak")
    def Go(self, s, t, p):
        t.turn = 3 - p
        return s.turn == p

    @action(p=P)
    def Finish(self, s, t, p):
        t.done = s.done | p
        return (s.turn == p) & ((s.done & p) == 0)

    @always_eventually
    def Both(self, s):
        return s.done == 3


class ProcsFamily(Procs):
    fairness = {"Finish": "weak-family"}


class ProcsStrongFamily(Procs):
    fairness = {"Finish": "strong-family"}


class ProcsEach(Procs):
    fairness = {"Finish": "weak"}


class ProcsStrongEach(Procs):
    fairness = {"Finish": "strong"}


def test_fairness_per_instance_and_per_family():
    assert [c.name for c in fairness_conditions(ProcsStrongEach())] == [
        "WF(Go(p=1))", "WF(Go(p=2))", "SF(Finish(p=1))", "SF(Finish(p=2))"]
    assert [c.name for c in fairness_conditions(ProcsFamily())][-1] == "WF(Finish(*))"
    # Finish(p) is enabled only at turn p, so never continuously: weak fairness per
    # instance does not force it, strong fairness does. The family as one action is
    # enabled at both turns only until one process finished: weakly fair, the other
    # may still never finish; strongly fair, it must.
    r = check_liveness(ProcsEach())
    assert r.liveness["properties"] == {"Both": "violated"}
    assert "WF(Finish(p=1)): disabled at state" in "\n".join(r.violation.fairness)
    assert check_liveness(ProcsStrongEach()).status == "ok"
    r = check_liveness(ProcsFamily())
    assert r.violation.fairness[-1] == "WF(Finish(*)): disabled at state 2 on the loop"
    assert [s.action for s in r.violation.trace] == [None, "Finish", "Go", "Go"]
    assert check_liveness(ProcsStrongFamily()).status == "ok"
    assert check_liveness(Procs()).violation.fairness == (
        "WF(Go(p=1)): taken on the loop (step to state 2, Go(1))",
        "WF(Go(p=2)): taken on the loop (step to state 3, Go(2))")


class Branchy(Spec):
    """One action of two disjuncts (branches): ``b`` toggles x, always enabled; ``a``
    sets y while y = 0. WF(Step) is fairness of the disjunction."""

    check_deadlock = False
    x = Bool()
    y = Bool()

    @action(fair="weak")
    def Step(self, s, t):
        with t.branch("b", s.x | ~s.x):
            t.x = ~s.x
        with t.branch("a", ~s.y):
            t.y = True
        return s.x | ~s.x

    @eventually
    def EventuallyX(self, s):
        return s.x

    @eventually
    def EventuallyY(self, s):
        return s.y


def test_fairness_of_an_action_with_branches_is_of_the_whole_disjunction():
    # WF(Step) with Step = b \/ a: one condition over both branch instances
    assert [(c.name, len(c.action_ids)) for c in fairness_conditions(Branchy())] == [
        ("WF(Step)", 2)]
    r = check_liveness(Branchy())
    # Step is always enabled, so it is taken: x becomes TRUE (a fair behaviour cannot
    # stutter at the start) ...
    assert r.liveness["properties"]["EventuallyX"] == "holds"
    # ... but toggling x forever takes Step infinitely often: y may stay FALSE (weak
    # fairness of each branch separately would force `a`, which stays enabled)
    assert r.liveness["properties"]["EventuallyY"] == "violated"
    assert {s.action for s in r.violation.trace[1:]} <= {"Step[b]"}


class Wide(Spec):
    """A state too wide for 64 bits (hashed fingerprints), and a safety violation."""

    check_deadlock = False
    x = Int(0, 2**40)
    y = Int(0, 2**40)
    z = Int(0, 2**40)  # three words: 128-bit fingerprints

    @action(fair="weak")
    def Step(self, s, t):
        t.x = where(s.x < 3, s.x + 1, 0)
        return s.y == 0

    @leads_to
    def ZeroAgain(self, s):
        return s.x == 2, s.x == 0

    @eventually_always
    def Settles(self, s):
        return s.x == 3


def test_hashed_layouts_safety_first_and_selection():
    from modelcheck import invariant
    from modelcheck.config import CheckConfig
    from modelcheck.liveness import split_checks

    spec = Wide()
    assert not spec.layout.exact and spec.layout.key_width == 2
    r = check_liveness(spec)
    assert r.liveness["properties"] == {"ZeroAgain": "holds", "Settles": "violated"}
    assert r.violation.loop == 0 and len(r.violation.trace) == 5

    class WideBad(Wide):
        @invariant
        def Small(self, s):
            return s.x < 2

    r = check_liveness(WideBad())
    assert r.violation.kind == "invariant"
    assert r.liveness["properties"] == {"ZeroAgain": "not checked", "Settles": "not checked"}
    cfg, temporal = split_checks(WideBad(), CheckConfig(invariants=("Small",)))
    assert cfg.invariants == ("Small",) and temporal == []
    cfg, temporal = split_checks(WideBad(), CheckConfig(invariants=("Settles",)))
    assert cfg.invariants == () and [p.name for p in temporal] == ["Settles"]


class Counter(Spec):
    check_deadlock = False
    x = Int(0, 3)

    @action(fair="weak")
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @eventually_always
    def Three(self, s):
        return s.x == 3

    @constraint
    def Small(self, s):
        return s.x < 3


def test_refusals_constraints_symmetry_and_the_spark_backend():
    with pytest.raises(LivenessError, match="state constraints"):
        check_liveness(Counter())

    class Sym(Procs):
        symmetry = ("P",)

    with pytest.raises(LivenessError, match="--no-symmetry"):
        check_liveness(Sym())
    assert check_liveness(Sym(), symmetry=False).status in ("ok", "violation")
    with pytest.raises(LivenessError, match="max-depth"):
        check_liveness(Clock(), max_depth=3)


def test_definition_errors():
    with pytest.raises(SpecDefinitionError, match="fair="):
        class Bad(Spec):
            x = Int(0, 1)

            @action(fair="sometimes")
            def A(self, s, t):
                t.x = 1
                return s.x == 0
    with pytest.raises(SpecDefinitionError, match=r"must take \(self, s\) or \(self, s, t\)"):
        class Bad2(Spec):
            x = Int(0, 1)

            @eventually
            def P(self, s, t, u):
                return s.x == 1
    with pytest.raises(SpecDefinitionError, match=r"<>\[\]P over steps .* not supported"):
        class Bad3(Spec):
            x = Int(0, 1)

            @eventually_always
            def P(self, s, t):
                return s.x == t.x


# ------------------------------------------------------------------ properties of steps
class Toggler(Spec):
    """x toggles (Toggle), y is set once (SetY); z never changes. Properties of steps."""

    check_deadlock = False
    x = Bool()
    y = Bool()
    z = Int(0, 1)

    @action
    def Toggle(self, s, t):
        t.x = ~s.x
        return s.x | ~s.x

    @action
    def SetY(self, s, t):
        t.y = True
        return ~s.y

    @always_eventually
    def Toggles(self, s, t):                  # []<><<Toggle>>_x
        return angle(t.x != s.x, s, t, "x")

    @always_eventually
    def TogglesY(self, s, t):                 # []<><<Toggle>>_y: Toggle never changes y
        return angle(t.x != s.x, s, t, "y")

    @always_eventually
    def Moves(self, s, t):                    # []<><<TRUE>>_vars: infinitely many steps
        return angle(True, s, t)

    @always_eventually
    def Still(self, s, t):                    # []<>(x' = x): true on every stutter
        return t.x == s.x

    @eventually
    def SetsY(self, s, t):                    # <><<y' /\ ~y>>_<<y, z>> (v by a function)
        return angle(t.y & ~s.y, s, t, lambda v: (v.y, v.z))

    @leads_to
    def NotYThenSet(self, s, t):              # ~y ~> <<y'>>_y
        return ~s.y, angle(t.y, s, t, ("y",))


class TogglerFair(Toggler):
    fairness = {"Toggle": "weak", "SetY": "weak"}


def test_properties_of_steps_stuttering_never_satisfies_angle():
    r = check_liveness(Toggler())
    # no fairness: every behaviour may stop at once and stutter forever
    assert r.liveness["properties"] == {
        "Toggles": "violated", "TogglesY": "violated", "Moves": "violated", "Still": "violated",
        "SetsY": "violated", "NotYThenSet": "violated"}
    v = r.violation
    assert (v.property, len(v.trace), v.loop, v.formula) == ("Toggles", 1, 0, "[]<>A")
    # Still holds on a stuttering loop, so its lasso toggles forever (a loop that must
    # take a step, though no fairness asks for one)
    v = check_liveness(Toggler(), temporal=[Toggler.Still]).violation
    assert (len(v.trace), v.loop, [s.action for s in v.trace[1:]]) == (3, 0, ["Toggle"] * 2)
    check_lasso_generic(Toggler(), v)
    r = check_liveness(TogglerFair())
    assert r.liveness["properties"] == {
        "Toggles": "holds", "TogglesY": "violated", "Moves": "holds", "Still": "violated",
        "SetsY": "holds", "NotYThenSet": "holds"}
    for name in ("TogglesY", "Still"):
        v = check_liveness(TogglerFair(), temporal=[getattr(TogglerFair, name)]).violation
        check_lasso_generic(TogglerFair(), v)


class Stopper(Spec):
    """x goes 0 -> 1 -> 2 and stops there (weakly fair)."""

    check_deadlock = False
    x = Int(0, 2)

    @action(fair="weak")
    def Up(self, s, t):
        t.x = s.x + 1
        return s.x < 2

    @always_eventually
    def Still(self, s, t):                    # holds: the behaviour stutters forever at 2
        return t.x == s.x

    @always_eventually
    def Moves(self, s, t):
        return angle(True, s, t)

    @leads_to
    def OneThenUp(self, s, t):                # x = 1 ~> <<Up>>_x
        return s.x == 1, angle(t.x == s.x + 1, s, t, "x")

    @leads_to
    def TwoThenUp(self, s, t):                # x = 2 ~> <<Up>>_x: never again
        return s.x == 2, angle(t.x == s.x + 1, s, t, "x")

    @eventually
    def UpFromTwo(self, s, t):
        return angle(s.x == 2, s, t)


def test_a_terminal_state_stutters_forever_and_satisfies_only_what_a_stutter_does():
    r = check_liveness(Stopper())
    assert r.liveness["properties"] == {"Still": "holds", "Moves": "violated",
                                        "OneThenUp": "holds", "TwoThenUp": "violated",
                                        "UpFromTwo": "violated"}
    v = r.violation
    assert (v.property, len(v.trace), v.loop) == ("Moves", 3, 2)
    assert [s.state["x"] for s in v.trace] == [0, 1, 2]
    for p in Stopper().temporal:
        v = check_liveness(Stopper(), temporal=[p]).violation
        if v is not None:
            check_lasso_generic(Stopper(), v)


class ReadsNext(Stopper):
    @leads_to
    def Bad(self, s, t):
        return t.x == 1, angle(True, s, t)


def test_refusals_over_steps():
    with pytest.raises(SpecEvaluationError, match="Bad: its P must be a state predicate"):
        check_liveness(ReadsNext(), temporal=[ReadsNext.Bad])
    with pytest.raises(SpecEvaluationError, match="unknown variable 'w'"):
        check_liveness(Stopper(), temporal=[always_eventually(
            lambda self, s, t: angle(True, s, t, "w"))])

    class Arr(Spec):
        a = Array(Ids(1, 2), Bool())

        @action
        def A(self, s, t):
            t.a[1] = True
            return ~s.a[1]

    with pytest.raises(SpecEvaluationError, match="for an array variable"):
        check_liveness(Arr(), temporal=[always_eventually(
            lambda self, s, t: angle(True, s, t, lambda v: v.a))])
    k = Kernel(Arr(), invariants=[], properties=[], check_deadlock=False)
    s0, s1 = (k.scalar_view(c) for c in ([0, 0], [1, 0]))
    assert changed(s0, s1, "a") and not changed(s0, s1, lambda v: v.a[2])


class ProcsGrouped(Procs):
    fairness = {"Go | Finish": "weak"}


def test_fairness_of_a_disjunction_of_actions_joins_their_instances_per_parameter():
    assert [c.name for c in fairness_conditions(ProcsGrouped())] == [
        "WF(Go(p=1))", "WF(Go(p=1) \\/ Finish(p=1))", "WF(Go(p=2))",
        "WF(Go(p=2) \\/ Finish(p=2))"]
    # Finish(p) is enabled only at turn p, never continuously, and Go(p) only then too:
    # WF(Go(p) \/ Finish(p)) is taken by Go(p) and does not force Finish(p)
    assert check_liveness(ProcsGrouped()).liveness["properties"] == {"Both": "violated"}

    class Mixed(Procs):
        fairness = {"Go | Finish(p=1)": "strong-family"}

    assert "SF(Go(*) \\/ Finish(p=1))" in [c.name for c in fairness_conditions(Mixed())]

    class Unknown(Procs):
        fairness = {"Go | Nope": "weak"}

    class Params(Flip):
        @action(p=Ids(1, 2))
        def Other(self, s, t, p):
            t.n = 0
            return s.n == 1

        fairness = {"Toggle | Other": "weak"}

    with pytest.raises(SpecDefinitionError, match="'Nope' is neither"):
        fairness_conditions(Unknown())
    with pytest.raises(SpecDefinitionError, match="must have the same parameters"):
        fairness_conditions(Params())


# ------------------------------------------------------------------ output, files, CLI
LIVE = "tests/test_liveness.py"
FLIP = "examples/flip.py"


def test_cli_check_prints_the_lasso_and_writes_it_as_itf_and_json(tmp_path):
    import json

    from click.testing import CliRunner

    from modelcheck.cli import cli
    from modelcheck.trace import load_trace
    from modelcheck.trace.replay import replay

    runner = CliRunner()
    r = runner.invoke(cli, ["check", f"{FLIP}:FlipWeakSet", "-q", "--out", str(tmp_path / "run")])
    assert r.exit_code == 1, r.output
    assert "Temporal property SetWeak (<>P) is violated (also violated: SetStrong)" in r.output
    assert "State 1: <initial state>   <- the loop starts here" in r.output
    assert "State 3 is state 1: the loop from state 1 repeats forever." in r.output
    assert "WF(Toggle): taken on the loop (step to state 2, Toggle)" in r.output
    for name in ("trace.itf.json", "trace.json", "result.json"):
        t = load_trace(tmp_path / "run" / name)
        assert t.loop == 0 and t.kind == "liveness" and len(t) == 3
        assert t.fairness == ("WF(Toggle): taken on the loop (step to state 2, Toggle)",)
        rep = replay(FlipWeakSet(), t)
        assert rep.ok and rep.notes[0] == "the loop closes: state 3 is state 1"
    assert json.loads((tmp_path / "run" / "trace.itf.json").read_text())["loop"] == 0
    r = runner.invoke(cli, ["check", f"{FLIP}:FlipWeakSet", "-q", "--format", "json",
                            "--invariant", "SetStrong"])
    doc = json.loads(r.output)
    assert doc["violation"]["property"] == "SetStrong" and doc["violation"]["loop"] == 0
    assert doc["liveness"]["properties"] == {"SetStrong": "violated"}
    r = runner.invoke(cli, ["check", f"{FLIP}:FlipStrongSet", "-q", "--invariant", "SetStrong"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["trace", "show", str(tmp_path / "run" / "trace.itf.json")])
    assert "this infinite behaviour violates temporal property SetWeak" in r.output
    assert "repeats forever" in r.output


def test_replay_refuses_a_loop_that_does_not_close():
    from modelcheck.trace.model import Trace

    spec = FlipWeakSet()
    t = Trace.from_violation(spec, check_liveness(spec).violation)
    bad = Trace(vars=t.vars, steps=t.steps[:2], loop=0, kind="liveness", property="SetWeak")
    from modelcheck.trace.replay import replay

    rep = replay(spec, bad)
    assert not rep.ok and "the loop does not close" in rep.message


def test_inspect_lists_temporal_properties_and_fairness():
    from click.testing import CliRunner

    from modelcheck.cli import cli

    r = CliRunner().invoke(cli, ["inspect", f"{FLIP}:FlipStrongSet"])
    assert "SetWeak (<>P)" in r.output and "[fairness: WF(Toggle)]" in r.output
    assert "SetStrong (<>P)\n" in r.output  # the spec's fairness: listed once, below
    assert "Fairness: WF(Toggle), SF(Set)" in r.output
    r = CliRunner().invoke(cli, ["inspect", f"{LIVE}:TogglerFair"])
    assert "  Toggles ([]<>A; A a formula of steps (s, t))\n" in r.output
    assert "  NotYThenSet (P ~> A; A a formula of steps (s, t))" in r.output
