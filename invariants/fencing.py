"""Fencing and controlled-shutdown predicates of the KRaft broker lifecycle.

* caught-up-before-unfence: the controller unfences a broker only once its
  metadata offset reached its registration record (KIP-631; the controller's
  heartbeat handling in Kafka 3.x-4.x);
* a broker told SHUTDOWN_NOW leads no partition (KIP-841 controlled shutdown);
* a running broker process holds its current broker epoch.

Enum values are found by member name in the spec's variables, so any spec that
uses the same names can use these predicates.
"""

from __future__ import annotations

from typing import Any

from modelcheck import all_of, implies
from modelcheck.spec import PredicateDecl

from ._util import enum_value, ids_of

__all__ = ["caught_up_before_unfence", "shutdown_leads_nothing", "running_holds_epoch"]


def caught_up_before_unfence(*, epoch: str = "regEpoch", fenced: str = "fenced",
                             offset: str = "offset",
                             name: str = "CaughtUpBeforeUnfence") -> PredicateDecl:
    """Invariant: ``\\A b: (epoch[b] # 0 /\\ ~fenced[b]) => offset[b] >= epoch[b]``."""

    def inv(spec: Any, s: Any) -> Any:
        e, f, o = getattr(s, epoch), getattr(s, fenced), getattr(s, offset)
        return all_of(ids_of(spec, epoch),
                      lambda b: implies((e[b] != 0) & ~f[b], o[b] >= e[b]))

    return PredicateDecl(inv, "invariant", name,
                         doc="An unfenced registered broker has replayed up to its registration.")


def shutdown_leads_nothing(*, cs: str = "cs", leader: str = "leader",
                           shutdown_now: str = "SHUTDOWN_NOW",
                           name: str = "ShutdownLeadsNothing") -> PredicateDecl:
    """Invariant: ``\\A b, p: cs[b] = SHUTDOWN_NOW => leader[p] # b``."""

    def inv(spec: Any, s: Any) -> Any:
        now = enum_value(spec, cs, shutdown_now)
        c, ld = getattr(s, cs), getattr(s, leader)
        return all_of(ids_of(spec, cs), lambda b: all_of(
            ids_of(spec, leader), lambda p: implies(c[b] == now, ld[p] != b)))

    return PredicateDecl(inv, "invariant", name,
                         doc="A broker told to shut down leads no partition.")


def running_holds_epoch(*, state: str = "bstate", epoch: str = "bEpoch",
                        running: tuple[str, ...] = ("RECOVERY", "RUNNING", "PENDING_CS"),
                        name: str = "RunningHoldsCurrentEpoch") -> PredicateDecl:
    """Invariant: ``\\A b: state[b] \\in running => epoch[b] # 0``."""

    def inv(spec: Any, s: Any) -> Any:
        vals = [enum_value(spec, state, r) for r in running]
        st, ep = getattr(s, state), getattr(s, epoch)

        def holds(b: int) -> Any:
            active: Any = st[b] == vals[0]
            for v in vals[1:]:
                active = active | (st[b] == v)
            return implies(active, ep[b] != 0)

        return all_of(ids_of(spec, state), holds)

    return PredicateDecl(inv, "invariant", name,
                         doc="A broker past registration holds a broker epoch.")
