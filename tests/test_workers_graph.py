"""Temporal properties with ``--workers N``: the state graph the coordinating process
assembles from the bucket tasks' files (:func:`modelcheck.shards.stategraph.
read_state_graph`: each edge's target numbered from its row among its task's successors
and the row the next level's task found for that successor, no search) is the
one-process check's graph, array by array: the nodes and their order, the CSR offsets,
each edge's target and action, the state predicates and the step formulas (random
specs with fairness and step formulas; 1-3 workers, 1-5 buckets, levels on the
workers, in the coordinator or both; batches of 3 states, which split a level's
transitions into many short runs, or one batch; one flush of a task's successors or
many; the graph read by one thread or several)."""

from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import modelcheck.liveness as liveness
from modelcheck import Spec, check_liveness
from modelcheck.liveness import check_liveness_workers
from modelcheck.shards import files
from specs.kraft_lifecycle_live import KRaftLifecycleLiveBugStuckPublisher
from tests.livespec import live_spec


def graph_of(run: Any) -> dict[str, Any]:
    """The arrays of the state graph whose properties ``run()`` decides."""
    got: list[dict[str, Any]] = []
    decide = liveness._decide_into

    def keep(spec: Spec, res: Any, g: Any, *args: Any, **kwargs: Any) -> Any:
        got.append({"fps": np.array(g.fps), "levels": np.array(g.levels),
                    "initial": np.array(g.initial), "indptr": np.array(g.indptr),
                    "dst": np.array(g.dst), "act": np.array(g.act),
                    "preds": {k: np.array(v) for k, v in g.preds.items()},
                    "steps": {k: np.array(v) for k, v in g.steps.items()}})
        return decide(spec, res, g, *args, **kwargs)

    with mock.patch.object(liveness, "_decide_into", keep):
        run()
    (g,) = got
    return g


def assert_same_graph(one: dict[str, Any], many: dict[str, Any]) -> None:
    for key in ("fps", "levels", "initial", "indptr", "dst", "act"):
        assert np.array_equal(one[key], many[key]), key
    assert one["indptr"].dtype == many["indptr"].dtype
    for part in ("preds", "steps"):
        assert one[part].keys() == many[part].keys(), part
        for name, values in one[part].items():
            assert np.array_equal(values, many[part][name]), (part, name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(live_spec(), st.integers(1, 3), st.integers(1, 5), st.sampled_from([0, 0, 3, 10**9]),
       st.sampled_from([3, 1 << 16]), st.sampled_from([2, 1 << 22]),
       st.sampled_from([1, 3]))
def test_the_graph_read_back_is_the_one_process_graph(cls: type[Spec], workers: int,
                                                      buckets: int, threshold: int,
                                                      batch: int, flush: int,
                                                      threads: int) -> None:
    spec = cls()
    one = graph_of(lambda: check_liveness(spec, batch_size=batch))
    expansion = files.LevelExpansion

    def flushing(*args: Any, **kwargs: Any) -> Any:
        return expansion(*args, **{**kwargs, "flush_rows": flush})

    with mock.patch.object(files, "LevelExpansion", flushing), \
            mock.patch.object(liveness, "GRAPH_READ_THREADS", threads):
        many = graph_of(lambda: check_liveness_workers(
            spec, workers=workers, buckets=buckets, driver_threshold=threshold,
            batch_size=batch))
    assert_same_graph(one, many)


@pytest.mark.parametrize(("buckets", "flush"), [(1, 1 << 22), (3, 1000)])
def test_a_kafka_spec_graph_is_the_one_process_graph(
        buckets: int, flush: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of states a level, several batches and flushes a task, targets further
    back than the level before (which the tasks find in the bucket's older level files):
    the same graph."""
    spec = KRaftLifecycleLiveBugStuckPublisher()
    one = graph_of(lambda: check_liveness(spec))
    expansion = files.LevelExpansion
    monkeypatch.setattr(files, "LevelExpansion", lambda *args, **kwargs: expansion(
        *args, **{**kwargs, "flush_rows": flush}))
    many = graph_of(lambda: check_liveness_workers(
        spec, workers=2, buckets=buckets, driver_threshold=0, batch_size=500))
    assert len(many["dst"]) > 1000
    assert_same_graph(one, many)
    # the test says something: some edges go further back than the level before
    levels, indptr, dst = many["levels"], many["indptr"], many["dst"]
    level_of = np.searchsorted(levels, np.arange(len(indptr) - 1), side="right") - 1
    src = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    assert (level_of[src] - level_of[dst] > 1).any()
