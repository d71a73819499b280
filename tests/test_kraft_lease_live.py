"""The lease lifecycle under fairness (``KRaftLeaseLive``): pinned counts, verdicts, the
bug variants' lassos, and the verdicts against a brute-force oracle."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from modelcheck import check_liveness
from modelcheck.cli import cli
from modelcheck.temporal import fairness_conditions
from specs.kraft_lease import (
    KRaftLeaseLive,
    KRaftLeaseLiveBugHeartbeatAsLongAsLease,
    KRaftLeaseLiveBugNoRegistrationTimeout,
    KRaftLeaseLiveBugStuckPublisher,
)
from tests.lassocheck import check_lasso_generic, lasso_shape
from tests.livespec import weak_fair_verdicts

SPEC = "specs/kraft_lease.py"
PROPS = ["RegistrationResolves", "ControlledShutdownCompletes", "EventuallyUnfenced",
         "DeadBrokerEventuallyFenced", "EventuallyStaysUnfenced"]
HOLDS = {p: "holds" for p in PROPS}


def test_declarations_and_fairness() -> None:
    spec = KRaftLeaseLive()
    assert dict(spec.constants) == dict(
        N=2, P=1, MaxLag=2, MaxRestarts=1, MaxLate=1, Rogues=0, H=1, L=3, Lb=2, R=4,
        Sem=spec.constants["Sem"], RecoveryOnRegister=False, RejectExits=False)
    assert spec.constants["Sem"].name == "KIP631"
    assert [p.name for p in spec.temporal] == PROPS
    assert {p.name for p in spec.invariants} == {"FencedNotLeader", "FencedNotInIsr"}
    assert KRaftLeaseLive.symmetry == ()
    per_broker = ["Replay", "Register", "RegistrationTimeout", "Heartbeat", "SessionTimeout"]
    assert [c.name for c in fairness_conditions(spec)] == [
        *(f"WF({a}(b={b}))" for a in per_broker for b in (1, 2)),
        "WF(RogueRegisters)", "WF(RogueHeartbeat)", "WF(Tick)",
        *(f"WF({a}(b={b}))" for a in ("RegistrationRefused", "RecoveryDone", "LeaseLapse")
          for b in (1, 2))]


@pytest.mark.parametrize("consts, distinct, depth, edges", [
    ({}, 305_720, 51, 1_228_148),
    pytest.param(dict(Sem="K44"), 299_606, 51, 1_195_390, marks=pytest.mark.slow),
    pytest.param(dict(RecoveryOnRegister=True), 296_384, 45, 1_190_222,
                 marks=pytest.mark.slow),
    # no new state (a refusal ends where a timeout does), new edges
    pytest.param(dict(RejectExits=True), 305_720, 51, 1_315_906, marks=pytest.mark.slow),
], ids=["default", "K44", "recovery-on-register", "reject-exits"])
def test_the_fixed_spec_holds_every_property(consts, distinct, depth, edges) -> None:
    r = check_liveness(KRaftLeaseLive(**consts))
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth, r.liveness["edges"]) == (distinct, depth, edges)
    assert r.liveness["properties"] == HOLDS


VARIANTS = [
    (KRaftLeaseLiveBugNoRegistrationTimeout, 147_643, "RegistrationResolves",
     {"RegistrationResolves", "EventuallyUnfenced", "DeadBrokerEventuallyFenced",
      "EventuallyStaysUnfenced"},
     (13, 10, ["Tick", "Tick", "Tick", "RogueStart", "RogueRegisters", "RogueHeartbeat",
               "Tick", "Replay", "Replay", "Crash", "RogueHeartbeat", "Tick"])),
    (KRaftLeaseLiveBugStuckPublisher, 21_078, "ControlledShutdownCompletes",
     {"ControlledShutdownCompletes", "EventuallyStaysUnfenced"},
     (20, 16, ["Register", "Replay", "Heartbeat", "Tick", "RecoveryDone", "Heartbeat",
               "BeginControlledShutdown", "Replay", "Register", "Replay", "Replay",
               "Heartbeat", "Tick", "RecoveryDone", "Heartbeat", "Heartbeat", "Tick",
               "Heartbeat", "Heartbeat"])),
    (KRaftLeaseLiveBugHeartbeatAsLongAsLease, 32_620, "EventuallyStaysUnfenced",
     {"EventuallyStaysUnfenced"},
     (20, 12, ["Register", "Replay", "Heartbeat", "Tick", "Tick", "RecoveryDone",
               "Heartbeat", "Tick", "Tick", "Replay", "Crash", "LeaseLapse", "Heartbeat",
               "Tick", "Tick", "Heartbeat", "Tick", "Tick", "LeaseLapse"])),
]


@pytest.mark.parametrize("cls, distinct, first, violated, shape", VARIANTS,
                         ids=[v[0].__name__.removeprefix("KRaftLeaseLiveBug") for v in VARIANTS])
def test_bug_variants_fail_with_a_fair_lasso(cls, distinct, first, violated, shape) -> None:
    spec = cls()
    r = check_liveness(spec)
    assert r.status == "violation" and r.distinct_states == distinct
    assert {p for p, v in r.liveness["properties"].items() if v == "violated"} == violated
    v = r.violation
    assert v.kind == "liveness" and v.property == first
    assert lasso_shape(v) == shape
    check_lasso_generic(spec, v)


def test_the_lease_lapses_and_returns_on_the_loop() -> None:
    """H = Lb: on the loop broker 1 lapses to FENCED as its heartbeat falls due, and the
    heartbeat brings it back to RUNNING; the controller never fences it."""
    v = check_liveness(KRaftLeaseLiveBugHeartbeatAsLongAsLease()).violation
    loop = [s.state for s in v.trace[v.loop:]]
    assert {st["bstate"][1] for st in loop} == {"RUNNING", "FENCED"}
    assert not any(st["fenced"][1] for st in loop)
    assert [s.action for s in v.trace[v.loop + 1:]].count("LeaseLapse") == 1


def test_without_broker_leases_a_long_interval_is_harmless() -> None:
    r = check_liveness(KRaftLeaseLiveBugHeartbeatAsLongAsLease(Sem="K44"))
    assert r.status == "ok" and r.distinct_states == 30_542
    assert r.liveness["properties"] == HOLDS


def test_kip631_exit_resolves_a_registration_without_a_timeout() -> None:
    """001: a refused broker shuts down; that alone resolves the registration (the rogue
    holding id 1 still breaks the other promises about broker 1: a misconfiguration)."""
    spec = KRaftLeaseLiveBugNoRegistrationTimeout(RejectExits=True)
    r = check_liveness(spec)
    assert r.distinct_states == 147_643
    assert r.liveness["properties"] == {
        "RegistrationResolves": "holds", "ControlledShutdownCompletes": "holds",
        "EventuallyUnfenced": "violated", "DeadBrokerEventuallyFenced": "violated",
        "EventuallyStaysUnfenced": "violated"}
    check_lasso_generic(spec, r.violation)


@pytest.mark.parametrize("cls, consts, distinct", [
    (KRaftLeaseLive, dict(N=1), 532),
    (KRaftLeaseLive, dict(N=1, Sem="K44", RecoveryOnRegister=True, MaxRestarts=0), 145),
    (KRaftLeaseLiveBugHeartbeatAsLongAsLease, dict(N=1, MaxRestarts=1, MaxLate=1), 674),
    (KRaftLeaseLiveBugNoRegistrationTimeout, dict(N=1), 550),
    # two brokers (one's controlled shutdown waits for the other's stuck loader)
    pytest.param(KRaftLeaseLiveBugStuckPublisher, dict(MaxLag=1, R=1), 4_728,
                 marks=pytest.mark.slow),
], ids=["default", "K44-recovery-on-register", "heartbeat-as-long-as-lease",
        "no-registration-timeout", "stuck-publisher"])
def test_verdicts_match_the_brute_force_oracle(cls, consts, distinct) -> None:
    spec = cls(**consts)
    r = check_liveness(spec)
    assert r.distinct_states == distinct
    got = {n: v == "holds" for n, v in r.liveness["properties"].items()}
    assert got == weak_fair_verdicts(spec)
    assert not all(got.values()) if cls is not KRaftLeaseLive else all(got.values())


@pytest.mark.parametrize("variant", ["KRaftLeaseLiveBugNoRegistrationTimeout",
                                     "KRaftLeaseLiveBugHeartbeatAsLongAsLease"])
def test_cli_check_reports_the_lasso(variant) -> None:
    out = CliRunner().invoke(cli, ["check", f"{SPEC}:{variant}", "-q"])
    assert out.exit_code == 1, out.output
    assert "Temporal property" in out.output and "loops back to state" in out.output
