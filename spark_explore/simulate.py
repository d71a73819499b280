"""Random simulation on Spark: what ``modelcheck spark --simulate`` calls.

The walks are those of ``modelcheck simulate`` with the same seed: walk ``i`` draws
its random numbers from ``SeedSequence([seed, i])`` whichever task runs it
(:func:`modelcheck.simulate.walk_generator`), so the task count decides where a walk
runs, never what it does. Each task runs its walks with the local engine's own
function, :func:`modelcheck.simulate.run_walks`; the driver adds the tasks' tallies
up and reports them with :meth:`modelcheck.simulate.Simulator.result` (shrinking
included), so the result has the local command's shape and exit codes.

**Rounds** and **the same result**: a run is the sequence of rounds of
:func:`modelcheck.simrounds.run_rounds` (the schedule and merge ``modelcheck simulate
--workers`` uses too), each round one Spark job of ``tasks`` tasks; Ctrl-C cancels the
running job and reports the rounds finished so far. With ``runs``, the violation, its
walk, the shrunk trace and every count are those of ``modelcheck simulate`` with the
same seed, whatever the task count (a violating round counted again up to the
violating walk is one more Spark job). A time-bounded run is not reproducible in its
counts (nor, if a slower task had not yet reached it, in its violation), as locally.

Tasks do not check temporal properties on their walks (``modelcheck simulate`` does):
the result names them (``simulation.not_checked``, verdicts ``not checked``) and the
text report warns.
"""

from __future__ import annotations

import functools
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from modelcheck.config import CheckConfig
from modelcheck.errors import ModelcheckError, UsageError
from modelcheck.library import Library
from modelcheck.library import lookup as library_lookup
from modelcheck.result import Result
from modelcheck.shards.worker import WorkerConfig, encode_error, get_kernel
from modelcheck.simrounds import WalkBlock, run_rounds
from modelcheck.simulate import SimConfig, SimProgress, Simulator, WalkTally, run_walks
from modelcheck.spec import Spec

from .driver import JobCanceller, translate_job_error
from .session import get_session, ship_spec
from .session import spec_target as _spec_target

__all__ = ["SparkSimulator", "WalkJob", "run_walk_task"]


@dataclass(frozen=True)
class WalkJob:
    """One round (a Spark job): what each of its tasks needs (pickled into the tasks)."""

    worker: WorkerConfig
    weights: tuple[float, ...]
    block: WalkBlock


def run_walk_task(job: WalkJob, task: int) -> tuple[int, WalkTally]:
    """Task ``task`` of a round (on an executor): its walks, with the local engine's
    function. A failure is re-raised carrying its message for the driver."""
    b = job.block
    try:
        tally = run_walks(get_kernel(job.worker), b.walks(task),
                          weights=np.asarray(job.weights, dtype=np.float64), depth=b.depth,
                          walks_per_batch=b.walks_per_batch, time_limit=b.time_limit,
                          record_states=b.record)
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
                                    info={"tasks": tasks}, temporal_checked=False)
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
        worker = WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                              invariants=s.safety_names,
                              check_deadlock=s.config.check_deadlock, symmetry=False,
                              view=False,
                              n_words=s.kernel.layout.n_words,
                              library=None if self.library is library_lookup else self.library)
        weights = tuple(float(w) for w in s.weights)
        sc = spark.sparkContext

        def cancel() -> None:
            self._sigint.requested = True
            try:
                sc.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be going away
                pass

        return run_rounds(s, tasks, lambda block: self._job(sc, WalkJob(worker, weights, block)),
                          stop=lambda: self._sigint.requested, progress=self.progress,
                          on_interrupt=cancel)
