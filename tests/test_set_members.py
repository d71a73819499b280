"""Quantifiers and folds over a set value visit the members present (the union over a
batch's states), not the element type: each fold, on a batch and on each of its states
alone, against a plain-Python fold over the set's decoded members (hypothesis); the
function is evaluated at exactly the elements some state holds; a spec whose folds
range over filtered multi-chunk sets of records gives the same successors on both
evaluators and the same counts as the spec spelled over the whole element type."""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import brute_force, random_walk
from evalcheck import assert_batch_matches_scalar
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    Ids,
    Int,
    Record,
    SetOf,
    Spec,
    SpecEvaluationError,
    action,
    all_of,
    any_of,
    choose,
    count_of,
    explore,
    has,
    invariant,
    max_of,
    min_of,
    sum_of,
    where,
)
from modelcheck.expr import collect_undefined
from modelcheck.kernel import Kernel

Src = Ids(1, 3)
#: 3 * 50 = 150 element values: three chunks of the set's cells
Msg = Record(src=Src, bal=Int(0, 49))


class Msgs(Spec):
    """Replicas send messages of ballots 0..MaxBal; the highest ballot seen, the number of
    messages from replica 1 and the least ballot of a filtered set are kept."""

    check_deadlock = False
    MaxBal = 49
    msgs = SetOf(Msg)
    top = Int(0, 49)
    ones = Int(0, 50)
    low = Int(0, 50)

    @action(src=Src, bal=range(0, 50, 16))
    def Send(self, s, t, src, bal):
        t.msgs = s.msgs.with_({"src": src, "bal": bal})
        return (s.msgs.size() < 2) & ~s.msgs.has({"src": src, "bal": bal})

    @action(k=range(1, 4))
    def Fold(self, s, t, k):
        mine = s.msgs & [{"src": k, "bal": b} for b in range(50)]
        t.top = max_of(s.msgs, lambda m: m.bal, default=0)
        t.ones = count_of(mine, lambda m: True)
        t.low = min_of(mine, lambda m: m.bal + s.top * 0, default=50)
        return any_of(s.msgs, lambda m: m.bal >= s.top) & all_of(
            mine, lambda m: m.src == k) & (sum_of(s.msgs, lambda m: m.bal) >= 0)

    @action
    def Drop(self, s, t):
        m = choose(s.msgs, lambda m: m.bal == max_of(s.msgs, lambda x: x.bal))
        t.msgs = s.msgs.without(m)
        return ~s.msgs.is_empty()

    @invariant
    def TopIsSent(self, s):
        return (s.top == 0) | any_of(s.msgs, lambda m: m.bal == s.top) | (s.top > 0)


class MsgsByHand(Msgs):
    """:class:`Msgs` with every fold spelled over the whole element type and ``has``."""

    @action(k=range(1, 4))
    def Fold(self, s, t, k):
        every = [({"src": a, "bal": b}, has(s.msgs, {"src": a, "bal": b}))
                 for a in (1, 2, 3) for b in range(50)]
        top, ones, low, some, total = 0, 0, 50, False, 0
        for m, inside in every:
            top = where(inside & (m["bal"] > top), m["bal"], top)
            mine = inside & (m["src"] == k)
            ones = ones + where(mine, 1, 0)
            low = where(mine & (m["bal"] < low), m["bal"], low)
            some = some | (inside & (m["bal"] >= s.top))
            total = total + where(inside, m["bal"], 0)
        t.top, t.ones, t.low = top, ones, low
        return some & (total >= 0)


def _set_type():
    leaf = Msgs().layout.vars["msgs"].leaf
    assert leaf is not None
    return leaf


def _codes(typ, members: set[int]) -> list[int]:
    return typ._from_members(sorted(members))


@st.composite
def batches(draw):
    n_elems = 150
    small = st.sets(st.integers(0, n_elems - 1), max_size=4)
    dense = st.sets(st.integers(0, n_elems - 1), max_size=n_elems)
    rows = draw(st.lists(st.one_of(small, small, dense, st.just(set())), min_size=1,
                         max_size=8))
    weights = draw(st.lists(st.integers(-5, 5), min_size=len(rows), max_size=len(rows)))
    mod = draw(st.integers(2, 7))
    return rows, weights, mod


def _folds(S, w, mod):
    """Every fold over set value ``S``; ``w`` stands for a state column."""
    def key(m):
        return (m.bal * 3 + m.src + w) % mod
    with collect_undefined() as undefined:
        out = {
            "any": any_of(S, lambda m: key(m) == 0),
            "all": all_of(S, lambda m: key(m) != 1),
            "count": count_of(S, lambda m: key(m) >= 1),
            "sum": sum_of(S, lambda m: key(m) + m.bal),
            "max": max_of(S, key, default=-1),
            "min": min_of(S, lambda m: m.bal - w, default=99),
            "choose_bal": choose(S, lambda m: key(m) == 0).bal,
            "choose_src": choose(S, lambda m: key(m) == 0).src,
            "max_nodefault": max_of(S, lambda m: m.bal * w),
        }
    undef = {}
    for u in undefined:
        undef[u.message[:20]] = np.asarray(u.mask)
    return out, undef


def _python(members, w, mod):
    """The folds over the decoded members (records as dicts) in plain Python."""
    ms = sorted(members, key=lambda m: (m["src"], m["bal"]))  # the type's order

    def key(m):
        return (m["bal"] * 3 + m["src"] + w) % mod
    hits = [m for m in ms if key(m) == 0]
    return {
        "any": any(key(m) == 0 for m in ms),
        "all": all(key(m) != 1 for m in ms),
        "count": sum(1 for m in ms if key(m) >= 1),
        "sum": sum(key(m) + m["bal"] for m in ms),
        "max": max((key(m) for m in ms), default=-1),
        "min": min((m["bal"] - w for m in ms), default=99),
        "choose_bal": hits[0]["bal"] if hits else None,
        "choose_src": hits[0]["src"] if hits else None,
        "max_nodefault": max((m["bal"] * w for m in ms), default=None),
    }


@settings(max_examples=150, deadline=None)
@given(case=batches())
def test_folds_over_members_batch_scalar_and_python(case) -> None:
    rows, weights, mod = case
    typ = _set_type()
    codes = [_codes(typ, r) for r in rows]
    cols = [np.array(c, dtype=np.int64) for c in zip(*codes)]
    w = np.array(weights, dtype=np.int64)
    batch, batch_undef = _folds(typ.view(cols), w, mod)
    for r, (row_codes, wr) in enumerate(zip(codes, weights)):
        one, one_undef = _folds(typ.view([np.int64(c) for c in row_codes]), np.int64(wr), mod)
        members = [{"src": m["src"], "bal": m["bal"]} for m in typ.value(row_codes)]
        expected = _python(members, wr, mod)
        for name, want in expected.items():
            got_batch = np.asarray(batch[name])
            got_batch = got_batch[r] if got_batch.ndim else got_batch
            if want is None:  # undefined: reported on this row by both evaluators
                assert any(m.ndim == 0 and bool(m) for m in one_undef.values())
                assert any(m.ndim and m[r] for m in batch_undef.values())
                continue
            assert int(one[name]) == int(got_batch) == int(want), (name, r)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.sets(st.integers(0, 149), max_size=5), min_size=1, max_size=6))
def test_the_function_is_evaluated_at_members_present_only(rows) -> None:
    typ = _set_type()
    cols = [np.array(c, dtype=np.int64) for c in zip(*[_codes(typ, r) for r in rows])]
    seen: list[int] = []

    def note(m):
        seen.append(int(m.src - 1) * 50 + int(m.bal))
        return m.bal >= 0

    any_of(typ.view(cols), note)
    union = set().union(*rows)
    # every member present once, in the type's order; an empty batch keeps one stand-in
    assert seen == (sorted(union) if union else [0])


def test_no_member_anywhere_is_undefined_not_an_empty_domain() -> None:
    typ = _set_type()
    empty = typ.view([np.zeros(3, dtype=np.int64)] * 3)
    with pytest.raises(SpecEvaluationError, match="max_of found no value"):
        max_of(empty, lambda m: m.bal)
    with pytest.raises(SpecEvaluationError, match="CHOOSE found no value"):
        choose(empty, lambda m: True)
    assert not any_of(empty, lambda m: True).any()
    assert all_of(empty, lambda m: False).all()
    assert max_of(empty, lambda m: m.bal, default=7).tolist() == [7, 7, 7]


@settings(max_examples=30, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=8), min_size=1, max_size=6))
def test_set_fold_spec_evaluators_agree(walks) -> None:
    k = Kernel(Msgs(), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


def test_set_fold_spec_counts_equal_the_spec_over_the_whole_type() -> None:
    r, h = explore(Msgs()), explore(MsgsByHand())
    assert r.status == h.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(Msgs())
    assert (r.distinct_states, r.depth) == (h.distinct_states, h.depth)


# -- folds whose value at each member is a constant, and filters ---------------------
# A fold whose function gives the same value in every state of the batch (a test of
# the element alone) is computed from which element positions each state holds, one
# mask per chunk (``SetValue._any_in``/``_count_in``) instead of one test per member;
# ``S.filter(keep)`` is ``{x \in S: keep(x)}``. Both against plain Python over the
# decoded members, on batches and on each state alone, in both set forms.

class Sparse(Spec):
    check_deadlock = False
    msgs = SetOf(Msg, max_size=6, form="codes")

    @action
    def Idle(self, s, t):
        return False


def _typ(form: str):
    spec = Msgs() if form == "bits" else Sparse()
    leaf = spec.layout.vars["msgs"].leaf
    assert leaf is not None
    return leaf


def _const_folds(S, w, mod):
    """Folds over ``S`` whose functions read the element alone, a fold over a filtered
    set (a constant and a per-state filter), and folds over a filter's result."""
    def key(m):
        return (m.bal * 3 + m.src) % mod
    mine = S.filter(lambda m: key(m) != 0)
    near = S.filter(lambda m: (m.bal + w) % mod == 0)
    with collect_undefined() as undefined:
        out = {
            "any": any_of(S, lambda m: key(m) == 0),
            "all": all_of(S, lambda m: key(m) != 1),
            "count": count_of(S, lambda m: key(m) >= 1),
            "sum": sum_of(S, lambda m: key(m) * 2 - m.bal),
            "max": max_of(S, key, default=-1),
            "min": min_of(S, lambda m: m.bal * 2 - m.src, default=99),
            "max_nodefault": max_of(S, lambda m: key(m) + 1),
            "mine_size": mine.size(),
            "mine_max": max_of(mine, lambda m: m.bal, default=-1),
            "near_size": near.size(),
            "near_sum": sum_of(near, lambda m: m.bal),
            "near_in_mine": count_of(near, lambda m: key(m) != 0),
        }
    undef = [np.asarray(u.mask) for u in undefined]
    return out, undef


def _const_python(members, w, mod):
    ms = sorted(members, key=lambda m: (m["src"], m["bal"]))

    def key(m):
        return (m["bal"] * 3 + m["src"]) % mod
    mine = [m for m in ms if key(m) != 0]
    near = [m for m in ms if (m["bal"] + w) % mod == 0]
    return {
        "any": any(key(m) == 0 for m in ms),
        "all": all(key(m) != 1 for m in ms),
        "count": sum(1 for m in ms if key(m) >= 1),
        "sum": sum(key(m) * 2 - m["bal"] for m in ms),
        "max": max((key(m) for m in ms), default=-1),
        "min": min((m["bal"] * 2 - m["src"] for m in ms), default=99),
        "max_nodefault": max((key(m) + 1 for m in ms), default=None),
        "mine_size": len(mine),
        "mine_max": max((m["bal"] for m in mine), default=-1),
        "near_size": len(near),
        "near_sum": sum(m["bal"] for m in near),
        "near_in_mine": sum(1 for m in near if key(m) != 0),
    }


@st.composite
def form_batches(draw):
    form = draw(st.sampled_from(["bits", "codes"]))
    most = 150 if form == "bits" else 6
    small = st.sets(st.integers(0, 149), max_size=min(4, most))
    dense = st.sets(st.integers(0, 149), max_size=most)
    rows = draw(st.lists(st.one_of(small, small, dense, st.just(set())), min_size=1,
                         max_size=8))
    weights = draw(st.lists(st.integers(-5, 5), min_size=len(rows), max_size=len(rows)))
    return form, rows, weights, draw(st.integers(2, 7))


@settings(max_examples=150, deadline=None)
@given(case=form_batches())
def test_constant_folds_and_filters_batch_scalar_and_python(case) -> None:
    form, rows, weights, mod = case
    typ = _typ(form)
    codes = [_codes(typ, r) for r in rows]
    cols = [np.array(c, dtype=np.int64) for c in zip(*codes)]
    batch, batch_undef = _const_folds(typ.view(cols), np.array(weights, dtype=np.int64), mod)
    for r, (row_codes, wr) in enumerate(zip(codes, weights)):
        one, one_undef = _const_folds(typ.view([np.int64(c) for c in row_codes]),
                                      np.int64(wr), mod)
        members = [{"src": m["src"], "bal": m["bal"]} for m in typ.value(row_codes)]
        for name, want in _const_python(members, wr, mod).items():
            got = np.asarray(batch[name])
            got = got[r] if got.ndim else got
            if want is None:  # max_of without default over an empty set: undefined here
                assert any(m.ndim == 0 and bool(m) for m in one_undef)
                assert any(m.ndim and m[r] for m in batch_undef)
                continue
            assert int(one[name]) == int(got) == int(want), (form, name, r)


@settings(max_examples=60, deadline=None)
@given(form=st.sampled_from(["bits", "codes"]),
       rows=st.lists(st.sets(st.integers(0, 149), max_size=5), min_size=1, max_size=6))
def test_a_filter_holds_the_members_that_pass(form, rows) -> None:
    typ = _typ(form)
    codes = [_codes(typ, r) for r in rows]
    cols = [np.array(c, dtype=np.int64) for c in zip(*codes)]
    row_bias = np.arange(len(rows), dtype=np.int64)
    kept = typ.view(cols).filter(lambda m: (m.bal + row_bias) % 2 == 0).filter(
        lambda m: m.src != 2)
    out = [np.asarray(c) for c in kept._columns()]
    for r, row_codes in enumerate(codes):
        got = typ.value([int(c[r]) for c in out])
        want = {m for m in typ.value(row_codes) if (m["bal"] + r) % 2 == 0 and m["src"] != 2}
        assert got == frozenset(want)


def test_a_constant_fold_on_a_batch_tests_no_member_alone(monkeypatch) -> None:
    from modelcheck.types.sets import SetValue, SparseSetValue

    calls: list[int] = []
    for cls in (SetValue, SparseSetValue):
        orig = cls._held_in
        monkeypatch.setattr(cls, "_held_in",
                            lambda self, i, orig=orig: calls.append(i) or orig(self, i))
    for form in ("bits", "codes"):
        typ = _typ(form)
        rows = [{0, 5, 70}, {140, 5}, set(), {149, 0, 1, 2}]
        S = typ.view([np.array(c, dtype=np.int64)
                      for c in zip(*[_codes(typ, r) for r in rows])])
        assert max_of(S, lambda m: m.bal, default=-1).tolist() == [20, 40, -1, 49]
        assert count_of(S, lambda m: m.src == 1).tolist() == [2, 1, 0, 3]
        assert S.filter(lambda m: m.bal < 40).size().tolist() == [3, 1, 0, 3]
        assert calls == []  # one mask per chunk or value, never a member's own test
        # a value that depends on the state: each member tested on its own
        w = np.arange(4, dtype=np.int64)
        assert max_of(S, lambda m, w=w: m.bal + w, default=-1).tolist() == [20, 41, -1, 52]
        assert calls
        calls.clear()
