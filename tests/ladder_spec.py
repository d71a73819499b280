"""A purpose-made spec for checkpoint tests: many BFS levels of a few thousand states.

``x`` climbs one step per level up to ``L`` (so the run has ``L + 1`` levels); ``y`` and
``z`` move freely within ``0..M``. The invariant ``NotTop`` fails only at the last
level (``x == L`` with ``y == z == 0`` is reachable only there), so a run that is killed
midway and resumed must still find it with the same shortest trace.
"""

from __future__ import annotations

from typing import Any

from modelcheck import Const, Int, Spec, action, invariant, where


class Ladder(Spec):
    """``L + 1`` levels of up to ``(M + 1) ** 2`` states each."""

    L = Const(60, min=1, doc="levels after the initial one")
    M = Const(30, min=1, doc="bound of y and z")
    x = Int(0, L)
    y = Int(0, M)
    z = Int(0, M)
    check_deadlock = False

    @action
    def Climb(self, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        t.y = where(s.y < self.M, s.y + 1, 0)
        return s.x < self.L

    @action
    def ClimbZ(self, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        t.z = where(s.z < self.M, s.z + 1, 0)
        return s.x < self.L

    @action
    def Swap(self, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        t.y = s.z
        t.z = s.y
        return s.x < self.L

    @invariant
    def NotTop(self, s: Any) -> Any:
        return ~((s.x == self.L) & (s.y == 0) & (s.z == 0) & (self.L > 2))

    @invariant
    def InRange(self, s: Any) -> Any:
        return (s.y <= self.M) & (s.z <= self.M)
