"""Random small specs for property tests: bounded ints, guarded increments, resets, copies."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from modelcheck import Int, Spec, action, invariant, where

__all__ = ["random_spec"]


def _make_action(guard_var: int, guard_op: str, guard_val: int, kind: str, target: int,
                 source: int, hi: int):
    def fn(self: Any, s: Any, t: Any) -> Any:
        g = getattr(s, f"v{guard_var}")
        cond = {"<": g < guard_val, "==": g == guard_val, "!=": g != guard_val}[guard_op]
        cur = getattr(s, f"v{target}")
        if kind == "inc":
            setattr(t, f"v{target}", where(cur < hi, cur + 1, 0))
        elif kind == "reset":
            setattr(t, f"v{target}", 0)
        else:
            src = getattr(s, f"v{source}")
            setattr(t, f"v{target}", where(src <= hi, src, hi))
        return cond

    return fn


@st.composite
def random_spec(draw: st.DrawFn, *, max_vars: int = 4, wide: bool = False) -> type[Spec]:
    """A Spec subclass with 1-4 variables and 1-6 guarded actions (deadlock check on)."""
    n = draw(st.integers(1, max_vars))
    his = [draw(st.integers(1, 4)) for _ in range(n)]
    ns: dict[str, Any] = {}
    for i, hi in enumerate(his):
        ns[f"v{i}"] = Int(0, hi if not wide else hi + 2**40)
    n_actions = draw(st.integers(1, 6))
    for a in range(n_actions):
        gv = draw(st.integers(0, n - 1))
        fn = _make_action(
            gv, draw(st.sampled_from(["<", "==", "!="])), draw(st.integers(0, his[gv])),
            draw(st.sampled_from(["inc", "inc", "reset", "copy"])),
            draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)),
            min(his), )
        fn.__name__ = f"A{a}"
        ns[f"A{a}"] = action(fn)
    bound = draw(st.integers(0, 2 * max(his)))

    def inv(self: Any, s: Any) -> Any:
        return (s.v0 + getattr(s, f"v{n - 1}")) <= bound

    inv.__name__ = "SumBounded"
    ns["SumBounded"] = invariant(inv)
    return type("RandomSpec", (Spec,), ns)
