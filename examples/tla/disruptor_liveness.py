"""Disruptor MPMC (tlaplus/Examples ``specifications/Disruptor/Disruptor_MPMC.tla`` with
``RingBuffer.tla``), as configured by ``Disruptor_MPMC_liveliness.cfg``: MaxPublished =
10, Writers = {w1, w2}, Readers = {r1, r2}, Size = 4; INVARIANTS TypeOk, NoDataRaces;
PROPERTIES Liveliness; CONSTRAINT StateConstraint; no deadlock check. The manifest
says TLC finds 14,365 distinct states, depth 61, and that everything holds.

Encoding: a ring-buffer slot holds a sequence number or NULL (``-1``); readers and
writers of a slot are sets; ``pc`` is split into ``wpc``/``rpc`` (TRUE = "Access");
``consumed[r]`` (the history variable) is a sequence of at most MaxPublished values.
TypeOk holds by typing. ``MinReadSequence``, ``MinClaimedSequence`` are minima and
``AvailablePublishedSequence``'s ``CHOOSE`` takes the smallest candidate satisfying its
predicate (TLC's order of integers).

**The constraint.** ``StateConstraint == next_sequence <= MaxPublished`` cuts off the
BeginWrite step that would claim sequence MaxPublished; TLC's liveness graph holds
only states inside the constraint, so the model is the same as BeginWrite guarded by
``next_sequence < MaxPublished``, which is how it is written here (modelcheck refuses
temporal properties with state constraints rather than guess their meaning).

**Liveliness** is ``\\A r, i: <>[](i \\in 0..AvailablePublishedSequence => Len(consumed[r])
>= i + 1 /\\ consumed[r][i + 1] = i)``; a conjunction of ``<>[]`` formulas is ``<>[]`` of
the conjunction, so it is one ``eventually_always`` property. Fairness: ``\\A r:
WF(BeginRead(r))``, ``\\A r: WF(EndRead(r))`` (writers are not fair).

:class:`DisruptorLivenessBugNoEndReadFairness` drops ``WF(EndRead(r))``: a reader may
stay in its Access step forever, and never reads the rest.
"""

from __future__ import annotations

from typing import Any

from modelcheck import (
    Array,
    Bool,
    Const,
    Ids,
    Int,
    Seq,
    SetOf,
    Spec,
    action,
    all_of,
    any_of,
    eventually_always,
    implies,
    invariant,
    not_,
    where,
)

BIG = 1 << 20


class DisruptorLiveness(Spec):
    """Multi-producer, multi-consumer ring buffer; every consumer reads every event."""

    check_deadlock = False
    MaxPublished = Const(10, min=1)
    NWriters = Const(2, min=1)
    NReaders = Const(2, min=1)
    Size = Const(4, min=1)
    Writers = Ids(1, NWriters)
    Readers = Ids(1, NReaders)
    Slots = Ids(0, Size - 1)

    slots = Array(Slots, Int(-1, MaxPublished - 1))  # -1 = NULL
    slotReaders = Array(Slots, SetOf(Readers))
    slotWriters = Array(Slots, SetOf(Writers))
    next_sequence = Int(0, MaxPublished)
    claimed = Array(Writers, Int(-1, MaxPublished - 1))
    published = Array(Slots, Bool())
    read = Array(Readers, Int(-1, MaxPublished - 1))
    wpc = Array(Writers, Bool())  # TRUE: Access, FALSE: Advance
    rpc = Array(Readers, Bool())
    consumed = Array(Readers, Seq(Int(0, MaxPublished - 1), MaxPublished))

    fairness = {"BeginRead": "weak", "EndRead": "weak"}

    def init_states(self) -> Any:
        yield {"slots": {i: -1 for i in self.Slots}, "claimed": {w: -1 for w in self.Writers},
               "read": {r: -1 for r in self.Readers}}

    # -- definitions -----------------------------------------------------------------
    def _min(self, xs: list[Any]) -> Any:
        out = xs[0]
        for x in xs[1:]:
            out = where(x < out, x, out)
        return out

    def index_of(self, seq: Any) -> Any:
        return seq % self.Size

    def is_published(self, s: Any, seq: Any) -> Any:
        idx = self.index_of(seq)
        even = (seq // self.Size) % 2 == 0
        return any_of(self.Slots, lambda i: (idx == i) & (s.published[i] == even))

    def available_published(self, s: Any) -> Any:
        claimed = [s.claimed[w] for w in self.Writers]
        cands = [self._min(claimed) - 1, *claimed]
        best: Any = BIG
        for c in cands:
            ok = implies(self.is_published(s, c), not_(any_of(self.Writers, lambda w, c=c: (
                s.claimed[w] == c + 1) & self.is_published(s, s.claimed[w]))))
            best = where(ok & (c < best), c, best)
        return best

    # -- producers --------------------------------------------------------------------
    @action(w=Writers)
    def BeginWrite(self, s, t, w):
        seq = s.next_sequence
        min_read = self._min([s.read[r] for r in self.Readers])
        t.claimed[w] = seq
        t.next_sequence = seq + 1
        t.wpc[w] = True
        for i in self.Slots:
            here = self.index_of(seq) == i
            t.slotWriters[i] = where(here, s.slotWriters[i].with_(w), s.slotWriters[i])
            t.slots[i] = where(here, seq, s.slots[i])
        # StateConstraint (next_sequence <= MaxPublished) as a guard, see the docstring
        return (min_read >= seq - self.Size) & not_(s.wpc[w]) & (seq < self.MaxPublished)

    @action(w=Writers)
    def EndWrite(self, s, t, w):
        seq = s.claimed[w]
        t.wpc[w] = False
        for i in self.Slots:
            here = self.index_of(seq) == i
            t.slotWriters[i] = where(here, s.slotWriters[i].without(w), s.slotWriters[i])
            t.published[i] = where(here, ~s.published[i], s.published[i])
        return s.wpc[w]

    # -- consumers --------------------------------------------------------------------
    @action(r=Readers)
    def BeginRead(self, s, t, r):
        nxt = s.read[r] + 1
        t.rpc[r] = True
        value: Any = 0
        for i in self.Slots:
            here = self.index_of(nxt) == i
            t.slotReaders[i] = where(here, s.slotReaders[i].with_(r), s.slotReaders[i])
            value = where(here, s.slots[i], value)
        t.consumed[r] = s.consumed[r].append(value)
        return self.is_published(s, nxt) & not_(s.rpc[r])

    @action(r=Readers)
    def EndRead(self, s, t, r):
        nxt = s.read[r] + 1
        t.rpc[r] = False
        for i in self.Slots:
            here = self.index_of(nxt) == i
            t.slotReaders[i] = where(here, s.slotReaders[i].without(r), s.slotReaders[i])
        t.read[r] = nxt
        return s.rpc[r]

    # -- properties -------------------------------------------------------------------
    @invariant
    def NoDataRaces(self, s):
        return all_of(self.Slots, lambda i: (s.slotReaders[i].is_empty()
                                             | s.slotWriters[i].is_empty())
                      & (s.slotWriters[i].size() <= 1))

    @eventually_always
    def Liveliness(self, s):
        aps = self.available_published(s)
        return all_of(self.Readers, lambda r: all_of(
            range(self.MaxPublished), lambda i: implies(
                (i >= 0) & (i <= aps),
                (s.consumed[r].len() >= i + 1) & (s.consumed[r].at(i + 1) == i))))


class DisruptorLivenessBugNoEndReadFairness(DisruptorLiveness):
    """``WF(EndRead(r))`` dropped: a reader may stay in Access forever."""

    fairness = {"BeginRead": "weak"}
