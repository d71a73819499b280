"""Random walks split over parallel tasks, in rounds: ``modelcheck simulate --workers N``
(:class:`ParallelSimulator`, local processes) and ``modelcheck spark --simulate`` (which
runs the rounds of :func:`run_rounds` as Spark jobs) share this schedule and its merge.

The walks are those of :class:`~modelcheck.simulate.Simulator` with the same seed: walk
``i`` draws its random numbers from ``SeedSequence([seed, i])`` whichever task runs it
(:func:`~modelcheck.simulate.walk_generator`), so the task count decides where a walk
runs, never what it does. Each task runs its walks with the engine's own
:func:`~modelcheck.simulate.run_walks`; the tallies are added up here and reported with
:meth:`~modelcheck.simulate.Simulator.result` (shrinking included).

**Rounds.** A run is a sequence of rounds of ``tasks`` tasks. Round ``r`` covers the walk
indices ``[a, b)`` following the previous round's; ``b - a = tasks * walks_per_batch *
min(2**r, 4)`` (a time-bounded run keeps doubling while a round takes less than
:data:`ROUND_SECONDS`). Task ``t`` runs walks ``a + t, a + t + tasks, ...`` below ``b``
(:meth:`WalkBlock.walks`), with the time left, and sends back its tally and the states
its walks visited. The tallies are added up, the distinct states counted, and the run
stops after a round in which a walk found a violation, once ``runs`` walks are done, when
the time is up, or at Ctrl-C.

**The same result.** The violation reported is the one of the smallest walk index ``v``.
With ``runs`` (and no time limit reached), every walk of a smaller index ran to its end
(it is in the same round or an earlier one, and a task abandons only walks after its own
violation), so the violation, its walk and the shrunk trace are those of one process with
the same seed, whatever the task count. Every count is that of walks ``0 .. v`` (or of
all the walks run), as in one process: when a task of the violating round ran walks after
``v``, the round is run again up to ``v`` (walks already run once) and counted instead; a
state's first action is that of the smallest walk that reached it (each task sends the
walk of each state it saw first; a round's states are counted in walk order). So no
figure depends on the task count or the batch size. A run stopped by time or Ctrl-C
depends on the timing, as in one process.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import pickle
import signal
import sys
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .config import CheckConfig, available_cores, parse_workers
from .errors import ModelcheckError, UsageError
from .interrupt import Interrupts
from .library import Library
from .library import lookup as library_lookup
from .loader import load_spec_class
from .result import Result
from .simulate import (
    SimConfig,
    SimProgress,
    Simulator,
    VisitedStates,
    WalkSet,
    WalkTally,
    run_walks,
)
from .spec import Spec
from .store import take_rows

__all__ = ["WalkBlock", "RoundPlan", "add_round", "run_rounds", "run_block",
           "WorkerSpec", "worker_simulator", "ParallelSimulator", "parse_workers",
           "available_cores", "process_target",
           "MAX_ROUND_BATCHES", "ROUND_SECONDS"]

#: batches of walks per task in a round, at most (a run with ``runs``)
MAX_ROUND_BATCHES = 4
#: a time-bounded run doubles its rounds while one takes less than this (seconds)
ROUND_SECONDS = 5.0


@dataclass(frozen=True)
class WalkBlock:
    """One round: the walks ``first .. end - 1`` of the seed, split over ``tasks`` tasks,
    each walk of at most ``depth`` steps, ``walks_per_batch`` advanced together, for at
    most ``time_limit`` seconds; ``record``: the tasks send their visited states back."""

    seed: int
    first: int
    end: int
    tasks: int
    depth: int
    walks_per_batch: int
    time_limit: float | None
    record: bool

    def walks(self, task: int) -> WalkSet:
        """The walks of task ``task``: ``first + task``, every ``tasks``-th, below ``end``."""
        first = self.first + task
        return WalkSet(self.seed, first, self.tasks, max(0, -(-(self.end - first) // self.tasks)))


class RoundPlan:
    """The blocks of walk indices of a run's rounds (see the module docstring)."""

    def __init__(self, runs: int | None, tasks: int, walks_per_batch: int) -> None:
        self.runs, self.tasks, self.width = runs, tasks, walks_per_batch
        self.first = 0
        self.batches = 1

    def next_block(self) -> tuple[int, int] | None:
        """The next round's walks ``[a, b)``; None when ``runs`` are done."""
        if self.runs is not None and self.first >= self.runs:
            return None
        end = self.first + self.tasks * self.width * self.batches
        if self.runs is not None:
            end = min(end, self.runs)
        return self.first, end

    def done(self, end: int, seconds: float) -> None:
        """The round up to ``end`` took ``seconds``: move on, and grow the rounds."""
        self.first = end
        if self.runs is not None:
            self.batches = min(2 * self.batches, MAX_ROUND_BATCHES)
        elif seconds < ROUND_SECONDS:
            self.batches *= 2


def add_round(tally: WalkTally, visited: VisitedStates, parts: list[WalkTally]) -> None:
    """Add a round's task tallies (in task order); its visited states in walk order (a
    state's first action is that of the smallest walk that reached it, as in one
    process)."""
    for part in parts:
        tally.add(part)
    seen = [p for p in parts if len(p.states)]  # (a part without states has 1-D ones)
    if seen:
        fps = np.concatenate([p.states for p in seen])
        acts = np.concatenate([p.reached_by for p in seen])
        walks = np.concatenate([p.reached_in for p in seen])
        order = np.argsort(walks, kind="stable")  # of a state seen twice, the first counts
        visited.see(take_rows(fps, order), acts[order])


#: runs one round: each task's ``(task, tally)``
RunRound = Callable[[WalkBlock], list[tuple[int, WalkTally]]]


def run_rounds(simulator: Simulator, tasks: int, run_round: RunRound, *,
               stop: Callable[[], bool],
               progress: Callable[[SimProgress], None] | None = None,
               on_interrupt: Callable[[], None] | None = None
               ) -> tuple[WalkTally, int, float]:
    """Run ``simulator``'s walks in rounds of ``tasks`` tasks, each round with
    ``run_round``, until done (see the module docstring): the added-up tally, the rounds
    run (a violating round counted again is two) and their seconds.

    ``stop()`` is checked between rounds (a Ctrl-C); a round whose tasks were stopped
    (tallies ``stopped == "interrupted"``) is counted as far as they went and ends the
    run. A ``KeyboardInterrupt`` (a second Ctrl-C, or a cancelled Spark job) ends it with
    the finished rounds, after ``on_interrupt()``. ``progress`` gets a report after every
    round."""
    cfg = simulator.sim
    n_act = len(simulator.kernel.actions)
    tally = WalkTally.empty(n_act)
    visited = VisitedStates(n_act, simulator.seen_limit(), width=simulator.kernel.key_width)
    plan = RoundPlan(cfg.runs, tasks, cfg.walks_per_batch)
    start = time.perf_counter()
    rounds = 0
    try:
        while tally.found is None and tally.stopped is None:
            if stop():
                tally.stopped = "interrupted"
                break
            block = plan.next_block()
            if block is None:
                break
            left = None if cfg.time_limit is None else \
                cfg.time_limit - (time.perf_counter() - start)
            if left is not None and left <= 0:
                tally.stopped = "time"
                break
            job = WalkBlock(cfg.seed, block[0], block[1], tasks, cfg.depth,
                            cfg.walks_per_batch, left, record=not visited.capped)
            rt = time.perf_counter()
            parts = run_round(job)
            rounds += 1
            found = [p.found.walk for _, p in parts if p.found is not None]
            stopped = any(p.stopped == "interrupted" for _, p in parts)
            if found and not stopped and any(
                    p.walks and job.walks(t).index(p.walks - 1) > min(found)
                    for t, p in parts):
                # tasks ran walks after the violating one: count the round again,
                # walks up to that one only (without time limit: they ran once)
                parts = run_round(replace(job, end=min(found) + 1, time_limit=None))
                rounds += 1
            add_round(tally, visited, [p for _, p in sorted(parts, key=lambda p: p[0])])
            plan.done(block[1], time.perf_counter() - rt)
            if progress is not None:
                progress(SimProgress(tally.walks, tally.steps, len(visited),
                                     time.perf_counter() - start, tally.fired.copy()))
    except KeyboardInterrupt:  # a second Ctrl-C, or a cancelled job
        tally.stopped = "interrupted"
        if on_interrupt is not None:
            on_interrupt()
    tally.count_states(visited)
    return tally, rounds, time.perf_counter() - start


def run_block(simulator: Simulator, block: WalkBlock, task: int,
              stop: Callable[[], bool] | None = None) -> WalkTally:
    """Task ``task`` of round ``block``, with ``simulator``'s kernel, weights and
    temporal properties (what a worker process runs)."""
    return run_walks(simulator.kernel, block.walks(task), weights=simulator.weights,
                     depth=block.depth, walks_per_batch=block.walks_per_batch,
                     time_limit=block.time_limit, stop=stop, record_states=block.record,
                     live=simulator.live)


# ------------------------------------------------------------------ worker processes
def process_target(cls: type) -> str:
    """The loader target (:func:`~modelcheck.loader.load_spec_class`) by which a worker
    process loads spec class ``cls``: ``module:Class``, or ``FILE:Class`` (the file's
    path) for a file the loader imported from outside the working directory (a module named
    ``_modelcheck_spec_...``, which only the file path finds again)."""
    qual, modname = cls.__qualname__, cls.__module__
    if "<locals>" in qual or "." in qual:
        raise UsageError(
            f"spec class {qual} is not defined at the top level of its module; worker "
            "processes (--workers) load the spec by module and class name, so define it "
            "at module level (or use --workers 1).")
    mod = sys.modules.get(modname)
    file = getattr(mod, "__file__", None)
    if modname in ("__main__", "__mp_main__") or file is None:
        raise UsageError(
            f"spec class {qual} is defined in {modname!r}, which worker processes "
            "(--workers) cannot import; put the spec in a module file (e.g. "
            "specs/my_spec.py) and load it from there (or use --workers 1).")
    if modname.startswith("_modelcheck_spec_"):
        return f"{file}:{qual}"
    return f"{modname}:{qual}"


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker process (or a Spark task, :mod:`spark_explore.simulate`) needs to
    rebuild the parent's :class:`Simulator` (:func:`worker_simulator`)."""

    target: str
    constants: tuple[tuple[str, Any], ...]
    config: CheckConfig
    sim: SimConfig
    #: None: the registered predicate libraries (a custom one pickles by reference)
    library: Library | None
    n_actions: int
    n_words: int

    @classmethod
    def of(cls, simulator: Simulator, target: str) -> WorkerSpec:
        """What rebuilds ``simulator`` (its spec loaded by ``target``) elsewhere."""
        lib = simulator.library
        return cls(target, tuple(simulator.spec.constants.items()), simulator.config,
                   simulator.sim, None if lib is library_lookup else lib,
                   len(simulator.kernel.actions), simulator.kernel.layout.n_words)


#: in a worker process: the simulator it built, for the spec it was built for
_WORKER: dict[str, Any] = {}


def _init_worker(stop: Any) -> None:
    """A worker process's start: SIGINT ignored (the parent stops the run), the parent's
    stop flag kept."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER["stop"] = stop


def worker_simulator(ws: WorkerSpec) -> Simulator:
    """The :class:`Simulator` of ``ws`` in this process (a worker's, or a Spark
    executor's): built on first use and kept for the tasks that follow; its kernel checked
    against the parent's (action instances, words)."""
    if _WORKER.get("spec") != ws:
        cls = load_spec_class(ws.target)
        sim = Simulator(cls(**dict(ws.constants)), ws.config, ws.sim,
                        library=ws.library or library_lookup)
        k = sim.kernel
        if (len(k.actions), k.layout.n_words) != (ws.n_actions, ws.n_words):
            raise ModelcheckError(
                f"spec {ws.target} binds to {len(k.actions)} action instances in "
                f"{k.layout.n_words} words in a worker process but to {ws.n_actions} in "
                f"{ws.n_words} in the parent: the spec's code changed, or builds itself "
                "differently in another process.")
        _WORKER.update(spec=ws, simulator=sim)
    simulator: Simulator = _WORKER["simulator"]
    return simulator


def _worker_task(ws: WorkerSpec, block: WalkBlock, task: int
                 ) -> tuple[int, WalkTally, float]:
    """Task ``task`` of round ``block``, in a worker process: its tally and the CPU
    seconds it took (the kernel's building included, in a worker's first task). An
    error of the spec comes back as it is (one paragraph); one that cannot be sent back,
    as its message."""
    stop = _WORKER.get("stop")
    cpu = time.process_time()
    try:
        tally = run_block(worker_simulator(ws), block, task,
                          None if stop is None else stop.is_set)
    except ModelcheckError as e:
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:  # noqa: BLE001 - what it holds does not pickle
            raise ModelcheckError(str(e)) from None
        raise
    return task, tally, time.process_time() - cpu


def _context() -> Any:
    """The way worker processes start: forked by a fork server that has imported the
    engine once (each worker then starts in a fraction of the time a fresh interpreter
    takes); spawned where there is no fork server. Never ``fork``: a worker shares
    nothing with the parent but what it is sent."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        return ctx
    return multiprocessing.get_context("spawn")


@contextmanager
def _starting_workers() -> Iterator[None]:
    """While worker processes start: SIGINT ignored (they inherit the disposition, so a
    Ctrl-C never reaches them, even while they import; the parent stops them), and
    ``__main__`` hidden, so that they do not run the parent's main script again (they
    need nothing of it: the spec is loaded by name, and never from ``__main__``)."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        if main is not None:
            sys.modules["__main__"] = main


class ParallelSimulator:
    """Random walks through a bound spec, split over ``workers`` local processes
    (``modelcheck simulate --workers N``): the walks, counts and violation of
    :class:`~modelcheck.simulate.Simulator` with the same seed (see the module docstring).

    ``config``, ``sim``, ``library`` and ``progress`` as for
    :class:`~modelcheck.simulate.Simulator` (``progress`` gets a report after every
    round). ``workers=1`` runs the walks in this process (:meth:`Simulator.run`). The
    workers are fresh processes (forked by a fork server, else spawned) that load the
    spec by name (:func:`process_target`) and rebuild the kernel; a spec error in one
    reads as in one process. Ctrl-C stops every worker between two steps and reports the walks they
    finished (status ``incomplete``); a second Ctrl-C reports the finished rounds at once.
    For example::

        result = ParallelSimulator(MySpec(), sim=SimConfig(seed=7, runs=10_000),
                                   workers=2).run()
    """

    def __init__(self, spec: Spec, config: CheckConfig | None = None,
                 sim: SimConfig | None = None, *, workers: int = 1,
                 library: Library | None = library_lookup,
                 progress: Callable[[SimProgress], None] | None = None) -> None:
        self.workers = parse_workers(workers)
        self.target = process_target(type(spec)) if self.workers > 1 else None
        self.simulator = Simulator(spec, config, sim, library=library, progress=progress)
        self.spec = spec
        self.library = library
        self.progress = progress

    @property
    def sim(self) -> SimConfig:
        return self.simulator.sim

    def run(self) -> Result:
        """Simulate; Ctrl-C returns the walks finished so far."""
        if self.workers == 1:
            return self.simulator.run()
        s = self.simulator
        found = s.initial_violation()
        if found is not None:
            return found
        assert self.target is not None
        ws = WorkerSpec.of(s, self.target)
        t0 = time.perf_counter()
        ctx = _context()
        stop_flag = ctx.Event()
        pool = cf.ProcessPoolExecutor(self.workers, mp_context=ctx,
                                      initializer=_init_worker, initargs=(stop_flag,))
        started = False
        cpu = [0.0]  # the workers' CPU seconds

        def run_round(block: WalkBlock) -> list[tuple[int, WalkTally]]:
            nonlocal started
            if not started:  # the processes start with the first tasks
                started = True
                with _starting_workers():
                    futures = [pool.submit(_worker_task, ws, block, t)
                               for t in range(block.tasks)]
            else:
                futures = [pool.submit(_worker_task, ws, block, t)
                           for t in range(block.tasks)]
            try:
                done = [f.result() for f in futures]
            except BaseException as e:
                stop_flag.set()  # the others stop between two steps
                for f in futures:
                    f.cancel()
                if isinstance(e, cf.process.BrokenProcessPool):
                    raise ModelcheckError(
                        f"a worker process ended abruptly while running walks "
                        f"{block.first}..{block.end - 1} (killed, or out of memory?); the "
                        "run stops. Try fewer --workers, or --workers 1.") from None
                raise
            cpu[0] += sum(c for _, _, c in done)
            return [(t, tally) for t, tally, _ in done]

        try:
            with Interrupts(on_request=stop_flag.set) as stop:
                tally, rounds, _ = run_rounds(s, self.workers, run_round,
                                              stop=lambda: stop.requested,
                                              progress=self.progress,
                                              on_interrupt=stop_flag.set)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        seconds = time.perf_counter() - t0
        res = s.result(tally, seconds, info={"workers": self.workers,
                                             "workers_cpu_seconds": round(cpu[0], 2)})
        return replace(res, seconds=seconds, memory={**res.memory, "rounds": rounds})
