"""Initial-state properties (``@initially``): TLA+'s state predicate as a ``PROPERTY``,
checked on the initial states only (see docs/liveness.md).

    modelcheck check examples/initial_counter.py:Counter      # ok: 4 states
    modelcheck check examples/initial_counter.py:CounterZero  # violation of StartsZero

``x`` counts up from 0 or 1 (``Init == x \\in {0, 1}``). TLC's ``PROPERTY StartsLow``
(``StartsLow == x <= 1``) holds, though ``x`` reaches 3; ``PROPERTY StartsZero``
(``x = 0``) is violated by the initial state ``x = 1``.
"""

from __future__ import annotations

from modelcheck import Int, Spec, action, initially, invariant

__all__ = ["Counter", "CounterZero"]


class Counter(Spec):
    """``Init == x \\in {0, 1}``, ``Next == x < 3 /\\ x' = x + 1``."""

    check_deadlock = False
    x = Int(0, 3)

    def init_states(self):
        yield {"x": 0}
        yield {"x": 1}

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @initially
    def StartsLow(self, s):
        """``x <= 1`` in the initial state"""
        return s.x <= 1

    @invariant
    def Bounded(self, s):
        return s.x <= 3


class CounterZero(Counter):
    """With ``PROPERTY StartsZero``."""

    @initially
    def StartsZero(self, s):
        """``x = 0`` in the initial state"""
        return s.x == 0
