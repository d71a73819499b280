"""Random simulation on Spark: what ``modelcheck spark --simulate`` calls.

The walks are those of ``modelcheck simulate`` with the same seed: walk ``i`` draws
its random numbers from ``SeedSequence([seed, i])`` whichever task runs it
(:func:`modelcheck.simulate.walk_generator`), so the task count decides where a walk
runs, never what it does. Each task runs its walks with the local engine's own
function, :func:`modelcheck.simulate.run_walks`; the driver adds the tasks' tallies
up and reports them with :meth:`modelcheck.simulate.Simulator.result` (shrinking
included), so the result has the local command's shape and exit codes.

**Rounds.** A run is a sequence of rounds, one Spark job each, of ``tasks`` tasks.
Round ``r`` covers the walk indices ``[a, b)`` following the previous round's;
``b - a = tasks * walks_per_batch * min(2**r, 4)`` (a time-bounded run keeps doubling
while a round takes less than :data:`ROUND_SECONDS`). Task ``t`` runs walks ``a + t,
a + t + tasks, ...`` below ``b``, with the time left, and sends back its tally and
the states its walks visited. The driver adds the tallies up, counts the distinct
states, and stops after a round in which a walk found a violation,
once ``runs`` walks are done, when the time is up, or at Ctrl-C (the running job is
cancelled; the rounds finished so far are reported).

**The same result.** The violation reported is the one of the smallest walk index
``v``. With ``runs`` (and no time limit reached), every walk of a smaller index ran to
its end (it is in the same round or an earlier one, and a task abandons only walks
after its own violation), so the violation, its walk and the shrunk trace are those of
``modelcheck simulate`` with the same seed, whatever the task count. Every count is
that of walks ``0 .. v`` (or of all the walks run), as locally: when a task of the
violating round ran walks after ``v``, the round is run again up to ``v`` (one more
Spark job, of walks already run once) and counted instead; a state's first action is
that of the smallest walk that reached it (each task sends the walk of each state it
saw first; the driver counts a round's states in walk order). So no figure depends on
the task count or the batch size. A time-bounded run is not reproducible in its
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
from modelcheck.simulate import (
    SimConfig,
    SimProgress,
    Simulator,
    VisitedStates,
    WalkSet,
    WalkTally,
    run_walks,
)
from modelcheck.spec import Spec

from .driver import JobCanceller, translate_job_error
from .session import get_session, ship_spec
from .session import spec_target as _spec_target
from .worker import WorkerConfig, encode_error, get_kernel

__all__ = ["SparkSimulator", "WalkJob", "RoundPlan", "run_walk_task", "MAX_ROUND_BATCHES",
           "ROUND_SECONDS"]

#: batches of walks per task in a round, at most (a run with ``runs``)
MAX_ROUND_BATCHES = 4
#: a time-bounded run doubles its rounds while one takes less than this (seconds)
ROUND_SECONDS = 5.0


@dataclass(frozen=True)
class WalkJob:
    """One round: what each of its tasks needs (pickled into the tasks)."""

    worker: WorkerConfig
    weights: tuple[float, ...]
    seed: int
    first: int  # the round's walks are first .. end - 1
    end: int
    tasks: int
    depth: int
    walks_per_batch: int
    time_limit: float | None
    record: bool  # send the visited states back

    def walks(self, task: int) -> WalkSet:
        """The walks of task ``task``: ``first + task``, every ``tasks``-th, below ``end``."""
        first = self.first + task
        return WalkSet(self.seed, first, self.tasks, max(0, -(-(self.end - first) // self.tasks)))


def run_walk_task(job: WalkJob, task: int) -> tuple[int, WalkTally]:
    """Task ``task`` of a round (on an executor): its walks, with the local engine's
    function. A failure is re-raised carrying its message for the driver."""
    try:
        tally = run_walks(get_kernel(job.worker), job.walks(task),
                          weights=np.asarray(job.weights, dtype=np.float64), depth=job.depth,
                          walks_per_batch=job.walks_per_batch, time_limit=job.time_limit,
                          record_states=job.record)
    except Exception as e:  # noqa: BLE001 - everything is reported to the driver
        raise encode_error(e) from None
    return task, tally


class RoundPlan:
    """The blocks of walk indices of a run's rounds (see the module docstring)."""

    def __init__(self, runs: int | None, tasks: int, walks_per_batch: int) -> None:
        self.runs, self.tasks, self.width = runs, tasks, walks_per_batch
        self.first = 0
        self.batches = 1

    def next_block(self) -> tuple[int, int] | None:
        """The next round's walks ``[a, b)``; None when ``runs`` are done."""
        if self.runs is not None and self.first >= self.runs:
            return None
        end = self.first + self.tasks * self.width * self.batches
        if self.runs is not None:
            end = min(end, self.runs)
        return self.first, end

    def done(self, end: int, seconds: float) -> None:
        """The round up to ``end`` took ``seconds``: move on, and grow the rounds."""
        self.first = end
        if self.runs is not None:
            self.batches = min(2 * self.batches, MAX_ROUND_BATCHES)
        elif seconds < ROUND_SECONDS:
            self.batches *= 2


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
        res.seconds = time.perf_counter() - t0
        res.memory = {
            "driver_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "spark_jobs": rounds,
            "walking_ms": round(walking * 1000),
        }
        return res

    def _job(self, sc: Any, job: WalkJob) -> list[tuple[int, WalkTally]]:
        """Run round ``job``: its tasks' ``(task, tally)``; Spark's exceptions translated
        (a cancelled job raises ``KeyboardInterrupt``)."""
        try:
            parts: list[tuple[int, WalkTally]] = sc.parallelize(
                range(job.tasks), job.tasks).map(functools.partial(run_walk_task, job)).collect()
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - py4j / pyspark raise many types
            raise translate_job_error(e, f"running walks {job.first}..{job.end - 1}",
                                      self._sigint.requested) from None
        return parts

    @staticmethod
    def _add_round(tally: WalkTally, visited: VisitedStates, parts: list[WalkTally]) -> None:
        """Add a round's task tallies; its visited states in walk order (a state's first
        action is that of the smallest walk that reached it, as locally)."""
        for part in parts:
            tally.add(part)
        if parts:
            fps = np.concatenate([p.states for p in parts])
            acts = np.concatenate([p.reached_by for p in parts])
            walks = np.concatenate([p.reached_in for p in parts])
            order = np.argsort(walks, kind="stable")  # of a state seen twice, the first counts
            visited.see(fps[order], acts[order])

    def _rounds(self, spark: Any, target: str, tasks: int) -> tuple[WalkTally, int, float]:
        """Run rounds until done: the added-up tally, the rounds run, their seconds."""
        s = self.simulator
        cfg = s.sim
        n_act = len(s.kernel.actions)
        tally = WalkTally.empty(n_act)
        visited = VisitedStates(n_act, s.seen_limit())
        worker = WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                              invariants=s.safety_names,
                              check_deadlock=s.config.check_deadlock, symmetry=False,
                              view=False,
                              n_words=s.kernel.layout.n_words,
                              library=None if self.library is library_lookup else self.library)
        weights = tuple(float(w) for w in s.weights)
        plan = RoundPlan(cfg.runs, tasks, cfg.walks_per_batch)
        sc = spark.sparkContext
        start = time.perf_counter()
        rounds = 0
        try:
            while tally.found is None and tally.stopped is None:
                if self._sigint.requested:
                    tally.stopped = "interrupted"
                    break
                block = plan.next_block()
                if block is None:
                    break
                left = None if cfg.time_limit is None else \
                    cfg.time_limit - (time.perf_counter() - start)
                if left is not None and left <= 0:
                    tally.stopped = "time"
                    break
                job = WalkJob(worker, weights, cfg.seed, block[0], block[1], tasks,
                              cfg.depth, cfg.walks_per_batch, left, record=not visited.capped)
                rt = time.perf_counter()
                parts = self._job(sc, job)
                rounds += 1
                found = [p.found.walk for _, p in parts if p.found is not None]
                if found and any(p.walks and job.walks(t).index(p.walks - 1) > min(found)
                                 for t, p in parts):
                    # tasks ran walks after the violating one: count the round again,
                    # walks up to that one only (without time limit: they ran once)
                    job = replace(job, end=min(found) + 1, time_limit=None)
                    parts = self._job(sc, job)
                    rounds += 1
                self._add_round(tally, visited, [p for _, p in sorted(parts, key=lambda p: p[0])])
                plan.done(block[1], time.perf_counter() - rt)
                if self.progress is not None:
                    self.progress(SimProgress(tally.walks, tally.steps, len(visited),
                                              time.perf_counter() - start,
                                              tally.fired.copy()))
        except KeyboardInterrupt:  # Ctrl-C (a cancelled job, or a second Ctrl-C)
            tally.stopped = "interrupted"
            self._sigint.requested = True
            try:
                sc.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be going away
                pass
        tally.count_states(visited)
        return tally, rounds, time.perf_counter() - start

