"""Random small specs: the batch explorer agrees with a naive brute-force explorer."""

from __future__ import annotations

from bruteforce import brute_force
from hypothesis import HealthCheck, given, settings
from randspec import random_spec

from modelcheck import explore
from modelcheck.kernel import Kernel


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec())
def test_counts_verdicts_and_shortest_traces(cls) -> None:
    spec = cls()
    r = explore(spec, invariants=[], check_deadlock=False)
    assert (r.distinct_states, r.depth) == brute_force(spec)
    full = explore(spec)
    k = Kernel(spec)
    if full.status == "ok":
        return
    trace = full.violation.trace
    # the trace replays, and no shorter violation exists (BFS levels from brute force)
    cells = spec.layout.cells_from_values(trace[0].state)
    for step in trace[1:]:
        cells = k.step(cells, spec.action_by_label(step.action, step.params))
        assert cells == spec.layout.cells_from_values(step.state)
    if full.status == "violation":
        assert k.check_invariants(cells)
        assert len(trace) - 1 == _first_bad_depth(k, lambda c: bool(k.check_invariants(c)))
    else:
        assert not k.successors(cells)
        assert len(trace) - 1 == _first_bad_depth(
            k, lambda c: bool(k.check_invariants(c)) or not k.successors(c))


def _first_bad_depth(k: Kernel, bad) -> int:
    frontier = [tuple(c) for c in k.initial_states()]
    seen = set(frontier)
    depth = 0
    while frontier:
        if any(bad(list(c)) for c in frontier):
            return depth
        nxt = []
        for c in frontier:
            for _, s in k.successors(list(c)):
                if tuple(s) not in seen:
                    seen.add(tuple(s))
                    nxt.append(tuple(s))
        frontier = nxt
        depth += 1
    raise AssertionError("no bad state found")


@settings(max_examples=25, deadline=None)
@given(random_spec(wide=True))
def test_hashed_fingerprints_give_the_same_counts(cls) -> None:
    spec = cls()
    assert explore(spec, invariants=[], check_deadlock=False).distinct_states == \
        brute_force(spec)[0]
