"""An action that forgets to return its guard."""

from modelcheck import Int, Spec, action


class NoReturn(Spec):
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
