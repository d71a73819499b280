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
over the run's. ``wait s`` (workers only) is what the levels waited for their slowest
task, in CPU seconds (per job, the slowest task's CPU beyond the mean of its tasks:
the result's ``worker_wait_cpu_ms``), a measure of balance that other work on the
machine disturbs less than the wall seconds. The distinct states and depth are
checked equal to the one-process run's. Measure on a quiet machine: with other work
on the cores, the ratio says how busy they were, not how fast the run is.

Models: the KRaft broker ladder (specs/kraft_broker.py) at L5 and L6, and the two-phase
commit port of TwoPhase.tla (examples/tla/two_phase.py, ``N`` resource managers).
``L5live`` is L5 with liveness: ``KRaftBrokerLive`` of benchmarks/kraft_broker_live.py
(weak fairness on Replay, the temporal property ``ReplayCatchesUp``), checked by
``modelcheck.check(spec, workers=N)`` in a fresh process;
its verdict is checked equal too.

``--one-job K ...`` adds, per ``K``, a run of two workers with one job a level instead
of the two (a commit job, then the expansion by fingerprint ranges): each task commits
one of ``K`` buckets and expands what it committed, the tasks handed to the workers as
each becomes free (the mode of the Spark shards engine; row ``2/bK``). It measures the
alternative the pool's expansion by range replaced (docs/benchmarks.md, "Workers: one
job a level against the expansion by range").

``--profile`` runs the liveness models' check under ``cProfile`` with a CPU-time timer
and adds two columns: the coordinating process's CPU seconds reading the state graph
back from the bucket tasks' files (``graph s``: the thread that reads it while the run
goes on, ``GraphReader``, and ``read_state_graph`` after the run; 0 in one process,
which builds it as it explores) and deciding the properties once the run is over
(``decide s``: with workers the graph read and the SCC and fairness analysis, in one
process the analysis alone). CPU seconds of one process say less about
the load on the machine than wall seconds; the profiler slows the run a little.
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

spec = KRaftBrokerLive(**CONSTS)
prof = None
ahead = [0.0]  # CPU seconds of the thread reading the graph while the run goes on
if PROFILE:
    import cProfile, pstats, time
    from modelcheck.shards import stategraph
    step = stategraph.GraphReader._step
    def timed(self, depth):
        t = time.thread_time()
        try:
            return step(self, depth)
        finally:
            ahead[0] += time.thread_time() - t
    stategraph.GraphReader._step = timed
    prof = cProfile.Profile(time.process_time)
    prof.enable()
r = check(spec, workers=WORKERS)
cpu = {}
if prof is not None:
    prof.disable()
    stats = pstats.Stats(prof).stats
    for (path, _, fn), (_, _, _, cum, _) in stats.items():
        if (fn, path.replace("\\", "/").rsplit("/", 1)[-1]) in (
                ("read_state_graph", "stategraph.py"), ("decide", "liveness.py"),
                ("_decide", "liveness.py")):
            cpu[fn] = cpu.get(fn, 0.0) + cum
print(json.dumps({"distinct_states": r.distinct_states, "depth": r.depth,
                  "verdicts": r.liveness["properties"],
                  "graph": cpu.get("read_state_graph", 0.0) + ahead[0],
                  "decide": cpu.get("decide", cpu.get("_decide", 0.0))}))
'''

#: a run of two workers with one job a level and ``BUCKETS`` buckets (``--one-job``)
ONE_JOB_CHILD = r'''
import sys
sys.path.insert(0, ROOT)
from modelcheck.shards import pool
pool.PoolEngine.ranges = False  # a task commits its bucket and expands it
init = pool.ParallelExplorer.__init__
def with_buckets(self, *a, **k):
    init(self, *a, **dict(k, buckets=BUCKETS))
pool.ParallelExplorer.__init__ = with_buckets
from modelcheck.cli import main
sys.argv = ARGV
main()
'''

MODELS: dict[str, tuple[str, dict[str, int]]] = {
    "L5": ("specs/kraft_broker.py", dict(N=2, P=1, MaxLog=8, MaxRestarts=2)),
    "L6": ("specs/kraft_broker.py", dict(N=3, P=1, MaxLog=5, MaxRestarts=2)),
    "TwoPhase8": ("examples/tla/two_phase.py", dict(N=8)),
    "TwoPhase9": ("examples/tla/two_phase.py", dict(N=9)),
    "L5live": (LIVE, dict(N=2, P=1, MaxLog=8, MaxRestarts=2)),
}
LARGE = ("L6", "TwoPhase9", "L5live")


def run(spec: str, consts: dict[str, int], workers: int, profile: bool = False,
        one_job: int | None = None) -> dict[str, float | int | str]:
    cmd = [sys.executable, "-m", "modelcheck", "check", spec, "--format", "json", "-q",
           "--workers", str(workers)]
    for k, v in consts.items():
        cmd += ["--const", f"{k}={v}"]
    if one_job is not None:
        cmd = [sys.executable, "-c", ONE_JOB_CHILD.replace("ROOT", repr(ROOT))
               .replace("BUCKETS", repr(one_job)).replace("ARGV", repr(["modelcheck", *cmd[3:]]))]
    if spec == LIVE:
        cmd = [sys.executable, "-c", LIVE_CHILD.replace("ROOT", repr(ROOT))
               .replace("CONSTS", repr(consts)).replace("WORKERS", repr(workers))
               .replace("PROFILE", repr(profile))]
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
            "verdicts": json.dumps(r.get("verdicts")),
            "graph": r.get("graph", "-"), "decide": r.get("decide", "-"),
            "wait": r.get("memory", {}).get("worker_wait_cpu_ms", "-")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), help="models to run")
    ap.add_argument("--large", action="store_true", help="also " + ", ".join(LARGE))
    ap.add_argument("--workers", nargs="*", type=int, default=[2],
                    help="worker counts beside one process (default: 2)")
    ap.add_argument("--repeat", type=int, default=1, help="rounds (the minimum is shown)")
    ap.add_argument("--one-job", nargs="*", type=int, default=[], metavar="K",
                    help="also two workers with one job a level and K buckets (row 2/bK)")
    ap.add_argument("--profile", action="store_true",
                    help="liveness models: the coordinator's CPU seconds reading the "
                         "state graph and deciding the properties (cProfile)")
    args = ap.parse_args()
    names = args.only or [n for n in MODELS if n not in LARGE or args.large]
    counts: list[int | str] = [1, *[w for w in args.workers if w != 1],
                               *[f"2/b{k}" for k in args.one_job]]
    print(f"{'model':<10} {'workers':>7} {'distinct':>12} {'depth':>5} {'wall s':>8} "
          f"{'CPU s':>8} {'speed-up':>8} {'wait s':>7}" + (f" {'graph s':>8} {'decide s':>8}"
                                              if args.profile else ""))
    for name in names:
        spec, consts = MODELS[name]
        best: dict[int | str, dict[str, float | int | str]] = {}
        for _ in range(args.repeat):
            for w in counts:
                if isinstance(w, str):
                    if spec == LIVE:
                        continue
                    r = run(spec, consts, 2, one_job=int(w.split("/b")[1]))
                else:
                    r = run(spec, consts, w, args.profile)
                b = best.get(w)
                if b is None or float(r["wall"]) < float(b["wall"]):
                    best[w] = r
        one = best[1]
        for w in counts:
            if w not in best:
                continue
            r = best[w]
            assert (r["distinct"], r["depth"], r["verdicts"]) == \
                (one["distinct"], one["depth"], one["verdicts"]), (name, w)
            extra = "".join(f" {x:>8.2f}" if isinstance(x, float) else f" {x:>8}"
                            for x in (r["graph"], r["decide"])) if args.profile else ""
            wait = f"{r['wait'] / 1000:>7.2f}" if isinstance(r["wait"], int) else f"{'-':>7}"
            print(f"{name:<10} {w:>7} {r['distinct']:>12,} {r['depth']:>5} {r['wall']:>8.2f} "
                  f"{r['cpu']:>8.2f} {float(one['wall']) / float(r['wall']):>7.2f}x {wait}"
                  f"{extra}", flush=True)


if __name__ == "__main__":
    main()
