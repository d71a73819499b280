"""State views handed to spec code: ``s`` (read) and ``t`` (the next state, written).

The same classes serve one state (cells are numpy scalars) and a batch (cells
are numpy columns). ``s.x`` is a scalar variable; ``s.a[i]`` an array element,
where ``i`` is a constant index or, for dynamic indexing, a state value.
``t.x = v`` / ``t.a[i] = v`` assign; unassigned cells keep their value.

A variable (or array element) of a compound type spans several cells; the view
hands its type's expression value (:meth:`~modelcheck.types.base.BoundType.view`:
a set, record, sequence or bag value) and an assignment splits the assigned value
into the cells again (:meth:`~modelcheck.types.base.BoundType.columns`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import SpecEvaluationError
from .layout import Layout
from .types import Value
from .undefined import pin_undefined, undefined_mark

__all__ = ["StateView", "NextView", "ArrayView", "Branch"]


def _static(i: Any) -> bool:
    """A constant index (a parameter or literal), as opposed to a state value.

    State values are numpy scalars (one state) or columns (a batch); both take
    the dynamic path, so the two evaluators agree even on unguarded reads.
    """
    return isinstance(i, int)


def _unknown(layout: Layout, name: str) -> SpecEvaluationError:
    return SpecEvaluationError(
        f"unknown variable {name!r}; the spec declares: " + ", ".join(layout.vars)
    )


def _leaf(view: StateView, var: str, first: int) -> Any:
    """The expression value of the element (or variable) whose cells start at ``first``."""
    info = view._layout.vars[var]
    if info.scalar_leaf:
        return view._cell(first)
    assert info.leaf is not None
    return info.leaf.view([view._cell(first + k) for k in range(info.leaf_cells)])


def _assign_leaf(view: NextView, var: str, first: int, value: Any) -> None:
    info = view._layout.vars[var]
    assert info.leaf is not None
    if info.scalar_leaf:
        if isinstance(value, Value):
            info.leaf.columns(value)  # raises: a compound value for a scalar
        view._assign(first, value)
        return
    for k, col in enumerate(info.leaf.columns(value)):
        view._assign(first + k, col)


class ArrayView:
    """An array (or a nested sub-array) of a view, indexed by the declared ids."""

    __slots__ = ("_view", "_var", "_path", "_dims", "_leaves", "_scalar")

    def __init__(self, view: StateView, var: str, path: tuple[int, ...],
                 dims: tuple[range, ...]) -> None:
        self._view = view
        self._var = var
        self._path = path
        self._dims = dims
        # the innermost dimension's {index: first cell} and whether an element is one
        # scalar cell: looked up on the first constant-index read (the hot path)
        self._leaves: dict[int, int] | None = None
        self._scalar = False

    def _check(self, i: int) -> int:
        i = int(i)
        if i not in self._dims[0]:
            r = self._dims[0]
            raise SpecEvaluationError(
                f"index {i} is outside the index set {r.start}..{r.stop - 1} of "
                f"{self._var}{''.join(f'[{p}]' for p in self._path)}"
            )
        return i

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, int):
            if len(self._dims) == 1:
                view = self._view
                leaves = self._leaves
                if leaves is None:
                    leaves = self._leaves = view._layout.leaf_map(self._var, self._path)
                    self._scalar = view._layout.vars[self._var].scalar_leaf
                ci = leaves.get(i)
                if ci is None:
                    ci = leaves[self._check(i)]  # _check raises: i is outside the index set
                if self._scalar:
                    return view._cell(ci)
                return _leaf(view, self._var, ci)
            i = self._check(i)
            return ArrayView(self._view, self._var, (*self._path, i), self._dims[1:])
        if len(self._dims) > 1:
            raise SpecEvaluationError(
                f"dynamic indexing of {self._var} needs a constant outer index; "
                "index nested arrays dynamically only in their last dimension"
            )
        if isinstance(i, np.integer):
            j = int(i) if int(i) in self._dims[0] else self._dims[0][0]
            return self[j]
        return self._view._read_dynamic(self._var, self._path, self._dims[0], i)

    def __setitem__(self, i: Any, value: Any) -> None:
        view = self._view
        if not isinstance(view, NextView):
            raise SpecEvaluationError(
                f"cannot assign to {self._var}: the current state `s` is read-only; "
                "assign to the next state `t`"
            )
        if _static(i):
            i = self._check(i)
            if len(self._dims) > 1:
                _assign_whole(view, self._var, (*self._path, i), self._dims[1:], value)
                return
            _assign_leaf(view, self._var, view._layout.leaf_map(self._var, self._path)[i], value)
            return
        view._write_dynamic(self._var, self._path, self._dims[0], i, value)

    def __iter__(self) -> Any:
        raise SpecEvaluationError(
            f"iterate over the index set (e.g. self.Brokers), not over the array {self._var}"
        )

    def __repr__(self) -> str:
        return f"<array {self._var}{''.join(f'[{p}]' for p in self._path)}>"


class StateView:
    """Read access to the variables of one state or a batch of states.

    ``getter(i)`` returns cell ``i`` (already offset by the cell's ``lo``);
    columns are fetched lazily and cached, so unused cells cost nothing.
    """

    def __init__(self, layout: Layout, getter: Callable[[int], Any], n: int | None) -> None:
        object.__setattr__(self, "_layout", layout)
        object.__setattr__(self, "_getter", getter)
        object.__setattr__(self, "_cache", {})
        object.__setattr__(self, "_n", n)  # None for one state

    def _cell(self, i: int) -> Any:
        cache = self._cache
        v = cache.get(i)
        if v is None:
            v = self._getter(i)
            cache[i] = v
        return v

    def _read_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any) -> Any:
        """``var[path...][i]`` for an index ``i`` that is a state value (a column on a
        batch): selected per state. States whose index is outside the index set read
        the first element (such reads must be guarded). An element of a compound type
        is selected cell by cell and handed as its type's value."""
        idx = np.asarray(i)
        leaves = self._layout.leaf_map(var, path)
        info = self._layout.vars[var]
        k = info.leaf_cells
        cols: list[Any] = []
        for m in range(k):
            col: Any = None
            for j in ids:
                v = self._cell(leaves[j] + m)
                col = v if col is None else np.where(idx == j, v, col)
            cols.append(col)
        if info.scalar_leaf:
            return cols[0]
        assert info.leaf is not None
        return info.leaf.view(cols)

    def __getattr__(self, name: str) -> Any:
        info = self._layout.vars.get(name)
        if info is None:
            raise _unknown(self._layout, name)
        if info.dims:
            # Not cached: the array view refers back to this view, and a cycle would
            # keep a batch's decoded columns alive until the garbage collector runs.
            return ArrayView(self, name, (), info.dims)
        if info.scalar_leaf:
            value = self._cell(info.first_cell)
        else:
            value = _leaf(self, name, info.first_cell)
        if not isinstance(self, NextView):  # the next state may still be assigned
            object.__setattr__(self, name, value)  # later reads skip __getattr__
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise SpecEvaluationError(
            f"cannot assign to {name}: the current state `s` is read-only; "
            "assign to the next state `t`"
        )


@dataclass
class Branch:
    """What one ``with t.branch(name, cond):`` block did: its condition, the cells it
    assigned, and the span of undefined values (``CHOOSE``) collected inside it."""

    cond: Any
    assigned: dict[int, Any]
    undefined: tuple[int, int]


class _BranchBlock:
    """The context manager of ``t.branch``: assignments inside it belong to the branch."""

    def __init__(self, t: NextView, name: str, cond: Any) -> None:
        self._t, self._name, self._cond = t, name, cond
        self._saved: dict[int, Any] = {}
        self._start = 0

    def __enter__(self) -> None:
        t = self._t
        if t._in_branch is not None:
            raise SpecEvaluationError(
                f"branch {self._name!r} is inside branch {t._in_branch!r}; branches do not "
                "nest (write the combinations as branches of their own)")
        if self._name in t._branches:
            raise SpecEvaluationError(f"branch {self._name!r} is taken twice in one action")
        pin_undefined()  # the condition decides the successor: as a write
        self._saved = dict(t._assigned)
        self._start = undefined_mark()
        object.__setattr__(t, "_in_branch", self._name)

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        t = self._t
        saved = self._saved
        own = {ci: v for ci, v in t._assigned.items() if ci not in saved or saved[ci] is not v}
        t._assigned.clear()
        t._assigned.update(saved)
        object.__setattr__(t, "_in_branch", None)
        if kind is None:
            t._branches[self._name] = Branch(self._cond, own, (self._start, undefined_mark()))


class Narrow(BaseException):  # noqa: N818 - a request, not an error
    """Raised by :meth:`NextView.none_enabled` for the kernel: evaluate the action
    again on the states of ``mask`` only (internal). A ``BaseException``, so that it
    passes through a spec's ``except Exception``; the request is also noted on the
    next state (``_narrowed``), which the kernel reads however the call ended (a
    handler that swallows even a ``BaseException`` cannot make it drop states)."""

    def __init__(self, mask: np.ndarray) -> None:
        super().__init__("narrow the batch")
        self.mask = mask


class NextView(StateView):
    """The next state: reads see assignments made so far, writes record them.

    ``with t.branch(name, cond):`` opens a branch: the assignments inside it make one
    successor (when ``cond`` and the guard hold), on top of the assignments made
    outside every branch.
    """

    def __init__(self, current: StateView, *, narrow: bool = False) -> None:
        super().__init__(current._layout, current._cell, current._n)
        object.__setattr__(self, "_assigned", {})
        object.__setattr__(self, "_branches", {})
        object.__setattr__(self, "_in_branch", None)
        object.__setattr__(self, "_narrow", narrow)
        #: the mask :meth:`none_enabled` asked the kernel to narrow the batch to
        object.__setattr__(self, "_narrowed", None)

    def none_enabled(self, g: Any) -> bool:
        """True when the guard ``g`` holds in no state of the batch (the action may
        return at once, without building its next state): ``if t.none_enabled(g):
        return g``. On a batch where ``g`` holds in at most half of the states, and
        before anything is assigned, the kernel may stop the call here and evaluate
        the action again on those states only (the results are the same: an action
        is evaluated state by state), so that its body is not built for states it
        does not take."""
        if self._narrow and not self._assigned and not self._branches:
            mask = np.asarray(g)
            if mask.dtype == np.bool_ and mask.shape == (self._n,):
                on = int(np.count_nonzero(mask))
                if 0 < on and 2 * on <= mask.shape[0]:
                    object.__setattr__(self, "_narrowed", mask)
                    raise Narrow(mask)
                return on == 0
        return not bool(np.any(g))

    def branch(self, name: str, cond: Any = True) -> _BranchBlock:
        """A branch of the action (TLA+'s disjunct): ``with t.branch("commit", c): ...``."""
        return _BranchBlock(self, name, cond)

    def _cell(self, i: int) -> Any:
        v = self._assigned.get(i)
        if v is None:
            return self._getter(i)
        if i in self._layout.bool_cells and not (
                isinstance(v, (np.bool_, np.ndarray)) and v.dtype == np.bool_):
            # a boolean cell reads back as a numpy boolean whatever was assigned (True,
            # 1, an integer column), so that ~ and where mean what they say
            return np.asarray(v) != 0
        return v

    def _assign(self, i: int, value: Any) -> None:
        # every write to the next state goes through here: no undefined value met so
        # far may be discharged any more (the value may have been computed from it)
        pin_undefined()
        self._assigned[i] = value

    def _write_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any,
                       value: Any) -> None:
        """``var[path...][i] = value`` for an index ``i`` that is a state value: every
        element is assigned, ``value`` where the index selects it, else itself (an
        element of a compound type cell by cell, from the value's columns)."""
        idx = np.asarray(i)
        info = self._layout.vars[var]
        leaves = self._layout.leaf_map(var, path)
        if info.scalar_leaf:
            if isinstance(value, Value):
                info.leaf.columns(value)  # raises
            cols = [value]
        else:
            assert info.leaf is not None
            cols = info.leaf.columns(value)
        for j in ids:
            for m, col in enumerate(cols):
                ci = leaves[j] + m
                self._assign(ci, np.where(idx == j, col, self._cell(ci)))

    def __setattr__(self, name: str, value: Any) -> None:
        info = self._layout.vars.get(name)
        if info is None:
            raise _unknown(self._layout, name)
        if info.dims:
            _assign_whole(self, name, (), info.dims, value)
            return
        _assign_leaf(self, name, info.first_cell, value)


def _assign_whole(t: NextView, var: str, path: tuple[int, ...], dims: tuple[range, ...],
                  value: Any) -> None:
    """Assign a whole (sub-)array: from another array (``t.a = s.b``), a mapping of
    every index (``{1: x, 2: y}``) or a function of the index (``lambda i: ...``, TLA+'s
    ``[i \\in S |-> e]``); for nested arrays the value per index is again one of those."""
    name = f"{var}{''.join(f'[{p}]' for p in path)}"
    for j in dims[0]:
        if isinstance(value, ArrayView):
            v = value[j]
        elif isinstance(value, Mapping):
            if j not in value:
                raise SpecEvaluationError(
                    f"assigning {name} from a mapping without index {j}; give every index "
                    f"of {dims[0].start}..{dims[0].stop - 1}")
            v = value[j]
        elif callable(value):
            v = value(j)
        else:
            raise SpecEvaluationError(
                f"assign the array {name} from another array (t.{var} = s.other), a mapping "
                f"of every index or a function of the index (lambda i: ...), not "
                f"{type(value).__name__}")
        if len(dims) > 1:
            _assign_whole(t, var, (*path, j), dims[1:], v)
        else:
            _assign_leaf(t, var, t._layout.leaf_map(var, path)[j], v)
