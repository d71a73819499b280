#!/usr/bin/env python3
"""Benchmark the local explorer on the KRaft ladder (L1-L6 of specs/kraft_broker.py); print a table.

    python benchmarks/run.py            # L1-L5
    python benchmarks/run.py --l6       # and L6 (28.7M states)
    python benchmarks/run.py --lifecycle   # and the lifecycle spec, with/without symmetry
    python benchmarks/run.py --zk          # and the ZooKeeper-era controller spec
    python benchmarks/run.py --only L3 --repeat 3
    python benchmarks/run.py --only wave-3000  # the wave spec (benchmarks/wave.py)

Each configuration runs in a fresh process (one core), so peak RSS is its own.
Columns: distinct states, depth, seconds (wall), CPU seconds (user + system of the
exploration: the figure to compare on a shared machine), distinct states per second, peak RSS,
bytes per distinct state measured as (peak RSS - RSS before exploring) / distinct,
and the explorer's own stored bytes per state (visited set + levels).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LADDER = {
    "L1": dict(N=2, P=1, MaxLog=4, MaxRestarts=1),
    "L2": dict(N=3, P=2, MaxLog=4, MaxRestarts=1),
    "L3": dict(N=2, P=1, MaxLog=6, MaxRestarts=2),
    "L4": dict(N=3, P=1, MaxLog=5, MaxRestarts=1),
    "L5": dict(N=2, P=1, MaxLog=8, MaxRestarts=2),
    "L6": dict(N=3, P=1, MaxLog=5, MaxRestarts=2),
}

EXPECTED = {"L1": 5_353, "L2": 257_625, "L3": 552_953, "L4": 1_244_976, "L5": 4_174_997,
            "L6": 28_707_965}

# The message-level lifecycle spec (specs/kraft_lifecycle.py), with and without
# symmetry reduction over brokers: (constants, symmetry, expected distinct states).
LIFECYCLE = {
    "LC-small": (dict(MaxLog=3), True, 151_335),
    "LC-small-nosym": (dict(MaxLog=3), False, 302_670),
    "LC-default": ({}, True, 926_523),
    "LC-default-nosym": ({}, False, 1_853_046),
    "LC-grant": (dict(MaxLog=6, MaxRestarts=0, MaxDelays=0), True, 331_331),
    "LC-grant-nosym": (dict(MaxLog=6, MaxRestarts=0, MaxDelays=0), False, 662_662),
}

# The ZooKeeper-era controller spec (specs/zk_controller.py): (constants, symmetry,
# expected distinct states). ZK-crash adds a process crash and a second session expiry.
ZK = {
    "ZK-default": ({}, True, 311_298),
    "ZK-default-nosym": ({}, False, 622_594),
    "ZK-crash": (dict(MaxCrashes=1, MaxExpiries=2), True, 3_491_049),
}

# The wave spec (benchmarks/wave.py): a chain of N + 3 states through 2 N action
# instances, at most one enabled per state; a level costs what its work costs, not
# what its instances number. Always run: (constants, expected distinct states).
WAVE = {
    "wave-3000": (dict(N=3000), 3_003),
}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
import numpy  # noqa: F401  (counted in the baseline)
from modelcheck import Explorer
from {module} import {cls}
spec = {cls}(**{consts!r})
explorer = Explorer(spec, batch_size={batch}, spill_dir={spill!r}, symmetry={symmetry!r})
def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
base = rss_kb()
ru0 = resource.getrusage(resource.RUSAGE_SELF)
r = explorer.run()
ru1 = resource.getrusage(resource.RUSAGE_SELF)
cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(status=r.status, distinct=r.distinct_states, depth=r.depth,
                      generated=r.generated_states, seconds=r.seconds, cpu=cpu, base_kb=base,
                      peak_kb=peak, stored=r.memory["bytes_per_state"])))
"""


def run_one(name: str, consts: dict, batch: int, spec: str, spill: str | None = None,
            symmetry: bool = True) -> dict:
    module, cls = spec.split(":")
    code = CHILD.format(root=ROOT, module=module, cls=cls, consts=consts, batch=batch,
                        spill=spill, symmetry=symmetry)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = ["taskset", "-c", "0", sys.executable, "-c", code]
    if subprocess.run(["which", "taskset"], capture_output=True).returncode != 0:
        cmd = cmd[3:]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--l6", action="store_true", help="also run L6 (28.7M states)")
    ap.add_argument("--lifecycle", action="store_true",
                    help="also run the lifecycle spec's ladder (with and without symmetry)")
    ap.add_argument("--zk", action="store_true",
                    help="also run the ZooKeeper-era controller spec (ZK-default, ZK-crash)")
    ap.add_argument("--only", action="append", help="run only these configs (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per config (the one of least CPU is shown)")
    ap.add_argument("--batch-size", type=int, default=1 << 16)
    ap.add_argument("--spec", default="specs.kraft_broker:KRaftBroker")
    ap.add_argument("--spill-dir", help="keep BFS levels on disk (Explorer spill_dir)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()
    names = args.only or [n for n in LADDER if n != "L6" or args.l6]
    if args.lifecycle and not args.only:
        names += list(LIFECYCLE)
    if args.zk and not args.only:
        names += list(ZK)
    if not args.only:
        names += list(WAVE)
    header = (f"{'config':<17}{'distinct':>12}{'depth':>7}{'seconds':>9}{'CPU s':>8}"
              f"{'states/s':>11}{'peak RSS':>11}{'B/state':>9}{'stored B/st':>12}  check")
    print(header)
    print("-" * len(header))
    rows = []
    for name in names:
        if name in LIFECYCLE:
            consts, sym, expected = LIFECYCLE[name]
            spec = "specs.kraft_lifecycle:KRaftLifecycle"
        elif name in ZK:
            consts, sym, expected = ZK[name]
            spec = "specs.zk_controller:ZkController"
        elif name in WAVE:
            (consts, expected), sym = WAVE[name], True
            spec = "benchmarks.wave:Wave"
        else:
            consts, sym, expected, spec = LADDER[name], True, EXPECTED[name], args.spec
        runs = [run_one(name, consts, args.batch_size, spec, args.spill_dir, sym)
                for _ in range(args.repeat)]
        r = min(runs, key=lambda x: x["cpu"])
        rate = r["distinct"] / r["seconds"] if r["seconds"] else 0.0
        per_state = (r["peak_kb"] - r["base_kb"]) * 1024 / max(1, r["distinct"])
        ok = "ok" if r["distinct"] == expected else f"MISMATCH (want {expected:,})"
        print(f"{name:<17}{r['distinct']:>12,}{r['depth']:>7}{r['seconds']:>9.2f}{r['cpu']:>8.2f}"
              f"{rate:>11,.0f}"
              f"{r['peak_kb'] / 1024:>9.0f}MB{per_state:>9.1f}{r['stored']:>12}  {ok}",
              flush=True)
        rows.append(dict(config=name, **r, states_per_second=rate, bytes_per_state=per_state))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
