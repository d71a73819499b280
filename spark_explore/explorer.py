"""The Spark level loop: the same breadth-first exploration as the local explorer, distributed.

:class:`SparkExplorer` owns the driver side of a Spark run. It follows
:meth:`modelcheck.explorer.Explorer.run` step for step (same counts, same parent
rule, same violation rule, same trace), with the data kept in Spark:

* Explored states live in a few *runs*: DataFrames of rows ``(fp, level, parent,
  act, w0..)``, hash-partitioned by ``fp`` into ``P`` partitions and sorted by ``fp``
  inside each, each run holding a range of BFS levels. Together they are the visited
  set; the newest level (in the newest run) is the frontier. Runs are merged like a
  binary counter (a new level absorbs the newest runs while they hold no more levels
  than it), so there are at most ``log2(depth) + 1`` of them.
* One level is one Spark job: scan the frontier → ``mapInArrow`` running
  :meth:`modelcheck.kernel.Kernel.expand` on each partition (executors, see
  :mod:`spark_explore.worker`) → shuffle by ``fp`` → per ``fp`` keep the smallest
  (parent fingerprint, action id) (``min``/``min_by`` on an order-preserving signed
  key, after a sort: a streaming aggregate) → left-anti sort-merge joins against every
  run (co-partitioned and sorted, so nothing of the visited set is shuffled or sorted)
  → union with the runs being merged → the new run. Counts and side results (fired
  transitions, how states were reached, invariant violations, deadlocks, property
  hits) come back through two ``Observation`` s of that job.
* A run is materialised either as a local checkpoint (``store="memory"``: fastest;
  the default for ``local`` masters, where executor and driver live and die together)
  or as a bucketed, sorted Parquet table in the run directory (``store="parquet"``:
  durable; used with a checkpoint directory and on clusters, so that work lost with an
  executor is recomputed from files and a run can be resumed). Either way the query
  plan of a level starts from leaves: lineage stays flat whatever the depth.
* Violations follow the local rule: the level is finished, the smallest violating
  fingerprint wins (invariants before deadlocks before action properties); the path
  is found by parent look-ups (one small query per level) and replayed on the driver
  with :func:`modelcheck.explorer.rebuild_trace`.
* With a checkpoint directory every completed level is committed (its run first,
  then the manifest) and ``resume=True`` continues from the last committed level.

The driver holds only per-level counters; never the visited set or a frontier.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import resource
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from modelcheck.errors import ModelcheckError, SpecEvaluationError
from modelcheck.explorer import (
    coverage_table,
    deadlock_violation,
    invariant_violation,
    property_violation,
    select_checks,
)
from modelcheck.kernel import Kernel
from modelcheck.layout import collision_probability
from modelcheck.result import LevelStats, Result, Violation
from modelcheck.spec import Spec
from modelcheck.store import dedupe_min

from .checkpoint import CheckpointError, RunDir, spec_identity
from .session import (
    SparkBackendError,
    driver_paths,
    get_session,
    run_conf,
    ship_spec,
    spec_target,
)
from .worker import (
    AUX_MASK,
    DEAD,
    FIRED,
    INV,
    KIND_SHIFT,
    NEWACT,
    PROP,
    SIGN,
    TRANS,
    WorkerConfig,
    decode_error,
    expand_partition,
    output_fields,
)

__all__ = ["SparkExplorer", "LevelProgress"]

_U = np.uint64
_MASK64 = (1 << 64) - 1


def _s64(u: int) -> int:
    """Unsigned 64-bit value -> the signed int64 with the same bits."""
    u &= _MASK64
    return u - (1 << 64) if u >= 1 << 63 else u


def _u64(s: int) -> int:
    return int(s) & _MASK64


@dataclass(frozen=True)
class LevelProgress:
    """One finished level, as reported to the ``progress`` callback."""

    level: int  # depth of the frontier that was expanded
    frontier: int  # states expanded
    new: int  # new states found (the next level)
    generated: int  # successors generated (duplicates included)
    distinct: int  # distinct states so far
    seconds: float  # wall time of this level
    elapsed: float  # wall time since the start of the run

    @property
    def duplicates(self) -> int:
        return self.generated - self.new

    @property
    def rate(self) -> float:
        """States expanded per second in this level."""
        return self.frontier / self.seconds if self.seconds > 0 else 0.0


@dataclass
class _Run:
    """Explored states of levels ``lo..hi``: partitioned by fp, sorted by fp."""

    lo: int
    hi: int
    df: Any  # columns fp, level, parent, act, w0..
    keys: Any  # df's fp column: the right side of the anti-joins
    table: str | None = None  # catalog table (Parquet runs)

    @property
    def levels(self) -> int:
        return self.hi - self.lo + 1


@dataclass
class _Summary:
    """What expanding one level found (from the two observations of its job)."""

    new: int  # states of the next level
    fired: np.ndarray  # enabled transitions per action id
    reached: np.ndarray  # states of the expanded level, per action that reached them
    inv_min: dict[int, int]  # invariant index -> smallest violating fp (unsigned)
    dead_min: int | None
    prop_min: dict[int, tuple[int, int, int]]  # property index -> (child, parent, action)


class SparkExplorer:
    """Breadth-first exhaustive exploration of a bound spec on Spark (dataframe engine).

    ``spark`` may be an existing ``SparkSession`` (else the active one is used, or one
    is started for ``master`` with ``spark_conf``). ``partitions`` defaults to twice
    the default parallelism. ``spec_target`` overrides the loader target executors
    use to import the spec (by default derived from the spec's class).
    """

    #: ``depth`` given to :meth:`_call` minus the last committed level
    level_offset = 0

    def __init__(
        self,
        spec: Spec,
        *,
        invariants: Sequence[str] | None = None,
        check_deadlock: bool | None = None,
        symmetry: bool = True,
        max_depth: int | None = None,
        master: str = "local[*]",
        partitions: int | None = None,
        checkpoint_dir: str | Path | None = None,
        resume: bool = False,
        spark_conf: dict[str, str] | None = None,
        progress: Callable[[LevelProgress], None] | None = None,
        spark: Any = None,
        spec_target: str | None = None,
        connect_timeout: float = 60.0,
        stop_session: bool = False,
        chunk: int = 1 << 16,
        store: str | None = None,
    ) -> None:
        invs, props = select_checks(spec, invariants)
        self.spec = spec
        self.invariant_names = tuple(invariants) if invariants is not None else None
        self.kernel = Kernel(spec, invariants=invs, properties=props,
                             check_deadlock=check_deadlock, symmetry=symmetry)
        self.symmetry = symmetry
        self.check_deadlock = check_deadlock
        self.layout = spec.layout
        self.max_depth = max_depth
        self.master = master
        self.partitions = partitions
        self.checkpoint_dir = checkpoint_dir
        self.resume = resume
        if resume and checkpoint_dir is None:
            from modelcheck.errors import UsageError

            raise UsageError("--resume needs --checkpoint-dir: the directory of the run to "
                             "continue.")
        self.spark_conf = dict(spark_conf or {})
        self.progress = progress
        self.spark = spark
        self.spec_target = spec_target
        self.connect_timeout = connect_timeout
        self.stop_session = stop_session
        self.chunk = chunk
        if store not in (None, "memory", "parquet"):
            from modelcheck.errors import UsageError

            raise UsageError(f"store must be 'memory' or 'parquet', not {store!r}.")
        self.requested_store = store
        self.store = store or "memory"
        self.notes: list[str] = []
        self._runs: list[_Run] = []
        self._obsolete: list[tuple[int, int]] = []  # absorbed Parquet runs, deleted on commit
        #: seconds spent per phase of the level jobs (building plans, running jobs, ...)
        self.timings: dict[str, float] = {}
        self._tables: list[str] = []
        self._sizes: list[int] = []
        self._interrupted = False
        self._prechecked: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None

    # ------------------------------------------------------------------ run
    def precheck(self) -> None:
        """Check what can be checked before Spark starts: the spec can be shipped, and the
        checkpoint directory is usable (and, with ``resume``, belongs to this spec)."""
        if self._prechecked is not None:
            return
        target, _ = spec_target(type(self.spec))
        if self.spec_target:
            target = self.spec_target
        ident = spec_identity(self.kernel, target)
        manifest: dict[str, Any] | None = None
        if self.checkpoint_dir is not None:
            rundir = RunDir.prepare(self.checkpoint_dir, resume=self.resume)
            if self.resume:
                manifest = rundir.read_manifest()
                rundir.check_compatible(manifest, ident)
        else:
            import tempfile

            rundir = RunDir(Path(tempfile.mkdtemp(prefix="modelcheck-spark-run-")),
                            temporary=True)
        self.rundir = rundir
        self._prechecked = (target, ident, manifest)

    def run(self) -> Result:
        """Explore; Ctrl-C returns the levels finished so far with status ``incomplete``."""
        t0 = time.perf_counter()
        self.precheck()
        assert self._prechecked is not None
        target, ident, manifest = self._prechecked
        self._prechecked = None  # a second run() prepares afresh
        self._runs, self._tables, self._obsolete, self._sizes = [], [], [], []
        self._interrupted = False
        rundir = self.rundir
        created = False
        spark = self.spark
        try:
            if spark is None:
                spark, created = get_session(self.master, self.spark_conf,
                                             connect_timeout=self.connect_timeout)
            self.spark = spark
            if not self.spec_target:
                shipped = ship_spec(spark, type(self.spec))
                target = shipped.target
            if manifest is not None:
                p = int(manifest["partitions"])
            elif self.partitions:
                p = int(self.partitions)
            else:
                p = self._default_partitions(int(spark.sparkContext.defaultParallelism))
            self.P = p
            self.store = self._choose_store(spark)
            self._prefix = f"mc_{uuid.uuid4().hex[:10]}"
            with run_conf(spark, p), self._cancel_on_sigint(spark):
                res = self._explore(t0, target, ident, manifest)
        finally:
            self._drop_tables()
            rundir.cleanup()
            if created and self.stop_session and spark is not None:
                try:
                    spark.stop()
                except Exception:  # noqa: BLE001
                    pass
        return res

    @contextlib.contextmanager
    def _cancel_on_sigint(self, spark: Any) -> Iterator[None]:
        """Ctrl-C cancels the running Spark job (from another thread) and ends the run
        with the levels finished so far, instead of interrupting a py4j call midway
        (which breaks the connection and makes PySpark log stack traces). A second
        Ctrl-C interrupts at once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def cancel() -> None:
            try:
                spark.sparkContext.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the session may be going away
                pass

        def handler(signum: int, frame: Any) -> None:
            if self._interrupted:
                raise KeyboardInterrupt
            self._interrupted = True
            threading.Thread(target=cancel, name="modelcheck-cancel", daemon=True).start()

        previous = signal.signal(signal.SIGINT, handler)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def _check_interrupt(self) -> None:
        if self._interrupted:
            raise KeyboardInterrupt

    def _default_partitions(self, cores: int) -> int:
        """Partitions of the state set when ``partitions`` is not given."""
        return max(2, 2 * cores)

    def _choose_store(self, spark: Any) -> str:
        """Where runs live (``memory`` or ``parquet``): see the module docstring."""
        if self.checkpoint_dir is not None:
            if self.requested_store == "memory":
                self.notes.append("--checkpoint-dir needs Parquet level tables; using them.")
            return "parquet"
        if self.requested_store is not None:
            return self.requested_store
        sc = spark.sparkContext
        from .session import is_local_master

        if is_local_master(sc.master):
            return "memory"  # the executor is the driver: nothing can be lost alone
        try:
            infos = sc._jsc.sc().statusTracker().getExecutorInfos()
            hosts = {str(i.host()) for i in infos}
        except Exception:  # noqa: BLE001
            hosts = set()
        if all(_is_this_host(h) for h in hosts):
            return "parquet"  # one host: a temporary directory is shared by all executors
        self.notes.append(
            "executors run on several hosts and no --checkpoint-dir was given: levels are "
            "kept in executor memory, so losing an executor fails the run. Pass "
            "--checkpoint-dir on storage all hosts share to survive lost executors."
        )
        return "memory"

    # ------------------------------------------------------------ the loop
    def _explore(self, t0: float, target: str, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        k = self.kernel
        n_act = len(k.actions)
        res = self._new_result()
        fired = np.zeros(n_act, dtype=np.int64)
        new_by_action = np.zeros(n_act, dtype=np.int64)
        generated = 0
        prior_seconds = 0.0
        violation: Violation | None = None
        self._cfg = self._worker_config(target)
        # new_by_action is counted by the workers when they read a frontier (each state
        # carries the action that reached it): levels 1..counted are in it so far.
        if manifest is not None:
            if manifest.get("engine", "dataframe") != "dataframe":
                raise CheckpointError(
                    f"the checkpoint in {self.rundir.path} was written by the "
                    f"{manifest.get('engine')} engine; resume it with --engine "
                    f"{manifest.get('engine')}."
                )
            depth = int(manifest["level"])
            runs = [(int(lo), int(hi)) for lo, hi in manifest["runs"]]
            self.rundir.remove_runs_except(runs)
            for lo, hi in runs:
                self._call(lo, self._register_run, lo, hi)
            self._sizes = [int(x) for x in manifest["level_sizes"]]
            generated = int(manifest["generated"])
            fired[:] = manifest["fired"]
            new_by_action[:] = manifest["new_by_action"]
            counted = int(manifest["coverage_levels"])
            res.levels = [LevelStats(*row) for row in manifest["stats"]]
            prior_seconds = float(manifest.get("seconds", 0.0))
        else:
            depth = 0
            counted = 0
            self.rundir.remove_runs_except([])
            self._call(0, self._write_initial)
            self._commit(ident, 0, generated, fired, new_by_action, counted, res, t0,
                         prior_seconds)
        try:
            while True:
                self._check_interrupt()
                lt = time.perf_counter()
                n = self._sizes[depth]
                can_expand = self.max_depth is None or depth < self.max_depth
                try:
                    summ = self._call(depth, self._step, depth, can_expand)
                except SpecEvaluationError as err:
                    found = self._call(depth, self._replay_level, depth, can_expand, err)
                    summ = _Summary(0, np.zeros(n_act, dtype=np.int64), np.zeros(0), found,
                                    None, {})
                if len(summ.reached):
                    new_by_action += summ.reached
                    counted = depth
                if summ.inv_min:
                    violation = self._call(depth, self._invariant_violation, depth,
                                           summ.inv_min)
                    res.status = "violation"
                    break
                level_fired = summ.fired
                generated += int(level_fired.sum())
                fired += level_fired
                n_new = summ.new
                res.levels.append(LevelStats(depth, n, n_new, int(level_fired.sum()),
                                             time.perf_counter() - lt))
                if n_new:
                    self._sizes.append(n_new)
                stop, violation = self._level_end(res, depth, n, n_new, int(level_fired.sum()),
                                                  summ.dead_min, summ.prop_min, can_expand,
                                                  lt, t0 - prior_seconds)
                if stop:
                    break
                depth += 1
                self._commit(ident, depth, generated, fired, new_by_action, counted, res, t0,
                             prior_seconds)
        except KeyboardInterrupt:
            self._stop_interrupted(res)
        # Levels whose states were found but never expanded: count how they were reached.
        for d in range(counted + 1, len(self._sizes)):
            try:
                new_by_action += self._call(d, self._reached, d)
            except (ModelcheckError, KeyboardInterrupt):
                if not self._interrupted:
                    raise
        self._complete(res, violation, generated, fired, new_by_action, t0 - prior_seconds,
                       "runs")
        res.memory["runs"] = len(self._runs)
        return res

    # ------------------------------------------------------- shared by both engines
    def _new_result(self) -> Result:
        k = self.kernel
        layout = self.layout
        return Result(spec=self.spec.name, constants=dict(self.spec.constants), status="ok",
                      fingerprint="exact" if layout.exact else "hash64",
                      state_bits=layout.bits, backend="spark",
                      symmetry=list(k.symmetry.names) if k.symmetry else [],
                      checked={"invariants": [p.name for p in k.invariants],
                               "properties": [p.name for p in k.properties],
                               "deadlock": ["on" if k.check_deadlock else "off"]})

    def _worker_config(self, target: str) -> WorkerConfig:
        """What executors need to rebuild this run's kernel."""
        return WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                            invariants=self.invariant_names,
                            check_deadlock=self.check_deadlock, symmetry=self.symmetry,
                            n_words=self.layout.n_words, chunk=self.chunk)

    def _level_end(self, res: Result, depth: int, n: int, n_new: int, generated: int,
                   dead_min: int | None, prop_min: dict[int, tuple[int, int, int]],
                   can_expand: bool, lt: float, start: float) -> tuple[bool, Violation | None]:
        """After level ``depth`` is recorded: the violation rule (deadlock, then action
        property), progress, and whether the run stops here. ``start`` is the run's
        start on the ``perf_counter`` clock (earlier by the time before a resume)."""
        if dead_min is not None:
            res.status = "deadlock"
            return True, self._call(depth, self._deadlock_violation, depth, dead_min)
        if prop_min:
            res.status = "violation"
            return True, self._call(depth, self._property_violation, depth, prop_min)
        if self.progress is not None:
            now = time.perf_counter()
            self.progress(LevelProgress(depth, n, n_new, generated, sum(self._sizes),
                                        now - lt, now - start))
        if not can_expand:
            res.status = "incomplete"
            res.reason = f"--max-depth {self.max_depth} reached"
            return True, None
        return n_new == 0, None

    def _stop_interrupted(self, res: Result) -> None:
        """Ctrl-C: cancel what still runs; the run ends with the levels finished so far."""
        self._interrupted = True
        try:
            self.spark.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001
            pass
        res.status = "incomplete"
        res.reason = "interrupted"

    def _complete(self, res: Result, violation: Violation | None, generated: int,
                  fired: np.ndarray, new_by_action: np.ndarray, start: float,
                  files: str) -> None:
        """Fill in the totals of a finished (or stopped) run; ``files`` is the run
        directory's subdirectory holding the explored states."""
        res.violation = violation
        res.distinct_states = sum(self._sizes)
        res.generated_states = generated
        res.depth = len(self._sizes) - 1
        res.seconds = time.perf_counter() - start
        res.coverage = coverage_table(self.kernel.actions, fired, new_by_action)
        res.collision_probability = collision_probability(res.distinct_states,
                                                          self.layout.exact)
        res.memory = {
            "driver_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "run_dir_bytes": self.rundir.bytes_on_disk(files),
            "partitions": self.P,
        }

    # ------------------------------------------------------------ runs
    def _word_cols(self) -> list[str]:
        return [f"w{i}" for i in range(self.layout.n_words)] if not self.layout.exact else []

    def _run_ddl(self) -> str:
        cols = ["fp BIGINT", "level INT", "parent BIGINT", "act INT"]
        cols += [f"{w} BIGINT" for w in self._word_cols()]
        return ", ".join(cols)

    def _table_name(self, lo: int, hi: int) -> str:
        return f"{self._prefix}_r{lo}_{hi}"

    def _materialize(self, df: Any, lo: int, hi: int) -> _Run:
        """Store ``df`` (hash-partitioned by fp) as the run of levels ``lo..hi``.

        ``memory``: sorted, then a local checkpoint kept by the executors (lineage
        cut, nothing written); ``parquet``: a bucketed, sorted Parquet table in the run
        directory. Either way Spark knows the run is partitioned and sorted by ``fp``.
        """
        from pyspark import StorageLevel

        if self.store == "memory":
            out = df.sortWithinPartitions("fp").localCheckpoint(
                eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK_DESER)
            return self._new_run(lo, hi, out, None)
        name = self._table_name(lo, hi)
        path = self.rundir.run_path(lo, hi)
        self.rundir.remove_run(lo, hi)
        (df.write.bucketBy(self.P, "fp").sortBy("fp").mode("overwrite").format("parquet")
         .option("path", str(path)).saveAsTable(name))
        self._tables.append(name)
        return self._new_run(lo, hi, self.spark.table(name), name)

    def _new_run(self, lo: int, hi: int, df: Any, table: str | None) -> _Run:
        return _Run(lo, hi, df, df.select("fp"), table)

    def _register_run(self, lo: int, hi: int) -> None:
        """Register a committed Parquet run (on resume)."""
        name = self._table_name(lo, hi)
        path = str(self.rundir.run_path(lo, hi)).replace("'", "\\'")
        self.spark.sql(f"CREATE TABLE {name} ({self._run_ddl()}) USING parquet "
                       f"CLUSTERED BY (fp) SORTED BY (fp) INTO {self.P} BUCKETS "
                       f"LOCATION '{path}'")
        self._tables.append(name)
        self._runs.append(self._new_run(lo, hi, self.spark.table(name), name))

    def _level_df(self, depth: int, columns: Sequence[str] = (), where: str = "") -> Any:
        """The rows of level ``depth`` (from the run that holds it)."""
        for r in self._runs:
            if r.lo <= depth <= r.hi:
                cond = f"level = {depth}" + (f" AND {where}" if where else "")
                df = r.df.where(cond)
                return df.select(*columns) if columns else df
        raise SparkBackendError(f"no run holds level {depth}")  # pragma: no cover

    def _absorbed(self) -> list[_Run]:
        """The newest runs a new one-level run absorbs (binary-counter merging)."""
        levels = 1
        i = len(self._runs)
        while i > 0 and self._runs[i - 1].levels <= levels:
            levels += self._runs[i - 1].levels
            i -= 1
        return self._runs[i:]

    def _retire(self, runs: Sequence[_Run]) -> None:
        """Forget runs absorbed by a newer one (files go after the next commit)."""
        for r in runs:
            if r.table is not None:
                self._drop(r.table)
                self._tables.remove(r.table)
                self._obsolete.append((r.lo, r.hi))
            else:
                _release(r.df)

    def _drop(self, name: str) -> None:
        try:
            self.spark.sql(f"DROP TABLE IF EXISTS {name}")
        except Exception:  # noqa: BLE001 - session gone
            pass

    def _drop_tables(self) -> None:
        if self.spark is None:
            return
        for name in self._tables:
            self._drop(name)
        for r in self._runs:
            if r.table is None:
                _release(r.df)
        self._tables = []
        self._runs = []

    # ------------------------------------------------------------ Spark jobs
    def _write_initial(self) -> None:
        from pyspark.sql import functions as F

        k = self.kernel
        layout = self.layout
        init_words, init_fps = k.initial_words()
        ufps, _, rows = dedupe_min(init_fps, np.zeros(len(init_fps), dtype=np.int64))
        words = init_words[rows]
        data = []
        for i, f in enumerate(ufps):
            row: list[int] = [_s64(int(f)), 0, 0, -1]
            if not layout.exact:
                row += [_s64(int(w)) for w in words[i]]
            data.append(tuple(row))
        df = self.spark.createDataFrame(data, schema=self._run_ddl().lower())
        self._runs = [self._materialize(df.repartition(self.P, F.col("fp")), 0, 0)]
        self._sizes = [len(ufps)]

    def _level_plan(self, depth: int, can_expand: bool, side: Any, new: Any) -> Any:
        """The new states of level ``depth + 1`` (lazy; rows as in a run).

        Built with as few calls into the JVM as possible (string expressions), and
        without SQL views: a plan read through a view loses its known partitioning in
        a union, and the union with absorbed runs must stay partitioned by fp.
        """
        from pyspark.sql import functions as F

        words = self._word_cols()
        cfg = dataclasses.replace(self._cfg, expand=can_expand)
        schema = ", ".join(f"{n} {t}" for n, t in output_fields(self.layout.n_words))
        front = self._level_df(depth, ["fp", "act", *words])
        x = _map_in_arrow(front, functools.partial(expand_partition, cfg), schema)
        x = x.observe(side, F.expr(
            f"collect_list(CASE WHEN tag <> {TRANS} THEN struct(fp, tag, pk, act) END)"
        ).alias("side"))
        x = x.where(f"tag = {TRANS}").selectExpr("fp", "pk", "act", *words)
        x = x.repartition(self.P, "fp").sortWithinPartitions("fp")
        aggs = [F.expr("min(pk)").alias("pk"), F.expr("min_by(act, pk)").alias("act")]
        aggs += [F.expr(f"first({w})").alias(w) for w in words]
        cand = x.groupBy("fp").agg(*aggs)
        for r in self._runs:
            cand = cand.join(r.keys, "fp", "left_anti")
        cand = cand.observe(new, F.expr("count(1)").alias("n"))
        return cand.selectExpr("fp", f"{depth + 1} AS level",
                               "pk ^ shiftleft(CAST(1 AS BIGINT), 63) AS parent", "act", *words)

    def _step(self, depth: int, can_expand: bool) -> _Summary:
        """Expand level ``depth``: one job writes the run holding level ``depth + 1``."""
        from pyspark.sql import Observation

        t0 = time.perf_counter()
        side, new = Observation(), Observation()
        out = self._level_plan(depth, can_expand, side, new)
        absorbed = self._absorbed()
        for r in absorbed:
            out = out.union(r.df)
        lo = absorbed[0].lo if absorbed else depth + 1
        t1 = time.perf_counter()
        run = self._materialize(out, lo, depth + 1)
        t2 = time.perf_counter()
        self._retire(absorbed)
        self._runs = self._runs[:len(self._runs) - len(absorbed)] + [run]
        summary = self._summarize(int(new.get["n"]), side.get["side"])
        t3 = time.perf_counter()
        for key, dt in (("plan", t1 - t0), ("job", t2 - t1), ("collect", t3 - t2)):
            self.timings[key] = self.timings.get(key, 0.0) + dt
        return summary

    def _summarize(self, n_new: int, rows: Sequence[Any]) -> _Summary:
        n_act = len(self.kernel.actions)
        fired = np.zeros(n_act, dtype=np.int64)
        reached = np.zeros(n_act, dtype=np.int64)
        counted: set[tuple[int, int]] = set()  # (partition, tag): a retried task counts once
        inv_min: dict[int, int] = {}
        dead_min: int | None = None
        prop_min: dict[int, tuple[int, int, int]] = {}
        for r in rows:
            fp, tag, pk, act = int(r["fp"]), int(r["tag"]), int(r["pk"]), int(r["act"])
            kind, aux = tag >> KIND_SHIFT, tag & AUX_MASK
            if kind in (FIRED, NEWACT):
                if (fp, tag) in counted:
                    continue
                counted.add((fp, tag))
                (fired if kind == FIRED else reached)[aux] += pk
            elif kind == INV:
                inv_min[aux] = min(inv_min.get(aux, _u64(fp)), _u64(fp))
            elif kind == DEAD:
                dead_min = _u64(fp) if dead_min is None else min(dead_min, _u64(fp))
            elif kind == PROP:
                hit = (_u64(fp), _u64(pk ^ SIGN), act)
                if aux not in prop_min or hit < prop_min[aux]:
                    prop_min[aux] = hit
        return _Summary(n_new, fired, reached, inv_min, dead_min, prop_min)

    def _reached(self, depth: int) -> np.ndarray:
        """States of level ``depth`` per action that reached them (for coverage)."""
        out = np.zeros(len(self.kernel.actions), dtype=np.int64)
        for r in self._level_df(depth).groupBy("act").count().collect():
            if int(r["act"]) >= 0:
                out[int(r["act"])] += int(r["count"])
        return out

    # ------------------------------------------------------------ violations
    def _path(self, depth: int, fp: int) -> list[int]:
        """Fingerprints from an initial state to state ``fp`` of level ``depth``."""
        out = [fp]
        cur = fp
        for d in range(depth, 0, -1):
            rows = self._level_df(d, ["parent"], f"fp = {_s64(cur)}").collect()
            if not rows:  # pragma: no cover - would be an engine bug
                raise SparkBackendError(f"trace rebuild: {cur:#x} is not in level {d}")
            cur = _u64(int(rows[0][0]))
            out.append(cur)
        out.reverse()
        return out

    def _invariant_violation(self, depth: int, inv_min: dict[int, int]) -> Violation:
        return invariant_violation(self.kernel, inv_min, functools.partial(self._path, depth))

    def _deadlock_violation(self, depth: int, fp: int) -> Violation:
        return deadlock_violation(self.kernel, fp, functools.partial(self._path, depth))

    def _property_violation(self, depth: int,
                            prop_min: dict[int, tuple[int, int, int]]) -> Violation:
        return property_violation(self.kernel, prop_min, functools.partial(self._path, depth))

    def _replay_level(self, depth: int, can_expand: bool,
                      err: SpecEvaluationError) -> dict[int, int]:
        """A spec error on an executor: replay the level on the driver, as the local explorer.

        The local explorer evaluates the level in batches of states sorted by
        fingerprint and stops expanding after the first invariant violation, so the
        error it reports (or the violation that pre-empts it) depends on that order.
        The frontier is streamed here in that order; the same error is raised, or the
        invariant hits are returned when the local explorer would have reported those.
        """
        from pyspark.sql import functions as F

        k = self.kernel
        layout = self.layout
        words = self._word_cols()
        front = (self._level_df(depth)
                 .select("fp", *words, F.col("fp").bitwiseXOR(F.lit(SIGN)).alias("fu"))
                 .orderBy("fu"))
        batch_size = 1 << 16  # modelcheck.explorer.Explorer's default batch size
        inv_hits: list[tuple[int, int]] = []
        buf: list[Any] = []

        def process(rows: list[Any]) -> None:
            if layout.exact:
                w = np.array([r[0] for r in rows], dtype=np.int64).view(_U).reshape(-1, 1)
            else:
                w = np.array([[r[1 + i] for i in range(layout.n_words)] for r in rows],
                             dtype=np.int64).view(_U)
            fps = np.array([r[0] for r in rows], dtype=np.int64).view(_U)
            ex = k.expand(w, expand=can_expand and not inv_hits)
            for j, bad in enumerate(ex.invariant_rows):
                for r in bad:
                    inv_hits.append((int(fps[r]), j))

        for row in front.toLocalIterator():
            buf.append(row)
            if len(buf) == batch_size:
                process(buf)
                buf = []
        if buf:
            process(buf)
        if not inv_hits:
            raise err
        out: dict[int, int] = {}
        for fp, j in inv_hits:
            out[j] = min(out.get(j, fp), fp)
        return out

    # ------------------------------------------------------------ helpers
    def _commit(self, ident: dict[str, Any], depth: int, generated: int, fired: np.ndarray,
                new_by_action: np.ndarray, counted: int, res: Result, t0: float,
                prior: float) -> None:
        """Record level ``depth`` as committed (its run is complete), then drop old runs."""
        if self.rundir.temporary:
            for lo, hi in self._obsolete:
                self.rundir.remove_run(lo, hi)
            self._obsolete = []
            return
        self.rundir.write_manifest({
            "spec": ident,
            "engine": "dataframe",
            "partitions": self.P,
            "level": depth,
            "level_sizes": self._sizes[:depth + 1],
            "runs": [[r.lo, r.hi] for r in self._runs],
            "distinct": sum(self._sizes[:depth + 1]),
            "generated": generated,
            "fired": [int(x) for x in fired],
            "new_by_action": [int(x) for x in new_by_action],
            "coverage_levels": counted,
            "stats": [[lv.depth, lv.frontier, lv.new, lv.generated, lv.seconds]
                      for lv in res.levels],
            "coverage": [{"action": c.name, "fired": c.fired, "new_states": c.new_states}
                         for c in coverage_table(self.kernel.actions, fired, new_by_action)],
            "seconds": time.perf_counter() - t0 + prior,
        })
        for lo, hi in self._obsolete:
            self.rundir.remove_run(lo, hi)
        self._obsolete = []

    def _call(self, depth: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` (Spark work on level ``depth``), with Spark's exceptions translated."""
        try:
            return fn(*args)
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - py4j / pyspark raise many types
            raise self._translate(e, depth) from None

    def _translate(self, e: BaseException, depth: int) -> BaseException:
        text = _exception_text(e)
        if "No space left on device" in text:
            done = depth - self.level_offset
            kept = ("no level is committed yet" if done < 0 else
                    f"levels 0..{done} are committed"
                    + ("" if self.rundir.temporary else " and stay usable with --resume once "
                       "space is freed"))
            return CheckpointError(
                f"the run directory {self.rundir.path} is full (No space left on device) while "
                f"writing level {done + 1}; {kept}."
            )
        payload = decode_error(text)
        if payload is not None:
            message = driver_paths(str(payload.get("message")))
            if payload.get("type") == "SpecEvaluationError":
                where = payload.get("where")
                return SpecEvaluationError(message, where=where and driver_paths(where),
                                           what=payload.get("what"),
                                           state=payload.get("state"))
            return SparkBackendError(
                f"expanding level {depth} failed on an executor: {message}"
            )
        if self._interrupted or ("cancelled" in text.lower() and "job" in text.lower()):
            return KeyboardInterrupt()
        return SparkBackendError(f"a Spark job failed while expanding level {depth}: "
                                 f"{_first_meaningful_line(text)}")


def _is_this_host(host: str) -> bool:
    """Whether ``host`` (an executor's) is the machine this driver runs on."""
    import socket

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


def _release(df: Any) -> None:
    """Drop the blocks of a locally checkpointed DataFrame (best effort)."""
    try:
        df._jdf.queryExecution().logical().rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - not a checkpoint, or the session is gone
        pass


def _map_in_arrow(df: Any, fn: Callable[..., Any], schema: str) -> Any:
    """``df.mapInArrow(fn, schema)``, also when pandas is not installed.

    PySpark 4 checks for pandas when it builds any Arrow UDF on the driver, although
    ``mapInArrow`` never uses pandas (the Python workers exchange Arrow batches only).
    Without pandas that check is skipped for this call alone.
    """
    try:
        import pandas  # noqa: F401
    except ImportError:
        pass
    else:
        return df.mapInArrow(fn, schema)
    import pyspark.sql.pandas.functions as pandas_functions

    name = "require_minimum_pandas_version"
    check = getattr(pandas_functions, name)
    setattr(pandas_functions, name, lambda: None)
    try:
        return df.mapInArrow(fn, schema)
    finally:
        setattr(pandas_functions, name, check)


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


def _first_meaningful_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "...", "JVM stacktrace")):
            return line[:600]
    return text[:600]
