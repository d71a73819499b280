"""``modelcheck trace eval``: a Python expression over every state of a trace.

This module owns :func:`evaluate` and :func:`compile_expression`: the expression
may use the trace's variables and a few safe builtins (:data:`SAFE_BUILTINS`), no
``_private`` attributes; mistakes are :class:`ExpressionError`. This keeps
accidents out; it is not a security sandbox for hostile input.

Evaluation is bounded (:class:`Limits`): :func:`evaluate` runs the expression in a
forked child process whose address space is capped (``RLIMIT_AS``: what the process
already maps plus ``Limits.memory`` bytes) and which is killed after
``Limits.seconds`` of wall-clock time, so ``[x for x in range(10**9)]`` or an endless
computation is one :class:`EvaluationLimitError`, not an OOM kill or a hung command.
Everything that evaluates user expressions (``trace eval``, a web explorer) goes
through :func:`evaluate`.
"""

from __future__ import annotations

import ast
import builtins
import multiprocessing
import multiprocessing.reduction
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import codec
from ..errors import ModelcheckError
from .model import Trace
from .render import action_label

__all__ = [
    "DEFAULT_LIMITS",
    "EvaluationLimitError",
    "ExpressionError",
    "Limits",
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


class EvaluationLimitError(ExpressionError):
    """Evaluating an expression took too long or needed too much memory."""


@dataclass(frozen=True)
class Limits:
    """Bounds of one :func:`evaluate` call: wall-clock ``seconds`` for the whole trace
    and ``memory`` bytes the evaluation may allocate beyond what the process holds."""

    seconds: float = 10.0
    memory: int = 512 * 2**20


DEFAULT_LIMITS = Limits()


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
    except (RecursionError, MemoryError):
        raise _too_deep(expr, None) from None
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        raise _too_deep(expr, depth)
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
    try:
        return compile(tree, "<expression>", "eval")
    except (RecursionError, MemoryError):  # pragma: no cover - MAX_DEPTH keeps it out
        raise _too_deep(expr, depth) from None


#: the deepest expression tree accepted (Python's compiler gives up at about 1,000
#: levels, on a thread's smaller stack sooner)
MAX_DEPTH = 200


def _depth(tree: ast.AST) -> int:
    """The depth of ``tree`` (counted without recursion, whatever the depth)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _too_deep(expr: str, depth: int | None) -> ExpressionError:
    text = expr.strip()
    short = text if len(text) <= 60 else text[:57] + "..."
    nested = (f"nested {depth} levels deep" if depth is not None
              else "nested too deeply to be parsed")
    return ExpressionError(
        f"the expression {short!r} ({len(text):,} characters) is {nested}; at most "
        f"{MAX_DEPTH} levels are evaluated. A long chain such as a + b + c + ... nests one "
        "level per operator: write sum([a, b, c, ...]) or all([...]) instead, or split "
        "the expression.")


def evaluate(trace: Trace, expr: str, *, limits: Limits | None = DEFAULT_LIMITS
             ) -> list[tuple[int, str, Any]]:
    """``(state number, action label, value)`` of ``expr`` in every state of ``trace``.

    With ``limits`` (the default: :data:`DEFAULT_LIMITS`) the expression runs in a
    child process bounded in time and memory, and exceeding a bound raises
    :class:`EvaluationLimitError`; ``limits=None`` evaluates here, unbounded (for
    trusted callers only). Where ``fork`` is not available (Windows) it runs here,
    unbounded.
    """
    code = compile_expression(expr, trace.vars)
    if limits is None or "fork" not in multiprocessing.get_all_start_methods():
        return _evaluate_here(trace, code, expr)
    return _evaluate_bounded(trace, code, expr, limits)


def _evaluate_here(trace: Trace, code: Any, expr: str) -> list[tuple[int, str, Any]]:
    out: list[tuple[int, str, Any]] = []
    for i, st in enumerate(trace.steps):
        ns: dict[str, Any] = {"__builtins__": SAFE_BUILTINS}
        ns.update({v: _eval_value(st.state[v]) for v in trace.vars})
        label = "init" if i == 0 else (action_label(st.action, st.params)
                                       if st.action else "<unnamed action>")
        try:
            value = eval(code, ns)  # noqa: S307 - restricted namespace, checked names
        except MemoryError:
            raise
        except Exception as e:  # noqa: BLE001 - reported as one message
            raise ExpressionError(
                f"evaluating {expr.strip()!r} in state {i + 1} ({label}) failed with "
                f"{type(e).__name__}: {e}" + _eval_hint(e)
            ) from None
        _check_value(value, expr, i + 1, label)
        out.append((i + 1, label, value))
    return out


def _check_value(value: Any, expr: str, state: int, label: str) -> None:
    """Raise :class:`ExpressionError` unless ``value`` is data that can be shown and
    sent back from the child process (not a function, a generator, ...)."""
    try:
        # what the child's pipe does with it (this module never loads a pickle)
        multiprocessing.reduction.ForkingPickler.dumps(value)
        return
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001, S110 - PicklingError, TypeError, RecursionError...
        pass
    bad = _culprit(value)
    inside = "" if bad is value else f" holding a {type(bad).__name__}"
    raise ExpressionError(
        f"evaluating {expr.strip()!r} in state {state} ({label}) gave a "
        f"{type(value).__name__}{inside}, which is not a value: an expression must give "
        "a number, a string, a boolean, None, or a set, list, tuple or dict of them (call "
        "a function, turn a generator into a list).")


def _culprit(value: Any) -> Any:
    """The first element of ``value`` (itself, or inside its containers, searched
    without recursion) that is not plain data; ``value`` when there is none."""
    plain = (int, float, str, bytes, bool, type(None), range)
    todo = [value]
    seen = 0
    while todo and seen < 100_000:
        v = todo.pop()
        seen += 1
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list | tuple | set | frozenset):
            todo.extend(v)
        elif not isinstance(v, plain):
            return v
    return value


def _mib(n: int) -> str:
    """``n`` bytes as the limit was likely given: ``64 MiB``, ``1.5 MiB``, ``900 B``."""
    from ..budget import format_size

    return f"{n >> 20:,} MiB" if n % 2**20 == 0 else format_size(n)


def _evaluate_bounded(trace: Trace, code: Any, expr: str, limits: Limits
                      ) -> list[tuple[int, str, Any]]:
    import psutil

    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    cap = psutil.Process().memory_info().vms + limits.memory
    child = ctx.Process(target=_child, args=(send, trace, code, expr, cap), daemon=True)
    child.start()
    send.close()
    too_much = EvaluationLimitError(
        f"evaluating {expr.strip()!r} needed more than {_mib(limits.memory)} of memory "
        "and was stopped (--memory-limit to allow more).")
    try:
        if not recv.poll(limits.seconds):
            raise EvaluationLimitError(
                f"evaluating {expr.strip()!r} took longer than {limits.seconds:g} s and was "
                "stopped (--timeout to allow more).")
        try:
            kind, payload = recv.recv()
        except EOFError:  # the child died without a word: killed by the OS or a signal
            child.join()
            raise too_much from None
    finally:
        if child.is_alive():
            os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
        recv.close()
    if kind == "ok":
        return payload  # type: ignore[no-any-return]
    if kind == "memory":
        raise too_much
    raise ExpressionError(payload)


def _child(send: Any, trace: Trace, code: Any, expr: str, cap: int) -> None:
    """In the forked child: cap the address space, evaluate, send the outcome."""
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        try:
            send.send(("ok", _evaluate_here(trace, code, expr)))
        except MemoryError:
            send.send(("memory", None))
        except ExpressionError as e:
            send.send(("error", str(e)))
        except Exception as e:  # noqa: BLE001 - e.g. a value that cannot be sent back
            send.send(("error", f"evaluating {expr.strip()!r} failed: "
                                f"{type(e).__name__}: {e}"))
    finally:
        send.close()
        os._exit(0)  # no atexit handlers, no flushing of the parent's buffers


def _eval_value(v: Any) -> Any:
    if codec.kind(v) is codec.Kind.MAP:
        return {k: _eval_value(x) for k, x in v.items()}
    return v


def _eval_hint(e: Exception) -> str:
    if isinstance(e, KeyError):
        return " (arrays are maps indexed by ints, e.g. offset[1])."
    if isinstance(e, TypeError) and "not subscriptable" in str(e):
        return " (only arrays can be indexed)."
    return "."
