"""The progress report of a breadth-first run, whichever backend runs it, and its line."""

from __future__ import annotations

from dataclasses import dataclass

from ..result import LevelStats

__all__ = ["Progress", "progress_line"]


@dataclass(frozen=True)
class Progress:
    """A progress report: emitted every few seconds while a level is expanded, and when
    a level is finished (then ``finished`` holds that level's counts and ``depth`` is
    the next level)."""

    depth: int  # the level being expanded, or (after a level) the next one
    distinct: int  # distinct states stored so far
    frontier_left: int  # states of level ``depth`` not expanded yet
    next_level: int  # new states found for the level after ``depth``
    generated: int  # successors generated so far (duplicates included)
    seconds: float  # since the start of the run
    finished: LevelStats | None = None  # the level just finished

    @property
    def level(self) -> int:
        """The level the report is about: the one finished, else the one expanded."""
        return self.finished.depth if self.finished is not None else self.depth

    @property
    def rate(self) -> float:
        """Distinct states per second since the start of the run."""
        return self.distinct / self.seconds if self.seconds > 0 else 0.0


def progress_line(p: Progress) -> str:
    """The line a command prints for a progress report (on stderr)."""
    line = (f"[{p.seconds:7.1f}s] depth {p.depth:>3}  distinct {p.distinct:>12,}  "
            f"frontier {p.frontier_left + p.next_level:>11,}  generated {p.generated:>13,}  "
            f"{p.rate:>10,.0f} states/s")
    f = p.finished
    if f is not None:
        line += (f"  level {f.depth:>3} expanded {f.frontier:,}  new {f.new:,}  "
                 f"dups {f.generated - f.new:,}  {f.seconds:.2f} s")
    return line
