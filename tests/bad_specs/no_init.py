"""A spec whose init_states yields nothing."""

from modelcheck import Int, Spec, action


class NoInit(Spec):
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3

    def init_states(self):
        return iter(())
