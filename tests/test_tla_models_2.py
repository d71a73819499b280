"""Ports of tlaplus/Examples models (Paxos family): the manifest's distinct-state counts,
the invariants and properties of each model's cfg, and broken variants.

Each count is the one ``specifications/<Dir>/manifest.json`` gives for the model's cfg
(TLC's ``stateDepth`` is our depth + 1: TLC counts the initial state as depth 1).
"""

from __future__ import annotations

import pytest
from bruteforce import brute_force

from examples.tla.mc_paxos import MCPaxos, MCPaxosBug, MCPaxosTwo
from examples.tla.mc_paxos_tiny import MCPaxosTiny, MCPaxosTinyBug
from examples.tla.mc_voting import MCVoting, MCVotingBug
from examples.tla.multi_paxos import MultiPaxos, MultiPaxosBug
from examples.tla.simplified_fast_paxos import SimplifiedPaxos, SimplifiedPaxosBug
from modelcheck import explore
from modelcheck.kernel import Kernel


def _ok(spec, distinct: int, depth: int, *, symmetry: bool = True) -> None:
    r = explore(spec, symmetry=symmetry)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == (distinct, depth)


def _initial_views(spec):
    k = Kernel(spec, symmetry=False)
    return [k.scalar_view(cells) for cells in k.initial_states()]


# -- specifications/Paxos: MCVoting.cfg (77) ---------------------------------------------
def test_mc_voting_manifest_count() -> None:
    _ok(MCVoting(), 77, 10)


def test_mc_voting_without_symmetry_against_brute_force() -> None:
    spec = MCVoting()
    assert brute_force(spec) == (599, 10)
    _ok(spec, 599, 10, symmetry=False)


def test_mc_voting_consensus_init() -> None:
    # C!Init of PROPERTY ConsensusSpecBar: chosen = {} in every initial state
    spec = MCVoting()
    for s in _initial_views(spec):
        assert not any(bool(spec.chosen_has(s, v)) for v in spec.Value)


def test_mc_voting_bug() -> None:
    r = explore(MCVotingBug())
    assert r.status == "violation" and r.violation.property == "VotesSafe"
    assert len(r.violation.trace) == 2


# -- specifications/Paxos: MCPaxos.cfg (25) ----------------------------------------------
def test_mc_paxos_manifest_count() -> None:
    r = explore(MCPaxos())
    assert r.status == "ok"
    # manifest: 25 distinct, 82 total (TLC's total counts the initial state), depth 9
    assert (r.distinct_states, r.generated_states + 1, r.depth) == (25, 82, 8)


def test_mc_paxos_voting_init() -> None:
    # V!Init of PROPERTY VotingSpecBar: votes = [a |-> {}], maxBal = [a |-> -1]
    spec = MCPaxos()
    for s in _initial_views(spec):
        for a in spec.Acceptor:
            assert int(s.maxBal[a]) == -1
            assert not any(bool(spec.voted_for(s, a, b, v))
                           for b in spec.Ballot for v in spec.Value)


def test_mc_paxos_larger_model_and_brute_force() -> None:
    spec = MCPaxosTwo()
    _ok(spec, 56, 12)
    r = explore(spec, symmetry=False)
    assert (r.distinct_states, r.depth) == brute_force(spec)


def test_mc_paxos_bug() -> None:
    r = explore(MCPaxosBug())
    assert r.status == "violation" and r.violation.property == "Inv3"
    assert r.violation.trace[-1].action == "Phase2a"


# -- specifications/PaxosHowToWinATuringAward: MCPaxosTiny.cfg (3,921) -------------------
def test_mc_paxos_tiny_manifest_count() -> None:
    # manifest: 3,921 distinct, 23,563 total, depth 17. TLC's total is larger because it
    # yields one (equal) successor per quorum witnessing Phase2a's \E Q \in Quorum.
    _ok(MCPaxosTiny(), 3_921, 16)


def test_mc_paxos_tiny_bug() -> None:
    r = explore(MCPaxosTinyBug())
    assert r.status == "violation"
    assert {r.violation.property, *r.violation.also_violated} >= {"MsgsConsistent"}
    assert r.violation.trace[-1].action == "Phase2b"


# -- specifications/SimplifiedFastPaxos: Paxos.cfg (1,207) -------------------------------
# Paxos.cfg itself (4 replicas, 3 values: 1,207 distinct, depth 21; 144 symmetries,
# ~70 s here, TLC: 5 s) is a row of benchmarks/large_configs.py, which exits 1 on a
# mismatch; test_the_manifest_configs_too_large_here_are_benchmarked checks the row.
def test_simplified_paxos_smaller_config() -> None:
    _ok(SimplifiedPaxos(NReplicas=3, NValues=2), 701, 17)


def test_simplified_paxos_against_brute_force() -> None:
    spec = SimplifiedPaxos(NReplicas=3, NValues=1, MaxBallot=1)
    r = explore(spec, symmetry=False)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec)


def test_simplified_paxos_bug() -> None:
    r = explore(SimplifiedPaxosBug(NReplicas=3, NValues=2))
    assert r.status == "violation" and r.violation.property == "PaxosConsistency"
    assert r.violation.trace[-1].action == "PaxosDecide"


# -- specifications/MultiPaxos-SMR: MultiPaxos_MC_small.cfg (343,796) ----------------------
# MultiPaxos_MC_small.cfg itself (manifest: 343,796 distinct, 736,012 total, depth 28;
# we generate 735,917: TLC's total also counts initial states and per-witness
# duplicates) takes ~7 min here (TLC: 10 s): a row of benchmarks/large_configs.py.
def test_multi_paxos_one_write_no_read() -> None:
    # the same spec with Reads = {} (allowed by ReadsAssumption): one command, one slot
    _ok(MultiPaxos(NReads=0), 2_628, 18)


def test_multi_paxos_bug() -> None:
    r = explore(MultiPaxosBug())
    assert r.status == "violation" and r.violation.property == "TypeOK"
    assert len(r.violation.trace) == 9
    assert r.violation.trace[-1].action == "HandlePrepareReplies"


@pytest.mark.parametrize("spec", [MCVoting(), MCPaxos()], ids=["voting", "paxos"])
def test_refinement_property_is_checked(spec) -> None:
    # the action properties standing for the cfg's PROPERTY are part of every run
    assert [p.name for p in spec.properties] == (
        ["ConsensusNext"] if isinstance(spec, MCVoting) else ["VotingNext"])


@pytest.mark.parametrize("row, cls, distinct, depth", [
    ("multi-paxos-mc-small", MultiPaxos, 343_796, 27),
    ("simplified-fast-paxos", SimplifiedPaxos, 1_207, 21),
])
def test_the_manifest_configs_too_large_here_are_benchmarked(row, cls, distinct: int,
                                                               depth: int) -> None:
    """The manifest configurations checked by benchmarks/large_configs.py (and by
    benchmarks/tla_models.py) rather than here: the spec's default constants, the
    manifest's count and our depth (TLC's stateDepth - 1); the smaller configurations
    above run the same spec."""
    from benchmarks.large_configs import ROWS as LARGE
    from benchmarks.tla_models import ROWS

    assert LARGE[row] == dict(test="tests/test_tla_models_2.py",
                              spec=f"{cls.__module__}:{cls.__name__}", consts={},
                              distinct=distinct, depth=depth, all_fired=False)
    name = {"multi-paxos-mc-small": "MultiPaxos_MC_small",
            "simplified-fast-paxos": "SimplifiedFastPaxos"}[row]
    assert ROWS[name] == (cls.__module__, cls.__name__, {}, distinct, depth)
