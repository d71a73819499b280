"""The run of a check, written once for every backend.

* :mod:`modelcheck.run.rules` — the rules of a run: when it stops and what it says
  (``--max-depth``, ``--max-states``, a verdict's status, the checkpoint a stopped run
  leaves), the same words for the local explorer and the Spark backend;
* :mod:`modelcheck.run.progress` — :class:`~modelcheck.run.progress.Progress`, the one
  progress report of a breadth-first run, and the one line that prints it.

The level loop itself is still written by each backend (``modelcheck.explorer`` and
``spark_explore.driver``); both take every decision above from here.
"""

from __future__ import annotations

from .progress import Progress, progress_line
from .rules import (
    can_expand,
    checkpoint_note,
    max_depth_reason,
    max_states_message,
    over_max_states,
    verdict_status,
)

__all__ = ["Progress", "progress_line", "can_expand", "checkpoint_note", "max_depth_reason",
           "max_states_message", "over_max_states", "verdict_status"]
