"""The words of a flush's successors gathered when asked
(:class:`modelcheck.level.KeptWords`, ``LevelExpansion(lazy_words=True)``, the local
explorer's way): for any rows the consumer keeps they are the words the eager flush
yields, and they are the states of the yielded keys."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Int, Spec
from modelcheck.config import CheckConfig
from modelcheck.explorer import build_kernel
from modelcheck.level import KeptWords, LevelExpansion, initial_states
from modelcheck.store import dedupe_min, key_ints, take_rows


def _padded(bits: int) -> type[Spec]:
    """TwoPhase with ``bits`` bits of constant padding: three or more words, hashed
    keys, successors held as their parents and the words their actions changed."""
    from examples.tla.two_phase import TwoPhase

    pads = {f"pad{i}": Int(0, 2 ** min(60, bits - 60 * i) - 1)
            for i in range((bits + 59) // 60)}
    return type(f"TwoPhasePad{bits}", (TwoPhase,), pads)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bits=st.sampled_from([150, 200]), batch=st.integers(8, 40),
       seed=st.integers(0, 2**32 - 1))
def test_kept_words_are_the_eager_words(bits: int, batch: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = build_kernel(_padded(bits)(N=3), CheckConfig())
    assert not k.exact and k.layout.n_words >= 3
    fps, words, _ = initial_states(k)
    seen = set(key_ints(fps))
    lazy_seen = 0
    while len(fps):
        got: list[Any] = []
        for lazy in (False, True):
            lx = LevelExpansion(k, fps, words, expand=True, batch_size=batch,
                                flush_rows=0, lazy_words=lazy)
            got.append([(u.copy(), kmin.copy(), w) for u, kmin, w in lx.candidates()])
        eager, lazy_chunks = got
        assert len(eager) == len(lazy_chunks)
        for (u, kmin, w), (lu, lk, lw) in zip(eager, lazy_chunks, strict=True):
            assert np.array_equal(u, lu) and np.array_equal(kmin, lk)
            # the words are the yielded keys' states
            assert np.array_equal(k.layout.fingerprints(w), u)
            if not isinstance(lw, KeptWords):  # (successors held as words: gathered)
                assert np.array_equal(lw, w)
                continue
            assert len(lw) == len(u)
            assert np.array_equal(lw.all(), w)
            mask = rng.random(len(u)) < 0.4
            assert np.array_equal(lw.take(mask), w[mask])
            idx = np.flatnonzero(~mask)
            assert np.array_equal(lw.take(idx), w[idx])
            lazy_seen += 1
        if not eager:
            break
        u, _, rows = dedupe_min(np.concatenate([c[0] for c in eager]),
                                np.concatenate([c[1] for c in eager]))
        cw = np.concatenate([c[2] for c in eager])
        fresh = np.array([x not in seen for x in key_ints(u)], dtype=bool)
        seen.update(x for x, f in zip(key_ints(u), fresh) if f)
        fps, words = take_rows(u, fresh), take_rows(take_rows(cw, rows), fresh)
    assert lazy_seen
