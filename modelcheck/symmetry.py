"""Symmetry reduction: canonical representatives of states under permutations of ids.

A spec declares interchangeable identities with ``symmetry = ("Brokers",)``. A
permutation ``pi`` of such an index set acts on a state by moving array elements
indexed by the set (``a[i]`` becomes ``a[pi(i)]``) and mapping the values of cells
whose type depends on the set (:meth:`~modelcheck.domains.BoundType.cells_permutation`:
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
from .store import key_less

__all__ = ["Symmetry"]


class _Perm:
    """One permutation, compiled to a source cell per target cell and, per array
    element (or variable) whose type maps values
    (:meth:`~modelcheck.domains.BoundType.cells_permutation`), a function of its cells."""

    def __init__(self, layout: Layout, pis: dict[str, dict[int, int]]) -> None:
        n = len(layout.cells)
        src = np.empty(n, dtype=np.int64)
        for c in layout.cells:
            info = layout.vars[c.var]
            nd = len(info.dim_names)
            path = tuple(
                pis[name].get(int(i), int(i)) if name in pis else i
                for name, i in zip(info.dim_names, c.path)
            ) + c.path[nd:]
            tgt = layout.cell_index[(c.var, path)]
            src[tgt] = c.index
        self.groups: list[tuple[int, int, Callable[[list[np.ndarray]], list[np.ndarray]]]] = []
        for info in layout.vars.values():
            assert info.leaf is not None
            fn = info.leaf.cells_permutation(pis)
            if fn is None:
                continue
            k = info.leaf_cells
            for start in range(info.first_cell, info.first_cell + info.n_cells, k):
                self.groups.append((start, k, fn))
        self.src = src
        self.identity = all(pis[k][i] == i for k in pis for i in pis[k])

    def apply(self, layout: Layout, cols: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = [cols[int(s)] for s in self.src]
        for start, k, fn in self.groups:
            out[start:start + k] = fn(out[start:start + k])
        return out


class Symmetry:
    """Canonicalises packed states under all permutations of the declared id sets."""

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
        self.perms: list[_Perm] = []
        for combo in itertools.product(*per_set):
            pis = dict(combo)
            p = _Perm(layout, pis)
            if not p.identity:
                self.perms.append(p)

    @property
    def group_size(self) -> int:
        return len(self.perms) + 1

    def canonical(self, words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Canonical packed states and their fingerprints for a batch ``(n, k)``."""
        layout = self.layout
        n = len(words)
        fps = self.fingerprints(words)
        if n == 0 or not self.perms:
            return words, fps
        cols = [layout.decode_cell(words, i) for i in range(len(layout.cells))]
        best_fps = fps
        best_words = words
        for p in self.perms:
            w = layout.pack_columns(p.apply(layout, cols))
            f = self.fingerprints(w)
            better = key_less(f, best_fps)
            if better.any():
                best_fps = np.where(better if f.ndim == 1 else better[:, None], f, best_fps)
                best_words = np.where(better[:, None], w, best_words)
        return best_words, best_fps
