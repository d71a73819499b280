#!/usr/bin/env python3
"""Benchmark ported tlaplus/Examples models (examples/tla/, first batch); print a table.

    python benchmarks/tla_models_1.py                 # every row
    python benchmarks/tla_models_1.py --only bakery

Each row runs in a fresh process (one core): the manifest's configuration, checked
as `modelcheck check` would (temporal properties included where the model has them).
Columns: distinct states (and the manifest's), depth, seconds, distinct states per
second, and the seconds spent building the initial states (`init s`): Bakery's
655,200 initial states are an init_product filtered by its Inv, built in packed batches.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: name: (module, class, constants, manifest distinct states)
ROWS = {
    "bakery": ("examples.tla.bakery", "Bakery", {}, 655_200),
    "simple_regular": ("examples.tla.simple_regular", "SimpleRegular", {}, 277_726),
    "token_ring": ("examples.tla.token_ring", "TokenRing", {}, 46_656),
    "inner_fifo": ("examples.tla.inner_fifo", "InnerFIFO", {}, 3_864),
    "single_lane_bridge": ("examples.tla.single_lane_bridge", "SingleLaneBridge", {}, 3_605),
}

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
from modelcheck import check_liveness
from modelcheck.kernel import Kernel
from {module} import {cls}
spec = {cls}(**{consts!r})
t0 = time.perf_counter()
Kernel(spec, symmetry=False).initial_words()
init_s = time.perf_counter() - t0
t0 = time.perf_counter()
r = check_liveness(spec)
dt = time.perf_counter() - t0
print(json.dumps(dict(status=r.status, distinct=r.distinct_states, depth=r.depth,
                      seconds=dt, init_seconds=init_s,
                      liveness=(r.liveness or {{}}).get("properties", {{}}))))
"""


def run(name: str) -> dict:
    module, cls, consts, _ = ROWS[name]
    code = CHILD.format(root=ROOT, module=module, cls=cls, consts=consts)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", action="append", choices=sorted(ROWS))
    args = ap.parse_args()
    print(f"{'model':<20}{'distinct':>10}{'manifest':>10}{'depth':>6}{'seconds':>9}"
          f"{'states/s':>11}{'init s':>8}  liveness")
    for name in args.only or list(ROWS):
        r = run(name)
        expected = ROWS[name][3]
        live = ", ".join(sorted(set(r["liveness"].values()))) or "-"
        flag = "" if r["distinct"] == expected and r["status"] == "ok" else "  MISMATCH"
        print(f"{name:<20}{r['distinct']:>10,}{expected:>10,}{r['depth']:>6}"
              f"{r['seconds']:>9.2f}{r['distinct'] / r['seconds']:>11,.0f}"
              f"{r['init_seconds']:>8.2f}  {live}{flag}", flush=True)


if __name__ == "__main__":
    main()
