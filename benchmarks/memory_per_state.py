"""Bytes a state of the local explorer: peak RSS over distinct states, and the stored data.

Each configuration runs in a fresh process (one core, one thread): the KRaft ladder's L5
(``specs/kraft_broker.py``, one-word states), TwoPhase RM=8 (``examples/tla/two_phase.py``,
one word; RM=9 too) and TwoPhase RM=8 with 40 bits of constant padding (two-word states, the same
state graph; see ``benchmarks/wide_states.py``). Columns: distinct states, peak RSS less
the RSS after the imports, that over the distinct states, the visited set's bytes a
state, the levels' (fingerprints and parent indexes) and both together (the explorer's
``memory`` figures). With ``--baseline REF`` each configuration also runs with the
``modelcheck`` package of git revision ``REF`` (exported to a temporary directory), in
the same run, so that before and after are measured side by side. Memory figures do not
depend on the machine's load.

    python benchmarks/memory_per_state.py [--baseline main] [--only L5]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

CONFIGS: dict[str, str] = {
    "KRaft L5": "from specs.kraft_broker import KRaftBroker\n"
                "spec = KRaftBroker(N=2, P=1, MaxLog=8, MaxRestarts=2)",
    "TwoPhase RM=8": "from examples.tla.two_phase import TwoPhase\nspec = TwoPhase(N=8)",
    "TwoPhase RM=9": "from examples.tla.two_phase import TwoPhase\nspec = TwoPhase(N=9)",
    "TwoPhase RM=8, 2 words": "from benchmarks.wide_states import padded\n"
                              "spec = padded(40, False)(N=8)",
}

CHILD = r"""
import json, resource, sys
sys.path[:0] = {paths!r}
import numpy  # noqa: F401
from modelcheck import Explorer
{make}
def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
explorer = Explorer(spec)
base = rss_kb()
r = explorer.run()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps(dict(distinct=r.distinct_states, base_kb=base, peak_kb=peak,
                      state_bits=r.state_bits, **r.memory)))
"""


def run(make: str, package_root: str | None) -> dict:
    """One configuration in a fresh process (``package_root``: where ``modelcheck`` is
    imported from; the worktree when None)."""
    paths = [str(ROOT)] if package_root is None else [package_root, str(ROOT)]
    code = CHILD.format(paths=paths, make=make)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def export(ref: str, into: str) -> str:
    """The ``modelcheck`` package of git revision ``ref``, exported under ``into``."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "modelcheck"],
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=tar, check=True)
    return into


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", help="also run the modelcheck package of this git ref")
    ap.add_argument("--only", action="append", help="run only these configs (repeatable)")
    args = ap.parse_args()
    names = [n for n in CONFIGS if not args.only or n in args.only]
    print(f"{'config':24}{'code':>10}{'states':>12}{'bits':>6}{'peak MB':>9}"
          f"{'RSS B/st':>10}{'visited B/st':>14}{'levels B/st':>13}{'stored B/st':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        roots: list[tuple[str, str | None]] = [("this", None)]
        if args.baseline:
            roots.insert(0, (args.baseline, export(args.baseline, tmp)))
        for name in names:
            for label, root in roots:
                r = run(CONFIGS[name], root)
                n = max(1, r["distinct"])
                grown = (r["peak_kb"] - r["base_kb"]) * 1024
                print(f"{name:24}{label[:10]:>10}{r['distinct']:>12,}{r['state_bits']:>6}"
                      f"{grown / 1e6:>9.0f}{grown / n:>10.1f}"
                      f"{r['visited_bytes'] / n:>14.1f}{r['levels_bytes'] / n:>13.1f}"
                      f"{(r['visited_bytes'] + r['levels_bytes']) / n:>13.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
