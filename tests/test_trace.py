"""Traces (modelcheck.trace: model, render, replay, conjuncts, evaluate): ITF and JSON round
trips, the ITF format rules, rendering, replay (accepting real behaviours, rejecting tampered
ones at the right step) and eval."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from modelcheck import Explorer
from modelcheck.cli import bind_spec, cli
from modelcheck.graph import build_graph
from modelcheck.kernel import Kernel
from modelcheck.result import TraceStep, Violation
from modelcheck.spec import Spec
from modelcheck.trace import (
    Trace,
    TraceFileError,
    TraceMismatchError,
    dumps_trace_json,
    loads_trace,
    trace_from_itf,
    trace_to_itf,
)
from modelcheck.trace.conjuncts import guard_conjuncts
from modelcheck.trace.evaluate import ExpressionError, evaluate
from modelcheck.trace.itf import ItfTrace, dumps_itf, from_itf, to_itf
from modelcheck.trace.render import action_label, changes, format_value, render_trace
from modelcheck.trace.replay import replay

KRAFT = "specs/kraft_broker.py"
SMALL = ("N=2", "P=1", "MaxLog=4", "MaxRestarts=1")
BUGS = {
    # variant: (constants, violated property, kind, states)
    "KRaftBrokerBugNoCatchUpCheck": (SMALL, "CaughtUpBeforeUnfence", "invariant", 5),
    "KRaftBrokerBugEpochReuse": (SMALL, "EpochMonotonic", "action", 5),
    "KRaftBrokerBugGrantWithLeaders": (("N=2", "P=1", "MaxLog=5", "MaxRestarts=1"),
                                       "ShutdownLeadsNothing", "invariant", None),
}

# A spec with every kind of value: sets, enums, booleans, nested arrays.
TOKENS_SPEC = '''
from enum import IntEnum
from modelcheck import Array, Bool, Enum, Ids, Int, SetOf, Spec, action, has, invariant, with_

class Mode(IntEnum):
    IDLE = 0
    BUSY = 1

class Tokens(Spec):
    check_deadlock = False
    Procs = Ids(1, 3)
    Slots = Ids(1, 2)
    holders = SetOf(Procs)
    mode = Array(Procs, Enum(Mode))
    grid = Array(Procs, Array(Slots, Bool()))
    taken = Int(0, 3)

    @action(p=Procs)
    def Take(self, s, t, p):
        t.holders = with_(s.holders, p)
        t.mode[p] = Mode.BUSY
        t.grid[p][1] = True
        t.taken = s.taken + 1
        return ~has(s.holders, p) & (s.mode[p] == Mode.IDLE)

    @invariant
    def AtMostTwo(self, s):
        return s.taken <= 2
'''


def _bug_trace(name: str) -> tuple[Spec, Trace]:
    consts = BUGS[name][0]
    spec = bind_spec(f"{KRAFT}:{name}", tuple(consts))
    res = Explorer(spec).run()
    assert res.violation is not None, name
    return spec, Trace.from_violation(spec, res.violation, source=f"{KRAFT}:{name}")


@pytest.fixture(scope="module")
def bug_traces() -> dict[str, tuple[Spec, Trace]]:
    return {name: _bug_trace(name) for name in BUGS}


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Spec, Trace]:
    path = tmp_path_factory.mktemp("spec") / "tokens_spec.py"
    path.write_text(TOKENS_SPEC)
    spec = bind_spec(str(path), ())
    res = Explorer(spec).run()
    assert res.violation is not None
    return str(path), spec, Trace.from_violation(spec, res.violation, source=str(path))


def _random_walk(spec: Spec, steps: int, seed: int) -> Trace:
    """A behaviour of ``spec`` by a seeded random walk (the reference has no counterexample)."""
    k = Kernel(spec, symmetry=False)
    rng = random.Random(seed)
    cur = k.initial_states()[0]
    out = [TraceStep(None, {}, spec.layout.values_from_cells(cur))]
    for _ in range(steps):
        succ = k.successors(cur)
        if not succ:
            break
        live = [x for x in succ if x[0].name != "Crash"] or succ  # keep the walk going
        inst, cur = rng.choice(live)
        out.append(TraceStep(inst.name, dict(inst.params), spec.layout.values_from_cells(cur)))
    t = Trace.from_violation(spec, Violation("none", "invariant", tuple(out)))
    return Trace(t.vars, t.steps, spec=spec.name, constants=dict(spec.constants))


def _via_itf(t: Trace) -> Trace:
    return loads_trace(dumps_itf(trace_to_itf(t)), source_file="t.itf.json")


def _via_json(t: Trace) -> Trace:
    return loads_trace(dumps_trace_json(t), source_file="t.json")


# --------------------------------------------------------------------------- ITF rules


def assert_valid_itf(doc: Any, vars_: list[str], n_states: int) -> None:
    """The ITF rules (ADR-015) plus ours: every integer a #bigint, maps as #map pairs,
    sets as #set, per-state #meta with index/action/params, vars in declaration order."""
    assert isinstance(doc, dict)
    assert set(doc) <= {"#meta", "params", "vars", "states", "loop"}
    assert doc["vars"] == vars_
    meta = doc["#meta"]
    assert meta["format"] == "ITF" and "format-description" in meta
    assert isinstance(doc["states"], list) and len(doc["states"]) == n_states

    def value(v: Any, path: str) -> None:
        if isinstance(v, bool) or isinstance(v, str):
            return
        assert not isinstance(v, (int, float)), f"{path}: raw JSON number {v!r}"
        assert v is not None, f"{path}: null"
        if isinstance(v, list):
            for i, x in enumerate(v):
                value(x, f"{path}[{i}]")
            return
        assert isinstance(v, dict), path
        tags = [k for k in v if k.startswith("#")]
        if not tags:  # a record
            for k, x in v.items():
                value(x, f"{path}.{k}")
            return
        assert len(v) == 1, f"{path}: tagged object with extra keys"
        tag, body = next(iter(v.items()))
        if tag == "#bigint":
            assert isinstance(body, str) and re.fullmatch(r"-?[0-9]+", body), path
        elif tag == "#map":
            keys = []
            for i, pair in enumerate(body):
                assert isinstance(pair, list) and len(pair) == 2, f"{path}: #map entry {i}"
                value(pair[0], f"{path}.key{i}")
                value(pair[1], f"{path}.val{i}")
                keys.append(json.dumps(pair[0], sort_keys=True))
            assert len(set(keys)) == len(keys), f"{path}: duplicate map key"
        elif tag in ("#set", "#tup"):
            assert isinstance(body, list)
            for i, x in enumerate(body):
                value(x, f"{path}[{i}]")
            if tag == "#set":
                enc = [json.dumps(x, sort_keys=True) for x in body]
                assert len(set(enc)) == len(enc), f"{path}: duplicate set element"
        else:
            raise AssertionError(f"{path}: unknown tag {tag}")

    for i, st in enumerate(doc["states"]):
        assert set(st) == set(vars_) | {"#meta"}, f"states[{i}] keys"
        sm = st["#meta"]
        assert sm["index"] == i
        assert isinstance(sm["action"], str) and isinstance(sm["params"], dict)
        assert (sm["action"] == "init") == (i == 0)
        for name in vars_:
            value(st[name], f"states[{i}].{name}")
    from_itf(doc)  # and the strict codec accepts it


@pytest.mark.parametrize("name", list(BUGS))
def test_itf_output_follows_the_format_rules(bug_traces, name: str) -> None:
    spec, t = bug_traces[name]
    doc = json.loads(dumps_itf(trace_to_itf(t, generator="modelcheck test")))
    assert_valid_itf(doc, list(spec.layout.vars), len(t))
    assert doc["#meta"]["property"] == BUGS[name][1]
    assert doc["#meta"]["kind"] == BUGS[name][2]
    assert doc["#meta"]["constants"] == dict(spec.constants)
    assert doc["#meta"]["source"] == f"{KRAFT}:{name}"
    assert doc["states"][1]["#meta"]["action"] == t.steps[1].action
    assert doc["states"][1]["#meta"]["params"] == t.steps[1].params
    # arrays indexed by brokers are #map from #bigint ids
    reg = doc["states"][0]["regEpoch"]["#map"]
    assert [k for k, _ in reg] == [{"#bigint": "1"}, {"#bigint": "2"}]
    assert doc["states"][0]["fenced"]["#map"][0][1] is True
    assert doc["states"][0]["bstate"]["#map"][0][1] == "OFFLINE"


def test_itf_sets_enums_nested_arrays(tokens) -> None:
    _, spec, t = tokens
    doc = json.loads(dumps_itf(trace_to_itf(t)))
    assert_valid_itf(doc, ["holders", "mode", "grid", "taken"], len(t))
    last = doc["states"][-1]
    assert last["holders"] == {"#set": [{"#bigint": "1"}, {"#bigint": "2"}, {"#bigint": "3"}]}
    assert last["grid"]["#map"][0][1]["#map"][0][1] is True  # grid[1][1]
    assert doc["states"][0]["holders"] == {"#set": []}


# --------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("name", list(BUGS))
@pytest.mark.parametrize("codec", [_via_itf, _via_json], ids=["itf", "json"])
def test_round_trip_and_replay_bug_variants(bug_traces, name: str,
                                            codec: Callable[[Trace], Trace]) -> None:
    spec, t = bug_traces[name]
    back = codec(t)
    assert back.vars == t.vars
    assert [(s.action, s.params) for s in back.steps] == [(s.action, s.params) for s in t.steps]
    assert [s.state for s in back.steps] == [s.state for s in t.steps]
    assert (back.spec, back.property, back.kind, back.constants) == \
        (name, BUGS[name][1], BUGS[name][2], dict(spec.constants))
    rep = replay(spec, back)
    assert rep.ok, rep.message
    assert rep.states == len(t)
    assert any(BUGS[name][1] in n for n in rep.notes)  # the recorded violation is confirmed
    if BUGS[name][3] is not None:
        assert len(t) == BUGS[name][3]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("codec", [_via_itf, _via_json], ids=["itf", "json"])
def test_round_trip_and_replay_reference(seed: int, codec: Callable[[Trace], Trace]) -> None:
    spec = bind_spec(KRAFT, SMALL)
    t = _random_walk(spec, 14, seed)
    assert len(t) > 5
    rep = replay(spec, codec(t))
    assert rep.ok, rep.message
    assert rep.notes == []  # the reference violates nothing


def test_round_trip_tokens_spec(tokens) -> None:
    _, spec, t = tokens
    for codec in (_via_itf, _via_json):
        back = codec(t)
        assert [s.state for s in back.steps] == [s.state for s in t.steps]
        assert isinstance(back.steps[-1].state["holders"], frozenset)
        assert back.steps[-1].state["grid"][1][1] is True
        assert replay(spec, back).ok


# --------------------------------------------------------------------------- tampering


def _edit(t: Trace, i: int, var: str, value: Any, index: Any = None) -> Trace:
    steps = list(t.steps)
    state = copy.deepcopy(steps[i].state)
    if index is None:
        state[var] = value
    else:
        state[var][index] = value
    steps[i] = TraceStep(steps[i].action, steps[i].params, state)
    return Trace(t.vars, tuple(steps), t.spec, t.source, t.constants, t.property, t.kind)


def _with_step(t: Trace, i: int, action: str | None, params: dict[str, Any]) -> Trace:
    steps = list(t.steps)
    steps[i] = TraceStep(action, params, steps[i].state)
    return Trace(t.vars, tuple(steps), t.spec, t.source, t.constants)


def test_tampered_value_in_the_middle(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    b = t.steps[1].params["b"]  # Start(b): inc[b] becomes 1
    bad = _edit(t, 2, "inc", 0, b)
    rep = replay(spec, _via_itf(bad))
    assert not rep.ok and rep.failed_step == 3
    assert rep.message.startswith("step 3: ")
    assert f"inc[{b}]: the spec gives 1, the trace has 0" in rep.message
    assert "is enabled in state 2" in rep.message


def test_tampered_value_out_of_domain(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    # a value outside its domain does not fit the spec (exit 2), as a wrong type
    with pytest.raises(TraceMismatchError,
                       match="state 4 is not a state of .*: logEnd = 99 is outside its "
                             r"domain 0\.\.4\."):
        replay(spec, _edit(t, 3, "logEnd", 99))


def test_tampered_params_not_enabled_names_the_conjunct(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugNoCatchUpCheck"]
    assert t.steps[3].action == "CatchUp"
    b = t.steps[3].params["b"]
    other = 3 - b  # the broker that never started
    rep = replay(spec, _via_json(_with_step(t, 3, "CatchUp", {"b": other})))
    assert not rep.ok and rep.failed_step == 4
    assert f"action CatchUp(b={other}) is not enabled in state 3" in rep.message
    assert "s.bstate[b] == STARTING" in rep.message
    assert "s.bstate[b] = OFFLINE" in rep.message
    assert "specs/kraft_broker.py:" in rep.message


def test_tampered_params_enabled_names_the_differing_variables(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    assert [s.action for s in t.steps[3:]] == ["Register", "Register"]
    b = t.steps[3].params["b"]
    rep = replay(spec, _with_step(t, 3, "Register", {"b": 3 - b}))
    assert not rep.ok and rep.failed_step == 4
    assert f"Register(b={3 - b}) is enabled in state 3, but its successor differs" \
        in rep.message
    assert f"regEpoch[{b}]: the spec gives 0, the trace has 1" in rep.message
    assert f"regEpoch[{3 - b}]: the spec gives 1, the trace has 0" in rep.message


def test_dropped_state(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    short = Trace(t.vars, t.steps[:2] + t.steps[3:], t.spec, t.source, t.constants)
    rep = replay(spec, _via_itf(short))
    assert not rep.ok and rep.failed_step == 3
    assert "differs from state 3" in rep.message


def test_tampered_initial_state(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    rep = replay(spec, _edit(t, 0, "offset", 2, 1))
    assert not rep.ok and rep.failed_step == 1
    assert "not an initial state" in rep.message
    assert "offset[1]: the spec's initial state has 0, the trace has 2" in rep.message


def test_unknown_action_and_bad_params(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    rep = replay(spec, _with_step(t, 2, "Launch", {"b": 1}))
    assert rep.failed_step == 3 and "has no action 'Launch'" in rep.message
    rep = replay(spec, _with_step(t, 2, "Start", {"b": 7}))
    assert rep.failed_step == 3 and "b in 1..2" in rep.message
    rep = replay(spec, _with_step(t, 2, "Start", {"x": 1}))
    assert rep.failed_step == 3 and "takes the parameters (b)" in rep.message


def test_bug_trace_against_the_reference_explains_helper_guards(bug_traces) -> None:
    _, t = bug_traces["KRaftBrokerBugNoCatchUpCheck"]
    ref = bind_spec(KRAFT, SMALL)
    rep = replay(ref, t)
    assert not rep.ok and rep.failed_step == 4
    assert "self.caught_up(s, b)" in rep.message
    assert "s.offset[b] >= s.regEpoch[b]" in rep.message  # the helper's own conjunct
    assert "s.offset[b] = 0, s.regEpoch[b] = 1" in rep.message


def test_replay_without_action_names_infers_them(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugNoCatchUpCheck"]
    bare = Trace(t.vars, tuple(TraceStep(None, {}, s.state) for s in t.steps))
    assert not bare.has_actions
    rep = replay(spec, _via_itf(bare))
    assert rep.ok
    assert [a.split("(")[0] for a in rep.inferred.values()] == \
        ["Start", "Register", "CatchUp", "Unfence"]
    rep = replay(spec, Trace(t.vars, bare.steps[:1] + bare.steps[2:]))
    assert not rep.ok and rep.failed_step == 2
    assert "no action of KRaftBrokerBugNoCatchUpCheck leads from state 1 to state 2" in rep.message


def test_variables_that_do_not_match_the_spec(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugEpochReuse"]
    extra = Trace((*t.vars, "ghost"),
                  tuple(TraceStep(s.action, s.params, {**s.state, "ghost": 1}) for s in t.steps))
    with pytest.raises(TraceMismatchError, match="not variables of the spec: ghost"):
        replay(spec, extra)
    fewer = Trace(t.vars[1:], tuple(TraceStep(s.action, s.params,
                                              {k: v for k, v in s.state.items() if k != "logEnd"})
                                    for s in t.steps))
    with pytest.raises(TraceMismatchError, match="missing from the trace: logEnd"):
        replay(spec, fewer)
    with pytest.raises(TraceMismatchError, match=r"state 2: fenced\[1\] is 1 .*expects a boolean"):
        replay(spec, _edit(t, 1, "fenced", 1, 1))
    with pytest.raises(TraceMismatchError, match=r"regEpoch must map exactly the indices 1..2"):
        replay(spec, _edit(t, 1, "regEpoch", {1: 0}))


def test_foreign_itf_without_metadata(tmp_path: Path) -> None:
    """An ITF trace as another tool would write it: no #meta, plain JSON ints allowed."""
    spec = bind_spec("examples/counter.py", ())
    states = [{"count": {"#map": [[1, 0], [2, 0]]}, "total": 0},
              {"count": {"#map": [[1, 0], [2, 1]]}, "total": 1},
              {"count": {"#map": [[1, 1], [2, 1]]}, "total": {"#bigint": "2"}}]
    t = loads_trace(json.dumps({"vars": ["count", "total"], "states": states}))
    assert t.spec is None and not t.has_actions
    rep = replay(spec, t)
    assert rep.ok and rep.inferred == {2: "Step(2)", 3: "Step(1)"}
    out = render_trace(t)
    assert "count[2]: 0 -> 1" in out and "<unnamed action>" in out


# --------------------------------------------------------------------------- show


def test_render_only_changes_per_index(bug_traces) -> None:
    _, t = bug_traces["KRaftBrokerBugEpochReuse"]
    out = render_trace(t)
    assert "Counterexample: the last step violates action property EpochMonotonic" in out
    blocks = out.split("\n\nState ")
    assert blocks[1].startswith("1: <initial state>")
    assert "regEpoch = {1: 0, 2: 0}" in blocks[1]
    assert "bstate   = {1: OFFLINE, 2: OFFLINE}" in blocks[1]
    b = t.steps[1].params["b"]
    assert blocks[2] == (f"2: Start(b={b})\n    bstate[{b}]: OFFLINE -> STARTING\n"
                         f"    inc[{b}]: 0 -> 1")
    last = blocks[5]
    assert "regEpoch[" in last and "logEnd: 1 -> 2" in last
    assert "offset" not in last and "fenced" not in last  # unchanged variables are not shown


def test_render_full_vars_step(bug_traces) -> None:
    _, t = bug_traces["KRaftBrokerBugEpochReuse"]
    full = render_trace(t, full=True)
    assert full.count("offset   = {1: 0, 2: 0}") == 5
    only = render_trace(t, names=["logEnd"])
    assert "regEpoch" not in only and "logEnd: 0 -> 1" in only
    assert "(no selected variable changed)" in only
    one = render_trace(t, step=4)
    assert "State 4: Register(" in one and "State 3" not in one and "State 5" not in one
    assert "logEnd: 0 -> 1" in one
    first = render_trace(t, step=1, names=["logEnd"])
    assert "State 1: <initial state>\n    logEnd = 0" in first


def test_changes_and_values() -> None:
    old = {"a": {1: 0, 2: True}, "s": frozenset({1}), "x": 1, "grid": {1: {1: False}}}
    new = {"a": {1: 0, 2: 1}, "s": frozenset({1, 2}), "x": True, "grid": {1: {1: True}}}
    assert changes(old, new, ["a", "s", "x", "grid"]) == [
        ("a[2]", True, 1), ("s", frozenset({1}), frozenset({1, 2})), ("x", 1, True),
        ("grid[1][1]", False, True)]
    assert format_value(frozenset({2, 1})) == "{1, 2}"
    assert format_value({2: "A", 1: "B"}) == "{1: B, 2: A}"
    assert format_value({2: "A"}, python=True) == "{2: 'A'}"
    assert format_value(frozenset(), python=True) == "set()"
    assert format_value((1, False)) == "<<1, FALSE>>"


# --------------------------------------------------------------------------- one renderer


def _words(line: str) -> str:
    return " ".join(line.split())


def test_check_report_and_trace_show_print_the_same_values(runner, tokens, tmp_path) -> None:
    """``check``'s counterexample and ``trace show`` of the saved trace come from one
    renderer: the same state headers, action labels and changes, sets as ``{1, 2}``."""
    path, _, _ = tokens
    saved = tmp_path / "t.itf.json"
    r = runner.invoke(cli, ["check", path, "-q", "--trace-out", str(saved)])
    assert r.exit_code == 1, r.output
    shown = runner.invoke(cli, ["trace", "show", str(saved)])
    assert shown.exit_code == 0, shown.output
    report = r.stdout.split("Shortest counterexample, 4 states:\n")[1].split("\nResult:")[0]
    checked = [_words(line) for line in report.splitlines()]
    in_show = {_words(line) for line in shown.stdout.splitlines()}
    headers = [line for line in checked if line.startswith("State ")]
    assert headers == ["State 1: <initial state>", "State 2: Take(p=1)", "State 3: Take(p=2)",
                       "State 4: Take(p=3)"]
    steps = [line for line in checked if " -> " in line]
    assert "holders: {1} -> {1, 2}" in steps and "holders: {1, 2} -> {1, 2, 3}" in steps
    assert "holders = {}" in checked and "grid[2][1] = FALSE" in checked
    missing = [line for line in headers + steps if line not in in_show]
    assert not missing, missing


def test_check_report_prints_sets_in_braces(runner) -> None:
    r = runner.invoke(cli, ["check", "examples/two_phase_commit.py:TwoPhaseCommitBug", "-q"])
    assert r.exit_code == 1, r.output
    assert "tmPrepared = {}" in r.stdout and "msgPrepared: {} -> {1}" in r.stdout
    assert "tmPrepared: {} -> {1}" in r.stdout and "[]" not in r.stdout


def test_one_action_label(tokens) -> None:
    assert action_label("Heartbeat", {"b": 1}) == "Heartbeat(b=1)"
    assert action_label("Move", {"p": 2, "to": "LEADER"}) == "Move(p=2, to=LEADER)"
    assert action_label("Tick", {}) == "Tick"
    assert action_label(None, {}) == "<initial state>"
    _, spec, t = tokens
    labels = [action_label(s.action, s.params) for s in t.steps]
    assert labels[1:] == ["Take(p=1)", "Take(p=2)", "Take(p=3)"]
    assert [label for _, label, _ in evaluate(t, "taken")][1:] == labels[1:]
    assert re.findall(r"State \d+: (.*)", render_trace(t)) == labels
    edges = build_graph(spec).edges(data=True)
    assert edges and all(a["label"] == action_label(a["action"], _params(a["params"]))
                         for _, _, a in edges)
    assert {a["label"] for _, _, a in edges} == {"Take(p=1)", "Take(p=2)", "Take(p=3)"}


def _params(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (p.split("=") for p in text.split(", ") if p)}


def test_replay_names_the_closest_actions_with_parameter_names(bug_traces) -> None:
    spec, t = bug_traces["KRaftBrokerBugNoCatchUpCheck"]
    bare = Trace(t.vars, tuple(TraceStep(None, {}, s.state) for s in t.steps))
    rep = replay(spec, Trace(t.vars, bare.steps[:1] + bare.steps[2:]))
    assert not rep.ok
    closest = rep.message.splitlines()[1:]
    assert closest and all(re.match(r"  Start\(b=\d\) differs in ", line) for line in closest)


# --------------------------------------------------------------------------- eval


def test_eval_over_states(bug_traces) -> None:
    _, t = bug_traces["KRaftBrokerBugEpochReuse"]
    vals = evaluate(t, "offset[1] - regEpoch[1]")
    assert [v for _, _, v in vals][:3] == [0, 0, 0]
    assert vals[0][1] == "init" and vals[1][1].startswith("Start(b=")
    dup = evaluate(t, "regEpoch[1] == regEpoch[2] and regEpoch[1] > 0")
    assert [v for _, _, v in dup] == [False, False, False, False, True]
    agg = evaluate(t, "sorted(b for b in bstate if bstate[b] == 'STARTING')")
    assert agg[-1][2] == [1, 2]
    assert evaluate(t, "max(regEpoch.values()) + len(bstate)")[-1][2] == 3


@pytest.mark.parametrize("expr, message", [
    ("offset[1] -", "not valid Python"),
    ("ofset[1]", "unknown name 'ofset'"),
    ("open('x')", "unknown name 'open'"),
    ("__import__('os')", "name __import__ is not allowed"),
    ("regEpoch.__class__", "attribute .__class__ is not allowed"),
    ("'{0.__class__}'.format(1)", "attribute .format is not allowed"),
    ("offset[7]", r"in state 1 \(init\) failed with KeyError: 7"),
    ("1 // (logEnd - logEnd)", "ZeroDivisionError"),
])
def test_eval_errors(bug_traces, expr: str, message: str) -> None:
    _, t = bug_traces["KRaftBrokerBugEpochReuse"]
    with pytest.raises(ExpressionError, match=message):
        evaluate(t, expr)


# --------------------------------------------------------------------------- guards


def test_guard_conjuncts_report_each_operand() -> None:
    spec = bind_spec(KRAFT, SMALL)
    k = Kernel(spec, symmetry=False)
    init = k.initial_states()[0]
    reg = spec.action_by_label("Register", {"b": 1})
    assert reg is not None
    conj = guard_conjuncts(k, reg, init)
    assert [c.text for c in conj] == [
        "s.bstate[b] == STARTING", "s.bEpoch[b] == 0",
        "(s.regEpoch[b] == 0) | s.fenced[b] | (s.regInc[b] == s.inc[b])", "self.can_append(s)"]
    assert [c.value for c in conj] == [False, True, True, True]
    move = spec.action_by_label("MoveLeader", {"p": 1, "c": 0})
    assert move is not None
    conj = guard_conjuncts(k, move, init)
    assert conj[0].text == "b != 0" and conj[0].value is False
    assert ("b", 0) in [(n, int(v)) for n, v in conj[0].reads]  # a local of the action


def test_loading_errors_are_clear() -> None:
    with pytest.raises(TraceFileError, match="not a trace: expected an ITF trace"):
        loads_trace("{}")
    with pytest.raises(TraceFileError, match=r"invalid JSON"):
        loads_trace('{"vars": [')
    with pytest.raises(TraceFileError, match="duplicate key"):
        loads_trace('{"steps": [], "steps": []}')
    with pytest.raises(TraceFileError, match="invalid UTF-8"):
        loads_trace(b"\xff\xfe")
    with pytest.raises(TraceFileError, match=r"steps\[0\].state: unknown variable 'y'"):
        loads_trace(json.dumps({"vars": ["x"], "steps": [{"action": None, "params": {},
                                                          "state": {"x": 1, "y": 2}}]}))
    with pytest.raises(TraceFileError, match="run record has no counterexample"):
        loads_trace(json.dumps({"status": "ok", "violation": None}))
    with pytest.raises(TraceFileError, match=r"not a valid ITF trace: states\[0\]\.y: unknown"):
        loads_trace(json.dumps({"vars": ["x"], "states": [{"x": 1, "y": 2}]}))


def test_itf_trace_object_round_trip(bug_traces) -> None:
    _, t = bug_traces["KRaftBrokerBugGrantWithLeaders"]
    itf = trace_to_itf(t)
    assert isinstance(itf, ItfTrace)
    back = trace_from_itf(from_itf(to_itf(itf)))
    assert [s.state for s in back.steps] == [s.state for s in t.steps]
    assert back.file_format == "itf"
