"""Record values made from columns (the view of a state's cells, a ``where`` of
records) make their fields only when one is read, and give their columns back as the
record of those fields would.

The oracle is the record built at once from its field values (``RecordValue(type,
fields)``): for random codes of record types with every kind of field (integers,
booleans, enums, a union of shapes, a set, a sequence of records, a nested record),
given as a batch (booleans as booleans, or as integer columns) or as one state, the
two agree on their columns (values and booleans), on every field, and after
``with_fields`` and ``where``.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Bool, Enum, Ids, Int, Record, Seq, SetOf, Spec, Union, action, where
from modelcheck.types.records import RecordValue


class Shape(IntEnum):
    Ask = 0
    Done = 1


class Kinds(Spec):
    P = Ids(1, 2)
    inner = Record(n=Int(0, 2), ok=Bool())
    r = Record(a=Int(-1, 2), f=Bool(), e=Enum(Shape),
               u=Union("type", Shape, Ask=Record(src=P, ok=Bool()), Done=None),
               s=SetOf(Int(0, 3)), q=Seq(Record(n=Int(0, 2), ok=Bool()), 2),
               nested=Record(x=Int(0, 1), g=Bool()))

    @action
    def Keep(self, s, t):
        t.r = s.r
        return True


TYPE = Kinds().layout.vars["r"].leaf
CELLS = [t for _, t in TYPE.cells()]
BOOLS = [bool(getattr(t, "boolean", False)) for t in CELLS]


def _eager(cols) -> RecordValue:
    return RecordValue(TYPE, TYPE._field_values(cols))


def _same(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.array_equal(np.asarray(x), np.asarray(y))


def _codes():
    return st.tuples(*(st.integers(t.lo, t.lo + t.size - 1) for t in CELLS))


@settings(max_examples=100, deadline=None)
@given(st.lists(_codes(), min_size=1, max_size=4), st.booleans(), st.booleans(),
       st.lists(st.booleans(), min_size=4, max_size=4))
def test_made_from_columns_agrees_with_built_from_fields(rows, one, ints, pick) -> None:
    mat = np.array(rows[:1] if one else rows, dtype=np.int64).T
    if one:
        cols = [np.bool_(c[0]) if b else np.int64(c[0]) for c, b in zip(mat, BOOLS)]
    else:
        cols = [c.astype(bool) if b and not ints else c for c, b in zip(mat, BOOLS)]
    lazy, eager = TYPE.view(cols), _eager(cols)
    _same(lazy._columns(), eager._columns())
    _same(TYPE.columns(lazy), TYPE.columns(eager))
    for name in ("a", "f", "e"):
        _same([getattr(lazy, name)], [getattr(eager, name)])
    _same([lazy.u.type, lazy.u.src], [eager.u.type, eager.u.src])
    _same(TYPE.fields["q"].columns(lazy.q), TYPE.fields["q"].columns(eager.q))
    _same(TYPE.fields["s"].columns(lazy.s), TYPE.fields["s"].columns(eager.s))
    _same([lazy.nested.g, lazy["nested"].x], [eager.nested.g, eager["nested"].x])
    # a changed field, and a choice between two records (made from columns again)
    _same(lazy.with_fields(a=2)._columns(), eager.with_fields(a=2)._columns())
    cond = np.bool_(pick[0]) if one else np.array((pick * 2)[:mat.shape[1]])
    other = TYPE.view(TYPE.columns(TYPE.zero()))
    _same(where(cond, lazy, other)._columns(), where(cond, eager, other)._columns())
    # the fields made on a read do not change the columns given back
    fresh = TYPE.view(cols)
    _ = fresh.q, fresh.f
    _same(fresh._columns(), eager._columns())
