"""An invariant that raises."""

from modelcheck import Int, Spec, action, invariant


class RaisesInInvariant(Spec):
    check_deadlock = False
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    @invariant
    def Broken(self, s):
        return s.x < {"a": 1}["b"]
