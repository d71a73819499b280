"""Initial-state properties: a state predicate asserted of the initial states only.

In TLA+ a property that is a state predicate ``P`` (no ``[]``) asserts that ``P``
holds in the *first* state of every behaviour: TLC checks a ``PROPERTY`` such as a
refinement's ``Init2`` (the refined spec's initial predicate, under the refinement
mapping) on the initial states alone, and reports "Property P is violated by the
initial state". ``@initially`` declares one::

    @initially
    def RefinesInit(self, s):           # PROPERTY Spec2!Init, an Init-only refinement
        return s.y == 0

It is checked on every initial state (also those outside the state constraints, as
TLC does), before the state space is explored, and reported like an invariant
violation with a one-state trace (``Violation.kind`` ``ViolationKind.INVARIANT``). As TLC checks
each initial state's invariants, then its initial-state properties, an invariant
violated by that initial state or an earlier one is reported instead (by the run).
``--invariant NAME`` selects initial-state properties like invariants. Every backend
checks them first: ``check`` (one process, ``--workers``, liveness), ``simulate``
(before the walks, ``--workers`` too) and ``spark`` (before the session starts, and
``--simulate``).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .config import CheckConfig
from .explorer import select_checks
from .kernel import Kernel
from .library import Library
from .liveness import split_checks
from .result import Result, Status, TraceStep, Violation, ViolationKind
from .run.results import new_result
from .spec import PredicateDecl, Spec, initially

__all__ = ["initially", "split_initial", "check_initial", "select_initial_checks"]


def split_initial(spec: Spec, config: CheckConfig) -> tuple[CheckConfig, list[PredicateDecl]]:
    """The rest of ``config`` and the initial-state properties it selects: all of the
    spec's when ``config.invariants`` is None, else those named there."""
    own = list(getattr(spec, "initial_properties", ()))
    if config.invariants is None or not own:
        return config, own
    by_name = {p.name: p for p in own}
    chosen = [by_name[n] for n in config.invariants if n in by_name]
    if not chosen:
        return config, []
    rest = tuple(n for n in config.invariants if n not in by_name)
    return config.replace(invariants=rest), chosen


def check_initial(spec: Spec, config: CheckConfig, props: list[PredicateDecl],
                  invariants: list[PredicateDecl]) -> Result | None:
    """The violation of ``props`` by an initial state of ``spec`` (the first initial
    state, in the order the spec gives them, that violates one; the first property in
    declaration order that it violates), as a result; None when every initial state
    satisfies them, or when that state or an earlier one violates one of
    ``invariants`` (TLC checks each initial state's invariants, then its initial-state
    properties: the run reports the invariant)."""
    if not props:
        return None
    t0 = time.perf_counter()
    kernel = Kernel(spec, invariants=[*invariants, *props], properties=[],
                    check_deadlock=False, symmetry=False, view=False)
    words = kernel.initial_packed()  # in the spec's order, as the run's
    bad = kernel.expand(words, expand=False).invariant_rows if len(words) else []
    rows = {j: set(map(int, r)) for j, r in enumerate(bad[len(invariants):]) if len(r)}
    if not rows:
        return None
    first = min(min(r) for r in rows.values())
    if any(len(r) and int(np.min(r)) <= first for r in bad[:len(invariants)]):
        return None  # an earlier initial state (or this one) violates an invariant first
    prop = props[min(j for j, r in rows.items() if first in r)]
    res = new_result(Kernel(spec, invariants=invariants, properties=[], symmetry=False,
                            view=False), config)
    state = spec.layout.values_from_cells(spec.layout.unpack(words[first]))
    return replace(res, checked={**res.checked, "initially": [p.name for p in props]},
                   violation=Violation(prop.name, ViolationKind.INVARIANT,
                                       (TraceStep(None, {}, state),)),
                   status=Status.VIOLATION, distinct_states=len(np.unique(words, axis=0)),
                   generated_states=len(words), seconds=time.perf_counter() - t0)


def select_initial_checks(spec: Spec, config: CheckConfig, library: Library | None
                          ) -> tuple[CheckConfig, list[PredicateDecl], list[PredicateDecl]]:
    """``split_initial``, and the invariants of the rest that the run checks."""
    rest, props = split_initial(spec, config)
    if not props:
        return rest, props, []
    safety, _ = split_checks(spec, rest, library)
    invariants = select_checks(spec, safety.invariants, library)[0]
    return rest, props, invariants
