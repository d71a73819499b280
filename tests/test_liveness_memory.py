"""``--memory-limit`` counts the state graph of a liveness check.

The graph is an observer of the one run (:class:`modelcheck.stategraph.GraphCollector`,
:mod:`modelcheck.run.observers`): its bytes count towards the run's memory budget, so
a check whose graph does not fit stops cleanly at the last complete level (status
``incomplete``, reason ``memory``, a message that names the graph's share, the
temporal properties "not checked") instead of building past the limit.

The limit is not written here: the test finds, by bisection, the least limit under
which the safety run alone (the same spec's invariants and action properties, the
same exploration) completes; a liveness check under that limit must stop for memory
(before the graph counted, it completed there, as its explorer holds what the safety
run's holds).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from modelcheck import check, leads_to
from specs.kraft_broker import OFFLINE, KRaftBroker

CONSTANTS = dict(N=2, P=1, MaxLog=6, MaxRestarts=1)


class KRaftBrokerLive(KRaftBroker):
    """The KRaft broker with weak fairness on Replay and a leads-to property."""

    fairness = {"Replay": "weak"}

    @leads_to
    def ReplayCatchesUp(self, s: Any) -> Any:
        return ((s.offset[1] < s.logEnd) & (s.bstate[1] != OFFLINE),
                (s.offset[1] == s.logEnd) | (s.bstate[1] == OFFLINE))


def _least_safety_limit(spec: KRaftBrokerLive, safety: tuple[str, ...]) -> int:
    """The least memory limit (to 4 KiB) under which the safety run completes."""
    lo, hi = 1 << 20, 1 << 20  # the command line takes 1M at least
    while check(spec, invariants=safety, memory_limit=hi).status != "ok":
        lo, hi = hi, hi * 2
    while hi - lo > 4096:
        mid = (lo + hi) // 2
        if check(spec, invariants=safety, memory_limit=mid).status == "ok":
            hi = mid
        else:
            lo = mid
    return hi


def test_a_liveness_check_whose_graph_passes_the_limit_stops_cleanly() -> None:
    spec = KRaftBrokerLive(**CONSTANTS)
    safety = tuple(p.name for p in (*spec.invariants, *spec.properties))
    whole = check(spec)
    assert whole.status == "ok" and whole.liveness["properties"] == {
        "ReplayCatchesUp": "holds"}
    limit = _least_safety_limit(spec, safety)
    assert check(spec, invariants=safety, memory_limit=limit).status == "ok"
    res = check(spec, memory_limit=limit)
    assert (res.status, res.reason) == ("incomplete", "memory")
    assert res.violation is None
    assert res.distinct_states < whole.distinct_states
    assert res.liveness["properties"] == {"ReplayCatchesUp": "not checked"}
    msg = res.message or ""
    assert msg.startswith("Stopped before exceeding the memory limit")
    assert "state graph for the temporal properties" in msg
    # ... and so does the command, with exit status 3 (incomplete) and no traceback
    cmd = [sys.executable, "-m", "modelcheck", "check",
           "tests/test_liveness_memory.py:KRaftBrokerLive", "--format", "json",
           "--memory-limit", str(limit),
           *(a for k, v in CONSTANTS.items() for a in ("--const", f"{k}={v}"))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 3, p.stderr
    assert "Traceback" not in p.stderr
    out = json.loads(p.stdout)
    assert (out["status"], out["reason"]) == ("incomplete", "memory")
    assert out["distinct_states"] == res.distinct_states
    assert "state graph for the temporal properties" in out["message"]


def test_the_edge_stores_spare_capacity_is_counted() -> None:
    """The edge store grows by half its size with ``ndarray.resize``, which zero-fills the
    new part: up to a third of its buffers is spare capacity, resident all the same.
    ``EdgeStore.nbytes`` counts the buffers (it counted the edges alone)."""
    import numpy as np

    from modelcheck.graphstore import EdgeStore

    store = EdgeStore(np.uint16)
    sizes = []
    for m in (10, 70_000, 5_000, 40_000):
        store.append(np.arange(m, dtype=np.int32), np.zeros(m, dtype=np.uint16))
        sizes.append((store.n, store.nbytes))
        buffers = store._dst._buf.nbytes + store._act._buf.nbytes
        assert store.nbytes == buffers >= store.n * store.bytes_per_edge
    assert any(nbytes > n * 6 for n, nbytes in sizes)  # (spare capacity there was)
    dst, act = store.finish()
    assert len(dst) == len(act) == store.n and store.nbytes == store.n * 6  # trimmed


def test_a_liveness_run_counts_the_graphs_spare_capacity(monkeypatch) -> None:
    """Every time the budget asks, the state graph's bytes include its edge store's
    buffers, spare capacity included; a run under a small limit stops cleanly."""
    from modelcheck.stategraph import GraphCollector

    looks: list[tuple[int, int, int]] = []
    real = GraphCollector.nbytes

    def spy(self: GraphCollector) -> int:
        counted = real(self)
        edges = self.edges
        looks.append((counted, edges._dst._buf.nbytes + edges._act._buf.nbytes,
                      edges.n * edges.bytes_per_edge))
        return counted

    monkeypatch.setattr(GraphCollector, "nbytes", spy)
    spec = KRaftBrokerLive(**CONSTANTS)
    assert check(spec, memory_limit=1 << 30).status == "ok"
    assert looks and all(counted >= buffers for counted, buffers, _ in looks)
    assert any(buffers > used for _, buffers, used in looks)
    res = check(spec, memory_limit=4 << 20)
    assert (res.status, res.reason) == ("incomplete", "memory")
    assert res.liveness["properties"] == {"ReplayCatchesUp": "not checked"}
    assert "state graph for the temporal properties" in (res.message or "")
