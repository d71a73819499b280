"""Arrays and functions: :class:`Array`, its bound forms :class:`BoundArray` (a state
variable, cells per index) and :class:`BoundFunction` (an element or field), and
:class:`FunctionValue`; also how an element type is bound (:func:`as_leaf`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec
from ..errors import SpecDefinitionError, SpecEvaluationError
from ..itfvalues import Record as RecordData
from .base import (
    BoundType,
    Ids,
    ScalarType,
    Type,
    Value,
    ValueDomainError,
    ValueKindError,
    _gather_cells,
    _type_parts,
    _where_value,
    resolve,
)
from .scalars import BoundRef

__all__ = [
    "Array",
    "BoundArray",
    "BoundFunction",
    "as_leaf",
    "FunctionValue",
]


def _element_type(elem: Any, consts: Mapping[str, Any], what: str) -> BoundType:
    """The bound element type of a SetOf/Seq/Bag/Record field: an Ids set is its members."""
    if isinstance(elem, Ids):
        r = elem.bind(consts)
        if len(r) == 0:
            raise SpecDefinitionError(f"{what}: the index set {elem!r} is empty with these "
                                      "constants.")
        return BoundRef(r.start, len(r), r.start, f"{r.start}..{r.stop - 1}", elem.name)
    if not isinstance(elem, Type):
        raise SpecDefinitionError(
            f"{what} takes an Ids(...) set or a type such as Int(0, 3), got {elem!r}.")
    return as_leaf(elem.bound(consts))


def as_leaf(bound: BoundType) -> BoundType:
    """``bound``, an array made a function value (an element or a field is one leaf)."""
    if isinstance(bound, BoundArray):
        return BoundFunction(bound.ids, as_leaf(bound.elem), bound.init, bound.index_name)
    return bound


class Array(Type):
    """A function from an index set to an element type: ``[Brokers -> 0..MaxLog]``.

    ``init`` gives every element the same initial value; without it each element
    takes its type's initial value.
    """

    def __init__(self, index: Ids, elem: Type, *, init: Any = None) -> None:
        if not isinstance(index, Ids):
            raise SpecDefinitionError(
                f"Array index must be an Ids(...) set, got {index!r}."
            )
        if not isinstance(elem, Type):
            raise SpecDefinitionError(
                f"Array element must be a type such as Int(0, 3) or Bool(), got {elem!r}."
            )
        self.index = index
        self.elem = elem
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        ids = self.index.bind(consts)
        if len(ids) == 0:
            raise SpecDefinitionError(f"Array index {self.index!r} is empty with these constants.")
        elem = self.elem.bound(consts)
        init = None if self.init is None else resolve(self.init, consts)
        return BoundArray(ids, elem, init, self.index.name)

    def describe(self) -> str:
        return f"[{self.index.name} -> {self.elem.describe()}]"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(self.elem)


class _IndexedCells:
    """The cells, default and TLA+ description of a function from ``ids`` (named
    ``index_name``) to ``elem``: what an ``Array`` variable and a function value held
    whole (:class:`BoundFunction`) have in common."""

    ids: range
    elem: BoundType
    init: Any
    index_name: str

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        return [((i, *path), t) for i in self.ids for path, t in self.elem.cells()]

    def default(self) -> Any:
        if self.init is not None:
            return {i: self.init for i in self.ids}
        return {i: self.elem.default() for i in self.ids}

    def describe(self) -> str:
        return f"[{self.index_name} -> {self.elem.describe()}]"


class BoundArray(_IndexedCells, BoundType):
    """A function from the index set ``ids`` (named ``index_name``) to ``elem``.

    Its cells are its elements' cells, indexed first by ``i`` in ``ids``; values are
    ``{index: element value}`` maps (see :class:`~modelcheck.layout.Layout`).
    """

    def __init__(self, ids: range, elem: BoundType, init: Any, index_name: str) -> None:
        self.ids = ids
        self.elem = elem
        self.init = init
        self.index_name = index_name


class BoundFunction(_IndexedCells, BoundType):
    """An ``Array`` where a value is needed whole: a record field, a set, sequence or bag
    element (``[forward |-> [p \\in P |-> ...]]``). The cells are the array's (element
    ``i``'s cells at path ``[i]``); the value is one leaf, a
    :class:`~modelcheck.types.arrays.FunctionValue` in expressions (``f[i]``,
    ``f.set_at(i, v)``) and a ``{index: element value}`` map in Python and traces
    (an ITF ``#map``)."""

    def __init__(self, ids: range, elem: BoundType, init: Any, index_name: str) -> None:
        self.ids = ids
        self.elem = elem
        self.init = init
        self.index_name = index_name
        self.ref = None
        self._k = elem.n_cells


    def _slots(self, codes: Sequence[Any]) -> list[list[Any]]:
        k = self._k
        return [list(codes[j * k:(j + 1) * k]) for j in range(len(self.ids))]

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        return {i: self.elem.value(c, itf=itf) for i, c in zip(self.ids, self._slots(codes))}

    def _keys(self, value: Any, strict: bool) -> None:
        if not isinstance(value, Mapping) or isinstance(value, RecordData):
            if strict:
                raise ValueKindError(f"a function {self.describe()} (a map)")
            raise ValueError(f"{value!r} is not a function {self.describe()}")
        if set(value) != set(self.ids):
            msg = (f"= {codec.text(value)} is not defined on exactly "
                   f"{self.ids.start}..{self.ids.stop - 1}")
            if strict:
                raise ValueDomainError(msg)
            raise ValueError(msg)

    def codes(self, value: Any) -> list[int]:
        self._keys(value, False)
        return [c for i in self.ids for c in self.elem.codes(value[i])]

    def codes_from_itf(self, value: Any) -> list[int]:
        self._keys(value, True)
        out: list[int] = []
        for i in self.ids:
            try:
                out.extend(self.elem.codes_from_itf(value[i]))
            except ValueDomainError as e:
                raise ValueDomainError(f"[{i}] {e}") from None
        return out

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        return "{" + ", ".join(f"{i}: {self.elem.show(c, short=short)}"
                               for i, c in zip(self.ids, self._slots(codes))) + "}"

    def view(self, cols: Sequence[Any]) -> Any:
        return FunctionValue(self, {i: self.elem.view(c)
                                    for i, c in zip(self.ids, self._slots(cols))})

    def columns(self, value: Any) -> list[Any]:
        return self.value_of(value)._columns()

    def value_of(self, value: Any) -> Any:
        if isinstance(value, FunctionValue):
            if value._type is not self and value._type.describe() != self.describe():
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.describe()} is expected")
            return value
        if isinstance(value, Mapping) and not isinstance(value, (Value, RecordData)):
            if set(value) != set(self.ids):
                raise SpecEvaluationError(
                    f"a function {self.describe()} needs a value for each of "
                    f"{self.ids.start}..{self.ids.stop - 1}, got the keys "
                    f"{sorted(value, key=str)}")
            return FunctionValue(self, {i: self.elem.value_of(value[i]) for i in self.ids})
        raise SpecEvaluationError(
            f"{value!r} where a function {self.describe()} is expected: use a function "
            "value or a dict literal {index: value}")

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fn = self.elem.cells_permutation(pis)
        pi = pis.get(self.index_name)
        if fn is None and pi is None:
            return None
        k, ids = self._k, list(self.ids)
        # slot of index pi(i) in the result holds the (moved) value of slot i
        dest = [ids.index(pi.get(i, i)) if pi is not None else j for j, i in enumerate(ids)]

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            out: list[Any] = [None] * len(cols)
            for j in range(len(ids)):
                part = cols[j * k:(j + 1) * k]
                moved = part if fn is None else fn(part)
                d = dest[j]
                out[d * k:(d + 1) * k] = moved
            return out

        return apply

    def _slot_sources(self, pis: Sequence[Mapping[int, int] | None]) -> np.ndarray:
        """Per permutation ``p`` of the index (None: the identity), the slot each slot
        ``d`` of the permuted array comes from: ``src[p, d]``."""
        ids = list(self.ids)
        e = len(ids)
        src = np.empty((len(pis), e), dtype=np.int64)
        for p, pi in enumerate(pis):
            dest = [ids.index(pi.get(i, i)) if pi is not None else j
                    for j, i in enumerate(ids)]
            src[p, dest] = np.arange(e)
        return src

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fn = self.elem.cells_permutations(many)
        pis = [pis.get(self.index_name) for pis in many]
        if fn is None and all(pi is None for pi in pis):
            return None
        k, e = self._k, len(self.ids)
        src = self._slot_sources(pis)
        move_slots = _gather_cells(src)

        def apply(block: np.ndarray) -> np.ndarray:
            q, _, m = block.shape
            if fn is not None:
                slots = block.reshape(q, e, k, m).transpose(0, 2, 1, 3).reshape(q, k, e * m)
                block = fn(slots).reshape(-1, k, e, m).transpose(0, 2, 1, 3)
            else:
                block = block.reshape(q, e, k, m)
            p, _, _, _ = block.shape
            moved = move_slots(block.reshape(p, e, k * m))
            return moved.reshape(len(src), e * k, m)

        return apply

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        fn = self.elem.cells_permutations_paired(many)
        pis = [pis.get(self.index_name) for pis in many]
        if fn is None and all(pi is None for pi in pis):
            return None
        k, e = self._k, len(self.ids)
        src = self._slot_sources(pis)

        def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
            m = block.shape[1]
            slots = block.reshape(e, k, m)
            if fn is not None:  # every slot at once: (k, e * m), slot-major columns
                flat = slots.transpose(1, 0, 2).reshape(k, e * m)
                slots = fn(flat, np.tile(which, e)).reshape(k, e, m).transpose(1, 0, 2)
            # (e, m, k): slot d of column j is slot src[which[j], d]
            moved = slots[src[which].T, :, np.arange(m)]
            return moved.transpose(0, 2, 1).reshape(e * k, m)

        return apply


class FunctionValue(Value):
    """A value of an ``Array`` held whole (a record field, a set element): TLA+'s
    ``[p \\in P |-> e]``. ``f[i]`` reads (``i`` a constant or a column of indices; the
    first element's value outside the index set), ``f.set_at(i, v)`` is
    ``[f EXCEPT ![i] = v]``."""

    _type: BoundFunction

    def __init__(self, type_: BoundFunction, elems: dict[int, Any]) -> None:
        self._type = type_
        self.elems = elems

    def _columns(self) -> list[Any]:
        et = self._type.elem
        out: list[Any] = []
        for i in self._type.ids:
            out.extend(et.columns(self.elems[i]))
        return out

    def __getitem__(self, i: Any) -> Any:
        ids = self._type.ids
        if isinstance(i, (int, np.integer)) and not isinstance(i, np.ndarray):
            i = int(i)
            if i not in ids:
                raise SpecEvaluationError(
                    f"index {i} is outside the domain {ids.start}..{ids.stop - 1} of a "
                    f"{self._type.describe()}")
            return self.elems[i]
        et = self._type.elem
        out: Any = self.elems[ids.start]
        for k in ids[1:]:
            out = _where_value(et, np.asarray(i) == k, self.elems[k], out)
        return out

    def set_at(self, i: Any, x: Any) -> FunctionValue:
        """``[f EXCEPT ![i] = x]`` (unchanged outside the index set)."""
        et = self._type.elem
        if isinstance(i, (int, np.integer)) and not isinstance(i, np.ndarray):
            if int(i) not in self._type.ids:
                return self
            return FunctionValue(self._type, {**self.elems, int(i): x})
        return FunctionValue(self._type, {k: _where_value(et, np.asarray(i) == k, x, e)
                                          for k, e in self.elems.items()})
