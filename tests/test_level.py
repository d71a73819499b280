"""The level rule: results do not depend on the batch size, spec errors
included (compared with a one-state-at-a-time oracle of the rule)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import Int, Spec, action, explore, invariant
from modelcheck.errors import SpecEvaluationError
from modelcheck.kernel import Kernel


class B(Spec):
    """An invariant fails on one initial state, an action raises on another."""

    check_deadlock = False
    x = Int(0, 10)

    def init_states(self):
        for v in range(10):
            yield {"x": v}

    @action
    def Step(self, s, t):
        if np.any(np.asarray(s.x) == 5):
            raise ValueError("boom at five")
        t.x = s.x
        return s.x < 0

    @invariant
    def NotTwo(self, s):
        return s.x != 2


def outcome(spec: Spec, batch_size: int) -> tuple[str, str]:
    try:
        r = explore(spec, batch_size=batch_size)
    except SpecEvaluationError as e:
        return "error", str(e)
    v = r.violation
    return r.status, "" if v is None else f"{v.property} {v.trace[-1].state}"


@settings(max_examples=64, deadline=None)
@given(st.integers(1, 64))
def test_invariant_before_action_error_at_every_batch_size(batch_size: int) -> None:
    assert outcome(B(), batch_size) == ("violation", "NotTwo {'x': 2}")


def make_spec(inv_raise: frozenset[int], inv_bad: frozenset[int], act_raise: frozenset[int],
              dead: bool) -> Spec:
    class R(Spec):
        check_deadlock = dead
        x = Int(0, 31)
        y = Int(0, 3)

        def init_states(self):
            for v in range(32):
                yield {"x": v}

        @action
        def Up(self, s, t):
            xs = np.atleast_1d(np.asarray(s.x))
            if any(int(v) in act_raise for v in xs):
                raise ValueError("action boom")
            t.y = s.y + 1
            return (s.y < 1) & (s.x % 3 != 0)

        @invariant
        def Inv(self, s):
            xs = np.atleast_1d(np.asarray(s.x))
            if any(int(v) in inv_raise for v in xs):
                raise ValueError("invariant boom")
            ok = np.ones(len(xs), dtype=bool)
            for v in inv_bad:
                ok &= xs != v
            return ok if np.ndim(s.x) else ok[0]

    return R()


def oracle(spec: Spec, inv_raise: set[int], inv_bad: set[int], act_raise: set[int],
           dead: bool) -> tuple[str, int]:
    """The level rule on level 0, one state at a time in fingerprint order."""
    k = Kernel(spec)
    states = sorted((k.fingerprint(c), c) for c in k.initial_states())
    for _fp, c in states:  # phase 1: the first invariant problem decides
        if c[0] in inv_raise:
            return "error", c[0]
        if c[0] in inv_bad:
            return "violation", c[0]
    for _fp, c in states:  # phase 2: the first expansion error decides
        if c[0] in act_raise:
            return "error", c[0]
    if dead:  # states x % 3 == 0 have no successor (y = 0 at level 0)
        for _fp, c in states:
            if c[0] % 3 == 0:
                return "deadlock", c[0]
    return "ok", -1


xs = st.frozensets(st.integers(0, 31), max_size=3)


@settings(max_examples=60, deadline=None)
@given(xs, xs, xs, st.booleans(), st.integers(1, 40), st.integers(1, 40))
def test_level_rule_matches_oracle(inv_raise, inv_bad, act_raise, dead, b1, b2) -> None:
    spec = make_spec(inv_raise, inv_bad, act_raise, dead)
    kind, x = oracle(spec, set(inv_raise), set(inv_bad), set(act_raise), dead)
    seen = set()
    for b in (b1, b2, 1 << 16):
        try:
            r = explore(make_spec(inv_raise, inv_bad, act_raise, dead), batch_size=b)
        except SpecEvaluationError as e:
            got = ("error", e.state["x"] if e.state else None)
        else:
            if r.violation is None:
                got = (r.status, -1)
            else:
                got = (r.status, r.violation.trace[-1].state["x"]) \
                    if r.violation.kind != "action" else (r.status, -2)
        seen.add(got)
    assert seen == {(kind, x)}
