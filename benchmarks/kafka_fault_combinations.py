"""How the Kafka replication model's state count grows with its faults, measured, and
what that says about the author's cfg.

The author's published cfg (three brokers, RF 3, MinISR 2, one unclean shutdown, one
fence, ``VIEW view``) does not finish on one machine in a session; the same cfg with
one of its two faults taken out does (docs/kafka-replication.md, "less one fault"). This
script measures, on a configuration where every combination of faults finishes (by
default the committed two-broker cfg ``tests/kafka_replication/view/v35_b2_base_view.cfg``
with the fault limits set to 0 or 1), how the count of a combination compares with the
product rule

    log S(X) ~ sum over the proper subsets Y of X of (-1)^(|X|-|Y|+1) log S(Y)

(for two faults a and b: S(ab) ~ S(a) S(b) / S(none), the faults multiplying the
states independently; for three: the pairs' counts over the singles'). It prints each
combination's distinct states, depth and CPU seconds, the rule's prediction from the
smaller combinations and the ratio actual/predicted. With ``--author`` it applies the
rule to the author's cfg: ``S(unclean only) S(fence only) / S(neither)`` from the three
finished three-broker counts given, times the range of the ratios measured here for the
pairs (how far the independence assumption is off), as the estimate of the author's
cfg's distinct views.

    python benchmarks/kafka_fault_combinations.py                      # every combination
    python benchmarks/kafka_fault_combinations.py --faults unclean fence
    python benchmarks/kafka_fault_combinations.py --author 1627446 2367285 1163
    python benchmarks/kafka_fault_combinations.py --from-json out.json --author 1627446 2367285 1163

Every run is exact (the port's type bounds are raised so that none is reached: a run
that reached one would stop with a spec error, reported as such). See
docs/kafka-replication.md, "How big the author's cfg is".
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import resource
import sys
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from modelcheck import explore  # noqa: E402
from specs.kafka_replication import (  # noqa: E402
    KafkaReplication,
    KafkaReplicationKip966,
    KafkaReplicationKip966View,
    KafkaReplicationView,
    constants_from_cfg,
    invariants_from_cfg,
)

#: each fault's limit constant, per model
FAULTS = {
    "v3.5": {"clean": "CleanShutdownLimit", "unclean": "UncleanShutdownLimit",
             "fence": "FenceBrokerLimit"},
    "kip-966": {"clean": "NoDataLossShutdownLimit", "unclean": "DataLossShutdownLimit",
                "fence": "FenceBrokerLimit"},
}
#: (without the view, with it)
CLASSES = {"v3.5": (KafkaReplication, KafkaReplicationView),
           "kip-966": (KafkaReplicationKip966, KafkaReplicationKip966View)}
#: the port's type bounds, raised above what any combination of one fault each reaches
BOUNDS = {"MaxEpoch": 12, "MaxMetadataLog": 14, "MsgCap": 8}


def predicted(counts: dict[frozenset[str], int], combo: frozenset[str]) -> float | None:
    """The product rule's prediction of ``combo``'s count from its proper subsets'
    (None for fewer than two faults, or when a subset was not measured)."""
    if len(combo) < 2:
        return None
    total = 0.0
    for k in range(len(combo)):
        for sub in itertools.combinations(sorted(combo), k):
            s = frozenset(sub)
            if s not in counts:
                return None
            total += (-1) ** (len(combo) - k + 1) * math.log(counts[s])
    return math.exp(total)


def run(model: str, cfg: pathlib.Path, faults: list[str]) -> list[dict[str, Any]]:
    text = cfg.read_text()
    base = {**constants_from_cfg(text), **BOUNDS}
    invariants = invariants_from_cfg(text)
    view = any(line.split() == ["VIEW", "view"] for line in text.splitlines())
    cls = CLASSES[model][view]
    rows = []
    for k in range(len(faults) + 1):
        for combo in itertools.combinations(faults, k):
            consts = dict(base)
            for f in faults:
                consts[FAULTS[model][f]] = int(f in combo)
            cpu0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.perf_counter()
            r = explore(cls(**consts), invariants=invariants)
            cpu1 = resource.getrusage(resource.RUSAGE_SELF)
            status = r.status.value if hasattr(r.status, "value") else str(r.status)
            rows.append({"faults": list(combo), "distinct": r.distinct_states,
                         "depth": r.depth, "status": status,
                         "wall": round(time.perf_counter() - t0, 1),
                         "cpu": round(cpu1.ru_utime + cpu1.ru_stime
                                      - cpu0.ru_utime - cpu0.ru_stime, 1)})
            print(f"  {'+'.join(combo) or 'none'}: {r.distinct_states:,} distinct, "
                  f"depth {r.depth}, {status}", file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict[str, Any]]) -> list[float]:
    """Print the table; return the ratios actual/predicted of the two-fault rows."""
    counts = {frozenset(r["faults"]): r["distinct"] for r in rows if r["status"] == "ok"}
    print(f"{'faults':<22} {'distinct':>10} {'depth':>5} {'CPU s':>7} "
          f"{'predicted':>11} {'actual/pred':>11}")
    pairs = []
    for r in rows:
        combo = frozenset(r["faults"])
        p = predicted(counts, combo) if r["status"] == "ok" else None
        ratio = r["distinct"] / p if p else None
        if ratio is not None and len(combo) == 2:
            pairs.append(ratio)
        print(f"{'+'.join(r['faults']) or 'none':<22} {r['distinct']:>10,} {r['depth']:>5} "
              f"{r['cpu']:>7.1f} {'' if p is None else f'{p:,.0f}':>11} "
              f"{'' if ratio is None else f'{ratio:.2f}':>11}"
              + ("" if r["status"] == "ok" else f"  ({r['status']})"))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=sorted(FAULTS), default="v3.5")
    ap.add_argument("--cfg", type=pathlib.Path,
                    default=ROOT / "tests/kafka_replication/view/v35_b2_base_view.cfg",
                    help="the fault-free configuration (its fault limits are overridden)")
    ap.add_argument("--faults", nargs="+", choices=["clean", "unclean", "fence"],
                    default=["clean", "unclean", "fence"])
    ap.add_argument("--json", type=pathlib.Path, help="write the measured rows here")
    ap.add_argument("--from-json", type=pathlib.Path, help="print saved rows, run nothing")
    ap.add_argument("--author", nargs=3, type=int, metavar=("UNCLEAN", "FENCE", "NONE"),
                    help="the author's cfg's finished counts with only the unclean "
                         "shutdown, only the fence, and neither: print its estimate")
    args = ap.parse_args()
    if args.from_json:
        rows = json.loads(args.from_json.read_text())
    else:
        rows = run(args.model, args.cfg, args.faults)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    pairs = table(rows)
    if args.author:
        unclean, fence, none = args.author
        rule = unclean * fence / none
        print(f"\nthe author's cfg by the product rule: {unclean:,} x {fence:,} / {none:,} "
              f"= {rule:.3g} distinct views")
        if pairs:
            lo, hi = min(pairs), max(pairs)
            print(f"times the two-fault ratios measured above ({lo:.2f} to {hi:.2f}): "
                  f"{rule * lo:.2g} to {rule * hi:.2g} distinct views")


if __name__ == "__main__":
    main()
