#!/usr/bin/env python3
"""Liveness cost next to the safety-only run of the same model.

    python benchmarks/liveness_bench.py                  # L3, L5 and zk
    python benchmarks/liveness_bench.py --only L5
    python benchmarks/liveness_bench.py --only L5 --spill-dir /tmp/spill   # and spilled
    python benchmarks/liveness_bench.py --only L5 --repeat 3   # min of 3 alternating runs

Each run is a fresh process; each model runs twice, safety only (its invariants and
action properties) and with its temporal properties too. Models:

* ``L3``, ``L5``: the KRaft broker ladder (specs/kraft_broker.py) as
  ``KRaftBrokerLive`` (benchmarks/kraft_broker_live.py): weak fairness on Replay and the temporal
  property ``ReplayCatchesUp``: ``offset[1] < logEnd /\\ broker 1 live ~> offset[1] =
  logEnd \\/ broker 1 offline`` (which holds). Its state graph has no cycle.
* ``zk``: the ZooKeeper-era controller under fairness (specs/zk_controller_live.py)
  with MaxData=2, MaxCrashes=2: four properties, 22 weak and 4 strong fairness
  conditions, cycles.

Columns: distinct states, edges of the graph, seconds of the safety run and of the
liveness run (and its ratio; ``decide``: the seconds after the exploration: the graph's
last level, the SCCs, the lassos), CPU seconds of both (the liveness run builds the
graph in a worker thread beside the explorer: on a busy machine, compare these), the
liveness run's main thread's CPU seconds (``main``: on a quiet machine the liveness
run's wall seconds follow them, the worker thread having the other core), peak
RSS of both, the liveness run's extra peak RSS per edge, and the bytes per edge of the
stored graph (``int32`` target and ``uint16`` action; on disk with ``--spill-dir``).
With ``--repeat N`` the safety and the liveness runs alternate N times and each column
shows the run of least wall time (the ratio: of those two minima), which filters out
most of the noise of a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODELS = {
    "L3": ("kraft", dict(N=2, P=1, MaxLog=6, MaxRestarts=2)),
    "L5": ("kraft", dict(N=2, P=1, MaxLog=8, MaxRestarts=2)),
    "zk": ("zk", dict(MaxData=3)),
}

CHILD = r'''
import json, resource, sys, time
sys.path.insert(0, ROOT)
from modelcheck import check_liveness
from modelcheck.config import CheckConfig

if KIND == "kraft":
    from benchmarks.kraft_broker_live import KRaftBrokerLive

    spec = KRaftBrokerLive(**CONSTS)
else:
    from specs.zk_controller_live import ZkControllerLive

    spec = ZkControllerLive(**CONSTS)
# safety only: the invariants and the action properties, without the temporal properties
safety = tuple(p.name for p in (*spec.invariants, *spec.properties))
cfg = CheckConfig(invariants=None if LIVE else safety, spill_dir=SPILL)
t, c, m = time.perf_counter(), time.process_time(), time.thread_time()
r = check_liveness(spec, cfg)
out = {"status": r.status, "distinct": r.distinct_states, "seconds": time.perf_counter() - t,
       "cpu": time.process_time() - c, "main": time.thread_time() - m,
       "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "liveness": r.liveness}
print(json.dumps(out))
'''


def run(kind: str, consts: dict[str, int], live: bool, spill: str | None = None) -> dict:
    code = (CHILD.replace("ROOT", repr(ROOT)).replace("KIND", repr(kind))
            .replace("CONSTS", repr(consts)).replace("LIVE", repr(live))
            .replace("SPILL", repr(spill)))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append", choices=list(MODELS))
    ap.add_argument("--spill-dir", metavar="DIR",
                    help="also run the liveness check with the edge arrays in files here")
    ap.add_argument("--repeat", type=int, default=1, metavar="N",
                    help="alternate the safety and liveness runs N times; show the fastest")
    args = ap.parse_args()
    print(f"{'model':<9} {'states':>10} {'edges':>11} {'safety s':>8} {'liveness s':>10} "
          f"{'ratio':>5} {'decide s':>8} {'cpu s':>11} {'main':>5} {'safety RSS':>10} {'RSS':>8} "
          f"{'B/edge':>6} {'stored':>6}")
    for name, (kind, consts) in MODELS.items():
        if args.only and name not in args.only:
            continue
        runs = [(name, None)] + ([(f"{name} spill", args.spill_dir)] if args.spill_dir else [])
        safes: list[dict] = []
        lives: dict[str, list[dict]] = {label: [] for label, _ in runs}
        for _ in range(max(1, args.repeat)):  # alternating, so drifts in load hit both
            safes.append(run(kind, consts, False))
            for label, spill in runs:
                lives[label].append(run(kind, consts, True, spill))
        safe = min(safes, key=lambda r: r["seconds"])
        for label, _ in runs:
            r = min(lives[label], key=lambda r: r["seconds"])
            lv = r["liveness"]
            edges = lv.get("edges", 0)
            extra = (r["rss_mb"] - safe["rss_mb"]) * 2**20 / max(edges, 1)
            print(f"{label:<9} {r['distinct']:>10,} {edges:>11,} {safe['seconds']:>8.1f} "
                  f"{r['seconds']:>10.1f} {r['seconds'] / safe['seconds']:>5.2f} "
                  f"{lv.get('seconds', 0):>8.1f} {safe['cpu']:>5.1f}/{r['cpu']:<5.1f} "
                  f"{r['main']:>5.1f} "
                  f"{safe['rss_mb']:>7.0f} MB {r['rss_mb']:>5.0f} MB {extra:>6.1f} "
                  f"{lv.get('bytes_per_edge', 0):>6}", flush=True)


if __name__ == "__main__":
    main()
