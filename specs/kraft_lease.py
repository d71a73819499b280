"""KRaft broker sessions and leases in bounded time: KIP-631 and the 4.4 BrokerLifecycleManager.

A refinement of the message-level lifecycle spec (``specs/kraft_lifecycle.py``, KL)
that adds what KL leaves untimed, following the seed-systems note (SEED-SYSTEMS §2(a),
outside the repository) and the seeds ``001`` (KIP-631), ``002`` (the BrokerHeartbeat RPC), ``000``
(the broker lifecycle chapter) and ``004`` (Kafka 4.4 metadata propagation).

Modelled on top of KL
---------------------
**Time as bounded ticks.** ``Tick`` advances every timer by one tick (saturating at
0): the controller's per-broker session ``ses`` (KIP-631 ``registration.lease.timeout.ms``,
4.4 ``broker.session.timeout.ms``: "How long a broker lease lasts without heartbeats
before the controller fences it"), the broker's own lease ``bl`` ("Leases are
time-bounded. A broker cannot continue using a lease indefinitely after sending a single
heartbeat", 001), the heartbeat timer ``hbDue`` ("Steady-state heartbeats are scheduled
broker.heartbeat.interval.ms ... apart, both after success and after failure", 004) and
the registration timer ``regTimer`` (``initial.broker.registration.timeout.ms``, 004).
A tick waits for what is due: it is disabled while a live registered broker's heartbeat
is due (``hbDue = 0``: the heartbeat is sent first, answered, or it times out, KL's
``HeartbeatTimesOut``) and, under KIP-631, while a RUNNING broker's lease has run out
(the broker notices before time moves on). Constants H (heartbeat interval), L
(session), Lb (broker lease) and R (registration timeout) are in ticks; KIP-631's
2000 ms / 18000 ms become H=1 < L, and the broker lease must be shorter than the
session (Lb < L) for the broker to stop serving before the controller reassigns.

* ``SessionTimeout`` (``maybeFenceOneStaleBroker``) needs ``ses = 0``: every accepted
  heartbeat (on time or delayed) and every accepted registration sets ``ses := L``.
* **Log recovery is its own step** (``RecoveryDone``): in RECOVERY the broker runs
  log recovery and then ``setReadyToUnfence()``; heartbeats carry ``wantFence =
  !readyToUnfence`` (004: "RECOVERY is where local log recovery runs; the broker stays
  fenced (wantFence=true) until setReadyToUnfence()"). A restart or crash forgets
  ``ready``.
* **When RECOVERY starts** is where the seeds disagree (000 §8.1: "Upon receiving a
  successful response to its BrokerRegistration request, the broker switches to
  RECOVERY"; 004: "heartbeat isCaughtUp true ⇒ complete initialCatchUpFuture
  RECOVERY"): the constant ``RecoveryOnRegister``. With it, the broker sets wantFence
  false once "the storage layer has completed its start-up and the broker has
  caught-up to its own BrokerRegistration record" (000): ``RecoveryDone`` also needs
  the replayed offset to reach the broker's epoch. Default False (4.4).
* **Registration timeout and rejection.** ``RegistrationTimeout``: a STARTING broker
  without an epoch whose timer ran out exits ("Shutting down because we were unable
  to register with the controller quorum", 004). A refused registration
  (DUPLICATE_BROKER_REGISTRATION: the id's registration is live and belongs to another
  incarnation) either makes the process exit (001: "the broker should shut down rather
  than trying to claim a broker ID which is already in use") or retries (004: "A
  non-NONE registration error ... triggers scheduleNextCommunicationAfterFailure() and a
  retry, bounded by the initial-registration timeout"): the constant ``RejectExits``,
  default False (4.4).
* **Broker-side leases** are the constant ``Sem``: ``KIP631`` (the default) gives the
  broker a lease ``bl := Lb`` with every heartbeat answered "not fenced", and KIP-631's
  FENCED broker state (001: "When brokers are rejected by the controller, or otherwise
  unable to renew their lease before it expires, they enter the 'fenced' state";
  "FENCED: the broker does not respond to client requests"): ``LeaseLapse`` moves a
  RUNNING broker whose lease ran out to FENCED, as does an answer ``isFenced``; a FENCED
  broker keeps heartbeating and returns to RUNNING on an answer "not fenced" (001: "It
  will try to re-register itself ... If it succeeds, it will go into the RUNNING state";
  here with the same epoch, as 002/004's unfencing, since "Unfencing does not increment
  the broker epoch", 000 §8.2). ``K44`` is Kafka 4.4: no broker lease, a RUNNING broker
  ignores ``isFenced`` (004's handler reads it only in RECOVERY), and "the fetch
  mechanism uses various epochs to prevent stale replicas from causing issues" (000).
* **The broker's view of leadership** (``bLeader``): each batch records the partition
  leaders after it (``logLeader``) and ``Replay`` copies them, so a broker *serves* a
  partition when it is RUNNING, its replayed metadata names it leader and (KIP631) its
  lease is valid.
* **The heartbeat order ghost** ``zOld[b]``: the delayed heartbeat in the network is
  older than a heartbeat the controller has since acted on (set when a fresh round trip
  is accepted while a delayed heartbeat waits).

Properties (KL's twelve, plus)
------------------------------
* **NoUnfenceBeforeRecovery**: an unfenced registration whose incarnation is alive
  belongs to a broker that finished log recovery (0.5, 4.11).
* **InOrderHeartbeatEffect** (action): a heartbeat older than one the controller acted
  on never moves the controller's recorded offset: 002's "Heartbeat requests that give a
  NextMetadataOffset which is lower than the previous one recorded for that broker will
  be ignored" (offsets only grow in send order, so a passing old heartbeat reports the
  recorded offset).
* **NoStaleRefence** (action): an out-of-order heartbeat never fences the broker.
* **NoSplitServing**: no two brokers serve one partition at once.
* **RunningImpliesUnfenced**: a RUNNING broker holding the registered epoch is unfenced.

The re-fencing finding (KL, 8 states; issue 14)
-----------------------------------------------
A STARTING heartbeat (wantFence=true) that timed out, handled by the controller after
the broker was unfenced, fences the RUNNING broker: 002's check ignores only a *lower*
offset, and the delayed heartbeat reports the same offset the unfencing heartbeat did.
**The seeds say Kafka does this.** 002's final request has "ShouldFence: True if the
broker wants to be fenced" and the only ordering rule is the strictly-lower one quoted
above; 004 builds ``wantFence = !readyToUnfence`` and keeps one request in flight, but
a timed-out request is simply retried ("scheduled ... both after success and after
failure"), nothing stops the controller from handling the old one; and 000 §8.2 treats
it as ordinary: "While in the RUNNING state, the controller can fence and unfence the
broker based on heartbeats and lack of heartbeats. As long as the broker is still
running, eventually it will send a heartbeat to the controller and the controller will
unfence it." So under ``Sem=K44`` NoStaleRefence fails (9 states: KL's trace with
``RecoveryDone``; the old heartbeat was sent in RECOVERY, before log recovery ended),
an availability blip for the control plane: the fence batch moves leaderships as any
fence, KL's safety properties hold, and the next heartbeat (wantFence=false) unfences
again. For the data plane it is more: the fenced broker keeps serving until it replays
the fence, so with a longer log (MaxLog=6) NoSplitServing fails under K44 through this
very re-fence (22 states; Kafka relies on leader epochs there, 000 §8.1).
KIP-631's own protocol cannot do it: its heartbeat (001) carries
``CurrentState``/``TargetState`` and a broker leaves ACTIVE only when its "lease
expired or revoked (stale metadata, id conflict, unable to communicate, etc.)", never
because an old request asked to stay fenced. Under ``Sem=KIP631`` the controller reads
wantFence only as "do not unfence me yet" (it never fences an unfenced broker for it),
and must: with broker leases, a controller-side fence of a broker holding a valid lease
would let two brokers serve one partition (NoSplitServing).

Constants and results
---------------------
Defaults N=2, P=1, MaxLog=3, MaxRestarts=0, MaxDelays=1, H=1, L=2, Lb=1, R=2,
Sem=KIP631, RecoveryOnRegister=False, RejectExits=False: every property holds (counts
in ``tests/test_kraft_lease.py``, with symmetry over the brokers: 277,716 classes,
depth 23, ~8 s). A split needs six batches (two registrations, two unfences, an ISR
expansion, the fence), so NoSplitServing is vacuous at MaxLog=3 and is exercised with
MaxLog=6 (a slow test). ``RegistrationTimeout`` makes no new states for safety (it
ends in the states a crash does); it matters for liveness. Under ``Sem=K44``
NoSplitServing, RunningImpliesUnfenced and NoStaleRefence fail by design (a controller
fence reaches a RUNNING broker before the broker knows; 000: epochs, not leases, keep
the data plane safe).

Bug variants (each fails with its own defaults: ``modelcheck check
specs/kraft_lease.py:<variant>``): :class:`KRaftLeaseBugUnfenceIgnoresWantFence` (0.5:
the controller unfences a caught-up broker that still asks to be fenced:
NoUnfenceBeforeRecovery), :class:`KRaftLeaseBugNoOffsetRegressionCheck` (002's
lower-offset rule dropped: InOrderHeartbeatEffect) and
:class:`KRaftLeaseBugLeaseOutlivesSession` (Lb > L: RunningImpliesUnfenced in 11
states, NoSplitServing in 24 with MaxLog=6).

Liveness
--------
Not on :class:`KRaftLease`: its log is bounded (``MaxLog``), so every behaviour ends in
a state that stutters forever and every leads-to fails trivially, and the liveness
checker refuses symmetry. :class:`KRaftLeaseLive` (below) puts this spec's timers,
recovery step, broker leases and refusal semantics on the head-relative offsets of
``specs/kraft_lifecycle_live.py`` and checks, with weak fairness per action and per
broker (Tick, Register, Heartbeat, Replay, RecoveryDone, LeaseLapse, SessionTimeout,
RegistrationTimeout, RegistrationRefused), RegistrationResolves,
ControlledShutdownCompletes, EventuallyUnfenced, DeadBrokerEventuallyFenced and
EventuallyStaysUnfenced: all hold. Liveness bug variants, each failing with a lasso:
:class:`KRaftLeaseLiveBugNoRegistrationTimeout` (RegistrationResolves; it holds with
``RejectExits``), :class:`KRaftLeaseLiveBugStuckPublisher`
(ControlledShutdownCompletes) and :class:`KRaftLeaseLiveBugHeartbeatAsLongAsLease`
(EventuallyStaysUnfenced; it holds under K44).

Abstracted
----------
As KL (controller quorum, data replication, ISR shrinks); time is discrete and shared
(one clock; a round trip takes no tick); KIP-631's stale-metadata and KIP-584 feature
rejections (only duplicate ids are refused); 1.1's snapshot fetch; 2.3's draft
two-heartbeat unfencing (currentState=active), superseded by 002's ShouldFence.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from invariants import eventually_stays_unfenced
from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Int,
    Ref,
    action,
    action_property,
    all_of,
    any_of,
    implies,
    invariant,
    where,
)
from specs.kraft_lifecycle import KRaftLifecycle, Req, _Msg
from specs.kraft_lifecycle_live import Held, KRaftLifecycleLive, Rogue


class LeaseBrokerState(IntEnum):
    """Kafka's ``BrokerState`` and KIP-631's FENCED (a broker without a valid lease)."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 4
    SHUTTING_DOWN = 5
    FENCED = 6


class Semantics(IntEnum):
    """Whose lease semantics: Kafka 4.4 (controller sessions only) or KIP-631 (broker
    leases too)."""

    K44 = 0
    KIP631 = 1


(NOT_RUNNING, STARTING, RECOVERY, RUNNING, PENDING_CS, SHUTTING_DOWN,
 FENCED) = LeaseBrokerState


class KRaftLease(KRaftLifecycle):
    """KL with bounded timers, sessions, broker leases, recovery, timeouts, rejection."""

    MaxLog = Const(3, min=1, doc="bound on the metadata log end offset (batches)")
    MaxRestarts = Const(0, min=0, doc="restarts in a run, over all brokers (each broker "
                                      "also starts once)")
    H = Const(1, min=1, doc="heartbeat interval (ticks)")
    L = Const(2, min=1, doc="controller session: ticks without a heartbeat before fencing")
    Lb = Const(1, min=1, doc="broker lease (ticks, KIP631): must be < L")
    R = Const(2, min=0, doc="initial registration timeout (ticks)")
    Sem = Const(Semantics.KIP631, doc="KIP631 (broker leases, FENCED state) or K44")
    RecoveryOnRegister = Const(False, doc="RECOVERY on the registration response (000) "
                                          "instead of on isCaughtUp (004)")
    RejectExits = Const(False, doc="a refused registration exits (001) instead of "
                                   "retrying (004)")

    bstate = Array(KRaftLifecycle.Brokers, Enum(LeaseBrokerState))
    # -- time ---------------------------------------------------------------------------
    ses = Array(KRaftLifecycle.Brokers, Int(0, L))  # controller's session timer
    bl = Array(KRaftLifecycle.Brokers, Int(0, Lb))  # broker's lease timer (KIP631)
    hbDue = Array(KRaftLifecycle.Brokers, Int(0, H))  # ticks until the next heartbeat
    regTimer = Array(KRaftLifecycle.Brokers, Int(0, R))  # ticks left to register
    # -- broker process ---------------------------------------------------------------
    ready = Array(KRaftLifecycle.Brokers, Bool())  # log recovery done (readyToUnfence)
    bLeader = Array(KRaftLifecycle.Brokers,
                    Array(KRaftLifecycle.Partitions, Ref(KRaftLifecycle.Brokers)))
    # -- the log: leaders after each batch -----------------------------------------------
    logLeader = Array(KRaftLifecycle.Partitions,
                      Array(KRaftLifecycle.LogOffsets, Ref(KRaftLifecycle.Brokers)))
    # -- ghost: the delayed heartbeat is older than one the controller acted on ---------
    zOld = Array(KRaftLifecycle.Brokers, Bool())

    # -- helpers --------------------------------------------------------------------------
    def leases(self) -> bool:
        return self.Sem == Semantics.KIP631

    def alive(self, s: Any, b: int) -> Any:
        return super().alive(s, b) | (s.bstate[b] == FENCED)

    def serving(self, s: Any, b: int, p: int) -> Any:
        """Broker ``b`` answers clients as ``p``'s leader."""
        ok = (s.bstate[b] == RUNNING) & (s.bLeader[b][p] == b)
        return ok & (s.bl[b] > 0) if self.leases() else ok

    def _heartbeat_request(self, s: Any, b: int) -> tuple[Any, ...]:
        """``wantFence = !readyToUnfence`` (004)."""
        return (Req.HEARTBEAT, s.inc[b], s.bEpoch[b], s.offset[b], ~s.ready[b],
                s.bstate[b] == PENDING_CS)

    def controller_wants_fence(self, s: Any, b: int, m: _Msg) -> Any:
        """How the controller reads wantFence: 002's ShouldFence (K44), or KIP-631's
        "not yet": it keeps a fenced broker fenced, never fences an unfenced one."""
        return m.wf & s.fenced[b] if self.leases() else m.wf

    def _heartbeat(self, s: Any, t: Any, b: int, nl: int, m: _Msg) -> tuple[Any, ...]:
        m.wf = self.controller_wants_fence(s, b, m)
        out = super()._heartbeat(s, t, b, nl, m)
        t.ses[b] = where(out[1], self.L, s.ses[b])
        return out

    def _append(self, s: Any, t: Any, cond: Any, kind: Any, b: int) -> None:
        super()._append(s, t, cond, kind, b)
        at = s.logEnd + 1
        for p in self.Partitions:
            t.logLeader[p][at] = where(cond, t.leader[p], s.logLeader[p][at])

    def _drop_inert(self, t: Any, b: int) -> None:
        super()._drop_inert(t, b)
        t.zOld[b] = t.zOld[b] & (t.zKind[b] != Req.NONE)

    def _put(self, t: Any, b: int, values: tuple[Any, ...]) -> None:
        super()._put(t, b, values)
        t.zOld[b] = False

    def _broker_reacts(self, s: Any, t: Any, b: int, answered: Any, caught: Any,
                       is_fenced: Any, shut: Any) -> None:
        super()._broker_reacts(s, t, b, answered, caught, is_fenced, shut)
        st = s.bstate[b]
        if self.RecoveryOnRegister:  # RECOVERY began at registration
            t.bstate[b] = where(st == STARTING, st, t.bstate[b])
        if self.leases():
            good = answered & ~is_fenced
            t.bl[b] = where(good, self.Lb, where(answered, 0, s.bl[b]))
            t.bstate[b] = where(good & (st == FENCED), RUNNING, where(
                answered & is_fenced & (st == RUNNING), FENCED, t.bstate[b]))

    # -- time -------------------------------------------------------------------------
    def urgent(self, s: Any) -> Any:
        """Something must happen before time moves on."""
        def due(b: int) -> Any:
            hb = self.can_heartbeat(s, b) & (s.hbDue[b] == 0)
            if self.leases():
                hb = hb | ((s.bstate[b] == RUNNING) & (s.bl[b] == 0))
            return hb
        return any_of(self.Brokers, due)

    @action
    def Tick(self, s, t):
        """One tick: every timer runs down (saturating at 0)."""
        for b in self.Brokers:
            t.ses[b] = where(s.ses[b] > 0, s.ses[b] - 1, 0)
            t.hbDue[b] = where(s.hbDue[b] > 0, s.hbDue[b] - 1, 0)
            if self.leases():
                t.bl[b] = where(s.bl[b] > 0, s.bl[b] - 1, 0)
            t.regTimer[b] = where(s.regTimer[b] > 0, s.regTimer[b] - 1, 0)
        timers = any_of(self.Brokers, lambda b: (s.ses[b] > 0) | (s.hbDue[b] > 0)
                        | (s.bl[b] > 0) | (s.regTimer[b] > 0))
        return timers & ~self.urgent(s)

    # -- broker process ---------------------------------------------------------------
    @action(b=KRaftLifecycle.Brokers)
    def Start(self, s, t, b):
        """A broker process starts: a new incarnation, STARTING, its registration timer set."""
        t.regTimer[b] = self.R
        t.ready[b] = False
        t.hbDue[b] = 0
        t.bl[b] = 0
        return KRaftLifecycle.Start.fn(self, s, t, b)

    @action(b=KRaftLifecycle.Brokers)
    def Crash(self, s, t, b):
        """The process dies (its timers and recovery with it)."""
        t.regTimer[b] = 0
        t.ready[b] = False
        t.hbDue[b] = 0
        t.bl[b] = 0
        return KRaftLifecycle.Crash.fn(self, s, t, b)

    @action(b=KRaftLifecycle.Brokers)
    def Replay(self, s, t, b):
        """A live broker applies the next batch, leaders included."""
        for p in self.Partitions:
            t.bLeader[b][p] = s.logLeader[p][s.offset[b] + 1]
        return KRaftLifecycle.Replay.fn(self, s, t, b)

    @action(b=KRaftLifecycle.Brokers)
    def RecoveryDone(self, s, t, b):
        """Log recovery finishes: setReadyToUnfence() (wantFence becomes false)."""
        t.ready[b] = True
        ok = (s.bstate[b] == RECOVERY) & ~s.ready[b]
        if self.RecoveryOnRegister:
            ok = ok & (s.offset[b] >= s.bEpoch[b])
        return ok

    @action(b=KRaftLifecycle.Brokers)
    def LeaseLapse(self, s, t, b):
        """KIP631: a RUNNING broker whose lease ran out stops serving (FENCED)."""
        t.bstate[b] = FENCED
        return (s.bstate[b] == RUNNING) & (s.bl[b] == 0) & self.leases()

    @action(b=KRaftLifecycle.Brokers)
    def RegistrationTimeout(self, s, t, b):
        """initial.broker.registration.timeout.ms ran out: the process exits."""
        t.bstate[b] = NOT_RUNNING
        t.ready[b] = False
        return self.can_register(s, b) & (s.regTimer[b] == 0)

    @action(b=KRaftLifecycle.Brokers)
    def Register(self, s, t, b):
        """A registration round trip; refused: retry (004) or exit (001, RejectExits)."""
        m = _Msg(self._registration_request(s, b))
        enabled, answered, epoch = self._registration(s, t, b, m)
        t.bEpoch[b] = where(answered, epoch, 0)
        t.ses[b] = where(answered & (t.regEpoch[b] != s.regEpoch[b]), self.L, s.ses[b])
        t.hbDue[b] = 0
        t.regTimer[b] = where(answered, 0, s.regTimer[b])
        exits = ~answered if self.RejectExits else False
        st = where(exits, NOT_RUNNING, STARTING)
        if self.RecoveryOnRegister:
            st = where(answered, RECOVERY, st)
        t.bstate[b] = st
        self._drop_inert(t, b)
        return self.can_register(s, b) & enabled

    @action(b=KRaftLifecycle.Brokers, nl=KRaftLifecycle.Heartbeat.params["nl"])
    def Heartbeat(self, s, t, b, nl):
        """A heartbeat round trip (as KL); the next one is due in H ticks."""
        m = _Msg(self._heartbeat_request(s, b))
        enabled, answered, caught, is_fenced, shut = self._heartbeat(s, t, b, nl, m)
        self._broker_reacts(s, t, b, answered, caught, is_fenced, shut)
        t.hbDue[b] = self.H
        t.zOld[b] = s.zOld[b] | (answered & (s.zKind[b] == Req.HEARTBEAT))
        self._drop_inert(t, b)
        return self.can_heartbeat(s, b) & enabled

    @action(b=KRaftLifecycle.Brokers)
    def HeartbeatTimesOut(self, s, t, b):
        """A heartbeat is delayed past its timeout; the next one is due in H ticks."""
        t.hbDue[b] = self.H
        return KRaftLifecycle.HeartbeatTimesOut.fn(self, s, t, b)

    @action(b=KRaftLifecycle.Brokers, nl=KRaftLifecycle.SessionTimeout.params["nl"])
    def SessionTimeout(self, s, t, b, nl):
        """The session ran out (``ses = 0``): fence, move leaderships, shrink ISRs."""
        return KRaftLifecycle.SessionTimeout.fn(self, s, t, b, nl) & (s.ses[b] == 0)

    # -- properties ---------------------------------------------------------------------
    @invariant
    def NoUnfenceBeforeRecovery(self, s):
        """An unfenced registration of a live incarnation finished log recovery."""
        return all_of(self.Brokers, lambda b: implies(
            (s.regEpoch[b] != 0) & ~s.fenced[b] & self.alive(s, b)
            & (s.inc[b] == s.regInc[b]), s.ready[b]))

    def handled_old(self, s: Any, t: Any, b: int) -> Any:
        """The controller handled broker ``b``'s delayed heartbeat, older than one it acted
        on, in this transition (the slot emptied, and not because the heartbeat was
        overtaken: dropped once its offset fell below the recorded one)."""
        return (s.zOld[b] & (s.zKind[b] == Req.HEARTBEAT) & (t.zKind[b] == Req.NONE)
                & ~(s.zOffset[b] < t.reported[b]) & (t.regEpoch[b] == s.regEpoch[b]))

    @action_property
    def InOrderHeartbeatEffect(self, s, t):
        """An out-of-order heartbeat never moves the controller's recorded offset."""
        return all_of(self.Brokers, lambda b: implies(
            self.handled_old(s, t, b), t.reported[b] == s.reported[b]))

    @action_property
    def NoStaleRefence(self, s, t):
        """An out-of-order heartbeat never fences the broker."""
        return all_of(self.Brokers, lambda b: implies(
            self.handled_old(s, t, b), s.fenced[b] | ~t.fenced[b]))

    @invariant
    def NoSplitServing(self, s):
        """No two brokers serve one partition."""
        def pair(p: int) -> Any:
            return all_of(self.Brokers, lambda b: all_of(self.Brokers, lambda c: implies(
                b < c, ~(self.serving(s, b, p) & self.serving(s, c, p)))))
        return all_of(self.Partitions, pair)

    @invariant
    def RunningImpliesUnfenced(self, s):
        """A RUNNING broker holding the registered epoch is unfenced."""
        return all_of(self.Brokers, lambda b: implies(
            (s.bstate[b] == RUNNING) & (s.bEpoch[b] == s.regEpoch[b]), ~s.fenced[b]))


class KRaftLeaseBugUnfenceIgnoresWantFence(KRaftLease):
    """Bug (0.5): the controller unfences a caught-up broker that still asks to be fenced
    (before its log recovery finished)."""

    def controller_wants_fence(self, s: Any, b: int, m: _Msg) -> Any:
        return m.wf & False


class KRaftLeaseBugNoOffsetRegressionCheck(KRaftLease):
    """Bug (002): a heartbeat reporting a lower offset than the recorded one is processed."""

    def offset_accepted(self, s: Any, b: int, off: Any) -> Any:
        return off >= 0  # always


class KRaftLeaseBugLeaseOutlivesSession(KRaftLease):
    """Bug (001): the broker's lease outlives the controller's session (Lb > L), so the
    controller reassigns leadership while the broker still serves."""

    Lb = Const(3, min=1, doc="broker lease (ticks, KIP631): must be < L")


# ======================================================================================
# Liveness: the lease lifecycle under fairness
# ======================================================================================

LB = KRaftLifecycleLive.Brokers


class KRaftLeaseLive(KRaftLifecycleLive):
    """The lease lifecycle in bounded time, with head-relative offsets, under fairness.

    The safety spec above bounds its log, so every behaviour ends and every leads-to
    fails trivially; this class adds its timers, log recovery, KIP-631's broker leases
    and FENCED state, the registration timer and the refusal semantics to the liveness
    version of the lifecycle (``specs/kraft_lifecycle_live.py``, KLL: head-relative
    offsets, epochs only compared, round-trip requests, a rogue duplicate of broker 1).

    **Time.** ``Tick`` runs every timer down (saturating) as in :class:`KRaftLease`:
    the controller's session ``ses`` (set to L by an accepted registration or
    heartbeat), the broker's lease ``bl`` (KIP631: Lb on an answer "not fenced"), the
    heartbeat timer ``hbDue`` (H after every heartbeat, sent or lost), the registration
    timer ``regTimer`` (R at start) and the rogue's heartbeat timer ``rogueDue``. A tick
    waits while a heartbeat is due or (KIP631) a RUNNING broker's lease ran out.
    Heartbeats are sent when due (``hbDue = 0``: "scheduled broker.heartbeat.interval.ms
    ... apart, both after success and after failure", 004), not earlier.

    **Changed from KLL.** ``SessionTimeout`` needs ``ses = 0`` (KLL: the holder stopped
    heartbeating); ``LateHeartbeat`` is a lost heartbeat (the next is due in H ticks;
    at most ``MaxLate`` in a run), so a live broker's session runs out only when
    heartbeats are lost for L ticks; ``RegistrationTimeout`` needs ``regTimer = 0``
    (KLL: a refused or blocked registration); ``wantFence = !readyToUnfence``, set by
    ``RecoveryDone`` in RECOVERY (with ``RecoveryOnRegister``, RECOVERY starts at the
    registration response and recovery also waits for the broker to replay its own
    registration, 000); with ``RejectExits`` a refused registration exits
    (``RegistrationRefused``, 001). KIP631: ``LeaseLapse`` (RUNNING, ``bl = 0`` ->
    FENCED), an answer "fenced" moves RUNNING to FENCED and "not fenced" FENCED to
    RUNNING; the controller reads wantFence as "do not unfence me yet".

    **Fairness** (weak, per broker): ``Tick``, ``Register``, ``Heartbeat``,
    ``Replay``, ``RecoveryDone``, ``LeaseLapse``, ``SessionTimeout``,
    ``RegistrationTimeout``, ``RegistrationRefused`` and the rogue's ``RogueRegisters``
    and ``RogueHeartbeat``. Not fair (may never happen, finitely often): ``Start``
    (MaxRestarts), ``Crash``, ``BeginControlledShutdown``, ``LateHeartbeat``
    (MaxLate), ``IsrExpand``, ``RogueStart``, ``RogueStops``.

    **Properties**: KLL's (RegistrationResolves, ControlledShutdownCompletes,
    EventuallyUnfenced, DeadBrokerEventuallyFenced, FencedNotLeader, FencedNotInIsr;
    FENCED counts as alive) and **EventuallyStaysUnfenced** (``<>[](alive => RUNNING
    /\\ ~fenced)``, broker 1): once failures stop, a broker that is up runs unfenced
    for good. Defaults N=2, P=1, MaxLag=2, MaxRestarts=1, MaxLate=1, Rogues=0, H=1,
    Lb=2, L=3, R=4 (KIP-631's 2 s heartbeats and longer leases: H < Lb < L; Kafka's 60 s
    registration timeout outlives its 9 s session: R > L), KIP631,
    4.4's recovery and retry: all hold (counts in ``tests/test_kraft_lease_live.py``).
    """

    H = Const(1, min=1, doc="heartbeat interval (ticks)")
    L = Const(3, min=1, doc="controller session: ticks without a heartbeat before fencing")
    Lb = Const(2, min=1, doc="broker lease (ticks, KIP631): must be < L")
    R = Const(4, min=0, doc="initial registration timeout (ticks): > L, so that a restarted "
                            "broker outlives its old session (Kafka: 60 s against 9 s)")
    MaxLate = Const(1, min=0, doc="heartbeats of live brokers lost in a run")
    Sem = Const(Semantics.KIP631, doc="KIP631 (broker leases, FENCED state) or K44")
    RecoveryOnRegister = Const(False, doc="RECOVERY on the registration response (000) "
                                          "instead of on isCaughtUp (004)")
    RejectExits = Const(False, doc="a refused registration exits (001) instead of "
                                   "retrying (004)")

    bstate = Array(LB, Enum(LeaseBrokerState))
    ses = Array(LB, Int(0, L))
    bl = Array(LB, Int(0, Lb))
    hbDue = Array(LB, Int(0, H))
    regTimer = Array(LB, Int(0, R))
    ready = Array(LB, Bool())
    rogueDue = Int(0, H)

    fairness = {**KRaftLifecycleLive.fairness, "Tick": "weak", "RecoveryDone": "weak",
                "LeaseLapse": "weak", "RegistrationRefused": "weak"}

    EventuallyStaysUnfenced = eventually_stays_unfenced()

    def init_states(self) -> Any:
        """KLL's initial states, every registration timer running."""
        for st in super().init_states():
            st["regTimer"] = {b: self.R for b in self.Brokers}
            yield st

    # -- helpers ------------------------------------------------------------------------
    def leases(self) -> bool:
        return self.Sem == Semantics.KIP631

    def alive(self, s: Any, b: int) -> Any:
        return super().alive(s, b) | (s.bstate[b] == FENCED)

    def holds(self, s: Any, b: int) -> Any:
        """The process holds b's registered epoch (its heartbeats are accepted)."""
        return self.alive(s, b) & (s.epoch[b] == Held.CURRENT)

    def urgent(self, s: Any) -> Any:
        """Something is due before time moves on: a heartbeat, or (KIP631) a RUNNING
        broker's lapsed lease."""
        def due(b: int) -> Any:
            d = self.holds(s, b) & (s.hbDue[b] == 0)
            if self.leases():
                d = d | ((s.bstate[b] == RUNNING) & (s.bl[b] == 0))
            return d
        out = any_of(self.Brokers, due)
        if self.Rogues:
            out = out | ((s.rogue == Rogue.HOLDS) & (s.rogueDue == 0))
        return out

    def _stop_timers(self, t: Any, b: int) -> None:
        t.ready[b] = False
        t.hbDue[b] = 0
        t.bl[b] = 0
        t.regTimer[b] = 0

    # -- time -----------------------------------------------------------------------------
    @action
    def Tick(self, s, t):
        """One tick: every timer runs down (saturating at 0)."""
        running: Any = s.rogueDue > 0
        for b in self.Brokers:
            t.ses[b] = where(s.ses[b] > 0, s.ses[b] - 1, 0)
            t.hbDue[b] = where(s.hbDue[b] > 0, s.hbDue[b] - 1, 0)
            t.bl[b] = where(s.bl[b] > 0, s.bl[b] - 1, 0)
            t.regTimer[b] = where(s.regTimer[b] > 0, s.regTimer[b] - 1, 0)
            running = running | (s.ses[b] > 0) | (s.hbDue[b] > 0) | (s.bl[b] > 0) | (
                s.regTimer[b] > 0)
        t.rogueDue = where(s.rogueDue > 0, s.rogueDue - 1, 0)
        return running & ~self.urgent(s)

    # -- broker process ---------------------------------------------------------------
    @action(b=LB)
    def Start(self, s, t, b):
        """A stopped process starts: STARTING, its registration timer set."""
        self._stop_timers(t, b)
        t.regTimer[b] = self.R
        return KRaftLifecycleLive.Start.fn(self, s, t, b)

    @action(b=LB)
    def Crash(self, s, t, b):
        """The process dies (its timers and log recovery with it)."""
        self._stop_timers(t, b)
        return KRaftLifecycleLive.Crash.fn(self, s, t, b)

    @action(b=LB)
    def Register(self, s, t, b):
        """An accepted registration round trip: the session starts, a heartbeat is due
        at once; with RecoveryOnRegister the broker enters RECOVERY (000)."""
        t.ses[b] = self.L
        t.hbDue[b] = 0
        t.regTimer[b] = 0
        ok = KRaftLifecycleLive.Register.fn(self, s, t, b)
        if self.RecoveryOnRegister:
            t.bstate[b] = RECOVERY
        return ok

    @action(b=LB)
    def RegistrationRefused(self, s, t, b):
        """RejectExits (001): DUPLICATE_BROKER_REGISTRATION makes the process exit."""
        self._stop_timers(t, b)
        t.bstate[b] = NOT_RUNNING
        return ((s.bstate[b] == STARTING) & (s.epoch[b] == Held.NONE) & s.reg[b]
                & ~s.fenced[b] & self.RejectExits)

    @action(b=LB)
    def RegistrationTimeout(self, s, t, b):
        """``initial.broker.registration.timeout.ms`` ran out without a registration."""
        self._stop_timers(t, b)
        t.bstate[b] = NOT_RUNNING
        return ((s.bstate[b] == STARTING) & (s.epoch[b] == Held.NONE)
                & (s.regTimer[b] == 0) & self.registration_timeout())

    @action(b=LB)
    def RecoveryDone(self, s, t, b):
        """Log recovery finishes: setReadyToUnfence() (wantFence becomes false); with
        RecoveryOnRegister also once the broker replayed its own registration (000)."""
        t.ready[b] = True
        ok = (s.bstate[b] == RECOVERY) & ~s.ready[b]
        if self.RecoveryOnRegister:
            ok = ok & (s.toReg[b] == 0)
        return ok

    @action(b=LB)
    def LeaseLapse(self, s, t, b):
        """KIP631: a RUNNING broker whose lease ran out stops serving (FENCED)."""
        t.bstate[b] = FENCED
        return (s.bstate[b] == RUNNING) & (s.bl[b] == 0) & self.leases()

    @action(b=LB)
    def Heartbeat(self, s, t, b):
        """A due heartbeat round trip (epoch, offset, wantFence = !readyToUnfence,
        wantShutDown) and the broker's reaction; the next one is due in H ticks."""
        st = s.bstate[b]
        caught = s.toReg[b] == 0
        wf = ~s.ready[b] & s.fenced[b] if self.leases() else ~s.ready[b]
        ws = st == PENDING_CS
        ok, now_fenced, shut = self._heartbeat(
            s, t, b, wf, ws, caught, lambda x: self.reached(s, b, x))
        nxt = where((st == STARTING) & caught, RECOVERY, where(
            (st == RECOVERY) & ~now_fenced, RUNNING, where(ws & shut, SHUTTING_DOWN, st)))
        if self.leases():
            nxt = where((st == FENCED) & ~now_fenced, RUNNING, where(
                (st == RUNNING) & now_fenced, FENCED, nxt))
            t.bl[b] = where(now_fenced | shut, 0, self.Lb)
        t.bstate[b] = nxt
        t.epoch[b] = where(ws & shut, Held.NONE, s.epoch[b])
        t.ses[b] = self.L
        t.hbDue[b] = where(ws & shut, 0, self.H)
        t.ready[b] = where(ws & shut, False, s.ready[b])
        return self.holds(s, b) & (s.hbDue[b] == 0) & ok

    @action(b=LB)
    def LateHeartbeat(self, s, t, b):
        """A due heartbeat is lost (or times out): the next one is due in H ticks."""
        t.hbDue[b] = self.H
        t.late = s.late + 1
        return self.holds(s, b) & (s.hbDue[b] == 0) & (s.late < self.MaxLate)

    # -- controller -----------------------------------------------------------------------
    @action(b=LB)
    def SessionTimeout(self, s, t, b):
        """The session ran out (``ses = 0``): the controller fences the broker (one batch)."""
        self._fence(s, t, b)
        return s.reg[b] & ~s.fenced[b] & (s.ses[b] == 0) & self.can_append(s)

    # -- the rogue duplicate of broker 1 -------------------------------------------------
    @action
    def RogueRegisters(self, s, t):
        """The rogue's registration is accepted; its session starts."""
        t.ses[1] = self.L
        t.rogueDue = 0
        return KRaftLifecycleLive.RogueRegisters.fn(self, s, t)

    @action
    def RogueHeartbeat(self, s, t):
        """The rogue's due heartbeat keeps broker 1's session alive."""
        t.ses[1] = self.L
        t.rogueDue = self.H
        return KRaftLifecycleLive.RogueHeartbeat.fn(self, s, t) & (s.rogueDue == 0)

    @action
    def RogueStops(self, s, t):
        """The rogue process stops."""
        t.rogueDue = 0
        return KRaftLifecycleLive.RogueStops.fn(self, s, t)


class KRaftLeaseLiveBugNoRegistrationTimeout(KRaftLeaseLive):
    """Bug (4.13, 1.4): a refused registration is retried for ever (no
    ``initial.broker.registration.timeout.ms``) while a rogue duplicate holds the id:
    RegistrationResolves fails under 4.4's retry; with ``RejectExits`` (001: "the broker
    should shut down rather than trying to claim a broker ID which is already in use")
    it holds without any timeout."""

    Rogues = Const(1, min=0, max=1, doc="1: a rogue duplicate process claims broker id 1")
    MaxRestarts = Const(0, min=0, doc="restarts in a run, over all brokers")
    MaxLate = Const(0, min=0, doc="heartbeats of live brokers lost in a run")

    def registration_timeout(self) -> bool:
        return False


class KRaftLeaseLiveBugStuckPublisher(KRaftLeaseLive):
    """Bug (004: "a single slow publisher stalls the whole metadata pipeline"): once a
    broker runs, its loader may stop for ever; it keeps heartbeating its old offset and
    never reports another broker's controlled-shutdown offset:
    ControlledShutdownCompletes fails (as KLL's variant, here in bounded time; no
    failures are needed: its defaults have no restarts and no lost heartbeats)."""

    MaxRestarts = Const(0, min=0, doc="restarts in a run, over all brokers")
    MaxLate = Const(0, min=0, doc="heartbeats of live brokers lost in a run")

    def replay_fair_state(self, s: Any, b: int) -> Any:
        return ((s.bstate[b] != RUNNING) & (s.bstate[b] != PENDING_CS)
                & (s.bstate[b] != FENCED))

    @action(b=LB)
    def SlowReplay(self, s, t, b):
        """A running broker's loader applies the next batch, if its publishers let it."""
        t.lag[b] = s.lag[b] - 1
        t.toReg[b] = where(s.toReg[b] > 0, s.toReg[b] - 1, 0)
        return (self.alive(s, b) & (s.lag[b] > 0) & (s.lag[b] < self.MaxLag)
                & ~self.replay_fair_state(s, b))


class KRaftLeaseLiveBugHeartbeatAsLongAsLease(KRaftLeaseLive):
    """Bug (001's leases, 000 §8.2): the heartbeat interval is as long as the broker's
    lease (H = Lb): the lease runs out as the next heartbeat falls due, and a RUNNING
    broker may lapse to FENCED before every heartbeat, for ever, with no failure:
    EventuallyStaysUnfenced fails under KIP631 (under K44, without broker leases, it
    holds). No failures are needed: its defaults have no restarts and no lost
    heartbeats."""

    H = Const(2, min=1, doc="heartbeat interval (ticks)")
    MaxRestarts = Const(0, min=0, doc="restarts in a run, over all brokers")
    MaxLate = Const(0, min=0, doc="heartbeats of live brokers lost in a run")
