"""Temporal properties with ``--workers N``: the bucket tasks of a level say where the
targets of the level before's transitions lie (new in the level, or a row of the
bucket's file of a level before, however far back), so the coordinator numbers every
target by gathers (it has no search); and the verdicts stay the one-process check's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import modelcheck.shards.stategraph as stategraph
from modelcheck import check
from modelcheck.liveness import check_liveness_workers
from specs.kraft_lifecycle_live import KRaftLifecycleLiveBugStuckPublisher
from specs.zk_controller_live import ZkControllerLive


@pytest.mark.parametrize("cls", [KRaftLifecycleLiveBugStuckPublisher, ZkControllerLive])
@pytest.mark.parametrize("buckets", [1, 3])
def test_targets_far_back_are_numbered(
        cls: type, buckets: int, monkeypatch: pytest.MonkeyPatch) -> None:
    graphs: list[Any] = []
    read = stategraph.read_state_graph

    def keeping_read(*args: Any, **kwargs: Any) -> Any:
        g = read(*args, **kwargs)
        graphs.append((g.levels.copy(), np.asarray(g.indptr).copy(), np.asarray(g.dst).copy()))
        return g

    monkeypatch.setattr(stategraph, "read_state_graph", keeping_read)
    spec = cls()
    many = check_liveness_workers(spec, workers=2, buckets=buckets, driver_threshold=0)
    one = check(spec)
    assert many.liveness["properties"] == one.liveness["properties"]
    assert many.violation == one.violation
    # the test says something: some targets lie further back than the level before
    # (the tasks looked them up in the bucket's older level files)
    (levels, indptr, dst), = graphs
    n = len(indptr) - 1
    level_of = np.searchsorted(levels, np.arange(n), side="right") - 1
    src = np.repeat(np.arange(n), np.diff(indptr))
    outside = int((np.abs(level_of[dst] - level_of[src]) > 1).sum())
    assert outside < len(dst)  # the spec has forward edges: the test says something
    assert outside > 0
