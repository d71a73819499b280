"""The KRaft reference model: exact counts (L1-L6, specs/kraft_broker.py), bug variants, replay."""

from __future__ import annotations

import json

import pytest
from bruteforce import assert_replays

from modelcheck import Explorer, explore
from specs.kraft_broker import (
    KRaftBroker,
    KRaftBrokerBugEpochReuse,
    KRaftBrokerBugGrantWithLeaders,
    KRaftBrokerBugNoCatchUpCheck,
)

L1 = dict(N=2, P=1, MaxLog=4, MaxRestarts=1)
L2 = dict(N=3, P=2, MaxLog=4, MaxRestarts=1)
L3 = dict(N=2, P=1, MaxLog=6, MaxRestarts=2)
L4 = dict(N=3, P=1, MaxLog=5, MaxRestarts=1)


@pytest.mark.parametrize(
    "consts, distinct, depth, generated",
    [
        (L1, 5_353, 18, 15_802),
        (L2, 257_625, 24, 1_009_101),
        (L3, 552_953, 30, 1_812_322),
        (L4, 1_244_976, 29, 5_226_834),
    ],
    ids=["L1", "L2", "L3", "L4"],
)
def test_reference_counts(consts: dict, distinct: int, depth: int, generated: int) -> None:
    r = explore(KRaftBroker(**consts))
    assert r.status == "ok"
    assert r.violation is None
    assert r.distinct_states == distinct
    assert r.depth == depth
    assert r.generated_states == generated
    assert r.fingerprint == "exact"
    assert sum(c.fired for c in r.coverage) == generated
    assert sum(c.new_states for c in r.coverage) == distinct - 1
    never = {c.name for c in r.coverage if c.fired == 0}
    # a granted controlled shutdown needs two unfenced brokers, an election, the
    # shutdown heartbeat, a leader move and the grant: more appends than MaxLog <= 5 allows
    expected_never = {"GrantShutdown"} if consts["MaxLog"] <= 5 else set()
    if consts["MaxLog"] == 4:
        expected_never.add("MoveLeader")
    assert never == expected_never


@pytest.mark.parametrize(
    "cls, consts, props, length, last_actions",
    [
        (KRaftBrokerBugNoCatchUpCheck, L1, {"CaughtUpBeforeUnfence"}, 5,
         ["Start", "Register", "CatchUp", "Unfence"]),
        (KRaftBrokerBugEpochReuse, L1, {"EpochMonotonic", "UniqueEpochs"}, 5, None),
        (KRaftBrokerBugGrantWithLeaders, dict(L1, MaxLog=5), {"ShutdownLeadsNothing"}, 10,
         ["ShutdownHeartbeat", "GrantShutdown"]),
    ],
    ids=["NoCatchUpCheck", "EpochReuse", "GrantWithLeaders"],
)
def test_bug_variants(cls, consts, props, length, last_actions) -> None:
    spec = cls(**consts)
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert v.property in props
    assert len(v.trace) == length
    if cls is KRaftBrokerBugEpochReuse:
        # both fail in the same state (as the reference checkers found)
        assert {v.property, *v.also_violated} == props
    if last_actions:
        assert [s.action for s in v.trace[-len(last_actions):]] == last_actions
    assert v.trace[0].action is None
    if cls is KRaftBrokerBugGrantWithLeaders:
        assert "ElectLeader" in [s.action for s in v.trace]
    assert_replays(spec, v.trace)


def _broker_bug_variants() -> list[type]:
    import specs.kraft_broker as mod

    return [c for n, c in vars(mod).items()
            if n.startswith("KRaftBrokerBug") and isinstance(c, type)]


@pytest.mark.parametrize("cls", _broker_bug_variants(), ids=lambda c: c.__name__)
def test_bug_variants_fail_with_their_own_defaults(cls) -> None:
    """``modelcheck check specs/kraft_broker.py:<variant>`` with no options finds the bug."""
    from click.testing import CliRunner

    from modelcheck.cli import cli

    r = CliRunner().invoke(cli, ["check", f"specs/kraft_broker.py:{cls.__name__}", "--format",
                                 "json", "-q"])
    assert r.exit_code == 1, r.output
    assert json.loads(r.output)["status"] == "violation"


def test_grant_with_leaders_needs_longer_log() -> None:
    assert explore(KRaftBrokerBugGrantWithLeaders(**L1)).status == "ok"


def test_result_is_independent_of_batch_size() -> None:
    a = Explorer(KRaftBrokerBugGrantWithLeaders(**dict(L1, MaxLog=5)), batch_size=1 << 16).run()
    b = Explorer(KRaftBrokerBugGrantWithLeaders(**dict(L1, MaxLog=5)), batch_size=7).run()
    ja, jb = a.to_json(), b.to_json()
    for key in ("seconds", "states_per_second", "levels", "memory"):
        ja.pop(key), jb.pop(key)
    assert ja == jb
    c = Explorer(KRaftBroker(**L1), batch_size=13).run()
    assert (c.distinct_states, c.generated_states, c.depth) == (5_353, 15_802, 18)


def test_level_stats_add_up() -> None:
    r = explore(KRaftBroker(**L1))
    assert sum(lv.new for lv in r.levels) + 1 == r.distinct_states
    assert sum(lv.generated for lv in r.levels) == r.generated_states
    assert len([lv for lv in r.levels if lv.new]) == r.depth
