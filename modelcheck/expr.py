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

__all__ = ["where", "any_of", "all_of", "implies", "has", "with_", "without", "count"]


def where(cond: Any, a: Any, b: Any) -> Any:
    """``IF cond THEN a ELSE b``, element-wise on batches."""
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


def has(mask: Any, bit: int) -> Any:
    """Whether bit ``bit`` is set in a set-valued variable's mask (``SetOf`` stores id ``i``
    at bit ``i - lo``)."""
    return (mask >> bit) & 1 == 1


def with_(mask: Any, bit: int) -> Any:
    """The mask with bit ``bit`` set."""
    return mask | (1 << bit)


def without(mask: Any, bit: int) -> Any:
    """The mask with bit ``bit`` cleared."""
    return mask & ~(1 << bit)


def count(mask: Any, width: int) -> Any:
    """Number of set bits among the low ``width`` bits."""
    acc: Any = 0
    for i in range(width):
        acc = acc + ((mask >> i) & 1)
    return acc
