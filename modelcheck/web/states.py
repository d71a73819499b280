"""States and paths as the explorer page sees them: JSON out, checked JSON in.

This module owns the JSON of one state (:func:`state_json`: each variable's value as
text, an array one element at a time, the invariants the state violates), of one
step of a path (:func:`step_json`: the action, its label and the values it changed,
named as ``trace show`` names them) and the reading of what the page sends back: a
state as its cell values (:func:`parse_cells`) and a path of steps
(:func:`parse_path`, which makes it a :class:`~modelcheck.trace.Trace`). Values,
labels and changes come from :mod:`modelcheck.trace.render`, so the page reads as
the terminal does. A request that does not hold what it should is a
:class:`RequestError` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import codec
from ..errors import ModelcheckError, SpecEvaluationError
from ..kernel import Kernel
from ..layout import Layout
from ..result import TraceStep
from ..spec import Spec
from ..trace import Trace
from ..trace.itf import ItfError, decode_value, encode_value, freeze
from ..trace.render import action_label, changes, format_value, leaves

__all__ = ["RequestError", "MAX_PATH", "state_json", "state_text", "step_json", "parse_cells",
           "parse_path", "path_trace"]

#: the most steps a path sent to the explorer may have
MAX_PATH = 100_000


class RequestError(ModelcheckError):
    """A request the explorer cannot serve: a missing or malformed field."""


def _is_array(v: Any) -> bool:
    return codec.kind(v) is codec.Kind.MAP


def state_json(kernel: Kernel, cells: Sequence[int]) -> dict[str, Any]:
    """One state: ``cells`` (what the page sends back), per variable its ``text`` and,
    for an array, its ``leaves`` (``{"path": "bstate[1]", "key": "[1]", "text": ...}``),
    and the checked invariants it violates (``error``: why they could not be evaluated)."""
    layout: Layout = kernel.layout
    values = layout.itf_values_from_cells(cells)
    out_vars = []
    for name in layout.vars:
        v = values[name]
        out_vars.append({
            "name": name,
            "text": format_value(v),
            "leaves": [{"path": p, "key": p[len(name):], "text": format_value(x)}
                       for p, x in leaves(name, v)] if _is_array(v) else None,
        })
    error = None
    try:
        bad = [p.name for p in kernel.check_invariants(cells)]
    except SpecEvaluationError as e:
        bad, error = [], str(e)
    return {"cells": [int(c) for c in cells], "vars": out_vars, "invariants": bad,
            "error": error}


def state_text(layout: Layout, cells: Sequence[int]) -> str:
    """A whole state as ``trace show`` prints an initial state: one ``name = value`` line
    per variable (names padded alike), values in :func:`format_value`'s notation, the
    one the state table and the changes use."""
    values = layout.itf_values_from_cells(cells)
    width = max((len(n) for n in layout.vars), default=0)
    return "\n".join(f"{n:<{width}} = {format_value(values[n])}" for n in layout.vars)


def params_json(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values for the page: ints as they are, compound values (a record, a
    set) as ITF JSON, which :func:`parse_path` reads back."""
    return {k: v if isinstance(v, (int, str)) else encode_value(v) for k, v in params.items()}


def step_json(kernel: Kernel, action: str | None, params: Mapping[str, Any],
              cells: Sequence[int], prev: Sequence[int] | None) -> dict[str, Any]:
    """One step of a path: the action that led to state ``cells`` from ``prev`` (None for
    an initial state), its ``label`` and ``changes`` (``path``, ``old``, ``new`` texts,
    array elements one index at a time)."""
    layout = kernel.layout
    diff: list[dict[str, str]] = []
    if prev is not None:
        old, new = layout.itf_values_from_cells(prev), layout.itf_values_from_cells(cells)
        diff = [{"path": p, "old": format_value(a), "new": format_value(b)}
                for p, a, b in changes(old, new, layout.vars)]
    label = action_label(action, params) if prev is None or action is not None \
        else "<unnamed action>"
    return {"action": action, "params": params_json(params), "label": label,
            "state": state_json(kernel, cells), "changes": diff}


def parse_cells(layout: Layout, raw: Any, where: str = "cells") -> list[int]:
    """A state the page sent: one integer per cell of ``layout``, each in its domain."""
    n = len(layout.cells)
    if not isinstance(raw, list) or len(raw) != n:
        raise RequestError(f"{where}: expected a list of {n} cell values.")
    out = []
    for c, v in zip(layout.cells, raw):
        if isinstance(v, bool) or not isinstance(v, int) or not c.lo <= v <= c.hi:
            raise RequestError(f"{where}: {c.name} must be an integer in {c.lo}..{c.hi}, got "
                               f"{str(v)[:20]}.")
        out.append(v)
    return out


def parse_path(layout: Layout, raw: Any) -> list[tuple[str | None, dict[str, Any], list[int]]]:
    """A path the page sent: ``[{"action", "params", "cells"}, ...]``, initial state first."""
    if not isinstance(raw, list) or not raw:
        raise RequestError("path: expected a non-empty list of steps.")
    if len(raw) > MAX_PATH:
        raise RequestError(f"path: more than {MAX_PATH:,} steps.")
    out: list[tuple[str | None, dict[str, Any], list[int]]] = []
    for i, step in enumerate(raw):
        where = f"path[{i}]"
        if not isinstance(step, dict):
            raise RequestError(f"{where}: expected an object with action, params and cells.")
        action = step.get("action")
        if action is not None and not isinstance(action, str):
            raise RequestError(f"{where}.action: expected a string or null.")
        params = step.get("params") or {}
        if not isinstance(params, dict) or not all(
                isinstance(v, (int, str, dict, list)) and not isinstance(v, bool)
                for v in params.values()):
            raise RequestError(f"{where}.params: expected an object of integers, strings or "
                               "ITF values.")
        try:
            params = {k: v if isinstance(v, (int, str)) else freeze(decode_value(v))
                      for k, v in params.items()}
        except (ItfError, TypeError, ValueError):
            raise RequestError(f"{where}.params: a value is no ITF value.") from None
        out.append((None if i == 0 else action, dict(params),
                    parse_cells(layout, step.get("cells"), f"{where}.cells")))
    return out


def path_trace(spec: Spec, raw_path: Any, raw_loop: Any = None, *,
               source: str | None = None) -> Trace:
    """The path the page sent as a :class:`~modelcheck.trace.Trace` of ``spec`` (with its
    constants, so that ``trace replay`` binds the same spec); ``raw_loop`` is the index
    of the state where a lasso's loop starts, or None."""
    layout = spec.layout
    steps = parse_path(layout, raw_path)
    if raw_loop is not None and (isinstance(raw_loop, bool) or not isinstance(raw_loop, int)
                                 or not 0 <= raw_loop < len(steps)):
        raise RequestError(f"loop: expected the index of a state (0..{len(steps) - 1}) or "
                           "null.")
    return Trace(
        vars=tuple(layout.vars),
        steps=tuple(TraceStep(a, p, layout.itf_values_from_cells(c)) for a, p, c in steps),
        spec=spec.name, source=source, constants=dict(spec.constants), loop=raw_loop)
