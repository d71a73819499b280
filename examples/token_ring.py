"""Fairness and constants: a token passed round processes ``1..N``.

``Ring`` names its fair instances by label, written for the default ``N = 2``; bound
with another ``N`` (``--const N=3``) the labels would leave ``Pass(i=3)`` without
fairness, so binding refuses them (an error naming them, exit 2). ``RingEvery`` makes
every instance weakly fair (TLA+'s ``\\A i \\in P: WF_vars(Pass(i))``), ``RingComputed``
computes its labels from the bound constants; both hold for every ``N``.

    modelcheck check examples/token_ring.py:Ring                       # ok: 2 states
    modelcheck check examples/token_ring.py:RingEvery --const N=4      # ok: 4 states
    modelcheck check examples/token_ring.py:RingComputed --const N=3   # ok: 3 states
    modelcheck check examples/token_ring.py:RingUnfair --const N=3     # violation of BackToOne
"""

from __future__ import annotations

from modelcheck import Const, Ids, Int, Spec, action, always_eventually, where


class Ring(Spec):
    """A token passed round ``1..N``; fairness by instance labels written for ``N = 2``."""

    check_deadlock = False
    N = Const(2, min=1, max=4, doc="processes")
    P = Ids(1, N)
    tok = Int(1, N)
    fairness = {"Pass(i=1)": "weak", "Pass(i=2)": "weak"}

    @action(i=P)
    def Pass(self, s, t, i):
        """Process i, holding the token, passes it on."""
        t.tok = where(s.tok == self.N, 1, s.tok + 1)
        return s.tok == i

    @always_eventually
    def BackToOne(self, s):
        """The token comes back to process 1 infinitely often."""
        return s.tok == 1


class RingEvery(Ring):
    """Every instance weakly fair, under whatever ``N``."""

    fairness = {"Pass": "weak"}


class RingComputed(Ring):
    """The labels computed from the bound constants."""

    def fairness(self):
        return {f"Pass(i={i})": "weak" for i in self.P}


class RingUnfair(Ring):
    """Fair only at process 1 (a method: resolved for every ``N``): the token may stay at
    process 2 forever."""

    def fairness(self):
        return {"Pass(i=1)": "weak"}
