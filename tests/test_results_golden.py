"""The ``--format json`` output of ``modelcheck check`` and ``modelcheck simulate`` is
the same as before results were typed (enums, frozen dataclasses), on every spec class
of ``specs/``, ``examples/`` and ``examples/tla/``.

The golden file ``tests/data/results_golden.json`` is the JSON of the pre-change code,
recorded at commit 692b0927f155c563ea2c014872949593046b29b7 (main before ``Result``
became a frozen dataclass) by :mod:`tests.golden_json` and re-recorded when that change
was merged with two meant changes (the simulation's ``walk_ends`` gained ``cut``, the
walks a time limit or Ctrl-C cuts; ``examples/ledger.py`` added; nothing else
differed), which runs each class small (see its docstring) and drops what varies
between two runs (durations, rates, measured memory). It is the same under any
``PYTHONHASHSEED`` (recorded under 1 and 2: equal).

Regenerate it, only when a change of the JSON contract is meant, with::

    python -m tests.golden_json > tests/data/results_golden.json

Each run is compared field by field, so that a failure names the fields that differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.golden_json import key, run, runs

GOLDEN_FILE = Path(__file__).resolve().parent / "data" / "results_golden.json"
GOLDEN: dict[str, dict[str, Any]] = json.loads(GOLDEN_FILE.read_text())


def differences(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """The paths where ``new`` differs from ``old`` (keys, list lengths, values, and
    value types: ``1`` is not ``1.0`` or ``True``)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            if k not in new:
                yield f"{path}.{k}: missing (was {old[k]!r})"
            elif k not in old:
                yield f"{path}.{k}: new field ({new[k]!r})"
            else:
                yield from differences(old[k], new[k], f"{path}.{k}")
    elif isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            yield f"{path}: {len(new)} items, was {len(old)}"
        for i, (a, b) in enumerate(zip(old, new)):
            yield from differences(a, b, f"{path}[{i}]")
    elif type(old) is not type(new) or old != new:
        yield f"{path}: {new!r}, was {old!r}"


RUNS = [r for r in runs() if key(*r) in GOLDEN]


@pytest.mark.parametrize("command, target, extra", RUNS, ids=[key(*r) for r in RUNS])
def test_json_is_unchanged(command: str, target: str, extra: tuple[str, ...]) -> None:
    name = key(command, target, extra)
    new = json.loads(json.dumps(run(command, target, extra)))
    diff = list(differences(GOLDEN[name], new))
    assert not diff, f"{name}:\n" + "\n".join(diff[:20])


def test_the_golden_file_covers_every_kind_of_result() -> None:
    # every recorded run is still made (a spec class added later has no pre-change
    # JSON and is not compared; one removed would leave a stale key)
    assert len(RUNS) == len(GOLDEN) >= 300
    statuses = {GOLDEN[k]["json"]["status"] for k in GOLDEN if "json" in GOLDEN[k]}
    assert statuses == {"ok", "violation", "deadlock", "incomplete", "error"}
    kinds = {GOLDEN[k]["json"]["violation"]["kind"] for k in GOLDEN
             if "json" in GOLDEN[k] and GOLDEN[k]["json"].get("violation")}
    assert kinds == {"invariant", "action", "deadlock", "liveness"}


def test_differences_names_the_field() -> None:
    old = {"a": 1, "b": [1, {"c": "x"}], "d": None}
    assert list(differences(old, old)) == []
    assert list(differences(old, {"a": 1.0, "b": [1, {"c": "y"}], "e": 0})) == [
        ".a: 1.0, was 1", ".b[1].c: 'y', was 'x'", ".d: missing (was None)",
        ".e: new field (0)"]
