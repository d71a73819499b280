"""The KRaft lifecycle under fairness: pinned counts, verdicts, bug variants' lassos."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from invariants import lookup
from modelcheck import check_liveness
from modelcheck.cli import cli
from modelcheck.config import CheckConfig
from modelcheck.temporal import fairness_conditions
from specs.kraft_lifecycle_live import (
    KRaftLifecycleLive,
    KRaftLifecycleLiveBugNoRegistrationTimeout,
    KRaftLifecycleLiveBugStuckPublisher,
)
from tests.lassocheck import check_lasso_generic, lasso_shape

SPEC = "specs/kraft_lifecycle_live.py"
PROPS = ["RegistrationResolves", "ControlledShutdownCompletes", "EventuallyUnfenced",
         "DeadBrokerEventuallyFenced"]
HOLDS = {p: "holds" for p in PROPS}


def test_declarations_and_fairness() -> None:
    spec = KRaftLifecycleLive()
    assert dict(spec.constants) == dict(N=2, P=1, MaxLag=2, MaxRestarts=1, MaxLate=1, Rogues=0)
    assert [p.name for p in spec.temporal] == PROPS
    assert {p.name for p in spec.invariants} == {"FencedNotLeader", "FencedNotInIsr"}
    assert [c.name for c in fairness_conditions(spec)] == [
        "WF(Replay(b=1))", "WF(Replay(b=2))", "WF(Register(b=1))", "WF(Register(b=2))",
        "WF(RegistrationTimeout(b=1))", "WF(RegistrationTimeout(b=2))",
        "WF(Heartbeat(b=1))", "WF(Heartbeat(b=2))", "WF(SessionTimeout(b=1))",
        "WF(SessionTimeout(b=2))", "WF(RogueRegisters)", "WF(RogueHeartbeat)"]


@pytest.mark.parametrize("consts, distinct, depth, edges", [
    ({}, 25_754, 37, 97_048),
    (dict(MaxLag=3), 50_662, 39, None),
])
def test_the_fixed_spec_holds_every_property(consts, distinct, depth, edges) -> None:
    r = check_liveness(KRaftLifecycleLive(**consts))
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert r.liveness["properties"] == HOLDS
    if edges is not None:
        assert r.liveness["edges"] == edges


def test_the_registration_timeout_resolves_a_rogue_duplicate() -> None:
    """With a rogue process claiming id 1, the fixed spec's timeout still resolves the
    real broker's registration; the rogue holding the id breaks the other promises
    about broker 1 (a misconfiguration, not a protocol bug)."""
    r = check_liveness(KRaftLifecycleLive(Rogues=1))
    assert r.distinct_states == 136_054
    assert r.liveness["properties"] == {
        "RegistrationResolves": "holds", "ControlledShutdownCompletes": "violated",
        "EventuallyUnfenced": "violated", "DeadBrokerEventuallyFenced": "violated"}
    check_lasso_generic(KRaftLifecycleLive(Rogues=1), r.violation)


VARIANTS = [
    (KRaftLifecycleLiveBugNoRegistrationTimeout, 136_054, "RegistrationResolves",
     {"RegistrationResolves", "ControlledShutdownCompletes", "EventuallyUnfenced",
      "DeadBrokerEventuallyFenced"},
     (7, 6, ["RogueStart", "RogueRegisters", "Replay", "RogueHeartbeat", "Replay", "Crash"])),
    (KRaftLifecycleLiveBugStuckPublisher, 25_152, "ControlledShutdownCompletes",
     {"ControlledShutdownCompletes"},
     (13, 12, ["Register", "Replay", "Heartbeat", "Heartbeat", "BeginControlledShutdown",
               "Replay", "Replay", "Register", "Replay", "Heartbeat", "Heartbeat",
               "Heartbeat"])),
]


@pytest.mark.parametrize("cls, distinct, first, violated, shape", VARIANTS)
def test_bug_variants_fail_with_a_fair_lasso(cls, distinct, first, violated, shape) -> None:
    spec = cls()
    r = check_liveness(spec)
    assert r.status == "violation" and r.distinct_states == distinct
    assert {p for p, v in r.liveness["properties"].items() if v == "violated"} == violated
    v = r.violation
    assert v.kind == "liveness" and v.property == first
    assert lasso_shape(v) == shape
    check_lasso_generic(spec, v)
    for name in sorted(violated - {first}):
        alone = check_liveness(spec, temporal=[p for p in spec.temporal if p.name == name])
        check_lasso_generic(spec, alone.violation)


def test_stuck_publisher_lasso_ends_with_a_waiting_controlled_shutdown() -> None:
    v = check_liveness(KRaftLifecycleLiveBugStuckPublisher()).violation
    last = v.trace[-1].state
    assert last["bstate"][1] == "PENDING_CONTROLLED_SHUTDOWN" and last["cs"][1]
    assert last["csWait"][1] == {2} and last["bstate"][2] == "RUNNING"
    assert not last["fenced"][2] and last["lag"][2] == 2


@pytest.mark.parametrize("variant", ["KRaftLifecycleLiveBugNoRegistrationTimeout",
                                     "KRaftLifecycleLiveBugStuckPublisher"])
def test_cli_check_reports_the_lasso(variant) -> None:
    out = CliRunner().invoke(cli, ["check", f"{SPEC}:{variant}", "-q"])
    assert out.exit_code == 1, out.output
    assert "Temporal property" in out.output and "stutters forever" in out.output


def test_library_temporal_properties_by_name() -> None:
    decl = lookup("EventuallyUnfenced")
    assert decl is not None and decl.kind == "temporal" and decl.form == "leads_to"
    r = check_liveness(KRaftLifecycleLive(),
                       CheckConfig(invariants=("EventuallyUnfenced", "FencedNotLeader")))
    assert r.liveness["properties"] == {"EventuallyUnfenced": "holds"}
    out = CliRunner().invoke(cli, ["check", f"{SPEC}:KRaftLifecycleLiveBugStuckPublisher",
                                   "--invariant", "ControlledShutdownCompletes",
                                   "--format", "json"])
    assert out.exit_code == 1
    assert json.loads(out.output[out.output.index("{\n"):])["liveness"]["properties"] == {
        "ControlledShutdownCompletes": "violated"}
