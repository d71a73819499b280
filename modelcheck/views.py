"""State views handed to spec code: ``s`` (read) and ``t`` (the next state, written).

The same classes serve one state (cells are numpy scalars) and a batch (cells
are numpy columns). ``s.x`` is a scalar variable; ``s.a[i]`` an array element,
where ``i`` is a constant index or, for dynamic indexing, a state value.
``t.x = v`` / ``t.a[i] = v`` assign; unassigned cells keep their value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import SpecEvaluationError
from .layout import Layout

__all__ = ["StateView", "NextView", "ArrayView"]


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


class ArrayView:
    """An array (or a nested sub-array) of a view, indexed by the declared ids."""

    __slots__ = ("_view", "_var", "_path", "_dims")

    def __init__(self, view: StateView, var: str, path: tuple[int, ...],
                 dims: tuple[range, ...]) -> None:
        self._view = view
        self._var = var
        self._path = path
        self._dims = dims

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
                ci = self._view._layout.leaf_map(self._var, self._path).get(i)
                if ci is None:
                    self._check(i)
                return self._view._cell(ci)
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
                raise SpecEvaluationError(
                    f"assign the elements of {self._var} one by one, not a whole sub-array"
                )
            view._assign(view._layout.cell_index[(self._var, (*self._path, i))], value)
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
        the first element (such reads must be guarded)."""
        idx = np.asarray(i)
        out: Any = None
        for j in ids:
            v = self._cell(self._layout.cell_index[(var, (*path, j))])
            out = v if out is None else np.where(idx == j, v, out)
        return out

    def __getattr__(self, name: str) -> Any:
        info = self._layout.vars.get(name)
        if info is None:
            raise _unknown(self._layout, name)
        if info.dims:
            # Not cached: the array view refers back to this view, and a cycle would
            # keep a batch's decoded columns alive until the garbage collector runs.
            return ArrayView(self, name, (), info.dims)
        value = self._cell(info.first_cell)
        if not isinstance(self, NextView):  # the next state may still be assigned
            object.__setattr__(self, name, value)  # later reads skip __getattr__
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise SpecEvaluationError(
            f"cannot assign to {name}: the current state `s` is read-only; "
            "assign to the next state `t`"
        )


class NextView(StateView):
    """The next state: reads see assignments made so far, writes record them."""

    def __init__(self, current: StateView) -> None:
        super().__init__(current._layout, current._cell, current._n)
        object.__setattr__(self, "_assigned", {})

    def _cell(self, i: int) -> Any:
        v = self._assigned.get(i)
        if v is None:
            return self._getter(i)
        return v

    def _assign(self, i: int, value: Any) -> None:
        self._assigned[i] = value

    def _write_dynamic(self, var: str, path: tuple[int, ...], ids: range, i: Any,
                       value: Any) -> None:
        """``var[path...][i] = value`` for an index ``i`` that is a state value: every
        element is assigned, ``value`` where the index selects it, else itself."""
        idx = np.asarray(i)
        for j in ids:
            ci = self._layout.cell_index[(var, (*path, j))]
            self._assign(ci, np.where(idx == j, value, self._cell(ci)))

    def __setattr__(self, name: str, value: Any) -> None:
        info = self._layout.vars.get(name)
        if info is None:
            raise _unknown(self._layout, name)
        if info.dims:
            raise SpecEvaluationError(
                f"assign the elements of {name} one by one (t.{name}[i] = ...), "
                "not the whole array"
            )
        self._assign(info.first_cell, value)
