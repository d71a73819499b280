"""Locating the first state of a level that raises (``LevelExpansion._locate``).

A batch of states that raises is expanded again in pieces to find its first raising
state in fingerprint order; the oracle here is a brute-force scan of the level, one
state at a time with the scalar evaluator (phase 1: the first state whose invariants
raise or are violated; phase 2: the first state whose full evaluation raises). Also:
the work is about one expansion of the batch (counted in rows, not timed), and a stop
request (Ctrl-C) while locating keeps the spec error in the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Int, Spec, action, action_property, explore, invariant, level
from modelcheck.errors import SpecEvaluationError
from modelcheck.interrupt import Interrupts
from modelcheck.kernel import Kernel
from modelcheck.level import LevelExpansion, initial_states


def make_spec(n: int, inv_raise: set[int], inv_bad: set[int], a_raise: set[int],
              b_raise: set[int], prop_raise: set[int]) -> Spec:
    """``n`` initial states ``x = 0..n-1``; each set says where something raises (or,
    ``inv_bad``, where the invariant is violated). Per state, whatever the batch."""
    ir, ib, ar, br, pr = (np.array(sorted(v), dtype=np.int64) for v in
                          (inv_raise, inv_bad, a_raise, b_raise, prop_raise))

    class R(Spec):
        check_deadlock = False
        x = Int(0, max(n - 1, 1))
        y = Int(0, 1)

        def init_states(self):
            for v in range(n):
                yield {"x": v, "y": 0}

        @action
        def A(self, s, t):
            if np.isin(s.x, ar).any():
                raise ValueError("A boom")
            t.y = 1
            return s.y == 0

        @action
        def B(self, s, t):
            if np.isin(s.x, br).any():
                raise ValueError("B boom")
            t.y = 0
            return s.y == 1

        @action_property
        def P(self, s, t):
            if np.isin(s.x, pr).any():
                raise ValueError("P boom")
            return s.x == t.x

        @invariant
        def Inv(self, s):
            if np.isin(s.x, ir).any():
                raise ValueError("Inv boom")
            return ~np.isin(s.x, ib)

    return R()


def brute_force(k: Kernel) -> tuple[Any, ...]:
    """The level rule's answer on level 0 from the scalar evaluator, state by state."""
    states = sorted((k.fingerprint(c), c) for c in k.initial_states())
    for fp, c in states:
        try:
            if k.check_invariants(c):
                return ("violation", fp)
        except SpecEvaluationError as e:
            return ("error", fp, str(e))
    for fp, c in states:
        try:
            k.check_state(c)
        except SpecEvaluationError as e:
            return ("error", fp, str(e))
    return ("none",)


def level_verdict(k: Kernel, batch_size: int, **kw: Any) -> tuple[Any, ...]:
    fps, words, _ = initial_states(k)
    lx = LevelExpansion(k, fps, words, expand=True, batch_size=batch_size, **kw)
    for _ in lx.candidates():
        pass
    v = lx.findings.verdict()
    if v is None or v.kind not in ("error", "invariant"):
        return ("none",)
    if v.kind == "invariant":
        return ("violation", v.at)
    assert v.error is not None
    return ("error", v.error.fp, v.error.message)


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, int, list[set[int]]]:
    n = draw(st.sampled_from([1, 2, 3, 7, 40, 255, 256, 257, 600, 2000, 5000]))
    xs = st.sets(st.integers(0, n - 1), max_size=3)
    inv = st.one_of(st.just(set()), xs)  # (phase 1 decides whenever the invariant fails)
    sets = [draw(inv), draw(inv), draw(xs), draw(xs), draw(xs)]
    batch = draw(st.sampled_from([1, 5, 64, 1000, 1 << 16]))
    return n, batch, sets


@settings(max_examples=80, deadline=None)
@given(cases(), st.sampled_from([(256, 4096), (1, 1), (3, 8)]))
def test_located_state_is_the_brute_force_one(case, pieces) -> None:
    n, batch, sets = case
    k = Kernel(make_spec(n, *sets))
    want = brute_force(k)
    old = getattr(level, "LOCATE_FIRST", 0), getattr(level, "LOCATE_MAX", 0)
    level.LOCATE_FIRST, level.LOCATE_MAX = pieces  # type: ignore[misc]
    try:
        got = level_verdict(k, batch)
    finally:
        level.LOCATE_FIRST, level.LOCATE_MAX = old  # type: ignore[misc]
    assert got == want


class Counting:
    """Wraps ``kernel.expand``: counts the calls and the rows, calls ``hook(calls)``."""

    def __init__(self, k: Kernel, hook: Callable[[int], None] | None = None) -> None:
        self.inner, self.calls, self.rows, self.expand_rows = k.expand, 0, 0, 0
        self.hook = hook
        k.expand = self  # type: ignore[method-assign]

    def __call__(self, words: np.ndarray, **kw: Any) -> Any:
        self.calls += 1
        self.rows += len(words)
        if kw.get("expand", True):
            self.expand_rows += len(words)
        if self.hook is not None:
            self.hook(self.calls)
        return self.inner(words, **kw)


def raising_at_row(n: int, row: int) -> tuple[Kernel, int]:
    """A kernel whose action A raises on the state at ``row`` of level 0 (by fp)."""
    k = Kernel(make_spec(n, set(), set(), set(), set(), set()))
    fps, words, _ = initial_states(k)
    x = k.layout.unpack(words[row])[0]
    return Kernel(make_spec(n, set(), set(), {x}, set(), set())), x


def test_large_batch_locates_in_about_one_expansion() -> None:
    n, row = 50_000, 30_000
    k, x = raising_at_row(n, row)
    fps, words, _ = initial_states(k)
    count = Counting(k)
    lx = LevelExpansion(k, fps, words, expand=True, batch_size=1 << 16)
    for _ in lx.candidates():
        pass
    v = lx.findings.verdict()
    assert v is not None and v.error is not None and v.error.state is not None
    assert v.error.state["x"] == x and v.error.fp == int(fps[row]) and "A boom" in v.error.message
    # the batch itself, the invariants of the batch again (pass 1), then the expansion
    # up to the raising row in pieces (doubling to LOCATE_MAX), then halving one piece
    limit = level.LOCATE_MAX
    assert count.expand_rows <= n + row + 2 * limit
    assert count.rows <= 2 * n + row + 2 * limit
    pieces = -(-n // limit) + 5 + limit.bit_length()
    assert count.calls <= 1 + 2 * pieces


@pytest.mark.parametrize("stop_at", [2, 3, 6, 10, 1000])
def test_stop_while_locating_keeps_the_spec_error(stop_at: int) -> None:
    n, row = 20_000, 12_345
    k, x = raising_at_row(n, row)
    count = Counting(k)

    def stop() -> bool:
        return count.calls >= stop_at

    got = level_verdict(k, 1 << 16, stop=stop)
    assert got[0] == "error" and "action A" in got[2] and "A boom" in got[2]
    if stop_at < 1000:
        assert count.calls == stop_at  # honoured at once
        assert "Interrupted while locating" in got[2]
    else:
        assert f"[x={x}," in got[2] and got == brute_force(k)


@pytest.mark.parametrize("stop_at", [3, 12])
def test_ctrl_c_while_locating_reports_the_spec_error(monkeypatch, stop_at: int) -> None:
    """Through the explorer: a Ctrl-C (recorded by the run's guard) while the first
    raising state is searched for ends the run with the spec error, not ``interrupted``
    (batches of 4,000 states: the raising one is not the level's last)."""
    n, row = 20_000, 9_000
    _k, x = raising_at_row(n, row)
    spec = make_spec(n, set(), set(), {x}, set(), set())
    calls = [0]
    real = Kernel.expand

    with Interrupts() as guard:
        def expand(self: Kernel, words: np.ndarray, **kw: Any) -> Any:
            calls[0] += 1
            if calls[0] == stop_at:
                guard.request()
            return real(self, words, **kw)

        monkeypatch.setattr(Kernel, "expand", expand)
        with pytest.raises(SpecEvaluationError) as e:
            explore(spec, batch_size=4000)
        guard.requested = False
    assert "action A" in str(e.value) and "A boom" in str(e.value)


def test_ctrl_c_while_a_worker_locates_reports_the_spec_error(monkeypatch) -> None:
    """``--workers N``: a worker tells the coordinator that a batch raised before it
    locates the raising state; a Ctrl-C then (requested here as that notice arrives)
    ends the run with that spec error, noted as not isolated, not ``interrupted``."""
    from modelcheck.shards.pool import ParallelExplorer, WorkerPool

    real = WorkerPool._notice

    def notice(self: WorkerPool, payload: dict[str, Any]) -> None:
        real(self, payload)
        self.stop.request()

    monkeypatch.setattr(WorkerPool, "_notice", notice)
    _k, x = raising_at_row(3000, 2000)
    spec = make_spec(3000, set(), set(), {x}, set(), set())
    with pytest.raises(SpecEvaluationError) as e:
        ParallelExplorer(spec, workers=2, driver_threshold=0).run()
    assert "Interrupted while a worker located" in str(e.value)
    assert "action A" in str(e.value) and "A boom" in str(e.value)
