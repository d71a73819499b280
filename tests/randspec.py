"""Random small specs for property tests: bounded ints, guarded increments, resets, copies.

Some specs also get several initial states, state constraints (``@constraint``:
``v <= c``, ``v != c`` or ``v + w <= c``, so that successors and initial states fall
outside them), a second invariant (``v <= c``, ``v != c``, or the first
constraint itself) and an action property (a
variable never decreases), so that the explorer and the brute-force oracle are compared on every
kind of finding. ``random_spec(action_constraints=True)`` adds action constraints.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from modelcheck import (
    Int,
    Spec,
    action,
    action_constraint,
    action_property,
    constraint,
    invariant,
    where,
)

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
def random_spec(draw: st.DrawFn, *, max_vars: int = 4, wide: bool = False,
                action_constraints: bool = False) -> type[Spec]:
    """A Spec subclass with 1-4 variables and 1-6 guarded actions (deadlock check on);
    with ``action_constraints``, also one or two action constraints (TLC's
    ``ACTION_CONSTRAINT``: ``v' >= v``, ``v' != c``, ``v' + w <= c`` or ``v = c => w'
    = w``)."""
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
    if draw(st.integers(0, 2)):
        _add_extras(draw, ns, n, his)
    if action_constraints:
        for c in range(draw(st.integers(1, 2))):
            shape = (draw(st.sampled_from(["grows", "!=", "mixed<=", "frozen"])),
                     draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)),
                     draw(st.integers(0, max(his))))
            ns[f"AC{c}"] = action_constraint(_make_action_constraint(*shape, f"AC{c}"))
    return type("RandomSpec", (Spec,), ns)


def _make_action_constraint(op: str, a: int, b: int, bound: int, name: str):
    def fn(self: Any, s: Any, t: Any) -> Any:
        x, x2 = getattr(s, f"v{a}"), getattr(t, f"v{a}")
        y, y2 = getattr(s, f"v{b}"), getattr(t, f"v{b}")
        if op == "grows":
            return x2 >= x
        if op == "!=":
            return x2 != bound
        if op == "mixed<=":
            return x2 + y <= bound
        return (x != bound) | (y2 == y)

    fn.__name__ = name
    return fn


def _add_extras(draw: st.DrawFn, ns: dict[str, Any], n: int, his: list[int]) -> None:
    """Several initial states, state constraints, an invariant and an action property."""
    inits = draw(st.lists(st.tuples(*(st.one_of(st.just(0), st.integers(0, hi))
                                        for hi in his)), min_size=1, max_size=3))

    def init_states(self: Any) -> Any:
        for values in inits:
            yield {f"v{i}": v for i, v in enumerate(values)}

    ns["init_states"] = init_states
    shapes = []
    for c in range(draw(st.integers(1, 2))):
        shapes.append((draw(st.sampled_from(["<=", "!=", "sum<="])), draw(st.integers(0, n - 1)),
                       draw(st.integers(0, n - 1)), draw(st.integers(0, max(his)))))
        ns[f"C{c}"] = constraint(_make_constraint(*shapes[-1], f"C{c}"))
    if draw(st.booleans()):
        # the invariant is the first constraint: only states outside it violate it
        ns["Stays"] = invariant(_make_constraint(*shapes[0], "Stays"))
    elif draw(st.integers(0, 2)):
        var, val = draw(st.integers(0, n - 1)), draw(st.integers(0, max(his)))
        op = draw(st.sampled_from(["<=", "!="]))

        def stays(self: Any, s: Any) -> Any:
            x = getattr(s, f"v{var}")
            return x <= val if op == "<=" else x != val

        stays.__name__ = "Stays"
        ns["Stays"] = invariant(stays)
    if draw(st.booleans()):
        var = draw(st.integers(0, n - 1))

        def grows(self: Any, s: Any, t: Any) -> Any:
            return getattr(t, f"v{var}") >= getattr(s, f"v{var}")

        grows.__name__ = "Grows"
        ns["Grows"] = action_property(grows)


def _make_constraint(op: str, a: int, b: int, bound: int, name: str):
    def fn(self: Any, s: Any) -> Any:
        x = getattr(s, f"v{a}")
        if op == "<=":
            return x <= bound
        if op == "!=":
            return x != bound
        return x + getattr(s, f"v{b}") <= bound

    fn.__name__ = name
    return fn
