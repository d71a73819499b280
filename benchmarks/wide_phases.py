"""CPU seconds of a wide-state run by phase: the kernel, the batch de-duplication, the
visited set's search and merge, the level merge and the kept successors' words.

The padded two-phase commit model of ``benchmarks/wide_states.py`` (``--form``: 1, 2w1,
2w0, 3 or 4 words), explored ``--repeat`` times in this process; each phase's CPU is
the ``process_time`` spent inside its function (wrapped), of the run of least total
CPU. Compare two trees by running this from each in turn, alternating.

    python benchmarks/wide_phases.py [--form 3] [--n 8] [--repeat 2]
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.wide_states import padded  # noqa: E402
from examples.tla.two_phase import TwoPhase  # noqa: E402
from modelcheck import explore, explorer, kernel, level, store  # noqa: E402

FORMS = {"1": (0, False), "2w1": (40, False), "2w0": (40, True), "3": (100, False),
         "4": (160, False)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--form", choices=sorted(FORMS), default="3")
    ap.add_argument("--n", type=int, default=8, help="resource managers (N)")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    acc: dict[str, float] = {}

    def wrap(owner: Any, name: str, label: str) -> None:
        f: Callable[..., Any] = getattr(owner, name)

        def timed(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                acc[label] = acc.get(label, 0.0) + time.process_time() - t
        setattr(owner, name, timed)

    wrap(kernel.Kernel, "expand", "kernel")
    wrap(level, "dedupe_min", "dedupe")
    wrap(store.FingerprintSet, "contains", "contains")
    wrap(store.FingerprintSet, "add_sorted", "add_sorted")
    wrap(explorer.Explorer, "_merge", "merge")
    wrap(kernel._Changed, "take", "words")
    bits, first = FORMS[args.form]
    spec = (padded(bits, first) if bits else TwoPhase)(N=args.n)
    best: tuple[float, dict[str, float]] | None = None
    for _ in range(args.repeat):
        acc.clear()
        t = time.process_time()
        explore(spec)
        total = time.process_time() - t
        if best is None or total < best[0]:
            best = (total, dict(acc))
    assert best is not None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{args.form} words, N={args.n}: CPU {best[0]:.2f} s, peak RSS {peak} MB; " +
          " ".join(f"{k} {v:.3f}" for k, v in sorted(best[1].items())))


if __name__ == "__main__":
    main()
