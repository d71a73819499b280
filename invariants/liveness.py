"""Temporal properties of the KRaft broker lifecycle: what must eventually happen.

The broker lifecycle chapter (seed 000, §8) and KIP-631 promise progress, not only
safety: a broker that started and caught up is eventually unfenced ("as long as the
broker is still running, eventually it will send a heartbeat to the controller and
the controller will unfence it"), a controlled shutdown eventually completes
("heartbeats continue until the broker receives a response with
shouldShutdown=true"), a registration either succeeds or the broker gives up
(``initial.broker.registration.timeout.ms``, seed 004), and a dead broker's session
eventually expires (it is fenced "due to lack of heartbeats").

Each factory returns a leads-to property (:func:`modelcheck.leads_to`), or for
:func:`eventually_stays_unfenced` an eventually-always one, about one
broker (``broker``, default 1), reading variables by name with the KRaft specs'
defaults: ``bstate`` (Kafka's ``BrokerState`` enum), ``fenced`` and the epoch the
process holds (``epoch``, ``0`` for none: ``bEpoch`` in ``specs/kraft_lifecycle.py``,
an enum whose ``NONE`` is 0 in ``specs/kraft_lifecycle_live.py``). A process is
*alive* in STARTING, RECOVERY, RUNNING and PENDING_CONTROLLED_SHUTDOWN, and in
KIP-631's FENCED (a running process without a lease) where the spec's ``bstate``
has that state (``specs/kraft_lease.py``). A spec whose rules
do not depend on broker ids (symmetric in the brokers) satisfies the property of
every broker iff it satisfies broker 1's. Each is checked under the spec's fairness;
a bounded spec whose behaviours all end (a full log) violates them trivially, which
is why the liveness spec keeps offsets head-relative.
"""

from __future__ import annotations

from typing import Any

from modelcheck.temporal import TemporalDecl

from ._util import enum_value, has_enum_value

__all__ = ["eventually_unfenced", "controlled_shutdown_completes", "registration_resolves",
           "dead_broker_eventually_fenced", "eventually_stays_unfenced"]


def _alive(spec: Any, s: Any, b: int, bstate: str) -> Any:
    st = getattr(s, bstate)[b]
    alive = ((st == enum_value(spec, bstate, "STARTING"))
             | (st == enum_value(spec, bstate, "RECOVERY"))
             | (st == enum_value(spec, bstate, "RUNNING"))
             | (st == enum_value(spec, bstate, "PENDING_CONTROLLED_SHUTDOWN")))
    if has_enum_value(spec, bstate, "FENCED"):
        alive = alive | (st == enum_value(spec, bstate, "FENCED"))
    return alive


def _temporal(fn: Any, name: str, doc: str, form: str = "leads_to") -> TemporalDecl:
    fn.__name__ = name
    fn.__qualname__ = name
    decl = TemporalDecl(fn, form)
    decl.name = name
    decl.doc = doc
    return decl


def eventually_unfenced(*, broker: int = 1, bstate: str = "bstate",
                        name: str = "EventuallyUnfenced") -> TemporalDecl:
    """``alive(b) /\\ bstate[b] \\in {STARTING, RECOVERY} ~> bstate[b] = RUNNING \\/ ~alive(b)``:
    a starting broker that stays up reaches RUNNING (the controller unfenced it)."""

    def prop(spec: Any, s: Any) -> Any:
        st = getattr(s, bstate)[broker]
        starting = ((st == enum_value(spec, bstate, "STARTING"))
                    | (st == enum_value(spec, bstate, "RECOVERY")))
        alive = _alive(spec, s, broker, bstate)
        return alive & starting, (st == enum_value(spec, bstate, "RUNNING")) | ~alive

    return _temporal(prop, name, f"A starting broker {broker} that stays up is eventually "
                                 "unfenced and RUNNING.")


def controlled_shutdown_completes(*, broker: int = 1, bstate: str = "bstate",
                                  name: str = "ControlledShutdownCompletes") -> TemporalDecl:
    """``bstate[b] = PENDING_CONTROLLED_SHUTDOWN ~> bstate[b] \\in {SHUTTING_DOWN,
    NOT_RUNNING}``: a controlled shutdown is eventually granted (or the process dies)."""

    def prop(spec: Any, s: Any) -> Any:
        st = getattr(s, bstate)[broker]
        return (st == enum_value(spec, bstate, "PENDING_CONTROLLED_SHUTDOWN"),
                (st == enum_value(spec, bstate, "SHUTTING_DOWN"))
                | (st == enum_value(spec, bstate, "NOT_RUNNING")))

    return _temporal(prop, name, f"A controlled shutdown of broker {broker} eventually "
                                 "completes.")


def registration_resolves(*, broker: int = 1, bstate: str = "bstate", epoch: str = "epoch",
                          name: str = "RegistrationResolves") -> TemporalDecl:
    """``alive(b) /\\ epoch[b] = 0 ~> epoch[b] # 0 \\/ ~alive(b)``: a live unregistered
    process eventually holds a broker epoch, or stops (a registration timeout)."""

    def prop(spec: Any, s: Any) -> Any:
        alive = _alive(spec, s, broker, bstate)
        e = getattr(s, epoch)[broker]
        return alive & (e == 0), (e != 0) | ~alive

    return _temporal(prop, name, f"Broker {broker}'s registration eventually succeeds, or "
                                 "the process gives up.")


def dead_broker_eventually_fenced(*, broker: int = 1, bstate: str = "bstate",
                                  fenced: str = "fenced",
                                  name: str = "DeadBrokerEventuallyFenced") -> TemporalDecl:
    """``~alive(b) /\\ ~fenced[b] ~> fenced[b]``: the session of a dead broker expires."""

    def prop(spec: Any, s: Any) -> Any:
        f = getattr(s, fenced)[broker]
        return ~_alive(spec, s, broker, bstate) & ~f, f

    return _temporal(prop, name, f"A dead broker {broker} that is still unfenced is "
                                 "eventually fenced.")


def eventually_stays_unfenced(*, broker: int = 1, bstate: str = "bstate",
                              fenced: str = "fenced",
                              name: str = "EventuallyStaysUnfenced") -> TemporalDecl:
    """``<>[](alive(b) => bstate[b] = RUNNING /\\ ~fenced[b])``: once failures stop, a
    broker that is up runs unfenced for good (000 §8.2: "as long as the broker is still
    running, eventually it will send a heartbeat to the controller and the controller
    will unfence it"), with no endless fence-unfence (or, KIP-631, lease lapse) cycle.
    Checked under finitely many failures (crashes, lost heartbeats)."""

    def prop(spec: Any, s: Any) -> Any:
        st = getattr(s, bstate)[broker]
        ok = (st == enum_value(spec, bstate, "RUNNING")) & ~getattr(s, fenced)[broker]
        return ~_alive(spec, s, broker, bstate) | ok

    return _temporal(prop, name, f"Once failures stop, broker {broker} runs unfenced for "
                                 "good while it is up.", form="eventually_always")
