"""A run folder (``check --out DIR``) as the explorer's Run view shows it.

This module owns reading a run folder for the page (:func:`load_run`): the run
record ``result.json`` (:mod:`modelcheck.trace.runrecord` writes it) becomes a
summary (status, counts, the command), the coverage per action instance with the
never-enabled ones flagged, the per-level table and the violation, and the
counterexample becomes a :class:`~modelcheck.trace.Trace` (read by
:func:`~modelcheck.trace.load_trace`, as every ``trace`` command reads a folder).
A folder that is not a run, or a record that does not hold what a run record
holds, is a :class:`~modelcheck.errors.UsageError` naming the file and field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..trace import Trace, load_trace
from ..trace.runrecord import RESULT_FILE

__all__ = ["RunView", "load_run"]

_LEVEL_FIELDS = ("depth", "frontier", "new", "generated")
_COVERAGE_FIELDS = ("fired", "new_states")


@dataclass(frozen=True)
class RunView:
    """What the page shows of a run (``summary``, JSON) and its counterexample."""

    summary: dict[str, Any]
    trace: Trace | None


def load_run(path: str) -> RunView:
    """Read the run folder ``path`` (or its ``result.json``)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path) or "."
    record = os.path.join(folder, RESULT_FILE) if os.path.isdir(path) else path
    where = f"--run {path}"
    if not os.path.exists(record):
        raise UsageError(f"{where}: no {RESULT_FILE} there; give a run folder written by "
                         "`modelcheck check --out DIR` (or its result.json).")
    try:
        with open(record, "rb") as f:
            doc = json.loads(f.read())
    except OSError as e:
        raise UsageError(f"{where}: cannot read {record}: {e.strerror or e}.") from None
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{where}: {record} is not JSON ({e}).") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("status"), str):
        raise UsageError(f"{where}: {record} is not a run record (no \"status\").")

    def field(name: str, kind: type, default: Any) -> Any:
        v = doc.get(name, default)
        if v is not None and not isinstance(v, kind):
            raise UsageError(f"{where}: {record}: {name}: expected {kind.__name__}, got "
                             f"{type(v).__name__}.")
        return v

    coverage = [_row(c, ("action", "params"), _COVERAGE_FIELDS, f"{record}: coverage[{i}]",
                     where) for i, c in enumerate(field("coverage", list, []))]
    for c in coverage:
        c["never_enabled"] = c["fired"] == 0
    levels = [_row(lv, (), _LEVEL_FIELDS, f"{record}: levels[{i}]", where)
              for i, lv in enumerate(field("levels", list, []))]
    trace = load_trace(folder) if field("violation", dict, None) is not None else None
    v = doc["violation"]
    run = field("run", dict, {}) or {}
    summary = {
        "record": record,
        "status": doc["status"],
        "spec": field("spec", str, None),
        "constants": field("constants", dict, {}),
        "distinct_states": field("distinct_states", int, None),
        "generated_states": field("generated_states", int, None),
        "depth": field("depth", int, None),
        "seconds": field("seconds", float, None) if isinstance(doc.get("seconds"), float)
        else field("seconds", int, None),
        "reason": field("reason", str, None),
        "message": field("message", str, None),
        "error": field("error", str, None),
        "checked": field("checked", dict, {}),
        "symmetry": field("symmetry", list, []),
        "command": run.get("command") if isinstance(run.get("command"), str) else None,
        "target": _target(run.get("spec")),
        "coverage": coverage,
        "levels": levels,
        "violation": None if trace is None else {
            "property": v.get("property"), "kind": v.get("kind"),
            "also_violated": v.get("also_violated", []), "trace_length": len(trace),
            "text": trace.violation_text()},
    }
    return RunView(summary, trace)


def _target(spec: Any) -> str | None:
    """The spec a run record names, as a SPEC argument (``file:Class``), if it says."""
    if not isinstance(spec, dict):
        return None
    where, cls = spec.get("file"), spec.get("class")
    if isinstance(where, str) and isinstance(cls, str):
        return f"{where}:{cls}"
    target = spec.get("target")
    return target if isinstance(target, str) else None


def _row(raw: Any, texts: tuple[str, ...], ints: tuple[str, ...], path: str,
         where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: {path}: expected an object.")
    out: dict[str, Any] = dict(raw)
    for k in texts:
        if not isinstance(raw.get(k, ""), str):
            raise UsageError(f"{where}: {path}.{k}: expected a string.")
    for k in ints:
        v = raw.get(k)
        if isinstance(v, bool) or not isinstance(v, int):
            raise UsageError(f"{where}: {path}.{k}: expected an integer, got "
                             f"{json.dumps(v)[:30]}.")
    return out
