"""The shard engine: Spark schedules per-bucket numpy tasks, one job per level.

The state space is split into ``K`` buckets by fingerprint; each bucket's visited
set, levels and candidate transitions are ``.npy`` files under ``shards/`` in the
run directory (layout and task code: :mod:`spark_explore.shards`). Per level Spark
runs one job of ``K`` tasks and moves nothing but their small summaries;
de-duplication, the visited check, expansion and the checks all run in numpy inside
the executors.

:class:`ShardEngine` is what the driver (:class:`spark_explore.driver.SparkExplorer`)
calls, through :class:`spark_explore.driver.LevelEngine`:

* :meth:`~ShardEngine.start` writes the initial states as the candidates of level 0;
* :meth:`~ShardEngine.run_level` runs job ``d``: it commits level ``d`` (the
  de-duplicated, unvisited transitions found by job ``d - 1``) and, as asked,
  expands it, returning a :class:`LevelSummary`; so the size of level ``d + 1`` is
  known one job later;
* :meth:`~ShardEngine.parent` and :meth:`~ShardEngine.level_states` read committed
  levels on the driver (trace rebuild, replay after a spec error);
* :meth:`~ShardEngine.tidy` deletes what resuming from a committed level no longer
  needs.

**Small levels on the driver.** A Spark job costs ~0.1-0.2 s whatever its size, more
than expanding a few ten thousand states. A level whose candidate transitions number
at most ``driver_threshold`` (and while the states seen so far number at most
:data:`DRIVER_VISITED_FACTOR` times that, since the driver then merges every visited
shard) is run in the driver process (:func:`~spark_explore.shards.run_level_here`):
every bucket is committed by the tasks' code, on the same files, and the level is then
expanded as one, its successors written as a single producer's (tasks read one
producer's or ``K`` producers' alike). While the executors' Python workers are still
starting and loading the spec (a second or two; :meth:`ShardEngine.warm_up`), levels of
up to :data:`WARMING_FACTOR` times the threshold run there too. The parent rule picks
the same parent whatever the producers, so the results are the same; only where the
work runs differs.
``driver_threshold=0`` sends every level to the executors (tests use it).

Spark's exceptions are left to the driver, which translates them.
"""

from __future__ import annotations

import functools
import shutil
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from modelcheck.engine import LevelFindings

from .checkpoint import RunDir
from .session import SparkBackendError, is_local_master
from .shards import (
    INIT,
    SPARE,
    BucketSummary,
    ShardConfig,
    cand_dir,
    level_dir,
    parent_of,
    producers_of,
    read_level_sorted,
    retire,
    run_bucket,
    run_level_here,
    visited_dir,
    write_candidates,
)
from .worker import WorkerConfig, seed_kernel, warm_kernel

__all__ = ["ShardEngine", "LevelSummary", "NAME"]

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
    expand: bool | None  # the mode it ran in (see spark_explore.shards.run_bucket)
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
        # Manifests written before the level engine kept the findings at the top level.
        found = LevelFindings.from_json(d.get("found", d))
        return cls(int(d["depth"]), int(d["new"]), np.asarray(d["reached"], dtype=np.int64),
                   d["expand"], found, int(d["candidates"]), float(d["seconds"]))


class ShardEngine:
    """Levels as per-bucket ``.npy`` files in ``rundir``, computed by Spark tasks.

    ``spark`` is the session, ``buckets`` the number of buckets (tasks per level),
    ``worker`` what executors need to rebuild the kernel, ``n_act`` the number of
    action instances. The run directory must be reachable at the same path from every
    executor and the driver: on a multi-host cluster a temporary one is refused here
    (:class:`~spark_explore.session.SparkBackendError`). Levels of at most
    ``driver_threshold`` candidate states run in this process (see the module
    docstring), with ``kernel`` (the driver's, built for the same checks) when given.
    """

    name = NAME

    def __init__(self, spark: Any, rundir: RunDir, buckets: int, worker: WorkerConfig,
                 n_act: int, *, driver_threshold: int = 0, kernel: Any = None) -> None:
        self.sc = spark.sparkContext
        self.rundir = rundir
        self.root = rundir.path / SUBDIR
        self.buckets = buckets
        self.n_act = n_act
        self.exact = worker.n_words == 1
        self.n_words = worker.n_words
        self.cfg = ShardConfig(worker, str(self.root), buckets)
        self.driver_threshold = max(0, int(driver_threshold))
        #: candidate transitions waiting for the next job (None: unknown, e.g. resumed)
        self._candidates: int | None = None
        self._distinct = 0
        self._jobs = {"spark": 0, "driver": 0}
        self._cpu = {"spark": 0.0, "driver": 0.0}
        #: how many producers wrote the successors the next job reads
        self._producers = buckets
        self._warming: threading.Thread | None = None
        #: the RDD of bucket numbers every job maps over (made once: a new one per job
        #: would ship its data to the JVM each time)
        self._tasks: Any = None
        if kernel is not None:
            seed_kernel(worker, kernel)
        if rundir.temporary:
            _check_one_host(self.sc)

    @staticmethod
    def default_buckets(cores: int) -> int:
        """One bucket per core: every task is one ``Kernel.expand`` stream, and a level's
        fixed cost grows with the number of tasks."""
        return max(1, cores)

    def warm_up(self) -> None:
        """While the first levels run in the driver, have every executor start its Python
        workers and build the kernel (a job in a background thread; its failures are
        left to the first real job to report)."""
        if self.driver_threshold == 0 or self._warming is not None:
            return
        fn = functools.partial(warm_kernel, self.cfg.worker)
        n = self.buckets

        def run() -> None:
            try:
                self.sc.setJobDescription("modelcheck: executors build the kernel")
                self.sc.parallelize(range(n), n).map(fn).collect()
            except Exception:  # noqa: BLE001 - the real jobs report what is wrong
                pass

        self._warming = threading.Thread(target=run, name="modelcheck-warm-up", daemon=True)
        self._warming.start()

    def start(self, fps: np.ndarray, words: np.ndarray | None) -> None:
        """A fresh run: the initial states (distinct fingerprints, their packed words for
        multi-word layouts) become the candidates of level 0."""
        self.warm_up()
        shutil.rmtree(self.root, ignore_errors=True)
        m = len(fps)
        self._candidates = m
        self._distinct = 0
        write_candidates(self.root, INIT, 0, self.buckets, fps, np.zeros(m, np.uint64),
                         np.full(m, -1, np.int32), None if self.exact else words)

    def run_level(self, depth: int, expand: bool | None, again: bool = False
                  ) -> LevelSummary:
        """Job ``depth``: commit level ``depth``, then expand it if ``expand`` is True,
        check it without generating successors if False, nothing more if None.
        ``again`` re-expands the already committed level ``depth`` (see
        :func:`spark_explore.shards.run_bucket`)."""
        producers = self._producers
        fn = functools.partial(run_bucket, self.cfg, depth, expand=expand, again=again,
                               producers=producers)
        parts: list[BucketSummary]
        if self.on_driver():
            parts = run_level_here(self.cfg, depth, expand, again, producers)
            where = "driver"
        else:
            self.sc.setJobDescription(f"modelcheck level {depth}")
            try:
                if self._tasks is None:
                    self._tasks = self.sc.parallelize(range(self.buckets), self.buckets)
                parts = self._tasks.map(fn).collect()
            finally:
                self.sc.setJobDescription(None)
            where = "spark"
        out = LevelSummary.combine(depth, parts, self.n_act)
        if expand:  # it wrote the successors the next job reads
            self._producers = 1 if where == "driver" else self.buckets
        self._jobs[where] += 1
        self._cpu[where] += out.cpu
        if not again:
            self._distinct += out.new
        # The next job's input: these successors, or (after a commit-only job) this
        # level, which a job with ``again`` expands.
        self._candidates = out.candidates if expand is not None else out.new
        return out

    @property
    def jobs(self) -> dict[str, int]:
        """Jobs run by Spark and in the driver process so far."""
        return dict(self._jobs)

    @property
    def task_cpu(self) -> dict[str, float]:
        """CPU seconds of the tasks of the jobs so far, by where they ran."""
        return dict(self._cpu)

    def on_driver(self) -> bool:
        """Whether the next job is small enough to run in the driver process (unknown
        after a resume: no). While the executors are still being warmed up, the limit
        is :data:`WARMING_FACTOR` times the threshold."""
        t = self.driver_threshold
        if t <= 0 or self._candidates is None or self._distinct > DRIVER_VISITED_FACTOR * t:
            return False
        if self._candidates <= t:
            return True
        return self.warming() and self._candidates <= WARMING_FACTOR * t

    def warming(self) -> bool:
        """Whether the warm-up job (:meth:`warm_up`) is still running."""
        return self._warming is not None and self._warming.is_alive()

    def parent(self, depth: int, fp: int) -> int | None:
        """The parent fingerprint of state ``fp`` of committed level ``depth``."""
        return parent_of(self.root, depth, self.buckets, fp)

    def level_states(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """All states of committed level ``depth`` in fingerprint order: ``(fps, words)``."""
        return read_level_sorted(self.root, depth, self.buckets, self.exact, self.n_words)

    def tidy(self, depth: int) -> None:
        """Levels ``0..depth`` are committed: keep them, the visited shards and the
        candidates of ``depth``; retire the rest (:func:`spark_explore.shards.retire`:
        their files become spares that later writes overwrite)."""
        keep = {level_dir(self.root, d).name for d in range(depth + 1)}
        keep |= {visited_dir(self.root, depth).name, cand_dir(self.root, depth).name, SPARE}
        if not self.root.is_dir():
            return
        retire(self.root, [c for c in self.root.iterdir() if c.name not in keep], depth)

    def resume(self, depth: int) -> bool:
        """Continue at committed level ``depth``: its successors are on disk already
        (written by the driver or by one task per bucket)."""
        if (cand_dir(self.root, depth) / "f0000.off.npy").exists():
            self._producers = producers_of(self.root, depth, self.buckets)
        return False

    def bytes_on_disk(self) -> int:
        return self.rundir.bytes_on_disk(SUBDIR)


def _check_one_host(sc: Any) -> None:
    """Refuse executors on other hosts than the driver (they cannot see a temporary
    run directory)."""
    if is_local_master(sc.master):
        return
    try:
        infos = sc._jsc.sc().statusTracker().getExecutorInfos()
        hosts = {str(i.host()) for i in infos}
    except Exception:  # noqa: BLE001
        hosts = set()
    if not all(_is_this_host(h) for h in hosts):
        raise SparkBackendError(
            "executors run on other hosts than this driver, and the shard engine "
            "keeps the run's files in its run directory: use --engine rdd (no shared "
            "directory), or pass --checkpoint-dir on storage every host mounts at the "
            "same path (e.g. NFS)."
        )


def _is_this_host(host: str) -> bool:
    """Whether ``host`` (an executor's) is the machine this driver runs on."""
    if host in ("localhost", socket.gethostname(), socket.getfqdn()):
        return True
    try:
        addr = socket.gethostbyname(host)
    except OSError:
        return False
    if addr.startswith("127."):
        return True
    try:
        return addr in socket.gethostbyname_ex(socket.gethostname())[2]
    except OSError:
        return False
