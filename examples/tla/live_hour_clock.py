"""LiveHourClock (tlaplus/Examples ``specifications/SpecifyingSystems/Liveness/
LiveHourClock.tla``, Lamport's *Specifying Systems* §8), as ``LiveHourClock.cfg`` checks
it: ``LSpec == HC /\\ WF_hr(HCnxt)`` implies AlwaysTick, AllTimes and TypeInvariance.
The manifest says TLC finds 12 distinct states, depth 1, and that everything holds.

* ``HCini == hr \\in 1..12`` (twelve initial states), ``HCnxt == hr' = IF hr # 12 THEN
  hr + 1 ELSE 1``, weakly fair.
* ``TypeInvariance == []HCini`` is an invariant (``hr`` is typed ``1..12``; checked
  anyway).
* ``AllTimes == \\A n \\in 1..12: []<>(hr = n)``: one ``[]<>`` property per hour,
  ``AllTimes<n>``.
* ``AlwaysTick == []<><<HCnxt>>_hr`` (infinitely many ticks) is a property of steps:
  ``angle(HCnxt, s, t, "hr")`` with ``HCnxt`` the predicate of a step (``hr'`` is the
  next hour).

:class:`HourClockNoFairness` is ``HC`` alone (no ``WF_hr(HCnxt)``): the clock may
stop, and every property but TypeInvariance fails with a one-state lasso.
"""

from __future__ import annotations

from typing import Any

from modelcheck import (
    Int,
    Spec,
    action,
    always_eventually,
    angle,
    init_product,
    invariant,
    where,
)


def _all_times(n: int) -> Any:
    def prop(self: Any, s: Any) -> Any:
        return s.hr == n

    prop.__name__ = f"AllTimes{n}"
    return always_eventually(prop)


class LiveHourClock(Spec):
    """The hour clock with weak fairness on its tick."""

    check_deadlock = False
    hr = Int(1, 12)

    fairness = {"HCnxt": "weak"}

    def init_states(self) -> Any:
        return init_product(hr=range(1, 13))

    @action
    def HCnxt(self, s, t):
        t.hr = where(s.hr != 12, s.hr + 1, 1)
        return s.hr >= 1

    @invariant
    def TypeInvariance(self, s):
        return (s.hr >= 1) & (s.hr <= 12)

    @always_eventually
    def AlwaysTick(self, s, t):
        """``[]<><<HCnxt>>_hr``."""
        return angle(t.hr == where(s.hr != 12, s.hr + 1, 1), s, t, "hr")

    locals().update({f"AllTimes{n}": _all_times(n) for n in range(1, 13)})


class HourClockNoFairness(LiveHourClock):
    """``HC`` without ``WF_hr(HCnxt)``."""

    fairness: dict[str, str] = {}
