"""KRaft broker lifecycle at the message level: incarnations, RPCs, reported offsets.

A refinement of the reference model (``specs/kraft_broker.py``) down to where
lifecycle and fencing bugs live. There, broker and controller update the epoch in
one step, the controller reads the broker's true offset, and fencing
and leadership moves are separate steps. Here, broker processes and the controller
talk through requests that can be delayed, reordered and lost; the controller only
knows what heartbeats *report*; fencing, leadership moves and ISR shrinks are one
batch of records; brokers replay a metadata log of such batches.

Modelled (Kafka 3.x-4.x: KIP-631 KRaft controller, KIP-841 controlled shutdown)
------------------------------------------------------------------------------
**Broker process** (``BrokerLifecycleManager``), per broker id:

* ``Start``: each start is a new incarnation (a fresh ``incarnationId``; here the
  per-broker start count ``inc``). States are Kafka's ``BrokerState``: NOT_RUNNING
  -> STARTING -> RECOVERY -> RUNNING -> PENDING_CONTROLLED_SHUTDOWN -> SHUTTING_DOWN;
  ``Crash`` stops a live process in any state. The replayed metadata offset survives
  restarts (it is on disk); the broker epoch does not.
* ``Register``: a registration round trip (``sendBrokerRegistration`` with the
  incarnation id while ``registered`` is false; the broker keeps the epoch it gets,
  or retries after DUPLICATE_BROKER_REGISTRATION).
* ``Heartbeat``: a heartbeat round trip with (broker id, broker epoch,
  ``currentMetadataOffset`` = the replayed offset, ``wantFence`` = not yet ready to
  unfence, i.e. STARTING, ``wantShutDown`` = PENDING_CONTROLLED_SHUTDOWN). The
  broker reacts as ``BrokerHeartbeatResponseHandler``: STARTING -> RECOVERY on
  ``isCaughtUp``, RECOVERY -> RUNNING on ``!isFenced``, PENDING_CONTROLLED_SHUTDOWN
  -> SHUTTING_DOWN on ``shouldShutDown``; on an error it retries.
* ``BeginControlledShutdown`` (``beginControlledShutdown`` from RUNNING) and
  ``Replay`` (a live broker applies the next batch of the log).

**Network.** The broker has one request in flight at a time
(``communicationInFlight``), so a round trip on the live connection is one step.
What is not one step is a request whose RPC times out (or whose response is lost):
``RegistrationTimesOut`` / ``HeartbeatTimesOut`` put the request, as sent, into the
network (``z*``, one slot per broker) and the broker is free to retry; the
controller may still handle it later (``ControllerHandlesDelayed...``, the answer
goes nowhere: the connection is closed) or it is lost (``DropDelayed``). A retry
can overtake it (reordering), its response is lost, and when the sender crashes it
becomes a zombie of a dead incarnation. Delays are bounded by ``MaxDelays`` per run.
A delayed heartbeat that can no longer act (its epoch is stale, or its offset is
below the recorded one: with the epoch check both are permanent) is dropped as soon
as that happens: delivering it later would change nothing, so this only saves states.

**Controller** (``ClusterControlManager``, ``BrokerHeartbeatManager``,
``ReplicationControlManager``):

* Registration (``registerBroker``): accepted when the id has no registration,
  when the registration expired (the broker is fenced: no valid session), or when
  it comes from the registered incarnation (an idempotent retry); otherwise
  DUPLICATE_BROKER_REGISTRATION. A new registration appends a fenced
  RegisterBrokerRecord whose offset is the broker epoch (``brokerEpoch =
  nextWriteOffset``) and resets the heartbeat manager's state for the broker. A
  retry of the registered incarnation answers the registered epoch and changes
  nothing (newer Kafka "amends" the registration, keeping the epoch and the fenced
  and controlled-shutdown flags; the amended record only carries listeners and
  directories, so the model appends none. Kafka 3.x instead wrote a new fenced
  record with a new epoch and left leaderships alone: with that rule a delayed
  duplicate registration handled after the broker became leader leaves a fenced
  leader, FencedNotLeader in 8 states).
* Heartbeat (``processBrokerHeartbeat``): an epoch other than the registered one is
  STALE_BROKER_EPOCH (``checkBrokerEpoch``); a reported offset lower than the
  recorded one is ignored (an error answer, nothing changes). Otherwise the next
  state by ``calculateNextBrokerState`` from FENCED / UNFENCED / CONTROLLED_SHUTDOWN
  (the heartbeat manager's view), wantFence, wantShutDown and hasLeaderships: a
  fenced broker is unfenced only when ``!wantFence`` and its *reported* offset
  reached its registration record's offset; an unfenced broker asking to shut down
  enters CONTROLLED_SHUTDOWN if it leads a partition, else SHUTDOWN_NOW; a broker in
  controlled shutdown gets SHUTDOWN_NOW once it leads nothing and
  ``controlledShutdownOffset <= lowestActiveOffset`` (every unfenced broker not
  shutting down *reported* an offset >= it); a fenced broker asking to shut down
  may; an unfenced one asking to be fenced is. The controller then records the
  reported offset (``touch``) and answers isCaughtUp (reported offset >=
  registration offset), isFenced and shouldShutDown.
* Each change is one atomic batch, ``ControllerResult.atomicOf``: fencing
  (``handleBrokerFenced``, for a session timeout, wantFence or SHUTDOWN_NOW) moves
  every leadership of the broker and removes it from every ISR together with the
  fence record; entering controlled shutdown (``handleBrokerInControlledShutdown``)
  does the same and sets ``controlledShutdownOffset`` to the batch's offset;
  unfencing (``handleBrokerUnfenced``) makes the broker leader of the leaderless
  partitions whose ISR holds it. An election picks an acceptable ISR member
  (registered, unfenced, not in controlled shutdown); which one is the action
  parameter ``nl`` (digit ``p - 1`` of ``nl`` in base ``N + 1`` is partition
  ``p``'s new leader, 0 for none; with ``P = 1`` it is simply the new leader). The
  last ISR member is never removed: the partition goes leaderless (KRaft without
  KIP-966's ELR). Every leader change bumps the leader epoch.
* ``SessionTimeout``: a registered, unfenced broker's session may expire at any
  time (heartbeats may always be late) and ``maybeFenceOneStaleBroker`` fences it.
* ``IsrExpand``: the leader's AlterPartition adds a caught-up follower; the
  controller refuses fenced or shutting-down replicas (``ineligibleReplicasForIsr``)
  and, as KIP-903, a follower whose broker epoch is not the registered one.

**Metadata log.** ``logKind[i]`` / ``logBroker[i]``: the batch at offset ``i``
(registration, unfence, fence, controlled shutdown or ISR expansion) and the broker
it is about; a batch takes one offset, as brokers apply whole batches and report the
last offset applied. Appending needs ``logEnd < MaxLog``; a step whose effect needs
a record is disabled when the log is full, so bounded runs end in terminal states
(deadlock checking is off).

Every partition has all brokers as replicas, so the spec is symmetric in the brokers
(``symmetry = ("Brokers",)``; no rule depends on the order of broker ids). An initial
state is a cluster after a full stop: nothing registered, every partition leaderless
with one last ISR member (each choice of that member is an initial state).

Abstracted
----------
Time (session expiry and RPC timeouts are nondeterministic); the controller quorum
and failover; the broker's metadata image (brokers replay offsets; the log says
what each batch did); log recovery (a broker is ready to unfence on reaching
RECOVERY); follower fetching and data replication (``IsrExpand`` is one step, its
AlterPartition not a message); ISR shrinks of lagging followers; unclean elections,
KIP-966 ELR and clean-shutdown detection; no-op records (a fenced broker asking to
shut down appends nothing); the heartbeat manager forgetting the reported offset
when it replays a registration change (the model keeps the last reported offset,
which only makes the controlled-shutdown check easier to pass, never harder); and
``hasValidSession`` being time-based in Kafka (a registration can be accepted
between a session's expiry and the fencing batch; here the expiry *is* the fence).

Constants and results
---------------------
Defaults N=2, P=1, MaxLog=4, MaxRestarts=1 (restarts in a run, all brokers),
MaxDelays=1 (delayed requests in a run): 926,523 distinct states with symmetry,
depth 24. The properties, from ``invariants/``: broker epochs grow and are unique;
caught up before unfence, on the controller's decision (reported offset) and on the
broker's real replay position; no stale-epoch or superseded-incarnation request
changes heartbeat-driven state; a fenced broker leads nothing and is in no ISR but
as the last member of a leaderless partition; leader epochs grow; a controlled
shutdown is granted to a broker leading nothing once every active broker replayed
its moves; one live registration per broker id, held by the registered incarnation.

Bug variants (each a shortest counterexample; see ``tests/test_kraft_lifecycle.py``):
:class:`KRaftLifecycleBugLiveReregistration` (accept a new incarnation while the old
registration is live), :class:`KRaftLifecycleBugNoIncarnationCheck` (take a new
incarnation's registration of a live id as a retry: it gets the old epoch),
:class:`KRaftLifecycleBugNoOffsetCheck` (unfence without the reported-offset check),
:class:`KRaftLifecycleBugStaleEpoch` (accept stale-epoch heartbeats),
:class:`KRaftLifecycleBugFenceKeepsLeader` (fence without moving leadership in the same
batch), :class:`KRaftLifecycleBugEpochOnlyOnElection` (no leader-epoch bump when a
partition loses its leader), :class:`KRaftLifecycleBugEarlyShutdownGrant` (grant a
controlled shutdown before the others caught up; it needs ``MaxLog=6``, so its
defaults are ``MaxLog=6, MaxRestarts=0, MaxDelays=0``). Each fails with its own
defaults: ``modelcheck check specs/kraft_lifecycle.py:<variant>``.

Not a default check: ``--invariant NoSupersededRegistration`` shows that Kafka's
acceptance rule lets a delayed registration of a dead incarnation replace a newer
incarnation's registration while that one is still fenced (7 states).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from invariants import (
    caught_up_before_unfence,
    controlled_shutdown_safe,
    epoch_monotonic,
    fenced_not_in_isr,
    fenced_not_leader,
    leader_epoch_monotonic,
    no_stale_request_effect,
    registered_incarnation_holds_epoch,
    running_holds_epoch,
    single_live_registration,
    unique_epochs,
)
from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    Ref,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    where,
)


class BrokerState(IntEnum):
    """The broker process's state (Kafka's ``org.apache.kafka.metadata.BrokerState``)."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 4
    SHUTTING_DOWN = 5


class Req(IntEnum):
    """A broker-to-controller request."""

    NONE = 0
    REGISTRATION = 1  # BrokerRegistrationRequest(brokerId, incarnationId)
    HEARTBEAT = 2  # BrokerHeartbeatRequest(brokerId, brokerEpoch, offset, wantFence, wantShutDown)


class Rec(IntEnum):
    """What a batch of metadata records did (one batch per log offset)."""

    NONE = 0
    REGISTER = 1  # RegisterBrokerRecord (fenced)
    UNFENCE = 2  # unfence + leader elections for leaderless partitions
    FENCE = 3  # leader moves + ISR shrinks + fence (handleBrokerFenced)
    CONTROLLED_SHUTDOWN = 4  # inControlledShutdown + leader moves + ISR shrinks
    ISR_EXPAND = 5  # PartitionChangeRecord adding a follower (AlterPartition)


(NOT_RUNNING, STARTING, RECOVERY, RUNNING, PENDING_CONTROLLED_SHUTDOWN,
 SHUTTING_DOWN) = BrokerState
PENDING_CS = PENDING_CONTROLLED_SHUTDOWN

_REQ_FIELDS = ("Kind", "Inc", "Epoch", "Offset", "WantFence", "WantShutDown")


class _LeaderChoices:
    """Domain of an election parameter ``nl``: one digit in base N + 1 per partition."""

    def __call__(self, spec: Any) -> range:
        return range((spec.N + 1) ** spec.P)

    def __repr__(self) -> str:
        return "0..(N+1)^P-1"


_leader_choices = _LeaderChoices()


def _doc(pred: Any, doc: str) -> Any:
    """A library predicate with its one-line description replaced."""
    pred.doc = doc
    return pred


class _Msg:
    """The fields of a request (kind, incarnation, epoch, offset, wantFence, wantShutDown)."""

    def __init__(self, values: Any) -> None:
        self.kind, self.inc, self.epoch, self.off, self.wf, self.ws = values

    @classmethod
    def delayed(cls, s: Any, b: int) -> _Msg:
        """Broker ``b``'s delayed request."""
        return cls(getattr(s, "z" + f)[b] for f in _REQ_FIELDS)


class KRaftLifecycle(Spec):
    """The KRaft broker lifecycle with messages, incarnations and reported offsets."""

    check_deadlock = False
    symmetry = ("Brokers",)

    N = Const(2, min=1, doc="number of brokers, ids 1..N")
    P = Const(1, min=1, doc="number of partitions, ids 1..P (every broker is a replica)")
    MaxLog = Const(4, min=1, doc="bound on the metadata log end offset (batches)")
    MaxRestarts = Const(1, min=0, doc="restarts in a run, over all brokers (each broker "
                                      "also starts once)")
    MaxDelays = Const(1, min=0, doc="requests the network may delay in a run")

    Brokers = Ids(1, N)
    Partitions = Ids(1, P)
    LogOffsets = Ids(1, MaxLog)

    # -- controller: metadata log, registrations, heartbeat manager, partitions -------
    logEnd = Int(0, MaxLog)
    logKind = Array(LogOffsets, Enum(Rec))
    logBroker = Array(LogOffsets, Ref(Brokers))
    regEpoch = Array(Brokers, Int(0, MaxLog))  # broker epoch = offset of its RegisterBrokerRecord
    regInc = Array(Brokers, Int(0, MaxRestarts + 1))  # incarnation of the registration
    fenced = Array(Brokers, Bool(init=True))
    inCS = Array(Brokers, Bool())  # the registration's inControlledShutdown
    csOffset = Array(Brokers, Int(0, MaxLog))  # controlledShutdownOffset; 0 = none (-1)
    reported = Array(Brokers, Int(0, MaxLog))  # last reported metadata offset; 0 = none
    leader = Array(Partitions, Ref(Brokers))  # 0 = no leader
    isr = Array(Partitions, SetOf(Brokers))
    leaderEpoch = Array(Partitions, Int(0, MaxLog))
    # -- broker processes ---------------------------------------------------------------
    bstate = Array(Brokers, Enum(BrokerState))
    inc = Array(Brokers, Int(0, MaxRestarts + 1))  # current incarnation (number of starts)
    bEpoch = Array(Brokers, Int(0, MaxLog))  # broker epoch the process holds; 0 = unregistered
    offset = Array(Brokers, Int(0, MaxLog))  # replayed metadata offset; survives restarts
    restarts = Int(0, MaxRestarts)  # broker processes restarted so far
    # -- network: one delayed request per broker (timed out, or from a dead process) -----
    delays = Int(0, MaxDelays)  # requests delayed so far
    zKind = Array(Brokers, Enum(Req))
    zInc = Array(Brokers, Int(0, MaxRestarts + 1))
    zEpoch = Array(Brokers, Int(0, MaxLog))
    zOffset = Array(Brokers, Int(0, MaxLog))
    zWantFence = Array(Brokers, Bool())
    zWantShutDown = Array(Brokers, Bool())

    def init_states(self) -> Any:
        """A cluster after a full stop: every partition leaderless, one last ISR member."""
        brokers = list(self.Brokers)
        parts = list(self.Partitions)
        lo = brokers[0]
        n = len(brokers)
        for k in range(n ** len(parts)):
            last = {p: brokers[(k // n ** i) % n] for i, p in enumerate(parts)}
            yield {"isr": {p: 1 << (last[p] - lo) for p in parts}}

    # -- helpers (bug variants override these) -----------------------------------------
    def can_append(self, s: Any) -> Any:
        return s.logEnd < self.MaxLog

    def registration_expired(self, s: Any, b: int) -> Any:
        """``!hasValidSession``: the registered broker was fenced."""
        return s.fenced[b]

    def same_incarnation(self, s: Any, b: int, inc: Any) -> Any:
        """A registration comes from the registered incarnation (an idempotent retry):
        its incarnation id is the stored one."""
        return s.regInc[b] == inc

    def epoch_current(self, s: Any, b: int, epoch: Any) -> Any:
        """``checkBrokerEpoch``: the request carries the registered broker epoch."""
        return epoch == s.regEpoch[b]

    def offset_accepted(self, s: Any, b: int, off: Any) -> Any:
        """002: a heartbeat whose offset is lower than the recorded one is ignored."""
        return off >= s.reported[b]

    def reported_caught_up(self, s: Any, b: int, off: Any) -> Any:
        """The reported offset reached the registration record (``isCaughtUp`` and the
        unfence condition of ``calculateNextBrokerState``)."""
        return off >= s.regEpoch[b]

    def others_caught_up(self, s: Any, b: int) -> Any:
        """``controlledShutdownOffset <= lowestActiveOffset``: every unfenced broker not
        shutting down reported an offset >= the broker's controlled shutdown offset."""
        others = [o for o in self.Brokers if o != b]
        return all_of(others, lambda o: s.fenced[o] | (s.csOffset[o] != 0)
                      | (s.reported[o] >= s.csOffset[b]))

    def fence_moves_leadership(self) -> bool:
        """Fencing and controlled shutdown move leaderships and shrink ISRs in their batch."""
        return True

    def bumps_leader_epoch(self, old: Any, new: Any) -> Any:
        """004: the leader epoch is "bumped on every leader change"."""
        return new != old

    # -- derived ----------------------------------------------------------------------
    def acceptable(self, s: Any, c: int) -> Any:
        """``isActive``: registered, unfenced, not in controlled shutdown."""
        return (s.regEpoch[c] != 0) & ~s.fenced[c] & ~s.inCS[c]

    def leads_any(self, s: Any, b: int) -> Any:
        return any_of(self.Partitions, lambda p: s.leader[p] == b)

    def alive(self, s: Any, b: int) -> Any:
        st = s.bstate[b]
        return (st == STARTING) | (st == RECOVERY) | (st == RUNNING) | (st == PENDING_CS)

    def _choice(self, nl: int, p: int) -> int:
        n1 = self.N + 1
        return (nl // n1 ** (p - self.Partitions.start)) % n1

    # -- batches ------------------------------------------------------------------------
    def _append(self, s: Any, t: Any, cond: Any, kind: Any, b: int) -> None:
        at = s.logEnd + 1
        t.logEnd = where(cond, at, s.logEnd)
        t.logKind[at] = where(cond, kind, s.logKind[at])
        t.logBroker[at] = where(cond, b, s.logBroker[at])

    def _partitions(self, s: Any, t: Any, b: int, nl: int, remove: Any, unfence: Any) -> Any:
        """Partition changes of a batch about broker ``b``; returns whether ``nl`` is valid.

        ``remove`` (fence or controlled shutdown, ``generateLeaderAndIsrUpdates`` with
        brokerToRemove = b): drop b from every ISR but as its last member, and elect
        ``nl``'s choice for every partition b led or that had no leader.
        ``unfence`` (brokerToAdd = b): b leads every leaderless partition whose ISR holds it.
        """
        if not self.fence_moves_leadership():
            remove = False
        ok: Any = True
        for p in self.Partitions:
            isr, ld, le = s.isr[p], s.leader[p], s.leaderEpoch[p]
            in_isr = isr.has(b)
            aff = remove & (in_isr | (ld == b))
            new_isr = where(aff & (isr != {b}), isr.without(b), isr)
            need = aff & ((ld == b) | (ld == 0))

            def cand(c: int, new_isr: Any = new_isr) -> Any:
                return new_isr.has(c) & self.acceptable(s, c)

            c = self._choice(nl, p)
            if c == 0:
                ok = ok & (~need | ~any_of([o for o in self.Brokers if o != b], cand))
                new_ld = where(need, 0, ld)
            else:
                ok = ok & need & (c != b) & cand(c)
                new_ld = where(need, c, ld)
            new_ld = where(unfence & (ld == 0) & in_isr, b, new_ld)
            t.isr[p] = new_isr
            t.leader[p] = new_ld
            t.leaderEpoch[p] = where(self.bumps_leader_epoch(ld, new_ld), le + 1, le)
        return ok

    def _fence_batch(self, s: Any, t: Any, b: int, nl: int) -> Any:
        """``handleBrokerFenced`` (+ the heartbeat manager's fence)."""
        ok = self._partitions(s, t, b, nl, True, False)
        t.fenced[b] = True
        t.csOffset[b] = 0
        self._append(s, t, True, Rec.FENCE, b)
        return ok

    # -- network helpers ----------------------------------------------------------------
    def _put(self, t: Any, b: int, values: tuple[Any, ...]) -> None:
        for f, v in zip(_REQ_FIELDS, values):
            getattr(t, "z" + f)[b] = v

    def _registration_request(self, s: Any, b: int) -> tuple[Any, ...]:
        return (Req.REGISTRATION, s.inc[b], 0, 0, False, False)

    def _heartbeat_request(self, s: Any, b: int) -> tuple[Any, ...]:
        return (Req.HEARTBEAT, s.inc[b], s.bEpoch[b], s.offset[b],
                s.bstate[b] == STARTING, s.bstate[b] == PENDING_CS)

    def inert(self, s: Any, b: int) -> Any:
        """Broker ``b``'s delayed heartbeat can no longer change anything: its epoch is
        stale or its offset is below the recorded one, and both only get worse (the
        registered epoch only changes to a new one; the recorded offset only grows
        while it stays). Such a request is dropped at once: delivering it later and
        losing it are the same. Reads ``s`` as a state or as the next state ``t``."""
        return (s.zKind[b] == Req.HEARTBEAT) & (
            (s.regEpoch[b] == 0) | ~self.epoch_current(s, b, s.zEpoch[b])
            | ~self.offset_accepted(s, b, s.zOffset[b]))

    def _drop_inert(self, t: Any, b: int) -> None:
        gone = self.inert(t, b)
        for f in _REQ_FIELDS:
            getattr(t, "z" + f)[b] = where(gone, 0, getattr(t, "z" + f)[b])

    def can_register(self, s: Any, b: int) -> Any:
        return (s.bstate[b] == STARTING) & (s.bEpoch[b] == 0)

    def can_heartbeat(self, s: Any, b: int) -> Any:
        return self.alive(s, b) & (s.bEpoch[b] != 0)

    # -- broker process -------------------------------------------------------------------
    @action(b=Brokers)
    def Start(self, s, t, b):
        """A broker process starts: a new incarnation, unregistered, STARTING."""
        t.bstate[b] = STARTING
        t.inc[b] = s.inc[b] + 1
        t.bEpoch[b] = 0
        again = s.inc[b] != 0
        t.restarts = where(again, s.restarts + 1, s.restarts)
        return (((s.bstate[b] == NOT_RUNNING) | (s.bstate[b] == SHUTTING_DOWN))
                & ~(again & (s.restarts >= self.MaxRestarts)))

    @action(b=Brokers)
    def Crash(self, s, t, b):
        """The process dies; a request it sent may still reach the controller (a zombie)."""
        t.bstate[b] = NOT_RUNNING
        t.bEpoch[b] = 0
        return self.alive(s, b)

    @action(b=Brokers)
    def Replay(self, s, t, b):
        """A live broker applies the next batch of the metadata log."""
        t.offset[b] = s.offset[b] + 1
        return self.alive(s, b) & (s.offset[b] < s.logEnd)

    @action(b=Brokers)
    def BeginControlledShutdown(self, s, t, b):
        """A running broker starts a controlled shutdown (wantShutDown in heartbeats)."""
        t.bstate[b] = PENDING_CS
        return s.bstate[b] == RUNNING

    @action(b=Brokers)
    def RegistrationTimesOut(self, s, t, b):
        """A registration request is delayed past its timeout (or its response is lost):
        it stays in the network, and the broker retries."""
        self._put(t, b, self._registration_request(s, b))
        t.delays = s.delays + 1
        return self.can_register(s, b) & (s.zKind[b] == Req.NONE) & (s.delays < self.MaxDelays)

    @action(b=Brokers)
    def HeartbeatTimesOut(self, s, t, b):
        """A heartbeat is delayed past its timeout (or its response is lost)."""
        self._put(t, b, self._heartbeat_request(s, b))
        t.delays = s.delays + 1
        return (self.can_heartbeat(s, b) & (s.zKind[b] == Req.NONE) & ~self.inert(t, b)
                & (s.delays < self.MaxDelays))

    @action(b=Brokers)
    def DropDelayed(self, s, t, b):
        """The network loses a delayed request."""
        self._put(t, b, (0,) * len(_REQ_FIELDS))
        return s.zKind[b] != Req.NONE

    # -- controller -----------------------------------------------------------------------
    def _registration(self, s: Any, t: Any, b: int, m: _Msg) -> tuple[Any, Any, Any]:
        """registerBroker; returns (enabled, answered, epoch answered)."""
        registered = s.regEpoch[b] != 0
        same = registered & self.same_incarnation(s, b, m.inc)
        accept = ~same & (~registered | self.registration_expired(s, b))
        epoch = s.logEnd + 1
        t.regEpoch[b] = where(accept, epoch, s.regEpoch[b])
        t.regInc[b] = where(accept, m.inc, s.regInc[b])
        t.fenced[b] = s.fenced[b] | accept
        t.inCS[b] = s.inCS[b] & ~accept
        t.csOffset[b] = where(accept, 0, s.csOffset[b])
        t.reported[b] = where(accept, 0, s.reported[b])
        self._append(s, t, accept, Rec.REGISTER, b)
        enabled = (m.kind == Req.REGISTRATION) & (~accept | self.can_append(s))
        return enabled, same | accept, where(same, s.regEpoch[b], epoch)

    def _heartbeat(self, s: Any, t: Any, b: int, nl: int, m: _Msg) -> tuple[Any, ...]:
        """processBrokerHeartbeat; returns (enabled, answered, isCaughtUp, isFenced,
        shouldShutDown)."""
        ok = (s.regEpoch[b] != 0) & self.epoch_current(s, b, m.epoch) & self.offset_accepted(
            s, b, m.off)
        in_cs = s.csOffset[b] != 0  # the heartbeat manager's CONTROLLED_SHUTDOWN
        is_fenced = ~in_cs & s.fenced[b]
        is_unfenced = ~in_cs & ~s.fenced[b]
        leads = self.leads_any(s, b)
        caught = self.reported_caught_up(s, b, m.off)
        wf, ws = m.wf, m.ws
        shutdown_now = ok & ((is_fenced & ws) | (is_unfenced & ws & (wf | ~leads))
                             | (in_cs & ~leads & self.others_caught_up(s, b)))
        unfence = ok & is_fenced & ~ws & ~wf & caught
        fence = ok & is_unfenced & wf & ~ws
        controlled = ok & is_unfenced & ~wf & ws & leads
        remove = fence | controlled | (shutdown_now & ~is_fenced)
        append = remove | unfence
        valid = self._partitions(s, t, b, nl, remove, unfence)
        now_fenced = where(shutdown_now | fence, True, where(unfence, False, s.fenced[b]))
        t.fenced[b] = now_fenced
        t.inCS[b] = s.inCS[b] | controlled
        t.csOffset[b] = where(controlled, s.logEnd + 1, where(now_fenced, 0, s.csOffset[b]))
        t.reported[b] = where(ok, m.off, s.reported[b])
        kind = where(unfence, Rec.UNFENCE, where(controlled, Rec.CONTROLLED_SHUTDOWN, Rec.FENCE))
        self._append(s, t, append, kind, b)
        enabled = (m.kind == Req.HEARTBEAT) & valid & (~append | self.can_append(s))
        return enabled, ok, ok & caught, now_fenced, shutdown_now

    def _broker_reacts(self, s: Any, t: Any, b: int, answered: Any, caught: Any,
                       is_fenced: Any, shut: Any) -> None:
        """BrokerLifecycleManager's heartbeat response handler."""
        st = s.bstate[b]
        to_recovery = answered & (st == STARTING) & caught
        to_running = answered & (st == RECOVERY) & ~is_fenced
        to_shutdown = answered & (st == PENDING_CS) & shut
        t.bstate[b] = where(to_recovery, RECOVERY, where(
            to_running, RUNNING, where(to_shutdown, SHUTTING_DOWN, st)))
        t.bEpoch[b] = where(to_shutdown, 0, s.bEpoch[b])

    @action(b=Brokers)
    def Register(self, s, t, b):
        """A registration round trip: BrokerRegistrationRequest(brokerId, incarnationId),
        registerBroker, and the broker takes the epoch (or retries after an error)."""
        m = _Msg(self._registration_request(s, b))
        enabled, answered, epoch = self._registration(s, t, b, m)
        t.bEpoch[b] = where(answered, epoch, 0)
        self._drop_inert(t, b)
        return self.can_register(s, b) & enabled

    @action(b=Brokers, nl=_leader_choices)
    def Heartbeat(self, s, t, b, nl):
        """A heartbeat round trip: BrokerHeartbeatRequest(epoch, currentMetadataOffset,
        wantFence, wantShutDown), processBrokerHeartbeat, and the broker's reaction to
        isCaughtUp / isFenced / shouldShutDown (an error: it retries)."""
        m = _Msg(self._heartbeat_request(s, b))
        enabled, answered, caught, is_fenced, shut = self._heartbeat(s, t, b, nl, m)
        self._broker_reacts(s, t, b, answered, caught, is_fenced, shut)
        self._drop_inert(t, b)
        return self.can_heartbeat(s, b) & enabled

    @action(b=Brokers)
    def ControllerHandlesDelayedRegistration(self, s, t, b):
        """registerBroker on a delayed request; its connection is gone, so is the answer."""
        self._put(t, b, (0,) * len(_REQ_FIELDS))
        return self._registration(s, t, b, _Msg.delayed(s, b))[0]

    @action(b=Brokers, nl=_leader_choices)
    def ControllerHandlesDelayedHeartbeat(self, s, t, b, nl):
        """processBrokerHeartbeat on a delayed request (a retry's or a dead process's)."""
        self._put(t, b, (0,) * len(_REQ_FIELDS))
        return self._heartbeat(s, t, b, nl, _Msg.delayed(s, b))[0]

    @action(b=Brokers, nl=_leader_choices)
    def SessionTimeout(self, s, t, b, nl):
        """The session expired: fence, move leaderships, shrink ISRs (one batch)."""
        ok = self._fence_batch(s, t, b, nl)
        return (s.regEpoch[b] != 0) & ~s.fenced[b] & self.can_append(s) & ok

    @action(p=Partitions, c=Brokers)
    def IsrExpand(self, s, t, p, c):
        """The leader's AlterPartition adds follower ``c`` to the ISR."""
        leader_up = any_of(self.Brokers, lambda lb: (s.leader[p] == lb) & self.alive(s, lb)
                           & (s.bEpoch[lb] == s.regEpoch[lb]))
        follower_up = (((s.bstate[c] == RECOVERY) | (s.bstate[c] == RUNNING)
                        | (s.bstate[c] == PENDING_CS)) & (s.bEpoch[c] == s.regEpoch[c]))
        t.isr[p] = s.isr[p].with_(c)
        self._append(s, t, True, Rec.ISR_EXPAND, c)
        return (leader_up & ~s.isr[p].has(c) & self.acceptable(s, c) & follower_up
                & self.can_append(s))

    # -- properties (from the reusable library in invariants/) --------------------------
    EpochMonotonic = epoch_monotonic()
    UniqueEpochs = unique_epochs()
    CaughtUpBeforeUnfence = caught_up_before_unfence()
    ReportedCaughtUpBeforeUnfence = _doc(
        caught_up_before_unfence(offset="reported", name="ReportedCaughtUpBeforeUnfence"),
        "An unfenced registered broker reported an offset up to its registration.")
    NoStaleRequestEffect = no_stale_request_effect()
    FencedNotLeader = fenced_not_leader()
    FencedNotInIsr = fenced_not_in_isr()
    LeaderEpochMonotonic = leader_epoch_monotonic()
    ControlledShutdownSafe = controlled_shutdown_safe()
    SingleLiveRegistration = single_live_registration()
    RegisteredIncarnationHoldsEpoch = registered_incarnation_holds_epoch()
    RunningHoldsEpoch = running_holds_epoch(
        running=("RECOVERY", "RUNNING", "PENDING_CONTROLLED_SHUTDOWN"),
        name="RunningHoldsEpoch")


class KRaftLifecycleBugLiveReregistration(KRaftLifecycle):
    """Bug: a new incarnation's registration is accepted while the old one is live.

    The new RegisterBrokerRecord fences the broker but moves none of its leaderships.
    """

    def registration_expired(self, s: Any, b: int) -> Any:
        return s.regEpoch[b] >= 0  # always


class KRaftLifecycleBugNoIncarnationCheck(KRaftLifecycle):
    """Bug (000 §8.1, the incarnation id): the controller takes any registration of an id
    whose registration is live as a retry of that registration, whatever its incarnation
    id, and answers the registered epoch: a restarted process then holds the epoch of
    the dead incarnation (RegisteredIncarnationHoldsEpoch)."""

    def same_incarnation(self, s: Any, b: int, inc: Any) -> Any:
        return ~self.registration_expired(s, b)


class KRaftLifecycleBugNoOffsetCheck(KRaftLifecycle):
    """Bug: the controller ignores the reported offset when it unfences (and answers
    ``isCaughtUp``, the same comparison).

    Dropping the check from the unfence decision alone is unobservable: a broker
    only stops asking to be fenced after the controller said it caught up.
    """

    def reported_caught_up(self, s: Any, b: int, off: Any) -> Any:
        return off >= 0  # always


class KRaftLifecycleBugStaleEpoch(KRaftLifecycle):
    """Bug: heartbeats are processed whatever broker epoch they carry."""

    def epoch_current(self, s: Any, b: int, epoch: Any) -> Any:
        return epoch >= 0  # always


class KRaftLifecycleBugFenceKeepsLeader(KRaftLifecycle):
    """Bug: fencing (and controlled shutdown) leave leaderships and ISRs to a later batch
    that never comes: the fence record is written alone."""

    def fence_moves_leadership(self) -> bool:
        return False


class KRaftLifecycleBugEpochOnlyOnElection(KRaftLifecycle):
    """Bug (004: leaderEpoch is "bumped on every leader change"): the leader epoch is
    bumped only when a leader is elected, not when a partition loses its leader, so the
    leaderless partition keeps its old leader's epoch (LeaderEpochMonotonic)."""

    def bumps_leader_epoch(self, old: Any, new: Any) -> Any:
        return (new != old) & (new != 0)


class KRaftLifecycleBugEarlyShutdownGrant(KRaftLifecycle):
    """Bug: a controlled shutdown is granted without waiting for the active brokers to
    report the controlled shutdown offset.

    Its defaults are the smallest configuration with a counterexample: registrations,
    unfences, the controlled-shutdown batch and the grant take six batches (with
    ``MaxLog=5`` the bug is unreachable); restarts and delays are not needed.
    """

    MaxLog = Const(6, min=1, doc="bound on the metadata log end offset (batches)")
    MaxRestarts = Const(0, min=0, doc="restarts in a run, over all brokers (each broker "
                                      "also starts once)")
    MaxDelays = Const(0, min=0, doc="requests the network may delay in a run")

    def others_caught_up(self, s: Any, b: int) -> Any:
        return s.csOffset[b] >= 0  # always
