"""The ZooKeeper-era controller spec: pinned counts, bug variants, the open question, orbits."""

from __future__ import annotations

import inspect
import json

import pytest
from bruteforce import assert_replays, brute_force

import specs.zk_controller as module
from invariants import lookup
from modelcheck import Explorer, explore
from modelcheck.cli import cli
from specs.zk_controller import (
    ZkController,
    ZkControllerBugElectBeforeLoad,
    ZkControllerBugIsrJoinBeforeCaughtUp,
    ZkControllerBugNoCasWrites,
    ZkControllerBugNoControllerEpochCheck,
    ZkControllerBugNonAtomicEpochBump,
    ZkControllerEpochOnlyFencing,
    ZkControllerUnclean,
)

SPEC = "specs/zk_controller.py"
DEFAULT: dict[str, int] = {}  # N=2, P=1, MaxCE=2, MaxLE=2, MaxPV=3, MaxData=2, MaxExpiries=1
# a zombie controller, one leader election, one record: the brute-force oracle's config
SMALL = dict(MaxLE=1, MaxPV=1, MaxData=1)
# one controller epoch (sessions expire, no second controller): a fast oracle run
TINY = dict(MaxCE=1, MaxLE=1, MaxPV=1, MaxData=1)

ALL_PROPERTIES = {
    "UniqueControllerEpoch", "ControllerEpochGrows", "NoStaleControllerEffect",
    "MetadataEpochMonotonic", "OneLeaderPerEpoch", "LeaderInIsr", "IsrHoldsCommitted",
    "CommittedNotLost",
}


def test_defaults_and_declarations() -> None:
    spec = ZkController()
    assert dict(spec.constants) == dict(N=2, P=1, MaxCE=2, MaxLE=2, MaxPV=3, MaxData=2,
                                        MaxExpiries=1, MaxCrashes=0, Unclean=False,
                                        FenceZkWrites=True)
    assert ZkController.symmetry == ("Brokers",)
    assert {p.name for p in spec.invariants} | {p.name for p in spec.properties} \
        == ALL_PROPERTIES
    for name in ALL_PROPERTIES:
        p = lookup(name)
        assert p is not None and p.name == name


@pytest.mark.parametrize(
    "consts, distinct, depth, full, never",
    [
        (DEFAULT, 311_298, 24, 622_594, {"Crash", "Start"}),
        # one znode write: the leader election, no ISR change
        (SMALL, 30_274, 18, 60_546, {"Crash", "Start", "ShrinkIsr", "ExpandIsr"}),
        (TINY, 5_336, 14, 10_670, {"Crash", "Start", "ShrinkIsr", "ExpandIsr"}),
    ],
    ids=["default", "small", "tiny"],
)
def test_counts(consts: dict, distinct: int, depth: int, full: int, never: set[str]) -> None:
    spec = ZkController(**consts)
    r = explore(spec)
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert set(r.checked["invariants"]) | set(r.checked["properties"]) == ALL_PROPERTIES
    assert {c.name for c in r.coverage if c.fired == 0} == never
    r_full = explore(spec, symmetry=False)
    assert (r_full.distinct_states, r_full.depth) == (full, depth)


def test_tiny_counts_match_the_brute_force_oracle() -> None:
    """Orbits and full states by the naive BFS (values, no packing, no symmetry module).
    (The "small" configuration's counts were checked the same way once, 30,274 orbits
    and 60,546 states; at 4-5 minutes a run that check is not part of the suite.)"""
    spec = ZkController(**TINY)
    assert brute_force(spec, spec.symmetry_sets()) == (5_336, 14)
    assert brute_force(spec) == (10_670, 14)


def test_a_crash_is_explored_on_the_tiny_configuration() -> None:
    """Crash and Start fire (as in the benchmarked configuration below), on the tiny
    configuration with one crash; the defaults above fire every other action."""
    r = explore(ZkController(**TINY, MaxCrashes=1))
    assert r.status == "ok"
    assert {c.name for c in r.coverage if c.fired == 0} == {"ShrinkIsr", "ExpandIsr"}
    assert r.distinct_states > 5_336  # more than without the crash (test_counts)


def test_with_a_crash_and_two_expiries_is_benchmarked() -> None:
    """The defaults with a crash and two expiries (3,491,049 classes, depth 27, every
    action fired; ~80 s on one core) are a row of benchmarks/large_configs.py, checked as
    this test did; the configurations above run the same spec and fire every action
    between them (Crash and Start with the tiny configuration's crash)."""
    from benchmarks.large_configs import ROWS

    assert ROWS["zk-crash"] == dict(
        test="tests/test_zk_controller.py", spec="specs.zk_controller:ZkController",
        consts=dict(MaxCrashes=1, MaxExpiries=2), distinct=3_491_049, depth=27,
        all_fired=True)


# (variant, violated property, also violated, trace length, actions): the shortest
# counterexample that ends in the smallest fingerprint (two-word states: exact keys;
# symmetry's canonical form by signatures picks the orbit's representative)
BUGS = [
    (ZkControllerBugNonAtomicEpochBump, "UniqueControllerEpoch", set(), 4,
     ["ElectController", "Expire", "ElectController"]),
    (ZkControllerBugNoControllerEpochCheck, "NoStaleControllerEffect", set(), 10,
     ["ElectController", "Load", "ElectLeader", "Expire", "ElectController", "Load",
      "Broadcast", "DeliverUM", "DeliverLAIR"]),
    (ZkControllerBugNoCasWrites, "MetadataEpochMonotonic", set(), 11,
     ["ElectController", "Expire", "Reconnect", "ElectController", "Load", "Load",
      "ElectLeader", "DeliverUM", "Broadcast", "DeliverUM"]),
    (ZkControllerBugElectBeforeLoad, "MetadataEpochMonotonic", set(), 9,
     ["ElectController", "Load", "ElectLeader", "Expire", "ElectController", "DeliverUM",
      "Broadcast", "DeliverUM"]),
    (ZkControllerBugIsrJoinBeforeCaughtUp, "IsrHoldsCommitted", set(), 10,
     ["ElectController", "Load", "ElectLeader", "DeliverLAIR", "DeliverLAIR", "Produce",
      "ShrinkIsr", "Commit", "ExpandIsr"]),
    (ZkControllerUnclean, "IsrHoldsCommitted", {"CommittedNotLost"}, 10,
     ["ElectController", "Load", "ElectLeader", "Expire", "DeliverLAIR", "Produce",
      "ShrinkIsr", "Commit", "ElectLeader"]),
    (ZkControllerEpochOnlyFencing, "MetadataEpochMonotonic", set(), 11,
     ["ElectController", "Expire", "Reconnect", "ElectController", "Load", "Load",
      "ElectLeader", "DeliverUM", "Broadcast", "DeliverUM"]),
]
IDS = [b[0].__name__.removeprefix("ZkController") for b in BUGS]


@pytest.mark.parametrize("cls, prop, also, length, actions", BUGS, ids=IDS)
def test_bug_variants(cls, prop, also, length, actions) -> None:
    spec = cls()
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert (v.property, set(v.also_violated), len(v.trace)) == (prop, also, length)
    assert [s.action for s in v.trace[1:]] == actions
    assert_replays(spec, v.trace)


def test_every_variant_is_listed() -> None:
    variants = {c for _, c in inspect.getmembers(module, inspect.isclass)
                if issubclass(c, ZkController) and c is not ZkController
                and c.__module__ == module.__name__}
    assert variants == {b[0] for b in BUGS}
    assert len([c for c in variants if "Bug" in c.__name__]) == 5


@pytest.mark.parametrize("cls, prop, also, length, actions", BUGS, ids=IDS)
def test_variants_fail_with_their_own_defaults(runner, cls, prop, also, length,
                                               actions) -> None:
    """``modelcheck check specs/zk_controller.py:<variant>``, no options."""
    r = runner.invoke(cli, ["check", f"{SPEC}:{cls.__name__}", "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["violation"]["property"] == prop
    assert out["violation"]["trace_length"] == length


def test_unclean_election_loses_committed_data() -> None:
    """The last step elects a live replica outside the ISR whose log is shorter than
    the high watermark: CommittedNotLost fails by design."""
    v = explore(ZkControllerUnclean()).violation
    before, last = v.trace[-2].state, v.trace[-1].state
    (nl,) = [b for b in last["leo"] if last["zkLeader"][1] == b]
    assert nl not in before["zkIsr"][1] and not (set(before["zkIsr"][1]) & set(before["zkLive"]))
    assert last["leo"][nl][1] < last["committed"][1]
    assert last["zkIsr"][1] == {nl}


def test_no_cas_writes_elects_two_leaders_in_one_epoch() -> None:
    """Without conditional writes the zombie and the new controller both elect a leader
    in leader epoch 1, and each elected broker believes it leads."""
    spec = ZkControllerBugNoCasWrites()
    r = Explorer(spec, invariants=["OneLeaderPerEpoch"]).run()
    v = r.violation
    assert v.property == "OneLeaderPerEpoch" and len(v.trace) == 11
    acts = [s.action for s in v.trace[1:]]
    assert acts.count("ElectLeader") == 2
    electors = {s.params["c"] for s in v.trace if s.action == "ElectLeader"}
    assert electors == {1, 2}
    last = v.trace[-1].state
    assert last["rLeader"] == {1: {1: 1}, 2: {1: 2}} and last["rLE"] == {1: {1: 1}, 2: {1: 1}}
    assert_replays(spec, v.trace)
    # the znode version stops it: the same run with conditional writes passes that check
    ok = Explorer(ZkControllerEpochOnlyFencing(), invariants=["OneLeaderPerEpoch"]).run()
    assert ok.status == "ok"


def test_open_question_zombie_writes_zookeeper() -> None:
    """The epoch in requests alone: the zombie's conditional write succeeds (it writes
    first), its UpdateMetadata reaches a broker that has not heard of epoch 2, and the
    new controller's stale context, with epoch 2, then puts that broker back."""
    v = explore(ZkControllerEpochOnlyFencing()).violation
    steps = v.trace
    elect = next(i for i, s in enumerate(steps) if s.action == "ElectLeader")
    s = steps[elect]
    assert s.params["c"] == 1 and s.state["zkCtl"] == 2 and s.state["zkCE"] == 2
    assert s.state["active"] == {1: True, 2: True} and s.state["cEpoch"] == {1: 1, 2: 2}
    assert s.state["zkLE"][1] == 1 and steps[elect - 1].state["cLE"][2][1] == 0
    b = steps[-1].params["b"]
    assert steps[-2].state["mLE"][b][1] == 1 and steps[-1].state["mLE"][b][1] == 0
    assert steps[-2].state["uCE"][b] == 2


def test_epoch_fenced_writes_pass_where_epoch_only_fails() -> None:
    assert explore(ZkController(FenceZkWrites=False)).status == "violation"
    assert explore(ZkController(MaxExpiries=2, MaxCE=3, MaxData=1, MaxLE=1,
                                MaxPV=2)).status == "ok"


@pytest.mark.parametrize("cls", [b[0] for b in BUGS], ids=IDS)
def test_same_verdict_without_symmetry(cls) -> None:
    spec = cls()
    a, b = explore(spec), explore(spec, symmetry=False)
    assert b.status == "violation"
    assert b.violation.property == a.violation.property
    assert len(b.violation.trace) == len(a.violation.trace)
    assert_replays(spec, b.violation.trace)
