"""Temporal properties with ``--workers N``: the state graph the coordinating process
assembles from the bucket tasks' files (:func:`modelcheck.shards.stategraph.
read_state_graph`: each edge's target numbered from its row among its task's successors
and the row the next level's task found for that successor, no search) is the
one-process check's graph, array by array: the nodes and their order, the CSR offsets,
each edge's target and action, the state predicates and the step formulas (random
specs with fairness and step formulas; 1-3 workers, 1-5 buckets, levels on the
workers, in the coordinator or both; batches of 3 states, which split a level's
transitions into many short runs, or one batch; one flush of a task's successors or
many; the graph read by one thread or several). What the read collects beside the
arrays (the edges that do not go one level up, the nodes of each fairness condition's
actions with a step) is checked against what the arrays give, found by brute force."""

from __future__ import annotations

from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import modelcheck.graphstore as graphstore
import modelcheck.liveness as liveness
from modelcheck import Spec, check_liveness
from modelcheck.liveness import check_liveness_workers
from modelcheck.shards import files, stategraph
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
                    "steps": {k: np.array(v) for k, v in g.steps.items()},
                    "back": None if g.back is None else (np.array(g.back[0]),
                                                         np.array(g.back[1])),
                    "enabled_sets": {k: np.array(v) for k, v in g.enabled_sets.items()},
                    "conditions": sorted({c.action_ids for _, cs in args[0] for c in cs
                                          if not c.guards}),
                    "may_cycle": [(np.array(m), np.array(r)) for m, r in g.may_cycle],
                    "masks": [np.ones(g.n, dtype=bool) if m is None else ~g.preds[m]
                              for m in dict.fromkeys(liveness._first_cycle_masks(
                                  [p for p, _ in args[0]]))
                              if m is None or m in g.preds]})
        return decide(spec, res, g, *args, **kwargs)

    with mock.patch.object(liveness, "_decide_into", keep):
        run()
    (g,) = got
    return g


def assert_collected(g: dict[str, Any], back: bool = True, cycles: bool = True) -> None:
    """The edges that do not go one level up (unless dropped as too many; ``back``:
    they must be there), the nodes with a step by each fairness condition's actions
    and the first passes of the cycle search (unless not followed: edges spilled, or
    those not going one level up dropped; ``cycles``: they must be there) that the read
    of ``g`` collected are those its arrays give, found by brute force and by the
    analysis' own pass."""
    levels, indptr, dst, act = g["levels"], g["indptr"], g["dst"], g["act"]
    n = len(indptr) - 1
    src = np.repeat(np.arange(n), np.diff(indptr))
    level_of = np.searchsorted(levels, np.arange(n), side="right") - 1
    up = dst >= levels[level_of[src] + 1]  # (an edge goes at most one level up)
    want = sorted(zip(src[~up].tolist(), dst[~up].tolist(), strict=True))
    if back or g["back"] is not None:
        assert g["back"] is not None
        assert g["back"][0].dtype == g["back"][1].dtype == np.int32
        got = sorted(zip(g["back"][0].tolist(), g["back"][1].tolist(), strict=True))
        assert got == want
    assert sorted(g["enabled_sets"]) == g["conditions"]
    # the first passes of the cycle search followed as the levels were read: those the
    # analysis would make, within the masks it starts from
    if (back and cycles) or g["may_cycle"]:
        assert len(g["may_cycle"]) == len(g["masks"])
        for (mask, got), want in zip(g["may_cycle"], g["masks"], strict=True):
            assert np.array_equal(mask, want)
            assert np.array_equal(got, liveness._may_cycle(levels, indptr, dst, mask))
    for ids, nodes in g["enabled_sets"].items():
        brute = np.zeros(n, dtype=bool)
        for e in range(len(dst)):
            if int(act[e]) in ids:
                brute[src[e]] = True
        assert nodes.dtype == bool
        assert np.array_equal(nodes, brute), ids


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
       st.sampled_from([1, 3]), st.booleans(), st.booleans())
def test_the_graph_read_back_is_the_one_process_graph(cls: type[Spec], workers: int,
                                                      buckets: int, threshold: int,
                                                      batch: int, flush: int,
                                                      threads: int, ahead: bool,
                                                      few_back: bool) -> None:
    spec = cls()
    one = graph_of(lambda: check_liveness(spec, batch_size=batch))
    expansion = files.LevelExpansion

    def flushing(*args: Any, **kwargs: Any) -> Any:
        return expansion(*args, **{**kwargs, "flush_rows": flush})

    with mock.patch.object(files, "LevelExpansion", flushing), \
            mock.patch.object(liveness, "GRAPH_READ_THREADS", threads), \
            mock.patch.object(liveness, "GRAPH_READ_AHEAD", ahead), \
            mock.patch.object(graphstore, "BACK_BYTES", 0 if few_back else
                              graphstore.BACK_BYTES):
        many = graph_of(lambda: check_liveness_workers(
            spec, workers=workers, buckets=buckets, driver_threshold=threshold,
            batch_size=batch))
        dropped = back_dropped(many)
    assert_same_graph(one, many)
    # (kept past a quarter of the edges only while they take at most BACK_BYTES)
    assert (many["back"] is None) == dropped
    # (the first passes followed may keep twice that: with few_back they may stop)
    assert_collected(many, back=not dropped, cycles=not few_back)


def back_dropped(g: dict[str, Any]) -> bool:
    """Whether a read of ``g`` drops the edges that do not go one level up: after some
    level they take more than ``BACK_BYTES`` and ``BACK_SHARE`` of the edges of the
    levels so far (8 bytes each), counted here from the graph's arrays."""
    levels, indptr, dst = g["levels"], g["indptr"], g["dst"]
    edges = back = 0
    for lv in range(len(levels) - 1):
        lo, hi = int(indptr[levels[lv]]), int(indptr[levels[lv + 1]])
        edges += hi - lo
        back += int((dst[lo:hi] < levels[lv + 1]).sum())
        if 8 * back > max(graphstore.BACK_BYTES, 8 * graphstore.BACK_SHARE * edges):
            return True
    return False


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
    assert_collected(many)
    # the test says something: some edges go further back than the level before
    levels, indptr, dst = many["levels"], many["indptr"], many["dst"]
    level_of = np.searchsorted(levels, np.arange(len(indptr) - 1), side="right") - 1
    src = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    assert (level_of[src] - level_of[dst] > 1).any()


def read_ahead(run: Any, edge_limit: int | None = None) -> tuple[dict[str, Any], int]:
    """The graph of ``run()`` and how many levels its reader had read while the run went
    on (-1: it gave up)."""
    seen: list[int] = []
    take = stategraph.GraphReader.take

    def taking(self: stategraph.GraphReader) -> Any:
        got = take(self)
        seen.append(-1 if got is None else self.levels_read)
        return got

    with mock.patch.object(stategraph.GraphReader, "take", taking), \
            mock.patch.object(liveness, "SPILL_EDGES", edge_limit or liveness.SPILL_EDGES):
        g = graph_of(run)
    (levels,) = seen
    return g, levels


@pytest.mark.parametrize("threshold", [0, 200])
def test_the_graph_is_read_while_the_run_goes_on(threshold: int) -> None:
    """The reader has read every level while the run went on (levels on the workers, or
    the small ones in the coordinator; the last once the run committed its empty next
    level), and the graph is the one process's; past the edges it may hold it gives up
    and the read after the run (spilled to files) gives the same graph."""
    spec = KRaftLifecycleLiveBugStuckPublisher()
    one = graph_of(lambda: check_liveness(spec))
    def run() -> Any:
        return check_liveness_workers(spec, workers=2, driver_threshold=threshold,
                                      batch_size=500)

    many, levels = read_ahead(run)
    assert_same_graph(one, many)
    assert_collected(many)
    assert levels == len(one["levels"]) - 1
    spilled, levels = read_ahead(run, edge_limit=len(one["dst"]) // 2)
    assert levels == -1
    assert_same_graph(one, spilled)
    assert_collected(spilled, cycles=False)  # (the edges in files: the analysis' pass)


def test_a_run_that_ends_early_stops_its_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that stops before it is complete (``max_states``) decides nothing, and the
    reader that read its levels meanwhile is stopped with it (no thread left)."""
    made: list[stategraph.GraphReader] = []
    init = stategraph.GraphReader.__init__

    def making(self: stategraph.GraphReader, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(stategraph.GraphReader, "__init__", making)
    res = check_liveness_workers(KRaftLifecycleLiveBugStuckPublisher(), workers=2,
                                 driver_threshold=0, max_states=2000)
    assert res.status.value == "incomplete"
    assert set(res.liveness["properties"].values()) == {"not checked"}
    (reader,) = made
    assert reader.levels_read > 0  # it was reading
    assert reader._pool is None  # and is stopped
