"""Benchmark of the Spark backend against the local explorer on the KRaft reference model.

Runs, each in its own process: the local explorer, Spark ``local[1]`` and Spark
``local[2]`` on KRaft L5 (N=2 P=1 MaxLog=8 MaxRestarts=2: 4,174,997 states, depth
36), and with ``--l6`` also on L6 (N=3 P=1 MaxLog=5 MaxRestarts=2: 28,707,965
states). It prints one table row per run: distinct states, depth, seconds
(exploration only; the Spark session start-up is shown apart), distinct states per
second, Spark's fixed cost per level (seconds per level of a chain spec whose levels
hold one state each), the driver's peak RSS (the Python process) and the executors'
peak RSS (the JVM, which in local mode is driver and executor at once, and the
Python workers, summed), sampled with psutil, and the CPU seconds of the exploration
(after the session start): the driver's Python, the JVM and the Python workers
(``cpu`` is their sum; on N cores a Spark run is at best ``cpu / N`` long, so it
beats the local explorer by a factor f only if its CPU is at most N/f times the
local explorer's).

    python benchmarks/spark_bench.py            # L5
    python benchmarks/spark_bench.py --l6       # L5 and L6
    python benchmarks/spark_bench.py --configs L3 --masters 'local[2]' --json out.json
    python benchmarks/spark_bench.py --configs L7 --masters 'local[2]'  # ~10^8 states
    python benchmarks/spark_bench.py --configs L6 --masters in-process  # the pipeline alone

``--masters in-process`` runs the shard engine's tasks one after the other in the
benchmark's process, without Spark (every level as tasks): the CPU of the pipeline
itself, to set against the local explorer's and a Spark run's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIGS: dict[str, dict[str, int]] = {
    "L1": {"N": 2, "P": 1, "MaxLog": 4, "MaxRestarts": 1},
    "L3": {"N": 2, "P": 1, "MaxLog": 6, "MaxRestarts": 2},
    "L5": {"N": 2, "P": 1, "MaxLog": 8, "MaxRestarts": 2},
    "L6": {"N": 3, "P": 1, "MaxLog": 5, "MaxRestarts": 2},
    "L7": {"N": 3, "P": 1, "MaxLog": 6, "MaxRestarts": 2},
}
CHAIN = '''
from modelcheck import Const, Int, Spec, action


class Chain(Spec):
    """One state per level: what a level costs when there is nothing to do."""

    check_deadlock = False
    Max = Const(40)
    x = Int(0, Max)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < self.Max
'''


def cpu_snapshot() -> dict[int, tuple[str, float]]:
    """CPU seconds (user + system, with reaped children) of this process and of each
    of its descendants, by pid: ``{pid: (kind, seconds)}``, kind ``driver``, ``jvm``
    or ``workers``."""
    import psutil

    me = psutil.Process()
    out: dict[int, tuple[str, float]] = {}
    procs = [me]
    try:
        procs += me.children(recursive=True)
    except psutil.Error:
        pass
    for p in procs:
        try:
            t = p.cpu_times()
            name = p.name()
        except psutil.Error:
            continue
        kind = "driver" if p.pid == me.pid else "jvm" if name == "java" else "workers"
        out[p.pid] = (kind, t.user + t.system + t.children_user + t.children_system)
    return out


def jvm_threads() -> dict[tuple[int, int], tuple[str, float, float]]:
    """CPU seconds of every thread of this process's JVM descendants, by (pid, tid):
    ``{(pid, tid): (name, user, system)}`` (the thread's name as Linux keeps it, 15
    characters, digits dropped so that a pool's threads group together)."""
    import psutil

    out: dict[tuple[int, int], tuple[str, float, float]] = {}
    try:
        children = psutil.Process().children(recursive=True)
    except psutil.Error:
        return out
    for p in children:
        try:
            if p.name() != "java":
                continue
            threads = p.threads()
        except psutil.Error:
            continue
        for t in threads:
            try:
                with open(f"/proc/{p.pid}/task/{t.id}/comm") as f:
                    name = f.read().strip()
            except OSError:
                name = "?"
            out[(p.pid, t.id)] = (re.sub(r"[0-9]+", "#", name), t.user_time,
                                  t.system_time)
    return out


def threads_between(before: dict[tuple[int, int], tuple[str, float, float]],
                    after: dict[tuple[int, int], tuple[str, float, float]]
                    ) -> dict[str, list[float]]:
    """CPU seconds (user, system) of the JVMs' threads between two :func:`jvm_threads`
    calls, summed by thread name (threads that ended in between are not counted)."""
    out: dict[str, list[float]] = {}
    for key, (name, user, system) in after.items():
        _, u0, s0 = before.get(key, (name, 0.0, 0.0))
        got = out.setdefault(name, [0.0, 0.0])
        got[0] += user - u0
        got[1] += system - s0
    return dict(sorted(out.items(), key=lambda kv: -sum(kv[1])))


def cpu_between(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]
                ) -> dict[str, float]:
    """CPU seconds spent between two :func:`cpu_snapshot` calls, by kind and in all
    (``cpu``); processes that ended in between and were not reaped are not counted."""
    out = {"driver": 0.0, "jvm": 0.0, "workers": 0.0}
    for pid, (kind, secs) in after.items():
        out[kind] += secs - before.get(pid, (kind, 0.0))[1]
    out["cpu"] = sum(out.values())
    return out


class Sampler:
    """Peak RSS of this process's children, sampled: JVMs and Python workers apart."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.jvm_peak = 0
        self.workers_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.is_set():
            jvm = workers = 0
            try:
                children = me.children(recursive=True)
            except psutil.Error:
                children = []
            for p in children:
                try:
                    name = p.name()
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                if name == "java":
                    jvm += rss
                elif name.startswith("python"):
                    workers += rss
            self.jvm_peak = max(self.jvm_peak, jvm)
            self.workers_peak = max(self.workers_peak, workers)
            self._stop.wait(self.interval)


def run_one(backend: str, config: str, partitions: int | None, engine: str = "auto",
            fixed: bool = True, profile: str | None = None) -> dict[str, Any]:
    """One measurement in this process (called in a child process by :func:`main`)."""
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    from modelcheck.loader import load_spec_class

    spec = load_spec_class("specs/kraft_broker.py:KRaftBroker")(**CONFIGS[config])
    out: dict[str, Any] = {"backend": backend, "config": config}
    with Sampler() as sampler:
        if backend == "local":
            from modelcheck.explorer import Explorer

            before = cpu_snapshot()
            r = Explorer(spec).run()
            out.update(cpu_between(before, cpu_snapshot()))
            out["startup"] = 0.0
            out["fixed_per_level"] = None
        elif backend == "in-process":
            # The shard engine's tasks one after the other in this process, no Spark:
            # what the pipeline itself costs, apart from Spark's share.
            from spark_explore.driver import SparkExplorer

            before = cpu_snapshot()
            r = SparkExplorer(spec, spark=_NoSpark(partitions or 2),
                              spec_target="specs/kraft_broker.py:KRaftBroker",
                              driver_threshold=0, engine="shards").run()
            out.update(cpu_between(before, cpu_snapshot()))
            out.update(startup=0.0, fixed_per_level=None, spark_jobs=r.memory["spark_jobs"],
                       driver_levels=0, partitions=r.memory["partitions"],
                       task_cpu=r.memory["spark_task_cpu_ms"] / 1000, driver_level_cpu=0.0)
        else:
            from spark_explore.driver import SparkExplorer
            from spark_explore.session import get_session

            t0 = time.perf_counter()
            spark, _ = get_session(backend)
            spark.range(1).count()
            out["startup"] = time.perf_counter() - t0
            out["fixed_per_level"] = fixed_cost(spark, engine) if fixed else None
            before, threads = cpu_snapshot(), jvm_threads()
            if profile:
                import cProfile

                prof = cProfile.Profile()
                prof.enable()
            r = SparkExplorer(spec, spark=spark, partitions=partitions, engine=engine).run()
            if profile:
                prof.disable()
                prof.dump_stats(profile)
            out.update(cpu_between(before, cpu_snapshot()))
            out["jvm_threads"] = threads_between(threads, jvm_threads())
            out["spark_jobs"] = r.memory.get("spark_jobs")
            out["driver_levels"] = r.memory.get("driver_levels")
            out["partitions"] = r.memory.get("partitions")
            out["task_cpu"] = r.memory.get("spark_task_cpu_ms", 0) / 1000
            out["driver_level_cpu"] = r.memory.get("driver_level_cpu_ms", 0) / 1000
            out["job_wall"] = r.memory.get("spark_job_wall_ms", 0) / 1000
            out["driver_wall"] = r.memory.get("driver_level_wall_ms", 0) / 1000
            spark.stop()
    out.update(distinct=r.distinct_states, depth=r.depth, generated=r.generated_states,
               seconds=r.seconds, status=r.status,
               driver_peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               jvm_peak_rss=sampler.jvm_peak, workers_peak_rss=sampler.workers_peak)
    return out


class _NoSpark:
    """A stand-in session whose jobs run their tasks in this process, in turn."""

    class _Rdd:
        def __init__(self, items: Any) -> None:
            self.items = list(items)

        def map(self, fn: Any) -> Any:
            return _NoSpark._Rdd(fn(x) for x in self.items)

        def collect(self) -> list[Any]:
            return self.items

    class _Context:
        master = "local[in-process]"

        def __init__(self, cores: int) -> None:
            self.defaultParallelism = cores

        def setJobDescription(self, text: str | None) -> None:
            pass

        def parallelize(self, items: Any, n: int | None = None) -> Any:
            return _NoSpark._Rdd(items)

    def __init__(self, cores: int) -> None:
        self.sparkContext = self._Context(cores)


def fixed_cost(spark: Any, engine: str = "auto") -> float:
    """Mean seconds per level of a chain spec (one state per level), after warm-up."""
    from modelcheck.loader import load_spec_class
    from spark_explore.driver import SparkExplorer

    d = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    path = d / "bench_chain.py"
    path.write_text(CHAIN)
    spec = load_spec_class(f"{path}:Chain")(Max=25)
    secs: list[float] = []
    # Every level a Spark job: this measures what one costs.
    SparkExplorer(spec, spark=spark, max_depth=3, driver_threshold=0,
                  engine=engine).run()  # warm-up
    SparkExplorer(spec, spark=spark, driver_threshold=0, engine=engine,
                  progress=lambda p: secs.append(p.seconds)).run()
    return sum(secs[2:]) / max(1, len(secs[2:]))


def _mb(n: int | None) -> str:
    return "-" if not n else f"{n / 2**20:,.0f} MB"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--l6", action="store_true", help="also run L6 (28.7M states)")
    ap.add_argument("--configs", nargs="*", default=None, help="configs (default L5 [L6])")
    ap.add_argument("--masters", nargs="*", default=["local[1]", "local[2]"])
    ap.add_argument("--no-local", action="store_true", help="skip the local explorer")
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--engine", default="auto", choices=["auto", "shards", "rdd"],
                    help="the Spark engine (auto: shards on local masters)")
    ap.add_argument("--no-fixed", action="store_true",
                    help="skip measuring Spark's fixed cost per level (s/level)")
    ap.add_argument("--profile", default=None, metavar="FILE",
                    help="cProfile the driver of a single --one run into FILE")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--one", nargs=2, metavar=("BACKEND", "CONFIG"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print("RESULT " + json.dumps(run_one(args.one[0], args.one[1], args.partitions,
                                             args.engine, not args.no_fixed, args.profile)))
        return
    configs = args.configs or (["L5", "L6"] if args.l6 else ["L5"])
    backends = ([] if args.no_local else ["local"]) + list(args.masters)
    rows: list[dict[str, Any]] = []
    extra: list[str] = []
    header = (f"{'config':<6} {'backend':<9} {'distinct':>11} {'depth':>5} "
              f"{'seconds':>8} {'CPU s':>7} {'(drv/jvm/py)':>16} {'states/s':>10} {'startup':>8} "
              f"{'s/level':>8} {'driver RSS':>11} "
              f"{'JVM RSS':>9} {'workers RSS':>11}")
    print(header)
    print("-" * len(header))
    for config in configs:
        for backend in backends:
            cmd = [sys.executable, __file__, "--one", backend, config]
            if args.partitions:
                cmd += ["--partitions", str(args.partitions)]
            cmd += ["--engine", args.engine]
            if args.no_fixed:
                cmd += ["--no-fixed"]
            p = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
            line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
            if line is None:
                print(f"{config:<6} {backend:<9} FAILED: "
                      f"{p.stderr.strip()[-500:]}")
                continue
            r = json.loads(line[len("RESULT "):])
            rows.append(r)
            rate = r["distinct"] / r["seconds"] if r["seconds"] else 0.0
            fixed = "-" if r["fixed_per_level"] is None else f"{r['fixed_per_level']:.2f}"
            if "task_cpu" in r:
                extra.append(f"{config} {backend}: CPU of the levels' tasks "
                             f"{r['task_cpu']:.1f} s on executors, "
                             f"{r['driver_level_cpu']:.1f} s in the driver "
                             f"({r['spark_jobs']} Spark jobs, {r['driver_levels']} levels "
                             "in the driver)"
                             + (f"; levels' wall {r['job_wall']:.1f} s waiting for Spark jobs, "
                                f"{r['driver_wall']:.1f} s in the driver around them"
                                if r.get("job_wall") else ""))
            if r.get("jvm_threads"):
                top = [f"{k} {u:.1f}+{s:.1f}" for k, (u, s) in r["jvm_threads"].items()
                       if u + s >= 0.1]
                extra.append(f"{config} {backend}: JVM CPU s by thread (user+system, "
                             "threads alive at the end): " + ", ".join(top))
            print(f"{config:<6} {backend:<9} {r['distinct']:>11,} {r['depth']:>5} "
                  f"{r['seconds']:>8.1f} {r['cpu']:>7.1f} "
                  f"{r['driver']:>5.1f}/{r['jvm']:>4.1f}/{r['workers']:>5.1f} "
                  f"{rate:>10,.0f} {r['startup']:>8.1f} {fixed:>8} "
                  f"{_mb(r['driver_peak_rss']):>11} {_mb(r['jvm_peak_rss']):>9} "
                  f"{_mb(r['workers_peak_rss']):>11}", flush=True)
    for line in extra:
        print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
