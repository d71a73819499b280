"""MultiPaxos in state-machine-replication style (Guanzhou Hu), with writes and reads
on one key and linearizability checked on the client-observed events.

Source: tlaplus/Examples ``specifications/MultiPaxos-SMR/MultiPaxos.tla`` (the PlusCal
algorithm and its TLA+ translation, which is what is ported) with
``MultiPaxos_MC.tla`` and ``MultiPaxos_MC_small.cfg``: ``Replicas = {s1, s2, s3}``,
``Writes = {w1}``, ``Reads = {r1}``, ``MaxBallot <- ConstMaxBallot`` (2), ``SYMMETRY
SymmetricPerms`` (the replicas; writes and reads are singletons),
``INVARIANTS TypeOK Linearizability``, ``CHECK_DEADLOCK TRUE``. The repository's
``manifest.json`` gives 343,796 distinct states, 736,012 in total, TLC's state depth
28 (our depth 27). ``MultiPaxos_MC.cfg`` (``Writes = {w1, w2}``) has no count in the
manifest: ``MultiPaxosMC`` is that config, not tested.

Translation:

* Commands are ints: writes ``1..NWrites``, reads after them, ``0`` is ``"nil"``;
  ``kvalue`` is ``0..NWrites``. Replicas are ``Ids`` (symmetric); slots ``Ids``.
* ``node \\in [Replicas -> NodeStates]`` is two variables: ``node`` (a ``Record`` of
  ``leader, kvalue, commitUpTo, balPrepared, balMaxKnown``) and ``insts``, its
  ``insts`` field (``[Slots -> InstStates]``): a record cannot hold an array (a
  function), so the field became an ``Array(Replicas, Array(Slots, Record(status, cmd,
  voted=Record(bal, cmd))))``.
* ``msgs`` is one set of message records of five shapes, as in the TLA+:
  ``SetOf(Msg)`` with ``Msg = Union("type", MsgType, Prepare=Record(src, bal),
  PrepareReply=Record(src, bal, votes), Accept=Record(src, bal, slot, cmd),
  AcceptReply=Record(src, bal, slot), CommitNotice=Record(upto))``: 542 messages, one
  bit each. A PrepareReply's ``votes`` (``[Slots -> [bal, cmd]]``) is an
  ``Array(Slots, Record(bal, cmd))`` field. An Accept's ``cmd`` includes nil, which
  ``TypeOK`` refuses (``Messages`` has ``cmd: Commands``), as the bug variant needs.
  The ``type`` field of the client events (which a plain record cannot have: it is the
  value's own attribute) is ``kind`` in ``observed``.
* ``pending`` and ``observed`` are ``Seq``; ``SelectSeq`` (``UnseenPending``,
  ``RemovePending``) is written with ``at``/``index_of``/``prefix``/``drop``.
* The one process ``rloop(self)``, an IF on ``terminated`` and seven disjuncts, is one
  action per disjunct (``BecomeLeader(r, b)``, ``HandlePrepare(r, m)``, ...) with
  ``pc[r] = "rloop" /\\ ~terminated`` in each guard, and ``Finish(r)`` for the ELSE
  branch (``pc[r]' = "Done"``); ``Terminating`` is the stuttering step of the
  translation. A handler's ``with m \\in msgs do await m.type = "Prepare" ...`` is a
  parameter ``m=MemberOf("msgs", lambda m: m.type == MsgType.Prepare)`` (HandlePrepare,
  HandleAccept, HandleCommitNotice); ``{m \\in msgs: m.type = "PrepareReply" /\\ ...}``
  is ``s.msgs.filter(...)``. A ``with`` binding a value of the state (``b =
  node[r].balMaxKnown``, ``s = commitUpTo + 1``) is a parameter pinned to it in the
  guard. BecomeLeader's ``~\\E m \\in msgs: m.type = "Prepare" /\\ m.bal = b`` tests
  the three Prepares of ballot b with ``has``.
* ``PeakVotedCmd``'s ``CHOOSE bc \\in Ballots \\X Commands`` is the command of the
  highest vote: a ballot's leader sends one Accept per slot, so two votes of the same
  ballot for a slot carry the same command and the CHOOSE has one candidate.
* ``Linearizability`` enumerates the orders (the bijections ``1..NumCommands ->
  Commands``; others fail ``IsLinearOrder``) in Python.
* ``Termination == <>(\\A self: pc[self] = "Done")`` is not in the cfg (the spec has
  no fairness), so no temporal property is checked.

``MultiPaxosBug`` lets a new leader skip the votes in the PrepareReplies (its
``PeakVotedCmd`` is always nil): a slot still being prepared is sent for acceptance with
no command, and ``TypeOK`` fails after 8 steps.
"""

from __future__ import annotations

import itertools
from enum import IntEnum

from modelcheck import (
    Array,
    Const,
    Enum,
    Ids,
    Int,
    MemberOf,
    Record,
    Ref,
    Seq,
    SetOf,
    Spec,
    Union,
    action,
    all_of,
    any_of,
    count_of,
    invariant,
    max_of,
    not_,
    where,
)

__all__ = ["Status", "EvKind", "PC", "MsgType", "Msg", "MultiPaxos", "MultiPaxosMC",
           "MultiPaxosBug"]


class Status(IntEnum):
    Empty = 0
    Preparing = 1
    Accepting = 2
    Committed = 3


class EvKind(IntEnum):
    Req = 0
    Ack = 1


class PC(IntEnum):
    rloop = 0
    Done = 1


class MsgType(IntEnum):
    Prepare = 0
    PrepareReply = 1
    Accept = 2
    AcceptReply = 3
    CommitNotice = 4


NIL = 0


NWrites = Const(1, min=1)
NReads = Const(1, min=0)
MaxBallot = Const(2, min=2)
NumCommands = NWrites + NReads
Replicas = Ids(1, 3, doc="s1, s2, s3")
Slots = Ids(1, NumCommands)
Ballot = Int(1, MaxBallot)
Vote = Record(bal=Int(0, MaxBallot), cmd=Int(0, NumCommands))
#: ``Messages``: ``PrepareMsgs \\cup PrepareReplyMsgs \\cup AcceptMsgs \\cup
#: AcceptReplyMsgs \\cup CommitNoticeMsgs``. An Accept's ``cmd`` includes nil (0), which
#: TypeOK refuses (the bug variant sends one).
Msg = Union("type", MsgType,
            Prepare=Record(src=Replicas, bal=Ballot),
            PrepareReply=Record(src=Replicas, bal=Ballot, votes=Array(Slots, Vote)),
            Accept=Record(src=Replicas, bal=Ballot, slot=Slots, cmd=Int(0, NumCommands)),
            AcceptReply=Record(src=Replicas, bal=Ballot, slot=Slots),
            CommitNotice=Record(upto=Slots))


class MultiPaxos(Spec):
    """MultiPaxos_MC_small.cfg: three replicas, one write, one read, ballots 1..2."""

    check_deadlock = True
    symmetry = ("Replicas",)

    NWrites = NWrites
    NReads = NReads
    MaxBallot = MaxBallot
    Replicas = Replicas
    Slots = Slots

    msgs = SetOf(Msg)
    node = Array(Replicas, Record(leader=Ref(Replicas, none=0), kvalue=Int(0, NWrites),
                                  commitUpTo=Int(0, NumCommands),
                                  balPrepared=Int(0, MaxBallot), balMaxKnown=Int(0, MaxBallot)))
    insts = Array(Replicas, Array(Slots, Record(status=Enum(Status), cmd=Int(0, NumCommands),
                                                voted=Vote)))
    pending = Seq(Int(1, NumCommands), NumCommands)
    observed = Seq(Record(kind=Enum(EvKind), cmd=Int(1, NumCommands), val=Int(0, NWrites)),
                   2 * NumCommands)
    pc = Array(Replicas, Enum(PC))

    def init_states(self):
        # InitPending: the writes, then the reads
        yield {"pending": list(self.Commands)}

    # -- constants ------------------------------------------------------------------------
    @property
    def N(self) -> int:
        return self.NWrites + self.NReads

    @property
    def Commands(self) -> range:
        return range(1, self.N + 1)

    @property
    def Writes(self) -> range:
        return range(1, self.NWrites + 1)

    @property
    def Ballots(self) -> range:
        return range(1, self.MaxBallot + 1)

    @property
    def MajorityNum(self) -> int:
        return len(self.Replicas) // 2 + 1

    # -- define block ---------------------------------------------------------------------
    def observed_has(self, s, e):
        return s.observed.contains(e)

    def reqs_made_has(self, s, c):
        return self.observed_has(s, {"kind": EvKind.Req, "cmd": c, "val": NIL})

    def acks_recv_has(self, s, c):
        return any_of(range(0, self.NWrites + 1), lambda v: self.observed_has(
            s, {"kind": EvKind.Ack, "cmd": c, "val": v}))

    def terminated(self, s):
        return ((s.pending.len() == 0)
                & all_of(self.Commands, lambda c: self.reqs_made_has(s, c))
                & all_of(self.Commands, lambda c: self.acks_recv_has(s, c)))

    def running(self, s, r):
        """``pc[r] = "rloop" /\\ ~terminated``: the THEN branch of rloop(r)."""
        return (s.pc[r] == PC.rloop) & not_(self.terminated(s))

    def observe(self, s, t, e):
        """``Observe(e)``: append e to observed unless it is there."""
        t.observed = where(self.observed_has(s, e), s.observed, s.observed.append(e))

    def votes_by_node(self, s, r):
        """``VotesByNode(node[r])``: ``[s \\in Slots |-> node[r].insts[s].voted]``."""
        return {sl: s.insts[r][sl].voted for sl in self.Slots}

    def reprepare(self, s, t, r):
        """``insts[s].status = IF @ = "Accepting" THEN "Preparing" ELSE @`` for every slot."""
        for sl in self.Slots:
            st = s.insts[r][sl].status
            t.insts[r][sl] = s.insts[r][sl].with_fields(
                status=where(st == Status.Accepting, Status.Preparing, st))

    # -- the actions (the disjuncts of rloop(self)) ------------------------------------------
    @action(r=Replicas, b=lambda self: self.Ballots)
    def BecomeLeader(self, s, t, r, b):
        n = s.node[r]
        t.node[r] = n.with_fields(leader=r, balPrepared=0, balMaxKnown=b)
        self.reprepare(s, t, r)
        t.msgs = s.msgs.with_({"type": MsgType.Prepare, "src": r, "bal": b}).with_(
            {"type": MsgType.PrepareReply, "src": r, "bal": b,
             "votes": self.votes_by_node(s, r)})
        # ~\E m \in msgs: m.type = "Prepare" /\ m.bal = b: a Prepare of ballot b is
        # [type |-> "Prepare", src |-> q, bal |-> b] for some replica q
        return (self.running(s, r) & (n.leader != r) & (b > n.balMaxKnown)
                & all_of(self.Replicas, lambda q: not_(s.msgs.has(
                    {"type": MsgType.Prepare, "src": q, "bal": b}))))

    @action(r=Replicas, m=MemberOf("msgs", lambda m: m.type == MsgType.Prepare))
    def HandlePrepare(self, s, t, r, m):
        n = s.node[r]
        t.node[r] = n.with_fields(leader=m.src, balMaxKnown=m.bal)
        self.reprepare(s, t, r)
        t.msgs = s.msgs.with_({"type": MsgType.PrepareReply, "src": r, "bal": m.bal,
                               "votes": self.votes_by_node(s, r)})
        return self.running(s, r) & (m.bal > n.balMaxKnown)

    def peak_voted_cmd(self, prs, sl):
        """``PeakVotedCmd(prs, s)``: nil when no reply voted in slot sl, else the command
        of the highest vote."""
        top = max_of(prs, lambda m: m.votes[sl].bal, default=0)
        return max_of(prs, lambda m: where(m.votes[sl].bal == top, m.votes[sl].cmd, NIL),
                      default=NIL)

    @action(r=Replicas, b=lambda self: self.Ballots)
    def HandlePrepareReplies(self, s, t, r, b):
        """With b = node[r].balMaxKnown: prs is the PrepareReplies of ballot b."""
        n = s.node[r]
        prs = s.msgs.filter(lambda m: (m.type == MsgType.PrepareReply) & (m.bal == b))
        t.node[r] = n.with_fields(balPrepared=b)
        msgs = s.msgs
        for sl in self.Slots:
            inst = s.insts[r][sl]
            peak = self.peak_voted_cmd(prs, sl)
            status = where((inst.status == Status.Preparing)
                           | ((inst.status == Status.Empty) & (peak != NIL)),
                           Status.Accepting, inst.status)
            t.insts[r][sl] = inst.with_fields(status=status, cmd=peak)
            msgs = where(status == Status.Accepting,
                         msgs.with_({"type": MsgType.Accept, "src": r, "bal": b, "slot": sl,
                                     "cmd": peak}), msgs)
        t.msgs = msgs
        return (self.running(s, r) & (n.leader == r) & (n.balPrepared == 0)
                & (n.balMaxKnown == b) & (prs.size() >= self.MajorityNum))

    def unseen_head(self, s, r):
        """``Head(UnseenPending(node[r].insts))``, 0 when that sequence is empty."""
        def unseen(c):
            return all_of(self.Slots, lambda sl: s.insts[r][sl].cmd != c)
        head = NIL
        for i in reversed(range(1, self.N + 1)):
            c = s.pending.at(i)
            head = where((s.pending.len() >= i) & unseen(c), c, head)
        return head

    @action(r=Replicas, sl=Slots)
    def TakeNewRequest(self, s, t, r, sl):
        """With sl = FirstEmptySlot(node[r].insts)."""
        n = s.node[r]
        c = self.unseen_head(s, r)
        bp = n.balPrepared
        t.insts[r][sl] = {"status": Status.Accepting, "cmd": c, "voted": {"bal": bp, "cmd": c}}
        t.msgs = s.msgs.with_({"type": MsgType.Accept, "src": r, "bal": bp, "slot": sl,
                               "cmd": c}).with_(
            {"type": MsgType.AcceptReply, "src": r, "bal": bp, "slot": sl})
        self.observe(s, t, {"kind": EvKind.Req, "cmd": c, "val": NIL})
        first_empty = (s.insts[r][sl].status == Status.Empty) & all_of(
            range(1, sl), lambda u: s.insts[r][u].status != Status.Empty)
        return (self.running(s, r) & (n.leader == r) & (n.balPrepared == n.balMaxKnown)
                & first_empty & (c != NIL))

    @action(r=Replicas, m=MemberOf("msgs", lambda m: m.type == MsgType.Accept))
    def HandleAccept(self, s, t, r, m):
        n = s.node[r]
        sl = m.slot
        t.node[r] = n.with_fields(leader=m.src, balMaxKnown=m.bal)
        t.insts[r][sl] = {"status": Status.Accepting, "cmd": m.cmd,
                          "voted": {"bal": m.bal, "cmd": m.cmd}}
        t.msgs = s.msgs.with_({"type": MsgType.AcceptReply, "src": r, "bal": m.bal,
                               "slot": sl})
        return (self.running(s, r) & (m.bal >= n.balMaxKnown) & (m.bal > s.insts[r][sl].voted.bal))

    def commit(self, s, t, r, sl):
        """The common part of committing slot sl on r; returns the command."""
        n = s.node[r]
        c = s.insts[r][sl].cmd
        t.insts[r][sl] = s.insts[r][sl].with_fields(status=Status.Committed)
        is_write = (c >= 1) & (c <= self.NWrites)
        t.node[r] = n.with_fields(commitUpTo=sl, kvalue=where(is_write, c, n.kvalue))
        return c

    @action(r=Replicas, sl=Slots)
    def HandleAcceptReplies(self, s, t, r, sl):
        """With sl = node[r].commitUpTo + 1."""
        n = s.node[r]
        v = n.kvalue
        c = self.commit(s, t, r, sl)
        self.observe(s, t, {"kind": EvKind.Ack, "cmd": c, "val": v})
        i = s.pending.index_of(c)
        t.pending = s.pending.prefix(i - 1).concat(s.pending.drop(i))  # RemovePending(c)
        t.msgs = s.msgs.with_({"type": MsgType.CommitNotice, "upto": sl})
        # {m \in msgs: m.type = "AcceptReply" /\ m.slot = s /\ m.bal = balPrepared}: the
        # tests of the message alone first, then the test of the state on those left
        ars = s.msgs.filter(lambda m: (m.type == MsgType.AcceptReply) & (m.slot == sl)
                            ).filter(lambda m: m.bal == n.balPrepared)
        return (self.running(s, r) & (n.leader == r) & (n.balPrepared == n.balMaxKnown)
                & (n.commitUpTo == sl - 1) & (s.insts[r][sl].status == Status.Accepting)
                & (ars.size() >= self.MajorityNum))

    @action(r=Replicas, m=MemberOf("msgs", lambda m: m.type == MsgType.CommitNotice))
    def HandleCommitNotice(self, s, t, r, m):
        """With s = node[r].commitUpTo + 1 and m a CommitNotice of slot s."""
        n = s.node[r]
        sl = m.upto
        self.commit(s, t, r, sl)
        return (self.running(s, r) & (n.leader != r)
                & (n.commitUpTo == sl - 1) & (s.insts[r][sl].status == Status.Accepting))

    @action(r=Replicas)
    def Finish(self, s, t, r):
        """The ELSE branch of rloop(r): ``pc' = [pc EXCEPT ![r] = "Done"]``."""
        t.pc[r] = PC.Done
        return (s.pc[r] == PC.rloop) & self.terminated(s)

    @action
    def Terminating(self, s, t):
        return all_of(self.Replicas, lambda r: s.pc[r] == PC.Done)

    # -- MultiPaxos_MC.tla --------------------------------------------------------------------
    @invariant
    def TypeOK(self, s):
        """The conjuncts not implied by the variables' types."""
        distinct_pending = all_of(range(1, self.N + 1), lambda i: all_of(
            range(i + 1, self.N + 1), lambda j: implies_(
                s.pending.len() >= j, s.pending.at(i) != s.pending.at(j))))
        m = 2 * self.N
        distinct_observed = all_of(range(1, m + 1), lambda i: all_of(
            range(i + 1, m + 1), lambda j: implies_(
                s.observed.len() >= j, s.observed.at(i) != s.observed.at(j))))
        reqs = count_of(self.Commands, lambda c: self.reqs_made_has(s, c))
        acks = count_of(self.Commands, lambda c: self.acks_recv_has(s, c))
        accept_cmds = all_of(s.msgs, lambda m: (m.type != MsgType.Accept) | (m.cmd != NIL))
        return distinct_pending & distinct_observed & (reqs >= acks) & accept_cmds

    def result_of_cmd(self, s, c):
        """``ResultOfCmd(c)``: the val of the first Ack event of c in observed."""
        res = NIL
        for i in reversed(range(1, 2 * self.N + 1)):
            e = s.observed.at(i)
            res = where((s.observed.len() >= i) & (e.kind == EvKind.Ack) & (e.cmd == c),
                        e.val, res)
        return res

    def position(self, s, kind, c):
        """``ReqPosOfCmd``/``AckPosOfCmd``: the first index of such an event."""
        pos = 0
        for i in reversed(range(1, 2 * self.N + 1)):
            e = s.observed.at(i)
            pos = where((s.observed.len() >= i) & (e.kind == kind) & (e.cmd == c), i, pos)
        return pos

    @invariant
    def Linearizability(self, s):
        def linear(order):
            results = all_of(range(len(order)), lambda j: self.result_of_cmd(
                s, order[j]) == last_write_before(order, j))
            idx = {c: j for j, c in enumerate(order)}
            real_time = all_of(self.Commands, lambda c1: all_of(self.Commands, lambda c2: (
                True if idx[c1] < idx[c2] else not_(
                    self.position(s, EvKind.Ack, c1) < self.position(s, EvKind.Req, c2)))))
            return results & real_time

        def last_write_before(order, j):
            writes = [c for c in order[:j] if c <= self.NWrites]
            return writes[-1] if writes else NIL

        orders = list(itertools.permutations(self.Commands))
        return implies_(self.terminated(s), any_of(orders, linear))


def implies_(a, b):
    return not_(a) | b


class MultiPaxosMC(MultiPaxos):
    """MultiPaxos_MC.cfg: two writes (no count in the manifest; ~8 min in TLC)."""

    NWrites = Const(2, min=1)


class MultiPaxosBug(MultiPaxos):
    """A new leader ignores the votes reported in the PrepareReplies."""

    def peak_voted_cmd(self, prs, sl):
        return NIL
