"""KRaft broker lifecycle and fencing: the bounded reference model.

Models Kafka KRaft's broker registration, broker epochs, heartbeats, fencing and
unfencing, catch-up and controlled shutdown. It encodes, exactly, a small
reference model written for cross-checking (its counts below were obtained by
TLC 2.20, Spin 6.5.2 and an independent Python BFS, which agree on every number);
this docstring and the action docstrings are its complete description. Sources:

* KIP-631 (the quorum-based Kafka controller): a broker registers with the
  controller; its *broker epoch* is the offset of its registration record in the
  metadata log; a registration is accepted when the broker id is unregistered,
  fenced, or held by the same incarnation. Brokers stay fenced until they have
  replayed the metadata log up to their registration record ("caught up"), then
  the controller unfences them on a heartbeat. Missed heartbeats (session
  timeout) fence a broker.
* KIP-841 / controlled shutdown (``BrokerLifecycleManager`` and the controller's
  heartbeat handling, Kafka 3.x-4.x): a running broker asks to shut down; if it
  leads partitions the controller moves leadership away and records a
  ``controlledShutdownOffset``; shutdown is granted once the broker leads nothing
  and every other active broker has replayed up to that offset.

State: the controller's view (``logEnd``; per broker ``regEpoch`` (0: never
registered), ``regInc`` (the incarnation that registered), ``fenced`` (initially
true), ``cs`` and ``csOffset`` (controlled shutdown); per partition ``leader`` (0:
none)) and the broker processes (``bstate``, ``inc`` (starts so far), ``bEpoch``
(the epoch the process holds, 0: none), ``offset`` (replayed, kept across
restarts)). Everything starts at 0 / NONE / OFFLINE, with every broker fenced.

The metadata log is abstracted to its end offset ``logEnd``: brokers only replay
offsets, never record contents. Every appending action (Register, Unfence,
SessionTimeout, ShutdownHeartbeat, MoveLeader, ElectLeader, GrantShutdown) needs
``logEnd < MaxLog`` and increments it; ``logEnd + 1`` in an action means the
pre-state's. Deadlock checking is off: the bounded log makes terminal states
normal. The readings taken where the text is open: unmentioned variables are
unchanged (Register leaves ``bstate``, ``leader``, ``inc``, ``offset`` alone);
ShutdownHeartbeat's "leads a partition" branch leaves ``fenced`` unchanged and its
other branch ``csOffset``; MoveLeader moves off ``leader[p]`` (not a parameter) to
any eligible broker, or to none only when no broker is eligible; Unfence sets
``bstate`` to RUNNING from RECOVERY or RUNNING; SessionTimeout is enabled in any
broker state (heartbeats may be lost at any time); ``MaxRestarts`` bounds the
number of starts (1: no restart).

Invariants (from :mod:`invariants`): CaughtUpBeforeUnfence (an unfenced registered
broker has replayed its registration record), UniqueEpochs,
ShutdownLeadsNothing (a broker granted shutdown leads no partition),
RunningHoldsCurrentEpoch; action property EpochMonotonic (a broker's registered
epoch never decreases, and a new one exceeds every other), checked on every
transition.

Expected results, the reference configurations L1-L6 (all invariants and
EpochMonotonic hold; depth in steps, TLC prints depth + 1)::

    config  N  P  MaxLog  MaxRestarts  distinct states  depth
    L1      2  1  4       1                     5,353     18
    L2      3  2  4       1                   257,625     24
    L3      2  1  6       2                   552,953     30
    L4      3  1  5       1                 1,244,976     29
    L5      2  1  8       2                 4,174,997     36
    L6      3  1  5       2                28,707,965     35

Bug variants (each yields a counterexample): :class:`KRaftBrokerBugNoCatchUpCheck`,
:class:`KRaftBrokerBugEpochReuse`, :class:`KRaftBrokerBugGrantWithLeaders`.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from invariants import (
    caught_up_before_unfence,
    epoch_monotonic,
    running_holds_epoch,
    shutdown_leads_nothing,
    unique_epochs,
)
from modelcheck import Array, Bool, Const, Enum, Ids, Int, Ref, Spec, action, all_of, any_of, where


class BState(IntEnum):
    """The broker process's lifecycle state (BrokerLifecycleManager)."""

    OFFLINE = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CS = 4


class CS(IntEnum):
    """The controller's controlled-shutdown state for a broker."""

    NONE = 0
    CONTROLLED = 1
    SHUTDOWN_NOW = 2


OFFLINE, STARTING, RECOVERY, RUNNING, PENDING_CS = BState
NONE, CONTROLLED, SHUTDOWN_NOW = CS


class KRaftBroker(Spec):
    """The KRaft broker lifecycle reference model (see the module docstring)."""

    check_deadlock = False

    N = Const(2, min=1, doc="number of brokers, ids 1..N")
    P = Const(1, min=1, doc="number of partitions, ids 1..P")
    MaxLog = Const(4, min=1, doc="bound on the metadata log end offset")
    MaxRestarts = Const(1, min=1, doc="how many times each broker process may start")

    Brokers = Ids(1, N)
    Partitions = Ids(1, P)
    LeaderChoice = Ids(0, N)  # 0 = no eligible broker: the partition goes leaderless

    # controller / metadata log
    logEnd = Int(0, MaxLog)
    regEpoch = Array(Brokers, Int(0, MaxLog))  # offset of the latest registration record
    regInc = Array(Brokers, Int(0, MaxRestarts))  # incarnation that registered
    fenced = Array(Brokers, Bool(init=True))
    cs = Array(Brokers, Enum(CS))
    csOffset = Array(Brokers, Int(0, MaxLog))
    leader = Array(Partitions, Ref(Brokers))  # 0 = no leader
    # broker processes
    bstate = Array(Brokers, Enum(BState))
    inc = Array(Brokers, Int(0, MaxRestarts))
    bEpoch = Array(Brokers, Int(0, MaxLog))
    offset = Array(Brokers, Int(0, MaxLog))  # replayed offset; persists across restarts

    # -- helpers (bug variants override these) ------------------------------
    def can_append(self, s: Any) -> Any:
        return s.logEnd < self.MaxLog

    def new_epoch(self, s: Any) -> Any:
        """The broker epoch a registration gets: the offset of its record."""
        return s.logEnd + 1

    def caught_up(self, s: Any, b: int) -> Any:
        return s.offset[b] >= s.regEpoch[b]

    def leads_nothing(self, s: Any, b: int) -> Any:
        return all_of(self.Partitions, lambda p: s.leader[p] != b)

    def eligible(self, s: Any, c: int, b: Any) -> Any:
        """Broker ``c`` may take over leadership from ``b``."""
        return (c != b) & (s.regEpoch[c] != 0) & ~s.fenced[c] & (s.cs[c] == NONE)

    # -- actions --------------------------------------------------------------
    @action(b=Brokers)
    def Start(self, s, t, b):
        """A broker process starts a new incarnation."""
        t.bstate[b] = STARTING
        t.inc[b] = s.inc[b] + 1
        t.bEpoch[b] = 0
        return (s.bstate[b] == OFFLINE) & (s.inc[b] < self.MaxRestarts)

    @action(b=Brokers)
    def Register(self, s, t, b):
        """The controller accepts the broker's registration and appends its record."""
        epoch = self.new_epoch(s)
        t.logEnd = s.logEnd + 1
        t.regEpoch[b] = epoch
        t.regInc[b] = s.inc[b]
        t.fenced[b] = True
        t.cs[b] = NONE
        t.csOffset[b] = 0
        t.bEpoch[b] = epoch
        return ((s.bstate[b] == STARTING) & (s.bEpoch[b] == 0)
                & ((s.regEpoch[b] == 0) | s.fenced[b] | (s.regInc[b] == s.inc[b]))
                & self.can_append(s))

    @action(b=Brokers)
    def Replay(self, s, t, b):
        """A live broker replays one more metadata record."""
        t.offset[b] = s.offset[b] + 1
        return (s.bstate[b] != OFFLINE) & (s.offset[b] < s.logEnd)

    @action(b=Brokers)
    def CatchUp(self, s, t, b):
        """The broker has replayed up to its registration record: it leaves STARTING."""
        t.bstate[b] = RECOVERY
        return ((s.bstate[b] == STARTING) & (s.bEpoch[b] != 0)
                & (s.bEpoch[b] == s.regEpoch[b]) & self.caught_up(s, b))

    @action(b=Brokers)
    def Unfence(self, s, t, b):
        """The controller unfences a caught-up broker on its heartbeat."""
        t.fenced[b] = False
        t.bstate[b] = RUNNING
        t.logEnd = s.logEnd + 1
        return (((s.bstate[b] == RECOVERY) | (s.bstate[b] == RUNNING)) & s.fenced[b]
                & (s.cs[b] == NONE) & (s.bEpoch[b] == s.regEpoch[b]) & self.caught_up(s, b)
                & self.can_append(s))

    @action(b=Brokers)
    def SessionTimeout(self, s, t, b):
        """Heartbeats were lost: the controller fences the broker."""
        t.fenced[b] = True
        t.logEnd = s.logEnd + 1
        return (s.regEpoch[b] != 0) & ~s.fenced[b] & self.can_append(s)

    @action(b=Brokers)
    def Crash(self, s, t, b):
        """The broker process dies; its replayed offset persists on disk."""
        t.bstate[b] = OFFLINE
        t.bEpoch[b] = 0
        return s.bstate[b] != OFFLINE

    @action(b=Brokers)
    def BeginShutdown(self, s, t, b):
        """A running broker begins controlled shutdown."""
        t.bstate[b] = PENDING_CS
        return s.bstate[b] == RUNNING

    @action(b=Brokers)
    def ShutdownHeartbeat(self, s, t, b):
        """The controller handles a heartbeat with wantShutDown."""
        leads = any_of(self.Partitions, lambda p: s.leader[p] == b)
        t.cs[b] = where(leads, CONTROLLED, SHUTDOWN_NOW)
        t.csOffset[b] = where(leads, s.logEnd + 1, s.csOffset[b])
        t.fenced[b] = where(leads, s.fenced[b], True)
        t.logEnd = s.logEnd + 1
        return ((s.bstate[b] == PENDING_CS) & (s.bEpoch[b] == s.regEpoch[b])
                & (s.cs[b] == NONE) & self.can_append(s))

    @action(p=Partitions, c=LeaderChoice)
    def MoveLeader(self, s, t, p, c):
        """Leadership of ``p`` moves off a fenced or shutting-down leader to ``c`` (0: none)."""
        b = s.leader[p]
        if c == 0:
            target_ok = ~any_of(self.Brokers, lambda o: self.eligible(s, o, b))
        else:
            target_ok = self.eligible(s, c, b)
        t.leader[p] = c
        t.logEnd = s.logEnd + 1
        return ((b != 0) & (s.fenced[b] | (s.cs[b] != NONE)) & self.can_append(s)
                & target_ok)

    @action(p=Partitions, c=Brokers)
    def ElectLeader(self, s, t, p, c):
        """A leaderless partition gets an unfenced, active leader."""
        t.leader[p] = c
        t.logEnd = s.logEnd + 1
        return ((s.leader[p] == 0) & (s.regEpoch[c] != 0) & ~s.fenced[c]
                & (s.cs[c] == NONE) & self.can_append(s))

    @action(b=Brokers)
    def GrantShutdown(self, s, t, b):
        """The controller grants controlled shutdown: the broker leads nothing, others caught up."""
        others = [o for o in self.Brokers if o != b]
        t.cs[b] = SHUTDOWN_NOW
        t.fenced[b] = True
        t.logEnd = s.logEnd + 1
        return ((s.cs[b] == CONTROLLED) & self.leads_nothing(s, b)
                & all_of(others, lambda o: s.fenced[o] | (s.cs[o] != NONE)
                         | (s.offset[o] >= s.csOffset[b]))
                & self.can_append(s))

    @action(b=Brokers)
    def FinishShutdown(self, s, t, b):
        """The broker learns SHUTDOWN_NOW and stops."""
        t.bstate[b] = OFFLINE
        t.bEpoch[b] = 0
        return ((s.bstate[b] == PENDING_CS) & (s.cs[b] == SHUTDOWN_NOW)
                & (s.bEpoch[b] == s.regEpoch[b]))

    # -- properties (from the reusable library in invariants/) -----------------
    CaughtUpBeforeUnfence = caught_up_before_unfence()
    UniqueEpochs = unique_epochs()
    ShutdownLeadsNothing = shutdown_leads_nothing()
    RunningHoldsCurrentEpoch = running_holds_epoch()
    EpochMonotonic = epoch_monotonic()


class KRaftBrokerBugNoCatchUpCheck(KRaftBroker):
    """Bug: CatchUp and Unfence skip the ``offset[b] >= regEpoch[b]`` check.

    Violates CaughtUpBeforeUnfence (shortest trace: Start, Register, CatchUp, Unfence).
    """

    def caught_up(self, s: Any, b: int) -> Any:
        return True


class KRaftBrokerBugEpochReuse(KRaftBroker):
    """Bug: a registration gets epoch ``logEnd`` (the previous record) when ``logEnd > 0``.

    Violates UniqueEpochs and EpochMonotonic in the same state.
    """

    def new_epoch(self, s: Any) -> Any:
        return where(s.logEnd > 0, s.logEnd, s.logEnd + 1)


class KRaftBrokerBugGrantWithLeaders(KRaftBroker):
    """Bug: shutdown is granted while the broker still leads partitions.

    Violates ShutdownLeadsNothing (needs MaxLog >= 5, its default here: two unfenced
    brokers, an election, the shutdown heartbeat and the grant take five appends).
    """

    MaxLog = Const(5, min=1, doc="bound on the metadata log end offset")

    def leads_nothing(self, s: Any, b: int) -> Any:
        return True
