"""An action whose signature does not match its parameters."""

from modelcheck import Ids, Int, Spec, action


class BadSignature(Spec):
    Procs = Ids(1, 2)
    x = Int(0, 3)

    @action(p=Procs)
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 3
