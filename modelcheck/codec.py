"""The one value codec: every form a decoded state value is shown or written in.

A *decoded value* is what a state variable's bound type gives back
(:meth:`~modelcheck.types.base.ScalarType.to_python`, the layout's ``values_from_cells``)
and what trace files decode to: ``bool``, ``int`` (numpy scalars too), ``str`` (enum
members by name), ``frozenset``/``set`` (a set), ``tuple`` (a TLA+ tuple), ``list`` or
:class:`~modelcheck.itfvalues.FrozenSeq` (a sequence), ``dict`` or
:class:`~modelcheck.itfvalues.FrozenMap` (a function: an array keyed by index, a bag),
:class:`~modelcheck.itfvalues.Record` and :class:`~modelcheck.itfvalues.Unserializable`.

:func:`kind` is the only place that tells these shapes apart; every form below is a
dispatch on its answer:

* :func:`sort_key`: the canonical order of set members and function keys, TLC's (below);
* :func:`to_json`: the ``--format json`` contract (sets as sorted lists, maps as objects);
* :func:`to_trace_json`: modelcheck's JSON trace file (``#set``, ``#tup``, ``#rec``,
  ``#map``);
* :func:`to_itf`: ITF JSON (Apalache ADR-015), strict, with the JSON path of a bad value;
* :func:`text`: the form traces, reports and the explorer show (``{1, 2}``, ``[a: 1]``,
  ``TRUE``);
* :func:`tla_text`: TLA+ syntax, for action and fairness labels (``[a |-> 1]``, ``<<1>>``);
* :func:`normalize`: a checker value in trace form (numpy scalars as Python ones,
  decimal-string array indices as ints, set members frozen).

The order is TLC's (``Value.compareTo`` of TLC 2.20, checked by printing sets with TLC):
``FALSE < TRUE``; integers numerically; a set by its cardinality, then member by member
in this order; a sequence or tuple by its length, then element by element; a record by
its number of fields, then field by field in name order, each field's name before its
value; any other function by the size of its domain, then its domain elements in order,
then its values. So ``{{3}, {1, 2}}`` lists ``{3}`` first and ``{<<2>>, <<1, 1>>}`` lists
``<<2>>`` first. Strings are ordered by code point: TLC orders them by when it first
met each string while parsing the spec, which is no property of the values. Values of
different kinds, which TLC refuses to compare, are ordered booleans, integers, strings,
functions (sequences, tuples, maps and records), sets, unserializable values; a
sequence, a tuple and a map that TLC would take for the same function come in that
order. The key is total and tells apart exactly the values Python's ``==`` does.
"""

from __future__ import annotations

import enum
import json
import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, TypeAlias

import numpy as np

from .itfvalues import Record, Unserializable, freeze

__all__ = ["Kind", "kind", "sort_key", "same", "children", "sorted_values", "to_json",
           "to_trace_json", "to_itf", "text", "tla_text", "normalize", "index_key", "check_text"]


class Kind(enum.Enum):
    """The shape of a decoded value."""

    BOOL = "bool"
    INT = "int"
    STR = "str"
    SET = "set"
    TUPLE = "tuple"
    SEQ = "seq"
    MAP = "map"
    RECORD = "record"
    UNSERIALIZABLE = "unserializable"
    OTHER = "other"


def kind(v: Any) -> Kind:
    """The shape of ``v``; :attr:`Kind.OTHER` for anything outside the value model."""
    if isinstance(v, (bool, np.bool_)):
        return Kind.BOOL
    if isinstance(v, numbers.Integral):
        return Kind.INT
    if isinstance(v, str):
        return Kind.STR
    if isinstance(v, Record):
        return Kind.RECORD
    if isinstance(v, Mapping):
        return Kind.MAP
    if isinstance(v, (set, frozenset)):
        return Kind.SET
    if isinstance(v, tuple):
        return Kind.TUPLE
    if isinstance(v, Sequence) and not isinstance(v, (bytes, bytearray)):
        return Kind.SEQ  # a list, a FrozenSeq
    if isinstance(v, Unserializable):
        return Kind.UNSERIALIZABLE
    return Kind.OTHER


# --------------------------------------------------------------------------- order

# Ranks of the kinds in the order; a function's last key part tells apart a sequence,
# a tuple and a map that TLC would take for the same function (and a record).
_RANK = {Kind.BOOL: 0, Kind.INT: 1, Kind.STR: 2, Kind.SEQ: 3, Kind.TUPLE: 3, Kind.MAP: 3,
         Kind.RECORD: 3, Kind.SET: 4, Kind.UNSERIALIZABLE: 5, Kind.OTHER: 6}
_FUNCTION_FORM = {Kind.SEQ: 0, Kind.TUPLE: 1, Kind.MAP: 2, Kind.RECORD: 3}

SortKey: TypeAlias = tuple[Any, ...]


def sort_key(v: Any) -> SortKey:
    """``v``'s key in TLC's order of values (see the module docstring): sorting set
    members or function keys by it lists them as TLC prints them."""
    k = kind(v)
    rank = _RANK[k]
    if k is Kind.BOOL:
        return (rank, bool(v))
    if k is Kind.INT:
        return (rank, int(v))
    if k is Kind.STR:
        return (rank, v)
    if k is Kind.SET:
        return (rank, len(v), tuple(sorted(sort_key(x) for x in v)))
    if k is Kind.SEQ or k is Kind.TUPLE:
        n = len(v)
        body = (*((1, i) for i in range(1, n + 1)), *(sort_key(x) for x in v))
        return (rank, n, body, _FUNCTION_FORM[k])
    if k is Kind.RECORD:
        fields = sorted(v)
        body = tuple(part for name in fields for part in ((2, name), sort_key(v[name])))
        return (rank, len(fields), body, _FUNCTION_FORM[k])
    if k is Kind.MAP:
        entries = sorted(((sort_key(key), x) for key, x in v.items()), key=lambda e: e[0])
        body = (*(e[0] for e in entries), *(sort_key(e[1]) for e in entries))
        return (rank, len(entries), body, _FUNCTION_FORM[k])
    if k is Kind.UNSERIALIZABLE:
        return (rank, str(v.text))
    return (rank, type(v).__qualname__, repr(v))


def same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are the same value: equal, and of the same kinds throughout
    (``TRUE`` is not ``1``, a tuple is not a sequence)."""
    return bool(a == b) and sort_key(a) == sort_key(b)


def children(v: Any) -> list[Any]:
    """The values directly inside ``v``: a map's keys and values, a record's field values,
    a set's members, a sequence's or tuple's elements; none for an atom."""
    k = kind(v)
    if k is Kind.MAP:
        return [x for kv in v.items() for x in kv]
    if k is Kind.RECORD:
        return list(v.values())
    if k in (Kind.SET, Kind.SEQ, Kind.TUPLE):
        return list(v)
    return []


def sorted_values(values: Any) -> list[Any]:
    """The members of a set (or the keys of a map) in TLC's order."""
    return sorted(values, key=sort_key)


# --------------------------------------------------------------------------- JSON


def to_json(v: Any) -> Any:
    """A state value as JSON data, the ``--format json`` contract: maps and records as
    objects (an integer key as its decimal text, a compound key as its JSON text), sets
    as lists in TLC's order, sequences and tuples as lists."""
    k = kind(v)
    if k is Kind.MAP or k is Kind.RECORD:
        return {_json_key(key): to_json(x) for key, x in v.items()}
    if k is Kind.SET:
        return [to_json(x) for x in sorted_values(v)]
    if k is Kind.SEQ or k is Kind.TUPLE:
        return [to_json(x) for x in v]
    if k is Kind.INT:
        return int(v)
    if k is Kind.BOOL:
        return bool(v)
    return v


def _json_key(key: Any) -> str:
    k = kind(key)
    if k is Kind.STR:
        return str(key)
    if k is Kind.INT:
        return str(int(key))
    if k is Kind.BOOL:
        return str(bool(key))  # "True", as the contract has always written a boolean key
    return json.dumps(to_json(key), sort_keys=True)


def to_trace_json(v: Any) -> Any:
    """A value in modelcheck's JSON trace file: records ``{"#rec": {...}}``, arrays (maps
    keyed by integers or strings) as objects, other maps ``{"#map": [[k, v], ...]}`` and
    sets ``{"#set": [...]}`` in TLC's order, tuples ``{"#tup": [...]}``, sequences as
    lists. Raises ``ValueError`` for anything else."""
    k = kind(v)
    if k is Kind.RECORD:
        return {"#rec": {name: to_trace_json(x) for name, x in v.items()}}
    if k is Kind.MAP:
        if all(kind(key) in (Kind.INT, Kind.STR) for key in v):
            return {str(key) if kind(key) is Kind.STR else str(int(key)): to_trace_json(x)
                    for key, x in v.items()}
        return {"#map": [[to_trace_json(key), to_trace_json(v[key])]
                         for key in sorted_values(v)]}
    if k is Kind.SET:
        return {"#set": [to_trace_json(x) for x in sorted_values(v)]}
    if k is Kind.TUPLE:
        return {"#tup": [to_trace_json(x) for x in v]}
    if k is Kind.SEQ:
        return [to_trace_json(x) for x in v]
    if k is Kind.BOOL:
        return bool(v)
    if k is Kind.INT:
        return int(v)
    if k is Kind.STR:
        return v
    raise ValueError(f"cannot write {v!r} in a modelcheck JSON trace.")


# --------------------------------------------------------------------------- ITF

#: a JSON path, built lazily: a root string, or (parent, field name | index)
Path: TypeAlias = "str | tuple[Path, str | int]"
#: raises the caller's error for a path and a detail
Fail: TypeAlias = Callable[[Any, str], NoReturn]


def check_text(s: str, path: Any, fail: Fail) -> None:
    """Fail unless ``s`` is valid Unicode text (no lone surrogates)."""
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            fail(path, "string contains a lone surrogate and is not valid Unicode text")


def to_itf(v: Any, path: Any, fail: Fail) -> Any:
    """The ITF JSON of ``v``: ``{"#bigint": "12"}``, ``{"#set": [...]}`` and
    ``{"#map": [[k, v], ...]}`` in TLC's order, ``{"#tup": [...]}``, sequences as lists,
    records as objects with sorted fields, ``{"#unserializable": text}``. Calls
    ``fail(path, detail)`` (which raises) for anything outside the value model, ``path``
    extended into the value (``(path, "#set")``, then the member's position)."""
    k = kind(v)
    if k is Kind.BOOL:
        return bool(v)
    if k is Kind.INT:
        n = int(v)
        try:
            digits = str(n)
        except ValueError:
            fail(path, f"integer of {n.bit_length()} bits has too many digits to write")
        return {"#bigint": digits}
    if k is Kind.STR:
        check_text(v, path, fail)
        return v
    if k is Kind.SEQ:
        return [to_itf(x, (path, i), fail) for i, x in enumerate(v)]
    if k is Kind.TUPLE:
        sub: Path = (path, "#tup")
        return {"#tup": [to_itf(x, (sub, i), fail) for i, x in enumerate(v)]}
    if k is Kind.SET:
        sub = (path, "#set")
        encoded = sorted(((sort_key(x), to_itf(x, (sub, i), fail)) for i, x in enumerate(v)),
                         key=lambda e: e[0])
        for i in range(1, len(encoded)):
            if encoded[i][0] == encoded[i - 1][0]:
                fail((sub, i), "two set elements encode to the same ITF value")
        return {"#set": [j for _, j in encoded]}
    if k is Kind.MAP:
        sub = (path, "#map")
        entries = sorted(((sort_key(key), to_itf(key, ((sub, i), 0), fail),
                           to_itf(x, ((sub, i), 1), fail))
                          for i, (key, x) in enumerate(v.items())), key=lambda e: e[0])
        for i in range(1, len(entries)):
            if entries[i][0] == entries[i - 1][0]:
                fail(((sub, i), 0), "two map keys encode to the same ITF value")
        return {"#map": [[kj, xj] for _, kj, xj in entries]}
    if k is Kind.RECORD:
        out: dict[str, Any] = {}
        for name in sorted(v):
            check_text(name, path, fail)
            out[name] = to_itf(v[name], (path, name), fail)
        return out
    if k is Kind.UNSERIALIZABLE:
        if not isinstance(v.text, str):
            fail(path, "Unserializable.text must be a string")
        check_text(v.text, (path, "#unserializable"), fail)
        return {"#unserializable": v.text}
    if v is None:
        fail(path, "None is not an ITF value")
    if isinstance(v, float):
        fail(path, f"the float {v!r} is not an ITF value (ITF has integers only)")
    cls = type(v)
    name = (cls.__qualname__ if cls.__module__ == "builtins"
            else f"{cls.__module__}.{cls.__qualname__}")
    fail(path, f"cannot encode a Python {name} as an ITF value")


# --------------------------------------------------------------------------- text


def text(v: Any, *, python: bool = False) -> str:
    """A value as traces, reports and the explorer show it: ``TRUE``/``FALSE``, enum
    names, records ``[a: 1, b: 2]``, maps ``{1: 0, 2: 3}``, sets ``{1, 2}``, tuples
    ``<<1, 2>>``, sequences ``[1, 2]``; members and keys in TLC's order. With ``python``,
    booleans, strings and the empty set as Python writes them (``True``, ``'a'``,
    ``set()``)."""
    k = kind(v)
    if k is Kind.BOOL:
        if python:
            return "True" if v else "False"
        return "TRUE" if v else "FALSE"
    if k is Kind.INT:
        return str(int(v))
    if k is Kind.STR:
        return repr(v) if python else str(v)
    if k is Kind.RECORD:
        return "[" + ", ".join(f"{name}: {text(x, python=python)}" for name, x in v.items()) \
            + "]"
    if k is Kind.MAP:
        return "{" + ", ".join(f"{text(key, python=python)}: {text(v[key], python=python)}"
                               for key in sorted_values(v)) + "}"
    if k is Kind.SET:
        if python and not v:
            return "set()"
        return "{" + ", ".join(text(x, python=python) for x in sorted_values(v)) + "}"
    if k is Kind.TUPLE:
        return "<<" + ", ".join(text(x, python=python) for x in v) + ">>"
    if k is Kind.SEQ:
        return "[" + ", ".join(text(x, python=python) for x in v) + "]"
    if k is Kind.UNSERIALIZABLE:
        return f"<{v.text}>"
    return repr(v)


def tla_text(v: Any) -> str:
    """A value as TLA+ writes it, for action and fairness labels: ``2``, ``{1, 2}``,
    ``[type |-> "ack", rm |-> 2]``, ``<<1, 2>>`` (a sequence or tuple),
    ``(1 :> 0 @@ 2 :> 1)`` (a function), ``TRUE``; members and keys in TLC's order."""
    k = kind(v)
    if k is Kind.BOOL:
        return "TRUE" if v else "FALSE"
    if k is Kind.INT:
        return str(int(v))
    if k is Kind.STR:
        return '"' + v.replace('"', '\\"') + '"'
    if k is Kind.RECORD:
        return "[" + ", ".join(f"{name} |-> {tla_text(x)}" for name, x in v.items()) + "]"
    if k is Kind.MAP:
        return "(" + " @@ ".join(f"{tla_text(key)} :> {tla_text(v[key])}"
                                 for key in sorted_values(v)) + ")"
    if k is Kind.SET:
        return "{" + ", ".join(tla_text(x) for x in sorted_values(v)) + "}"
    if k is Kind.SEQ or k is Kind.TUPLE:
        return "<<" + ", ".join(tla_text(x) for x in v) + ">>"
    return str(v)


# --------------------------------------------------------------------------- trace form


def index_key(key: Any) -> Any:
    """An array index as a trace key: a decimal string (a JSON object key) becomes an int."""
    if kind(key) is Kind.STR:
        t = key[1:] if key.startswith("-") else key
        if t.isdigit() and t.isascii():
            return int(key)
    return key


def normalize(v: Any) -> Any:
    """A value from the checker in trace form: decimal-string keys become ints, numpy
    scalars Python ones; sets stay sets (members frozen) and lists lists."""
    k = kind(v)
    if k is Kind.RECORD:
        return Record({name: normalize(x) for name, x in v.items()})
    if k is Kind.MAP:
        return {index_key(key) if kind(key) is Kind.STR else freeze(normalize(key)): normalize(x)
                for key, x in v.items()}
    if k is Kind.SET:
        return frozenset(freeze(normalize(x)) for x in v)
    if k is Kind.SEQ:
        return [normalize(x) for x in v]
    if k is Kind.TUPLE:
        return tuple(normalize(x) for x in v)
    if k is Kind.BOOL:
        return bool(v)
    if k is Kind.INT:
        return int(v)
    return v
