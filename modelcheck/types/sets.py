"""Sets: :class:`SetOf`, its bit-vector (:class:`BoundSet`) and sparse ``max_size``
(:class:`BoundSparseSet`) bound forms, their symmetry permutations, and the set values
(:class:`SetValue`, :class:`SparseSetValue`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec
from ..errors import SpecDefinitionError, SpecEvaluationError
from ..itfvalues import freeze
from ..undefined import _bool, _narrow_since, undefined_mark
from .arrays import _element_type
from .base import (
    BoundType,
    Deferred,
    Ids,
    ScalarType,
    Type,
    Value,
    ValueDomainError,
    ValueKindError,
    _batch_len,
    _codes_at,
    _elem_text,
    _first_ref,
    _index_of_codes,
    _index_permutation,
    _index_permutations,
    _type_parts,
    all_rows,
    as_int,
    resolve,
    select,
)

__all__ = [
    "SetOf",
    "BoundSet",
    "BoundSetChunk",
    "BoundSparseSet",
    "BoundSparseSlot",
    "refuse_sparse_sets",
    "MAX_ELEMENTS",
    "SET_FORMS",
    "choose_set_form",
    "code_bits",
    "SetValue",
    "SparseSetValue",
]


def refuse_sparse_sets(bound: BoundType, what: str) -> None:
    """Refuse a type that holds a set stored as member codes (a ``SetOf(..., max_size=k)``
    whose bound binds, or ``form="codes"``) where the engine numbers the type's values
    (a set or bag element, a union shape, an action parameter)."""
    for _, t in bound.cells():
        if isinstance(t, BoundSparseSlot) or isinstance(t, BoundSetChunk) \
                and t.owner.limit is not None:
            raise SpecDefinitionError(
                f"{what} holds {t.owner.describe()}, a set of at most k members "
                "(SetOf(..., max_size=k) with k below its element count): the values of "
                "such a type are not all the subsets of its element type, while the "
                "elements of a set or bag, the shapes of a union and the values of an "
                "action parameter are numbered over every subset. Declare that set "
                f"without max_size (a bit vector, at most {MAX_ELEMENTS} elements), or "
                "keep it in a state variable, a record field or a Seq instead.")


#: the most values a SetOf or Bag element type may have (one bit or count cell each)
MAX_ELEMENTS = 4096

#: the forms of a set: one bit per possible element, or sorted member codes
SET_FORMS = ("bits", "codes")


def code_bits(n_values: int) -> int:
    """The bits of one member code of a set over ``n_values`` elements (the codes
    ``0..n_values``, ``n_values`` being the empty slot's)."""
    return max(1, n_values.bit_length())


def choose_set_form(n_values: int, max_size: int | None) -> str | None:
    """The form :class:`SetOf` stores a set in when no ``form`` is given: ``"bits"`` (a
    bit vector, one bit per possible element) or ``"codes"`` (``max_size`` sorted
    member codes); None when neither serves (more than ``MAX_ELEMENTS`` elements and
    no bound on the members).

    * no ``max_size``: the bit vector, up to ``MAX_ELEMENTS`` elements;
    * beyond ``MAX_ELEMENTS`` elements, with ``max_size``: member codes;
    * otherwise the form of fewer bits: ``n`` for the bit vector, ``min(k, n) *
      code_bits(n)`` for the codes (the bit vector on a tie: its operations are
      cheaper). Both forms enforce a bound below ``n`` (storing a ``k + 1``-th member
      is a spec error), so the choice changes the cost only."""
    if n_values > MAX_ELEMENTS:
        return None if max_size is None else "codes"
    if max_size is None or n_values <= min(max_size, n_values) * code_bits(n_values):
        return "bits"
    return "codes"


class SetOf(Type):
    """A subset of a finite type: ``SUBSET Procs``, ``SUBSET (0..7)``, a set of records.

    The element type is an ``Ids`` set or any type but an array (ints, enums, booleans,
    records). In expressions the value is a set value holding element values
    (``s.holders.has(p)`` for id ``p``, ``with_``, ``without``, ``|``, ``&``, ``-``,
    ``<=``, ``size()``, ``is_empty()``, ``min()``, ``max()``, ``choose()``; see
    :class:`~modelcheck.types.sets.SetValue`). ``init`` lists the initial members.

    A set is stored in one of two forms, chosen by ``choose_set_form`` unless
    ``form`` names one:

    * ``"bits"``, a bit vector: one bit per value of the element type ``T``, at most
      ``MAX_ELEMENTS`` (4,096) of them;
    * ``"codes"``, member codes: at most ``max_size`` member codes, sorted (one
      encoding per set value), each of ``ceil(log2(|T| + 1))`` bits, whatever the size
      of ``T`` (a set of records over a large product).

    ``max_size=k`` bounds the members a value may hold: in either form storing a
    ``k + 1``-th member is a spec error, as exceeding an ``Int`` bound is. Without
    ``form``, the form of fewer bits is chosen (``|T|`` bits against ``k`` codes), and
    member codes beyond 4,096 elements, where a set without ``max_size`` is refused.
    """

    def __init__(self, elem: Ids | Type, *, init: Iterable[Any] | Deferred = (),
                 max_size: int | Deferred | None = None, form: str | None = None) -> None:
        self.elem = elem
        self.init = init
        self.max_size = max_size
        self.form = form

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        text = _elem_text(self.elem)
        elem = _element_type(self.elem, consts, f"SetOf({text})")
        refuse_sparse_sets(elem, f"the element type of SetOf({text})")
        k = resolve(self.max_size, consts)
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise SpecDefinitionError(
                f"SetOf({text}, max_size={k!r}): max_size is the most members a value of "
                "the set may hold, a positive integer.")
        n = elem.n_values
        bits = code_bits(n)
        form = self.form
        if form is not None and form not in SET_FORMS:
            raise SpecDefinitionError(
                f"SetOf({text}, form={form!r}): form is \"bits\" (a bit vector, one bit "
                "per possible element) or \"codes\" (at most max_size sorted member "
                "codes); leave it out to let the element count and max_size choose.")
        if form is None:
            form = choose_set_form(n, k)
        if form is None:
            raise SpecDefinitionError(
                f"SetOf({text}) has {n} possible elements, more than the {MAX_ELEMENTS} "
                "a bit vector holds (one bit per possible element), and no bound on its "
                f"members. Give the most members a value may hold, SetOf({text}, "
                f"max_size=k): the set is then stored as at most k sorted member codes "
                f"of {bits} bits (k * {bits} bits a state), and storing a k + 1-th "
                "member is reported as a spec error.")
        t: BoundSet
        if form == "codes":
            if k is None:
                raise SpecDefinitionError(
                    f"SetOf({text}, form=\"codes\") needs max_size=k, the most members "
                    f"a value may hold: member codes take k slots of {bits} bits.")
            t = BoundSparseSet(elem, f"SUBSET {elem.describe()}", min(k, n))
        else:
            if n > MAX_ELEMENTS:
                raise SpecDefinitionError(
                    f"SetOf({text}, form=\"bits\") has {n} possible elements; at most "
                    f"{MAX_ELEMENTS} are supported as a bit vector (one bit per possible "
                    "element). Leave form out and give max_size=k to store each value "
                    f"as at most k sorted member codes of {bits} bits.")
            t = BoundSet(elem, f"SUBSET {elem.describe()}",
                         k if k is not None and k < n else None)
        try:
            t.init = frozenset(freeze(elem.value(elem.codes(v))) for v in
                               resolve(self.init, consts))
            t.codes(t.init)
        except (ValueError, TypeError) as e:
            raise SpecDefinitionError(f"SetOf(...) init: {e}") from None
        return t

    def describe(self) -> str:
        if self.max_size is not None:
            return f"SUBSET {_elem_text(self.elem)} (max_size {self.max_size})"
        return f"SUBSET {_elem_text(self.elem)}"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(self.elem)


class BoundSetChunk(ScalarType):
    """One cell of a set: bit ``b`` is element value number ``first + b`` of the set's
    element type. A set of at most 62 values is one such cell."""

    kind = "set"

    def __init__(self, owner: BoundSet, first: int, width: int, init: int) -> None:
        single = width == owner.elem.n_values
        super().__init__(0, 1 << width, init, owner.text if single else
                         f"bits {first}..{first + width - 1} of {owner.text}")
        self.owner, self.first, self.width = owner, first, width
        self.ref = owner.ref
        self.labels = tuple(owner.elem.show(owner.elem.codes(owner.elem.value(
            _codes_at(owner.elem, first + b)))) for b in range(width))

    def _members(self, code: int) -> list[int]:
        return [self.first + b for b in range(self.width) if code >> b & 1]

    def to_python(self, code: int) -> Any:
        e = self.owner.elem
        return frozenset(freeze(e.value(_codes_at(e, i))) for i in self._members(code))

    def from_python(self, value: Any) -> int:
        if self.owner.n_cells == 1:
            return self.owner.codes(value)[0]
        return super().from_python(value)

    def from_itf(self, value: Any) -> int:
        if self.owner.n_cells == 1:
            return self.owner.codes_from_itf(value)[0]
        raise ValueKindError("the whole set")

    def display(self, code: int) -> str:
        if code < 0:
            return f"<{code}: an element outside the set's universe>"
        e = self.owner.elem
        return "{" + ", ".join(e.show(_codes_at(e, i)) for i in self._members(code)) + "}"

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        var = name.rsplit(".bits", 1)[0]
        if value < 0:
            return (f"adds to {var} an element outside its element type "
                    f"{self.owner.elem.describe()}")
        k = self.owner.limit
        if k is not None and value > self.hi:
            return (f"adds to {var} a member beyond its max_size {k} ({var} is a "
                    f"SetOf({self.owner.elem.describe()}, max_size={k}), which holds at "
                    f"most {k} members)")
        return None


class BoundSet(BoundType):
    """A subset of the values of ``elem``: bit ``i`` (of chunks of 62 bits) is the value
    at position ``i`` (:meth:`BoundType.index_of`). Python and trace values are
    ``frozenset``\\ s of element values; ``codes`` also takes any list or tuple of
    distinct elements (and, for a set of at most 62 values, the mask itself)."""

    chunk_bits = 62

    def __init__(self, elem: BoundType, text: str, limit: int | None = None) -> None:
        self.elem = elem
        self.text = text
        self.ref = _first_ref(elem)
        #: ``max_size`` when it binds (below the element count): storing a set of more
        #: members marks the last chunk out of its domain (:meth:`SetValue._columns`)
        self.limit = limit
        self._free: BoundSet | None = None
        self.init: frozenset[Any] = frozenset()
        #: the element values built so far, by position (see :meth:`member_value`)
        self._member_values: dict[int, Any] = {}
        n = elem.n_values
        w = self.chunk_bits
        self.chunk_widths = [min(w, n - k) for k in range(0, n, w)] or [1]
        self.width = n
        self._chunks = [BoundSetChunk(self, k * w, cw, 0)
                        for k, cw in enumerate(self.chunk_widths)]

    def member_value(self, i: int) -> Any:
        """The element value at position ``i`` (a constant), built once per position: the
        members a quantifier over a set value visits
        (:meth:`modelcheck.types.sets.SetValue.members`)."""
        x = self._member_values.get(i)
        if x is None:
            x = self._member_values[i] = self.elem.value_at(i)
        return x

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        if len(self._chunks) == 1:
            return [((), self._chunks[0])]
        return [((f"bits{k}",), c) for k, c in enumerate(self._chunks)]

    def default(self) -> Any:
        return self.init

    def describe(self) -> str:
        return self.text if self.limit is None else f"{self.text} (max_size {self.limit})"

    def unlimited(self) -> BoundSet:
        """This type without its ``max_size``: the type of an operand converted from
        member codes, which may hold more members than a stored value."""
        if self.limit is None:
            return self
        if self._free is None:
            self._free = BoundSet(self.elem, self.text)
            self._free._member_values = self._member_values
        return self._free

    def _members(self, codes: Sequence[int]) -> list[int]:
        w = self.chunk_bits
        return [k * w + b for k, c in enumerate(codes) for b in range(self.chunk_widths[k])
                if int(c) >> b & 1]

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        e = self.elem
        return frozenset(freeze(e.value(_codes_at(e, i), itf=itf)) for i in self._members(codes))

    def _from_members(self, idxs: Iterable[int]) -> list[int]:
        out = [0] * len(self.chunk_widths)
        idxs = list(idxs)
        if self.limit is not None and len(set(idxs)) > self.limit:
            raise ValueError(f"{len(set(idxs))} members, more than the max_size {self.limit} "
                             f"of {self.describe()}")
        for i in idxs:
            out[i // self.chunk_bits] |= 1 << (i % self.chunk_bits)
        return out

    def codes(self, value: Any) -> list[int]:
        if isinstance(value, (list, tuple, set, frozenset)):
            idxs = []
            for m in value:
                try:
                    idx, outside = _index_of_codes(self.elem, self.elem.codes(m))
                except (ValueError, TypeError, SpecEvaluationError):
                    raise ValueError(f"{m!r} is not in its universe") from None
                if outside:
                    raise ValueError(f"{m!r} is not in its universe")
                idxs.append(idx)
            return self._from_members(idxs)
        if len(self.chunk_widths) == 1 and isinstance(value, int) and not isinstance(value, bool):
            return [value]
        raise ValueError(f"{value!r} is not a value of {self.text}")

    def codes_from_itf(self, value: Any) -> list[int]:
        if not isinstance(value, (frozenset, set, list, tuple)):
            raise ValueKindError("a set")
        if self.limit is not None and len(value) > self.limit:
            raise ValueDomainError(
                f"= {codec.text(value)} has {len(value)} members, more than its max_size "
                f"{self.limit}")
        seen: set[int] = set()
        for m in value:
            try:
                idx, _ = _index_of_codes(self.elem, self.elem.codes_from_itf(m))
            except (ValueKindError, ValueDomainError):
                raise ValueDomainError(
                    f"= {codec.text(value)} has member {codec.text(m)} outside "
                    f"{self._universe_text()}") from None
            if idx in seen:
                raise ValueDomainError(f"= {codec.text(value)} has member "
                                       f"{codec.text(m)} twice")
            seen.add(idx)
        return self._from_members(seen)

    def _universe_text(self) -> str:
        if self.elem.n_values <= 16:
            return self.show(self._from_members(range(self.elem.n_values)))
        return self.elem.describe()

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        e = self.elem
        return "{" + ", ".join(e.show(_codes_at(e, i), short=short)
                               for i in self._members(codes)) + "}"

    def view(self, cols: Sequence[Any]) -> Any:
        return SetValue(self, list(cols))

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, SetValue):
            if value._type.width != self.width:
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.text} value is expected")
            if not self._same_form(value._type):
                return self._converted(value)
            return value._columns()
        if isinstance(value, (set, frozenset, list, tuple)):
            out = self.empty_value()
            for m in value:
                out = out.with_(m)
            return out._columns()
        if isinstance(value, Value):
            raise SpecEvaluationError(
                f"a {value._type.describe()} value where a {self.text} value is expected")
        raise SpecEvaluationError(
            f"{value!r} where a {self.text} value is expected: use a set value (a SetOf "
            "variable, its operations) or a set literal of elements; since SetOf holds "
            "element values, bit masks are not sets")

    def _same_form(self, other: BoundSet) -> bool:
        """Whether values of ``other`` (a set type of as many elements) are stored as
        this type's are, so that their columns serve as they are (a bit vector of
        another ``max_size`` has the same bits, but not the same check)."""
        return not isinstance(other, BoundSparseSet) and other.limit == self.limit

    def empty_value(self) -> SetValue:
        """The empty set, as a value of this type."""
        return SetValue(self, [0] * len(self.chunk_widths))

    def _convert_value(self, value: SetValue) -> SetValue:
        """A set value of the same element type stored in another form (bit vector,
        member codes, another max_size) as a value of this type, built member by
        member: the cost scales with the members present."""
        out = self.empty_value()
        for x, inside in value.members():
            grown = out._select(inside, out.with_(x), swap=True)
            assert isinstance(grown, SetValue)
            out = grown
        return out._marked(value.bad)

    def _converted(self, value: SetValue) -> list[Any]:
        if not isinstance(value._type, BoundSparseSet) and not isinstance(self, BoundSparseSet):
            # the same bits, checked against this type's max_size
            return SetValue(self, list(value.chunks), value.bad)._columns()
        return self._convert_value(value)._columns()

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        to = _index_permutation(self.elem, pis)
        if to is None:
            return None
        return _sparse_set_permutation(np.asarray(to, dtype=np.int64), self.chunk_bits,
                                       list(self.chunk_widths))



    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        tos = [_index_permutation(self.elem, pis) for pis in many]
        if all(t is None for t in tos):
            return None
        n = self.width
        to = np.stack([np.arange(n, dtype=np.int64) if t is None
                       else np.asarray(t, dtype=np.int64) for t in tos])
        return _sparse_sets_permutation(to, self.chunk_bits, len(self.chunk_widths))

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        to = self.element_permutations(many)
        if to is None:
            return None
        return _paired_sets_permutation(to, self.chunk_bits, len(self.chunk_widths))

    def element_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                             ) -> np.ndarray | None:
        """Where each permutation of ``many`` sends each element (its index):
        ``(len(many), elements)``, or None when none moves one. The last list asked
        about is remembered (symmetry asks twice about the same one)."""
        memo = getattr(self, "_element_memo", None)
        if memo is not None and memo[0] is many:
            return memo[1]
        to = _index_permutations(self.elem, many)
        self._element_memo = (many, to)
        return to


def _dense_set_permutation(to: np.ndarray, w: int, widths: list[int]
                           ) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The set cells' permutation moving element ``i`` to ``to[i]``, as one gather over an
    ``(n, elements)`` bit matrix: the reference the sparse path is tested against."""
    # the bit of element j of the result is the bit of element src[j] of the argument
    src = np.empty(len(to), dtype=np.int64)
    src[to] = np.arange(len(to))
    shifts = [np.arange(k, dtype=np.int64) for k in widths]

    def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
        bits = np.concatenate(
            [(np.asarray(c, dtype=np.int64)[..., None] >> sh) & 1
             for c, sh in zip(cols, shifts)], axis=-1)[..., src]
        return [np.sum(bits[..., k * w:k * w + len(sh)] << sh, axis=-1).astype(
            np.asarray(c).dtype) for k, (c, sh) in enumerate(zip(cols, shifts))]

    return apply


#: the last batch of set cells whose members were listed, and the list: every permutation
#: of one canonicalisation lists the same (unmoved) cells, so it is listed once
_members_memo: tuple[tuple[np.ndarray, ...], int, tuple[np.ndarray, np.ndarray]] | None = None


def _set_members(cols: list[np.ndarray], w: int) -> tuple[np.ndarray, np.ndarray]:
    """The members present in a batch of set cells: flat state numbers and element indices
    (chunk ``k``'s bit ``b`` is element ``k * w + b``), one pair per set bit."""
    global _members_memo
    memo = _members_memo
    if memo is not None and memo[1] == w and len(memo[0]) == len(cols) and all(
            x is y for x, y in zip(memo[0], cols)):
        return memo[2]
    kc = len(cols)
    grid = np.stack([np.asarray(c).reshape(-1).astype("<i8") for c in cols], axis=-1)
    nz = np.flatnonzero(grid)
    # the 64 bits of each nonzero chunk, little-endian: cost scales with the members
    # present instead of with the element type's size
    words = np.ascontiguousarray(grid.reshape(-1)[nz])
    bits = np.unpackbits(words.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    r, b = np.nonzero(bits)
    cell = nz[r]
    out = (cell // kc, (cell % kc) * w + b.astype(np.int64))
    _members_memo = (tuple(cols), w, out)
    return out


def _sparse_set_permutation(to: np.ndarray, w: int, widths: list[int]
                            ) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The set cells' permutation moving element ``i`` to ``to[i]``, moving only the bits
    of the members present (the same cells as :func:`_dense_set_permutation`)."""
    kc = len(widths)
    chunk_of = to // w
    bit_of = np.left_shift(np.int64(1), to % w)

    def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
        arrs = [np.asarray(c) for c in cols]
        shape = arrs[0].shape
        rows, elems = _set_members(arrs, w)
        out = np.zeros(arrs[0].size * kc, dtype=np.int64)
        # distinct members of one set land on distinct bits: adding them is or-ing them
        np.add.at(out, rows * kc + chunk_of[elems], bit_of[elems])
        grid = out.reshape(-1, kc)
        return [grid[:, k].reshape(shape).astype(a.dtype) for k, a in enumerate(arrs)]

    return apply


def _chunk_bits(words: np.ndarray, where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The set bits of nonzero chunks ``words`` (non-negative int64), as ``(where[j],
    bit)`` pairs: the lowest set bit of every chunk at once, cleared, until none is
    left, so the passes are as many as a chunk holds members."""
    cells: list[np.ndarray] = []
    bits: list[np.ndarray] = []
    while len(words):
        low = words & -words
        cells.append(where)
        bits.append(np.bitwise_count(low - 1).astype(np.int64))
        words = words ^ low
        left = words != 0
        words, where = words[left], where[left]
    return np.concatenate(cells), np.concatenate(bits)


def _sparse_sets_permutation(to: np.ndarray, w: int, kc: int
                             ) -> Callable[[np.ndarray], np.ndarray]:
    """Several set permutations at once: permutation ``p`` moves element ``i`` to
    ``to[p, i]``; a block of set cells ``(q, kc, m)`` (``q`` 1 or the number of
    permutations) to ``(permutations, kc, m)``. Only the bits of the members present
    move: the members are listed once per block (for ``q == 1``, once for every
    permutation), each sent to its chunk and bit under every permutation by one
    scatter."""
    n_perms = len(to)
    chunk_of = to // w
    bit_of = np.left_shift(np.int64(1), to % w)

    def apply(block: np.ndarray) -> np.ndarray:
        q, _, m = block.shape
        # rows (permutation copy, state) by chunk: the members of the nonzero chunks
        grid = np.ascontiguousarray(block.transpose(0, 2, 1), dtype="<i8").reshape(-1)
        nz = np.flatnonzero(grid)
        out = np.zeros(n_perms * m * kc, dtype=np.int64)
        if len(nz):
            cell, b = _chunk_bits(grid[nz], nz)
            row = cell // kc  # permutation copy * m + state
            elem = (cell % kc) * w + b
            if q == 1:
                # every permutation of the same members: one column gather per table
                base = (np.arange(n_perms, dtype=np.int64) * (m * kc))[:, None]
                target = base + (row * kc)[None, :] + chunk_of[:, elem]
                bits = bit_of[:, elem]
            else:
                perm = row // m
                target = row * kc + chunk_of[perm, elem]
                bits = bit_of[perm, elem]
            # distinct members of one set land on distinct bits: adding them is or-ing
            np.add.at(out, target.reshape(-1), bits.reshape(-1))
        return out.reshape(n_perms, m, kc).transpose(0, 2, 1)

    return apply


def _paired_sets_permutation(to: np.ndarray, w: int, kc: int
                             ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """:func:`_sparse_sets_permutation` with one permutation per column: set cells
    ``(kc, m)``, column ``j`` moved by permutation ``which[j]`` (members present only)."""
    chunk_of = to // w
    bit_of = np.left_shift(np.int64(1), to % w)

    def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
        m = block.shape[1]
        grid = np.ascontiguousarray(np.asarray(block).T, dtype="<i8").reshape(-1)
        nz = np.flatnonzero(grid)
        out = np.zeros(m * kc, dtype=np.int64)
        if len(nz):
            cell, b = _chunk_bits(grid[nz], nz)
            row = cell // kc
            elem = (cell % kc) * w + b
            perm = which[row]
            # distinct members of one set land on distinct bits: adding them is or-ing
            np.add.at(out, row * kc + chunk_of[perm, elem], bit_of[perm, elem])
        return out.reshape(m, kc).T

    return apply


class BoundSparseSlot(ScalarType):
    """One member slot of a set stored as member codes (``SetOf(T, max_size=k)``): the
    position of a member among ``T``'s values, or ``|T|``, the code of an empty slot
    (the largest, so that a value's slots sorted ascending hold its members first)."""

    kind = "setslot"

    def __init__(self, owner: BoundSparseSet, slot: int) -> None:
        n = owner.elem.n_values
        super().__init__(0, n + 1, n, f"slot {slot} of {owner.describe()}")
        self.owner, self.slot = owner, slot
        self.ref = owner.ref

    def to_python(self, code: int) -> Any:
        e = self.owner.elem
        return None if code == self.owner.empty else freeze(e.value(_codes_at(e, code)))

    def from_itf(self, value: Any) -> int:
        raise ValueKindError("the whole set")

    def display(self, code: int) -> str:
        if code == self.owner.empty:
            return "(empty)"
        if not 0 <= code < self.owner.empty:
            return f"<{code}: outside the slot's codes>"
        e = self.owner.elem
        return e.show(_codes_at(e, code))

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        var = name.rsplit(".slot", 1)[0]
        k = self.owner.max_size
        if value > self.hi:
            return (f"adds to {var} a member beyond its max_size {k} ({var} is a "
                    f"SetOf({self.owner.elem.describe()}, max_size={k}), which holds at "
                    f"most {k} members)")
        if value < 0:
            return (f"adds to {var} an element outside its element type "
                    f"{self.owner.elem.describe()}")
        return None


class BoundSparseSet(BoundSet):
    """A subset of the values of ``elem`` holding at most ``max_size`` members, stored as
    ``max_size`` cells (:class:`BoundSparseSlot`): the members' positions
    (:meth:`BoundType.index_of`) sorted ascending, then the empty code ``|elem|`` in
    the slots left. A set value has one encoding, so equal packed states are equal
    sets. The cost is ``max_size * ceil(log2(|elem| + 1))`` bits whatever the element
    type's size: the form for element types beyond ``MAX_ELEMENTS`` (4,096) values.
    Python and trace values are ``frozenset``\\ s of element values, as for
    :class:`BoundSet`."""

    def __init__(self, elem: BoundType, text: str, max_size: int) -> None:
        self.elem = elem
        self.text = text
        self.ref = _first_ref(elem)
        self.limit = None  # (the slots hold the bound)
        self._free = None
        self.init = frozenset()
        self._member_values = {}
        self.max_size = max_size
        self.width = elem.n_values
        #: the code of an empty slot
        self.empty = elem.n_values
        self._slots = [BoundSparseSlot(self, i) for i in range(max_size)]
        self._sizes: dict[int, BoundSparseSet] = {}

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        return [((f"slot{i}",), c) for i, c in enumerate(self._slots)]

    def describe(self) -> str:
        return f"{self.text} (max_size {self.max_size})"

    def _same_form(self, other: BoundSet) -> bool:
        return isinstance(other, BoundSparseSet) and other.max_size == self.max_size

    def sized(self, max_size: int) -> BoundSparseSet:
        """This type with room for ``max_size`` members (at least this type's): the type
        of an operand or an intermediate value that is never stored as it is."""
        max_size = max(max_size, self.max_size)
        if max_size == self.max_size:
            return self
        t = self._sizes.get(max_size)
        if t is None:
            t = self._sizes[max_size] = BoundSparseSet(self.elem, self.text, max_size)
            t._member_values = self._member_values
        return t

    def empty_value(self) -> SetValue:
        return SparseSetValue(self, [self.empty] * self.max_size)

    def _members(self, codes: Sequence[int]) -> list[int]:
        return [int(c) for c in codes if 0 <= int(c) < self.empty]

    def literal(self, value: Iterable[Any]) -> SetValue:
        """A set literal (elements, constants or not) as a value in as many slots as it
        has elements (at least this type's): constant elements are placed at once,
        sorted, others added one by one."""
        items = list(value)
        t = self.sized(len(items))
        fixed: set[int] = set()
        bad = False
        rest = []
        for m in items:
            idx, outside = self.elem.index_of(m)
            if isinstance(idx, int) and isinstance(outside, bool):
                if outside:
                    bad = True
                else:
                    fixed.add(idx)
            else:
                rest.append(m)
        codes = sorted(fixed) + [self.empty] * (t.max_size - len(fixed))
        out: SetValue = SparseSetValue(t, [np.int64(c) for c in codes], np.bool_(bad)
                                       if bad else False)
        for m in rest:
            out = out.with_(m)
        return out

    def _from_members(self, idxs: Iterable[int]) -> list[int]:
        out = sorted(set(idxs))
        if len(out) > self.max_size:
            raise ValueError(f"{len(out)} members, more than the max_size {self.max_size} "
                             f"of {self.describe()}")
        return out + [self.empty] * (self.max_size - len(out))

    def codes(self, value: Any) -> list[int]:
        if isinstance(value, (list, tuple, set, frozenset)):
            return super().codes(value)
        raise ValueError(f"{value!r} is not a value of {self.describe()}")

    def codes_from_itf(self, value: Any) -> list[int]:
        if isinstance(value, (frozenset, set, list, tuple)) and len(value) > self.max_size:
            raise ValueDomainError(
                f"= {codec.text(value)} has {len(value)} members, more than its max_size "
                f"{self.max_size}")
        return super().codes_from_itf(value)

    def _universe_text(self) -> str:
        return self.elem.describe()

    def view(self, cols: Sequence[Any]) -> Any:
        return SparseSetValue(self, list(cols))

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, (set, frozenset, list, tuple)):
            lit = self.literal(value)
            return lit._columns() if lit._type is self else self._converted(lit)
        return super().columns(value)

    def _moved(self, fn: Callable[[list[np.ndarray]], list[np.ndarray]], mat: np.ndarray
               ) -> np.ndarray:
        """Member codes ``mat`` (any shape) moved by ``fn`` (the element type's cells
        permutation), then sorted along the last axis: only the distinct members
        present are mapped."""
        u, inv = np.unique(mat, return_inverse=True)
        to = u.copy()
        real = (u >= 0) & (u < self.empty)
        if real.any():
            e = self.elem
            cols = e.columns(e.value_at(u[real]))
            moved = fn([np.asarray(as_int(c), dtype=np.int64) for c in cols])
            idx, _ = e.index_of(e.view(moved))
            to[real] = np.asarray(idx, dtype=np.int64)
        return np.sort(to[inv].reshape(mat.shape), axis=-1)

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fn = self.elem.cells_permutation(pis)
        if fn is None:
            return None

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            arrs = [np.asarray(c) for c in cols]
            mat = np.stack([a.astype(np.int64) for a in arrs], axis=-1)
            out = self._moved(fn, mat)
            return [out[..., i].astype(a.dtype) for i, a in enumerate(arrs)]

        return apply

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fns = [self.elem.cells_permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None

        def apply(block: np.ndarray) -> np.ndarray:
            q, k, m = block.shape
            out = np.empty((len(fns), k, m), dtype=np.int64)
            for p, f in enumerate(fns):
                part = np.asarray(block[min(p, q - 1)], dtype=np.int64)
                out[p] = part if f is None else self._moved(f, part.T).T
            return out

        return apply

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        return BoundType.cells_permutations_paired(self, many)


class SetValue(Value):
    """A value of ``SetOf(T)``: one bit per value of ``T`` (bit = ``T``'s index of the
    value), in chunks of at most 62 bits, plus ``bad``: rows where an element outside
    ``T`` was added (stored as an out-of-domain chunk, hence reported)."""

    _type: BoundSet

    def __init__(self, type_: BoundSet, chunks: list[Any], bad: Any = False) -> None:
        self._type = type_
        self.chunks = chunks
        self.bad = bad

    def _columns(self) -> list[Any]:
        chunks = list(self.chunks)
        k = self._type.limit
        if k is not None:
            # more than max_size members: the last chunk is stored one past its domain
            over = self.size() > k
            if np.any(over):
                chunks[-1] = select(over, 1 << self._type.chunk_widths[-1], chunks[-1])
        if self.bad is False:
            return chunks
        chunks[0] = select(self.bad, -1, chunks[0])
        return chunks

    def _new(self, chunks: list[Any], bad: Any = None) -> SetValue:
        return SetValue(self._type, chunks, self.bad if bad is None else bad)

    def _marked(self, bad: Any) -> SetValue:
        """This value, with rows ``bad`` also marked as holding an element outside the
        element type."""
        return self if bad is False else self._new(list(self.chunks), self.bad | bad)

    def _other(self, other: Any) -> SetValue:
        if isinstance(other, SetValue):
            if other._type.width != self._type.width:
                raise SpecEvaluationError(
                    f"cannot combine a {self._type.describe()} with a {other._type.describe()}")
            if not isinstance(other._type, BoundSparseSet):  # the same bits
                return other
            # an operand may hold more members than this type's max_size
            return self._type.unlimited()._convert_value(other)
        if isinstance(other, (set, frozenset, list, tuple)):
            # element by element: an element outside the type stays a mark (``bad``),
            # not a bit pattern in the chunks
            out = self._type.unlimited().empty_value()
            for m in other:
                out = out.with_(m)
            return out
        return SetValue(self._type, self._type.unlimited().columns(other))

    def _locate(self, x: Any) -> tuple[Any, Any, Any]:
        """(chunk number, bit, outside) of element ``x``."""
        idx, outside = self._type.elem.index_of(x)
        w = self._type.chunk_bits
        if isinstance(idx, int):
            return idx // w, idx % w, outside
        idx = np.where(outside, 0, idx)
        return idx // w, idx % w, outside

    # -- TLA+ operators
    def has(self, x: Any) -> Any:
        """``x \\in S`` (FALSE for a value outside the element type)."""
        c, bit, outside = self._locate(x)
        if isinstance(c, int):
            if outside:
                return np.False_
            return (as_int(self.chunks[c]) >> bit) & 1 == 1
        acc: Any = np.False_
        for k in self._touched(c):
            acc = select(c == k, (as_int(self.chunks[k]) >> bit) & 1 == 1, acc)
        return acc & ~np.asarray(outside)

    def _touched(self, c: Any) -> list[int]:
        """The chunks that a column of chunk numbers ``c`` names in some row (the rows
        of an element outside the type name chunk 0): only those change or are read."""
        if len(self.chunks) == 1:
            return [0]
        return np.flatnonzero(np.bincount(np.asarray(c, dtype=np.int64).ravel(),
                                          minlength=len(self.chunks))).tolist()

    def with_(self, x: Any) -> SetValue:
        """``S \\cup {x}``; ``x`` outside the element type is a spec error when stored."""
        c, bit, outside = self._locate(x)
        if isinstance(c, int):
            if outside:
                return self._new(list(self.chunks), np.True_)
            chunks = list(self.chunks)
            chunks[c] = as_int(chunks[c]) | (1 << bit)
            return self._new(chunks)
        one = np.where(outside, 0, np.left_shift(np.int64(1), bit))
        chunks = list(self.chunks)
        for k in self._touched(c):
            chunks[k] = as_int(chunks[k]) | np.where(c == k, one, 0)
        return self._new(chunks, self.bad | outside)

    def without(self, x: Any) -> SetValue:
        """``S \\ {x}``."""
        c, bit, outside = self._locate(x)
        if isinstance(c, int):
            if outside:
                return self
            chunks = list(self.chunks)
            chunks[c] = as_int(chunks[c]) & ~(1 << bit)
            return self._new(chunks)
        one = np.where(outside, 0, np.left_shift(np.int64(1), bit))
        chunks = list(self.chunks)
        for k in self._touched(c):
            chunks[k] = as_int(chunks[k]) & ~np.where(c == k, one, 0)
        return self._new(chunks)

    def __or__(self, other: Any) -> SetValue:
        o = self._other(other)
        return self._new([as_int(a) | as_int(b) for a, b in zip(self.chunks, o.chunks)],
                         self.bad | o.bad)

    __ror__ = __or__

    # an element outside the element type in the operand of & or - is no member of S:
    # it changes nothing, as in TLA+
    def __and__(self, other: Any) -> SetValue:
        o = self._other(other)
        return self._new([as_int(a) & as_int(b) for a, b in zip(self.chunks, o.chunks)])

    __rand__ = __and__

    def __sub__(self, other: Any) -> SetValue:
        o = self._other(other)
        return self._new([as_int(a) & ~as_int(b) for a, b in zip(self.chunks, o.chunks)])

    def __rsub__(self, other: Any) -> SetValue:
        return self._other(other) - self

    def __le__(self, other: Any) -> Any:
        """``S \\subseteq T``."""
        o = self._other(other)
        # (a set holding an element outside the type is a subset of no set of the type)
        return all_rows([as_int(a) & ~as_int(b) == 0 for a, b in zip(self.chunks, o.chunks)]
                        ) & ~np.asarray(self.bad)

    def __ge__(self, other: Any) -> Any:
        return self._other(other) <= self

    def __lt__(self, other: Any) -> Any:
        return (self <= other) & (self != other)

    def __gt__(self, other: Any) -> Any:
        return (self >= other) & (self != other)

    def members(self) -> list[tuple[Any, Any]]:
        """``(element, in_set)`` for every element that is a member of the set in some
        state (in one state: its members), in the element type's order (ids and ints
        ascending, enums by value, records field by field): the set-valued expression
        protocol of the quantifiers, folds and ``choose`` of :mod:`modelcheck.expr`
        (``any_of(s.msgs, fn)``). An element is an expression value of the element type
        (an int, a record value...), a constant; ``in_set`` is a numpy bool, a column for
        a batch. The cost scales with the members present (the union over the batch's
        states), not with the element type: an element that no state holds is not
        visited. When no state holds any member, one pair remains, the type's first
        element with ``in_set`` false everywhere, so that a fold without default or a
        ``choose`` still has a value of the element type to stand for its undefined
        result."""
        present, _ = self._held()
        values = self._type.member_value
        if not present:
            return [(values(0), self._none())]
        return [(values(i), self._held_in(i)) for i in present]

    # -- the members held, for the quantifiers and folds of :mod:`modelcheck.expr`
    def _none(self) -> Any:
        """False in every row (a column for a batch)."""
        first = as_int(self.chunks[0])
        return (np.zeros(np.shape(first), dtype=bool) if isinstance(first, np.ndarray)
                and np.ndim(first) else np.False_)

    def _held(self) -> tuple[list[int], bool]:
        """The positions of the elements held in some row, ascending (the bits set in
        any state), and whether every row's chunks are a stored set's (no negative
        chunk, which :meth:`_any_in` and :meth:`_count_in` do not read as bits);
        computed once per value (a value's chunks never change)."""
        memo = self.__dict__.get("_held_memo")
        if memo is None:
            memo = self.__dict__["_held_memo"] = self._held_now()
        return memo

    def _held_now(self) -> tuple[list[int], bool]:
        w = self._type.chunk_bits
        present: list[int] = []
        plain = True
        for k, ch in enumerate(self.chunks):
            col = as_int(ch)
            if isinstance(col, np.ndarray) and col.ndim:
                held = int(np.bitwise_or.reduce(col)) if col.size else 0
                if held < 0:  # never a stored state's chunk: keep the states' own bits
                    plain = False
                    held = int(np.bitwise_or.reduce(col[col >= 0])) if (col >= 0).any() else 0
            else:
                plain = plain and int(col) >= 0
                held = max(int(col), 0)
            while held:
                low = held & -held
                held ^= low
                present.append(k * w + low.bit_length() - 1)
        return present, plain

    def _held_in(self, i: int) -> Any:
        """Where element position ``i`` is a member (a column for a batch)."""
        w = self._type.chunk_bits
        return (as_int(self.chunks[i // w]) >> (i % w)) & 1 == 1

    def _masks(self, idxs: Iterable[int]) -> dict[int, int]:
        """Element positions as one bit mask per chunk (the chunks they fall in)."""
        w = self._type.chunk_bits
        masks: dict[int, int] = {}
        for i in idxs:
            masks[i // w] = masks.get(i // w, 0) | (1 << (i % w))
        return masks

    def _any_in(self, idxs: Iterable[int]) -> Any:
        """Where the set holds one of the element positions ``idxs``: one mask and test
        per chunk, whatever the number of positions (rows of stored sets only: see
        :meth:`_held`)."""
        acc: Any = self._none()
        for k, mask in self._masks(idxs).items():
            acc = acc | (as_int(self.chunks[k]) & mask != 0)
        return acc

    def _count_in(self, idxs: Iterable[int]) -> Any:
        """How many of the element positions ``idxs`` the set holds, per row (int64)."""
        acc: Any = self._none().astype(np.int64)
        for k, mask in self._masks(idxs).items():
            acc = acc + np.bitwise_count(
                np.asarray(as_int(self.chunks[k]) & mask, dtype=np.int64)).astype(np.int64)
        return acc

    def filter(self, keep: Callable[[Any], Any]) -> SetValue:
        """``{x \\in S: keep(x)}``: the members for which ``keep`` holds. ``keep`` is
        called at the members held in some state of the batch only (an undefined value
        met there counts only where ``x`` is a member, as for the quantifiers); a
        constant answer (a test of the element alone, ``lambda m: m.type ==
        MsgType.Ack``) clears the element's bit with one mask per chunk, a per-state
        answer clears it in the states where it is false."""
        present, _ = self._held()
        values = self._type.member_value
        w = self._type.chunk_bits
        drop: list[int] = []
        chunks = list(self.chunks)
        for i in present:
            mark = undefined_mark()
            ok = _bool(keep(values(i)), "the test of filter")
            inside = None
            if undefined_mark() > mark:
                inside = self._held_in(i)
                _narrow_since(mark, inside)
            if isinstance(ok, np.ndarray) and ok.ndim:
                k, bit = i // w, i % w
                chunks[k] = as_int(chunks[k]) & np.where(ok, -1, ~(1 << bit))
            elif not ok:
                drop.append(i)
        for k, mask in self._masks(drop).items():
            chunks[k] = as_int(chunks[k]) & ~mask
        return self._new(chunks)

    def size(self) -> Any:
        """``Cardinality(S)``."""
        acc: Any = np.int64(0)
        for ch in self.chunks:
            acc = acc + np.bitwise_count(np.asarray(as_int(ch), dtype=np.int64)).astype(np.int64)
        return acc

    def is_empty(self) -> Any:
        """``S = {}``."""
        return all_rows([as_int(ch) == 0 for ch in self.chunks])

    def _extreme(self, lowest: bool) -> Any:
        w = self._type.chunk_bits
        idx: Any = np.int64(0)
        order = range(len(self.chunks) - 1, -1, -1) if lowest else range(len(self.chunks))
        for k in order:
            ch = np.asarray(as_int(self.chunks[k]), dtype=np.int64)
            if lowest:
                pos = np.bitwise_count((ch & -ch) - 1).astype(np.int64)
            else:
                x = ch
                for sh in (1, 2, 4, 8, 16, 32):
                    x = x | (x >> sh)
                pos = np.bitwise_count(x).astype(np.int64) - 1
            idx = select(ch != 0, k * w + pos, idx)
        if isinstance(idx, np.ndarray) and idx.ndim == 0:
            idx = np.int64(idx)
        return self._type.elem.value_at(idx)

    def min(self) -> Any:
        """The least member (by the element type's order; the type's first value when
        the set is empty: guard with ``~S.is_empty()``)."""
        return self._extreme(True)

    def max(self) -> Any:
        """The greatest member (see :meth:`min`)."""
        return self._extreme(False)

    def choose(self) -> Any:
        """``CHOOSE x \\in S: TRUE``: a fixed member (the least one)."""
        return self._extreme(True)


class SparseSetValue(SetValue):
    """A value of ``SetOf(T, max_size=k)``: ``k`` slots holding the positions of the
    members among ``T``'s values, sorted ascending, the empty code ``|T|`` in the slots
    left (:class:`~modelcheck.types.sets.BoundSparseSet`); ``bad`` as for
    :class:`SetValue`, ``over``: rows where a member beyond ``k`` was added (stored as
    an out-of-domain last slot, hence reported). Every operation keeps the slots
    sorted and free of repeats, so equal sets have equal slots. Operations work on the
    ``(rows, k)`` matrix of the slots (one row for one state)."""

    _type: BoundSparseSet

    def __init__(self, type_: BoundSparseSet, slots: list[Any], bad: Any = False,
                 over: Any = False) -> None:
        self._type = type_
        self.chunks = slots
        self.bad = bad
        self.over = over

    def _columns(self) -> list[Any]:
        out = list(self.chunks)
        if self.over is not False:
            out[-1] = select(self.over, self._type.empty + 1, out[-1])
        if self.bad is not False:
            out[0] = select(self.bad, -1, out[0])
        return out

    def _new(self, chunks: list[Any], bad: Any = None, over: Any = None) -> SparseSetValue:
        return SparseSetValue(self._type, chunks, self.bad if bad is None else bad,
                              self.over if over is None else over)

    def _marked(self, bad: Any) -> SparseSetValue:
        return self if bad is False else self._new(list(self.chunks), self.bad | bad)

    def _mat(self, *also: Any) -> tuple[np.ndarray, bool]:
        """The slots as an int64 ``(rows, k)`` matrix (rows: the batch's, or 1 when the
        slots and ``also`` are all scalars) and whether it is a batch."""
        n = _batch_len([*self.chunks, *also])
        rows = 1 if n is None else n
        mat = np.empty((rows, len(self.chunks)), dtype=np.int64)
        for i, c in enumerate(self.chunks):
            mat[:, i] = as_int(c)
        return mat, n is not None

    def _from_mat(self, mat: np.ndarray, batch: bool, bad: Any = None,
                  over: Any = None) -> SparseSetValue:
        """A value of sorted slots ``mat`` (``(rows, >= k)``): slots past ``k`` that hold
        a member mark the row as overflowing."""
        k = self._type.max_size
        more = None
        if mat.shape[1] > k:
            more = mat[:, k] != self._type.empty
            mat = mat[:, :k]
        if batch:
            slots: list[Any] = [np.ascontiguousarray(mat[:, i]) for i in range(k)]
        else:
            slots = [np.int64(mat[0, i]) for i in range(k)]
        ov = self.over if over is None else over
        if more is not None:
            ov = ov | (more if batch else np.bool_(more[0]))
        return SparseSetValue(self._type, slots, self.bad if bad is None else bad, ov)

    def _idx(self, x: Any) -> tuple[Any, Any]:
        """(position, outside) of element ``x``; position ``|T|`` (no slot's member)
        where outside."""
        idx, outside = self._type.elem.index_of(x)
        if isinstance(idx, int):
            return (self._type.empty if outside else idx), outside
        return np.where(outside, self._type.empty, idx), outside

    def _rows(self, mask: Any, batch: bool) -> Any:
        """A per-row boolean in the value's form (a column, or a numpy bool)."""
        if batch:
            return mask
        return np.bool_(mask[0])

    # -- TLA+ operators
    def has(self, x: Any) -> Any:
        """``x \\in S`` (FALSE for a value outside the element type)."""
        idx, outside = self._idx(x)
        if isinstance(idx, int) and outside:
            return np.False_
        acc: Any = np.False_
        for c in self.chunks:
            acc = acc | (as_int(c) == idx)
        return acc & ~np.asarray(outside)

    def with_(self, x: Any) -> SparseSetValue:
        """``S \\cup {x}``; ``x`` outside the element type is a spec error when stored,
        and so is a member beyond ``max_size``."""
        idx, outside = self._idx(x)
        if isinstance(idx, int) and outside:
            return self._new(list(self.chunks), np.True_)
        mat, batch = self._mat(idx)
        col = np.broadcast_to(np.asarray(idx, dtype=np.int64), (len(mat),))
        held = (mat == col[:, None]).any(axis=1)
        col = np.where(held, self._type.empty, col)
        out = np.sort(np.concatenate([mat, col[:, None]], axis=1), axis=1)
        return self._from_mat(out, batch, bad=self.bad | outside)

    def without(self, x: Any) -> SparseSetValue:
        """``S \\ {x}``."""
        idx, outside = self._idx(x)
        if isinstance(idx, int) and outside:
            return self
        mat, batch = self._mat(idx)
        col = np.broadcast_to(np.asarray(idx, dtype=np.int64), (len(mat),))
        out = np.where(mat == col[:, None], self._type.empty, mat)
        return self._from_mat(np.sort(out, axis=1), batch)

    def _other(self, other: Any) -> SetValue:
        """``other`` as member codes: a value of this form as it is (whatever its
        max_size), a bit-vector value or a literal in as many slots as it has members
        (an operand of ``&``, ``-``, ``<=`` may be larger than ``max_size``; a stored
        result may not)."""
        t = self._type
        if isinstance(other, SparseSetValue) or isinstance(other, SetValue) \
                and other._type.width == t.width:
            if other._type.width != t.width:
                raise SpecEvaluationError(
                    f"cannot combine a {t.describe()} with a {other._type.describe()}")
            if isinstance(other, SparseSetValue):
                return other
            return t.sized(len(other.members()))._convert_value(other)
        if isinstance(other, (set, frozenset, list, tuple)):
            return t.literal(other)
        return t.view(t.columns(other))

    def _pair(self, other: Any) -> tuple[np.ndarray, np.ndarray, bool, SparseSetValue]:
        o = self._other(other)
        assert isinstance(o, SparseSetValue)
        n = _batch_len([*self.chunks, *o.chunks])
        a, _ = self._mat(*o.chunks)
        b, _ = o._mat(*self.chunks)
        return a, b, n is not None, o

    def _in(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Which slots of ``a`` hold a member of the set of slots ``b`` (row by row)."""
        return (a[:, :, None] == b[:, None, :]).any(axis=2) & (a != self._type.empty)

    def __or__(self, other: Any) -> SparseSetValue:
        a, b, batch, o = self._pair(other)
        m = np.sort(np.concatenate([a, b], axis=1), axis=1)
        dup = np.zeros(m.shape, dtype=bool)
        dup[:, 1:] = m[:, 1:] == m[:, :-1]
        m = np.sort(np.where(dup, self._type.empty, m), axis=1)
        return self._from_mat(m, batch, bad=self.bad | o.bad, over=self.over | o.over)

    __ror__ = __or__

    # an element outside the element type in the operand of & or - is no member of
    # S: it changes nothing (as in TLA+), so only the operand's overflow is passed on
    def __and__(self, other: Any) -> SparseSetValue:
        a, b, batch, o = self._pair(other)
        m = np.sort(np.where(self._in(a, b), a, self._type.empty), axis=1)
        return self._from_mat(m, batch, over=self.over | o.over)

    __rand__ = __and__

    def __sub__(self, other: Any) -> SparseSetValue:
        a, b, batch, o = self._pair(other)
        m = np.sort(np.where(self._in(a, b), self._type.empty, a), axis=1)
        return self._from_mat(m, batch, over=self.over | o.over)

    def __le__(self, other: Any) -> Any:
        """``S \\subseteq T``."""
        a, b, batch, _ = self._pair(other)
        sub = self._rows(((a == self._type.empty) | self._in(a, b)).all(axis=1), batch)
        return sub & ~np.asarray(self.bad)

    def members(self) -> list[tuple[Any, Any]]:
        """As :meth:`SetValue.members`: the members present in some state (the distinct
        codes of the slots), in the element type's order."""
        present, _ = self._held()
        values = self._type.member_value
        if not present:
            return [(values(0), self._none())]
        return [(values(i), self._held_in(i)) for i in present]

    def _held_now(self) -> tuple[list[int], bool]:
        """As :meth:`SetValue._held`: the distinct member codes of the slots."""
        empty = self._type.empty
        held = np.unique(np.concatenate([np.atleast_1d(np.asarray(as_int(c))).reshape(-1)
                                         for c in self.chunks]))
        return held[(held >= 0) & (held < empty)].tolist(), True

    def _held_in(self, i: int) -> Any:
        inside: Any = np.False_
        for c in self.chunks:
            inside = inside | (as_int(c) == i)
        return inside

    def _any_in(self, idxs: Iterable[int]) -> Any:
        codes = np.fromiter(idxs, dtype=np.int64)
        acc: Any = self._none()
        if len(codes):
            for c in self.chunks:
                acc = acc | np.isin(as_int(c), codes)
        return acc[()] if isinstance(acc, np.ndarray) and acc.ndim == 0 else acc

    def _count_in(self, idxs: Iterable[int]) -> Any:
        codes = np.fromiter(idxs, dtype=np.int64)
        acc: Any = self._none().astype(np.int64)
        if len(codes):
            for c in self.chunks:
                acc = acc + np.isin(as_int(c), codes).astype(np.int64)
        return acc[()] if isinstance(acc, np.ndarray) and acc.ndim == 0 else acc

    def filter(self, keep: Callable[[Any], Any]) -> SparseSetValue:
        """As :meth:`SetValue.filter`: the slots of the members ``keep`` rejects emptied,
        then sorted again."""
        present, _ = self._held()
        values = self._type.member_value
        mat, batch = self._mat()
        empty = self._type.empty
        gone = np.zeros(mat.shape, dtype=bool)
        for i in present:
            mark = undefined_mark()
            ok = _bool(keep(values(i)), "the test of filter")
            if undefined_mark() > mark:
                _narrow_since(mark, self._held_in(i))
            if isinstance(ok, np.ndarray) and ok.ndim:
                gone |= (mat == i) & ~ok[:, None]
            elif not ok:
                gone |= mat == i
        if not gone.any():
            return self
        mat[gone] = empty
        mat.sort(axis=1)
        return self._from_mat(mat, batch)

    def size(self) -> Any:
        """``Cardinality(S)``."""
        acc: Any = np.int64(0)
        for c in self.chunks:
            acc = acc + (as_int(c) != self._type.empty).astype(np.int64)
        return acc

    def is_empty(self) -> Any:
        """``S = {}``."""
        return as_int(self.chunks[0]) == self._type.empty

    def _extreme(self, lowest: bool) -> Any:
        empty = self._type.empty
        idx: Any = np.int64(0)
        for c in (self.chunks[:1] if lowest else self.chunks):
            c = as_int(c)
            idx = select((c != empty) & (c >= 0), c, idx)
        if isinstance(idx, np.ndarray) and idx.ndim == 0:
            idx = np.int64(idx)
        return self._type.elem.value_at(idx)
