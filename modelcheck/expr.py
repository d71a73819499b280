"""Expression helpers that mean the same on one state and on a batch of states.

Spec code is evaluated two ways: on one state, where every variable is a numpy
scalar, and on a batch, where every variable is a numpy column. Operators
``& | ~ == != < <= > >= + - *`` already agree on both; these helpers cover the
rest. Do not use Python's ``and``/``or``/``not``/``if`` on state values: they
cannot work on a batch, and modelcheck reports such a use as a spec error.

For example::

    eligible = (s.regEpoch[c] != 0) & ~s.fenced[c]
    t.leader[p] = where(any_of(self.Brokers, lambda c: eligible_fn(c)), c, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .errors import SpecEvaluationError
from .values import SetValue, Value

__all__ = ["where", "any_of", "all_of", "implies", "has", "with_", "without", "count"]


def where(cond: Any, a: Any, b: Any) -> Any:
    """``IF cond THEN a ELSE b``, element-wise on batches (also for set, record, sequence
    and bag values)."""
    if isinstance(a, Value):
        return a.select(cond, b)
    if isinstance(b, Value):
        return b.select(cond, a, swap=True)
    if isinstance(cond, np.ndarray) or isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.where(cond, a, b)
    return a if cond else b


def any_of(domain: Iterable[Any], fn: Callable[[Any], Any]) -> Any:
    """``\\E x \\in domain: fn(x)``."""
    acc: Any = np.False_
    for x in domain:
        acc = acc | fn(x)
    return acc


def all_of(domain: Iterable[Any], fn: Callable[[Any], Any]) -> Any:
    """``\\A x \\in domain: fn(x)``."""
    acc: Any = np.True_
    for x in domain:
        acc = acc & fn(x)
    return acc


def implies(a: Any, b: Any) -> Any:
    """``a => b``."""
    return ~a | b


def _set(S: Any, fn: str) -> SetValue:
    if isinstance(S, SetValue):
        return S
    raise SpecEvaluationError(
        f"{fn}() takes a set value (a SetOf variable or an expression of sets), got "
        f"{type(S).__name__}; SetOf sets hold element values, not bit positions")


def has(S: Any, x: Any) -> Any:
    """``x \\in S`` for a set value ``S`` (``S.has(x)``)."""
    return _set(S, "has").has(x)


def with_(S: Any, x: Any) -> Any:
    """``S \\cup {x}`` (``S.with_(x)``)."""
    return _set(S, "with_").with_(x)


def without(S: Any, x: Any) -> Any:
    """``S \\ {x}`` (``S.without(x)``)."""
    return _set(S, "without").without(x)


def count(S: Any) -> Any:
    """``Cardinality(S)`` (``S.size()``)."""
    return _set(S, "count").size()
