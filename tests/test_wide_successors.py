"""Successors of three words or more held as their parents' rows and the words their
actions changed (``kernel._Changed``) until the level rule keeps some: the rows
gathered for any subset of the successors (:meth:`SuccessorWords.take`) are the words
of keying each action's successors on their own (whole rows copied per action), their
keys are the keys of those words, and exploration with them finds what the brute-force
oracle finds. A deliberately broken gather is caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Array, Ids, Int, Spec, action, explore, invariant
from modelcheck.kernel import Kernel, _Changed
from modelcheck.store import take_rows
from tests.bruteforce import brute_force_check
from tests.randspec import random_spec
from tests.scatter_spec import kernel_levels

BIG = 2**40


class Words3(Spec):
    """Three 41-bit counters (three words, hashed) and a small phase: each action
    changes other words (``Inc(i)`` counter ``i``, ``Move`` counters 0 and 2, ``Tick``
    the phase alone), so that a batch's successors fall in several groups of changed
    words."""

    check_deadlock = False
    Slots = Ids(0, 2)
    c = Array(Slots, Int(0, BIG))
    phase = Int(0, 3)

    @action(i=Slots)
    def Inc(self, s: Any, t: Any, i: int) -> Any:
        t.c[i] = s.c[i] + 1
        return (s.c[i] < 4) & (s.phase != i)

    @action
    def Move(self, s: Any, t: Any) -> Any:
        t.c[0] = s.c[2]
        t.c[2] = s.c[0]
        return s.c[0] != s.c[2]

    @action
    def Tick(self, s: Any, t: Any) -> Any:
        t.phase = (s.phase + 1) % 4
        return s.phase < 3

    @invariant
    def Small(self, s: Any) -> Any:
        return s.c[0] + s.c[1] + s.c[2] <= 12


def _whole_rows(spec: Spec, **kw: Any) -> Kernel:
    """A kernel that copies whole successor rows per action (keyed as it goes)."""
    k = Kernel(spec, **kw)
    k.deferred = k.incremental = False
    return k


def _mismatches(spec: Spec, seed: int, depth: int = 6, **kw: Any) -> tuple[int, int]:
    """``(rows compared, rows whose gathered words or keys differ from the whole-row
    kernel's)`` over random subsets and orders of every batch's successors; the most
    groups of changed words seen in a batch is asserted above one where the spec's
    actions change different words."""
    k, ref = Kernel(spec, **kw), _whole_rows(spec, **kw)
    assert k.deferred and not ref.deferred
    rng = np.random.default_rng(seed)
    seen = bad = 0
    for words in kernel_levels(ref, depth):
        a, b = k.expand(words), ref.expand(words)
        assert a.parent_rows.tolist() == b.parent_rows.tolist()
        assert a.action_ids.tolist() == b.action_ids.tolist()
        bad += int(np.sum(np.any(a.child_fps != b.child_fps, axis=-1)
                          if a.child_fps.ndim > 1 else a.child_fps != b.child_fps))
        m = len(b.child_fps)
        if not m:
            continue
        rows = rng.permutation(m)[:rng.integers(1, m + 1)]
        got, want = a.successors.take(rows), take_rows(b.child_words, rows)
        bad += int(np.sum(np.any(got != want, axis=1)))
        seen += len(rows)
    return seen, bad


def test_gathered_rows_and_keys_are_the_whole_rows() -> None:
    spec = Words3()
    assert spec.layout.n_words == 3
    groups = []
    real = _Changed.of

    def spy(*args: Any, **kw: Any) -> _Changed:
        got = real(*args, **kw)
        groups.append(len(got.groups))
        return got

    mp = pytest.MonkeyPatch()
    mp.setattr(_Changed, "of", spy)
    try:
        for kw in ({"family_rows": 0}, {}, {"narrow_min": 4}):
            seen, bad = _mismatches(spec, 1, **kw)
            assert seen > 500 and bad == 0
    finally:
        mp.undo()
    assert max(groups) >= 3  # several groups of changed words in one batch


def test_a_broken_gather_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant reads a group's columns at the successor's row in the batch rather
    than at its place in the group (right only when a batch has one group)."""

    def broken(self: _Changed, rows: np.ndarray) -> np.ndarray:
        out = take_rows(self.parent_words, np.take(self.parents, rows))
        gid = self.run_group[np.searchsorted(self.starts, rows, side="right") - 1]
        for gi, g in enumerate(self.groups):
            sel = np.flatnonzero(gid == gi)
            for j, w in enumerate(g.words):
                out[sel, w] = np.take(g.cols[j], rows[sel], mode="clip")
        return out

    monkeypatch.setattr(_Changed, "take", broken)
    _seen, bad = _mismatches(Words3(), 1)
    assert bad > 0


def test_broken_keys_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant leaves the parent's terms of the changed words in the key."""
    from modelcheck.kernel import _HashParts

    def bases(self: _HashParts, changed: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        return self.fp0, self.fp1

    monkeypatch.setattr(_HashParts, "bases", bases)
    _seen, bad = _mismatches(Words3(), 1)
    assert bad > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=4), st.sampled_from([0, 1 << 15]),
       st.integers(0, 2**32 - 1))
def test_random_wide_specs_gather_the_whole_rows(cls: type[Spec], rows: int,
                                                 seed: int) -> None:
    spec = cls()
    if spec.layout.n_words < 3 or spec.properties:
        return  # (one or two words, or an action property: keyed per action, whole rows)
    _seen, bad = _mismatches(spec, seed, depth=5, family_rows=rows, narrow_min=2)
    assert bad == 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=4), st.sampled_from([1, 3, 1024]))
def test_random_wide_specs_explore_as_the_oracle(cls: type[Spec], batch: int) -> None:
    """Counts, depth and verdict of one to four words (past two, the words of the
    successors kept gathered from their parents' and the changed ones) are the
    oracle's, in batches of one state, a few and many."""
    spec = cls()
    r, o = explore(spec, batch_size=batch), brute_force_check(spec)
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)


def test_words3_explores_as_the_oracle() -> None:
    spec = Words3()
    for batch in (1, 7, 4096):
        r, o = explore(spec, batch_size=batch), brute_force_check(spec)
        assert r.fingerprint == "hash128"
        assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
            (o.status, o.distinct, o.depth, o.generated)

