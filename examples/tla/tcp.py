"""The TCP connection state machine of RFC 9293 (tlaplus/Examples ``specifications/tcp``).

A port of ``specifications/tcp/tcp.tla`` (Markus Kuppe) checked with the model
``MCtcp.tla``/``MCtcp.cfg``: two peers ``{A, B}``, each with a TCB flag, a connection
state, and an incoming network channel (a sequence of segments); the user commands
(OPEN, SEND, CLOSE), the segment-driven transitions of the RFC's state diagram, and
RST (note 3). Sequence numbers and timers are abstracted away, as in the source.

``MCtcp`` (the repository's configuration): one peer starts in SYN-SENT, having sent
a SYN, the other in LISTEN (``MCInit``); ``CONSTRAINT NoRetransmission`` (no channel
holds the same segment twice in a row) and ``ACTION_CONSTRAINT SingleActiveOpen``.
The manifest gives 1,182 distinct states, 6,322 generated (with the 2 initial states)
and depth 14 (TLC counts states, we count steps); this port finds 1,182 states, 6,320
successors generated, depth 13.

Translation choices:

* ``Peers = {A, B}`` is ``Ids(1, 2)`` (A = 1, B = 2). TLA+'s strings are enums
  (``State``, ``Seg``; ``SYN,ACK`` is ``SYN_ACK``, ``SYN-SENT`` is ``SYN_SENT``).
* ``network \\in [Peers -> Seq(Segments)]`` is an array of ``Seq``. The sequences are
  unbounded in TLA+; under ``MCtcp``'s constraints no successor (not even one cut off
  by ``NoRetransmission``) is longer than 5 segments, so the capacity ``Cap = 5`` loses
  nothing (with ``Cap = 4`` a RST overflows a channel: a spec error, never a silent
  drop; the tests check that ``Cap = 6`` gives the same count).
* Every ``\\E local, remote \\in Peers: A(local, remote)`` with ``local # remote`` is one
  action with parameters ``local`` and ``remote`` ranging over ``Peers \\ {local}``;
  the disjuncts inside ``SynSent``, ``SynReceived`` and ``Note3`` are branches.
  ``IsPrefix(<<m>>, q)`` is ``~q.is_empty() & (q.head() == m)``, ``SubSeq(q, 3,
  Len(q))`` is ``q.drop(2)``.
* ``ACTION_CONSTRAINT SingleActiveOpen`` forbids every transition that is an
  ``ACTIVE_OPEN``, ``PASSIVE_OPEN`` or ``SEND`` step. No other action can make such a
  step (each of them moves a peer out of CLOSED or LISTEN into SYN-SENT or LISTEN
  with the TCB and the channels as only those actions leave them), so the constraint
  cuts exactly these three actions' steps. modelcheck has no action constraints; the
  port hand-rolls one: ``MCtcp`` adds a boolean ``cut``, which these three actions set,
  and the state constraint ``SingleActiveOpen == ~cut``. As in TLC, such a successor is
  generated and checked against the invariants but never stored, and a state whose only
  steps are cut is not a deadlock. TLC behaves so: the cfg checks deadlock, and the
  reachable state where both peers are CLOSED with a SYN in flight (three steps from
  ``MCInit``) has only ``ACTIVE_OPEN`` and ``PASSIVE_OPEN`` steps, yet the manifest's run
  succeeded; with the three actions simply removed, it is a deadlock. ``cut`` is FALSE
  in every stored state, so it adds no states.
* ``TypeOK`` holds by construction: the variables' types are its sets, and storing a
  value outside them is a spec error.

Temporal property (``PROPERTY Prop`` in ``MCtcp.cfg``), not checked here:
``Prop == \\A p \\in Peers: connstate[p] = "SYN-SENT" ~> connstate[p] \\in
{"ESTABLISHED", "LISTEN", "CLOSED"}`` under ``WF_vars(System)`` and
``WF_vars(\\E local, remote: CLOSE_SYN_SENT(local, remote))``. The cfg checks it
together with ``CONSTRAINT NoRetransmission``, and our liveness checker refuses state
constraints (cut-off states would stutter forever). The fairness is not declared
either: ``WF_vars(System)`` is one condition on the disjunction of ten actions, which
would have to be written as one action with a branch per disjunct.

    modelcheck check examples/tla/tcp.py:MCtcp           # 1,182 states
    modelcheck check examples/tla/tcp.py:MCtcpBugNoAck   # violates Inv
"""

from __future__ import annotations

from enum import IntEnum

from modelcheck import (
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Seq,
    Spec,
    action,
    all_of,
    constraint,
    excluding,
    implies,
    invariant,
)

__all__ = ["State", "Seg", "Tcp", "MCtcp", "MCtcpBugNoAck"]


class State(IntEnum):
    """tcp.tla's ``States``."""

    LISTEN = 0
    CLOSED = 1
    SYN_SENT = 2
    SYN_RECEIVED = 3
    ESTABLISHED = 4
    FIN_WAIT_1 = 5
    FIN_WAIT_2 = 6
    CLOSING = 7
    CLOSE_WAIT = 8
    LAST_ACK = 9
    TIME_WAIT = 10


class Seg(IntEnum):
    """The segments of ``TypeOK`` (``"SYN,ACK"`` is ``SYN_ACK``)."""

    SYN = 0
    SYN_ACK = 1
    ACK = 2
    RST = 3
    FIN = 4
    ACKofFIN = 5


Peers = Ids(1, 2, doc="{A, B}")


def _remote(self, local):
    return excluding(self.Peers, local)


def _starts(q, *segs):
    """``IsPrefix(<<segs>>, q)``."""
    ok = q.len() >= len(segs)
    for i, m in enumerate(segs, start=1):
        ok = ok & (q.at(i) == m)
    return ok


class Tcp(Spec):
    """tcp.tla: ``Init`` (both peers CLOSED) and ``Next == System \\/ Reset \\/ User``."""

    Cap = Const(5, min=1, doc="capacity of a channel (unbounded in TLA+; see the docstring)")
    Peers = Peers

    tcb = Array(Peers, Bool())
    connstate = Array(Peers, Enum(State), init=State.CLOSED)
    network = Array(Peers, Seq(Enum(Seg), Cap))

    # -- User: actions triggered by user commands ------------------------------
    @action(local=Peers, remote=_remote)
    def PASSIVE_OPEN(self, s, t, local, remote):
        t.connstate[local] = State.LISTEN
        t.tcb[local] = True
        return s.connstate[local] == State.CLOSED

    @action(local=Peers, remote=_remote)
    def ACTIVE_OPEN(self, s, t, local, remote):
        t.network[remote] = s.network[remote].append(Seg.SYN)
        t.connstate[local] = State.SYN_SENT
        t.tcb[local] = True
        return s.connstate[local] == State.CLOSED

    @action(local=Peers, remote=_remote)
    def CLOSE_SYN_SENT(self, s, t, local, remote):
        t.connstate[local] = State.CLOSED
        t.tcb[local] = False
        return s.connstate[local] == State.SYN_SENT

    @action(local=Peers, remote=_remote)
    def CLOSE_SYN_RECEIVED(self, s, t, local, remote):
        t.network[remote] = s.network[remote].append(Seg.FIN)
        t.connstate[local] = State.FIN_WAIT_1
        return s.connstate[local] == State.SYN_RECEIVED

    @action(local=Peers, remote=_remote)
    def SEND(self, s, t, local, remote):
        t.network[remote] = s.network[remote].append(Seg.SYN)
        t.connstate[local] = State.SYN_SENT
        return s.connstate[local] == State.LISTEN

    @action(local=Peers, remote=_remote)
    def CLOSE_LISTEN(self, s, t, local, remote):
        t.connstate[local] = State.CLOSED
        t.tcb[local] = False
        return s.connstate[local] == State.LISTEN

    @action(local=Peers, remote=_remote)
    def CLOSE_ESTABLISHED(self, s, t, local, remote):
        t.network[remote] = s.network[remote].append(Seg.FIN)
        t.connstate[local] = State.FIN_WAIT_1
        return s.connstate[local] == State.ESTABLISHED

    @action(local=Peers, remote=_remote)
    def CLOSE_CLOSE_WAIT(self, s, t, local, remote):
        t.network[remote] = s.network[remote].append(Seg.FIN)
        t.connstate[local] = State.LAST_ACK
        return s.connstate[local] == State.CLOSE_WAIT

    # -- System: segment arrivals -------------------------------------------------------
    def _reply(self, s, t, local, remote, seg):
        """``network' = [network EXCEPT ![remote] = Append(@, seg), ![local] = Tail(..)]``."""
        t.network[remote] = s.network[remote].append(seg)
        t.network[local] = s.network[local].tail()

    @action(local=Peers, remote=_remote)
    def SynSent(self, s, t, local, remote):
        q = s.network[local]
        with t.branch("syn", _starts(q, Seg.SYN)):
            self._reply(s, t, local, remote, Seg.SYN_ACK)
            t.connstate[local] = State.SYN_RECEIVED
        with t.branch("synack", _starts(q, Seg.SYN_ACK)):
            self._reply(s, t, local, remote, Seg.ACK)
            t.connstate[local] = State.ESTABLISHED
        return s.connstate[local] == State.SYN_SENT

    @action(local=Peers, remote=_remote)
    def SynReceived(self, s, t, local, remote):
        q = s.network[local]
        t.network[local] = q.tail()
        with t.branch("rst", _starts(q, Seg.RST)):
            t.connstate[local] = State.LISTEN
        with t.branch("ack", _starts(q, Seg.ACK)):
            t.connstate[local] = State.ESTABLISHED
        return s.connstate[local] == State.SYN_RECEIVED

    @action(local=Peers, remote=_remote)
    def Listen(self, s, t, local, remote):
        self._reply(s, t, local, remote, Seg.SYN_ACK)
        t.connstate[local] = State.SYN_RECEIVED
        return (s.connstate[local] == State.LISTEN) & _starts(s.network[local], Seg.SYN)

    @action(local=Peers, remote=_remote)
    def Established(self, s, t, local, remote):
        self._reply(s, t, local, remote, Seg.ACKofFIN)
        t.connstate[local] = State.CLOSE_WAIT
        return (s.connstate[local] == State.ESTABLISHED) & _starts(s.network[local], Seg.FIN)

    @action(local=Peers, remote=_remote)
    def FinWait1(self, s, t, local, remote):
        q = s.network[local]
        with t.branch("fin", _starts(q, Seg.FIN)):
            self._reply(s, t, local, remote, Seg.ACKofFIN)
            t.connstate[local] = State.CLOSING
        with t.branch("ackoffin", _starts(q, Seg.ACKofFIN)):
            t.network[local] = q.tail()
            t.connstate[local] = State.FIN_WAIT_2
        return s.connstate[local] == State.FIN_WAIT_1

    @action(local=Peers, remote=_remote)
    def FinWait2(self, s, t, local, remote):
        self._reply(s, t, local, remote, Seg.ACKofFIN)
        t.connstate[local] = State.TIME_WAIT
        return (s.connstate[local] == State.FIN_WAIT_2) & _starts(s.network[local], Seg.FIN)

    @action(local=Peers, remote=_remote)
    def Closing(self, s, t, local, remote):
        t.network[local] = s.network[local].tail()
        t.connstate[local] = State.TIME_WAIT
        return (s.connstate[local] == State.CLOSING) & _starts(s.network[local], Seg.ACKofFIN)

    @action(local=Peers, remote=_remote)
    def LastAck(self, s, t, local, remote):
        t.network[local] = s.network[local].tail()
        t.connstate[local] = State.CLOSED
        return (s.connstate[local] == State.LAST_ACK) & _starts(s.network[local], Seg.ACKofFIN)

    @action(local=Peers, remote=_remote)
    def TimeWait(self, s, t, local, remote):
        t.connstate[local] = State.CLOSED
        t.tcb[local] = False
        return (s.connstate[local] == State.TIME_WAIT) & s.tcb[local]

    @action(local=Peers, remote=_remote)
    def Note2(self, s, t, local, remote):
        """FIN-WAIT-1 to TIME-WAIT when a FIN arrives and the local FIN is acknowledged."""
        t.network[remote] = s.network[remote].append(Seg.ACKofFIN)
        t.network[local] = s.network[local].drop(2)
        t.connstate[local] = State.TIME_WAIT
        return ((s.connstate[local] == State.FIN_WAIT_1)
                & _starts(s.network[local], Seg.FIN, Seg.ACKofFIN))

    # -- Reset ----------------------------------------------------------------------
    @action(local=Peers, remote=_remote)
    def Note3(self, s, t, local, remote):
        """A RST can be sent from any state (to TIME-WAIT); receiving one leads to
        LISTEN or CLOSED."""
        q = s.network[local]
        with t.branch("send", s.tcb[local]):
            t.network[remote] = s.network[remote].append(Seg.RST)
            t.connstate[local] = State.TIME_WAIT
        with t.branch("listen", _starts(q, Seg.RST)):
            t.network[local] = q.tail()
            t.connstate[local] = State.LISTEN
        with t.branch("closed", _starts(q, Seg.RST)):
            t.network[local] = q.tail()
            t.connstate[local] = State.CLOSED
        return True

    # -- invariants -------------------------------------------------------------------
    @invariant
    def Inv(self, s):
        """With no segments in flight to either peer, one is ESTABLISHED iff the other is."""
        idle = {p: s.network[p].is_empty() for p in self.Peers}
        est = {p: s.connstate[p] == State.ESTABLISHED for p in self.Peers}
        return all_of(self.Peers, lambda a: all_of(
            self.Peers, lambda b: implies(idle[a] & idle[b], est[a] == est[b])))


class MCtcp(Tcp):
    """MCtcp.tla/MCtcp.cfg: ``MCInit``, ``CONSTRAINT NoRetransmission``,
    ``ACTION_CONSTRAINT SingleActiveOpen`` (no active open, passive open or send step)."""

    def init_states(self):
        for node in self.Peers:
            other = 3 - node
            yield {"tcb": {p: True for p in self.Peers},
                   "connstate": {node: State.SYN_SENT, other: State.LISTEN},
                   "network": {node: [], other: [Seg.SYN]}}

    @constraint
    def NoRetransmission(self, s):
        """No channel holds the same segment twice in a row."""
        return all_of(self.Peers, lambda p: all_of(
            range(1, self.Cap),
            lambda i: implies(i < s.network[p].len(),
                              s.network[p].at(i) != s.network[p].at(i + 1))))

    # ACTION_CONSTRAINT SingleActiveOpen (the first active open is implicit in MCInit):
    # the three actions still step (so a state where only they are enabled is no
    # deadlock, as in TLC), into a successor marked ``cut`` that is never stored.
    cut = Bool()

    @constraint
    def SingleActiveOpen(self, s):
        """Not reached by an ACTIVE_OPEN, PASSIVE_OPEN or SEND step."""
        return ~s.cut

    @action(local=Peers, remote=_remote)
    def ACTIVE_OPEN(self, s, t, local, remote):
        t.cut = True
        return Tcp.ACTIVE_OPEN.fn(self, s, t, local, remote)

    @action(local=Peers, remote=_remote)
    def PASSIVE_OPEN(self, s, t, local, remote):
        t.cut = True
        return Tcp.PASSIVE_OPEN.fn(self, s, t, local, remote)

    @action(local=Peers, remote=_remote)
    def SEND(self, s, t, local, remote):
        t.cut = True
        return Tcp.SEND.fn(self, s, t, local, remote)


class MCtcpBugNoAck(MCtcp):
    """SYN-SENT takes the SYN,ACK and becomes ESTABLISHED without sending the ACK: its
    partner stays in SYN-RECEIVED with no segment in flight, and ``Inv`` fails."""

    @action(local=Peers, remote=_remote)
    def SynSent(self, s, t, local, remote):
        q = s.network[local]
        with t.branch("syn", _starts(q, Seg.SYN)):
            self._reply(s, t, local, remote, Seg.SYN_ACK)
            t.connstate[local] = State.SYN_RECEIVED
        with t.branch("synack", _starts(q, Seg.SYN_ACK)):
            t.network[local] = q.tail()
            t.connstate[local] = State.ESTABLISHED
        return s.connstate[local] == State.SYN_SENT
