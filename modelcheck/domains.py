"""Constants, finite index sets and the finite types of state variables.

A spec declares constants (:class:`Const`), index sets (:class:`Ids`) and state
variables typed by finite domains (:class:`Bool`, :class:`Int`, :class:`Enum`,
:class:`Array`, :class:`SetOf`). Bounds may refer to constants, so they are
*deferred* until the constants are bound; :func:`resolve` does that.

A declared :class:`Type` binds (``Type.bound(constants)``) to a :class:`BoundType`,
which owns its cells: a :class:`ScalarType` is one cell and owns everything about
its values (Python and trace conversion, display, symmetry), a :class:`BoundArray`
is a structure of them. The rest of the engine delegates to these objects and never
switches on a type's kind, so a new type is one ``Type`` subclass and one
``ScalarType`` subclass (``tests/test_types.py`` defines one outside the package).

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
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
    "BoundType",
    "ScalarType",
    "BoundBool",
    "BoundInt",
    "BoundRef",
    "BoundEnum",
    "BoundSet",
    "BoundArray",
    "ValueKindError",
    "ValueDomainError",
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
    """One scalar slot of the state layout: a variable, or one element of an array.

    ``type`` is the :class:`ScalarType` that owns the cell's values: their conversion,
    display and symmetry. ``kind`` and ``labels`` describe it (for ``inspect``,
    checkpoints and tools); no behaviour switches on them.
    """

    index: int
    var: str
    path: tuple[int, ...]
    lo: int
    size: int
    kind: str  # the owning type's short name: "bool", "int", "enum", "set", ...
    labels: tuple[str, ...] | None = None
    #: name of the Ids set whose members this cell holds (Ref) or whose subset it is (SetOf)
    ref: str | None = None
    type: ScalarType | None = field(default=None, compare=False, repr=False)

    @property
    def hi(self) -> int:
        return self.lo + self.size - 1

    @property
    def name(self) -> str:
        return self.var + "".join(f"[{i}]" for i in self.path)


class Type:
    """A finite type of a state variable (or of an array element), as declared.

    :meth:`bound` resolves the constants and returns the :class:`BoundType` that does
    the work.
    """

    init: Any = None
    #: the spec line where the variable was declared, filled in by Spec
    decl_line: str = "<unknown>"

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class ValueKindError(ValueError):
    """A trace value has the wrong kind or shape for its type (a list for a boolean).

    ``expected`` says what the type accepts: ``"a boolean"``, ``"one of IDLE, BUSY"``.
    """

    def __init__(self, expected: str) -> None:
        super().__init__(f"expected {expected}")
        self.expected = expected


class ValueDomainError(ValueError):
    """A trace value of the right kind lies outside its type's domain.

    ``str(error)`` continues a variable path: ``"= 99 is outside its domain 0..4"``.
    """


class BoundType(ABC):
    """A type with its constants resolved: it owns its cells.

    A bound type is either a :class:`ScalarType` (one cell, which owns the value
    conversions, display and symmetry of that cell) or a structure of them
    (:class:`BoundArray`).
    """

    #: the Ids set name this type refers to (Ref values, SetOf members), if any
    ref: str | None = None

    @abstractmethod
    def cells(self) -> list[tuple[tuple[int, ...], ScalarType]]:
        """``(path, scalar type)`` of each cell, in layout order (path ``()`` for a scalar)."""

    @abstractmethod
    def default(self) -> Any:
        """The declared initial value, as ``Spec.initial_values`` and expressions see it."""

    @abstractmethod
    def describe(self) -> str:
        """The domain as text, for ``inspect``: ``0..3``, ``SUBSET 1..3``."""


class ScalarType(BoundType):
    """A bound type stored in one cell, whose codes are ``lo .. lo + size - 1``.

    Codes are the integers that expressions compute with and that the layout packs
    into words (hot paths never call these methods per state). Everything else about
    a value belongs to the subclass:

    * :meth:`to_python` / :meth:`from_python`: the checker's Python value (traces in
      results, ``values_from_cells``, ``init_states``); ``from_python`` is lenient and
      also accepts the code itself;
    * :meth:`to_itf` / :meth:`from_itf`: the trace value (the Python value model of
      :mod:`modelcheck.trace.itf`); ``from_itf`` is strict (trace replay) and raises
      :class:`ValueKindError` or :class:`ValueDomainError`;
    * :meth:`display` (and :meth:`display_short` for graph labels);
    * :meth:`permutation`: how symmetry permutes a column of codes.

    A new type is a :class:`Type` whose ``bound`` returns a new subclass of this class.
    """

    #: a short name for descriptions (``Cell.kind``), e.g. "int"
    kind: str = "int"
    #: expressions see the cell as a boolean (``np.bool_``) rather than an integer
    boolean: bool = False
    #: names of the codes lo.. in order, when the values have names (enum members)
    labels: tuple[str, ...] | None = None

    def __init__(self, lo: int, size: int, init: int, text: str) -> None:
        self.lo, self.size, self.init, self.text = lo, size, int(init), text

    @property
    def hi(self) -> int:
        return self.lo + self.size - 1

    def cells(self) -> list[tuple[tuple[int, ...], ScalarType]]:
        return [((), self)]

    def default(self) -> Any:
        return self.init

    def describe(self) -> str:
        return self.text

    def to_python(self, code: int) -> Any:
        """The checker's Python value of ``code`` (default: the integer itself)."""
        return code

    def from_python(self, value: Any) -> int:
        """The code of a Python value (default: an integer, unchecked); raises ValueError."""
        if isinstance(value, (bool, int)):
            return int(value)
        raise ValueError(f"{value!r} is not a value of {self.text}")

    def to_itf(self, code: int) -> Any:
        """The trace (ITF) value of ``code`` (default: :meth:`to_python`)."""
        return self.to_python(code)

    @abstractmethod
    def from_itf(self, value: Any) -> int:
        """The code of a trace value; strict: :class:`ValueKindError` for a value of the
        wrong kind, :class:`ValueDomainError` for one outside the domain."""

    def display(self, code: int) -> str:
        """``code`` as a user reads it (default: the integer)."""
        return str(code)

    def display_short(self, code: int) -> str:
        """A compact :meth:`display`, for state graph labels."""
        return self.display(code)

    def permutation(self, pis: Mapping[str, Mapping[int, int]]
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
        """How permutations ``pis`` (``{Ids set name: {id: id}}``) of symmetric index sets
        map a column of this cell's codes, or None when values do not change."""
        return None

    def _check_int(self, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueKindError(f"an integer in {self.lo}..{self.hi}")
        if not self.lo <= value <= self.hi:
            raise ValueDomainError(f"= {value} is outside its domain {self.lo}..{self.hi}")
        return value


class Bool(Type):
    """``TRUE``/``FALSE``; one bit."""

    def __init__(self, *, init: bool = False) -> None:
        self.init = init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        return BoundBool(0, 2, bool(resolve(self.init, consts)), "BOOLEAN")

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
        return BoundInt(lo, hi - lo + 1, init, f"{lo}..{hi}")

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
        text = self.ids.name + (f" \\cup {{{self.none}}}" if self.none is not None else "")
        return BoundRef(lo, hi - lo + 1, init, text, self.ids.name)

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
        return BoundEnum(labels, init, "{" + ", ".join(labels) + "}")

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
        return BoundSet(ids, mask, self.universe.name)

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
        return BoundArray(ids, elem, init, self.index.name)

    def describe(self) -> str:
        return f"[{self.index.name} -> {self.elem.describe()}]"


class BoundBool(ScalarType):
    """``BOOLEAN``: code 0 is FALSE, 1 is TRUE."""

    kind = "bool"
    boolean = True

    def default(self) -> Any:
        return bool(self.init)

    def to_python(self, code: int) -> Any:
        return bool(code)

    def from_itf(self, value: Any) -> int:
        if not isinstance(value, bool):
            raise ValueKindError("a boolean")
        return int(value)

    def display(self, code: int) -> str:
        return "TRUE" if code else "FALSE"

    def display_short(self, code: int) -> str:
        return "T" if code else "F"


class BoundInt(ScalarType):
    """An integer in ``lo..hi``; the code is the value."""

    def from_itf(self, value: Any) -> int:
        return self._check_int(value)


class BoundRef(BoundInt):
    """A member of the Ids set ``ref`` (or its ``none`` just below); symmetry maps it."""

    def __init__(self, lo: int, size: int, init: int, text: str, ref: str) -> None:
        super().__init__(lo, size, init, text)
        self.ref = ref

    def permutation(self, pis: Mapping[str, Mapping[int, int]]
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
        if self.ref is None or self.ref not in pis:
            return None
        pi, lo = pis[self.ref], self.lo
        lut = np.array([pi.get(v, v) for v in range(lo, self.hi + 1)], dtype=np.int64)
        return lambda col: lut[col - lo]


class BoundEnum(ScalarType):
    """A member of an ``IntEnum`` with values ``0..k-1``; shown and traced by name."""

    kind = "enum"

    def __init__(self, labels: tuple[str, ...], init: int, text: str) -> None:
        super().__init__(0, len(labels), init, text)
        self.labels = labels

    def _names(self) -> tuple[str, ...]:
        return self.labels or ()

    def to_python(self, code: int) -> Any:
        names = self._names()
        return names[code] if 0 <= code < len(names) else code

    def from_python(self, value: Any) -> int:
        if isinstance(value, str):
            if value not in self._names():
                raise ValueError(f"{value!r} is not a value of its domain")
            return self._names().index(value)
        return super().from_python(value)

    def from_itf(self, value: Any) -> int:
        names = self._names()
        if not isinstance(value, str):
            raise ValueKindError("one of " + ", ".join(names))
        if value not in names:
            raise ValueDomainError(f"= {value} is not one of {', '.join(names)}")
        return names.index(value)

    def display(self, code: int) -> str:
        return str(self.to_python(code))


class BoundSet(ScalarType):
    """A subset of the ids ``ids``: bit ``i - ids.start`` of the code is member ``i``.

    The Python and trace value is a ``frozenset`` of ids; ``from_python`` and
    ``from_itf`` also accept any list or tuple of distinct ids (and ``from_python``
    the mask itself).
    """

    kind = "set"

    def __init__(self, ids: range, mask: int, ref: str) -> None:
        super().__init__(0, 1 << len(ids), mask, f"SUBSET {ids.start}..{ids.stop - 1}")
        self.ids = ids
        self.ref = ref
        self.labels = tuple(str(i) for i in ids)

    def to_python(self, code: int) -> Any:
        return frozenset(i for b, i in enumerate(self.ids) if code >> b & 1)

    def set_members(self, code: Any) -> list[tuple[int, Any]]:
        """``(id, in_set)`` for every id of the universe, ``code`` being one mask or a
        column of masks (the set-valued expression protocol of :mod:`modelcheck.expr`)."""
        return [(i, (code >> b) & 1 == 1) for b, i in enumerate(self.ids)]

    def from_python(self, value: Any) -> int:
        if isinstance(value, (list, tuple, set, frozenset)):
            mask = 0
            for member in value:
                if isinstance(member, bool) or not isinstance(member, int) \
                        or member not in self.ids:
                    raise ValueError(f"{member!r} is not in its universe")
                mask |= 1 << (member - self.ids.start)
            return mask
        return super().from_python(value)

    def from_itf(self, value: Any) -> int:
        if not isinstance(value, (frozenset, set, list, tuple)):
            raise ValueKindError("a set")
        mask = 0
        for m in value:
            if isinstance(m, bool) or not isinstance(m, int) or m not in self.ids:
                raise ValueDomainError(f"= {self._show(value)} has member {self._show(m)} "
                                       f"outside {self.display(self.size - 1)}")
            bit = 1 << (m - self.ids.start)
            if mask & bit:
                raise ValueDomainError(f"= {self._show(value)} has member {m} twice")
            mask |= bit
        return mask

    @staticmethod
    def _show(v: Any) -> str:
        if isinstance(v, (frozenset, set)):
            return "{" + ", ".join(sorted((BoundSet._show(x) for x in v),
                                          key=lambda x: (len(x), x))) + "}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(BoundSet._show(x) for x in v) + "]"
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        return str(v)

    def display(self, code: int) -> str:
        return "{" + ", ".join(str(i) for b, i in enumerate(self.ids) if code >> b & 1) + "}"

    def permutation(self, pis: Mapping[str, Mapping[int, int]]
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
        if self.ref is None or self.ref not in pis:
            return None
        pi, lo = pis[self.ref], self.ids.start
        bits = [(i - lo, pi[i] - lo) for i in self.ids]

        def apply(col: np.ndarray) -> np.ndarray:
            acc = np.zeros_like(col)
            for frm, to in bits:
                acc |= ((col >> frm) & 1) << to
            return acc

        return apply


class BoundArray(BoundType):
    """A function from the index set ``ids`` (named ``index_name``) to ``elem``.

    Its cells are its elements' cells, indexed first by ``i`` in ``ids``; values are
    ``{index: element value}`` maps (see :class:`~modelcheck.layout.Layout`).
    """

    def __init__(self, ids: range, elem: BoundType, init: Any, index_name: str) -> None:
        self.ids = ids
        self.elem = elem
        self.init = init
        self.index_name = index_name

    def cells(self) -> list[tuple[tuple[int, ...], ScalarType]]:
        return [((i, *path), t) for i in self.ids for path, t in self.elem.cells()]

    def default(self) -> Any:
        if self.init is not None:
            return {i: self.init for i in self.ids}
        return {i: self.elem.default() for i in self.ids}

    def describe(self) -> str:
        return f"[{self.index_name} -> {self.elem.describe()}]"
