"""Expression values of the compound types (sets, records, sequences, bags).

Spec code sees a scalar variable as a number (a numpy scalar for one state, a numpy
column for a batch). A variable of a compound type is one of the :class:`Value`
objects below: it holds one code column per cell of its type (columns or scalars,
so the same object serves both evaluators) and implements the type's operations as
numpy over those columns. Operations return new values; a value is stored by
assigning it to the next state (``t.q = s.q.append(m)``), which splits it into its
cells again (:meth:`Value.columns`).

A value never silently drops what does not fit: an element outside a set's
universe, a sequence longer than its capacity, a bag count above its bound show in
the stored cells as codes outside their domains, which the kernel reports as a spec
error on the rows where the action is enabled (and never on the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import SpecEvaluationError

if TYPE_CHECKING:
    from .domains import (
        BoundBag,
        BoundFunction,
        BoundRecord,
        BoundSeq,
        BoundSet,
        BoundSparseSet,
        BoundType,
        BoundUnion,
    )

__all__ = ["Value", "SetValue", "SparseSetValue", "RecordValue", "FunctionValue",
           "UnionValue", "SeqValue", "BagValue", "select", "as_int", "any_rows", "all_rows",
           "record_field_problem"]


def as_int(x: Any) -> Any:
    """A code column (or scalar) as int64, booleans as 0/1; Python ints stay ints."""
    if isinstance(x, (bool, np.bool_)):
        return int(x)
    if isinstance(x, (int, np.integer)):
        return x
    arr = np.asarray(x)
    if arr.dtype == np.bool_:
        return arr.astype(np.int64)
    return arr


def select(cond: Any, a: Any, b: Any) -> Any:
    """``IF cond THEN a ELSE b`` on codes, element-wise on batches."""
    if isinstance(cond, (bool, np.bool_)):
        return a if cond else b
    return np.where(cond, a, b)


def any_rows(parts: Sequence[Any]) -> Any:
    acc: Any = np.False_
    for p in parts:
        acc = acc | p
    return acc


def all_rows(parts: Sequence[Any]) -> Any:
    acc: Any = np.True_
    for p in parts:
        acc = acc & p
    return acc


def _is_batch(cols: Sequence[Any]) -> bool:
    return any(isinstance(c, np.ndarray) and c.ndim == 1 for c in cols)


class Value:
    """A value of a compound type as code columns (see the module docstring).

    The engine reaches a value's own operations through underscore names
    (:attr:`_type`, :meth:`_columns`, :meth:`_select`), which no record field may
    take, so that a record's fields may have any other name (``type``, ``columns``):
    on a :class:`RecordValue`, ``r.type`` is the field when there is one. ``type``,
    ``columns()`` and ``select()`` remain as public aliases where no field hides them.
    """

    _type: BoundType

    @property
    def type(self) -> BoundType:
        """The value's bound type (on a record with a field ``type``, that field)."""
        return self._type

    def _columns(self) -> list[Any]:
        """One code column (or scalar) per cell of the type, in layout order."""
        raise NotImplementedError

    def columns(self) -> list[Any]:
        """:meth:`_columns` (on a record with a field ``columns``, that field)."""
        return self._columns()

    def _select(self, cond: Any, other: Any, *, swap: bool = False) -> Value:
        """``where(cond, self, other)`` (``where(cond, other, self)`` with ``swap``)."""
        a = self._columns()
        b = self._type.columns(other)
        if swap:
            a, b = b, a
        return self._type.view([select(cond, x, y) for x, y in zip(a, b)])

    def select(self, cond: Any, other: Any, *, swap: bool = False) -> Value:
        """:meth:`_select` (on a record with a field ``select``, that field)."""
        return self._select(cond, other, swap=swap)

    def _eq(self, other: Any) -> Any:
        b = self._type.columns(other)  # raises for a value of another type (never False)
        return all_rows([as_int(x) == as_int(y) for x, y in zip(self._columns(), b)])

    def __eq__(self, other: object) -> Any:  # type: ignore[override]
        return self._eq(other)

    def __ne__(self, other: object) -> Any:  # type: ignore[override]
        return ~self._eq(other)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise TypeError(
            f"the truth value of a {self._type.describe()} value is ambiguous; compare it "
            "(==, <=) or test it (is_empty(), has(x)) and combine conditions with & | ~")

    def __iter__(self) -> Any:
        raise SpecEvaluationError(
            f"cannot iterate over a {self._type.describe()} value: it may differ from state "
            "to state; iterate over a finite domain and test membership instead")

    def __str__(self) -> str:
        cols = self._columns()
        if _is_batch(cols):
            return f"<{self._type.describe()} values of a batch>"
        return self._type.show([int(np.asarray(c)) for c in cols])

    __repr__ = __str__


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
        if self.bad is False:
            return list(self.chunks)
        first = select(self.bad, -1, self.chunks[0])
        return [first, *self.chunks[1:]]

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
            if self._type._same_form(other._type):
                return other
        if isinstance(other, (set, frozenset, list, tuple)):
            # element by element: an element outside the type stays a mark (``bad``),
            # not a bit pattern in the chunks
            out = self._type.empty_value()
            for m in other:
                out = out.with_(m)
            return out
        return SetValue(self._type, self._type.columns(other))

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
        for k, ch in enumerate(self.chunks):
            acc = select(c == k, (as_int(ch) >> bit) & 1 == 1, acc)
        return acc & ~np.asarray(outside)

    def with_(self, x: Any) -> SetValue:
        """``S \\cup {x}``; ``x`` outside the element type is a spec error when stored."""
        c, bit, outside = self._locate(x)
        if isinstance(c, int):
            if outside:
                return self._new(list(self.chunks), np.True_)
            chunks = list(self.chunks)
            chunks[c] = as_int(chunks[c]) | (1 << bit)
            return self._new(chunks)
        one = np.left_shift(np.int64(1), bit)
        chunks = [as_int(ch) | np.where((c == k) & ~outside, one, 0)
                  for k, ch in enumerate(self.chunks)]
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
        one = np.left_shift(np.int64(1), bit)
        chunks = [as_int(ch) & ~np.where((c == k) & ~outside, one, 0)
                  for k, ch in enumerate(self.chunks)]
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
        w = self._type.chunk_bits
        present: list[int] = []
        insides: list[Any] = []
        for k, ch in enumerate(self.chunks):
            col = as_int(ch)
            if isinstance(col, np.ndarray) and col.ndim:
                # the bits set in any state
                held = int(np.bitwise_or.reduce(col)) if col.size else 0
                if held < 0:  # never a stored state's chunk: keep the states' own bits
                    held = int(np.bitwise_or.reduce(col[col >= 0])) if (col >= 0).any() else 0
            else:
                held = max(int(col), 0)
            while held:
                low = held & -held
                b = low.bit_length() - 1
                held ^= low
                present.append(k * w + b)
                insides.append((col >> b) & 1 == 1)
        values = self._type.member_value
        if not present:
            first = as_int(self.chunks[0])
            none = (np.zeros(np.shape(first), dtype=bool) if isinstance(first, np.ndarray)
                    and np.ndim(first) else np.False_)
            return [(values(0), none)]
        return [(values(i), inside) for i, inside in zip(present, insides)]

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


def _batch_len(xs: Sequence[Any]) -> int | None:
    """The number of rows of the first column among ``xs`` (None: all scalars)."""
    for x in xs:
        if isinstance(x, np.ndarray) and x.ndim == 1:
            return len(x)
    return None


class SparseSetValue(SetValue):
    """A value of ``SetOf(T, max_size=k)``: ``k`` slots holding the positions of the
    members among ``T``'s values, sorted ascending, the empty code ``|T|`` in the slots
    left (:class:`~modelcheck.domains.BoundSparseSet`); ``bad`` as for
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
        empty = self._type.empty
        cols = [as_int(c) for c in self.chunks]
        held = np.unique(np.concatenate([np.atleast_1d(np.asarray(c)).reshape(-1)
                                         for c in cols]))
        held = held[(held >= 0) & (held < empty)]
        values = self._type.member_value
        if not len(held):
            first = cols[0]
            none = (np.zeros(np.shape(first), dtype=bool) if isinstance(first, np.ndarray)
                    and np.ndim(first) else np.False_)
            return [(values(0), none)]
        out = []
        for i in held.tolist():
            inside: Any = np.False_
            for c in cols:
                inside = inside | (c == i)
            out.append((values(i), inside))
        return out

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


class RecordValue(Value):
    """A value of ``Record(f=T, ...)``: fields are attributes (``m.clock``, ``m.type``)
    and items (``m["from"]``, for a field named like a Python keyword).

    A field hides the value's public method of the same name (``r.type``,
    ``r.columns``, ``r.select``, ``r.with_fields`` read the field when the record has
    one); the engine uses the underscore names (``_type``, ``_columns()``,
    ``_with_fields(...)``), which are never fields.
    """

    _type: BoundRecord
    _fields: dict[str, Any]

    def __init__(self, type_: BoundRecord, fields: dict[str, Any]) -> None:
        object.__setattr__(self, "_type", type_)
        object.__setattr__(self, "_fields", fields)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_":
            fields = object.__getattribute__(self, "_fields")
            if name in fields:
                return fields[name]
        return object.__getattribute__(self, name)

    def _columns(self) -> list[Any]:
        out: list[Any] = []
        for name, ft in self._type.fields.items():
            out.extend(ft.columns(self._fields[name]))
        return out

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise SpecEvaluationError(f"a {self._type.describe()} has no field {name!r}")

    def __getitem__(self, name: str) -> Any:
        """``r["f"]``: field ``f`` (any field name, a Python keyword included)."""
        fields = self._fields
        if not isinstance(name, str) or name not in fields:
            raise SpecEvaluationError(f"a {self._type.describe()} has no field {name!r}")
        return fields[name]

    def __setattr__(self, name: str, value: Any) -> None:
        raise SpecEvaluationError(
            f"cannot assign field {name} of a record value; build a new one with "
            f".with_fields({name}=...) and assign it to the next state")

    def _with_fields(self, **changes: Any) -> RecordValue:
        """``[r EXCEPT !.f = v, ...]`` (reachable whatever the field names)."""
        unknown = [k for k in changes if k not in self._type.fields]
        if unknown:
            raise SpecEvaluationError(
                f"a {self._type.describe()} has no field {', '.join(map(repr, unknown))}")
        return RecordValue(self._type, {**self._fields, **changes})

    def with_fields(self, **changes: Any) -> RecordValue:
        """``[r EXCEPT !.f = v, ...]`` (``r._with_fields`` when a field is named
        ``with_fields``)."""
        return self._with_fields(**changes)


def record_field_problem(name: str) -> str | None:
    """Why ``name`` cannot be a record field, or None.

    Any TLA+ field name is accepted (letters, digits and underscores), Python keywords
    and the names of the record value's public methods included: ``r.type`` reads the
    field ``type``, ``r["from"]`` the field ``from``. The one true clash is a leading
    underscore: ``r._name`` is the record value's own namespace, which the engine uses
    to reach its operations whatever the fields are called.
    """
    if not name or not all(c.isalnum() or c == "_" for c in name) or not name.isascii():
        return ("is not a TLA+ field name (letters, digits and underscores; spec code "
                "reads a field as `r.<field>` or `r[\"<field>\"]`)")
    if name.startswith("_"):
        return ("starts with an underscore: `r._<name>` is reserved for the record "
                "value's own operations (`r._type`, `r._with_fields(...)`), which must "
                "stay reachable whatever the fields are called")
    return None


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


class UnionValue(Value):
    """A value of a ``Union`` of record shapes: the tag (``m.type``, an enum code) and
    the fields (``m.rm``) read as a record's; a field of another shape than the
    value's reads as that field's first value. Stored as one code (see
    :class:`~modelcheck.domains.BoundUnion`)."""

    _type: BoundUnion
    _code: Any

    def __init__(self, type_: BoundUnion, code: Any) -> None:
        object.__setattr__(self, "_type", type_)
        object.__setattr__(self, "_code", code)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_":
            t = object.__getattribute__(self, "_type")
            if name == t.tag or name in t.fields:
                return object.__getattribute__(self, "_field")(name)
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise SpecEvaluationError(f"a {self._type.describe()} has no field {name!r}")

    def __getitem__(self, name: str) -> Any:
        t = self._type
        if name != t.tag and name not in t.fields:
            raise SpecEvaluationError(f"a {t.describe()} has no field {name!r}")
        return self._field(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise SpecEvaluationError(
            f"cannot assign field {name} of a record value; build a new one with "
            f".with_fields({name}=...) and assign it to the next state")

    def _columns(self) -> list[Any]:
        return [self._code]

    def _field(self, name: str) -> Any:
        t = self._type
        code = as_int(self._code)
        if name == t.tag:
            acc: Any = np.int64(0)
            for off in t.offsets[1:]:
                acc = acc + as_int(code >= off)
            return _scalar(acc)
        out: Any = None
        for k, shape in enumerate(t.shapes):
            if shape is None or name not in shape.fields:
                continue
            off, n = t.offsets[k], shape.n_values
            inside = (code >= off) & (code < off + n)
            local = _scalar(np.where(inside, code - off, 0))
            fv = shape.value_at(local)._fields[name]
            out = fv if out is None else _where_value(shape.fields[name], inside, fv, out)
        return out

    def _with_fields(self, **changes: Any) -> UnionValue:
        """``[m EXCEPT !.f = v, ...]`` (the tag too: a change of shape)."""
        t = self._type
        unknown = [k for k in changes if k != t.tag and k not in t.fields]
        if unknown:
            raise SpecEvaluationError(
                f"a {t.describe()} has no field {', '.join(map(repr, unknown))}")
        lit = {t.tag: self._field(t.tag), **{f: self._field(f) for f in t.fields}}
        lit.update(changes)
        return UnionValue(t, t.columns(lit)[0])

    def with_fields(self, **changes: Any) -> UnionValue:
        """``[m EXCEPT !.f = v, ...]`` (``m._with_fields`` when a field hides it)."""
        return self._with_fields(**changes)


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


def _scalar(x: Any) -> Any:
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return x[()]
    return x


def _where_value(t: BoundType, cond: Any, a: Any, b: Any) -> Any:
    """``where(cond, a, b)`` for values of type ``t`` (scalars or compound values)."""
    if isinstance(cond, (bool, np.bool_)) or (isinstance(cond, np.ndarray) and cond.ndim == 0):
        return a if bool(cond) else b
    ca, cb = t.columns(a), t.columns(b)
    return t.view([np.where(cond, as_int(x), as_int(y)) for x, y in zip(ca, cb)])
