#!/usr/bin/env python3
"""The large configurations moved out of the test suite, checked and timed; print a table.

    python benchmarks/large_configs.py                 # every row (~10 min on one core)
    python benchmarks/large_configs.py --only zk-crash

Each row was a test that checked, on a configuration of minutes, the same logic that a
smaller configuration of the same spec still checks in the suite (the file named in
the row's ``test`` field). Here each row runs in a fresh process (one core) and is
checked as the test did: status ok, the distinct-state count and depth, and, where the
row says so, that every action fired. Columns: distinct states (and the expected
count), depth, seconds, distinct states per second, check. A row that differs is
flagged MISMATCH and the run exits 1. The tests that replaced each row check that the
row still expects what the test asserted.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # run as a script: benchmarks.tla_models from the checkout
    sys.path.insert(0, ROOT)

from benchmarks.tla_models import explore_in_child  # noqa: E402

#: name: where the test was, spec (module:class), constants, expected status, distinct
#: states, depth, whether every action must fire (coverage)
ROWS: dict[str, dict[str, Any]] = {
    "multi-paxos-mc-small": dict(
        test="tests/test_tla_models_2.py", spec="examples.tla.multi_paxos:MultiPaxos",
        consts={}, distinct=343_796, depth=27, all_fired=False),
    "simplified-fast-paxos": dict(
        test="tests/test_tla_models_2.py",
        spec="examples.tla.simplified_fast_paxos:SimplifiedPaxos",
        consts={}, distinct=1_207, depth=21, all_fired=False),
    "lifecycle-maxlog5": dict(
        test="tests/test_kraft_lifecycle.py", spec="specs.kraft_lifecycle:KRaftLifecycle",
        consts=dict(MaxLog=5), distinct=5_433_538, depth=28, all_fired=True),
    "zk-crash": dict(
        test="tests/test_zk_controller.py", spec="specs.zk_controller:ZkController",
        consts=dict(MaxCrashes=1, MaxExpiries=2), distinct=3_491_049, depth=27,
        all_fired=True),
}

def run(name: str) -> dict[str, Any]:
    """Explore one row in a fresh process; its result as a dict."""
    row = ROWS[name]
    module, cls = row["spec"].split(":")
    return explore_in_child(module, cls, row["consts"])


def mismatch(name: str, r: dict[str, Any]) -> str:
    """What differs from the row's expectations ("" when nothing does)."""
    row = ROWS[name]
    bad = []
    if r["status"] != "ok":
        bad.append(f"status {r['status']}")
    if (r["distinct"], r["depth"]) != (row["distinct"], row["depth"]):
        bad.append(f"want {row['distinct']:,} states, depth {row['depth']}")
    if row["all_fired"] and r["never"]:
        bad.append("never fired: " + ", ".join(r["never"]))
    return "; ".join(bad)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(ROWS))
    args = ap.parse_args()
    print(f"{'config':<23}{'distinct':>11}{'expected':>11}{'depth':>6}{'seconds':>9}"
          f"{'states/s':>10}  check")
    failed = 0
    for name in args.only or list(ROWS):
        r = run(name)
        bad = mismatch(name, r)
        failed += bool(bad)
        print(f"{name:<23}{r['distinct']:>11,}{ROWS[name]['distinct']:>11,}{r['depth']:>6}"
              f"{r['seconds']:>9.1f}{r['distinct'] / max(r['seconds'], 1e-9):>10,.0f}  "
              f"{'MISMATCH: ' + bad if bad else 'ok'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
