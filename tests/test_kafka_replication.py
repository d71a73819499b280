"""The Kafka replication port (v3.5) against TLC's figures on the committed cfgs.

TLC's figures are in ``tests/kafka_replication/tlc_figures.json`` (TLC 2.20, one worker,
no VIEW); ``benchmarks/kafka_replication_tlc.py`` re-runs TLC on the same cfgs. The
constants of each run are read from its cfg, so a cfg and its figures cannot drift
apart from the spec's defaults.
"""

from __future__ import annotations

import json
import pathlib

import pytest

import specs.kafka_replication as module
from modelcheck import explore
from specs.kafka_replication import KafkaReplication, constants_from_cfg

HERE = pathlib.Path(__file__).parent / "kafka_replication"
TLC = {k: v for k, v in json.loads((HERE / "tlc_figures.json").read_text()).items()
       if not k.startswith("_")}
SPECS = {"v3.5": KafkaReplication}
#: the cfgs that take more than a few seconds here
SLOW = {"v35_b2_fence", "v35_b2_clean", "v35_b3_base", "v35_b2_unclean",
        "v35_b2_isr1_unclean", "v35_b2_isr1_shrink"}
SAFETY = {"LeaderCompletenessProperty", "LeaderCandidateCompletenessProperty",
          "ReplicationQuorumSupersetProperty", "LogMatchingProperty",
          "MetadataLogMatchingProperty", "ConsistentReadProperty",
          "NoCommittedRecordLostGlobally"}


def _spec(name: str) -> KafkaReplication:
    consts = constants_from_cfg((HERE / f"{name}.cfg").read_text())
    return SPECS[TLC[name]["model"]](**consts)


def _cases() -> list:
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(TLC)]


def test_every_cfg_has_tlc_figures() -> None:
    cfgs = {p.stem for p in HERE.glob("*.cfg")}
    assert cfgs == set(TLC)


def test_the_safety_properties_are_the_models() -> None:
    assert {p.name for p in KafkaReplication().invariants} >= SAFETY


def test_cfg_constants() -> None:
    c = constants_from_cfg((HERE / "v35_b2_lrs.cfg").read_text())
    assert c == dict(BrokerCount=2, InitReplicationFactor=2, NValues=1, MinISR=1,
                     InitIsrSize=1, CleanShutdownLimit=0, UncleanShutdownLimit=1,
                     FenceBrokerLimit=0, LeaderShrinkIsrLimit=0, ReassignmentLimit=0,
                     AvoidLastReplicaStanding=False)


@pytest.mark.parametrize("name", _cases())
def test_equal_to_tlc(name: str) -> None:
    """Distinct states and depth (TLC prints depth + 1) as TLC's; a violation of the
    same invariant with a counterexample as long as TLC's (one worker: breadth-first)."""
    fig = TLC[name]
    r = explore(_spec(name), invariants=sorted(SAFETY))
    if fig["violated"] is None:
        assert r.status == "ok", r.violation
        assert (r.distinct_states, r.depth + 1) == (fig["distinct"], fig["depth"])
    else:
        assert r.status == "violation"
        assert r.violation.property == fig["violated"]
        assert len(r.violation.trace) == fig["trace_length"]
        actions = [st.action.split("(")[0] for st in r.violation.trace[1:]]
        assert actions == fig["trace"]


BUGS = {k: v for k, v in json.loads((HERE / "tlc_bug_figures.json").read_text()).items()
        if not k.startswith("_")}


@pytest.mark.parametrize("variant", sorted(BUGS))
def test_check_variant_fails_as_in_tlc(variant: str) -> None:
    """A CHECK of the source turned off: the invariant TLC reports on the model with that
    line commented out is violated, with a counterexample as long as TLC's; the base
    spec holds on the same cfg."""
    fig = BUGS[variant]
    consts = constants_from_cfg((HERE / f"{fig['cfg']}.cfg").read_text())
    r = explore(getattr(module, variant)(**consts), invariants=sorted(SAFETY))
    assert r.status == "violation"
    assert (r.violation.property, len(r.violation.trace)) == (fig["violated"],
                                                              fig["trace_length"])
    assert explore(KafkaReplication(**consts), invariants=sorted(SAFETY)).status == "ok"


def test_every_check_is_a_variant() -> None:
    """The ten CHECK comments of the v3.5 source are the ten check_* switches, and every
    variant turns exactly one of them off."""
    switches = [k for k in vars(KafkaReplication)
                if k.startswith("check_") and k != "check_deadlock"]
    assert len(switches) == 10
    for name, cls in vars(module).items():
        if isinstance(cls, type) and issubclass(cls, KafkaReplication) and \
                cls is not KafkaReplication:
            off = [k for k in switches if getattr(cls, k) is False]
            assert len(off) == 1, name


def test_docstring_maps_every_action_and_property() -> None:
    doc = module.__doc__ or ""
    spec = KafkaReplication()
    for name in [a.name for a in spec.actions] + [p.name for p in spec.invariants]:
        assert f"``{name}" in doc, name
    assert "MIT licence" in doc
