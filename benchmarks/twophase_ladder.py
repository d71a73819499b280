#!/usr/bin/env python3
"""The two-phase commit ladder: TwoPhase (examples/tla/two_phase.py) with RM = 7..10.

    python benchmarks/twophase_ladder.py               # RM = 7, 8, 9, 10
    python benchmarks/twophase_ladder.py --rm 7 --rm 8 # chosen sizes
    python benchmarks/twophase_ladder.py --max-rm 9    # 7..9

Each size runs in a fresh process (one explorer process, ``OMP_NUM_THREADS=1``).
Columns: RMs, distinct states, depth (ours: TLC's minus one), wall and CPU seconds
(user + system, of the child process, import included), peak RSS, bytes a state
(peak RSS over distinct states), microseconds of CPU a state, state bits and whether
fingerprints are exact (the state packs into one word) or hashed (with the reported
collision probability). Published figures for comparison (issue 30, stateright's
laptop): RM=8 1,745,408 states; RM=9 10,340,352; RM=10 61,515,776, depth 31.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: RM: the distinct-state count of issue 30's table (TLC and stateright agree)
KNOWN = {8: 1_745_408, 9: 10_340_352, 10: 61_515_776}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
t0, c0 = time.perf_counter(), time.process_time()
from modelcheck import explore
from examples.tla.two_phase import TwoPhase
r = explore(TwoPhase(N={rm}))
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps(dict(status=r.status, distinct=r.distinct_states, depth=r.depth,
                      wall=wall, cpu=cpu,
                      rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      bits=r.state_bits, fingerprint=r.fingerprint,
                      collision=r.collision_probability)))
"""


def run(rm: int) -> dict:
    """Explore TwoPhase with ``rm`` resource managers in a fresh process."""
    out = subprocess.run([sys.executable, "-c", CHILD.format(root=ROOT, rm=rm)],
                         capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    if out.returncode != 0:
        raise SystemExit(f"RM={rm} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rm", type=int, action="append", metavar="N",
                    help="a number of RMs to run (repeatable; default 7..--max-rm)")
    ap.add_argument("--max-rm", type=int, default=10, help="the largest RM (default 10)")
    args = ap.parse_args()
    sizes = args.rm or list(range(7, args.max_rm + 1))
    if any(n < 1 for n in sizes):
        ap.error("--rm takes a positive number of resource managers")
    print(f"{'RM':>3} {'distinct':>11} {'depth':>5} {'wall s':>7} {'CPU s':>7} {'RSS MB':>7} "
          f"{'B/state':>7} {'us/state':>8} {'bits':>4}  fingerprint", flush=True)
    bad = 0
    for rm in sizes:
        r = run(rm)
        want = KNOWN.get(rm)
        ok = r["status"] == "ok" and want in (None, r["distinct"])
        bad += not ok
        fp = ("exact" if r["fingerprint"] == "exact"
              else f"hashed (collision p {r['collision']:.2e})")
        print(f"{rm:>3} {r['distinct']:>11,} {r['depth']:>5} {r['wall']:>7.1f} {r['cpu']:>7.1f} "
              f"{r['rss'] / 2**20:>7.0f} {r['rss'] / r['distinct']:>7.0f} "
              f"{r['cpu'] / r['distinct'] * 1e6:>8.2f} {r['bits']:>4}  {fp}"
              + ("" if ok else f"  MISMATCH (status {r['status']}, expected {want:,})"),
              flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
