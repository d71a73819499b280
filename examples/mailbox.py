"""Requests through a FIFO queue into a channel that may duplicate and reorder.

A small spec of the compound types: each process sends one request (a ``Record``)
into a bounded FIFO ``queue`` (a ``Seq``); ``Deliver`` moves the head of the queue
into ``chan``, a ``Bag`` of messages (TLA+ ``Bags``: unordered, at most two copies
of a message); ``Ack`` takes a request out of the channel, records the sender in
``acked`` (a ``SetOf`` ids) and both messages in ``seen`` (a ``SetOf`` records).
Processes are interchangeable: ``MailboxSym`` explores one state per symmetry class.

``modelcheck check examples/mailbox.py``: 334 distinct states, depth 19 (170 with
``MailboxSym``); ``MailboxBug`` forgets to record the request it acknowledges
(``AckSeen`` fails after 4 states).
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Bag,
    Const,
    Enum,
    Ids,
    Int,
    Record,
    Ref,
    Seq,
    SetOf,
    Spec,
    action,
    implies,
    invariant,
    where,
)

__all__ = ["Kind", "Msg", "Mailbox", "MailboxSym", "MailboxBug"]


class Kind(IntEnum):
    REQ = 0
    ACK = 1


Procs = Ids(1, 2)
Msg = Record(src=Procs, kind=Enum(Kind))


class Mailbox(Spec):
    """Send, deliver and acknowledge requests (see the module docstring)."""

    check_deadlock = False
    Cap = Const(2)
    Procs = Procs
    queue = Seq(Msg, Cap)
    chan = Bag(Msg, 2)
    acked = SetOf(Procs)
    seen = SetOf(Msg)
    last = Record(src=Ref(Procs, none=0), n=Int(0, 2))

    @action(p=Procs)
    def Send(self, s, t, p):
        t.queue = s.queue.append({"src": p, "kind": Kind.REQ})
        return ~s.acked.has(p) & (s.queue.len() < self.Cap) & ~s.queue.contains(
            {"src": p, "kind": Kind.REQ})

    @action
    def Deliver(self, s, t):
        m = s.queue.head()
        t.queue = s.queue.tail()
        t.chan = s.chan.add(m)
        return ~s.queue.is_empty() & (s.chan.count(m) < 2)

    @action(p=Procs)
    def Ack(self, s, t, p):
        req = {"src": p, "kind": Kind.REQ}
        t.chan = s.chan.remove(req)
        t.acked = s.acked.with_(p)
        t.seen = s.seen.with_(req).with_({"src": p, "kind": Kind.ACK})
        t.last = {"src": p, "n": where(s.last.n < 2, s.last.n + 1, 2)}
        return s.chan.has(req)

    @action
    def Reset(self, s, t):
        t.acked = s.acked - s.acked
        t.last = s.last.with_fields(src=0)
        return s.acked.size() == 2

    @invariant
    def Consistent(self, s):
        return (implies(~s.acked.is_empty(), s.seen.has({"src": s.acked.min(), "kind": Kind.ACK}))
                & (s.queue.len() <= self.Cap) & (s.chan.size() <= 4)
                & implies(s.last.src != 0, s.acked.has(s.last.src)))


class MailboxSym(Mailbox):
    """The same with processes interchangeable."""

    symmetry = ("Procs",)


class MailboxBug(Mailbox):
    """Forgets to record the request among the seen messages."""

    @invariant
    def AckSeen(self, s):
        return implies(s.acked.has(1), s.seen.has({"src": 1, "kind": Kind.REQ}))

    @action(p=Procs)
    def Ack(self, s, t, p):
        req = {"src": p, "kind": Kind.REQ}
        t.chan = s.chan.remove(req)
        t.acked = s.acked.with_(p)
        t.seen = s.seen.with_({"src": p, "kind": Kind.ACK})
        return s.chan.has(req)
