"""``~`` on a comparison of parameters (a Python bool) inside a guard."""

from modelcheck import Array, Ids, Int, Spec, action


class TildeOnParam(Spec):
    Procs = Ids(1, 2)
    x = Array(Procs, Int(0, 2))

    @action(p=Procs, q=Procs)
    def Move(self, s, t, p, q):
        t.x[q] = s.x[p]
        return ~(p == q) & (s.x[p] < 2)
