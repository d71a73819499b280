"""The shared base of the types: constants, index sets, the declared and bound type
bases, and the expression value base.

A spec declares constants (:class:`Const`), index sets (:class:`Ids`) and state
variables typed by finite domains (see :mod:`modelcheck.types`). Bounds may refer to
constants, so they are *deferred* until the constants are bound; :func:`resolve` does
that. A declared :class:`Type` binds (``Type.bound(constants)``) to a
:class:`BoundType`, which owns its cells; a :class:`ScalarType` is one cell.

A variable of a compound type is seen by spec code as a :class:`Value`: it holds one
code column per cell of its type (columns or scalars, so the same object serves both
evaluators) and implements the type's operations as numpy over those columns.
"""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import SpecDefinitionError, SpecEvaluationError

__all__ = [
    "Const",
    "Deferred",
    "Ids",
    "Type",
    "resolve",
    "Cell",
    "BoundType",
    "ScalarType",
    "ValueKindError",
    "ValueDomainError",
    "Value",
    "select",
    "as_int",
    "any_rows",
    "all_rows",
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
      or a :class:`~modelcheck.types.base.Value` with the type's operations), and back;
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

    def normal_columns(self, cols: Sequence[Any]) -> list[Any]:
        """The columns that the value :meth:`view` makes of ``cols`` gives back
        (``columns(view(cols))``), without building that value where the type knows
        them (a record read from a state and written back unchanged)."""
        return self.columns(self.view(cols))

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

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        """:meth:`cells_permutations` with one permutation per column: a function of a
        block of the leaf's codes ``(cells, m)`` (int64) and ``which`` ``(m,)`` (indices
        into ``many``) to the codes of column ``j`` moved by permutation ``which[j]``
        (symmetry applies a few chosen permutations to each state), or None when no
        permutation changes a value. Default: each permutation's
        :meth:`cells_permutation` on the columns that use it; the types that override
        :meth:`cells_permutations` with one numpy pass override this one too."""
        fns = [self.cells_permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None
        return _paired_in_turn(fns)


def _paired_in_turn(fns: Sequence[Callable[[list[np.ndarray]], list[Any]] | None]
                    ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Per-permutation cells functions applied column group by column group: the
    columns using permutation ``p`` go through ``fns[p]`` (None: unchanged)."""

    def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
        out = np.array(block, dtype=np.int64)
        for p in np.flatnonzero(np.bincount(which, minlength=len(fns))).tolist():
            f = fns[p]
            if f is None:
                continue
            cols = np.flatnonzero(which == p)
            moved = f([block[j, cols] for j in range(len(block))])
            for j, c in enumerate(moved):
                out[j, cols] = np.asarray(as_int(c), dtype=np.int64)
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

    def normal_columns(self, cols: Sequence[Any]) -> list[Any]:
        return [self.view(cols)]  # (a subclass whose view makes a Value overrides it)

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

    def cells_permutations_paired(self, many: Sequence[Mapping[str, Mapping[int, int]]]
                                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        fns = [self.permutation(pis) for pis in many]
        if all(f is None for f in fns):
            return None
        if self.size > _LUT_CODES:
            return super().cells_permutations_paired(many)
        codes = np.arange(self.lo, self.lo + self.size, dtype=np.int64)
        lut = np.stack([codes if f is None else np.asarray(f(codes), dtype=np.int64)
                        for f in fns])
        lo = self.lo

        def apply(block: np.ndarray, which: np.ndarray) -> np.ndarray:
            return lut[which, block[0] - lo][None]

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


def _elem_text(elem: Any) -> str:
    return elem.name if isinstance(elem, Ids) else elem.describe()


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


def _index_permutations(elem: BoundType, many: Sequence[Mapping[str, Mapping[int, int]]]
                        ) -> np.ndarray | None:
    """:func:`_index_permutation` of several permutations at once: ``(len(many),
    elem.n_values)``, row ``p`` where permutation ``p`` sends each value index (None
    when no permutation moves a value)."""
    fn = elem.cells_permutations(many)
    if fn is None:
        return None
    n = elem.n_values
    idx = np.arange(n, dtype=np.int64)
    cols = elem.columns(elem.value_at(idx))
    block = np.stack([np.broadcast_to(np.asarray(as_int(c), dtype=np.int64), (n,))
                      for c in cols])[None]
    moved = fn(block)  # (permutations, cells, n)
    k = moved.shape[1]
    flat = moved.transpose(1, 0, 2).reshape(k, -1)
    to, _ = elem.index_of(elem.view([flat[j] for j in range(k)]))
    return np.asarray(to, dtype=np.int64).reshape(len(many), n)


def _split(codes: Sequence[Any], types: Sequence[BoundType]) -> list[list[Any]]:
    out, k = [], 0
    for t in types:
        n = t.n_cells
        out.append(list(codes[k:k + n]))
        k += n
    return out


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


def _batch_len(xs: Sequence[Any]) -> int | None:
    """The number of rows of the first column among ``xs`` (None: all scalars)."""
    for x in xs:
        if isinstance(x, np.ndarray) and x.ndim == 1:
            return len(x)
    return None


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
