"""A variable whose range does not fit 64-bit values (refused in one paragraph)."""

from modelcheck import Int, Spec, action


class Huge(Spec):
    v = Int(0, 2**63 - 1)

    @action
    def Inc(self, s, t):
        t.v = s.v + 1
        return s.v < 3
