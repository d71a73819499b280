"""Compact storage of explored states: the visited set and the BFS levels.

* :class:`FingerprintSet` — all visited fingerprints in one sorted ``uint64``
  array (8 bytes a state). Membership is a vectorised binary search; a level is
  merged in with one linear pass (two sorted runs).
* :class:`LevelStore` — per BFS level, the level's fingerprints (sorted) and for
  each the index of its parent in the previous level (``uint32``): 12 bytes a
  state, in memory or spilled to disk. Paths are rebuilt by walking parent
  indices, and the states on a path by replaying the spec from the initial state
  (TLC's approach: store fingerprints, regenerate states).
* :func:`dedupe_min` — keep one row per fingerprint, the one with the smallest
  key (parent index, then action id), which makes parent choice deterministic
  whatever the order in which successors were produced (and, with
  :func:`dedupe_min_inverse`, which unique fingerprint each row holds).

A state's *node index* is its place in breadth-first order: the states of the levels
before its own, then its row in its level (levels are sorted by fingerprint).
:meth:`LevelStore.nodes` hands out the node indices of stored states, so an observer
of the run (the liveness checker's state graph) never looks a fingerprint up itself.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import numpy as np

from .fileio import spill_subdir

__all__ = ["FingerprintSet", "LevelStore", "Level", "dedupe_min", "dedupe_min_inverse",
           "group_argmin", "group_min_mask"]

NO_PARENT = np.uint32(0xFFFFFFFF)


def group_min_mask(first: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per group of consecutive rows (a group starts where ``first`` is True), a mask
    holding the row of its smallest value (the first such row on ties).

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
        less = values[rep] < values[rep - 1]
        won = rep[less]
        keep[won] = True
        keep[won - 1] = False
        return keep
    keep[:] = False
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
    if min_rows and not ordered_runs:
        order = np.lexsort((keys, fps))  # by fingerprint, then key
    else:
        order = np.argsort(fps, kind="stable")
    sf = fps[order]
    new = np.empty(len(sf), dtype=bool)
    new[0] = True
    np.not_equal(sf[1:], sf[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    rows = order[starts]
    inv = None
    if inverse:
        inv = np.empty(len(fps), dtype=np.int32)
        inv[order] = np.cumsum(new, dtype=np.int32) - 1
    if ordered_runs or min_rows:
        return sf[starts], keys[rows], rows, inv
    sk = keys[order]
    mins = np.minimum.reduceat(sk, starts)
    return sf[starts], mins, rows, inv


class FingerprintSet:
    """A set of 64-bit fingerprints kept as one sorted array with spare capacity.

    Adding a sorted batch appends it to a buffer that grows with
    ``ndarray.resize`` (a ``realloc``, which the OS serves by remapping pages)
    and merges the two sorted runs in place, so memory peaks at the set's own 8
    bytes a state plus the batch, never at two copies of the set.
    """

    def __init__(self) -> None:
        self._buf = np.zeros(1024, dtype=np.uint64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    @property
    def _a(self) -> np.ndarray:
        return self._buf[:self._n]

    @property
    def nbytes(self) -> int:
        return int(self._buf.nbytes)

    def contains(self, fps: np.ndarray) -> np.ndarray:
        """Boolean mask: which of ``fps`` are in the set."""
        a = self._a
        if len(a) == 0 or len(fps) == 0:
            return np.zeros(len(fps), dtype=bool)
        idx = np.searchsorted(a, fps)
        np.minimum(idx, len(a) - 1, out=idx)
        return a[idx] == fps

    def growth(self, m: int) -> int:
        """Extra bytes that adding ``m`` fingerprints takes at its peak (the buffer's
        growth and the merge's temporary buffer)."""
        n = self._n
        grow = 0
        if n + m > len(self._buf):
            grow = 8 * (max(n + m, len(self._buf) + len(self._buf) // 4, 1024) - len(self._buf))
        return grow + 8 * min(n, m)

    def add_sorted(self, fps: np.ndarray) -> None:
        """Add sorted fingerprints that are not in the set yet."""
        m = len(fps)
        if m == 0:
            return
        n = self._n
        if n + m > len(self._buf):
            cap = max(n + m, len(self._buf) + len(self._buf) // 4, 1024)
            self._buf.resize(cap, refcheck=False)
        self._buf[n:n + m] = fps
        # Two sorted runs: timsort merges them in linear time with a buffer the
        # size of the smaller run.
        self._buf[:n + m].sort(kind="stable")
        self._n = n + m


@dataclass
class Level:
    """One BFS level: sorted fingerprints and each state's parent index in the level before."""

    fps: np.ndarray
    parents: np.ndarray  # uint32, NO_PARENT for initial states

    @property
    def nbytes(self) -> int:
        return int(self.fps.nbytes + self.parents.nbytes)


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

    def append(self, fps: np.ndarray, parents: np.ndarray) -> None:
        parents = parents.astype(np.uint32, copy=False)
        if self._dir is not None:
            d = len(self.levels)
            base = os.path.join(self._dir, f"level-{d:05d}")
            np.save(base + ".fps.npy", fps)
            np.save(base + ".parents.npy", parents)
            fps = np.load(base + ".fps.npy", mmap_mode="r")
            parents = np.load(base + ".parents.npy", mmap_mode="r")
        level = Level(fps, parents)
        self.levels.append(level)
        self.offsets.append(self.offsets[-1] + len(fps))
        if self._dir is None:
            self._nbytes += level.nbytes

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
        a = self.levels[depth].fps
        i = int(np.searchsorted(a, np.uint64(fp)))
        if i >= len(a) or int(a[i]) != int(fp):
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
            a = self.levels[d].fps
            if not len(a):
                continue
            pos = np.searchsorted(a, q)
            np.minimum(pos, len(a) - 1, out=pos)
            hit = a[pos] == q
            out[rest[hit]] = pos[hit] + self.offsets[d]
            miss = ~hit
            rest, q = rest[miss], q[miss]
        if len(rest):
            raise KeyError(f"fingerprint {int(q[0]):#x} is not in levels 0..{depth}")
        return out

    def path(self, depth: int, index: int) -> list[int]:
        """Fingerprints from an initial state to state ``index`` of level ``depth``."""
        out = []
        for d in range(depth, -1, -1):
            lv = self.levels[d]
            out.append(int(lv.fps[index]))
            index = int(lv.parents[index])
        out.reverse()
        return out
