"""KRaft broker lifecycle under fairness: what must eventually happen (liveness).

The liveness version of ``specs/kraft_lifecycle.py`` (KL), following the outline of a
lease-and-liveness model of the broker lifecycle. The source documents (the broker
lifecycle description, KIP-631, the heartbeat RPC and Kafka 4.4's metadata
propagation) promise progress: "as long as the broker is still
running, eventually it will send a heartbeat to the controller and the controller
will unfence it" (000 §8.2); "heartbeats continue until the broker receives a
response with shouldShutdown=true" (000 §8.3); a broker fenced "due to lack of
heartbeats" (000 §8.1, KIP-631 leases in 001); "if registration does not succeed
within initial.broker.registration.timeout.ms ... the broker shuts itself down" (004,
Registration, Gotcha); "a single slow publisher stalls the whole metadata pipeline"
(004, publishers).

Why a separate spec
-------------------
KL bounds the metadata log (``logEnd <= MaxLog``), so every behaviour ends in a
state that stutters forever: every ``~>`` property fails trivially there. Here the
log is unbounded and **offsets are head-relative**: per broker its lag behind the
log end, ``lag[b] = logEnd - offset[b]``, and the distance from its replay position
to its own registration record, ``toReg[b] = regOffset[b] - offset[b]`` (0: caught
up, KL's ``reported >= regEpoch`` on a heartbeat, which reports the current offset);
per broker in controlled shutdown the age of its batch, ``csAge[b] = logEnd -
controlledShutdownOffset[b]``, and the brokers that have not yet reported an offset
>= it, ``csWait[b]`` (a heartbeat of ``o`` removes ``o`` when ``lag[o] <= csAge[b]``).
Counters saturate at ``MaxLag``, and **appends are blocked while a live broker lags
MaxLag** (its loader is fair, so it catches up): a live broker's lag is then exact, a
dead broker's lag only says "at least MaxLag" (a restart re-registers, which resets
what its lag is compared with), and the saturated comparison ``lag[o] <= csAge[b]``
is exact for live brokers. Epochs are only compared, so a process holds ``epoch[b]``
in {NONE, CURRENT, STALE} (its epoch is the registered one, or was superseded).
UniqueEpochs and EpochMonotonic are KL's business and are lost here.

Modelled (as KL unless said)
----------------------------
Broker processes ``Start`` (bounded by ``MaxRestarts``), ``Crash``, ``Register``
(accepted when the id has no registration or it is fenced: a retry after
DUPLICATE_BROKER_REGISTRATION changes nothing), ``Heartbeat`` (the
``processBrokerHeartbeat`` / ``calculateNextBrokerState`` rules of KL and the
broker's reaction), ``Replay``, ``BeginControlledShutdown``; new here:
``RegistrationTimeout`` (a STARTING process without an epoch whose registration is
refused, or cannot be written, shuts itself down, 004), ``SessionTimeout`` only for a
registration whose holder stopped heartbeating (dead, or holding a superseded epoch)
and ``LateHeartbeat`` (a live broker's session expires anyway: a late heartbeat,
bounded by ``MaxLate``). Fencing and controlled shutdown move leaderships and shrink
ISRs in one batch; unfencing makes the broker leader of leaderless partitions whose
ISR holds it; ``IsrExpand`` adds a caught-up follower. **Elections are
deterministic** (the smallest acceptable ISR member), so that each broker's heartbeat
is one action for fairness: ``WF(Heartbeat(b))`` is TLA+'s ``WF(\\E nl:
Heartbeat(b, nl))`` with the choice made by the controller.

**A rogue duplicate** (``Rogues=1``; seed 001: IDs "claimed by another broker", 1.4
"should shut down rather than trying to claim a broker ID"): a second process
configured with broker id 1. It registers when broker 1's registration is absent or
fenced (superseding the real process's epoch), keeps its session alive with
heartbeats (it is abstractly caught up) and may stop.

Fairness (the outline's, per broker): ``WF`` on ``Register(b)``, ``Heartbeat(b)``,
``Replay(b)``, ``SessionTimeout(b)``, ``RegistrationTimeout(b)`` and the rogue's
``RogueRegisters``/``RogueHeartbeat``. ``Start``, ``Crash``,
``BeginControlledShutdown``, ``LateHeartbeat``, ``IsrExpand`` and the rogue's
``RogueStart``/``RogueStops`` are not fair (they may never happen); ``MaxRestarts``
and ``MaxLate`` keep failures finite.

Abstracted
----------
Time (timers are untimed: a timeout is enabled while its condition holds, and weak
fairness makes it fire when the condition persists); KL's delayed and reordered
requests (the safety spec's subject: here every request is a round trip, so a
heartbeat always carries the process's current offset and the offset-regression
check never fires); incarnation ids (without delayed requests a process registers
at most once, so a same-incarnation retry never happens); leader epochs (they grow
without bound); log recovery (ready on RECOVERY, as KL); the controller quorum.

Properties (``invariants/liveness.py``, about broker 1; no rule depends on broker
ids, so the spec is symmetric in the brokers and broker 1's property is every
broker's, except where the rogue, which claims id 1, breaks the symmetry):
**RegistrationResolves** (``alive /\\ epoch = NONE ~> epoch # NONE \\/ ~alive``),
**ControlledShutdownCompletes** (``PENDING_CONTROLLED_SHUTDOWN ~> SHUTTING_DOWN \\/
NOT_RUNNING``), **EventuallyUnfenced** (``alive /\\ bstate \\in {STARTING, RECOVERY} ~>
RUNNING \\/ ~alive``), **DeadBrokerEventuallyFenced** (``~alive /\\ ~fenced ~>
fenced``); and, safety, KL's FencedNotLeader and FencedNotInIsr. Defaults N=2, P=1,
MaxLag=2, MaxRestarts=1, MaxLate=1, Rogues=0: all hold (counts in
``tests/test_kraft_lifecycle_live.py``). No symmetry reduction: it is unsound for
liveness.

Bug variants (each fails with a lasso under its own defaults):
:class:`KRaftLifecycleLiveBugNoRegistrationTimeout` (the broker retries a refused
registration forever, 1.4 vs 4.13, with a rogue duplicate holding the id:
RegistrationResolves) and :class:`KRaftLifecycleLiveBugStuckPublisher` (a running
broker's publisher blocks its loader thread: the broker keeps heartbeating its old
offset and never reports another broker's controlled-shutdown offset, so
``lowestActiveOffset`` stalls: ControlledShutdownCompletes).
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from invariants import (
    controlled_shutdown_completes,
    dead_broker_eventually_fenced,
    eventually_unfenced,
    fenced_not_in_isr,
    fenced_not_leader,
    registration_resolves,
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
from specs.kraft_lifecycle import BrokerState

(NOT_RUNNING, STARTING, RECOVERY, RUNNING, PENDING_CONTROLLED_SHUTDOWN,
 SHUTTING_DOWN) = BrokerState
PENDING_CS = PENDING_CONTROLLED_SHUTDOWN


class Held(IntEnum):
    """The broker epoch a process holds."""

    NONE = 0  # unregistered (bEpoch = 0)
    CURRENT = 1  # the registered epoch
    STALE = 2  # a superseded epoch: its heartbeats get STALE_BROKER_EPOCH


class Rogue(IntEnum):
    """The rogue duplicate process configured with broker id 1."""

    ABSENT = 0
    STARTING = 1  # registering (refused while broker 1's registration is live)
    HOLDS = 2  # holds broker 1's registration
    STALE = 3  # its registration was superseded: its heartbeats fail
    GONE = 4


class KRaftLifecycleLive(Spec):
    """The KRaft broker lifecycle with head-relative offsets, under fairness."""

    check_deadlock = False

    N = Const(2, min=1, doc="number of brokers, ids 1..N")
    P = Const(1, min=1, doc="number of partitions, ids 1..P (every broker is a replica)")
    MaxLag = Const(2, min=1, doc="bound on head-relative offsets; appends wait while a "
                                 "live broker lags this much")
    MaxRestarts = Const(1, min=0, doc="restarts in a run, over all brokers")
    MaxLate = Const(1, min=0, doc="sessions of live brokers that may expire in a run")
    Rogues = Const(0, min=0, max=1, doc="1: a rogue duplicate process claims broker id 1")

    Brokers = Ids(1, N)
    Partitions = Ids(1, P)

    # -- controller ------------------------------------------------------------------
    reg = Array(Brokers, Bool())  # the id has a registration
    fenced = Array(Brokers, Bool(init=True))
    cs = Array(Brokers, Bool())  # the heartbeat manager's CONTROLLED_SHUTDOWN (unfenced)
    csAge = Array(Brokers, Int(0, MaxLag))  # batches since b's controlled-shutdown batch
    csWait = Array(Brokers, SetOf(Brokers))  # brokers not yet reporting that batch
    leader = Array(Partitions, Ref(Brokers))
    isr = Array(Partitions, SetOf(Brokers))
    # -- broker processes --------------------------------------------------------------
    bstate = Array(Brokers, Enum(BrokerState))
    epoch = Array(Brokers, Enum(Held))
    lag = Array(Brokers, Int(0, MaxLag))  # logEnd - offset, saturating
    toReg = Array(Brokers, Int(0, MaxLag))  # own registration offset - offset (0: caught up)
    restarts = Int(0, MaxRestarts)
    late = Int(0, MaxLate)
    rogue = Enum(Rogue)

    fairness = {"Register": "weak", "Heartbeat": "weak", "Replay": "weak",
                "SessionTimeout": "weak", "RegistrationTimeout": "weak",
                "RogueRegisters": "weak", "RogueHeartbeat": "weak"}

    def init_states(self) -> Any:
        """A cluster booting after a full stop: every broker STARTING, nothing registered,
        every partition leaderless with one last ISR member (each choice an initial state)."""
        brokers = list(self.Brokers)
        parts = list(self.Partitions)
        lo = brokers[0]
        n = len(brokers)
        for k in range(n ** len(parts)):
            last = {p: brokers[(k // n ** i) % n] for i, p in enumerate(parts)}
            yield {"isr": {p: 1 << (last[p] - lo) for p in parts},
                   "bstate": {b: int(STARTING) for b in brokers}}

    # -- helpers (bug variants override these) -------------------------------------------
    def registration_timeout(self) -> bool:
        """A process that cannot register gives up (``initial.broker.registration.timeout.ms``)."""
        return True

    def replay_fair_state(self, s: Any, b: int) -> Any:
        """The states where the loader applies batches on its own (weakly fair)."""
        return s.bstate[b] == s.bstate[b]  # everywhere (a boolean of the state's shape)

    # -- derived ----------------------------------------------------------------------
    def alive(self, s: Any, b: int) -> Any:
        st = s.bstate[b]
        return (st == STARTING) | (st == RECOVERY) | (st == RUNNING) | (st == PENDING_CS)

    def heartbeating(self, s: Any, b: int) -> Any:
        """The holder of b's registration sends heartbeats that the controller accepts."""
        real = self.alive(s, b) & (s.epoch[b] == Held.CURRENT)
        if b == 1 and self.Rogues:
            return real | (s.rogue == Rogue.HOLDS)
        return real

    def can_append(self, s: Any) -> Any:
        """No live broker whose loader is fair lags MaxLag."""
        return all_of(self.Brokers, lambda o: ~self.alive(s, o) | (s.lag[o] < self.MaxLag)
                      | ~self.replay_fair_state(s, o))

    def reached(self, s: Any, o: int, x: int) -> Any:
        """Broker ``o``'s offset reached ``x``'s controlled-shutdown batch; a lag of
        MaxLag (exact only for a live broker with a fair loader) never counts."""
        return (s.lag[o] <= s.csAge[x]) & (s.lag[o] < self.MaxLag)

    def acceptable(self, s: Any, c: int) -> Any:
        """``isActive``: registered, unfenced, not in controlled shutdown."""
        return s.reg[c] & ~s.fenced[c] & ~s.cs[c]

    def leads_any(self, s: Any, b: int) -> Any:
        return any_of(self.Partitions, lambda p: s.leader[p] == b)

    def others_caught_up(self, s: Any, b: int) -> Any:
        """``controlledShutdownOffset <= lowestActiveOffset``."""
        return all_of([o for o in self.Brokers if o != b],
                      lambda o: s.fenced[o] | s.cs[o] | ~s.csWait[b].has(o))

    # -- batches ------------------------------------------------------------------------
    def _append(self, s: Any, t: Any, cond: Any) -> None:
        """One batch at the log end: every lag and controlled-shutdown age grows."""
        for o in self.Brokers:
            t.lag[o] = where(cond & (s.lag[o] < self.MaxLag), s.lag[o] + 1, s.lag[o])
            t.csAge[o] = where(cond & s.cs[o] & (s.csAge[o] < self.MaxLag), s.csAge[o] + 1,
                               s.csAge[o])

    def _partitions(self, s: Any, t: Any, b: int, remove: Any, unfence: Any) -> None:
        """Fence or controlled shutdown (``remove``) drops b from every ISR but as the last
        member and elects the smallest acceptable ISR member where b led or nobody
        does; unfencing makes b leader of the leaderless partitions whose ISR holds it."""
        for p in self.Partitions:
            isr, ld = s.isr[p], s.leader[p]
            aff = remove & (isr.has(b) | (ld == b))
            new_isr = where(aff & (isr != {b}), isr.without(b), isr)
            need = aff & ((ld == b) | (ld == 0))
            elected: Any = 0
            for c in reversed([o for o in self.Brokers if o != b]):
                elected = where(new_isr.has(c) & self.acceptable(s, c), c, elected)
            new_ld = where(need, elected, ld)
            t.isr[p] = new_isr
            t.leader[p] = where(unfence & (ld == 0) & isr.has(b), b, new_ld)

    def _fence(self, s: Any, t: Any, b: int) -> None:
        self._partitions(s, t, b, True, False)
        t.fenced[b] = True
        t.cs[b] = False
        self._append(s, t, True)
        t.csAge[b] = 0

    def _heartbeat(self, s: Any, t: Any, b: int, wf: Any, ws: Any, caught: Any,
                   report: Any) -> tuple[Any, Any, Any]:
        """processBrokerHeartbeat for the holder of b's registration; returns (writable,
        isFenced, shouldShutDown). ``report``: per broker x, whether the reported offset
        reached x's controlled-shutdown batch."""
        in_cs = s.cs[b]
        is_fenced = ~in_cs & s.fenced[b]
        is_unfenced = ~in_cs & ~s.fenced[b]
        leads = self.leads_any(s, b)
        shutdown_now = ((is_fenced & ws) | (is_unfenced & ws & (wf | ~leads))
                        | (in_cs & ~leads & self.others_caught_up(s, b)))
        unfence = is_fenced & ~ws & ~wf & caught
        fence = is_unfenced & wf & ~ws
        controlled = is_unfenced & ~wf & ws & leads
        remove = fence | controlled | (shutdown_now & ~is_fenced)
        append = remove | unfence
        self._partitions(s, t, b, remove, unfence)
        now_fenced = where(shutdown_now | fence, True, where(unfence, False, s.fenced[b]))
        t.fenced[b] = now_fenced
        t.cs[b] = ~now_fenced & (in_cs | controlled)
        self._append(s, t, append)
        t.csAge[b] = where(controlled | now_fenced, 0, t.csAge[b])
        for x in self.Brokers:
            waiting = s.csWait[x]
            if x == b:
                others = {o for o in self.Brokers if o != b}
                t.csWait[x] = where(controlled, others, where(now_fenced, waiting - waiting,
                                                              waiting))
            else:
                t.csWait[x] = where(report(x), waiting.without(b), waiting)
        return ~append | self.can_append(s), now_fenced, shutdown_now

    # -- broker process -------------------------------------------------------------------
    @action(b=Brokers)
    def Start(self, s, t, b):
        """A stopped process starts again: a new incarnation, unregistered, STARTING."""
        t.bstate[b] = STARTING
        t.epoch[b] = Held.NONE
        t.restarts = s.restarts + 1
        return (((s.bstate[b] == NOT_RUNNING) | (s.bstate[b] == SHUTTING_DOWN))
                & (s.restarts < self.MaxRestarts))

    @action(b=Brokers)
    def Crash(self, s, t, b):
        """The process dies (its offset is on disk: the lag stays)."""
        t.bstate[b] = NOT_RUNNING
        t.epoch[b] = Held.NONE
        return self.alive(s, b)

    @action(b=Brokers)
    def Replay(self, s, t, b):
        """A live broker's loader applies the next batch of the metadata log."""
        t.lag[b] = s.lag[b] - 1
        t.toReg[b] = where(s.toReg[b] > 0, s.toReg[b] - 1, 0)
        return self.alive(s, b) & (s.lag[b] > 0) & self.replay_fair_state(s, b)

    @action(b=Brokers)
    def BeginControlledShutdown(self, s, t, b):
        """A running broker is told to shut down (wantShutDown in its heartbeats)."""
        t.bstate[b] = PENDING_CS
        return s.bstate[b] == RUNNING

    @action(b=Brokers)
    def Register(self, s, t, b):
        """A registration round trip: accepted when the id has no registration or it is
        fenced (a fenced RegisterBrokerRecord at the log end; the process holds its
        offset as epoch); else DUPLICATE_BROKER_REGISTRATION and the process retries."""
        accept = ~s.reg[b] | s.fenced[b]
        t.reg[b] = True
        t.fenced[b] = True
        t.cs[b] = False
        t.csWait[b] = s.csWait[b] - s.csWait[b]
        self._append(s, t, True)
        t.csAge[b] = 0
        t.toReg[b] = s.lag[b] + 1
        t.epoch[b] = Held.CURRENT
        if b == 1 and self.Rogues:
            t.rogue = where(s.rogue == Rogue.HOLDS, Rogue.STALE, s.rogue)
        return ((s.bstate[b] == STARTING) & (s.epoch[b] == Held.NONE) & accept
                & self.can_append(s))

    @action(b=Brokers)
    def RegistrationTimeout(self, s, t, b):
        """``initial.broker.registration.timeout.ms``: a process whose registration is
        refused (or cannot be written) shuts itself down."""
        t.bstate[b] = NOT_RUNNING
        refused = (s.reg[b] & ~s.fenced[b]) | ~self.can_append(s)
        return ((s.bstate[b] == STARTING) & (s.epoch[b] == Held.NONE) & refused
                & self.registration_timeout())

    @action(b=Brokers)
    def Heartbeat(self, s, t, b):
        """A heartbeat round trip (epoch, currentMetadataOffset, wantFence = STARTING,
        wantShutDown = PENDING_CONTROLLED_SHUTDOWN) and the broker's reaction to
        isCaughtUp / isFenced / shouldShutDown. A stale epoch gets an error: nothing
        changes, the broker retries."""
        st = s.bstate[b]
        caught = s.toReg[b] == 0
        ok, now_fenced, shut = self._heartbeat(
            s, t, b, st == STARTING, st == PENDING_CS, caught,
            lambda x: self.reached(s, b, x))
        t.bstate[b] = where((st == STARTING) & caught, RECOVERY, where(
            (st == RECOVERY) & ~now_fenced, RUNNING, where(
                (st == PENDING_CS) & shut, SHUTTING_DOWN, st)))
        t.epoch[b] = where((st == PENDING_CS) & shut, Held.NONE, s.epoch[b])
        return self.alive(s, b) & (s.epoch[b] == Held.CURRENT) & ok

    # -- controller -----------------------------------------------------------------------
    @action(b=Brokers)
    def SessionTimeout(self, s, t, b):
        """The holder of b's registration stopped heartbeating (dead, or its epoch was
        superseded): the session expires, and the controller fences it (one batch)."""
        self._fence(s, t, b)
        return s.reg[b] & ~s.fenced[b] & ~self.heartbeating(s, b) & self.can_append(s)

    @action(b=Brokers)
    def LateHeartbeat(self, s, t, b):
        """A live broker's heartbeats are late: its session expires anyway."""
        self._fence(s, t, b)
        t.late = s.late + 1
        return (s.reg[b] & ~s.fenced[b] & self.heartbeating(s, b) & self.can_append(s)
                & (s.late < self.MaxLate))

    @action(p=Partitions, c=Brokers)
    def IsrExpand(self, s, t, p, c):
        """The leader's AlterPartition adds caught-up follower ``c`` to the ISR."""
        leader_up = any_of(self.Brokers, lambda lb: (s.leader[p] == lb) & self.alive(s, lb)
                           & (s.epoch[lb] == Held.CURRENT))
        follower_up = (((s.bstate[c] == RECOVERY) | (s.bstate[c] == RUNNING)
                        | (s.bstate[c] == PENDING_CS)) & (s.epoch[c] == Held.CURRENT))
        t.isr[p] = s.isr[p].with_(c)
        self._append(s, t, True)
        return (leader_up & ~s.isr[p].has(c) & self.acceptable(s, c) & follower_up
                & self.can_append(s))

    # -- the rogue duplicate of broker 1 -------------------------------------------------
    @action
    def RogueStart(self, s, t):
        """A second process configured with broker id 1 starts."""
        t.rogue = Rogue.STARTING
        return (s.rogue == Rogue.ABSENT) & (self.Rogues > 0)

    @action
    def RogueRegisters(self, s, t):
        """The rogue's registration is accepted (broker 1's registration is absent or
        fenced); the real process's epoch, if any, is superseded."""
        t.rogue = Rogue.HOLDS
        t.reg[1] = True
        t.fenced[1] = True
        t.cs[1] = False
        t.csWait[1] = s.csWait[1] - s.csWait[1]
        self._append(s, t, True)
        t.csAge[1] = 0
        t.epoch[1] = where(s.epoch[1] == Held.CURRENT, Held.STALE, s.epoch[1])
        return (s.rogue == Rogue.STARTING) & (~s.reg[1] | s.fenced[1]) & self.can_append(s)

    @action
    def RogueHeartbeat(self, s, t):
        """The rogue heartbeats broker 1's registration (abstractly caught up: it reports
        the log end, wantFence and wantShutDown false)."""
        no = s.rogue != s.rogue  # a boolean of the state's shape
        ok, _, _ = self._heartbeat(s, t, 1, no, no, ~no, lambda x: ~no)
        return (s.rogue == Rogue.HOLDS) & ok

    @action
    def RogueStops(self, s, t):
        """The rogue process stops."""
        t.rogue = Rogue.GONE
        return (s.rogue != Rogue.ABSENT) & (s.rogue != Rogue.GONE)

    # -- properties ---------------------------------------------------------------------
    FencedNotLeader = fenced_not_leader()
    FencedNotInIsr = fenced_not_in_isr()
    RegistrationResolves = registration_resolves()
    ControlledShutdownCompletes = controlled_shutdown_completes()
    EventuallyUnfenced = eventually_unfenced()
    DeadBrokerEventuallyFenced = dead_broker_eventually_fenced()


class KRaftLifecycleLiveBugNoRegistrationTimeout(KRaftLifecycleLive):
    """Bug: a process whose registration is refused retries forever (no
    ``initial.broker.registration.timeout.ms``), and a rogue duplicate holds its id.

    The rogue registers broker id 1 first and keeps the session alive; the real
    broker 1 gets DUPLICATE_BROKER_REGISTRATION on every retry and neither registers
    nor gives up: RegistrationResolves fails (001 1.4 says such a broker "should shut
    down rather than trying to claim a broker ID"; 004: it exits after the timeout).
    """

    Rogues = Const(1, min=0, max=1, doc="1: a rogue duplicate process claims broker id 1")

    def registration_timeout(self) -> bool:
        return False


class KRaftLifecycleLiveBugStuckPublisher(KRaftLifecycleLive):
    """Bug: once a broker runs, a stuck metadata publisher may block its loader thread
    forever (004: "a single slow publisher stalls the whole metadata pipeline").

    The broker keeps heartbeating its old offset, stays unfenced and active, and never
    reports another broker's controlled-shutdown offset, so that broker's controlled
    shutdown is never granted (``lowestActiveOffset`` stalls): ControlledShutdownCompletes
    fails. Replay of a RUNNING or shutting-down broker is ``SlowReplay`` here, with no
    fairness.
    """

    def replay_fair_state(self, s: Any, b: int) -> Any:
        return (s.bstate[b] != RUNNING) & (s.bstate[b] != PENDING_CS)

    @action(b=KRaftLifecycleLive.Brokers)
    def SlowReplay(self, s, t, b):
        """A running broker's loader applies the next batch, if its publishers let it."""
        t.lag[b] = s.lag[b] - 1
        t.toReg[b] = where(s.toReg[b] > 0, s.toReg[b] - 1, 0)
        return (self.alive(s, b) & (s.lag[b] > 0) & (s.lag[b] < self.MaxLag)
                & ((s.bstate[b] == RUNNING) | (s.bstate[b] == PENDING_CS)))
