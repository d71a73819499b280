"""``--workers N``: where a level's expansion by fingerprint range is cut.

The coordinator moves the cuts of the next level so that its range tasks take near
equal CPU seconds (:func:`modelcheck.shards.files.balanced_fractions`); the cuts
change only which task expands which states, never the results. Checked here: runs
whose every level is cut at arbitrary fractions (hypothesis, including empty ranges)
give the one-process explorer's result field by field (itself checked against the
brute-force oracle in ``test_workers.py``), and the cuts equalise the measured costs
under the model they assume (a numerical integration of that model as the oracle).
"""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randspec import random_spec
from test_workers import assert_same, parallel

from modelcheck import Explorer, Spec
from modelcheck.shards import engine
from modelcheck.shards.files import balanced_fractions

fraction = st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(0.0, 1.0))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_spec(), random_spec(wide=True)), st.integers(1, 3),
       st.integers(2, 4), st.lists(fraction, min_size=3, max_size=3), st.data())
def test_any_cuts_give_the_one_process_result(cls: type[Spec], workers: int, buckets: int,
                                              cuts: list[float], data: st.DataObject) -> None:
    spec = cls()
    one = Explorer(spec).run()
    fractions = tuple(sorted(cuts)[:buckets - 1]) if data.draw(st.booleans()) \
        else tuple(cuts[:buckets - 1])  # unordered fractions too: made increasing
    with mock.patch.object(engine, "balanced_fractions", lambda *_: fractions):
        many = parallel(spec, workers, buckets=buckets)
    assert_same(one, many)


def _costs(bounds: list[float], cpu: list[float], cuts: list[float]) -> list[float]:
    """The oracle: the CPU of ranges cut at ``cuts`` when the range between
    ``bounds[i]`` and ``bounds[i + 1]`` costs ``cpu[i]``, spread evenly, summed over a
    fine grid of the level."""
    grid = (np.arange(200_000) + 0.5) / 200_000
    part = np.searchsorted(np.asarray(bounds[1:-1]), grid, side="right")
    width = np.diff(np.asarray(bounds))
    density = np.asarray(cpu)[part] / width[part] / len(grid)
    which = np.searchsorted(np.asarray(cuts), grid, side="right")
    return [float(density[which == i].sum()) for i in range(len(cpu))]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.1, 10.0), min_size=2, max_size=5), st.data())
def test_balanced_cuts_equalise_the_measured_costs(cpu: list[float], data: st.DataObject
                                                   ) -> None:
    parts = len(cpu)
    old = None
    if data.draw(st.booleans()):
        old = tuple(sorted(data.draw(st.lists(st.floats(0.05, 0.95), min_size=parts - 1,
                                              max_size=parts - 1, unique=True))))
    new = balanced_fractions(old, cpu)
    assert new is not None and len(new) == parts - 1
    lo = 1 / (4 * parts)
    assert all(b - a >= lo - 1e-9 for a, b in zip((0.0, *new), (*new, 1.0), strict=True))
    bounds = [0.0, *(old or [i / parts for i in range(1, parts)]), 1.0]
    costs = _costs(bounds, cpu, list(new))
    if all(lo + 1e-6 < b - a for a, b in zip((0.0, *new), (*new, 1.0), strict=True)):
        # no range was held at its least share: every one costs the same
        assert max(costs) - min(costs) <= 1e-3 * sum(cpu)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.5, 2.0), min_size=2, max_size=5), st.floats(0.0, 1.0))
def test_a_step_moves_the_cuts_that_share_of_the_way(cpu: list[float], step: float) -> None:
    # costs within 4x of each other: no range reaches its least share (no clamp)
    parts = len(cpu)
    full = balanced_fractions(None, cpu)
    part = balanced_fractions(None, cpu, step)
    assert full is not None and part is not None
    for i, (b, c) in enumerate(zip(part, full, strict=True)):
        a = (i + 1) / parts
        assert abs(b - (a + step * (c - a))) <= 1e-9


def test_short_levels_keep_the_cuts() -> None:
    assert balanced_fractions(None, [0.001, 0.002]) is None
    assert balanced_fractions((0.3,), [0.001, 0.002]) == (0.3,)
    assert balanced_fractions((0.3,), [1.0, 1.0]) == (0.3,)
    assert balanced_fractions(None, [2.0, 1.0]) == (0.375,)  # 2/0.5 per unit, then 1/0.5


def test_the_wait_for_the_slowest_task_is_counted() -> None:
    c = engine.JobCounters("workers")
    c.count_wait([1.0, 3.0])  # the slowest took 1 s beyond the mean
    c.count_wait([5.0])  # one task: nothing to wait for
    c.count_wait([2.0, 2.0, 5.0])
    assert c.wait_cpu == 3.0


def test_a_run_reports_its_wait() -> None:
    from examples.tla.two_phase import TwoPhase

    r = parallel(TwoPhase(N=3), 2, buckets=2)
    assert r.memory["worker_wait_cpu_ms"] >= 0
    assert r.memory["worker_jobs"] > 0
