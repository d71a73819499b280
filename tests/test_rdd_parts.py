"""The rdd engine's per-bucket task functions, without Spark, against a set oracle."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.shards.files import ShardConfig
from modelcheck.shards.worker import WorkerConfig
from spark_explore import rdd_engine
from spark_explore.rdd_engine import C, L, V

_U = np.uint64


def _cfg() -> ShardConfig:
    worker = WorkerConfig(target="x:Y", constants=(), invariants=None, check_deadlock=None,
                          symmetry=False, n_words=1, key_width=1)
    return ShardConfig(worker, "", 2)


def _block(fps: list[int], rng: np.random.Generator) -> tuple[Any, ...]:
    f = np.array(sorted(fps), dtype=_U)
    return (f, rng.integers(0, 1 << 40, len(f)).astype(_U),
            rng.integers(0, 5, len(f)).astype(np.int32), None)


@settings(max_examples=60, deadline=None)
@given(levels=st.lists(st.sets(st.integers(0, (1 << 64) - 1), max_size=12),
                       min_size=1, max_size=6),
       base=st.integers(-1, 5), again=st.booleans(),
       cands=st.lists(st.lists(st.integers(0, (1 << 64) - 1), max_size=8), max_size=3),
       seed=st.integers(0, 1 << 16))
def test_gathered_part_merges_the_visited_set(levels: list[set[int]], base: int, again: bool,
                                              cands: list[list[int]], seed: int) -> None:
    """A bucket's move to the driver: its visited set (a base block and the runs after
    it, level records at or before the base ignored: the base holds them) comes out as
    one sorted array of exactly the visited fingerprints; its input of the level (the
    candidates, or with ``again`` the committed level) unchanged."""
    rng = np.random.default_rng(seed)
    seen: set[int] = set()
    distinct: list[set[int]] = []
    for lv in levels:  # levels are disjoint
        distinct.append(lv - seen)
        seen |= lv
    depth = len(distinct) - 1 if again else len(distinct)
    base = min(base, depth - 1)
    blocks = [_block(list(lv), rng) for lv in distinct]
    recs: list[tuple[int, tuple[Any, ...]]] = []
    if base >= 0:
        recs.append((1, (V, np.array(sorted(set().union(*distinct[:base + 1])), _U))))
    recs += [(1, (L, blocks[d], d)) for d in range(max(0, base), len(blocks))]
    cand_blocks = [_block(c, rng) for c in cands]
    if not again:
        recs += [(1, (C, b)) for b in cand_blocks]
    order = rng.permutation(len(recs))
    out = list(rdd_engine._gathered_part(_cfg(), depth, base, again, 1,
                                         [recs[i] for i in order]))
    assert [(k, rec[0]) for k, rec in out] == [(1, V), (1, L if again else C)]
    got = out[0][1][1]
    want = sorted(set().union(*distinct[:depth + 1]) if again
                  else set().union(*distinct[:depth]) if depth else set())
    assert got.dtype == _U and got.tolist() == want
    block = out[1][1][1]
    if again:
        assert all(np.array_equal(a, b) for a, b in zip(block[:3], blocks[depth][:3]))
    else:
        pairs = sorted(zip(block[0].tolist(), block[1].tolist(), block[2].tolist()))
        want_c = sorted((f, p, a) for b in cand_blocks
                        for f, p, a in zip(b[0].tolist(), b[1].tolist(), b[2].tolist()))
        assert pairs == want_c
