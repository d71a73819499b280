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
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    Int,
    Record,
    SetOf,
    Spec,
    SpecDefinitionError,
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


def test_a_bound_that_binds_chooses_member_codes_on_both_sides_of_the_cap() -> None:
    for n in (2, 4096, 4097, 10_000):
        t = _bound(n, max_size=n - 1)
        assert isinstance(t, BoundSparseSet) and t.max_size == n - 1
        assert [c.size for _, c in t.cells()] == [n + 1] * (n - 1)


def test_a_bound_that_says_nothing_keeps_the_bit_vector_up_to_the_cap() -> None:
    for n, k in ((1, 1), (8, 8), (8, 100), (4096, 4096)):
        t = _bound(n, max_size=k)
        assert not isinstance(t, BoundSparseSet) and t.width == n
    # beyond the cap the codes stay (clamped to the element count)
    t = _bound(4097, max_size=5000)
    assert isinstance(t, BoundSparseSet) and t.max_size == 4097


def test_an_explicit_form() -> None:
    t = _bound(8, max_size=8, form="codes")
    assert isinstance(t, BoundSparseSet) and t.max_size == 8
    assert not isinstance(_bound(8, form="bits"), BoundSparseSet)
    assert not isinstance(_bound(4096, max_size=4096, form="bits"), BoundSparseSet)
    with pytest.raises(SpecDefinitionError, match=r"form=\"codes\"\) needs max_size=k"):
        _bound(8, form="codes")
    with pytest.raises(SpecDefinitionError, match=r"form=\"bits\"\) has 4097 possible "
                                                  r"elements; at most 4096"):
        _bound(4097, form="bits")
    with pytest.raises(SpecDefinitionError, match=r"a bit vector cannot enforce max_size 3 "
                                                  r"below the 8 possible elements"):
        _bound(8, max_size=3, form="bits")
    with pytest.raises(SpecDefinitionError, match=r"form='dense'\): form is \"bits\""):
        _bound(8, form="dense")


def test_sets_of_sets_with_a_bound_that_says_nothing_are_numbered() -> None:
    """A set whose bound binds is stored as codes and has no position among its type's
    values (refused as an element); one whose bound says nothing is a bit vector and
    may be an element."""
    outer = SetOf(SetOf(Int(0, 3), max_size=4)).bound({})
    assert isinstance(outer, BoundSet) and outer.width == 16
    with pytest.raises(SpecDefinitionError, match=r"a set stored as member codes"):
        SetOf(SetOf(Int(0, 3), max_size=3)).bound({})


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 3 * MAX_ELEMENTS), k=st.none() | st.integers(1, 3 * MAX_ELEMENTS))
def test_the_chosen_form_holds_the_bound_in_the_fewest_bits(n: int, k: int | None) -> None:
    """Against the forms' costs: member codes whenever a bound binds (the only form
    that enforces one); otherwise, of the forms that can hold every value, the one of
    fewer bits (a bit vector up to the cap)."""
    bits_ok = n <= MAX_ELEMENTS and (k is None or k >= n)
    codes_ok = k is not None
    cost = {"bits": n, "codes": (min(k, n) if k else 0) * max(1, n.bit_length())}
    usable = [f for f, ok in (("bits", bits_ok), ("codes", codes_ok)) if ok]
    want = min(usable, key=lambda f: cost[f]) if usable else None
    assert choose_set_form(n, k) == want


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
        last = Int(0, n_a - 1)

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
def test_automatic_and_explicit_bit_vector_agree_with_brute_force(case) -> None:
    n_a, n_b, k = case
    auto = make(n_a, n_b, k, max_size=k)
    leaf = auto.layout.vars["msgs"].leaf
    assert isinstance(leaf, BoundSparseSet) == (k < n_a * n_b)
    ra = explore(auto)
    assert ra.status == "ok"
    assert (ra.distinct_states, ra.depth) == brute_force(auto)
    if n_a * n_b <= MAX_ELEMENTS:
        rb = explore(make(n_a, n_b, k, form="bits"))
        assert (rb.status, rb.distinct_states, rb.depth, rb.generated_states) == (
            ra.status, ra.distinct_states, ra.depth, ra.generated_states)


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
