"""The finite types of state variables, one module per type family.

Each family module holds a type's declaration (a :class:`~modelcheck.types.base.Type`
subclass), its bound form (a :class:`~modelcheck.types.base.BoundType`) and its
expression value operations (a :class:`~modelcheck.types.base.Value`):

- :mod:`~modelcheck.types.base`: constants, index sets, the base classes;
- :mod:`~modelcheck.types.scalars`: ``Bool``, ``Int``, ``Ref``, ``Enum``;
- :mod:`~modelcheck.types.arrays`: ``Array`` (arrays and functions);
- :mod:`~modelcheck.types.sets`: ``SetOf`` (bit vectors and sparse ``max_size`` sets);
- :mod:`~modelcheck.types.records`: ``Record`` and ``Union``;
- :mod:`~modelcheck.types.sequences`: ``Seq``;
- :mod:`~modelcheck.types.bags`: ``Bag``.

A family imports only the base, the scalars and families listed before it, so the
modules have no import cycle. The engine delegates to the bound type objects and
never switches on a type's kind, so a new type is one ``Type`` subclass and one
``ScalarType`` subclass (``tests/test_types.py`` defines one outside the package).

For example::

    class Counter(Spec):
        Max = Const(3)
        Procs = Ids(1, 2)
        x = Int(0, Max)
        pc = Array(Procs, Enum(Pc), init=Pc.IDLE)
"""

from __future__ import annotations

from .arrays import (
    Array,
    BoundArray,
    BoundFunction,
    FunctionValue,
    as_leaf,
)
from .bags import (
    Bag,
    BagValue,
    BoundBag,
    BoundBagCount,
)
from .base import (
    BoundType,
    Cell,
    Const,
    Deferred,
    Ids,
    ScalarType,
    Type,
    Value,
    ValueDomainError,
    ValueKindError,
    all_rows,
    any_rows,
    as_int,
    resolve,
    select,
)
from .records import (
    BoundRecord,
    BoundUnion,
    Record,
    RecordValue,
    Union,
    UnionValue,
    record_field_problem,
)
from .scalars import (
    Bool,
    BoundBool,
    BoundEnum,
    BoundInt,
    BoundRef,
    Enum,
    Int,
    Ref,
)
from .sequences import (
    BoundSeq,
    BoundSeqLen,
    Seq,
    SeqValue,
)
from .sets import (
    MAX_ELEMENTS,
    SET_FORMS,
    BoundSet,
    BoundSetChunk,
    BoundSparseSet,
    BoundSparseSlot,
    SetOf,
    SetValue,
    SparseSetValue,
    choose_set_form,
    code_bits,
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
    "SET_FORMS",
    "choose_set_form",
    "code_bits",
    "ValueKindError",
    "ValueDomainError",
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
