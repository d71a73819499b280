"""An action that raises once x reaches 2."""

from modelcheck import Const, Int, Spec, action


class RaisesInAction(Spec):
    Max = Const(4)
    x = Int(0, Max)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1 + _explode(s.x)
        return s.x < self.Max


def _explode(x):
    import numpy as np

    if np.any(x == 2):
        raise ValueError("the broker table is corrupt")
    return 0
