"""Temporal properties with ``--workers N``: the bucket tasks of a level look up the
targets of the level before's transitions among their states of that level and the two
before (the coordinating process numbers those by a gather), so the coordinator
searches only the targets further back; and the verdicts stay the one-process check's."""

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
def test_only_targets_further_back_are_searched(
        cls: type, buckets: int, monkeypatch: pytest.MonkeyPatch) -> None:
    found: list[int] = []  # per search in the coordinator: the targets it found
    graphs: list[Any] = []
    key_find, read = stategraph.key_find, stategraph.read_state_graph

    def counting_find(keys: np.ndarray, q: np.ndarray) -> np.ndarray:
        got = key_find(keys, q)
        found.append(int((got >= 0).sum()))
        return got

    def keeping_read(*args: Any, **kwargs: Any) -> Any:
        g = read(*args, **kwargs)
        graphs.append((g.levels.copy(), np.asarray(g.indptr).copy(), np.asarray(g.dst).copy()))
        return g

    monkeypatch.setattr(stategraph, "key_find", counting_find)
    monkeypatch.setattr(stategraph, "read_state_graph", keeping_read)
    spec = cls()
    many = check_liveness_workers(spec, workers=2, buckets=buckets, driver_threshold=0)
    one = check(spec)
    assert many.liveness["properties"] == one.liveness["properties"]
    assert many.violation == one.violation
    # the oracle: from the graph read, the edges whose target is neither in the level
    # after their source's, nor in its, nor in the one before (each is searched for, and
    # found, once)
    (levels, indptr, dst), = graphs
    n = len(indptr) - 1
    level_of = np.searchsorted(levels, np.arange(n), side="right") - 1
    src = np.repeat(np.arange(n), np.diff(indptr))
    outside = int((np.abs(level_of[dst] - level_of[src]) > 1).sum())
    assert outside < len(dst)  # the spec has forward edges: the test says something
    assert sum(found) == outside
