"""A wave of flags: many action instances, almost none of them enabled.

``N`` cells are set one after another, each once its predecessor is set
(``Set(i)``); when the last cell is set it acknowledges the wave twice
(``Ack(i)``, enabled only for the last cell). The state space is a chain of
exactly ``N + 3`` states, one per level (depth ``N + 2``), explored through
``2 N`` action instances of which at most one is enabled in any state.

It measures what a level costs when the work is tiny and the action families are
large: the cost should follow the enabled transitions, not the ``2 N`` instances.

    PYTHONPATH=. modelcheck check benchmarks/wave.py:Wave
    PYTHONPATH=. modelcheck check benchmarks/wave.py:Wave --const N=300

Both actions are written so that they evaluate the same with an int parameter and
with an array of parameter values (no Python ``if`` on the parameter, and the
predecessor's index kept inside the index set with ``where``), so the checker can
evaluate a whole family over a batch at once.
"""

from __future__ import annotations

from modelcheck import Array, Bool, Const, Ids, Int, Spec, action, invariant, where

__all__ = ["Wave", "expected_states"]


def expected_states(n: int) -> tuple[int, int]:
    """(distinct states, depth) of ``Wave(N=n)``."""
    return n + 3, n + 2


class Wave(Spec):
    """Flags set in order along ``N`` cells, then two acknowledgements by the last cell."""

    check_deadlock = False  # the last state (every flag set, acknowledged twice) is final

    N = Const(3000, min=1, doc="number of cells")
    Cells = Ids(0, N - 1)
    flag = Array(Cells, Bool())
    acks = Int(0, 2)

    @action(i=Cells)
    def Set(self, s, t, i):
        """Cell ``i`` sets its flag once its predecessor's flag is set (cell 0: at once)."""
        t.flag[i] = True
        prev = s.flag[where(i > 0, i - 1, i)]
        return ~s.flag[i] & ((i == 0) | prev)

    @action(i=Cells)
    def Ack(self, s, t, i):
        """The last cell, once set, acknowledges the wave (at most twice)."""
        t.acks = s.acks + 1
        return (i == self.N - 1) & s.flag[i] & (s.acks < 2)

    @invariant
    def AckedAfterWave(self, s):
        """Acknowledgements come only after the last flag is set."""
        return (s.acks == 0) | s.flag[self.N - 1]
