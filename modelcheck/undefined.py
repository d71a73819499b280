"""The undefined values met while evaluating an action or a predicate (a CHOOSE that
found nothing, a ``max_of`` of an empty set), and the booleans of spec expressions.

The kernel evaluates the spec's code inside :class:`collect_undefined`: an expression
with no value in some rows records them here (the *sink*, one per action instance and
batch) rather than raising, and the operators that select rows (``where``'s arms,
``implies``, a set's members, a branch) narrow the records to the rows that use them;
the kernel then raises those that fall on enabled rows. The expressions of
:mod:`modelcheck.expr` and the set values of :mod:`modelcheck.types.sets` (``filter``)
both add to and narrow the sink, so it lives below both: this module imports neither.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import numpy as np

from .errors import SpecEvaluationError

__all__ = ["bool_hint", "collect_undefined", "undefined_mark", "pin_undefined"]


# ------------------------------------------------------------------ booleans
def bool_hint(value: Any) -> str:
    """A sentence explaining why ``value``, an integer where a boolean belongs, is probably
    a mistake: ``~`` on a Python bool makes -1 or -2, and ``&``/``|`` then keep integers."""
    try:
        arr = np.asarray(value)
    except Exception:
        return ""
    if arr.dtype.kind not in "iu" or arr.size == 0:
        return ""
    tilde = ("`~` on a Python bool is integer negation (~True == -2, ~False == -1): "
             "comparisons of action parameters or constants (p != q) are Python bools, "
             "not numpy ones. Write not_(p == q) or p != q instead of ~(p == q).")
    if np.isin(arr, (-1, -2)).any():
        return " " + tilde
    return (" Either an integer state value is used as a condition (compare it: "
            "s.x != 0), or " + tilde)


def _bool(x: Any, what: str) -> Any:
    """``x`` as a numpy boolean (scalar or column), or a spec error saying why not."""
    t = type(x)
    if t is np.ndarray:
        if x.dtype == np.bool_:
            return x
    elif t is np.bool_:
        return x
    if isinstance(x, (bool, np.bool_)):
        return np.bool_(x)
    if isinstance(x, np.ndarray) and x.dtype == np.bool_:
        return x
    r = repr(x)
    r = r if len(r) <= 60 else r[:57] + "..."
    raise SpecEvaluationError(
        f"{what} must be a boolean, got {r} of type {getattr(x, 'dtype', type(x).__name__)}."
        + bool_hint(x)
    )


# -------------------------------------------------- undefined values (CHOOSE)
class _Undefined:
    """An undefined value met while evaluating: the rows where it has no value (a
    boolean, a column for a batch), the spec's line and the message, and the value
    standing for it (a fresh object, so :func:`~modelcheck.expr.where` can recognise
    it as an arm; None when it cannot be told apart, as booleans). Iterates as
    ``(mask, where, message)``."""

    __slots__ = ("mask", "where", "message", "value", "pinned")

    def __init__(self, mask: Any, where: str, message: str, value: Any) -> None:
        self.mask, self.where, self.message, self.value = mask, where, message, value
        self.pinned = False

    def __iter__(self) -> Any:
        return iter((self.mask, self.where, self.message))

    def narrow(self, keep: Any, value: Any) -> None:
        """Keep only the rows of ``keep`` (the rows where the value is used), now standing
        for ``value``; nothing once pinned (:func:`~modelcheck.expr.pin_undefined`): the
        value may have reached the next state in the other rows too."""
        if self.pinned:
            return
        self.mask = self.mask & keep
        self.value = value if np.any(self.mask) else None


class _Sink(list):  # type: ignore[type-arg]
    """The undefined values collected so far; the first ``pinned`` of them are pinned."""

    __slots__ = ("pinned",)

    def __init__(self) -> None:
        super().__init__()
        self.pinned = 0


_sink: ContextVar[_Sink | None] = ContextVar("modelcheck_undefined", default=None)


def pin_undefined() -> None:
    """Pin every undefined value collected so far: a write to the next state (or a
    branch condition) may hold a value computed from one, in any of its rows, so no
    later ``where``, function arm, ``implies`` or set member may discharge its rows.
    (A helper can compute ``t.y = v + 1`` from its CHOOSE ``v`` and then return ``v``
    as a temporary, which ``where`` would otherwise discharge where it is not
    selected, leaving ``t.y`` computed from no value: the rows stay errors instead.)"""
    sink = _sink.get()
    if sink is not None:
        n = len(sink)
        if sink.pinned < n:
            for u in sink[sink.pinned:]:
                u.pinned = True
            sink.pinned = n


def undefined_mark() -> int:
    """How many undefined values have been collected so far (0 outside a collection):
    a branch of an action notes the marks around its block, a set's member the marks
    around its test (:func:`_narrow_since`)."""
    sink = _sink.get()
    return len(sink) if sink is not None else 0


class collect_undefined:  # noqa: N801 - used as a function: ``with collect_undefined()``
    """Collect, rather than raise, the undefined values of the code run inside: a list
    of records that iterate as ``(rows mask, spec file:line, message)``, the masks
    narrowed by the ``where`` arms and set members that do not select them. The kernel
    raises those that fall on enabled rows (on any row, for a predicate). (A class
    rather than a generator context manager: the kernel enters one per action instance
    and batch.)"""

    __slots__ = ("found", "token")

    def __enter__(self) -> list[_Undefined]:
        self.found: list[_Undefined] = _Sink()
        self.token = _sink.set(self.found)
        return self.found

    def __exit__(self, *exc: object) -> None:
        _sink.reset(self.token)


def _narrow_since(mark: int, inside: Any) -> None:
    """Narrow the undefined values collected since ``mark`` to the rows ``inside``."""
    sink = _sink.get()
    if sink is not None:
        for u in sink[mark:]:
            u.narrow(inside, u.value)
