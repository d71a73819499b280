"""Initial-state properties (``@initially``, TLA+'s state predicate as a ``PROPERTY``):
checked on the initial states only, as TLC does, against an oracle that walks the
initial states one at a time (TLC's ``DoInitFunctor``: a state's invariants, then its
initial-state properties; the first state with a finding decides)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from examples.initial_counter import Counter, CounterZero
from modelcheck import Spec, check, initially
from modelcheck.errors import SpecDefinitionError
from modelcheck.kernel import Kernel
from tests.randspec import random_spec

ROOT = Path(__file__).resolve().parent.parent
HERE = "examples/initial_counter.py"


def _atom(var: int, op: str, c: int, name: str) -> Any:
    def fn(self: Any, s: Any) -> Any:
        x = getattr(s, f"v{var}")
        return x <= c if op == "<=" else x != c

    fn.__name__ = name
    return fn


@st.composite
def with_initial(draw: st.DrawFn) -> tuple[type[Spec], type[Spec], list[tuple[str, Any]]]:
    """A random spec with one or two initial-state properties, and the same spec
    without them."""
    base = draw(random_spec())
    n = len(base._vars)
    props = []
    ns: dict[str, Any] = {}
    for k in range(draw(st.integers(1, 2))):
        fn = _atom(draw(st.integers(0, n - 1)), draw(st.sampled_from(["<=", "!="])),
                   draw(st.integers(0, 4)), f"Init{k}")
        ns[f"Init{k}"] = initially(fn)
        props.append((f"Init{k}", fn))
    return type("WithInitial", (base,), ns), base, props


def _oracle(spec: Spec, props: list[tuple[str, Any]]) -> tuple[str, tuple[int, ...]] | None:
    """The first initial state (in the spec's order, each state once) whose invariants
    hold and that violates an initial-state property, with the first such property;
    None when no state violates one before a state violating an invariant."""
    k = Kernel(spec, symmetry=False)
    seen = set()
    for cells in k.initial_states():
        key = tuple(cells)
        if key in seen:
            continue
        seen.add(key)
        view = k.scalar_view(cells)
        if any(not bool(p.fn(spec, view)) for p in spec.invariants):
            return None  # TLC reports the invariant
        for name, fn in props:
            if not bool(fn(spec, view)):
                return name, key
    return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_initial())
def test_initial_state_properties_against_the_initial_states(drawn):
    cls, base, props = drawn
    spec = cls()
    want = _oracle(spec, props)
    r = check(spec)
    if want is None:
        plain = check(base())
        assert (r.status, r.distinct_states) == (plain.status, plain.distinct_states)
        assert (r.violation is None) == (plain.violation is None)
        if plain.violation is not None:
            assert r.violation.property == plain.violation.property
        return
    name, cells = want
    assert r.status == "violation" and r.violation is not None
    assert r.violation.property == name and r.violation.kind == "invariant"
    assert len(r.violation.trace) == 1
    assert spec.layout.cells_from_values(r.violation.trace[0].state) == list(cells)
    # selected by name like an invariant
    only = check(spec, invariants=[name])
    assert only.violation is not None and only.violation.property == name


def test_checked_on_the_initial_states_only():
    r = check(Counter())
    assert r.status == "ok" and r.distinct_states == 4
    assert r.checked["initially"] == ["StartsLow"]
    r = check(CounterZero())
    assert r.status == "violation" and r.violation.property == "StartsZero"
    assert [s.state for s in r.violation.trace] == [{"x": 1}]


def test_cli_reports_it_like_an_invariant_violation():
    r = subprocess.run([sys.executable, "-m", "modelcheck", "check", f"{HERE}:CounterZero",
                        "-q"], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Initial-state property StartsZero is violated. Shortest counterexample, 1 state:" \
        in r.stdout
    assert "State 1: <initial state>\n      x = 1\n" in r.stdout
    r = subprocess.run([sys.executable, "-m", "modelcheck", "inspect", f"{HERE}:CounterZero"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert "Initial-state properties:\n  StartsLow: ``x <= 1`` in the initial state\n" \
        "  StartsZero: ``x = 0`` in the initial state\n" in r.stdout, r.stdout


def test_a_malformed_declaration_is_refused():
    with pytest.raises(SpecDefinitionError, match=r"initial Bad must take \(self, s\)"):
        class Bad(Counter):  # noqa: F841
            @initially
            def Bad(self, s, t):
                return s.x == t.x


def test_simulation_checks_them_before_the_walks():
    from modelcheck.simulate import simulate

    r = simulate(CounterZero(), seed=1, runs=5)
    assert r.status == "violation" and r.violation.property == "StartsZero"
    assert [s.state for s in r.violation.trace] == [{"x": 1}]
    r = simulate(Counter(), seed=1, runs=5, invariants=["StartsLow", "Bounded"])
    assert r.status == "ok"
