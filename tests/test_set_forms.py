"""How ``SetOf`` chooses its form: the bit vector (one bit per possible element, at most
``MAX_ELEMENTS``) or member codes (``max_size`` sorted codes).

The rule (:func:`modelcheck.types.sets.choose_set_form`) at its boundary (4,096 vs
4,097 elements, a bound below, at or above the element count); the explicit
``form=`` and its refusals; specs over random element domains and bounds written with
the automatic choice and with an explicit bit vector give the same counts as the
brute-force explorer (beyond the cap, where no bit vector exists, the brute-force
explorer alone); the unbounded case beyond the cap is refused with one paragraph,
exit 2 on the CLI."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from bruteforce import brute_force
from hypothesis import example, given, settings
from hypothesis import strategies as st

from modelcheck import (
    Int,
    Record,
    SetOf,
    Spec,
    SpecDefinitionError,
    SpecEvaluationError,
    action,
    any_of,
    choose,
    explore,
    invariant,
    max_of,
    sum_of,
)
from modelcheck.types import MAX_ELEMENTS, BoundSet, BoundSparseSet, choose_set_form


def _bound(n: int, **kw: Any) -> BoundSet:
    t = SetOf(Int(0, n - 1), **kw).bound({})
    assert isinstance(t, BoundSet)
    return t


# ------------------------------------------------------------------ the rule
def test_the_cap_is_4096() -> None:
    assert MAX_ELEMENTS == 4096


def test_without_a_bound_the_bit_vector_up_to_the_cap_then_a_refusal() -> None:
    t = _bound(4096)
    assert not isinstance(t, BoundSparseSet) and t.width == 4096
    with pytest.raises(SpecDefinitionError, match=r"SetOf\(0\.\.4096\) has 4097 possible "
                       r"elements, more than the 4096 a bit vector holds .*and no bound "
                       r"on its members\. Give .*max_size=k\).* codes of 13 bits"):
        _bound(4097)
    assert choose_set_form(4096, None) == "bits" and choose_set_form(4097, None) is None


def test_a_bound_chooses_the_form_of_fewer_bits_below_the_cap() -> None:
    """``n`` bits against ``min(k, n)`` codes of ``ceil(log2(n + 1))`` bits; on a tie
    the bit vector."""
    cases = {(70, 5): "codes",  # 70 bits against 5 * 7 = 35
             (70, 10): "bits",  # 70 against 10 * 7: a tie
             (64, 9): "codes",  # 64 against 9 * 7 = 63
             (8, 3): "bits", (8, 2): "bits", (8, 1): "codes",  # 8 against 12, 8, 4
             (4096, 315): "codes", (4096, 316): "bits"}  # 315 * 13 = 4,095; 4,108
    for (n, k), want in cases.items():
        t = _bound(n, max_size=k)
        assert isinstance(t, BoundSparseSet) == (want == "codes"), (n, k)
        if want == "codes":
            assert t.max_size == k and [c.size for _, c in t.cells()] == [n + 1] * k
        else:
            assert t.width == n and t.limit == (k if k < n else None)
            assert t.describe().endswith(f"(max_size {k})") == (k < n)


def test_beyond_the_cap_a_bound_chooses_member_codes() -> None:
    for n, k in ((4097, 1), (4097, 4096), (10_000, 700)):
        t = _bound(n, max_size=k)
        assert isinstance(t, BoundSparseSet) and t.max_size == k
        assert [c.size for _, c in t.cells()] == [n + 1] * k
    # a bound at or above the element count: the codes, clamped to the element count
    t = _bound(4097, max_size=5000)
    assert isinstance(t, BoundSparseSet) and t.max_size == 4097


def test_a_bound_that_says_nothing_keeps_an_unbounded_bit_vector() -> None:
    for n, k in ((1, 1), (8, 8), (8, 100), (4096, 4096)):
        t = _bound(n, max_size=k)
        assert not isinstance(t, BoundSparseSet) and t.width == n and t.limit is None


def test_an_explicit_form() -> None:
    t = _bound(8, max_size=8, form="codes")
    assert isinstance(t, BoundSparseSet) and t.max_size == 8
    assert not isinstance(_bound(8, form="bits"), BoundSparseSet)
    t = _bound(70, max_size=3, form="bits")
    assert not isinstance(t, BoundSparseSet) and t.limit == 3
    assert not isinstance(_bound(4096, max_size=4096, form="bits"), BoundSparseSet)
    with pytest.raises(SpecDefinitionError, match=r"form=\"codes\"\) needs max_size=k"):
        _bound(8, form="codes")
    with pytest.raises(SpecDefinitionError, match=r"form=\"bits\"\) has 4097 possible "
                                                  r"elements; at most 4096"):
        _bound(4097, form="bits")
    with pytest.raises(SpecDefinitionError, match=r"form='dense'\): form is \"bits\""):
        _bound(8, form="dense")


def test_bounded_sets_are_refused_where_values_are_numbered() -> None:
    """A set of at most k members (either form) is not every subset of its element
    type, so it cannot be an element (refused); a set whose bound says nothing can."""
    outer = SetOf(SetOf(Int(0, 3), max_size=4)).bound({})
    assert isinstance(outer, BoundSet) and outer.width == 16
    for inner in (SetOf(Int(0, 3), max_size=3), SetOf(Int(0, 3), max_size=3, form="codes")):
        with pytest.raises(SpecDefinitionError, match=r"a set of at most k members"):
            SetOf(inner).bound({})


def _oracle_form(n: int, k: int | None) -> str | None:
    """The form of fewest bits among those that hold every value: the bit vector up to
    the cap, the codes when there is a bound; the bit vector on a tie."""
    cost = {}
    if n <= MAX_ELEMENTS:
        cost["bits"] = n
    if k is not None:
        cost["codes"] = min(k, n) * (len(bin(n)) - 2)  # bits of the code n (the empty slot)
    return min(cost, key=lambda f: (cost[f], f != "bits")) if cost else None


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 3 * MAX_ELEMENTS), k=st.none() | st.integers(1, 3 * MAX_ELEMENTS))
def test_the_chosen_form_is_the_one_of_fewest_bits(n: int, k: int | None) -> None:
    assert choose_set_form(n, k) == _oracle_form(n, k)


# ------------------------------------------------------------- whole specs
def make(n_a: int, n_b: int, k: int, **decl: Any) -> Spec:
    """Messages over ``[a: 0..n_a-1, b: 0..n_b-1]`` (``n_a * n_b`` possible records,
    nine of them sent, spread over the product), at most ``k`` held: sends, receives
    by a fold and ``choose``, quantified invariants."""

    def rec(p: int, x: int) -> dict[str, int]:
        return {"a": (p * 37 + x * 11) % n_a, "b": (x * 53 + p * 7) % n_b}

    class Msgs(Spec):
        check_deadlock = False
        msgs = SetOf(Record(a=Int(0, n_a - 1), b=Int(0, n_b - 1)), **decl)
        last = Int(0, n_a)  # (two values at least)

        @action(p=range(3), x=range(3))
        def Send(self, s, t, p, x):
            t.msgs = s.msgs.with_(rec(p, x))
            return (s.msgs.size() < k) & ~s.msgs.has(rec(p, x))

        @action
        def Recv(self, s, t):
            m = choose(s.msgs, lambda m: m.a == max_of(s.msgs, lambda y: y.a))
            t.msgs = s.msgs.without(m)
            t.last = m.a
            return ~s.msgs.is_empty()

        @invariant
        def Bounded(self, s):
            return s.msgs.size() <= k

        @invariant
        def Sums(self, s):
            return sum_of(s.msgs, lambda m: m.a + m.b) >= 0

        @invariant
        def Known(self, s):
            return ~any_of(s.msgs, lambda m: m.b >= n_b)

    return Msgs()


domains = st.tuples(st.integers(1, 90), st.integers(1, 90), st.integers(1, 4))


@settings(max_examples=30, deadline=None)
@given(case=domains)
@example(case=(1, 64, 1)).via("64 bits of chunks")
@example(case=(64, 65, 3)).via("beyond the cap")
def test_automatic_and_explicit_forms_agree_with_brute_force(case) -> None:
    """The automatic choice, member codes, a bounded and an unbounded bit vector (below
    the cap): the same counts, equal to the brute-force explorer's."""
    n_a, n_b, k = case
    auto = make(n_a, n_b, k, max_size=k)
    leaf = auto.layout.vars["msgs"].leaf
    assert isinstance(leaf, BoundSparseSet) == (_oracle_form(n_a * n_b, k) == "codes")
    ra = explore(auto)
    assert ra.status == "ok"
    assert (ra.distinct_states, ra.depth) == brute_force(auto)
    others = [make(n_a, n_b, k, max_size=k, form="codes")]
    if n_a * n_b <= MAX_ELEMENTS:
        others += [make(n_a, n_b, k, max_size=k, form="bits"), make(n_a, n_b, k)]
    for spec in others:
        r = explore(spec)
        assert (r.status, r.distinct_states, r.depth, r.generated_states) == (
            ra.status, ra.distinct_states, ra.depth, ra.generated_states)


def overflow(n: int, k: int, **decl: Any) -> Spec:
    class Overflow(Spec):
        check_deadlock = False
        S = SetOf(Int(0, n - 1), max_size=k, **decl)

        @action(x=range(n))
        def Add(self, s, t, x):
            t.S = s.S.with_(x)
            return ~s.S.has(x)

    return Overflow()


@pytest.mark.parametrize("n,k", [(8, 3), (70, 3), (130, 2)])  # 1, 2, 3 chunks
def test_a_member_past_max_size_is_the_same_error_in_either_form(n: int, k: int) -> None:
    msgs = []
    for form in ("bits", "codes"):
        spec = overflow(n, k, form=form)
        assert isinstance(spec.layout.vars["S"].leaf, BoundSparseSet) == (form == "codes")
        with pytest.raises(SpecEvaluationError) as e:
            explore(spec)
        # (which instance overflows first may differ: the order of a level follows
        # the packed states)
        msgs.append(str(e.value).split(", in the state")[0].split(") adds to ", 1)[1])
    assert msgs[0] == msgs[1]
    assert f"S a member beyond its max_size {k} (S is a SetOf(0..{n - 1}, " \
           f"max_size={k}), which holds at most {k} members)" in msgs[0]
    with pytest.raises(SpecDefinitionError, match=f"more than the max_size {k}"):
        SetOf(Int(0, n - 1), max_size=k, form="bits", init=range(k + 1)).bound({})


@pytest.mark.parametrize("n_b", [64, 65])  # 64 * 64 = 4,096 records; 64 * 65 = 4,160
def test_the_boundary_as_whole_specs(n_b: int) -> None:
    auto = make(64, n_b, 3, max_size=4096)
    want = brute_force(make(64, n_b, 3, max_size=3))
    if n_b == 64:
        assert not isinstance(auto.layout.vars["msgs"].leaf, BoundSparseSet)
        for spec in (auto, make(64, n_b, 3)):
            r = explore(spec)
            assert (r.distinct_states, r.depth) == want
    else:
        assert isinstance(auto.layout.vars["msgs"].leaf, BoundSparseSet)
        r = explore(auto)
        assert (r.distinct_states, r.depth) == want
        with pytest.raises(SpecDefinitionError, match="4160 possible elements"):
            make(64, n_b, 3)


UNBOUNDED = '''
from modelcheck import Int, Record, SetOf, Spec, action


class Unbounded(Spec):
    msgs = SetOf(Record(a=Int(0, 63), b=Int(0, 64)))

    @action(x=range(3))
    def Send(self, s, t, x):
        t.msgs = s.msgs.with_({"a": x, "b": x})
        return True
'''


def test_the_unbounded_case_is_refused_on_the_cli(tmp_path) -> None:
    path = tmp_path / "unbounded.py"
    path.write_text(UNBOUNDED)
    for cmd in ("check", "inspect"):
        r = subprocess.run([sys.executable, "-m", "modelcheck", cmd, f"{path}:Unbounded"],
                           capture_output=True, text=True)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stderr
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        assert len(lines) == 1, r.stderr
        assert "has 4160 possible elements, more than the 4096" in lines[0]
        assert "max_size=k" in lines[0]


def test_a_bounded_bit_vector_refuses_more_members_from_python_and_itf() -> None:
    from modelcheck.types import ValueDomainError

    t = _bound(70, max_size=2, form="bits")
    assert t.value(t.codes([5, 60])) == frozenset({5, 60})
    with pytest.raises(ValueError, match="3 members, more than the max_size 2"):
        t.codes([1, 2, 3])
    with pytest.raises(ValueDomainError, match="has 3 members, more than its max_size 2"):
        t.codes_from_itf(frozenset({1, 2, 3}))
    assert t.codes_from_itf(frozenset({1, 2})) == t.codes([1, 2])
