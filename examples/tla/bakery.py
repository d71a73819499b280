"""Lamport's atomic Bakery algorithm, checked from its inductive invariant (MCBakery).

Source: tlaplus/Examples ``specifications/Bakery-Boulangerie/Bakery.tla`` (the
PlusCal translation, by Leslie Lamport and Stephan Merz) with the model
``MCBakery.tla``/``MCBakery.cfg``: ``N = 2``, ``MaxNat = 2``, ``Nat <- 0..MaxNat``,
``SPECIFICATION ISpec``, invariants ``MutualExclusion TypeOK Inv``, no deadlock
check. The manifest gives 655,200 distinct states and TLC depth 1.

``ISpec == Inv /\\ [][Next]_vars``: the *initial* states are every state that
satisfies the inductive invariant ``Inv == TypeOK /\\ IInv``, so the model checks
that ``Inv`` is inductive (every successor of an ``Inv`` state satisfies ``Inv``).
All 655,200 states are initial and no successor is new: TLC's depth 1 is our depth 0.

Translation:

* variables ``num``, ``flag``, ``unchecked``, ``max``, ``nxt``, ``pc`` as arrays over
  ``Procs = 1..N``; ``num`` and ``max`` range over ``0..MaxNat`` (the cfg's ``Nat``),
  ``unchecked`` is a ``SetOf(Procs)`` per process, ``pc`` an enum of the labels. So
  ``TypeOK`` is the variables' types and holds by construction (the explorer checks
  every stored value against its type).
* the labels are actions with a parameter ``p`` (``self``). A disjunction is a
  branch (``e1[flip]``/``e1[enter]``, ``e4``, ``e3[stay]``/``e3[pick]`` with
  ``k \\in Nat``); where only one arm of an ``IF`` quantifies (``e2``, ``w1``:
  ``\\E i \\in unchecked[self]`` or the ``ELSE`` arm; ``exit``: ``\\E k \\in Nat`` or
  ``num[self] := 0``), the arms are two actions (``e2``/``e2_done``,
  ``w1``/``w1_done``, ``exit``/``exit_done``).
* ``ISpec``'s initial predicate ``Inv == TypeOK /\\ IInv`` is ``TypeOK``'s product of
  per-variable sets (``num \\in [Procs -> Nat]``, ...) filtered by ``IInv``: that is
  ``init_states``, ``init_product(...).such_that(self.Inv)``, which the checker
  enumerates in packed batches (1,679,616 type-correct states, 655,200 kept). The tests
  check it against ``IInv`` written a second time in plain Python, state by state.
* ``Spec``'s fairness ``\\A self: WF_vars((pc[self] # "ncs") /\\ p(self))`` and the
  properties ``DeadlockFree == (\\E i: Trying(i)) ~> (\\E i: InCS(i))`` and
  ``StarvationFree == \\A i: Trying(i) ~> InCS(i)`` are commented out in
  ``MCBakery.cfg`` (tlaplus/Examples issue 109) and not checked here.

``BakeryFromInit`` is ``Spec``'s safety part, from ``Init`` (2,303 states, depth 38,
for N=2 and MaxNat=2; not in the manifest). ``BakeryFromInitBug`` drops the wait on
``flag[nxt]`` in ``w1``: ``Inv`` fails after 11 states.

Run: ``modelcheck check examples/tla/bakery.py`` (655,200 states, depth 0).
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import IntEnum
from typing import Any

from modelcheck import (
    BOOLEAN,
    Array,
    Bool,
    Const,
    Enum,
    Ids,
    Int,
    Ref,
    SetOf,
    Spec,
    action,
    all_of,
    excluding,
    functions,
    implies,
    init_product,
    invariant,
    subsets,
    where,
)

__all__ = ["PC", "Bakery", "BakeryFromInit", "BakeryFromInitBug"]


class PC(IntEnum):
    ncs = 0
    e1 = 1
    e2 = 2
    e3 = 3
    e4 = 4
    w1 = 5
    w2 = 6
    cs = 7
    exit = 8


def _in(x: Any, *labels: PC) -> Any:
    out = x == labels[0]
    for lab in labels[1:]:
        out = out | (x == lab)
    return out


def _prec(a1: Any, a2: Any, b1: Any, b2: Any) -> Any:
    """``<<a1, a2>> \\prec <<b1, b2>>``: lexicographic less-than on pairs."""
    return (a1 < b1) | ((a1 == b1) & (a2 < b2))


class Bakery(Spec):
    """Bakery.tla's ``Next`` from every state satisfying ``Inv`` (MCBakery's ``ISpec``)."""

    check_deadlock = False

    N = Const(2, min=1, doc="number of processes")
    MaxNat = Const(2, min=0, doc="Nat is overridden by 0..MaxNat")
    Procs = Ids(1, N)

    num = Array(Procs, Int(0, MaxNat))
    flag = Array(Procs, Bool())
    unchecked = Array(Procs, SetOf(Procs))
    max = Array(Procs, Int(0, MaxNat))
    nxt = Array(Procs, Ref(Procs, none=None))
    pc = Array(Procs, Enum(PC))

    def init_states(self) -> Any:
        # Inv == TypeOK /\ IInv: TypeOK's sets, then IInv (Inv's TypeOK part holds by type)
        procs, nats = list(self.Procs), range(self.MaxNat + 1)
        return init_product(num=functions(procs, nats), flag=functions(procs, BOOLEAN),
                            unchecked=functions(procs, subsets(procs)),
                            max=functions(procs, nats), nxt=functions(procs, procs),
                            pc=functions(procs, PC)).such_that(self.Inv)

    # ------------------------------------------------------------ the process
    @action(p=Procs)
    def ncs(self, s, t, p):
        t.pc[p] = PC.e1
        return s.pc[p] == PC.ncs

    @action(p=Procs)
    def e1(self, s, t, p):
        with t.branch("flip"):
            t.flag[p] = ~s.flag[p]
        with t.branch("enter"):
            t.flag[p] = True
            t.unchecked[p] = set(excluding(self.Procs, p))
            t.max[p] = 0
            t.pc[p] = PC.e2
        return s.pc[p] == PC.e1

    @action(p=Procs, i=Procs)
    def e2(self, s, t, p, i):
        """``\\E i \\in unchecked[self]``: take ``i`` out, raise ``max`` to ``num[i]``."""
        t.unchecked[p] = s.unchecked[p].without(i)
        t.max[p] = where(s.num[i] > s.max[p], s.num[i], s.max[p])
        return (s.pc[p] == PC.e2) & s.unchecked[p].has(i)

    @action(p=Procs)
    def e2_done(self, s, t, p):
        t.pc[p] = PC.e3
        return (s.pc[p] == PC.e2) & s.unchecked[p].is_empty()

    @action(p=Procs, k=lambda self: range(self.MaxNat + 1))
    def e3(self, s, t, p, k):
        t.num[p] = k
        with t.branch("stay"):
            pass
        with t.branch("pick", k > s.max[p]):
            t.pc[p] = PC.e4
        return s.pc[p] == PC.e3

    @action(p=Procs)
    def e4(self, s, t, p):
        with t.branch("flip"):
            t.flag[p] = ~s.flag[p]
        with t.branch("done"):
            t.flag[p] = False
            t.unchecked[p] = set(excluding(self.Procs, p))
            t.pc[p] = PC.w1
        return s.pc[p] == PC.e4

    @action(p=Procs, i=Procs)
    def w1(self, s, t, p, i):
        """``\\E i \\in unchecked[self]: nxt' = i``, then ``await ~flag[nxt']``."""
        t.nxt[p] = i
        t.pc[p] = PC.w2
        return (s.pc[p] == PC.w1) & s.unchecked[p].has(i) & ~s.flag[i]

    @action(p=Procs)
    def w1_done(self, s, t, p):
        t.pc[p] = PC.cs
        return (s.pc[p] == PC.w1) & s.unchecked[p].is_empty()

    @action(p=Procs)
    def w2(self, s, t, p):
        q = s.nxt[p]
        t.unchecked[p] = s.unchecked[p].without(q)
        t.pc[p] = PC.w1
        return (s.pc[p] == PC.w2) & ((s.num[q] == 0) | _prec(s.num[p], p, s.num[q], q))

    @action(p=Procs)
    def cs(self, s, t, p):
        t.pc[p] = PC.exit
        return s.pc[p] == PC.cs

    @action(p=Procs, k=lambda self: range(self.MaxNat + 1))
    def exit(self, s, t, p, k):
        t.num[p] = k
        return s.pc[p] == PC.exit

    @action(p=Procs)
    def exit_done(self, s, t, p):
        t.num[p] = 0
        t.pc[p] = PC.ncs
        return s.pc[p] == PC.exit

    # ------------------------------------------------------------ properties
    @invariant
    def MutualExclusion(self, s):
        return all_of(self.Procs, lambda i: all_of(
            excluding(self.Procs, i),
            lambda j: ~((s.pc[i] == PC.cs) & (s.pc[j] == PC.cs))))

    def before(self, s, i: int, j: int):
        """``Before(i, j)``: ``num[i] > 0`` and ``j`` has or will choose a larger ticket."""
        pj = s.pc[j]
        return (s.num[i] > 0) & (
            _in(pj, PC.ncs, PC.e1, PC.exit)
            | ((pj == PC.e2) & (s.unchecked[j].has(i) | (s.max[j] >= s.num[i])))
            | ((pj == PC.e3) & (s.max[j] >= s.num[i]))
            | (_in(pj, PC.e4, PC.w1, PC.w2)
               & _prec(s.num[i], i, s.num[j], j)
               & implies(_in(pj, PC.w1, PC.w2), s.unchecked[j].has(i))))

    @invariant
    def Inv(self, s):
        """``IInv`` (``TypeOK`` holds by the variables' types)."""
        def at(i: int):
            pi, n = s.pc[i], s.nxt[i]
            return (implies(_in(pi, PC.e4, PC.w1, PC.w2, PC.cs), s.num[i] != 0)
                    & implies(_in(pi, PC.e2, PC.e3), s.flag[i])
                    & implies(pi == PC.w2, n != i)
                    & implies(_in(pi, PC.w1, PC.w2), ~s.unchecked[i].has(i))
                    & implies(_in(pi, PC.w1, PC.w2), all_of(
                        excluding(self.Procs, i),
                        lambda j: implies(~s.unchecked[i].has(j), self.before(s, i, j))))
                    & implies((pi == PC.w2)
                              & (((s.pc[n] == PC.e2) & ~s.unchecked[n].has(i))
                                 | (s.pc[n] == PC.e3)),
                              s.max[n] >= s.num[i])
                    & implies(pi == PC.cs, all_of(excluding(self.Procs, i),
                                                  lambda j: self.before(s, i, j))))
        return all_of(self.Procs, at)


class BakeryFromInit(Bakery):
    """Bakery.tla's ``Spec`` safety part: ``Init`` (every process at ``ncs``, tickets 0)."""

    def init_states(self) -> Iterator[dict[str, Any]]:
        yield {}


class BakeryFromInitBug(BakeryFromInit):
    """``w1`` without ``await ~flag[nxt]``: a process may read a ticket still being chosen."""

    @action(p=Bakery.Procs, i=Bakery.Procs)
    def w1(self, s, t, p, i):
        t.nxt[p] = i
        t.pc[p] = PC.w2
        return (s.pc[p] == PC.w1) & s.unchecked[p].has(i)
