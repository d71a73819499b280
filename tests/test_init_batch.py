"""Initial states of an ``init_product(...).such_that(...)`` built in packed batches.

The oracle is a second, plain enumeration: the same per-variable choices as Python
lists, ``itertools.product`` over them, each combination merged into the declared
initial values as dicts, converted with ``Layout.cells_from_values`` and filtered by
the same condition written on the dicts. On random specs (scalar, boolean, enum,
set and array variables, some wider than one word; choices with repeats; ``functions``
over a part of an array's indices in any order; filters as lambdas and as declared
predicates) the batched initial states equal the oracle's, row for row (same states,
same order), as do those of the dict path (``batched=False``), and a spec that gives
the oracle's dicts from ``init_states`` explores to the same result, under a view too
(where the order decides which initial state of a view is kept).
"""

from __future__ import annotations

import itertools
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Bool,
    Enum,
    Ids,
    Int,
    SetOf,
    Spec,
    action,
    explore,
    functions,
    init_product,
    invariant,
    subsets,
    where,
)
from modelcheck.errors import SpecDefinitionError, SpecEvaluationError
from modelcheck.kernel import Kernel


class Color(IntEnum):
    red = 0
    green = 1
    blue = 2


def _domain(kind: str, lo: int, hi: int, n: int) -> list[Any]:
    """Every value of a variable (of an array's element) of this kind."""
    return {"int": list(range(lo, hi + 1)), "bool": [False, True], "enum": list(Color),
            "set": subsets(range(1, n + 1))}[kind]


def _type(kind: str, lo: int, hi: int, n: int) -> Any:
    return {"int": lambda: Int(lo, hi), "bool": Bool, "enum": lambda: Enum(Color),
            "set": lambda: SetOf(Ids(1, n))}[kind]()


def _num(kind: str, v: Any) -> int:
    """A value as a number, for the filter written on dicts."""
    return len(v) if kind == "set" else int(v)


def _col(kind: str, x: Any) -> Any:
    """The same number from a state view's column."""
    return x.size() if kind == "set" else where(x, 1, 0) if kind == "bool" else x


@st.composite
def product_case(draw: st.DrawFn) -> dict[str, Any]:
    """Variables, per-variable choices (some as ``functions``), a filter and a view."""
    n_vars = draw(st.integers(1, 4))
    vars_: list[dict[str, Any]] = []
    for i in range(n_vars):
        kind = draw(st.sampled_from(["int", "int", "bool", "enum", "set"]))
        lo = draw(st.integers(-3, 2))
        hi = lo + draw(st.sampled_from([1, 2, 3, 2**40]))  # 2**40: several words
        n = draw(st.integers(1, 3))
        arr = draw(st.integers(0, 3))  # 0: a scalar, else an array over 1..arr
        vars_.append(dict(name=f"v{i}", kind=kind, lo=lo, hi=hi, n=n, arr=arr))
    chosen = draw(st.permutations(vars_))[:draw(st.integers(1, n_vars))]
    choices: list[tuple[str, str, Any]] = []  # (var, how, data)
    for v in chosen:
        dom = _domain(v["kind"], v["lo"], min(v["hi"], v["lo"] + 4), v["n"])
        vals = st.lists(st.sampled_from(dom), min_size=1, max_size=3)
        if v["arr"] and draw(st.booleans()):
            idx = draw(st.permutations(range(1, v["arr"] + 1)))
            idx = idx[:draw(st.integers(1, len(idx)))]
            choices.append((v["name"], "functions", (idx, draw(vals))))
        elif v["arr"]:
            dicts = draw(st.lists(st.fixed_dictionaries(
                {j: st.sampled_from(dom) for j in range(1, v["arr"] + 1)}),
                min_size=1, max_size=3))
            choices.append((v["name"], "list", dicts))
        else:
            choices.append((v["name"], "list", draw(vals)))
    # the filter: sum of some weighted cells <= bound (or none)
    terms = []
    for v in vars_:
        for j in ([None] if not v["arr"] else range(1, v["arr"] + 1)):
            if draw(st.integers(0, 2)) == 0:
                terms.append((v["name"], v["kind"], j, draw(st.integers(-2, 2))))
    filt = draw(st.sampled_from([None, "lambda", "decl", "both"]))
    bound = draw(st.integers(-3, 6))
    view = draw(st.sampled_from([None, *[v["name"] for v in vars_]]))
    return dict(vars=vars_, choices=choices, terms=terms, filt=filt, bound=bound, view=view)


def _sum_state(terms: list[tuple[str, str, Any, int]], s: Any) -> Any:
    out: Any = 0
    for name, kind, j, w in terms:
        x = getattr(s, name) if j is None else getattr(s, name)[j]
        out = out + w * _col(kind, x)
    return out


def _sum_dict(terms: list[tuple[str, str, Any, int]], d: dict[str, Any]) -> int:
    return sum(w * _num(kind, d[name] if j is None else d[name][j])
               for name, kind, j, w in terms)


def _build(case: dict[str, Any], batched_init: bool) -> type[Spec]:
    ns: dict[str, Any] = {"check_deadlock": False}
    for v in case["vars"]:
        t = _type(v["kind"], v["lo"], v["hi"], v["n"])
        ns[v["name"]] = Array(Ids(1, v["arr"]), t) if v["arr"] else t
    terms, bound = case["terms"], case["bound"]

    def small(self: Any, s: Any) -> Any:
        return _sum_state(terms, s) <= bound

    def other(self: Any, s: Any) -> Any:
        return _sum_state(terms, s) >= -bound - 2

    ns["Small"] = invariant(small)
    ns["Other"] = invariant(other)
    v0 = case["vars"][0]

    def step(self: Any, s: Any, t: Any) -> Any:
        if v0["kind"] == "int" and not v0["arr"]:
            t.v0 = where(s.v0 < v0["lo"] + 1, s.v0 + 1, v0["lo"])  # few new states
        return True

    step.__name__ = "Step"
    ns["Step"] = action(step)
    if case["view"] is not None:
        ns["view"] = (case["view"],)

    if batched_init:
        def init_states(self: Any) -> Any:
            kw = {name: functions(*data) if how == "functions" else data
                  for name, how, data in case["choices"]}
            p = init_product(**kw)
            filt = case["filt"]
            if filt == "lambda":
                p = p.such_that(lambda s: _sum_state(terms, s) <= bound)
            elif filt in ("decl", "both"):
                p = p.such_that(type(self).Small)
            if filt == "both":
                p = p.such_that(type(self).Other)
            return p
    else:
        def init_states(self: Any) -> Any:
            return _oracle_dicts(self, case)
    ns["init_states"] = init_states
    return type("InitSpec", (Spec,), ns)


def _oracle_dicts(spec: Spec, case: dict[str, Any]) -> list[dict[str, Any]]:
    """The oracle: ``itertools.product`` over the choices, merged into the defaults
    and filtered on the dicts."""
    names, lists = [], []
    for name, how, data in case["choices"]:
        names.append(name)
        if how == "functions":
            idx, vals = data
            lists.append([dict(zip(idx, combo))
                          for combo in itertools.product(vals, repeat=len(idx))])
        else:
            lists.append(list(data))
    base = {n: info.btype.default() for n, info in spec.layout.vars.items()}
    out = []
    for combo in itertools.product(*lists):
        d = dict(base)
        for name, v in zip(names, combo):
            d[name] = {**base[name], **v} if isinstance(v, dict) else v
        terms, bound = case["terms"], case["bound"]
        ok = {None: True, "lambda": _sum_dict(terms, d) <= bound,
              "decl": _sum_dict(terms, d) <= bound,
              "both": -bound - 2 <= _sum_dict(terms, d) <= bound}[case["filt"]]
        if ok:
            out.append(d)
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(product_case())
def test_batched_initial_states_equal_the_dict_enumeration(case: dict[str, Any]) -> None:
    spec = _build(case, True)()
    oracle_spec = _build(case, False)()
    k = Kernel(spec)
    want_dicts = _oracle_dicts(spec, case)
    if not want_dicts:
        with pytest.raises(SpecEvaluationError, match="no initial state"):
            k.initial_states()
        with pytest.raises(SpecEvaluationError, match="no initial state"):
            k.initial_states(batched=False)
        return
    want = [spec.layout.cells_from_values(d) for d in want_dicts]
    assert k.initial_states() == want
    assert k.initial_states(batched=False) == want
    assert (k.initial_packed() == Kernel(oracle_spec).initial_packed()).all()
    got, exp = explore(spec), explore(oracle_spec)
    assert (got.status, got.distinct_states, got.depth, got.generated_states) == \
        (exp.status, exp.distinct_states, exp.depth, exp.generated_states)
    if got.violation is not None:
        assert exp.violation is not None
        assert got.violation.property == exp.violation.property
        assert [st.state for st in got.violation.trace] == \
            [st.state for st in exp.violation.trace]


class _Two(Spec):
    x = Int(0, 3)
    y = Array(Ids(1, 2), Bool())

    @action
    def Stay(self, s, t):
        return True


def test_init_product_errors_name_the_problem() -> None:
    class Unknown(_Two):
        def init_states(self):
            return init_product(z=[1])

    with pytest.raises(SpecDefinitionError, match="unknown variable"):
        Kernel(Unknown()).initial_states()

    class Outside(_Two):
        def init_states(self):
            return init_product(x=[1, 7])

    with pytest.raises(SpecEvaluationError, match="x = 7 is outside its domain 0..3"):
        Kernel(Outside()).initial_states()

    class NotBool(_Two):
        def init_states(self):
            return init_product(x=range(4)).such_that(lambda s: s.x + 1)

    with pytest.raises(SpecEvaluationError, match="boolean|bool"):
        Kernel(NotBool()).initial_states()


def test_init_product_is_still_a_sequence_of_dicts() -> None:
    p = init_product(x=[1, 2], y=functions([1, 2], [False, True]))
    assert len(p) == 8 and list(p)[5] == p[5] == p[-3] == {"x": 2, "y": {1: False, 2: True}}
    assert p == [dict(x=x, y={1: a, 2: b}) for x in (1, 2) for a in (False, True)
                 for b in (False, True)]
    assert subsets([1, 2]) == [frozenset(), {1}, {2}, {1, 2}]
