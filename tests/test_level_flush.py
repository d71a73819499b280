"""A flush of several batches' successors (:class:`modelcheck.level.LevelExpansion`
with ``flush_rows``, as the workers' range tasks expand) merges the batches' sorted runs
with :func:`modelcheck.store.merge_runs_min` when the keys are the states: each flush
yields what the stable-argsort de-duplication (:func:`modelcheck.store.dedupe_min`)
yields, on every level of random specs (hypothesis), and the union of the flushes is
the level's successors with each one's smallest (parent row, action)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randspec import random_spec

from modelcheck import Spec
from modelcheck import level as level_mod
from modelcheck.config import CheckConfig
from modelcheck.explorer import build_kernel
from modelcheck.level import LevelExpansion, initial_states
from modelcheck.store import dedupe_min


def _levels(cls: type[Spec], batch: int, flush: int, merge: bool
            ) -> list[list[tuple[np.ndarray, np.ndarray]]]:
    spec = cls()
    k = build_kernel(spec, CheckConfig())
    fps, words, _ = initial_states(k)
    seen = set(int(x) for x in fps)
    out = []
    with pytest.MonkeyPatch.context() as mp:
        if not merge:
            mp.setattr(level_mod, "merge_runs_min", lambda *a: None)
        while len(fps):
            lx = LevelExpansion(k, fps, None if k.exact else words, expand=True,
                                batch_size=batch, flush_rows=flush)
            chunks = [(u.copy(), kmin.copy()) for u, kmin, _ in lx.candidates()]
            out.append(chunks)
            if not chunks:
                break
            u, kmin, _ = dedupe_min(np.concatenate([c[0] for c in chunks]),
                                    np.concatenate([c[1] for c in chunks]))
            fresh = [i for i, x in enumerate(u.tolist()) if x not in seen]
            seen.update(int(u[i]) for i in fresh)
            fps = u[fresh]
            words = k.layout.words_of_keys(fps)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(), st.integers(1, 4), st.integers(2, 40))
def test_flushes_merged_as_the_argsort_dedupes(cls: type[Spec], batch: int,
                                               flush: int) -> None:
    merged = _levels(cls, batch, flush, True)
    plain = _levels(cls, batch, flush, False)
    assert len(merged) == len(plain)
    for a, b in zip(merged, plain, strict=True):
        assert len(a) == len(b)
        for (ua, ka), (ub, kb) in zip(a, b, strict=True):
            assert np.array_equal(ua, ub) and np.array_equal(ka, kb)


def test_the_merge_is_taken(monkeypatch: Any) -> None:
    """The merge runs on a level of several batches flushed at once (so the test
    above compares two ways, not one)."""
    from ladder_spec import Ladder

    calls: list[int] = []
    real = level_mod.merge_runs_min

    def spy(f: Any, k: Any) -> Any:
        calls.append(len(f))
        return real(f, k)

    k = build_kernel(Ladder(L=8, M=5), CheckConfig())
    assert k.exact
    fps = initial_states(k)[0]
    while len(fps) < 3:  # a level of at least three states
        fps = np.unique(np.concatenate([c[0] for c in LevelExpansion(
            k, fps, None, expand=True, batch_size=1 << 16).candidates()]))
    monkeypatch.setattr(level_mod, "merge_runs_min", spy)
    list(LevelExpansion(k, fps, None, expand=True, batch_size=1,
                        flush_rows=1 << 20).candidates())
    assert calls and calls[0] > 1
