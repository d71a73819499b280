"""Sets stored as sorted member codes (``SetOf(T, max_size=k)``) against the bit-vector
form: every set operation on both forms, on a batch and on each of its states alone,
gives the same Python value (hypothesis); random specs written over either form give
the same counts, depths and verdicts on both engines' evaluators, with and without
symmetry, and equal the brute-force explorer's; a set whose element type has far more
than ``MAX_ELEMENTS`` values is checked against the brute-force explorer; a member
past ``max_size`` is a spec error naming the variable and ``k``."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
import pytest
from bruteforce import brute_force, brute_force_check, random_walk
from evalcheck import assert_batch_matches_scalar
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Bag,
    Bool,
    Const,
    Ids,
    Int,
    Record,
    SetOf,
    Spec,
    SpecDefinitionError,
    SpecEvaluationError,
    Union,
    action,
    any_of,
    choose,
    count_of,
    explore,
    invariant,
    max_of,
    sum_of,
    where,
)
from modelcheck.itfvalues import Record as R
from modelcheck.kernel import Kernel
from modelcheck.types import MAX_ELEMENTS, BoundSparseSet, BoundType, SetValue, SparseSetValue


class Shape(enum.IntEnum):
    One = 0
    Two = 1


K = 5
DENSE = SetOf(Int(0, 69)).bound({})
SPARSE = SetOf(Int(0, 69), max_size=K).bound({})
RDENSE = SetOf(Record(a=Int(0, 2), b=Bool())).bound({})
RSPARSE = SetOf(Record(a=Int(0, 2), b=Bool()), max_size=3, form="codes").bound({})


def batch(t: BoundType, values: list[Any]) -> Any:
    codes = [t.codes(v) for v in values]
    return t.view([np.array(col, dtype=np.int64) for col in zip(*codes)])


def one(t: BoundType, v: Any) -> Any:
    return t.view([np.int64(c) for c in t.codes(v)])


def decoded(x: Any, n: int) -> list[Any]:
    """Row by row, a result as Python values (sets as frozensets, with ``"over"`` /
    ``"bad"`` for a row whose stored cells would be out of domain)."""
    if isinstance(x, SetValue):
        t = x._type
        cols = [np.broadcast_to(np.asarray(c), (n,)) for c in x._columns()]
        out = []
        for i in range(n):
            codes = [int(c[i]) for c in cols]
            cells = t.cells()
            if any(not ct.lo <= c <= ct.hi for c, (_, ct) in zip(codes, cells)):
                out.append("out")
            else:
                out.append(t.value(codes))
        return out
    if hasattr(x, "_columns"):  # a record value
        cols = [np.broadcast_to(np.asarray(c), (n,)) for c in x._columns()]
        return [x._type.value([int(c[i]) for c in cols]) for i in range(n)]
    arr = np.broadcast_to(np.asarray(x), (n,))
    return [bool(v) if arr.dtype == np.bool_ else int(v) for v in arr]


def same(dense: BoundType, sparse: BoundType, values: list[Any], op) -> None:
    """``op`` on both forms, batch and each state alone, agrees row by row."""
    n = len(values)
    want = decoded(op(batch(dense, values)), n)
    assert decoded(op(batch(sparse, values)), n) == want, values
    for i, v in enumerate(values):
        assert decoded(op(one(sparse, v)), 1) == [want[i]], (v, want[i])
        assert decoded(op(one(dense, v)), 1) == [want[i]], (v, want[i])


def overflow_or(v: frozenset, k: int) -> Any:
    return "out" if len(v) > k else v


small = st.frozensets(st.integers(0, 69), max_size=K)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(small, min_size=1, max_size=6), other=small, x=st.integers(-2, 71))
def test_sparse_set_operations_equal_the_bit_vector(values, other, x) -> None:
    d, s = DENSE, SPARSE
    for op in (lambda S: S.has(x), lambda S: S.without(x), lambda S: S <= other,
               lambda S: S >= other, lambda S: S < other, lambda S: S == other,
               lambda S: S != other, lambda S: S.size(), lambda S: S.is_empty(),
               lambda S: S.min(), lambda S: S.max(), lambda S: S.choose(),
               lambda S: S & other, lambda S: S - other, lambda S: other - S,
               lambda S: any_of(S, lambda m: m % 3 == x % 3),
               lambda S: sum_of(S, lambda m: m * 2 + 1),
               lambda S: count_of(S, lambda m: m > x),
               lambda S: max_of(S, lambda m: m % 7, default=-1)):
        same(d, s, values, op)
    # growing ops: the same set where it fits, an out-of-domain store where it does not
    n = len(values)
    for op, py in ((lambda S: S | other, lambda v: v | other),
                   (lambda S: S.with_(x), lambda v: v | {x})):
        got = decoded(op(batch(s, values)), n)
        if 0 <= x <= 69:
            assert got == [overflow_or(py(v), K) for v in values]
        for i, v in enumerate(values):
            assert decoded(op(one(s, v)), 1) == [got[i]]
    if not 0 <= x <= 69:
        assert decoded(batch(s, values).with_(x), n) == ["out"] * n


@settings(max_examples=40, deadline=None)
@given(values=st.lists(small, min_size=2, max_size=6),
       xs=st.lists(st.integers(-1, 70), min_size=6, max_size=6))
def test_sparse_set_dynamic_elements(values, xs) -> None:
    """Elements that differ from state to state (columns), against Python."""
    n = len(values)
    x = np.array(xs[:n], dtype=np.int64)
    S = batch(SPARSE, values)
    assert list(S.has(x)) == [xs[i] in values[i] for i in range(n)]
    assert decoded(S.with_(x), n) == [
        "out" if not 0 <= xs[i] <= 69 else overflow_or(values[i] | {xs[i]}, K)
        for i in range(n)]
    assert decoded(S.without(x), n) == [values[i] - {xs[i]} for i in range(n)]
    # literals of a constant and a column element: operands (an element outside the
    # type marks the result, as in the bit-vector form), and stored
    lit = [{xs[i], 3} - {-1, 70} for i in range(n)]
    # an element outside the type in an operand of & or - changes nothing (as in TLA+);
    # in a union it is stored, an error; a literal holding it is a subset of no set
    D = batch(DENSE, values)
    for op, py, grows in ((lambda S: S & [x, 3], lambda a, b: a & b, False),
                          (lambda S: S - [x, 3], lambda a, b: a - b, False),
                          (lambda S: S | [x, 3], lambda a, b: a | b, True)):
        got, dense = decoded(op(S), n), decoded(op(D), n)
        for i in range(n):
            inside = 0 <= xs[i] <= 69
            want = py(values[i], lit[i])
            assert dense[i] == ("out" if grows and not inside else want), i
            assert got[i] == ("out" if grows and not inside else
                              overflow_or(want, K) if grows else want), i
    for T in (S, D):
        assert list(T <= [x, 3]) == [values[i] <= lit[i] for i in range(n)]
        assert list(T >= [x, 3]) == [values[i] >= {xs[i], 3} for i in range(n)]
    stored = SPARSE.view(SPARSE.columns([x, 3]))
    assert decoded(stored, n) == ["out" if not 0 <= xs[i] <= 69 else lit[i]
                                  for i in range(n)]


rec_vals = st.builds(lambda a, b: R(a=a, b=b), st.integers(0, 2), st.booleans())
rec_sets = st.frozensets(rec_vals, max_size=3)


@settings(max_examples=40, deadline=None)
@given(values=st.lists(rec_sets, min_size=1, max_size=6), other=rec_sets, x=rec_vals)
def test_sparse_sets_of_records(values, other, x) -> None:
    for op in (lambda S: S.has(dict(x)), lambda S: S.without(dict(x)),
               lambda S: S & other, lambda S: S - other, lambda S: S <= other,
               lambda S: S.size(), lambda S: S.min(), lambda S: S.max(),
               lambda S: any_of(S, lambda m: m.b),
               lambda S: max_of(S, lambda m: m.a * 2 + where(m.b, 1, 0), default=-1),
               lambda S: sum_of(S, lambda m: m.a)):
        same(RDENSE, RSPARSE, values, op)


def test_mixed_forms_and_literals() -> None:
    """A bit-vector value where a sparse one is expected (and back) converts member by
    member; canonical slots make equality set equality."""
    a = one(SPARSE, {3, 60})
    b = one(DENSE, {60, 3})
    assert bool(a == b) and bool(b == a)
    assert decoded(a | b, 1) == [frozenset({3, 60})]
    assert decoded(b | a.with_(4), 1) == [frozenset({3, 4, 60})]
    assert SPARSE.codes([60, 3, 60]) == [3, 60, 70, 70, 70]
    with pytest.raises(ValueError, match="max_size 5"):
        SPARSE.codes(list(range(6)))


def test_refusals_at_load() -> None:
    big = Record(a=Int(0, 99), b=Int(0, 99))  # 10,000 values
    with pytest.raises(SpecDefinitionError, match=r"max_size=k"):
        SetOf(big).bound({})
    with pytest.raises(SpecDefinitionError, match="positive integer"):
        SetOf(big, max_size=0).bound({})
    with pytest.raises(SpecDefinitionError, match="init"):
        SetOf(Int(0, 9), init=[1, 2, 3], max_size=2).bound({})
    inner = SetOf(Int(0, 3), max_size=2)
    for outer in (SetOf(inner), SetOf(Record(a=inner), max_size=3), Bag(inner, 2),
                  Union("type", Shape, One=Record(s=inner), Two=None)):
        with pytest.raises(SpecDefinitionError, match=r"max_size 2\), a set of at most k "
                                                      r"members"):
            outer.bound({})

    class Param(Spec):
        x = Int(0, 1)

        @action(S=inner)
        def Pick(self, s, t, S):
            return True

    with pytest.raises(SpecDefinitionError, match=r"parameter S of action Pick holds"):
        Param()
    t = SetOf(big, max_size=4).bound({})
    assert isinstance(t, BoundSparseSet) and t.elem.n_values > MAX_ELEMENTS
    # 4 slots of ceil(log2(10,001)) = 14 bits
    assert [c.size for _, c in t.cells()] == [10_001] * 4


# ----------------------------------------------------------------- whole specs
def make_spec(sparse: bool | str, n: int, v: int, k: int, sym: bool, bound: int) -> Spec:
    """Replicas post records and join a group; folds, unions, intersections and
    differences over both sets; ``Posts`` bounds the messages (violated when ``bound``
    is below ``k``). ``sparse``: False for unbounded bit vectors, True (or ``"codes"``)
    for member codes, ``"bits"`` for bit vectors bounded by the same ``max_size``."""
    form = "codes" if sparse is True else sparse
    opt = {"max_size": k, "form": form} if sparse else {}
    grp = {"max_size": n, "form": form} if sparse else {}

    class Groups(Spec):
        check_deadlock = False
        N = Const(n)
        Procs = Ids(1, N)
        symmetry = ("Procs",) if sym else ()
        msgs = SetOf(Record(src=Procs, val=Int(0, v)), **opt)
        group = SetOf(Procs, **grp)
        top = Int(0, v)

        @action(p=Procs, x=range(v + 1))
        def Post(self, s, t, p, x):
            t.msgs = s.msgs.with_({"src": p, "val": x})
            return (s.msgs.size() < k) & s.group.has(p)

        @action(p=Procs)
        def Join(self, s, t, p):
            t.group = s.group.with_(p)
            return ~s.group.has(p)

        @action(p=Procs)
        def Leave(self, s, t, p):
            mine = [{"src": p, "val": x} for x in range(v + 1)]
            t.msgs = s.msgs - mine
            t.group = s.group.without(p)
            return s.group.has(p) & (s.group.size() > 1)

        @action
        def Deliver(self, s, t):
            m = choose(s.msgs, lambda m: m.val == max_of(s.msgs, lambda y: y.val))
            t.top = m.val
            t.msgs = s.msgs.without(m)
            return ~s.msgs.is_empty()

        @action(p=Procs)
        def Keep(self, s, t, p):
            keep = [{"src": q, "val": x} for q in self.Procs if q != p
                    for x in range(v + 1)]
            t.msgs = (s.msgs & keep) | [{"src": p, "val": 0}]
            return s.group.has(p) & (count_of(s.msgs, lambda m: m.src == p) > 1)

        @invariant
        def Posts(self, s):
            return s.msgs.size() <= bound

        @invariant
        def FromMembers(self, s):
            return ~any_of(s.msgs, lambda m: ~s.group.has(m.src)) | (s.top >= 0)

        @invariant
        def Sums(self, s):
            return sum_of(s.msgs, lambda m: m.val) == sum_of(
                s.msgs, lambda m: where(m.val > 0, m.val, 0))

    return Groups()


specs = st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(1, 3), st.booleans(),
                  st.integers(0, 3))


@settings(max_examples=25, deadline=None)
@given(case=specs)
def test_specs_over_either_form_agree(case) -> None:
    n, v, k, sym, bound = case
    d, s = make_spec(False, n, v, k, sym, bound), make_spec(True, n, v, k, sym, bound)
    rd, rs = explore(d), explore(s)
    assert (rs.status, rs.distinct_states, rs.depth) == (rd.status, rd.distinct_states,
                                                         rd.depth)
    rb = explore(make_spec("bits", n, v, k, sym, bound))  # bit vectors bounded by k
    assert (rb.status, rb.distinct_states, rb.depth) == (rd.status, rd.distinct_states,
                                                         rd.depth)
    if rd.status == "violation":
        assert rs.violation.property == rd.violation.property
        assert len(rs.violation.trace) == len(rd.violation.trace)
    if not sym:  # (the brute-force canonicaliser permutes sets of ids only)
        o = brute_force_check(s)
        assert (o.status, o.distinct, o.depth) == (rs.status, rs.distinct_states, rs.depth)


@settings(max_examples=25, deadline=None)
@given(case=specs, walks=st.lists(st.lists(st.integers(0, 1000), max_size=8), min_size=1,
                                  max_size=5))
def test_sparse_spec_evaluators_agree(case, walks) -> None:
    n, v, k, sym, bound = case
    for form in ("codes", "bits"):
        kern = Kernel(make_spec(form, n, v, k, sym, bound))
        assert_batch_matches_scalar(kern, [random_walk(kern, w) for w in walks])


class Overflow(Spec):
    check_deadlock = False
    S = SetOf(Int(0, 9), max_size=2)

    @action(x=range(10))
    def Add(self, s, t, x):
        t.S = s.S.with_(x)
        return ~s.S.has(x)


def test_a_member_past_max_size_is_a_spec_error_naming_the_variable() -> None:
    with pytest.raises(SpecEvaluationError, match=r"action Add\(\d\) adds to S a member "
                       r"beyond its max_size 2 \(S is a SetOf\(0\.\.9, max_size=2\)"):
        explore(Overflow())
    kern = Kernel(Overflow())
    full = Overflow().layout.cells_from_values({"S": {1, 2}})
    with pytest.raises(SpecEvaluationError, match="beyond its max_size 2"):
        kern.successors(full)


# -------------------------------------------------- beyond MAX_ELEMENTS values
class Ledger(Spec):
    """Two clerks write entries ``[clerk, account, amount]`` (2 * 64 * 64 = 8,192
    possible entries, twice ``MAX_ELEMENTS``) into a ledger of at most 3 entries, and
    settle the largest amount."""

    check_deadlock = False
    Clerks = Ids(1, 2)
    ledger = SetOf(Record(clerk=Clerks, acct=Int(0, 63), amt=Int(0, 63)), max_size=3)
    settled = Int(0, 63)

    @action(c=Clerks, a=(0, 31, 63), x=(1, 40))
    def Write(self, s, t, c, a, x):
        t.ledger = s.ledger.with_({"clerk": c, "acct": a, "amt": x})
        return s.ledger.size() < 3

    @action
    def Settle(self, s, t):
        e = choose(s.ledger, lambda e: e.amt == max_of(s.ledger, lambda f: f.amt))
        t.settled = e.amt
        t.ledger = s.ledger.without(e)
        return ~s.ledger.is_empty()

    @invariant
    def Balanced(self, s):
        return any_of(s.ledger, lambda e: e.acct == 63) | (s.ledger.size() < 3) | True


def test_set_beyond_max_elements_against_brute_force() -> None:
    spec = Ledger()
    leaf = spec.layout.vars["ledger"].leaf
    assert leaf is not None and leaf.elem.n_values > MAX_ELEMENTS
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(Ledger())
    kern = Kernel(Ledger())
    assert_batch_matches_scalar(kern, [random_walk(kern, list(range(i, i + 6)))
                                       for i in range(5)])


def test_sparse_values_render_as_sets() -> None:
    spec = Ledger()
    cells = spec.layout.cells_from_values(
        {"ledger": [R(clerk=2, acct=0, amt=1), R(clerk=1, acct=63, amt=40)], "settled": 0})
    vals = spec.layout.values_from_cells(cells)
    assert vals["ledger"] == frozenset({R(clerk=2, acct=0, amt=1),
                                        R(clerk=1, acct=63, amt=40)})
    assert spec.layout.cells_from_values(vals) == cells
    leaf = spec.layout.vars["ledger"].leaf
    assert leaf is not None
    assert isinstance(leaf.view([np.int64(c) for c in cells[:3]]), SparseSetValue)


@settings(max_examples=30, deadline=None)
@given(v=rec_sets)
def test_sparse_rendering_equals_the_bit_vector(v) -> None:
    for d, s in ((RDENSE, RSPARSE), (DENSE, SPARSE)):
        vv = v if d is RDENSE else frozenset(m["a"] * 20 + m["b"] for m in v)
        dc, sc = d.codes(vv), s.codes(vv)
        assert s.show(sc) == d.show(dc)
        assert s.show(sc, short=True) == d.show(dc, short=True)
        assert s.value(sc, itf=True) == d.value(dc, itf=True)
        assert s.value(sc) == d.value(dc) == vv
        assert s.codes_from_itf(d.value(dc, itf=True)) == sc


# ------------------------------------------------------ symmetry and parameters
class SymSets(Spec):
    """The same set of records (18 values, ids of ``P3`` in two fields) in both forms."""

    P3 = Ids(1, 3)
    dense = SetOf(Record(src=P3, dst=P3, n=Int(0, 1)))
    sparse = SetOf(Record(src=P3, dst=P3, n=Int(0, 1)), max_size=4, form="codes")

    @action
    def Stay(self, s, t):
        return True


SYM_DENSE = SymSets().layout.vars["dense"].btype
SYM_SPARSE = SymSets().layout.vars["sparse"].btype
sym_vals = st.builds(lambda a, b, n: R(src=a, dst=b, n=n), st.integers(1, 3),
                     st.integers(1, 3), st.integers(0, 1))


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.frozensets(sym_vals, max_size=4), min_size=1, max_size=6),
       perms=st.lists(st.permutations([1, 2, 3]), min_size=1, max_size=4))
def test_sparse_symmetry_moves_sets_as_the_bit_vector_does(values, perms) -> None:
    """Each permutation alone (``cells_permutation``) and all at once
    (``cells_permutations``) move a sparse set to the set the bit-vector form moves to,
    in canonical (sorted) slots."""
    many = [{"P3": dict(zip([1, 2, 3], p))} for p in perms]
    n = len(values)

    def cols(t):
        return [np.array(c, dtype=np.int64) for c in zip(*[t.codes(v) for v in values])]

    def sets(t, moved):
        return [t.value([int(c[i]) for c in moved]) for i in range(n)]

    many = [pis for pis in many if any(a != b for a, b in pis["P3"].items())]
    if not many:
        return
    dense_all = SYM_DENSE.cells_permutations(many)
    sparse_all = SYM_SPARSE.cells_permutations(many)
    assert dense_all is not None and sparse_all is not None
    d_block = dense_all(np.stack(cols(SYM_DENSE))[None])
    s_block = sparse_all(np.stack(cols(SYM_SPARSE))[None])
    for p, pis in enumerate(many):
        dense_one, sparse_one = (SYM_DENSE.cells_permutation(pis),
                                 SYM_SPARSE.cells_permutation(pis))
        assert dense_one is not None and sparse_one is not None
        want = sets(SYM_DENSE, dense_one(cols(SYM_DENSE)))
        one_perm = sparse_one(cols(SYM_SPARSE))
        assert sets(SYM_SPARSE, one_perm) == want
        assert sets(SYM_SPARSE, list(s_block[p])) == sets(SYM_DENSE, list(d_block[p])) == want
        for i, v in enumerate(want):  # canonical: the slots of the moved set
            assert [int(c[i]) for c in one_perm] == SYM_SPARSE.codes(v)
            assert [int(c) for c in s_block[p][:, i]] == SYM_SPARSE.codes(v)


def test_member_of_a_sparse_set_gives_tlcs_two_phase_counts() -> None:
    """TwoPhase.tla with its message set stored as member codes (at most N + 1
    messages are ever sent: one Prepared per RM and one decision): TLC 2.20's counts
    (RM = 3: 288 distinct, 1,146 generated, depth 11), ``MemberOf`` parameters over
    it included; the same state graph as the bit-vector form on both evaluators."""
    from examples.tla.two_phase import Msg, TwoPhase

    class TwoPhaseSparse(TwoPhase):
        msgs = SetOf(Msg, max_size=TwoPhase.N + 1, form="codes")

    r = explore(TwoPhaseSparse(N=3))
    # TLC counts the initial state among the generated ones, and states in its depth
    assert (r.status, r.distinct_states, r.generated_states + 1, r.depth + 1) == (
        "ok", 288, 1_146, 11)
    leaf = TwoPhaseSparse(N=3).layout.vars["msgs"].leaf
    assert isinstance(leaf, BoundSparseSet) and leaf.max_size == 4
    kern = Kernel(TwoPhaseSparse(N=3))
    assert_batch_matches_scalar(kern, [random_walk(kern, list(range(i, i + 9)))
                                       for i in range(6)])


def test_inspect_shows_slots_and_bits() -> None:
    rows = {r["name"]: r for r in Ledger().layout.describe()}
    # 3 slots of ceil(log2(8,192 + 1)) = 14 bits, whatever the element type's size
    assert rows["ledger"]["domain"].endswith("(max_size 3)")
    assert (rows["ledger"]["cells"], rows["ledger"]["bits"]) == (3, 3 * 14)


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_the_ledger_example_against_brute_force(cap: int) -> None:
    """``examples/ledger.py``: a set over 2,000,000 record values, at most ``cap`` held."""
    from examples.ledger import Ledger as ExampleLedger

    r = explore(ExampleLedger(Cap=cap))
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(ExampleLedger(Cap=cap))


@pytest.mark.parametrize("form", ["codes", "bits"])
@pytest.mark.parametrize("fmt", ["itf", "json"])
def test_sparse_counterexamples_render_round_trip_and_replay(fmt: str, form: str) -> None:
    """A counterexample through a set of at most k members (member codes, or a bit
    vector bounded by k): the same rendered trace as the unbounded bit vector's, and it
    survives ITF / JSON and replays."""
    from modelcheck.trace import Trace, loads_trace, trace_to_itf
    from modelcheck.trace.itf import dumps_itf
    from modelcheck.trace.model import dumps_trace_json
    from modelcheck.trace.render import render_trace
    from modelcheck.trace.replay import replay

    sparse, dense = make_spec(form, 2, 1, 3, False, 1), make_spec(False, 2, 1, 3, False, 1)
    rs, rd = explore(sparse), explore(dense)
    assert rs.status == rd.status == "violation"
    ts, td = Trace.from_result(rs), Trace.from_result(rd)
    assert [s.state for s in ts.steps] == [s.state for s in td.steps]
    assert render_trace(ts) == render_trace(td)
    text = dumps_itf(trace_to_itf(ts)) if fmt == "itf" else dumps_trace_json(ts)
    back = loads_trace(text, source_file="t.itf.json" if fmt == "itf" else "t.json")
    assert replay(sparse, back).ok


def make_inboxes(sparse: bool, sym: bool) -> Spec:
    """An array of sets of records (ids of the symmetric set in the index and in the
    elements): sends and receives."""
    opt = {"max_size": 2, "form": "codes"} if sparse else {}

    class Inboxes(Spec):
        check_deadlock = False
        P = Ids(1, 3)
        symmetry = ("P",) if sym else ()
        inbox = Array(P, SetOf(Record(src=P, n=Int(0, 1)), **opt))

        @action(p=P, q=P, n=range(2))
        def Send(self, s, t, p, q, n):
            t.inbox[q] = s.inbox[q].with_({"src": p, "n": n})
            return (p != q) & (s.inbox[q].size() < 2)

        @action(q=P)
        def Recv(self, s, t, q):
            m = choose(s.inbox[q], lambda m: m.n == max_of(s.inbox[q], lambda x: x.n))
            t.inbox[q] = s.inbox[q].without(m)
            return ~s.inbox[q].is_empty()

    return Inboxes()


@pytest.mark.parametrize("sym", [False, True])
def test_arrays_of_sparse_sets_under_symmetry(sym: bool) -> None:
    d, s = explore(make_inboxes(False, sym)), explore(make_inboxes(True, sym))
    assert (s.status, s.distinct_states, s.depth, s.generated_states) == (
        d.status, d.distinct_states, d.depth, d.generated_states)
    if not sym:
        assert (s.distinct_states, s.depth) == brute_force(make_inboxes(True, False))
    kern = Kernel(make_inboxes(True, sym))
    assert_batch_matches_scalar(kern, [random_walk(kern, list(range(i, i + 7)))
                                       for i in range(6)])


def test_inspect_shows_each_set_variables_form_and_bits() -> None:
    """``inspect --format json`` lists, per variable, each set's form (bit vector or
    member codes) and its bits; the text form shows it after the variable's bits.
    The bits are computed from the type (one per element; k codes of
    ceil(log2(|T| + 1)) bits), not written down."""
    import json
    import subprocess
    import sys

    from examples.ledger import Ledger as LedgerExample
    from examples.two_phase_commit import TwoPhaseCommit

    def run(spec: str, *args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "modelcheck", "inspect", spec, *args],
                             capture_output=True, text=True, check=True)
        return out.stdout

    rows = {v["name"]: v for v in json.loads(run("examples/ledger.py", "--format", "json"))
            ["variables"]}
    ledger_t = LedgerExample().layout.vars["ledger"].btype
    assert isinstance(ledger_t, BoundSparseSet)
    code_bits = ledger_t.max_size * ledger_t.elem.n_values.bit_length()
    assert rows["ledger"]["sets"] == [f"member codes {code_bits} bits"]
    assert rows["settled"]["sets"] == []
    rows = {v["name"]: v for v in json.loads(
        run("examples/two_phase_commit.py", "--format", "json"))["variables"]}
    n = TwoPhaseCommit().layout.vars["msgPrepared"].btype.elem.n_values
    assert rows["msgPrepared"]["sets"] == [f"bit vector {n} bits"]
    assert f"(member codes {code_bits} bits)" in run("examples/ledger.py")
