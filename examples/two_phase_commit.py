"""Two-phase commit (Gray and Lamport's TLA+ ``TwoPhase`` spec), with a transaction manager.

Resource managers (RMs) prepare or abort on their own; the transaction manager
(TM) commits once every RM has prepared, or aborts. Messages are a set that only
grows (a message, once sent, may be received any number of times). The
classic result: with 3 RMs, 288 reachable states, and no two RMs disagree.

    modelcheck check examples/two_phase_commit.py                     # 80 states (symmetry)
    modelcheck check examples/two_phase_commit.py --no-symmetry       # 288 states
    modelcheck check examples/two_phase_commit.py --const RMs=4 --no-symmetry  # 1,568 states
    modelcheck check examples/two_phase_commit.py:TwoPhaseCommitBug   # violation
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    has,
    invariant,
    with_,
)


class RM(IntEnum):
    WORKING = 0
    PREPARED = 1
    COMMITTED = 2
    ABORTED = 3


class TM(IntEnum):
    INIT = 0
    COMMITTED = 1
    ABORTED = 2


class TwoPhaseCommit(Spec):
    """TwoPhase.tla: RMs, a TM, and the message set {Prepared(rm), Commit, Abort}."""

    check_deadlock = False  # every behaviour ends with all RMs decided
    symmetry = ("RMs_",)

    RMs = Const(3, min=1, doc="number of resource managers")
    RMs_ = Ids(1, RMs)

    rmState = Array(RMs_, Enum(RM))
    tmState = Enum(TM)
    tmPrepared = SetOf(RMs_)
    msgPrepared = SetOf(RMs_)  # Prepared(rm) messages sent
    msgCommit = Bool()
    msgAbort = Bool()

    @action(rm=RMs_)
    def TMRcvPrepared(self, s, t, rm):
        t.tmPrepared = with_(s.tmPrepared, rm)
        return (s.tmState == TM.INIT) & has(s.msgPrepared, rm)

    @action
    def TMCommit(self, s, t):
        t.tmState = TM.COMMITTED
        t.msgCommit = True
        return (s.tmState == TM.INIT) & all_of(self.RMs_, lambda r: has(s.tmPrepared, r))

    @action
    def TMAbort(self, s, t):
        t.tmState = TM.ABORTED
        t.msgAbort = True
        return s.tmState == TM.INIT

    @action(rm=RMs_)
    def RMPrepare(self, s, t, rm):
        t.rmState[rm] = RM.PREPARED
        t.msgPrepared = with_(s.msgPrepared, rm)
        return s.rmState[rm] == RM.WORKING

    @action(rm=RMs_)
    def RMChooseToAbort(self, s, t, rm):
        t.rmState[rm] = RM.ABORTED
        return s.rmState[rm] == RM.WORKING

    @action(rm=RMs_)
    def RMRcvCommitMsg(self, s, t, rm):
        t.rmState[rm] = RM.COMMITTED
        return s.msgCommit

    @action(rm=RMs_)
    def RMRcvAbortMsg(self, s, t, rm):
        t.rmState[rm] = RM.ABORTED
        return s.msgAbort

    @invariant
    def Consistent(self, s):
        """No RM has committed while another has aborted."""
        committed = any_of(self.RMs_, lambda r: s.rmState[r] == RM.COMMITTED)
        aborted = any_of(self.RMs_, lambda r: s.rmState[r] == RM.ABORTED)
        return ~(committed & aborted)


class TwoPhaseCommitBug(TwoPhaseCommit):
    """The TM commits as soon as one RM has prepared."""

    @action
    def TMCommit(self, s, t):
        t.tmState = TM.COMMITTED
        t.msgCommit = True
        return (s.tmState == TM.INIT) & ~s.tmPrepared.is_empty()
