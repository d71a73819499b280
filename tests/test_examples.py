"""The newcomer examples: pinned counts, and an independent brute-force check of them.

The brute-force explorer here is deliberately naive (Python dict states, the
scalar evaluator only, a Python set), so it shares no code with the batch
explorer beyond the spec itself.
"""

from __future__ import annotations

import pytest
from bruteforce import brute_force

from examples.bounded_queue import BoundedQueue, BoundedQueueBugLifo
from examples.counter import Counter, CounterBug
from examples.mutex import NaiveMutex, Peterson
from examples.two_phase_commit import TwoPhaseCommit, TwoPhaseCommitBug
from modelcheck import explore


@pytest.mark.parametrize(
    "spec, distinct, depth",
    [
        (Counter(), 16, 6),
        (Counter(Max=5), 36, 10),
        (Peterson(), 20, 6),
        (TwoPhaseCommit(), 80, 10),
    ],
    ids=["counter", "counter-max5", "peterson", "2pc-3rm-symmetry"],
)
def test_pinned_counts(spec, distinct: int, depth: int) -> None:
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == (distinct, depth)


def _bounded_queue_counts(capacity: int, max_items: int) -> tuple[int, int, int]:
    """(distinct, depth, generated) of BoundedQueue, by hand: a state is fixed by
    (produced p, consumed c) with 0 <= p - c <= capacity and p <= max_items; every
    path to it takes p + c steps; Put is enabled while p - c < capacity (also from
    p = max_items, into the state outside the constraint), Get while p > c."""
    states = [(p, c) for p in range(max_items + 1) for c in range(max(0, p - capacity), p + 1)]
    generated = sum((p - c < capacity) + (p > c) for p, c in states)
    return len(states), max(p + c for p, c in states), generated


@pytest.mark.parametrize("capacity, max_items", [(2, 4), (1, 3), (3, 5), (2, 0)])
def test_bounded_queue_counts(capacity: int, max_items: int) -> None:
    spec = BoundedQueue(Capacity=capacity, MaxItems=max_items)
    r = explore(spec)
    # the last state (every item put and taken) only has a successor outside the
    # constraint: not a deadlock
    assert r.status == "ok"
    assert (r.distinct_states, r.depth, r.generated_states) == \
        _bounded_queue_counts(capacity, max_items)
    assert (r.distinct_states, r.depth) == brute_force(spec)


def test_bounded_queue_defaults_by_hand() -> None:
    # p = 0..4 with min(p, 2) + 1 values of c each: 1 + 2 + 3 + 3 + 3 = 12 states;
    # (4, 4) is 8 steps deep; Put fires from the 9 states with p - c < 2, Get from
    # the 7 with p > c
    assert _bounded_queue_counts(2, 4) == (12, 8, 16)
    r = explore(BoundedQueue())
    assert (r.distinct_states, r.depth, r.generated_states) == (12, 8, 16)


@pytest.mark.parametrize("n, distinct", [(3, 288), (4, 1_568)])
def test_two_phase_commit_classic_counts(n: int, distinct: int) -> None:
    # 288 states with 3 RMs is the classic TLC result for TwoPhase.tla
    r = explore(TwoPhaseCommit(RMs=n), symmetry=False)
    assert r.status == "ok" and r.distinct_states == distinct
    assert brute_force(TwoPhaseCommit(RMs=n))[0] == distinct


@pytest.mark.parametrize("spec", [Counter(), Counter(Max=4), Peterson(), TwoPhaseCommit(RMs=2)])
def test_explorer_agrees_with_brute_force(spec) -> None:
    r = explore(spec, symmetry=False)
    assert (r.distinct_states, r.depth) == brute_force(spec)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_symmetry_count_equals_number_of_orbits(n: int) -> None:
    spec = TwoPhaseCommit(RMs=n)
    reduced = explore(spec)
    assert reduced.symmetry == ["RMs_"]
    assert reduced.distinct_states == brute_force(spec, spec.symmetry_sets())[0]
    assert reduced.distinct_states < explore(spec, symmetry=False).distinct_states


@pytest.mark.parametrize(
    "spec, prop, length",
    [(CounterBug(), "TotalIsSum", 3), (NaiveMutex(), "MutualExclusion", 7),
     (TwoPhaseCommitBug(), "Consistent", 6), (BoundedQueueBugLifo(), "InOrder", 4)],
)
def test_example_bugs(spec, prop: str, length: int) -> None:
    for sym in (True, False):
        r = explore(spec, symmetry=sym)
        assert r.status == "violation"
        assert r.violation.property == prop
        assert len(r.violation.trace) == length


def test_peterson_has_no_deadlock_but_a_stuck_variant_does() -> None:
    from examples.mutex import Pc
    from modelcheck import action

    class Stuck(Peterson):
        @action(p=Peterson.Procs)
        def Enter(self, s, t, p):
            t.pc[p] = Pc.CRITICAL
            return (s.pc[p] == Pc.WAITING) & ~s.flag[1 - p]

    assert explore(Peterson()).status == "ok"
    r = explore(Stuck())
    assert r.status == "deadlock"
    assert r.violation.kind == "deadlock"
    last = r.violation.trace[-1].state
    assert last["pc"] == {0: "WAITING", 1: "WAITING"}
    assert explore(Stuck(), check_deadlock=False).status == "ok"


def _docstring_commands() -> list[tuple[str, list[str], str]]:
    """``(file, check arguments, comment)`` of every ``modelcheck check ...  # comment``
    line in the examples' docstrings."""
    import pathlib
    import re
    import shlex

    out = []
    for path in sorted(pathlib.Path("examples").glob("*.py")):
        for line in path.read_text().splitlines():
            m = re.match(r"\s+modelcheck check (.+?)\s+#\s*(.+)$", line)
            if m:
                out.append((path.name, shlex.split(m.group(1)), m.group(2)))
    return out


@pytest.mark.parametrize("file, args, comment", _docstring_commands(),
                         ids=lambda x: " ".join(x) if isinstance(x, list) else str(x))
def test_docstring_commands_say_what_happens(runner, file: str, args: list[str],
                                             comment: str) -> None:
    import json
    import re

    from modelcheck.cli import cli

    d = json.loads(runner.invoke(cli, ["check", *args, "--format", "json", "-q"]).stdout)
    if "violation" in comment:
        assert d["status"] == "violation"
    else:
        assert d["status"] == "ok"
    m = re.search(r"([\d,]+) states", comment)
    if m:
        assert d["distinct_states"] == int(m.group(1).replace(",", ""))
    m = re.search(r"(\d+)-state trace", comment)
    if m:
        assert d["violation"]["trace_length"] == int(m.group(1))
    m = re.search(r"violation of (\w+)", comment)
    if m:
        assert d["violation"]["property"] == m.group(1)
