#!/usr/bin/env python3
"""Liveness cost next to the safety-only run of the same model (the KRaft ladder).

    python benchmarks/liveness_bench.py                 # L3 and L5
    python benchmarks/liveness_bench.py --only L5

Each run is a fresh process. ``KRaftBrokerLive`` (defined here) is the reference model
with weak fairness on Replay and the temporal property ``ReplayCatchesUp``:
``offset[1] < logEnd /\\ broker 1 live ~> offset[1] = logEnd \\/ broker 1 offline``
(which holds). Columns: distinct states, transitions in the graph, seconds, peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LADDER = {"L3": dict(N=2, P=1, MaxLog=6, MaxRestarts=2),
          "L5": dict(N=2, P=1, MaxLog=8, MaxRestarts=2)}

CHILD = r'''
import json, resource, sys, time
sys.path.insert(0, ROOT)
from modelcheck import check_liveness, leads_to
from modelcheck.config import CheckConfig
from specs.kraft_broker import KRaftBroker, OFFLINE

class KRaftBrokerLive(KRaftBroker):
    fairness = {"Replay": "weak"}

    @leads_to
    def ReplayCatchesUp(self, s):
        return ((s.offset[1] < s.logEnd) & (s.bstate[1] != OFFLINE),
                (s.offset[1] == s.logEnd) | (s.bstate[1] == OFFLINE))

spec = KRaftBrokerLive(**CONSTS)
t = time.perf_counter()
cfg = CheckConfig(invariants=None if LIVE else tuple(p.name for p in spec.invariants))
r = check_liveness(spec, cfg)
out = {"status": r.status, "distinct": r.distinct_states, "seconds": time.perf_counter() - t,
       "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "liveness": r.liveness}
print(json.dumps(out))
'''


def run(consts: dict[str, int], live: bool) -> dict:
    code = (CHILD.replace("ROOT", repr(ROOT)).replace("CONSTS", repr(consts))
            .replace("LIVE", repr(live)))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    print(f"{'config':<6} {'mode':<9} {'distinct':>11} {'edges':>11} {'seconds':>8} "
          f"{'liveness s':>10} {'peak RSS':>9}")
    for name, consts in LADDER.items():
        if args.only and name not in args.only:
            continue
        for live in (False, True):
            r = run(consts, live)
            lv = r["liveness"]
            print(f"{name:<6} {'liveness' if live else 'safety':<9} {r['distinct']:>11,} "
                  f"{lv.get('edges', 0):>11,} {r['seconds']:>8.1f} {lv.get('seconds', 0):>10.1f} "
                  f"{r['rss_mb']:>6.0f} MB")


if __name__ == "__main__":
    main()
