"""The front door: :func:`check`, what ``modelcheck check`` runs and what the library
calls.

A check decides everything its configuration selects: the invariants, action
properties and deadlocks (the explorer, :mod:`modelcheck.explorer`) and the temporal
properties (:mod:`modelcheck.liveness`, which runs the same explorer with the state
graph's collector as an observer of the run, :mod:`modelcheck.run.observers`).
:func:`check` only dispatches between the two, so the command line and the library
cannot disagree on what a spec's result is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .config import CheckConfig
from .explorer import Explorer, Progress, select_checks
from .initial import check_initial, select_initial_checks, split_initial
from .library import Library
from .library import lookup as library_lookup
from .liveness import check_liveness, check_liveness_workers, split_checks
from .result import Result
from .spec import Spec

__all__ = ["check", "resolve_names"]


def check(spec: Spec, config: CheckConfig | None = None, *,
          library: Library | None = library_lookup,
          progress: Callable[[Progress], None] | None = None,
          notice: Callable[[str], None] | None = None,
          **options: Any) -> Result:
    """Check a bound spec as ``modelcheck check`` does, and return its :class:`Result`.

    ``config`` (:class:`~modelcheck.config.CheckConfig`; keyword ``options``, its
    fields, override it) selects what is checked: with ``invariants=None`` every
    invariant, action property and temporal property of the spec, else those named
    (names the spec does not declare are looked up in ``library``, by default the
    registered predicate libraries). When temporal properties are selected the run
    is :func:`~modelcheck.check_liveness` (a safety violation is reported
    first, then the first violated temporal property with a lasso; refused, with a
    :class:`~modelcheck.liveness.LivenessError`, under symmetry reduction, state
    constraints, ``max_depth`` or checkpoints, as on the command line; with
    ``workers`` > 1 the exploration runs in worker processes,
    :func:`~modelcheck.liveness.check_liveness_workers`); otherwise the
    breadth-first explorer alone (:class:`~modelcheck.explorer.Explorer`, which also
    takes the hooks for the transitions and levels). ``progress`` receives the
    explorer's progress reports, ``notice`` its one-line notices (where a ``--resume``
    run continues). Spec errors raise
    :class:`~modelcheck.errors.SpecEvaluationError`.
    """
    cfg = CheckConfig.of(config, options, "check")
    if not cfg.resume:
        cfg, initial, invariants = select_initial_checks(spec, cfg, library)
        found = check_initial(spec, cfg, initial, invariants)
        if found is not None:
            return found
    else:
        cfg, initial = split_initial(spec, cfg)
    res = _check(spec, cfg, library, progress, notice)
    if initial:
        res = replace(res, checked={**res.checked, "initially": [p.name for p in initial]})
    return res


def _check(spec: Spec, cfg: CheckConfig, library: Library | None,
           progress: Callable[[Progress], None] | None,
           notice: Callable[[str], None] | None) -> Result:
    """:func:`check` of what follows the initial-state properties."""
    safety, temporal = split_checks(spec, cfg, library)
    if temporal:
        if cfg.workers > 1:
            return check_liveness_workers(spec, cfg, temporal=temporal, library=library,
                                          progress=progress, notice=notice)
        return check_liveness(spec, cfg, temporal=temporal, library=library,
                              progress=progress, notice=notice)
    if cfg.workers > 1:
        from .shards.pool import ParallelExplorer

        return ParallelExplorer(spec, safety, workers=cfg.workers, library=library,
                                progress=progress, notice=notice).run()
    return Explorer(spec, safety, library=library, progress=progress, notice=notice).run()


def resolve_names(spec: Spec, config: CheckConfig,
                  library: Library | None = library_lookup) -> None:
    """Raise the error :func:`check` would raise for a name in ``config.invariants``
    that neither ``spec`` nor ``library`` declares, before any work (the command line
    reports it before its first line of output). A check of temporal properties
    reports such a name after its refusals, as :func:`check` does."""
    config, _ = split_initial(spec, config)
    safety, temporal = split_checks(spec, config, library)
    if not temporal:  # the names alone: the kernel (long for a large family) comes later
        select_checks(spec, safety.invariants, library)
