"""A breadth-first run whose levels the level rule computes in buckets.

:class:`ShardedRun` runs the one run loop of :mod:`modelcheck.run.loop` (the local
explorer's: same counts, same stops, same violation rule, same trace) over the backend
:class:`ShardedLevels`, whose levels are a :class:`LevelEngine`'s: the bucket engine
(:class:`modelcheck.shards.engine.BucketEngine`, its tasks run by local processes for
``modelcheck check --workers N`` or by Spark executors) or Spark's RDD engine. It owns
the coordinating side of a run:

* the run directory (``--checkpoint-dir``, else a temporary one) and the manifest of
  committed levels (``--resume`` continues from it);
* which jobs count and expand a level (see :class:`ShardedLevels`);
* the trace of a violation, rebuilt from the committed levels' parent fingerprints.

Job ``d`` of the engine commits level ``d`` and expands it, so the size of level
``d + 1`` is known one job later. The decisions are the level rule's
(:mod:`modelcheck.level`): every task expands its bucket with
:class:`~modelcheck.level.LevelExpansion` and returns its
:class:`~modelcheck.level.LevelFindings`; the coordinator merges them (by minima, so
the answer is the one the local explorer gives for the whole level in fingerprint
order, whatever the number of buckets or the batch size), and the run loop applies
:meth:`~modelcheck.level.LevelFindings.verdict`. A phase-1 verdict (an invariant
violated or raising on a state of the level) stops before the next job; any other
verdict finishes the level first, counting the next level's new states with a
commit-only job.

The coordinator holds only per-level counters; never the visited set or a frontier.
What differs between the process pool and Spark (how a session starts, how an
exception of a task reads, how Ctrl-C cancels a job, the ``memory`` counters) is a
subclass's: :class:`modelcheck.shards.pool.ParallelExplorer`,
``spark_explore.driver.SparkExplorer``.
"""

from __future__ import annotations

import functools
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..checkpoint import Final, Snapshot
from ..checkpoint import manifest as new_manifest
from ..config import CheckConfig
from ..errors import ModelcheckError, SpecEvaluationError, UsageError
from ..explorer import build_kernel
from ..interrupt import Interrupts
from ..level import LevelFindings, Verdict, VerdictKind, initial_states, report
from ..library import Library
from ..library import lookup as library_lookup
from ..result import Result, Violation
from ..run.loop import Begin, Pulse, RunLoop, Successors
from ..run.progress import Progress
from ..run.results import new_result
from ..run.rules import can_expand
from ..spec import Spec
from .engine import LevelSummary
from .rundir import CheckpointError, RunDir, spec_identity
from .worker import WorkerConfig, temporal_labels

__all__ = ["ShardedRun", "ShardedLevels", "LevelEngine", "DRIVER_THRESHOLD",
           "resolve_driver_threshold", "spec_name"]

#: levels with at most this many candidate states run in the coordinating process. A
#: level costs it n/r (r ~ 2M states/s) and a job f + n/(P r) (f ~ 0.1 s a Spark job,
#: P worker cores): equal at n = f r P/(P - 1), ~300,000 on 2 cores (measured on L5)
DRIVER_THRESHOLD = 300_000
#: the environment variable overriding :data:`DRIVER_THRESHOLD`
DRIVER_THRESHOLD_ENV = "MODELCHECK_SPARK_DRIVER_THRESHOLD"


def resolve_driver_threshold(value: int | None, default: int = DRIVER_THRESHOLD) -> int:
    """``value``, else the environment's ``MODELCHECK_SPARK_DRIVER_THRESHOLD``, else
    ``default``."""
    if value is None:
        raw = os.environ.get(DRIVER_THRESHOLD_ENV, "").strip()
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise UsageError(f"{DRIVER_THRESHOLD_ENV}={raw!r}: expected a whole number of "
                             "states (0: every level on the executors).") from None
    if value < 0:
        raise UsageError(f"the driver threshold must be >= 0, not {value}.")
    return int(value)


def spec_name(cls: type) -> str:
    """The loader target naming spec class ``cls`` (``module:Class``), as recorded in a
    checkpoint's identity."""
    return f"{cls.__module__}:{cls.__qualname__}"


class LevelEngine(Protocol):
    """What a sharded run needs from an engine. Its workers' exceptions pass through;
    the run translates them (:meth:`ShardedRun._translate`)."""

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
        """CPU seconds the levels' tasks took, on the workers and in this process
        (``driver``)."""

    @property
    def jobs(self) -> dict[str, int]:
        """Levels run on the workers and in this process (``driver``)."""

    #: wall seconds of the levels waiting for the workers' jobs (``jobs``) and in this
    #: process around them (``driver``); engines that do not time them keep zeros
    level_wall: dict[str, float]


class ShardedRun:
    """The coordinating side of a sharded breadth-first run of a bound spec (see the
    module docstring).

    ``config`` says what to check and how (:class:`~modelcheck.config.CheckConfig`, as
    for :class:`modelcheck.explorer.Explorer`; its ``batch_size`` is the states per
    expansion batch inside a task, ``checkpoint_dir``/``resume`` the run directory).
    ``notice`` receives one-line messages about the run that are not part of the result
    (``--resume`` on a directory without a checkpoint starts afresh). ``library`` looks
    up the predicates the spec does not declare, here and in every worker. Subclasses set
    :attr:`engine` in their ``run`` and call :meth:`_explore`.
    """

    #: the result's ``backend``
    backend = "sharded"
    #: the engines whose checkpoints this run resumes
    engines: tuple[str, ...] = ("shards",)

    def __init__(self, spec: Spec, cfg: CheckConfig, *, library: Library | None,
                 progress: Callable[[Progress], None] | None,
                 notice: Callable[[str], None] | None, driver_threshold: int,
                 temporal: tuple[str, ...] = ()) -> None:
        if cfg.spill_dir is not None:
            raise UsageError("--spill-dir is an option of the one-process explorer: a "
                             "sharded run keeps its levels in the run directory "
                             "(--checkpoint-dir).")
        if cfg.resume and cfg.checkpoint_dir is None:
            raise UsageError("--resume needs --checkpoint-dir: the directory of the run to "
                             "continue.")
        self.config = cfg
        self.notice = notice
        self.library = library
        self.spec = spec
        #: temporal properties whose state graph the tasks write (by name)
        self.temporal = temporal
        self.kernel = build_kernel(spec, cfg, library,
                                   labels=temporal_labels(spec, temporal, library))
        #: called with the result of a complete run (status ``ok``) while the run
        #: directory still holds its files (the state graph, for temporal properties);
        #: returns the run's result (with the temporal properties decided)
        self.after: Callable[[Result], Result] | None = None
        #: called with ``depth`` once a job has committed levels ``0..depth`` (the
        #: state graph's reader goes on with them while the run does)
        self.on_commit: Callable[[int], None] | None = None
        self.layout = spec.layout
        self.progress = progress
        self.driver_threshold = driver_threshold
        self.engine: LevelEngine
        self.rundir: RunDir
        self._stop = Interrupts()

    # ------------------------------------------------------------ the run directory
    def _prepare_local(self, ident: dict[str, Any], prefix: str, path: str | None
                       ) -> tuple[RunDir, dict[str, Any] | None]:
        """The run directory (``path``: ``--checkpoint-dir`` as a local path, or a
        temporary one named ``prefix...``) and, with ``--resume``, the manifest of its
        checkpoint (None: a fresh run)."""
        cfg = self.config
        if path is None:
            return RunDir(Path(tempfile.mkdtemp(prefix=prefix)), temporary=True), None
        rundir = RunDir.prepare(path, resume=cfg.resume)
        if cfg.resume and rundir.has_checkpoint:
            return rundir, self._resumable(rundir, ident)
        if cfg.resume:
            self._notice(f"--resume: no checkpoint in {cfg.checkpoint_dir}; starting afresh.")
        return rundir, None

    def _resumable(self, rundir: RunDir, ident: dict[str, Any]) -> dict[str, Any]:
        """The manifest of the checkpoint to resume (checked against this run)."""
        manifest = rundir.read_manifest()
        rundir.check_compatible(manifest, ident)
        if manifest["engine"] not in self.engines:
            raise CheckpointError(
                f"the checkpoint in {rundir.where} was written by the "
                f"{manifest['engine']} engine, which this run cannot continue "
                f"(it continues {', '.join(self.engines)}); resume it with the command "
                "that wrote it, or start a new run in another --checkpoint-dir."
            )
        return manifest

    @staticmethod
    def _resume_point(manifest: dict[str, Any]) -> tuple[int, int]:
        """``(level, distinct states)`` where a run resuming ``manifest`` continues."""
        return int(manifest["level"]), sum(int(lv["states"]) for lv in manifest["levels"])

    def _identity(self, target: str) -> dict[str, Any]:
        return spec_identity(self.kernel, target)

    def _notice(self, message: str) -> None:
        """Tell the user something about the run that is not a result (``notice``)."""
        if self.notice is not None:
            self.notice(message)

    def worker_config(self, target: str) -> WorkerConfig:
        """What a worker needs to rebuild this run's kernel."""
        cfg = self.config
        return WorkerConfig(target=target, constants=tuple(self.spec.constants.items()),
                            invariants=cfg.invariants, check_deadlock=cfg.check_deadlock,
                            symmetry=cfg.symmetry, view=cfg.view,
                            n_words=self.layout.n_words, batch_size=cfg.batch_size,
                            library=None if self.library is library_lookup else self.library,
                            key_width=self.kernel.key_width, exact=self.kernel.exact,
                            temporal=self.temporal)

    # ------------------------------------------------------------ the run
    def _explore(self, t0: float, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        res = new_result(self.kernel, self.config, backend=self.backend)
        return RunLoop(ShardedLevels(self, ident, manifest), self.kernel, self.config, res,
                       self._stop, progress=self.progress, t0=t0).run()

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
        if self.on_commit is not None:
            self.on_commit(depth)
        return lv

    def _report(self, depth: int, verdict: Verdict) -> Violation:
        """The violation ``verdict`` reports (a spec error raises, as locally, naming the
        spec's file as this process knows it)."""
        if verdict.kind is VerdictKind.ERROR and verdict.error is not None:
            e = verdict.error
            raise SpecEvaluationError(self._local_paths(e.message),
                                      where=e.where and self._local_paths(e.where),
                                      what=e.what, state=e.state)
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
                raise ModelcheckError(f"trace rebuild: {cur:#x} is not in level {d}")
            cur = parent
            out.append(cur)
        out.reverse()
        return out

    # ------------------------------------------------------------ subclasses
    def _local_paths(self, text: str) -> str:
        """``text`` (a worker's message) with the paths of files as this process knows
        them (workers may run a shipped copy of the spec)."""
        return text

    def _cancel(self) -> None:
        """Ctrl-C: stop what the workers still run."""

    def _memory(self) -> dict[str, int]:
        """The backend's own counters in the result's ``memory`` section."""
        return {}

    # ------------------------------------------------------------ errors
    @property
    def _interrupted(self) -> bool:
        return self._stop.requested

    @_interrupted.setter
    def _interrupted(self, value: bool) -> None:
        self._stop.requested = value

    def _call(self, depth: int, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` (work of job ``depth``), with the workers' exceptions translated."""
        try:
            return fn(*args)
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - workers' failures come in many types
            raise self._translate(e, depth) from None

    def _translate(self, e: BaseException, depth: int) -> BaseException:
        """What to raise for exception ``e`` of job ``depth``: a full run directory is
        one paragraph, the rest is the subclass's (:meth:`_job_error`)."""
        if "No space left on device" in self._error_text(e):
            done = depth - 1  # job ``depth`` writes level ``depth``
            kept = ("no level is committed yet" if done < 0 else
                    f"levels 0..{done} are committed"
                    + ("" if self.rundir.temporary else " and stay usable with --resume once "
                       "space is freed"))
            return CheckpointError(
                f"the run directory {self.rundir.where} is full (No space left on device) while "
                f"writing level {done + 1}; {kept}."
            )
        return self._job_error(e, depth)

    def _error_text(self, e: BaseException) -> str:
        """The whole text of a worker's exception ``e``."""
        return str(e)

    def _job_error(self, e: BaseException, depth: int) -> BaseException:
        """What to raise for exception ``e`` of a task of job ``depth``."""
        return e


class ShardedLevels:
    """The sharded backend of the run loop (:class:`~modelcheck.run.loop.Backend`): the
    levels are the engine's (:class:`LevelEngine`), the checkpoint is the run
    directory's manifest. Job ``d`` of the engine commits level ``d`` and expands it, so
    the loop's "count level ``d + 1``" runs job ``d + 1``, which also expands that level
    when the loop will (without expanding when ``--max-states`` may stop the run first:
    then it counts, and expands again only if the level fits)."""

    def __init__(self, ex: ShardedRun, ident: dict[str, Any],
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
        ex._call(0, ex.engine.start, self.fps, None if ex.kernel.exact else self.words)
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
        pass  # the workers' memory is theirs (or Spark's) to bound

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
        self.ex._cancel()

    def memory(self) -> dict[str, int]:
        engine = self.ex.engine
        return {
            "driver_peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "run_dir_bytes": engine.bytes_on_disk(),
            "partitions": engine.buckets,
            **self.ex._memory(),
        }
