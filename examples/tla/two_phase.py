"""Two-phase commit with message records (TwoPhase).

Source: tlaplus/Examples ``specifications/transaction_commit/TwoPhase.tla`` (Leslie
Lamport) with ``TwoPhase.cfg``: ``RM = {r1, r2, r3}``, ``INVARIANT TPTypeOK``,
``SPECIFICATION TPSpec``. TLC 2.20 (``-workers 1``) finds 288 distinct states,
1,146 generated, depth 11 (our depth 10) with three RMs, and 8,832 distinct, 58,146
generated, depth 17 with five; here also with the ``TCommit`` consistency invariant
(no RM committed while another aborted), which TLC confirms on the same runs.

The messages are TLA+ records in one set, ``msgs \\subseteq Message`` with
``Message == [type: {"Prepared"}, rm: RM] \\cup [type: {"Commit", "Abort"}]``:

* ``Message`` is a union of record shapes tagged by their ``type`` field:
  ``Msg = Union("type", MsgType, Prepared=Record(rm=RM), Commit=None, Abort=None)``,
  stored as one code per message (``N + 2`` messages: ``msgs`` is one bit each), read
  as ``m.type`` and ``m.rm``, shown as TLA+ records (``[type |-> "Commit"]``);
* the receiving actions take their message from the set, TLA+'s
  ``\\E m \\in msgs: ...``: ``@action(m=MemberOf("msgs"))``. TwoPhase.tla writes
  ``TMRcvPrepared(rm) == [type |-> "Prepared", rm |-> rm] \\in msgs /\\ ...``
  under ``\\E rm \\in RM``, which has the same witnesses as ``\\E m \\in msgs:
  m.type = "Prepared" /\\ ... m.rm ...`` (one per Prepared message), so the counts,
  generated ones included, are TLC's. A trace reads
  ``TMRcvPrepared(m=[type |-> "Prepared", rm |-> 2])``.

``TwoPhaseBugEagerCommit`` lets the TM commit after one ``Prepared`` message: an RM
that chose to abort then receives ``Commit``, and ``TCConsistent`` fails.
"""

from __future__ import annotations

import enum

from modelcheck import (
    Array,
    Const,
    Enum,
    Ids,
    MemberOf,
    Record,
    SetOf,
    Spec,
    Union,
    action,
    any_of,
    invariant,
)

__all__ = ["TwoPhase", "TwoPhaseBugEagerCommit", "Msg", "MsgType", "RMState", "TMState"]


class RMState(enum.IntEnum):
    working = 0
    prepared = 1
    committed = 2
    aborted = 3


class TMState(enum.IntEnum):
    init = 0
    committed = 1
    aborted = 2


class MsgType(enum.IntEnum):
    Prepared = 0
    Commit = 1
    Abort = 2


N = Const(3, min=1, doc="number of resource managers")
RM = Ids(1, N)
#: ``Message``: ``[type: {"Prepared"}, rm: RM] \\cup [type: {"Commit", "Abort"}]``
Msg = Union("type", MsgType, Prepared=Record(rm=RM), Commit=None, Abort=None)


class TwoPhase(Spec):
    """TwoPhase.tla's ``TPSpec``: ``TPInit /\\ [][TPNext]_vars``."""

    N = N
    RM = RM

    rmState = Array(RM, Enum(RMState), init=RMState.working)
    tmState = Enum(TMState, init=TMState.init)
    tmPrepared = SetOf(RM)
    msgs = SetOf(Msg)

    # -- the TM's actions
    @action(m=MemberOf("msgs"))
    def TMRcvPrepared(self, s, t, m):
        t.tmPrepared = s.tmPrepared.with_(m.rm)
        return (s.tmState == TMState.init) & (m.type == MsgType.Prepared)

    @action
    def TMCommit(self, s, t):
        t.tmState = TMState.committed
        t.msgs = s.msgs.with_({"type": MsgType.Commit})
        return (s.tmState == TMState.init) & self.all_prepared(s)

    def all_prepared(self, s):
        return s.tmPrepared.size() == self.N

    @action
    def TMAbort(self, s, t):
        t.tmState = TMState.aborted
        t.msgs = s.msgs.with_({"type": MsgType.Abort})
        return s.tmState == TMState.init

    # -- the RMs' actions
    @action(rm=RM)
    def RMPrepare(self, s, t, rm):
        t.rmState[rm] = RMState.prepared
        t.msgs = s.msgs.with_({"type": MsgType.Prepared, "rm": rm})
        return s.rmState[rm] == RMState.working

    @action(rm=RM)
    def RMChooseToAbort(self, s, t, rm):
        t.rmState[rm] = RMState.aborted
        return s.rmState[rm] == RMState.working

    @action(rm=RM, m=MemberOf("msgs"))
    def RMRcvCommitMsg(self, s, t, rm, m):
        t.rmState[rm] = RMState.committed
        return m.type == MsgType.Commit

    @action(rm=RM, m=MemberOf("msgs"))
    def RMRcvAbortMsg(self, s, t, rm, m):
        t.rmState[rm] = RMState.aborted
        return m.type == MsgType.Abort

    # -- properties
    @invariant
    def TPTypeOK(self, s):
        # the variables' types are TPTypeOK's sets (``msgs \subseteq Message`` is
        # ``SetOf(Msg)``): it holds in every state that can be stored
        return True

    @invariant
    def TCConsistent(self, s):
        """TCommit's ``TCConsistent``: no RM committed while another aborted."""
        return ~(any_of(self.RM, lambda r: s.rmState[r] == RMState.aborted)
                 & any_of(self.RM, lambda r: s.rmState[r] == RMState.committed))


class TwoPhaseBugEagerCommit(TwoPhase):
    """The TM commits once any RM is prepared: ``TCConsistent`` fails."""

    def all_prepared(self, s):
        return ~s.tmPrepared.is_empty()
