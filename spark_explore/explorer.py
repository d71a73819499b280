"""The driver side of a Spark run, shared by the explorer classes.

:class:`SparkExplorer` follows :meth:`modelcheck.explorer.Explorer.run` step for
step (same counts, same parent rule, same violation rule, same trace): it prepares
the run directory, starts or reuses the Spark session, ships the spec, cancels the
running job on Ctrl-C, translates Spark's exceptions, applies the end-of-level rule
and fills in the result. The level loop itself is
:class:`spark_explore.shard_explorer.ShardExplorer`'s.

The driver holds only per-level counters; never the visited set or a frontier.
"""

from __future__ import annotations

import contextlib
import functools
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from modelcheck.result import Result, Violation
from modelcheck.spec import Spec

from .checkpoint import CheckpointError, RunDir, spec_identity
from .session import SparkBackendError, driver_paths, get_session, ship_spec, spec_target
from .worker import WorkerConfig, decode_error

__all__ = ["SparkExplorer", "LevelProgress"]


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


class SparkExplorer:
    """What every Spark exploration shares (see the module docstring).

    ``spark`` may be an existing ``SparkSession`` (else the active one is used, or one
    is started for ``master`` with ``spark_conf``). ``spec_target`` overrides the
    loader target executors use to import the spec (by default derived from the spec's
    class).
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
        #: seconds spent per phase of the level jobs
        self.timings: dict[str, float] = {}
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
                shipped = ship_spec(spark, type(self.spec))
                target = shipped.target
            if manifest is not None:
                p = int(manifest["partitions"])
            elif self.partitions:
                p = int(self.partitions)
            else:
                p = self._default_partitions(int(spark.sparkContext.defaultParallelism))
            self.P = p
            self._check_run_dir(spark)
            with self._cancel_on_sigint(spark):
                res = self._explore(t0, target, ident, manifest)
        finally:
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
        raise NotImplementedError

    def _check_run_dir(self, spark: Any) -> None:
        """Fail if executors cannot reach the run directory."""

    def _explore(self, t0: float, target: str, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        raise NotImplementedError

    def _path(self, depth: int, fp: int) -> list[int]:
        """Fingerprints from an initial state to state ``fp`` of level ``depth``."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared
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

    def _invariant_violation(self, depth: int, inv_min: dict[int, int]) -> Violation:
        return invariant_violation(self.kernel, inv_min, functools.partial(self._path, depth))

    def _deadlock_violation(self, depth: int, fp: int) -> Violation:
        return deadlock_violation(self.kernel, fp, functools.partial(self._path, depth))

    def _property_violation(self, depth: int,
                            prop_min: dict[int, tuple[int, int, int]]) -> Violation:
        return property_violation(self.kernel, prop_min, functools.partial(self._path, depth))

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
