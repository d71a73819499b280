"""Successors' 128-bit fingerprints computed from their parents' (the terms of the
changed words replaced, ``Kernel.incremental``) are the fingerprints of their packed
words (:func:`~modelcheck.layout.fingerprint128` of the whole state), on every path of
the kernel: one call per action instance, an action family over (instances x states),
a batch narrowed to the states an action's guard enables; and exploration with them
finds what the brute-force oracle finds."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Spec
from modelcheck.kernel import Kernel
from modelcheck.layout import fingerprint128
from tests.randspec import random_spec
from tests.scatter_spec import assert_explores_as_the_oracle, scatter_spec

BIG = 2**40


Scatter = scatter_spec(BIG)


def _batches(spec: Spec, kernel: Kernel, depth: int) -> list[np.ndarray]:
    """The first ``depth`` levels of ``spec`` (packed, de-duplicated by words)."""
    words = kernel.initial_packed()
    out = [words]
    for _ in range(depth):
        ex = kernel.expand(words)
        words = np.unique(ex.child_words, axis=0)
        if not len(words):
            break
        out.append(words)
    return out


def _check_kernel(spec: Spec, **kw: Any) -> int:
    """Every batch's successor fingerprints against the whole-state hash; the
    successors compared."""
    k = Kernel(spec, **kw)
    # (specs with an action property key each action's successors as they go)
    assert spec.layout.n_words > 2 and k.incremental == (not spec.properties)
    seen = 0
    for words in _batches(spec, k, 6):
        ex = k.expand(words)
        assert ex.child_fps.tolist() == fingerprint128(ex.child_words).tolist()
        seen += len(ex.child_fps)
    return seen


def test_every_kernel_path_matches_the_whole_state_hash() -> None:
    spec = Scatter()
    assert spec.layout.n_words == 4 and Kernel(spec).incremental
    # per instance, families over the grid, and batches narrowed from 4 states on
    for kw in ({"family_rows": 0}, {}, {"family_rows": 0, "narrow_min": 4},
               {"narrow_min": 4}):
        assert _check_kernel(spec, **kw) > 1000


def test_scatter_explores_as_the_oracle() -> None:
    assert_explores_as_the_oracle(Scatter(), "hash128")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=4), st.sampled_from([0, 1 << 15]))
def test_random_wide_specs_match_the_whole_state_hash(cls: type[Spec], rows: int) -> None:
    spec = cls()
    if spec.layout.n_words <= 2:
        return
    _check_kernel(spec, family_rows=rows, narrow_min=2)


def _per_action(spec: Spec, **kw: Any) -> Kernel:
    """A kernel that keys each action's successors as it goes, from their whole rows
    (the path before keys were computed once a batch, or stepped from their parents')."""
    k = Kernel(spec, **kw)
    k.deferred = k.incremental = k.linear = False
    return k


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=4), st.sampled_from([0, 1 << 15]), st.booleans())
def test_batch_keys_are_the_per_action_keys(cls: type[Spec], rows: int,
                                            keys_only: bool) -> None:
    """Two to four words: the successors, their keys, parents and actions of every batch
    are those of keying each action's successors on their own (and, for two words
    keyed in place from the words, ``keys_only``, the keys of the words)."""
    spec = cls()
    if spec.layout.n_words < 2:
        return
    k, ref = Kernel(spec, family_rows=rows), _per_action(spec, family_rows=rows)
    # (two words: keyed per action, whole rows, as the reference)
    assert k.deferred == (not spec.properties and spec.layout.n_words > 2)
    assert not ref.deferred
    for words in _batches(spec, ref, 5):
        a = k.expand(words, keys_only=keys_only)
        b = ref.expand(words, keys_only=keys_only)
        assert a.child_fps.tolist() == b.child_fps.tolist()
        assert a.parent_rows.tolist() == b.parent_rows.tolist()
        assert a.action_ids.tolist() == b.action_ids.tolist()
        assert a.child_words.tolist() == b.child_words.tolist()
        assert a.fired.tolist() == b.fired.tolist()
        assert a.outside == b.outside


def test_scatter_batches_are_the_per_action_ones() -> None:
    spec = Scatter()
    for kw in ({"family_rows": 0}, {}, {"narrow_min": 4}):
        k, ref = Kernel(spec, **kw), _per_action(spec, **kw)
        for words in _batches(spec, ref, 6):
            a, b = k.expand(words), ref.expand(words)
            assert a.child_fps.tolist() == b.child_fps.tolist()
            assert a.child_words.tolist() == b.child_words.tolist()
            assert a.parent_rows.tolist() == b.parent_rows.tolist()
