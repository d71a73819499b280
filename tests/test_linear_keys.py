"""Exact keys of one or two words stepped from their parents' (``Kernel.linear``): a
successor's key is its parent's plus each changed cell's difference times the cell's
step (:meth:`~modelcheck.layout.Layout.key_steps`), on every path of the kernel (one
call per action instance, an action family over (instances x states) with per-row
cells, a batch narrowed to the states an action's guard enables). The oracles: the
keys of the successors' whole rows (the kernel keying each action's successors from
the words it copied), the brute-force BFS, and the scalar evaluator for the member
masks of ``MemberOf`` parameters past a set's first byte. A step without the second
word's seed is caught."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from evalcheck import assert_batch_matches_scalar
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples.tla.two_phase import TwoPhase
from modelcheck import Spec, explore
from modelcheck.kernel import Kernel
from modelcheck.layout import Layout
from tests.bruteforce import brute_force_check
from tests.randspec import random_spec
from tests.scatter_spec import assert_explores_as_the_oracle, kernel_levels, scatter_spec

BIG = 2**30


Scatter2 = scatter_spec(BIG)


def _whole_rows(spec: Spec, **kw: Any) -> Kernel:
    """A kernel that copies its successors' whole rows per action and keys them."""
    k = Kernel(spec, **kw)
    k.linear = False
    return k


def _compare(spec: Spec, depth: int = 6, **kw: Any) -> int:
    """Every batch of the first levels, keyed by stepping and from whole rows: the
    same keys (and they are the keys of the successors' words), words, parents,
    actions, counts; the successors compared."""
    k, ref = Kernel(spec, **kw), _whole_rows(spec, **kw)
    assert k.linear and spec.layout.n_words <= 2
    seen = 0
    for words in kernel_levels(ref, depth):
        for keys_only in (False, True):
            a = k.expand(words, keys_only=keys_only)
            b = ref.expand(words, keys_only=keys_only)
            assert a.child_fps.tolist() == b.child_fps.tolist()
            assert a.parent_rows.tolist() == b.parent_rows.tolist()
            assert a.action_ids.tolist() == b.action_ids.tolist()
            assert a.fired.tolist() == b.fired.tolist()
            assert a.deadlock_rows.tolist() == b.deadlock_rows.tolist()
            assert a.outside == b.outside
            assert len(a.child_words) == len(b.child_words)
            if not keys_only:
                assert a.child_words.tolist() == b.child_words.tolist()
                assert a.child_fps.tolist() == \
                    spec.layout.fingerprints(b.child_words).tolist()
                rows = np.arange(len(a.child_fps))[::3]
                assert a.successors.take(rows).tolist() == b.child_words[rows].tolist()
        seen += len(a.child_fps)
    return seen


def test_every_kernel_path_steps_the_keys_of_the_whole_rows() -> None:
    spec = Scatter2()
    assert spec.layout.n_words == 2
    for kw in ({"family_rows": 0}, {}, {"family_rows": 0, "narrow_min": 4},
               {"narrow_min": 4}):
        assert _compare(spec, **kw) > 1000


def test_scatter2_explores_as_the_oracle() -> None:
    assert_explores_as_the_oracle(Scatter2(), "exact")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=2), st.sampled_from([0, 1 << 15]))
def test_random_specs_step_the_keys_of_the_whole_rows(cls: type[Spec], rows: int) -> None:
    """One word (one variable) and two words (two 41-bit variables)."""
    _compare(cls(), depth=5, family_rows=rows, narrow_min=2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=2), st.sampled_from([1, 7]))
def test_random_specs_explore_as_the_oracle(cls: type[Spec], batch: int) -> None:
    spec = cls()
    r, o = explore(spec, batch_size=batch), brute_force_check(spec)
    assert (r.status, r.distinct_states, r.generated_states, r.depth) == \
        (o.status, o.distinct, o.generated, o.depth)


def test_a_step_without_the_seed_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mutant's steps of the second word's cells leave out its seed in column 0."""
    real = Layout.key_steps

    def broken(self: Layout) -> tuple[np.ndarray, np.ndarray]:
        c0, c1 = real(self)
        return np.where(c1 != 0, c1, c0), c1

    monkeypatch.setattr(Layout, "key_steps", broken)
    with pytest.raises(AssertionError):
        _compare(Scatter2(), family_rows=0)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_member_masks_past_the_first_byte_match_the_scalar_evaluator(data: Any) -> None:
    """TwoPhase with 12 resource managers: 14 messages, the members of the set variable
    over two bytes of its chunk (``Kernel._member_rows`` unpacks the bytes asked for)."""
    spec = TwoPhase(N=12)
    k = Kernel(spec, symmetry=False)
    cells = spec.layout.cells
    states = [[data.draw(st.integers(c.lo, c.hi)) for c in cells]
              for _ in range(data.draw(st.integers(2, 8)))]
    assert_batch_matches_scalar(k, states)
