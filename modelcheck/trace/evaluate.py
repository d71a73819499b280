"""``modelcheck trace eval``: a Python expression over every state of a trace.

This module owns :func:`evaluate` and :func:`compile_expression`: the expression
may use the trace's variables and a few safe builtins (:data:`SAFE_BUILTINS`), no
``_private`` attributes; mistakes are :class:`ExpressionError`. This keeps
accidents out; it is not a security sandbox for hostile input.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ModelcheckError
from .itf import Record
from .model import Trace
from .render import action_label

__all__ = [
    "ExpressionError",
    "compile_expression",
    "evaluate",
]


SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("abs", "min", "max", "len", "sum", "any", "all", "sorted", "set", "range",
                 "int", "bool")
}
_BLOCKED_ATTRS = frozenset({"format", "format_map", "mro"})


class ExpressionError(ModelcheckError):
    """A ``trace eval`` expression is malformed or failed on a state."""


def compile_expression(expr: str, variables: Sequence[str]) -> Any:
    """Compile ``expr`` for :func:`evaluate`; names must be trace variables or safe builtins.

    Raises :class:`ExpressionError` for syntax errors, unknown names and access to
    ``_private`` attributes. (This keeps mistakes and accidents out; it is not a
    security sandbox for hostile input.)
    """
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        caret = " " * max(0, (e.offset or 1) - 1) + "^"
        raise ExpressionError(f"the expression is not valid Python: {e.msg}:\n  {expr.strip()}"
                              f"\n  {caret}") from None
    bound: set[str] = set()
    loaded: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_")
                                                or node.attr in _BLOCKED_ATTRS):
            raise ExpressionError(f"attribute .{node.attr} is not allowed in trace "
                                  "expressions.")
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            else:
                loaded.append(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    known = set(variables) | set(SAFE_BUILTINS) | {"True", "False", "None"}
    for name in loaded:
        if name.startswith("__"):
            raise ExpressionError(f"name {name} is not allowed in trace expressions.")
        if name not in known and name not in bound:
            raise ExpressionError(
                f"unknown name {name!r} in the expression; the trace's variables are: "
                f"{', '.join(variables)}; available functions: {', '.join(SAFE_BUILTINS)}."
            )
    return compile(tree, "<expression>", "eval")


def evaluate(trace: Trace, expr: str) -> list[tuple[int, str, Any]]:
    """``(state number, action label, value)`` of ``expr`` in every state of ``trace``."""
    code = compile_expression(expr, trace.vars)
    out: list[tuple[int, str, Any]] = []
    for i, st in enumerate(trace.steps):
        ns: dict[str, Any] = {"__builtins__": SAFE_BUILTINS}
        ns.update({v: _eval_value(st.state[v]) for v in trace.vars})
        label = "init" if i == 0 else (action_label(st.action, st.params)
                                       if st.action else "<unnamed action>")
        try:
            value = eval(code, ns)  # noqa: S307 - restricted namespace, checked names
        except Exception as e:  # noqa: BLE001 - reported as one message
            raise ExpressionError(
                f"evaluating {expr.strip()!r} in state {i + 1} ({label}) failed with "
                f"{type(e).__name__}: {e}" + _eval_hint(e)
            ) from None
        out.append((i + 1, label, value))
    return out


def _eval_value(v: Any) -> Any:
    if isinstance(v, Mapping) and not isinstance(v, Record):
        return {k: _eval_value(x) for k, x in v.items()}
    return v


def _eval_hint(e: Exception) -> str:
    if isinstance(e, KeyError):
        return " (arrays are maps indexed by ints, e.g. offset[1])."
    if isinstance(e, TypeError) and "not subscriptable" in str(e):
        return " (only arrays can be indexed)."
    return "."
