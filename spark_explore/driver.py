"""The driver of a Spark exploration: what ``modelcheck spark`` calls.

:class:`SparkExplorer` is a sharded run (:class:`modelcheck.shards.backend.ShardedRun`:
the one run loop over the levels of the level rule, the run directory and its
manifest, the trace rebuild) whose engine's tasks run on Spark: the shard engine
(:class:`spark_explore.shard_engine.ShardEngine`, the bucket files in the run
directory) or the RDD engine (:class:`spark_explore.rdd_engine.RddEngine`, levels in
Spark, checkpoints through Hadoop). What is Spark's is here:

* the run directory on a Hadoop file system (``--checkpoint-dir hdfs://...``);
* the Spark session (reused, or started and, with ``stop_session``, stopped) and
  shipping the spec's code to executors;
* Ctrl-C: the running job is cancelled from another thread and the run ends with
  the levels finished so far;
* translating Spark's exceptions (a spec error on an executor reads as locally, a
  full run directory is one paragraph).

The driver holds only per-level counters; never the visited set or a frontier.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from modelcheck.budget import format_size
from modelcheck.config import CheckConfig
from modelcheck.errors import SpecEvaluationError, UsageError
from modelcheck.interrupt import Interrupts
from modelcheck.library import Library
from modelcheck.library import lookup as library_lookup
from modelcheck.liveness import LivenessError
from modelcheck.result import Result, Status
from modelcheck.run.progress import Progress
from modelcheck.shards.backend import (
    DRIVER_THRESHOLD,
    LevelEngine,
    ShardedRun,
    resolve_driver_threshold,
)
from modelcheck.shards.rundir import RunDir
from modelcheck.shards.worker import decode_error
from modelcheck.spec import Spec

from .hadoop_fs import is_uri, local_path
from .session import (
    SparkBackendError,
    driver_paths,
    get_session,
    is_local_master,
    ship_spec,
    spec_target,
)
from .shard_engine import ShardEngine

__all__ = ["SparkExplorer", "LevelEngine", "DRIVER_THRESHOLD",
           "resolve_driver_threshold", "JobCanceller", "translate_job_error"]

#: the Spark engines by name (``--engine``; recorded in a checkpoint's manifest)
ENGINES = ("shards", "rdd")



class SparkExplorer(ShardedRun):
    """Breadth-first exhaustive exploration of a bound spec on Spark.

    ``config`` says what to check and how (:class:`~modelcheck.config.CheckConfig`,
    as for :class:`modelcheck.explorer.Explorer`; its ``batch_size`` is the states
    per expansion batch inside a task, ``checkpoint_dir``/``resume`` the run
    directory); keyword ``options`` override its fields. ``spark`` may be an
    existing ``SparkSession``; else the active one is used, or one is started for
    ``master`` (``None``: the one given to ``spark-submit``) with ``spark_conf``, and
    stopped after the run if ``stop_session``. ``partitions`` is the number of buckets
    (default: the cores Spark offers). ``engine`` is ``"shards"`` (levels as files in
    the run directory, ``checkpoint_dir`` or a temporary one, which every executor must
    reach at the same path), ``"rdd"`` (levels in Spark, checkpoints through Hadoop:
    ``checkpoint_dir`` may be a URI) or ``"auto"`` (shards on a local master, else
    rdd). ``notice`` receives one-line messages about the run that are not part of the
    result (``--resume`` on a directory without a checkpoint starts afresh, as
    ``modelcheck check --resume`` does). ``spec_target`` overrides the loader target
    executors use to import the spec (by default derived from the spec's class).
    ``library`` looks up the predicates the spec does not declare, on the driver and on
    every executor (a module-level function, so that it pickles).
    """

    backend = "spark"
    engines = ENGINES

    def __init__(
        self,
        spec: Spec,
        config: CheckConfig | None = None,
        *,
        library: Library | None = library_lookup,
        master: str | None = "local[*]",
        partitions: int | None = None,
        spark_conf: dict[str, str] | None = None,
        progress: Callable[[Progress], None] | None = None,
        spark: Any = None,
        spec_target: str | None = None,
        connect_timeout: float = 60.0,
        stop_session: bool = False,
        verbose: bool = False,
        driver_threshold: int | None = None,
        engine: str = "auto",
        notice: Callable[[str], None] | None = None,
        temporal: tuple[str, ...] = (),
        **options: Any,
    ) -> None:
        cfg = CheckConfig.of(config, options, "SparkExplorer")
        super().__init__(spec, cfg, library=library, progress=progress, notice=notice,
                         driver_threshold=resolve_driver_threshold(driver_threshold),
                         temporal=temporal)
        self.verbose = verbose
        self.master = master
        self.partitions = partitions
        self.spark_conf = dict(spark_conf or {})
        self.spark = spark
        self.spec_target = spec_target
        self.connect_timeout = connect_timeout
        self.stop_session = stop_session
        if engine not in (*ENGINES, "auto"):
            raise UsageError(f"unknown Spark engine {engine!r}; choose one of "
                             f"{', '.join(ENGINES)}.")
        self.engine_name = engine
        self._stop = self._sigint = JobCanceller()
        self._prechecked: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None

    # ------------------------------------------------------------------ run
    def precheck(self) -> None:
        """Check what can be checked before Spark starts: the spec can be shipped, and the
        checkpoint directory is usable (and, with ``resume``, belongs to this spec and
        engine)."""
        if self._prechecked is not None:
            return
        self._refuse_rdd_liveness()
        if isinstance(self.config.memory_limit, int):
            raise UsageError(
                f"--memory-limit {format_size(self.config.memory_limit)} bounds the memory "
                "of the local explorer's one process; on Spark the states live in the "
                "executors' Python workers and the run directory, spread over hosts, so "
                "one limit cannot be enforced. Bound the run with --max-states (it stops "
                "at the last complete level, as locally), and the executors with Spark's "
                "settings (--conf spark.executor.memory=8g, spark.executor.pyspark.memory)."
            )
        target, _ = spec_target(type(self.spec))
        if self.spec_target:
            target = self.spec_target
        ident = self._identity(target)
        manifest: dict[str, Any] | None = None
        cfg = self.config
        remote = cfg.checkpoint_dir is not None and is_uri(cfg.checkpoint_dir)
        if remote and self.engine_name == "auto":
            self.engine_name = "rdd"
        if remote:
            # A Hadoop file system: checked once Spark runs (its JVM reaches it).
            if self.engine_name == "shards" and not cfg.resume:
                raise UsageError(f"--checkpoint-dir {cfg.checkpoint_dir}: the shards engine "
                                 "keeps its levels in a local directory; use --engine rdd "
                                 "(the default for such URIs) or a local path.")
            rundir = RunDir(Path(tempfile.mkdtemp(prefix="modelcheck-spark-run-")),
                            temporary=True)
        else:
            rundir, manifest = self._prepare_local(
                ident, "modelcheck-spark-run-",
                None if cfg.checkpoint_dir is None else local_path(cfg.checkpoint_dir))
        self.rundir = rundir
        self._prechecked = (target, ident, manifest)

    def _refuse_rdd_liveness(self) -> None:
        if self.engine_name == "rdd" and self.temporal:
            raise LivenessError(
                f"temporal properties ({', '.join(self.temporal)}) are checked on Spark by "
                "the shards engine only (its tasks write the state graph beside the level "
                "files, on one host): use --engine shards with a local master, or "
                "`modelcheck check --workers N`; or select only invariants with "
                "--invariant NAME.")

    def _resumable(self, rundir: RunDir, ident: dict[str, Any]) -> dict[str, Any]:
        """The manifest of the checkpoint to resume; its engine is this run's."""
        manifest = super()._resumable(rundir, ident)
        self.engine_name = str(manifest["engine"])
        return manifest

    @property
    def resume_point(self) -> tuple[int, int] | None:
        """After :meth:`precheck`: ``(level, distinct states)`` where a ``--resume`` run
        continues its checkpoint, or None for a fresh run."""
        manifest = self._prechecked[2] if self._prechecked is not None else None
        return None if manifest is None else self._resume_point(manifest)

    def run(self) -> Result:
        """Explore; Ctrl-C returns the levels finished so far with status ``incomplete``."""
        t0 = time.perf_counter()
        self.precheck()
        assert self._prechecked is not None
        target, ident, manifest = self._prechecked
        self._prechecked = None  # a second run() prepares afresh
        self._interrupted = False
        rundir = self.rundir
        created = False
        spark = self.spark
        try:
            if spark is None:
                spark, created = get_session(self.master, self.spark_conf,
                                             connect_timeout=self.connect_timeout,
                                             quiet=not self.verbose)
            self.spark = spark
            if not self.spec_target:
                target = ship_spec(spark, type(self.spec)).target
            if self.engine_name == "auto":
                # One host: the shard engine's files; a cluster: the levels in Spark.
                local = is_local_master(str(spark.sparkContext.master))
                self.engine_name = "shards" if local else "rdd"
            store = None
            cp = self.config.checkpoint_dir
            if cp is not None and self.engine_name == "rdd":
                from .hadoop_fs import HadoopDir

                store = self._call(-1, HadoopDir, spark, cp)
                if is_uri(cp):
                    rundir.cleanup()
                    rundir = self.rundir = RunDir.prepare_remote(store, resume=self.config.resume)
                    if self.config.resume and rundir.has_checkpoint:
                        manifest = self._resumable(rundir, ident)
                    elif self.config.resume:
                        self._notice(f"--resume: no checkpoint in {cp}; starting afresh.")
            if manifest is not None:
                buckets = int(manifest["engine_state"]["partitions"])
            elif self.partitions:
                buckets = int(self.partitions)
            else:
                buckets = ShardEngine.default_buckets(
                    int(spark.sparkContext.defaultParallelism))
            self._refuse_rdd_liveness()
            if self.engine_name == "rdd":
                from .rdd_engine import RddEngine

                self.engine = RddEngine(spark, buckets, self.worker_config(target),
                                        len(self.kernel.actions), kernel=self.kernel,
                                        store=store, driver_threshold=self.driver_threshold)
            else:
                self.engine = ShardEngine(spark, rundir, buckets, self.worker_config(target),
                                          len(self.kernel.actions),
                                          driver_threshold=self.driver_threshold,
                                          kernel=self.kernel)
            with self._sigint.installed(spark):
                res = self._explore(t0, ident, manifest)
            if self.after is not None and res.status is Status.OK:
                res = self.after(res)  # (while the run directory holds the state graph)
        finally:
            rundir.cleanup()
            if created and self.stop_session and spark is not None:
                try:
                    spark.stop()
                except Exception:  # noqa: BLE001
                    pass
                self.spark = None
        return res

    # ------------------------------------------------------------ Spark's side
    def _local_paths(self, text: str) -> str:
        return driver_paths(text)

    def _cancel(self) -> None:
        try:
            self.spark.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001
            pass

    def _memory(self) -> dict[str, int]:
        engine = self.engine
        return {
            "spark_jobs": engine.jobs["spark"],
            "driver_levels": engine.jobs["driver"],
            "spark_task_cpu_ms": round(1000 * engine.task_cpu["spark"]),
            "driver_level_cpu_ms": round(1000 * engine.task_cpu["driver"]),
            "spark_job_wall_ms": round(1000 * engine.level_wall["jobs"]),
            "driver_level_wall_ms": round(1000 * engine.level_wall["driver"]),
        }

    def _error_text(self, e: BaseException) -> str:
        return _exception_text(e)

    def _job_error(self, e: BaseException, depth: int) -> BaseException:
        return translate_job_error(e, f"expanding level {depth}", self._interrupted)


class JobCanceller(Interrupts):
    """Ctrl-C during Spark jobs (:meth:`installed`, in the main thread): the guard of
    :mod:`modelcheck.interrupt`, whose first Ctrl-C also cancels the running jobs, from
    another thread, instead of interrupting a py4j call midway (which breaks the
    connection and makes PySpark log stack traces); it is recorded in
    :attr:`requested` and the run then ends with what it finished. A second Ctrl-C
    raises ``KeyboardInterrupt`` at once."""

    def __init__(self) -> None:
        super().__init__(replace=True)

    @contextlib.contextmanager
    def installed(self, spark: Any) -> Iterator[None]:
        def cancel() -> None:
            try:
                spark.sparkContext.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be going away
                pass

        self.on_request = cancel
        with self:
            yield


def translate_job_error(e: BaseException, doing: str, interrupted: bool) -> BaseException:
    """What to raise for an exception of a Spark job run while ``doing`` (e.g.
    "expanding level 3"): a spec error on an executor as the local one, a cancelled
    job (or any failure after Ctrl-C, ``interrupted``) as ``KeyboardInterrupt``, a
    module the executors lack and any other failure as one paragraph."""
    text = _exception_text(e)
    payload = decode_error(text)
    if payload is not None:
        message = driver_paths(str(payload.get("message")))
        if payload.get("type") == "SpecEvaluationError":
            where = payload.get("where")
            return SpecEvaluationError(message, where=where and driver_paths(where),
                                       what=payload.get("what"),
                                       state=payload.get("state"))
        return SparkBackendError(f"{doing} failed on an executor: {message}")
    if interrupted or ("cancelled" in text.lower() and "job" in text.lower()):
        return KeyboardInterrupt()
    missing = _MISSING_MODULE.search(text)
    if missing is not None:
        return SparkBackendError(
            f"the executors' Python cannot import {missing.group(1)!r} (while {doing}). "
            "The spec, modelcheck, invariants and spark_explore travel with the job; "
            "every other package they import (numpy) must be installed for the Python "
            "the executors run (spark.pyspark.python / PYSPARK_PYTHON) on every host."
        )
    return SparkBackendError(f"a Spark job failed while {doing}: "
                             f"{_first_meaningful_line(text)}")


def _exception_text(e: BaseException) -> str:
    parts = [str(e)]
    for attr in ("desc", "stackTrace", "java_exception"):
        v = getattr(e, attr, None)
        if v is not None:
            try:
                parts.append(str(v))
            except Exception:  # noqa: BLE001
                pass
    return "\n".join(parts)


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
#: py4j's and Spark's wrapper lines, which say nothing about the cause
_WRAPPERS = ("An error occurred while calling", "Exception thrown in awaitResult",
             ": org.apache.spark.SparkException: Exception thrown in awaitResult")


def _first_meaningful_line(text: str) -> str:
    """The first line of a Spark exception text that says what went wrong (for a failed
    stage: Spark's "Job aborted due to stage failure" line)."""
    lines = [ln.strip() for ln in text.splitlines()]
    for line in lines:
        if "Job aborted due to stage failure" in line:
            return line[line.index("Job aborted"):][:600]
    for line in lines:
        if line and not line.startswith(("at ", "...", "JVM stacktrace")) \
                and not any(w in line for w in _WRAPPERS):
            return line[:600]
    return text[:600]
