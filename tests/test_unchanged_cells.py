"""Assigning a cell the current state's own value leaves it as it is.

The kernel skips an assigned cell whose value is the very column it decoded for that
cell (``t.x = s.x``, a record or sequence read and written back, an array element
copied to itself): no range check, no step of the successor's words. These specs
assign such values every way that could go wrong if the skip were taken where it must
not be: after the cell was assigned something else (the last assignment wins), inside
a branch over an assignment made outside it, from another cell's column, on a batch
narrowed to the states an action takes; the explorer must agree with the brute-force
oracle (one state at a time, no batch columns) at every batch size.
"""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import brute_force_check

from modelcheck import Array, Bool, Ids, Int, Record, Seq, Spec, action, explore, not_, where
from modelcheck.kernel import Kernel


class Unchanged(Spec):
    check_deadlock = False
    Procs = Ids(1, 2)

    x = Int(0, 3)
    r = Record(a=Int(0, 2), f=Bool())
    q = Seq(Int(0, 2), 2)
    a = Array(Procs, Int(0, 2))

    @action
    def Back(self, s, t):
        # outside: x + 1; the branch "back" writes x's own column over it
        t.x = where(s.x < 3, s.x + 1, s.x)
        with t.branch("back", s.x > 0):
            t.x = s.x
            t.r = s.r.with_fields(f=not_(s.r.f))
        with t.branch("on"):
            t.r = s.r
        return s.x < 3

    @action
    def Rewrite(self, s, t):
        # assigned, then assigned its own value again: unchanged
        t.r = s.r.with_fields(a=0)
        t.q = s.q.append(1)
        t.r = s.r
        t.q = s.q
        t.a[1] = s.a[2]
        t.a[2] = s.a[1]
        return s.a[1] != s.a[2]

    @action(i=Procs)
    def Grow(self, s, t, i):
        g = (s.a[i] < 2) & (s.q.len() < 2)
        if t.none_enabled(g):
            return g
        t.a[i] = s.a[i] + 1
        t.q = s.q.append(s.a[i])
        for j in self.Procs:
            t.a[j] = where(j == i, t.a[j], s.a[j])
        t.r = s.r
        t.x = s.x
        return g

    @action
    def Drain(self, s, t):
        t.q = s.q.tail()
        t.r = s.r.with_fields(a=where(s.r.a < 2, s.r.a + 1, 0))
        t.r = where(s.r.f, s.r, t.r)
        return s.q.len() > 0


@pytest.mark.parametrize("batch", [2, 3, 7, 64, 4096])
def test_unchanged_assignments_agree_with_the_oracle(batch) -> None:
    spec = Unchanged()
    o = brute_force_check(spec, invariants=[], check_deadlock=False)
    r = explore(spec, invariants=[], check_deadlock=False, batch_size=batch)
    assert (r.distinct_states, r.depth, r.generated_states) == \
        (o.distinct, o.depth, o.generated)


def test_the_narrowed_batches_agree_with_the_oracle() -> None:
    """Every batch of two states or more is narrowed where an action takes at most half
    of it (the sub-batch's own decoded columns are then the ones compared): a plain
    BFS over the kernel's successors, a set of packed states."""
    spec = Unchanged()
    o = brute_force_check(spec, invariants=[], check_deadlock=False)
    k = Kernel(spec, symmetry=False, narrow_min=2)
    frontier = np.unique(k.initial_words()[0], axis=0)
    seen = {bytes(w) for w in frontier}
    generated = 0
    while len(frontier):
        child = k.expand(frontier).child_words
        generated += len(child)
        new = {bytes(w): w for w in child if bytes(w) not in seen}
        seen.update(new)
        frontier = np.array(list(new.values()), dtype=np.uint64).reshape(-1, child.shape[1])
    assert (len(seen), generated) == (o.distinct, o.generated)
    assert o.distinct > 20
