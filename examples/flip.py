"""Fairness in two actions on a bit: weak fairness of an action enabled every other
state is not enough to take it; strong fairness is (docs/liveness.md).

    modelcheck check examples/flip.py:FlipWeakSet     # violation of SetWeak, 3-state trace
    modelcheck check examples/flip.py:FlipStrongSet   # violation of SetWeak, 3-state trace
"""

from __future__ import annotations

from modelcheck import Bool, Int, Spec, action, eventually


class Flip(Spec):
    """Two actions on a bit; Set is strongly fair under one property, weakly under none."""

    check_deadlock = False
    b = Bool()
    n = Int(0, 1)

    @action(fair="weak")                # every instance weakly fair: \A p: WF_vars(A(p))
    def Toggle(self, s, t):
        t.b = ~s.b
        return s.n == 0

    @action
    def Set(self, s, t):
        t.n = 1
        return s.b

    @eventually(fairness=("Toggle",))   # <>P under WF(Toggle) only
    def SetWeak(self, s):
        return s.n == 1

    @eventually                         # <>P under all the spec's fairness
    def SetStrong(self, s):
        return s.n == 1


class FlipWeakSet(Flip):
    """Set weakly fair: it is enabled every other state, never continuously."""

    fairness = {"Set": "weak"}          # by action name or instance label ("Set", "A(p=1)")


class FlipStrongSet(Flip):
    """Set strongly fair: enabled infinitely often, so it is taken."""

    fairness = {"Set": "strong"}
