"""The driver of a Spark exploration: what ``modelcheck spark`` calls.

:class:`SparkExplorer` runs the one run loop of :mod:`modelcheck.run.loop` (the
local explorer's: same counts, same stops, same violation rule, same trace) over the
Spark backend :class:`_SparkLevels`. It owns the driver side of a run:

* the run directory (``--checkpoint-dir``, else a temporary one), checked before
  Spark starts, and the manifest of committed levels (``--resume`` continues from
  it);
* the Spark session (reused, or started and, with ``stop_session``, stopped) and
  shipping the spec's code to executors;
* Ctrl-C: the running job is cancelled from another thread and the run ends with
  the levels finished so far;
* translating Spark's exceptions (a spec error on an executor reads as locally, a
  full run directory is one paragraph);
* the backend's side of the loop: which jobs count and expand a level (see below).

The levels themselves are computed by an engine behind :class:`LevelEngine`: today
:class:`spark_explore.shard_engine.ShardEngine`. Job ``d`` of the engine commits
level ``d`` and expands it, so the size of level ``d + 1`` is known one job later.

The decisions are the level engine's (:mod:`modelcheck.engine`): every task expands
its bucket with :class:`~modelcheck.engine.LevelExpansion` and returns its
:class:`~modelcheck.engine.LevelFindings`; the driver merges them (by minima, so
the answer is the one the local explorer gives for the whole level in fingerprint
order, whatever the number of buckets or the batch size), and the run loop applies
:meth:`~modelcheck.engine.LevelFindings.verdict`. A phase-1 verdict (an invariant
violated or raising on a state of the level) stops before the next job; any other
verdict finishes the level first, counting the next level's new states with a
commit-only job.

The driver holds only per-level counters; never the visited set or a frontier.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import resource
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from modelcheck.budget import format_size
from modelcheck.checkpoint import Final, Snapshot
from modelcheck.checkpoint import manifest as new_manifest
from modelcheck.config import CheckConfig
from modelcheck.engine import LevelFindings, Verdict, initial_states, report
from modelcheck.errors import ModelcheckError, SpecEvaluationError, UsageError
from modelcheck.explorer import build_kernel
from modelcheck.interrupt import Interrupts
from modelcheck.library import Library
from modelcheck.library import lookup as library_lookup
from modelcheck.result import Result, Violation
from modelcheck.run.loop import Begin, Pulse, RunLoop, Successors
from modelcheck.run.progress import Progress
from modelcheck.run.results import new_result
from modelcheck.run.rules import can_expand
from modelcheck.spec import Spec

from .checkpoint import CheckpointError, RunDir, spec_identity
from .hadoop_fs import is_uri, local_path
from .session import (
    SparkBackendError,
    driver_paths,
    get_session,
    is_local_master,
    ship_spec,
    spec_target,
)
from .shard_engine import LevelSummary, ShardEngine
from .worker import WorkerConfig, decode_error

__all__ = ["SparkExplorer", "LevelEngine", "DRIVER_THRESHOLD",
           "resolve_driver_threshold", "JobCanceller", "translate_job_error"]

#: levels with at most this many candidate states run in the driver process. A level
#: costs the driver n/r (r ~ 2M states/s) and Spark f + n/(P r) (f ~ 0.1 s a job, P
#: executor cores): equal at n = f r P/(P - 1), ~300,000 on 2 cores (measured on L5)
DRIVER_THRESHOLD = 300_000
#: the level engines by name (``--engine``; recorded in a checkpoint's manifest)
ENGINES = ("shards", "rdd")
#: the environment variable overriding :data:`DRIVER_THRESHOLD`
DRIVER_THRESHOLD_ENV = "MODELCHECK_SPARK_DRIVER_THRESHOLD"


def resolve_driver_threshold(value: int | None) -> int:
    """``value``, else the environment's ``MODELCHECK_SPARK_DRIVER_THRESHOLD``, else
    :data:`DRIVER_THRESHOLD`."""
    if value is None:
        raw = os.environ.get(DRIVER_THRESHOLD_ENV, "").strip()
        if not raw:
            return DRIVER_THRESHOLD
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"{DRIVER_THRESHOLD_ENV}={raw!r}: expected a whole number of "
                             "states (0: every level on the executors).") from None
    if value < 0:
        raise UsageError(f"the driver threshold must be >= 0, not {value}.")
    return int(value)


class LevelEngine(Protocol):
    """What the driver needs from an engine. Spark's exceptions pass through; the
    driver translates them."""

    name: str  # recorded in the manifest; a checkpoint resumes with the same engine
    buckets: int

    def start(self, fps: np.ndarray, words: np.ndarray | None) -> None:
        """A fresh run from these initial states (distinct, sorted fingerprints)."""

    def run_level(self, depth: int, expand: bool | None, again: bool = False
                  ) -> LevelSummary:
        """Commit level ``depth``; expand it (True), check it only (False) or not (None)."""

    def parent(self, depth: int, fp: int) -> int | None:
        """The parent fingerprint of state ``fp`` of committed level ``depth``."""

    def level_states(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """States of committed level ``depth`` in fingerprint order: ``(fps, words)``."""

    def tidy(self, depth: int) -> None:
        """Levels ``0..depth`` are committed: delete what resuming no longer needs."""

    def resume(self, depth: int) -> bool:
        """Prepare to continue a checkpoint at committed level ``depth``; True when the
        level must be expanded again (its successors were not kept)."""

    def bytes_on_disk(self) -> int:
        """Bytes of the engine's files in the run directory."""

    @property
    def task_cpu(self) -> dict[str, float]:
        """CPU seconds the levels' tasks took, in Spark jobs (``spark``) and in the
        driver process (``driver``)."""

    @property
    def jobs(self) -> dict[str, int]:
        """Levels run as Spark jobs (``spark``) and in the driver process (``driver``)."""


class SparkExplorer:
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
        **options: Any,
    ) -> None:
        cfg = CheckConfig.of(config, options, "SparkExplorer")
        if cfg.spill_dir is not None:
            raise UsageError("--spill-dir is an option of the local explorer: the Spark "
                             "backend keeps its levels in the run directory "
                             "(--checkpoint-dir).")
        if cfg.resume and cfg.checkpoint_dir is None:
            raise UsageError("--resume needs --checkpoint-dir: the directory of the run to "
                             "continue.")
        self.config = cfg
        self.verbose = verbose
        self.notice = notice
        self.library = library
        self.spec = spec
        self.kernel = build_kernel(spec, cfg, library)
        self.layout = spec.layout
        self.master = master
        self.partitions = partitions
        self.spark_conf = dict(spark_conf or {})
        self.progress = progress
        self.spark = spark
        self.spec_target = spec_target
        self.connect_timeout = connect_timeout
        self.stop_session = stop_session
        self.driver_threshold = resolve_driver_threshold(driver_threshold)
        if engine not in (*ENGINES, "auto"):
            raise UsageError(f"unknown Spark engine {engine!r}; choose one of "
                             f"{', '.join(ENGINES)}.")
        self.engine_name = engine
        self.engine: LevelEngine
        self._sigint = JobCanceller()
        self._prechecked: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None

    # ------------------------------------------------------------------ run
    def precheck(self) -> None:
        """Check what can be checked before Spark starts: the spec can be shipped, and the
        checkpoint directory is usable (and, with ``resume``, belongs to this spec and
        engine)."""
        if self._prechecked is not None:
            return
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
        ident = spec_identity(self.kernel, target)
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
        elif cfg.checkpoint_dir is not None:
            rundir = RunDir.prepare(local_path(cfg.checkpoint_dir), resume=cfg.resume)
            if cfg.resume and rundir.has_checkpoint:
                manifest = self._resumable(rundir, ident)
            elif cfg.resume:
                self._notice(f"--resume: no checkpoint in {cfg.checkpoint_dir}; starting "
                             "afresh.")
        else:
            rundir = RunDir(Path(tempfile.mkdtemp(prefix="modelcheck-spark-run-")),
                            temporary=True)
        self.rundir = rundir
        self._prechecked = (target, ident, manifest)

    def _resumable(self, rundir: RunDir, ident: dict[str, Any]) -> dict[str, Any]:
        """The manifest of the checkpoint to resume (checked against this run)."""
        manifest = rundir.read_manifest()
        rundir.check_compatible(manifest, ident)
        if manifest["engine"] not in ENGINES:
            raise CheckpointError(
                f"the checkpoint in {rundir.where} was written by the "
                f"{manifest['engine']} engine, which this version "
                "no longer has; start a new run in another --checkpoint-dir."
            )
        self.engine_name = str(manifest["engine"])
        return manifest

    def _notice(self, message: str) -> None:
        """Tell the user something about the run that is not a result (``notice``)."""
        if self.notice is not None:
            self.notice(message)

    @property
    def resume_point(self) -> tuple[int, int] | None:
        """After :meth:`precheck`: ``(level, distinct states)`` where a ``--resume`` run
        continues its checkpoint, or None for a fresh run."""
        manifest = self._prechecked[2] if self._prechecked is not None else None
        if manifest is None:
            return None
        return int(manifest["level"]), sum(int(lv["states"]) for lv in manifest["levels"])

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
            if self.engine_name == "rdd":
                from .rdd_engine import RddEngine

                self.engine = RddEngine(spark, buckets, self._worker_config(target),
                                        len(self.kernel.actions), kernel=self.kernel,
                                        store=store)
            else:
                self.engine = ShardEngine(spark, rundir, buckets, self._worker_config(target),
                                          len(self.kernel.actions),
                                          driver_threshold=self.driver_threshold,
                                          kernel=self.kernel)
            with self._sigint.installed(spark):
                res = self._explore(t0, ident, manifest)
        finally:
            rundir.cleanup()
            if created and self.stop_session and spark is not None:
                try:
                    spark.stop()
                except Exception:  # noqa: BLE001
                    pass
                self.spark = None
        return res

    def _worker_config(self, target: str) -> WorkerConfig:
        """What executors need to rebuild this run's kernel."""
        cfg = self.config
        return WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                            invariants=cfg.invariants, check_deadlock=cfg.check_deadlock,
                            symmetry=cfg.symmetry, view=cfg.view,
                            n_words=self.layout.n_words,
                            chunk=cfg.batch_size,
                            library=None if self.library is library_lookup else self.library)

    # ------------------------------------------------------------ the run
    def _explore(self, t0: float, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        res = new_result(self.kernel, self.config, backend="spark")
        return RunLoop(_SparkLevels(self, ident, manifest), self.kernel, self.config, res,
                       self._sigint, progress=self.progress, t0=t0).run()

    def _can_expand(self, depth: int) -> bool:
        return can_expand(depth, self.config.max_depth)

    def _job(self, depth: int, expand: bool | None, again: bool = False) -> LevelSummary:
        """The engine's job ``depth`` (level 0 includes what the initial states outside
        the state constraints found)."""
        t = time.perf_counter()
        lv: LevelSummary = self._call(depth, self.engine.run_level, depth, expand, again)
        if depth == 0 and expand is not None:
            lv.found.merge(self._call(0, initial_states, self.kernel)[2])
        lv.seconds = time.perf_counter() - t
        return lv

    def _report(self, depth: int, verdict: Verdict) -> Violation:
        """The violation ``verdict`` reports (a spec error raises, as locally, naming the
        spec's file as the driver knows it rather than the copy executors ran)."""
        if verdict.kind == "error" and verdict.error is not None:
            e = verdict.error
            raise SpecEvaluationError(driver_paths(e.message),
                                      where=e.where and driver_paths(e.where), what=e.what,
                                      state=e.state)
        v: Violation = self._call(depth, report, self.kernel, verdict,
                                  functools.partial(self._path, depth))
        return v

    def _path(self, depth: int, fp: int) -> list[int]:
        """Fingerprints from an initial state to state ``fp`` of level ``depth``."""
        out = [fp]
        cur = fp
        for d in range(depth, 0, -1):
            parent = self.engine.parent(d, cur)
            if parent is None:  # pragma: no cover - would be an engine bug
                raise SparkBackendError(f"trace rebuild: {cur:#x} is not in level {d}")
            cur = parent
            out.append(cur)
        out.reverse()
        return out

    # ------------------------------------------------------------ interrupts
    @property
    def _interrupted(self) -> bool:
        return self._sigint.requested

    @_interrupted.setter
    def _interrupted(self, value: bool) -> None:
        self._sigint.requested = value

    # ------------------------------------------------------------ errors
    def _call(self, depth: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` (work of job ``depth``), with Spark's exceptions translated."""
        try:
            return fn(*args)
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - py4j / pyspark raise many types
            raise self._translate(e, depth) from None

    def _translate(self, e: BaseException, depth: int) -> BaseException:
        text = _exception_text(e)
        if "No space left on device" in text:
            done = depth - 1  # job ``depth`` writes level ``depth``
            kept = ("no level is committed yet" if done < 0 else
                    f"levels 0..{done} are committed"
                    + ("" if self.rundir.temporary else " and stay usable with --resume once "
                       "space is freed"))
            return CheckpointError(
                f"the run directory {self.rundir.where} is full (No space left on device) while "
                f"writing level {done + 1}; {kept}."
            )
        return translate_job_error(e, f"expanding level {depth}", self._interrupted)


class _SparkLevels:
    """The Spark backend of the run loop (:class:`~modelcheck.run.loop.Backend`): the
    levels are the engine's (:class:`LevelEngine`), the checkpoint is the run
    directory's manifest. Job ``d`` of the engine commits level ``d`` and expands it, so
    the loop's "count level ``d + 1``" runs job ``d + 1``, which also expands that level
    when the loop will (without expanding when ``--max-states`` may stop the run first:
    then it counts, and expands again only if the level fits)."""

    def __init__(self, ex: SparkExplorer, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> None:
        self.ex, self.ident, self.manifest = ex, ident, manifest
        self.pending: LevelSummary | None = None  # job `depth`: the level being expanded
        self.next: LevelSummary | None = None  # the job that counted the next level
        self.fps = np.zeros(0, dtype=np.uint64)
        self.words = np.zeros((0, 1), dtype=np.uint64)

    def begin(self, resume: bool) -> Begin:
        ex, manifest = self.ex, self.manifest
        if manifest is None:
            return Begin()
        depth = int(manifest["level"])
        sizes = [int(lv["states"]) for lv in manifest["levels"]]
        pending = LevelSummary.from_json(manifest["engine_state"]["pending"])
        ex.engine.tidy(depth)
        resumed = ex._call(depth, ex.engine.resume, depth)
        if resumed or pending.expand is not ex._can_expand(depth):
            # Interrupted with another --max-depth: expand the level as this run wants.
            pending = ex._job(depth, ex._can_expand(depth), again=True)
            pending.new = sizes[depth]
        self.pending = pending
        return Begin(Snapshot.from_json(manifest["state"]), sizes=sizes)

    def initial(self) -> int:
        self.fps, self.words, _ = self.ex._call(0, initial_states, self.ex.kernel)
        return len(self.fps)

    def keep_initial(self) -> None:
        ex = self.ex
        ex._call(0, ex.engine.start, self.fps, None if ex.layout.exact else self.words)
        self.pending = ex._job(0, ex._can_expand(0))

    def expand(self, depth: int, expand: bool, pulse: Pulse) -> LevelFindings:
        assert self.pending is not None and self.pending.depth == depth
        return self.pending.found

    def successors(self, depth: int, verdict: Verdict | None, expand_next: bool,
                   room: int | None) -> Successors:
        ex, cur = self.ex, self.pending
        assert cur is not None
        nxt: LevelSummary | None = None
        if cur.candidates == 0:
            new = 0
        elif verdict is not None:  # count the next level's states, expand nothing
            nxt = ex._job(depth + 1, None)
            new = nxt.new
        elif room is not None and cur.candidates > room:
            # The next level may pass --max-states: count it before expanding it.
            nxt = ex._job(depth + 1, None)
            new = nxt.new
            if new <= room:
                counted = nxt.seconds
                nxt = ex._job(depth + 1, expand_next, again=True)
                nxt.seconds += counted
        else:
            nxt = ex._job(depth + 1, expand_next)
            new = nxt.new
        self.next = nxt
        reached = nxt.reached if new and nxt is not None else \
            np.zeros(len(ex.kernel.actions), dtype=np.int64)
        return Successors(new, np.asarray(reached, dtype=np.int64),
                          cur.seconds + (nxt.seconds if nxt is not None else 0.0))

    def fits(self, depth: int, new: int) -> None:
        pass  # the executors' memory is Spark's to bound

    def keep(self, depth: int) -> None:
        self.pending, self.next = self.next, None

    def report(self, depth: int, verdict: Verdict) -> Violation:
        return self.ex._report(depth, verdict)

    def commit(self, snap: Snapshot, sizes: list[int]) -> None:
        """Record job ``snap.depth`` as committed (manifest), then let the engine delete
        the files no longer needed."""
        ex, depth = self.ex, snap.depth
        assert self.pending is not None
        if not ex.rundir.temporary:
            ex.rundir.write_manifest(new_manifest(
                ex.engine.name, self.ident, ex.config.identity,
                [{"states": n} for n in sizes[:depth + 1]], snap.to_json(),
                engine_state={"partitions": ex.engine.buckets,
                              "pending": self.pending.to_json()}))
        ex.engine.tidy(depth)

    def finish(self, final: Final) -> None:
        pass  # a resumed run continues from the last commit

    @property
    def checkpoint(self) -> str | None:
        return None if self.ex.rundir.temporary else self.ex.rundir.where

    def advice(self) -> str:
        return ""

    def out_of_memory(self, detail: str) -> str:
        return detail

    def release(self) -> None:
        self.next = None

    def interrupted(self) -> None:
        """Ctrl-C: cancel what still runs; the run ends with the levels finished so far."""
        self.ex._interrupted = True
        try:
            self.ex.spark.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001
            pass

    def memory(self) -> dict[str, int]:
        engine = self.ex.engine
        return {
            "driver_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "run_dir_bytes": engine.bytes_on_disk(),
            "partitions": engine.buckets,
            "spark_jobs": engine.jobs["spark"],
            "driver_levels": engine.jobs["driver"],
            "spark_task_cpu_ms": round(1000 * engine.task_cpu["spark"]),
            "driver_level_cpu_ms": round(1000 * engine.task_cpu["driver"]),
        }


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
