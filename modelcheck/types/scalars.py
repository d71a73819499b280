"""Scalar types: :class:`Bool`, :class:`Int`, :class:`Ref`, :class:`Enum`, bound forms."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import SpecDefinitionError
from .base import (
    BoundType,
    Deferred,
    Ids,
    ScalarType,
    Type,
    ValueDomainError,
    ValueKindError,
    resolve,
)

__all__ = [
    "Bool",
    "Int",
    "Enum",
    "Ref",
    "BoundBool",
    "BoundInt",
    "BoundRef",
    "BoundEnum",
]


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
        if lo < -2**63 or hi > 2**63 - 1 or hi - lo + 1 > 2**63 - 1:
            raise SpecDefinitionError(
                f"Int({self.lo!r}, {self.hi!r}) ({lo}..{hi}) is too large: a variable's "
                f"values are 64-bit integers and a cell holds at most 2**63 - 1 of them "
                f"(here {hi - lo + 1}); split the value into several variables or narrow "
                f"its range.")
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
