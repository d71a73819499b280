"""Specs as hypothesis state machines, for users' own pytest suites.

:func:`state_machine` turns a bound spec into a hypothesis
``RuleBasedStateMachine``: an ``@initialize`` rule picks an initial state, one
``@rule`` per action (family) picks one of its enabled instances, with its
parameters, and the spec's invariants are ``@invariant``\\ s; action properties are
checked on every step, deadlocks (when checked) in an invariant. Hypothesis then
searches, remembers failures in its database and shrinks them with its own
shrinker. Steps use the engine's scalar evaluator (:meth:`Kernel.successors`), the
one that replays traces, so a failing run is a behaviour of the spec. A state
outside the state constraints, or reached by a step that violates an action
constraint, has no enabled rule (the run stutters there, as a walk of
``modelcheck simulate`` stops).

This module needs hypothesis (``pip install hypothesis``); the rest of modelcheck
does not import it. For example::

    from hypothesis import settings
    from modelcheck.testing import state_machine
    from specs.kraft_broker import KRaftBrokerBugNoCatchUpCheck

    TestNoCatchUp = state_machine(KRaftBrokerBugNoCatchUpCheck()).TestCase
    TestNoCatchUp.settings = settings(max_examples=300, stateful_step_count=20)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from .codec import tla_text
from .config import CheckConfig
from .explorer import build_kernel
from .kernel import Kernel, format_state
from .library import Library
from .library import lookup as library_lookup
from .spec import ActionInstance, Spec

__all__ = ["state_machine", "SpecMachine"]


class SpecMachine(RuleBasedStateMachine):
    """Base of the machines :func:`state_machine` builds: the spec's current state."""

    kernel: Kernel

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[int] | None = None
        self.labels: list[str] = []
        self._succ: dict[str, list[tuple[ActionInstance, list[int]]]] | None = None
        #: whether the last step satisfied the action constraints (the run goes on)
        self.in_actions = True

    def successors(self) -> dict[str, list[tuple[ActionInstance, list[int]]]]:
        """The enabled instances of the current state by action name, with successors."""
        if self._succ is None:
            out: dict[str, list[tuple[ActionInstance, list[int]]]] = {}
            k = self.kernel
            if self.cells is not None and self.in_actions and \
                    k.satisfies_constraints(self.cells):
                for inst, nxt in k.successors(self.cells):
                    out.setdefault(inst.name, []).append((inst, nxt))
            self._succ = out
        return self._succ

    def move(self, inst: ActionInstance, nxt: list[int]) -> None:
        assert self.cells is not None
        bad = self.kernel.check_properties(self.cells, nxt)
        label = _label(inst)
        if bad:
            raise AssertionError(
                f"action property {bad[0].name} is violated by {label} from the state "
                f"{self.describe(self.cells)} to {self.describe(nxt)} (steps: "
                f"{', '.join([*self.labels, label])})")
        self.in_actions = self.kernel.satisfies_action_constraints(self.cells, nxt)
        self.cells = nxt
        self.labels.append(label)
        self._succ = None

    def describe(self, cells: Sequence[int]) -> str:
        return format_state(self.kernel.layout, cells)

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}({self.describe(self.cells) if self.cells is not None else '-'})"


def _label(inst: ActionInstance) -> str:
    if not inst.params:
        return inst.name
    return f"{inst.name}({', '.join(f'{p}={tla_text(v)}' for p, v in inst.params)})"


def state_machine(spec: Spec, *, invariants: Sequence[str] | None = None,
                  check_deadlock: bool | None = None,
                  library: Library | None = library_lookup) -> type[SpecMachine]:
    """A ``RuleBasedStateMachine`` class for a bound spec (see the module docstring).

    ``invariants`` names the invariants and action properties to check (default:
    all of the spec's, as ``--invariant``); ``check_deadlock`` overrides the spec's
    deadlock check. Use its ``TestCase`` attribute as a test class.
    """
    cfg = CheckConfig(invariants=None if invariants is None else tuple(invariants),
                      check_deadlock=check_deadlock, symmetry=False)
    kernel = build_kernel(spec, cfg, library)
    inits = kernel.initial_states()
    ns: dict[str, Any] = {"kernel": kernel, "__doc__": f"{spec!r} as a state machine."}

    @initialize(i=st.integers(0, len(inits) - 1))
    def init(self: SpecMachine, i: int) -> None:
        self.cells = list(inits[i])
        self._succ = None
        self.in_actions = True

    ns["init_state"] = init
    families: dict[str, None] = dict.fromkeys(a.name for a in kernel.actions)
    for name in families:
        attr = f"action_{name}" if hasattr(SpecMachine, name) or name in ns else name
        ns[attr] = _action_rule(name, attr)

    def stopped(self: SpecMachine) -> bool:
        return self.cells is not None and not self.successors()

    @precondition(stopped)
    @rule()
    def Stutter(self: SpecMachine) -> None:  # noqa: N802 - a TLA+ name
        """No action is enabled (or the state is outside the model)."""

    ns["Stutter"] = Stutter
    for p in kernel.invariants:
        ns[f"invariant_{p.name}"] = _invariant(p.name, kernel.invariants.index(p))
    if kernel.check_deadlock:
        ns["invariant_Deadlock"] = _deadlock()
    return type(f"{spec.name}Machine", (SpecMachine,), ns)


def _action_rule(name: str, attr: str) -> Callable[..., None]:
    def enabled(self: SpecMachine) -> bool:
        return name in self.successors()

    @precondition(enabled)
    @rule(data=st.data())
    def step(self: SpecMachine, data: st.DataObject) -> None:
        options = self.successors()[name]
        label = data.draw(st.sampled_from([_label(i) for i, _ in options]), label=name)
        inst, nxt = next((i, n) for i, n in options if _label(i) == label)
        self.move(inst, nxt)

    step.__name__ = attr
    return step


def _invariant(name: str, j: int) -> Callable[[SpecMachine], None]:
    @invariant()
    def check(self: SpecMachine) -> None:
        if self.cells is None:
            return
        p = self.kernel.invariants[j]
        if p in self.kernel.check_invariants(self.cells):
            raise AssertionError(f"invariant {name} is violated in the state "
                                 f"{self.describe(self.cells)} (steps: "
                                 f"{', '.join(self.labels) or 'none'})")

    check.__name__ = f"invariant_{name}"
    return check


def _deadlock() -> Callable[[SpecMachine], None]:
    @invariant()
    def check(self: SpecMachine) -> None:
        k = self.kernel
        if self.cells is not None and not k.successors(self.cells):
            raise AssertionError(f"deadlock: no action is enabled in the state "
                                 f"{self.describe(self.cells)} (steps: "
                                 f"{', '.join(self.labels) or 'none'})")

    check.__name__ = "invariant_Deadlock"
    return check
