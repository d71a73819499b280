"""Bags: :class:`Bag`, its bound form (:class:`BoundBag`, a count cell per element)
and :class:`BagValue`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec
from ..errors import SpecDefinitionError, SpecEvaluationError
from ..itfvalues import FrozenMap, freeze
from ..itfvalues import Record as RecordData
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
    _codes_at,
    _elem_text,
    _first_ref,
    _gather_cells,
    _index_of_codes,
    _index_permutation,
    _scalar,
    _type_parts,
    all_rows,
    as_int,
    resolve,
    select,
)
from .scalars import BoundInt
from .sets import MAX_ELEMENTS, BoundSet, SetValue, refuse_sparse_sets

__all__ = [
    "Bag",
    "BoundBag",
    "BoundBagCount",
    "BagValue",
]


class Bag(Type):
    """A multiset (TLA+ ``Bags``) of a finite type, each element at most ``max_count``
    times: ``Bag(Msg, 2)`` for a channel that may duplicate and reorder.

    In expressions: ``count(x)``, ``has(x)``, ``add(x)``, ``remove(x)``, ``+``, ``-``,
    ``<=``, ``size()``, ``is_empty()``, ``support()``, ``choose()`` (see
    :class:`~modelcheck.types.bags.BagValue`). Storing a count above ``max_count`` is a
    spec error. The value is stored as one count per element value.
    """

    def __init__(self, elem: Ids | Type, max_count: int | Deferred, *,
                 init: Mapping[Any, int] | None = None) -> None:
        self.elem = elem
        self.max_count = max_count
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        mx = int(resolve(self.max_count, consts))
        if mx < 1:
            raise SpecDefinitionError(f"Bag(..., {self.max_count!r}): max_count must be >= 1.")
        elem = _element_type(self.elem, consts, f"Bag({_elem_text(self.elem)}, ...)")
        refuse_sparse_sets(elem, f"the element type of Bag({_elem_text(self.elem)}, ...)")
        if elem.n_values > MAX_ELEMENTS:
            raise SpecDefinitionError(
                f"Bag({_elem_text(self.elem)}, ...) has {elem.n_values} possible elements; "
                f"at most {MAX_ELEMENTS} are supported.")
        t = BoundBag(elem, mx)
        try:
            init = dict(resolve(self.init, consts) or {})
            t.init = {freeze(elem.value(elem.codes(k))): int(v) for k, v in init.items()}
            t.codes(t.init)
        except (ValueError, TypeError) as e:
            raise SpecDefinitionError(f"Bag(...) init: {e}") from None
        return t

    def describe(self) -> str:
        return f"Bag({_elem_text(self.elem)}, {self.max_count!r})"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(self.elem)


class BoundBagCount(BoundInt):
    """The count of one element value in a bag: ``0..max_count``."""

    kind = "bagcount"

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        var, _, elem = name.partition("[")
        if value > self.hi:
            return (f"puts {value} copies of {elem[:-1]} in {var}, more than its max_count "
                    f"{self.hi}")
        if value < 0:
            return f"adds to {var} an element outside its element type"
        return None


class BoundBag(BoundType):
    """A bag of values of ``elem``: one count cell ``0..max_count`` per element value,
    at path ``[<value>]``. Python and trace values are maps from the elements present
    to their (positive) counts; ITF writes them as ``#map``."""

    def __init__(self, elem: BoundType, max_count: int) -> None:
        self.elem = elem
        self.max_count = max_count
        self.ref = _first_ref(elem)
        self.init: dict[Any, int] = {}
        self._counts = []
        for _ in range(elem.n_values):
            c = BoundBagCount(0, max_count + 1, 0, f"0..{max_count}")
            c.ref = self.ref
            self._counts.append(c)
        self.support_type = BoundSet(elem, f"SUBSET {elem.describe()}")

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        e = self.elem
        return [((f"[{e.show(_codes_at(e, i))}]",), c) for i, c in enumerate(self._counts)]

    def default(self) -> Any:
        return dict(self.init)

    def describe(self) -> str:
        return f"Bag({self.elem.describe()}, {self.max_count})"

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        e = self.elem
        return {freeze(e.value(_codes_at(e, i), itf=itf)): int(c)
                for i, c in enumerate(codes) if int(c) > 0}

    def _from_map(self, value: Any, strict: bool) -> list[int]:
        out = [0] * self.elem.n_values
        for k, n in value.items():
            try:
                idx, outside = _index_of_codes(
                    self.elem, self.elem.codes_from_itf(k) if strict else self.elem.codes(k))
            except (ValueKindError, ValueDomainError, ValueError, TypeError):
                outside, idx = True, 0
            if outside:
                if strict:
                    raise ValueDomainError(f"= {codec.text(value)} has element "
                                           f"{codec.text(k)} outside {self.elem.describe()}")
                raise ValueError(f"{k!r} is not an element of {self.elem.describe()}")
            if isinstance(n, bool) or not isinstance(n, int):
                if strict:
                    raise ValueKindError("a map from elements to counts")
                raise ValueError(f"count {n!r} is not an integer")
            if not 1 <= n <= self.max_count or (not strict and n == 0):
                if n == 0 and not strict:
                    continue
                msg = (f"= {codec.text(value)} holds {codec.text(k)} {n} times, outside "
                       f"1..{self.max_count}")
                if strict:
                    raise ValueDomainError(msg)
                raise ValueError(msg)
            out[idx] = n
        return out

    def codes(self, value: Any) -> list[int]:
        if not isinstance(value, Mapping) or isinstance(value, RecordData):
            raise ValueError(f"{value!r} is not a bag (a map from elements to counts)")
        return self._from_map(value, False)

    def codes_from_itf(self, value: Any) -> list[int]:
        if not isinstance(value, (dict, FrozenMap)):
            raise ValueKindError("a map from elements to counts (a bag)")
        return self._from_map(value, True)

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        e = self.elem
        return "{" + ", ".join(f"{e.show(_codes_at(e, i), short=short)}: {int(c)}"
                               for i, c in enumerate(codes) if int(c) != 0) + "}"

    def view(self, cols: Sequence[Any]) -> Any:
        return BagValue(self, list(cols))

    def columns(self, value: Any) -> list[Any]:
        return self.value_of(value)._columns()

    def value_of(self, value: Any) -> Any:
        if isinstance(value, BagValue):
            if value._type is not self and value._type.describe() != self.describe():
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.describe()} is expected")
            return value
        if isinstance(value, Mapping) and not isinstance(value, (Value, RecordData)):
            out = BagValue(self, [0] * self.elem.n_values)
            for k, n in value.items():
                out = out.add(k, n)
            return out
        raise SpecEvaluationError(
            f"{value!r} where a {self.describe()} value is expected: use a bag value or a "
            "dict literal {element: count}")

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        to = _index_permutation(self.elem, pis)
        if to is None:
            return None
        src = [0] * len(to)
        for i, j in enumerate(to):
            src[j] = i
        return lambda cols: [cols[src[j]] for j in range(len(cols))]

    def _count_sources(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                       ) -> np.ndarray | None:
        """Per permutation ``p``, the element whose count each count ``j`` of the
        permuted bag is: ``src[p, j]``; None when no permutation moves an element."""
        tos = [_index_permutation(self.elem, pis) for pis in many]
        if all(t is None for t in tos):
            return None
        n = self.elem.n_values
        src = np.empty((len(tos), n), dtype=np.int64)
        for p, t in enumerate(tos):
            src[p, np.arange(n) if t is None else np.asarray(t)] = np.arange(n)
        return src

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        src = self._count_sources(many)
        if src is None:
            return None
        return _gather_cells(src)

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        src = self._count_sources(many)
        if src is None:
            return None

        def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
            # count j of column c is count src[which[c], j] of the argument
            return np.asarray(block)[src[which].T, np.arange(block.shape[1])]

        return apply


class BagValue(Value):
    """A value of ``Bag(T, max_count)``: a count per value of ``T`` (TLA+ ``Bags``)."""

    _type: BoundBag

    def __init__(self, type_: BoundBag, counts: list[Any]) -> None:
        self._type = type_
        self.counts = counts

    def _columns(self) -> list[Any]:
        return list(self.counts)

    def _one(self, x: Any) -> tuple[Any, Any]:
        return self._type.elem.index_of(x)

    def count(self, x: Any) -> Any:
        """``CopiesIn(x, B)``."""
        idx, outside = self._one(x)
        if isinstance(idx, int):
            return np.int64(0) if outside else as_int(self.counts[idx])
        out: Any = np.int64(0)
        for k, c in enumerate(self.counts):
            out = select(idx == k, c, out)
        return select(outside, 0, out)

    def has(self, x: Any) -> Any:
        """``BagIn(x, B)``."""
        return self.count(x) > 0

    def add(self, x: Any, n: Any = 1) -> BagValue:
        """``B (+) SetToBag({x})`` (``n`` copies); above ``max_count`` is a spec error
        when stored, as is an element outside the element type."""
        idx, outside = self._one(x)
        if isinstance(idx, int):
            if outside:
                return BagValue(self._type, [np.int64(-1)] + list(self.counts[1:]))
            counts = list(self.counts)
            counts[idx] = as_int(counts[idx]) + n
            return BagValue(self._type, counts)
        counts = [as_int(c) + np.where(idx == k, n, 0) for k, c in enumerate(self.counts)]
        counts[0] = select(outside, -1, counts[0])
        return BagValue(self._type, counts)

    def remove(self, x: Any, n: Any = 1) -> BagValue:
        """``B (-) SetToBag({x})``: one copy fewer (none below zero)."""
        idx, outside = self._one(x)
        if isinstance(idx, int):
            if outside:
                return self
            counts = list(self.counts)
            counts[idx] = np.maximum(as_int(counts[idx]) - n, 0)
            return BagValue(self._type, counts)
        counts = [np.maximum(as_int(c) - np.where((idx == k) & ~outside, n, 0), 0)
                  for k, c in enumerate(self.counts)]
        return BagValue(self._type, counts)

    def __add__(self, other: Any) -> BagValue:
        o = self._type.value_of(other)
        return BagValue(self._type, [as_int(a) + as_int(b) for a, b in zip(self.counts, o.counts)])

    def __sub__(self, other: Any) -> BagValue:
        o = self._type.value_of(other)
        return BagValue(self._type, [np.maximum(as_int(a) - as_int(b), 0)
                                    for a, b in zip(self.counts, o.counts)])

    def __le__(self, other: Any) -> Any:
        """``B \\sqsubseteq C``."""
        o = self._type.value_of(other)
        return all_rows([as_int(a) <= as_int(b) for a, b in zip(self.counts, o.counts)])

    def size(self) -> Any:
        """``BagCardinality(B)``."""
        acc: Any = np.int64(0)
        for c in self.counts:
            acc = acc + as_int(c)
        return acc

    def is_empty(self) -> Any:
        return all_rows([as_int(c) == 0 for c in self.counts])

    def support(self) -> SetValue:
        """``BagToSet(B)`` as a ``SetOf(T)`` value."""
        st = self._type.support_type
        w = st.chunk_bits
        chunks: list[Any] = [np.int64(0)] * len(st.chunk_widths)
        for k, c in enumerate(self.counts):
            chunks[k // w] = chunks[k // w] | np.where(as_int(c) > 0, np.int64(1) << (k % w), 0)
        return SetValue(st, [_scalar(c) for c in chunks])

    def choose(self) -> Any:
        """A fixed member (the least one; the type's first value when empty)."""
        return self.support().choose()
