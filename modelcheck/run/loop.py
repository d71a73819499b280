"""The level loop of a breadth-first run, written once over a :class:`Backend`.

Per level ``depth`` the loop asks the backend to expand it (:meth:`Backend.expand`:
the level rule's findings, :class:`~modelcheck.level.LevelFindings`) and applies
the rule's verdict: a phase-1 verdict (an invariant violated, or a spec error) ends
the run before the level's successors are counted; otherwise the backend counts the
next level's new states (:meth:`Backend.successors`) and the loop decides: another
verdict ends the run with that level counted but not stored; ``--max-states`` stops
at the last complete level (:mod:`modelcheck.run.rules`); the backend's own budget
(:meth:`Backend.fits`) may stop it too; else the level is kept, reported
(:class:`~modelcheck.run.progress.Progress`), and committed to the checkpoint before
it is expanded. ``--max-depth`` checks the last level it allows without expanding it.

A stop (:class:`~modelcheck.budget.StopRun`: Ctrl-C recorded by
:class:`~modelcheck.interrupt.Interrupts`, a budget), or a ``MemoryError``, ends the
run at the last complete level with status ``incomplete``, commits that level and says
how to continue; a second Ctrl-C (``KeyboardInterrupt``) ends it at once. A finished
run records its end in the checkpoint (:meth:`Backend.finish`); a resumed run whose
checkpoint records its end returns that result without exploring.

The backends are the local explorer (:mod:`modelcheck.explorer`) and the Spark driver
(``spark_explore.driver``): how a level is stored, expanded and committed is theirs;
every rule above is this module's.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..budget import StopRun
from ..checkpoint import CheckpointError, Final, Snapshot
from ..config import CheckConfig
from ..interrupt import Interrupts
from ..kernel import Kernel
from ..level import LevelFindings, Verdict, VerdictKind
from ..result import LevelStats, Result, Status, Violation
from .progress import Progress
from .results import complete_result
from .rules import (
    can_expand,
    checkpoint_note,
    max_depth_reason,
    max_states_message,
    over_max_states,
    verdict_status,
)

__all__ = ["Backend", "Begin", "Successors", "RunLoop", "Pulse"]

#: ``pulse(depth, counts)``: a backend's report from inside level ``depth``; ``counts()``
#: (called only when a report is due) gives the states of the level not expanded yet,
#: the new states found so far and the successors generated in the level so far
Pulse = Callable[[int, Callable[[], tuple[int, int, int]]], None]


@dataclass
class Begin:
    """Where a run begins: afresh (both None), from a checkpoint's counters
    (``snap``, with ``sizes`` the states of the stored levels ``0..snap.depth``), or
    with the result a checkpoint records (``final``)."""

    snap: Snapshot | None = None
    final: Final | None = None
    sizes: list[int] = field(default_factory=list)


@dataclass
class Successors:
    """What expanding a level found for the next one."""

    new: int  # new states (not stored before)
    reached: np.ndarray  # of them, the ones each action instance reached first
    seconds: float  # wall time of the level


class Backend(Protocol):
    """How a backend stores, expands and commits levels (see the module docstring).

    Its methods raise :class:`~modelcheck.budget.StopRun` to stop the run at the last
    complete level; spec errors raise as the level rule reports them."""

    def begin(self, resume: bool) -> Begin:
        """Prepare the run: read the checkpoint when ``resume`` (and it has one)."""

    def initial(self) -> int:
        """Compute the initial states (distinct, in the state constraints): how many."""

    def keep_initial(self) -> None:
        """Store the initial states as level 0."""

    def expand(self, depth: int, expand: bool, pulse: Pulse) -> LevelFindings:
        """Expand level ``depth`` (check it only when not ``expand``): its findings,
        those of the initial states outside the constraints included at level 0."""

    def successors(self, depth: int, verdict: Verdict | None, expand_next: bool,
                   room: int | None) -> Successors:
        """Count level ``depth + 1`` (the new successors of level ``depth``).
        ``expand_next``: the loop will expand it; ``room``: the states ``--max-states``
        leaves (None: no limit or the run ends here)."""

    def fits(self, depth: int, new: int) -> None:
        """Raise :class:`~modelcheck.budget.StopRun` if storing ``new`` states as level
        ``depth + 1`` would pass the backend's budget."""

    def keep(self, depth: int) -> None:
        """Store the level counted last as level ``depth`` (the next to expand)."""

    def report(self, depth: int, verdict: Verdict) -> Violation:
        """The violation ``verdict`` (on a state of level ``depth``) reports."""

    def commit(self, snap: Snapshot, sizes: list[int]) -> None:
        """Commit levels ``0..snap.depth`` and the counters to the checkpoint (if any)."""

    def finish(self, final: Final) -> None:
        """Record in the checkpoint (if any) how the run ended."""

    @property
    def checkpoint(self) -> str | None:
        """Where the checkpoint is, as the user named it (None: no checkpoint)."""

    def advice(self) -> str:
        """What to try to go further, after a budget stopped the run ('' if nothing)."""

    def out_of_memory(self, detail: str) -> str:
        """The message of a run a ``MemoryError`` stopped (after :meth:`release`)."""

    def release(self) -> None:
        """Drop what the level being expanded holds (after a ``MemoryError``)."""

    def interrupted(self) -> None:
        """A second Ctrl-C (``KeyboardInterrupt``) ended the run: stop what still runs."""

    def memory(self) -> dict[str, int]:
        """The result's ``memory`` section."""


class RunLoop:
    """One breadth-first run of ``kernel``'s spec under ``config`` over ``backend``;
    :meth:`run` returns ``res`` (:func:`~modelcheck.run.results.new_result`, not changed)
    completed with the run's totals (:func:`~modelcheck.run.results.complete_result`)."""

    def __init__(self, backend: Backend, kernel: Kernel, config: CheckConfig, res: Result,
                 stop: Interrupts, *, progress: Callable[[Progress], None] | None = None,
                 progress_interval: float = 0.0, t0: float | None = None) -> None:
        self.b, self.kernel, self.config, self.res = backend, kernel, config, res
        self.stop = stop
        self.progress = progress
        self.progress_interval = progress_interval
        self.t0 = time.perf_counter() if t0 is None else t0
        n_act = len(kernel.actions)
        self.fired = np.zeros(n_act, dtype=np.int64)
        self.new_by_action = np.zeros(n_act, dtype=np.int64)
        self.generated = 0
        self.depth = 0
        self.sizes: list[int] = []  # states of levels 0..depth (and a counted last one)
        self.committed = -1  # the level whose start the checkpoint holds
        self.last_report = time.perf_counter()
        self.levels: list[LevelStats] = []  # the result's per-level stats so far

    # ------------------------------------------------------------ the loop
    def run(self) -> Result:
        """Run the levels and return the result, built once at the end."""
        b, cfg = self.b, self.config
        cap, max_depth = cfg.max_states, cfg.max_depth
        violation: Violation | None = None
        status, reason, message = Status.OK, None, None
        verdict: Verdict | None = None
        orderly = False  # stopped by a budget, Ctrl-C or MemoryError where it can resume
        try:
            begin = b.begin(cfg.resume)
            if begin.final is not None:
                return self._ended(begin.final)
            if begin.snap is not None:
                self._resume(begin.snap, begin.sizes)
            else:
                n = b.initial()
                if over_max_states(cap, 0, n):
                    raise StopRun("max-states", max_states_message(cap or 0, 0, -1, n,
                                                                   self._advice()))
                b.keep_initial()
                self.sizes = [n]
                self._commit()
            while True:
                if self.stop.requested:
                    raise StopRun("interrupted")
                depth = self.depth
                n = self.sizes[depth]
                expand = can_expand(depth, max_depth)
                found = b.expand(depth, expand, self._pulse)
                verdict = found.verdict()
                if verdict is not None and (verdict.phase1 or verdict.kind is VerdictKind.ERROR):
                    # The level's successors are not counted; a spec error raises.
                    violation = b.report(depth, verdict)
                    status = Status.VIOLATION
                    break
                have = sum(self.sizes)
                room = None if cap is None or verdict is not None else cap - have
                nxt = b.successors(depth, verdict, can_expand(depth + 1, max_depth), room)
                if verdict is None:
                    if over_max_states(cap, have, nxt.new):
                        raise StopRun("max-states", max_states_message(
                            cap or 0, have, depth, nxt.new, self._advice()))
                    b.fits(depth, nxt.new)
                level_fired = int(found.fired.sum())
                self.generated += level_fired
                self.fired += found.fired
                self.new_by_action += nxt.reached
                self.levels.append(LevelStats(depth, n, nxt.new, level_fired, nxt.seconds))
                if nxt.new:
                    self.sizes.append(nxt.new)
                if verdict is not None:  # the next level is counted, not stored
                    violation = b.report(depth, verdict)
                    status = verdict_status(verdict)
                    break
                if nxt.new:
                    b.keep(depth + 1)
                self._report(Progress(depth + 1, sum(self.sizes), 0, nxt.new,
                                      self.generated, self._elapsed(), self.levels[-1]))
                if not expand:
                    status, reason = Status.INCOMPLETE, max_depth_reason(max_depth)
                    break
                if nxt.new == 0:
                    break
                self.depth = depth + 1
                self._commit()
        except StopRun as s:
            status, reason, message = Status.INCOMPLETE, s.reason, s.message
            orderly = True
        except KeyboardInterrupt:  # a second Ctrl-C, or raised by a progress callback
            status, reason = Status.INCOMPLETE, "interrupted"
            b.interrupted()
        except MemoryError as e:
            status, reason = Status.INCOMPLETE, "memory"
            message = str(e)  # nothing else of the failed allocation is kept
            orderly = True
        if reason == "memory" and status is Status.INCOMPLETE:
            b.release()
            gc.collect()
            if not (message or "").startswith("Stopped"):
                message = b.out_of_memory(message or "")
        seconds = self._elapsed()
        memory = b.memory()
        where = b.checkpoint
        if where is not None and orderly:
            # stopped at the start of level `depth`: make that the checkpoint's state
            if self.committed != self.depth and self.sizes:
                with contextlib.suppress(MemoryError, CheckpointError):
                    self._commit()
            if self.committed == self.depth and message is not None:
                larger = "--max-states" if reason == "max-states" else "budget"
                message += checkpoint_note(where, self.depth, larger)
        res = complete_result(self.res, self.kernel, violation=violation,
                              distinct=sum(self.sizes), generated=self.generated,
                              depth=max(0, len(self.sizes) - 1), seconds=seconds,
                              fired=self.fired, new_by_action=self.new_by_action,
                              status=status, reason=reason, message=message,
                              levels=list(self.levels), memory=memory)
        if not (where is not None and orderly) and reason != "interrupted":
            b.finish(Final(self._snapshot(res.seconds), res.status, res.reason, max_depth,
                           res.distinct_states, res.depth, res.memory, verdict))
        return res

    # ------------------------------------------------------------ helpers
    def _elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def _advice(self) -> str:
        return self.b.advice().replace("--memory-limit", "--max-states")

    def _resume(self, snap: Snapshot, sizes: list[int]) -> None:
        self.depth, self.generated = snap.depth, snap.generated
        self.committed = snap.depth
        self.fired += snap.fired
        self.new_by_action += snap.new_by_action
        self.levels = list(snap.stats)
        self.t0 -= snap.seconds
        self.sizes = list(sizes)

    def _snapshot(self, seconds: float) -> Snapshot:
        return Snapshot(self.depth, self.generated, self.fired, self.new_by_action,
                        self.levels, seconds)

    def _commit(self) -> None:
        self.b.commit(self._snapshot(self._elapsed()), self.sizes)
        self.committed = self.depth

    def _report(self, p: Progress) -> None:
        """Report ``p`` when the progress interval has passed since the last report."""
        now = time.perf_counter()
        if self.progress is not None and now - self.last_report >= self.progress_interval:
            self.last_report = now
            self.progress(p)

    def _pulse(self, depth: int, counts: Callable[[], tuple[int, int, int]]) -> None:
        now = time.perf_counter()
        if self.progress is not None and now - self.last_report >= self.progress_interval:
            self.last_report = now
            left, found, generated = counts()
            self.progress(Progress(depth, sum(self.sizes), left, found,
                                   self.generated + generated, now - self.t0))

    def _ended(self, final: Final) -> Result:
        """The result of a run whose checkpoint records its end (no exploration)."""
        c = final.counters
        violation = None
        if final.verdict is not None:
            violation = self.b.report(c.depth, final.verdict)
        return complete_result(self.res, self.kernel, violation=violation,
                               distinct=final.distinct, generated=c.generated,
                               depth=final.result_depth, seconds=c.seconds, fired=c.fired,
                               new_by_action=c.new_by_action, status=Status(final.status),
                               reason=final.reason, levels=list(c.stats),
                               memory=dict(final.memory))
