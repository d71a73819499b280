"""The state layout: cells, their exact packing into 64-bit words, and fingerprints.

The layout keeps each variable's bound type (:class:`VarInfo`) and each cell's
:class:`~modelcheck.domains.ScalarType` (:attr:`Layout.types`), to which it delegates
value conversion and display; it never looks at what kind of type a cell has.

Every state is a vector of small integers, one per *cell* (a scalar variable or
one element of an array), packed into unsigned 64-bit words as
``word = sum((value - lo) * mult)``:

* when all cells fit in 64 bits as bit fields, ``mult = 2**offset`` (decoding is
  a shift and a mask);
* otherwise in mixed radix, ``mult`` being the product of the sizes of the cells
  before it in the same word; cells go into words greedily in layout order, a
  word holding cells while the product of their sizes is at most 2**64. (The
  KRaft L6 state needs 71 bits as bit fields but fits one word in mixed radix.)

Fingerprints:

* one word: the fingerprint *is* the packed state (exact, invertible, no collision);
* several words: ``fingerprint64`` below, a fixed 64-bit mix of the words
  (SplitMix64 finaliser chained over the words, seeded with a constant). It is
  the same on every machine, process and ``PYTHONHASHSEED``; Python's ``hash()``
  is never used. The result then reports the collision probability estimate.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .domains import BoundArray, BoundType, Cell, ScalarType

__all__ = ["Layout", "VarInfo", "fingerprint64", "collision_probability"]

_U64 = np.uint64
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix64(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> _U64(30))
    x = x * _M1
    x = x ^ (x >> _U64(27))
    x = x * _M2
    return x ^ (x >> _U64(31))


_MASK = (1 << 64) - 1
#: at most this many states are hashed in Python integers (the chain over the words is
#: sequential: per word, numpy's per-call cost exceeds the arithmetic on a few rows)
_SCALAR_ROWS = 8


def fingerprint64(words: np.ndarray) -> np.ndarray:
    """64-bit fingerprints of packed states ``words`` (shape ``(n, k)``, uint64).

    ``h0 = SEED``; ``h_{i+1} = mix64(h_i ^ mix64(word_i + i * SEED))``, where
    ``mix64`` is the SplitMix64 finaliser; arithmetic is modulo 2**64.
    """
    n, k = words.shape
    with np.errstate(over="ignore"):
        # the inner mixes do not depend on the chain: all words at once
        inner = _mix64(words + np.arange(k, dtype=_U64) * _SEED)
        if n <= _SCALAR_ROWS:
            return np.array([_chain(row) for row in inner.tolist()], dtype=_U64)
        h = np.full(n, _SEED, dtype=_U64)
        for i in range(k):
            h = _mix64(h ^ inner[:, i])
    return h


def _chain(inner: list[int]) -> int:
    """The chain of :func:`fingerprint64` over one state's mixed words, in Python ints."""
    h = int(_SEED)
    m1, m2 = int(_M1), int(_M2)
    for w in inner:
        x = h ^ w
        x ^= x >> 30
        x = (x * m1) & _MASK
        x ^= x >> 27
        x = (x * m2) & _MASK
        h = x ^ (x >> 31)
    return h


def collision_probability(n_states: int, exact: bool) -> float:
    """TLC-style estimate of the chance that two distinct states shared a fingerprint."""
    if exact or n_states < 2:
        return 0.0
    return min(1.0, n_states * (n_states - 1) / 2.0 / 2.0**64)


@dataclass(frozen=True)
class VarInfo:
    """A declared state variable after binding: its type and cells."""

    name: str
    btype: BoundType
    first_cell: int
    n_cells: int
    dims: tuple[range, ...]  # index sets of nested arrays, outermost first
    decl: str  # "file:line" of the declaration
    dim_names: tuple[str, ...] = ()  # names of those index sets
    #: the type of the array elements (of the variable itself when it is no array):
    #: it owns each element's value over its ``leaf_cells`` consecutive cells
    leaf: BoundType | None = None
    leaf_cells: int = 1

    @functools.cached_property
    def scalar_leaf(self) -> bool:
        """Whether an element is one scalar cell (read and written as a plain column);
        asked on every read of a state variable, so computed once."""
        return self.leaf_cells == 1 and isinstance(self.leaf, ScalarType) and self.leaf.plain


class Layout:
    """Cells of a bound spec and the mixed-radix packing of them into words."""

    def __init__(self, variables: Sequence[tuple[str, BoundType, str]], *,
                 min_words: int = 1) -> None:
        """``min_words``: pack into at least this many words (the last ones zero if the
        cells need fewer); 2 makes the layout never :attr:`exact`, so that the states
        are kept as words even where the fingerprint is not theirs (a spec's view)."""
        cells: list[Cell] = []
        types: list[ScalarType] = []
        infos: dict[str, VarInfo] = {}
        for name, btype, decl in variables:
            first = len(cells)
            dims, dim_names, leaf = _array_chain(btype)
            for path, t in btype.cells():
                cells.append(Cell(len(cells), name, path, t.lo, t.size, t.kind, t.labels, t.ref,
                                  t))
                types.append(t)
            infos[name] = VarInfo(name, btype, first, len(cells) - first, dims, decl, dim_names,
                                  leaf, leaf.n_cells)
        self.cells: tuple[Cell, ...] = tuple(cells)
        #: the scalar type of each cell (it converts, shows and permutes the cell's values)
        self.types: tuple[ScalarType, ...] = tuple(types)
        #: cells that expressions read as booleans
        self.bool_cells: frozenset[int] = frozenset(
            i for i, t in enumerate(self.types) if t.boolean)
        self._leaf_maps: dict[tuple[str, tuple[int, ...]], dict[int, int]] = {}
        self.vars: dict[str, VarInfo] = infos
        self.cell_index: dict[tuple[str, tuple[int | str, ...]], int] = {
            (c.var, c.path): c.index for c in cells
        }
        bits = [max(1, (c.size - 1).bit_length()) for c in cells]
        word_of: list[int] = []
        mults: list[int] = []
        self.bitfields = sum(bits) <= 64
        if self.bitfields:
            # Plain bit fields: decoding is a shift and a mask.
            off = 0
            for b in bits:
                word_of.append(0)
                mults.append(1 << off)
                off += b
        else:
            # Mixed radix: as many cells per word as the product of sizes allows.
            word = 0
            product = 1
            for c in cells:
                if product * c.size > 2**64 and product > 1:
                    word += 1
                    product = 1
                word_of.append(word)
                mults.append(product)
                product *= c.size
        self.n_words = max(min_words, word_of[-1] + 1 if cells else 1)
        self.word_of = np.array(word_of, dtype=np.int64)
        self.mult = np.array(mults, dtype=_U64)
        self.lo = np.array([c.lo for c in cells], dtype=np.int64)
        self.size = np.array([c.size for c in cells], dtype=np.int64)
        self.bits = sum(bits)
        self._shift = [_U64(m.bit_length() - 1) for m in mults]
        self._mask = [_U64((1 << b) - 1) for b in bits]
        self.state_space_bound = 1
        for c in cells:
            self.state_space_bound *= c.size
        # The last cell of a word needs no modulo when decoding.
        self._last_in_word = [
            i == len(cells) - 1 or word_of[i + 1] != word_of[i] for i in range(len(cells))
        ]

    def leaf_map(self, var: str, path: tuple[int, ...]) -> dict[int, int]:
        """``{index: first cell of the element}`` for the innermost dimension of
        ``var[path...]`` (an element has ``VarInfo.leaf_cells`` consecutive cells)."""
        key = (var, path)
        m = self._leaf_maps.get(key)
        if m is None:
            info = self.vars[var]
            sub = info.leaf.cells()[0][0] if info.leaf is not None else ()
            m = {i: self.cell_index[(var, (*path, i, *sub))] for i in info.dims[len(path)]}
            self._leaf_maps[key] = m
        return m

    @property
    def exact(self) -> bool:
        """True when the whole state packs into one word, so fingerprints are exact."""
        return self.n_words == 1

    # -- one state ---------------------------------------------------------
    def cells_from_values(self, values: Mapping[str, Any]) -> list[int]:
        """Flatten ``{var: value}`` (arrays as ``{index: value}``) into cell values.

        Each element's type converts its value (:meth:`BoundType.codes`, lenient: enum
        names or ints, sets as any collection of elements); array indices may be ints
        or their decimal strings (as JSON has them).
        """
        out: list[int] = []
        for name, info in self.vars.items():
            flat = _flatten(values[name], info.dims)
            leaf = info.leaf
            assert leaf is not None
            for j, v in enumerate(flat):
                try:
                    out.extend(leaf.codes(v))
                except ValueError as e:
                    i = info.first_cell + j * info.leaf_cells
                    raise ValueError(f"{self._leaf_name(i, info)}: {e}") from None
        return out

    def _leaf_name(self, i: int, info: VarInfo) -> str:
        c = self.cells[i]
        return c.var + "".join(f"[{p}]" for p in c.path[:len(info.dims)])

    def values_from_cells(self, cells: Sequence[int]) -> dict[str, Any]:
        """Inverse of :meth:`cells_from_values`: each cell's Python value
        (:meth:`ScalarType.to_python`: bools as bool, enums by member name, sets as
        frozensets of ids, ints as int); arrays as ``{index: value}``."""
        return self._values(cells, itf=False)

    def itf_values_from_cells(self, cells: Sequence[int]) -> dict[str, Any]:
        """Like :meth:`values_from_cells`, as trace values (:meth:`ScalarType.to_itf`)."""
        return self._values(cells, itf=True)

    def _values(self, cells: Sequence[int], *, itf: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, info in self.vars.items():
            lo, k, leaf = info.first_cell, info.leaf_cells, info.leaf
            assert leaf is not None
            chunk = [leaf.value([int(c) for c in cells[i:i + k]], itf=itf)
                     for i in range(lo, lo + info.n_cells, k)]
            out[name] = _unflatten(chunk, info.dims)
        return out

    def leaf_values(self, cells: Sequence[int], name: str) -> list[tuple[int, list[int]]]:
        """``(first cell, codes)`` of each element of variable ``name`` (one for a
        variable that is not an array)."""
        info = self.vars[name]
        k = info.leaf_cells
        return [(i, [int(c) for c in cells[i:i + k]])
                for i in range(info.first_cell, info.first_cell + info.n_cells, k)]

    def display_value(self, cell: Cell, value: int) -> str:
        """A cell value as a user reads it: enum names, TRUE/FALSE, set braces
        (:meth:`ScalarType.display` of the cell's type)."""
        return self.types[cell.index].display(value)

    def pack(self, cells: Sequence[int]) -> np.ndarray:
        """Words of one state (shape ``(k,)``)."""
        return self.pack_columns(
            [np.array([int(v)], dtype=np.int64) for v in cells]
        )[0]

    def pack_columns(self, columns: Sequence[np.ndarray]) -> np.ndarray:
        """Words of a batch of states given one int column per cell (shape ``(n, k)``)."""
        n = len(columns[0]) if columns else 1
        words = np.zeros((n, self.n_words), dtype=_U64)
        with np.errstate(over="ignore"):
            for i, col in enumerate(columns):
                raw = (np.asarray(col, dtype=np.int64) - self.lo[i]).astype(_U64)
                words[:, self.word_of[i]] += raw * self.mult[i]
        return words

    def fingerprints(self, words: np.ndarray) -> np.ndarray:
        """Fingerprints of packed states (shape ``(n,)``)."""
        if self.n_words == 1:
            return words[:, 0].copy()
        return fingerprint64(words)

    def projection(self, keep: Collection[str]) -> Callable[[np.ndarray], np.ndarray]:
        """The packing of the cells of the variables ``keep`` alone: a function of packed
        states ``(n, k)`` to words ``(n, k)`` where every other cell reads as its lowest
        value. Two states agree on the variables ``keep`` exactly when their projected
        words are equal (a spec's view, :attr:`Spec.view <modelcheck.spec.Spec.view>`).
        A word of kept cells only is copied, one of dropped cells only is zero, a bit-field
        word is masked, and a mixed-radix word keeps (or loses) the fewer cells' parts."""
        kept = np.zeros(len(self.cells), dtype=bool)
        for name in keep:
            info = self.vars[name]
            kept[info.first_cell:info.first_cell + info.n_cells] = True
        #: per word: None (copy), () (zero), an int (a bit mask), or (cells, add?)
        plan: list[Any] = []
        for w in range(self.n_words):
            cells = np.flatnonzero(self.word_of == w)
            k = cells[kept[cells]]
            d = cells[~kept[cells]]
            if len(d) == 0:
                plan.append(None)
            elif len(k) == 0:
                plan.append(())
            elif self.bitfields:
                plan.append(_U64(sum(int(self._mask[i]) << int(self._shift[i]) for i in k)))
            else:
                plan.append((k, True) if len(k) <= len(d) else (d, False))

        def part(col: np.ndarray, i: int) -> np.ndarray:
            m = self.mult[i]
            x = col // m if m != 1 else col
            if not self._last_in_word[i]:
                x = x % _U64(self.size[i])
            return x * m

        def project(words: np.ndarray) -> np.ndarray:
            out = words.copy()
            for w, how in enumerate(plan):
                if how is None:
                    continue
                if isinstance(how, tuple) and not how:
                    out[:, w] = 0
                elif isinstance(how, np.unsignedinteger):
                    out[:, w] &= how
                else:
                    cells, add = how
                    col = words[:, w]
                    acc = np.zeros(len(words), dtype=_U64)
                    for i in cells:
                        acc += part(col, int(i))
                    out[:, w] = acc if add else col - acc
            return out

        return project

    def decode_cell(self, words: np.ndarray, i: int) -> np.ndarray:
        """Column of cell ``i`` (int64, actual values) from packed words ``(n, k)``."""
        w = words[:, self.word_of[i]]
        if self.bitfields:
            w = (w >> self._shift[i]) & self._mask[i]
        else:
            m = self.mult[i]
            if m != 1:
                w = w // m
            if not self._last_in_word[i]:
                w = w % _U64(self.size[i])
        out = w.astype(np.int64)
        if self.lo[i]:
            out += self.lo[i]
        return out

    def unpack(self, words: np.ndarray) -> list[int]:
        """Cell values of one state from its words (shape ``(k,)``)."""
        w2 = words.reshape(1, -1)
        return [int(self.decode_cell(w2, i)[0]) for i in range(len(self.cells))]

    def describe(self) -> list[dict[str, Any]]:
        """Per variable: name, domain text, cells and bits, for ``inspect``."""
        rows = []
        for name, info in self.vars.items():
            cells = self.cells[info.first_cell:info.first_cell + info.n_cells]
            rows.append({
                "name": name,
                "domain": info.btype.describe(),
                "cells": info.n_cells,
                "bits": sum(max(1, (c.size - 1).bit_length()) for c in cells),
                "declared": info.decl,
            })
        return rows


def _array_chain(btype: BoundType) -> tuple[tuple[range, ...], tuple[str, ...], BoundType]:
    """Index sets and their names of (nested) arrays, outermost first, and the element
    type."""
    dims: list[range] = []
    names: list[str] = []
    t = btype
    while isinstance(t, BoundArray):
        dims.append(t.ids)
        names.append(t.index_name)
        t = t.elem
    return tuple(dims), tuple(names), t


def _flatten(value: Any, dims: tuple[range, ...]) -> list[Any]:
    if not dims:
        return [value]
    if not isinstance(value, Mapping):
        raise ValueError(f"expected a map from {dims[0].start}..{dims[0].stop - 1}, "
                         f"got {value!r}")
    out: list[Any] = []
    for i in dims[0]:
        v = value[i] if i in value else value[str(i)]
        out.extend(_flatten(v, dims[1:]))
    return out


def _unflatten(flat: list[Any], dims: tuple[range, ...]) -> Any:
    if not dims:
        return flat[0]
    step = len(flat) // len(dims[0])
    return {i: _unflatten(flat[j * step:(j + 1) * step], dims[1:]) for j, i in enumerate(dims[0])}
