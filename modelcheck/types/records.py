"""Records and unions: :class:`Record`, :class:`Union`, their bound forms and
values (:class:`RecordValue`, :class:`UnionValue`)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import codec
from ..errors import SpecDefinitionError, SpecEvaluationError
from ..itfvalues import Record as RecordData
from .arrays import _element_type
from .base import (
    BoundType,
    Ids,
    ScalarType,
    Type,
    Value,
    ValueDomainError,
    ValueKindError,
    _codes_at,
    _elem_text,
    _first_ref,
    _index_of_codes,
    _index_permutation,
    _scalar,
    _split,
    _type_parts,
    _where_value,
    as_int,
    select,
)
from .sets import refuse_sparse_sets

__all__ = [
    "Record",
    "BoundRecord",
    "Union",
    "BoundUnion",
    "RecordValue",
    "UnionValue",
    "record_field_problem",
]


class Record(Type):
    """A record ``[f1: T1, f2: T2]``: ``Record(clock=Int(0, 3), kind=Enum(Kind))``.

    Fields are types (records, sets, sequences, bags and arrays nest: an ``Array``
    field is a function value) or ``Ids`` sets (a member of the set), named like any
    TLA+ field (``type`` included; not starting with ``_``). In expressions
    ``s.msg.clock`` (or ``s.msg["clock"]``) reads a field; build a value with a dict
    literal (``t.msg = {"clock": 1, "kind": Kind.REQ}``) or
    ``s.msg.with_fields(clock=2)`` (``s.msg._with_fields(...)`` when a field is named
    ``with_fields``). Records may be array, set, sequence and bag elements.
    """

    def __init__(self, **fields: Ids | Type) -> None:
        if not fields:
            raise SpecDefinitionError("Record(...) needs at least one field.")
        self.fields = fields
        self.init = None

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        return BoundRecord({k: _element_type(v, consts, f"Record field {k}")
                            for k, v in self.fields.items()})

    def describe(self) -> str:
        return "[" + ", ".join(f"{k}: {_elem_text(v)}" for k, v in self.fields.items()) + "]"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(*self.fields.values())


class BoundRecord(BoundType):
    """A record of the field types ``fields`` (one after the other in the layout); the
    Python and trace value is a :class:`~modelcheck.itfvalues.Record` (an ITF record)."""

    def __init__(self, fields: dict[str, BoundType]) -> None:
        self.fields = fields
        self.ref = None
        self._types = list(fields.values())

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        return [((name, *path), t) for name, ft in self.fields.items()
                for path, t in ft.cells()]

    def default(self) -> Any:
        return RecordData({k: t.value(t.codes(t.default())) for k, t in self.fields.items()})

    def describe(self) -> str:
        return "[" + ", ".join(f"{k}: {t.describe()}" for k, t in self.fields.items()) + "]"

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        parts = _split(codes, self._types)
        return RecordData({k: t.value(p, itf=itf) for (k, t), p in zip(self.fields.items(),
                                                                        parts)})

    def _check_fields(self, value: Any, strict: bool) -> None:
        if strict and not isinstance(value, RecordData):
            raise ValueKindError("a record " + self.describe())
        if not isinstance(value, Mapping):
            raise ValueError(f"{value!r} is not a record {self.describe()}")
        if set(value) != set(self.fields):
            missing = [k for k in self.fields if k not in value]
            extra = [str(k) for k in value if k not in self.fields]
            what = "; ".join(x for x in (missing and f"missing {', '.join(missing)}",
                                         extra and f"unknown {', '.join(extra)}") if x)
            if strict:
                raise ValueKindError(f"a record {self.describe()} ({what})")
            raise ValueError(f"{codec.text(value)} is not a record {self.describe()}: {what}")

    def codes(self, value: Any) -> list[int]:
        self._check_fields(value, False)
        return [c for k, t in self.fields.items() for c in t.codes(value[k])]

    def codes_from_itf(self, value: Any) -> list[int]:
        self._check_fields(value, True)
        out: list[int] = []
        for k, t in self.fields.items():
            try:
                out.extend(t.codes_from_itf(value[k]))
            except ValueDomainError as e:
                raise ValueDomainError(f"field {k} {e}") from None
        return out

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        parts = _split(codes, self._types)
        return "[" + ", ".join(f"{k}: {t.show(p, short=short)}"
                               for (k, t), p in zip(self.fields.items(), parts)) + "]"

    def view(self, cols: Sequence[Any]) -> Any:
        # the fields are made on the first read of one (most records a spec builds are
        # only ever selected, compared or stored: their columns are what is used)
        return RecordValue(self, None, list(cols))

    def _spans(self) -> list[tuple[str, BoundType, int, int]]:
        """Per field: its name, type and cells ``lo:hi`` among the record's (computed
        once: a bound type's cells are fixed)."""
        spans: list[tuple[str, BoundType, int, int]] | None = self.__dict__.get("_span_cache")
        if spans is None:
            spans, k = [], 0
            for name, t in self.fields.items():
                n = t.n_cells
                spans.append((name, t, k, k + n))
                k += n
            self.__dict__["_span_cache"] = spans
        return spans

    def _field_values(self, cols: Sequence[Any]) -> dict[str, Any]:
        return {name: t.view(cols[lo:hi]) for name, t, lo, hi in self._spans()}

    def normal_columns(self, cols: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for _, t, lo, hi in self._spans():
            out.extend(t.normal_columns(cols[lo:hi]))
        return out

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, RecordValue):
            if value._type is not self and value._type.describe() != self.describe():
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.describe()} is expected")
            return value._columns()
        if isinstance(value, Mapping) and not isinstance(value, Value):
            unknown = [str(k) for k in value if k not in self.fields]
            missing = [k for k in self.fields if k not in value]
            if unknown or missing:
                raise SpecEvaluationError(
                    f"a record {self.describe()} needs exactly its fields"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(unknown)}" if unknown else ""))
            return [c for k, t in self.fields.items() for c in t.columns(value[k])]
        raise SpecEvaluationError(
            f"{value!r} where a record {self.describe()} is expected: use a record value or a "
            "dict literal of its fields")

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fns = [t.cells_permutation(pis) for t in self._types]
        if all(f is None for f in fns):
            return None
        sizes = [t.n_cells for t in self._types]

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            out: list[np.ndarray] = []
            k = 0
            for f, n in zip(fns, sizes):
                part = cols[k:k + n]
                out.extend(part if f is None else f(part))
                k += n
            return out

        return apply

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fns = [t.cells_permutations(many) for t in self._types]
        if all(f is None for f in fns):
            return None
        sizes = [t.n_cells for t in self._types]
        n_perms = len(many)

        def apply(block: np.ndarray) -> np.ndarray:
            out = np.empty((n_perms,) + block.shape[1:], dtype=np.int64)
            k = 0
            for f, n in zip(fns, sizes):
                part = block[:, k:k + n]
                out[:, k:k + n] = part if f is None else f(part)
                k += n
            return out

        return apply

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        fns = [t.cells_permutations_paired(many) for t in self._types]
        if all(f is None for f in fns):
            return None
        sizes = [t.n_cells for t in self._types]

        def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
            out = np.array(block, dtype=np.int64)
            k = 0
            for f, n in zip(fns, sizes):
                if f is not None:
                    out[k:k + n] = f(block[k:k + n], which)
                k += n
            return out

        return apply


class Union(Type):
    """One of several record shapes, told apart by a tag field: TLA+'s
    ``[type: {"Prepared"}, rm: RM] \\cup [type: {"Commit", "Abort"}]`` is
    ``Union("type", MsgType, Prepared=Record(rm=RM), Commit=None, Abort=None)``.

    ``tags`` is an ``IntEnum`` whose member names are the shapes (every member one);
    each shape is a :class:`Record` of the fields besides the tag, or None for a
    message that is its tag alone. A value is a record with the tag field (an enum
    value, ``m.type == MsgType.Prepared``) and its shape's fields; it is stored as
    one code, its position among the values of all shapes (no filler fields), so a
    set of such messages has one bit per message. Reading a field of another shape
    gives that field's first value (guard with the tag). Traces show the TLA+ record
    (``[type |-> "Commit"]``).
    """

    def __init__(self, tag: str, tags: type[enum.IntEnum], **shapes: Record | None) -> None:
        if not (isinstance(tags, type) and issubclass(tags, enum.IntEnum)):
            raise SpecDefinitionError(f"Union(...) takes an enum.IntEnum of tags, got {tags!r}.")
        problem = record_field_problem(tag) if isinstance(tag, str) else "is no string"
        if problem is not None:
            raise SpecDefinitionError(f"Union({tag!r}, ...): the tag field {tag!r} {problem}.")
        names = [m.name for m in sorted(tags, key=int)]
        if [int(m) for m in sorted(tags, key=int)] != list(range(len(names))) \
                or sorted(shapes) != sorted(names):
            raise SpecDefinitionError(
                f"Union({tag!r}, {tags.__name__}, ...): give one shape per member of "
                f"{tags.__name__} ({', '.join(names)}), whose values are 0..k-1; got "
                f"{', '.join(shapes) or 'none'}.")
        for name, shape in shapes.items():
            if shape is not None and not isinstance(shape, Record):
                raise SpecDefinitionError(
                    f"Union(...) shape {name} must be a Record(...) or None, got {shape!r}.")
            if shape is not None and tag in shape.fields:
                raise SpecDefinitionError(
                    f"Union(...) shape {name} has a field {tag!r}, which is the tag.")
        self.tag, self.tags, self.shapes = tag, tags, {n: shapes[n] for n in names}
        self.init = None

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        shapes: dict[str, BoundRecord | None] = {}
        for n, s in self.shapes.items():
            b = None if s is None else s.bound(consts)
            assert b is None or isinstance(b, BoundRecord)
            if b is not None:
                refuse_sparse_sets(b, f"shape {n} of Union({self.tag!r}, ...)")
            shapes[n] = b
        return BoundUnion(self.tag, shapes, self.describe_with(shapes))

    def describe_with(self, shapes: Mapping[str, Any]) -> str:
        parts = []
        for n, s in shapes.items():
            rest = "" if s is None else ", " + s.describe()[1:-1]
            parts.append(f"[{self.tag}: {{{n}}}{rest}]")
        return " \\cup ".join(parts)

    def describe(self) -> str:
        return self.describe_with(self.shapes)

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(*self.shapes.values())


class BoundUnion(ScalarType):
    """A :class:`Union` bound: one cell whose code is the value's position among the
    values of all shapes, shape by shape (``offsets[k]`` is shape ``k``'s first)."""

    kind = "union"
    plain = False

    def __init__(self, tag: str, shapes: dict[str, BoundRecord | None], text: str) -> None:
        self.tag = tag
        self.shapes = list(shapes.values())
        self.names = tuple(shapes)
        self.offsets: list[int] = []
        n = 0
        for s in self.shapes:
            self.offsets.append(n)
            n += 1 if s is None else s.n_values
        super().__init__(0, n, 0, text)
        self.ref = next((r for s in self.shapes if s is not None
                         for r in [_first_ref(s)] if r is not None), None)
        self.fields: dict[str, BoundType] = {}
        for s in self.shapes:
            for k, t in ([] if s is None else s.fields.items()):
                self.fields.setdefault(k, t)
        #: the fields of constant values read so far, by (code, field): a message that
        #: is an action parameter or a set's member is read again at every call
        self.const_fields: dict[tuple[int, str], Any] = {}

    def _shape_of(self, code: int) -> int:
        k = 0
        while k + 1 < len(self.offsets) and code >= self.offsets[k + 1]:
            k += 1
        return k

    def to_python(self, code: int) -> Any:
        if not 0 <= code < self.size:
            return code
        k = self._shape_of(code)
        s = self.shapes[k]
        fields: dict[str, Any] = {self.tag: self.names[k]}
        if s is not None:
            fields.update(s.value(_codes_at(s, code - self.offsets[k])))
        return RecordData(fields)

    def _from_record(self, value: Any, strict: bool) -> int:
        if not isinstance(value, Mapping) or (strict and not isinstance(value, RecordData)):
            if strict:
                raise ValueKindError("a record " + self.text)
            raise ValueError(f"{value!r} is not a record of {self.text}")
        tag = value.get(self.tag)
        if isinstance(tag, enum.Enum):
            tag = tag.name
        if isinstance(tag, int) and not isinstance(tag, bool) and 0 <= tag < len(self.names):
            tag = self.names[tag]
        if tag not in self.names:
            msg = f"= {codec.text(value)} has no {self.tag} among {', '.join(self.names)}"
            if strict:
                raise ValueDomainError(msg)
            raise ValueError(msg)
        k = self.names.index(tag)
        s = self.shapes[k]
        rest = {f: x for f, x in value.items() if f != self.tag}
        if s is None:
            if rest:
                raise (ValueKindError if strict else ValueError)(
                    f"a record [{self.tag} |-> {tag}] has no other field")
            return self.offsets[k]
        rec = RecordData(rest) if strict else rest
        codes = s.codes_from_itf(rec) if strict else s.codes(rec)
        idx, _ = _index_of_codes(s, codes)
        return self.offsets[k] + idx

    def from_python(self, value: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return self._from_record(value, False)

    def from_itf(self, value: Any) -> int:
        return self._from_record(value, True)

    def display(self, code: int) -> str:
        v = self.to_python(code)
        if not isinstance(v, RecordData):
            return f"<{code}: outside {self.text}>"
        return codec.text(v)

    def view(self, cols: Sequence[Any]) -> Any:
        return UnionValue(self, cols[0])

    def normal_columns(self, cols: Sequence[Any]) -> list[Any]:
        return [cols[0]]

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, UnionValue):
            if value._type is not self and value._type.describe() != self.describe():
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.text} is expected")
            return [value._code]
        if isinstance(value, Mapping) and not isinstance(value, Value):
            return [self._code_of_literal(value)]
        raise SpecEvaluationError(
            f"{value!r} where a {self.text} value is expected: use a value of the union or "
            "a dict literal with its tag and its shape's fields")

    def _code_of_literal(self, value: Mapping[str, Any]) -> Any:
        """The code of ``{tag: t, field: v, ...}``, with ``t`` and the fields constants
        or columns (each shape takes its own fields; a missing one is an error when the
        tag is a constant)."""
        if self.tag not in value:
            raise SpecEvaluationError(f"a record of {self.text} needs its field {self.tag!r}")
        unknown = [str(k) for k in value if k != self.tag and k not in self.fields]
        if unknown:
            raise SpecEvaluationError(f"{self.text} has no field {', '.join(unknown)}")
        tag = value[self.tag]
        if isinstance(tag, str):
            tag = self.names.index(tag) if tag in self.names else -1
        const = isinstance(tag, (int, np.integer)) and not isinstance(tag, np.ndarray)
        out: Any = np.int64(-1)
        for k, s in enumerate(self.shapes):
            if const and int(tag) != k:
                continue
            if s is None:
                code: Any = self.offsets[k]
            else:
                missing = [f for f in s.fields if f not in value]
                if missing:
                    if const:
                        raise SpecEvaluationError(
                            f"a [{self.tag} |-> {self.names[k]}] record needs the field(s) "
                            f"{', '.join(missing)}")
                    continue
                idx, outside = s.index_of({f: value[f] for f in s.fields})
                code = select(outside, -1, self.offsets[k] + idx)
            if const:
                return code
            out = select(np.asarray(tag) == k, code, out)
        return out

    def permutation(self, pis: Mapping[str, Mapping[int, int]]
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
        moves = [None if s is None else _index_permutation(s, pis) for s in self.shapes]
        if all(m is None for m in moves):
            return None
        lut = np.arange(self.size, dtype=np.int64)
        for k, m in enumerate(moves):
            if m is not None:
                off = self.offsets[k]
                lut[off:off + len(m)] = off + np.asarray(m, dtype=np.int64)
        return lambda col: lut[col]


class RecordValue(Value):
    """A value of ``Record(f=T, ...)``: fields are attributes (``m.clock``, ``m.type``)
    and items (``m["from"]``, for a field named like a Python keyword).

    A field hides the value's public method of the same name (``r.type``,
    ``r.columns``, ``r.select``, ``r.with_fields`` read the field when the record has
    one); the engine uses the underscore names (``_type``, ``_columns()``,
    ``_with_fields(...)``), which are never fields.
    """

    _type: BoundRecord
    #: the field values (None until a field is read, on a value made from columns)
    _fields: dict[str, Any] | None
    #: the columns the value was made from (None when made from field values); once
    #: :meth:`_columns` has read them, as that gives them back (``_normal``)
    _cols: list[Any] | None
    _normal: bool

    def __init__(self, type_: BoundRecord, fields: dict[str, Any] | None,
                 cols: list[Any] | None = None) -> None:
        object.__setattr__(self, "_type", type_)
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_cols", cols)
        object.__setattr__(self, "_normal", False)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_":
            fields = object.__getattribute__(self, "_fields")
            if fields is None:
                fields = object.__getattribute__(self, "_field_values")()
            if name in fields:
                return fields[name]
        return object.__getattribute__(self, name)

    def _field_values(self) -> dict[str, Any]:
        """The field values, made from the columns on the first call."""
        fields = self._fields
        if fields is None:
            assert self._cols is not None
            fields = self._type._field_values(self._cols)
            object.__setattr__(self, "_fields", fields)
        return fields

    def _columns(self) -> list[Any]:
        cols = self._cols
        if cols is not None:
            if not self._normal:
                # the columns the fields would give (booleans as booleans, ...)
                cols = self._type.normal_columns(cols)
                object.__setattr__(self, "_cols", cols)
                object.__setattr__(self, "_normal", True)
            return list(cols)
        fields = self._field_values()
        out: list[Any] = []
        for name, ft in self._type.fields.items():
            out.extend(ft.columns(fields[name]))
        return out

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise SpecEvaluationError(f"a {self._type.describe()} has no field {name!r}")

    def __getitem__(self, name: str) -> Any:
        """``r["f"]``: field ``f`` (any field name, a Python keyword included)."""
        fields = self._field_values()
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
        return RecordValue(self._type, {**self._field_values(), **changes})

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


class UnionValue(Value):
    """A value of a ``Union`` of record shapes: the tag (``m.type``, an enum code) and
    the fields (``m.rm``) read as a record's; a field of another shape than the
    value's reads as that field's first value. Stored as one code (see
    :class:`~modelcheck.types.records.BoundUnion`)."""

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
        code = self._code
        if isinstance(code, (int, np.integer)):
            # a constant: read once per (code, field), the same value as below
            key = (int(code), name)
            v = t.const_fields.get(key)
            if v is None:
                v = t.const_fields[key] = self._read_field(name)
            return v
        return self._read_field(name)

    def _read_field(self, name: str) -> Any:
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
            fv = shape.value_at(local)._field_values()[name]
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
