"""Errors raised by modelcheck, each carrying one readable paragraph for the user.

Every error a user can cause (a bad spec, a bad option, a bad file) is a
:class:`ModelcheckError`. The command line prints ``str(error)`` and exits with
code 2; it never shows a raw traceback for these.
"""

from __future__ import annotations

import inspect
import os
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import Any

__all__ = [
    "ModelcheckError",
    "SpecDefinitionError",
    "SpecLoadError",
    "ConstantError",
    "SpecEvaluationError",
    "UsageError",
    "source_location",
    "user_frame_location",
]


class ModelcheckError(Exception):
    """Base class of every user-facing error; ``str()`` is the whole message."""


class SpecDefinitionError(ModelcheckError):
    """The spec class itself is malformed (found when it is defined or bound)."""


class SpecLoadError(ModelcheckError):
    """The spec file, module or class name could not be found or imported."""


class ConstantError(ModelcheckError):
    """An unknown constant, or a constant value of the wrong type or range."""


class UsageError(ModelcheckError):
    """A command-line option or argument is wrong."""


class SpecEvaluationError(ModelcheckError):
    """Evaluating a spec's action, invariant or property failed on a state.

    Attributes name what failed so that tools can show it without parsing text.
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        what: str | None = None,
        state: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.where = where
        self.what = what
        self.state = state


def source_location(fn: Callable[..., Any]) -> str:
    """``file:line`` of a function's definition, or ``<unknown>``."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{_short(code.co_filename)}:{code.co_firstlineno}"


def user_frame_location(tb: TracebackType | None, fn: Callable[..., Any]) -> str:
    """The deepest traceback frame inside ``fn``'s source file, as ``file:line``.

    Falls back to ``fn``'s definition line when the traceback never enters its file.
    """
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    target = code.co_filename if code is not None else None
    best: str | None = None
    for frame, lineno in traceback.walk_tb(tb):
        if target is not None and frame.f_code.co_filename == target:
            best = f"{_short(target)}:{lineno}"
    return best or source_location(fn)


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path
