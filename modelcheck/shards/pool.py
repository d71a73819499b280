"""``modelcheck check --workers N``: a sharded run whose tasks run in local processes.

:class:`ParallelExplorer` is a :class:`~modelcheck.shards.backend.ShardedRun` (the one
run loop, the run directory's manifest, the trace rebuild) over a
:class:`PoolEngine`: the bucket engine of :mod:`modelcheck.shards.engine` (the same
files and tasks the Spark shard engine runs) whose job of a level is its ``K`` bucket
tasks handed to ``N`` worker processes (:class:`WorkerPool`). No Java, no Spark.

The results are the one-process explorer's, field by field, whatever ``N`` and ``K``:
each task de-duplicates the transitions into its bucket with the explorer's parent
rule (the smallest parent fingerprint, then the smallest action id), and the level's
findings are merged by minima (:class:`~modelcheck.level.LevelFindings`), which is the
answer the one-process explorer gives for the whole level in fingerprint order.

**Workers** are forked from this process once the kernel is built, so they share its
spec, its compiled actions and its kernel (:func:`modelcheck.shards.worker.seed_kernel`)
without pickling or importing anything: a spec class made at run time (in a test, a
notebook) works as well as one in a module. Where ``fork`` is not available they are
spawned and load the spec by its ``module:Class`` name. A worker receives the number
of a bucket and the job's mode over a pipe, runs the task and sends back its small
summary; everything else goes through the run directory's files. Workers ignore
Ctrl-C: the first Ctrl-C is recorded (:class:`~modelcheck.interrupt.Interrupts`), the
running job's workers are stopped at once and the run ends at the last complete level
(status ``incomplete``, reason ``interrupted``; with ``--checkpoint-dir`` it resumes
from there). A worker that dies (killed, out of memory) ends the run with one
paragraph saying which level and how; the committed levels stay usable with
``--resume``. Workers end with the run, and on Linux also when this process is killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.connection
import signal
import time
from collections.abc import Callable
from typing import Any

from ..budget import StopRun, format_size
from ..config import CheckConfig, parse_workers
from ..errors import ModelcheckError, SpecEvaluationError, UsageError
from ..interrupt import Interrupts
from ..library import Library
from ..library import lookup as library_lookup
from ..result import Result, Status
from ..run.progress import Progress
from ..spec import Spec
from . import files
from .backend import ShardedRun, spec_name
from .engine import BucketEngine, Job, RangeJob
from .files import BucketSummary, ShardConfig
from .rundir import CheckpointError, RunDir
from .worker import WorkerConfig, decode_error

__all__ = ["ParallelExplorer", "PoolEngine", "WorkerPool", "WorkerError",
           "POOL_DRIVER_THRESHOLD"]

#: levels with at most this many candidate transitions run in the coordinating process:
#: a job of the pool costs a few milliseconds (f), so the break-even n = f r P/(P - 1)
#: (r ~ 2M states/s, P workers) is ~20,000 on 2 workers
POOL_DRIVER_THRESHOLD = 20_000
#: how often (seconds) a waiting coordinator looks at Ctrl-C
_POLL = 0.1
#: the first item of a worker's message that a batch of its task raised a spec error
#: (the task goes on, locating the first raising state; see :meth:`WorkerPool.run`)
_NOTICE = "spec-error"


class WorkerError(ModelcheckError):
    """A worker process of ``--workers N`` failed outside the spec (killed, out of
    memory, a bug)."""


# ---------------------------------------------------------------- the worker processes
def _die_with_parent() -> None:
    """Linux: have the kernel kill this process when its parent dies."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)


def _serve(conn: Any, cfg: ShardConfig, others: list[Any]) -> None:
    """A worker's loop: run the bucket tasks the coordinator sends, until it closes the
    pipe. A task's failure is sent back as the text of its encoded error."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    for c in others:  # the pipes of the other workers, inherited by fork
        with contextlib.suppress(OSError):
            c.close()
    from ..memtune import keep_freed_memory

    keep_freed_memory()

    def notice(e: SpecEvaluationError) -> None:
        with contextlib.suppress(OSError, ValueError):
            conn.send((_NOTICE, {"message": str(e), "where": e.where, "what": e.what}))

    files.SPEC_ERROR_NOTICE = notice
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        job, bucket = msg
        try:
            out = job.run(cfg, bucket)
        except Exception as e:  # noqa: BLE001 - encoded by run_bucket; sent as text
            conn.send((False, str(e)))
        else:
            conn.send((True, out))


def _interrupted_error(payload: dict[str, Any]) -> SpecEvaluationError:
    """The spec error a worker met, for a run stopped while it located its state."""
    message = str(payload["message"]).rstrip(".")
    return SpecEvaluationError(
        f"{message}. (Interrupted while a worker located the first state of its batch "
        "that raises, in fingerprint order: this is the error the batch raised, not "
        "isolated; an earlier state of the level may raise too.)",
        where=payload.get("where"), what=payload.get("what"))


class WorkerPool:
    """``n`` worker processes serving the bucket tasks of ``cfg`` (see the module
    docstring); ``stop`` is the run's Ctrl-C record, looked at while a job runs."""

    def __init__(self, n: int, cfg: ShardConfig, stop: Interrupts) -> None:
        methods = multiprocessing.get_all_start_methods()
        self.method = "fork" if "fork" in methods else "spawn"
        ctx: Any = multiprocessing.get_context(self.method)
        self.stop = stop
        self.procs: list[Any] = []
        self.conns: list[Any] = []
        try:
            for i in range(n):
                mine, theirs = ctx.Pipe()
                # a forked worker closes the coordinator's ends it inherits
                others = [*self.conns, mine] if self.method == "fork" else []
                p = ctx.Process(target=_serve, args=(theirs, cfg, others),
                                name=f"modelcheck-worker-{i}", daemon=True)
                p.start()
                theirs.close()
                self.procs.append(p)
                self.conns.append(mine)
        except BaseException:
            self.close()
            raise

    def run(self, job: Job | RangeJob, buckets: int) -> list[BucketSummary]:
        """``job``: its ``buckets`` tasks over the workers, as each becomes free;
        their summaries by bucket. Raises :class:`~modelcheck.budget.StopRun` on Ctrl-C
        (the workers are stopped), the encoded error of a failed task (a
        ``RuntimeError``), or :class:`WorkerError` when a worker died."""
        todo = list(range(buckets))
        self.noticed: list[dict[str, Any]] = []  # spec errors the running tasks met
        idle = list(range(len(self.procs)))[::-1]
        busy: dict[int, int] = {}  # worker -> bucket
        out: dict[int, BucketSummary] = {}
        while todo or busy:
            while todo and idle:
                w = idle.pop()
                b = todo.pop(0)
                try:
                    self.conns[w].send((job, b))
                except OSError:  # the worker died between jobs
                    raise self._died(w, job.depth, b) from None
                busy[w] = b
            waiting: dict[Any, int] = {self.conns[w]: w for w in busy}
            sentinels: dict[Any, int] = {self.procs[w].sentinel: w for w in busy}
            ready: list[Any] = multiprocessing.connection.wait([*waiting, *sentinels],
                                                               timeout=_POLL)
            if self.stop.requested:
                self.close(kill=True)
                if self.noticed:  # the spec error, not the stop, ends the run
                    raise _interrupted_error(self.noticed[0])
                raise StopRun("interrupted")
            for r in ready:
                if r in waiting:
                    w = waiting[r]
                    try:
                        ok, payload = self.conns[w].recv()
                    except (EOFError, OSError):
                        continue  # the worker died: its sentinel says how
                    if ok == _NOTICE:
                        self._notice(payload)
                        continue
                    if not ok:
                        self.close(kill=True)
                        raise RuntimeError(payload)
                    summary: BucketSummary = payload
                    out[busy.pop(w)] = summary
                    idle.append(w)
            for r in ready:
                w = sentinels.get(r, -1)
                if w in busy and w not in idle:
                    raise self._died(w, job.depth, busy[w])
        return [out[b] for b in range(buckets)]

    def _notice(self, payload: dict[str, Any]) -> None:
        """A task met a spec error (and goes on to locate its first raising state)."""
        self.noticed.append(payload)

    def _died(self, w: int, depth: int, bucket: int) -> WorkerError:
        """The error for worker ``w``, found dead during job ``depth``; the others are
        stopped."""
        p = self.procs[w]
        p.join(timeout=5)
        code = p.exitcode
        self.close(kill=True)
        return WorkerError(_death(w, code, depth, bucket))

    def dismiss(self) -> None:
        """Ask the workers to stop, without waiting for them (:meth:`close` reaps them):
        a worker's exit frees its memory, which takes a while for a large model, and the
        coordinator can meanwhile do its own work (remove the run directory)."""
        for c in self.conns:
            with contextlib.suppress(OSError, ValueError):
                c.send(None)
            with contextlib.suppress(OSError):
                c.close()
        self.conns = []

    def close(self, kill: bool = False) -> None:
        """End the workers: ask them to stop (or, with ``kill``, kill them) and reap."""
        if not kill:
            self.dismiss()
        for c in self.conns:
            with contextlib.suppress(OSError):
                c.close()
        for p in self.procs:
            if kill and p.is_alive():
                p.kill()
            p.join(timeout=5)
            if p.is_alive():  # pragma: no cover - a worker stuck in a system call
                p.kill()
                p.join()
        self.procs, self.conns = [], []


def _death(worker: int, code: int | None, depth: int, bucket: int) -> str:
    how = (f"was killed by signal {-code} ({signal.Signals(-code).name})"
           if code is not None and code < 0 else f"exited with code {code}")
    hint = (" The system may have run out of memory: try fewer --workers, or a smaller "
            "model." if code == -signal.SIGKILL else "")
    return (f"worker process {worker} {how} while expanding bucket {bucket} of level "
            f"{depth}.{hint} The levels committed before stay usable with --resume when "
            "the run has a --checkpoint-dir.")


# ---------------------------------------------------------------- the engine
class PoolEngine(BucketEngine):
    """The bucket engine whose jobs run in a :class:`WorkerPool` of ``workers``
    processes, started here (after the kernel is seeded, so forked workers share it)."""

    workers = "workers"
    ranges = True

    def __init__(self, rundir: RunDir, buckets: int, worker: WorkerConfig, n_act: int, *,
                 workers: int, stop: Interrupts, driver_threshold: int = 0,
                 kernel: Any = None) -> None:
        super().__init__(rundir, buckets, worker, n_act, driver_threshold=driver_threshold,
                         kernel=kernel)
        self.pool = WorkerPool(workers, self.cfg, stop)
        self.n_workers = workers

    def run_tasks(self, job: Job | RangeJob) -> list[BucketSummary]:
        return self.pool.run(job, self.buckets)

    def dismiss(self) -> None:
        """Ask the workers to stop without waiting (:meth:`WorkerPool.dismiss`)."""
        self.pool.dismiss()

    def close(self) -> None:
        self.pool.close()


# ---------------------------------------------------------------- the run
class ParallelExplorer(ShardedRun):
    """Breadth-first exhaustive exploration of a bound spec by ``workers`` local
    processes (``modelcheck check --workers N``; see the module docstring).

    ``workers`` is a number or ``"auto"`` (default: ``config.workers``). ``config`` and
    keyword ``options`` as for :class:`modelcheck.explorer.Explorer`
    (``checkpoint_dir`` is the run directory, which ``resume`` continues; without it
    the levels live in a temporary directory removed at the end). ``buckets`` is the
    number of buckets (default: ``workers``; a resumed run keeps its checkpoint's).
    ``driver_threshold``: levels with at most this many candidate transitions run in
    this process (default ``POOL_DRIVER_THRESHOLD``, 20,000; 0: every level on the workers).
    ``temporal``: the temporal properties (names) whose state graph the tasks write
    beside the levels, for the run's ``after`` hook to read
    (:func:`modelcheck.liveness.check_liveness_workers`).
    """

    backend = "local"

    def __init__(self, spec: Spec, config: CheckConfig | None = None, *,
                 workers: int | str | None = None, buckets: int | None = None,
                 library: Library | None = library_lookup,
                 progress: Callable[[Progress], None] | None = None,
                 notice: Callable[[str], None] | None = None,
                 driver_threshold: int | None = None, temporal: tuple[str, ...] = (),
                 **options: Any) -> None:
        cfg = CheckConfig.of(config, options, "ParallelExplorer")
        if isinstance(cfg.memory_limit, int):
            raise UsageError(
                f"--memory-limit {format_size(cfg.memory_limit)} bounds the memory of the "
                "one-process explorer; with --workers the states live in the workers and the "
                "run directory's files, so bound the run with --max-states instead (it stops "
                "at the last complete level)."
            )
        threshold = POOL_DRIVER_THRESHOLD if driver_threshold is None else driver_threshold
        if threshold < 0:
            raise UsageError(f"the driver threshold must be >= 0, not {threshold}.")
        super().__init__(spec, cfg, library=library, progress=progress, notice=notice,
                         driver_threshold=threshold, temporal=temporal)
        self.n_workers = cfg.workers if workers is None else parse_workers(workers)
        if buckets is not None and buckets < 1:
            raise UsageError(f"buckets must be at least 1, not {buckets}.")
        self.buckets = buckets

    def run(self) -> Result:
        """Explore; Ctrl-C returns the levels finished so far with status ``incomplete``."""
        t0 = time.perf_counter()
        target = spec_name(type(self.spec))
        ident = self._identity(target)
        rundir, manifest = self._prepare_local(ident, "modelcheck-run-",
                                               self.config.checkpoint_dir)
        self.rundir = rundir
        if manifest is not None:
            buckets = int(manifest["engine_state"]["partitions"])
            level, states = self._resume_point(manifest)
            self._notice(f"resuming {rundir.where} at level {level} ({states:,} distinct "
                         "states)")
        else:
            buckets = self.buckets or self.n_workers
        engine: PoolEngine | None = None
        try:
            with self._stop:
                engine = PoolEngine(rundir, buckets, self.worker_config(target),
                                    len(self.kernel.actions), workers=self.n_workers,
                                    stop=self._stop, driver_threshold=self.driver_threshold,
                                    kernel=self.kernel)
                self.engine = engine
                res = self._explore(t0, ident, manifest)
            if self.after is not None and res.status is Status.OK:
                engine.close()  # the workers' memory back before the run's files are read
                res = self.after(res)
            return res
        finally:
            if engine is not None:
                engine.dismiss()  # the workers exit (free their memory) while the run
                # directory is removed, on the other cores
            rundir.cleanup()
            if engine is not None:
                engine.close()

    # ------------------------------------------------------------ the pool's side
    def _job_error(self, e: BaseException, depth: int) -> BaseException:
        payload = decode_error(str(e))
        if payload is None:
            return e
        message = str(payload.get("message"))
        if payload.get("type") == "SpecEvaluationError":
            return SpecEvaluationError(message, where=payload.get("where"),
                                       what=payload.get("what"), state=payload.get("state"))
        if payload.get("type") == "CheckpointError":
            return CheckpointError(message)
        tb = payload.get("traceback")  # only for failures outside modelcheck's errors
        return WorkerError(f"expanding level {depth} failed in a worker process: {message}"
                           + (f"\n{tb}" if tb else ""))

    def _cancel(self) -> None:
        engine = getattr(self, "engine", None)
        if isinstance(engine, PoolEngine):
            engine.pool.close(kill=True)

    def _memory(self) -> dict[str, int]:
        engine = self.engine
        assert isinstance(engine, PoolEngine)
        return {
            "workers": engine.n_workers,
            "worker_jobs": engine.jobs["workers"],
            "driver_levels": engine.jobs["driver"],
            "worker_task_cpu_ms": round(1000 * engine.task_cpu["workers"]),
            "driver_level_cpu_ms": round(1000 * engine.task_cpu["driver"]),
            "worker_wait_cpu_ms": round(1000 * engine.wait_cpu),
        }
