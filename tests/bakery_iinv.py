"""``IInv`` of Bakery.tla in plain Python, independent of the spec (examples/tla/bakery.py):
the oracle its batched initial states are checked against."""

from __future__ import annotations

from examples.tla.bakery import PC

__all__ = ["iinv_holds"]

# A process's local state: (num, flag, unchecked, max, nxt, pc), unchecked a frozenset.
Local = tuple[int, bool, frozenset, int, int, PC]


def _before(st: dict[int, Local], i: int, j: int) -> bool:
    ni = st[i][0]
    nj, _, uj, mj, _, pj = st[j]
    if ni <= 0:
        return False
    if pj in (PC.ncs, PC.e1, PC.exit):
        return True
    if pj == PC.e2:
        return i in uj or mj >= ni
    if pj == PC.e3:
        return mj >= ni
    if pj in (PC.e4, PC.w1, PC.w2):
        return (ni, i) < (nj, j) and (pj not in (PC.w1, PC.w2) or i in uj)
    return False


def _local_ok(i: int, loc: Local) -> bool:
    """The conjuncts of ``IInv`` that read only process ``i``'s own variables."""
    num, flag, unch, _, nxt, pc = loc
    return ((pc not in (PC.e4, PC.w1, PC.w2, PC.cs) or num != 0)
            and (pc not in (PC.e2, PC.e3) or flag)
            and (pc != PC.w2 or nxt != i)
            and (pc not in (PC.w1, PC.w2) or i not in unch))


def iinv_holds(st: dict[int, Local]) -> bool:
    """``IInv`` on a state given per process, in plain Python (independent of the spec)."""
    for i, (num, _, unch, _, nxt, pc) in st.items():
        if not _local_ok(i, st[i]):
            return False
        others = [j for j in st if j != i]
        if pc in (PC.w1, PC.w2) and not all(_before(st, i, j) for j in others if j not in unch):
            return False
        if pc == PC.w2:
            pn, un, mn = st[nxt][5], st[nxt][2], st[nxt][3]
            if ((pn == PC.e2 and i not in un) or pn == PC.e3) and not mn >= num:
                return False
        if pc == PC.cs and not all(_before(st, i, j) for j in others):
            return False
    return True
