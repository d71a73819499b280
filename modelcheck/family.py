"""Evaluating an action family over (parameter values x states) in one call.

An action declared ``@action(i=Cells)`` has one instance per parameter value, and
the per-instance evaluator calls it once per instance and batch. When the batch is
small and the family large (a level of a few states, thousands of instances),
those calls are the whole cost. :func:`call_family` instead calls the action once
with every parameter a column of values, shape ``(P, 1)`` (one row per instance),
over a batch view whose state columns have shape ``(n,)``: numpy broadcasting
evaluates the guard and the assignments on the ``(P, n)`` grid of (instance,
state) pairs, and ``s.flag[i]`` gathers each row's element.

Exactness comes first. The grid evaluation is only an attempt: :func:`call_family`
returns ``None`` whenever it cannot vouch that every instance would evaluate
exactly as it does on its own (the action raised, the parameter was used in a way
an int and an array do not agree on, a result has the wrong type or shape), and
the kernel then evaluates those instances one by one, which also produces the spec
errors with their usual messages. What keeps the two evaluations equal:

* A parameter is a :class:`ParamArray`. Arithmetic and comparisons on it (numpy
  ufuncs) and ``where`` keep that type; everything an int cannot do, or does
  differently (``if i:``, ``len``, iteration, reductions over the parameter axis,
  other numpy functions), raises.
* An index that depends on a parameter must lie inside the index set, as an int
  index must (outside it raises); an index that is a state value alone reads the
  first element when outside, as it does on a batch.
* A write through a parameter index (``t.flag[i] = v``) is a per-row *scatter*;
  a read of the next state that such a write may have changed, or a second write
  to a cell one may have changed, gives up (the per-instance order would decide).
* Integer division by zero gives up (``errstate``) instead of yielding 0.
* What gives up is a ``BaseException`` and is noted for the call as well, so a
  spec's ``try``/``except Exception`` (or one that swallows anything) cannot turn
  it into an answer of the grid.
* An element of a compound type (set, record, sequence, bag) read or written
  through a parameter index is selected cell by cell, as a state-value index
  selects it, after checking that the index lies inside the index set; its value
  then holds grid columns, on which the type's operations are element-wise.
* ``with t.branch(name, cond):`` blocks run as on a batch (a scatter made inside
  a block belongs to that branch); undefined values (``CHOOSE`` finding nothing)
  are collected, and the kernel gives up when one falls on an enabled pair.

Parameter arithmetic is int64 (a parameter is an int64 column), not Python's
unbounded int; parameters are indices, far from the bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from .layout import Layout
from .undefined import collect_undefined, pin_undefined
from .views import Branch, NextView, StateView

__all__ = ["ParamArray", "FamilyState", "FamilyNext", "FamilyCall", "Decoder", "call_family",
           "grid_values", "grid_mask", "param_column"]

_U64 = np.uint64


class GiveUp(BaseException):
    """The grid evaluation cannot vouch for per-instance equality (internal). A
    ``BaseException``, so that it passes through a spec's ``except Exception``; each
    one is also noted for the call being made, which :func:`call_family` then gives
    up however the call ended (a handler that swallows it cannot make a grid
    evaluation differ from the instances')."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        notes = _gave_up.get()
        if notes is not None:
            notes.append(why)


#: the reasons to give up noted during the family call being made
_gave_up: ContextVar[list[str] | None] = ContextVar("modelcheck_family_gave_up",
                                                    default=None)


def _arithmetic_error(kind: str, flag: int) -> None:
    """numpy's error callback in a family call: an integer division by zero (or an
    invalid operation) gives up, where the instances' evaluation would yield 0."""
    raise GiveUp(f"{kind} in a family call")


def _plain(x: Any) -> Any:
    if isinstance(x, ParamArray):
        return x.view(np.ndarray)
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    return x


def _taint(x: Any) -> Any:
    if isinstance(x, np.ndarray) and not isinstance(x, ParamArray):
        return x.view(ParamArray)
    if isinstance(x, tuple):
        return tuple(_taint(v) for v in x)
    return x


#: numpy functions that mean the same on an int and on a column of ints
_ALLOWED_FUNCTIONS = frozenset({np.where, np.clip})


class ParamArray(np.ndarray):
    """An action parameter (or a value computed from one) over the rows of a family.

    Behaves as an int does in element-wise arithmetic, comparisons and ``where``;
    raises where an int and an array would not agree.
    """

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method != "__call__" or "out" in kwargs:
            raise GiveUp(f"{ufunc.__name__}.{method} on an action parameter")
        out = ufunc(*[x.view(np.ndarray) if type(x) is ParamArray else x for x in inputs],
                    **kwargs)
        return out.view(ParamArray) if type(out) is np.ndarray else _taint(out)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func not in _ALLOWED_FUNCTIONS:
            raise GiveUp(f"{getattr(func, '__name__', func)} on an action parameter")
        return _taint(func(*_plain(args), **_plain_kw(kwargs)))

    def __len__(self) -> int:
        raise GiveUp("len() of an action parameter")

    def __iter__(self) -> Any:
        raise GiveUp("iterating over an action parameter")

    def __getitem__(self, key: Any) -> Any:
        raise GiveUp("indexing an action parameter")

    def __bool__(self) -> bool:
        raise GiveUp("the truth value of an action parameter")

    def tolist(self) -> Any:  # type: ignore[override]
        raise GiveUp("tolist() of an action parameter")

    def item(self, *args: Any) -> Any:
        raise GiveUp("item() of an action parameter")


def _plain_kw(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: _plain(v) for k, v in kwargs.items()}


def param_column(values: np.ndarray) -> ParamArray:
    """The parameter array for a family's rows: ``values`` as a ``(P, 1)`` column."""
    return np.ascontiguousarray(values, dtype=np.int64).reshape(-1, 1).view(ParamArray)


class Decoder:
    """Decodes any cells of packed states at once (:meth:`Layout.decode_cell` decodes
    one cell of every state)."""

    def __init__(self, layout: Layout) -> None:
        self.word_of = layout.word_of
        self.mult = layout.mult
        self.lo = layout.lo
        if layout.bitfields:
            bits = [max(1, int(sz - 1).bit_length()) for sz in layout.size]
            self.modulus = np.array([1 << b for b in bits], dtype=_U64)
        else:
            self.modulus = layout.size.astype(_U64)

    def matrix(self, words: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Values (int64) of ``cells`` in every state of ``words``: shape ``(n, D)``."""
        w = words[:, self.word_of[cells]]
        return ((w // self.mult[cells]) % self.modulus[cells]).astype(np.int64) + self.lo[cells]

    def per_row(self, words: np.ndarray, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Value (int64) of cell ``cells[r]`` in state ``words[rows[r]]``, for every r."""
        w = words[rows, self.word_of[cells]]
        return ((w // self.mult[cells]) % self.modulus[cells]).astype(np.int64) + self.lo[cells]


@dataclass(frozen=True)
class Leaf:
    """The cells of the innermost dimension of an array (one per index, in order)."""

    cells: np.ndarray
    ids: range
    is_bool: bool


class FamilyState(StateView):
    """The current state for a family call: the batch's columns, ``(n,)`` each, and
    reads through a parameter index gathered per (instance, state) row."""

    def __init__(self, base: StateView, words: np.ndarray, decoder: Decoder,
                 bool_cells: frozenset[int],
                 leaves: dict[tuple[str, tuple[int, ...]], Leaf | None]) -> None:
        super().__init__(base._layout, base._cell, base._n)
        object.__setattr__(self, "_words", words)
        object.__setattr__(self, "_decoder", decoder)
        object.__setattr__(self, "_bool_cells", bool_cells)
        object.__setattr__(self, "_leaves", leaves)
        object.__setattr__(self, "_matrices", {})

    def _leaf(self, var: str, path: tuple[int, ...], ids: range) -> Leaf | None:
        """The cells of ``var[path...]`` when they can be gathered per row (one cell
        per element, of one kind, consecutive ids); None otherwise."""
        key = (var, path)
        if key not in self._leaves:
            leaf: Leaf | None = None
            info = self._layout.vars[var]
            if ids.step == 1 and info.scalar_leaf:
                m = self._layout.leaf_map(var, path)
                cells = np.array([m[j] for j in ids], dtype=np.int64)
                kinds = {int(c) in self._bool_cells for c in cells}
                if len(kinds) == 1:
                    leaf = Leaf(cells, ids, kinds.pop())
            self._leaves[key] = leaf
        return self._leaves[key]

    def _matrix(self, var: str, path: tuple[int, ...], leaf: Leaf) -> np.ndarray:
        key = (var, path)
        mat = self._matrices.get(key)
        if mat is None:
            mat = self._decoder.matrix(self._words, leaf.cells)
            if leaf.is_bool:
                mat = mat.astype(bool)
            self._matrices[key] = mat
        return mat

    def _positions(self, leaf: Leaf, i: Any) -> np.ndarray:
        """Positions in ``leaf`` of index ``i``: strict for a parameter-dependent
        index (as an int index), the first element for an outside state value."""
        strict = isinstance(i, ParamArray)
        idx = _plain(i) if strict else np.asarray(i)
        if idx.dtype.kind not in "biu" or idx.ndim > 2:
            raise GiveUp("index of an unexpected type or shape")
        pos = idx.astype(np.int64) - leaf.ids.start
        outside = (pos < 0) | (pos >= len(leaf.ids))
        if outside.any():
            if strict:
                raise GiveUp("parameter index outside the index set")
            pos = np.where(outside, 0, pos)
        return pos

    def _read_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any) -> Any:
        leaf = self._leaf(var, path, ids)
        if leaf is None:
            _check_inside(ids, i)
            return super()._read_dynamic(var, path, ids, i)
        pos = self._positions(leaf, i)
        mat = self._matrix(var, path, leaf)
        n = self._n
        if pos.ndim == 2 and pos.shape[1] == 1:
            return mat.T[pos[:, 0]]  # (P, n): row p is element pos[p] of every state
        if pos.shape[-1:] not in ((n,), ()):
            raise GiveUp("index of an unexpected shape")
        return mat[np.arange(n), pos]


def _check_inside(ids: range, i: Any) -> None:
    """Give up when a parameter-dependent index ``i`` lies outside ``ids`` in some row
    (an int index outside the index set is an error, a state value reads the first)."""
    if not isinstance(i, ParamArray):
        return
    idx = _plain(i)
    if idx.dtype.kind not in "biu":
        raise GiveUp("index of an unexpected type")
    if ((idx < ids.start) | (idx >= ids.stop) | ((idx - ids.start) % ids.step != 0)).any():
        raise GiveUp("parameter index outside the index set")


@dataclass(frozen=True)
class Scatter:
    """``t.a[i] = value`` with a parameter index: cell ``cells`` per row, made inside
    branch ``branch`` (None: outside every branch)."""

    cells: np.ndarray
    value: Any
    branch: str | None = None


class FamilyNext(NextView):
    """The next state for a family call: records assignments and scatters."""

    def __init__(self, current: FamilyState) -> None:
        super().__init__(current)
        object.__setattr__(self, "_state", current)
        object.__setattr__(self, "_scatters", [])
        #: cells some scatter writes in some row (allocated by the first scatter)
        object.__setattr__(self, "_scattered", None)

    def none_enabled(self, g: Any) -> bool:
        """True when the guard ``g`` holds at no (instance, state) pair: then every
        instance returns at once, as each does on its own. Otherwise the body runs for
        every instance; those it does not enable give no transition, and an error
        their bodies raise sends them to the per-instance evaluator."""
        return not bool(np.any(_plain(g)))

    def _cell(self, i: int) -> Any:
        if self._scattered is not None and self._scattered[i]:
            raise GiveUp("read of a cell written through a parameter index")
        return super()._cell(i)

    def _assign(self, i: int, value: Any) -> None:
        if self._scattered is not None and self._scattered[i]:
            raise GiveUp("second write to a cell written through a parameter index")
        super()._assign(i, value)

    def _touches(self, cells: np.ndarray) -> bool:
        """Whether an assignment or a scatter so far may have written one of ``cells``."""
        if self._scattered is not None and self._scattered[cells].any():
            return True
        return bool(self._assigned) and bool(np.isin(list(self._assigned), cells).any())

    def _read_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any) -> Any:
        leaf = self._state._leaf(var, path, ids)
        if leaf is None:
            # selected cell by cell through _cell, which sees this action's writes
            _check_inside(ids, i)
            return NextView._read_dynamic(self, var, path, ids, i)
        if self._touches(leaf.cells):
            raise GiveUp("dynamic read of an array the action assigned")
        return self._state._read_dynamic(var, path, ids, i)

    def _write_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any,
                       value: Any) -> None:
        leaf = self._state._leaf(var, path, ids)
        if not isinstance(i, ParamArray) or leaf is None:
            # every element assigned (itself where the index does not select it)
            _check_inside(ids, i)
            super()._write_dynamic(var, path, ids, i, value)
            return
        pos = self._state._positions(leaf, i)
        cells = leaf.cells[pos]
        if self._touches(cells.reshape(-1)):
            raise GiveUp("second write to a cell written through a parameter index")
        if self._scattered is None:
            object.__setattr__(self, "_scattered",
                               np.zeros(len(self._layout.cells), dtype=bool))
        self._scattered[cells] = True
        pin_undefined()  # a write to the next state, as NextView._assign
        self._scatters.append(Scatter(cells, value, self._in_branch))


@dataclass(frozen=True)
class FamilyCall:
    """What a family call returned: the guard on the ``(P, n)`` grid (C order, so
    ``flatnonzero`` lists instances in order, states in order within each), the
    assignments to fixed cells outside every branch, the scatters, the branches
    taken (:class:`~modelcheck.views.Branch`, as on a batch) and the undefined
    values collected (records iterating as ``(rows mask, where, message)``, indexed by
    the branches' spans)."""

    mask: np.ndarray
    assigned: dict[int, Any]
    scatters: tuple[Scatter, ...]
    branches: dict[str, Branch]
    undefined: list[Any]


def call_family(spec: Any, fn: Callable[..., Any], state: FamilyState,
                params: Sequence[ParamArray], n_inst: int) -> FamilyCall | None:
    """Call action ``fn`` over the grid of ``n_inst`` instances (rows of ``params``)
    and the states of ``state``; ``None`` when the per-instance evaluator must decide."""
    t = FamilyNext(state)
    notes: list[str] = []
    token = _gave_up.set(notes)
    try:
        with np.errstate(divide="call", invalid="call", call=_arithmetic_error), \
                collect_undefined() as undefined:
            g = fn(spec, state, t, *params)
    except (Exception, GiveUp):
        return None
    finally:
        _gave_up.reset(token)
    if notes:
        return None  # a spec's handler swallowed the giving up
    n = state._n or 1
    if isinstance(g, np.ndarray):
        g = _plain(g)
        if g.dtype != np.bool_ or not _grid_shape(g.shape, n_inst, n):
            return None
        mask = np.broadcast_to(g, (n_inst, n))
    elif isinstance(g, (bool, np.bool_)):
        mask = np.full((n_inst, n), bool(g))
    else:
        return None
    return FamilyCall(mask, dict(t._assigned), tuple(t._scatters), dict(t._branches),
                      list(undefined))


def grid_mask(v: Any, n_inst: int, n: int) -> np.ndarray | None:
    """A boolean result (a branch condition, an undefined-value mask) on the grid,
    ``(n_inst, n)``; ``None`` when it is not a boolean of a grid shape."""
    if isinstance(v, (bool, np.bool_)):
        return np.full((n_inst, n), bool(v))
    if not isinstance(v, np.ndarray):
        return None
    a = _plain(v)
    if a.dtype != np.bool_ or not _grid_shape(a.shape, n_inst, n):
        return None
    return np.broadcast_to(a, (n_inst, n))


def _grid_shape(shape: tuple[int, ...], n_inst: int, n: int) -> bool:
    """A shape a value on the grid may have: a constant, per state, per instance, both."""
    return shape in ((), (n,), (n_inst, 1), (n_inst, n))


def grid_values(v: Any, n_inst: int, n: int, flat: np.ndarray) -> np.ndarray | None:
    """An assigned value (or scatter cells) at grid positions ``flat``, as int64;
    ``None`` when it is not an integer value of a grid shape."""
    if isinstance(v, (bool, int, np.integer, np.bool_)) and not isinstance(v, np.ndarray):
        val = int(v)
        if not -2**63 <= val < 2**63:
            return None
        return np.full(len(flat), val, dtype=np.int64)
    a = _plain(v) if isinstance(v, ParamArray) else np.asarray(v)
    if a.dtype.kind not in "biu" or not _grid_shape(a.shape, n_inst, n):
        return None
    if a.ndim == 0:
        out = np.full(len(flat), a)
    elif a.ndim == 1:
        out = a[flat % n]
    elif a.shape[1] == 1:
        out = a[flat // n, 0]
    else:
        out = a.reshape(-1)[flat]
    return out.astype(np.int64)
