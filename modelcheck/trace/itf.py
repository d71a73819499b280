"""A strict codec for the Informal Trace Format (ITF) of Apalache ADR-015.

This module owns one thing: turning modelcheck traces into ITF JSON and back.
ITF is the trace format of Apalache and Quint; a trace file (``*.itf.json``) is
a JSON object::

    {"#meta": {...}, "params": [...], "vars": [...], "states": [...], "loop": 0}

``#meta``, ``params`` and ``loop`` are optional. Every state is an object that
maps each name in ``vars`` to an ITF value and may carry its own ``#meta``
object. The module is pure: it never evaluates a spec, never imports the
checker, and never uses pickle. Reading is strict: anything outside the grammar
raises :class:`ItfError`, whose message names the JSON path of the problem
(``states[3].regEpoch: expected an ITF value, got null``) and, when known, the
file.

Python value model (both directions):

==========================  =============================================
ITF                          Python
==========================  =============================================
``true`` / ``false``         ``bool`` (never confused with ``int``)
``{"#bigint": "-12"}``       ``int`` (plain JSON integers with
                             ``|n| < 2**53`` are accepted on read; any
                             ``numbers.Integral`` but ``bool`` on write)
``"text"``                   ``str``
``[a, b]`` (sequence)        ``list`` (:class:`FrozenSeq` when it must be
                             hashable, see below)
``{"#tup": [a, b]}``         ``tuple``
``{"#set": [a, b]}``         ``frozenset`` (``set`` is accepted on write)
``{"#map": [[k, v], ...]}``  ``dict`` (:class:`FrozenMap` when it must be
                             hashable); every ``dict`` is written as a map,
                             whatever its keys
``{"f": v, ...}`` (record)   :class:`Record`
``{"#unserializable": s}``   :class:`Unserializable`
==========================  =============================================

Hashable positions: set elements, map keys and record fields must be hashable,
so there every sequence is decoded as a :class:`FrozenSeq` and every map as a
:class:`FrozenMap`, recursively (:func:`freeze` applies the same rule to Python
values). The frozen forms compare equal to their mutable counterparts, as
``frozenset`` does to ``set``, and encode exactly like them, so a sequence used
as a key is still written back as a JSON list (not as a ``#tup``).

Writing is deterministic: integers are always written as ``#bigint``, record
fields and ``#meta`` keys are sorted, and ``#set`` elements and ``#map``
entries are listed in TLC's order of values (:func:`modelcheck.codec.sort_key`:
a set by its size, then member by member; a sequence or tuple by its length,
then element by element; strings by code point), so equal traces always give
byte-identical files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeAlias

from .. import codec
from ..errors import ModelcheckError
from ..fileio import atomic_write
from ..itfvalues import FrozenMap, FrozenSeq, Record, Unserializable, freeze

__all__ = [
    "parse_json_strict",
    "ItfError",
    "Record",
    "FrozenSeq",
    "FrozenMap",
    "Unserializable",
    "freeze",
    "encode_value",
    "decode_value",
    "ItfTrace",
    "to_itf",
    "from_itf",
    "dumps_itf",
    "loads_itf",
    "dump_itf",
    "load_itf",
]

# Plain JSON integers must lie strictly inside (-2**53, 2**53) (RFC 7159 / ADR-015).
_SAFE_INT = 2**53
_BIGINT_RE = re.compile(r"-?[0-9]+")
_TAGS = ("#bigint", "#tup", "#set", "#map", "#unserializable")
# Names printed as ``.name`` in a path; anything else is printed as ``["name"]``.
_PLAIN_NAME_RE = re.compile(r"#?[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*")


# --------------------------------------------------------------------------- errors


class ItfError(ModelcheckError, ValueError):
    """A value, trace or file is not valid ITF (or cannot be written as ITF).

    ``str(error)`` reads ``[file[:line:column]: ][json.path: ]detail``; the
    parts are also available as the attributes ``source``, ``line``,
    ``column``, ``path`` and ``detail``.
    """

    def __init__(
        self,
        detail: str,
        *,
        path: str = "",
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.detail = detail
        self.path = path
        self.source = source
        self.line = line
        self.column = column
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.source is not None:
            where = self.source
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        if self.path:
            where += f"{self.path}: "
        return where + self.detail

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.detail, self.path, self.source, self.line, self.column))

    def _set_source(self, source: str | None) -> None:
        if source is not None and self.source is None:
            self.source = source
            self.args = (self._render(),)


def _rebuild_error(
    detail: str, path: str, source: str | None, line: int | None, column: int | None
) -> ItfError:
    return ItfError(detail, path=path, source=source, line=line, column=column)


# A JSON path, built lazily: a root string, or (parent, field name | index).
_Path: TypeAlias = "str | tuple[_Path, str | int]"


def _format_path(path: _Path) -> str:
    segments: list[str | int] = []
    while isinstance(path, tuple):
        path, segment = path
        segments.append(segment)
    out = path
    for segment in reversed(segments):
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif _PLAIN_NAME_RE.fullmatch(segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{json.dumps(segment)}]"
    return out or "$"


def _fail(path: _Path, detail: str) -> NoReturn:
    raise ItfError(detail, path=_format_path(path))


def _describe(j: Any) -> str:
    """How a (supposedly JSON) value looks, for error messages."""
    if j is None:
        return "null"
    if isinstance(j, bool):
        return "true" if j else "false"
    if isinstance(j, int):
        if j.bit_length() > 64:
            return f"a JSON integer of {j.bit_length()} bits"
        return f"the JSON integer {j}"
    if isinstance(j, float):
        return f"the JSON number {j!r}"
    if isinstance(j, str):
        return "a string"
    if isinstance(j, list):
        return "an array"
    if isinstance(j, dict):
        return "an object"
    return f"a Python {_type_name(j)} (not JSON)"


def _type_name(v: Any) -> str:
    cls = type(v)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _check_text(s: str, path: _Path) -> None:
    codec.check_text(s, path, _fail)


# --------------------------------------------------------------------------- values


# --------------------------------------------------------------------------- encoding

def _enc(v: Any, path: _Path) -> Any:
    """The ITF JSON of ``v`` (:func:`modelcheck.codec.to_itf`)."""
    return codec.to_itf(v, path, _fail)


def encode_value(v: Any, path: str = "") -> Any:
    """The ITF JSON form of the Python value ``v`` (see the module docstring).

    Raises :class:`ItfError` (naming ``path`` plus the position inside ``v``)
    for anything outside the value model: ``None``, floats, other types,
    record field names starting with ``#``, strings with lone surrogates.
    """
    try:
        return _enc(v, path)
    except RecursionError:
        raise ItfError("value is nested too deeply", path=path or "$") from None


def _json_copy(obj: Any, path: _Path) -> Any:
    """A copy of free-form JSON (``#meta``) with sorted keys; rejects non-JSON data."""
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        if obj.bit_length() > 10_000:
            _fail(path, f"integer of {obj.bit_length()} bits is too long for JSON")
        return int(obj)
    if isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            _fail(path, f"{obj!r} is not a JSON number")
        return obj
    if isinstance(obj, str):
        _check_text(obj, path)
        return obj
    if isinstance(obj, (list, tuple)):
        return [_json_copy(x, (path, i)) for i, x in enumerate(obj)]
    if isinstance(obj, dict):
        for key in obj:
            if not isinstance(key, str):
                _fail(path, f"object key {key!r} is not a string")
            _check_text(key, path)
        return {key: _json_copy(obj[key], (path, key)) for key in sorted(obj)}
    _fail(path, f"expected JSON data, got {_describe(obj)}")


# --------------------------------------------------------------------------- decoding


def _dec(j: Any, path: _Path, frozen: bool) -> Any:
    """The Python value of the ITF JSON ``j``; hashable throughout when ``frozen``."""
    if isinstance(j, bool):
        return j
    if isinstance(j, str):
        _check_text(j, path)
        return j
    if isinstance(j, int):
        if -_SAFE_INT < j < _SAFE_INT:
            return int(j)
        _fail(
            path,
            f"{_describe(j)} is outside the exact JSON range |n| < 2**53; "
            'write it as {"#bigint": "..."}',
        )
    if isinstance(j, list):
        items = [_dec(x, (path, i), frozen) for i, x in enumerate(j)]
        return FrozenSeq._trusted(tuple(items)) if frozen else items
    if isinstance(j, dict):
        return _dec_object(j, path, frozen)
    if isinstance(j, float):
        _fail(path, f"expected an ITF value, got {_describe(j)} (ITF has integers only)")
    _fail(path, f"expected an ITF value, got {_describe(j)}")


def _dec_object(j: dict[Any, Any], path: _Path, frozen: bool) -> Any:
    tags: list[str] = []
    for key in j:
        if not isinstance(key, str):
            _fail(path, f"object key {key!r} is not a string")
        if key.startswith("#"):
            tags.append(key)
    if not tags:
        return Record._trusted({name: _dec(x, (path, name), True) for name, x in j.items()})
    if len(j) != 1:
        _fail(
            path,
            f"an object with a '#' key ({', '.join(map(repr, tags))}) must have exactly one "
            f"key, this one has {len(j)}",
        )
    tag = tags[0]
    body = j[tag]
    sub: _Path = (path, tag)
    if tag == "#bigint":
        if not isinstance(body, str) or not _BIGINT_RE.fullmatch(body):
            what = repr(body) if isinstance(body, str) and len(body) < 40 else _describe(body)
            _fail(sub, f"expected a decimal integer string matching -?[0-9]+, got {what}")
        try:
            return int(body)
        except ValueError:
            _fail(sub, f"integer of {len(body)} digits is too long to read")
    if tag == "#unserializable":
        if not isinstance(body, str):
            _fail(sub, f"expected a string, got {_describe(body)}")
        _check_text(body, sub)
        return Unserializable(body)
    if tag not in _TAGS:
        _fail(path, f"unknown ITF tag {tag!r} (expected one of {', '.join(_TAGS)})")
    if not isinstance(body, list):
        _fail(sub, f"expected an array, got {_describe(body)}")
    if tag == "#tup":
        return tuple(_dec(x, (sub, i), frozen) for i, x in enumerate(body))
    if tag == "#set":
        elements: set[Any] = set()
        for i, x in enumerate(body):
            element = _dec(x, (sub, i), True)
            if element in elements:
                _fail((sub, i), "duplicate set element" + _collision_note(element, elements))
            elements.add(element)
        return frozenset(elements)
    # "#map"
    entries: dict[Any, Any] = {}
    for i, pair in enumerate(body):
        entry: _Path = (sub, i)
        if not isinstance(pair, list) or len(pair) != 2:
            what = f"an array of {len(pair)}" if isinstance(pair, list) else _describe(pair)
            _fail(entry, f"expected a [key, value] array of 2 elements, got {what}")
        key = _dec(pair[0], (entry, 0), True)
        if key in entries:
            _fail((entry, 0), "duplicate map key" + _collision_note(key, entries))
        entries[key] = _dec(pair[1], (entry, 1), frozen)
    return FrozenMap._trusted(entries) if frozen else entries


def _collision_note(value: Any, seen: Iterable[Any]) -> str:
    earlier = next((s for s in seen if s == value), None)
    if type(earlier) is not type(value):
        return f" ({earlier!r} and {value!r} are equal in Python: a bool collides with 0/1)"
    return ""


def decode_value(j: Any, path: str = "") -> Any:
    """The Python value of the ITF JSON ``j`` (as produced by ``json.loads``).

    Strict: ``null``, non-integer numbers, integers outside ``|n| < 2**53``
    that are not ``#bigint``, objects mixing a ``#`` key with other keys,
    unknown ``#`` tags, malformed ``#bigint``/``#tup``/``#set``/``#map`` bodies,
    duplicate set elements and duplicate map keys raise :class:`ItfError`.
    ``path`` is prefixed to the position of the problem in error messages.
    """
    try:
        return _dec(j, path, False)
    except RecursionError:
        raise ItfError("value is nested too deeply", path=path or "$") from None


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class ItfTrace:
    """One ITF trace.

    ``states[i]`` maps every name in ``vars`` (plus, optionally, names in
    ``params``; required in the first state) to a Python value.
    ``state_meta[i]`` is the free-form ``#meta`` object of state ``i`` (``{}``
    when absent); ``meta`` is the trace's ``#meta`` object. Metadata is plain
    JSON, not ITF values. ``loop`` is the index of the state that starts the
    lasso's loop, or ``None`` for a finite trace. Sequences given as lists are
    stored as tuples, and an empty ``state_meta`` means "no metadata".
    """

    vars: tuple[str, ...]
    states: tuple[dict[str, Any], ...]
    meta: dict[str, Any] = field(default_factory=dict)
    state_meta: tuple[dict[str, Any], ...] = ()
    params: tuple[str, ...] = ()
    loop: int | None = None

    def __post_init__(self) -> None:
        for name in ("vars", "states", "state_meta", "params"):
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if self.state_meta == () and isinstance(self.states, tuple):
            object.__setattr__(self, "state_meta", tuple({} for _ in self.states))


def _check_names(names: Any, path: _Path, what: str) -> tuple[str, ...]:
    if not isinstance(names, (list, tuple)):
        _fail(path, f"expected an array of {what} names, got {_describe(names)}")
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not isinstance(name, str):
            _fail((path, i), f"expected a {what} name (a string), got {_describe(name)}")
        _check_text(name, (path, i))
        if name.startswith("#"):
            _fail((path, i), f"{what} name {name!r} must not start with '#'")
        if name in seen:
            _fail((path, i), f"{what} name {name!r} appears twice")
        seen.add(name)
    return tuple(names)


def _check_state_keys(
    keys: Mapping[Any, Any],
    path: _Path,
    vars_: tuple[str, ...],
    params: tuple[str, ...],
    first: bool,
) -> tuple[str, ...]:
    """The param names present in a state, after checking its keys; raises on a bad key."""
    var_set = set(vars_)
    param_set = set(params)
    present: set[str] = set()
    for key in keys:
        if not isinstance(key, str):
            _fail(path, f"state key {key!r} is not a string")
        if key == "#meta":
            continue
        if key in param_set:
            present.add(key)
        elif key not in var_set:
            if key.startswith("#"):
                _fail(path, f"unknown reserved key {key!r} in a state (only '#meta' is allowed)")
            listed = "vars or params" if params else "vars"
            _fail((path, key), f"unknown variable (not listed in {listed})")
    missing = [name for name in vars_ if name not in keys]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        _fail(path, f"missing variable {missing[0]!r}{more}")
    if first and len(present) != len(params):
        absent = next(name for name in params if name not in present)
        _fail(path, f"missing parameter {absent!r} (every param must be set in the first state)")
    return tuple(name for name in params if name in present)


def _check_loop(loop: Any, n_states: int) -> None:
    if isinstance(loop, bool) or not isinstance(loop, int):
        _fail(("", "loop"), f"expected a state index (an integer), got {_describe(loop)}")
    if not 0 <= loop < n_states:
        _fail(("", "loop"), f"state index {loop} is out of range for {n_states} state(s)")


def to_itf(trace: ItfTrace) -> dict[str, Any]:
    """The ITF JSON document of ``trace``, validated; raises :class:`ItfError`."""
    try:
        return _to_itf(trace)
    except RecursionError:
        raise ItfError("trace is nested too deeply", path="$") from None


def _to_itf(trace: ItfTrace) -> dict[str, Any]:
    if not isinstance(trace, ItfTrace):
        _fail("", f"expected an ItfTrace, got a {_type_name(trace)}")
    vars_ = _check_names(trace.vars, ("", "vars"), "variable")
    params = _check_names(trace.params, ("", "params"), "parameter")
    for i, name in enumerate(params):
        if name in vars_:
            _fail((("", "params"), i), f"{name!r} is both a parameter and a variable")
    states = trace.states
    if not isinstance(states, tuple) or not states:
        _fail(("", "states"), "a trace needs a non-empty tuple of states")
    state_meta = trace.state_meta
    if not isinstance(state_meta, tuple) or len(state_meta) != len(states):
        _fail(("", "states"), f"state_meta must be a tuple of {len(states)} dict(s)")
    if not isinstance(trace.meta, dict):
        _fail(("", "#meta"), f"meta must be a dict, got a {_type_name(trace.meta)}")

    doc: dict[str, Any] = {}
    if trace.meta:
        doc["#meta"] = _json_copy(trace.meta, ("", "#meta"))
    if params:
        doc["params"] = list(params)
    doc["vars"] = list(vars_)
    out_states: list[dict[str, Any]] = []
    for i, state in enumerate(states):
        path: _Path = (("", "states"), i)
        if not isinstance(state, Mapping):
            _fail(path, f"expected a dict from variable names to values, got a {_type_name(state)}")
        if "#meta" in state:
            _fail((path, "#meta"), "put state metadata in ItfTrace.state_meta, not in the state")
        present = _check_state_keys(state, path, vars_, params, i == 0)
        obj: dict[str, Any] = {}
        smeta = state_meta[i]
        if not isinstance(smeta, dict):
            _fail((path, "#meta"), f"state metadata must be a dict, got a {_type_name(smeta)}")
        if smeta:
            obj["#meta"] = _json_copy(smeta, (path, "#meta"))
        for name in (*present, *vars_):
            obj[name] = _enc(state[name], (path, name))
        out_states.append(obj)
    doc["states"] = out_states
    if trace.loop is not None:
        _check_loop(trace.loop, len(states))
        doc["loop"] = int(trace.loop)
    return doc


def from_itf(obj: Any, *, source: str | None = None) -> ItfTrace:
    """The trace in the ITF JSON document ``obj``; strict, raises :class:`ItfError`.

    ``source`` (a file name) is put in front of error messages.
    """
    try:
        return _from_itf(obj)
    except ItfError as error:
        error._set_source(source)
        raise
    except RecursionError:
        raise ItfError("document is nested too deeply", path="$", source=source) from None


def _from_itf(obj: Any) -> ItfTrace:
    if not isinstance(obj, dict):
        _fail("", f"expected a JSON object (an ITF trace), got {_describe(obj)}")
    for key in obj:
        if not isinstance(key, str):
            _fail("", f"object key {key!r} is not a string")
        if key.startswith("#") and key != "#meta":
            _fail(("", key), "unknown reserved top-level key (only '#meta' is allowed)")
    for key in ("vars", "states"):
        if key not in obj:
            _fail("", f"missing required key {key!r}")
    if not isinstance(obj["vars"], list):
        _fail(("", "vars"), f"expected an array of names, got {_describe(obj['vars'])}")
    vars_ = _check_names(obj["vars"], ("", "vars"), "variable")
    params: tuple[str, ...] = ()
    if "params" in obj:
        if not isinstance(obj["params"], list):
            _fail(("", "params"), f"expected an array, got {_describe(obj['params'])}")
        params = _check_names(obj["params"], ("", "params"), "parameter")
        for i, name in enumerate(params):
            if name in vars_:
                _fail((("", "params"), i), f"{name!r} is both a parameter and a variable")
    meta: dict[str, Any] = {}
    if "#meta" in obj:
        if not isinstance(obj["#meta"], dict):
            _fail(("", "#meta"), f"expected an object, got {_describe(obj['#meta'])}")
        meta = _json_copy(obj["#meta"], ("", "#meta"))
    raw_states = obj["states"]
    if not isinstance(raw_states, list):
        _fail(("", "states"), f"expected an array of states, got {_describe(raw_states)}")
    if not raw_states:
        _fail(("", "states"), "a trace needs at least one state")
    states: list[dict[str, Any]] = []
    state_meta: list[dict[str, Any]] = []
    for i, raw in enumerate(raw_states):
        path: _Path = (("", "states"), i)
        if not isinstance(raw, dict):
            _fail(path, f"expected a state object, got {_describe(raw)}")
        present = _check_state_keys(raw, path, vars_, params, i == 0)
        smeta: dict[str, Any] = {}
        if "#meta" in raw:
            if not isinstance(raw["#meta"], dict):
                _fail((path, "#meta"), f"expected an object, got {_describe(raw['#meta'])}")
            smeta = _json_copy(raw["#meta"], (path, "#meta"))
        states.append({name: _dec(raw[name], (path, name), False) for name in (*present, *vars_)})
        state_meta.append(smeta)
    loop: int | None = None
    if "loop" in obj:
        _check_loop(obj["loop"], len(states))
        loop = int(obj["loop"])
    return ItfTrace(
        vars=vars_,
        states=tuple(states),
        meta=meta,
        state_meta=tuple(state_meta),
        params=params,
        loop=loop,
    )


# --------------------------------------------------------------------------- files


def dumps_itf(trace: ItfTrace) -> str:
    """The ITF file text of ``trace``: JSON, indent 2, trailing newline, deterministic."""
    return json.dumps(to_itf(trace), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _BadConstant(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _reject_constant(name: str) -> NoReturn:
    raise _BadConstant(name)


def loads_itf(data: bytes | str, *, source: str | None = None) -> ItfTrace:
    """The trace in the ITF text ``data`` (UTF-8 bytes or a string).

    Invalid UTF-8, invalid JSON (with line and column), duplicate object keys,
    ``NaN``/``Infinity`` and every structural problem raise :class:`ItfError`
    prefixed with ``source`` when given.
    """
    return from_itf(parse_json_strict(data, source=source), source=source)


def parse_json_strict(data: bytes | str, *, source: str | None = None) -> Any:
    """Parse JSON text strictly: UTF-8 only, no duplicate keys, no ``NaN``/``Infinity``.

    Every problem raises :class:`ItfError` naming ``source``, with line and column
    for syntax errors.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            raise ItfError(
                f"invalid UTF-8 at byte offset {exc.start}", source=source, line=line, column=column
            ) from None
    elif isinstance(data, str):
        text = data
    else:
        raise ItfError(f"expected bytes or str, got {_type_name(data)}", source=source)
    try:
        obj = json.loads(text, object_pairs_hook=_strict_object, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ItfError(
            f"invalid JSON: {_json_error_text(exc, text)}", source=source, line=exc.lineno,
            column=exc.colno
        ) from None
    except _DuplicateKey as exc:
        raise ItfError(
            f"invalid JSON: duplicate key {exc.key!r} in an object", source=source
        ) from None
    except _BadConstant as exc:
        raise ItfError(f"invalid JSON: {exc.name} is not a JSON number", source=source) from None
    except (ValueError, RecursionError) as exc:  # too many digits / too deeply nested
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ItfError(f"invalid JSON: {reason}", source=source) from None
    return obj


def _json_error_text(exc: json.JSONDecodeError, text: str) -> str:
    """The decoder's complaint as a whole sentence, saying so when the text ends early
    (a truncated file): ``json`` reports an unterminated string as "Unterminated
    string starting at" and leaves the position to the caller."""
    if exc.msg.startswith("Unterminated string"):
        return ("a string that starts here is never closed: the text ends inside it "
                "(is the file truncated?)")
    if exc.pos >= len(text.rstrip()) and text.strip():
        return f"{exc.msg} where the text ends (is the file truncated?)"
    return exc.msg


def dump_itf(trace: ItfTrace, path: str | os.PathLike[str]) -> None:
    """Write ``trace`` to ``path`` atomically (a temp file in the same directory, then
    ``os.replace``), as UTF-8 with indent 2 and a trailing newline.

    Raises :class:`ItfError` (naming the file) when the trace is not valid ITF;
    I/O errors propagate as ``OSError``.
    """
    target = os.fspath(path)
    name = os.fsdecode(target)
    try:
        data = dumps_itf(trace).encode("utf-8")
    except ItfError as error:
        error._set_source(name)
        raise
    atomic_write(target, data)


def load_itf(path: str | os.PathLike[str]) -> ItfTrace:
    """Read the ITF trace file ``path``; every failure is an :class:`ItfError` naming it."""
    name = os.fsdecode(os.fspath(path))
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise ItfError(f"cannot read the file: {exc.strerror or exc}", source=name) from exc
    return loads_itf(data, source=name)
