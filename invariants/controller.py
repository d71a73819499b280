"""Predicates of a ZooKeeper-era Kafka controller (``specs/zk_controller.py``).

They follow the seed on ZooKeeper-era Kafka (``kraft/seeds/003``) and Kafka's
replication protocol:

* controller epochs: two processes that believe they are controller never share a
  controller epoch (the "conditional increment" of ``/controller_epoch``); the
  epoch in ZooKeeper and the highest epoch a broker has seen never go back;
* zombie fencing at the broker: a request carrying a controller epoch lower than
  the highest the broker has seen changes nothing ("if they receive pings from a
  controller with lower number they ignore it");
* a broker's metadata cache never goes back to an older leader epoch;
* partitions: two replicas that both believe they lead a partition do so in
  different leader epochs; the leader recorded in ZooKeeper is in the ISR; every
  ISR member holds the committed data, and so does the leader.

Each factory takes the variable names (defaults follow the spec), so a spec with
the same shape under other names can reuse them. Arrays indexed ``[Brokers]`` or
``[Brokers][Partitions]`` / ``[Partitions]``; 0 means "none" for broker references
and "empty slot" for a request's controller epoch.
"""

from __future__ import annotations

from typing import Any

from modelcheck import all_of, implies
from modelcheck.spec import PredicateDecl

from ._util import ids_of

__all__ = [
    "unique_controller_epoch",
    "controller_epoch_grows",
    "no_stale_controller_effect",
    "metadata_epoch_monotonic",
    "one_leader_per_epoch",
    "leader_in_isr",
    "isr_holds_committed",
    "committed_not_lost",
]


def _inner(spec: Any, var: str) -> range:
    """The second index set of a two-level array variable."""
    return spec.layout.vars[var].dims[1]


def unique_controller_epoch(*, active: str = "active", epoch: str = "cEpoch",
                            name: str = "UniqueControllerEpoch") -> PredicateDecl:
    """Invariant: ``\\A a # b: active[a] /\\ active[b] => epoch[a] # epoch[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        ids = ids_of(spec, active)
        act, ep = getattr(s, active), getattr(s, epoch)
        return all_of(ids, lambda a: all_of((b for b in ids if b > a), lambda b: implies(
            act[a] & act[b], ep[a] != ep[b])))

    return PredicateDecl(inv, "invariant", name,
                         doc="Two processes that act as controller hold different "
                             "controller epochs.")


def controller_epoch_grows(*, zk: str = "zkCE", seen: str = "seenCE", up: str = "up",
                           name: str = "ControllerEpochGrows") -> PredicateDecl:
    """Action property: ``zk' >= zk`` and, for a broker up in both states,
    ``seen'[b] >= seen[b]`` (a restart forgets what the process had seen)."""

    def prop(spec: Any, s: Any, t: Any) -> Any:
        sn, sn2, u, u2 = getattr(s, seen), getattr(t, seen), getattr(s, up), getattr(t, up)
        return (getattr(t, zk) >= getattr(s, zk)) & all_of(
            ids_of(spec, seen), lambda b: implies(u[b] & u2[b], sn2[b] >= sn[b]))

    return PredicateDecl(prop, "action", name,
                         doc="The controller epoch in ZooKeeper and the highest epoch each "
                             "running broker has seen never decrease.")


def no_stale_controller_effect(*, seen: str = "seenCE", up: str = "up",
                               requests: tuple[tuple[str, tuple[str, ...]], ...] = (
                                   ("lCE", ("rLeader", "rLE")), ("uCE", ("mLE",))),
                               name: str = "NoStaleControllerEffect") -> PredicateDecl:
    """Action property: a request whose controller epoch is below the highest the
    broker has seen changes nothing when the broker takes it.

    ``requests`` pairs each request slot's epoch variable (``[Brokers]``, 0 = empty)
    with the broker variables that request kind may change. A transition *takes*
    broker ``b``'s request when the slot empties while ``b`` keeps running (a crash
    also empties it).
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        sn, u2 = getattr(s, seen), getattr(t, up)

        def ok(b: int) -> Any:
            acc: Any = True
            for slot, effects in requests:
                ce, ce2 = getattr(s, slot)[b], getattr(t, slot)[b]
                taken_stale = (ce != 0) & (ce < sn[b]) & (ce2 == 0) & u2[b]
                same: Any = getattr(t, seen)[b] == sn[b]
                for v in effects:
                    same = same & all_of(_inner(spec, v), lambda p, v=v: (
                        getattr(t, v)[b][p] == getattr(s, v)[b][p]))
                acc = acc & implies(taken_stale, same)
            return acc

        return all_of(ids_of(spec, seen), ok)

    return PredicateDecl(prop, "action", name,
                         doc="A broker ignores a request from a controller older than one "
                             "it has heard from.")


def metadata_epoch_monotonic(*, epoch: str = "mLE", up: str = "up",
                             name: str = "MetadataEpochMonotonic") -> PredicateDecl:
    """Action property: ``\\A b, p: up[b] /\\ up'[b] => epoch'[b][p] >= epoch[b][p]``."""

    def prop(spec: Any, s: Any, t: Any) -> Any:
        e, e2, u, u2 = getattr(s, epoch), getattr(t, epoch), getattr(s, up), getattr(t, up)
        return all_of(ids_of(spec, epoch), lambda b: implies(u[b] & u2[b], all_of(
            _inner(spec, epoch), lambda p: e2[b][p] >= e[b][p])))

    return PredicateDecl(prop, "action", name,
                         doc="A running broker's metadata cache never goes back to an "
                             "older leader epoch.")


def one_leader_per_epoch(*, leader: str = "rLeader", epoch: str = "rLE",
                         name: str = "OneLeaderPerEpoch") -> PredicateDecl:
    """Invariant: two replicas that believe they lead partition ``p`` do so in
    different leader epochs: ``\\A a # b, p: leader[a][p] = a /\\ leader[b][p] = b =>
    epoch[a][p] # epoch[b][p]``."""

    def inv(spec: Any, s: Any) -> Any:
        ids = ids_of(spec, leader)
        ld, ep = getattr(s, leader), getattr(s, epoch)
        return all_of(_inner(spec, leader), lambda p: all_of(ids, lambda a: all_of(
            (b for b in ids if b > a), lambda b: implies(
                (ld[a][p] == a) & (ld[b][p] == b), ep[a][p] != ep[b][p]))))

    return PredicateDecl(inv, "invariant", name,
                         doc="At most one replica believes it leads a partition in a given "
                             "leader epoch.")


def leader_in_isr(*, leader: str = "zkLeader", isr: str = "zkIsr",
                  name: str = "LeaderInIsr") -> PredicateDecl:
    """Invariant: ``\\A p: leader[p] # 0 => leader[p] \\in isr[p]``."""

    def inv(spec: Any, s: Any) -> Any:
        ld, i = getattr(s, leader), getattr(s, isr)
        return all_of(ids_of(spec, leader), lambda p: implies(ld[p] != 0, i[p].has(ld[p])))

    return PredicateDecl(inv, "invariant", name,
                         doc="The partition leader recorded in ZooKeeper is in its ISR.")


def isr_holds_committed(*, isr: str = "zkIsr", leo: str = "leo", committed: str = "committed",
                        name: str = "IsrHoldsCommitted") -> PredicateDecl:
    """Invariant: ``\\A p, r: r \\in isr[p] => leo[r][p] >= committed[p]``."""

    def inv(spec: Any, s: Any) -> Any:
        i, lo, c = getattr(s, isr), getattr(s, leo), getattr(s, committed)
        return all_of(ids_of(spec, isr), lambda p: all_of(
            ids_of(spec, leo), lambda r: implies(i[p].has(r), lo[r][p] >= c[p])))

    return PredicateDecl(inv, "invariant", name,
                         doc="Every ISR member's log holds every committed record.")


def committed_not_lost(*, leader: str = "zkLeader", leo: str = "leo",
                       committed: str = "committed",
                       name: str = "CommittedNotLost") -> PredicateDecl:
    """Invariant: ``\\A p: leader[p] # 0 => leo[leader[p]][p] >= committed[p]``."""

    def inv(spec: Any, s: Any) -> Any:
        ld, lo, c = getattr(s, leader), getattr(s, leo), getattr(s, committed)
        return all_of(ids_of(spec, leader), lambda p: all_of(
            ids_of(spec, leo), lambda r: implies(ld[p] == r, lo[r][p] >= c[p])))

    return PredicateDecl(inv, "invariant", name,
                         doc="The current leader's log holds every committed record.")
