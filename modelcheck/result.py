"""The result of a run: status, exact counts, coverage, per-level stats and the counterexample.

:class:`Result` is what every backend returns; :meth:`Result.to_json` is the
stable machine-readable contract (``--format json``) and :func:`render_text` the
human report. Exit codes (:data:`EXIT_CODES`): 0 ok, 1 violation or deadlock,
2 usage or spec error, 3 incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Result", "Violation", "TraceStep", "ActionCoverage", "LevelStats", "EXIT_CODES",
           "exit_code", "render_text", "render_trace"]

EXIT_CODES = {"ok": 0, "violation": 1, "deadlock": 1, "error": 2, "incomplete": 3}


@dataclass(frozen=True)
class TraceStep:
    """One state of a trace and the action that led to it (None for the initial state)."""

    action: str | None
    params: dict[str, int]
    state: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "params": dict(self.params),
                "state": _jsonable(self.state)}


@dataclass(frozen=True)
class Violation:
    """A violated invariant (``kind='invariant'``), action property or a deadlock."""

    property: str
    kind: str
    trace: tuple[TraceStep, ...]
    also_violated: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "kind": self.kind,
                "also_violated": list(self.also_violated),
                "trace_length": len(self.trace),
                "trace": [s.to_json() for s in self.trace]}


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


@dataclass
class Result:
    """Everything a run found; ``status`` is ok, violation, deadlock, incomplete or error."""

    spec: str
    constants: dict[str, Any]
    status: str
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
    reason: str | None = None
    error: str | None = None
    backend: str = "local"
    memory: dict[str, int] = field(default_factory=dict)
    checked: dict[str, list[str]] = field(default_factory=dict)
    symmetry: list[str] = field(default_factory=list)
    #: the options of the check that decide its result (``CheckConfig.decisive()``)
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self) -> int:
        return exit_code(self.status)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "spec": self.spec,
            "constants": dict(self.constants),
            "backend": self.backend,
            "distinct_states": self.distinct_states,
            "generated_states": self.generated_states,
            "depth": self.depth,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second, 1),
            "fingerprint": self.fingerprint,
            "collision_probability": self.collision_probability,
            "state_bits": self.state_bits,
            "symmetry": list(self.symmetry),
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
            "error": self.error,
            "violation": self.violation.to_json() if self.violation else None,
        }


def exit_code(status: str) -> int:
    return EXIT_CODES.get(status, 2)


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v


def _flat(state: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in state.items():
        name = f"{prefix}[{k}]" if prefix else str(k)
        if isinstance(v, dict):
            out.update(_flat(v, name))
        else:
            out[name] = v
    return out


def _show(v: Any, labels: dict[str, Any] | None = None) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return str(v)


def render_trace(trace: tuple[TraceStep, ...] | list[TraceStep], *, full: bool = False) -> str:
    """Steps of a trace: the initial state in full, then per step only what changed."""
    lines: list[str] = []
    prev: dict[str, Any] | None = None
    for i, step in enumerate(trace):
        flat = _flat(step.state)
        if step.action is None:
            lines.append(f"  State {i + 1}: <Initial state>")
        else:
            params = ", ".join(f"{k}={v}" for k, v in step.params.items())
            lines.append(f"  State {i + 1}: {step.action}({params})" if params
                         else f"  State {i + 1}: {step.action}")
        for name, v in flat.items():
            if prev is None or full:
                lines.append(f"      {name} = {_show(v)}")
            elif prev.get(name) != v:
                lines.append(f"      {name}: {_show(prev.get(name))} -> {_show(v)}")
        prev = flat
    return "\n".join(lines)


def render_text(r: Result) -> str:
    """The human-readable report printed by ``modelcheck check``."""
    out: list[str] = []
    consts = ", ".join(f"{k}={v}" for k, v in r.constants.items())
    out.append(f"Spec {r.spec} ({consts})")
    if r.status == "error":
        out.append(f"Error: {r.error}")
        return "\n".join(out)
    if r.violation is not None:
        v = r.violation
        if v.kind == "deadlock":
            out.append(f"Deadlock reached: a state with no enabled action "
                       f"(trace of {len(v.trace)} states).")
        else:
            what = "Invariant" if v.kind == "invariant" else "Action property"
            also = f" (the same level also violates: {', '.join(v.also_violated)})" \
                if v.also_violated else ""
            out.append(f"{what} {v.property} is violated{also}. "
                       f"Shortest counterexample, {len(v.trace)} states:")
        out.append(render_trace(v.trace))
    status_line = {
        "ok": "No error found: every reachable state explored.",
        "violation": "Result: VIOLATION",
        "deadlock": "Result: DEADLOCK",
        "incomplete": f"Result: INCOMPLETE ({r.reason or 'stopped'}); counts are partial.",
    }.get(r.status, r.status)
    out.append(status_line)
    out.append(
        f"{r.distinct_states:,} distinct states, {r.generated_states:,} generated, "
        f"depth {r.depth}, {r.seconds:.2f} s ({r.states_per_second:,.0f} distinct states/s)."
    )
    if r.fingerprint == "exact":
        out.append(f"Fingerprints: exact ({r.state_bits} bits of state packed in 64).")
    else:
        out.append(f"Fingerprints: 64-bit hash of {r.state_bits} bits of state; "
                   f"estimated collision probability {r.collision_probability:.2e}.")
    if r.symmetry:
        out.append(f"Symmetry reduction over {', '.join(r.symmetry)}: counts are of "
                   "equivalence classes (canonical states).")
    if r.coverage:
        out.append("Coverage:")
        w = max(len(c.name + c.params) for c in r.coverage) + 2
        out.append(f"  {'action':<{w}} {'fired':>12} {'new states':>12}")
        for c in r.coverage:
            flag = "   (never enabled)" if c.fired == 0 else ""
            out.append(f"  {c.name + c.params:<{w}} {c.fired:>12,} {c.new_states:>12,}{flag}")
    return "\n".join(out)
