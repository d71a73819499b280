"""The expression language: CHOOSE, folds, quantifiers, booleans. Each construct is
checked on both evaluators (hypothesis), against the brute-force oracle, by replaying
its traces, and for the messages of its mistakes."""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import pytest
from bruteforce import assert_replays, brute_force, random_walk
from evalcheck import assert_batch_matches_scalar
from expr_specs import (
    Branching,
    BranchingByHand,
    ChooseNone,
    Gossip,
    Inbox,
    Rotate,
    RotateByHand,
    Speed,
    Tokens,
    Votes,
    VotesByHand,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    BOOLEAN,
    Bool,
    Enum,
    Int,
    Record,
    SetOf,
    SpecEvaluationError,
    all_of,
    any_of,
    choose,
    count_of,
    explore,
    functions,
    implies,
    init_product,
    max_of,
    min_of,
    not_,
    sum_of,
    where,
)
from modelcheck.kernel import Kernel

SPECS = [Tokens(), Tokens(N=4, Max=1)]


@settings(max_examples=40, deadline=None)
@given(spec_index=st.integers(0, len(SPECS) - 1),
       walks=st.lists(st.lists(st.integers(0, 1000), max_size=30), min_size=1, max_size=6))
def test_batch_and_scalar_agree(spec_index: int, walks: list[list[int]]) -> None:
    k = Kernel(SPECS[spec_index], symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_counts_match_the_oracle(spec) -> None:
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec)


def test_choose_is_first_in_domain_order() -> None:
    assert choose(range(1, 6), lambda x: x % 2 == 0) == 2
    col = np.array([1, 2, 0])
    assert choose(range(4), lambda v: v > col).tolist() == [2, 3, 1]
    assert choose([3, 1, 2], lambda v: v < 3) == 1  # the domain's order, not the smallest


def test_folds_on_columns() -> None:
    a, b = np.array([1, 5]), np.array([4, 2])
    cols = {1: a, 2: b}
    assert max_of([1, 2], lambda i: cols[i]).tolist() == [4, 5]
    assert min_of([1, 2], lambda i: cols[i]).tolist() == [1, 2]
    assert sum_of([1, 2], lambda i: cols[i]).tolist() == [5, 7]
    assert sum_of([], lambda i: 1) == 0
    assert max_of([], lambda i: 1, default=7) == 7


def test_choose_without_value_is_an_error_only_when_enabled() -> None:
    r = explore(ChooseNone())
    assert r.status == "ok" and r.distinct_states == 4
    with pytest.raises(SpecEvaluationError) as e:
        explore(ChooseNone(guarded=False))
    msg = str(e.value)
    assert "CHOOSE found no value" in msg and "expr_specs.py:" in msg and "x=3" in msg
    assert "action Pick is enabled" in msg


def test_booleans_agree_on_python_and_numpy() -> None:
    for a in (True, False, np.True_, np.False_):
        for b in (True, False):
            assert bool(implies(a, b)) == ((not a) or b)
        assert bool(not_(a)) == (not a)
    assert not_(np.array([True, False])).tolist() == [False, True]


@pytest.mark.parametrize("expr", [lambda: where(~(1 == 1), 1, 2), lambda: implies(~True, True),
                                  lambda: not_(-1)])
def test_tilde_on_a_python_bool_is_named(expr) -> None:
    with pytest.raises(SpecEvaluationError) as e:
        expr()
    assert "`~` on a Python bool" in str(e.value) and "not_(p == q)" in str(e.value)


def test_tilde_on_a_python_bool_in_a_guard_is_named(runner) -> None:
    from modelcheck.cli import cli
    r = runner.invoke(cli, ["check", "tests/bad_specs/tilde_on_param.py", "-q"])
    assert r.exit_code == 2, r.output
    assert "tilde_on_param.py:" in r.output and "guard of action Move" in r.output
    assert "`~` on a Python bool" in r.output and "and/or/not" not in r.output


def test_traces_replay() -> None:
    from modelcheck.spec import invariant as inv

    class Bad(Tokens):
        @inv
        def NoElection(self, s):
            return s.leader == 0

    r = explore(Bad())
    assert r.status == "violation"
    assert r.violation.trace[-1].action == "Elect"
    assert_replays(Bad(), r.violation.trace)


# ---------------------------------------------- parameters, constants, initial states
def test_dependent_parameter_domains() -> None:
    spec = Gossip()
    tell = [dict(a.params) for a in spec.actions if a.name == "Tell"]
    assert tell == [{"p": p, "q": q} for p in (1, 2, 3) for q in (1, 2, 3) if p != q]


def test_parameter_domain_naming_a_later_parameter_is_refused() -> None:
    from modelcheck import Ids, Int, Spec, SpecDefinitionError, action

    class Wrong(Spec):
        P = Ids(1, 2)
        x = Int(0, 1)

        @action(p=lambda self, q: [q], q=P)
        def A(self, s, t, p, q):
            return s.x == 0

    with pytest.raises(SpecDefinitionError, match="q is not a parameter declared before p"):
        Wrong()


def test_initial_states_per_variable() -> None:
    inits = Kernel(Gossip()).initial_states()
    assert len(inits) == 2 ** 3 * 2 and len({tuple(c) for c in inits}) == 16
    assert functions([1, 2], BOOLEAN) == [{1: False, 2: False}, {1: False, 2: True},
                                          {1: True, 2: False}, {1: True, 2: True}]
    assert init_product(x=[1, 2], y=BOOLEAN) == [
        {"x": 1, "y": False}, {"x": 1, "y": True}, {"x": 2, "y": False}, {"x": 2, "y": True}]


def test_enum_constants(runner) -> None:
    from modelcheck import ConstantError
    from modelcheck.cli import cli

    assert Gossip().Step is Speed.FAST
    assert Gossip(Step="SLOW").Step is Speed.SLOW and Gossip(Step=1).Step is Speed.SLOW
    assert repr(Gossip(Step=Speed.SLOW)) == "Gossip(N=3, Step=SLOW)"
    with pytest.raises(ConstantError, match="one of SLOW, FAST"):
        Gossip(Step=7)
    r = runner.invoke(cli, ["check", "tests/expr_specs.py:Gossip", "--const", "Step=slow",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    assert '"Step": "SLOW"' in r.output  # by the member's name, as traces record it


@pytest.mark.parametrize("spec", [Gossip(), Gossip(Step=Speed.SLOW), Gossip(N=2)], ids=repr)
def test_gossip_matches_the_oracle(spec) -> None:
    r = explore(spec)
    assert (r.status, r.distinct_states, r.depth) == ("ok", *brute_force(spec))


@settings(max_examples=20, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=12), min_size=1, max_size=5),
       start=st.integers(0, 15))
def test_gossip_evaluators_agree(walks: list[list[int]], start: int) -> None:
    k = Kernel(Gossip(Step=Speed.SLOW), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w, start + i) for i, w in enumerate(walks)])


# ------------------------------------------------------------------ branches
def test_branches_are_action_instances() -> None:
    spec = Branching()
    assert [a.label for a in spec.actions] == [
        "Step[inc](1)", "Step[double](1)", "Step[jump](1)", "Step[reset](1)",
        "Step[inc](2)", "Step[double](2)", "Step[jump](2)", "Step[reset](2)"]
    assert type(spec).Step.branches == ("inc", "double", "jump", "reset")


@pytest.mark.parametrize("const", [{}, {"Max": 3}, {"Max": 9}], ids=str)
def test_branches_match_the_oracle_and_the_hand_written_spec(const) -> None:
    spec, hand = Branching(**const), BranchingByHand(**const)
    r, h = explore(spec, invariants=[]), explore(hand, invariants=[])
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert (r.distinct_states, r.generated_states, r.depth) == \
        (h.distinct_states, h.generated_states, h.depth)
    cov = {c.name: c.fired for c in r.coverage}
    hand_cov = {c.name: c.fired for c in h.coverage}
    assert cov == {"Step[inc]": hand_cov["Inc"], "Step[double]": hand_cov["Double"],
                   "Step[jump]": hand_cov["Jump"], "Step[reset]": hand_cov["Reset"]}


@settings(max_examples=40, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=12), min_size=1, max_size=6),
       top=st.sampled_from([3, 6, 9]))
def test_branch_evaluators_agree(walks: list[list[int]], top: int) -> None:
    k = Kernel(Branching(Max=top), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


def test_branch_traces_replay(runner, tmp_path) -> None:
    from modelcheck.cli import cli

    r = explore(Branching())
    assert r.status == "violation" and r.violation.property == "Small"
    labels = [s.action for s in r.violation.trace[1:]]
    assert all(a.startswith("Step[") for a in labels), labels
    assert_replays(Branching(), r.violation.trace)
    out = tmp_path / "t.itf.json"
    c = runner.invoke(cli, ["check", "tests/expr_specs.py:Branching", "--trace-out", str(out)])
    assert c.exit_code == 1, c.output
    assert "Step[jump](p=" in c.output or "Step[double](p=" in c.output
    rep = runner.invoke(cli, ["trace", "replay", "tests/expr_specs.py:Branching", str(out)])
    assert rep.exit_code == 0, rep.output
    text = out.read_text().replace("Step[", "Step[no")
    out.write_text(text)
    rep = runner.invoke(cli, ["trace", "replay", "tests/expr_specs.py:Branching", str(out)])
    assert rep.exit_code == 1 and "Step[inc], Step[double]" in rep.output, rep.output


def test_branch_mistakes_are_named() -> None:
    from modelcheck import Int, Spec, SpecDefinitionError, action

    with pytest.raises(SpecDefinitionError, match="named by a string literal"):
        class Dynamic(Spec):
            x = Int(0, 1)

            @action
            def A(self, s, t):
                for name in ("a", "b"):
                    with t.branch(name):
                        t.x = 1
                return s.x == 0

    with pytest.raises(SpecDefinitionError, match="use a branch as a block"):
        class NotABlock(Spec):
            x = Int(0, 1)

            @action
            def A(self, s, t):
                t.branch("a")
                return s.x == 0

    with pytest.raises(SpecDefinitionError, match="`branch` is reserved"):
        class Reserved(Spec):
            branch = Int(0, 1)

    class Nested(Spec):
        x = Int(0, 1)

        @action
        def A(self, s, t):
            with t.branch("a"):
                with t.branch("b"):
                    t.x = 1
            return s.x == 0

    with pytest.raises(SpecEvaluationError, match="branches do not nest"):
        explore(Nested())


# ------------------------------------------------------- over set-valued variables
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_set_quantifiers_match_the_oracle_and_the_hand_written_spec(n: int) -> None:
    spec, hand = Votes(N=n), VotesByHand(N=n)
    r, h = explore(spec), explore(hand)
    assert r.status == h.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert (r.distinct_states, r.generated_states, r.depth) == \
        (h.distinct_states, h.generated_states, h.depth)


@settings(max_examples=40, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=10), min_size=1, max_size=6))
def test_set_quantifier_evaluators_agree(walks: list[list[int]]) -> None:
    k = Kernel(Votes(), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


def test_set_values_are_domains_and_sets() -> None:
    typ = Votes().layout.vars["voted"].leaf
    assert typ is not None
    one = typ.value_of({1, 3})
    assert [x for x, inside in one.members() if inside] == [1, 3]
    assert choose(one, lambda v: v > 1) == 3 and sum_of(one, lambda v: v) == 4
    assert bool((one | {2}) == {1, 2, 3}) and bool(one == {1, 3})
    col = typ.view([np.array([0b001, 0b110])])
    assert any_of(col, lambda v: v == 2).tolist() == [False, True]
    assert max_of(col, lambda v: v, default=0).tolist() == [1, 3]
    with pytest.raises(SpecEvaluationError, match="CHOOSE found no value"):
        choose(col, lambda v: v == 1)


# ---------------------------------------------------------- whole-array assignment
@pytest.mark.parametrize("n", [2, 3])
def test_whole_array_assignment_matches_the_hand_written_spec(n: int) -> None:
    spec, hand = Rotate(N=n), RotateByHand(N=n)
    r, h = explore(spec), explore(hand)
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert (r.distinct_states, r.generated_states, r.depth) == \
        (h.distinct_states, h.generated_states, h.depth)


@settings(max_examples=30, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=12), min_size=1, max_size=6))
def test_whole_array_evaluators_agree(walks: list[list[int]]) -> None:
    k = Kernel(Rotate(), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


def test_whole_array_mistakes_are_named() -> None:
    from modelcheck import Array, Ids, Int, Spec, action

    class Partial(Spec):
        a = Array(Ids(1, 2), Int(0, 1))

        @action
        def A(self, s, t):
            t.a = {1: 1}
            return s.a[1] == 0

    with pytest.raises(SpecEvaluationError, match="mapping without index 2"):
        explore(Partial())


def test_where_and_next_state_reads_give_numpy_booleans() -> None:
    assert isinstance(where(np.True_, True, False), np.bool_)
    assert not bool(~where(np.True_, True, False))


# ------------------------------------- set values of any element type (generic SetOf)
class Hue(IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


ELEMENT_TYPES = {
    "ints": Int(2, 6),
    "enums": Enum(Hue),
    "bools": Bool(),
    "records": Record(a=Int(0, 1), h=Enum(Hue)),
}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(ELEMENT_TYPES)), data=st.data())
def test_set_values_range_over_element_values(name: str, data) -> None:
    """Oracle: the Python value of each row's set (``BoundSet.value``), element by
    element, with the predicate and weights keyed by an element's codes."""
    typ = SetOf(ELEMENT_TYPES[name]).bound({})
    elem = typ.elem
    n = elem.n_values
    masks = data.draw(st.lists(st.integers(0, (1 << n) - 1), min_size=1, max_size=8))
    picked = data.draw(st.sets(st.integers(0, n - 1)))
    weight = data.draw(st.lists(st.integers(-3, 9), min_size=n, max_size=n))

    def key(x) -> int:  # an element value's position among the type's values
        idx, outside = elem.index_of(x)
        assert not outside
        return int(idx)

    def pred(x):
        return np.bool_(key(x) in picked)

    def f(x):
        return np.int64(weight[key(x)])

    col = typ.view([np.array(masks, dtype=np.int64)])
    rows = [[key(elem.value_of(elem.view(elem.codes(v)))) for v in typ.value([m])]
            for m in masks]
    assert any_of(col, pred).tolist() == [any(i in picked for i in r) for r in rows]
    assert all_of(col, pred).tolist() == [all(i in picked for i in r) for r in rows]
    assert count_of(col, pred).tolist() == [sum(i in picked for i in r) for r in rows]
    assert sum_of(col, f).tolist() == [sum(weight[i] for i in r) for r in rows]
    assert max_of(col, f, default=-99).tolist() == \
        [max((weight[i] for i in r), default=-99) for r in rows]
    assert min_of(col, f, default=99).tolist() == \
        [min((weight[i] for i in r), default=99) for r in rows]
    hits = [[i for i in sorted(r) if i in picked] for r in rows]
    if all(hits):
        chosen = choose(col, pred)
        assert [key(elem.value_of(elem.view([np.asarray(c)[j] for c in elem.columns(chosen)])))
                for j in range(len(masks))] == [h[0] for h in hits]
    else:
        with pytest.raises(SpecEvaluationError, match="CHOOSE found no value"):
            choose(col, pred)
    for j, m in enumerate(masks):  # one state: the same answers as numpy scalars
        one = typ.view([np.int64(m)])
        assert bool(any_of(one, pred)) == any(i in picked for i in rows[j])
        assert int(sum_of(one, f)) == sum(weight[i] for i in rows[j])


@pytest.mark.parametrize(("n", "want"), [(1, (15, 6)), (2, (740, 16))])
def test_sets_of_records_enums_and_ints_match_the_oracle(n: int, want) -> None:
    spec = Inbox(N=n)
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec) == want


def test_whole_array_assignment_of_set_values() -> None:
    from modelcheck import Array, Ids, Spec, action

    class Shift(Spec):
        check_deadlock = False
        Ring = Ids(1, 2)
        a = Array(Ring, SetOf(Int(0, 2)))
        b = Array(Ring, SetOf(Int(0, 2)))

        @action(x=range(3))
        def Add(self, s, t, x):
            t.a = lambda i: s.a[i].with_((x + i) % 3)
            t.b = s.a
            return ~s.a[1].has(x)

    spec = Shift()
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(spec)
    k = Kernel(spec, symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in ([0, 1, 2], [2, 2], [1])])


@settings(max_examples=40, deadline=None)
@given(walks=st.lists(st.lists(st.integers(0, 1000), max_size=12), min_size=1, max_size=6))
def test_sets_of_records_evaluators_agree(walks: list[list[int]]) -> None:
    k = Kernel(Inbox(), symmetry=False)
    assert_batch_matches_scalar(k, [random_walk(k, w) for w in walks])


def test_only_set_values_are_domains() -> None:
    rec = SetOf(Record(a=Int(0, 1))).bound({}).elem.value_of({"a": 1})
    with pytest.raises(SpecEvaluationError, match="which is no set"):
        any_of(rec, lambda x: True)
