"""A producer and a consumer over a bounded FIFO buffer, made finite by a state constraint.

The producer puts numbered items (1, 2, 3, ...) into a buffer of ``Capacity``
slots and waits while it is full; the consumer takes the item at the head and
waits while the buffer is empty. It is the classic bounded-buffer
producer/consumer, as in the TLA+ examples' ``BoundedQueue`` style of spec.

The counters ``produced`` and ``consumed`` grow for ever in the real system, so
the state space is infinite. As TLA+ users do with TLC's ``CONSTRAINT``, the spec
declares ``@constraint produced <= MaxItems``: a successor that breaks it (the
``MaxItems + 1``-th item put) is checked against the invariants but never stored
or explored (its domain, ``0..MaxItems + 1``, leaves room for it). The state
where every item has been produced and consumed is therefore not a deadlock: its
only successor, the next ``Put``, lies outside the constraint.

The state is fixed by ``(produced, consumed)`` with ``0 <= produced - consumed <=
Capacity``, so there are ``sum(min(p, Capacity) + 1 for p in 0..MaxItems)``
states (12 with the defaults), and the state ``(MaxItems, MaxItems)`` is
``2 * MaxItems`` steps deep (8).

    modelcheck check examples/bounded_queue.py                          # ok: 12 states
    modelcheck check examples/bounded_queue.py --const MaxItems=6       # ok: 18 states
    modelcheck check examples/bounded_queue.py:BoundedQueueBugLifo      # violation
"""

from __future__ import annotations

from modelcheck import Array, Const, Ids, Int, Spec, action, all_of, constraint, invariant, where


class BoundedQueue(Spec):
    """Put appends the next item at the tail; Get takes the head and shifts the rest."""

    Capacity = Const(2, min=1, doc="slots in the buffer")
    MaxItems = Const(4, min=0, doc="state constraint: explore until this many items are put")
    Slots = Ids(1, Capacity)

    buf = Array(Slots, Int(0, MaxItems + 1))  # item numbers, head at slot 1; 0 = empty
    count = Int(0, Capacity)  # items in the buffer
    produced = Int(0, MaxItems + 1)  # items put so far (unbounded but for the constraint)
    consumed = Int(0, MaxItems + 1)  # items taken so far
    got = Int(0, MaxItems + 1)  # the number of the last item the consumer took

    @action
    def Put(self, s, t):
        """The producer puts item ``produced + 1`` at the tail (waits while full)."""
        t.buf[s.count + 1] = s.produced + 1
        t.count = s.count + 1
        t.produced = s.produced + 1
        return s.count < self.Capacity

    @action
    def Get(self, s, t):
        """The consumer takes the head and shifts the others up (waits while empty)."""
        t.got = s.buf[1]
        self.shift(s, t)
        t.count = s.count - 1
        t.consumed = s.consumed + 1
        return s.count > 0

    def shift(self, s, t):
        for i in self.Slots:
            t.buf[i] = s.buf[i + 1] if i < self.Capacity else 0

    @constraint
    def ItemsBounded(self, s):
        """TLC's CONSTRAINT: explore only until ``MaxItems`` items have been put."""
        return s.produced <= self.MaxItems

    @invariant
    def NothingLost(self, s):
        """The buffer holds exactly the items put but not yet taken."""
        return s.count == s.produced - s.consumed

    @invariant
    def InOrder(self, s):
        """The consumer takes the items in the order they were put (FIFO)."""
        return s.got == s.consumed

    @invariant
    def BufferHoldsTheNextItems(self, s):
        """Slot i holds item ``consumed + i`` while occupied, 0 after the tail."""
        return all_of(self.Slots, lambda i: s.buf[i] == where(i <= s.count, s.consumed + i, 0))


class BoundedQueueBugLifo(BoundedQueue):
    """Get takes the item at the tail instead of the head: a stack, not a queue.

    Counterexample (4 states): Put, Put, Get takes item 2 first; ``InOrder`` fails.
    """

    @action
    def Get(self, s, t):
        t.got = s.buf[s.count]
        t.buf[s.count] = 0
        t.count = s.count - 1
        t.consumed = s.consumed + 1
        return s.count > 0
