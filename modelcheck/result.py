"""The result of a run: status, exact counts, coverage, per-level stats and the counterexample.

:class:`Result` is what every backend returns; :meth:`Result.to_json` is the
stable machine-readable contract (``--format json``); the human report is
:func:`modelcheck.report.render_text`. Exit codes (:data:`EXIT_CODES`): 0 ok,
1 violation or deadlock, 2 usage or spec error, 3 incomplete.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import codec

__all__ = ["Result", "Violation", "ViolationKind", "Status", "TraceStep", "ActionCoverage",
           "LevelStats", "EXIT_CODES", "exit_code", "json_value", "constants_out"]


class Status(enum.StrEnum):
    """How a run ended. A :class:`~enum.StrEnum`: a member equals, formats and encodes
    in JSON as its value (``"ok"``), so the ``--format json`` contract is unchanged."""

    OK = "ok"
    VIOLATION = "violation"
    DEADLOCK = "deadlock"
    ERROR = "error"
    INCOMPLETE = "incomplete"


class ViolationKind(enum.StrEnum):
    """What a counterexample violates (a :class:`~enum.StrEnum`, JSON as its value)."""

    INVARIANT = "invariant"
    ACTION = "action"
    DEADLOCK = "deadlock"
    LIVENESS = "liveness"


EXIT_CODES: dict[Status, int] = {Status.OK: 0, Status.VIOLATION: 1, Status.DEADLOCK: 1,
                                 Status.ERROR: 2, Status.INCOMPLETE: 3}


def constants_out(constants: Mapping[str, Any]) -> dict[str, Any]:
    """Constants as results and traces record and show them: an enum constant by its
    member's name (``Sem=K44``, not its number), which binding a trace or a run record
    to its spec reads back."""
    return {k: v.name if isinstance(v, enum.Enum) else v for k, v in constants.items()}


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One state of a trace and the action that led to it (None for the initial state)."""

    action: str | None
    #: parameter values: ints, or (for parameters of compound types) frozen values
    params: dict[str, Any]
    state: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "params": json_value(dict(self.params)),
                "state": json_value(self.state)}


@dataclass(frozen=True, slots=True)
class Violation:
    """A violated invariant (``kind`` :attr:`ViolationKind.INVARIANT`), action property
    (``ACTION``), a deadlock (``DEADLOCK``), or a temporal property (``LIVENESS``).
    Immutable: a changed violation is a new one (``dataclasses.replace``).

    A liveness counterexample is a lasso: ``loop`` is the index of the state where the
    loop starts; when the loop has steps, the last state equals state ``loop`` (the last
    step closes the loop), otherwise (``loop`` is the last index) the behaviour stutters
    there forever. ``fairness`` says, per fairness condition, why the loop satisfies it.
    """

    property: str
    kind: ViolationKind
    trace: tuple[TraceStep, ...]
    also_violated: tuple[str, ...] = ()
    loop: int | None = None
    fairness: tuple[str, ...] = ()
    #: the property as a formula (``P ~> Q``) for a liveness violation
    formula: str | None = None

    def __post_init__(self) -> None:
        # a kind given by its value ("invariant") becomes the member; an unknown one fails
        object.__setattr__(self, "kind", ViolationKind(self.kind))

    def to_json(self) -> dict[str, Any]:
        d = {"property": self.property, "kind": self.kind,
             "also_violated": list(self.also_violated),
             "trace_length": len(self.trace),
             "trace": [s.to_json() for s in self.trace]}
        if self.loop is not None:
            d.update(loop=self.loop, fairness=list(self.fairness), formula=self.formula)
        return d


@dataclass
class ActionCoverage:
    name: str
    params: str
    fired: int = 0
    new_states: int = 0


@dataclass(frozen=True)
class LevelStats:
    depth: int
    frontier: int
    new: int
    generated: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Result:
    """Everything a run found; ``status`` (a :class:`Status`) is ok, violation, deadlock,
    incomplete or error.

    Immutable: a run builds its result once it ends, and a later stage (liveness,
    the initial-state properties, a runner's own figures) makes a new one with
    ``dataclasses.replace``. A status given by its value (``"ok"``) becomes the
    member; an unknown one is a ``ValueError``."""

    spec: str
    constants: dict[str, Any]
    status: Status
    distinct_states: int = 0
    generated_states: int = 0
    depth: int = 0
    seconds: float = 0.0
    coverage: list[ActionCoverage] = field(default_factory=list)
    violation: Violation | None = None
    levels: list[LevelStats] = field(default_factory=list)
    fingerprint: str = "exact"
    collision_probability: float = 0.0
    state_bits: int = 0
    #: 64-bit words a packed state takes (one or two: exact fingerprints)
    state_words: int = 1
    state_cells: int = 0  # values a state holds (one per scalar cell of the layout)
    #: why an incomplete run stopped: ``interrupted``, ``memory``, ``max-states`` or
    #: ``--max-depth N reached``
    reason: str | None = None
    #: for an incomplete run, what stopped it and what to try (one paragraph)
    message: str | None = None
    error: str | None = None
    backend: str = "local"
    memory: dict[str, int] = field(default_factory=dict)
    checked: dict[str, list[str]] = field(default_factory=dict)
    symmetry: list[str] = field(default_factory=list)
    #: the variables of the spec's view when it applied (TLA+'s ``VIEW``): the counts
    #: are of distinct views
    view: list[str] = field(default_factory=list)
    #: the options of the check that decide its result (``CheckConfig.decisive()``)
    config: dict[str, Any] = field(default_factory=dict)
    #: liveness checking: per temporal property its verdict, graph size, time, memory
    liveness: dict[str, Any] = field(default_factory=dict)
    #: a simulation's own figures (``modelcheck simulate``): seed, walks, steps, rates,
    #: how walks ended, found and shrunk trace lengths; ``None`` for a check
    simulation: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self) -> int:
        return exit_code(self.status)

    def to_json(self) -> dict[str, Any]:
        out = self._json()
        if self.simulation is not None:
            out["simulation"] = dict(self.simulation)
        return out

    def _json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "spec": self.spec,
            "constants": constants_out(self.constants),
            "backend": self.backend,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "fingerprint": self.fingerprint,
            "collision_probability": self.collision_probability,
            "state_bits": self.state_bits,
            "state_words": self.state_words,
            "state_cells": self.state_cells,
            "symmetry": list(self.symmetry),
            "view": list(self.view),
            "checked": self.checked,
            "config": dict(self.config),
            "coverage": [
                {"action": c.name, "params": c.params, "fired": c.fired,
                 "new_states": c.new_states} for c in self.coverage
            ],
            "levels": [
                {"depth": lv.depth, "frontier": lv.frontier, "new": lv.new,
                 "generated": lv.generated, "seconds": round(lv.seconds, 4)}
                for lv in self.levels
            ],
            "memory": dict(self.memory),
            "reason": self.reason,
            "message": self.message,
            "error": self.error,
            "violation": self.violation.to_json() if self.violation else None,
            **({"liveness": dict(self.liveness)} if self.liveness else {}),
        }


def exit_code(status: str) -> int:
    """The process exit code of a run that ended with ``status`` (2 for an unknown one)."""
    try:
        return EXIT_CODES[Status(status)]
    except ValueError:
        return 2


def json_value(v: Any) -> Any:
    """A state value as JSON data: maps keyed by strings, sets as lists in TLC's order
    (the ``--format json`` contract), lists and tuples as lists
    (:func:`modelcheck.codec.to_json`)."""
    return codec.to_json(v)
