"""Compact storage of explored states: the visited set and the BFS levels.

* :class:`FingerprintSet` — all visited fingerprints in one sorted ``uint64``
  array (8 bytes a state). Membership is a vectorised binary search; a level is
  merged in with one linear pass (two sorted runs).
* :class:`LevelStore` — per BFS level, the level's fingerprints (sorted) and for
  each the index of its parent in the previous level (``uint32``) and the action
  instance that reached it (``uint16``), in memory or spilled to disk. Once a level
  in memory has been expanded its fingerprints go (:meth:`LevelStore.forget_keys`:
  the visited set holds the same keys), leaving 6 bytes a state. Paths are rebuilt
  by walking parent indices, and the states on a path by replaying the spec from the
  initial state (TLC's approach: store fingerprints, regenerate states), along the
  recorded actions through a level without its keys.
* :func:`dedupe_min` — keep one row per fingerprint, the one with the smallest
  key (parent index, then action id), which makes parent choice deterministic
  whatever the order in which successors were produced (and, with
  :func:`dedupe_min_inverse`, which unique fingerprint each row holds).

A state's *node index* is its place in breadth-first order: the states of the levels
before its own, then its row in its level (levels are sorted by fingerprint).
:meth:`LevelStore.nodes` hands out the node indices of stored states, so an observer
of the run (the liveness checker's state graph) never looks a fingerprint up itself.

**State keys.** A fingerprint array is either one ``uint64`` per state (shape ``(n,)``:
a state that packs into one word, the word itself) or two (shape ``(n, 2)``: a state of
two words, a bijection of its words, exact (:meth:`modelcheck.layout.Layout.fingerprints`);
or a 128-bit hash of a wider state). Two-column
keys order lexicographically, column 0 first; as a Python int a key is
``col0 << 64 | col1``, so ints order as the arrays do. The functions ``key_*`` below
are the one place that knows the two shapes: sorting (a stable sort of column 0, then
only the runs of equal column 0 whose column 1 differs are sorted again, so that
de-duplicating successors costs about what one column costs), run starts, binary
search, comparison and conversion to and from Python ints.
"""

from __future__ import annotations

import mmap
import os
import shutil
from dataclasses import dataclass

import numpy as np

from .fileio import spill_subdir
from .memtune import MMAP_THRESHOLD

__all__ = ["FingerprintSet", "LevelStore", "Level", "StoredPath", "act_dtype", "dedupe_min",
           "dedupe_min_inverse",
           "group_argmin", "take_rows", "group_min_mask", "key_order", "key_starts",
           "key_searchsorted", "key_less", "key_int", "key_ints", "keys_of", "empty_keys",
           "key_columns", "key_min_row", "key_unique", "key_ne", "key_find", "merge_runs_min",
           "dedupe_min_packed", "concat_clear", "Directory", "DIR_MIN"]

NO_PARENT = np.uint32(0xFFFFFFFF)
#: a column's stand-in while its mapping is resized
_NO_KEYS = np.zeros(0, dtype=np.uint64)
_U64 = np.uint64
_LOW = (1 << 64) - 1


# ---------------------------------------------------------------- state keys
def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``a[idx]`` for an index array or a boolean mask ``idx``: the rows of packed words or
    keys. (numpy's fancy indexing of a 2-D array copies row by row, ~30 ns a row;
    ``take``/``compress`` along axis 0 copy blocks, ~1-3 ns.)"""
    if idx.dtype == np.bool_:
        return np.compress(idx, a, axis=0)
    return np.take(a, idx, axis=0)


def empty_keys(width: int) -> np.ndarray:
    """No keys, in the shape of keys ``width`` columns wide."""
    return np.zeros(0 if width == 1 else (0, 2), dtype=_U64)


def key_columns(keys: np.ndarray) -> tuple[np.ndarray, ...]:
    """The columns of ``keys``, most significant first."""
    if keys.ndim == 1:
        return (keys,)
    return keys[:, 0], keys[:, 1]


def key_order(keys: np.ndarray) -> np.ndarray:
    """The stable permutation that sorts ``keys`` (lexicographically for two columns)."""
    if keys.ndim == 1:
        return np.argsort(keys, kind="stable")
    return _sort2(keys)[0]


def _sort2(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, keys sorted, first)`` of two-column keys: :func:`key_order`, the keys'
    rows in that order and the mask of the first row of each run of equal keys.

    Keys in sorted runs (a level's candidates, exact keys of successors) take a stable
    argsort of column 0, which merges the runs; keys in no order (hashed, 128-bit
    fingerprints) are sorted as packed words (:func:`_sort2_packed`), which costs about
    a third of that argsort (~20 against ~60 ns a key)."""
    if len(keys) >= _PACK_MIN and _scattered(keys[:, 0]):
        return _sort2_packed(keys)
    k0 = keys[:, 0]
    order = np.argsort(k0, kind="stable")
    sk = take_rows(keys, order)
    s0, s1 = sk[:, 0], sk[:, 1]
    if len(order) >= 2:
        # pairs of neighbours with equal column 0 but different column 1: only the runs
        # of equal column 0 that hold one are out of order (duplicates are runs of
        # equal keys)
        bad = np.flatnonzero((s0[1:] == s0[:-1]) & (s1[1:] != s1[:-1]))
        if len(bad):
            _resort_runs(order, sk, s0, bad)
    return order, sk, _firsts(sk)


#: the fewest two-column keys that :func:`_sort2` sorts as packed words
_PACK_MIN = 1 << 12
#: :func:`_scattered` compares neighbours in this many windows of ``_WINDOW`` keys
_WINDOWS, _WINDOW = 16, 128


def _scattered(col: np.ndarray) -> bool:
    """Whether ``col`` (at least ``_WINDOWS * _WINDOW`` rows) looks unordered: at least
    a quarter of the neighbours in a few windows spread over it descend (sorted runs:
    almost none do)."""
    n = len(col)
    at = (np.arange(_WINDOWS) * ((n - _WINDOW - 1) // (_WINDOWS - 1)))[:, None] + \
        np.arange(_WINDOW + 1)
    w = col[at]
    return 4 * int(np.count_nonzero(w[:, 1:] < w[:, :-1])) >= _WINDOWS * _WINDOW


def _firsts(sk: np.ndarray) -> np.ndarray:
    """The mask of the first row of each run of equal keys in sorted two-column keys."""
    new = np.ones(len(sk), dtype=bool)
    s0, s1 = sk[:, 0], sk[:, 1]
    np.not_equal(s0[1:], s0[:-1], out=new[1:])
    new[1:] |= s1[1:] != s1[:-1]
    return new


def _sort2_packed(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_sort2` of unordered keys. Column 0 less its smallest value, cut to the
    bits that fit beside a row number, is shifted up and the row put in the low bits;
    those words (distinct) are bucketed by their top 16 bits (a stable radix pass,
    numpy's for 16-bit keys) and the buckets, a few keys each, sorted with timsort. The
    words then order as (column 0's top bits, row): the stable argsort of column 0 but
    where distinct keys share their top bits, whose runs are sorted again on the whole
    key when a pair in them is out of order (rare: 128-bit fingerprints share the top
    44 bits of column 0 about once in a hundred batches of half a million)."""
    n = len(keys)
    k0 = keys[:, 0]
    rb = (n - 1).bit_length()
    lo = k0.min()
    vb = int(k0.max() - lo).bit_length()
    shift = max(0, vb + rb - 64)
    p = np.subtract(k0, lo)
    if shift:
        p >>= _U64(shift)
    p <<= _U64(rb)
    p |= _rows(n)
    bucket = _U64(max(0, vb - shift + rb - 16))
    p = np.take(p, np.argsort((p >> bucket).astype(np.uint16), kind="stable"))
    p.sort(kind="stable")  # timsort: the buckets are in order
    order = np.bitwise_and(p, _U64((1 << rb) - 1)).view(np.int64)
    sk = take_rows(keys, order)
    new = _firsts(sk)
    p >>= _U64(rb)  # column 0's top bits, sorted
    tie = p[1:] == p[:-1]
    tie &= new[1:]  # distinct neighbours that share their top bits
    at = np.flatnonzero(tie)
    if len(at):
        s0, s1 = sk[:, 0], sk[:, 1]
        bad = at[(s0[at + 1] < s0[at]) | ((s0[at + 1] == s0[at]) & (s1[at + 1] < s1[at]))]
        if len(bad):
            _resort_runs(order, sk, p, bad)
            new = _firsts(sk)
    return order, sk, new


def _resort_runs(order: np.ndarray, sk: np.ndarray, top: np.ndarray, bad: np.ndarray
                 ) -> None:
    """Sort again, in place and stably, the runs of equal ``top`` (sorted) that hold
    position ``bad`` (a pair ``bad, bad + 1``), of a permutation ``order`` and keys ``sk``
    sorted by ``top``, then by row: the runs then order by the whole key, then by row."""
    run_start = np.concatenate(([True], top[1:] != top[:-1]))
    run_id = np.cumsum(run_start) - 1
    bad_runs = np.zeros(int(run_id[-1]) + 1, dtype=bool)
    bad_runs[run_id[bad]] = True
    rows = np.flatnonzero(bad_runs[run_id])  # positions in the runs to re-sort
    sub = np.lexsort((sk[rows, 1], sk[rows, 0], run_id[rows]))
    order[rows] = order[rows][sub]
    sk[rows] = sk[rows][sub]


_ROWS = np.arange(0, dtype=_U64)
#: the most row numbers :func:`_rows` keeps (16 MiB; a batch's successors number up to
#: about a million; a level's, merged, are allocated each time)
_ROWS_KEPT = 1 << 21


def _rows(n: int) -> np.ndarray:
    """``np.arange(n, dtype=uint64)``, up to :data:`_ROWS_KEPT` a read-only view of one
    array kept between calls (a batch's row numbers are megabytes: allocated each time,
    they were mapped and faulted in afresh)."""
    global _ROWS
    if n > _ROWS_KEPT:
        return np.arange(n, dtype=_U64)
    if len(_ROWS) < n:
        _ROWS = np.arange(min(_ROWS_KEPT, max(n, len(_ROWS) + len(_ROWS) // 2)),
                          dtype=_U64)
        _ROWS.flags.writeable = False
    return _ROWS[:n]


def concat_clear(parts: list[np.ndarray]) -> np.ndarray:
    """The arrays of ``parts`` concatenated, the list emptied (its arrays freed as soon
    as the concatenation holds them: a batch's or a level's pieces are not held twice)."""
    out = np.concatenate(parts)
    parts.clear()
    return out


def _argsort1(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(np.argsort(a, kind="stable"), a sorted)`` of one-column keys. When the keys'
    bits and a row number's fit in one word, each key is shifted up and its row put in
    the low bits, and those words sorted: the words are distinct and order as (key,
    row), so sorting them is the stable argsort, without its indirection and without
    gathering the keys afterwards (timsort: a batch's successors come in sorted runs,
    one per action instance)."""
    n = len(a)
    rb = max(1, (n - 1).bit_length())
    if n >= 4096 and a.dtype == _U64 and int(a.max()).bit_length() + rb <= 64:
        packed = a << _U64(rb)
        packed |= _rows(n)
        packed.sort(kind="stable")  # timsort: successors come in sorted runs
        # rows < 2**63: the masked words are the int64 rows as they are
        order = np.bitwise_and(packed, _U64((1 << rb) - 1)).view(np.int64)
        packed >>= _U64(rb)
        return order, packed
    order = np.argsort(a, kind="stable")
    return order, a[order]


def key_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Boolean mask of the first row of each run of equal keys in sorted keys."""
    n = len(sorted_keys)
    out = np.ones(n, dtype=bool)
    if n < 2:
        return out
    if sorted_keys.ndim == 1:
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=out[1:])
    else:
        np.not_equal(sorted_keys[1:, 0], sorted_keys[:-1, 0], out=out[1:])
        out[1:] |= sorted_keys[1:, 1] != sorted_keys[:-1, 1]
    return out


def key_searchsorted(sorted_keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Left insertion points of keys ``q`` in ``sorted_keys`` (``np.searchsorted``)."""
    if q.ndim == 1:
        return np.searchsorted(sorted_keys, q)
    return _search2(np.ascontiguousarray(sorted_keys[:, 0]),
                    np.ascontiguousarray(sorted_keys[:, 1]), q)


def key_find(sorted_keys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The row of each key of ``q`` in ``sorted_keys`` (distinct keys), -1 where it is
    not there."""
    if not len(sorted_keys):
        return np.full(len(q), -1, dtype=np.int64)
    pos = np.minimum(key_searchsorted(sorted_keys, q), len(sorted_keys) - 1)
    return np.where(key_ne(take_rows(sorted_keys, pos), q), -1, pos)


#: the fewest keys a two-column :class:`FingerprintSet` of scattered keys searches
#: through a :class:`Directory` (fewer: ``np.searchsorted`` on column 0, in cache)
DIR_MIN = 1 << 15
#: the branchless binary search's steps inside a window of 16 keys from a bucket's start
#: (a bucket holds 2-4 keys on average: one of more than 15 keys below a query is rare,
#: and searched again by ``np.searchsorted``)
_DIR_STEPS = (8, 4, 2, 1)
#: queries :meth:`Directory.search` handles at once (its temporaries stay in cache)
_DIR_SLICE = 1 << 14


class Directory:
    """Where each bucket of a sorted ``uint64`` column's values starts: the bucket of a
    value is its top ``bits`` bits, and ``starts[t]`` the number of values whose bucket
    is below ``t`` (a bucket's values are ``starts[t]:starts[t + 1]``). For a column of
    well-mixed values (128-bit hashes' column 0), ``bits`` is chosen for 2-4 values a
    bucket (1-2 bytes a value): a query then reads its bucket's start, one load, and
    searches the few values from there, instead of a binary search over the whole
    column whose last steps each miss the cache (1.7M random keys, 100K sorted
    queries: ~42 -> ~20 ns a query; 10M keys: ~70 through a fence of every eighth key,
    the search this replaced, -> ~50). Any column is searched exactly; only the speed
    depends on the values' spread."""

    def __init__(self, col: np.ndarray) -> None:
        n = len(col)
        self.bits = self.bits_for(n)
        self.shift = _U64(64 - self.bits)
        self.starts: np.ndarray = np.zeros(self.size_for(n), dtype=self.dtype_for(n))
        self.add(col)

    @staticmethod
    def bits_for(n: int) -> int:
        """The bucket bits of a column of ``n`` values: 2-4 values a bucket."""
        return max(1, min(63, (n >> 2).bit_length()))

    @staticmethod
    def dtype_for(n: int) -> type:
        """The type of the bucket starts of a column of ``n`` values."""
        return np.int32 if n < 1 << 30 else np.int64

    @classmethod
    def size_for(cls, n: int) -> int:
        """The bucket starts of a column of ``n`` values (one more than its buckets)."""
        return (1 << cls.bits_for(n)) + 1

    @classmethod
    def nbytes_for(cls, n: int) -> int:
        """The bytes of the directory of a column of ``n`` values."""
        return np.dtype(cls.dtype_for(n)).itemsize * cls.size_for(n)

    def fits(self, n: int) -> bool:
        """Whether a column of ``n`` values keeps this directory's bits and type."""
        return self.bits_for(n) == self.bits and self.dtype_for(n) == self.starts.dtype

    @property
    def nbytes(self) -> int:
        return int(self.starts.nbytes)

    def add(self, values: np.ndarray) -> None:
        """Count ``values`` (any order) added to the column, whose length must still
        :meth:`fits`."""
        if not len(values):
            return
        counts = np.bincount(np.right_shift(values, self.shift).view(np.int64),
                             minlength=1 << self.bits)
        self.starts[1:] += np.cumsum(counts, dtype=self.starts.dtype)

    def search(self, col: np.ndarray, q: np.ndarray) -> np.ndarray:
        """``np.searchsorted(col, q)`` (left insertion points, ``intp``) of any queries
        ``q`` in the sorted column ``col`` this directory describes."""
        m, n = len(q), len(col)
        out = np.empty(m, dtype=np.intp)
        if n == 0:
            out.fill(0)
            return out
        last = n - 1
        size = min(m, _DIR_SLICE)
        nxt = np.empty(size, dtype=np.intp)
        step = np.empty(size, dtype=np.intp)
        val = np.empty(size, dtype=_U64)
        less = np.empty(size, dtype=bool)
        for i in range(0, m, _DIR_SLICE):
            qs = q[i:i + _DIR_SLICE]
            k = len(qs)
            pos, nx, st, v, lt = out[i:i + k], nxt[:k], step[:k], val[:k], less[:k]
            pos[:] = np.take(self.starts, np.right_shift(qs, self.shift).view(np.int64))
            # the values before the bucket are below the query and those after it above:
            # the answer is in the window of 16 values from the bucket's start, where a
            # place past the column reads as its last value (not below the query unless
            # all are, which the check below finds)
            for s in _DIR_STEPS:
                np.add(pos, s - 1, out=nx)
                np.minimum(nx, last, out=nx)
                np.take(col, nx, out=v)
                np.less(v, qs, out=lt)
                np.multiply(lt, s, out=st)
                pos += st
        # a place whose value is still below the query: more than 15 values of its
        # bucket are (or all of the column is), searched again
        at = np.minimum(out, last)
        bad = np.flatnonzero(np.take(col, at) < q)
        if len(bad):
            out[bad] = np.searchsorted(col, q[bad])
        return out


def _search2(a0: np.ndarray, a1: np.ndarray, q: np.ndarray,
             directory: Directory | None = None) -> np.ndarray:
    """:func:`key_searchsorted` of two-column keys ``q`` in the sorted keys whose
    columns are ``a0`` and ``a1`` (contiguous: a binary search over a strided column
    would copy it); column 0 through its :class:`Directory` when given."""
    q0, q1 = q[:, 0], q[:, 1]
    n = len(a0)
    if directory is None:
        lo = np.searchsorted(a0, q0, side="left")
    else:
        lo = directory.search(a0, np.ascontiguousarray(q0))
    if n == 0:
        return lo
    at = np.minimum(lo, n - 1)
    # only a query whose column 0 is present with a smaller column 1 at the run's start
    # searches the run of equal column 0 on column 1 (runs are short)
    act = np.flatnonzero((a0[at] == q0) & (a1[at] < q1) & (lo < n))
    if len(act) == 0:
        return lo
    lo_a, q1_a = lo[act] + 1, q1[act]
    hi_a = np.searchsorted(a0, q0[act], side="right")
    while True:
        live = np.flatnonzero(lo_a < hi_a)
        if len(live) == 0:
            break
        mid = (lo_a[live] + hi_a[live]) // 2
        less = a1[mid] < q1_a[live]
        lo_a[live[less]] = mid[less] + 1
        hi_a[live[~less]] = mid[~less]
    lo[act] = lo_a
    return lo


def key_unique(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(unique sorted keys, the first row of each, each row's index in the unique
    keys)``, as ``np.unique(..., return_index=True, return_inverse=True)``."""
    order = key_order(keys)
    sk = take_rows(keys, order)
    starts = key_starts(sk)
    inv = np.empty(len(keys), dtype=np.int64)
    inv[order] = np.cumsum(starts) - 1
    return take_rows(sk, starts), order[starts], inv


def key_ne(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise ``a != b`` of keys of the same shape."""
    if a.ndim == 1:
        return a != b
    return (a[:, 0] != b[:, 0]) | (a[:, 1] != b[:, 1])


def key_less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise ``a < b`` of keys of the same shape."""
    if a.ndim == 1:
        return a < b
    return (a[:, 0] < b[:, 0]) | ((a[:, 0] == b[:, 0]) & (a[:, 1] < b[:, 1]))


def key_min_row(keys: np.ndarray) -> int:
    """The row of the smallest key (the first such row)."""
    if keys.ndim == 1:
        return int(np.argmin(keys))
    return int(key_order(keys)[0])


def key_int(keys: np.ndarray, i: int | np.integer) -> int:
    """Key ``i`` as a Python int (``col0 << 64 | col1`` for two columns)."""
    if keys.ndim == 1:
        return int(keys[i])
    return (int(keys[i, 0]) << 64) | int(keys[i, 1])


def key_ints(keys: np.ndarray) -> list[int]:
    """All keys as Python ints."""
    if keys.ndim == 1:
        return [int(k) for k in keys.tolist()]
    return [(a << 64) | b for a, b in keys.tolist()]


def keys_of(ints: list[int] | tuple[int, ...], width: int) -> np.ndarray:
    """Keys ``width`` columns wide from Python ints (inverse of :func:`key_ints`)."""
    if width == 1:
        return np.array(ints, dtype=_U64)
    out = np.empty((len(ints), 2), dtype=_U64)
    for i, k in enumerate(ints):
        out[i, 0] = k >> 64
        out[i, 1] = k & _LOW
    return out


def group_min_mask(first: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per group of consecutive rows (a group starts where ``first`` is True), a mask
    holding the row of its smallest value (the first such row on ties); ``values`` may
    be state keys of two columns (compared as keys).

    Most groups of a sorted batch of successor fingerprints are single rows and the
    rest mostly pairs (a bucket's successors from two producers): the mask starts as
    ``first`` and only the pairs' second rows are looked at; larger groups go through
    a segmented reduction.
    """
    keep = first.copy()
    rep = np.flatnonzero(~first)  # rows repeating their predecessor's group
    if len(rep) == 0:
        return keep
    if len(rep) == 1 or not np.any(rep[1:] == rep[:-1] + 1):  # pairs and single rows
        less = key_less(take_rows(values, rep), take_rows(values, rep - 1))
        won = rep[less]
        keep[won] = True
        keep[won - 1] = False
        return keep
    keep[:] = False
    if values.ndim == 2:  # two-column keys: the first row of each group in key order
        gid = np.cumsum(first) - 1
        order = np.lexsort((values[:, 1], values[:, 0], gid))
        head = np.ones(len(order), dtype=bool)
        np.not_equal(gid[order[1:]], gid[order[:-1]], out=head[1:])
        keep[order[head]] = True
        return keep
    keep[group_argmin(first, values)] = True
    return keep


def group_argmin(first: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per group of consecutive rows (a group starts where ``first`` is True), the
    position of its smallest value (the first such position on ties), by a segmented
    reduction over the rows of groups of two or more rows."""
    starts = np.flatnonzero(first)
    if len(starts) == len(values):
        return starts
    rep = ~first  # rows repeating their predecessor's group
    in_multi = rep.copy()
    in_multi[:-1] |= rep[1:]
    idx = np.flatnonzero(in_multi)
    sub = values[idx]
    sub_first = first[idx]
    sub_starts = np.flatnonzero(sub_first)
    mins = np.minimum.reduceat(sub, sub_starts)
    gid = np.cumsum(sub_first) - 1
    hit = np.flatnonzero(sub == mins[gid])
    # the first hit of each multi-row group
    hit = hit[np.concatenate(([True], gid[hit[1:]] != gid[hit[:-1]]))]
    size = np.diff(starts, append=len(values))
    out = starts.copy()
    out[size > 1] = idx[hit]
    return out


def dedupe_min(fps: np.ndarray, keys: np.ndarray, *, ordered_runs: bool = False,
               min_rows: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique ``fps`` (sorted) with, for each, the smallest ``keys`` value and its row.

    Returns ``(unique_fps, min_keys, rows)`` where ``rows`` indexes the input at
    the first row holding that fingerprint (all rows of one fingerprint hold the
    same state), or, with ``min_rows``, at the row holding the smallest key (under a
    view, rows of one fingerprint hold different states: the one reached first is
    kept). ``ordered_runs`` says the input is runs of distinct fingerprints
    whose keys all exceed the keys of the runs before (the de-duplicated successors of
    a level's batches, in batch order): the first row of a fingerprint then holds its
    smallest key, and no reduction is needed.
    """
    u, kmin, rows, _ = _dedupe(fps, keys, ordered_runs, False, min_rows)
    return u, kmin, rows


def dedupe_min_inverse(fps: np.ndarray, keys: np.ndarray, *, ordered_runs: bool = False,
                       min_rows: bool = False
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`dedupe_min` and, per input row, the index of its fingerprint among the
    unique ones (``int32``; ``unique_fps[inverse] == fps``)."""
    u, kmin, rows, inv = _dedupe(fps, keys, ordered_runs, True, min_rows)
    assert inv is not None
    return u, kmin, rows, inv


def _dedupe(fps: np.ndarray, keys: np.ndarray, ordered_runs: bool, inverse: bool,
            min_rows: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    if len(fps) == 0:
        return fps, keys, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    if fps.ndim == 1:
        if min_rows and not ordered_runs:
            order = np.lexsort((keys, fps))  # by fingerprint, then key
            sf = fps[order]
        else:
            order, sf = _argsort1(fps)
        new = np.empty(len(sf), dtype=bool)
        new[0] = True
        np.not_equal(sf[1:], sf[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        u = sf[starts]
    else:
        order, sk, new = _sort2(fps)
        starts = np.flatnonzero(new)
        u = take_rows(sk, starts)
        del sk
        if min_rows and not ordered_runs:
            # a fingerprint's rows are in row order: the first of its smallest key is
            # the row a sort by fingerprint, then key, puts first
            starts = group_argmin(new, keys[order])
    rows = order[starts]
    inv = None
    if inverse:
        inv = np.empty(len(fps), dtype=np.int32)
        group = np.cumsum(new, dtype=np.int32)
        group -= np.int32(1)  # (in place: a batch's rows, megabytes)
        inv[order] = group
        del group
    if ordered_runs or min_rows:
        return u, keys[rows], rows, inv
    sk = keys[order]
    mins = np.minimum.reduceat(sk, starts)
    return u, mins, rows, inv


#: at most this many bits of a fingerprint pick :func:`merge_runs_min`'s bucket (2**16
#: buckets: past that the per-bucket sorts cost more in Python than they save)
MERGE_BUCKET_BITS = 16
#: the fewest rows a bucket of :func:`merge_runs_min` holds on average (fewer: a level too
#: small for its buckets' Python loop, left to :func:`dedupe_min`)
_MERGE_PER_BUCKET = 64
#: words compared at once by :func:`merge_runs_min` (8 MiB of ``uint64``)
_MERGE_STEP = 1 << 20


def merge_runs_min(fps_runs: list[np.ndarray], key_runs: list[np.ndarray]
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The union of sorted runs of distinct one-column fingerprints, each with the
    smallest of its keys (non-negative ``int64``): ``(unique fps, min keys)`` as
    :func:`dedupe_min` of the concatenated runs gives them, or None where this way does
    not apply (two-column keys, negative keys, more than :data:`MERGE_BUCKET_BITS`
    bucket bits needed, or fewer than :data:`_MERGE_PER_BUCKET` rows a bucket).

    Each fingerprint and its key are packed into one word, ``fp << key_bits | key``, so
    sorting the words sorts by fingerprint, then key, and the first word of each
    fingerprint holds its smallest key: one sort of plain words, without the stable
    argsort of the fingerprints and the gathers that follow it (a level's candidates,
    tens of millions of rows, cost ~50 ns a row that way when its arrays are freshly
    mapped). When the fingerprint's and the key's bits exceed 64, the top ``b`` bits of
    the fingerprint pick one of ``2**b`` buckets (each run's share of a bucket is a
    slice, the runs being sorted), the words hold the fingerprint's remaining bits, and
    each bucket is sorted on its own (a few thousand rows: in cache). The runs' arrays
    are not changed."""
    runs = [(f, k) for f, k in zip(fps_runs, key_runs) if len(f)]
    if not runs or any(f.ndim != 1 for f, _ in runs):
        return None
    if min(int(k.min()) for _, k in runs) < 0:
        return None
    kb = max(1, max(int(k.max()) for _, k in runs).bit_length())
    fb = max(1, max(int(f[-1]) for f, _ in runs).bit_length())  # runs are sorted
    bb = max(0, fb + kb - 64)
    n = sum(len(f) for f, _ in runs)
    if bb > MERGE_BUCKET_BITS or (bb and n < _MERGE_PER_BUCKET << bb):
        return None
    low = fb - bb  # the fingerprint's bits below its bucket's
    nb = 1 << bb
    sh = _U64(kb)
    out = np.empty(n, dtype=_U64)
    if nb == 1:
        at = 0
        for f, k in runs:
            seg = out[at:at + len(f)]
            np.left_shift(f, sh, out=seg)
            seg |= k.view(_U64)
            at += len(f)
        sizes = [n]
    else:
        cuts = np.arange(1, nb, dtype=_U64) << _U64(low)
        fmask = _U64((1 << low) - 1)
        edges = [np.concatenate(([0], np.searchsorted(f, cuts), [len(f)])) for f, _ in runs]
        counts = [np.diff(e) for e in edges]
        per_bucket = np.sum(counts, axis=0)
        # the next free slot of each bucket: the runs' slices follow each other in it
        fill = np.concatenate(([0], np.cumsum(per_bucket)[:-1]))
        for (f, k), e, c in zip(runs, edges, counts):
            p = f & fmask
            p <<= sh
            p |= k.view(_U64)
            dest = np.repeat(fill - e[:-1], c)
            dest += np.arange(len(f))
            out[dest] = p
            fill += c
        sizes = per_bucket.tolist()
    at = 0
    for size in sizes:
        if size > 1:
            out[at:at + size].sort(kind="stable")  # timsort: the bucket is sorted runs
        at += size
    # a word starts a fingerprint where its bits above the key's differ from the word
    # before (or a bucket starts); compared a slice at a time, in cache
    new = np.empty(n, dtype=bool)
    new[0] = True
    step = min(n, _MERGE_STEP)
    tmp = np.empty(step, dtype=_U64)
    top = _U64(1 << kb)
    for i in range(0, n - 1, step):
        j = min(n - 1, i + step)
        t = tmp[:j - i]
        np.bitwise_xor(out[i + 1:j + 1], out[i:j], out=t)
        np.greater_equal(t, top, out=new[i + 1:j + 1])
    del tmp
    counted = np.asarray(sizes, dtype=np.int64)
    firsts = np.cumsum(counted) - counted
    filled = np.flatnonzero(counted > 0)
    new[firsts[filled]] = True
    words = out[new]
    del out
    kmin = np.bitwise_and(words, _U64((1 << kb) - 1)).view(np.int64)
    words >>= sh
    if nb > 1:
        per = np.add.reduceat(new, firsts[filled], dtype=np.int64)
        words |= np.repeat(filled.astype(_U64) << _U64(low), per)
    return words, kmin


def dedupe_min_packed(held: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`dedupe_min` of ``held = [fps, keys]`` (one-column fingerprints, ``int64``
    keys) without the rows: ``(unique fps, min keys)``, or None (``held`` untouched)
    when a fingerprint's bits and the keys' span exceed 64 bits.

    Each row is packed into one word, ``fp << key_bits | key - smallest key``, and the
    list emptied, so that the fingerprints and keys are freed (when the caller holds no
    other reference) before the words are sorted: sorted, the first word of each
    fingerprint holds its smallest key, and those words are moved to the front of the
    array in place. Above the input, the peak is the words alone (8 bytes a row), against
    the row permutation, the sorted fingerprints and the gathered keys of
    :func:`dedupe_min` (24 and more)."""
    fps, keys = held
    n = len(fps)
    if n == 0 or fps.ndim != 1 or fps.dtype != _U64:
        return None
    lo = int(keys.min())
    kb = max(1, (int(keys.max()) - lo).bit_length())
    if int(fps.max()).bit_length() + kb > 64:
        return None
    sh = _U64(kb)
    words = np.left_shift(fps, sh)
    # fp << kb + (key - lo), modulo 2**64: the key's bits below the fingerprint's
    np.add(words, keys.view(_U64), out=words)
    words -= _U64(lo & _LOW)
    held.clear()
    del fps, keys
    words.sort(kind="stable")  # timsort: successors come in sorted runs
    # each fingerprint's first word moved to the front, a slice at a time (the slice
    # is read before anything at or after its start is written)
    top = _U64(1 << kb)
    step = min(n, _PACKED_STEP)
    diff = np.empty(step, dtype=_U64)
    first = np.empty(step, dtype=bool)
    kept = 0
    last = None  # the word before the slice, as it was before the slice was written
    for i in range(0, n, step):
        j = min(n, i + step)
        seg = words[i:j]
        m = j - i
        d, f = diff[:m], first[:m]
        np.bitwise_xor(seg[1:], seg[:-1], out=d[1:])
        d[0] = top if last is None else seg[0] ^ last
        np.greater_equal(d, top, out=f)
        last = seg[-1]
        sel = seg[f]
        words[kept:kept + len(sel)] = sel
        kept += len(sel)
    del diff, first, seg, sel, d, f
    words.resize(kept, refcheck=False)
    kmin = np.bitwise_and(words, _U64((1 << kb) - 1)).view(np.int64)
    kmin += lo
    words >>= sh
    return words, kmin


#: words compared at once by :func:`dedupe_min_packed` (512 KiB of ``uint64``: in cache)
_PACKED_STEP = 1 << 16


class FingerprintSet:
    """A set of fingerprints (state keys, one or two ``uint64`` columns) kept sorted,
    column by column, with spare capacity.

    Adding a sorted batch appends it to buffers that grow with ``ndarray.resize`` (a
    ``realloc``, which the OS serves by remapping pages) and merges the two sorted runs
    in place, so memory peaks at the set's own 8 bytes a state and column plus the
    batch, never at two copies of the set.

    A column of :data:`~modelcheck.memtune.MMAP_THRESHOLD` bytes or more is an anonymous
    mapping of its own (:meth:`_grow`), grown by ``mremap``. Left to ``malloc``, a column
    grew inside the heap (a ``realloc`` extends a block into the free space above it)
    until it had to move out, and the heap's free space is not handed back: the heap
    then held a second, dead copy of the column's pages (two-word TwoPhase RM=8: 28 MB,
    16 bytes a state, of the peak).
    """

    #: rows moved at once by the in-place merge of two-column keys
    _BLOCK = 1 << 18

    def __init__(self, width: int = 1, scattered: bool = False) -> None:
        self.width = width
        #: the keys asked for are spread over the whole set (128-bit hashes): a large
        #: two-column set is then searched through a directory (:meth:`_directory`); exact
        #: keys come in runs of near keys, which ``np.searchsorted`` finds in cache
        self.scattered = scattered
        self._cols = [np.zeros(1024, dtype=_U64) for _ in range(width)]
        #: per column, the mapping that holds it (None: a numpy allocation)
        self._maps: list[mmap.mmap | None] = [None] * width
        self._n = 0
        #: column 0's :class:`Directory` once a scattered two-column set has
        #: :data:`DIR_MIN` keys, built when first searched and kept up to date by
        #: :meth:`add_sorted` (rebuilt when its bucket bits change); None until then
        self._dir: Directory | None = None

    def __len__(self) -> int:
        return self._n

    @property
    def _a(self) -> np.ndarray:
        """The keys (a copy when two columns wide)."""
        if self.width == 1:
            return self._cols[0][:self._n]
        return np.stack([c[:self._n] for c in self._cols], axis=1)

    @property
    def nbytes(self) -> int:
        d = 0 if self._dir is None else self._dir.nbytes
        return int(sum(c.nbytes for c in self._cols)) + d

    def _directory(self) -> Directory | None:
        """Column 0's :class:`Directory`, for a two-column set of :data:`DIR_MIN` keys
        or more whose searches are ``scattered`` (1-2 bytes a key); None for others."""
        if self._n < DIR_MIN or not self.scattered:
            return None
        if self._dir is None:
            self._dir = Directory(self._cols[0][:self._n])
        return self._dir

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """Boolean mask: which of ``fps`` are in the set."""
        n = self._n
        if n == 0 or len(fps) == 0:
            return np.zeros(len(fps), dtype=bool)
        if self.width == 1:
            a = self._cols[0][:n]
            # searched among the keys between the smallest and the largest asked only: a
            # batch's successors span a part of the set (a sixth of it on TwoPhase RM=10),
            # so each search is a few steps shorter (RM=10: 9% less time)
            lo, hi = np.searchsorted(a, [fps.min(), fps.max()], side="left")
            if lo == n:
                return np.zeros(len(fps), dtype=bool)  # all beyond the largest key
            hi = min(int(hi) + 1, n)
            a = a[lo:hi]
            idx = np.searchsorted(a, fps)
            np.minimum(idx, len(a) - 1, out=idx)
            return a[idx] == fps
        a0, a1 = (c[:n] for c in self._cols)
        q0, q1 = fps[:, 0], fps[:, 1]
        d = self._directory()
        idx = np.searchsorted(a0, q0) if d is None else \
            d.search(a0, np.ascontiguousarray(q0))
        np.minimum(idx, n - 1, out=idx)
        # the first key whose column 0 is at least the query's: the query's key when
        # present, unless its column 0 opens a run of equal column 0 (a 64-bit tie) with
        # a smaller column 1 first; only those are searched again on both columns
        in0 = a0[idx] == q0
        at1 = a1[idx]
        got = in0 & (at1 == q1)
        again = np.flatnonzero(in0 & (at1 < q1))
        if len(again):
            sub = take_rows(fps, again)
            j = np.minimum(_search2(a0, a1, sub, d), n - 1)
            got[again] = ~key_ne(np.stack([a0[j], a1[j]], axis=1), sub)
        return got

    def _capacity(self, rows: int) -> int:
        """The rows to grow the columns to for ``rows`` keys: exactly ``rows`` once a
        column is mapped memory (``memtune.MMAP_THRESHOLD``: ``realloc`` remaps its pages,
        copying nothing), else a quarter more (the heap copies on growth)."""
        cap = len(self._cols[0])
        if 8 * rows >= MMAP_THRESHOLD:
            return rows
        return max(rows, cap + cap // 4, 1024)

    def growth(self, m: int) -> int:
        """Extra bytes that adding ``m`` fingerprints takes at its peak (the buffer's
        growth and the merge's temporary buffer)."""
        n = self._n
        cap = len(self._cols[0])
        grow = 0
        if n + m > cap:
            grow = 8 * self.width * (self._capacity(n + m) - cap)
        if self.width == 1:
            return grow + 8 * min(n, m)
        # (and the directory of the merged set, 1-2 bytes a key, built when next
        # searched)
        d = Directory.nbytes_for(n + m) if n + m >= DIR_MIN and self.scattered else 0
        return grow + 8 * m + 8 * (2 + self.width) * min(n, self._BLOCK) + d

    def _grow(self, cap: int) -> None:
        """Give every column room for ``cap`` keys: below
        :data:`~modelcheck.memtune.MMAP_THRESHOLD` bytes by ``ndarray.resize``, from
        there on in a mapping of its own, resized by ``mremap`` (no copy; nothing of the
        set is then in the heap)."""
        n = self._n
        for i in range(self.width):
            if 8 * cap < MMAP_THRESHOLD:
                self._cols[i].resize(cap, refcheck=False)
                continue
            old = self._cols[i]
            mm = self._maps[i]
            if mm is not None:
                del old
                self._cols[i] = _NO_KEYS  # the mapping's only export goes
                try:
                    mm.resize(8 * cap)
                    self._cols[i] = np.frombuffer(mm, dtype=_U64)
                    continue
                except (BufferError, OSError, SystemError, ValueError):
                    old = np.frombuffer(mm, dtype=_U64)  # no mremap here: copied
            # private: a shared anonymous mapping cannot grow by mremap (SIGBUS)
            new_map = mmap.mmap(-1, 8 * cap, flags=mmap.MAP_PRIVATE)
            col = np.frombuffer(new_map, dtype=_U64)
            col[:n] = old[:n]
            self._cols[i], self._maps[i] = col, new_map
            del old, col

    def add_sorted(self, fps: np.ndarray) -> None:
        """Add sorted fingerprints that are not in the set yet."""
        m = len(fps)
        if m == 0:
            return
        n = self._n
        if n + m > len(self._cols[0]):
            self._grow(self._capacity(n + m))
        if self.width == 1:
            buf = self._cols[0]
            buf[n:n + m] = fps
            # Two sorted runs: timsort merges them in linear time with a buffer the
            # size of the smaller run.
            buf[:n + m].sort(kind="stable")
            self._n = n + m
            return
        c0, c1 = self._cols
        # where each new key goes in the merged set: before old key ``ins`` (the number
        # of old keys before it), after the new keys before it
        d = self._directory()
        pos = _search2(c0[:n], c1[:n], fps, d)
        if d is not None and d.fits(n + m):
            d.add(np.ascontiguousarray(fps[:, 0]))  # (the new keys' buckets counted)
        else:
            self._dir = None  # (built for the merged set when next searched)
        # (a transient arange: _rows keeps what it hands out, which a level's size
        # would grow for the rest of the run, TwoPhase N=9 two words: +33 MB of peak)
        pos += np.arange(m)
        f0, f1 = fps[:, 0], fps[:, 1]
        # the merged set is written a block of places at a time, from the last block
        # down: each block gathers its new keys and its old keys (those whose places
        # are in it) in a buffer, then is written as one slice. The block's old keys
        # start at or before its first place (old keys only move right) and those above
        # it were read by the blocks written before, so no key is overwritten unread.
        step = min(n + m, self._BLOCK)
        buf = np.empty(step, dtype=_U64)
        old = np.empty(step, dtype=bool)
        b = m  # the new keys before the block's end
        for p1 in range(n + m, 0, -step):
            if b == 0:
                break  # no new key below: the old keys there are in their places
            p0 = max(0, p1 - step)
            a = int(np.searchsorted(pos, p0))
            at = pos[a:b] - p0
            o, out = old[:p1 - p0], buf[:p1 - p0]
            o.fill(True)
            o[at] = False
            for c, f in ((c0, f0), (c1, f1)):
                out[o] = c[p0 - a:p1 - b]
                out[at] = f[a:b]
                c[p0:p1] = out
            b = a
        self._n = n + m


@dataclass(frozen=True)
class StoredPath:
    """The stored path to a state, level by level: the state's fingerprint, or None at
    a level that has let its keys go (:meth:`LevelStore.forget_keys`), and the action
    instance that stored it from the state before (None: not recorded; the first
    level's, whose key is always kept). A state whose key went is the successor of
    the one before by its action (in canonical form, under symmetry)."""

    fps: tuple[int | None, ...]
    acts: tuple[int | None, ...]


@dataclass
class Level:
    """One BFS level: sorted fingerprints, each state's parent index in the level before
    and, when given, the action instance that reached it from that parent (the
    smallest, as the parent is).

    A level whose actions are known may let its fingerprints go
    (:meth:`LevelStore.forget_keys`): the visited set holds the same keys, and a path
    through the level is rebuilt by replaying the spec along its actions."""

    fps: np.ndarray  # no rows once forgotten (``keyed`` is then False)
    parents: np.ndarray  # uint32, NO_PARENT for initial states
    acts: np.ndarray | None = None  # uint16 or uint32 action instance ids
    keyed: bool = True

    def __len__(self) -> int:
        return len(self.parents)

    @property
    def nbytes(self) -> int:
        acts = 0 if self.acts is None else self.acts.nbytes
        return int(self.fps.nbytes + self.parents.nbytes + acts)


def act_dtype(n_act: int) -> type:
    """The narrowest unsigned type of ``n_act`` action instance ids (a level's ``acts``)."""
    return np.uint16 if n_act <= 1 << 16 else np.uint32


class LevelStore:
    """All BFS levels, for rebuilding the path to any explored state.

    With ``spill_dir``, each level is written there as two ``.npy`` files as soon
    as it is complete and read back memory-mapped: levels are only read to rebuild
    a counterexample, so they cost disk, not memory. The files are removed by
    :meth:`close`.
    """

    def __init__(self, spill_dir: str | None = None) -> None:
        self.levels: list[Level] = []
        #: the node index of each level's first state (and, last, the states stored)
        self.offsets: list[int] = [0]
        self._dir: str | None = None
        self._nbytes = 0  # in memory, kept as levels come and go (asked for every batch)
        if spill_dir is not None:
            self._dir = spill_subdir(spill_dir, "levels-")

    def append(self, fps: np.ndarray, parents: np.ndarray,
               acts: np.ndarray | None = None) -> None:
        """Add the next level: its sorted keys, parent indexes and (optionally) the
        action instance id reaching each state."""
        parents = parents.astype(np.uint32, copy=False)
        if self._dir is not None:
            d = len(self.levels)
            base = os.path.join(self._dir, f"level-{d:05d}")
            np.save(base + ".fps.npy", fps)
            np.save(base + ".parents.npy", parents)
            fps = np.load(base + ".fps.npy", mmap_mode="r")
            parents = np.load(base + ".parents.npy", mmap_mode="r")
            acts = None  # spilled levels keep their keys (on disk): paths need no replay
        level = Level(fps, parents, acts)
        self.levels.append(level)
        self.offsets.append(self.offsets[-1] + len(fps))
        if self._dir is None:
            self._nbytes += level.nbytes

    def forget_keys(self, depth: int) -> bool:
        """Let level ``depth``'s keys go when its actions are known and it is in memory
        (the visited set holds the same keys; :meth:`path` then needs a replay through
        the level). True when they went."""
        lv = self.levels[depth]
        if not lv.keyed or lv.acts is None or self._dir is not None:
            return False
        self._nbytes -= lv.fps.nbytes
        lv.fps = lv.fps[:0].copy()
        lv.keyed = False
        return True

    def pop(self) -> None:
        """Drop the last level (one whose states could not be stored in full)."""
        level = self.levels.pop()
        self.offsets.pop()
        if self._dir is None:
            self._nbytes -= level.nbytes

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    def close(self) -> None:
        """Drop the levels and remove spilled files."""
        self.levels = []
        self.offsets = [0]
        self._nbytes = 0
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __len__(self) -> int:
        return len(self.levels)

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (spilled levels count as none)."""
        return self._nbytes

    def index_of(self, depth: int, fp: int) -> int:
        assert self.levels[depth].keyed, f"level {depth}'s keys were let go"
        a = self.levels[depth].fps
        q = keys_of([fp], 1 if a.ndim == 1 else 2)
        i = int(key_searchsorted(a, q)[0])
        if i >= len(a) or key_int(a, i) != int(fp):
            raise KeyError(f"fingerprint {fp:#x} is not in level {depth}")
        return i

    def nodes(self, fps: np.ndarray, depth: int) -> np.ndarray:
        """The node indices (``int32``) of stored states ``fps`` (sorted, each in one of
        levels ``0..depth``): each level's sorted fingerprints are searched, level
        ``depth`` first (where most successors that are not new lie), then the levels
        before. Raises ``KeyError`` for a fingerprint in none of them."""
        out = np.empty(len(fps), dtype=np.int32)
        rest = np.arange(len(fps))
        q = fps
        for d in range(depth, -1, -1):
            if not len(rest):
                break
            assert self.levels[d].keyed, f"level {d}'s keys were let go"
            a = self.levels[d].fps
            if not len(a):
                continue
            pos = key_searchsorted(a, q)
            np.minimum(pos, len(a) - 1, out=pos)
            hit = ~key_ne(take_rows(a, pos), q)
            out[rest[hit]] = pos[hit] + self.offsets[d]
            miss = ~hit
            rest, q = rest[miss], take_rows(q, miss)
        if len(rest):
            raise KeyError(f"fingerprint {key_int(q, 0):#x} is not in levels 0..{depth}")
        return out

    def rows_to(self, depth: int, index: int) -> list[int]:
        """The rows, in levels ``0..depth``, of the states on the stored path to state
        ``index`` of level ``depth``."""
        out = []
        for d in range(depth, -1, -1):
            out.append(index)
            index = int(self.levels[d].parents[index])
        out.reverse()
        return out

    def path(self, depth: int, index: int) -> list[int] | StoredPath:
        """Fingerprints from an initial state to state ``index`` of level ``depth``; when
        a level on the way has let its keys go (:meth:`forget_keys`), the
        :class:`StoredPath` instead, which the trace's rebuild follows along the
        recorded actions (:func:`~modelcheck.level.rebuild_trace`: the spec replayed
        once)."""
        rows = self.rows_to(depth, index)
        levels = [self.levels[d] for d in range(depth + 1)]
        if all(lv.keyed for lv in levels):
            return [key_int(lv.fps, r) for lv, r in zip(levels, rows)]
        return StoredPath(
            tuple(key_int(lv.fps, r) if lv.keyed else None for lv, r in zip(levels, rows)),
            tuple(None if lv.acts is None else int(lv.acts[r]) for lv, r in zip(levels, rows)))
