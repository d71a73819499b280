"""The shard engine on Spark: the bucket engine's tasks run as Spark tasks, one job per
level.

The levels, their files and the tasks are :mod:`modelcheck.shards` (the engine of
``modelcheck check --workers N`` too): :class:`ShardEngine` only says how a job's
tasks run (one Spark task per bucket, :meth:`ShardEngine.run_tasks`), warms the
executors' Python workers while the first levels run on the driver
(:meth:`ShardEngine.warm_up`), and refuses a temporary run directory that executors on
other hosts cannot see.

Spark's exceptions are left to the driver, which translates them.
"""

from __future__ import annotations

import functools
import socket
import threading
from typing import Any

from modelcheck.shards.engine import NAME, BucketEngine, Job, LevelSummary, RangeJob
from modelcheck.shards.files import BucketSummary
from modelcheck.shards.rundir import RunDir
from modelcheck.shards.worker import WorkerConfig, warm_kernel

from .session import SparkBackendError, is_local_master

__all__ = ["ShardEngine", "LevelSummary", "NAME"]


class ShardEngine(BucketEngine):
    """Levels as per-bucket ``.npy`` files in ``rundir``, computed by Spark tasks.

    ``spark`` is the session; the other arguments are :class:`BucketEngine`'s. The run
    directory must be reachable at the same path from every executor and the driver:
    on a multi-host cluster a temporary one is refused here
    (:class:`~spark_explore.session.SparkBackendError`).
    """

    workers = "spark"

    def __init__(self, spark: Any, rundir: RunDir, buckets: int, worker: WorkerConfig,
                 n_act: int, *, driver_threshold: int = 0, kernel: Any = None) -> None:
        super().__init__(rundir, buckets, worker, n_act, driver_threshold=driver_threshold,
                         kernel=kernel)
        self.sc = spark.sparkContext
        self._warming: threading.Thread | None = None
        #: the RDD of bucket numbers every job maps over (made once: a new one per job
        #: would ship its data to the JVM each time)
        self._tasks: Any = None
        if rundir.temporary:
            _check_one_host(self.sc)

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

    def warming(self) -> bool:
        """Whether the warm-up job (:meth:`warm_up`) is still running."""
        return self._warming is not None and self._warming.is_alive()

    def run_tasks(self, job: Job | RangeJob) -> list[BucketSummary]:
        """One Spark job of one task per bucket (the Spark engine asks for no range
        jobs: :attr:`~modelcheck.shards.engine.BucketEngine.ranges` is off)."""
        task = functools.partial(job.run, self.cfg)
        self.sc.setJobDescription(f"modelcheck level {job.depth}")
        try:
            if self._tasks is None:
                self._tasks = self.sc.parallelize(range(self.buckets), self.buckets)
            parts: list[BucketSummary] = self._tasks.map(task).collect()
            return parts
        finally:
            self.sc.setJobDescription(None)


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
