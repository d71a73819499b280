"""Constants, finite index sets and the finite types of state variables.

A spec declares constants (:class:`Const`), index sets (:class:`Ids`) and state
variables typed by finite domains (:class:`Bool`, :class:`Int`, :class:`Enum`,
:class:`Array`, :class:`SetOf`). Bounds may refer to constants, so they are
*deferred* until the constants are bound; :func:`resolve` does that.

For example::

    class Counter(Spec):
        Max = Const(3)
        Procs = Ids(1, 2)
        x = Int(0, Max)
        pc = Array(Procs, Enum(Pc), init=Pc.IDLE)
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import SpecDefinitionError

__all__ = [
    "Const",
    "Deferred",
    "Ids",
    "Type",
    "Bool",
    "Int",
    "Enum",
    "Array",
    "SetOf",
    "Ref",
    "resolve",
    "Cell",
]


class Deferred:
    """A value computed from the bound constants, e.g. ``N + 1``."""

    def __init__(self, fn: Callable[[Mapping[str, Any]], Any], text: str) -> None:
        self._fn = fn
        self._text = text

    def evaluate(self, consts: Mapping[str, Any]) -> Any:
        return self._fn(consts)

    def __repr__(self) -> str:
        return self._text

    def _binop(self, other: Any, op: Callable[[Any, Any], Any], sym: str, rev: bool) -> Deferred:
        def fn(c: Mapping[str, Any]) -> Any:
            a, b = resolve(self, c), resolve(other, c)
            return op(b, a) if rev else op(a, b)

        text = f"({other!r} {sym} {self!r})" if rev else f"({self!r} {sym} {other!r})"
        return Deferred(fn, text)

    def __add__(self, o: Any) -> Deferred:
        return self._binop(o, operator.add, "+", False)

    def __radd__(self, o: Any) -> Deferred:
        return self._binop(o, operator.add, "+", True)

    def __sub__(self, o: Any) -> Deferred:
        return self._binop(o, operator.sub, "-", False)

    def __rsub__(self, o: Any) -> Deferred:
        return self._binop(o, operator.sub, "-", True)

    def __mul__(self, o: Any) -> Deferred:
        return self._binop(o, operator.mul, "*", False)

    def __rmul__(self, o: Any) -> Deferred:
        return self._binop(o, operator.mul, "*", True)


class Const(Deferred):
    """A model constant with a default value, overridable when the spec is bound.

    Inside actions, ``self.Name`` is the bound value; in declarations the
    constant itself stands for its value (``Int(0, MaxLog)``).
    """

    def __init__(self, default: int | bool, *, doc: str = "", min: int | None = None,
                 max: int | None = None) -> None:
        if not isinstance(default, int):
            raise SpecDefinitionError(
                f"Const default must be an int or bool, got {type(default).__name__} "
                f"{default!r}."
            )
        self.name = "<unnamed>"
        self.default = default
        self.doc = doc
        self.min = min
        self.max = max
        super().__init__(lambda c: c[self.name], "<const>")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self._text = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return instance.constants[self.name]

    @property
    def kind(self) -> type:
        return bool if isinstance(self.default, bool) else int


def resolve(value: Any, consts: Mapping[str, Any]) -> Any:
    """Evaluate a possibly deferred value against bound constants."""
    if isinstance(value, Deferred):
        return value.evaluate(consts)
    return value


class Ids:
    """A finite, contiguous set of integer identities ``lo..hi`` (inclusive).

    Used to index arrays (``Array(Brokers, ...)``) and to range action
    parameters (``@action(b=Brokers)``). ``self.Brokers`` inside a bound spec
    is the concrete ``range``.
    """

    def __init__(self, lo: int | Deferred, hi: int | Deferred, *, doc: str = "") -> None:
        self.lo = lo
        self.hi = hi
        self.doc = doc
        self.name = "<ids>"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return self.bind(instance.constants)

    def bind(self, consts: Mapping[str, Any]) -> range:
        lo, hi = int(resolve(self.lo, consts)), int(resolve(self.hi, consts))
        return range(lo, hi + 1)

    def __repr__(self) -> str:
        return f"{self.name}={self.lo!r}..{self.hi!r}"


@dataclass(frozen=True)
class Cell:
    """One scalar slot of the state layout: a variable, or one element of an array."""

    index: int
    var: str
    path: tuple[int, ...]
    lo: int
    size: int
    kind: str  # "bool" | "int" | "enum" | "set"
    labels: tuple[str, ...] | None = None
    #: name of the Ids set whose members this cell holds (Ref) or whose subset it is (SetOf)
    ref: str | None = None

    @property
    def hi(self) -> int:
        return self.lo + self.size - 1

    @property
    def name(self) -> str:
        return self.var + "".join(f"[{i}]" for i in self.path)


class Type:
    """A finite type of a state variable (or of an array element)."""

    init: Any = None
    #: the spec line where the variable was declared, filled in by Spec
    decl_line: str = "<unknown>"

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class BoundType:
    """A type with its constants resolved: knows its cells and how to show values."""

    #: the Ids set name this type refers to (Ref values, SetOf members), if any
    ref: str | None = None

    def cells(self) -> list[tuple[tuple[int, ...], int, int, str, tuple[str, ...] | None]]:
        """(path, lo, size, kind, labels) for each scalar cell, in layout order."""
        raise NotImplementedError

    def default(self) -> Any:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class Bool(Type):
    """``TRUE``/``FALSE``; one bit."""

    def __init__(self, *, init: bool = False) -> None:
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        return _BoundScalar(0, 2, "bool", None, bool(resolve(self.init, consts)), "BOOLEAN")

    def describe(self) -> str:
        return "BOOLEAN"


class Int(Type):
    """An integer in ``lo..hi`` (inclusive); either bound may be a constant expression."""

    def __init__(self, lo: int | Deferred, hi: int | Deferred, *, init: Any = None) -> None:
        self.lo = lo
        self.hi = hi
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        lo, hi = int(resolve(self.lo, consts)), int(resolve(self.hi, consts))
        if hi < lo:
            raise SpecDefinitionError(
                f"Int({self.lo!r}, {self.hi!r}) is empty with these constants ({lo}..{hi})."
            )
        init = lo if self.init is None else int(resolve(self.init, consts))
        return _BoundScalar(lo, hi - lo + 1, "int", None, init, f"{lo}..{hi}")

    def describe(self) -> str:
        return f"{self.lo!r}..{self.hi!r}"


class Ref(Type):
    """A member of an index set, or ``none`` (default 0) for "no member": e.g. a leader.

    Like ``Int`` but typed: under symmetry reduction the values are permuted
    together with the index set.
    """

    def __init__(self, ids: Ids, *, none: int | None = 0, init: Any = None) -> None:
        if not isinstance(ids, Ids):
            raise SpecDefinitionError(f"Ref(...) takes an Ids(...) set, got {ids!r}.")
        self.ids = ids
        self.none = none
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        r = self.ids.bind(consts)
        lo, hi = r.start, r.stop - 1
        if self.none is not None:
            if self.none != r.start - 1:
                raise SpecDefinitionError(
                    f"Ref({self.ids.name}, none={self.none}): 'none' must be {r.start - 1}, "
                    "just below the index set."
                )
            lo = self.none
        init = lo if self.init is None else int(resolve(self.init, consts))
        b = _BoundScalar(lo, hi - lo + 1, "int", None, init,
                         f"{self.ids.name}" + (f" \\cup {{{self.none}}}" if self.none is not None
                                              else ""))
        b.ref = self.ids.name
        return b

    def describe(self) -> str:
        return self.ids.name + (f" + {{{self.none}}}" if self.none is not None else "")


class Enum(Type):
    """One value of a Python ``enum.IntEnum`` whose values are ``0..k-1``.

    Values are shown by name in traces; in expressions they are plain ints, so
    ``s.state[b] == BState.RUNNING`` works on one state and on a batch.
    """

    def __init__(self, enum_cls: type[enum.IntEnum], *, init: Any = None) -> None:
        if not (isinstance(enum_cls, type) and issubclass(enum_cls, enum.IntEnum)):
            raise SpecDefinitionError(
                f"Enum(...) takes an enum.IntEnum class, got {enum_cls!r}."
            )
        values = sorted(int(m) for m in enum_cls)
        if values != list(range(len(values))):
            raise SpecDefinitionError(
                f"Enum {enum_cls.__name__} must have the values 0..{len(values) - 1}, "
                f"has {values}."
            )
        self.enum_cls = enum_cls
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        members = sorted(self.enum_cls, key=int)
        labels = tuple(m.name for m in members)
        init = 0 if self.init is None else int(resolve(self.init, consts))
        return _BoundScalar(0, len(labels), "enum", labels, init,
                            "{" + ", ".join(labels) + "}")

    def describe(self) -> str:
        return "{" + ", ".join(m.name for m in self.enum_cls) + "}"


class SetOf(Type):
    """A subset of a small index set, stored as a bitmask (bit ``i - lo`` for id ``i``).

    In expressions the value is the integer mask; use :func:`modelcheck.has`,
    :func:`modelcheck.with_`, :func:`modelcheck.without` and
    :func:`modelcheck.count` to work with it.
    """

    def __init__(self, universe: Ids, *, init: Iterable[int] | Deferred = ()) -> None:
        self.universe = universe
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        ids = self.universe.bind(consts)
        if len(ids) > 62:
            raise SpecDefinitionError(
                f"SetOf({self.universe!r}) has {len(ids)} elements; at most 62 are supported."
            )
        mask = 0
        for i in resolve(self.init, consts):
            mask |= 1 << (int(i) - ids.start)
        b = _BoundSet(ids, mask)
        b.ref = self.universe.name
        return b

    def describe(self) -> str:
        return f"SUBSET {self.universe.name}"


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
        return _BoundArray(ids, elem, init, self.index.name)

    def describe(self) -> str:
        return f"[{self.index.name} -> {self.elem.describe()}]"


class _BoundScalar(BoundType):
    def __init__(self, lo: int, size: int, kind: str, labels: tuple[str, ...] | None,
                 init: Any, text: str) -> None:
        self.lo, self.size, self.kind, self.labels = lo, size, kind, labels
        self.init = int(init)
        self.text = text

    def cells(self) -> list[tuple[tuple[int, ...], int, int, str, tuple[str, ...] | None]]:
        return [((), self.lo, self.size, self.kind, self.labels)]

    def default(self) -> Any:
        return bool(self.init) if self.kind == "bool" else self.init

    def describe(self) -> str:
        return self.text


class _BoundSet(BoundType):
    def __init__(self, ids: range, mask: int) -> None:
        self.ids = ids
        self.mask = mask

    def cells(self) -> list[tuple[tuple[int, ...], int, int, str, tuple[str, ...] | None]]:
        return [((), 0, 1 << len(self.ids), "set", tuple(str(i) for i in self.ids))]

    def default(self) -> Any:
        return self.mask

    def describe(self) -> str:
        return f"SUBSET {self.ids.start}..{self.ids.stop - 1}"


class _BoundArray(BoundType):
    def __init__(self, ids: range, elem: BoundType, init: Any, index_name: str) -> None:
        self.ids = ids
        self.elem = elem
        self.init = init
        self.index_name = index_name

    def cells(self) -> list[tuple[tuple[int, ...], int, int, str, tuple[str, ...] | None]]:
        out = []
        for i in self.ids:
            for path, lo, size, kind, labels in self.elem.cells():
                out.append(((i, *path), lo, size, kind, labels))
        return out

    def default(self) -> Any:
        if self.init is not None:
            return {i: self.init for i in self.ids}
        return {i: self.elem.default() for i in self.ids}

    def describe(self) -> str:
        return f"[{self.index_name} -> {self.elem.describe()}]"
