"""The message-level KRaft lifecycle spec: pinned counts, bug variants, replay, evaluators."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bruteforce import assert_replays, random_walk
from hypothesis import given, settings
from hypothesis import strategies as st

from invariants import lookup
from modelcheck import Explorer, explore
from modelcheck.cli import cli
from modelcheck.kernel import Kernel
from modelcheck.store import key_ints
from specs.kraft_lifecycle import (
    KRaftLifecycle,
    KRaftLifecycleBugEarlyShutdownGrant,
    KRaftLifecycleBugEpochOnlyOnElection,
    KRaftLifecycleBugFenceKeepsLeader,
    KRaftLifecycleBugLiveReregistration,
    KRaftLifecycleBugNoIncarnationCheck,
    KRaftLifecycleBugNoOffsetCheck,
    KRaftLifecycleBugStaleEpoch,
)

SPEC = "specs/kraft_lifecycle.py"
DEFAULT: dict[str, int] = {}  # N=2, P=1, MaxLog=4, MaxRestarts=1, MaxDelays=1
SMALL = dict(MaxLog=3)
# long enough for an ISR expansion and a granted controlled shutdown with a leader
# move, without restarts or delays: the configuration of the early-grant bug
GRANT = dict(MaxLog=6, MaxRestarts=0, MaxDelays=0)

ALL_PROPERTIES = {
    "UniqueEpochs", "CaughtUpBeforeUnfence", "ReportedCaughtUpBeforeUnfence",
    "FencedNotLeader", "FencedNotInIsr", "RegisteredIncarnationHoldsEpoch",
    "RunningHoldsEpoch", "EpochMonotonic", "NoStaleRequestEffect", "LeaderEpochMonotonic",
    "ControlledShutdownSafe", "SingleLiveRegistration",
}


def test_defaults_and_declarations() -> None:
    spec = KRaftLifecycle()
    assert dict(spec.constants) == dict(N=2, P=1, MaxLog=4, MaxRestarts=1, MaxDelays=1)
    assert KRaftLifecycle.symmetry == ("Brokers",)
    assert not KRaftLifecycle.check_deadlock
    names = {p.name for p in spec.invariants} | {p.name for p in spec.properties}
    assert names == ALL_PROPERTIES
    # every cell that names a broker is typed, so that brokers can be permuted
    for var in ("leader", "logBroker"):
        assert {c.ref for c in spec.layout.cells if c.var == var} == {"Brokers"}
    assert {c.kind for c in spec.layout.cells if c.var == "isr"} == {"set"}
    # one initial state per choice of each partition's last ISR member
    assert len(Kernel(spec, symmetry=False).initial_states()) == 2
    assert len(Kernel(KRaftLifecycle(N=3, P=2), symmetry=False).initial_states()) == 9


@pytest.mark.parametrize(
    "consts, distinct, depth, never",
    [
        (DEFAULT, 926_523, 24, {"IsrExpand"}),
        (SMALL, 151_335, 20, {"IsrExpand"}),
        (GRANT, 331_331, 27, {"RegistrationTimesOut", "HeartbeatTimesOut", "DropDelayed",
                              "ControllerHandlesDelayedRegistration",
                              "ControllerHandlesDelayedHeartbeat"}),
    ],
    ids=["default", "MaxLog3", "MaxLog6-no-faults"],
)
def test_counts(consts: dict, distinct: int, depth: int, never: set[str]) -> None:
    r = explore(KRaftLifecycle(**consts))
    assert r.status == "ok"
    assert r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert set(r.checked["invariants"]) | set(r.checked["properties"]) == ALL_PROPERTIES
    assert {c.name for c in r.coverage if c.fired == 0} == never


def test_counts_longer_log_is_benchmarked() -> None:
    """MaxLog=5 (5,433,538 classes, depth 28, every action fired; ~80 s on one core) is
    a row of benchmarks/large_configs.py, checked as this test did; the configurations
    of test_counts run the same spec and fire every action between them (IsrExpand in
    MaxLog6-no-faults, every other one in the defaults)."""
    from benchmarks.large_configs import ROWS

    assert ROWS["lifecycle-maxlog5"] == dict(
        test="tests/test_kraft_lifecycle.py", spec="specs.kraft_lifecycle:KRaftLifecycle",
        consts=dict(MaxLog=5), distinct=5_433_538, depth=28, all_fired=True)


BUGS = [
    # (variant, constants, violated property, also violated, states, actions after Start)
    (KRaftLifecycleBugLiveReregistration, DEFAULT, "SingleLiveRegistration", set(), 9,
     ["Register", "Replay", "Heartbeat", "Heartbeat", "Crash", "Start", "Register"]),
    (KRaftLifecycleBugNoIncarnationCheck, DEFAULT, "RegisteredIncarnationHoldsEpoch", set(),
     9, ["Register", "Replay", "Heartbeat", "Heartbeat", "Crash", "Start", "Register"]),
    (KRaftLifecycleBugNoOffsetCheck, DEFAULT, "CaughtUpBeforeUnfence",
     {"ReportedCaughtUpBeforeUnfence"}, 5, ["Register", "Heartbeat", "Heartbeat"]),
    (KRaftLifecycleBugStaleEpoch, DEFAULT, "NoStaleRequestEffect", set(), 9,
     ["RegistrationTimesOut", "Crash", "Start", "Register", "Replay",
      "ControllerHandlesDelayedRegistration", "Heartbeat"]),
    (KRaftLifecycleBugFenceKeepsLeader, DEFAULT, "FencedNotLeader", {"FencedNotInIsr"}, 7,
     ["Register", "Replay", "Heartbeat", "Heartbeat", "SessionTimeout"]),
    (KRaftLifecycleBugEpochOnlyOnElection, DEFAULT, "LeaderEpochMonotonic", set(), 7,
     ["Register", "Replay", "Heartbeat", "Heartbeat", "SessionTimeout"]),
    (KRaftLifecycleBugEarlyShutdownGrant, GRANT, "ControlledShutdownSafe", set(), 15, None),
]


@pytest.mark.parametrize("cls, consts, prop, also, length, actions", BUGS,
                         ids=[b[0].__name__.removeprefix("KRaftLifecycle") for b in BUGS])
def test_bug_variants(cls, consts, prop, also, length, actions) -> None:
    spec = cls(**consts)
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert v.property == prop
    assert set(v.also_violated) == also
    assert len(v.trace) == length
    assert v.trace[0].action is None
    if actions is not None:
        assert [s.action for s in v.trace[2:]] == actions
    assert_replays(spec, v.trace)


def _bug_variants() -> list[type]:
    """Every bug variant the spec module defines (discovered, not listed)."""
    import inspect

    import specs.kraft_lifecycle as module

    return [c for _, c in inspect.getmembers(module, inspect.isclass)
            if issubclass(c, module.KRaftLifecycle) and c.__module__ == module.__name__
            and "Bug" in c.__name__]


def test_every_bug_variant_has_an_expected_violation() -> None:
    assert len(_bug_variants()) >= 5
    assert set(_bug_variants()) == {b[0] for b in BUGS}


@pytest.mark.parametrize("cls", _bug_variants(), ids=lambda c: c.__name__)
def test_bug_variants_fail_with_their_own_defaults(runner, cls) -> None:
    """``modelcheck check specs/kraft_lifecycle.py:<variant>``, no options: a violation of
    the property the variant breaks."""
    prop = {b[0]: b[2] for b in BUGS}[cls]
    r = runner.invoke(cli, ["check", f"{SPEC}:{cls.__name__}", "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["status"] == "violation"
    assert out["violation"]["property"] == prop


def test_early_grant_trace_moves_leadership_then_grants() -> None:
    spec = KRaftLifecycleBugEarlyShutdownGrant(**GRANT)
    v = explore(spec).violation
    acts = [s.action for s in v.trace]
    assert "BeginControlledShutdown" in acts
    cs = acts.index("BeginControlledShutdown")
    # the controlled-shutdown batch moves the broker's leadership, then a later
    # heartbeat is granted although an active broker has not replayed that batch
    last = v.trace[-1].state
    (b,) = [b for b, st in last["bstate"].items() if st == "SHUTTING_DOWN"]
    assert any(s.state["csOffset"][b] != 0 for s in v.trace[cs:])
    assert last["fenced"][b] and last["leader"] == {1: 0}


def test_early_grant_needs_a_longer_log() -> None:
    # registrations, unfences, the controlled-shutdown batch and the grant: six batches
    assert explore(KRaftLifecycleBugEarlyShutdownGrant(**dict(GRANT, MaxLog=5))).status == "ok"


@pytest.mark.parametrize("cls, consts, prop, also, length, actions", BUGS,
                         ids=[b[0].__name__.removeprefix("KRaftLifecycle") for b in BUGS])
def test_bug_variants_cli(runner, cls, consts, prop, also, length, actions) -> None:
    args = [f"--const={k}={v}" for k, v in consts.items()]
    r = runner.invoke(cli, ["check", f"{SPEC}:{cls.__name__}", *args, "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["violation"]["property"] == prop
    assert out["violation"]["trace_length"] == length


def test_superseded_registration_finding() -> None:
    """Kafka's rule accepts a registration whenever the stored one is fenced: a delayed
    registration of a dead incarnation replaces a newer incarnation's registration."""
    spec = KRaftLifecycle()
    r = Explorer(spec, invariants=["NoSupersededRegistration"]).run()
    assert r.status == "violation"
    v = r.violation
    assert v.property == "NoSupersededRegistration"
    assert [s.action for s in v.trace[1:]] == [
        "Start", "RegistrationTimesOut", "Crash", "Start", "Register",
        "ControllerHandlesDelayedRegistration"]
    last = v.trace[-1].state
    (b,) = [b for b, i in last["inc"].items() if i == 2]
    assert last["regInc"][b] == 1 and last["bEpoch"][b] == 1 != last["regEpoch"][b]
    assert_replays(spec, v.trace)


def test_library_predicates_by_name() -> None:
    for name in ("FencedNotLeader", "FencedNotInIsr", "LeaderEpochMonotonic",
                 "NoStaleRequestEffect", "NoSupersededRegistration", "ControlledShutdownSafe",
                 "SingleLiveRegistration", "RegisteredIncarnationHoldsEpoch"):
        p = lookup(name)
        assert p is not None and p.name == name


# --------------------------------------------------------------------------- evaluators

EVAL_SPECS = [
    KRaftLifecycle(),
    KRaftLifecycle(N=3, P=1, MaxLog=5, MaxRestarts=2, MaxDelays=2),
    KRaftLifecycleBugStaleEpoch(N=2, P=2, MaxLog=5),
    KRaftLifecycleBugFenceKeepsLeader(N=3, P=1, MaxLog=5),
]


@settings(max_examples=20, deadline=None)
@given(spec_index=st.integers(0, len(EVAL_SPECS) - 1),
       walks=st.lists(st.tuples(st.integers(0, 8), st.lists(st.integers(0, 1000), max_size=30)),
                      min_size=1, max_size=4))
def test_batch_and_scalar_agree(spec_index: int, walks: list) -> None:
    spec = EVAL_SPECS[spec_index]
    k = Kernel(spec, symmetry=False)
    states = [random_walk(k, w, start) for start, w in walks]
    ex = k.expand(np.stack([spec.layout.pack(c) for c in states]))
    for row, cells in enumerate(states):
        scalar = sorted((inst.id, k.fingerprint(nxt)) for inst, nxt in k.successors(cells))
        mine = ex.parent_rows == row
        assert sorted(zip(ex.action_ids[mine].tolist(), key_ints(ex.child_fps[mine]))) == scalar
        bad = {k.invariants[j].name for j, rows in enumerate(ex.invariant_rows) if row in rows}
        assert bad == {p.name for p in k.check_invariants(cells)}
        hits = set()
        for j, (rows, acts, fps) in enumerate(ex.property_hits):
            hits |= {(k.properties[j].name, int(a), f)
                     for r, a, f in zip(rows, acts, key_ints(fps)) if r == row}
        scalar_hits = {(p.name, inst.id, k.fingerprint(nxt))
                       for inst, nxt in k.successors(cells)
                       for p in k.check_properties(cells, nxt)}
        assert hits == scalar_hits


@pytest.mark.parametrize("consts, reduced, full", [(SMALL, 151_335, 302_670),
                                                   (GRANT, 331_331, 662_662)],
                         ids=["MaxLog3", "MaxLog6-no-faults"])
def test_counts_without_symmetry(consts: dict, reduced: int, full: int) -> None:
    spec = KRaftLifecycle(**consts)
    r_full = explore(spec, symmetry=False)
    r_red = explore(spec)
    assert (r_red.distinct_states, r_full.distinct_states) == (reduced, full)
    assert r_full.depth == r_red.depth
    assert r_full.symmetry == [] and r_red.symmetry == ["Brokers"]


@pytest.mark.parametrize("cls, consts, prop, also, length, actions", BUGS[:4],
                         ids=[b[0].__name__.removeprefix("KRaftLifecycle") for b in BUGS[:4]])
def test_bug_variants_same_verdict_without_symmetry(cls, consts, prop, also, length,
                                                    actions) -> None:
    spec = cls(**consts)
    r = explore(spec, symmetry=False)
    assert r.status == "violation"
    assert r.violation.property == prop and len(r.violation.trace) == length
    assert_replays(spec, r.violation.trace)
