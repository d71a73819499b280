"""An assignment outside the declared domain."""

from modelcheck import Int, Spec, action


class OutOfDomain(Spec):
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x >= 0
