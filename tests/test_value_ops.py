"""The operations of set, sequence, bag and record values against Python's own.

Each operation runs on code columns (a batch) and on numpy scalars (one state); both
must give what frozensets, lists and counters give on the Python values. The
types include a set of 70 values (two cells), a set of records and records as
sequence and bag elements.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Bag, Bool, Int, Record, Seq, SetOf
from modelcheck.errors import SpecEvaluationError
from modelcheck.itfvalues import Record as R
from modelcheck.types import BoundType

WIDE = SetOf(Int(0, 69)).bound({})
RECS = SetOf(Record(a=Int(0, 2), b=Bool())).bound({})
SEQ = Seq(Int(0, 3), 4).bound({})
RSEQ = Seq(Record(a=Int(0, 2), b=Bool()), 3).bound({})
BAG = Bag(Int(0, 3), 3).bound({})


def batch(t: BoundType, values: list[Any]) -> Any:
    codes = [t.codes(v) for v in values]
    return t.view([np.array(col, dtype=np.int64) for col in zip(*codes)])


def one(t: BoundType, v: Any) -> Any:
    return t.view([np.int64(c) for c in t.codes(v)])


def rows(t: BoundType, value: Any, n: int) -> list[Any]:
    cols = [np.broadcast_to(np.asarray(c), (n,)) for c in t.columns(value)]
    return [t.value([int(c[i]) for c in cols]) for i in range(n)]


def scalar(t: BoundType, value: Any) -> Any:
    return t.value([int(np.asarray(c)) for c in t.columns(value)])


def elems(t: BoundType, value: Any, n: int) -> list[Any]:
    """Element values (scalars or records) of a batch, as Python values."""
    if isinstance(value, (np.ndarray, np.integer, np.bool_, int, bool)):
        return [int(x) for x in np.broadcast_to(np.asarray(value), (n,))]
    return rows(t, value, n)


def check_both(t: BoundType, values: list[Any], op, want) -> None:
    """op on the batch and on each state equals want(python value) row by row."""
    got_batch = op(batch(t, values))
    for i, v in enumerate(values):
        expect = want(v)
        got_one = op(one(t, v))
        b = _row(got_batch, i, len(values))
        o = _row(got_one, 0, 1)
        assert b == expect, (v, b, expect)
        assert o == expect, (v, o, expect)


def _row(x: Any, i: int, n: int) -> Any:
    from modelcheck.types import Value
    if isinstance(x, Value):
        return rows(x.type, x, n)[i]
    arr = np.broadcast_to(np.asarray(x), (n,))
    v = arr[i]
    return bool(v) if arr.dtype == np.bool_ else int(v)


wide_sets = st.frozensets(st.integers(0, 69), max_size=12)
rec_vals = st.builds(lambda a, b: R(a=a, b=b), st.integers(0, 2), st.booleans())
rec_sets = st.frozensets(rec_vals, max_size=6)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(wide_sets, min_size=1, max_size=6), other=wide_sets,
       x=st.integers(-2, 71))
def test_wide_set_operations(values, other, x) -> None:
    t = WIDE
    check_both(t, values, lambda S: S.has(x), lambda v: x in v)
    check_both(t, values, lambda S: S.without(x), lambda v: v - {x})
    if 0 <= x <= 69:
        check_both(t, values, lambda S: S.with_(x), lambda v: v | {x})
    check_both(t, values, lambda S: S | other, lambda v: v | other)
    check_both(t, values, lambda S: S & other, lambda v: v & other)
    check_both(t, values, lambda S: S - other, lambda v: v - other)
    check_both(t, values, lambda S: S <= other, lambda v: v <= other)
    check_both(t, values, lambda S: S == other, lambda v: v == other)
    check_both(t, values, lambda S: S.size(), len)
    check_both(t, values, lambda S: S.is_empty(), lambda v: not v)
    check_both(t, values, lambda S: S.min(), lambda v: min(v, default=0))
    check_both(t, values, lambda S: S.max(), lambda v: max(v, default=0))
    check_both(t, values, lambda S: S.choose(), lambda v: min(v, default=0))


@settings(max_examples=40, deadline=None)
@given(values=st.lists(wide_sets, min_size=2, max_size=6), xs=st.lists(st.integers(0, 69),
                                                                         min_size=6, max_size=6))
def test_wide_set_dynamic_elements(values, xs) -> None:
    """Elements that differ from state to state (columns)."""
    n = len(values)
    x = np.array(xs[:n], dtype=np.int64)
    S = batch(WIDE, values)
    assert list(S.has(x)) == [xs[i] in values[i] for i in range(n)]
    assert rows(WIDE, S.with_(x), n) == [values[i] | {xs[i]} for i in range(n)]
    assert rows(WIDE, S.without(x), n) == [values[i] - {xs[i]} for i in range(n)]


@settings(max_examples=40, deadline=None)
@given(values=st.lists(rec_sets, min_size=1, max_size=6), other=rec_sets, x=rec_vals)
def test_sets_of_records(values, other, x) -> None:
    t = RECS
    check_both(t, values, lambda S: S.has(dict(x)), lambda v: x in v)
    check_both(t, values, lambda S: S.with_(dict(x)), lambda v: v | {x})
    check_both(t, values, lambda S: S.without(dict(x)), lambda v: v - {x})
    check_both(t, values, lambda S: S | other, lambda v: v | other)
    check_both(t, values, lambda S: S.size(), len)
    def key(r):
        return (r["a"], r["b"])

    check_both(t, values, lambda S: S.min(), lambda v: min(v, key=key, default=R(a=0, b=False)))
    check_both(t, values, lambda S: S.max(), lambda v: max(v, key=key, default=R(a=0, b=False)))


seqs = st.lists(st.integers(0, 3), max_size=4)


def _trim(v: list[int]) -> list[int] | None:
    return v if len(v) <= 4 else None


@settings(max_examples=40, deadline=None)
@given(values=st.lists(seqs, min_size=1, max_size=6), x=st.integers(0, 3),
       i=st.integers(-1, 5), other=st.lists(st.integers(0, 3), max_size=2))
def test_sequence_operations(values, x, i, other) -> None:
    t = SEQ
    check_both(t, values, lambda q: q.len(), len)
    check_both(t, values, lambda q: q.is_empty(), lambda v: not v)
    check_both(t, values, lambda q: q.head(), lambda v: v[0] if v else 0)
    check_both(t, values, lambda q: q.last(), lambda v: v[-1] if v else 0)
    check_both(t, values, lambda q: q.at(i), lambda v: v[i - 1] if 1 <= i <= len(v) else 0)
    check_both(t, values, lambda q: q.set_at(i, x),
               lambda v: [x if k + 1 == i else e for k, e in enumerate(v)])
    check_both(t, values, lambda q: q.prefix(i), lambda v: v[:max(i, 0)])
    check_both(t, values, lambda q: q.drop(i), lambda v: v[max(i, 0):])
    check_both(t, values, lambda q: q.contains(x), lambda v: x in v)
    check_both(t, values, lambda q: q.index_of(x), lambda v: v.index(x) + 1 if x in v else 0)
    short = [v for v in values if len(v) < 4]
    if short:
        check_both(t, short, lambda q: q.append(x), lambda v: v + [x])
        # exact through an intermediate longer than the capacity
        check_both(t, short, lambda q: q.append(x).append(x).tail(), lambda v: (v + [x, x])[1:])
    nonempty = [v for v in values if v]
    if nonempty:
        check_both(t, nonempty, lambda q: q.tail(), lambda v: v[1:])
    fits = [v for v in values if len(v) + len(other) <= 4]
    if fits:
        check_both(t, fits, lambda q: q.concat(other), lambda v: v + other)
        check_both(t, fits, lambda q: q == other, lambda v: v == other)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.lists(rec_vals, max_size=2), min_size=1, max_size=5), x=rec_vals)
def test_sequences_of_records(values, x) -> None:
    t = RSEQ
    check_both(t, values, lambda q: q.append(dict(x)), lambda v: v + [x])
    check_both(t, values, lambda q: q.contains(dict(x)), lambda v: x in v)
    check_both(t, values, lambda q: q.head().a, lambda v: v[0]["a"] if v else 0)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.lists(rec_vals, max_size=2), min_size=1, max_size=5),
       xs=st.lists(rec_vals, min_size=1, max_size=6))
def test_repeated_membership_tests_on_one_sequence_value(values, xs) -> None:
    # one value asked about several literals, some repeated, as the actions of a batch
    # ask their shared state view (the answers for literals are kept on the value)
    q = batch(RSEQ, values)
    for x in xs:
        got = q.contains(dict(x))
        at = q.index_of(dict(x))
        for i, v in enumerate(values):
            assert _row(got, i, len(values)) == (x in v)
            assert _row(at, i, len(values)) == (v.index(x) + 1 if x in v else 0)


bags = st.dictionaries(st.integers(0, 3), st.integers(1, 3), max_size=4)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(bags, min_size=1, max_size=6), x=st.integers(0, 3), other=bags)
def test_bag_operations(values, x, other) -> None:
    t = BAG

    def norm(c: Counter) -> dict[int, int]:
        return {k: n for k, n in c.items() if n > 0}

    check_both(t, values, lambda B: B.count(x), lambda v: v.get(x, 0))
    check_both(t, values, lambda B: B.has(x), lambda v: x in v)
    check_both(t, values, lambda B: B.remove(x), lambda v: norm(Counter(v) - Counter({x: 1})))
    check_both(t, values, lambda B: B - other, lambda v: norm(Counter(v) - Counter(other)))
    check_both(t, values, lambda B: B <= other,
               lambda v: all(n <= other.get(k, 0) for k, n in v.items()))
    check_both(t, values, lambda B: B.size(), lambda v: sum(v.values()))
    check_both(t, values, lambda B: B.choose(), lambda v: min(v, default=0))
    room = [v for v in values if v.get(x, 0) < 3]
    if room:
        check_both(t, room, lambda B: B.add(x), lambda v: norm(Counter(v) + Counter({x: 1})))


def test_set_literals_and_masks() -> None:
    S = one(WIDE, frozenset({1, 65}))
    assert bool(S == {1, 65}) and bool(S != {1}) and bool(S <= {1, 2, 65})
    with pytest.raises(SpecEvaluationError, match="bit masks are not sets"):
        _ = S == 3  # an integer is not a set: never silently False
    with pytest.raises(TypeError, match="ambiguous"):
        bool(S)
    assert WIDE.cells()[1][0] == ("bits1",) and len(WIDE.cells()) == 2
