#!/usr/bin/env python3
"""Benchmark the ports of tlaplus/Examples models (examples/tla/); print a table.

    python benchmarks/tla_models.py                 # every row
    python benchmarks/tla_models.py --only MultiPaxos_MC_small

Each row runs in a fresh process (one core). Columns: distinct states (and the
repository manifest's count for the model's cfg), depth, seconds, distinct states per
second, peak RSS. Add a row to ROWS for a new port.

A row whose status, distinct-state count or depth differs from the expected ones is
flagged MISMATCH and the run exits 1: the manifest configurations too large for the
test suite (MultiPaxos_MC_small, ~7 min; SimplifiedFastPaxos, ~70 s) are checked here,
and tests/test_tla_models_2.py checks smaller configurations of the same specs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: name: (module, class, constants, manifest distinct-state count, our depth or None)
#: (the manifest's depth counts the initial states as level 1; ours starts at 0)
ROWS = {
    "MultiPaxos_MC_small": ("examples.tla.multi_paxos", "MultiPaxos", {}, 343_796, 27),
    "MCPaxosTiny": ("examples.tla.mc_paxos_tiny", "MCPaxosTiny", {}, 3_921, 16),
    "SimplifiedFastPaxos": ("examples.tla.simplified_fast_paxos", "SimplifiedPaxos", {},
                            1_207, 21),
    "MCCRDT": ("examples.tla.crdt", "MCCRDT", {}, 25_000, 16),
    "Disruptor_SPMC": ("examples.tla.disruptor_spmc", "DisruptorSPMC", {}, 8_496, None),
}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from modelcheck import explore
from {module} import {cls}
spec = {cls}(**{consts!r})
t0 = time.perf_counter()
r = explore(spec)
dt = time.perf_counter() - t0
print(json.dumps(dict(status=r.status, distinct=r.distinct_states, depth=r.depth, seconds=dt,
                      rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      never=sorted(c.name for c in r.coverage if not c.fired))))
"""


def explore_in_child(module: str, cls: str, consts: dict) -> dict:
    """Explore ``module.cls(**consts)`` in a fresh process on one core: its status,
    distinct states, depth, seconds, peak RSS (MB) and the actions that never fired."""
    code = CHILD.format(root=ROOT, module=module, cls=cls, consts=consts)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(name: str) -> dict:
    module, cls, consts, _, _ = ROWS[name]
    return explore_in_child(module, cls, consts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(ROWS))
    args = ap.parse_args()
    print(f"{'model':<22} {'distinct':>10} {'manifest':>10} {'depth':>5} {'seconds':>8} "
          f"{'states/s':>9} {'RSS MB':>7}")
    mismatches = 0
    for name in args.only or ROWS:
        r = run(name)
        _, _, _, distinct, depth = ROWS[name]
        ok = r["status"] == "ok" and r["distinct"] == distinct and depth in (None, r["depth"])
        mismatches += not ok
        mark = "" if ok else "  MISMATCH"
        print(f"{name:<22} {r['distinct']:>10,} {ROWS[name][3]:>10,} {r['depth']:>5} "
              f"{r['seconds']:>8.1f} {r['distinct'] / r['seconds']:>9,.0f} "
              f"{r['rss_mb']:>7.0f}{mark}", flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
