"""The ``--format json`` output of ``modelcheck check`` and ``modelcheck simulate`` on
every spec class of ``specs/``, ``examples/`` and ``examples/tla/``, in small
configurations, with what varies from run to run (durations, rates, memory sizes)
removed: the data ``tests/test_typed_results.py`` compares with the golden file
``tests/data/results_golden.json``.

Regenerate the golden file (only when a change of the JSON is meant) with::

    python -m tests.golden_json > tests/data/results_golden.json

Each run is ``check MODULE:Class --format json -q`` (with the small constants of
``tests/test_front_door.SMALL``, and ``--max-states 2000`` for its ``SLOW`` classes)
and ``simulate MODULE:Class --format json -q --seed 7 --runs 8 --max-depth 12
--shrink-states 2000``, and the few runs of :data:`EXTRA` (a deadlock, a
``--max-depth`` stop), through click's ``CliRunner`` in this process. A run that
fails with a Python exception is recorded as the exception's type, so that a change
that breaks a spec shows.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from click.testing import CliRunner

from modelcheck.cli import cli
from tests.test_front_door import SLOW, SMALL, TARGETS, const_args

#: keys whose values differ between two runs of the same command: wall-clock time,
#: rates and measured memory
VARYING = frozenset({"seconds", "states_per_second", "memory", "rate", "walks_per_second",
                     "steps_per_second", "states_per_second_sim", "started", "finished",
                     "timestamp", "peak_rss", "bytes", "memory_bytes", "graph_bytes"})

CHECK_ARGS = ("--format", "json", "-q")
#: the classes of ``SLOW`` (over a second) stop at the last level under 2,000 states
SLOW_ARGS = ("--max-states", "2000")
SIMULATE_ARGS = ("--format", "json", "-q", "--seed", "7", "--runs", "8", "--max-depth", "12",
                 "--shrink-states", "2000")


#: runs with options of their own, for the results no spec gives with its defaults
EXTRA: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("check", "examples.counter:Counter", ("--deadlock",)),
    ("simulate", "examples.counter:Counter", ("--deadlock",)),
    ("check", "examples.mutex:Peterson", ("--max-depth", "3")),
)


def scrub(v: Any) -> Any:
    """``v`` without the :data:`VARYING` keys (at any depth)."""
    if isinstance(v, dict):
        return {k: scrub(x) for k, x in v.items() if k not in VARYING}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v


def run(command: str, target: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Exit code and scrubbed JSON of ``modelcheck COMMAND TARGET EXTRA`` in small form."""
    args = SIMULATE_ARGS if command == "simulate" else (
        CHECK_ARGS + SLOW_ARGS if target in SLOW else CHECK_ARGS)
    r = CliRunner().invoke(cli, [command, target, *const_args(SMALL.get(target, {})), *args,
                                 *extra])
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return {"exit": None, "exception": type(r.exception).__name__}
    return {"exit": r.exit_code, "json": scrub(json.loads(r.stdout))}


def key(command: str, target: str, extra: tuple[str, ...] = ()) -> str:
    """A run's key in the golden file: ``check MODULE:Class [EXTRA...]``."""
    return " ".join((command, target, *extra))


def runs() -> list[tuple[str, str, tuple[str, ...]]]:
    """Every run: ``check`` and ``simulate`` of each spec class, then :data:`EXTRA`."""
    return [(c, t, ()) for t in TARGETS for c in ("check", "simulate")] + list(EXTRA)


def record() -> dict[str, dict[str, Any]]:
    """``{"check MODULE:Class": {...}, "simulate MODULE:Class": {...}, ...}``."""
    return {key(*r): run(*r) for r in runs()}


if __name__ == "__main__":
    json.dump(record(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
