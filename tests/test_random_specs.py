"""Random small specs: the batch explorer agrees with a naive brute-force oracle.

Some random specs have state constraints, several initial states, two invariants
and an action property (see :mod:`randspec`); the oracle (:func:`bruteforce.
brute_force_check`) implements TLC's ``CONSTRAINT`` semantics and the level rule
one state at a time.
"""

from __future__ import annotations

import numpy as np
from bruteforce import Oracle, brute_force, brute_force_check
from hypothesis import HealthCheck, given, settings
from randspec import random_spec

from modelcheck import Int, Result, Spec, action, explore
from modelcheck.kernel import Kernel


def _assert_agrees(spec, r: Result, o: Oracle) -> None:
    assert (r.status, r.distinct_states, r.depth, r.generated_states) == \
        (o.status, o.distinct, o.depth, o.generated)
    if o.status == "ok":
        assert r.violation is None
        return
    v = r.violation
    assert v.kind == o.kind
    assert v.property in o.names
    assert len(v.trace) == len(o.trace)
    # the trace replays; every state but the last is one the run stored (inside the
    # constraints); the last one shows what was reported
    k = Kernel(spec, symmetry=False)
    cells = spec.layout.cells_from_values(v.trace[0].state)
    assert cells in k.initial_states()
    states = [cells]
    for step in v.trace[1:]:
        cells = k.step(cells, spec.action_by_label(step.action, step.params))
        assert cells == spec.layout.cells_from_values(step.state)
        states.append(cells)
    for c in states[:-1]:
        assert k.satisfies_constraints(c)
    if v.kind == "invariant":
        assert v.property in {p.name for p in k.check_invariants(states[-1])}
    elif v.kind == "action":
        assert v.property in {p.name for p in k.check_properties(states[-2], states[-1])}
    else:
        assert k.satisfies_constraints(states[-1]) and not k.successors(states[-1])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec())
def test_counts_verdicts_and_shortest_traces(cls) -> None:
    spec = cls()
    r = explore(spec, invariants=[], check_deadlock=False)
    _assert_agrees(spec, r, brute_force_check(spec, invariants=[], check_deadlock=False))
    assert (r.distinct_states, r.depth) == brute_force(spec)
    _assert_agrees(spec, explore(spec), brute_force_check(spec))
    # without the invariant that most often fails in the initial states
    names = [p.name for p in (*spec.invariants, *spec.properties) if p.name != "SumBounded"]
    _assert_agrees(spec, explore(spec, invariants=names),
                   brute_force_check(spec, invariants=names))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec())
def test_batch_size_does_not_change_the_verdict(cls) -> None:
    spec = cls()
    o = brute_force_check(spec)
    for batch in (1, 3):
        _assert_agrees(spec, explore(spec, batch_size=batch), o)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=2))
def test_two_word_states_agree_with_the_oracle(cls) -> None:
    """States of one or two 64-bit words (41 bits a variable): exact fingerprints;
    counts, depth, verdict and the shortest counterexample are the oracle's, whatever
    the batch size."""
    spec = cls()
    assert spec.layout.exact and spec.layout.n_words <= 2
    o = brute_force_check(spec)
    for batch in (1, 1024):
        r = explore(spec, batch_size=batch)
        assert r.fingerprint == "exact" and r.collision_probability == 0.0
        _assert_agrees(spec, r, o)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(wide=True, max_vars=4))
def test_wide_states_agree_with_the_oracle(cls) -> None:
    """Up to four words (128-bit fingerprints past two): the oracle's verdicts."""
    spec = cls()
    _assert_agrees(spec, explore(spec), brute_force_check(spec))


def test_two_word_states_are_exact_under_colliding_hashes(monkeypatch) -> None:
    """Two-word states are their own fingerprints: with a hash under which every state
    collides, every distinct state is still counted (today's 64-bit hash would count
    one)."""
    import modelcheck.layout as layout_mod

    def colliding(words, seed=None):
        return np.zeros(len(words), dtype=np.uint64)

    monkeypatch.setattr(layout_mod, "fingerprint64", colliding)
    spec = TwoWords()
    assert spec.layout.n_words == 2
    r = explore(spec)
    assert r.fingerprint == "exact"
    assert (r.distinct_states, r.depth) == brute_force(spec) == (36, 10)


class TwoWords(Spec):
    """Two 41-bit counters that count to 5: 36 states in two 64-bit words."""

    check_deadlock = False
    a = Int(0, 2**40)
    b = Int(0, 2**40)

    @action
    def IncA(self, s, t):
        t.a = s.a + 1
        return s.a < 5

    @action
    def IncB(self, s, t):
        t.b = s.b + 1
        return s.b < 5


@settings(max_examples=25, deadline=None)
@given(random_spec(wide=True))
def test_hashed_fingerprints_give_the_same_counts(cls) -> None:
    spec = cls()
    assert explore(spec, invariants=[], check_deadlock=False).distinct_states == \
        brute_force(spec)[0]
