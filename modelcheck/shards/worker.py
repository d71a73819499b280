"""Worker side of a sharded run: the kernel cache and the error transport of the bucket
tasks (:mod:`modelcheck.shards.files`; they expand levels with the level rule,
:class:`modelcheck.level.LevelExpansion`), in the processes of ``modelcheck check
--workers N`` and in Spark's Python workers.

It imports nothing but the standard library (and ``modelcheck`` when a kernel is
built), so it is cheap to ship.

The kernel is built once per worker process (workers are reused) and cached by the
spec's loader target, constants and the checked predicates; a worker forked from the
coordinating process finds the coordinator's kernel in the cache
(:func:`seed_kernel`).

A spec error (:class:`~modelcheck.errors.SpecEvaluationError`) or any other
failure is re-raised as a ``RuntimeError`` whose text carries the original message
as JSON between :data:`ERROR_BEGIN` and :data:`ERROR_END`; the coordinator extracts
it from the exception's text (Spark's, or the one a process pool hands back).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "WorkerConfig", "get_kernel", "seed_kernel", "ERROR_BEGIN", "ERROR_END", "decode_error",
    "encode_error", "warm_kernel", "temporal_labels",
]

ERROR_BEGIN = "<<modelcheck-worker-error>>"
ERROR_END = "<<end-modelcheck-worker-error>>"

_KERNELS: dict[tuple[Any, ...], Any] = {}


@dataclass(frozen=True)
class WorkerConfig:
    """What a worker needs to rebuild the coordinator's kernel (pickled into the task)."""

    target: str  # loader target, e.g. "specs.kraft_broker:KRaftBroker"
    constants: tuple[tuple[str, Any], ...]
    invariants: tuple[str, ...] | None  # names given with --invariant, or None for all
    check_deadlock: bool | None
    symmetry: bool
    n_words: int
    #: apply the spec's view (TLA+'s VIEW)
    view: bool = True
    batch_size: int = 1 << 16  # states per Kernel.expand call (the check's --batch-size)
    #: emit candidate transitions when this many are buffered: successors repeat across
    #: a task's batches (several parents per state), and de-duplicating them before they
    #: are split, written and read costs less than carrying them (measured on KRaft L6)
    flush_rows: int = 1 << 22
    #: looks up predicates the spec does not declare (a module-level function, so that
    #: it pickles by reference; default: the registered predicate libraries)
    library: Callable[[str], Any] | None = None
    #: the ``uint64`` columns of the kernel's state keys (:mod:`modelcheck.store`), and
    #: whether the keys are the packed states (``Kernel.exact``: the bucket files then
    #: hold no words); a task checks them against the kernel it builds
    key_width: int = 1
    exact: bool = True
    #: the temporal properties checked after the run (names, as the spec or the library
    #: declares them): the kernel also evaluates their state and step formulas, and the
    #: tasks write the state graph (:func:`modelcheck.shards.files.write_graph_part`)
    temporal: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.target, self.constants, self.invariants, self.check_deadlock,
                self.symmetry, self.view, self.temporal)


def get_kernel(cfg: WorkerConfig) -> Any:
    """The kernel for ``cfg``, built on first use in this process and cached (the first
    build in an executor's Python worker also tunes its ``malloc``:
    :func:`modelcheck.memtune.keep_freed_memory`)."""
    k = _KERNELS.get(cfg.key)
    if k is None:
        from modelcheck.config import CheckConfig
        from modelcheck.memtune import keep_freed_memory

        if not _KERNELS:
            keep_freed_memory()
        from modelcheck.explorer import build_kernel
        from modelcheck.library import lookup
        from modelcheck.loader import load_spec_class

        cls = load_spec_class(cfg.target)
        spec = cls(**dict(cfg.constants))
        library = cfg.library or lookup
        k = build_kernel(spec, CheckConfig(invariants=cfg.invariants,
                                           check_deadlock=cfg.check_deadlock,
                                           symmetry=cfg.symmetry, view=cfg.view),
                         library, labels=temporal_labels(spec, cfg.temporal, library))
        if k.layout.n_words != cfg.n_words:
            raise RuntimeError(
                f"spec {cfg.target} binds to a layout of {k.layout.n_words} words on this "
                f"executor but {cfg.n_words} on the driver: executors run different spec code."
            )
        _KERNELS[cfg.key] = k
    return k


def temporal_labels(spec: Any, names: tuple[str, ...], library: Callable[[str], Any] | None
                    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The state and the step formulas of the temporal properties ``names`` of ``spec``
    (its own, else ``library``'s) and the state predicates of their fairness
    conditions' selectors, in the order of :func:`modelcheck.temporal.graph_parts`:
    what the kernel evaluates for the state graph (as the one-process run's)."""
    from modelcheck.spec import RoleKind
    from modelcheck.temporal import TemporalDecl, fairness_conditions, graph_parts

    own = {p.name: p for p in spec.temporal if isinstance(p, TemporalDecl)}
    props = []
    for n in names:
        p = own.get(n)
        if p is None and library is not None:
            p = library(n)
        if not isinstance(p, TemporalDecl):
            raise RuntimeError(f"temporal property {n} of {type(spec).__name__} is not "
                               "declared in this process: executors run different spec code.")
        props.append(p)
    parts = graph_parts([(p, fairness_conditions(spec, p.fairness)) for p in props])
    return (tuple(p for p in parts if p.kind is not RoleKind.ACTION),
            tuple(p for p in parts if p.kind is RoleKind.ACTION))


def seed_kernel(cfg: WorkerConfig, kernel: Any) -> None:
    """Use ``kernel`` (the driver's, built for the same spec and checks) for ``cfg`` in
    this process (and in the workers forked from it): levels expanded here need not load
    the spec again. It replaces a kernel cached for the same key by an earlier run (a
    spec class of the same name made anew, e.g. in a test), since this run's kernel is
    the one its results must come from."""
    _KERNELS[cfg.key] = kernel


def warm_kernel(cfg: WorkerConfig, _: Any = None) -> int:
    """Build (and cache) the kernel in this Python worker; its number of actions."""
    return len(get_kernel(cfg).actions)


def encode_error(e: BaseException) -> RuntimeError:
    from modelcheck.errors import ModelcheckError, SpecEvaluationError

    if isinstance(e, ModelcheckError):
        payload: dict[str, Any] = {"type": type(e).__name__, "message": str(e)}
        if isinstance(e, SpecEvaluationError):
            payload.update(where=e.where, what=e.what, state=e.state)
    else:
        payload = {"type": type(e).__name__, "message": f"{type(e).__name__}: {e}",
                   "traceback": "".join(traceback.format_exception(e))[-4000:]}
    text = json.dumps(payload, default=str)
    return RuntimeError(f"{ERROR_BEGIN}{text}{ERROR_END}")


def decode_error(text: str) -> dict[str, Any] | None:
    """The error payload embedded in a Spark exception text, if there is one."""
    i = text.find(ERROR_BEGIN)
    if i < 0:
        return None
    j = text.find(ERROR_END, i)
    if j < 0:
        return None
    raw = text[i + len(ERROR_BEGIN):j]
    try:
        payload: dict[str, Any] = json.loads(raw)
    except ValueError:
        # The text may have been escaped on its way (e.g. inside a JSON error context).
        try:
            payload = json.loads(raw.encode().decode("unicode_escape"))
        except ValueError:
            return {"type": "RuntimeError", "message": raw}
    return payload
