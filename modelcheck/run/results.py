"""The result of a run, begun and completed the same way by every backend."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..config import CheckConfig
from ..kernel import Kernel
from ..layout import collision_probability
from ..result import ActionCoverage, Result, Status, Violation
from ..spec import ActionInstance

__all__ = ["new_result", "complete_result", "coverage_table"]


def new_result(kernel: Kernel, config: CheckConfig, backend: str = "local") -> Result:
    """An empty result of a check of ``kernel``'s spec with ``config`` (every explorer's)."""
    spec, layout = kernel.spec, kernel.layout
    return Result(spec=spec.name, constants=dict(spec.constants), status=Status.OK,
                  fingerprint=kernel.key_kind,
                  state_bits=layout.bits, state_words=layout.n_words,
                  state_cells=len(layout.cells), backend=backend,
                  symmetry=list(kernel.symmetry.names) if kernel.symmetry else [],
                  view=list(kernel.view) if kernel.view else [],
                  checked={"invariants": [p.name for p in kernel.invariants],
                           "properties": [p.name for p in kernel.properties],
                           "deadlock": ["on" if kernel.check_deadlock else "off"]},
                  config=config.decisive())


def complete_result(res: Result, kernel: Kernel, *, violation: Violation | None,
                    distinct: int, generated: int, depth: int, seconds: float,
                    fired: np.ndarray, new_by_action: np.ndarray, **changes: Any) -> Result:
    """``res`` (from :func:`new_result`) with the totals of a finished (or stopped) run
    and the other fields of ``changes`` (status, reason, levels...), every explorer's."""
    return dataclasses.replace(
        res, violation=violation, distinct_states=distinct, generated_states=generated,
        depth=depth, seconds=seconds,
        coverage=coverage_table(kernel.actions, fired, new_by_action),
        collision_probability=collision_probability(distinct, kernel.key_kind == "exact"),
        **changes)


def coverage_table(actions: Sequence[ActionInstance], fired: np.ndarray,
                   new: np.ndarray) -> list[ActionCoverage]:
    """Per-action coverage (summed over parameters) from per-instance counters."""
    out: dict[str, ActionCoverage] = {}
    for inst in actions:
        c = out.get(inst.name)
        if c is None:
            params = "(" + ", ".join(p for p in inst.decl.params) + ")" if inst.decl.params else ""
            c = out[inst.name] = ActionCoverage(inst.name, params)
        c.fired += int(fired[inst.id])
        c.new_states += int(new[inst.id])
    return list(out.values())
