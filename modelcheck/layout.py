"""The state layout: cells, their exact packing into 64-bit words, and fingerprints.

The layout keeps each variable's bound type (:class:`VarInfo`) and each cell's
:class:`~modelcheck.types.base.ScalarType` (:attr:`Layout.types`), to which it delegates
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
  When that takes more than two words but putting each cell in the first word with
  room for it takes two, the cells go so (two words are an exact fingerprint).

Fingerprints (the *state key*, see :mod:`modelcheck.store` and ``docs/fingerprints.md``):

* one word: the fingerprint *is* the packed state (exact, invertible, no collision),
  one ``uint64`` per state;
* two words: the fingerprint is the pair ``(word0 + word1 * SEED mod 2**64, word1)``,
  kept as two ``uint64`` columns: a bijection of the two words (exact: two states
  have the same key exactly when both words are equal; :meth:`Layout.words_of_keys`
  inverts it). Column 0 alone tells almost all states apart (the multiple of word 1 is
  no pattern of packed cells), so keys sort and search on it with few ties, and an
  action that adds the same amount to a cell of every state keeps its successors in
  the order of their parents (sorting is cheap on such runs). As a Python int a key is
  ``col0 << 64 | col1``. Both keys are linear in the cells' values modulo 2**64, so
  the kernel steps a successor's from its parent's (:meth:`Layout.key_steps`);
* three or more words: ``fingerprint128`` below, two 64-bit sums of per-word terms
  (SplitMix64's finaliser of each word plus an offset of its position in column 0,
  MurmurHash3's in column 1), in the same two-column shape; a successor's is its
  parent's with the terms of the changed words replaced. It is the same on every
  machine, process and ``PYTHONHASHSEED``; Python's ``hash()`` is never used. The
  result then reports the collision probability estimate (``n**2 / 2**129``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .types import BoundArray, BoundSetChunk, BoundSparseSlot, BoundType, Cell, ScalarType

__all__ = ["Layout", "VarInfo", "fingerprint64", "fingerprint128", "collision_probability",
           "words_of_keys", "hash_parts", "add_terms"]

_U64 = np.uint64
_SEED = np.uint64(0x9E3779B97F4A7C15)
#: the seed of the second half of a 128-bit fingerprint
_SEED2 = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
#: MurmurHash3's fmix64 multipliers (column 1 of a 128-bit fingerprint)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)


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


def _mod(x: np.ndarray, size: int) -> np.ndarray:
    """``x % size`` for a column of ``uint64`` (a new array): numpy divides a column by a
    scalar with a multiplication (libdivide) but takes its remainder with the divide
    instruction, ~2.5 ns a value against ~0.8 for ``x - (x // size) * size`` here."""
    d = _U64(size)
    q = x // d
    q *= d
    return np.subtract(x, q, out=q)


def fingerprint64(words: np.ndarray, seed: np.uint64 = _SEED) -> np.ndarray:
    """64-bit fingerprints of packed states ``words`` (shape ``(n, k)``, uint64).

    ``h0 = seed``; ``h_{i+1} = mix64(h_i ^ mix64(word_i + i * seed))``, where
    ``mix64`` is the SplitMix64 finaliser; arithmetic is modulo 2**64.
    """
    with np.errstate(over="ignore"):
        return _chain_all(_inner(words, seed), seed)


def _inner(words: np.ndarray, seed: np.uint64) -> np.ndarray:
    """``mix64(word_i + i * seed)`` of every word (they do not depend on the chain)."""
    k = words.shape[1]
    return _mix64(words + np.arange(k, dtype=_U64) * seed)


def _chain_all(inner: np.ndarray, seed: np.uint64) -> np.ndarray:
    n, k = inner.shape
    if n <= _SCALAR_ROWS:
        return np.array([_chain(row, int(seed)) for row in inner.tolist()], dtype=_U64)
    h = np.full(n, seed, dtype=_U64)
    for i in range(k):
        h = _mix64(h ^ inner[:, i])
    return h


def _mix_into(x: np.ndarray, tmp: np.ndarray, m1: np.uint64, m2: np.uint64,
              s1: np.uint64, s2: np.uint64, s3: np.uint64) -> None:
    """A finaliser (``x ^= x >> s1; x *= m1; x ^= x >> s2; x *= m2; x ^= x >> s3``) of
    ``x`` in place, ``tmp`` (``x``'s shape) its scratch."""
    np.right_shift(x, s1, out=tmp)
    x ^= tmp
    x *= m1
    np.right_shift(x, s2, out=tmp)
    x ^= tmp
    x *= m2
    np.right_shift(x, s3, out=tmp)
    x ^= tmp


_S30, _S27, _S31, _S33 = _U64(30), _U64(27), _U64(31), _U64(33)


def _terms(cols: np.ndarray, first: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The terms of :func:`fingerprint128` of word columns ``cols`` (shape ``(k, n)``,
    words ``first .. first + k - 1`` of the states): ``(a, b)``, each ``(k, n)``."""
    k = cols.shape[0]
    with np.errstate(over="ignore"):
        off = np.arange(first + 1, first + k + 1, dtype=_U64)
        a = cols + (off * _SEED)[:, None]
        b = cols + (off * _SEED2)[:, None]
        tmp = np.empty_like(a)
        _mix_into(a, tmp, _M1, _M2, _S30, _S27, _S31)
        _mix_into(b, tmp, _F1, _F2, _S33, _S33, _S33)
    return a, b


def hash_parts(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The per-word terms of :func:`fingerprint128` of packed states ``words`` ``(n,
    k)``: ``(a, b)``, each ``(k, n)`` uint64 (a word's terms contiguous),
    ``a[i] = mix64(word_i + (i + 1) * SEED)`` and ``b[i] = fmix64(word_i + (i + 1) *
    SEED2)``; a fingerprint's columns are their sums over the words modulo 2**64."""
    return _terms(np.ascontiguousarray(words.T))


def add_terms(f0: np.ndarray, f1: np.ndarray, cols: np.ndarray, which: Sequence[int],
              tmp: np.ndarray) -> None:
    """Add the terms of :func:`fingerprint128` of the word columns ``cols`` ``(c, h)``,
    words ``which`` of the states, to ``f0`` (column 0's) and ``f1`` (column 1's), each
    ``(h,)``, in place; ``tmp`` ``(2, h)`` is scratch (no array is allocated: the
    kernel runs this on cache-sized slices of a batch's successors)."""
    t, s = tmp[0], tmp[1]
    with np.errstate(over="ignore"):
        for j, w in enumerate(which):
            off = _U64(w + 1)
            np.add(cols[j], off * _SEED, out=t)
            _mix_into(t, s, _M1, _M2, _S30, _S27, _S31)
            f0 += t
            np.add(cols[j], off * _SEED2, out=t)
            _mix_into(t, s, _F1, _F2, _S33, _S33, _S33)
            f1 += t


def fingerprint128(words: np.ndarray) -> np.ndarray:
    """128-bit fingerprints of packed states ``words`` (shape ``(n, k)``, uint64), as
    ``(n, 2)`` uint64: a sum of per-word terms per column, modulo 2**64,

    * column 0: ``sum_i mix64(word_i + (i + 1) * SEED)`` (SplitMix64's finaliser),
    * column 1: ``sum_i fmix64(word_i + (i + 1) * SEED2)`` (MurmurHash3's finaliser).

    Each term depends on one word (and its position) only, so the fingerprint of a
    successor is its parent's with the terms of the words an action changed replaced
    (:func:`hash_parts`, the kernel's successor fingerprints): the kernel hashes
    the changed words of a transition, not the whole state. Two states that differ in
    exactly one word never share a fingerprint (each finaliser is a bijection, so the
    terms of two different values of a word differ in both columns). For states that
    differ in more words, taking the two finalisers as independent random functions,
    a pair of distinct states shares a column with probability ``2**-64``, both with
    ``2**-128`` (the sum of the differing words' terms is uniform): the collision
    estimate reported, ``n (n - 1) / 2 / 2**128``, is unchanged."""
    a, b = hash_parts(words)
    out = np.empty((len(words), 2), dtype=_U64)
    with np.errstate(over="ignore"):
        for col, t in ((0, a), (1, b)):
            acc = t[0]
            for i in range(1, len(t)):
                acc += t[i]  # (in place: the terms are not needed after)
            out[:, col] = acc
    return out


def _chain(inner: list[int], seed: int) -> int:
    """The chain of :func:`fingerprint64` over one state's mixed words, in Python ints."""
    h = seed
    m1, m2 = int(_M1), int(_M2)
    for w in inner:
        x = h ^ w
        x ^= x >> 30
        x = (x * m1) & _MASK
        x ^= x >> 27
        x = (x * m2) & _MASK
        h = x ^ (x >> 31)
    return h


def collision_probability(n_states: int, exact: bool, bits: int = 128) -> float:
    """TLC-style estimate of the chance that two distinct states shared a ``bits``-bit
    fingerprint (``n (n - 1) / 2 / 2**bits``)."""
    if exact or n_states < 2:
        return 0.0
    return min(1.0, n_states * (n_states - 1) / 2.0 / 2.0**bits)


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
        cells need fewer); a spec's view asks for 2, so that its states are kept as
        words and keyed by two columns on every engine, whatever they pack into (the
        keys are then the views', not the states': ``Kernel.exact`` is False)."""
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
                # a cell's multiplier is a word's value too: below 2**64 (a one-value
                # cell after cells filling the word exactly goes to the next word)
                if (product * c.size > 2**64 or product == 2**64) and product > 1:
                    word += 1
                    product = 1
                word_of.append(word)
                mults.append(product)
                product *= c.size
            if word + 1 > 2:
                # Past two words a state is hashed: if each cell going to the first word
                # with room for it packs the state into two, two words it is (exact).
                fit = _first_fit([c.size for c in cells], 2)
                if fit is not None:
                    word_of, mults = fit
        self.n_words = max(min_words, max(word_of) + 1 if cells else 1)
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
        # The last cell of a word (its largest multiplier) needs no modulo when decoding.
        top: dict[int, int] = {}
        for w, m in zip(word_of, mults):
            top[w] = max(top.get(w, 0), m)
        # A one-value cell shares its multiplier with the cell after it, so it is never
        # the last (its value, 0, is the modulo by 1; without it, it would read the
        # cells above it as its own).
        self._last_in_word = [top[w] == m and c.size > 1
                              for w, m, c in zip(word_of, mults, cells)]
        # Mixed radix: a multiplier that is a power of two is divided out by a shift, a
        # size that is one taken modulo by a mask (the same values, without uint64
        # division: most cells of a padded or wide state have such sizes).
        self._div_shift = [_U64(m.bit_length() - 1) if m & (m - 1) == 0 else None
                           for m in mults]
        self._mod_mask = [_U64(c.size - 1) if c.size & (c.size - 1) == 0 else None
                          for c in cells]

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
        """True when the whole state packs into one or two words, so fingerprints are
        the packed states (exact)."""
        return self.n_words <= 2

    @property
    def key_width(self) -> int:
        """``uint64`` columns of a fingerprint: 1 (one word), else 2 (two words, or a
        128-bit hash of more); see :mod:`modelcheck.store`."""
        return 1 if self.n_words == 1 else 2

    @property
    def fingerprint_kind(self) -> str:
        """``exact`` (one or two words) or ``hash128`` (more), as results report it."""
        return "exact" if self.exact else "hash128"

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
        """Fingerprints (keys) of packed states: shape ``(n,)`` for one word, ``(n, 2)``
        otherwise (``(w0 + w1 * SEED, w1)`` for two words, a 128-bit hash for more)."""
        if self.n_words == 1:
            return words[:, 0].copy()
        if self.n_words == 2:
            keys = np.empty((len(words), 2), dtype=_U64)
            w1 = words[:, 1]
            keys[:, 1] = w1
            with np.errstate(over="ignore"):
                np.multiply(w1, _SEED, out=keys[:, 0])
                keys[:, 0] += words[:, 0]
            return keys
        return fingerprint128(words)

    def key_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Per cell, what one unit more of it adds to each column of an exact key of one
        or two words, modulo 2**64: ``(c0, c1)``, each ``uint64`` per cell. Such keys
        are linear in the words (``w0`` for one word; ``(w0 + w1 * SEED, w1)`` for
        two) and a word in the cells' values (``sum((value - lo) * mult)``), so a
        successor whose cells ``ci`` changed by ``d_ci`` has its parent's key plus
        ``sum(d_ci * c0[ci])`` in column 0 and ``sum(d_ci * c1[ci])`` in column 1
        (``c1`` is zero for one word, and for the cells of word 0)."""
        assert self.exact
        c0 = self.mult.copy()
        c1 = np.zeros_like(c0)
        if self.n_words == 2:
            in1 = self.word_of == 1
            c1[in1] = self.mult[in1]
            with np.errstate(over="ignore"):
                c0[in1] *= _SEED
        return c0, c1

    def words_of_keys(self, keys: np.ndarray) -> np.ndarray:
        """Packed states ``(n, k)`` of exact fingerprints (the inverse of
        :meth:`fingerprints` when :attr:`exact`)."""
        assert self.exact
        return words_of_keys(keys)

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
                x = _mod(x, self.size[i])
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

    def view_keys(self, keep: Collection[str]
                  ) -> tuple[str, int, Callable[[np.ndarray], np.ndarray]]:
        """How the states of a view over the variables ``keep`` are keyed, sized by the
        view rather than the state: ``(kind, width, keys)`` with ``kind`` ``exact`` or
        ``hash128`` (as :attr:`fingerprint_kind`), ``width`` the keys' ``uint64``
        columns (as :attr:`key_width`) and ``keys`` a function of packed states
        ``(n, k)`` to their views' keys. Two states get one key exactly when they agree
        on ``keep`` (with ``hash128``, up to a 128-bit hash collision).

        The view's variables are packed on their own (a :class:`Layout` of them alone):
        when that takes fewer words than the state's keys (one word, or two where the
        state is hashed), the keys are that packing's, exact; else the projected
        state's (:meth:`projection`), which costs no decoding."""
        names = [n for n in self.vars if n in keep]
        own = Layout([(n, self.vars[n].btype, self.vars[n].decl) for n in names])
        project = self.projection(names)
        if own.n_words == 1 or (own.n_words == 2 and not self.exact):
            cells = [i for n in names for i in range(self.vars[n].first_cell,
                                                     self.vars[n].first_cell
                                                     + self.vars[n].n_cells)]
            used = sorted({int(self.word_of[i]) for i in cells})
            if len(used) == 1:
                # the view's cells lie in one word of the state: that word, projected,
                # is the key (no cell decoded)
                w = used[0]

                def word(words: np.ndarray) -> np.ndarray:
                    return np.ascontiguousarray(project(words)[:, w])

                return "exact", 1, word

            def keys(words: np.ndarray) -> np.ndarray:
                return own.fingerprints(own.pack_columns(
                    [self.decode_cell(words, i) for i in cells]))

            return "exact", own.key_width, keys

        def projected(words: np.ndarray) -> np.ndarray:
            return self.fingerprints(project(words))

        return self.fingerprint_kind, self.key_width, projected

    def decode_cell(self, words: np.ndarray, i: int) -> np.ndarray:
        """Column of cell ``i`` (int64, actual values) from packed words ``(n, k)``."""
        col = words[:, self.word_of[i]]
        w = col
        if self.bitfields:
            w = (w >> self._shift[i]) & self._mask[i]
        else:
            sh = self._div_shift[i]
            if sh is None:
                w = w // self.mult[i]
            elif sh:
                w = w >> sh
            if not self._last_in_word[i]:
                mask = self._mod_mask[i]
                w = _mod(w, self.size[i]) if mask is None else w & mask
        # a cell's codes are below 2**60: a new array is read as int64 in place (the
        # words' own column is copied)
        out = w.astype(np.int64) if w is col else w.view(np.int64)
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
                "sets": _set_forms(cells),
                "declared": info.decl,
            })
        return rows


def _set_forms(cells: Sequence[Cell]) -> list[str]:
    """How each set a variable holds is stored, for ``inspect``: ``bit vector`` (one
    bit per possible element) or ``member codes`` (``max_size`` sorted codes), with its
    bits; one entry per set (a function of sets lists each)."""
    forms: dict[int, list[Any]] = {}
    for c in cells:
        t = c.type
        if isinstance(t, (BoundSetChunk, BoundSparseSlot)):
            kind = "member codes" if isinstance(t, BoundSparseSlot) else "bit vector"
            entry = forms.setdefault(id(t.owner), [kind, 0])
            entry[1] += max(1, (c.size - 1).bit_length())
    return [f"{kind} {bits} bits" for kind, bits in forms.values()]


def words_of_keys(keys: np.ndarray) -> np.ndarray:
    """Packed states ``(n, 1)`` or ``(n, 2)`` of exact keys of one or two columns (the
    inverse of :meth:`Layout.fingerprints` of a layout of one or two words)."""
    if keys.ndim == 1:
        return keys.reshape(len(keys), 1)
    words = np.empty((len(keys), 2), dtype=_U64)
    k1 = keys[:, 1]
    words[:, 1] = k1
    with np.errstate(over="ignore"):
        np.multiply(k1, _SEED, out=words[:, 0])
        np.subtract(keys[:, 0], words[:, 0], out=words[:, 0])
    return words


def _first_fit(sizes: Sequence[int], words: int) -> tuple[list[int], list[int]] | None:
    """Mixed radix over at most ``words`` words, each cell (in layout order) in the first
    word whose product of sizes stays at most 2**64 and whose multiplier for it (the
    product of the sizes before it) is below 2**64: ``(word of each cell, its
    multiplier)``, or None when the cells do not fit so."""
    products = [1] * words
    word_of: list[int] = []
    mults: list[int] = []
    for size in sizes:
        for w in range(words):
            if products[w] * size <= 2**64 and products[w] < 2**64:
                break
        else:
            return None
        word_of.append(w)
        mults.append(products[w])
        products[w] *= size
    return word_of, mults


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
