"""Narrowing (:meth:`NextView.none_enabled`): an action whose guard holds in few states
of a batch is evaluated again on those alone, with the results of the whole batch.

Oracles: the kernel with narrowing switched off, on every field of every batch's
expansion and of the whole run (counts, coverage, traces), and the brute-force
explorer (scalar evaluator, Python sets) on the counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import brute_force
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Bool,
    Explorer,
    Ids,
    Int,
    Spec,
    action,
    action_property,
    invariant,
    where,
)
from modelcheck.kernel import Kernel
from modelcheck.result import Result

ON = dict(narrow_min=2, family_rows=0)  # the per-instance evaluator, every batch narrowed
OFF = dict(narrow_min=1 << 62, family_rows=0)
FAM = dict(family_rows=1 << 20, family_min=2)  # family calls, whatever the batch


def make_spec(n: int, cap: int, gap: int) -> Spec:
    class Tokens(Spec):
        """Tokens passed along a ring: a process holding one passes it on (its guard
        holds in few states of a batch), bumps its counter in one of two branches, or
        drops a token; an action property and an invariant that may fail."""

        check_deadlock = True
        Procs = Ids(0, n - 1)
        tok = Array(Procs, Bool())
        ctr = Array(Procs, Int(0, cap))

        def init_states(self):
            for c in range(cap + 1):
                yield {"tok": {i: i == 0 for i in range(n)},
                       "ctr": {i: c if i == 0 else 0 for i in range(n)}}

        @action(i=Procs, j=Procs)
        def Pass(self, s, t, i, j):
            g = s.tok[i] & (j == (i + 1) % n) & (s.ctr[i] < cap)
            if t.none_enabled(g):
                return g
            t.tok[i] = False
            t.tok[j] = True
            t.ctr[i] = s.ctr[i] + 1
            return g

        @action(i=Procs)
        def Bump(self, s, t, i):
            g = s.tok[i] & (s.ctr[i] + gap <= cap)
            if t.none_enabled(g):
                return g
            with t.branch("one", s.ctr[i] < cap):
                t.ctr[i] = s.ctr[i] + 1
            with t.branch("gap", True):
                t.ctr[i] = s.ctr[i] + gap
            return g

        @action(i=Procs)
        def Drop(self, s, t, i):
            g = s.tok[i] & (s.ctr[where(i > 0, i - 1, n - 1)] == cap)
            if t.none_enabled(g):
                return g
            t.tok[i] = False
            return g

        @invariant
        def Bounded(self, s):
            return (s.ctr[0] < cap) | ~s.tok[0]

        @action_property
        def NoLeap(self, s, t):
            return t.ctr[n - 1] <= s.ctr[n - 1] + 1

    return Tokens()


def run(spec: Spec, options: dict[str, int], **kw: object) -> Result:
    ex = Explorer(spec, **kw)
    for k, v in options.items():
        setattr(ex.kernel, k, v)
    return ex.run()


def summary(r: Result) -> object:
    v = r.violation
    trace = None if v is None else [(s.action, s.params, s.state) for s in v.trace]
    return (r.status, r.distinct_states, r.generated_states, r.depth,
            [(c.name, c.params, c.fired, c.new_states) for c in r.coverage],
            None if v is None else (v.property, v.kind), trace)


def expansions(spec: Spec, options: dict[str, int]) -> list[object]:
    """Every field of the expansion of every level (breadth-first, states in order)."""
    k = Kernel(spec, **options)
    words = k.initial_packed()
    out: list[object] = []
    seen: set[bytes] = set()
    while len(words) and len(out) < 40:
        ex = k.expand(words)
        out.append((ex.n, [r.tolist() for r in ex.invariant_rows], ex.child_words.tolist(),
                    ex.child_fps.tolist(), ex.parent_rows.tolist(), ex.action_ids.tolist(),
                    ex.fired.tolist(), ex.deadlock_rows.tolist(),
                    [[a.tolist() for a in h] for h in ex.property_hits]))
        new = []
        for row in ex.child_words:
            b = row.tobytes()
            if b not in seen:
                seen.add(b)
                new.append(row)
        words = np.array(new, dtype=np.uint64).reshape(-1, k.layout.n_words)
    return out


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(2, 4), cap=st.integers(1, 3), gap=st.integers(1, 3))
def test_narrowed_expansions_equal_the_whole_batch(n: int, cap: int, gap: int) -> None:
    spec = make_spec(n, cap, gap)
    assert expansions(spec, ON) == expansions(spec, OFF)
    on = run(spec, ON, invariants=[], check_deadlock=False)
    assert summary(on) == summary(run(spec, OFF, invariants=[], check_deadlock=False))
    assert (on.distinct_states, on.depth) == brute_force(spec)
    # a violation or a deadlock: the same trace whether narrowed or not
    assert summary(run(spec, ON)) == summary(run(spec, OFF))
    assert summary(run(spec, ON, invariants=[])) == summary(run(spec, OFF, invariants=[]))
    # a family call (FamilyNext.none_enabled over the (instance, state) grid)
    assert expansions(spec, FAM) == expansions(spec, OFF)
    assert summary(run(spec, FAM)) == summary(run(spec, OFF))


def test_narrowing_happens() -> None:
    """The batch is narrowed (the test above compares two different evaluations)."""
    spec = make_spec(4, 3, 2)
    k = Kernel(spec, **ON)
    calls: list[int] = []
    batch_view = k.batch_view

    def counting(words: np.ndarray,  # type: ignore[no-untyped-def]
                 cols: np.ndarray | None = None):
        calls.append(len(words))
        return batch_view(words, cols)

    k.batch_view = counting  # type: ignore[method-assign]
    words = np.repeat(k.initial_packed(), 6, axis=0)
    k.expand(words)
    assert len(words) == 24 and 12 in calls[1:]


def make_guarded_spec(n: int, cap: int, catch: type[BaseException] = Exception) -> Spec:
    """The ring of :func:`make_spec` with every action's body in ``try``/``except
    Exception`` (a spec that takes any error for "not enabled") and a Python ``if`` on
    the parameters: the engine's own markers (the narrowing's, a family call's giving
    up) must pass through the spec's handlers."""

    class Guarded(Spec):
        Procs = Ids(0, n - 1)
        tok = Array(Procs, Bool())
        ctr = Array(Procs, Int(0, cap))

        def init_states(self):
            for c in range(cap + 1):
                yield {"tok": {i: i == 0 for i in range(n)},
                       "ctr": {i: c if i == 0 else 0 for i in range(n)}}

        @action(i=Procs, j=Procs)
        def Pass(self, s, t, i, j):
            try:
                if j != (i + 1) % n:
                    return False
                g = s.tok[i] & (s.ctr[i] < cap)
                if t.none_enabled(g):
                    return g
                t.tok[i] = False
                t.tok[j] = True
                t.ctr[i] = s.ctr[i] + 1
                return g
            except catch:
                return False

        @action(i=Procs)
        def Bump(self, s, t, i):
            try:
                g = s.tok[i] & (s.ctr[i] == 0)
                if t.none_enabled(g):
                    return g
                t.ctr[i] = s.ctr[i] + cap
                return g
            except catch:
                return False

        @action(i=Procs)
        def Halve(self, s, t, i):
            try:
                # numpy's integer division by zero (i == 1) is 0, with a warning
                q = s.ctr[i] // (i - 1)
                g = s.tok[i] & (q == 0) & (s.ctr[i] > 0)
                if t.none_enabled(g):
                    return g
                t.ctr[i] = s.ctr[i] - 1
                return g
            except catch:
                return False

    return Guarded()


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.parametrize("catch", [Exception, BaseException])
def test_markers_pass_through_the_specs_handlers(catch: type[BaseException]) -> None:
    """Narrowing and family calls with a spec that catches ``Exception``: the same counts
    as the plain per-instance evaluation and the brute-force explorer, and the batch is
    still narrowed (the markers were plain exceptions, and numpy's division by
    zero raised in a family call: the spec's handler took them for errors of its own,
    the action was then disabled on the whole batch, states were lost). Even a handler
    of ``BaseException`` cannot: the engine notes its requests where it reads them."""
    spec = make_guarded_spec(4, 3, catch)
    off = run(spec, OFF, check_deadlock=False)
    assert (off.distinct_states, off.depth) == brute_force(spec)
    assert summary(run(spec, ON, check_deadlock=False)) == summary(off)
    assert summary(run(spec, FAM, check_deadlock=False)) == summary(off)
    assert summary(run(spec, ON)) == summary(run(spec, OFF))  # a deadlock, its trace
    assert expansions(spec, ON) == expansions(spec, OFF)
    assert expansions(spec, FAM) == expansions(spec, OFF)
    k = Kernel(spec, **ON)
    calls: list[int] = []
    batch_view = k.batch_view

    def counting(words: np.ndarray,  # type: ignore[no-untyped-def]
                 cols: np.ndarray | None = None):
        calls.append(len(words))
        return batch_view(words, cols)

    k.batch_view = counting  # type: ignore[method-assign]
    words = np.repeat(k.initial_packed(), 6, axis=0)
    k.expand(words)
    assert len(words) == 24 and 6 in calls[1:]
