"""Lamport's "Teaching Concurrency" algorithm over regular registers (SimpleRegular).

Source: tlaplus/Examples ``specifications/TeachingConcurrency/SimpleRegular.tla``
(Leslie Lamport, the PlusCal translation) with ``SimpleRegular.cfg``: ``N = 8``,
``SPECIFICATION Spec``, invariants ``PCorrect TypeOK Inv``. The manifest gives
277,726 distinct states, TLC depth 25 (our depth 24).

Each process ``i`` writes its shared register ``x[i]`` and then reads the register of
process ``(i - 1) % N`` into its local ``y[i]``. A regular register is a *set* of
values: writing 1 over 0 goes ``{0} -> {0, 1} -> {1}`` (labels ``a1``, ``a2``), and a
read (label ``b``) may return any value of the set. ``PCorrect``: once every process
is done, some ``y[i] = 1``.

Translation: ``x`` is an array of ``SetOf(Int(0, 1))`` over ``Procs = 0..N-1``, ``y`` an
array of ``Int(0, 1)``, ``pc`` an enum of the labels and ``Done``. ``b``'s
``\\E v \\in x[(self-1) % N]`` is a parameter ``v \\in {0, 1}`` guarded by membership.
``Terminating`` (every process done, ``UNCHANGED vars``) is kept as an action whose
step changes nothing, so the final state is not a deadlock, as in TLC. ``TypeOK``'s
``x[i] # {}`` is checked as an invariant (the rest of ``TypeOK`` is the types).
The module's ``Termination == <>(\\A self: pc[self] = "Done")`` is not in the cfg's
properties (and ``Spec`` has no fairness, so it would not hold); it is not checked.

``SimpleRegularBugNoWrite`` lets ``a2`` write 0 back (``x[self] := {0}``): ``Inv`` fails
at once, and ``PCorrect`` (checked alone) once every process is done.

Run: ``modelcheck check examples/tla/simple_regular.py`` (277,726 states, depth 24,
about 1 s; TLC's 1,454,776 total states are our 1,454,775 generated plus the initial state).
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Const,
    Enum,
    Ids,
    Int,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    implies,
    invariant,
)

__all__ = ["PC", "SimpleRegular", "SimpleRegularBugNoWrite"]


class PC(IntEnum):
    a1 = 0
    a2 = 1
    b = 2
    Done = 3


class SimpleRegular(Spec):
    """SimpleRegular.tla's ``Spec``: write ``{0,1}`` then ``{1}``, read the neighbour."""

    N = Const(8, min=1, doc="number of processes")
    Procs = Ids(0, N - 1)

    x = Array(Procs, SetOf(Int(0, 1), init={0}))
    y = Array(Procs, Int(0, 1))
    pc = Array(Procs, Enum(PC))

    @action(p=Procs)
    def a1(self, s, t, p):
        t.x[p] = {0, 1}
        t.pc[p] = PC.a2
        return s.pc[p] == PC.a1

    @action(p=Procs)
    def a2(self, s, t, p):
        t.x[p] = {1}
        t.pc[p] = PC.b
        return s.pc[p] == PC.a2

    @action(p=Procs, v=range(2))
    def b(self, s, t, p, v):
        t.y[p] = v
        t.pc[p] = PC.Done
        return (s.pc[p] == PC.b) & s.x[(p - 1) % self.N].has(v)

    @action
    def Terminating(self, s, t):
        """Every process is done: a step that changes nothing (no deadlock)."""
        return all_of(self.Procs, lambda i: s.pc[i] == PC.Done)

    @invariant
    def PCorrect(self, s):
        return implies(all_of(self.Procs, lambda i: s.pc[i] == PC.Done),
                       any_of(self.Procs, lambda i: s.y[i] == 1))

    @invariant
    def TypeOK(self, s):
        """``x \\in [Procs -> (SUBSET {0, 1}) \\ {{}}]``; the rest is the types."""
        return all_of(self.Procs, lambda i: ~s.x[i].is_empty())

    @invariant
    def Inv(self, s):
        return (all_of(self.Procs, lambda i: implies((s.pc[i] == PC.b) | (s.pc[i] == PC.Done),
                                                     s.x[i] == {1}))
                & (any_of(self.Procs, lambda i: s.pc[i] != PC.Done)
                   | any_of(self.Procs, lambda i: s.y[i] == 1)))


class SimpleRegularBugNoWrite(SimpleRegular):
    """``a2`` writes 0 back instead of 1: every read may return 0."""

    @action(p=SimpleRegular.Procs)
    def a2(self, s, t, p):
        t.x[p] = {0}
        t.pc[p] = PC.b
        return s.pc[p] == PC.a2
