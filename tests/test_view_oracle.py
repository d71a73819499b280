"""Random small specs with a view: the explorer agrees with a brute-force oracle.

:func:`bruteforce.brute_force_view` runs TLC's VIEW semantics one state at a time
over cell tuples (views compared as values, the first state of a view kept, checked
and expanded, the others dropped unchecked); counts, depth, generated transitions,
the verdict, the names that may win and the counterexample's length must be the
explorer's, and the counterexample must replay (``_assert_agrees``).
"""

from __future__ import annotations

from bruteforce import brute_force_view
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randspec import random_spec
from test_random_specs import _assert_agrees

from modelcheck import Explorer, Int, action, where


def explore(spec, **options):
    """The run, and the states kept at each level must be the oracle's (the first of
    each view reached, not merely as many)."""
    kept = []
    r = Explorer(spec, on_level=lambda d, fps, words: kept.append(
        frozenset(tuple(spec.layout.unpack(w)) for w in words)), **options).run()
    return _KeptRun(r, tuple(kept))


class _KeptRun:
    """A (frozen) result and the states kept at each level: the result's fields
    read through, ``kept_levels`` beside them."""

    def __init__(self, result, kept_levels) -> None:
        self.result = result
        self.kept_levels = kept_levels

    def __getattr__(self, name: str):
        return getattr(self.result, name)


def _agrees(spec, r, o) -> None:
    _assert_agrees(spec, r, o)
    assert r.kept_levels == o.levels


@st.composite
def view_spec(draw: st.DrawFn, **kw):
    """A random spec (:func:`randspec.random_spec`, two variables or more) with a
    history variable ``h`` and two to four actions that write it (each a step of a
    variable, up or down, that also sets ``h`` to a constant, enabled where ``h`` is
    not another), and a view: a non-empty subset of the variables, never ``h`` (so
    states with one view differ, and which of them is kept changes what happens next).
    """
    cls = draw(random_spec(**kw).filter(lambda c: len(c._vars) >= 2))
    names = list(cls._vars)
    ns = {"h": Int(0, 3), "__module__": cls.__module__}
    for a in range(draw(st.integers(2, 4))):
        var = draw(st.sampled_from(names))
        ns[f"H{a}"] = action(_history_action(
            f"H{a}", var, min(4, cls._vars[var].hi), draw(st.integers(0, 3)),
            draw(st.integers(0, 3)), draw(st.booleans())))
    keep = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names),
                         unique=True))
    ns["view"] = tuple(sorted(keep))
    return type("ViewSpec", (cls,), ns)


def _history_action(name: str, var: str, hi: int, value: int, unless: int, up: bool):
    def fn(self, s, t):
        x = getattr(s, var)
        setattr(t, var, where(x < hi, x + 1, 0) if up else where(x > 0, x - 1, hi))
        t.h = value
        return s.h != unless

    fn.__name__ = name
    return fn


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_spec())
def test_counts_verdicts_and_shortest_traces_under_a_view(cls) -> None:
    spec = cls()
    _agrees(spec, explore(spec, invariants=[], check_deadlock=False),
                   brute_force_view(spec, invariants=[], check_deadlock=False))
    _agrees(spec, explore(spec), brute_force_view(spec))
    names = [p.name for p in (*spec.invariants, *spec.properties) if p.name != "SumBounded"]
    _agrees(spec, explore(spec, invariants=names),
                   brute_force_view(spec, invariants=names))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_spec(action_constraints=True), st.integers(1, 4))
def test_action_constraints_and_batches_under_a_view(cls, batch_size: int) -> None:
    spec = cls()
    _agrees(spec, explore(spec, batch_size=batch_size), brute_force_view(spec))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_spec(wide=True))
def test_mixed_radix_views(cls) -> None:
    spec = cls()
    _agrees(spec, explore(spec, invariants=[], check_deadlock=False),
                   brute_force_view(spec, invariants=[], check_deadlock=False))
