"""Sequences: :class:`Seq`, its bound form (:class:`BoundSeq`, a length cell and
element cells) and :class:`SeqValue`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec
from ..errors import SpecDefinitionError, SpecEvaluationError
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
    _elem_text,
    _scalar,
    _type_parts,
    _where_value,
    all_rows,
    any_rows,
    as_int,
    resolve,
    select,
)
from .scalars import BoundInt

__all__ = [
    "Seq",
    "BoundSeq",
    "BoundSeqLen",
    "SeqValue",
]


class Seq(Type):
    """A sequence of at most ``capacity`` elements of a type: ``Seq(Msg, 3)``.

    In expressions the value is a sequence value (``len()``, ``append(x)``, ``head()``,
    ``tail()``, ``at(i)`` (1-based), ``set_at(i, x)``, ``last()``, ``prefix(n)``,
    ``drop(n)``, ``concat(r)``, ``contains(x)``, ``index_of(x)``; see
    :class:`~modelcheck.types.sequences.SeqValue`); a list literal is a sequence. Storing a
    sequence longer than ``capacity`` is a spec error, never a silent drop.
    """

    def __init__(self, elem: Ids | Type, capacity: int | Deferred, *,
                 init: Iterable[Any] | Deferred = ()) -> None:
        self.elem = elem
        self.capacity = capacity
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        cap = int(resolve(self.capacity, consts))
        if cap < 0:
            raise SpecDefinitionError(f"Seq(..., {self.capacity!r}): negative capacity {cap}.")
        elem = _element_type(self.elem, consts, f"Seq({_elem_text(self.elem)}, ...)")
        t = BoundSeq(elem, cap)
        try:
            t.init = [elem.value(elem.codes(v)) for v in resolve(self.init, consts)]
            t.codes(t.init)
        except (ValueError, TypeError) as e:
            raise SpecDefinitionError(f"Seq(...) init: {e}") from None
        return t

    def describe(self) -> str:
        return f"Seq({_elem_text(self.elem)}, {self.capacity!r})"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(self.elem)


class BoundSeqLen(BoundInt):
    """The length cell of a sequence: ``0..capacity``."""

    kind = "seqlen"

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        var = name[:-4] if name.endswith(".len") else name
        if value > self.hi:
            return (f"makes {var} longer than its capacity {self.hi} (length {value}): "
                    "the sequence overflows")
        if value < 0:
            return f"takes the tail of the empty sequence {var}"
        return None


class BoundSeq(BoundType):
    """A sequence of at most ``capacity`` values of ``elem``: a length cell, then
    ``capacity`` element slots (the first at path ``[1]``); slots past the length hold
    the element type's first value. Python and trace values are lists."""

    def __init__(self, elem: BoundType, capacity: int) -> None:
        self.elem = elem
        self.capacity = capacity
        self.ref = None
        self.init: list[Any] = []
        self._len = BoundSeqLen(0, capacity + 1, 0, f"0..{capacity}")
        self._k = elem.n_cells

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        out: list[tuple[tuple[int | str, ...], ScalarType]] = [(("len",), self._len)]
        for i in range(1, self.capacity + 1):
            out.extend(((i, *path), t) for path, t in self.elem.cells())
        return out

    def default(self) -> Any:
        return list(self.init)

    def describe(self) -> str:
        return f"Seq({self.elem.describe()}, {self.capacity})"

    def _slots(self, codes: Sequence[Any]) -> list[list[Any]]:
        k = self._k
        return [list(codes[1 + j * k:1 + (j + 1) * k]) for j in range(self.capacity)]

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        n = int(codes[0])
        return [self.elem.value(c, itf=itf) for c in self._slots(codes)[:n]]

    def _codes(self, items: list[list[int]]) -> list[int]:
        zero = [t.lo for _, t in self.elem.cells()]
        out = [len(items)]
        for j in range(self.capacity):
            out.extend(items[j] if j < len(items) else zero)
        return out

    def codes(self, value: Any) -> list[int]:
        if not isinstance(value, (list, tuple, Sequence)) or isinstance(value, str):
            raise ValueError(f"{value!r} is not a sequence")
        if len(value) > self.capacity:
            raise ValueError(f"{codec.text(value)} is longer than the capacity {self.capacity}")
        return self._codes([self.elem.codes(v) for v in value])

    def codes_from_itf(self, value: Any) -> list[int]:
        if isinstance(value, (str, tuple)) or not isinstance(value, (list, Sequence)):
            raise ValueKindError(f"a sequence of at most {self.capacity} elements")
        if len(value) > self.capacity:
            raise ValueDomainError(f"= {codec.text(value)} is longer than its capacity "
                                   f"{self.capacity}")
        items = []
        for i, v in enumerate(value):
            try:
                items.append(self.elem.codes_from_itf(v))
            except ValueDomainError as e:
                raise ValueDomainError(f"[{i + 1}] {e}") from None
        return self._codes(items)

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        n = int(codes[0])
        if not 0 <= n <= self.capacity:
            return f"<length {n}, outside 0..{self.capacity}>"
        return "[" + ", ".join(self.elem.show(c, short=short)
                               for c in self._slots(codes)[:n]) + "]"

    def view(self, cols: Sequence[Any]) -> Any:
        return SeqValue(self, cols[0], [self.elem.view(c) for c in self._slots(cols)])

    def columns(self, value: Any) -> list[Any]:
        return self.value_of(value)._columns()

    def value_of(self, value: Any) -> Any:
        if isinstance(value, SeqValue):
            if value._type is not self and value._type.describe() != self.describe():
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.describe()} is expected")
            return value
        if isinstance(value, (list, tuple)):
            return SeqValue(self, len(value), [self.elem.value_of(v) for v in value])
        raise SpecEvaluationError(
            f"{value!r} where a {self.describe()} value is expected: use a sequence value or "
            "a list literal")

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fn = self.elem.cells_permutation(pis)
        if fn is None:
            return None
        k = self._k
        zero = [t.lo for _, t in self.elem.cells()]

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            n = cols[0]
            out = [n]
            for j in range(self.capacity):
                moved = fn(cols[1 + j * k:1 + (j + 1) * k])
                out.extend(np.where(n > j, m, z) for m, z in zip(moved, zero))
            return out

        return apply

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fn = self.elem.cells_permutations(many)
        if fn is None:
            return None
        k, cap = self._k, self.capacity
        zero = np.array([t.lo for _, t in self.elem.cells()], dtype=np.int64)[None, :, None]
        n_perms = len(many)

        def apply(block: np.ndarray) -> np.ndarray:
            q, _, m = block.shape
            n = block[:, :1]  # (q, 1, m): the length
            out = np.empty((n_perms,) + block.shape[1:], dtype=np.int64)
            out[:, 0] = n[:, 0]
            if cap:
                # every slot at once: (q, k, cap * m) through the element's function
                slots = block[:, 1:].reshape(q, cap, k, m).transpose(0, 2, 1, 3)
                moved = fn(slots.reshape(q, k, cap * m)).reshape(n_perms, k, cap, m)
                used = n[:, :, None, :] > np.arange(cap)[None, None, :, None]
                moved = np.where(used, moved, zero[..., None])
                out[:, 1:] = moved.transpose(0, 2, 1, 3).reshape(n_perms, cap * k, m)
            return out

        return apply

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        fn = self.elem.cells_permutations_paired(many)
        if fn is None:
            return None
        k, cap = self._k, self.capacity
        zero = np.array([t.lo for _, t in self.elem.cells()], dtype=np.int64)[:, None, None]

        def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
            m = block.shape[1]
            out = np.array(block, dtype=np.int64)
            if cap:
                n = block[0]  # the length
                slots = block[1:].reshape(cap, k, m).transpose(1, 0, 2).reshape(k, cap * m)
                moved = fn(slots, np.tile(which, cap)).reshape(k, cap, m)
                used = n[None, None, :] > np.arange(cap)[None, :, None]
                moved = np.where(used, moved, zero)
                out[1:] = moved.transpose(1, 0, 2).reshape(cap * k, m)
            return out

        return apply


class SeqValue(Value):
    """A value of ``Seq(T, capacity)``: a length and element slots.

    Slots at and after the length hold the element type's first value (so that equal
    sequences have equal cells). An intermediate value may hold more slots than the
    capacity (``s.q.append(a).tail()`` is exact); storing one longer than the
    capacity is a spec error.
    """

    _type: BoundSeq

    def __init__(self, type_: BoundSeq, length: Any, elems: list[Any]) -> None:
        self._type = type_
        self.length = length
        self.elems = elems

    def _columns(self) -> list[Any]:
        et = self._type.elem
        cols: list[Any] = [self.length]
        cap = self._type.capacity
        elems = self.elems[:cap] + [et.zero()] * (cap - len(self.elems))
        for e in elems:
            cols.extend(et.columns(e))
        return cols

    def _slot_zero(self) -> Any:
        return self._type.elem.zero()

    def len(self) -> Any:
        """``Len(q)``."""
        return self.length

    def is_empty(self) -> Any:
        return self.length == 0

    def at(self, i: Any) -> Any:
        """``q[i]``, 1-based (the element type's first value outside ``1..Len(q)``)."""
        et = self._type.elem
        if isinstance(i, (int, np.integer)) and not isinstance(i, np.ndarray):
            i = int(i)
            return self.elems[i - 1] if 1 <= i <= len(self.elems) else et.zero()
        out: Any = et.zero()
        for k, e in enumerate(self.elems):
            out = _where_value(et, np.asarray(i) == k + 1, e, out)
        return out

    def head(self) -> Any:
        """``Head(q)``."""
        return self.at(1)

    def last(self) -> Any:
        """``q[Len(q)]``."""
        return self.at(self.length)

    def append(self, x: Any) -> SeqValue:
        """``Append(q, x)``."""
        et = self._type.elem
        n = len(self.elems)
        elems = [_where_value(et, self.length == k, x, e) for k, e in enumerate(self.elems)]
        elems.append(_where_value(et, self.length == n, x, et.zero()))
        return SeqValue(self._type, as_int(self.length) + 1, elems)

    def tail(self) -> SeqValue:
        """``Tail(q)``; the tail of the empty sequence is a spec error when stored."""
        zero = self._type.elem.zero()
        elems = self.elems[1:] + [zero]
        return SeqValue(self._type, as_int(self.length) - 1, elems)

    def set_at(self, i: Any, x: Any) -> SeqValue:
        """``[q EXCEPT ![i] = x]`` (unchanged outside ``1..Len(q)``)."""
        et = self._type.elem
        ok = (np.asarray(i) >= 1) & (np.asarray(i) <= self.length)
        elems = [_where_value(et, ok & (np.asarray(i) == k + 1), x, e)
                 for k, e in enumerate(self.elems)]
        return SeqValue(self._type, self.length, elems)

    def prefix(self, n: Any) -> SeqValue:
        """``SubSeq(q, 1, n)`` (the whole sequence when ``n >= Len(q)``)."""
        et = self._type.elem
        n_ = np.minimum(np.maximum(np.asarray(n), 0), self.length)
        elems = [_where_value(et, k < n_, e, et.zero()) for k, e in enumerate(self.elems)]
        return SeqValue(self._type, _scalar(n_), elems)

    def drop(self, n: Any) -> SeqValue:
        """``SubSeq(q, n + 1, Len(q))`` (empty when ``n >= Len(q)``)."""
        et = self._type.elem
        n_ = np.minimum(np.maximum(np.asarray(n), 0), self.length)
        m = len(self.elems)
        elems = []
        for k in range(m):
            out: Any = et.zero()
            for j in range(k, m):
                out = _where_value(et, (n_ == j - k) & (j < self.length), self.elems[j], out)
            elems.append(out)
        return SeqValue(self._type, _scalar(as_int(self.length) - n_), elems)

    def concat(self, other: Any) -> SeqValue:
        """``q \\o r``."""
        o = self._type.value_of(other)
        out = self
        for k, e in enumerate(o.elems):
            nxt = out.append(e)
            take = k < np.asarray(o.length)
            out = SeqValue(self._type, select(take, nxt.length, out.length),
                           [_where_value(self._type.elem, take, a, b)
                            for a, b in zip(nxt.elems, out.elems + [self._slot_zero()])])
        return out

    def _hits(self, x: Any) -> list[Any]:
        """Per slot k: ``k < Len(q) /\\ q[k + 1] = x`` (the type's ``equal``, with the
        columns of ``x`` made once rather than once per slot). For a constant ``x`` the
        answer is kept on the value: a state view holds one value per variable for the
        whole batch, and every action that tests the same literal (``e \\in
        Range(observed)`` in a guard shared by all actions) reuses it."""
        et = self._type.elem
        if not self.elems:
            return []
        cols = et.columns(x)
        key = tuple(cols) if all(isinstance(c, int) for c in cols) else None
        if key is not None:
            memo: dict[tuple[Any, ...], list[Any]] = self.__dict__.setdefault("_hits_memo", {})
            hit = memo.get(key)
            if hit is not None:
                return hit
        xs = [as_int(c) for c in cols]
        length = np.asarray(self.length)
        out = [(k < length) & all_rows([as_int(c) == y for c, y in zip(et.columns(e), xs)])
               for k, e in enumerate(self.elems)]
        if key is not None:
            memo[key] = out
        return out

    def contains(self, x: Any) -> Any:
        """``\\E i \\in 1..Len(q): q[i] = x``."""
        return any_rows(self._hits(x))

    def index_of(self, x: Any) -> Any:
        """The first ``i`` with ``q[i] = x``, 0 when there is none."""
        out: Any = np.int64(0)
        hits = self._hits(x)
        for k in range(len(hits) - 1, -1, -1):
            out = select(hits[k], k + 1, out)
        return _scalar(out)
