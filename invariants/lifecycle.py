"""Predicates of the message-level KRaft broker lifecycle (``specs/kraft_lifecycle.py``).

They follow Kafka's controller (``ClusterControlManager``, ``BrokerHeartbeatManager``,
``ReplicationControlManager``) and KIP-631 / KIP-841:

* fencing moves leadership: a fenced broker never leads a partition, and stays in
  an ISR only as the last member of a leaderless partition (pre-KIP-966 KRaft never
  empties an ISR, it keeps the last member so that a clean election stays possible);
* leader epochs only grow, and every leader change bumps the epoch;
* no heartbeat with a stale broker epoch or from an incarnation older than the
  registered one changes heartbeat-driven controller state (the epoch check of
  ``ClusterControlManager.checkBrokerEpoch``);
* a controlled shutdown is granted only once the broker leads nothing and every
  active broker has replayed the metadata log up to the broker's
  ``controlledShutdownOffset`` (KIP-841);
* a stricter property that Kafka's registration rule does not give, and that the
  lifecycle spec violates (a finding, not a default check): no registration goes
  back to an older incarnation;
* a broker id holds one registration: a new incarnation replaces a registration only
  once it expired (the broker was fenced), and the process holding the registered
  epoch is the registered incarnation.

The message predicates read the lifecycle spec's network: a broker's round trip on
its live connection is one step (the request is the process's own: its epoch
``bEpoch``), and a request whose RPC timed out, or whose sender died, waits in one
delayed-request slot per broker (``z*``). A transition handled broker ``b``'s delayed
request when that slot empties (and the request did not merely become inert, see
:func:`_delayed_consumed`). Variable and enum-member names follow the spec.
"""

from __future__ import annotations

from typing import Any

from modelcheck import all_of, implies, where
from modelcheck.spec import PredicateDecl

from ._util import enum_value, ids_of

__all__ = [
    "fenced_not_leader",
    "fenced_not_in_isr",
    "leader_epoch_monotonic",
    "no_stale_request_effect",
    "no_superseded_registration",
    "controlled_shutdown_safe",
    "single_live_registration",
    "registered_incarnation_holds_epoch",
]

def _delayed_consumed(spec: Any, s: Any, t: Any, b: int) -> Any:
    """Whether the controller handled broker ``b``'s delayed request in this transition.

    The request left the network (its slot emptied), and it is not a heartbeat that
    merely became inert in a transition about something else: a spec may drop a
    delayed heartbeat as soon as its offset falls below the recorded one (it can never
    act again), while handling a heartbeat records its offset (or ignores it, changing
    nothing).
    """
    none = enum_value(spec, "zKind", "NONE")
    hb = enum_value(spec, "zKind", "HEARTBEAT")
    left = (s.zKind[b] != none) & (t.zKind[b] == none)
    overtaken = (s.zKind[b] == hb) & (s.zOffset[b] < t.reported[b])
    return left & ~overtaken


def _current_source(spec: Any, s: Any, t: Any, b: int) -> Any:
    """Whether the request behind this transition, if any, is a current one of ``b``.

    A transition that consumed ``b``'s delayed request acted on that request: it is
    current when it is a heartbeat carrying the registered epoch from the registered
    incarnation (or later). Any other transition about ``b`` is a round trip of the
    live process (or no request at all): current when the process holds the
    registered epoch.
    """
    hb = enum_value(spec, "zKind", "HEARTBEAT")
    delayed_ok = ((s.zKind[b] == hb) & (s.zEpoch[b] == s.regEpoch[b])
                  & (s.zInc[b] >= s.regInc[b]))
    live_ok = (s.bEpoch[b] != 0) & (s.bEpoch[b] == s.regEpoch[b])
    return where(_delayed_consumed(spec, s, t, b), delayed_ok, live_ok)


def fenced_not_leader(*, fenced: str = "fenced", leader: str = "leader",
                      name: str = "FencedNotLeader") -> PredicateDecl:
    """Invariant: ``\\A p, b: leader[p] = b => ~fenced[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        f, ld = getattr(s, fenced), getattr(s, leader)
        return all_of(ids_of(spec, leader), lambda p: all_of(
            ids_of(spec, fenced), lambda b: implies(ld[p] == b, ~f[b])))

    return PredicateDecl(inv, "invariant", name, doc="A fenced broker leads no partition.")


def fenced_not_in_isr(*, fenced: str = "fenced", isr: str = "isr", leader: str = "leader",
                      name: str = "FencedNotInIsr") -> PredicateDecl:
    """Invariant: a fenced broker is in an ISR only as the last member of a leaderless
    partition: ``\\A p, b: b \\in isr[p] /\\ fenced[b] => isr[p] = {b} /\\ leader[p] = 0``.

    KRaft (before KIP-966's ELR) removes a fenced broker from every ISR except one
    where it is the only member, and such a partition has no leader.
    """

    def inv(spec: Any, s: Any) -> Any:
        brokers = ids_of(spec, fenced)
        f, i, ld = getattr(s, fenced), getattr(s, isr), getattr(s, leader)
        return all_of(ids_of(spec, isr), lambda p: all_of(brokers, lambda b: implies(
            i[p].has(b) & f[b], (i[p] == {b}) & (ld[p] == 0))))

    return PredicateDecl(inv, "invariant", name,
                         doc="A fenced broker is in no ISR, except as the last member of a "
                             "leaderless partition.")


def leader_epoch_monotonic(*, leader: str = "leader", epoch: str = "leaderEpoch",
                           name: str = "LeaderEpochMonotonic") -> PredicateDecl:
    """Action property: leader epochs never decrease, and a leader change bumps it.

    ``[][\\A p: e'[p] >= e[p] /\\ (leader'[p] # leader[p] => e'[p] > e[p])]_vars``
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        e, e2 = getattr(s, epoch), getattr(t, epoch)
        ld, ld2 = getattr(s, leader), getattr(t, leader)
        return all_of(ids_of(spec, epoch), lambda p: (e2[p] >= e[p]) & implies(
            ld2[p] != ld[p], e2[p] > e[p]))

    return PredicateDecl(prop, "action", name,
                         doc="Leader epochs only grow; every leader change bumps the epoch.")


def no_stale_request_effect(*, name: str = "NoStaleRequestEffect") -> PredicateDecl:
    """Action property: nothing but a request carrying the registered broker epoch (from
    the registered incarnation) changes what heartbeats drive.

    What only a heartbeat changes: ``b`` unfenced (``fenced`` true -> false), ``b``
    entering controlled shutdown (``inCS``, ``csOffset``), and the recorded offset
    ``reported`` (other than by a new registration, which resets it). When such a
    change happens to ``b`` while its registration stays, the request behind the
    transition (the delayed request it consumed, else the live process's round trip)
    carries ``regEpoch[b]`` and comes from incarnation ``regInc[b]`` or later.

    Heartbeats carry no incarnation id, only the epoch: a heartbeat delayed past its
    sender's death, and handled before any newer registration, carries the current
    epoch and acts like a live one (the session timeout fences the broker again).
    No epoch check can exclude that, so this property does not.
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        def ok(b: int) -> Any:
            same_reg = t.regEpoch[b] == s.regEpoch[b]
            hb_change = ((s.fenced[b] & ~t.fenced[b]) | (~s.inCS[b] & t.inCS[b])
                         | (t.csOffset[b] != s.csOffset[b]) & (t.csOffset[b] != 0)
                         | (t.reported[b] != s.reported[b]))
            return implies(same_reg & hb_change, _current_source(spec, s, t, b))

        return all_of(ids_of(spec, "regEpoch"), ok)

    return PredicateDecl(prop, "action", name,
                         doc="No request with a stale broker epoch or from a superseded "
                             "incarnation changes heartbeat-driven controller state.")


def no_superseded_registration(*, name: str = "NoSupersededRegistration") -> PredicateDecl:
    """Action property (stricter than Kafka's rule): a registration never goes back to an
    older incarnation: ``regEpoch'[b] # regEpoch[b] => regInc'[b] >= regInc[b]``.

    Kafka accepts a registration whenever the stored one is fenced, whatever the
    incarnation, so a delayed registration of a dead incarnation can replace a newer
    incarnation's fenced registration. This fails on the lifecycle spec (a finding)
    and is not among its default checks; check it with ``--invariant
    NoSupersededRegistration``.
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        return all_of(ids_of(spec, "regEpoch"), lambda b: implies(
            t.regEpoch[b] != s.regEpoch[b], t.regInc[b] >= s.regInc[b]))

    return PredicateDecl(prop, "action", name,
                         doc="A registration never goes back to an older incarnation.")


def controlled_shutdown_safe(*, name: str = "ControlledShutdownSafe") -> PredicateDecl:
    """Action property: when the controller grants a controlled shutdown, the broker leads
    nothing and every active broker has replayed the log up to its
    ``controlledShutdownOffset``.

    A grant: broker ``b`` in controlled shutdown (``csOffset[b] # 0``, unfenced) is
    fenced by a heartbeat, either its live round trip (the process goes from
    PENDING_CONTROLLED_SHUTDOWN to SHUTTING_DOWN) or its delayed request (consumed in
    the transition); a session timeout is not a grant. Active = registered,
    unfenced, not in controlled shutdown (``isActive``); ``offset`` is the real replay
    position.
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        brokers = ids_of(spec, "fenced")
        parts = ids_of(spec, "leader")
        pending = enum_value(spec, "bstate", "PENDING_CONTROLLED_SHUTDOWN")
        down = enum_value(spec, "bstate", "SHUTTING_DOWN")

        def ok(b: int) -> Any:
            told = (s.bstate[b] == pending) & (t.bstate[b] == down)
            granted = ((s.csOffset[b] != 0) & ~s.fenced[b] & t.fenced[b]
                       & (told | _delayed_consumed(spec, s, t, b)))
            leads_nothing = all_of(parts, lambda p: t.leader[p] != b)
            others_saw = all_of((o for o in brokers if o != b), lambda o: implies(
                (t.regEpoch[o] != 0) & ~t.fenced[o] & ~t.inCS[o],
                t.offset[o] >= s.csOffset[b]))
            return implies(granted, leads_nothing & others_saw)

        return all_of(brokers, ok)

    return PredicateDecl(prop, "action", name,
                         doc="A controlled shutdown is granted only to a broker that leads "
                             "nothing, once every active broker replayed its moves.")


def single_live_registration(*, name: str = "SingleLiveRegistration") -> PredicateDecl:
    """Action property: a broker id holds at most one live registration.

    A registration of another incarnation replaces the stored one only if that one
    expired (its broker is fenced): ``regInc'[b] # regInc[b] /\\ regEpoch[b] # 0 =>
    fenced[b]``.
    """

    def prop(spec: Any, s: Any, t: Any) -> Any:
        return all_of(ids_of(spec, "regInc"), lambda b: implies(
            (t.regInc[b] != s.regInc[b]) & (s.regEpoch[b] != 0), s.fenced[b]))

    return PredicateDecl(prop, "action", name,
                         doc="A new incarnation replaces a registration only once it "
                             "expired (fenced).")


def registered_incarnation_holds_epoch(*, name: str = "RegisteredIncarnationHoldsEpoch"
                                       ) -> PredicateDecl:
    """Invariant: the broker process holding the registered epoch is the registered
    incarnation: ``bEpoch[b] # 0 /\\ bEpoch[b] = regEpoch[b] => inc[b] = regInc[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        return all_of(ids_of(spec, "regInc"), lambda b: implies(
            (s.bEpoch[b] != 0) & (s.bEpoch[b] == s.regEpoch[b]), s.inc[b] == s.regInc[b]))

    return PredicateDecl(inv, "invariant", name,
                         doc="Only the registered incarnation holds the registered epoch.")
