"""Symmetry reduction: canonical representatives of states under permutations of ids.

A spec declares interchangeable identities with ``symmetry = ("Brokers",)``. A
permutation ``pi`` of such an index set acts on a state by moving array elements
indexed by the set (``a[i]`` becomes ``a[pi(i)]``) and mapping the values of cells
whose type depends on the set (:meth:`~modelcheck.types.base.BoundType.cells_permutation`:
``Ref(set)`` values ``v`` become ``pi(v)``, wherever they are: in records, sequence
slots, set elements (bits move) and bag elements (counts move)).

The canonical representative of a state is the member of its orbit with the
smallest fingerprint. Since the orbit is the same for every member, this is a
function of the orbit: two states get the same canonical fingerprint exactly
when one is a permutation of the other (with exact fingerprints). Invariants
and properties must themselves be symmetric (as in TLC, the spec's
responsibility). Counterexamples remain real behaviours: the explorer stores
canonical fingerprints, and trace replay follows actual successors whose
canonical fingerprint matches.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from .errors import SpecDefinitionError
from .layout import Layout

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


#: at most about this many codes (permutations x cells x states) are held at once
_BLOCK_CODES = 1 << 20


class Symmetry:
    """Canonicalises packed states under all permutations of the declared id sets.

    Every permutation is applied to a batch in one pass: the cells of the batch
    ``(cells, n)`` are gathered into ``(cells, permutations, n)`` (array elements
    moved), each variable whose values a permutation maps is mapped for all
    permutations at once (:meth:`~modelcheck.types.base.BoundType.cells_permutations`:
    a lookup table for ids, only the members present for sets), and the permuted
    states are packed and fingerprinted together. The Python work per batch is then
    per variable, not per permutation and cell."""

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
        per_set = []
        for name, ids in sets.items():
            per_set.append([(name, dict(zip(ids, p))) for p in itertools.permutations(ids)])
        #: the permutations other than the identity, each ``{Ids set name: {id: id}}``
        self.pis: list[dict[str, dict[int, int]]] = []
        for combo in itertools.product(*per_set):
            pis = dict(combo)
            if not all(pi[i] == i for pi in pis.values() for i in pi):
                self.pis.append(pis)
        n_cells = len(layout.cells)
        # (cells, permutations): the source cell of each cell under each permutation
        self._src = (np.stack([_source_cells(layout, pis) for pis in self.pis], axis=1)
                     if self.pis else np.empty((n_cells, 0), dtype=np.int64))
        #: per variable whose values move: first cell, elements, cells per element,
        #: whether its cells stay in place (then one copy of them serves every
        #: permutation), and the function of all permutations
        self._groups: list[tuple[int, int, int, bool, Callable[[np.ndarray], np.ndarray]]] = []
        if self.pis:
            for info in layout.vars.values():
                assert info.leaf is not None
                fn = info.leaf.cells_permutations(self.pis)
                if fn is None:
                    continue
                cells = np.arange(info.first_cell, info.first_cell + info.n_cells)
                still = bool((self._src[cells] == cells[:, None]).all())
                k = info.leaf_cells
                self._groups.append((info.first_cell, info.n_cells // k, k, still, fn))

    @property
    def group_size(self) -> int:
        return len(self.pis) + 1

    def canonical(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Canonical packed states and their fingerprints for a batch ``(n, k)``: of each
        state's orbit, the member with the smallest fingerprint (the state itself, then
        the permutations in order, on a tie)."""
        layout = self.layout
        n = len(words)
        fps = self.fingerprints(words)
        if n == 0 or not self.pis:
            return words, fps
        n_perms, n_cells = len(self.pis), len(layout.cells)
        step = max(1, _BLOCK_CODES // (n_perms * n_cells))
        if n <= step:
            return self._canonical(words, fps)
        out_w, out_f = [], []
        for lo in range(0, n, step):
            w, f = self._canonical(words[lo:lo + step], fps[lo:lo + step])
            out_w.append(w)
            out_f.append(f)
        return np.concatenate(out_w), np.concatenate(out_f)

    def _canonical(self, words: np.ndarray, fps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        layout = self.layout
        n = len(words)
        n_perms, n_cells = len(self.pis), len(layout.cells)
        x = np.stack([layout.decode_cell(words, i) for i in range(n_cells)])  # (cells, n)
        y = x[self._src]  # (cells, permutations, n)
        for first, e, k, still, fn in self._groups:
            c = e * k
            if still and e == 1:
                block = x[first:first + c][None]  # the same codes for every permutation
            else:
                # (e * k, q, n) -> (q, k, e * n): every element of the variable at once
                src = x[first:first + c][:, None] if still else y[first:first + c]
                q = src.shape[1]
                block = src.reshape(e, k, q, n).transpose(2, 1, 0, 3).reshape(q, k, e * n)
            moved = fn(block).reshape(n_perms, k, e, n).transpose(2, 1, 0, 3)
            y[first:first + c] = moved.reshape(c, n_perms, n)
        # pack and fingerprint every permuted state together, rows permutation-major
        permuted = layout.pack_columns(list(y.reshape(n_cells, n_perms * n)))
        all_fps = np.concatenate([fps, self.fingerprints(permuted)])
        rows = np.arange(n)
        grid: np.ndarray
        if all_fps.ndim == 1:
            grid = all_fps.reshape(-1, n)
            best = np.argmin(grid, axis=0)  # the first smallest: the state itself on a tie
        else:  # two-column keys, ordered by column 0, then column 1
            grid = all_fps.reshape(-1, n, 2)
            c0, c1 = grid[:, :, 0], grid[:, :, 1]
            low0 = c0 == c0.min(axis=0)
            low1 = np.where(low0, c1, np.iinfo(np.uint64).max).min(axis=0)
            best = np.argmax(low0 & (c1 == low1), axis=0)  # the first smallest
        best_fps = grid[best, rows]
        moved_rows = best > 0
        best_words = words.copy()
        if moved_rows.any():
            pick = (best[moved_rows] - 1) * n + rows[moved_rows]
            best_words[moved_rows] = permuted[pick]
        return best_words, best_fps
