"""A single-producer, multi-consumer Disruptor ring buffer (tlaplus/Examples Disruptor).

A port of ``specifications/Disruptor/Disruptor_SPMC.tla`` and the module it
instantiates, ``RingBuffer.tla`` (Nicholas Schultz-Møller), checked with
``Disruptor_SPMC.cfg``: ``MaxPublished = 10``, ``Writers = {w}``, ``Readers = {r1, r2,
r3}``, ``Size = 4``, ``CONSTRAINT StateConstraint`` (``published < MaxPublished``),
``CHECK_DEADLOCK FALSE``. The producer claims the next sequence number once every
consumer is at most a lap behind, writes it into its slot and publishes it; each
consumer reads every published slot in turn. Slot accesses take two steps (begin,
end) so that ``NoDataRaces`` sees a reader and a writer on the same slot. The manifest
gives 8,496 distinct states, 28,049 generated (with the initial state) and depth 82
(TLC counts states, we count steps); this port finds 8,496 states, 28,048
successors, depth 81.

Translation choices:

* ``Writers`` and ``Readers`` are ``Ids(1, 1)`` and ``Ids(2, 4)`` (w; r1, r2, r3), so
  that ``pc``, over ``Writers \\cup Readers``, is an array over ``Ids(1, 4)``.
* ``ringbuffer``, a record of three functions on ``0 .. Size-1`` (``slots``,
  ``readers``, ``writers``), is an array over ``0 .. Size-1`` of records ``[slot,
  readers, writers]``: the same function, transposed (modelcheck records cannot hold
  arrays). ``NULL`` is the slot value -1 (slots hold sequence numbers, never
  negative; ``Values <- Int``).
* ``consumed[r]``, a ``Seq(Nat)`` history variable, is a ``Seq`` of capacity
  ``MaxPublished``: a consumer reads each published number once, and at most
  ``MaxPublished`` are published within the constraint. ``published`` and ``read``
  range over ``-1 .. MaxPublished``.
* ``MinReadSequence == CHOOSE min \\in Range(read): \\A r: min <= read[r]`` is
  ``min_of(Readers, read)``: the same value.
* ``Buffer!IndexOf(next)`` (``next % Size``) is a state-dependent index; the actions
  write it as ``ringbuffer[i] = where(i == index, ..., ringbuffer[i])`` for every slot.
* ``TypeOk`` holds by construction.

Temporal property (``PROPERTIES Liveliness``), not checked here: ``Liveliness == \\A r
\\in Readers: \\A i \\in 0 .. (MaxPublished - 1): <>[](i \\in 0 .. published =>
Len(consumed[r]) >= i + 1 /\\ consumed[r][i + 1] = i)`` under ``Fairness`` (``\\A r:
WF_vars(BeginRead(r))`` and ``WF_vars(EndRead(r))``, declared here with
``fair="weak"``). The cfg checks it with ``CONSTRAINT StateConstraint``, which our
liveness checker refuses (cut-off states would stutter forever).

    modelcheck check examples/tla/disruptor_spmc.py      # 8,496 states
    modelcheck check examples/tla/disruptor_spmc.py:DisruptorSPMCBugLaps  # violates NoDataRaces
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Const,
    Enum,
    Ids,
    Int,
    Record,
    Seq,
    SetOf,
    Spec,
    action,
    all_of,
    constraint,
    invariant,
    min_of,
    where,
)

__all__ = ["Pc", "DisruptorSPMC", "DisruptorSPMCBugLaps"]

NULL = -1


class Pc(IntEnum):
    """Each producer and consumer is accessing a slot or advancing to the next."""

    Access = 0
    Advance = 1


class DisruptorSPMC(Spec):
    """Disruptor_SPMC.tla with Disruptor_SPMC.cfg (see the module docstring)."""

    check_deadlock = False  # CHECK_DEADLOCK FALSE
    MaxPublished = Const(10, min=1, doc="bounds the model (StateConstraint)")
    Size = Const(4, min=1, doc="ring buffer size")
    NReaders = Const(3, min=1, doc="number of consumers")
    Writers = Ids(1, 1, doc="{w}")
    Readers = Ids(2, NReaders + 1, doc="{r1, r2, r3}")
    Threads = Ids(1, NReaders + 1, doc="Writers \\cup Readers")
    Index = Ids(0, Size - 1, doc="0 .. LastIndex")

    ringbuffer = Array(Index, Record(slot=Int(NULL, MaxPublished),
                                     readers=SetOf(Readers), writers=SetOf(Writers)),
                       init={"slot": NULL, "readers": set(), "writers": set()})
    published = Int(-1, MaxPublished, init=-1)
    read = Array(Readers, Int(-1, MaxPublished), init=-1)
    pc = Array(Threads, Enum(Pc), init=Pc.Advance)
    consumed = Array(Readers, Seq(Int(NULL, MaxPublished), MaxPublished))

    def _transition(self, s, t, th, frm, to):
        t.pc[th] = to
        return s.pc[th] == frm

    def _slot(self, s, t, index, fn):
        """``ringbuffer' = [ringbuffer EXCEPT ![index] = fn(@)]`` for a state-dependent
        ``index``."""
        for i in self.Index:
            cur = s.ringbuffer[i]
            t.ringbuffer[i] = where(index == i, fn(cur), cur)

    # -- producer ----------------------------------------------------------------------
    @action(writer=Writers)
    def BeginWrite(self, s, t, writer):
        nxt = s.published + 1
        min_read = min_of(self.Readers, lambda r: s.read[r])
        self._slot(s, t, nxt % self.Size, lambda c: c.with_fields(
            writers=c.writers.with_(writer), slot=nxt))
        return (min_read >= nxt - self.Size) & self._transition(
            s, t, writer, Pc.Advance, Pc.Access)

    @action(writer=Writers)
    def EndWrite(self, s, t, writer):
        nxt = s.published + 1
        self._slot(s, t, nxt % self.Size,
                   lambda c: c.with_fields(writers=c.writers.without(writer)))
        t.published = nxt
        return self._transition(s, t, writer, Pc.Access, Pc.Advance)

    # -- consumers ---------------------------------------------------------------------
    @action(reader=Readers, fair="weak")
    def BeginRead(self, s, t, reader):
        nxt = s.read[reader] + 1
        index = nxt % self.Size
        self._slot(s, t, index, lambda c: c.with_fields(readers=c.readers.with_(reader)))
        value = s.ringbuffer[self.Index[0]].slot
        for i in self.Index:  # Buffer!Read(index)
            value = where(index == i, s.ringbuffer[i].slot, value)
        t.consumed[reader] = s.consumed[reader].append(value)
        return (s.published >= nxt) & self._transition(s, t, reader, Pc.Advance, Pc.Access)

    @action(reader=Readers, fair="weak")
    def EndRead(self, s, t, reader):
        nxt = s.read[reader] + 1
        self._slot(s, t, nxt % self.Size,
                   lambda c: c.with_fields(readers=c.readers.without(reader)))
        t.read[reader] = nxt
        return self._transition(s, t, reader, Pc.Access, Pc.Advance)

    @constraint
    def StateConstraint(self, s):
        return s.published < self.MaxPublished

    @invariant
    def NoDataRaces(self, s):
        """No slot is read and written at once, nor written by two writers."""
        return all_of(self.Index, lambda i: (
            (s.ringbuffer[i].readers.is_empty() | s.ringbuffer[i].writers.is_empty())
            & (s.ringbuffer[i].writers.size() <= 1)))


class DisruptorSPMCBugLaps(DisruptorSPMC):
    """The producer does not wait for the slowest consumer: it laps it and writes a
    slot that is being read (``NoDataRaces`` fails)."""

    @action(writer=DisruptorSPMC.Writers)
    def BeginWrite(self, s, t, writer):
        nxt = s.published + 1
        self._slot(s, t, nxt % self.Size, lambda c: c.with_fields(
            writers=c.writers.with_(writer), slot=nxt))
        return self._transition(s, t, writer, Pc.Advance, Pc.Access)
