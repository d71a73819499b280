#!/usr/bin/env python3
"""Benchmark the ported tlaplus/Examples models (examples/tla/); print a table.

    python benchmarks/tla_models.py                 # every row
    python benchmarks/tla_models.py --only MCCRDT --repeat 3

Each row runs in a fresh process (one core) and checks that the distinct-state count
is the one the repository's manifest gives. Columns: model, distinct states, depth
(steps; TLC prints one more), seconds (best of --repeat), distinct states per second.
Add a row per model to ``ROWS``: name, ``module:Class``, constants, expected states.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ROWS = [
    # name, spec, constants, distinct states in the manifest
    ("MCCRDT", "examples.tla.crdt:MCCRDT", {}, 25_000),
    ("Disruptor_SPMC", "examples.tla.disruptor_spmc:DisruptorSPMC", {}, 8_496),
]

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from modelcheck import explore
from {module} import {cls}
spec = {cls}(**{consts!r})
t0 = time.perf_counter()
r = explore(spec)
print(json.dumps({{"status": r.status, "distinct": r.distinct_states, "depth": r.depth,
                  "seconds": time.perf_counter() - t0}}))
"""


def run_row(spec: str, consts: dict) -> dict:
    module, cls = spec.split(":")
    code = CHILD.format(root=ROOT, module=module, cls=cls, consts=consts)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", help="run only this row (repeatable)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per row; the best counts")
    args = ap.parse_args()
    rows = [r for r in ROWS if not args.only or r[0] in args.only]
    print(f"{'model':<20} {'states':>12} {'depth':>6} {'seconds':>8} {'states/s':>11}")
    failed = False
    for name, spec, consts, expected in rows:
        runs = [run_row(spec, consts) for _ in range(max(1, args.repeat))]
        best = min(runs, key=lambda r: r["seconds"])
        rate = best["distinct"] / best["seconds"] if best["seconds"] else float("inf")
        mark = "" if best["distinct"] == expected and best["status"] == "ok" else \
            f"   MISMATCH: manifest {expected:,}, status {best['status']}"
        failed |= bool(mark)
        print(f"{name:<20} {best['distinct']:>12,} {best['depth']:>6} "
              f"{best['seconds']:>8.2f} {rate:>11,.0f}{mark}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
