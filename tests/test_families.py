"""Family evaluation (:mod:`modelcheck.family`): one call over (instances x states) gives
the per-instance evaluator's results bit for bit, errors included.

Oracles: the per-instance evaluator (family evaluation switched off) on every field of
every batch's expansion and of the whole run, and the brute-force explorer (scalar
evaluator, Python sets) on the counts.
"""

from __future__ import annotations

import numpy as np
import pytest
from bruteforce import brute_force
from famspec import random_family_spec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Array, Bool, Explorer, Ids, Int, Record, SetOf, Spec, action, where
from modelcheck.errors import SpecEvaluationError
from modelcheck.kernel import Kernel
from modelcheck.result import Result

ON = dict(family_rows=1 << 20, family_min=2)  # every family, whatever the batch
OFF = dict(family_rows=0)


def run(spec: Spec, families: bool, **options) -> Result | str:
    """The run's result, or the spec error it reports (its message)."""
    ex = Explorer(spec, **options)
    for k, v in (ON if families else OFF).items():
        setattr(ex.kernel, k, v)
    try:
        return ex.run()
    except SpecEvaluationError as e:
        return f"error: {e}"


def summary(r: Result | str) -> object:
    if isinstance(r, str):
        return r
    v = r.violation
    trace = None if v is None else [(s.action, s.params, s.state) for s in v.trace]
    return (r.status, r.distinct_states, r.generated_states, r.depth,
            [(c.name, c.params, c.fired, c.new_states) for c in r.coverage],
            None if v is None else (v.property, v.kind, v.also_violated), trace)


def kernel(spec: Spec, families: bool) -> Kernel:
    k = Kernel(spec, **(ON if families else OFF))
    return k


def expansion(k: Kernel, words: np.ndarray) -> object:
    """Every field of an expansion of ``words``, or the error it raises."""
    try:
        ex = k.expand(words)
    except SpecEvaluationError as e:
        return f"error: {e}"
    return (ex.n, [r.tolist() for r in ex.invariant_rows], ex.child_words.tolist(),
            ex.child_fps.tolist(), ex.parent_rows.tolist(), ex.action_ids.tolist(),
            ex.fired.tolist(), ex.deadlock_rows.tolist(),
            [[a.tolist() for a in h] for h in ex.property_hits],
            [[a.tolist() for a in h] for h in ex.outside_hits], ex.outside)


def reachable_words(spec: Spec, limit: int = 400) -> np.ndarray:
    """Packed states reachable by the scalar evaluator (breadth-first, at most ``limit``)."""
    k = Kernel(spec, symmetry=False)
    seen = {tuple(c) for c in k.initial_states()}
    todo = [list(c) for c in k.initial_states()]
    while todo and len(seen) < limit:
        nxt = []
        for cells in todo:
            try:
                succ = k.successors(cells)
            except SpecEvaluationError:
                continue
            for _, c in succ:
                if tuple(c) not in seen:
                    seen.add(tuple(c))
                    nxt.append(c)
        todo = nxt
    return np.stack([spec.layout.pack(list(c)) for c in sorted(seen)])


# ----------------------------------------------------------------- random specs
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_family_spec())
def test_random_families_match_the_per_instance_run_and_brute_force(cls) -> None:
    spec = cls()
    on, off = run(spec, True), run(spec, False)
    assert summary(on) == summary(off)
    bare_on = run(spec, True, invariants=[], check_deadlock=False)
    assert summary(bare_on) == summary(run(spec, False, invariants=[], check_deadlock=False))
    # the one-state-at-a-time oracle on the specs small enough for it (a random family
    # spec can have millions of states, which the per-instance run above still checks)
    if not isinstance(bare_on, str) and bare_on.distinct_states <= 20_000:
        assert (bare_on.distinct_states, bare_on.depth) == brute_force(spec)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_family_spec(errors=True), st.integers(0, 2**32 - 1))
def test_random_families_expand_every_batch_bit_for_bit(cls, seed: int) -> None:
    """Every field of the expansion of a batch of reachable states, and of random
    sub-batches, is the per-instance evaluator's, errors (message and state) included."""
    spec = cls()
    words = reachable_words(spec)
    on, off = kernel(spec, True), kernel(spec, False)
    rng = np.random.default_rng(seed)
    batches = [words, words[:1], words[-3:]]
    batches += [words[rng.choice(len(words), size=min(len(words), 7), replace=False)]
                for _ in range(3)]
    for w in batches:
        assert expansion(on, w) == expansion(off, w)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_family_spec(errors=True))
def test_random_family_errors_are_reported_alike(cls) -> None:
    spec = cls()
    assert summary(run(spec, True)) == summary(run(spec, False))


# ------------------------------------------------------------------- the wave
class Wave(Spec):
    """benchmarks/wave.py, small: flags set in order, acknowledged twice."""

    check_deadlock = False
    Cells = Ids(0, 19)
    flag = Array(Cells, Bool())
    acks = Int(0, 2)

    @action(i=Cells)
    def Set(self, s, t, i):
        t.flag[i] = True
        return ~s.flag[i] & ((i == 0) | s.flag[where(i > 0, i - 1, i)])

    @action(i=Cells)
    def Ack(self, s, t, i):
        t.acks = s.acks + 1
        return (i == 19) & s.flag[i] & (s.acks < 2)


def test_wave_uses_families_and_matches() -> None:
    on, off = run(Wave(), True), run(Wave(), False)
    assert summary(on) == summary(off)
    assert isinstance(on, Result) and (on.distinct_states, on.depth) == (23, 22)
    k = kernel(Wave(), True)
    k.expand(reachable_words(Wave()))
    assert not k._family_failed  # both families were evaluated in one call


def test_benchmark_wave_counts() -> None:
    from benchmarks.wave import Wave as BenchWave
    from benchmarks.wave import expected_states

    r = run(BenchWave(N=50), True)
    assert isinstance(r, Result) and r.status == "ok"
    assert (r.distinct_states, r.depth) == expected_states(50)


# ------------------------------------------------ compound values and branches
class Club(Spec):
    """Members join in order (a set of ids and an array of records, written through the
    parameter), then either bump their level or leave for good: two branches, one of
    which scatters through the parameter."""

    check_deadlock = False
    Procs = Ids(0, 3)
    S = SetOf(Procs)
    r = Array(Procs, Record(v=Int(0, 2), on=Bool()))
    left = Array(Procs, Bool())

    @action(i=Procs)
    def Join(self, s, t, i):
        t.S = s.S.with_(i)
        t.r[i] = s.r[i].with_fields(on=True)
        return ~s.S.has(i) & ~s.left[i] & ((i == 0) | s.S.has(where(i > 0, i - 1, i)))

    @action(i=Procs)
    def Bump(self, s, t, i):
        with t.branch("up", s.r[i].v < 2):
            t.r[i] = s.r[i].with_fields(v=s.r[i].v + 1)
        with t.branch("leave", s.r[i].v == 2):
            t.S = s.S.without(i)
            t.r[i] = {"v": 0, "on": False}
            t.left[i] = True
        return s.r[i].on & s.S.has(i)


def test_families_over_compound_values_and_branches_are_evaluated_at_once() -> None:
    on, off = run(Club(), True), run(Club(), False)
    assert summary(on) == summary(off)
    assert isinstance(on, Result) and (on.distinct_states, on.depth) == brute_force(Club())
    assert {c.name for c in on.coverage if c.fired} == {"Join", "Bump[up]", "Bump[leave]"}
    k, k_off = kernel(Club(), True), kernel(Club(), False)
    words = reachable_words(Club())
    assert expansion(k, words) == expansion(k_off, words)
    assert not k._family_failed  # every family was evaluated in one call


# --------------------------------------------------------- falling back, errors
class PythonIf(Spec):
    """The family branches on its parameter in Python: not vectorisable."""

    check_deadlock = False
    Cells = Ids(0, 5)
    flag = Array(Cells, Bool())

    @action(i=Cells)
    def Set(self, s, t, i):
        t.flag[i] = True
        prev = True if i == 0 else s.flag[i - 1]
        return ~s.flag[i] & prev


def test_a_family_that_is_not_vectorisable_falls_back_and_is_right() -> None:
    on, off = run(PythonIf(), True), run(PythonIf(), False)
    assert summary(on) == summary(off)
    assert isinstance(on, Result) and (on.distinct_states, on.depth) == (7, 6)
    assert (on.distinct_states, on.depth) == brute_force(PythonIf())
    k = kernel(PythonIf(), True)
    ex = k.expand(reachable_words(PythonIf()))
    assert k._family_failed == {0}  # it fell back ...
    assert ex.fired.tolist() == [1] * 6  # ... and every instance fired once


class OutsideIndex(Spec):
    """``s.flag[i - 1]`` for ``i == 0``: an int index outside the index set is an
    error; the family must not read the first element instead."""

    check_deadlock = False
    Cells = Ids(0, 3)
    flag = Array(Cells, Bool())

    @action(i=Cells)
    def Set(self, s, t, i):
        t.flag[i] = True
        return ~s.flag[i] & ((i == 0) | s.flag[i - 1])


def test_a_parameter_index_outside_its_set_is_the_same_error() -> None:
    on, off = run(OutsideIndex(), True), run(OutsideIndex(), False)
    assert isinstance(on, str) and on == off
    assert "index -1 is outside the index set 0..3" in on and "action Set(0)" in on


class RaisesInOne(Spec):
    """Instance Step(3) raises in the state where x == 2, and only there."""

    check_deadlock = False
    Cells = Ids(0, 5)
    x = Int(0, 4)
    hits = Array(Cells, Int(0, 4))

    def init_states(self):
        for v in range(3):
            yield {"x": v}

    @action(i=Cells)
    def Step(self, s, t, i):
        if np.any((np.asarray(s.x) == 2) & (np.asarray(i) == 3)):
            raise ValueError("boom")
        t.hits[i] = s.hits[i] + 1
        return s.hits[i] < 1


class OutOfDomainInOne(RaisesInOne):
    """Instance Jump(4) assigns outside the domain in the state where x == 1 only."""

    @action(i=RaisesInOne.Cells)
    def Step(self, s, t, i):
        t.hits[i] = where((i == 4) & (s.x == 1), 7, s.hits[i])
        return s.hits[i] < 1


@pytest.mark.parametrize("cls, needles", [
    (RaisesInOne, ["action Step(3)", "ValueError: boom", "x=2"]),
    (OutOfDomainInOne, ["action Step(4) assigns hits[4] = 7", "x=1"]),
])
def test_an_action_raising_in_one_instance_is_attributed_alike(cls, needles) -> None:
    on, off = run(cls(), True), run(cls(), False)
    assert isinstance(on, str) and on == off
    for n in needles:
        assert n in on, (n, on)
    # on any batch: the same error as the per-instance evaluator
    words = reachable_words(cls())
    for w in (words, words[::-1], words[1:]):
        assert expansion(kernel(cls(), True), w) == expansion(kernel(cls(), False), w)


class NotBool(Spec):
    """A family whose guard is an int for one instance."""

    Cells = Ids(0, 3)
    v = Array(Cells, Int(0, 3))

    @action(i=Cells)
    def Bump(self, s, t, i):
        t.v[i] = where(s.v[i] < 3, s.v[i] + 1, 0)
        return s.v[i] + (i == 2)


@pytest.mark.parametrize("families", [True, False])
def test_a_non_boolean_guard_is_still_an_error(families: bool) -> None:
    r = run(NotBool(), families)
    assert isinstance(r, str)
    assert "the guard of action Bump(0)" in r and "not a boolean" in r
    assert r == run(NotBool(), not families)


class Conflict(Spec):
    """Two writes to cell 0 in one instance: the last one wins, as one by one."""

    check_deadlock = False
    Cells = Ids(0, 3)
    v = Array(Cells, Int(0, 3))

    @action(i=Cells)
    def Write(self, s, t, i):
        t.v[i] = 1
        t.v[0] = 2
        return s.v[i] == 0


def test_overlapping_writes_keep_their_order() -> None:
    on, off = run(Conflict(), True), run(Conflict(), False)
    assert summary(on) == summary(off)
    assert (on.distinct_states, on.depth) == brute_force(Conflict())


class ReadBack(Spec):
    """The action reads back, from the next state, a cell it wrote through ``i``."""

    check_deadlock = False
    Cells = Ids(0, 3)
    b = Array(Cells, Bool())
    x = Int(0, 1)

    @action(i=Cells)
    def Set(self, s, t, i):
        t.b[i] = True
        t.x = where(t.b[0], 1, 0)
        return ~s.b[i]


def test_reading_back_a_written_cell_sees_the_write() -> None:
    on, off = run(ReadBack(), True), run(ReadBack(), False)
    assert summary(on) == summary(off)
    assert (on.distinct_states, on.depth) == brute_force(ReadBack())


def _real_specs() -> list[tuple[str, Spec]]:
    from test_spec_api import Tokens, Walk

    from examples.counter import Counter
    from examples.mutex import Peterson
    from examples.two_phase_commit import TwoPhaseCommit
    from specs.kraft_broker import KRaftBroker, KRaftBrokerBugNoCatchUpCheck
    from specs.kraft_lifecycle import KRaftLifecycle

    return [("tokens", Tokens()), ("walk", Walk()), ("counter", Counter()),
            ("peterson", Peterson()), ("2pc", TwoPhaseCommit()),
            ("kraft-L1", KRaftBroker(N=2, P=1, MaxLog=4, MaxRestarts=1)),
            ("kraft-N3P2", KRaftBroker(N=3, P=2, MaxLog=2, MaxRestarts=1)),
            ("kraft-bug", KRaftBrokerBugNoCatchUpCheck()),
            ("lifecycle", KRaftLifecycle(MaxLog=2))]


@pytest.mark.parametrize("name", [n for n, _ in _real_specs()])
def test_the_specs_give_the_same_results_with_every_family_evaluated_at_once(name) -> None:
    """The project's specs (Refs, sets, enums, any_of, nested arrays, symmetry, action
    properties, constraints) with every family of two or more instances evaluated in
    one call, where it can be, against one call per instance."""
    spec = dict(_real_specs())[name]
    assert summary(run(spec, True)) == summary(run(spec, False))
