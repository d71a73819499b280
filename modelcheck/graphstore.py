"""Storage of a large state graph: fingerprint indexes, edge arrays, CSR helpers.

The liveness checker (:mod:`modelcheck.liveness`) records every transition of the
breadth-first search and needs, for each, the index of its target state. This module
holds the pieces, all numpy arrays, never a Python object per state or edge:

* :class:`FpIndex` — fingerprint to node index for one set of states (a BFS level,
  or all of them): a hash table whose entries pack the rest of a fingerprint's hash and
  its row in one ``uint64``, each bucket's first entry in a table indexed by bucket (15
  to 28 bytes a state). One gather answers most look-ups, and an index of one level
  stays in the CPU caches, where a binary search over all states (22 dependent steps
  in main memory a query) does not.
* :class:`EdgeStore` — the edge arrays (``int32`` targets, ``uint16`` actions) grown
  level by level, in memory or, with a spill directory, in files that are read back
  memory-mapped (the pages are the kernel's page cache, dropped under pressure).
* :func:`csr_order` — where each transition of a batch goes in CSR order (source,
  then action id), by counting within the runs the kernel emits (one run per action
  instance, states in order), without a sort; :func:`csr_place` puts the transitions
  there directly (no permutation array in between).
* :func:`restrict`, :func:`parallel_in_rows` and :func:`any_per_node` — the subgraph
  of a node mask as CSR arrays (no copy when nothing is dropped), optionally without
  repeated (source, target) pairs, which scipy's SCC routine cannot take, and
  per-node reductions of edge flags; all chunk by chunk, a few bytes an edge at a time.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .fileio import spill_subdir

__all__ = ["FpIndex", "EdgeStore", "GrowArray", "csr_order", "csr_place", "parallel_edges",
           "parallel_in_rows", "restrict", "any_per_node", "edge_chunks", "out_edges",
           "NODE_LIMIT", "BACK_SHARE", "BACK_BYTES", "back_edge_cap", "CycleSeeds", "set_word",
           "action_set_table", "mark_sets", "set_columns"]

#: node indices are ``int32``
NODE_LIMIT = (1 << 31) - 1

#: a liveness collector (:class:`modelcheck.stategraph.GraphCollector`, the workers'
#: graph reader) keeps the edges that do not go one level up (8 bytes each) while they
#: are at most this share of the edges, or take at most :data:`BACK_BYTES`
#: (:func:`back_edge_cap`)
BACK_SHARE = 0.25
BACK_BYTES = 1 << 20


def back_edge_cap(n_edges: int) -> int:
    """The bytes a liveness collector may hold in the edges that do not go one level up
    (8 bytes each) once ``n_edges`` edges are stored: :data:`BACK_BYTES`, or
    :data:`BACK_SHARE` of the edges if more (past it, they are dropped: found from the
    levels). The first passes of the cycle search it follows level by level may keep
    twice that. Read at each call (tests lower the constants)."""
    return max(BACK_BYTES, int(8 * BACK_SHARE * n_edges))

_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd
_LOW32 = np.uint64(0xFFFFFFFF)


_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)  # odd


def _hash(fps: np.ndarray) -> np.ndarray:
    """Fibonacci hashing: the product with an odd constant modulo 2**64, a bijection
    in which every bit of the fingerprint moves the top bits (so packed states, the
    fingerprints of exact layouts, spread too). Two-column keys (:mod:`modelcheck.store`)
    hash each column so, and add: no bijection, so their look-ups compare the keys."""
    if fps.ndim == 1:
        return fps * _MIX  # wraps modulo 2**64
    return fps[:, 0] * _MIX + fps[:, 1] * _MIX2


_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


class FpIndex:
    """Fingerprints ``fps`` (distinct) of nodes ``offset, offset + 1, ...``: which node
    holds a fingerprint.

    The hash (a bijection of the fingerprint) is split into its top ``bits`` bits, the
    bucket, and the rest; an entry packs the rest above the node's row in one
    ``uint64`` (a row needs ``bits`` bits). The first entry of every bucket sits in a
    table indexed by bucket (all ones when it is empty: no row is all ones), the
    others bucket by bucket after their buckets' starts. With a bucket per 0.5-1
    fingerprints, one gather answers most look-ups. 12 bytes a bucket and 8 a further
    entry: 15-28 bytes a state. Built with one sort.

    Two-column keys (two-word states, 128-bit fingerprints) hash to 64 bits, which is
    no bijection: the index then keeps a reference to ``fps`` and a look-up takes an
    entry only when the key in that row is the one asked for."""

    def __init__(self, fps: np.ndarray, offset: int = 0) -> None:
        n = len(fps)
        if offset + n > NODE_LIMIT:
            raise ValueError("more than 2**31 - 1 states")
        self.offset = offset
        #: the keys, when the hash does not determine them (two columns)
        self._keys = fps if fps.ndim == 2 else None
        self.bits = bits = max(1, n.bit_length())  # 2**bits > n: a row fits in bits bits
        self._shift = np.uint64(64 - bits)
        self._low = np.uint64((1 << bits) - 1)
        h = _hash(np.asarray(fps, dtype=np.uint64))
        key = h >> self._shift  # the bucket
        b = key.view(np.int64)
        count = np.bincount(b, minlength=1 << bits)
        # rows in bucket order: one sort of (bucket, row) keys
        key <<= np.uint64(32)
        key |= np.arange(n, dtype=np.uint64)
        key.sort()
        bucket = (key >> np.uint64(32)).view(np.int64)
        key &= _LOW32
        # entry: the hash's low 64 - bits bits, then the row
        entries = np.take(h, key.view(np.int64))
        del h
        entries <<= np.uint64(bits)
        entries |= key
        del key
        head = np.ones(n, dtype=bool)  # the first entry of its bucket
        head[1:] = bucket[1:] != bucket[:-1]
        self.first = np.full(1 << bits, _EMPTY, dtype=np.uint64)
        self.first[bucket[head]] = entries[head]
        del bucket
        self.more = entries[~head]
        count -= 1
        np.maximum(count, 0, out=count)
        self.start = np.zeros((1 << bits) + 1, dtype=np.int32)
        np.cumsum(count, out=self.start[1:])

    @property
    def nbytes(self) -> int:
        return int(self.first.nbytes + self.start.nbytes + self.more.nbytes)

    def find(self, q: np.ndarray) -> np.ndarray:
        """The node of each of ``q`` (``int32``; -1 for fingerprints not here)."""
        h = _hash(q)
        b = (h >> self._shift).view(np.int64)
        h <<= np.uint64(self.bits)  # the key's part an entry holds, above the row
        e = self.first[b]
        hit = (e & ~self._low) == h
        full = e != _EMPTY
        hit &= full
        row = (e & self._low).view(np.int64)
        if self._keys is not None:
            self._verify(hit, row, q)
        out = np.where(hit, row + self.offset, -1).astype(np.int32)
        rows = np.flatnonzero(full & ~hit)  # look further in the bucket
        if not len(rows):
            return out
        b = b[rows]
        pos = self.start[b]
        end = self.start[b + 1]
        more = pos < end
        rows, pos, end = rows[more], pos[more], end[more]
        hh = h[rows]
        while len(rows):
            e = self.more[pos]
            hit = (e & ~self._low) == hh
            if self._keys is not None:
                self._verify(hit, (e & self._low).view(np.int64), q[rows])
            out[rows[hit]] = (e[hit] & self._low).view(np.int64) + self.offset
            np.logical_not(hit, out=hit)
            pos += 1
            hit &= pos < end
            rows, pos, end, hh = rows[hit], pos[hit], end[hit], hh[hit]
        return out


    def _verify(self, hit: np.ndarray, row: np.ndarray, q: np.ndarray) -> None:
        """Clear the hits whose row holds another key than ``q`` (a hash collision)."""
        assert self._keys is not None
        at = np.flatnonzero(hit)
        if len(at):
            k = self._keys[row[at]]
            hit[at[(k[:, 0] != q[at, 0]) | (k[:, 1] != q[at, 1])]] = False


def csr_order(rows: np.ndarray, acts: np.ndarray, n_rows: int, n_act: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """Transitions from rows ``rows`` (``0 <= rows < n_rows``) by actions ``acts``, at
    most one per (row, action): ``(out-degree per row, position of each transition
    in CSR order)``, the order by row, then action id.

    The kernel emits a batch's transitions action instance by action instance, rows
    in order within each (and a sharded run's tasks write them so, batch after batch
    and bucket after bucket: one action may have several runs): a transition's place
    is then its row's start plus the number of its row's transitions in the runs of
    smaller actions, the runs taken in action order (a counting sort). Many short
    runs are sorted instead."""
    m = len(rows)
    deg = np.bincount(rows, minlength=n_rows)
    if m == 0:
        return deg, np.zeros(0, dtype=np.intp)
    brk = np.flatnonzero((acts[1:] != acts[:-1]) | (rows[1:] <= rows[:-1])) + 1
    bounds = np.concatenate(([0], brk, [m]))
    run_act = acts[bounds[:-1]]
    if len(run_act) <= max(64, m >> 5):
        it = np.int32 if m <= NODE_LIMIT else np.intp  # (half the memory traffic)
        nxt = np.zeros(n_rows, dtype=it)
        np.cumsum(deg[:-1], out=nxt[1:])
        dest = np.empty(m, dtype=it)
        for j in np.argsort(run_act, kind="stable"):
            a, b = int(bounds[j]), int(bounds[j + 1])
            r = rows[a:b]
            place = nxt[r]
            dest[a:b] = place
            place += 1
            nxt[r] = place  # rows are distinct within a run
        return deg, dest
    order = np.argsort(rows.astype(np.int64) * n_act + acts, kind="stable")
    dest = np.empty(m, dtype=np.intp)
    dest[order] = np.arange(m, dtype=np.intp)
    return deg, dest


def csr_place(rows: np.ndarray, acts: np.ndarray, targets: np.ndarray, n_rows: int,
              n_act: int, dst_out: np.ndarray, act_out: np.ndarray,
              sets: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """:func:`csr_order` with the transitions put in place: ``targets`` and ``acts``
    go to their CSR places in ``dst_out`` and ``act_out`` (``len(rows)`` entries
    each); returns the out-degree per row. With ``sets`` ``(words, lut)`` each row's
    word in ``words`` gets the bits ``lut[a]`` of its transitions' actions ``a``
    (OR-ed in).

    In the kernel's order (few runs of one action, rows increasing in each) each run
    is placed at once: its rows' next free places are read, its targets written
    there and its action filled in, with no permutation array in between; a run's
    rows are distinct, so a run's bits are OR-ed in by one gather and one scatter.
    Many short runs go through :func:`csr_order`'s sort."""
    m = len(rows)
    if m:
        brk = np.flatnonzero((acts[1:] != acts[:-1]) | (rows[1:] <= rows[:-1])) + 1
        if len(brk) + 1 <= max(64, m >> 5):
            deg = np.bincount(rows, minlength=n_rows)
            bounds = np.concatenate(([0], brk, [m]))
            run_act = acts[bounds[:-1]]
            it = np.int32 if m <= NODE_LIMIT else np.intp
            nxt = np.zeros(n_rows, dtype=it)
            np.cumsum(deg[:-1], out=nxt[1:])
            words, lut = (None, None) if sets is None else sets
            for j in np.argsort(run_act, kind="stable"):
                a, b = int(bounds[j]), int(bounds[j + 1])
                r = rows[a:b]
                place = nxt[r]
                dst_out[place] = targets[a:b]
                act_out[place] = run_act[j]
                if words is not None and lut is not None and lut[run_act[j]]:
                    words[r] |= lut[run_act[j]]
                place += 1
                nxt[r] = place  # rows are distinct within a run
            return deg
    deg, dest = csr_order(rows, acts, n_rows, n_act)
    dst_out[dest] = targets
    act_out[dest] = acts
    if sets is not None and m:
        words, lut = sets
        bits = lut[acts]
        nz = np.flatnonzero(bits)
        if len(nz):
            np.bitwise_or.at(words, rows[nz], bits[nz])
    return deg


def parallel_edges(rows: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Positions of the edges whose (row, target) an earlier edge has (two actions
    between the same states), ignoring targets < 0 (not known yet). One sort of
    packed ``(row, target)`` keys; only repeated keys are looked at further."""
    ok = np.flatnonzero(dst >= 0) if len(dst) and dst.min() < 0 else None
    r, d = (rows, dst) if ok is None else (rows[ok], dst[ok])
    key = r.astype(np.uint64)
    key <<= np.uint64(32)
    key |= d.astype(np.uint64)
    s = np.sort(key)
    rep = s[1:][s[1:] == s[:-1]]
    del s
    if not len(rep):
        return np.zeros(0, dtype=np.int64)
    cand = np.flatnonzero(np.isin(key, np.unique(rep)))
    _, first = np.unique(key[cand], return_index=True)  # the earliest of each key
    dup = np.ones(len(cand), dtype=bool)
    dup[first] = False
    out = cand[dup]
    return (out if ok is None else ok[out]).astype(np.int64)


def parallel_in_rows(deg: np.ndarray, dst: np.ndarray, short: int = 16) -> np.ndarray:
    """:func:`parallel_edges` of CSR edges (``deg`` edges a row, in order): every edge
    is compared with the one 1, 2, ... places before it in the array (whole-array
    comparisons, no gathers), up to ``short`` places; rows of more edges are sorted."""
    m = len(dst)
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    it = np.int32 if m <= NODE_LIMIT else np.int64
    starts = np.zeros(len(deg), dtype=it)
    np.cumsum(deg[:-1], out=starts[1:])
    pos: np.ndarray = np.arange(m, dtype=it)
    pos -= np.repeat(starts, deg)  # place in its row
    del starts
    known = dst >= 0 if dst.min() < 0 else None
    dup = np.zeros(m, dtype=bool)
    longest = int(deg.max())
    for k in range(1, min(longest, short + 1)):
        eq = dst[k:] == dst[:-k]
        eq &= pos[k:] >= k
        if known is not None:
            eq &= known[k:]
        dup[k:] |= eq
    if longest > short + 1:
        sel = np.flatnonzero(np.repeat(deg > short + 1, deg))
        rows = np.repeat(np.arange(len(deg)), deg)[sel]
        dup[sel[parallel_edges(rows, dst[sel])]] = True
    return np.flatnonzero(dup)


class GrowArray:
    """A 1-d array grown at its end, by half its size at a time. ``ndarray.resize``
    reallocates (a large buffer is remapped by the OS, not copied) and fills the new
    part with zeros: the spare capacity is resident memory too (up to a third of the
    buffer), which :attr:`nbytes` counts."""

    def __init__(self, dtype: Any) -> None:
        self._buf = np.zeros(0, dtype=dtype)
        self.n = 0

    def extend(self, m: int) -> None:
        """Make room for ``m`` more entries (zeros) at the end."""
        if self.n + m > len(self._buf):
            cap = max(self.n + m, len(self._buf) + len(self._buf) // 2, 1 << 16)
            self._buf.resize(cap, refcheck=False)
        self.n += m

    def append(self, values: np.ndarray) -> None:
        m = len(values)
        self.extend(m)
        self._buf[self.n - m:self.n] = values

    @property
    def nbytes(self) -> int:
        """Bytes of the buffer (its capacity)."""
        return int(self._buf.nbytes)

    def view(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Entries ``start:stop`` (valid until the next ``extend``/``append``)."""
        return self._buf[start:self.n if stop is None else stop]

    def finish(self) -> np.ndarray:
        """The array (the buffer trimmed to it; no more appends)."""
        self._buf.resize(self.n, refcheck=False)
        return self._buf


class EdgeStore:
    """The graph's edge arrays, appended level by level in CSR order: targets
    (``int32`` node indices) and action ids (``act_type``). With ``spill_dir`` they
    are written to two files in a fresh directory under it and read back
    memory-mapped by :meth:`finish`; :meth:`close` removes the files."""

    def __init__(self, act_type: Any, spill_dir: str | None = None) -> None:
        self.act_type = np.dtype(act_type)
        self.n = 0
        self._dir: str | None = None
        self._files: list[Any] = []
        self._dst = GrowArray(np.int32)
        self._act = GrowArray(self.act_type)
        if spill_dir is not None:
            self._dir = spill_subdir(spill_dir, "edges-")
            self._files = [open(os.path.join(self._dir, name), "wb")  # noqa: SIM115
                           for name in ("dst.bin", "act.bin")]

    @property
    def spilled(self) -> bool:
        return self._dir is not None

    @property
    def bytes_per_edge(self) -> int:
        return 4 + self.act_type.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (none when spilled): the arrays' buffers with their spare
        capacity (:class:`GrowArray`), which the memory budget counts as it is resident,
        not only the ``n`` edges' bytes."""
        return 0 if self.spilled else self._dst.nbytes + self._act.nbytes

    def append(self, dst: np.ndarray, act: np.ndarray) -> None:
        m = len(dst)
        if m == 0:
            return
        if self._files:
            np.ascontiguousarray(dst, dtype=np.int32).tofile(self._files[0])
            np.ascontiguousarray(act, dtype=self.act_type).tofile(self._files[1])
        else:
            self._dst.append(dst)
            self._act.append(act)
        self.n += m

    def dst_view(self) -> np.ndarray:
        """The targets of the edges so far (in memory only; valid until the next
        append)."""
        assert not self._files, "spilled edges are in their file"
        return self._dst.view()

    def slots(self, m: int) -> tuple[np.ndarray, np.ndarray]:
        """``(targets, actions)`` views of ``m`` new edges at the end, to be filled in
        place (in memory only; valid until the next append)."""
        assert not self._files, "spilled edges are appended"
        self._dst.extend(m)
        self._act.extend(m)
        self.n += m
        return self._dst.view(self._dst.n - m), self._act.view(self._act.n - m)

    def append_at(self, dest: np.ndarray, dst: np.ndarray, act: np.ndarray) -> None:
        """Append ``len(dst)`` edges, edge ``i`` (target ``dst[i]``, action ``act[i]``)
        at place ``dest[i]`` among them (``dest`` a permutation of ``0..len(dst) - 1``:
        :func:`csr_order`'s); in memory they are put in place in the store's arrays,
        with no copy in between."""
        m = len(dst)
        if m == 0:
            return
        if self._files:
            d = np.empty(m, dtype=np.int32)
            d[dest] = dst
            a = np.empty(m, dtype=self.act_type)
            a[dest] = act
            self.append(d, a)
            return
        self._dst.extend(m)
        self._dst.view(self._dst.n - m)[dest] = dst
        self._act.extend(m)
        self._act.view(self._act.n - m)[dest] = act
        self.n += m

    def _close_files(self) -> None:
        for f in self._files:
            f.close()
        self._files = []

    def patch_unknown(self, fill: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Set the targets still unknown (< 0) to ``fill(their positions)`` (no more
        appends); returns the positions."""
        if self._dir is None:
            dst = self._dst.view()
        else:
            self._close_files()
            if self.n == 0:
                return np.zeros(0, dtype=np.int64)
            dst = np.memmap(os.path.join(self._dir, "dst.bin"), dtype=np.int32, mode="r+",
                            shape=(self.n,))
        where = np.flatnonzero(dst < 0)
        if len(where):
            dst[where] = fill(where)
        if isinstance(dst, np.memmap):
            dst.flush()
        del dst
        return where

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """``(dst, act)`` of all edges (no more appends); read-only memory maps when
        spilled."""
        if self._dir is None:
            return self._dst.finish(), self._act.finish()
        self._close_files()
        if self.n == 0:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=self.act_type)
        dst = np.memmap(os.path.join(self._dir, "dst.bin"), dtype=np.int32, mode="r",
                        shape=(self.n,))
        act = np.memmap(os.path.join(self._dir, "act.bin"), dtype=self.act_type, mode="r",
                        shape=(self.n,))
        return dst, act

    def close(self) -> None:
        """Drop the arrays and remove spilled files."""
        self._close_files()
        self._dst = GrowArray(np.int32)
        self._act = GrowArray(self.act_type)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


# ------------------------------------------------------------------ CSR helpers
def edge_chunks(indptr: np.ndarray, edges: int = 1 << 21) -> Iterator[tuple[int, int, int, int]]:
    """``(first node, end node, first edge, end edge)`` of consecutive node ranges
    holding about ``edges`` edges each (at least one node)."""
    n = len(indptr) - 1
    top = int(np.iinfo(indptr.dtype).max)
    u = 0
    while u < n:
        e0 = int(indptr[u])
        # (a key of the array's own type: a Python int would convert the whole array)
        key = indptr.dtype.type(min(e0 + edges, top))
        v = int(np.searchsorted(indptr, key, side="right")) - 1
        v = min(n, max(v, u + 1))
        yield u, v, e0, int(indptr[v])
        u = v


def out_edges(indptr: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(edge indices, their sources)`` of the edges of ``nodes`` (sorted), in CSR order."""
    starts = indptr[nodes].astype(np.int64)
    counts = indptr[nodes + 1].astype(np.int64) - starts
    total = int(counts.sum())
    eidx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
    return eidx, np.repeat(nodes, counts)


def _before(flags: np.ndarray) -> np.ndarray:
    """``out[i]``: how many of ``flags[:i]`` are set (``len(flags) + 1`` entries)."""
    out = np.zeros(len(flags) + 1, dtype=np.int32 if len(flags) <= NODE_LIMIT else np.int64)
    np.cumsum(flags, out=out[1:], dtype=out.dtype)
    return out


def any_per_node(indptr: np.ndarray, flags: np.ndarray) -> np.ndarray:
    """Per node: one of its edges (CSR ``indptr``, from edge 0) has its flag set."""
    n = len(indptr) - 1
    out = np.zeros(n, dtype=bool)
    for u, v, e0, e1 in edge_chunks(indptr):
        if e1 > e0:
            c = _before(flags[e0:e1])
            out[u:v] = c[indptr[u + 1:v + 1] - e0] > c[indptr[u:v] - e0]
    return out


def restrict(indptr: np.ndarray, dst: np.ndarray, mask: np.ndarray, simple: bool = False,
             edges: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The subgraph of the nodes in ``mask`` (every node keeps its index; edges
    leaving or entering the mask are dropped) and, with ``edges`` (a flag per edge),
    of the edges it marks; with ``simple`` without the edges whose source and target
    an earlier kept edge has: ``(indptr, dst)``. The arrays themselves when nothing
    is dropped; otherwise ``int32`` copies (``indptr``: ``int64`` past 2**31 - 1
    edges)."""
    if not simple and edges is None and mask.all():
        return indptr, dst
    n = len(mask)
    m = len(dst)
    sub_indptr = np.zeros(n + 1, dtype=np.int32 if m <= NODE_LIMIT else np.int64)
    sub_dst = np.empty(m, dtype=np.int32)  # pages past the kept edges are never touched
    done = 0
    for u, v, e0, e1 in edge_chunks(indptr):
        if e1 == e0:
            sub_indptr[u + 1:v + 1] = done
            continue
        keep = np.repeat(mask[u:v], np.diff(indptr[u:v + 1]))
        d = dst[e0:e1]
        keep &= mask[d]
        if edges is not None:
            keep &= edges[e0:e1]
        ends = indptr[u + 1:v + 1] - e0
        c = _before(keep)
        if simple:
            kept = np.flatnonzero(keep)
            deg = np.diff(c[indptr[u:v + 1] - e0])
            par = parallel_in_rows(deg, d[kept])
            if len(par):
                keep[kept[par]] = False
                c = _before(keep)
        k = int(c[-1])
        sub_dst[done:done + k] = d[keep]
        sub_indptr[u + 1:v + 1] = c[ends] + done
        done += k
    if done == m:  # nothing dropped
        return indptr, dst
    sub_dst.resize(done, refcheck=False)
    return sub_indptr, sub_dst


def set_word(k: int) -> type[np.unsignedinteger[Any]]:
    """The smallest unsigned type holding a bit for each of ``k`` action sets
    (``k <= 64``)."""
    return next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                if np.iinfo(t).bits >= k)


def action_set_table(sets: Sequence[Iterable[int]], n_act: int) -> np.ndarray:
    """Per action id below ``n_act``, a word (:func:`set_word`) whose bit ``j`` says the
    id is in ``sets[j]`` (at most 64 sets; ids outside ``0..n_act - 1`` left out)."""
    word = set_word(len(sets))
    lut = np.zeros(n_act, dtype=word)
    for j, ids in enumerate(sets):
        lut[[i for i in ids if 0 <= i < n_act]] |= word(1 << j)
    return lut


def mark_sets(en: np.ndarray, rows: np.ndarray, sets: np.ndarray) -> None:
    """OR each transition's action-set bits ``sets`` into the word of its source row
    ``rows`` in ``en``."""
    nz = np.flatnonzero(sets)
    if len(nz):
        np.bitwise_or.at(en, rows[nz], sets[nz])


def set_columns(bits: np.ndarray, k: int) -> list[np.ndarray]:
    """Per node words of set bits ``bits`` as ``k`` boolean columns, one a set."""
    word = bits.dtype.type
    return [((bits >> word(j)) & word(1)).astype(bool) for j in range(k)]


class CycleSeeds:
    """The first pass of the nodes that may lie on a cycle within a node mask (the
    nodes where state predicate ``column`` is false; None: every node), as
    :func:`modelcheck.liveness._may_cycle` computes it without an edge mask, followed
    level by level as the levels' edges are stored: the nodes reached by edges one
    level up within the mask from the target of an edge that is not one level up (both
    ends in the mask), and the edges one level up so taken (kept for the pass down, which
    needs every level; :meth:`finish`).

    Each reached node's edges are read once, when its level's edges are stored or, for
    a node reached later by an edge back to an earlier level, then (a reach is monotone:
    the order does not matter). A level's mask is known once it is expanded, so the
    nodes reached in the next level are filtered by it at its turn."""

    def __init__(self, column: int | None) -> None:
        self.column = column
        self.sub = GrowArray(np.bool_)  # the mask, of the levels stored so far
        self.reached = GrowArray(np.bool_)  # of the nodes known (to the next level's end)
        self.sources: list[np.ndarray] = []  # the sources of the edges not one level up
        #: per level, the edges one level up taken from it: (sources, targets)
        self.kept: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        self.pending = np.zeros(0, dtype=np.int32)  # reached in the next level
        self.levels = 0  # levels stored
        self._bytes = 0

    @property
    def kept_bytes(self) -> int:
        """Bytes of the edges kept for the pass down and of the sources."""
        return self._bytes

    @property
    def nbytes(self) -> int:
        return int(self.sub.nbytes + self.reached.nbytes + self._bytes + self.pending.nbytes)

    def level(self, depth: int, bits: np.ndarray, back: list[tuple[np.ndarray, np.ndarray]],
              offsets: np.ndarray, stop: int, end: int, indptr: np.ndarray,
              dst: np.ndarray) -> None:
        """Level ``depth``'s edges are stored (nodes up to ``stop``; ``end`` the nodes
        known, to the end of the next level; ``offsets`` the first node of each level;
        ``indptr`` and ``dst`` the edges so far): its mask (from its label ``bits``), the
        edges not one level up ``back`` (pairs of sources and targets) and the reach
        through it."""
        assert depth == self.levels, "levels come in order"
        self.levels += 1
        self.sub.append(np.ones(len(bits), dtype=bool) if self.column is None
                        else ~bits[:, self.column])
        self.reached.extend(end - self.reached.n)
        sub, reached = self.sub.view(), self.reached.view()
        if depth - 1 in self.kept:  # the edges into this level: those into its mask
            self.kept[depth - 1] = [self._into(pair, sub) for pair in self.kept[depth - 1]]
        # the nodes to go on from, per level from the first one's: the pending nodes of
        # this level (now that its mask is known) and the new targets of the edges back
        new = [self.pending[sub[self.pending]]] if len(self.pending) else []
        self.pending = np.zeros(0, dtype=np.int32)
        for src, t in back:  # (both ends stored: their masks are known)
            ok = sub[src]
            ok &= sub[t]
            if ok.any():
                self.sources.append(src[ok])
                self._bytes += self.sources[-1].nbytes
                t = t[ok]
                t = t[~reached[t]]
                reached[t] = True
                new.append(t)
        lowest = min((int(t.min()) for t in new if len(t)), default=stop)
        first = int(np.searchsorted(offsets, lowest, side="right")) - 1
        lo = int(offsets[first]) if first <= depth else stop
        go = np.zeros(stop - lo, dtype=bool)  # (a node of several edges: once)
        for t in new:
            go[t - lo] = True
        del new
        for lv in range(first, depth + 1):  # up through the levels stored
            u, v = int(offsets[lv]), (int(offsets[lv + 1]) if lv + 1 < len(offsets) else stop)
            nodes = np.flatnonzero(go[u - lo:v - lo])
            if not len(nodes):
                continue
            nodes += u
            eidx, esrc = out_edges(indptr, nodes)
            t = np.asarray(dst[eidx])
            ok = t >= v  # one level up (an edge goes at most one level up)
            if lv < depth:  # (the next level's mask is not known yet: filtered at its turn)
                ok &= sub[t]
            if not ok.any():
                continue
            t = t[ok]
            pair = (esrc[ok].astype(np.int32), t.astype(np.int32))
            self.kept.setdefault(lv, []).append(pair)
            self._bytes += pair[0].nbytes + pair[1].nbytes
            t = t[~reached[t]]
            if len(t):
                reached[t] = True
                if lv < depth:
                    go[t - lo] = True
                else:
                    self.pending = t.astype(np.int32)

    def _into(self, pair: tuple[np.ndarray, np.ndarray], sub: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The edges of ``pair`` whose target is in the mask ``sub``."""
        ok = sub[pair[1]]
        if ok.all():
            return pair
        self._bytes -= pair[0].nbytes + pair[1].nbytes
        out = (pair[0][ok], pair[1][ok])
        self._bytes += out[0].nbytes + out[1].nbytes
        return out

    def complete(self, n: int) -> bool:
        """Every one of the ``n`` nodes' levels followed."""
        return self.sub.n == n and self.reached.n == n

    def finish(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mask, nodes that may lie on a cycle within it)``: the nodes reached, and
        reaching by the edges taken the source of an edge not one level up."""
        sub = self.sub.finish()
        reached = self.reached.finish()
        reached &= sub
        reaching = np.zeros(len(sub), dtype=bool)
        for src in self.sources:
            reaching[src] = True
        for lv in sorted(self.kept, reverse=True):  # and down
            for src, t in self.kept[lv]:
                reaching[src[reaching[t]]] = True
        reached &= reaching
        self.kept, self.sources = {}, []
        return sub, reached
