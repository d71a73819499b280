"""The KRaft lease spec: pinned counts, the oracle, bug variants, the re-fencing finding."""

from __future__ import annotations

import inspect
import json

import pytest
from bruteforce import assert_replays, brute_force

import specs.kraft_lease as module
from modelcheck import Explorer, explore
from modelcheck.cli import cli
from specs.kraft_lease import (
    KRaftLease,
    KRaftLeaseBugLeaseOutlivesSession,
    KRaftLeaseBugNoOffsetRegressionCheck,
    KRaftLeaseBugUnfenceIgnoresWantFence,
)

SPEC = "specs/kraft_lease.py"
DEFAULT: dict = {}  # N=2 P=1 MaxLog=3 MaxRestarts=0 MaxDelays=1 H=1 L=2 Lb=1 R=2, KIP631, 004
# 000's RECOVERY on the registration response
ON_REGISTER = dict(RecoveryOnRegister=True)
# a restart, so that a registration can be refused: 004's retry, and 001's exit with
# 000's recovery (an unfence, a crash and a refused re-registration fit in two batches)
RESTART = dict(MaxLog=2, MaxRestarts=1)
RESTART_001 = dict(MaxLog=2, MaxRestarts=1, RejectExits=True, RecoveryOnRegister=True)
# no delays, two batches: the brute-force oracle's configuration
TINY = dict(MaxLog=2, MaxDelays=0)

PROPERTIES = {
    "UniqueEpochs", "CaughtUpBeforeUnfence", "ReportedCaughtUpBeforeUnfence",
    "FencedNotLeader", "FencedNotInIsr", "RegisteredIncarnationHoldsEpoch",
    "RunningHoldsEpoch", "EpochMonotonic", "NoStaleRequestEffect", "LeaderEpochMonotonic",
    "ControlledShutdownSafe", "SingleLiveRegistration",
    "NoUnfenceBeforeRecovery", "InOrderHeartbeatEffect", "NoStaleRefence", "NoSplitServing",
    "RunningImpliesUnfenced",
}


def test_defaults_and_declarations() -> None:
    spec = KRaftLease()
    c = dict(spec.constants)
    assert {k: c[k] for k in ("N", "P", "MaxLog", "MaxRestarts", "MaxDelays", "H", "L",
                              "Lb", "R")} == dict(N=2, P=1, MaxLog=3, MaxRestarts=0,
                                                  MaxDelays=1, H=1, L=2, Lb=1, R=2)
    assert c["Sem"] == module.Semantics.KIP631
    assert not c["RecoveryOnRegister"] and not c["RejectExits"]
    assert KRaftLease.symmetry == ("Brokers",)
    assert {p.name for p in spec.invariants} | {p.name for p in spec.properties} == PROPERTIES


@pytest.mark.parametrize("consts, distinct, depth", [
    (DEFAULT, 277_716, 23),
    (ON_REGISTER, 331_222, 22),
    (RESTART, 257_451, 20),
    (RESTART_001, 325_143, 20),
], ids=["default", "recovery-on-register", "restart", "restart-001"])
def test_counts(consts: dict, distinct: int, depth: int) -> None:
    r = explore(KRaftLease(**consts))
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert set(r.checked["invariants"]) | set(r.checked["properties"]) == PROPERTIES


@pytest.mark.parametrize("sem, distinct", [("KIP631", 3_571), ("K44", 3_493)])
def test_tiny_counts_match_the_brute_force_oracle(sem: str, distinct: int) -> None:
    spec = KRaftLease(Sem=sem, **TINY)
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == (distinct, 16)
    assert brute_force(spec, spec.symmetry_sets()) == (distinct, 16)


def test_the_seeds_disagreements_change_the_state_space() -> None:
    """Each semantics constant is exercised: a refused registration exists only with a
    restart, and the exit makes states the retry does not."""
    a = explore(KRaftLease(**RESTART))
    b = explore(KRaftLease(**dict(RESTART, RejectExits=True)))
    assert a.status == b.status == "ok" and a.distinct_states != b.distinct_states


BUGS = [
    # (variant, violated property, states, actions after the initial state)
    (KRaftLeaseBugUnfenceIgnoresWantFence, "NoUnfenceBeforeRecovery", 5,
     ["Start", "Register", "Replay", "Heartbeat"]),
    (KRaftLeaseBugNoOffsetRegressionCheck, "InOrderHeartbeatEffect", 7,
     ["Start", "Register", "HeartbeatTimesOut", "Replay", "Heartbeat",
      "ControllerHandlesDelayedHeartbeat"]),
    (KRaftLeaseBugLeaseOutlivesSession, "RunningImpliesUnfenced", 11,
     ["Start", "Register", "Replay", "Heartbeat", "RecoveryDone", "Heartbeat", "Tick",
      "HeartbeatTimesOut", "Tick", "SessionTimeout"]),
]


def _bug_variants() -> list[type]:
    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, KRaftLease) and c.__module__ == module.__name__
            and "Bug" in c.__name__]


def test_every_bug_variant_has_an_expected_violation() -> None:
    assert set(_bug_variants()) == {b[0] for b in BUGS}


@pytest.mark.parametrize("cls, prop, length, actions", BUGS,
                         ids=[b[0].__name__.removeprefix("KRaftLease") for b in BUGS])
def test_bug_variants(cls, prop, length, actions) -> None:
    spec = cls()
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert v.property == prop and len(v.trace) == length
    assert [s.action for s in v.trace[1:]] == actions
    assert_replays(spec, v.trace)


@pytest.mark.parametrize("cls", _bug_variants(), ids=lambda c: c.__name__)
def test_bug_variants_fail_with_their_own_defaults(runner, cls) -> None:
    """``modelcheck check specs/kraft_lease.py:<variant>``, no options."""
    prop, length = {b[0]: (b[1], b[2]) for b in BUGS}[cls]
    r = runner.invoke(cli, ["check", f"{SPEC}:{cls.__name__}", "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["violation"]["property"] == prop
    assert out["violation"]["trace_length"] == length


def test_refencing_finding_under_kafka_44() -> None:
    """002's check ignores only a lower offset: a timed-out wantFence heartbeat, handled
    after the broker was unfenced, fences the RUNNING broker (Sem=K44)."""
    spec = KRaftLease(Sem="K44")
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert v.property == "NoStaleRefence"
    assert set(v.also_violated) == {"RunningImpliesUnfenced"}
    assert [s.action for s in v.trace[1:]] == [
        "Start", "Register", "Replay", "Heartbeat", "HeartbeatTimesOut", "RecoveryDone",
        "Heartbeat", "ControllerHandlesDelayedHeartbeat"]
    before, after = v.trace[-2].state, v.trace[-1].state
    (b,) = [b for b, st in after["bstate"].items() if st == "RUNNING"]
    assert not before["fenced"][b] and after["fenced"][b]
    assert before["zWantFence"][b] and before["zOffset"][b] == before["reported"][b]
    assert_replays(spec, v.trace)


def test_kip631_semantics_never_refence() -> None:
    r = Explorer(KRaftLease(), invariants=["NoStaleRefence"]).run()
    assert r.status == "ok"


@pytest.mark.slow
@pytest.mark.parametrize("cls, consts, length", [
    (KRaftLeaseBugLeaseOutlivesSession, dict(MaxLog=6), 24),
    (KRaftLease, dict(MaxLog=6, Sem="K44"), 22),
], ids=["lease-outlives-session", "K44"])
def test_split_serving_needs_six_batches(cls, consts, length) -> None:
    """Two registrations, two unfences, an ISR expansion and the fence: a second broker
    serves while the first still believes it leads."""
    spec = cls(**consts)
    r = Explorer(spec, invariants=["NoSplitServing"]).run()
    assert r.status == "violation" and len(r.violation.trace) == length
    assert_replays(spec, r.violation.trace)
