"""The ZooKeeper-era Kafka controller: controller election, zombie fencing, leader and ISR.

Source: the seed on ZooKeeper-era Kafka (``kraft/seeds/003``: "Cluster Membership in
Kafka", "The Controller", "Kafka controller startup, leader election, and replica state
transitions"), following the outline of this spec in the seed-systems note (§2(b));
where the two differ, or the model needed another shape, it says so below.

Modelled
--------
**ZooKeeper.** ``zkLive`` is ``/brokers/ids`` (an ephemeral node per broker session;
a second broker with the same id gets NodeExists: ``Start`` needs the old node gone);
``zkCtl`` is the ephemeral ``/controller`` node (0: none; the first process to create
it is controller, the others get "node already exists"); ``zkCE`` is
``/controller_epoch``, bumped by the new controller in the same step as it creates
``/controller`` (the seed's "conditional increment"); per partition the state znode
(``zkLeader``, ``zkIsr``, ``zkLE`` the leader epoch) and its znode version ``zkPV``
for conditional writes. A session expiry (``Expire``) deletes the ephemeral nodes.

**Processes.** Every broker id runs one process, broker and controller candidate:
``up`` (the process runs), ``sess`` (it holds a live ZooKeeper session), ``active``
(it believes it is controller), ``cEpoch`` (its controller epoch), ``loaded`` (it
read the cluster state since it became controller) and its controller context per
partition (``cLeader``, ``cIsr``, ``cLE``, ``cPV``). ``Expire`` leaves the process
untouched: after a long GC pause it resumes *believing it is controller* (a zombie,
``active`` while ``zkCtl`` names another or none). ``Reconnect`` gives it a new
session (and re-registers its broker node, as Kafka's broker does), ``Resign`` is it
noticing that ``/controller`` is no longer its own (its context is reset, as
Kafka's ``onControllerResignation``). ``Crash`` stops a process (its session stays
until it expires), ``Start`` brings it back with a new session and an empty memory:
only its log, on disk, survives.

**Controller.** ``ElectController`` creates ``/controller`` and bumps the epoch;
``Load`` reads every partition's state (3.5: the controller "must first learn the
current cluster state"; also the reload after a failed conditional write).
``ElectLeader`` runs when the context's leader is not live: the new leader is a
live ISR member (3.6; which one is the parameter ``nl``: choosing nondeterministically
keeps brokers symmetric, the replica-list order being a tie-break), or, only with
``Unclean``, any live replica when no ISR member is live ("risks data loss"); the
new ISR is the live ISR members (Kafka's offline-partition election), or the new
leader alone after an unclean election, and the leader epoch is bumped.
``ShrinkIsr`` removes a follower that is not live or lags the leader, ``ExpandIsr``
adds a follower of the current leader that "has caught up to the leader's high
watermark" (3.8); neither bumps the leader epoch. Every partition write is
conditional on the znode version of the context (``cPV = zkPV``: a failed write
leaves the context to ``Load``), and, with ``FenceZkWrites`` (default), on
``/controller_epoch`` still holding the writer's epoch (a ZooKeeper multi-op; Kafka
added this check later, it is not in the seed). A write is persisted first, then
sent (3.7): a LeaderAndIsr and an UpdateMetadata to every live broker, carrying the
controller epoch and the context. ``Broadcast`` sends UpdateMetadata alone, as a
controller does on failover and on every broker change.

**Brokers.** ``seenCE`` is the highest controller epoch a broker has seen (3.4);
``rLeader``/``rLE`` its partition state from LeaderAndIsr (applied only when the
leader epoch is not older), ``mLE`` its metadata cache from UpdateMetadata (no leader
epoch check, as Kafka's metadata cache), ``leo`` its log end offset (on disk). A
request with a lower controller epoch than ``seenCE`` is ignored.

**Network.** One LeaderAndIsr slot (``lCE`` epoch, 0 = empty; ``lLeader``, ``lLE``)
and one UpdateMetadata slot (``uCE``, ``uLE``) per broker. A request waits in its slot
until delivered (delay) or dropped (loss); a newer request to the same broker
replaces a waiting one (loss, too). So requests of one controller arrive in order,
and requests of two controllers in either order (reordering: the one sent last is
the one that lands last).

**Data.** ``Produce``: a replica that believes it leads appends a record.
``Fetch``: a follower copies one record from the replica it believes leads, in the
same leader epoch, or truncates to the leader's end. ``Commit``: the current leader
(the one in ZooKeeper, which knows it) advances the high watermark to the smallest
log end over the ISR (acks=all); ``committed`` is the highest ever (a history
variable).

Properties (from :mod:`invariants`): UniqueControllerEpoch, ControllerEpochGrows
(action), NoStaleControllerEffect (action), MetadataEpochMonotonic (action),
OneLeaderPerEpoch, LeaderInIsr, IsrHoldsCommitted, CommittedNotLost.

Where the model departs from the outline, and why
-------------------------------------------------
* No broker-side ISR (``rIsr``) and no leader in UpdateMetadata (``mLeader``): no
  property reads them, and each multiplies the states. ``Commit`` reads the ISR in
  ZooKeeper instead of the leader's copy: in ZooKeeper-era Kafka the leader wrote
  its own ISR changes, so it knew them (a leader reading a stale, smaller copy would
  "commit" past a member the controller just added: a modelling artefact, not
  Kafka).
* The controller reads live brokers from ``zkLive`` when it decides (the watch is
  instantaneous), and reads need no context version: only writes are conditional.
* ISR changes do not bump the leader epoch, so LeaderAndIsr applies when its leader
  epoch is not older (``>=``, the outline's rule); elections bump it.
* ElectBeforeLoad fails MetadataEpochMonotonic, not LeaderInIsr as the outline
  expected: a context that was never loaded cannot reach ZooKeeper (its znode
  version does not match once anything was written, and it names no ISR member to
  elect before that), so the conditional write already protects LeaderInIsr. What
  escapes is what carries no znode version: the new controller's UpdateMetadata
  broadcast, with a higher controller epoch and an empty context, which brokers
  accept and which puts their metadata back to leader epoch 0.
* NoCasWrites fails only without FenceZkWrites (its defaults turn it off): with the
  epoch check on ZooKeeper writes, only the current controller writes, and its
  context is current, so in this model the znode version is then redundant (it
  still guards writers the model leaves out: leader-driven ISR updates, tools).
  Its shortest failure is then the open question's trace (the zombie writes first);
  OneLeaderPerEpoch, the outline's expectation, fails as early (11 states, with
  ``--invariant OneLeaderPerEpoch``): the zombie and the new controller both elect
  a leader in leader epoch 1 from the same version.
* The unclean configuration fails IsrHoldsCommitted and CommittedNotLost in the
  same state: the unclean leader's log is short, and it is the whole new ISR.

Constants and results
---------------------
Defaults N=2, P=1, MaxCE=2, MaxLE=2, MaxPV=3, MaxData=2, MaxExpiries=1,
MaxCrashes=0: 311,298 distinct states with symmetry (622,594 without), depth 24,
about 4 s. ``MaxLE=1, MaxPV=1, MaxData=1``: 30,274 (60,546), depth 18, the counts
the brute-force oracle of the tests confirms. ``MaxCrashes=1, MaxExpiries=2``:
3,491,049, depth 27 (the benchmark row ``ZK-crash``).

The open question: is the epoch in requests enough?
---------------------------------------------------
No. With the broker-side epoch check alone (``FenceZkWrites=False``,
:class:`ZkControllerEpochOnlyFencing`), a zombie that got a new session before
noticing its expiry still *writes ZooKeeper*: its conditional write succeeds when
it is the first writer since it loaded. The new controller, loaded before that
write, holds a stale context, and its next UpdateMetadata, with the higher epoch
that every broker accepts, carries an older leader epoch than the zombie's
UpdateMetadata that a broker took before it had heard of the new controller
(MetadataEpochMonotonic, 11 states)::

    ElectController(b=1)   process 1 is controller, epoch 1
    Load(c=1)
    Expire(b=1)            GC pause: /controller and /brokers/ids/1 are gone
    ElectController(b=2)   process 2 is controller, epoch 2
    Reconnect(b=1)         the zombie gets a new session, still believes it leads
    Load(c=2)              2's context: no leader, leader epoch 0, version 0
    ElectLeader(c=1, p=1, nl=2)   the zombie's write (version 0) succeeds: leader 2,
                           leader epoch 1, sent with controller epoch 1
    DeliverUM(b=2)         broker 2 has not heard of epoch 2: it takes it (mLE 1)
    Broadcast(c=2)         2's stale context, controller epoch 2
    DeliverUM(b=2)         accepted (2 >= 1): mLE 1 -> 0

The epoch in requests fences a zombie only at brokers that already heard from the
new controller, and never at ZooKeeper; the conditional writes fence what it
persists (with the epoch check on writes, this and every other run pass). Without
conditional partition writes (:class:`ZkControllerBugNoCasWrites`) the zombie and
the new controller both elect a leader in the same leader epoch.

Bug variants (each fails with its own defaults; ``tests/test_zk_controller.py``
pins the counterexamples): :class:`ZkControllerBugNonAtomicEpochBump`,
:class:`ZkControllerBugNoControllerEpochCheck`, :class:`ZkControllerBugNoCasWrites`,
:class:`ZkControllerBugElectBeforeLoad`, :class:`ZkControllerBugIsrJoinBeforeCaughtUp`;
configurations failing by design: :class:`ZkControllerUnclean` (CommittedNotLost),
:class:`ZkControllerEpochOnlyFencing` (the open question).

Liveness: ``specs/zk_controller_live.py`` checks ControllerEventuallyElected,
ZombieEventuallyResigns, PartitionEventuallyLed and ReplicasConverge under the
outline's fairness (all hold there), with the changes this spec needs for them (a
fair session timeout of crashed processes, the controller syncing brokers that
rejoin, retried requests, ISR shrinks for lag by a live leader only); each old rule of
this spec but the first is a liveness bug variant there.

Abstracted or left out
----------------------
Time (sessions expire nondeterministically, ``MaxExpiries`` per run); the replica
assignment (every broker is a replica of every partition) and its order; record
contents (logs are lengths, so divergent logs show as lengths); leader-driven ISR
updates and ``/isr_change_notification``; ControlledShutdown; KIP-380 broker epochs
in controller requests; reassignments, topic creation and deletion; the pipelining
and batching of reads, writes and requests (one request kind per broker in flight).
"""

from __future__ import annotations

from typing import Any

from invariants import (
    committed_not_lost,
    controller_epoch_grows,
    isr_holds_committed,
    leader_in_isr,
    metadata_epoch_monotonic,
    no_stale_controller_effect,
    one_leader_per_epoch,
    unique_controller_epoch,
)
from modelcheck import (
    Array,
    Bool,
    Const,
    Ids,
    Int,
    Ref,
    SetOf,
    Spec,
    action,
    any_of,
    where,
)

__all__ = [
    "ZkController",
    "ZkControllerBugNonAtomicEpochBump",
    "ZkControllerBugNoControllerEpochCheck",
    "ZkControllerBugNoCasWrites",
    "ZkControllerBugElectBeforeLoad",
    "ZkControllerBugIsrJoinBeforeCaughtUp",
    "ZkControllerUnclean",
    "ZkControllerEpochOnlyFencing",
]


class ZkController(Spec):
    """ZooKeeper-era controller election, zombie fencing, leader and ISR election."""

    check_deadlock = False
    symmetry = ("Brokers",)

    N = Const(2, min=1, doc="number of brokers, ids 1..N (each also a controller candidate)")
    P = Const(1, min=1, doc="number of partitions, ids 1..P (every broker is a replica)")
    MaxCE = Const(2, min=1, doc="bound on the controller epoch (controller elections)")
    MaxLE = Const(2, min=1, doc="bound on a partition's leader epoch (leader elections)")
    MaxPV = Const(3, min=1, doc="bound on a partition znode's version (writes)")
    MaxData = Const(2, min=1, doc="bound on a replica's log end offset (records)")
    MaxExpiries = Const(1, min=0, doc="ZooKeeper session expiries in a run")
    MaxCrashes = Const(0, min=0, doc="process crashes in a run")
    Unclean = Const(False, doc="unclean leader election: a live non-ISR replica may lead")
    FenceZkWrites = Const(True, doc="partition writes also check /controller_epoch "
                                    "(a multi-op; later Kafka, not in the seed)")

    Brokers = Ids(1, N)
    Partitions = Ids(1, P)

    # -- ZooKeeper ---------------------------------------------------------------------
    zkCtl = Ref(Brokers)  # /controller (ephemeral); 0 = none
    zkCE = Int(0, MaxCE)  # /controller_epoch
    zkLive = SetOf(Brokers)  # /brokers/ids (ephemeral)
    zkLeader = Array(Partitions, Ref(Brokers))
    zkIsr = Array(Partitions, SetOf(Brokers))
    zkLE = Array(Partitions, Int(0, MaxLE))
    zkPV = Array(Partitions, Int(0, MaxPV))  # the partition state znode's version
    # -- processes (controller side) --------------------------------------------------
    up = Array(Brokers, Bool(init=True))
    sess = Array(Brokers, Bool(init=True))
    active = Array(Brokers, Bool())  # believes it is the controller
    cEpoch = Array(Brokers, Int(0, MaxCE))
    loaded = Array(Brokers, Bool())
    cLeader = Array(Brokers, Array(Partitions, Ref(Brokers)))
    cIsr = Array(Brokers, Array(Partitions, SetOf(Brokers)))
    cLE = Array(Brokers, Array(Partitions, Int(0, MaxLE)))
    cPV = Array(Brokers, Array(Partitions, Int(0, MaxPV)))
    # -- brokers (replica side) --------------------------------------------------------
    seenCE = Array(Brokers, Int(0, MaxCE))
    rLeader = Array(Brokers, Array(Partitions, Ref(Brokers)))  # from LeaderAndIsr
    rLE = Array(Brokers, Array(Partitions, Int(0, MaxLE)))
    mLE = Array(Brokers, Array(Partitions, Int(0, MaxLE)))  # from UpdateMetadata
    leo = Array(Brokers, Array(Partitions, Int(0, MaxData)))  # log end offset, on disk
    committed = Array(Partitions, Int(0, MaxData))  # history: highest high watermark
    # -- network: one LeaderAndIsr and one UpdateMetadata slot per broker ---------------
    lCE = Array(Brokers, Int(0, MaxCE))  # 0 = empty
    lLeader = Array(Brokers, Array(Partitions, Ref(Brokers)))
    lLE = Array(Brokers, Array(Partitions, Int(0, MaxLE)))
    uCE = Array(Brokers, Int(0, MaxCE))
    uLE = Array(Brokers, Array(Partitions, Int(0, MaxLE)))
    # -- bounds --------------------------------------------------------------------------
    expiries = Int(0, MaxExpiries)
    crashes = Int(0, MaxCrashes)

    def init_states(self) -> Any:
        """Every process up with a session and its broker node; no controller yet; every
        partition new: no leader, every replica in the ISR, empty logs."""
        everyone = set(self.Brokers)
        yield {"zkLive": everyone, "zkIsr": {p: everyone for p in self.Partitions}}

    # -- helpers (bug variants override these) ---------------------------------------
    def atomic_epoch_bump(self) -> bool:
        """``ElectController`` bumps ``/controller_epoch`` in the same step (3.3)."""
        return True

    def epoch_accepted(self, s: Any, b: int, ce: Any) -> Any:
        """A broker takes a request whose controller epoch is not below the highest it
        has seen (3.4)."""
        return ce >= s.seenCE[b]

    def cas_ok(self, s: Any, c: int, p: int) -> Any:
        """The conditional write's expected znode version matches."""
        return s.cPV[c][p] == s.zkPV[p]

    def needs_load(self) -> bool:
        """The controller acts only once it has loaded the cluster state (3.5)."""
        return True

    def sends_metadata(self) -> bool:
        """The controller sends UpdateMetadata (the liveness spec leaves it out)."""
        return True

    def caught_up(self, s: Any, f: int, p: int) -> Any:
        """A follower rejoins the ISR once it holds the high watermark (3.8)."""
        return s.leo[f][p] >= s.committed[p]

    # -- derived --------------------------------------------------------------------------
    def ready(self, s: Any, c: int) -> Any:
        """Process ``c`` acts as controller (a zombie too: it does not know)."""
        ok = s.up[c] & s.active[c]
        return ok & s.loaded[c] if self.needs_load() else ok

    def can_write(self, s: Any, c: int, p: int) -> Any:
        """A conditional write of partition ``p``'s znode by ``c`` succeeds."""
        ok = self.ready(s, c) & s.sess[c] & self.cas_ok(s, c, p) & (s.zkPV[p] < self.MaxPV)
        if self.FenceZkWrites:
            ok = ok & (s.zkCE == s.cEpoch[c])
        return ok

    def _clear_context(self, t: Any, c: int) -> None:
        t.loaded[c] = False
        for p in self.Partitions:
            t.cLeader[c][p] = 0
            t.cIsr[c][p] = set()
            t.cLE[c][p] = 0
            t.cPV[c][p] = 0

    def _write(self, s: Any, t: Any, c: int, p: int, leader: Any, isr: Any, le: Any) -> None:
        """Persist partition ``p``'s new state (ZooKeeper bumps the version, which the
        context records), then send LeaderAndIsr and UpdateMetadata to live brokers."""
        pv = s.zkPV[p] + 1
        t.zkLeader[p] = leader
        t.zkIsr[p] = isr
        t.zkLE[p] = le
        t.zkPV[p] = pv
        t.cLeader[c][p] = leader
        t.cIsr[c][p] = isr
        t.cLE[c][p] = le
        t.cPV[c][p] = pv
        ctx = {q: (s.cLeader[c][q], s.cLE[c][q]) for q in self.Partitions}
        ctx[p] = (leader, le)
        self._send(s, t, c, ctx, leader_and_isr=True)

    def _send(self, s: Any, t: Any, c: int, ctx: dict[int, tuple[Any, Any]],
              leader_and_isr: bool) -> None:
        for b in self.Brokers:
            to = s.zkLive.has(b)
            if self.sends_metadata():
                t.uCE[b] = where(to, s.cEpoch[c], s.uCE[b])
                for q, (_ld, le) in ctx.items():
                    t.uLE[b][q] = where(to, le, s.uLE[b][q])
            if leader_and_isr:
                t.lCE[b] = where(to, s.cEpoch[c], s.lCE[b])
                for q, (ld, le) in ctx.items():
                    t.lLeader[b][q] = where(to, ld, s.lLeader[b][q])
                    t.lLE[b][q] = where(to, le, s.lLE[b][q])

    # -- ZooKeeper sessions and processes ------------------------------------------------
    @action(b=Brokers)
    def Expire(self, s, t, b):
        """The session expires (a long GC pause): ZooKeeper deletes its ephemeral nodes.
        The process is untouched: if it was controller, it is now a zombie."""
        t.sess[b] = False
        t.zkLive = s.zkLive.without(b)
        t.zkCtl = where(s.zkCtl == b, 0, s.zkCtl)
        t.expiries = s.expiries + 1
        return s.sess[b] & (s.expiries < self.MaxExpiries)

    @action(b=Brokers)
    def Reconnect(self, s, t, b):
        """A running process gets a new session and re-registers its broker node."""
        t.sess[b] = True
        t.zkLive = s.zkLive.with_(b)
        return s.up[b] & ~s.sess[b]

    @action(b=Brokers)
    def Resign(self, s, t, b):
        """The process notices ``/controller`` is not its own: it stops acting as
        controller and resets its context."""
        t.active[b] = False
        self._clear_context(t, b)
        return s.active[b] & (s.zkCtl != b)

    @action(b=Brokers)
    def Crash(self, s, t, b):
        """The process dies; its session lives on until it expires. Requests waiting
        for it are lost; only its log (on disk) survives."""
        t.up[b] = False
        t.active[b] = False
        self._clear_context(t, b)
        t.seenCE[b] = 0
        t.lCE[b] = 0
        t.uCE[b] = 0
        for p in self.Partitions:
            t.rLeader[b][p] = 0
            t.rLE[b][p] = 0
            t.mLE[b][p] = 0
            t.lLeader[b][p] = 0
            t.lLE[b][p] = 0
            t.uLE[b][p] = 0
        t.crashes = s.crashes + 1
        return s.up[b] & (s.crashes < self.MaxCrashes)

    @action(b=Brokers)
    def Start(self, s, t, b):
        """A process starts and registers ``/brokers/ids/b`` (NodeExists while the old
        session's node is there)."""
        t.up[b] = True
        t.sess[b] = True
        t.zkLive = s.zkLive.with_(b)
        return ~s.up[b] & ~s.sess[b] & ~s.zkLive.has(b)

    # -- controller ------------------------------------------------------------------------
    @action(b=Brokers)
    def ElectController(self, s, t, b):
        """Create ``/controller`` (the first wins) and take the next controller epoch."""
        ce = s.zkCE + 1
        t.zkCtl = b
        if self.atomic_epoch_bump():
            t.zkCE = ce
        t.active[b] = True
        t.cEpoch[b] = ce
        self._clear_context(t, b)
        return s.up[b] & s.sess[b] & ~s.active[b] & (s.zkCtl == 0) & (s.zkCE < self.MaxCE)

    @action(c=Brokers)
    def Load(self, s, t, c):
        """Read every partition's state into the context (failover, or after a failed
        conditional write)."""
        t.loaded[c] = True
        stale: Any = ~s.loaded[c]
        for p in self.Partitions:
            t.cLeader[c][p] = s.zkLeader[p]
            t.cIsr[c][p] = s.zkIsr[p]
            t.cLE[c][p] = s.zkLE[p]
            t.cPV[c][p] = s.zkPV[p]
            stale = stale | (s.cPV[c][p] != s.zkPV[p])
        return s.up[c] & s.active[c] & s.sess[c] & stale

    @action(c=Brokers)
    def Broadcast(self, s, t, c):
        """UpdateMetadata with the context to every live broker (failover, broker change)."""
        self._send(s, t, c, {p: (s.cLeader[c][p], s.cLE[c][p]) for p in self.Partitions},
                   leader_and_isr=False)
        return self.ready(s, c) & self.sends_metadata()

    @action(c=Brokers, p=Partitions, nl=Brokers)
    def ElectLeader(self, s, t, c, p, nl):
        """The context's leader is not live: elect live ISR member ``nl`` (or, with
        Unclean and no live ISR member, any live replica) and persist it."""
        isr = s.cIsr[c][p]
        live_isr = isr & s.zkLive
        clean = live_isr.has(nl)
        ok: Any = clean
        if self.Unclean:
            ok = clean | (live_isr.is_empty() & s.zkLive.has(nl))
        self._write(s, t, c, p, nl, where(clean, live_isr, {nl}), s.cLE[c][p] + 1)
        return (self.can_write(s, c, p) & ~s.zkLive.has(s.cLeader[c][p]) & ok
                & (s.cLE[c][p] < self.MaxLE))

    @action(c=Brokers, p=Partitions, f=Brokers)
    def ShrinkIsr(self, s, t, c, p, f):
        """Remove follower ``f``, not live or behind the leader, from the ISR."""
        ld = s.cLeader[c][p]
        behind = any_of(self.Brokers, lambda lb: (ld == lb) & (s.leo[f][p] < s.leo[lb][p]))
        self._write(s, t, c, p, ld, s.cIsr[c][p].without(f), s.cLE[c][p])
        return (self.can_write(s, c, p) & (ld != 0) & (ld != f) & s.cIsr[c][p].has(f)
                & (~s.zkLive.has(f) | behind))

    @action(c=Brokers, p=Partitions, f=Brokers)
    def ExpandIsr(self, s, t, c, p, f):
        """Add live follower ``f`` of the current leader, once caught up (3.8)."""
        ld = s.cLeader[c][p]
        self._write(s, t, c, p, ld, s.cIsr[c][p].with_(f), s.cLE[c][p])
        return (self.can_write(s, c, p) & (ld != 0) & ~s.cIsr[c][p].has(f)
                & s.zkLive.has(f) & (s.rLeader[f][p] == ld) & (s.rLE[f][p] == s.cLE[c][p])
                & self.caught_up(s, f, p))

    # -- brokers --------------------------------------------------------------------------
    @action(b=Brokers)
    def DeliverLAIR(self, s, t, b):
        """Broker ``b`` takes its LeaderAndIsr: ignored from an older controller,
        otherwise applied to each partition whose leader epoch is not older."""
        ce = s.lCE[b]
        ok = self.epoch_accepted(s, b, ce)
        t.lCE[b] = 0
        t.seenCE[b] = where(ok & (ce > s.seenCE[b]), ce, s.seenCE[b])
        for p in self.Partitions:
            apply = ok & (s.lLE[b][p] >= s.rLE[b][p])
            t.rLeader[b][p] = where(apply, s.lLeader[b][p], s.rLeader[b][p])
            t.rLE[b][p] = where(apply, s.lLE[b][p], s.rLE[b][p])
            t.lLeader[b][p] = 0
            t.lLE[b][p] = 0
        return s.up[b] & (ce != 0)

    @action(b=Brokers)
    def DeliverUM(self, s, t, b):
        """Broker ``b`` takes its UpdateMetadata: ignored from an older controller,
        otherwise its metadata cache takes the request's partition states."""
        ce = s.uCE[b]
        ok = self.epoch_accepted(s, b, ce)
        t.uCE[b] = 0
        t.seenCE[b] = where(ok & (ce > s.seenCE[b]), ce, s.seenCE[b])
        for p in self.Partitions:
            t.mLE[b][p] = where(ok, s.uLE[b][p], s.mLE[b][p])
            t.uLE[b][p] = 0
        return s.up[b] & (ce != 0)

    @action(b=Brokers)
    def DropLAIR(self, s, t, b):
        """The network loses broker ``b``'s LeaderAndIsr."""
        t.lCE[b] = 0
        for p in self.Partitions:
            t.lLeader[b][p] = 0
            t.lLE[b][p] = 0
        return s.lCE[b] != 0

    @action(b=Brokers)
    def DropUM(self, s, t, b):
        """The network loses broker ``b``'s UpdateMetadata."""
        t.uCE[b] = 0
        for p in self.Partitions:
            t.uLE[b][p] = 0
        return s.uCE[b] != 0

    # -- data -----------------------------------------------------------------------------
    @action(b=Brokers, p=Partitions)
    def Produce(self, s, t, b, p):
        """A replica that believes it leads ``p`` appends a record."""
        t.leo[b][p] = s.leo[b][p] + 1
        return s.up[b] & (s.rLeader[b][p] == b) & (s.leo[b][p] < self.MaxData)

    @action(f=Brokers, ld=Brokers, p=Partitions)
    def Fetch(self, s, t, f, ld, p):
        """Follower ``f`` fetches from ``ld``, which it believes leads, in the same
        leader epoch: one record, or a truncation to the leader's end."""
        if f == ld:
            return False
        mine, theirs = s.leo[f][p], s.leo[ld][p]
        t.leo[f][p] = where(mine > theirs, theirs, mine + 1)
        return (s.up[f] & s.up[ld] & (s.rLeader[f][p] == ld) & (s.rLeader[ld][p] == ld)
                & (s.rLE[f][p] == s.rLE[ld][p]) & (mine != theirs))

    @action(ld=Brokers, p=Partitions)
    def Commit(self, s, t, ld, p):
        """The current leader advances the high watermark to the ISR's smallest log end."""
        hw: Any = self.MaxData
        for r in self.Brokers:
            hw = where(s.zkIsr[p].has(r) & (s.leo[r][p] < hw), s.leo[r][p], hw)
        t.committed[p] = hw
        return (s.up[ld] & (s.zkLeader[p] == ld) & (s.rLeader[ld][p] == ld)
                & (s.rLE[ld][p] == s.zkLE[p]) & (hw > s.committed[p]))

    # -- properties ----------------------------------------------------------------------
    UniqueControllerEpoch = unique_controller_epoch()
    ControllerEpochGrows = controller_epoch_grows()
    NoStaleControllerEffect = no_stale_controller_effect()
    MetadataEpochMonotonic = metadata_epoch_monotonic()
    OneLeaderPerEpoch = one_leader_per_epoch()
    LeaderInIsr = leader_in_isr()
    IsrHoldsCommitted = isr_holds_committed()
    CommittedNotLost = committed_not_lost()


class ZkControllerBugNonAtomicEpochBump(ZkController):
    """Bug: the new controller reads ``/controller_epoch`` when it creates
    ``/controller`` and writes the read value + 1 in a later step (a plain read, then a
    write, instead of 3.3's conditional increment): two controllers take one epoch."""

    def atomic_epoch_bump(self) -> bool:
        return False

    @action(b=ZkController.Brokers)
    def WriteControllerEpoch(self, s, t, b):
        """The controller writes the epoch it computed (unconditionally)."""
        t.zkCE = s.cEpoch[b]
        return s.active[b] & s.sess[b] & (s.zkCE < s.cEpoch[b])


class ZkControllerBugNoControllerEpochCheck(ZkController):
    """Bug: brokers take requests whatever controller epoch they carry (3.4 dropped):
    a zombie's delayed request changes a broker that already follows the new one."""

    def epoch_accepted(self, s: Any, b: int, ce: Any) -> Any:
        return ce >= 0  # always


class ZkControllerBugNoCasWrites(ZkController):
    """Bug: partition writes are unconditional (no znode version). Its defaults turn
    off FenceZkWrites (with it, only the current controller writes, and its context is
    current): a zombie and the new controller elect two leaders in one leader epoch."""

    FenceZkWrites = Const(False, doc="partition writes also check /controller_epoch")

    def cas_ok(self, s: Any, c: int, p: int) -> Any:
        return s.zkPV[p] >= 0  # always


class ZkControllerBugElectBeforeLoad(ZkController):
    """Bug: the new controller acts before it loads the cluster state (3.5): its
    elections are harmless (nothing in an empty context matches ZooKeeper), but its
    UpdateMetadata broadcast of the empty context, with a newer epoch, is accepted."""

    def needs_load(self) -> bool:
        return False


class ZkControllerBugIsrJoinBeforeCaughtUp(ZkController):
    """Bug: a follower rejoins the ISR before it holds the high watermark (3.8)."""

    def sends_metadata(self) -> bool:
        """The controller sends UpdateMetadata (the liveness spec leaves it out)."""
        return True

    def caught_up(self, s: Any, f: int, p: int) -> Any:
        return s.leo[f][p] >= 0  # always


class ZkControllerUnclean(ZkController):
    """Unclean leader election on (3.6, "risks data loss"): a live replica outside the
    ISR leads when no ISR member is live, and committed records are lost, by design."""

    Unclean = Const(True, doc="unclean leader election: a live non-ISR replica may lead")


class ZkControllerEpochOnlyFencing(ZkController):
    """The seed's fencing alone: the controller epoch in requests, no epoch check on
    ZooKeeper writes. A zombie with a new session persists a leader election, and the
    new controller's stale UpdateMetadata puts a broker's metadata back."""

    FenceZkWrites = Const(False, doc="partition writes also check /controller_epoch")
