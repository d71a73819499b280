"""A guard that returns an integer."""

from modelcheck import Int, Spec, action


class NonBoolGuard(Spec):
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x + 1
