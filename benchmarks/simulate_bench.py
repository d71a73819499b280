#!/usr/bin/env python3
"""Benchmark random simulation on the KRaft specs; print walks/s, steps/s and shrinking.

    python benchmarks/simulate_bench.py                 # 10 s per configuration
    python benchmarks/simulate_bench.py --seconds 30

Table 1, speed: the batch simulator (many walks advance together, one kernel
evaluation per step of the batch) against a plain Python random walk over the scalar
evaluator (``Kernel.successors`` of one state, then a uniform choice), on one core.
Table 2, shrinking: for each lifecycle bug variant with three brokers (too big to
explore exhaustively in minutes), the walk that found it, the found and shrunk
lengths (states) and what the shrinker's bounded BFS proved.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


from modelcheck.kernel import Kernel  # noqa: E402
from modelcheck.simulate import simulate, uniform, walk_generator  # noqa: E402
from specs import kraft_broker, kraft_lifecycle  # noqa: E402

SPEED = [
    ("broker L1 (N=2)", kraft_broker.KRaftBroker, {}),
    ("broker L7 (N=3, MaxLog=6, MaxRestarts=2)", kraft_broker.KRaftBroker,
     dict(N=3, MaxLog=6, MaxRestarts=2)),
    ("lifecycle N=2", kraft_lifecycle.KRaftLifecycle, {}),
    ("lifecycle N=3", kraft_lifecycle.KRaftLifecycle, dict(N=3)),
]

BUGS = ["KRaftLifecycleBugLiveReregistration", "KRaftLifecycleBugNoOffsetCheck",
        "KRaftLifecycleBugStaleEpoch", "KRaftLifecycleBugFenceKeepsLeader",
        "KRaftLifecycleBugEarlyShutdownGrant"]


def scalar_walks(spec, seconds: float, depth: int = 100) -> tuple[float, float]:
    """walks/s and steps/s of a plain random walk over the scalar evaluator."""
    k = Kernel(spec, symmetry=False)
    inits = k.initial_states()
    walks = steps = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        g = walk_generator(0, walks)
        cur = inits[int(uniform(g) * len(inits))]
        for _ in range(depth):
            succ = k.successors(cur)
            if not succ:
                break
            cur = succ[int(uniform(g) * len(succ))][1]
            steps += 1
        walks += 1
    dt = time.perf_counter() - t0
    return walks / dt, steps / dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--no-bugs", action="store_true")
    args = ap.parse_args()
    print(f"{'configuration':<42} {'engine':<10} {'walks/s':>9} {'steps/s':>10} "
          f"{'distinct':>10}")
    for name, cls, consts in SPEED:
        spec = cls(**consts)
        r = simulate(spec, seed=0, time_limit=args.seconds, shrink=False)
        s = r.simulation
        print(f"{name:<42} {'batch':<10} {s['walks_per_second']:>9,.0f} "
              f"{s['steps_per_second']:>10,.0f} {r.distinct_states:>10,}", flush=True)
        w, st = scalar_walks(spec, min(args.seconds, 5.0))
        print(f"{'':<42} {'scalar':<10} {w:>9,.0f} {st:>10,.0f} {'':>10}", flush=True)
    if args.no_bugs:
        return
    print()
    print(f"{'bug variant (N=3, seed 0)':<40} {'property':<24} {'walk':>7} {'found':>6} "
          f"{'shrunk':>7} {'BFS':<8} {'seconds':>8}")
    for name in BUGS:
        cls = getattr(kraft_lifecycle, name)
        t0 = time.perf_counter()
        r = simulate(cls(N=3), seed=0, time_limit=60)
        s = r.simulation
        v = r.violation
        print(f"{name:<40} {v.property if v else '-':<24} {s.get('violation_walk', '-'):>7} "
              f"{s.get('found_length', '-'):>6} {s.get('shrunk_length', '-'):>7} "
              f"{(s.get('shrinking') or {}).get('bfs', '-'):<8} "
              f"{time.perf_counter() - t0:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
