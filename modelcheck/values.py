"""Compatibility alias: the compound types' expression values now live in the types package.

Specs written against ``modelcheck.values`` keep importing from here; new code imports
from ``modelcheck`` (the declarations) or the family modules of :mod:`modelcheck.types`.
"""

from __future__ import annotations

from .types.arrays import (
    FunctionValue,
)
from .types.bags import (
    BagValue,
)
from .types.base import (
    Value,
    all_rows,
    any_rows,
    as_int,
    select,
)
from .types.records import (
    RecordValue,
    UnionValue,
    record_field_problem,
)
from .types.sequences import (
    SeqValue,
)
from .types.sets import (
    SetValue,
    SparseSetValue,
)

__all__ = [
    "Value",
    "SetValue",
    "SparseSetValue",
    "RecordValue",
    "FunctionValue",
    "UnionValue",
    "SeqValue",
    "BagValue",
    "select",
    "as_int",
    "any_rows",
    "all_rows",
    "record_field_problem",
]
