"""Temporal properties of a ZooKeeper-era Kafka controller (``specs/zk_controller_live.py``).

What the seed on ZooKeeper-era Kafka (``kraft/seeds/003``) promises beyond safety:
when ``/controller`` is free and some process can create it, one does ("the first
broker to create the node becomes controller"); a controller whose session expired
stops acting as one; a partition whose leader died gets a new one while an ISR
member is alive (or any replica, with unclean election); and every live replica
ends up knowing the partition's current leader epoch.

Each factory reads variables by name, with the defaults of ``specs/zk_controller.py``
(``zkCtl``: 0 for none; ``zkLive``, ``zkLeader``, ``zkIsr``, ``zkLE`` per partition;
``up``, ``sess``, ``active`` per process; ``rLE`` per broker and partition). The
per-broker property is about one broker (``broker``, default 1) and the per-partition
one about one partition (``partition``, default 1): in a spec whose rules do not
depend on ids, that one's verdict is every one's.
"""

from __future__ import annotations

from typing import Any

from modelcheck import all_of, any_of, implies
from modelcheck.temporal import TemporalDecl

from ._util import ids_of

__all__ = ["controller_eventually_elected", "zombie_eventually_resigns",
           "partition_eventually_led", "replicas_converge"]


def _temporal(fn: Any, form: str, name: str, doc: str) -> TemporalDecl:
    fn.__name__ = name
    fn.__qualname__ = name
    decl = TemporalDecl(fn, form)
    decl.name = name
    decl.doc = doc
    return decl


def controller_eventually_elected(*, ctl: str = "zkCtl", up: str = "up", sess: str = "sess",
                                  name: str = "ControllerEventuallyElected") -> TemporalDecl:
    """``(\\E b: up[b] /\\ sess[b]) /\\ zkCtl = 0 ~> zkCtl # 0``: while some running
    process holds a session, ``/controller`` does not stay free."""

    def prop(spec: Any, s: Any) -> Any:
        u, se = getattr(s, up), getattr(s, sess)
        free = getattr(s, ctl) == 0
        return free & any_of(ids_of(spec, up), lambda b: u[b] & se[b]), ~free

    return _temporal(prop, "leads_to", name, "A free /controller is eventually taken while "
                                             "a running process holds a session.")


def zombie_eventually_resigns(*, broker: int = 1, ctl: str = "zkCtl", active: str = "active",
                              name: str = "ZombieEventuallyResigns") -> TemporalDecl:
    """``active[b] /\\ zkCtl # b ~> ~active[b]``: a process that acts as controller
    without holding ``/controller`` (a zombie) eventually stops."""

    def prop(spec: Any, s: Any) -> Any:
        a = getattr(s, active)[broker]
        return a & (getattr(s, ctl) != broker), ~a

    return _temporal(prop, "leads_to", name, f"A zombie controller {broker} eventually "
                                             "resigns.")


def partition_eventually_led(*, partition: int = 1, unclean: bool | None = None,
                             live: str = "zkLive", leader: str = "zkLeader",
                             isr: str = "zkIsr",
                             name: str = "PartitionEventuallyLed") -> TemporalDecl:
    """``zkLeader[p] \\notin zkLive /\\ (zkIsr[p] \\cap zkLive # {} \\/ Unclean) ~>
    zkLeader[p] \\in zkLive``: a partition whose leader is gone gets a live leader
    while an ISR member is live (any live replica may do, with unclean election;
    ``unclean=None`` reads the spec's constant ``Unclean``)."""

    def prop(spec: Any, s: Any) -> Any:
        lv = getattr(s, live)
        led = lv.has(getattr(s, leader)[partition])  # 0 (no leader) is never live
        candidates = ~(getattr(s, isr)[partition] & lv).is_empty()
        if spec.constants.get("Unclean", False) if unclean is None else unclean:
            candidates = ~lv.is_empty()
        return ~led & candidates, led

    return _temporal(prop, "leads_to", name, f"Partition {partition} without a live leader "
                                             "eventually gets one while a candidate lives.")


def replicas_converge(*, up: str = "up", live: str = "zkLive", rle: str = "rLE",
                      zkle: str = "zkLE", name: str = "ReplicasConverge") -> TemporalDecl:
    """``<>[](\\A b, p: up[b] /\\ b \\in zkLive => rLE[b][p] = zkLE[p])``: eventually
    every live replica knows every partition's current leader epoch, and keeps it."""

    def prop(spec: Any, s: Any) -> Any:
        u, lv, r, z = getattr(s, up), getattr(s, live), getattr(s, rle), getattr(s, zkle)
        parts = ids_of(spec, zkle)
        return all_of(ids_of(spec, up), lambda b: implies(
            u[b] & lv.has(b), all_of(parts, lambda p: r[b][p] == z[p])))

    return _temporal(prop, "eventually_always", name,
                     "Eventually every live replica holds the current leader epoch of every "
                     "partition, for ever.")
