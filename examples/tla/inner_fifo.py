"""The internal FIFO of *Specifying Systems* ch. 4: a queue between two channels (MCInnerFIFO).

Source: tlaplus/Examples ``specifications/SpecifyingSystems/FIFO/InnerFIFO.tla`` (and
its instance-free copy ``InnerFIFOInstanced.tla``), ``Channel.tla``, with the model
``MCInnerFIFO.tla``/``MCInnerFIFO.cfg`` (Leslie Lamport): ``Message = {m1, m2, m3}``
(model values, no symmetry), ``qLen = 3``, ``CONSTRAINT qConstraint`` (``Len(q) <=
qLen``), ``INVARIANT TypeInvariant``. The manifest gives 3,864 distinct states,
9,660 total, TLC depth 11 (our depth 10).

A sender puts messages on channel ``in`` (``SSend``), the buffer moves them into the
queue ``q`` (``BufRcv``) and out of it onto channel ``out`` (``BufSend``), and a
receiver acknowledges them (``RRcv``). A channel is the two-phase handshake of
``Channel.tla``: a record ``[val, rdy, ack]``; ``Send(d)`` when ``rdy = ack`` sets
``val`` and flips ``rdy``, ``Rcv`` when ``rdy # ack`` flips ``ack``.

Translation: ``in`` is a Python keyword, so the variables are ``in_``, ``out`` and
``q``; the channels are ``Record(val, rdy, ack)`` and ``q`` a ``Seq`` of ``Message``
(an enum of the three model values). ``Init``'s ``TypeInvariant /\\ ack = rdy`` is
``init_product`` over the 3 x 2 records of each channel (36 initial states). ``q``
holds ``qLen + 1`` messages: TLC's constraint keeps states with ``Len(q) <= qLen`` and
still *generates* (and checks ``TypeInvariant`` on) the successors with ``qLen + 1``,
as ``@constraint`` does here. ``TypeInvariant`` holds by the types; it is kept as
an invariant on the fields for its name. No temporal properties in the cfg.

``InnerFIFOBugIncrement`` sends with ``rdy' = rdy + 1`` instead of ``1 - rdy``: TLC
reports a ``TypeInvariant`` violation; here storing 2 in ``rdy`` (declared ``0..1``)
is a spec error naming the variable, the action and the (initial) state.

Run: ``modelcheck check examples/tla/inner_fifo.py`` (3,864 states, depth 10; TLC's
9,660 total states are our 9,624 generated plus the 36 initial states).
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Const,
    Enum,
    Int,
    Record,
    Seq,
    Spec,
    action,
    constraint,
    init_product,
    invariant,
)

__all__ = ["Message", "InnerFIFO", "InnerFIFOBugIncrement"]


class Message(IntEnum):
    m1 = 0
    m2 = 1
    m3 = 2


Chan = Record(val=Enum(Message), rdy=Int(0, 1), ack=Int(0, 1))


def _ready_chans() -> list[dict[str, int]]:
    """``Channel``'s ``Init``: ``chan \\in [val: Data, rdy: {0,1}, ack: {0,1}] /\\ ack = rdy``."""
    return [{"val": m, "rdy": b, "ack": b} for m in Message for b in (0, 1)]


class InnerFIFO(Spec):
    """InnerFIFO.tla's ``Spec`` under MCInnerFIFO's constraint ``Len(q) <= qLen``."""

    qLen = Const(3, min=0, doc="the constraint's bound on Len(q)")

    in_ = Chan
    out = Chan
    q = Seq(Enum(Message), qLen + 1)

    def init_states(self):
        return init_product(in_=_ready_chans(), out=_ready_chans())

    @action(msg=list(Message))
    def SSend(self, s, t, msg):
        t.in_ = s.in_.with_fields(val=msg, rdy=1 - s.in_.rdy)
        return s.in_.rdy == s.in_.ack

    @action
    def BufRcv(self, s, t):
        t.in_ = s.in_.with_fields(ack=1 - s.in_.ack)
        t.q = s.q.append(s.in_.val)
        return s.in_.rdy != s.in_.ack

    @action
    def BufSend(self, s, t):
        t.out = s.out.with_fields(val=s.q.head(), rdy=1 - s.out.rdy)
        t.q = s.q.tail()
        return ~s.q.is_empty() & (s.out.rdy == s.out.ack)

    @action
    def RRcv(self, s, t):
        t.out = s.out.with_fields(ack=1 - s.out.ack)
        return s.out.rdy != s.out.ack

    @constraint
    def qConstraint(self, s):
        return s.q.len() <= self.qLen

    @invariant
    def TypeInvariant(self, s):
        """The channels' ``rdy``/``ack`` in ``{0, 1}`` (``val`` and ``q`` are typed)."""
        return ((s.in_.rdy <= 1) & (s.in_.ack <= 1) & (s.out.rdy <= 1) & (s.out.ack <= 1))


class InnerFIFOBugIncrement(InnerFIFO):
    """``SSend`` increments ``rdy`` instead of flipping it."""

    @action(msg=list(Message))
    def SSend(self, s, t, msg):
        t.in_ = s.in_.with_fields(val=msg, rdy=s.in_.rdy + 1)
        return s.in_.rdy == s.in_.ack
