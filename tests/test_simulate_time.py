"""``simulate --time``: the limit holds even when one step of all walks is slow, and a
run cut by it reports the walks and steps done so far.

A fake clock (injected into :func:`~modelcheck.simulate.run_walks`) advances by a fixed
cost per state the kernel evaluates, so a "heavy" spec costs its seconds without
running long: no sleeps, no wall-clock assertions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from modelcheck import Int, Spec, action, invariant
from modelcheck.kernel import Kernel
from modelcheck.simulate import SimConfig, Simulator, WalkSet, WalkTally, run_walks, simulate


class Walker(Spec):
    check_deadlock = False
    x = Int(0, 20)
    y = Int(0, 3)

    def init_states(self):
        for x in range(0, 20, 2):
            yield {"x": x, "y": 0}

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 20

    @action
    def Dec(self, s, t):
        t.x = s.x - 1
        return s.x > 0

    @action
    def Flip(self, s, t):
        t.y = (s.y + 1) % 4
        return s.y < 4

    @invariant
    def Small(self, s):
        return s.x <= 20


class Many(Walker):
    """20,000 initial states: checking their invariants is itself slow."""

    z = Int(0, 999)

    def init_states(self):
        for x in range(20):
            for z in range(1000):
                yield {"x": x, "y": 0, "z": z}


class FakeClock:
    """A clock that advances ``cost`` seconds per state the kernel evaluates."""

    def __init__(self, k: Kernel, cost: float) -> None:
        self.now = 1000.0
        self.cost = cost
        self.calls = 0
        inner = k.expand

        def expand(words: np.ndarray, **kw: Any) -> Any:
            self.calls += 1
            self.now += self.cost * len(words)
            return inner(words, **kw)

        k.expand = expand  # type: ignore[method-assign]

    def __call__(self) -> float:
        return self.now


def walks(spec: Spec, cost: float, **kw: Any) -> tuple[WalkTally, FakeClock, Simulator]:
    sim = Simulator(spec, sim=SimConfig(seed=3, **{k: v for k, v in kw.items()
                                                   if k in ("runs", "depth", "time_limit",
                                                            "walks_per_batch")}))
    k = sim.kernel
    clock = FakeClock(k, cost)
    start = clock.now
    tally = run_walks(k, WalkSet(3, 0, 1, kw.get("runs")), weights=sim.weights,
                      depth=kw.get("depth", 100), walks_per_batch=kw.get("walks_per_batch", 2048),
                      time_limit=kw.get("time_limit"), clock=clock)
    clock.now -= start  # seconds the run took on the fake clock
    return tally, clock, sim


@pytest.mark.parametrize("cost", [0.05, 0.01, 0.002])
def test_time_limit_holds_when_a_step_of_all_walks_is_slow(cost: float) -> None:
    # one step of 2,048 walks costs 2,048 * cost seconds (and as much again for the
    # invariants of the successors): 200 s at 0.05, more than the limit
    limit = 60.0
    tally, clock, sim = walks(Walker(), cost, time_limit=limit, depth=100)
    assert tally.stopped == "time"
    assert limit <= clock.now <= limit * 1.05
    # the walks still running are counted, cut, with the steps they took
    assert tally.walks > 0 and tally.steps > 0
    assert tally.ends["cut"] > 0 and sum(tally.ends.values()) == tally.walks
    assert int(tally.fired.sum()) == tally.generated > 0
    r = sim.result(tally, clock.now)
    assert r.status == "ok" and r.simulation["stopped_by"] == "time"
    assert r.simulation["walks"] == tally.walks and r.simulation["steps"] == tally.steps
    assert "Stopped at the time limit" in (r.message or "") and "cut short" in r.message


def test_limit_within_the_first_chunk_still_counts_its_steps() -> None:
    # the 10 initial states cost 1 s, the first 16 walks' step (their states and their
    # 2 or 3 successors) 0.1 s a state: the 2 s limit passes during it
    tally, clock, sim = walks(Walker(), 0.1, time_limit=2.0, depth=100, walks_per_batch=64)
    assert tally.stopped == "time" and tally.steps == 16
    assert tally.walks == tally.ends["cut"] == 64
    assert clock.now <= 1.0 + 16 * 4 * 0.1 + 1e-9


def test_time_limit_holds_while_checking_the_initial_states() -> None:
    tally, clock, sim = walks(Many(), 0.001, time_limit=10.0)
    assert tally.stopped == "time" and tally.walks == tally.steps == 0
    assert clock.now <= 10.0 + 4096 * 0.001 + 1e-9
    r = sim.result(tally, clock.now)
    assert r.status == "incomplete" and r.reason == "time"
    assert "before any walk took a step" in (r.message or "")


def test_chunked_steps_walk_as_one_batch(monkeypatch) -> None:
    """Under a time limit the steps are evaluated in chunks of walks; the walks are the
    same as in one batch (a limit that is never reached changes no count)."""
    import modelcheck.simulate as simulate_mod

    monkeypatch.setattr(simulate_mod, "STEP_SHARE", 1e-6)  # chunks of ~20 walks
    a, clock, _ = walks(Walker(), 0.05, runs=300, depth=12, time_limit=1e6)
    b, _, _ = walks(Walker(), 0.05, runs=300, depth=12, time_limit=None)
    assert clock.calls > 2 * 12  # (several evaluations per step)
    assert a.stopped is None and b.stopped is None
    for f in ("walks", "steps", "generated", "longest", "ends", "distinct"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.fired.tolist() == b.fired.tolist()
    assert a.new_by_action.tolist() == b.new_by_action.tolist()


def test_simulate_time_reports_cut_walks() -> None:
    """Through :func:`simulate`: a short real limit on a tiny spec ends ``ok`` with
    every walk counted (the ends add up to the walks)."""
    r = simulate(Walker(), seed=1, time_limit=1.0, depth=10_000, walks_per_batch=8)
    sim = r.simulation
    assert sim["stopped_by"] == "time" and sum(sim["walk_ends"].values()) == sim["walks"]
    assert sim["walk_ends"]["cut"] >= 1 and sim["steps"] > 0


class OverheadClock(FakeClock):
    """An expansion costs ``fixed`` seconds plus ``cost`` a state (a spec with many
    action instances: Kafka's 651 cost ~0.9 s a call and ~0.35 ms a walk's step)."""

    def __init__(self, k: Kernel, cost: float, fixed: float) -> None:
        super().__init__(k, cost)
        inner = k.expand

        def expand(words: np.ndarray, **kw: Any) -> Any:
            if kw.get("expand", True):
                self.now += fixed
            return inner(words, **kw)

        k.expand = expand  # type: ignore[method-assign]


def test_chunks_do_not_shrink_below_the_fixed_cost_of_a_call() -> None:
    """With a fixed cost per evaluation larger than a fiftieth of the limit, the chunks
    grow to cost at least twice the fixed cost (a step of 2,048 walks then costs ~5 s)
    instead of shrinking to one walk a call (0.9 s a walk's step: 22 steps in 20 s)."""
    sim = Simulator(Walker(), sim=SimConfig(seed=3, time_limit=20.0))
    k = sim.kernel
    clock = OverheadClock(k, 0.00035, 0.9)
    start = clock.now
    tally = run_walks(k, WalkSet(3, 0, 1, None), weights=sim.weights, depth=100,
                      walks_per_batch=2048, time_limit=20.0, clock=clock)
    assert tally.stopped == "time"
    assert clock.now - start <= 20.0 + 3 * 0.9
    assert tally.steps >= 2 * 2048
