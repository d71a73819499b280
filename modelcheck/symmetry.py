"""Symmetry reduction: canonical representatives of states under permutations of ids.

A spec declares interchangeable identities with ``symmetry = ("Brokers",)``. A
permutation ``pi`` of such an index set acts on a state by moving array elements
indexed by the set (``a[i]`` becomes ``a[pi(i)]``) and mapping the values of cells
whose type depends on the set (:meth:`~modelcheck.types.base.BoundType.cells_permutation`:
``Ref(set)`` values ``v`` become ``pi(v)``, wherever they are: in records, sequence
slots, set elements (bits move) and bag elements (counts move)).

The canonical representative of a state is chosen among the members of its orbit
whose ids carry sorted signatures (see :class:`Symmetry`): the member with the
smallest fingerprint among them. That choice is a function of the orbit: two states
get the same canonical fingerprint exactly when one is a permutation of the other
(with exact fingerprints). Invariants and properties must themselves be symmetric
(as in TLC, the spec's responsibility). Counterexamples remain real behaviours: the
explorer stores canonical fingerprints, and trace replay follows actual successors
whose canonical fingerprint matches.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from .errors import SpecDefinitionError
from .layout import Layout, _mix64
from .types import BoundRecord, BoundSet, BoundType, ScalarType
from .types.sets import _chunk_bits

__all__ = ["Symmetry"]


class _Perm:
    """One permutation, compiled to a source cell per target cell and, per array
    element (or variable) whose type maps values
    (:meth:`~modelcheck.types.base.BoundType.cells_permutation`), a function of its cells:
    the reference that :class:`Symmetry`'s one pass over all permutations is tested
    against."""

    def __init__(self, layout: Layout, pis: dict[str, dict[int, int]]) -> None:
        self.pis = pis
        self.src = _source_cells(layout, pis)
        self.groups: list[tuple[int, int, Callable[[list[np.ndarray]], list[np.ndarray]]]] = []
        for info in layout.vars.values():
            assert info.leaf is not None
            fn = info.leaf.cells_permutation(pis)
            if fn is None:
                continue
            k = info.leaf_cells
            for start in range(info.first_cell, info.first_cell + info.n_cells, k):
                self.groups.append((start, k, fn))
        self.identity = all(pis[k][i] == i for k in pis for i in pis[k])

    def apply(self, layout: Layout, cols: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = [cols[int(s)] for s in self.src]
        for start, k, fn in self.groups:
            out[start:start + k] = fn(out[start:start + k])
        return out


def _source_cells(layout: Layout, pis: dict[str, dict[int, int]]) -> np.ndarray:
    """The cell of the state that each cell of the permuted state comes from (array
    elements indexed by a permuted id set move; values are mapped afterwards)."""
    src = np.empty(len(layout.cells), dtype=np.int64)
    for c in layout.cells:
        info = layout.vars[c.var]
        nd = len(info.dim_names)
        path = tuple(
            pis[name].get(int(i), int(i)) if name in pis else i
            for name, i in zip(info.dim_names, c.path)
        ) + c.path[nd:]
        src[layout.cell_index[(c.var, path)]] = c.index
    return src


#: sets of at most this many ids rank permutations by a table (n ** n entries)
_RANK_IDS = 6
#: at most about this many codes (pairs x cells) are held at once
_BLOCK_CODES = 1 << 20
#: scalar cells with more codes than this add nothing to the ids' signatures
_SIG_CODES = 1 << 12
#: cells whose codes (set elements) x permutations x ids exceed this add nothing to the
#: signatures
_SIG_WORK = 1 << 24
#: sets whose chunk cells x 2,048 bytes x ids exceed this add to the signatures bit by bit
_SIG_BYTES = 1 << 22


class Symmetry:
    """Canonicalises packed states under the permutations of the declared id sets.

    The canonical state of a state ``s`` is the one with the smallest fingerprint among
    its *sorted* permutations: the states ``g(s)`` in which the ids of each set carry
    non-decreasing signatures. An id's signature (:meth:`signatures`) is a sum, over
    the state's cells and set members, of a number that depends only on the orbit of
    (position, value, id) under the group, so that ``sig(g(s), g(i)) = sig(s, i)`` for
    every permutation ``g`` and id ``i``. The sorted permutations of ``g(s)`` are then
    the very states that the sorted permutations of ``s`` are, so the canonical state
    is a function of the orbit (the same for every member of it) and one of its
    members: two states get the same canonical state exactly when one is a
    permutation of the other. Only ties between signatures leave more than one
    sorted permutation (all orders within each tied run), so a state is permuted a
    few times rather than by the whole group; signatures that happen to be equal only
    make more ties, never another choice.

    The chosen permutations are applied together: the cells of every (state,
    permutation) pair are gathered (array elements moved), each variable whose values
    a permutation maps is mapped for all pairs at once
    (:meth:`~modelcheck.types.base.BoundType.cells_permutations_paired`), and the
    permuted states are packed and fingerprinted together."""

    #: the choice of canonical states (checkpoints record it)
    FORM = "sorted-signatures-v1"

    def __init__(self, layout: Layout, sets: dict[str, range],
                 fingerprints: Callable[[np.ndarray], np.ndarray] | None = None) -> None:
        self.layout = layout
        #: the keys the canonical state is the smallest of (the layout's by default)
        self.fingerprints = fingerprints or layout.fingerprints
        self.names = tuple(sets)
        for name in sets:
            if not any(name in info.dim_names for info in layout.vars.values()) and not any(
                    c.ref == name for c in layout.cells):
                raise SpecDefinitionError(
                    f"symmetry set {name!r} is not used by any variable (no array indexed by "
                    "it, no Ref or SetOf of it)."
                )
        self._sizes = [len(ids) for ids in sets.values()]
        # every cell decoded and packed at once: (cells, 1) columns of the layout's
        self._word_of = np.asarray(layout.word_of, dtype=np.int64)
        self._mult = np.asarray(layout.mult, dtype=np.uint64)[:, None]
        self._lo = np.asarray(layout.lo, dtype=np.int64)[:, None]
        self._shift: np.ndarray | None = None
        if layout.bitfields:
            self._shift = np.array([int(m).bit_length() - 1 for m in layout.mult],
                                   dtype=np.uint64)[:, None]
            self._modulus = np.array([(1 << max(1, int(sz - 1).bit_length())) - 1
                                      for sz in layout.size], dtype=np.uint64)[:, None]
        else:
            self._modulus = np.asarray(layout.size, dtype=np.uint64)[:, None]
        self._pack_order = np.argsort(self._word_of, kind="stable")
        self._pack_starts = np.flatnonzero(np.r_[True, np.diff(self._word_of[self._pack_order])
                                                 != 0])
        #: the words that hold cells (the others stay 0)
        self._pack_words = np.flatnonzero(np.bincount(self._word_of))
        per_set = []
        for name, ids in sets.items():
            per_set.append([(name, dict(zip(ids, p))) for p in itertools.permutations(ids)])
        #: every permutation, ``{Ids set name: {id: id}}``, the identity first, in the
        #: order of ``itertools.product`` over each set's ``itertools.permutations``
        self.all_pis: list[dict[str, dict[int, int]]] = [
            dict(combo) for combo in itertools.product(*per_set)]
        #: the permutations other than the identity
        self.pis = self.all_pis[1:]
        n_cells = len(layout.cells)
        # (cells, permutations): the source cell of each cell under each permutation
        self._src = np.stack([_source_cells(layout, pis) for pis in self.all_pis], axis=1)
        #: per variable whose values move: first cell, elements, cells per element, and
        #: the function of (element codes, permutation per column)
        self._groups: list[tuple[int, int, int,
                                 Callable[[np.ndarray, np.ndarray], np.ndarray]]] = []
        if self.pis:
            for info in layout.vars.values():
                assert info.leaf is not None
                fn = info.leaf.cells_permutations_paired(self.all_pis)
                if fn is None:
                    continue
                k = info.leaf_cells
                self._groups.append((info.first_cell, info.n_cells // k, k, fn))
        # the position of each id's image, per set and permutation: (permutations, ids)
        self._pos = [np.array([[ids.index(pis[name][i]) for i in ids] for pis in self.all_pis],
                              dtype=np.int64) for name, ids in sets.items()]
        #: each set's columns among the signatures
        self._cols: list[slice] = []
        k = 0
        for n in self._sizes:
            self._cols.append(slice(k, k + n))
            k += n
        self._sig_width = k
        self._tables(n_cells)
        # within-tie reorderings: per set, per tie mask of the sorted signatures (bit j:
        # sorted ids j and j + 1 tie), the permutations of positions within the tied runs
        self._taus: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [
            _tie_orders(n) for n in self._sizes]
        self._tie_bits = [np.int64(1) << np.arange(max(n - 1, 0), dtype=np.int64)
                          for n in self._sizes]
        self._fact = [np.array([math.factorial(n - 1 - a) for a in range(n)], dtype=np.int64)
                      for n in self._sizes]
        # per set of at most _RANK_IDS ids, the rank of each permutation by its inverse
        # written as base-n digits (the others rank by Lehmer codes)
        self._digits = [n ** np.arange(n - 1, -1, -1, dtype=np.int64) for n in self._sizes]
        self._rank_tables: list[np.ndarray | None] = []
        for n, digits in zip(self._sizes, self._digits):
            if n > _RANK_IDS:
                self._rank_tables.append(None)
                continue
            table = np.full(n ** n, -1, dtype=np.int64)
            for r, p in enumerate(itertools.permutations(range(n))):
                inverse = np.argsort(p)  # seq: new id j <- old id inverse[j]
                table[int(inverse @ digits)] = r
            self._rank_tables.append(table)
        strides = [1] * len(self._sizes)
        for x in range(len(self._sizes) - 2, -1, -1):
            strides[x] = strides[x + 1] * math.factorial(self._sizes[x + 1])
        self._strides = strides

    @property
    def group_size(self) -> int:
        return len(self.all_pis)

    # -- signatures -------------------------------------------------------------------------
    def _tables(self, n_cells: int) -> None:
        """The signature contributions: per scalar cell of a variable whose values move
        cell by cell, a row per code; per set of a variable of sets, a row per element;
        each row a number per id (of every set) that depends only on the orbit of
        (position, value, id) under the group."""
        layout = self.layout
        n_perms = len(self.all_pis)
        dest = np.empty_like(self._src)
        cols = np.arange(n_perms)[None, :]
        dest[self._src, cols] = np.arange(n_cells)[:, None]
        width = self._sig_width
        cell_idx: list[int] = []
        cell_rows: list[np.ndarray] = []
        #: per variable of sets: first cell, sets, chunks per set, the set's table
        #: ``(sets, elements, width)``
        self._set_tables: list[tuple[int, int, int, int, np.ndarray]] = []
        if len(self.all_pis) == 1:
            self._cell_idx = np.empty(0, dtype=np.int64)
            self._cell_off = np.empty(0, dtype=np.int64)
            self._cell_table = np.zeros((0, width), dtype=np.uint64)
            return
        mapped_memo: dict[int, np.ndarray] = {}
        for info in layout.vars.values():
            leaf = info.leaf
            assert leaf is not None
            k = info.leaf_cells
            if _cellwise(leaf):
                for c in range(info.first_cell, info.first_cell + info.n_cells):
                    t = layout.types[c]
                    if t.size > _SIG_CODES or n_perms * t.size * width > _SIG_WORK:
                        continue
                    mapped = mapped_memo.get(id(t))
                    if mapped is None:
                        codes = np.arange(t.lo, t.lo + t.size, dtype=np.int64)
                        rows = []
                        for pis in self.all_pis:
                            f = t.permutation(pis)
                            rows.append(codes if f is None else
                                        np.asarray(f(codes), dtype=np.int64))
                        mapped = np.stack(rows) - t.lo  # (permutations, codes)
                        mapped_memo[id(t)] = mapped
                    where = dest[c][:, None] * t.size + mapped  # (permutations, codes)
                    row = self._orbit_keys(where, t.size * n_cells, 0)
                    if row is not None:
                        cell_idx.append(c)
                        cell_rows.append(row)
            elif type(leaf) is BoundSet and n_perms * leaf.width * width <= _SIG_WORK:
                w = leaf.width
                to = leaf.element_permutations(self.all_pis)
                if to is None:
                    continue
                firsts = range(info.first_cell, info.first_cell + info.n_cells, k)
                tables: list[np.ndarray | None] = []
                for fc in firsts:
                    where = dest[fc][:, None] * w + to
                    tables.append(self._orbit_keys(where, w * n_cells, 1))
                if any(tab is not None for tab in tables):
                    # rows by (set, chunk * chunk_bits + bit), chunks padded to full width
                    span = k * leaf.chunk_bits
                    table = np.zeros((len(tables) * span, width), dtype=np.uint64)
                    for q, tab in enumerate(tables):
                        if tab is not None:
                            table[q * span:q * span + w] = tab
                    self._set_tables.append((info.first_cell, len(tables), k,
                                             leaf.chunk_bits, table))
        # the sets small enough go by bytes: per chunk cell, byte position and byte
        # value, the sum of the rows of its bits (one lookup per nonzero byte)
        byte_cells: list[int] = []
        byte_rows: list[np.ndarray] = []
        bits_of = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.uint64)
        rest = []
        for entry in self._set_tables:
            first, n_sets, kc, w, table = entry
            if n_sets * kc * 8 * 256 * width > _SIG_BYTES:
                rest.append(entry)
                continue
            per_bit = table.reshape(n_sets * kc, w, width)
            for j in range(n_sets * kc):
                bits = np.zeros((64, width), dtype=np.uint64)
                bits[:w] = per_bit[j]
                # (8 byte positions, 256 values, width): sums of fewer than 2**32 each
                rows = np.einsum("vb,pbw->pvw", bits_of, bits.reshape(8, 8, width))
                byte_cells.append(first + j)
                byte_rows.append(rows.reshape(8 * 256, width))
        self._set_tables = rest
        self._byte_cells = np.array(byte_cells, dtype=np.int64)
        self._byte_table = (np.concatenate(byte_rows) if byte_rows
                            else np.zeros((0, width), dtype=np.uint64))
        self._cell_idx = np.array(cell_idx, dtype=np.int64)
        sizes = [len(r) for r in cell_rows]
        self._cell_off = np.cumsum([0, *sizes[:-1]]).astype(np.int64) - np.array(
            [layout.cells[c].lo for c in cell_idx], dtype=np.int64)
        self._cell_table = (np.concatenate(cell_rows) if cell_rows
                            else np.zeros((0, width), dtype=np.uint64))

    def _orbit_keys(self, where: np.ndarray, span: int, tag: int) -> np.ndarray | None:
        """Signature rows of a position: ``where[p, v]`` the place (position and value)
        of value ``v`` under permutation ``p``, below ``span``; per value and id, a hash
        of the smallest (place, id) over the permutations, or None when the rows tell
        no id of a set from another."""
        out = np.zeros((where.shape[1], self._sig_width), dtype=np.uint64)
        useful = False
        for x, pos in enumerate(self._pos):
            n = pos.shape[1]
            keys = (where[:, :, None] * n + pos[:, None, :]).min(axis=0)  # (values, ids)
            keys = keys * 2 + tag + span * n * 2 * x
            if (keys == keys[:, :1]).all():
                continue
            useful = True
            out[:, self._cols[x]] = _mix64(keys.astype(np.uint64)) >> np.uint64(32)
        return out if useful else None

    def signatures(self, x: np.ndarray) -> np.ndarray:
        """The signature of every id of every set in each state of decoded cells
        ``x`` ``(cells, n)``: ``(n, ids of all sets)`` uint64, each set's ids in their
        order, the sets in the declared order."""
        n = x.shape[1]
        width = self._sig_width
        sig = np.zeros((n, width), dtype=np.uint64)
        if len(self._cell_idx):
            rows = x[self._cell_idx] + self._cell_off[:, None]  # (cells, n)
            sig += np.take(self._cell_table, rows, axis=0).sum(axis=0, dtype=np.uint64)
        if len(self._byte_cells):
            # the nonzero bytes of the set chunks (little-endian), one lookup each
            chunks = np.ascontiguousarray(x[self._byte_cells].T, dtype="<i8").reshape(-1)
            nz = np.flatnonzero(chunks)  # (state, chunk cell) of the nonzero chunks
            raw = chunks[nz].view(np.uint8)
            at = np.flatnonzero(raw)
            r, b = np.divmod(at, 8)
            state, j = np.divmod(nz[r], len(self._byte_cells))
            vals = np.take(self._byte_table, (j * 8 + b) * 256 + raw[at], axis=0)
            self._add_rows(sig, state, vals)
        for first, n_sets, kc, w, table in self._set_tables:
            block = x[first:first + n_sets * kc]  # (sets * kc, n)
            grid = np.ascontiguousarray(block.T, dtype="<i8").reshape(-1)
            nz = np.flatnonzero(grid)
            if not len(nz):
                continue
            cell, b = _chunk_bits(grid[nz], nz)
            state, rest = np.divmod(cell, n_sets * kc)
            which, chunk = np.divmod(rest, kc)
            vals = np.take(table, which * (kc * w) + chunk * w + b, axis=0)  # (members, width)
            self._add_rows(sig, state, vals)
        return sig

    @staticmethod
    def _add_rows(sig: np.ndarray, state: np.ndarray, vals: np.ndarray) -> None:
        """``sig[state[j]] += vals[j]`` for every j (states repeat), exactly: each value
        is below 2**35, and float sums of fewer than 2**17 of them are exact."""
        n, width = sig.shape
        at = (state[:, None] * width + np.arange(width)).reshape(-1)
        flat = vals.reshape(-1)
        step = 1 << 17
        for lo in range(0, len(at), step):
            part = np.bincount(at[lo:lo + step], weights=flat[lo:lo + step],
                               minlength=n * width)
            sig += part.astype(np.uint64).reshape(n, width)

    # -- canonical states -----------------------------------------------------------------
    def canonical(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Canonical packed states and their fingerprints for a batch ``(n, k)``: of the
        sorted permutations of each state (see the class), the one with the smallest
        fingerprint."""
        n = len(words)
        if n == 0 or not self.pis:
            return words, self.fingerprints(words)
        n_cells = len(self.layout.cells)
        step = max(1, _BLOCK_CODES // (n_cells * max(self._sig_width, 4)))
        if n <= step:
            return self._canonical(words)
        out_w, out_f = [], []
        for lo in range(0, n, step):
            w, f = self._canonical(words[lo:lo + step])
            out_w.append(w)
            out_f.append(f)
        return np.concatenate(out_w), np.concatenate(out_f)

    def candidates(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The sorted permutations of the states of decoded cells ``x`` ``(cells, n)``:
        pairs ``(state, permutation)`` (an index into :attr:`all_pis`), by state."""
        n = x.shape[1]
        sig = self.signatures(x)
        counts = np.ones(n, dtype=np.int64)
        per_set = []
        for cols, bits, (_, _, count) in zip(self._cols, self._tie_bits, self._taus):
            s = sig[:, cols]
            order = np.argsort(s, axis=1, kind="stable")
            srt = np.sort(s, axis=1)
            mask = (srt[:, 1:] == srt[:, :-1]).astype(np.int64) @ bits
            per_set.append((order, mask))
            counts *= count[mask]
        which = np.zeros(int(counts.sum()), dtype=np.int64)
        if len(which) == n:  # no ties: each state's one sorted order
            for x_, (order, _) in enumerate(per_set):
                which += self._rank(x_, order) * self._strides[x_]
            return np.arange(n, dtype=np.int64), which
        state = np.repeat(np.arange(n, dtype=np.int64), counts)
        ends = np.cumsum(counts)
        o = np.arange(len(which), dtype=np.int64) - np.repeat(ends - counts, counts)
        for x_, ((order, mask), (flat, start, count)) in enumerate(zip(per_set, self._taus)):
            c = count[mask][state]
            o, d = np.divmod(o, c)
            tau = flat[start[mask][state] + d]  # (pairs, ids): sorted position -> position
            seq = order[state[:, None], tau]  # new id j <- old id seq[j]
            which += self._rank(x_, seq) * self._strides[x_]
        return state, which

    def _rank(self, x: int, seq: np.ndarray) -> np.ndarray:
        """The index among set ``x``'s permutations (``itertools.permutations`` order)
        of the permutation sending old id ``seq[j]`` to new id ``j``, per row."""
        n = seq.shape[1]
        table = self._rank_tables[x]
        if table is not None:  # by the ids as digits: one lookup
            return table[seq @ self._digits[x]]
        pi = np.argsort(seq, axis=1)  # old id a -> new id pi[a]
        later = np.triu(np.ones((n, n), dtype=bool), 1)
        lehmer = ((pi[:, None, :] < pi[:, :, None]) & later).sum(axis=2)
        return lehmer @ self._fact[x]

    def _canonical(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(words)
        x = self._decode(words)  # (cells, n)
        state, which = self.candidates(x)
        n_cells = len(self.layout.cells)
        if len(state) == n and not which.any():  # every state is sorted as it is
            return words, self.fingerprints(words)
        best_words = np.empty_like(words)
        best_fps: np.ndarray | None = None
        # pairs by chunks of whole states, at most about _BLOCK_CODES codes each
        limit = max(1, _BLOCK_CODES // n_cells)
        if len(state) <= limit:
            cuts = [0, len(state)]
        else:
            starts = np.flatnonzero(np.r_[True, state[1:] != state[:-1]])
            cuts = [0]
            while cuts[-1] < len(state):
                k = int(np.searchsorted(starts, cuts[-1] + limit, side="right")) - 1
                nxt = int(starts[k]) if starts[k] > cuts[-1] else (
                    int(starts[k + 1]) if k + 1 < len(starts) else len(state))
                cuts.append(min(nxt, len(state)))
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            st, wh = state[lo:hi], which[lo:hi]
            words_p = words[st]  # the identity's pairs: the state as it is
            moved = np.flatnonzero(wh)
            if len(moved):
                words_p[moved] = self._apply(x, st[moved], wh[moved])
            fps_p = self.fingerprints(words_p)
            if len(st) > 1 and (st[1:] == st[:-1]).any():
                first = _segment_min(st, fps_p)
            else:  # one pair per state
                first = np.arange(len(st))
            rows = st[first]
            best_words[rows] = words_p[first]
            if best_fps is None:
                best_fps = np.empty((n,) + fps_p.shape[1:], dtype=fps_p.dtype)
            best_fps[rows] = fps_p[first]
        assert best_fps is not None
        return best_words, best_fps

    def _decode(self, words: np.ndarray) -> np.ndarray:
        """Every cell of packed states ``(n, k)``: ``(cells, n)`` int64."""
        w = words.T[self._word_of]  # (cells, n)
        if self._shift is not None:
            out = ((w >> self._shift) & self._modulus).astype(np.int64)
        else:
            out = ((w // self._mult) % self._modulus).astype(np.int64)
        return out + self._lo

    def _pack(self, y: np.ndarray) -> np.ndarray:
        """Packed states ``(m, k)`` of cells ``(cells, m)``."""
        # (array arithmetic wraps silently; a packed word never exceeds 2**64 - 1)
        raw = (y - self._lo).astype(np.uint64) * self._mult
        sums = np.add.reduceat(raw[self._pack_order], self._pack_starts, axis=0)
        words = np.zeros((y.shape[1], self.layout.n_words), dtype=np.uint64)
        words[:, self._pack_words] = sums.T
        return words

    def _apply(self, x: np.ndarray, state: np.ndarray, which: np.ndarray) -> np.ndarray:
        """Packed states of the pairs: state ``state[j]`` of decoded cells ``x`` under
        permutation ``which[j]``."""
        m = len(state)
        y = x[self._src[:, which], state[None, :]]  # (cells, pairs): elements moved
        for first, e, k, fn in self._groups:
            c = e * k
            block = y[first:first + c].reshape(e, k, m).transpose(1, 0, 2).reshape(k, e * m)
            moved = fn(block, np.tile(which, e) if e > 1 else which)
            y[first:first + c] = moved.reshape(k, e, m).transpose(1, 0, 2).reshape(c, m)
        return self._pack(y)


def _segment_min(state: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """Per run of equal ``state`` (sorted), the index of its smallest fingerprint (the
    first on a tie)."""
    if fps.ndim == 1:
        order = np.lexsort((fps, state))
    else:  # two-column keys, ordered by column 0, then column 1
        order = np.lexsort((fps[:, 1], fps[:, 0], state))
    s = state[order]
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return order[keep]


def _tie_orders(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For ``n`` ids sorted by signature, per tie mask (bit ``j``: sorted ids ``j`` and
    ``j + 1`` tie), every reordering of the positions within the tied runs, as rows
    ``flat[start[mask]:start[mask] + count[mask]]`` (``(rows, n)``, position ``j`` of
    the result taking the id at sorted position ``row[j]``)."""
    rows: list[tuple[int, ...]] = []
    start, count = [], []
    for mask in range(1 << max(n - 1, 0)):
        runs: list[list[int]] = [[0]] if n else []
        for j in range(1, n):
            if mask >> (j - 1) & 1:
                runs[-1].append(j)
            else:
                runs.append([j])
        start.append(len(rows))
        before = len(rows)
        for combo in itertools.product(*(itertools.permutations(r) for r in runs)):
            rows.append(tuple(v for part in combo for v in part))
        count.append(len(rows) - before)
    return (np.array(rows, dtype=np.int64).reshape(-1, n), np.array(start, dtype=np.int64),
            np.array(count, dtype=np.int64))


def _cellwise(t: BoundType) -> bool:
    """Whether permutations map the leaf type's values cell by cell, each by the
    cell's own :meth:`~modelcheck.types.base.ScalarType.permutation` (scalars, and
    records of them): a signature may then sum over its cells one by one."""
    if isinstance(t, BoundRecord):
        return all(_cellwise(f) for f in t.fields.values())
    return (isinstance(t, ScalarType)
            and type(t).cells_permutation is ScalarType.cells_permutation
            and type(t).cells_permutations is ScalarType.cells_permutations
            and type(t).cells_permutations_paired is ScalarType.cells_permutations_paired)
