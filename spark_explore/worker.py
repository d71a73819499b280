"""Executor side of the Spark backend: the kernel cache, error transport and the chunked
expansion loop the shard tasks (:mod:`spark_explore.shards`) run.

This module is imported inside Spark's Python workers; it imports numpy only (and
``modelcheck`` when a kernel is built), so it is cheap to ship.

The kernel is built once per Python worker process (workers are reused) and
cached by the spec's loader target, constants and the checked predicates.

A spec error (:class:`~modelcheck.errors.SpecEvaluationError`) or any other
failure is re-raised as a ``RuntimeError`` whose text carries the original message
as JSON between :data:`ERROR_BEGIN` and :data:`ERROR_END`; the driver extracts it
from Spark's exception text.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "WorkerConfig", "get_kernel", "ERROR_BEGIN", "ERROR_END", "decode_error",
    "LevelExpansion", "encode_error",
]

ERROR_BEGIN = "<<modelcheck-worker-error>>"
ERROR_END = "<<end-modelcheck-worker-error>>"

_KERNELS: dict[tuple[Any, ...], Any] = {}


@dataclass(frozen=True)
class WorkerConfig:
    """What an executor needs to rebuild the driver's kernel (pickled into the task)."""

    target: str  # loader target, e.g. "specs.kraft_broker:KRaftBroker"
    constants: tuple[tuple[str, Any], ...]
    invariants: tuple[str, ...] | None  # names given with --invariant, or None for all
    check_deadlock: bool | None
    symmetry: bool
    n_words: int
    chunk: int = 1 << 16  # states per Kernel.expand call
    flush_rows: int = 1 << 22  # emit candidate transitions when this many are buffered

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.target, self.constants, self.invariants, self.check_deadlock,
                self.symmetry)


def get_kernel(cfg: WorkerConfig) -> Any:
    """The kernel for ``cfg``, built on first use in this process and cached."""
    k = _KERNELS.get(cfg.key)
    if k is None:
        from modelcheck.explorer import select_checks
        from modelcheck.kernel import Kernel
        from modelcheck.loader import load_spec_class

        cls = load_spec_class(cfg.target)
        spec = cls(**dict(cfg.constants))
        names = list(cfg.invariants) if cfg.invariants is not None else None
        invs, props = select_checks(spec, names)
        k = Kernel(spec, invariants=invs, properties=props, check_deadlock=cfg.check_deadlock,
                   symmetry=cfg.symmetry)
        if k.layout.n_words != cfg.n_words:
            raise RuntimeError(
                f"spec {cfg.target} binds to a layout of {k.layout.n_words} words on this "
                f"executor but {cfg.n_words} on the driver: executors run different spec code."
            )
        _KERNELS[cfg.key] = k
    return k


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


class LevelExpansion:
    """Expand states sorted by fingerprint in chunks, as the local explorer does.

    Iterating :meth:`candidates` runs :meth:`modelcheck.kernel.Kernel.expand` over the
    states and yields de-duplicated transitions ``(child fps, keys, child words)``
    whenever ``flush_rows`` are buffered (and at the end); ``keys`` is
    ``parent row * n_actions + action id`` (see :meth:`parents`), the smallest per
    child. Afterwards the attributes hold what the expansion found: enabled
    transitions per action (``fired``), per invariant the smallest violating
    fingerprint (``inv_min``; once one is found nothing more is expanded, like the
    local explorer), the smallest deadlocked fingerprint (``dead_min``) and per
    action property the smallest hit ``(child fp, parent row, action id)``.
    """

    def __init__(self, kernel: Any, fps: np.ndarray, words: np.ndarray, *, expand: bool,
                 chunk: int, flush_rows: int) -> None:
        self.kernel = kernel
        self.fps = fps
        self.words = words
        self.expand = expand
        self.chunk = chunk
        self.flush_rows = flush_rows
        self.n_act = len(kernel.actions)
        self.fired = np.zeros(self.n_act, dtype=np.int64)
        self.inv_min: dict[int, int] = {}
        self.dead_min: int | None = None
        self.prop_min: dict[int, tuple[int, int, int]] = {}

    def parents(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(parent fingerprints, action ids)`` of candidate ``keys``."""
        return self.fps[keys // self.n_act], (keys % self.n_act).astype(np.int32)

    def candidates(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray | None]]:
        from modelcheck.store import dedupe_min

        kernel, fps, n_act = self.kernel, self.fps, self.n_act
        exact = self.words.shape[1] == 1 and kernel.layout.exact
        cand_fps: list[np.ndarray] = []
        cand_keys: list[np.ndarray] = []
        cand_words: list[np.ndarray] = []
        buffered = 0

        def flush() -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
            nonlocal buffered
            cf = np.concatenate(cand_fps)
            ck = np.concatenate(cand_keys)
            if len(cand_fps) > 1:
                u, kmin, rows = dedupe_min(cf, ck)
            else:
                u, kmin, rows = cf, ck, None
            w = None
            if not exact:
                cw = np.concatenate(cand_words)
                w = cw if rows is None else cw[rows]
            cand_fps.clear()
            cand_keys.clear()
            cand_words.clear()
            buffered = 0
            return u, kmin, w

        for start in range(0, len(fps), self.chunk):
            w = self.words[start:start + self.chunk]
            ex = kernel.expand(w, expand=self.expand and not self.inv_min)
            for j, bad in enumerate(ex.invariant_rows):
                if len(bad):
                    f = int(fps[start + int(np.min(bad))])  # rows are sorted by fp
                    self.inv_min[j] = min(self.inv_min.get(j, f), f)
            if self.inv_min:
                continue  # this level ends the run: successors no longer matter
            self.fired += ex.fired
            if len(ex.deadlock_rows):
                f = int(fps[start + int(np.min(ex.deadlock_rows))])
                self.dead_min = f if self.dead_min is None else min(self.dead_min, f)
            for j, (pr, pa_, pf) in enumerate(ex.property_hits):
                if len(pr):
                    key = np.lexsort((pa_, pr, pf))[0]  # smallest child, parent row, action
                    hit = (int(pf[key]), start + int(pr[key]), int(pa_[key]))
                    if j not in self.prop_min or hit < self.prop_min[j]:
                        self.prop_min[j] = hit
            if len(ex.child_fps):
                keys = (ex.parent_rows.astype(np.int64) + start) * n_act + ex.action_ids
                u, kmin, rows = dedupe_min(ex.child_fps, keys)
                cand_fps.append(u)
                cand_keys.append(kmin)
                if not exact:
                    cand_words.append(ex.child_words[rows])
                buffered += len(u)
                if buffered >= self.flush_rows:
                    yield flush()
        if cand_fps and not self.inv_min:
            yield flush()
