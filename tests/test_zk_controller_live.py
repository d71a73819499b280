"""The ZooKeeper-era controller under fairness: counts, verdicts, bounds, lassos."""

from __future__ import annotations

import inspect

import pytest
from click.testing import CliRunner

import specs.zk_controller_live as module
from invariants import lookup
from modelcheck import check_liveness
from modelcheck.cli import cli
from modelcheck.config import CheckConfig
from modelcheck.temporal import fairness_conditions
from specs.zk_controller_live import (
    ZkControllerLive,
    ZkControllerLiveBugLossyRequests,
    ZkControllerLiveBugNoStartupSync,
    ZkControllerLiveBugShrinkWithoutLeader,
)
from tests.lassocheck import check_lasso_generic, lasso_shape

SPEC = "specs/zk_controller_live.py"
PROPS = ["ControllerEventuallyElected", "ZombieEventuallyResigns", "PartitionEventuallyLed",
         "ReplicasConverge"]
HOLDS = {p: "holds" for p in PROPS}
NO_CRASH = dict(MaxCrashes=0, MaxCE=2, MaxLE=2)  # the tight bounds without crashes


def _converge_fails(**v: str) -> dict[str, str]:
    return {**HOLDS, **v}


def test_declarations_and_fairness() -> None:
    spec = ZkControllerLive()
    assert dict(spec.constants) == dict(N=2, P=1, MaxCE=3, MaxLE=3, MaxPV=3, MaxData=1,
                                        MaxExpiries=1, MaxCrashes=1, Unclean=False,
                                        FenceZkWrites=True)
    assert ZkControllerLive.symmetry == () and not spec.constraints
    assert [p.name for p in spec.temporal] == PROPS
    names = [c.name for c in fairness_conditions(spec)]
    kinds = {c.name.split("(")[1]: c.name[:2] for c in fairness_conditions(spec)}
    assert kinds == {"ElectController": "WF", "Load": "WF", "Resign": "WF", "Reconnect": "WF",
                     "DeliverLAIR": "WF", "DeliverUM": "WF", "Fetch": "WF",
                     "SessionTimeout": "WF", "Sync": "WF", "ElectLeader": "SF"}
    assert "SF(ElectLeader(c=1, p=1, nl=2))" in names and len(names) == 26
    for name in PROPS:
        decl = lookup(name)
        assert decl is not None and decl.kind == "temporal"


@pytest.mark.parametrize("consts, distinct, depth, edges", [
    ({}, 238_140, 31, 1_012_554),
    (NO_CRASH, 25_086, 24, 106_050),
], ids=["default", "no-crash"])
def test_every_property_holds(consts, distinct, depth, edges) -> None:
    r = check_liveness(ZkControllerLive(**consts))
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth, r.liveness["edges"]) == (distinct, depth, edges)
    assert r.liveness["properties"] == HOLDS
    never = {c.name for c in r.coverage if c.fired == 0}
    assert never == {"Broadcast", "DeliverUM", "DropUM"} | (
        {"Crash", "Start", "SessionTimeout"} if consts else set())


def test_no_bound_binds() -> None:
    """One more controller or leader epoch adds no state: no reachable state has an
    election that only the bound disables (the versions are relative: no bound)."""
    tight = check_liveness(ZkControllerLive(**NO_CRASH)).distinct_states
    loose = check_liveness(ZkControllerLive(MaxCrashes=0, MaxCE=3, MaxLE=3, MaxPV=1))
    assert loose.distinct_states == tight and loose.liveness["properties"] == HOLDS


@pytest.mark.slow
def test_no_bound_binds_with_a_crash() -> None:
    r = check_liveness(ZkControllerLive(MaxCE=4, MaxLE=4))
    assert r.distinct_states == 238_140


@pytest.mark.slow
def test_unclean_and_weak_election_fairness() -> None:
    """Unclean election (its safety fails by design, so the temporal properties are
    selected), and weak instead of strong fairness on ElectLeader: all hold."""
    r = check_liveness(ZkControllerLive(Unclean=True), CheckConfig(invariants=tuple(PROPS)))
    assert (r.distinct_states, r.liveness["properties"]) == (263_026, HOLDS)

    class WeakElection(ZkControllerLive):
        fairness = {**ZkControllerLive.fairness, "ElectLeader": "weak"}

    assert check_liveness(WeakElection()).liveness["properties"] == HOLDS


VARIANTS = [
    (ZkControllerLiveBugNoStartupSync, 51_054, "ReplicasConverge",
     (7, 6, ["ElectController", "Load", "Expire", "ElectLeader", "DeliverLAIR",
             "Reconnect"])),
    (ZkControllerLiveBugLossyRequests, 358_960, "ReplicasConverge",
     (8, 7, ["ElectController", "Load", "Crash", "Sync", "SessionTimeout", "ElectLeader",
             "DropLAIR"])),
    (ZkControllerLiveBugShrinkWithoutLeader, 246_622, "PartitionEventuallyLed",
     (11, 10, ["ElectController", "Load", "ElectLeader", "Expire", "DeliverLAIR", "Produce",
               "ShrinkIsr", "Sync", "DeliverLAIR", "Crash"])),
]
IDS = [v[0].__name__.removeprefix("ZkControllerLiveBug") for v in VARIANTS]


@pytest.mark.parametrize("cls, distinct, prop, shape", VARIANTS, ids=IDS)
def test_bug_variants_fail_with_a_fair_lasso(cls, distinct, prop, shape) -> None:
    spec = cls()
    r = check_liveness(spec)
    assert r.status == "violation" and r.distinct_states == distinct
    assert r.liveness["properties"] == _converge_fails(**{prop: "violated"})
    v = r.violation
    assert v.kind == "liveness" and v.property == prop
    assert lasso_shape(v) == shape
    check_lasso_generic(spec, v)


def test_every_variant_is_listed() -> None:
    variants = {c for _, c in inspect.getmembers(module, inspect.isclass)
                if issubclass(c, ZkControllerLive) and c is not ZkControllerLive}
    assert variants == {v[0] for v in VARIANTS}
    assert all("Live" in c.__name__ and "Bug" in c.__name__ for c in variants)


def test_no_startup_sync_leaves_the_returning_broker_behind() -> None:
    v = check_liveness(ZkControllerLiveBugNoStartupSync()).violation
    last = v.trace[-1].state
    assert last["zkLive"] == {1, 2} and last["zkLE"][1] == 1
    # one broker has the leader epoch, the one that came back has not (which of the two
    # depends on the order of the fingerprints)
    assert sorted(le[1] for le in last["rLE"].values()) == [0, 1]
    assert last["lCE"] == {1: 0, 2: 0}


def test_shrink_without_leader_leaves_only_the_dead_leader_in_the_isr() -> None:
    v = check_liveness(ZkControllerLiveBugShrinkWithoutLeader()).violation
    last = v.trace[-1].state
    (ld,) = last["zkIsr"][1]
    assert last["zkLeader"][1] == ld and not last["up"][ld] and ld not in last["zkLive"]


def test_epoch_only_fencing_fails_replicas_converge() -> None:
    """The open question under fairness: the zombie's election reaches ZooKeeper, the
    new controller synced the leader from its older context, and never again."""
    spec = ZkControllerLive(FenceZkWrites=False)
    r = check_liveness(spec)
    assert r.distinct_states == 453_098
    assert r.liveness["properties"] == _converge_fails(ReplicasConverge="violated")
    v = r.violation
    assert lasso_shape(v)[:2] == (13, 12)
    check_lasso_generic(spec, v)
    elect = next(s for s in v.trace if s.action == "ElectLeader")
    assert elect.params["c"] != elect.state["zkCtl"] != 0  # a zombie's write
    last = v.trace[-1].state
    ld = last["zkLeader"][1]
    assert last["up"][ld] and ld in last["zkLive"] and last["rLE"][ld][1] < last["zkLE"][1]


@pytest.mark.parametrize("variant", ["ZkControllerLiveBugNoStartupSync"])
def test_cli_check_reports_the_lasso(variant) -> None:
    out = CliRunner().invoke(cli, ["check", f"{SPEC}:{variant}", "-q"])
    assert out.exit_code == 1, out.output
    assert "Temporal property ReplicasConverge" in out.output
    assert "stutters forever" in out.output or "loops back" in out.output
