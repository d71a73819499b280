"""Public TLA+ models with liveness (tlaplus/Examples), ported to examples/tla/: counts as
the manifests give them, every temporal property of the cfg holds, and a variant that
breaks fairness fails with a fair lasso (checked independently, tests/lassocheck.py)."""

from __future__ import annotations

import pytest

from examples.tla.disruptor_liveness import (
    DisruptorLiveness,
    DisruptorLivenessBugNoEndReadFairness,
)
from examples.tla.elevator_liveness import ElevatorLiveness, ElevatorLivenessBugWeakMove
from examples.tla.live_hour_clock import HourClockNoFairness, LiveHourClock
from modelcheck import check_liveness
from tests.lassocheck import check_lasso_generic

# (spec, manifest distinct states, TLC's depth - 1, temporal properties)
MODELS = [
    (LiveHourClock, 12, 0, 14),
    (ElevatorLiveness, 4_122, 35, 6),
    (DisruptorLiveness, 14_365, 60, 1),
]


@pytest.mark.parametrize("cls, distinct, depth, n_props", MODELS)
def test_manifest_counts_and_every_property_holds(cls, distinct, depth, n_props) -> None:
    r = check_liveness(cls())
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert len(r.liveness["properties"]) == n_props
    assert set(r.liveness["properties"].values()) == {"holds"}


VARIANTS = [
    (HourClockNoFairness, 12, "AlwaysTickAtOne", 14, (1, 0)),
    (ElevatorLivenessBugWeakMove, 4_122, "Arrives1", 2, (30, 7)),
    (DisruptorLivenessBugNoEndReadFairness, 14_365, "Liveliness", 1, (7, 6)),
]


@pytest.mark.parametrize("cls, distinct, first, n_violated, shape", VARIANTS)
def test_variants_break_fairness_and_fail_with_a_lasso(cls, distinct, first, n_violated,
                                                       shape) -> None:
    spec = cls()
    r = check_liveness(spec)
    assert r.status == "violation" and r.distinct_states == distinct
    assert sum(v == "violated" for v in r.liveness["properties"].values()) == n_violated
    v = r.violation
    assert v.kind == "liveness" and v.property == first
    assert (len(v.trace), v.loop) == shape
    check_lasso_generic(spec, v)


def test_elevator_weak_move_lasso_keeps_a_person_waiting() -> None:
    spec = ElevatorLivenessBugWeakMove()
    v = check_liveness(spec, temporal=[p for p in spec.temporal if p.name == "Arrives2"]).violation
    check_lasso_generic(spec, v)
    assert any("WF(MoveElevator" in line for line in v.fairness)
