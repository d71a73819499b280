"""The smallest spec: a bounded counter that two processes increment.

Read this first. It shows constants, an index set, typed variables, a
parameterised action (its guard is the return value, its effects are
assignments to ``t``), an invariant, and a deliberately broken variant.

    modelcheck check examples/counter.py              # ok: 16 states
    modelcheck check examples/counter.py:CounterBug   # violation, 3-state trace
"""

from __future__ import annotations

from modelcheck import Array, Const, Ids, Int, Spec, action, invariant


class Counter(Spec):
    """Two processes each count up to Max; ``total`` tracks the sum."""

    check_deadlock = False  # when both are done nothing is enabled: that is fine

    Max = Const(3, min=0, doc="how far each process counts")
    Procs = Ids(1, 2)

    count = Array(Procs, Int(0, Max))
    total = Int(0, 2 * Max)

    @action(p=Procs)
    def Step(self, s, t, p):
        """Process p counts one more."""
        t.count[p] = s.count[p] + 1
        t.total = s.total + 1
        return s.count[p] < self.Max

    @invariant
    def TotalIsSum(self, s):
        """``total`` is always the sum of the counts."""
        return s.total == s.count[1] + s.count[2]


class CounterBug(Counter):
    """Process 2 forgets to update the total once it passes 1."""

    @action(p=Counter.Procs)
    def Step(self, s, t, p):
        t.count[p] = s.count[p] + 1
        if p == 1:
            t.total = s.total + 1
        else:
            t.total = s.total + (s.count[p] < 1)
        return s.count[p] < self.Max
