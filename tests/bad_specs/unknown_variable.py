"""Reads a variable that is not declared."""

from modelcheck import Int, Spec, action


class UnknownVariable(Spec):
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.y + 1
        return s.x < 3
