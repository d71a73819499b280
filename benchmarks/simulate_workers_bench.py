#!/usr/bin/env python3
"""Benchmark ``modelcheck simulate --workers N``: walks/s with 1, 2, ... worker processes.

    python benchmarks/simulate_workers_bench.py                  # lifecycle N=3, 24,576 walks
    python benchmarks/simulate_workers_bench.py --runs 12288 --workers 1 2 4 --repeat 3

Each run is the command line (``python -m modelcheck simulate SPEC --seed 0 --runs R
--workers N --format json -q``) in a fresh process, the worker counts alternating, so
that a change in the machine's load hits every count alike. Per run: the walks/s of the
result (its ``seconds``: from the first walk to the last, the workers' start included),
the wall seconds of the whole command (Python's start and the spec's loading too), the
CPU seconds of the command and its workers (the command's own, and the workers' tasks'
as the result reports them: ``simulation.workers_cpu_seconds``), and the load average
when it started. Every
run of a seed must report the same walks, steps and distinct states (the command's
promise); the script says so, or stops.
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


def run(spec: str, consts: list[str], runs: int, workers: int) -> dict[str, float]:
    """One command: its figures."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    args = [sys.executable, "-m", "modelcheck", "simulate", spec, "--seed", "0", "--runs",
            str(runs), "--workers", str(workers), "--format", "json", "-q"]
    for c in consts:
        args += ["--const", c]
    p = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, check=False,
                       env={**os.environ, "PYTHONPATH": ROOT})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f"workers {workers}: exit {p.returncode}\n{p.stderr}")
    d = json.loads(p.stdout)
    sim = d["simulation"]
    own = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"walks/s": sim["walks_per_second"], "seconds": d["seconds"], "wall": wall,
            "cpu": own + sim.get("workers_cpu_seconds", 0.0),
            "load": load, "walks": sim["walks"], "steps": sim["steps"],
            "distinct": d["distinct_states"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/kraft_lifecycle.py")
    ap.add_argument("--const", action="append", default=None,
                    help="K=V (repeatable; default N=3)")
    ap.add_argument("--runs", type=int, default=24_576)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    consts = a.const if a.const is not None else ["N=3"]
    print(f"{a.spec} {' '.join(consts)}, seed 0, {a.runs:,} walks; {os.cpu_count()} cores")
    print(f"{'workers':>7} {'walks/s':>9} {'run s':>7} {'wall s':>7} {'cpu s':>7} "
          f"{'load':>5}")
    counts = None
    for _ in range(a.repeat):
        for w in a.workers:
            r = run(a.spec, consts, a.runs, w)
            got = (r["walks"], r["steps"], r["distinct"])
            if counts is not None and got != counts:
                sys.exit(f"workers {w}: walks, steps, distinct {got} != {counts}")
            counts = got
            print(f"{w:>7} {r['walks/s']:>9,.1f} {r['seconds']:>7.1f} {r['wall']:>7.1f} "
                  f"{r['cpu']:>7.1f} {r['load']:>5.1f}", flush=True)
    assert counts is not None
    print(f"every run: {counts[0]:,} walks, {counts[1]:,} steps, {counts[2]:,} distinct "
          "states")


if __name__ == "__main__":
    main()
