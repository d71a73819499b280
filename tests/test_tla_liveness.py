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
from examples.tla.live_write_through_cache import (
    LiveWriteThroughCache,
    LiveWriteThroughCacheWeakRdMiss,
)
from examples.tla.simple_allocator import SimpleAllocator, SimpleAllocator2
from modelcheck import check_liveness
from modelcheck.kernel import Kernel
from modelcheck.temporal import fairness_conditions
from modelcheck.trace.model import Trace
from modelcheck.trace.replay import replay
from tests.lassocheck import check_lasso_generic
from tests.livespec import Selected

# (spec, manifest distinct states, TLC's depth - 1, temporal properties)
MODELS = [
    (LiveHourClock, 12, 0, 13),
    (ElevatorLiveness, 4_122, 35, 6),
    (DisruptorLiveness, 14_365, 60, 1),
    (LiveWriteThroughCache, 5_196, 17, 6),
]


@pytest.mark.parametrize("cls, distinct, depth, n_props", MODELS)
def test_manifest_counts_and_every_property_holds(cls, distinct, depth, n_props) -> None:
    r = check_liveness(cls())
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert len(r.liveness["properties"]) == n_props
    assert set(r.liveness["properties"].values()) == {"holds"}


VARIANTS = [
    (HourClockNoFairness, 12, "AlwaysTick", 13, (1, 0)),
    (ElevatorLivenessBugWeakMove, 4_122, "Arrives1", 2, (30, 7)),
    (DisruptorLivenessBugNoEndReadFairness, 14_365, "Liveliness", 1, (7, 6)),
    (LiveWriteThroughCacheWeakRdMiss, 5_196, "LM_Inner_Liveness2_p1", 4, (15, 2)),
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


def test_write_through_cache_refines_the_live_internal_memory():
    spec = LiveWriteThroughCache()
    # LM_Inner_IInit in every initial state (two: wmem[a1] \in Val)
    k = Kernel(spec, invariants=[], properties=[], check_deadlock=False)
    inits = k.initial_states()
    assert len(inits) == 2 and all(bool(spec.inner_init(k.scalar_view(c))) for c in inits)
    # [][LM_Inner_INext]_LM_Inner_vars is checked with the temporal properties
    r = check_liveness(spec)
    assert "LM_Inner_INext" in r.checked["properties"] and r.status == "ok"
    assert [c.name for c in fairness_conditions(spec)] == [
        "WF(Rsp(p=1) \\/ DoRd(p=1))", "WF(Rsp(p=2) \\/ DoRd(p=2))",
        "SF(RdMiss(p=1) \\/ DoWr(p=1))", "SF(RdMiss(p=2) \\/ DoWr(p=2))",
        "WF(MemQWr[QCond] \\/ MemQRd)"]


def test_write_through_cache_weak_rdmiss_lasso_starves_a_read_miss():
    """With WF, p1's read miss waits while p2 refills the queue whenever it empties; the
    lasso replays as a behaviour of the spec (trace replay) and every property it
    violates has its own fair lasso."""
    spec = LiveWriteThroughCacheWeakRdMiss()
    r = check_liveness(spec)
    v = r.violation
    assert v.formula == "[]<>A"
    loop = v.trace[v.loop:]
    assert all(s.state["ctl"][1] == "busy" and s.state["buf"][1]["kind"] == "Rd"
               for s in loop)
    assert any(s.action == "RdMiss" and s.params == {"p": 2} for s in loop)
    assert "WF(RdMiss(p=1) \\/ DoWr(p=1)): disabled at state" in "\n".join(v.fairness)
    rep = replay(spec, Trace.from_violation(spec, v))
    assert rep.ok, rep.message
    for name in v.also_violated:
        w = check_liveness(spec, temporal=[p for p in spec.temporal if p.name == name])
        check_lasso_generic(spec, w.violation)


# ------------------------------------------------------------ SimpleAllocator
def _allocator_conds(spec, satisfied_only: bool):
    """The module's fairness, built from its text without modelcheck.fairness: per client
    ``c``, ``WF_vars(Return(c, alloc[c]))`` (``SimpleAllocator2``: ``unsat[c] = {} /\\
    Return(c, alloc[c])``) and ``SF_vars(\\E S: Allocate(c, S))``."""
    out = []
    for c in spec.Clients:
        def pick(view, lab, c=c):
            inst = next(a for a in spec.actions if a.label == lab)
            held = {int(x) for x in dict(inst.params)["S"]}
            want = {r for r in spec.Resources if bool(view.alloc[c].has(r))}
            if satisfied_only and not bool(view.unsat[c].is_empty()):
                return False
            return held == want

        ret = frozenset(a.label for a in spec.actions
                        if a.decl.name == "Return" and dict(a.params)["c"] == c)
        out.append(("weak", Selected(ret, pick)))
        out.append(("strong", frozenset(a.label for a in spec.actions
                                        if a.decl.name == "Allocate" and dict(a.params)["c"] == c)))
    return out


def test_simple_allocator_fairness_as_the_module_writes_it() -> None:
    # TLC 2.20, Clients = {c1, c2, c3}, Resources = {r1, r2}: 400 distinct states, 1,633
    # generated (ours plus the initial state); under SimpleAllocator ClientsWillReturn,
    # ClientsWillObtain and InfOftenSatisfied hold; under SimpleAllocator2 only
    # ClientsWillReturn does
    r = check_liveness(SimpleAllocator())
    assert (r.status, r.distinct_states, r.generated_states + 1) == ("ok", 400, 1_633)
    assert set(r.liveness["properties"].values()) == {"holds"}
    assert len(r.liveness["properties"]) == 12
    spec = SimpleAllocator2()
    r = check_liveness(spec)
    assert (r.status, r.distinct_states) == ("violation", 400)
    got = r.liveness["properties"]
    assert {k for k, v in got.items() if v == "holds"} == {
        "ClientsWillReturn_1", "ClientsWillReturn_2", "ClientsWillReturn_3"}
    check_lasso_generic(spec, r.violation)
    check_lasso_generic(spec, r.violation, conds=_allocator_conds(spec, True))

