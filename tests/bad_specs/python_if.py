"""Uses Python `if` on a state value: fine on one state, impossible on a batch."""

from modelcheck import Int, Spec, action


class PythonIf(Spec):
    check_deadlock = False
    x = Int(0, 3)

    @action
    def Inc(self, s, t):
        if s.x < 3:
            t.x = s.x + 1
        return s.x < 3
