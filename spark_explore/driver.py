"""The driver of a Spark exploration: what ``modelcheck spark`` calls.

:class:`SparkExplorer` follows :meth:`modelcheck.explorer.Explorer.run` step for
step (same counts, same parent rule, same violation rule, same trace). It owns the
driver side of a run:

* the run directory (``--checkpoint-dir``, else a temporary one), checked before
  Spark starts, and the manifest of committed levels (``--resume`` continues from
  it);
* the Spark session (reused, or started and, with ``stop_session``, stopped) and
  shipping the spec's code to executors;
* Ctrl-C: the running job is cancelled from another thread and the run ends with
  the levels finished so far;
* translating Spark's exceptions (a spec error on an executor reads as locally, a
  full run directory is one paragraph);
* the level loop and its decisions (see below).

The levels themselves are computed by an engine behind :class:`LevelEngine`: today
:class:`spark_explore.shard_engine.ShardEngine`. Job ``d`` of the engine commits
level ``d`` and expands it, so the size of level ``d + 1`` is known one job later.

The level decisions follow the local explorer's rules and live in one section of
:class:`SparkExplorer` (``level decisions`` below): an invariant violation stops at
the level where it is found (its successors are not counted); a deadlock or an
action property violation finishes the level, counting the next level's new states
(a commit-only job); the smallest fingerprint wins, invariants before deadlocks
before action properties; a spec error is reported as the local explorer would
report it (the driver replays the level in fingerprint order, batch by batch).

The driver holds only per-level counters; never the visited set or a frontier.
"""

from __future__ import annotations

import contextlib
import functools
import resource
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from modelcheck.errors import ModelcheckError, SpecEvaluationError, UsageError
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
from .session import SparkBackendError, driver_paths, get_session, ship_spec, spec_target
from .shard_engine import LevelSummary, ShardEngine
from .worker import WorkerConfig, decode_error

__all__ = ["SparkExplorer", "LevelProgress", "LevelEngine"]


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

    def bytes_on_disk(self) -> int:
        """Bytes of the engine's files in the run directory."""


class SparkExplorer:
    """Breadth-first exhaustive exploration of a bound spec on Spark.

    ``spark`` may be an existing ``SparkSession``; else the active one is used, or one
    is started for ``master`` (``None``: the one given to ``spark-submit``) with
    ``spark_conf``, and stopped after the run if ``stop_session``. ``partitions`` is
    the number of buckets (default: the cores Spark offers). The run directory
    (``checkpoint_dir``, else a temporary directory) must be reachable from every
    executor and the driver at the same path. ``spec_target`` overrides the loader
    target executors use to import the spec (by default derived from the spec's
    class).
    """

    def __init__(
        self,
        spec: Spec,
        *,
        invariants: Sequence[str] | None = None,
        check_deadlock: bool | None = None,
        symmetry: bool = True,
        max_depth: int | None = None,
        master: str | None = "local[*]",
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
            raise UsageError("--resume needs --checkpoint-dir: the directory of the run to "
                             "continue.")
        self.spark_conf = dict(spark_conf or {})
        self.progress = progress
        self.spark = spark
        self.spec_target = spec_target
        self.connect_timeout = connect_timeout
        self.stop_session = stop_session
        self.chunk = chunk
        self.engine: LevelEngine
        self._sizes: list[int] = []
        self._interrupted = False
        self._prechecked: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None

    # ------------------------------------------------------------------ run
    def precheck(self) -> None:
        """Check what can be checked before Spark starts: the spec can be shipped, and the
        checkpoint directory is usable (and, with ``resume``, belongs to this spec and
        engine)."""
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
                if manifest.get("engine") != ShardEngine.name:
                    raise CheckpointError(
                        f"the checkpoint in {rundir.path} was written by the "
                        f"{manifest.get('engine', 'dataframe')} engine, which this version "
                        "no longer has; start a new run in another --checkpoint-dir."
                    )
        else:
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
        self._sizes = []
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
                target = ship_spec(spark, type(self.spec)).target
            if manifest is not None:
                buckets = int(manifest["partitions"])
            elif self.partitions:
                buckets = int(self.partitions)
            else:
                buckets = ShardEngine.default_buckets(
                    int(spark.sparkContext.defaultParallelism))
            self.engine = ShardEngine(spark, rundir, buckets, self._worker_config(target),
                                      len(self.kernel.actions))
            with self._cancel_on_sigint(spark):
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
        return WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                            invariants=self.invariant_names,
                            check_deadlock=self.check_deadlock, symmetry=self.symmetry,
                            n_words=self.layout.n_words, chunk=self.chunk)

    # ------------------------------------------------------------ the loop
    def _explore(self, t0: float, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        n_act = len(self.kernel.actions)
        res = self._new_result()
        fired = np.zeros(n_act, dtype=np.int64)
        new_by_action = np.zeros(n_act, dtype=np.int64)
        generated = 0
        prior = 0.0
        violation: Violation | None = None
        if manifest is not None:
            depth = int(manifest["level"])
            self._sizes = [int(x) for x in manifest["level_sizes"]]
            generated = int(manifest["generated"])
            fired[:] = manifest["fired"]
            new_by_action[:] = manifest["new_by_action"]
            res.levels = [LevelStats(*row) for row in manifest["stats"]]
            prior = float(manifest.get("seconds", 0.0))
            pending = LevelSummary.from_json(manifest["pending"])
            self.engine.tidy(depth)
            if pending.expand is not self._can_expand(depth):
                # Interrupted with another --max-depth: expand the level as this run wants.
                pending = self._job(depth, self._can_expand(depth), again=True)
                pending.new = self._sizes[depth]
        else:
            depth = 0
            init_words, init_fps = self.kernel.initial_words()
            fps, _, rows = dedupe_min(init_fps, np.zeros(len(init_fps), dtype=np.int64))
            self._call(0, self.engine.start, fps,
                       None if self.layout.exact else init_words[rows])
            pending = self._job(0, self._can_expand(0))
            self._sizes = [pending.new]
            self._commit_level(ident, 0, pending, generated, fired, new_by_action, res, t0,
                               prior)
        try:
            while True:
                self._check_interrupt()
                lt = time.perf_counter()
                cur = pending
                n = self._sizes[depth]
                can_expand = self._can_expand(depth)
                if cur.inv_min:
                    violation = self._call(depth, self._invariant_violation, depth,
                                           cur.inv_min)
                    res.status = "violation"
                    break
                level_fired = int(cur.fired.sum())
                generated += level_fired
                fired += cur.fired
                stopping = cur.dead_min is not None or bool(cur.prop_min)
                nxt: LevelSummary | None = None
                if cur.candidates == 0:
                    n_new = 0
                elif stopping:  # count the next level's states, expand nothing
                    nxt = self._job(depth + 1, None)
                    n_new = nxt.new
                else:
                    nxt = self._job(depth + 1, self._can_expand(depth + 1))
                    n_new = nxt.new
                seconds = cur.seconds + (nxt.seconds if nxt is not None else 0.0)
                res.levels.append(LevelStats(depth, n, n_new, level_fired, seconds))
                if n_new:
                    assert nxt is not None
                    self._sizes.append(n_new)
                    new_by_action += nxt.reached
                stop, violation = self._level_end(res, depth, n, n_new, level_fired,
                                                  cur.dead_min, cur.prop_min, can_expand, lt,
                                                  t0 - prior)
                if stop:
                    break
                assert nxt is not None
                depth += 1
                pending = nxt
                self._commit_level(ident, depth, pending, generated, fired, new_by_action,
                                   res, t0, prior)
        except KeyboardInterrupt:
            self._stop_interrupted(res)
        self._complete(res, violation, generated, fired, new_by_action, t0 - prior)
        return res

    def _can_expand(self, depth: int) -> bool:
        return self.max_depth is None or depth < self.max_depth

    def _job(self, depth: int, expand: bool | None, again: bool = False) -> LevelSummary:
        """The engine's job ``depth``; on a spec error, what the local explorer reports."""
        t = time.perf_counter()
        try:
            lv = self._call(depth, self.engine.run_level, depth, expand, again)
        except SpecEvaluationError as err:
            # Commit the level alone (no spec code runs), then replay it in the local
            # explorer's order: the same error, or the invariant violation before it.
            lv = self._call(depth, self.engine.run_level, depth, None, again)
            lv.inv_min = self._call(depth, self._replay_level, depth, bool(expand), err)
        lv.seconds = time.perf_counter() - t
        return lv

    # ------------------------------------------------------------ level decisions
    # The local explorer's rules, applied to what the engine found. This section is
    # the seam where a rule shared with modelcheck.explorer takes over.
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

    def _invariant_violation(self, depth: int, inv_min: dict[int, int]) -> Violation:
        return invariant_violation(self.kernel, inv_min, functools.partial(self._path, depth))

    def _deadlock_violation(self, depth: int, fp: int) -> Violation:
        return deadlock_violation(self.kernel, fp, functools.partial(self._path, depth))

    def _property_violation(self, depth: int,
                            prop_min: dict[int, tuple[int, int, int]]) -> Violation:
        return property_violation(self.kernel, prop_min, functools.partial(self._path, depth))

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

    def _replay_level(self, depth: int, can_expand: bool,
                      err: SpecEvaluationError) -> dict[int, int]:
        """Expand level ``depth`` on the driver (batches of states in fingerprint order,
        no expansion after an invariant violation): raise ``err`` again, or return the
        invariant hits that pre-empt it."""
        k = self.kernel
        fps, words = self.engine.level_states(depth)
        # Batches only bound memory: every state's invariants are checked whatever
        # their size, so the hits returned do not depend on it.
        batch_size = 1 << 16
        inv_hits: list[tuple[int, int]] = []
        for s in range(0, len(fps), batch_size):
            ex = k.expand(words[s:s + batch_size], expand=can_expand and not inv_hits)
            for j, bad in enumerate(ex.invariant_rows):
                for r in bad:
                    inv_hits.append((int(fps[s + r]), j))
        if not inv_hits:
            raise err
        out: dict[int, int] = {}
        for fp, j in inv_hits:
            out[j] = min(out.get(j, fp), fp)
        return out

    # ------------------------------------------------------------ commits
    def _commit_level(self, ident: dict[str, Any], depth: int, pending: LevelSummary,
                      generated: int, fired: np.ndarray, new_by_action: np.ndarray,
                      res: Result, t0: float, prior: float) -> None:
        """Record job ``depth`` as committed (manifest), then let the engine delete the
        files no longer needed."""
        if not self.rundir.temporary:
            self.rundir.write_manifest({
                "spec": ident,
                "engine": self.engine.name,
                "partitions": self.engine.buckets,
                "level": depth,
                "level_sizes": self._sizes[:depth + 1],
                "distinct": sum(self._sizes[:depth + 1]),
                "generated": generated,
                "fired": [int(x) for x in fired],
                "new_by_action": [int(x) for x in new_by_action],
                "pending": pending.to_json(),
                "stats": [[lv.depth, lv.frontier, lv.new, lv.generated, lv.seconds]
                          for lv in res.levels],
                "coverage": [{"action": c.name, "fired": c.fired, "new_states": c.new_states}
                             for c in coverage_table(self.kernel.actions, fired,
                                                     new_by_action)],
                "seconds": time.perf_counter() - t0 + prior,
            })
        self.engine.tidy(depth)

    # ------------------------------------------------------------ result
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

    def _complete(self, res: Result, violation: Violation | None, generated: int,
                  fired: np.ndarray, new_by_action: np.ndarray, start: float) -> None:
        """Fill in the totals of a finished (or stopped) run."""
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
            "run_dir_bytes": self.engine.bytes_on_disk(),
            "partitions": self.engine.buckets,
        }

    # ------------------------------------------------------------ interrupts
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

    def _stop_interrupted(self, res: Result) -> None:
        """Ctrl-C: cancel what still runs; the run ends with the levels finished so far."""
        self._interrupted = True
        try:
            self.spark.sparkContext.cancelAllJobs()
        except Exception:  # noqa: BLE001
            pass
        res.status = "incomplete"
        res.reason = "interrupted"

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
