#!/usr/bin/env python3
"""``modelcheck check --workers N`` next to the one-process explorer; print a table.

    python benchmarks/workers_bench.py                 # L5 and TwoPhase RM=8, workers 1 and 2
    python benchmarks/workers_bench.py --large         # also L6, TwoPhase RM=9 and L5live
    python benchmarks/workers_bench.py --only L6 --workers 2 4 --repeat 3
    python benchmarks/workers_bench.py --only L5live   # liveness (a temporal property)

Each run is a fresh ``modelcheck check --format json`` process, timed from outside
(wall seconds, and the CPU seconds of the process and its workers, which are its
children); runs of a model alternate between the worker counts, and the table shows
the minimum over ``--repeat`` rounds of each. ``speed-up`` is the one-process wall time
over the run's. The distinct states and depth are checked equal to the one-process
run's. Measure on a quiet machine: with other work on the cores, the ratio says how
busy they were, not how fast the run is.

Models: the KRaft broker ladder (specs/kraft_broker.py) at L5 and L6, and the two-phase
commit port of TwoPhase.tla (examples/tla/two_phase.py, ``N`` resource managers).
``L5live`` is L5 with liveness: ``KRaftBrokerLive`` of benchmarks/kraft_broker_live.py
(weak fairness on Replay, the temporal property ``ReplayCatchesUp``), checked by
``modelcheck.check(spec, workers=N)`` in a fresh process;
its verdict is checked equal too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the spec of a liveness model: made in the child process (LIVE_CHILD)
LIVE = "live"
LIVE_CHILD = r'''
import json, sys
sys.path.insert(0, ROOT)
from modelcheck import check
from benchmarks.kraft_broker_live import KRaftBrokerLive

r = check(KRaftBrokerLive(**CONSTS), workers=WORKERS)
print(json.dumps({"distinct_states": r.distinct_states, "depth": r.depth,
                  "verdicts": r.liveness["properties"]}))
'''

MODELS: dict[str, tuple[str, dict[str, int]]] = {
    "L5": ("specs/kraft_broker.py", dict(N=2, P=1, MaxLog=8, MaxRestarts=2)),
    "L6": ("specs/kraft_broker.py", dict(N=3, P=1, MaxLog=5, MaxRestarts=2)),
    "TwoPhase8": ("examples/tla/two_phase.py", dict(N=8)),
    "TwoPhase9": ("examples/tla/two_phase.py", dict(N=9)),
    "L5live": (LIVE, dict(N=2, P=1, MaxLog=8, MaxRestarts=2)),
}
LARGE = ("L6", "TwoPhase9", "L5live")


def run(spec: str, consts: dict[str, int], workers: int) -> dict[str, float | int]:
    cmd = [sys.executable, "-m", "modelcheck", "check", spec, "--format", "json", "-q",
           "--workers", str(workers)]
    for k, v in consts.items():
        cmd += ["--const", f"{k}={v}"]
    if spec == LIVE:
        cmd = [sys.executable, "-c", LIVE_CHILD.replace("ROOT", repr(ROOT))
               .replace("CONSTS", repr(consts)).replace("WORKERS", repr(workers))]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=ROOT))
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    r = json.loads(p.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "distinct": r["distinct_states"], "depth": r["depth"],
            "verdicts": json.dumps(r.get("verdicts"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), help="models to run")
    ap.add_argument("--large", action="store_true", help="also " + ", ".join(LARGE))
    ap.add_argument("--workers", nargs="*", type=int, default=[2],
                    help="worker counts beside one process (default: 2)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (the minimum is shown)")
    args = ap.parse_args()
    names = args.only or [n for n in MODELS if n not in LARGE or args.large]
    counts = [1, *[w for w in args.workers if w != 1]]
    print(f"{'model':<10} {'workers':>7} {'distinct':>12} {'depth':>5} {'wall s':>8} "
          f"{'CPU s':>8} {'speed-up':>8}")
    for name in names:
        spec, consts = MODELS[name]
        best: dict[int, dict[str, float | int]] = {}
        for _ in range(args.repeat):
            for w in counts:
                r = run(spec, consts, w)
                b = best.get(w)
                if b is None or r["wall"] < b["wall"]:
                    best[w] = r
        one = best[1]
        for w in counts:
            r = best[w]
            assert (r["distinct"], r["depth"], r["verdicts"]) == \
                (one["distinct"], one["depth"], one["verdicts"]), (name, w)
            print(f"{name:<10} {w:>7} {r['distinct']:>12,} {r['depth']:>5} {r['wall']:>8.2f} "
                  f"{r['cpu']:>8.2f} {one['wall'] / r['wall']:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
