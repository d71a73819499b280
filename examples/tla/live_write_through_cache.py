"""The write-through cache under fairness (tlaplus/Examples
``specifications/SpecifyingSystems/Liveness/``, Lamport's *Specifying Systems* §8.9),
as ``MCLiveWriteThroughCache.cfg`` checks it: ``LSpec`` (``WriteThroughCacheInstanced``'s
``Spec`` with ``LiveWriteThroughCache``'s ``Liveness``) implies ``LM_Inner_LISpec`` and
``LM_Inner_Liveness``, its refinement of ``LiveInternalMemory`` under the mapping of
the chapter "Proving Implementation". Proc = {p1, p2}, Adr = {a1}, Val = {v1, v2},
QLen = 1; ``MCSend``/``MCReply`` set ``memInt`` to ``<<p, d>>`` and ``MCInitMemInt ==
{<<p1, NoVal>>}``. The manifest says TLC finds 5,196 distinct states, depth 18, and
that everything holds.

**Encoding.** A datum (``MReq \\cup Val \\cup {NoVal}``: what ``buf[p]`` and a memory
interface message hold) is a record ``kind, adr, val`` with one record per TLA+ value:
``NoVal`` is ``(NoVal, 0, 0)``, a value ``v`` is ``(Val, 0, v)``, ``[op |-> "Rd", adr |->
a]`` is ``(Rd, a, 0)`` and ``[op |-> "Wr", adr |-> a, val |-> v]`` is ``(Wr, a, v)``.
``memInt == <<p, d>>`` is the record ``p, kind, adr, val``; ``memQ``'s elements
``<<p, req>>`` likewise. ``cache[p][a]`` is a value or 0 for ``NoVal``. Adr, Val and
QLen are constants; Proc is ``{1, 2}`` (the temporal properties are one per process).

**Actions.** ``Req(p)``'s ``\\E req \\in MReq`` is the parameters ``a`` (its address)
and ``v`` (0: a read request, else a write of value ``v``). ``MemQWr`` has two branches,
``MemQWr[QCond]`` and ``MemQWr[other]`` (the same step, split on ``QCond``), so that
the fairness of ``QCond /\\ MemQWr`` can be named.

**Fairness** (``Liveness``): ``\\A p: WF_vars(Rsp(p) \\/ DoRd(p))``, ``\\A p:
SF_vars(RdMiss(p) \\/ DoWr(p))`` and ``WF_vars((QCond /\\ MemQWr) \\/ MemQRd)``, as
fairness groups (``"Rsp | DoRd"``, ...).

**Properties.** The refinement mapping is ``omem == vmem``, ``octl[p] == IF ctl[p] =
"waiting" THEN "busy" ELSE ctl[p]``, ``obuf == buf``; ``LM_Inner_Req/Do/Rsp(p)`` are
InternalMemory's actions over it, predicates of a step ``(s, t)``
(:meth:`LiveWriteThroughCache.inner_do` ...), and ``LM_Inner_vars == <<memInt, omem,
octl, obuf>>`` is :meth:`~LiveWriteThroughCache.inner_vars`.

* ``LM_Inner_LISpec == LM_Inner_ISpec /\\ LM_Inner_Liveness2``. ``LM_Inner_ISpec``'s
  ``[][LM_Inner_INext]_LM_Inner_vars`` is the action property ``LM_Inner_INext``;
  its ``LM_Inner_IInit`` holds in the initial states (checked in
  ``tests/test_tla_liveness.py``). ``LM_Inner_Liveness2 == \\A p: []<>~(EnabledDo(p)
  \\/ EnabledRsp(p)) \\/ []<><<Do(p) \\/ Rsp(p)>>_LM_Inner_vars`` is, per process, the
  temporal property over steps ``LM_Inner_Liveness2_p<p>``: ``[]<>(~(EnabledDo(p) \\/
  EnabledRsp(p)) \\/ <<Do(p) \\/ Rsp(p)>>_vars)`` (``[]<>`` distributes over ``\\/``).
* ``LM_Inner_Liveness``: per process, ``LM_Inner_LivenessDo_p<p>`` (``[]<>~EnabledDo(p)
  \\/ []<><<Do(p)>>_vars``) and ``LM_Inner_LivenessRsp_p<p>`` (the same for Rsp).

The six temporal properties are step formulas of the form ``~E | angle(A, s, t, v)``:
the module's "tricky" definitions, weak fairness of an action of the specification it
refines, stated with ``ENABLED`` computed by hand.

:class:`LiveWriteThroughCacheWeakRdMiss` replaces ``SF_vars(RdMiss(p) \\/ DoWr(p))`` by
``WF`` (the README's exercise 4): a process's read miss or write needs the queue, which
the other process may keep filling whenever it empties, so a request is enabled only
now and then and may wait forever.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from modelcheck import (
    Array,
    Const,
    Enum,
    Ids,
    Int,
    Record,
    Seq,
    Spec,
    action,
    action_property,
    all_of,
    always_eventually,
    angle,
    any_of,
    functions,
    implies,
    init_product,
    not_,
    where,
)

__all__ = ["Ctl", "Kind", "LiveWriteThroughCache", "LiveWriteThroughCacheWeakRdMiss"]


class Ctl(IntEnum):
    """``ctl[p]``."""

    rdy = 0
    busy = 1
    waiting = 2
    done = 3


class Kind(IntEnum):
    """What a datum is: ``NoVal``, a value, a read or a write request."""

    NoVal = 0
    Val = 1
    Rd = 2
    Wr = 3


PROCS = (1, 2)


def _datum(kind: Any, adr: Any = 0, val: Any = 0) -> dict[str, Any]:
    return {"kind": kind, "adr": adr, "val": val}


def _per_proc(make: Any, name: str) -> dict[str, Any]:
    """One temporal property per process: ``name_p1``, ``name_p2``."""
    out = {}

    def bind(p: int) -> Any:
        def prop(self: Any, s: Any, t: Any) -> Any:
            return make(self, s, t, p)
        return prop

    for p in PROCS:
        prop = bind(p)
        prop.__name__ = f"{name}_p{p}"
        prop.__qualname__ = f"LiveWriteThroughCache.{name}_p{p}"
        prop.__doc__ = make.__doc__
        out[prop.__name__] = always_eventually(prop)
    return out


class LiveWriteThroughCache(Spec):
    """The write-through cache with its liveness condition; implies the live internal
    memory under the refinement mapping."""

    NAdr = Const(1, min=1, doc="Adr == {a1, ...}")
    NVal = Const(2, min=1, doc="Val == {v1, ...}")
    QLen = Const(1, min=1)
    Proc = Ids(1, 2)
    Adr = Ids(1, NAdr)
    Val = Ids(1, NVal)

    memInt = Record(p=Int(1, 2), kind=Enum(Kind), adr=Int(0, NAdr), val=Int(0, NVal))
    wmem = Array(Adr, Int(1, NVal))
    ctl = Array(Proc, Enum(Ctl))
    buf = Array(Proc, Record(kind=Enum(Kind), adr=Int(0, NAdr), val=Int(0, NVal)))
    cache = Array(Proc, Array(Adr, Int(0, NVal)))  # 0: NoVal
    memQ = Seq(Record(p=Int(1, 2), kind=Enum(Kind), adr=Int(0, NAdr), val=Int(0, NVal)),
               QLen)

    fairness = {"Rsp | DoRd": "weak", "RdMiss | DoWr": "strong",
                "MemQWr[QCond] | MemQRd": "weak"}

    def init_states(self) -> Any:
        # M_IInit (memInt \in MCInitMemInt == {<<p1, NoVal>>}), no cache, empty queue
        return init_product(wmem=functions(self.Adr, self.Val),
                            memInt=[{"p": 1, **_datum(Kind.NoVal)}])

    # -- definitions -----------------------------------------------------------------
    def vmem(self, s: Any) -> list[Any]:
        """``vmem[a]`` per address: ``wmem`` with the queued writes applied in order."""
        out = []
        for a in self.Adr:
            v: Any = s.wmem[a]
            for i in range(1, self.QLen + 1):
                e = s.memQ.at(i)
                v = where((s.memQ.len() >= i) & (e.kind == Kind.Wr) & (e.adr == a), e.val, v)
            out.append(v)
        return out

    def qcond(self, s: Any) -> Any:
        """``QCond``: the queue is full or holds a read."""
        return (s.memQ.len() == self.QLen) | any_of(
            range(1, self.QLen + 1),
            lambda i: (s.memQ.len() >= i) & (s.memQ.at(i).kind == Kind.Rd))

    def cached(self, s: Any, p: int, adr: Any) -> Any:
        """``cache[p][adr]`` for an address that is a state value."""
        out: Any = 0
        for a in self.Adr:
            out = where(adr == a, s.cache[p][a], out)
        return out

    # -- Next ------------------------------------------------------------------------
    @action(p=Proc, a=Adr, v=lambda self, p, a: range(0, self.NVal + 1))
    def Req(self, s, t, p, a, v):
        """``M_Req(p)`` with ``req`` the read of ``a`` (``v = 0``) or the write of ``v``."""
        req = _datum(Kind.Rd if v == 0 else Kind.Wr, a, v)
        t.memInt = {"p": p, **req}
        t.buf[p] = req
        t.ctl[p] = Ctl.busy
        return s.ctl[p] == Ctl.rdy

    @action(p=Proc)
    def Rsp(self, s, t, p):
        b = s.buf[p]
        t.memInt = {"p": p, "kind": b.kind, "adr": b.adr, "val": b.val}
        t.ctl[p] = Ctl.rdy
        return s.ctl[p] == Ctl.done

    @action(p=Proc)
    def RdMiss(self, s, t, p):
        b = s.buf[p]
        t.memQ = s.memQ.append({"p": p, "kind": b.kind, "adr": b.adr, "val": b.val})
        t.ctl[p] = Ctl.waiting
        return ((s.ctl[p] == Ctl.busy) & (b.kind == Kind.Rd)
                & (self.cached(s, p, b.adr) == 0) & (s.memQ.len() < self.QLen))

    @action(p=Proc)
    def DoRd(self, s, t, p):
        b = s.buf[p]
        c = self.cached(s, p, b.adr)
        t.buf[p] = _datum(Kind.Val, 0, c)
        t.ctl[p] = Ctl.done
        return (((s.ctl[p] == Ctl.busy) | (s.ctl[p] == Ctl.waiting)) & (b.kind == Kind.Rd)
                & (c != 0))

    @action(p=Proc)
    def DoWr(self, s, t, p):
        r = s.buf[p]
        for q in self.Proc:
            for a in self.Adr:
                upd = (r.adr == a) & ((p == q) | (s.cache[q][a] != 0))
                t.cache[q][a] = where(upd, r.val, s.cache[q][a])
        t.memQ = s.memQ.append({"p": p, "kind": r.kind, "adr": r.adr, "val": r.val})
        t.buf[p] = _datum(Kind.NoVal)
        t.ctl[p] = Ctl.done
        return (s.ctl[p] == Ctl.busy) & (r.kind == Kind.Wr) & (s.memQ.len() < self.QLen)

    @action
    def MemQWr(self, s, t):
        r = s.memQ.head()
        for a in self.Adr:
            t.wmem[a] = where(r.adr == a, r.val, s.wmem[a])
        t.memQ = s.memQ.tail()
        qcond = self.qcond(s)
        with t.branch("QCond", qcond):
            pass
        with t.branch("other", not_(qcond)):
            pass
        return (s.memQ.len() > 0) & (r.kind == Kind.Wr)

    @action
    def MemQRd(self, s, t):
        r = s.memQ.head()
        vmem = self.vmem(s)
        for q in self.Proc:
            for a in self.Adr:
                t.cache[q][a] = where((r.p == q) & (r.adr == a), vmem[a - 1], s.cache[q][a])
        t.memQ = s.memQ.tail()
        return (s.memQ.len() > 0) & (r.kind == Kind.Rd)

    @action(p=Proc, a=Adr)
    def Evict(self, s, t, p, a):
        t.cache[p][a] = 0
        return implies(s.ctl[p] == Ctl.waiting, s.buf[p].adr != a)

    # -- the refinement mapping and LiveInternalMemory over it ---------------------------
    def octl(self, s: Any, p: int) -> Any:
        return where(s.ctl[p] == Ctl.waiting, Ctl.busy, s.ctl[p])

    def inner_vars(self, s: Any) -> tuple[Any, ...]:
        """``LM_Inner_vars == <<memInt, omem, octl, obuf>>``, as a tuple of values."""
        return (s.memInt, *self.vmem(s), *(self.octl(s, p) for p in self.Proc),
                *(s.buf[p] for p in self.Proc))

    def _others_unchanged(self, s: Any, t: Any, p: int) -> Any:
        """``octl'`` and ``obuf'`` equal ``octl`` and ``obuf`` but at ``p``."""
        return all_of([q for q in self.Proc if q != p],
                      lambda q: (self.octl(t, q) == self.octl(s, q)) & (t.buf[q] == s.buf[q]))

    def _omem_unchanged(self, s: Any, t: Any) -> Any:
        return all_of(list(zip(self.vmem(s), self.vmem(t))), lambda m: m[0] == m[1])

    def inner_req(self, s: Any, t: Any, p: int) -> Any:
        """``LM_Inner_Req(p)``: ``\\E req \\in MReq`` is ``obuf'[p]``, a request."""
        req = t.buf[p]
        is_req = (((req.kind == Kind.Rd) & (req.val == 0)) | (req.kind == Kind.Wr) & (
            req.val >= 1)) & (req.adr >= 1)
        return ((self.octl(s, p) == Ctl.rdy) & is_req & (t.memInt.p == p)
                & (t.memInt.kind == req.kind) & (t.memInt.adr == req.adr)
                & (t.memInt.val == req.val) & (self.octl(t, p) == Ctl.busy)
                & self._others_unchanged(s, t, p) & self._omem_unchanged(s, t))

    def inner_do(self, s: Any, t: Any, p: int) -> Any:
        """``LM_Inner_Do(p)``."""
        b = s.buf[p]
        wr = b.kind == Kind.Wr
        om, om2 = self.vmem(s), self.vmem(t)
        read: Any = 0
        for a in self.Adr:
            read = where(b.adr == a, om[a - 1], read)
        mem_ok = all_of(self.Adr, lambda a: om2[a - 1] == where(wr & (b.adr == a), b.val,
                                                                om[a - 1]))
        nb = t.buf[p]
        buf_ok = ((nb.kind == where(wr, Kind.NoVal, Kind.Val)) & (nb.adr == 0)
                  & (nb.val == where(wr, 0, read)))
        return ((self.octl(s, p) == Ctl.busy) & mem_ok & buf_ok
                & (self.octl(t, p) == Ctl.done) & self._others_unchanged(s, t, p)
                & (t.memInt == s.memInt))

    def inner_rsp(self, s: Any, t: Any, p: int) -> Any:
        """``LM_Inner_Rsp(p)`` (``Reply(p, obuf[p], ...)``: ``memInt' = <<p, obuf[p]>>``)."""
        b = s.buf[p]
        return ((self.octl(s, p) == Ctl.done) & (t.memInt.p == p) & (t.memInt.kind == b.kind)
                & (t.memInt.adr == b.adr) & (t.memInt.val == b.val)
                & (self.octl(t, p) == Ctl.rdy) & self._others_unchanged(s, t, p)
                & (t.buf[p] == b) & self._omem_unchanged(s, t))

    def inner_init(self, s: Any) -> Any:
        """``LM_Inner_IInit`` (``omem \\in [Adr -> Val]`` holds by typing)."""
        return (all_of(self.Proc, lambda p: (self.octl(s, p) == Ctl.rdy)
                       & (s.buf[p] == _datum(Kind.NoVal)))
                & (s.memInt == {"p": 1, **_datum(Kind.NoVal)}))

    @action_property
    def LM_Inner_INext(self, s, t):
        """``[][LM_Inner_INext]_LM_Inner_vars``."""
        step = any_of(self.Proc, lambda p: self.inner_req(s, t, p) | self.inner_do(s, t, p)
                      | self.inner_rsp(s, t, p))
        unchanged = all_of(list(zip(self.inner_vars(s), self.inner_vars(t))),
                           lambda m: m[0] == m[1])
        return step | unchanged

    def _liveness2(self, s: Any, t: Any, p: int) -> Any:
        """``[]<>~(EnabledDo(p) \\/ EnabledRsp(p)) \\/ []<><<Do(p) \\/ Rsp(p)>>_vars``."""
        enabled = (self.octl(s, p) == Ctl.busy) | (self.octl(s, p) == Ctl.done)
        return not_(enabled) | angle(self.inner_do(s, t, p) | self.inner_rsp(s, t, p), s, t,
                                     self.inner_vars)

    def _liveness_do(self, s: Any, t: Any, p: int) -> Any:
        """``[]<>~EnabledDo(p) \\/ []<><<Do(p)>>_vars``."""
        return (self.octl(s, p) != Ctl.busy) | angle(self.inner_do(s, t, p), s, t,
                                                    self.inner_vars)

    def _liveness_rsp(self, s: Any, t: Any, p: int) -> Any:
        """``[]<>~EnabledRsp(p) \\/ []<><<Rsp(p)>>_vars``."""
        return (self.octl(s, p) != Ctl.done) | angle(self.inner_rsp(s, t, p), s, t,
                                                    self.inner_vars)

    locals().update(_per_proc(_liveness2, "LM_Inner_Liveness2"))
    locals().update(_per_proc(_liveness_do, "LM_Inner_LivenessDo"))
    locals().update(_per_proc(_liveness_rsp, "LM_Inner_LivenessRsp"))


class LiveWriteThroughCacheWeakRdMiss(LiveWriteThroughCache):
    """``SF_vars(RdMiss(p) \\/ DoWr(p))`` weakened to ``WF``."""

    fairness = {"Rsp | DoRd": "weak", "RdMiss | DoWr": "weak",
                "MemQWr[QCond] | MemQRd": "weak"}
