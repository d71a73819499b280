"""The numpy primitives under both explorers, against plain-Python definitions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.shards import files as shards
from modelcheck.shards.worker import WorkerConfig
from modelcheck.store import (
    FingerprintSet,
    LevelStore,
    dedupe_min,
    dedupe_min_inverse,
    group_argmin,
    group_min_mask,
    key_int,
    key_ints,
    key_less,
    key_order,
    key_searchsorted,
    key_starts,
    keys_of,
)

small_u64 = st.lists(st.integers(0, 40), min_size=0, max_size=80)


#: two-word keys from few distinct column values, so that runs of equal column 0 with
#: different column 1 (the case the two-column sort re-sorts) are common
_COL = st.sampled_from([0, 1, 2, 2**63, 2**64 - 1])
two_word = st.lists(st.tuples(_COL, _COL).map(lambda t: (t[0] << 64) | t[1]), max_size=60)


@settings(max_examples=300, deadline=None)
@given(ints=two_word, q=two_word)
def test_two_word_keys_against_python_ints(ints: list[int], q: list[int]) -> None:
    """The key API on two-column keys is plain Python int order: sort (stable), runs,
    insertion points, comparison, conversion."""
    import bisect

    k = keys_of(ints, 2)
    assert k.shape == (len(ints), 2)
    assert key_ints(k) == ints and [key_int(k, i) for i in range(len(ints))] == ints
    order = key_order(k)
    assert order.tolist() == sorted(range(len(ints)), key=lambda i: (ints[i], i))
    sk = k[order]
    assert key_ints(sk[key_starts(sk)]) == sorted(set(ints))
    srt = sorted(ints)
    qk = keys_of(q, 2)
    assert key_searchsorted(sk, qk).tolist() == [bisect.bisect_left(srt, x) for x in q]
    m = min(len(ints), len(q))
    assert key_less(k[:m], qk[:m]).tolist() == [a < b for a, b in zip(ints, q)]
    u, kmin, rows = dedupe_min(k, np.arange(len(ints))[::-1].copy())
    assert key_ints(u) == sorted(set(ints))
    assert [ints[r] for r in rows.tolist()] == key_ints(u)


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(two_word, max_size=6), q=two_word, block=st.integers(1, 9))
def test_two_word_fingerprint_set_against_a_set(batches: list[list[int]], q: list[int],
                                                block: int) -> None:
    """Merging sorted batches in place, block by block, keeps the set sorted and exact."""
    fs = FingerprintSet(2)
    fs._BLOCK = block  # many blocks: the in-place merge moves keys across them
    ref: set[int] = set()
    for b in batches:
        new = sorted(set(b) - ref)
        fs.add_sorted(keys_of(new, 2))
        ref |= set(new)
        assert key_ints(fs._a) == sorted(ref)
        assert len(fs) == len(ref)
    assert fs.contains(keys_of(q, 2)).tolist() == [x in ref for x in q]


def test_level_store_paths_of_two_word_keys() -> None:
    levels = LevelStore()
    big = (5 << 64) | 7
    levels.append(keys_of([1, big], 2), np.full(2, 0xFFFFFFFF, dtype=np.uint32))
    levels.append(keys_of([3, (1 << 64) | 2, big + 1], 2), np.array([1, 0, 1]))
    assert levels.index_of(1, big + 1) == 2
    assert levels.path(1, levels.index_of(1, (1 << 64) | 2)) == [1, (1 << 64) | 2]
    with pytest.raises(KeyError):
        levels.index_of(1, big)


@settings(max_examples=200, deadline=None)
@given(fps=small_u64, seed=st.integers(0, 2**32 - 1))
def test_dedupe_min_keeps_smallest_key_per_fingerprint(fps: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 10, len(fps))
    f = np.array(fps, dtype=np.uint64)
    u, kmin, rows = dedupe_min(f, keys.astype(np.int64))
    assert u.tolist() == sorted(set(fps))
    for x, k, r in zip(u.tolist(), kmin.tolist(), rows.tolist(), strict=True):
        best = min(int(keys[i]) for i in range(len(fps)) if fps[i] == x)
        assert k == best
        assert r == min(i for i in range(len(fps)) if fps[i] == x)  # first row of x


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(st.lists(st.integers(0, 30), max_size=20), max_size=8),
       seed=st.integers(0, 2**32 - 1))
def test_dedupe_min_of_ordered_runs(runs: list[list[int]], seed: int) -> None:
    """Runs of distinct fingerprints whose keys exceed the runs' before (a level's
    batches): ``ordered_runs`` gives what the general reduction gives."""
    rng = np.random.default_rng(seed)
    fps, keys, base = [], [], 0
    for run in runs:
        u = sorted(set(run))
        k = base + rng.choice(1000, size=len(u), replace=False)
        fps.append(np.array(u, dtype=np.uint64))
        keys.append(k.astype(np.int64))
        base += 1000
    f = np.concatenate(fps) if fps else np.zeros(0, np.uint64)
    k = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    want = dedupe_min(f, k)
    got = dedupe_min(f, k, ordered_runs=True)
    for a, b in zip(want, got, strict=True):
        assert a.tolist() == b.tolist()


@settings(max_examples=200, deadline=None)
@given(fps=small_u64, seed=st.integers(0, 2**32 - 1), ordered=st.booleans())
def test_dedupe_min_inverse_names_each_rows_fingerprint(fps: list[int], seed: int,
                                                        ordered: bool) -> None:
    """The inverse maps every row to its fingerprint among the unique ones; the rest
    is :func:`dedupe_min`'s."""
    keys = np.random.default_rng(seed).integers(0, 10, len(fps)).astype(np.int64)
    f = np.array(fps, dtype=np.uint64)
    if ordered:  # one run of distinct fingerprints
        f = np.unique(f)
        keys = keys[:len(f)]
    u, kmin, rows, inv = dedupe_min_inverse(f, keys, ordered_runs=ordered)
    want = dedupe_min(f, keys, ordered_runs=ordered)
    for a, b in zip((u, kmin, rows), want, strict=True):
        assert a.tolist() == b.tolist()
    assert inv.dtype == np.int32
    assert u[inv].tolist() == f.tolist()


@settings(max_examples=100, deadline=None)
@given(levels=st.lists(st.sets(st.integers(0, 2**64 - 1), max_size=12), min_size=1,
                       max_size=6),
       data=st.data())
def test_level_store_hands_out_node_indices(levels: list[set[int]], data: st.DataObject
                                            ) -> None:
    """A state's node index is its place in breadth-first order (the levels before,
    then its row in its sorted level): against a dictionary of the levels' states;
    a fingerprint in no level up to ``depth`` raises ``KeyError``."""
    seen: set[int] = set()
    store = LevelStore()
    order: list[int] = []
    for lv in levels:
        fresh = sorted(lv - seen)
        seen |= set(fresh)
        order += fresh
        store.append(np.array(fresh, dtype=np.uint64), np.zeros(len(fresh), np.uint32))
    node = {fp: i for i, fp in enumerate(order)}
    depth = data.draw(st.integers(0, len(levels) - 1))
    known = order[:store.offsets[depth + 1]]
    if not known:
        return
    q = sorted(data.draw(st.sets(st.sampled_from(known), max_size=20)))
    got = store.nodes(np.array(q, dtype=np.uint64), depth)
    assert got.dtype == np.int32 and got.tolist() == [node[f] for f in q]
    later = order[store.offsets[depth + 1]:]
    if later:
        with pytest.raises(KeyError):
            store.nodes(np.array(sorted(q + later[:1]), dtype=np.uint64), depth)
    store.pop()  # a level that could not be stored in full
    assert store.offsets == list(np.cumsum([0] + [len(lv.fps) for lv in store.levels]))


@settings(max_examples=200, deadline=None)
@given(sizes=st.one_of(st.lists(st.integers(1, 5), min_size=1, max_size=30),
                       st.lists(st.integers(1, 2), min_size=1, max_size=30)),
       seed=st.integers(0, 2**32 - 1))
def test_group_argmin(sizes: list[int], seed: int) -> None:
    """Both group minima (positions, and the mask the shard commit uses) against a
    plain-Python scan, for groups of any size and for the pairs-only case (two
    producers' successors), which takes a path of its own in the mask."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 6, sum(sizes)).astype(np.uint64)
    first = np.zeros(sum(sizes), dtype=bool)
    first[np.cumsum([0, *sizes[:-1]])] = True
    got = group_argmin(first, values).tolist()
    want, start = [], 0
    for n in sizes:
        seg = values[start:start + n].tolist()
        want.append(start + seg.index(min(seg)))
        start += n
    assert got == want
    assert np.flatnonzero(group_min_mask(first, values)).tolist() == want


def test_fingerprint_set_membership() -> None:
    s = FingerprintSet()
    s.add_sorted(np.array([3, 9, 27], dtype=np.uint64))
    s.add_sorted(np.array([1, 10], dtype=np.uint64))
    got = s.contains(np.array([1, 2, 3, 10, 11, 27, 28], dtype=np.uint64))
    assert got.tolist() == [True, False, True, True, False, True, False]


def test_buckets_are_fixed_arithmetic_and_balanced() -> None:
    fps = np.arange(100_000, dtype=np.uint64)  # packed states: low bits vary little
    b = shards.bucket_of(fps, 4)
    assert b.min() == 0 and b.max() == 3
    counts = np.bincount(b, minlength=4)
    assert counts.min() > 0.95 * len(fps) / 4
    # The mapping is a function of the value alone (same on every process and run).
    assert shards.bucket_of(np.array([0, 1, 2**64 - 1], dtype=np.uint64), 7).tolist() == \
        [int(shards.bucket_of(np.array([x], dtype=np.uint64), 7)[0]) for x in (0, 1, 2**64 - 1)]


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.integers(0, 2**64 - 1), max_size=40),
       k=st.integers(1, 2**20), rows=st.sampled_from([1, 3, 7, 1 << 15]))
def test_bucket_of_is_splitmix64_then_a_range_map(values: list[int], k: int,
                                                   rows: int) -> None:
    """Against the finaliser written out in Python integers, in slices of any size (the
    bucket of a fingerprint must never change: checkpoints hold the buckets' files)."""
    mask = (1 << 64) - 1

    def bucket(x: int) -> int:
        x ^= x >> 30
        x = (x * 0xBF58476D1CE4E5B9) & mask
        x ^= x >> 27
        x = (x * 0x94D049BB133111EB) & mask
        x ^= x >> 31
        return ((x >> 32) * k) >> 32

    mp = pytest.MonkeyPatch()
    mp.setattr(shards, "_MIX_ROWS", rows)
    try:
        got = shards.bucket_of(np.array(values, dtype=np.uint64), k).tolist()
    finally:
        mp.undo()
    assert got == [bucket(x) for x in values]


def test_two_column_keys_go_to_the_bucket_of_their_column_0() -> None:
    """A two-column key's bucket is that of its column 0 (which mixes both words of a
    two-word state), whatever its column 1."""
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**63, (1000, 2)).astype(np.uint64)
    keys[500:, 0] = keys[:500, 0]  # equal column 0, other column 1
    b = shards.bucket_of(keys, 5)
    assert b.tolist() == shards.bucket_of(np.ascontiguousarray(keys[:, 0]), 5).tolist()
    assert (b[500:] == b[:500]).all()


def test_candidate_files_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    fps = np.unique(rng.integers(0, 2**63, 1000).astype(np.uint64))
    parents = rng.integers(0, 2**63, len(fps)).astype(np.uint64)
    acts = rng.integers(0, 5, len(fps)).astype(np.int32)
    shards.write_candidates(tmp_path, 3, 1, 5, fps, parents, acts, None)
    d = shards.cand_dir(tmp_path, 3)
    off = np.load(d / "f0001.off.npy")
    b = shards.bucket_of(fps, 5)
    for k in range(5):
        got = shards._read_rows(d / "f0001.fp.npy", int(off[k]), int(off[k + 1]))
        assert got.tolist() == fps[b == k].tolist()  # fingerprint order kept per bucket
        par = shards._read_rows(d / "f0001.parent.npy", int(off[k]), int(off[k + 1]))
        assert par.tolist() == parents[b == k].tolist()


@settings(max_examples=150, deadline=None)
@given(seen=st.sets(st.integers(0, 2**64 - 1), max_size=60),
       cuts=st.lists(st.integers(0, 60), max_size=4),
       fresh=st.sets(st.integers(0, 2**64 - 1), max_size=30),
       share=st.integers(0, 30), merge=st.sampled_from([0, 8, 10**6]),
       width=st.sampled_from([1, 2]))
def test_not_in_against_a_set(seen: set[int], cuts: list[int], fresh: set[int],
                              share: int, merge: int, width: int) -> None:
    """The visited check against disjoint sorted runs, merged or binary-searched
    (``MERGE_SEARCH`` 0 always searches, 10**6 always merges): exactly the queries in
    none of the runs, for keys of one column and of two (:func:`_wide`)."""
    if width == 2:
        seen, fresh = {_wide(x) for x in seen}, {_wide(x) for x in fresh}
    members = list(seen)  # any order: the runs split the set anyhow
    bounds = [0, *sorted(min(c, len(members)) for c in cuts), len(members)]
    runs = [keys_of(sorted(members[a:b]), width)
            for a, b in zip(bounds, bounds[1:], strict=False)]
    queries = sorted(fresh | set(sorted(seen)[:share]))
    mp = pytest.MonkeyPatch()
    mp.setattr(shards, "MERGE_SEARCH", merge)
    try:
        got = shards._not_in(runs, keys_of(queries, width))
    finally:
        mp.undo()
    assert got.tolist() == [q not in seen for q in queries]


def _wide(x: int) -> int:
    """A two-column key (as an int) for ``x``: column 0 shared by groups of three
    (ties that column 1 decides), column 1 scrambled (out of the order of ``x``)."""
    return ((x // 3) << 64) | ((x * 0x9E3779B97F4A7C15 + 17) & ((1 << 64) - 1))


@pytest.mark.parametrize("width", [1, 2])
def test_shard_dedupe_picks_smallest_parent(width: int) -> None:
    wide = _wide if width == 2 else int
    kids = [wide(x) for x in (5, 7, 9, 5, 9, 5, 5)]  # three producers' runs
    dads = [wide(x) for x in (40, 41, 42, 30, 50, 35, 31)]  # (30 and 31: one column 0)
    acts = np.array([1, 2, 3, 4, 5, 6, 7], dtype=np.int32)
    fps, parents = keys_of(kids, width), keys_of(dads, width)
    order = key_order(fps)  # each producer's run is sorted
    f, p, a, _ = shards._dedupe(fps[order], parents[order], acts[order], None)
    want: dict[int, tuple[int, int]] = {}
    for c, d, x in zip(kids, dads, acts.tolist(), strict=True):
        want[c] = min((d, x), want.get(c, (d, x)))
    assert key_ints(f) == sorted(want)
    assert list(zip(key_ints(p), a.tolist())) == [want[k] for k in sorted(want)]


@settings(max_examples=60, deadline=None)
@given(levels=st.lists(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 50)),
                                max_size=60), min_size=1, max_size=12),
       buckets=st.integers(1, 3), rebase=st.sampled_from([0.0, 0.5, 100.0]),
       width=st.sampled_from([1, 2]))
def test_shard_commits_against_a_set(tmp_path_factory: pytest.TempPathFactory,
                                     levels: list[list[tuple[int, int]]], buckets: int,
                                     rebase: float, width: int) -> None:
    """Bucket commits, level after level (the visited shard as a base and the level runs
    since, whatever the rebase share), against a Python set: each level holds exactly
    the states not seen before, each with its smallest parent; the shard's runs are
    disjoint and hold the states seen so far, and every bucket rewrites its base at the
    levels bucket 0's rule says. Transitions come from one producer or from every
    bucket's, as when a level ran in the driver or as Spark tasks. Keys of one column
    and of two (:func:`_wide`)."""
    root = tmp_path_factory.mktemp("shards")
    cfg = shards.ShardConfig(_worker(width), str(root), buckets)
    if width == 2:
        levels = [[(_wide(c), _wide(p)) for c, p in trans] for trans in levels]
    mp = pytest.MonkeyPatch()
    mp.setattr(shards, "REBASE", rebase)
    try:
        seen: set[int] = set()
        for depth, trans in enumerate(levels):
            fps = keys_of([c for c, _ in trans], width)
            parents = keys_of([p for _, p in trans], width)
            acts = np.zeros(len(fps), dtype=np.int32)
            src = depth - 1 if depth else shards.INIT
            producers = 1 if depth == 0 or depth % 2 else buckets
            for j in range(producers):
                part = slice(j, None, producers)
                order = key_order(fps[part])
                shards.write_candidates(root, src, j, buckets, fps[part][order],
                                        parents[part][order], acts[part][order], None)
            want = {}
            for c, p in trans:
                if c not in seen:
                    want[c] = min(p, want.get(c, p))
            got: dict[int, int] = {}
            for b in range(buckets):
                f, p, _, _ = shards._commit(cfg, depth, b, producers)
                assert f.ndim == p.ndim == width and key_ints(f) == sorted(key_ints(f))
                got.update(zip(key_ints(f), key_ints(p), strict=True))
                shard = [key_ints(r) for r in shards.load_visited(root, depth, b)]
                assert sum(len(r) for r in shard) == len({x for r in shard for x in r})
                assert all(r == sorted(r) for r in shard)
            assert got == want
            if depth:
                assert shards.producers_of(root, src, buckets) == producers
                # every bucket rewrites its base at the same levels (bucket 0's rule)
                due = shards.rebase_due(root, depth)
                for b in range(buckets):
                    base_now = shards.visited_files(root, depth, b)[0]
                    base_before = shards.visited_files(root, depth - 1, b)[0]
                    assert base_now.samefile(base_before) is not due
            seen |= set(want)
            runs = [shards.load_visited(root, depth, b) for b in range(buckets)]
            assert sorted(x for r in runs for a in r for x in key_ints(a)) == sorted(seen)
            # as the engine tidies: what the next level does not read becomes spares
            shards.retire(root, [shards.visited_dir(root, depth - 1),
                                 shards.cand_dir(root, src)], depth)
    finally:
        mp.undo()


@pytest.mark.parametrize("form", ["delta", "one run"])
def test_shard_commit_reads_older_visited_shards(tmp_path: Path, form: str) -> None:
    """A run directory written before the shard became ``base`` and level runs (a resumed
    run): its ``delta`` run, or its single run, is still seen, and the next level
    writes the shard in the current form, all in ``base``."""
    root = tmp_path
    cfg = shards.ShardConfig(_worker(), str(root), 1)
    v = shards.visited_dir(root, 0)
    v.mkdir(parents=True)
    if form == "delta":
        np.save(v / "b0000.base.npy", np.array([2, 4], dtype=np.uint64))
        np.save(v / "b0000.delta.npy", np.array([3, 9], dtype=np.uint64))
    else:
        np.save(v / "b0000.npy", np.array([2, 3, 4, 9], dtype=np.uint64))
    fps = np.array([1, 3, 5, 9], dtype=np.uint64)
    shards.write_candidates(root, 0, 0, 1, fps, np.zeros(4, np.uint64),
                            np.zeros(4, np.int32), None)
    assert shards.rebase_due(root, 1)
    f, _, _, _ = shards._commit(cfg, 1, 0, 1)
    assert f.tolist() == [1, 5]
    base, runs, current = shards.visited_runs(root, 1, 0)
    assert current and runs == []
    assert np.load(base).tolist() == [1, 2, 3, 4, 5, 9]


@settings(max_examples=60, deadline=None)
@given(levels=st.lists(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 400),
                                          st.integers(0, 140)), max_size=60),
                       min_size=1, max_size=8),
       buckets=st.integers(1, 3), width=st.sampled_from([1, 2]))
def test_shard_commits_of_parent_rows(tmp_path_factory: pytest.TempPathFactory,
                                      levels: list[list[tuple[int, int, int]]],
                                      buckets: int, width: int) -> None:
    """Transitions written as the tasks write them (each parent named by its row in the
    producer's part of the level before, action ids in the narrowest type) commit as a
    Python set and dict say: each level holds the states not seen before, each with the
    smallest (parent fingerprint, action id) among the transitions into it. The files
    no longer read are retired level by level, so later writes overwrite them. Keys of
    one column and of two (:func:`_wide`)."""
    root = tmp_path_factory.mktemp("rows")
    cfg = shards.ShardConfig(_worker(width), str(root), buckets)
    wide = _wide if width == 2 else int
    seen: set[int] = set()
    init = keys_of(sorted([wide(0), wide(1)]), width)
    shards.write_candidates(root, shards.INIT, 0, buckets, init, np.zeros_like(init),
                            np.full(2, -1, np.int32), None)
    prev = [shards._commit(cfg, 0, b)[0] for b in range(buckets)]
    seen |= {wide(0), wide(1)}
    for depth, trans in enumerate(levels, start=1):
        shards.retire(root, [shards.visited_dir(root, depth - 2),
                             shards.cand_dir(root, depth - 2)], depth)
        want: dict[int, tuple[int, int]] = {}
        for j in range(buckets):
            best: dict[int, tuple[int, int]] = {}  # a producer keeps one row per child
            for c, p, a in trans:
                if p % buckets != j or len(prev[j]) == 0:
                    continue
                c = wide(c)
                row = p % len(prev[j])
                best[c] = min((row, a), best.get(c, (row, a)))
                if c not in seen:
                    key = (key_int(prev[j], row), a)
                    want[c] = min(key, want.get(c, key))
            kids = keys_of(sorted(best), width)
            rows = np.array([best[c][0] for c in sorted(best)], dtype=np.int64)
            acts = np.array([best[c][1] for c in sorted(best)], dtype=np.int64)
            shards.write_candidate_rows(root, depth - 1, j, buckets, kids, rows, acts, None)
        got: dict[int, tuple[int, int]] = {}
        prev = []
        for b in range(buckets):
            f, p, a, _ = shards._commit(cfg, depth, b)
            assert a.dtype == np.int32
            got.update((x, (y, int(z))) for x, y, z in zip(key_ints(f), key_ints(p), a,
                                                           strict=True))
            prev.append(f)
        assert got == want
        seen |= set(want)


def _worker(width: int = 1) -> WorkerConfig:
    return WorkerConfig(target="x:Y", constants=(), invariants=None, check_deadlock=None,
                        symmetry=False, n_words=width, key_width=width)


def test_read_rows_into_a_buffer_and_a_truncated_file(tmp_path: Path) -> None:
    """Rows of a 2-D ``.npy`` file read alone and into a slice of a larger array; a file
    cut short names itself instead of returning fewer rows."""
    a = np.arange(30, dtype=np.uint64).reshape(10, 3)
    path = tmp_path / "a.npy"
    shards.write_array(path, a)
    assert shards._read_rows(path, 2, 5).tolist() == a[2:5].tolist()
    out = np.zeros((6, 3), dtype=np.uint64)
    shards._read_rows(path, 7, 10, out=out[1:4])
    assert out[1:4].tolist() == a[7:10].tolist() and out[0].sum() == out[4:].sum() == 0
    with pytest.raises(ValueError, match="do not fit"):
        shards._read_rows(path, 7, 10, out=np.zeros((3, 3), dtype=np.int64))
    data = path.read_bytes()
    path.write_bytes(data[:-8])
    with pytest.raises(OSError, match="truncated"):
        shards._read_rows(path, 8, 10)


def test_retired_files_are_overwritten_by_later_writes(tmp_path: Path) -> None:
    """Retiring moves a dead directory's files into the spare pool (files also linked
    from a live directory are only unlinked); a later write takes a spare's inode
    (its page-cache pages) and leaves exactly its own bytes; spares of an earlier
    retirement that no write took are deleted by the next."""
    root = tmp_path
    shards.write_array(root / "C00001" / "f0000.fp.npy", np.arange(1000, dtype=np.uint64))
    shards.write_array(root / "C00001" / "f0000.off.npy", np.arange(3, dtype=np.int64))
    shards.write_array(root / "V00001" / "b0000.base.npy", np.arange(50, dtype=np.uint64))
    (root / "C00001" / ".f0000.act.npy.1.tmp").write_bytes(b"half")  # a writer's leftover
    shards.link_or_copy(root / "V00001" / "b0000.base.npy", root / "V00002" / "b0000.base.npy")
    inodes = {p.name: p.stat().st_ino for p in (root / "C00001").iterdir()}
    shards.retire(root, [root / "C00001", root / "V00001"], 2)
    assert not (root / "C00001").exists() and not (root / "V00001").exists()
    spare = root / shards.SPARE
    assert sorted(p.name for p in spare.iterdir()) == ["g00002.C00001.f0000.fp.npy",
                                                       "g00002.C00001.f0000.off.npy"]
    live = np.load(root / "V00002" / "b0000.base.npy")
    assert live.tolist() == list(range(50))  # the shared base is untouched
    a = np.arange(700, dtype=np.uint64) * 3
    out = root / "L00003" / "b0000.fp.npy"
    shards.write_array(out, a, spare)
    assert out.stat().st_ino == inodes["f0000.fp.npy"]  # the smallest spare that fits
    assert np.load(out).tolist() == a.tolist()
    assert out.stat().st_size == 128 + a.nbytes  # the spare's longer tail is cut
    assert [p.name for p in spare.iterdir()] == ["g00002.C00001.f0000.off.npy"]
    b = np.arange(5000, dtype=np.uint64)  # larger than any spare: the largest grows
    shards.write_array(root / "L00003" / "b0001.fp.npy", b, spare)
    assert np.load(root / "L00003" / "b0001.fp.npy").tolist() == b.tolist()
    assert list(spare.iterdir()) == []
    shards.write_array(root / "C00004" / "f0000.fp.npy", a)
    shards.retire(root, [root / "C00004"], 5)
    shards.retire(root, [], 6)  # not taken since the retirement of generation 5
    assert list(spare.iterdir()) == []
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []


def test_a_written_file_is_never_replaced(tmp_path: Path) -> None:
    """The first complete write of a path stands: a later writer of the same path (a
    re-run task writes the same bytes; an attempt that outlived its job may have read
    recycled inputs) leaves it as it was, and its own file goes to the spares."""
    path = tmp_path / "L00001" / "b0000.fp.npy"
    spare = tmp_path / shards.SPARE
    spare.mkdir()
    shards.write_array(path, np.arange(10, dtype=np.uint64), spare)
    ino = path.stat().st_ino
    shards.write_array(path, np.arange(10, dtype=np.uint64) + 99, spare)
    assert np.load(path).tolist() == list(range(10)) and path.stat().st_ino == ino
    assert len(list(spare.iterdir())) == 1  # the loser's file, for the next write
    assert [p.name for p in path.parent.iterdir()] == ["b0000.fp.npy"]
    dst = tmp_path / "V00002" / "b0000.base.npy"
    shards.write_array(dst, np.arange(3, dtype=np.uint64))
    shards.link_or_copy(path, dst)
    assert np.load(dst).tolist() == [0, 1, 2]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bits=st.sampled_from([1, 12, 40, 51, 52, 64]),
       runs=st.integers(1, 40), n=st.integers(4096, 9000))
def test_packed_argsort_of_large_batches_against_a_stable_sort(seed: int, bits: int,
                                                              runs: int, n: int) -> None:
    """Batches of 4,096 rows or more whose keys and row numbers fit in one word are
    sorted as packed (key, row) words: the order is the stable argsort's (equal keys in
    row order) and :func:`dedupe_min` keeps, per fingerprint, its first row and smallest
    key, as a dict over the rows does; wider keys take the argsort, with the same
    result. Keys come as sorted runs with repeats, as a batch's successors do."""
    from modelcheck.store import _argsort1

    rng = np.random.default_rng(seed)
    top = (1 << bits) - 1
    pool = rng.integers(0, top, size=max(1, n // 3), dtype=np.uint64, endpoint=True)
    parts = np.array_split(rng.choice(pool, size=n), runs)
    fps = np.concatenate([np.sort(p) for p in parts])
    order, sf = _argsort1(fps)
    want = np.argsort(fps, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(sf, fps[want])
    keys = rng.integers(0, 1 << 40, size=n)
    oracle: dict[int, tuple[int, int]] = {}
    for row, (f, k) in enumerate(zip(fps.tolist(), keys.tolist())):
        first, kmin = oracle.get(f, (row, k))
        oracle[f] = (first, min(kmin, k))
    u, kmin, rows = dedupe_min(fps, keys)
    assert u.tolist() == sorted(oracle)
    assert [(int(r), int(k)) for r, k in zip(rows, kmin)] == [oracle[f] for f in sorted(oracle)]


@settings(max_examples=300, deadline=None)
@given(fbits=st.sampled_from([1, 7, 30, 44, 57, 63, 64]),
       kbits=st.sampled_from([1, 5, 20, 33, 48, 63]), data=st.data())
def test_merge_runs_min_against_a_dict(fbits: int, kbits: int, data: st.DataObject) -> None:
    """:func:`merge_runs_min` of sorted runs of distinct fingerprints: each fingerprint
    once, in order, with the smallest of its keys, as a dict over the runs says; None
    exactly when more than ``MERGE_BUCKET_BITS`` bits would pick the bucket or the
    buckets would hold fewer than ``_MERGE_PER_BUCKET`` rows on average (set to 0 here,
    so that small runs reach the buckets). Fingerprints
    sit on and beside the bucket cuts (``j << low``, one below) and at the widths'
    limits, where an off-by-one in the buckets' bounds or the packing shows."""
    from modelcheck import store
    from modelcheck.store import MERGE_BUCKET_BITS, merge_runs_min

    ftop, ktop = (1 << fbits) - 1, (1 << kbits) - 1
    edge = []
    for t in range(1, 18):
        low = max(0, fbits - t)
        for j in (1, 2, (1 << min(t, fbits)) - 1):
            edge += [min(ftop, j << low), max(0, (j << low) - 1)]
    fp = st.one_of(st.sampled_from([0, ftop, *edge]), st.integers(0, ftop))
    runs = data.draw(st.lists(st.sets(fp, max_size=25), min_size=1, max_size=6))
    fps_runs = [np.array(sorted(r), dtype=np.uint64) for r in runs]
    key = st.one_of(st.sampled_from([0, ktop]), st.integers(0, ktop))
    key_runs = [np.array(data.draw(st.lists(key, min_size=len(r), max_size=len(r))),
                         dtype=np.int64) for r in runs]
    oracle: dict[int, int] = {}
    for f, k in zip(fps_runs, key_runs):
        for a, b in zip(f.tolist(), k.tolist()):
            oracle[a] = min(oracle.get(a, b), b)
    kept = store._MERGE_PER_BUCKET
    store._MERGE_PER_BUCKET = 0
    try:
        got = merge_runs_min(fps_runs, key_runs)
    finally:
        store._MERGE_PER_BUCKET = kept
    few = merge_runs_min(fps_runs, key_runs)  # with the real floor of rows a bucket
    if not oracle:
        assert got is None
        return
    used_f = max(oracle).bit_length() or 1
    used_k = max(max(k.tolist()) for k in key_runs if len(k)).bit_length() or 1
    if used_f + used_k - 64 > MERGE_BUCKET_BITS:
        assert got is None
        return
    assert got is not None
    buckets = 1 << max(0, used_f + used_k - 64)
    n = sum(len(f) for f in fps_runs)
    if buckets > 1 and n < kept * buckets:
        assert few is None
    else:
        assert few is not None and few[0].tolist() == got[0].tolist() \
            and few[1].tolist() == got[1].tolist()
    u, kmin = got
    assert u.dtype == np.uint64 and kmin.dtype == np.int64
    assert u.tolist() == sorted(oracle)
    assert kmin.tolist() == [oracle[f] for f in sorted(oracle)]
    assert all(len(f) == len(r) for f, r in zip(fps_runs, runs))  # the runs are kept


def test_merge_runs_min_declines_negative_and_two_column_keys() -> None:
    """Negative keys and two-column fingerprints are left to :func:`dedupe_min`."""
    from modelcheck.store import merge_runs_min

    one = np.array([1, 2], dtype=np.uint64)
    assert merge_runs_min([one, one], [np.array([0, -1]), np.array([2, 3])]) is None
    two = keys_of([1, 2], 2)
    assert merge_runs_min([two, two], [np.array([0, 1]), np.array([2, 3])]) is None


def test_kept_row_numbers_are_arange_and_read_only() -> None:
    """The row numbers kept between batches are ``np.arange(n)`` whatever the order of
    the sizes asked (growing past the kept array, shrinking, past the most kept), and
    cannot be written through."""
    from modelcheck import store

    for n in (5, 3, 5000, store._ROWS_KEPT + 3, 10, store._ROWS_KEPT, 0):
        rows = store._rows(n)
        assert rows.dtype == np.uint64 and np.array_equal(rows, np.arange(n))
    with pytest.raises(ValueError):
        store._rows(4)[0] = 1


@settings(max_examples=300, deadline=None)
@given(batches=st.lists(st.sets(st.integers(0, 60), max_size=12), max_size=5),
       q=st.lists(st.one_of(st.integers(0, 64), st.sampled_from([0, 2**64 - 1])),
                  max_size=30))
def test_one_word_fingerprint_set_against_a_set(batches: list[set[int]], q: list[int]
                                                ) -> None:
    """Membership in a one-column set, searched among the keys between the smallest and
    the largest asked only, is a Python set's, for queries in any order, repeated, below
    and beyond every key, and equal to the first or the last one."""
    s, seen = FingerprintSet(), set()
    for b in batches:
        fresh = sorted(b - seen)
        s.add_sorted(np.array(fresh, dtype=np.uint64))
        seen |= set(fresh)
        ends = [min(seen), max(seen)] if seen else []
        for ask in (q, q + ends):
            got = s.contains(np.array(ask, dtype=np.uint64)).tolist()
            assert got == [x in seen for x in ask]


def _wide_batch(rng: np.random.Generator, n: int, form: str) -> np.ndarray:
    """``n`` two-column keys in no order, with repeats (a batch's successors): random
    128-bit keys; keys whose column 0 spans few bits; or keys that share column 0's top
    bits but differ below them and in column 1 (the ties a packed sort leaves)."""
    m = max(1, n // 3)
    if form == "hashed":
        pool = rng.integers(0, 2**64 - 1, size=(m, 2), dtype=np.uint64, endpoint=True)
    elif form == "narrow":
        pool = np.stack([rng.integers(5, 5 + 2**20, m).astype(np.uint64),
                         rng.integers(0, 4, m).astype(np.uint64)], axis=1)
    else:
        top = rng.integers(0, 2**64 - 1, size=max(1, m // 50), dtype=np.uint64, endpoint=True)
        col0 = rng.choice(top, m) & np.uint64(~0xFFFFFF & (2**64 - 1))
        col0 |= rng.integers(0, 4, m).astype(np.uint64) << np.uint64(rng.integers(0, 24))
        pool = np.stack([col0, rng.integers(0, 3, m).astype(np.uint64)], axis=1)
    return np.ascontiguousarray(pool[rng.integers(0, m, n)])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4096, 12000),
       form=st.sampled_from(["hashed", "narrow", "top ties"]), min_rows=st.booleans())
def test_two_column_dedupe_of_unordered_batches_against_a_dict(seed: int, n: int, form: str,
                                                               min_rows: bool) -> None:
    """Two-column keys of a batch in no order (hashed states, 4,096 rows or more: sorted
    as packed words) sort as Python ints with equal keys in row order, and
    :func:`dedupe_min` keeps per key its smallest key and its first row (with
    ``min_rows``, the first row of its smallest key), as a dict over the rows does."""
    rng = np.random.default_rng(seed)
    fps = _wide_batch(rng, n, form)
    ints = key_ints(fps)
    assert key_order(fps).tolist() == sorted(range(n), key=lambda i: (ints[i], i))
    keys = rng.integers(0, 50, size=n).astype(np.int64)
    oracle: dict[int, tuple[int, int, int]] = {}  # key -> (first row, min key, its row)
    for row, (f, k) in enumerate(zip(ints, keys.tolist())):
        first, kmin, krow = oracle.get(f, (row, k, row))
        oracle[f] = (first, kmin, krow) if kmin <= k else (first, k, row)
    u, kmin, rows, inv = dedupe_min_inverse(fps, keys, min_rows=min_rows)
    assert key_ints(u) == sorted(oracle)
    want = [oracle[f] for f in sorted(oracle)]
    assert kmin.tolist() == [k for _, k, _ in want]
    assert rows.tolist() == [r if min_rows else first for first, _, r in want]
    assert key_ints(u[inv]) == ints


@settings(max_examples=300, deadline=None)
@given(fbits=st.sampled_from([1, 7, 30, 44, 57, 63, 64]),
       base=st.sampled_from([0, 1, 12345, 2**40 + 3, -5, 2**62]), data=st.data())
def test_dedupe_min_packed_against_a_dict(fbits: int, base: int, data: st.DataObject) -> None:
    """:func:`dedupe_min_packed` of fingerprints in any order (repeated) with their keys
    (a batch's: ``base`` plus a small span, or any ``int64``): each fingerprint once, in
    order, with its smallest key, as a dict says; None exactly when the fingerprints'
    bits and the keys' span exceed 64 (the list then untouched), the list emptied
    otherwise. Runs longer than a slice of the in-place compaction are drawn too."""
    from modelcheck import store
    from modelcheck.store import dedupe_min_packed

    ftop = (1 << fbits) - 1
    fp = st.one_of(st.sampled_from([0, ftop, ftop >> 1]), st.integers(0, ftop))
    fps = data.draw(st.lists(fp, min_size=1, max_size=60))
    fps = fps * data.draw(st.sampled_from([1, 3]))  # repeats, in runs
    span = data.draw(st.sampled_from([0, 1, 1000, 2**20, 2**62]))
    keys = [base + data.draw(st.integers(0, min(span, 2**63 - 1 - base))) for _ in fps]
    oracle: dict[int, int] = {}
    for a, b in zip(fps, keys):
        oracle[a] = min(oracle.get(a, b), b)
    f = np.array(fps, dtype=np.uint64)
    k = np.array(keys, dtype=np.int64)
    held = [f, k]
    kept = store._PACKED_STEP
    store._PACKED_STEP = data.draw(st.sampled_from([1, 2, 7, 1 << 16]))
    try:
        got = dedupe_min_packed(held)
    finally:
        store._PACKED_STEP = kept
    fit = max(fps).bit_length() + max(1, (max(keys) - min(keys)).bit_length()) <= 64
    if not fit:
        assert got is None and held[0] is f and held[1] is k
        return
    assert got is not None and held == []
    u, kmin = got
    assert u.dtype == np.uint64 and kmin.dtype == np.int64
    assert u.tolist() == sorted(oracle)
    assert kmin.tolist() == [oracle[x] for x in sorted(oracle)]


def test_packed_dedupe_peaks_at_one_word_a_row() -> None:
    """Handed the only references to a batch's fingerprints and keys, the packed
    de-duplication peaks at one word a row above them (they are freed before the sort,
    and the unique words are moved to the front in place); :func:`dedupe_min`, which
    also finds the rows, takes three and more. Measured with ``tracemalloc``."""
    import tracemalloc

    from modelcheck.store import dedupe_min_packed

    n = 400_000
    rng = np.random.default_rng(3)

    def batch() -> list[np.ndarray]:
        fps = rng.integers(0, 1 << 40, size=n).astype(np.uint64)
        fps[n // 2:] = fps[: n // 2]  # every fingerprint twice
        return [fps, rng.permutation(n).astype(np.int64) + (1 << 30)]

    peaks = []
    for packed in (True, False):
        tracemalloc.start()  # (before the inputs: their freeing counts)
        try:
            held = batch()
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            if packed:
                got = dedupe_min_packed(held)
                assert got is not None
            else:
                got = dedupe_min(*held)[:2]
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
        peaks.append(peak)
        assert len(got[0]) == n // 2
    assert peaks[0] <= 8 * n + (1 << 20)
    assert peaks[1] >= 3 * 8 * n


@settings(max_examples=60, deadline=None)
@given(width=st.sampled_from([1, 2]),
       batches=st.lists(st.sets(st.integers(0, 2**70), max_size=500), min_size=1,
                        max_size=8),
       hold=st.booleans())
def test_fingerprint_set_in_mappings_against_a_set(width: int, batches: list[set[int]],
                                                   hold: bool) -> None:
    """With the mapping threshold lowered to 512 bytes, the visited set's columns move
    into mappings of their own and grow by ``mremap``; membership and contents stay a
    Python set's, also when a view of a column is held while it grows (the mapping then
    cannot be resized and the column is copied to a new one)."""
    from modelcheck import store

    kept = store.MMAP_THRESHOLD
    store.MMAP_THRESHOLD = 512
    try:
        _fill_mapped_set(width, batches, hold)
    finally:
        store.MMAP_THRESHOLD = kept


def _fill_mapped_set(width: int, batches: list[set[int]], hold: bool) -> None:
    top = (1 << 64 * width) - 1
    s = FingerprintSet(width)
    ref: set[int] = set()
    views = []
    for b in batches:
        new = sorted({k & top for k in b} - ref)
        ref |= set(new)
        s.add_sorted(keys_of(new, width))
        if hold:
            views.append(s._cols[0][:1])  # an outside view of a column
        assert key_ints(s._a) == sorted(ref)
        q = sorted(ref)[:50] + [(k * 7 + 1) & top for k in sorted(ref)[:50]]
        assert s.contains(keys_of(q, width)).tolist() == [k in ref for k in q]
    if len(ref) > 1024:  # grown past the first 1024 rows: mapped
        assert all(m is not None for m in s._maps)
        assert s.nbytes == 8 * width * len(ref)


def test_release_free_trims_the_heap_on_glibc() -> None:
    """:func:`~modelcheck.memtune.release_free` is glibc's ``malloc_trim``: True where
    the C library is glibc, False (doing nothing) elsewhere."""
    import ctypes

    from modelcheck.memtune import release_free

    try:
        glibc = hasattr(ctypes.CDLL("libc.so.6"), "malloc_trim")
    except OSError:
        glibc = False
    assert release_free() is glibc


#: column values for the directory's tests: clustered (many in one bucket, more than its
#: window of 16), equal (64-bit ties), spread, and at both ends of the range
_DIR_COL = st.one_of(st.integers(0, 40), st.integers(2**63 - 20, 2**63 + 20),
                     st.integers(2**64 - 40, 2**64 - 1), st.integers(0, 2**64 - 1))


@settings(max_examples=300, deadline=None)
@given(col=st.lists(_DIR_COL, max_size=120), q=st.lists(_DIR_COL, max_size=60),
       extra=st.lists(_DIR_COL, max_size=40), sliced=st.booleans())
def test_directory_search_is_searchsorted(col: list[int], q: list[int], extra: list[int],
                                          sliced: bool) -> None:
    """A directory's search of a sorted column gives ``np.searchsorted``'s left insertion
    points for queries in any order: in buckets of more values than its window (searched
    again), before the first value and past the last, in empty buckets; and so after
    values are counted in (:meth:`Directory.add`)."""
    import bisect

    from modelcheck import store

    a = np.array(sorted(col), dtype=np.uint64)
    d = store.Directory(a)
    qs = np.array(q, dtype=np.uint64)
    kept = store._DIR_SLICE
    if sliced:
        store._DIR_SLICE = 3  # the queries a few at a time
    try:
        assert d.search(a, qs).tolist() == [bisect.bisect_left(sorted(col), x) for x in q]
        both = sorted(col + extra)
        if d.fits(len(both)):
            d.add(np.array(extra, dtype=np.uint64))
            b = np.array(both, dtype=np.uint64)
            assert d.starts.tolist() == store.Directory(b).starts.tolist()
            assert d.search(b, qs).tolist() == [bisect.bisect_left(both, x) for x in q]
    finally:
        store._DIR_SLICE = kept


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(_DIR_COL, _COL), max_size=40), max_size=6),
       q=st.lists(st.tuples(_DIR_COL, _COL), max_size=40), block=st.integers(1, 9))
def test_directory_two_word_fingerprint_set_against_a_set(
        batches: list[list[tuple[int, int]]], q: list[tuple[int, int]], block: int) -> None:
    """With the directory in use from the first key (kept up to date across merges or
    built again), membership and the in-place merge of a scattered two-column set stay
    a Python set's, on keys equal in column 0 and different in column 1 and on column
    values crowded into one bucket."""
    from modelcheck import store

    kept = store.DIR_MIN
    store.DIR_MIN = 1
    try:
        fs = FingerprintSet(2, scattered=True)
        fs._BLOCK = block
        ref: set[int] = set()
        qi = [(a << 64) | b for a, b in q]
        for b in batches:
            assert fs.contains(keys_of(qi, 2)).tolist() == [x in ref for x in qi]
            new = sorted({(x << 64) | y for x, y in b} - ref)
            fs.add_sorted(keys_of(new, 2))
            ref |= set(new)
            assert key_ints(fs._a) == sorted(ref)
            if fs._dir is not None:  # counted in, as built afresh
                assert fs._dir.starts.tolist() == \
                    store.Directory(fs._cols[0][:len(fs)]).starts.tolist()
        assert fs.contains(keys_of(qi, 2)).tolist() == [x in ref for x in qi]
        assert fs.contains(keys_of(sorted(ref), 2)).all()
        if fs._dir is not None:
            assert fs.nbytes == 16 * len(fs._cols[0]) + fs._dir.starts.nbytes
    finally:
        store.DIR_MIN = kept
