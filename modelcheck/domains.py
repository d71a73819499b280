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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import codec
from .errors import SpecDefinitionError, SpecEvaluationError
from .itfvalues import FrozenMap, freeze
from .itfvalues import Record as RecordData
from .values import (
    BagValue,
    FunctionValue,
    RecordValue,
    SeqValue,
    SetValue,
    SparseSetValue,
    UnionValue,
    Value,
    all_rows,
    as_int,
    record_field_problem,
    select,
)

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
    "Record",
    "Seq",
    "Bag",
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
    "BoundSetChunk",
    "BoundSparseSet",
    "BoundSparseSlot",
    "BoundRecord",
    "BoundSeq",
    "BoundSeqLen",
    "BoundBag",
    "BoundBagCount",
    "BoundArray",
    "BoundFunction",
    "as_leaf",
    "refuse_sparse_sets",
    "Union",
    "BoundUnion",
    "MAX_ELEMENTS",
    "ValueKindError",
    "ValueDomainError",
]


class Deferred:
    """A value computed from the bound constants, e.g. ``N + 1``."""

    def __init__(self, fn: Callable[[Mapping[str, Any]], Any],
                 text: str | Callable[[], str]) -> None:
        self._fn = fn
        #: the text, or how to make it when shown (a constant is named only when its
        #: class body ends, after ``N - 1`` in that body was computed)
        self._text = text

    def evaluate(self, consts: Mapping[str, Any]) -> Any:
        return self._fn(consts)

    def __repr__(self) -> str:
        return self._text if isinstance(self._text, str) else self._text()

    def _binop(self, other: Any, op: Callable[[Any, Any], Any], sym: str, rev: bool) -> Deferred:
        def fn(c: Mapping[str, Any]) -> Any:
            a, b = resolve(self, c), resolve(other, c)
            return op(b, a) if rev else op(a, b)

        def text() -> str:
            return f"({other!r} {sym} {self!r})" if rev else f"({self!r} {sym} {other!r})"

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
    path: tuple[int | str, ...]
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
        return self.var + "".join(_path_part(p) for p in self.path)


def _path_part(p: int | str) -> str:
    """A cell path component as text: ``[1]`` (an index), ``.clock`` (a record field or
    the length of a sequence), ``[<<1, 2>>]`` (a bag element, already bracketed)."""
    if isinstance(p, int):
        return f"[{p}]"
    return p if p.startswith("[") else "." + p


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

    def parts(self) -> tuple[Type, ...]:
        """The declared types this one is built of (elements, fields), for checks that
        walk a variable's type when its spec is defined."""
        return ()


def _type_parts(*elems: Any) -> tuple[Type, ...]:
    return tuple(e for e in elems if isinstance(e, Type))


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
    conversions, display and symmetry of that cell) or a structure of them: an array
    (:class:`BoundArray`), or a compound value (:class:`BoundSet`, :class:`BoundRecord`,
    :class:`BoundSeq`, :class:`BoundBag`).

    Every type but an array is a *leaf*: an array's elements are leaves, and a
    variable that is not an array is one. A leaf owns its whole value, over all its
    cells (``codes`` below are the leaf's cell codes in layout order):

    * :meth:`value` / :meth:`codes`: the checker's Python value (or, with ``itf``, the
      trace value) of codes, and back (lenient); :meth:`codes_from_itf` (strict, as
      :meth:`ScalarType.from_itf`); :meth:`show` as a user reads it;
    * :meth:`view` / :meth:`columns`: the expression value of code columns (a number,
      or a :class:`~modelcheck.values.Value` with the type's operations), and back;
    * :meth:`index_of` / :meth:`value_at`: the position of a value among the type's
      :attr:`n_values` values (sets and bags store one bit or count per value);
    * :meth:`cells_permutation`: how symmetry permutes the leaf's cells.
    """

    #: the Ids set name this type refers to (Ref values, SetOf members), if any
    ref: str | None = None

    @abstractmethod
    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        """``(path, scalar type)`` of each cell, in layout order (path ``()`` for a scalar)."""

    @abstractmethod
    def default(self) -> Any:
        """The declared initial value, as ``Spec.initial_values`` and expressions see it."""

    @abstractmethod
    def describe(self) -> str:
        """The domain as text, for ``inspect``: ``0..3``, ``SUBSET 1..3``."""

    # -- a leaf's whole value ---------------------------------------------------
    @property
    def n_cells(self) -> int:
        return len(self.cells())

    @property
    def n_values(self) -> int:
        """How many values the type has (the product of its cells' sizes)."""
        n = 1
        for _, t in self.cells():
            n *= t.size
        return n

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        """The Python value (the trace value with ``itf``) of the leaf's cell codes."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def codes(self, value: Any) -> list[int]:
        """The cell codes of a Python value (lenient); raises ValueError."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def codes_from_itf(self, value: Any) -> list[int]:
        """The cell codes of a trace value; strict: :class:`ValueKindError` or
        :class:`ValueDomainError`."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        """The value of codes as a user reads it (compact with ``short``)."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def view(self, cols: Sequence[Any]) -> Any:
        """The expression value of the leaf's code columns (or scalars)."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def columns(self, value: Any) -> list[Any]:
        """Code columns (or scalars) of an expression value or a Python literal of the
        type; raises :class:`~modelcheck.errors.SpecEvaluationError` for anything else."""
        raise NotImplementedError(f"{type(self).__name__} is not a leaf type")

    def zero(self) -> Any:
        """The expression value whose codes are all the cells' first codes."""
        return self.view([t.lo for _, t in self.cells()])

    def value_of(self, x: Any) -> Any:
        """``x`` (an expression value or a literal) as an expression value of the type."""
        return self.view(self.columns(x))

    def equal(self, a: Any, b: Any) -> Any:
        """``a = b`` for two values of the type, element-wise on batches."""
        return all_rows([as_int(x) == as_int(y) for x, y in zip(self.columns(a),
                                                                   self.columns(b))])

    def index_of(self, x: Any) -> tuple[Any, Any]:
        """``(index, outside)``: the position of value ``x`` among the type's values (mixed
        radix over the cells, the first most significant) and whether ``x`` lies outside
        the type; Python ints and bools when ``x`` is a constant, columns otherwise."""
        cols = self.columns(x)
        if all(isinstance(c, int) for c in cols):
            # a constant (a message literal tested against a set of a batch): plain
            # Python arithmetic over the cached radices, no numpy scalar per cell
            pos, out = 0, False
            for (size, lo, hi), c in zip(self._radices(), cols):
                c = int(c)
                pos = pos * size + (c - lo)
                out = out or c < lo or c > hi
            return pos, out
        idx: Any = 0
        outside: Any = False
        for (_, t), c in zip(self.cells(), cols):
            c = as_int(c)
            idx = idx * t.size + (c - t.lo)
            outside = outside | (c < t.lo) | (c > t.hi)
        if isinstance(outside, np.bool_):
            outside = bool(outside)
        if isinstance(idx, np.integer):
            idx = int(idx)
        return idx, outside

    def _radices(self) -> list[tuple[int, int, int]]:
        """``(size, lo, hi)`` of each cell, computed once (a bound type's cells are fixed)."""
        radices: list[tuple[int, int, int]] | None = self.__dict__.get("_radix_cache")
        if radices is None:
            radices = [(t.size, t.lo, t.hi) for _, t in self.cells()]
            self.__dict__["_radix_cache"] = radices
        return radices

    def value_at(self, idx: Any) -> Any:
        """The expression value at position ``idx`` (the inverse of :meth:`index_of`)."""
        cols: list[Any] = []
        for _, t in reversed(self.cells()):
            cols.append(idx % t.size + t.lo)
            idx = idx // t.size
        return self.view(cols[::-1])

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """How permutations ``pis`` of symmetric id sets map the columns of the leaf's
        cells, or None when no value changes (default: each cell by its own type)."""
        fns: list[tuple[int, Callable[[np.ndarray], np.ndarray]]] = []
        for k, (_, t) in enumerate(self.cells()):
            f = t.permutation(pis)
            if f is not None:
                fns.append((k, f))
        if not fns:
            return None

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            out = list(cols)
            for k, f in fns:
                out[k] = f(cols[k])
            return out

        return apply



    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        """:meth:`cells_permutation` for several permutations at once (symmetry applies
        them all to a batch in one pass), or None when none changes a value: a function
        of a block of the leaf's codes ``(q, cells, m)`` (int64), ``q`` being 1 (the same
        codes for every permutation) or ``len(many)``, to the moved codes
        ``(len(many), cells, m)``. Default: each permutation's :meth:`cells_permutation`
        in turn; the types of this module override it with one numpy pass over all."""
        fns = [self.cells_permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None

        def apply(block: np.ndarray) -> np.ndarray:
            out = np.empty((len(fns),) + block.shape[1:], dtype=np.int64)
            for p, f in enumerate(fns):
                part = block[min(p, len(block) - 1)]
                out[p] = part if f is None else np.stack(
                    [np.asarray(c, dtype=np.int64) for c in f(list(part))])
            return out

        return apply

#: a scalar cell with at most this many codes is permuted through a lookup table
_LUT_CODES = 1 << 16


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
    #: expressions see the code itself (else the value :meth:`view` makes of it)
    plain: bool = True

    def __init__(self, lo: int, size: int, init: int, text: str) -> None:
        self.lo, self.size, self.init, self.text = lo, size, int(init), text

    @property
    def hi(self) -> int:
        return self.lo + self.size - 1

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        return [((), self)]

    def default(self) -> Any:
        return self.init

    def describe(self) -> str:
        return self.text

    # -- a leaf's whole value: one cell
    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        return self.to_itf(int(codes[0])) if itf else self.to_python(int(codes[0]))

    def codes(self, value: Any) -> list[int]:
        return [self.from_python(value)]

    def codes_from_itf(self, value: Any) -> list[int]:
        return [self.from_itf(value)]

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        return self.display_short(int(codes[0])) if short else self.display(int(codes[0]))

    def view(self, cols: Sequence[Any]) -> Any:
        c = cols[0]
        if self.boolean and getattr(c, "dtype", None) != np.bool_:
            return np.asarray(c).astype(bool) if isinstance(c, np.ndarray) else np.bool_(c)
        return c

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, Value):
            raise SpecEvaluationError(
                f"a {value._type.describe()} value where a value of {self.text} is expected")
        return [value]

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fn = self.permutation(pis)
        if fn is None:
            return None
        return lambda cols: [fn(cols[0])]


    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fns = [self.permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None
        if self.size > _LUT_CODES:
            return super().cells_permutations(many)
        # one table of the moved code per permutation and code: a lookup for them all
        codes = np.arange(self.lo, self.lo + self.size, dtype=np.int64)
        lut = np.stack([codes if f is None else np.asarray(f(codes), dtype=np.int64)
                        for f in fns])
        rows = np.arange(len(fns), dtype=np.int64)[:, None]
        lo = self.lo

        def apply(block: np.ndarray) -> np.ndarray:
            return lut[rows, block[:, 0, :] - lo][:, None, :]

        return apply

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        """What an action did when it stored ``value`` outside the domain in cell ``name``
        (``"appends to q beyond its capacity 3"``), or None for the generic message."""
        return None

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


def refuse_sparse_sets(bound: BoundType, what: str) -> None:
    """Refuse a type that holds a ``SetOf(..., max_size=k)`` where the engine numbers
    the type's values (a set or bag element, a union shape, an action parameter)."""
    for _, t in bound.cells():
        if isinstance(t, BoundSparseSlot):
            raise SpecDefinitionError(
                f"{what} holds {t.owner.describe()}, a SetOf(..., max_size=k): a set "
                "stored as member codes has no position among the values of its type, "
                "which the elements of a set or bag, the shapes of a union and the "
                "values of an action parameter need (they are numbered). Declare that "
                "set without max_size (a bit vector, at most "
                f"{MAX_ELEMENTS} elements), or keep it in a state variable, a record "
                "field or a Seq instead.")


def _elem_text(elem: Any) -> str:
    return elem.name if isinstance(elem, Ids) else elem.describe()


#: the most values a SetOf or Bag element type may have (one bit or count cell each)
MAX_ELEMENTS = 4096


class SetOf(Type):
    """A subset of a finite type: ``SUBSET Procs``, ``SUBSET (0..7)``, a set of records.

    The element type is an ``Ids`` set or any type but an array (ints, enums, booleans,
    records). In expressions the value is a set value holding element values
    (``s.holders.has(p)`` for id ``p``, ``with_``, ``without``, ``|``, ``&``, ``-``,
    ``<=``, ``size()``, ``is_empty()``, ``min()``, ``max()``, ``choose()``; see
    :class:`~modelcheck.values.SetValue`), stored as one bit per element value.
    ``init`` lists the initial members.

    ``max_size=k`` stores the set instead as at most ``k`` member codes, sorted (one
    encoding per set value), each of ``ceil(log2(|T| + 1))`` bits: the form for an
    element type of more than ``MAX_ELEMENTS`` (4,096) values (a set of records over a
    large product), or for one much larger than the sets a spec holds. Storing a
    ``k + 1``-th member is a spec error, as exceeding an ``Int`` bound is.
    """

    def __init__(self, elem: Ids | Type, *, init: Iterable[Any] | Deferred = (),
                 max_size: int | Deferred | None = None) -> None:
        self.elem = elem
        self.init = init
        self.max_size = max_size

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        elem = _element_type(self.elem, consts, f"SetOf({_elem_text(self.elem)})")
        refuse_sparse_sets(elem, f"the element type of SetOf({_elem_text(self.elem)})")
        k = resolve(self.max_size, consts)
        t: BoundSet
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise SpecDefinitionError(
                    f"SetOf({_elem_text(self.elem)}, max_size={k!r}): max_size is the most "
                    "members a value of the set may hold, a positive integer.")
            t = BoundSparseSet(elem, f"SUBSET {elem.describe()}", k)
        elif elem.n_values > MAX_ELEMENTS:
            raise SpecDefinitionError(
                f"SetOf({_elem_text(self.elem)}) has {elem.n_values} possible elements; at "
                f"most {MAX_ELEMENTS} are supported as a bit vector (one bit per possible "
                "element). Give the most members a value may hold, "
                f"SetOf({_elem_text(self.elem)}, max_size=k), to store each value as at "
                f"most k sorted member codes of {max(1, elem.n_values.bit_length())} bits.")
        else:
            t = BoundSet(elem, f"SUBSET {elem.describe()}")
        try:
            t.init = frozenset(freeze(elem.value(elem.codes(v))) for v in
                               resolve(self.init, consts))
            t.codes(t.init)
        except (ValueError, TypeError) as e:
            raise SpecDefinitionError(f"SetOf(...) init: {e}") from None
        return t

    def describe(self) -> str:
        if self.max_size is not None:
            return f"SUBSET {_elem_text(self.elem)} (max_size {self.max_size})"
        return f"SUBSET {_elem_text(self.elem)}"

    def parts(self) -> tuple[Type, ...]:
        return _type_parts(self.elem)


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


class Seq(Type):
    """A sequence of at most ``capacity`` elements of a type: ``Seq(Msg, 3)``.

    In expressions the value is a sequence value (``len()``, ``append(x)``, ``head()``,
    ``tail()``, ``at(i)`` (1-based), ``set_at(i, x)``, ``last()``, ``prefix(n)``,
    ``drop(n)``, ``concat(r)``, ``contains(x)``, ``index_of(x)``; see
    :class:`~modelcheck.values.SeqValue`); a list literal is a sequence. Storing a
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


class Bag(Type):
    """A multiset (TLA+ ``Bags``) of a finite type, each element at most ``max_count``
    times: ``Bag(Msg, 2)`` for a channel that may duplicate and reorder.

    In expressions: ``count(x)``, ``has(x)``, ``add(x)``, ``remove(x)``, ``+``, ``-``,
    ``<=``, ``size()``, ``is_empty()``, ``support()``, ``choose()`` (see
    :class:`~modelcheck.values.BagValue`). Storing a count above ``max_count`` is a
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


def _first_ref(t: BoundType) -> str | None:
    for _, c in t.cells():
        if c.ref is not None:
            return c.ref
    return None


def _index_permutation(elem: BoundType, pis: Mapping[str, Mapping[int, int]]
                       ) -> list[int] | None:
    """Where a permutation sends each value index of ``elem`` (None: nowhere else)."""
    fn = elem.cells_permutation(pis)
    if fn is None:
        return None
    idx = np.arange(elem.n_values, dtype=np.int64)
    cols = elem.columns(elem.value_at(idx))
    moved = fn([np.asarray(as_int(c), dtype=np.int64) for c in cols])
    to, _ = elem.index_of(elem.view(moved))
    return [int(x) for x in np.asarray(to)]


def _split(codes: Sequence[Any], types: Sequence[BoundType]) -> list[list[Any]]:
    out, k = [], 0
    for t in types:
        n = t.n_cells
        out.append(list(codes[k:k + n]))
        k += n
    return out


class BoundSetChunk(ScalarType):
    """One cell of a set: bit ``b`` is element value number ``first + b`` of the set's
    element type. A set of at most 62 values is one such cell."""

    kind = "set"

    def __init__(self, owner: BoundSet, first: int, width: int, init: int) -> None:
        single = width == owner.elem.n_values
        super().__init__(0, 1 << width, init, owner.text if single else
                         f"bits {first}..{first + width - 1} of {owner.text}")
        self.owner, self.first, self.width = owner, first, width
        self.ref = owner.ref
        self.labels = tuple(owner.elem.show(owner.elem.codes(owner.elem.value(
            _codes_at(owner.elem, first + b)))) for b in range(width))

    def _members(self, code: int) -> list[int]:
        return [self.first + b for b in range(self.width) if code >> b & 1]

    def to_python(self, code: int) -> Any:
        e = self.owner.elem
        return frozenset(freeze(e.value(_codes_at(e, i))) for i in self._members(code))

    def from_python(self, value: Any) -> int:
        if self.owner.n_cells == 1:
            return self.owner.codes(value)[0]
        return super().from_python(value)

    def from_itf(self, value: Any) -> int:
        if self.owner.n_cells == 1:
            return self.owner.codes_from_itf(value)[0]
        raise ValueKindError("the whole set")

    def display(self, code: int) -> str:
        if code < 0:
            return f"<{code}: an element outside the set's universe>"
        e = self.owner.elem
        return "{" + ", ".join(e.show(_codes_at(e, i)) for i in self._members(code)) + "}"

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        if value < 0:
            var = name[:-6] if name.endswith(".bits0") else name
            return (f"adds to {var} an element outside its element type "
                    f"{self.owner.elem.describe()}")
        return None


def _index_of_codes(t: BoundType, codes: Sequence[int]) -> tuple[int, bool]:
    """The value index of a leaf's codes and whether a code lies outside its cell."""
    idx, outside = 0, False
    for (_, c), v in zip(t.cells(), codes):
        idx = idx * c.size + (int(v) - c.lo)
        outside = outside or not c.lo <= int(v) <= c.hi
    return idx, outside


def _codes_at(t: BoundType, idx: int) -> list[int]:
    out: list[int] = []
    for _, c in reversed(t.cells()):
        out.append(idx % c.size + c.lo)
        idx //= c.size
    return out[::-1]


class BoundSet(BoundType):
    """A subset of the values of ``elem``: bit ``i`` (of chunks of 62 bits) is the value
    at position ``i`` (:meth:`BoundType.index_of`). Python and trace values are
    ``frozenset``\\ s of element values; ``codes`` also takes any list or tuple of
    distinct elements (and, for a set of at most 62 values, the mask itself)."""

    chunk_bits = 62

    def __init__(self, elem: BoundType, text: str) -> None:
        self.elem = elem
        self.text = text
        self.ref = _first_ref(elem)
        self.init: frozenset[Any] = frozenset()
        #: the element values built so far, by position (see :meth:`member_value`)
        self._member_values: dict[int, Any] = {}
        n = elem.n_values
        w = self.chunk_bits
        self.chunk_widths = [min(w, n - k) for k in range(0, n, w)] or [1]
        self.width = n
        self._chunks = [BoundSetChunk(self, k * w, cw, 0)
                        for k, cw in enumerate(self.chunk_widths)]

    def member_value(self, i: int) -> Any:
        """The element value at position ``i`` (a constant), built once per position: the
        members a quantifier over a set value visits
        (:meth:`modelcheck.values.SetValue.members`)."""
        x = self._member_values.get(i)
        if x is None:
            x = self._member_values[i] = self.elem.value_at(i)
        return x

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        if len(self._chunks) == 1:
            return [((), self._chunks[0])]
        return [((f"bits{k}",), c) for k, c in enumerate(self._chunks)]

    def default(self) -> Any:
        return self.init

    def describe(self) -> str:
        return self.text

    def _members(self, codes: Sequence[int]) -> list[int]:
        w = self.chunk_bits
        return [k * w + b for k, c in enumerate(codes) for b in range(self.chunk_widths[k])
                if int(c) >> b & 1]

    def value(self, codes: Sequence[int], *, itf: bool = False) -> Any:
        e = self.elem
        return frozenset(freeze(e.value(_codes_at(e, i), itf=itf)) for i in self._members(codes))

    def _from_members(self, idxs: Iterable[int]) -> list[int]:
        out = [0] * len(self.chunk_widths)
        for i in idxs:
            out[i // self.chunk_bits] |= 1 << (i % self.chunk_bits)
        return out

    def codes(self, value: Any) -> list[int]:
        if isinstance(value, (list, tuple, set, frozenset)):
            idxs = []
            for m in value:
                try:
                    idx, outside = _index_of_codes(self.elem, self.elem.codes(m))
                except (ValueError, TypeError, SpecEvaluationError):
                    raise ValueError(f"{m!r} is not in its universe") from None
                if outside:
                    raise ValueError(f"{m!r} is not in its universe")
                idxs.append(idx)
            return self._from_members(idxs)
        if len(self.chunk_widths) == 1 and isinstance(value, int) and not isinstance(value, bool):
            return [value]
        raise ValueError(f"{value!r} is not a value of {self.text}")

    def codes_from_itf(self, value: Any) -> list[int]:
        if not isinstance(value, (frozenset, set, list, tuple)):
            raise ValueKindError("a set")
        seen: set[int] = set()
        for m in value:
            try:
                idx, _ = _index_of_codes(self.elem, self.elem.codes_from_itf(m))
            except (ValueKindError, ValueDomainError):
                raise ValueDomainError(
                    f"= {codec.text(value)} has member {codec.text(m)} outside "
                    f"{self._universe_text()}") from None
            if idx in seen:
                raise ValueDomainError(f"= {codec.text(value)} has member "
                                       f"{codec.text(m)} twice")
            seen.add(idx)
        return self._from_members(seen)

    def _universe_text(self) -> str:
        if self.elem.n_values <= 16:
            return self.show(self._from_members(range(self.elem.n_values)))
        return self.elem.describe()

    def show(self, codes: Sequence[int], *, short: bool = False) -> str:
        e = self.elem
        return "{" + ", ".join(e.show(_codes_at(e, i), short=short)
                               for i in self._members(codes)) + "}"

    def view(self, cols: Sequence[Any]) -> Any:
        return SetValue(self, list(cols))

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, SetValue):
            if value._type.width != self.width:
                raise SpecEvaluationError(
                    f"a {value._type.describe()} value where a {self.text} value is expected")
            if not self._same_form(value._type):
                return self._converted(value)
            return value._columns()
        if isinstance(value, (set, frozenset, list, tuple)):
            out = self.empty_value()
            for m in value:
                out = out.with_(m)
            return out._columns()
        if isinstance(value, Value):
            raise SpecEvaluationError(
                f"a {value._type.describe()} value where a {self.text} value is expected")
        raise SpecEvaluationError(
            f"{value!r} where a {self.text} value is expected: use a set value (a SetOf "
            "variable, its operations) or a set literal of elements; since SetOf holds "
            "element values, bit masks are not sets")

    def _same_form(self, other: BoundSet) -> bool:
        """Whether values of ``other`` (a set type of as many elements) are stored as
        this type's are, so that their columns serve as they are."""
        return not isinstance(other, BoundSparseSet)

    def empty_value(self) -> SetValue:
        """The empty set, as a value of this type."""
        return SetValue(self, [0] * len(self.chunk_widths))

    def _convert_value(self, value: SetValue) -> SetValue:
        """A set value of the same element type stored in another form (bit vector,
        member codes, another max_size) as a value of this type, built member by
        member: the cost scales with the members present."""
        out = self.empty_value()
        for x, inside in value.members():
            grown = out._select(inside, out.with_(x), swap=True)
            assert isinstance(grown, SetValue)
            out = grown
        return out._marked(value.bad)

    def _converted(self, value: SetValue) -> list[Any]:
        return self._convert_value(value)._columns()

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        to = _index_permutation(self.elem, pis)
        if to is None:
            return None
        return _sparse_set_permutation(np.asarray(to, dtype=np.int64), self.chunk_bits,
                                       list(self.chunk_widths))



    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        tos = [_index_permutation(self.elem, pis) for pis in many]
        if all(t is None for t in tos):
            return None
        n = self.width
        to = np.stack([np.arange(n, dtype=np.int64) if t is None
                       else np.asarray(t, dtype=np.int64) for t in tos])
        return _sparse_sets_permutation(to, self.chunk_bits, len(self.chunk_widths))

def _dense_set_permutation(to: np.ndarray, w: int, widths: list[int]
                           ) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The set cells' permutation moving element ``i`` to ``to[i]``, as one gather over an
    ``(n, elements)`` bit matrix: the reference the sparse path is tested against."""
    # the bit of element j of the result is the bit of element src[j] of the argument
    src = np.empty(len(to), dtype=np.int64)
    src[to] = np.arange(len(to))
    shifts = [np.arange(k, dtype=np.int64) for k in widths]

    def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
        bits = np.concatenate(
            [(np.asarray(c, dtype=np.int64)[..., None] >> sh) & 1
             for c, sh in zip(cols, shifts)], axis=-1)[..., src]
        return [np.sum(bits[..., k * w:k * w + len(sh)] << sh, axis=-1).astype(
            np.asarray(c).dtype) for k, (c, sh) in enumerate(zip(cols, shifts))]

    return apply


#: the last batch of set cells whose members were listed, and the list: every permutation
#: of one canonicalisation lists the same (unmoved) cells, so it is listed once
_members_memo: tuple[tuple[np.ndarray, ...], int, tuple[np.ndarray, np.ndarray]] | None = None


def _set_members(cols: list[np.ndarray], w: int) -> tuple[np.ndarray, np.ndarray]:
    """The members present in a batch of set cells: flat state numbers and element indices
    (chunk ``k``'s bit ``b`` is element ``k * w + b``), one pair per set bit."""
    global _members_memo
    memo = _members_memo
    if memo is not None and memo[1] == w and len(memo[0]) == len(cols) and all(
            x is y for x, y in zip(memo[0], cols)):
        return memo[2]
    kc = len(cols)
    grid = np.stack([np.asarray(c).reshape(-1).astype("<i8") for c in cols], axis=-1)
    nz = np.flatnonzero(grid)
    # the 64 bits of each nonzero chunk, little-endian: cost scales with the members
    # present instead of with the element type's size
    words = np.ascontiguousarray(grid.reshape(-1)[nz])
    bits = np.unpackbits(words.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    r, b = np.nonzero(bits)
    cell = nz[r]
    out = (cell // kc, (cell % kc) * w + b.astype(np.int64))
    _members_memo = (tuple(cols), w, out)
    return out


def _sparse_set_permutation(to: np.ndarray, w: int, widths: list[int]
                            ) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """The set cells' permutation moving element ``i`` to ``to[i]``, moving only the bits
    of the members present (the same cells as :func:`_dense_set_permutation`)."""
    kc = len(widths)
    chunk_of = to // w
    bit_of = np.left_shift(np.int64(1), to % w)

    def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
        arrs = [np.asarray(c) for c in cols]
        shape = arrs[0].shape
        rows, elems = _set_members(arrs, w)
        out = np.zeros(arrs[0].size * kc, dtype=np.int64)
        # distinct members of one set land on distinct bits: adding them is or-ing them
        np.add.at(out, rows * kc + chunk_of[elems], bit_of[elems])
        grid = out.reshape(-1, kc)
        return [grid[:, k].reshape(shape).astype(a.dtype) for k, a in enumerate(arrs)]

    return apply


def _chunk_bits(words: np.ndarray, where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The set bits of nonzero chunks ``words`` (non-negative int64), as ``(where[j],
    bit)`` pairs: the lowest set bit of every chunk at once, cleared, until none is
    left, so the passes are as many as a chunk holds members."""
    cells: list[np.ndarray] = []
    bits: list[np.ndarray] = []
    while len(words):
        low = words & -words
        cells.append(where)
        bits.append(np.bitwise_count(low - 1).astype(np.int64))
        words = words ^ low
        left = words != 0
        words, where = words[left], where[left]
    return np.concatenate(cells), np.concatenate(bits)


def _sparse_sets_permutation(to: np.ndarray, w: int, kc: int
                             ) -> Callable[[np.ndarray], np.ndarray]:
    """Several set permutations at once: permutation ``p`` moves element ``i`` to
    ``to[p, i]``; a block of set cells ``(q, kc, m)`` (``q`` 1 or the number of
    permutations) to ``(permutations, kc, m)``. Only the bits of the members present
    move: the members are listed once per block (for ``q == 1``, once for every
    permutation), each sent to its chunk and bit under every permutation by one
    scatter."""
    n_perms = len(to)
    chunk_of = to // w
    bit_of = np.left_shift(np.int64(1), to % w)

    def apply(block: np.ndarray) -> np.ndarray:
        q, _, m = block.shape
        # rows (permutation copy, state) by chunk: the members of the nonzero chunks
        grid = np.ascontiguousarray(block.transpose(0, 2, 1), dtype="<i8").reshape(-1)
        nz = np.flatnonzero(grid)
        out = np.zeros(n_perms * m * kc, dtype=np.int64)
        if len(nz):
            cell, b = _chunk_bits(grid[nz], nz)
            row = cell // kc  # permutation copy * m + state
            elem = (cell % kc) * w + b
            if q == 1:
                perm = np.arange(n_perms, dtype=np.int64)[:, None]
                row = perm * m + row[None, :]
                elem = np.broadcast_to(elem, row.shape)
            else:
                perm = row // m
            # distinct members of one set land on distinct bits: adding them is or-ing
            np.add.at(out, row * kc + chunk_of[perm, elem], bit_of[perm, elem])
        return out.reshape(n_perms, m, kc).transpose(0, 2, 1)

    return apply


class BoundSparseSlot(ScalarType):
    """One member slot of a set stored as member codes (``SetOf(T, max_size=k)``): the
    position of a member among ``T``'s values, or ``|T|``, the code of an empty slot
    (the largest, so that a value's slots sorted ascending hold its members first)."""

    kind = "setslot"

    def __init__(self, owner: BoundSparseSet, slot: int) -> None:
        n = owner.elem.n_values
        super().__init__(0, n + 1, n, f"slot {slot} of {owner.describe()}")
        self.owner, self.slot = owner, slot
        self.ref = owner.ref

    def to_python(self, code: int) -> Any:
        e = self.owner.elem
        return None if code == self.owner.empty else freeze(e.value(_codes_at(e, code)))

    def from_itf(self, value: Any) -> int:
        raise ValueKindError("the whole set")

    def display(self, code: int) -> str:
        if code == self.owner.empty:
            return "(empty)"
        if not 0 <= code < self.owner.empty:
            return f"<{code}: outside the slot's codes>"
        e = self.owner.elem
        return e.show(_codes_at(e, code))

    def explain_out_of_domain(self, name: str, value: int) -> str | None:
        var = name.rsplit(".slot", 1)[0]
        k = self.owner.max_size
        if value > self.hi:
            return (f"adds to {var} a member beyond its max_size {k} ({var} is a "
                    f"SetOf({self.owner.elem.describe()}, max_size={k}), which holds at "
                    f"most {k} members)")
        if value < 0:
            return (f"adds to {var} an element outside its element type "
                    f"{self.owner.elem.describe()}")
        return None


class BoundSparseSet(BoundSet):
    """A subset of the values of ``elem`` holding at most ``max_size`` members, stored as
    ``max_size`` cells (:class:`BoundSparseSlot`): the members' positions
    (:meth:`BoundType.index_of`) sorted ascending, then the empty code ``|elem|`` in
    the slots left. A set value has one encoding, so equal packed states are equal
    sets. The cost is ``max_size * ceil(log2(|elem| + 1))`` bits whatever the element
    type's size: the form for element types beyond ``MAX_ELEMENTS`` (4,096) values.
    Python and trace values are ``frozenset``\\ s of element values, as for
    :class:`BoundSet`."""

    def __init__(self, elem: BoundType, text: str, max_size: int) -> None:
        self.elem = elem
        self.text = text
        self.ref = _first_ref(elem)
        self.init = frozenset()
        self._member_values = {}
        self.max_size = max_size
        self.width = elem.n_values
        #: the code of an empty slot
        self.empty = elem.n_values
        self._slots = [BoundSparseSlot(self, i) for i in range(max_size)]
        self._sizes: dict[int, BoundSparseSet] = {}

    def cells(self) -> list[tuple[tuple[int | str, ...], ScalarType]]:
        return [((f"slot{i}",), c) for i, c in enumerate(self._slots)]

    def describe(self) -> str:
        return f"{self.text} (max_size {self.max_size})"

    def _same_form(self, other: BoundSet) -> bool:
        return isinstance(other, BoundSparseSet) and other.max_size == self.max_size

    def sized(self, max_size: int) -> BoundSparseSet:
        """This type with room for ``max_size`` members (at least this type's): the type
        of an operand or an intermediate value that is never stored as it is."""
        max_size = max(max_size, self.max_size)
        if max_size == self.max_size:
            return self
        t = self._sizes.get(max_size)
        if t is None:
            t = self._sizes[max_size] = BoundSparseSet(self.elem, self.text, max_size)
            t._member_values = self._member_values
        return t

    def empty_value(self) -> SetValue:
        return SparseSetValue(self, [self.empty] * self.max_size)

    def _members(self, codes: Sequence[int]) -> list[int]:
        return [int(c) for c in codes if 0 <= int(c) < self.empty]

    def literal(self, value: Iterable[Any]) -> SetValue:
        """A set literal (elements, constants or not) as a value in as many slots as it
        has elements (at least this type's): constant elements are placed at once,
        sorted, others added one by one."""
        items = list(value)
        t = self.sized(len(items))
        fixed: set[int] = set()
        bad = False
        rest = []
        for m in items:
            idx, outside = self.elem.index_of(m)
            if isinstance(idx, int) and isinstance(outside, bool):
                if outside:
                    bad = True
                else:
                    fixed.add(idx)
            else:
                rest.append(m)
        codes = sorted(fixed) + [self.empty] * (t.max_size - len(fixed))
        out: SetValue = SparseSetValue(t, [np.int64(c) for c in codes], np.bool_(bad)
                                       if bad else False)
        for m in rest:
            out = out.with_(m)
        return out

    def _from_members(self, idxs: Iterable[int]) -> list[int]:
        out = sorted(set(idxs))
        if len(out) > self.max_size:
            raise ValueError(f"{len(out)} members, more than the max_size {self.max_size} "
                             f"of {self.describe()}")
        return out + [self.empty] * (self.max_size - len(out))

    def codes(self, value: Any) -> list[int]:
        if isinstance(value, (list, tuple, set, frozenset)):
            return super().codes(value)
        raise ValueError(f"{value!r} is not a value of {self.describe()}")

    def codes_from_itf(self, value: Any) -> list[int]:
        if isinstance(value, (frozenset, set, list, tuple)) and len(value) > self.max_size:
            raise ValueDomainError(
                f"= {codec.text(value)} has {len(value)} members, more than its max_size "
                f"{self.max_size}")
        return super().codes_from_itf(value)

    def _universe_text(self) -> str:
        return self.elem.describe()

    def view(self, cols: Sequence[Any]) -> Any:
        return SparseSetValue(self, list(cols))

    def columns(self, value: Any) -> list[Any]:
        if isinstance(value, (set, frozenset, list, tuple)):
            lit = self.literal(value)
            return lit._columns() if lit._type is self else self._converted(lit)
        return super().columns(value)

    def _moved(self, fn: Callable[[list[np.ndarray]], list[np.ndarray]], mat: np.ndarray
               ) -> np.ndarray:
        """Member codes ``mat`` (any shape) moved by ``fn`` (the element type's cells
        permutation), then sorted along the last axis: only the distinct members
        present are mapped."""
        u, inv = np.unique(mat, return_inverse=True)
        to = u.copy()
        real = (u >= 0) & (u < self.empty)
        if real.any():
            e = self.elem
            cols = e.columns(e.value_at(u[real]))
            moved = fn([np.asarray(as_int(c), dtype=np.int64) for c in cols])
            idx, _ = e.index_of(e.view(moved))
            to[real] = np.asarray(idx, dtype=np.int64)
        return np.sort(to[inv].reshape(mat.shape), axis=-1)

    def cells_permutation(self, pis: Mapping[str, Mapping[int, int]]
                          ) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        fn = self.elem.cells_permutation(pis)
        if fn is None:
            return None

        def apply(cols: list[np.ndarray]) -> list[np.ndarray]:
            arrs = [np.asarray(c) for c in cols]
            mat = np.stack([a.astype(np.int64) for a in arrs], axis=-1)
            out = self._moved(fn, mat)
            return [out[..., i].astype(a.dtype) for i, a in enumerate(arrs)]

        return apply

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fns = [self.elem.cells_permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None

        def apply(block: np.ndarray) -> np.ndarray:
            q, k, m = block.shape
            out = np.empty((len(fns), k, m), dtype=np.int64)
            for p, f in enumerate(fns):
                part = np.asarray(block[min(p, q - 1)], dtype=np.int64)
                out[p] = part if f is None else self._moved(f, part.T).T
            return out

        return apply


def _gather_cells(src: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Cells moved by several permutations: cell ``j`` of the result under permutation
    ``p`` is cell ``src[p, j]`` of the block ``(q, cells, m)`` (``q`` 1 or the number of
    permutations)."""
    rows = np.arange(len(src), dtype=np.int64)[:, None]

    def apply(block: np.ndarray) -> np.ndarray:
        if len(block) == 1:
            return block[0][src]
        return block[rows, src]

    return apply


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
        parts = _split(cols, self._types)
        return RecordValue(self, {k: t.view(p) for (k, t), p in zip(self.fields.items(), parts)})

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

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        tos = [_index_permutation(self.elem, pis) for pis in many]
        if all(t is None for t in tos):
            return None
        n = self.elem.n_values
        src = np.empty((len(tos), n), dtype=np.int64)
        for p, t in enumerate(tos):
            src[p, np.arange(n) if t is None else np.asarray(t)] = np.arange(n)
        return _gather_cells(src)


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
    :class:`~modelcheck.values.FunctionValue` in expressions (``f[i]``,
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

    def cells_permutations(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                           ) -> Callable[[np.ndarray], np.ndarray] | None:
        fn = self.elem.cells_permutations(many)
        pis = [pis.get(self.index_name) for pis in many]
        if fn is None and all(pi is None for pi in pis):
            return None
        k, ids = self._k, list(self.ids)
        e = len(ids)
        # slot d of the result under permutation p holds the (moved) slot src[p, d]
        src = np.empty((len(many), e), dtype=np.int64)
        for p, pi in enumerate(pis):
            dest = [ids.index(pi.get(i, i)) if pi is not None else j
                    for j, i in enumerate(ids)]
            src[p, dest] = np.arange(e)
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
