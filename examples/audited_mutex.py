"""Peterson's algorithm with an audit trail, and TLA+'s ``VIEW`` to leave it out.

``entries`` counts the entries to the critical section (up to 7) and ``last`` is the
process that entered last: history for the traces, which no action reads. Every
state of Peterson's algorithm comes in several copies that differ only in that
history; the spec's ``view`` (the variables that make a state distinct) counts
each once, so the check explores exactly Peterson's states (see ``docs/view.md``).

    modelcheck check examples/audited_mutex.py              # the view: Peterson's states
    modelcheck check examples/audited_mutex.py --no-view    # every history too
"""

from __future__ import annotations

from examples.mutex import Pc, Peterson
from modelcheck import Int, action, where


class AuditedPeterson(Peterson):
    """Peterson's algorithm, recording who entered the critical section and how often."""

    view = ("pc", "flag", "turn")

    entries = Int(0, 7)
    last = Int(-1, 1)

    def init_states(self):
        yield {"last": -1}

    @action(p=Peterson.Procs)
    def Enter(self, s, t, p):
        t.pc[p] = Pc.CRITICAL
        t.entries = where(s.entries < 7, s.entries + 1, 7)
        t.last = p
        return (s.pc[p] == Pc.WAITING) & (~s.flag[1 - p] | (s.turn == p))
