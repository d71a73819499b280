"""Compatibility alias: the declared types and their bound forms now live in the types package.

Specs written against ``modelcheck.domains`` keep importing from here; new code imports
from ``modelcheck`` (the declarations) or the family modules of :mod:`modelcheck.types`.
"""

from __future__ import annotations

from .types.arrays import (
    Array,
    BoundArray,
    BoundFunction,
    as_leaf,
)
from .types.bags import (
    Bag,
    BoundBag,
    BoundBagCount,
)
from .types.base import (
    BoundType,
    Cell,
    Const,
    Deferred,
    Ids,
    ScalarType,
    Type,
    ValueDomainError,
    ValueKindError,
    resolve,
)
from .types.records import (
    BoundRecord,
    BoundUnion,
    Record,
    Union,
)
from .types.scalars import (
    Bool,
    BoundBool,
    BoundEnum,
    BoundInt,
    BoundRef,
    Enum,
    Int,
    Ref,
)
from .types.sequences import (
    BoundSeq,
    BoundSeqLen,
    Seq,
)
from .types.sets import (
    MAX_ELEMENTS,
    BoundSet,
    BoundSetChunk,
    BoundSparseSet,
    BoundSparseSlot,
    SetOf,
    refuse_sparse_sets,
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
