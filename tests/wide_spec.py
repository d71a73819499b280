"""A purpose-made spec for budget tests: a state space that widens ~190-fold a level.

Three 20-bit counters; ``Step(i, d)`` scrambles counter ``i`` with ``d``. Level 1 has
192 states, level 2 about 36,000, level 3 about 7 million: a run needs hundreds of
megabytes within seconds, which is what a memory budget must stop cleanly.
"""

from __future__ import annotations

from typing import Any

from modelcheck import Int, Spec, action, where

MOD = 1 << 20


class Wide(Spec):
    """Three scrambled 20-bit counters."""

    x = Int(0, MOD - 1)
    y = Int(0, MOD - 1)
    z = Int(0, MOD - 1)
    check_deadlock = False

    @action(i=range(3), d=range(1, 65))
    def Step(self, s: Any, t: Any, i: int, d: int) -> Any:
        if i == 0:
            t.x = (s.x * 31 + d) % MOD
        elif i == 1:
            t.y = (s.y * 37 + d) % MOD
        else:
            t.z = (s.z * 41 + d) % MOD
        return where(s.x >= 0, True, False)
