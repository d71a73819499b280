"""The typed configuration of a check, built once (by the CLI or by :func:`check`).

:class:`CheckConfig` says *what* to check and *how* to explore; every explorer
(local, Spark) takes one, and the result records it (``Result.config``). Options
that change only speed or memory (``batch_size``, ``spill_dir``, ``workers``) never
change a result.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

from .errors import UsageError

__all__ = ["CheckConfig", "available_cores", "parse_workers"]

WORKERS_HELP = "expected a positive whole number of processes, or 'auto' (the cores available)"


def available_cores() -> int:
    """The cores this process may run on."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        return int(count() or 1)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def parse_workers(value: int | str) -> int:
    """The number of worker processes ``--workers`` asks for (``check`` and
    ``simulate``): a positive whole number, or ``auto`` (:func:`available_cores`);
    anything else is a :class:`~modelcheck.errors.UsageError`."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "auto":
            return available_cores()
        try:
            value = int(text)
        except ValueError:
            raise UsageError(f"--workers {value}: {WORKERS_HELP}.") from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"--workers {value}: {WORKERS_HELP}.")
    return value


@dataclass(frozen=True)
class CheckConfig:
    """What to check and how to explore it."""

    #: names of the invariants and action properties to check (the spec's, or from a
    #: predicate library); ``None`` checks all of the spec's, ``()`` none
    invariants: tuple[str, ...] | None = None
    #: report states without enabled actions; ``None`` follows the spec's default
    check_deadlock: bool | None = None
    #: apply the spec's symmetry reduction
    symmetry: bool = True
    #: apply the spec's view (TLA+'s ``VIEW``: states equal on the view are one state)
    view: bool = True
    #: stop after this many steps from the initial states (``None``: no bound)
    max_depth: int | None = None
    #: states evaluated per batch (speed and memory only)
    batch_size: int = 1 << 16
    #: keep the BFS levels in files under this directory instead of memory
    spill_dir: str | None = None
    #: commit a checkpoint here at the end of every level (:mod:`modelcheck.checkpoint`)
    checkpoint_dir: str | None = None
    #: continue the checkpoint in ``checkpoint_dir`` (start afresh if it holds none)
    resume: bool = False
    #: stop (status incomplete, reason ``max-states``) at the last complete level
    #: rather than store more distinct states than this (``None``: no bound)
    max_states: int | None = None
    #: bytes the explorer's data may take (visited set, levels, frontier, batches) before
    #: it stops at the last complete level (reason ``memory``); ``"auto"``: a safe share
    #: of the memory available when the run starts (:mod:`modelcheck.budget`); ``None``:
    #: no limit
    memory_limit: int | Literal["auto"] | None = "auto"
    #: worker processes exploring in parallel (1: this process alone; speed only:
    #: :mod:`modelcheck.shards.pool`)
    workers: int = 1

    def __post_init__(self) -> None:
        if self.invariants is not None and not isinstance(self.invariants, tuple):
            object.__setattr__(self, "invariants", tuple(self.invariants))
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {self.batch_size}")
        if self.max_depth is not None and self.max_depth < 0:
            raise ValueError(f"max_depth must be at least 0, not {self.max_depth}")
        if self.max_states is not None and self.max_states < 1:
            raise ValueError(f"max_states must be at least 1, not {self.max_states}")
        if isinstance(self.workers, bool) or not isinstance(self.workers, int) \
                or self.workers < 1:
            raise ValueError(f"workers must be a whole number at least 1, not {self.workers!r}")
        ml = self.memory_limit
        if ml is not None and ml != "auto" and (not isinstance(ml, int) or ml < 1):
            raise ValueError(f"memory_limit must be a positive number of bytes, 'auto' or "
                             f"None, not {ml!r}")

    def replace(self, **changes: Any) -> CheckConfig:
        return replace(self, **changes)

    @classmethod
    def of(cls, config: CheckConfig | None, options: dict[str, Any], owner: str
           ) -> CheckConfig:
        """``config`` (default: all defaults) with the fields in ``options`` replaced: how
        every explorer takes ``(config, **options)``. An unknown option is a
        ``TypeError`` naming ``owner``."""
        cfg = config or cls()
        if not options:
            return cfg
        if options.get("invariants") is not None:
            options = {**options, "invariants": tuple(options["invariants"])}
        try:
            return cfg.replace(**options)
        except TypeError as e:
            raise TypeError(f"{owner}: {e}") from None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if d["invariants"] is not None:
            d["invariants"] = list(d["invariants"])
        return d

    def decisive(self) -> dict[str, Any]:
        """The options that can change a result (recorded in it; ``batch_size``,
        ``spill_dir`` and checkpoints change only speed, memory and durability; a
        memory stop says so in the result's reason)."""
        return {**self.identity, "max_depth": self.max_depth, "max_states": self.max_states}

    @property
    def identity(self) -> dict[str, Any]:
        """The options that decide a result (a checkpoint resumes only under these)."""
        return {"invariants": None if self.invariants is None else list(self.invariants),
                "check_deadlock": self.check_deadlock, "symmetry": self.symmetry,
                "view": self.view}
