"""The ZooKeeper-era Kafka controller under fairness: what must eventually happen.

The liveness version of ``specs/zk_controller.py`` (ZK), with the properties and the
fairness of the ZooKeeper-era controller's outline (the seed document on ZooKeeper-era
Kafka): weak fairness
on ElectController, Load, Resign, Reconnect, DeliverLAIR, DeliverUM, Fetch and the
expiry of a crashed process's session, strong fairness on ElectLeader.

Why a subclass, and what changes
--------------------------------
No symmetry reduction (unsound for liveness) and no state constraint. ZK's bounds
must not end behaviours, or a ``~>`` fails as soon as a bound disables a fair action.
Failures are finite: ``MaxExpiries`` session expiries of *running* processes (GC
pauses, ``Expire``) and ``MaxCrashes`` crashes, neither fair. A controller election
needs ``/controller`` freed by an expiry, so ``MaxCE = 1 + MaxExpiries + MaxCrashes``
never blocks one; a leader election needs the leader's broker node gone, so
``MaxLE`` is bounded the same way. The znode version is not: ISR shrinks and expands
can flap for ever (a lagging follower holding the high watermark rejoins, then lags
again), and with ZK's absolute versions every flap spends one, until ``MaxPV`` blocks
the next leader election. Versions are only compared for equality, so here they are
relative: ``zkPV`` stays 0 and a loaded context's ``cPV`` is 0 while it is current, 1
once another process wrote (exactly ZK's ``cPV = zkPV``), and ``MaxPV`` is unused.
The tests check that no bound binds: MaxCE or MaxLE one higher gives the same count.

UpdateMetadata is not sent (``sends_metadata``): no liveness property reads the
metadata cache (ZK checks MetadataEpochMonotonic), and its slots multiply the states
(27 times, measured without crashes). ``Broadcast``, ``DeliverUM`` and ``DropUM`` are
then never enabled.

Four changes to ZK's actions, each what Kafka does and each needed by a property:

* ``Expire`` is a running process's GC pause (bounded, unfair); a *crashed*
  process's session expires by ``SessionTimeout`` (weakly fair: ZooKeeper expires
  every session whose client stopped pinging), which frees ``/controller`` and the
  broker node. Without it a crashed controller would hold ``/controller`` for ever.
* ``Sync(c, b)``: the controller sends its context in a LeaderAndIsr to a broker it
  has not sent it to since the broker (re)joined ``/brokers/ids`` or since ``c``
  became controller (``synced``): Kafka's ``onBrokerStartup`` and
  ``onControllerFailover``. Only the process holding ``/controller`` does it: its
  watch on ``/brokers/ids`` belongs to its session (a zombie's died with its old
  one). ZK sends only with writes, so a broker away during a write, or restarted,
  would never learn the leader epoch (:class:`ZkControllerLiveBugNoStartupSync`).
* ``DropLAIR``/``DropUM`` only for a broker not in ``/brokers/ids``: the
  controller's send thread retries a request until the broker answers, and discards
  the queue of a broker that went away (whose return ``Sync`` handles). ZK's
  arbitrary loss is :class:`ZkControllerLiveBugLossyRequests`.
* ``ShrinkIsr`` for lag needs the leader up and registered: the leader decides it
  in Kafka (``replica.lag.time.max.ms``); the controller itself removes only brokers
  that left. ZK's controller shrinks for lag whoever leads
  (:class:`ZkControllerLiveBugShrinkWithoutLeader`).

Fairness (the outline's): ``WF`` on ElectController, Load, Resign, Reconnect,
DeliverLAIR, DeliverUM, Fetch, SessionTimeout and Sync (new), ``SF`` on ElectLeader,
each per instance. Start, Crash, Expire, Produce, Commit, ShrinkIsr, ExpandIsr and
the drops are not fair.

Properties (``invariants/controller_liveness.py``; ZK's safety properties are kept):
**ControllerEventuallyElected** (``(\\E b: up[b] /\\ sess[b]) /\\ zkCtl = 0 ~>
zkCtl # 0``), **ZombieEventuallyResigns** (``active[1] /\\ zkCtl # 1 ~> ~active[1]``),
**PartitionEventuallyLed** (``zkLeader[1] \\notin zkLive /\\ zkIsr[1] \\cap zkLive #
{} ~> zkLeader[1] \\in zkLive``; with Unclean, "some broker is live" replaces the
ISR condition: the outline's plain ``\\/ Unclean`` would demand a leader while every
broker is down), **ReplicasConverge** (``<>[](\\A b, p: up[b] /\\ b \\in zkLive =>
rLE[b][p] = zkLE[p])``). Broker 1 and partition 1 stand for all: no rule depends on
ids.

Verdicts (``tests/test_zk_controller_live.py`` pins the counts and lassos): with the
defaults (N=2, P=1, MaxCE=3, MaxLE=3, MaxData=1, MaxExpiries=1, MaxCrashes=1:
238,140 states, depth 31) all four hold; with MaxCrashes=0 (25,086) and with
Unclean (263,026, the temporal properties selected: its safety fails by design)
too. Strong fairness on ElectLeader is not needed: with ``WF`` the verdicts are the
same (once the controller's context is current and the leader gone, only an expiry
or a crash, both finite, disables the election).

Bug variants, each failing with a lasso under its defaults:
:class:`ZkControllerLiveBugNoStartupSync` (ReplicasConverge, 7 states: broker 1's
session is away during the election and nobody tells it on its return),
:class:`ZkControllerLiveBugLossyRequests` (ReplicasConverge, 8 states: a lost
LeaderAndIsr), :class:`ZkControllerLiveBugShrinkWithoutLeader`
(PartitionEventuallyLed, 11 states: the leader's session expires, it still appends,
the controller drops the lagging follower from the ISR, then the leader crashes:
the ISR is the dead leader alone, and no clean election is possible).

The open question of ZK, under fairness: without the epoch check on ZooKeeper
writes (``FenceZkWrites=False``) ReplicasConverge fails (453,098 states, a lasso of 13):
the zombie's leader election reaches ZooKeeper and its LeaderAndIsr is fenced (or
overtaken) at the broker, the new controller syncs the broker from the context it
loaded before that write, reloads, and never sends again; the leader never learns
it leads.
"""

from __future__ import annotations

from typing import Any

from invariants import (
    controller_eventually_elected,
    partition_eventually_led,
    replicas_converge,
    zombie_eventually_resigns,
)
from modelcheck import Const, SetOf, action, any_of, where
from specs.zk_controller import ZkController

__all__ = ["ZkControllerLive", "ZkControllerLiveBugNoStartupSync",
           "ZkControllerLiveBugLossyRequests", "ZkControllerLiveBugShrinkWithoutLeader"]

Brokers = ZkController.Brokers
Partitions = ZkController.Partitions


class ZkControllerLive(ZkController):
    """The ZooKeeper-era controller with finite failures, under the outline's fairness."""

    symmetry = ()

    MaxCE = Const(3, min=1, doc="bound on the controller epoch (1 + MaxExpiries + "
                                "MaxCrashes never binds)")
    MaxLE = Const(3, min=1, doc="bound on a partition's leader epoch (leader elections)")
    MaxData = Const(1, min=1, doc="bound on a replica's log end offset (records)")
    MaxCrashes = Const(1, min=0, doc="process crashes in a run")

    synced = SetOf(Brokers)  # live brokers the controller sent its context to since they joined

    fairness = {"ElectController": "weak", "Load": "weak", "Resign": "weak",
                "Reconnect": "weak", "DeliverLAIR": "weak", "DeliverUM": "weak",
                "Fetch": "weak", "SessionTimeout": "weak", "Sync": "weak",
                "ElectLeader": "strong"}

    def sends_metadata(self) -> bool:
        return False

    def syncs(self) -> bool:
        """The controller sends its context to brokers that (re)join (Kafka does)."""
        return True

    def lossy(self) -> bool:
        """Requests to a registered broker may be lost (Kafka retries them)."""
        return False

    def _write(self, s: Any, t: Any, c: int, p: int, leader: Any, isr: Any, le: Any) -> None:
        """ZK's write, with the znode version kept relative: ``zkPV`` stays 0, and a
        loaded context's ``cPV`` is 0 while current, 1 once another process wrote."""
        super()._write(s, t, c, p, leader, isr, le)
        t.zkPV[p] = 0
        for o in self.Brokers:
            t.cPV[o][p] = 0 if o == c else where(s.loaded[o], 1, s.cPV[o][p])

    def _leave(self, s: Any, t: Any, b: int) -> None:
        """Session ``b`` expires: its ephemeral nodes go, and the controller's watch
        forgets the broker."""
        t.sess[b] = False
        t.zkLive = s.zkLive.without(b)
        t.zkCtl = where(s.zkCtl == b, 0, s.zkCtl)
        t.synced = s.synced.without(b)

    @action(b=Brokers)
    def Expire(self, s, t, b):
        """A running process's session expires (a long GC pause): if it was controller,
        it is now a zombie. Finite (MaxExpiries), not fair."""
        self._leave(s, t, b)
        t.expiries = s.expiries + 1
        return s.up[b] & s.sess[b] & (s.expiries < self.MaxExpiries)

    @action(b=Brokers)
    def SessionTimeout(self, s, t, b):
        """The session of a crashed process expires (weakly fair)."""
        self._leave(s, t, b)
        return ~s.up[b] & s.sess[b]

    @action(b=Brokers)
    def ElectController(self, s, t, b):
        """Create ``/controller`` (the first wins) and take the next controller epoch;
        the new controller has synced no broker yet."""
        ce = s.zkCE + 1
        t.zkCtl = b
        t.zkCE = ce
        t.active[b] = True
        t.cEpoch[b] = ce
        t.synced = set()
        self._clear_context(t, b)
        return s.up[b] & s.sess[b] & ~s.active[b] & (s.zkCtl == 0) & (s.zkCE < self.MaxCE)

    @action(c=Brokers, b=Brokers)
    def Sync(self, s, t, c, b):
        """The controller sends its context in LeaderAndIsr and UpdateMetadata to broker
        ``b``, registered and not synced since it joined (``onBrokerStartup``, and
        ``onControllerFailover`` for every live broker)."""
        t.synced = s.synced.with_(b)
        t.lCE[b] = s.cEpoch[c]
        for p in self.Partitions:
            t.lLeader[b][p] = s.cLeader[c][p]
            t.lLE[b][p] = s.cLE[c][p]
        return (self.ready(s, c) & s.sess[c] & (s.zkCtl == c) & s.zkLive.has(b)
                & ~s.synced.has(b) & self.syncs())

    def shrink_needs_leader(self) -> bool:
        """An ISR shrinks for lag only while its leader runs with a session."""
        return True

    @action(c=Brokers, p=Partitions, f=Brokers)
    def ShrinkIsr(self, s, t, c, p, f):
        """Remove follower ``f`` from the ISR: it is not live, or it lags a leader that
        is up and registered (the leader's decision in Kafka, so never a dead one's)."""
        ld = s.cLeader[c][p]
        def lags(lb: int) -> Any:
            ok = (ld == lb) & (s.leo[f][p] < s.leo[lb][p])
            return ok & s.up[lb] & s.zkLive.has(lb) if self.shrink_needs_leader() else ok

        behind = any_of(self.Brokers, lags)
        self._write(s, t, c, p, ld, s.cIsr[c][p].without(f), s.cLE[c][p])
        return (self.can_write(s, c, p) & (ld != 0) & (ld != f) & s.cIsr[c][p].has(f)
                & (~s.zkLive.has(f) | behind))

    @action(b=Brokers)
    def DropLAIR(self, s, t, b):
        """A LeaderAndIsr for a broker that left ``/brokers/ids`` is discarded."""
        t.lCE[b] = 0
        for p in self.Partitions:
            t.lLeader[b][p] = 0
            t.lLE[b][p] = 0
        return (s.lCE[b] != 0) & (~s.zkLive.has(b) | self.lossy())

    @action(b=Brokers)
    def DropUM(self, s, t, b):
        """An UpdateMetadata for a broker that left ``/brokers/ids`` is discarded."""
        t.uCE[b] = 0
        for p in self.Partitions:
            t.uLE[b][p] = 0
        return (s.uCE[b] != 0) & (~s.zkLive.has(b) | self.lossy())

    ControllerEventuallyElected = controller_eventually_elected()
    ZombieEventuallyResigns = zombie_eventually_resigns()
    PartitionEventuallyLed = partition_eventually_led()
    ReplicasConverge = replicas_converge()


class ZkControllerLiveBugNoStartupSync(ZkControllerLive):
    """Bug: the controller sends LeaderAndIsr only with its writes (ZK's rule), never
    to a broker that rejoins or restarts, nor to every broker on failover: a broker
    whose session was away during the leader election never learns the leader epoch
    (ReplicasConverge)."""

    def sends_metadata(self) -> bool:
        return False

    def syncs(self) -> bool:
        return False


class ZkControllerLiveBugLossyRequests(ZkControllerLive):
    """Bug: a request to a registered broker may be lost and is never retried (ZK's
    network): a lost LeaderAndIsr leaves the broker on an old leader epoch for ever
    (ReplicasConverge)."""

    def lossy(self) -> bool:
        return True


class ZkControllerLiveBugShrinkWithoutLeader(ZkControllerLive):
    """Bug: the controller shrinks an ISR for lag whoever leads (ZK's rule): the
    leader's session expires, it still appends, the lagging live follower is removed,
    the leader crashes, and the ISR is the dead leader alone: no clean election is
    possible (PartitionEventuallyLed)."""

    def shrink_needs_leader(self) -> bool:
        return False
