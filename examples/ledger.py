"""A ledger of transfers: a set of records over a large element type.

Clerks post transfers ``[clerk, from, to, amount]`` between 100 accounts (2 * 100 *
100 * 100 = 2,000,000 possible transfers) into a ledger that holds at most ``Cap`` of
them, and an auditor settles the largest. A bit-vector ``SetOf`` would need a bit per
possible transfer (and is refused beyond 4,096 elements); ``SetOf(Transfer,
max_size=Cap)`` stores ``Cap`` sorted transfer codes of 21 bits each.

``modelcheck check examples/ledger.py:Ledger``: 279 distinct states, depth 5;
``LedgerOverflow`` forgets the capacity guard, which is a spec error naming the
variable and its ``max_size``.
"""

from __future__ import annotations

from modelcheck import Const, Ids, Int, Record, SetOf, Spec, action, choose, invariant, max_of

__all__ = ["Transfer", "Ledger", "LedgerOverflow"]

Clerks = Ids(1, 2)
Account = Int(0, 99)
Transfer = Record(clerk=Clerks, src=Account, dst=Account, amt=Int(0, 99))


class Ledger(Spec):
    """Post transfers into a ledger of at most ``Cap`` entries; settle the largest."""

    check_deadlock = False
    Cap = Const(3, min=1)
    Clerks = Clerks
    ledger = SetOf(Transfer, max_size=Cap)
    settled = Int(0, 99)

    @action(c=Clerks, src=(0, 42), amt=(10, 90))
    def Post(self, s, t, c, src, amt):
        t.ledger = s.ledger.with_({"clerk": c, "src": src, "dst": 99 - src, "amt": amt})
        return s.ledger.size() < self.Cap

    @action
    def Settle(self, s, t):
        top = max_of(s.ledger, lambda e: e.amt)
        e = choose(s.ledger, lambda e: e.amt == top)
        t.settled = e.amt
        t.ledger = s.ledger.without(e)
        return ~s.ledger.is_empty()

    @invariant
    def SettledIsLargest(self, s):
        return max_of(s.ledger, lambda e: e.amt, default=0) <= 90


class LedgerOverflow(Ledger):
    """``Post`` without its capacity guard: the fourth transfer does not fit."""

    @action(c=Clerks, src=(0, 42), amt=(10, 90))
    def Post(self, s, t, c, src, amt):
        t.ledger = s.ledger.with_({"clerk": c, "src": src, "dst": 99 - src, "amt": amt})
        return ~s.ledger.has({"clerk": c, "src": src, "dst": 99 - src, "amt": amt})
