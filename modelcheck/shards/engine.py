"""The bucket engine: levels as per-bucket ``.npy`` files, one job of tasks per level.

The state space is split into ``K`` buckets by fingerprint; each bucket's visited
set, levels and candidate transitions are ``.npy`` files under ``shards/`` in the
run directory (layout and task code: :mod:`modelcheck.shards.files`). Per level one
job runs ``K`` tasks and moves nothing but their small summaries; de-duplication,
the visited check, expansion and the checks all run in numpy inside the tasks.

:class:`BucketEngine` is what a sharded run (:class:`modelcheck.shards.backend.ShardedRun`)
calls; who runs a job's tasks is a subclass's :meth:`BucketEngine.run_tasks`: a pool of
local processes (:class:`modelcheck.shards.pool.PoolEngine`, ``modelcheck check
--workers N``) or Spark's executors (``spark_explore.shard_engine.ShardEngine``).

* :meth:`~BucketEngine.start` writes the initial states as the candidates of level 0;
* :meth:`~BucketEngine.run_level` runs job ``d``: it commits level ``d`` (the
  de-duplicated, unvisited transitions found by job ``d - 1``) and, as asked,
  expands it, returning a :class:`LevelSummary`; so the size of level ``d + 1`` is
  known one job later;
* an engine with :attr:`BucketEngine.ranges` (the process pool) runs an expanded
  level as two jobs: the commit of every bucket, then the expansion of the level by
  fingerprint ranges (:class:`RangeJob`, :func:`modelcheck.shards.files.run_range`);
* :meth:`~BucketEngine.parent` and :meth:`~BucketEngine.level_states` read committed
  levels in the coordinating process (trace rebuild, replay after a spec error);
* :meth:`~BucketEngine.tidy` retires what resuming from a committed level no longer
  needs.

**Small levels in the coordinating process.** A job has a fixed cost (~0.1-0.2 s on
Spark, a few milliseconds for a process pool), more than expanding a few thousand
states. A level whose candidate transitions number at most ``driver_threshold`` (and
while the states seen so far number at most :data:`DRIVER_VISITED_FACTOR` times that,
since the coordinator then merges every visited shard) is run in this process
(:func:`~modelcheck.shards.files.run_level_here`): every bucket is committed by the
tasks' code, on the same files, and the level is then expanded as one, its successors
written as a single producer's (tasks read one producer's or ``K`` producers' alike).
While the workers are still starting (:meth:`BucketEngine.warming`), levels of up to
:data:`WARMING_FACTOR` times the threshold run there too. The parent rule picks the
same parent whatever the producers, so the results are the same; only where the work
runs differs. ``driver_threshold=0`` sends every level to the tasks (tests use it).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..level import LevelFindings
from .files import (
    BALANCE_STEP,
    INIT,
    SPARE,
    SPARE_DIRS,
    BucketSummary,
    ShardConfig,
    balanced_fractions,
    cand_dir,
    graph_dir,
    level_dir,
    parent_of,
    producers_of,
    read_level_sorted,
    retire,
    run_bucket,
    run_level_here,
    run_range,
    visited_dir,
    write_candidates,
)
from .rundir import RunDir
from .worker import WorkerConfig, seed_kernel

__all__ = ["BucketEngine", "Job", "RangeJob", "JobCounters", "LevelSummary", "NAME"]


@dataclass(frozen=True)
class Job:
    """Job ``depth`` of a run (pickled into every task): commit level ``depth`` and, as
    ``expand`` says, expand it (see :func:`modelcheck.shards.files.run_bucket`)."""

    depth: int
    expand: bool | None
    again: bool
    producers: int | None
    #: the producers of the level's transitions dropped the visited states
    #: (:func:`modelcheck.shards.files.write_unvisited`)
    unvisited: bool = False

    def run(self, cfg: ShardConfig, bucket: int) -> BucketSummary:
        """The task of ``bucket``: its summary."""
        return run_bucket(cfg, self.depth, bucket, self.expand, self.again, self.producers,
                          self.unvisited)

@dataclass(frozen=True)
class RangeJob:
    """The expansion job of committed level ``depth`` (pickled into every task): task
    ``i`` expands the level's ``i``-th fingerprint range (see
    :func:`modelcheck.shards.files.run_range`)."""

    depth: int
    expand: bool
    #: where the level is cut (fractions, :func:`modelcheck.shards.files.range_cuts`;
    #: None: equal parts)
    fractions: tuple[float, ...] | None = None

    def run(self, cfg: ShardConfig, part: int) -> BucketSummary:
        """The task of range ``part``: its summary."""
        return run_range(cfg, self.depth, part, self.expand, self.fractions)

#: the engine name recorded in a checkpoint's manifest
NAME = "shards"
#: the run directory's subdirectory holding the engine's files
SUBDIR = "shards"
#: a level runs on the driver only while the distinct states so far are at most this
#: many times the driver threshold
DRIVER_VISITED_FACTOR = 100
#: while the executors are still starting (the warm-up job has not finished), levels of
#: up to this many times the driver threshold also run in the driver: waiting for the
#: executors' Python workers would cost more than expanding them here
WARMING_FACTOR = 8


@dataclass
class LevelSummary:
    """What one job found: level ``depth`` committed and (maybe) expanded."""

    depth: int
    new: int  # states of level ``depth``
    reached: np.ndarray  # of those, per action id that reached them
    expand: bool | None  # the mode it ran in (see modelcheck.shards.files.run_bucket)
    found: LevelFindings  # what expanding the level found (merged over buckets)
    candidates: int = 0  # successors written for level depth + 1
    seconds: float = 0.0
    cpu: float = 0.0  # CPU seconds of its tasks (or of the driver, for a level run there)

    @classmethod
    def combine(cls, depth: int, parts: Sequence[BucketSummary], n_act: int) -> LevelSummary:
        out = cls(depth, 0, np.zeros(n_act, np.int64), None, LevelFindings(n_act))
        for s in sorted(parts, key=lambda s: s.bucket):
            out.new += s.new
            out.reached += np.asarray(s.reached, dtype=np.int64)
            out.expand = s.expand
            out.found.merge(s.found)
            out.candidates += s.candidates
            out.cpu += s.cpu
        return out

    def to_json(self) -> dict[str, Any]:
        return {"depth": self.depth, "new": self.new, "reached": [int(x) for x in self.reached],
                "expand": self.expand, "found": self.found.to_json(),
                "candidates": self.candidates, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> LevelSummary:
        # Manifests written before the level rule kept the findings at the top level.
        found = LevelFindings.from_json(d.get("found", d))
        return cls(int(d["depth"]), int(d["new"]), np.asarray(d["reached"], dtype=np.int64),
                   d["expand"], found, int(d["candidates"]), float(d["seconds"]))


class JobCounters:
    """A bucket engine's counters: its jobs and their tasks' CPU seconds, by where they
    ran (``where``: the engine's workers; ``driver``: the coordinating process)."""

    def __init__(self, where: str) -> None:
        self._jobs = {where: 0, "driver": 0}
        self._cpu = {where: 0.0, "driver": 0.0}
        #: wall seconds of the levels: waiting for the workers' jobs (``jobs``) and
        #: the coordinating process's own per-level work around them (``driver``)
        self.level_wall = {"jobs": 0.0, "driver": 0.0}
        #: per job of several tasks, the CPU seconds its slowest task took beyond the
        #: mean of its tasks, summed: what the levels wait for their slowest task
        #: with a core per task (a measure of balance that other work on the machine
        #: disturbs less than wall seconds)
        self.wait_cpu = 0.0

    def count_wall(self, jobs: float, driver: float) -> None:
        """Add one level's wall seconds: in the workers' jobs, and in this process."""
        self.level_wall["jobs"] += jobs
        self.level_wall["driver"] += driver

    def count_wait(self, cpu: Sequence[float]) -> None:
        """Add one job's wait for its slowest task (``cpu``: its tasks' CPU seconds)."""
        if len(cpu) > 1:
            self.wait_cpu += max(cpu) - sum(cpu) / len(cpu)

    def count_job(self, where: str, cpu: float) -> None:
        self._jobs[where] += 1
        self._cpu[where] += cpu

    @property
    def jobs(self) -> dict[str, int]:
        """Jobs run by the workers and in this process so far."""
        return dict(self._jobs)

    @property
    def task_cpu(self) -> dict[str, float]:
        """CPU seconds of the tasks of the jobs so far, by where they ran."""
        return dict(self._cpu)


class BucketEngine(JobCounters):
    """Levels as per-bucket ``.npy`` files in ``rundir``, computed by tasks that a
    subclass runs (:meth:`run_tasks`).

    ``buckets`` is the number of buckets (tasks per level), ``worker`` what a task needs
    to rebuild the kernel, ``n_act`` the number of action instances. Levels of at most
    ``driver_threshold`` candidate states run in this process (see the module
    docstring), with ``kernel`` (this process's, built for the same checks) when given.
    """

    name = NAME
    #: where a job ran, for the counters: the subclass's workers, or this process
    workers = "workers"
    #: expand a level by fingerprint ranges of the whole level, after every bucket
    #: committed its part (:meth:`by_range`): a subclass whose jobs are cheap says so
    ranges = False

    def __init__(self, rundir: RunDir, buckets: int, worker: WorkerConfig, n_act: int, *,
                 driver_threshold: int = 0, kernel: Any = None) -> None:
        self.rundir = rundir
        self.root = rundir.path / SUBDIR
        self.buckets = buckets
        self.n_act = n_act
        self.cfg = ShardConfig(worker, str(self.root), buckets)
        self.exact = self.cfg.exact
        self.n_words = worker.n_words
        self.driver_threshold = max(0, int(driver_threshold))
        #: candidate transitions waiting for the next job (None: unknown, e.g. resumed)
        self._candidates: int | None = None
        self._distinct = 0
        JobCounters.__init__(self, self.workers)
        #: how many producers wrote the successors the next job reads, and whether
        #: they dropped the visited ones (unknown after a resume: no)
        self._producers = buckets
        self._unvisited = False
        #: where the next expansion by range cuts its level (None: equal parts)
        self._fractions: tuple[float, ...] | None = None
        if kernel is not None:
            seed_kernel(worker, kernel)

    @staticmethod
    def default_buckets(cores: int) -> int:
        """One bucket per core: every task is one ``Kernel.expand`` stream, and a level's
        fixed cost grows with the number of tasks."""
        return max(1, cores)

    # ------------------------------------------------------------ subclasses
    def run_tasks(self, job: Job | RangeJob) -> list[BucketSummary]:
        """Run ``job``'s task of every bucket (or range) on the workers: the summaries,
        by bucket."""
        raise NotImplementedError

    def warm_up(self) -> None:
        """Start the workers in the background (nothing by default)."""

    def warming(self) -> bool:
        """Whether the workers are still starting (see :meth:`warm_up`)."""
        return False

    # ------------------------------------------------------------ the jobs
    def start(self, fps: np.ndarray, words: np.ndarray | None) -> None:
        """A fresh run: the initial states (distinct fingerprints, their packed words for
        multi-word layouts) become the candidates of level 0."""
        self.warm_up()
        shutil.rmtree(self.root, ignore_errors=True)
        m = len(fps)
        self._candidates = m
        self._distinct = 0
        write_candidates(self.root, INIT, 0, self.buckets, fps, np.zeros_like(fps),
                         np.full(m, -1, np.int32), None if self.exact else words)

    def run_level(self, depth: int, expand: bool | None, again: bool = False
                  ) -> LevelSummary:
        """Job ``depth``: commit level ``depth``, then expand it if ``expand`` is True,
        check it without generating successors if False, nothing more if None.
        ``again`` re-expands the already committed level ``depth`` (see
        :func:`modelcheck.shards.files.run_bucket`)."""
        producers = self._producers
        parts: list[BucketSummary]
        if self.on_driver():
            parts = run_level_here(self.cfg, depth, expand, again, producers)
            where = "driver"
        elif self.by_range(expand, again):
            # two jobs: every bucket commits its part of the level, then each task
            # expands a fingerprint range of the whole level (see ``by_range``)
            parts = self.run_tasks(Job(depth, None, False, producers, self._unvisited))
            self.count_wait([p.cpu for p in parts])
            assert expand is not None
            ranges = self.run_tasks(RangeJob(depth, expand, self._fractions))
            self.count_wait([r.cpu for r in ranges])
            parts += ranges
            # the next level cut where this one's tasks would have taken equal CPU
            self._fractions = balanced_fractions(self._fractions, [r.cpu for r in ranges],
                                                 BALANCE_STEP)
            where = self.workers
        else:
            parts = self.run_tasks(Job(depth, expand, again, producers, self._unvisited))
            self.count_wait([p.cpu for p in parts])
            where = self.workers
        out = LevelSummary.combine(depth, parts, self.n_act)
        out.expand = expand
        if expand:  # it wrote the successors the next job reads
            self._producers = 1 if where == "driver" else self.buckets
            self._unvisited = self.by_range(expand, again) and where != "driver"
        self.count_job(where, out.cpu)
        if not again:
            self._distinct += out.new
        # The next job's input: these successors, or (after a commit-only job) this
        # level, which a job with ``again`` expands.
        self._candidates = out.candidates if expand is not None else out.new
        return out

    def by_range(self, expand: bool | None, again: bool) -> bool:
        """Whether job ``depth`` runs as a commit job and an expansion job by fingerprint
        range (:class:`RangeJob`) rather than one job whose task commits and expands a
        bucket: when :attr:`ranges` says so, the level is expanded (``expand`` not
        None) for the first time (not ``again``), there are several buckets, and no
        state graph is written (its parts are a bucket's)."""
        return (self.ranges and expand is not None and not again and self.buckets > 1
                and not self.cfg.worker.temporal)

    def on_driver(self) -> bool:
        """Whether the next job is small enough to run in this process (unknown after a
        resume: no). While the workers are still being warmed up, the limit is
        :data:`WARMING_FACTOR` times the threshold."""
        t = self.driver_threshold
        if t <= 0 or self._candidates is None or self._distinct > DRIVER_VISITED_FACTOR * t:
            return False
        if self._candidates <= t:
            return True
        return self.warming() and self._candidates <= WARMING_FACTOR * t

    def parent(self, depth: int, fp: int) -> int | None:
        """The parent fingerprint of state ``fp`` of committed level ``depth``."""
        return parent_of(self.root, depth, self.cfg, fp)

    def level_states(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """All states of committed level ``depth`` in fingerprint order: ``(fps, words)``."""
        return read_level_sorted(self.root, depth, self.cfg)

    def tidy(self, depth: int) -> None:
        """Levels ``0..depth`` are committed: keep them, the visited shards and the
        candidates of ``depth`` (and the state graph's parts, if any); retire the rest
        (:func:`modelcheck.shards.files.retire`: their files become spares that later
        writes overwrite)."""
        keep = {level_dir(self.root, d).name for d in range(depth + 1)}
        keep |= {visited_dir(self.root, depth).name, cand_dir(self.root, depth).name, SPARE,
                 SPARE_DIRS}
        if not self.root.is_dir():
            return
        graph = graph_dir(self.root, 0).name[0]  # the state graph's parts: all kept
        retire(self.root, [c for c in self.root.iterdir()
                           if c.name not in keep and not c.name.startswith(graph)], depth)

    def resume(self, depth: int) -> bool:
        """Continue at committed level ``depth``: its successors are on disk already
        (written by this process or by one task per bucket)."""
        if (cand_dir(self.root, depth) / "f0000.off.npy").exists():
            self._producers = producers_of(self.root, depth, self.buckets)
        return False

    def bytes_on_disk(self) -> int:
        return self.rundir.bytes_on_disk(SUBDIR)
