"""The rules of a breadth-first run that every backend follows, and their words.

A run expands level ``depth`` while ``--max-depth`` allows (:func:`can_expand`); it
stops at the last complete level when the next one would pass ``--max-states``
(:func:`over_max_states`, :func:`max_states_message`); a verdict of the level rule
ends it with the status :func:`verdict_status` gives; a run stopped where it can
resume says where its checkpoint is (:func:`checkpoint_note`).
"""

from __future__ import annotations

from ..level import Verdict, VerdictKind
from ..result import Status

__all__ = ["can_expand", "over_max_states", "verdict_status", "max_depth_reason",
           "max_states_message", "checkpoint_note"]


def can_expand(depth: int, max_depth: int | None) -> bool:
    """Whether level ``depth`` is expanded under ``--max-depth`` (None: no limit)."""
    return max_depth is None or depth < max_depth


def over_max_states(cap: int | None, have: int, new: int) -> bool:
    """Whether ``new`` more states beside the ``have`` stored pass ``--max-states``."""
    return cap is not None and have + new > cap


def verdict_status(verdict: Verdict) -> Status:
    """The status of a run that the level rule's ``verdict`` ended."""
    return Status.DEADLOCK if verdict.kind is VerdictKind.DEADLOCK else Status.VIOLATION


def max_depth_reason(max_depth: int | None) -> str:
    """The ``reason`` of a run that stopped at ``--max-depth``."""
    return f"--max-depth {max_depth} reached"


def max_states_message(cap: int, have: int, depth: int, new: int, advice: str = "") -> str:
    """Why a run stopped at ``--max-states cap``: the ``have`` states of levels
    ``0..depth`` are complete and level ``depth + 1`` would add ``new`` (``depth`` -1:
    the ``new`` initial states do not fit). ``advice`` (sentences) follows."""
    if depth >= 0:
        done = (f"the {have:,} states of levels 0..{depth} are explored, and level "
                f"{depth + 1} would add {new:,} more ({have + new:,} in all). The counts "
                f"cover the complete levels 0..{depth}")
    else:
        done = f"the {new:,} initial states are more than that, and nothing is explored"
    text = f"Stopped at --max-states {cap:,}: {done}; raise --max-states to go further."
    return f"{text} {advice}" if advice else text


def checkpoint_note(where: str, depth: int, larger: str) -> str:
    """What a run stopped at level ``depth`` (by a budget, Ctrl-C or memory) adds to its
    message when its checkpoint in ``where`` holds that level: how to continue it
    (``larger``: what to raise, such as ``budget`` or ``--max-states``)."""
    return (f" The checkpoint in {where} holds levels 0..{depth}: continue with --resume "
            f"(and a larger {larger}).")
