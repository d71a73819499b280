"""Random simulation on Spark: what ``modelcheck spark --simulate`` calls.

The walks are those of ``modelcheck simulate`` with the same seed: walk ``i`` draws
its random numbers from ``SeedSequence([seed, i])`` whichever task runs it
(:func:`modelcheck.simulate.walk_generator`), so the task count decides where a walk
runs, never what it does. Each task runs its walks with the local engine's own
function, :func:`modelcheck.simulate.run_walks`; the driver adds the tasks' tallies
up and reports them with :meth:`modelcheck.simulate.Simulator.result` (shrinking
included), so the result has the local command's shape and exit codes. A task rebuilds
the driver's :class:`~modelcheck.simulate.Simulator` as a ``modelcheck simulate
--workers`` worker process does (:func:`modelcheck.simrounds.worker_simulator`) and runs
its walks with :func:`modelcheck.simrounds.run_block`, the workers' own function.

**Rounds** and **the same result**: a run is the sequence of rounds of
:func:`modelcheck.simrounds.run_rounds` (the schedule and merge ``modelcheck simulate
--workers`` uses too), each round one Spark job of ``tasks`` tasks; Ctrl-C cancels the
running job and reports the rounds finished so far. With ``runs``, the violation, its
walk, the shrunk trace and every count are those of ``modelcheck simulate`` with the
same seed, whatever the task count (a violating round counted again up to the
violating walk is one more Spark job). A time-bounded run is not reproducible in its
counts (nor, if a slower task had not yet reached it, in its violation), as locally.

**Temporal properties** are checked on every walk as by ``modelcheck simulate``: the
tasks check each walk's lassos with the simulator's
:class:`~modelcheck.liveness.WalkLiveness` (in :func:`~modelcheck.simulate.run_walks`),
and the violation reported is the one of the smallest walk index, as locally (same
walk, same lasso, same ``liveness`` verdicts).
"""

from __future__ import annotations

import functools
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from modelcheck.config import CheckConfig
from modelcheck.errors import ModelcheckError, UsageError
from modelcheck.library import Library
from modelcheck.library import lookup as library_lookup
from modelcheck.memtune import keep_freed_memory
from modelcheck.result import Result
from modelcheck.shards.worker import encode_error
from modelcheck.simrounds import WalkBlock, WorkerSpec, run_block, run_rounds, worker_simulator
from modelcheck.simulate import SimConfig, SimProgress, Simulator, WalkTally
from modelcheck.spec import Spec

from .driver import JobCanceller, translate_job_error
from .session import get_session, ship_spec
from .session import spec_target as _spec_target

__all__ = ["SparkSimulator", "WalkJob", "run_walk_task"]


@dataclass(frozen=True)
class WalkJob:
    """One round (a Spark job): what each of its tasks needs (pickled into the tasks)."""

    worker: WorkerSpec
    block: WalkBlock


#: whether this executor's Python worker has tuned its ``malloc`` (its first task)
_TUNED: list[bool] = []


def run_walk_task(job: WalkJob, task: int) -> tuple[int, WalkTally]:
    """Task ``task`` of a round (on an executor): its walks, with the driver's simulator
    rebuilt here and the local workers' function (temporal properties included). A
    failure is re-raised carrying its message for the driver."""
    try:
        if not _TUNED:
            keep_freed_memory()
            _TUNED.append(True)
        tally = run_block(worker_simulator(job.worker), job.block, task)
    except Exception as e:  # noqa: BLE001 - everything is reported to the driver
        raise encode_error(e) from None
    return task, tally


class SparkSimulator:
    """Random walks through a bound spec, run by Spark tasks (see the module docstring).

    ``config`` and ``sim`` as for :class:`modelcheck.simulate.Simulator` (the time
    limit counts from the first round, after the session started); ``tasks`` per
    round (default: the cores Spark offers). ``spark``, ``master``, ``spark_conf``,
    ``connect_timeout``, ``stop_session``, ``verbose``, ``spec_target`` and
    ``library`` as for :class:`spark_explore.driver.SparkExplorer`. ``progress`` gets
    a report after every round.
    """

    def __init__(self, spec: Spec, config: CheckConfig | None = None,
                 sim: SimConfig | None = None, *, library: Library | None = library_lookup,
                 master: str | None = "local[*]", tasks: int | None = None,
                 spark_conf: dict[str, str] | None = None,
                 progress: Callable[[SimProgress], None] | None = None, spark: Any = None,
                 spec_target: str | None = None, connect_timeout: float = 60.0,
                 stop_session: bool = False, verbose: bool = False) -> None:
        if tasks is not None and tasks < 1:
            raise UsageError(f"--tasks must be at least 1, not {tasks}.")
        if spec_target is None:
            _spec_target(type(spec))  # a class executors cannot import: before Spark starts
        # Checks the options (weights, invariants) and builds the driver's kernel.
        self.simulator = Simulator(spec, config, sim, library=library)
        self.spec = spec
        self.library = library
        self.master = master
        self.tasks = tasks
        self.spark_conf = dict(spark_conf or {})
        self.progress = progress
        self.spark = spark
        self.spec_target = spec_target
        self.connect_timeout = connect_timeout
        self.stop_session = stop_session
        self.verbose = verbose
        self._sigint = JobCanceller()

    @property
    def sim(self) -> SimConfig:
        return self.simulator.sim

    def run(self) -> Result:
        """Simulate; Ctrl-C returns the rounds finished so far."""
        found = self.simulator.initial_violation()
        if found is not None:
            return found
        t0 = time.perf_counter()
        spark, created = self.spark, False
        try:
            if spark is None:
                spark, created = get_session(self.master, self.spark_conf,
                                             connect_timeout=self.connect_timeout,
                                             quiet=not self.verbose)
            self.spark = spark
            target = self.spec_target or ship_spec(spark, type(self.spec)).target
            tasks = self.tasks or max(1, int(spark.sparkContext.defaultParallelism))
            self._sigint.requested = False
            with self._sigint.installed(spark):
                tally, rounds, walking = self._rounds(spark, target, tasks)
        finally:
            if created and self.stop_session and spark is not None:
                try:
                    spark.stop()
                except Exception:  # noqa: BLE001
                    pass
                self.spark = None
        res = self.simulator.result(tally, walking, backend="spark-simulate",
                                    info={"tasks": tasks})
        return replace(res, seconds=time.perf_counter() - t0, memory={
            "driver_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "spark_jobs": rounds,
            "walking_ms": round(walking * 1000),
        })

    def _job(self, sc: Any, job: WalkJob) -> list[tuple[int, WalkTally]]:
        """Run round ``job``: its tasks' ``(task, tally)``; Spark's exceptions translated
        (a cancelled job raises ``KeyboardInterrupt``)."""
        try:
            tasks = job.block.tasks
            parts: list[tuple[int, WalkTally]] = sc.parallelize(range(tasks), tasks).map(
                functools.partial(run_walk_task, job)).collect()
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - py4j / pyspark raise many types
            raise translate_job_error(e, f"running walks {job.block.first}..{job.block.end - 1}",
                                      self._sigint.requested) from None
        return parts

    def _rounds(self, spark: Any, target: str, tasks: int) -> tuple[WalkTally, int, float]:
        """Run rounds until done (:func:`modelcheck.simrounds.run_rounds`, one Spark job
        each): the added-up tally, the rounds run, their seconds."""
        s = self.simulator
        worker = WorkerSpec.of(s, target)
        sc = spark.sparkContext

        def cancel() -> None:
            self._sigint.requested = True
            try:
                sc.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be going away
                pass

        return run_rounds(s, tasks, lambda block: self._job(sc, WalkJob(worker, block)),
                          stop=lambda: self._sigint.requested, progress=self.progress,
                          on_interrupt=cancel)
