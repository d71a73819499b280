"""Mutual exclusion between two processes: Peterson's algorithm, and a naive flag protocol.

Each process loops: idle -> set its flag (and, in Peterson, give the turn away)
-> wait -> critical section -> clear its flag. The invariant is mutual
exclusion; deadlock checking is on, since the loop should never get stuck.

    modelcheck check examples/mutex.py                  # Peterson: ok
    modelcheck check examples/mutex.py:NaiveMutex       # violation of MutualExclusion
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import Array, Bool, Enum, Ids, Int, Spec, action, invariant


class Pc(IntEnum):
    IDLE = 0
    FLAGGED = 1  # flag set, turn given away
    WAITING = 2
    CRITICAL = 3


class Peterson(Spec):
    """Peterson's two-process mutual exclusion algorithm."""

    Procs = Ids(0, 1)

    pc = Array(Procs, Enum(Pc))
    flag = Array(Procs, Bool())
    turn = Int(0, 1)

    @action(p=Procs)
    def SetFlag(self, s, t, p):
        t.flag[p] = True
        t.pc[p] = Pc.FLAGGED
        return s.pc[p] == Pc.IDLE

    @action(p=Procs)
    def GiveTurn(self, s, t, p):
        t.turn = 1 - p
        t.pc[p] = Pc.WAITING
        return s.pc[p] == Pc.FLAGGED

    @action(p=Procs)
    def Enter(self, s, t, p):
        t.pc[p] = Pc.CRITICAL
        return (s.pc[p] == Pc.WAITING) & (~s.flag[1 - p] | (s.turn == p))

    @action(p=Procs)
    def Exit(self, s, t, p):
        t.flag[p] = False
        t.pc[p] = Pc.IDLE
        return s.pc[p] == Pc.CRITICAL

    @invariant
    def MutualExclusion(self, s):
        return ~((s.pc[0] == Pc.CRITICAL) & (s.pc[1] == Pc.CRITICAL))


class NaiveMutex(Peterson):
    """Check the other's flag, *then* set your own: both can enter."""

    @action(p=Peterson.Procs)
    def SetFlag(self, s, t, p):
        t.pc[p] = Pc.FLAGGED
        return (s.pc[p] == Pc.IDLE) & ~s.flag[1 - p]

    @action(p=Peterson.Procs)
    def GiveTurn(self, s, t, p):
        t.flag[p] = True
        t.pc[p] = Pc.WAITING
        return s.pc[p] == Pc.FLAGGED

    @action(p=Peterson.Procs)
    def Enter(self, s, t, p):
        t.pc[p] = Pc.CRITICAL
        return s.pc[p] == Pc.WAITING
