"""The trace value model shared by the checker and the ITF codec.

ITF values that Python has no type for: :class:`Record` (an ITF record),
:class:`FrozenSeq` and :class:`FrozenMap` (a sequence and a map in a hashable
position: a set element, a map key, a record field), :class:`Unserializable`, and
:func:`freeze`. They live here, below both the variable types
(:mod:`modelcheck.types`, whose record values are records) and the codec
(:mod:`modelcheck.trace.itf`, which re-exports them).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

__all__ = ["Record", "FrozenSeq", "FrozenMap", "Unserializable", "freeze"]


class Record(Mapping[str, Any]):
    """An ITF record: an immutable, hashable mapping from field names to values.

    Field names are strings that do not start with ``#``. Values are stored
    frozen (see :func:`freeze`). A record equals only another record with the
    same fields; it never equals a ``dict`` (that would be a map).
    """

    __slots__ = ("_fields", "_hash")
    _fields: dict[str, Any]
    _hash: int | None

    def __init__(
        self, fields: Mapping[str, Any] | Iterable[tuple[str, Any]] = (), /, **kwargs: Any
    ) -> None:
        items = fields.items() if isinstance(fields, Mapping) else fields
        data: dict[str, Any] = {}
        for name, value in [*items, *kwargs.items()]:
            if not isinstance(name, str):
                raise TypeError(f"record field names must be strings, not {name!r}")
            if name.startswith("#"):
                raise ValueError(f"record field name {name!r} must not start with '#'")
            data[name] = freeze(value)
        self._fields = data
        self._hash = None

    @classmethod
    def _trusted(cls, fields: dict[str, Any]) -> Record:
        record = cls.__new__(cls)
        record._fields = fields
        record._hash = None
        return record

    def __getitem__(self, name: str) -> Any:
        return self._fields[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return self._fields == other._fields
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("Record", frozenset(self._fields.items())))
        return self._hash

    def __repr__(self) -> str:
        return f"Record({self._fields!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (Record, (self._fields,))


class FrozenSeq(Sequence[Any]):
    """A hashable ITF sequence: what a JSON list decodes to in a hashable position.

    It equals a ``list`` (or another ``FrozenSeq``) with equal elements, never a
    ``tuple``, and is written back as a JSON list.
    """

    __slots__ = ("_items", "_hash")
    _items: tuple[Any, ...]
    _hash: int | None

    def __init__(self, items: Iterable[Any] = ()) -> None:
        self._items = tuple(freeze(x) for x in items)
        self._hash = None

    @classmethod
    def _trusted(cls, items: tuple[Any, ...]) -> FrozenSeq:
        seq = cls.__new__(cls)
        seq._items = items
        seq._hash = None
        return seq

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> FrozenSeq: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return FrozenSeq._trusted(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenSeq):
            return self._items == other._items
        if isinstance(other, list):
            return len(self._items) == len(other) and self._items == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("FrozenSeq", self._items))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenSeq({list(self._items)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenSeq, (self._items,))


class FrozenMap(Mapping[Any, Any]):
    """A hashable ITF map: what a ``#map`` decodes to in a hashable position.

    It equals a ``dict`` (or another ``FrozenMap``) with equal entries, never a
    :class:`Record`, and is written back as a ``#map``.
    """

    __slots__ = ("_map", "_hash")
    _map: dict[Any, Any]
    _hash: int | None

    def __init__(self, entries: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None:
        items = entries.items() if isinstance(entries, Mapping) else entries
        self._map = {freeze(k): freeze(v) for k, v in items}
        self._hash = None

    @classmethod
    def _trusted(cls, entries: dict[Any, Any]) -> FrozenMap:
        fmap = cls.__new__(cls)
        fmap._map = entries
        fmap._hash = None
        return fmap

    def __getitem__(self, key: Any) -> Any:
        return self._map[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._map == other._map
        if isinstance(other, dict):
            return self._map == other
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(("FrozenMap", frozenset(self._map.items())))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._map!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (self._map,))


@dataclass(frozen=True)
class Unserializable:
    """``{"#unserializable": text}``: a value the writer could not express, e.g. ``Int``."""

    text: str


_ATOMS = (bool, int, str, Unserializable, Record, FrozenSeq, FrozenMap, frozenset)


def freeze(value: Any) -> Any:
    """``value`` made hashable: lists become :class:`FrozenSeq`, dicts :class:`FrozenMap`.

    Tuples are rebuilt with frozen elements and sets become frozensets; values
    that are already hashable ITF values are returned unchanged. Anything else is
    returned as is (and rejected later by
    :func:`~modelcheck.trace.itf.encode_value`).
    """
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, list):
        return FrozenSeq._trusted(tuple(freeze(x) for x in value))
    if isinstance(value, tuple):
        return tuple(freeze(x) for x in value)
    if isinstance(value, dict):
        return FrozenMap._trusted({freeze(k): freeze(v) for k, v in value.items()})
    if isinstance(value, set):
        return frozenset(value)
    return value
