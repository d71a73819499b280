"""Executor side of the Spark backend: the ``mapInArrow`` function that expands a frontier.

This module owns everything that runs inside Spark's Python workers. It imports
numpy and pyarrow only (pyspark just for the task's partition id), so it is cheap
to ship.

One call of :func:`expand_partition` receives the Arrow record batches of one
frontier partition (columns ``fp``, ``act`` and, for multi-word layouts,
``w0..wk-1``; 64-bit values as ``int64`` holding the bits of the ``uint64``), sorts
the partition by unsigned fingerprint and runs
:meth:`modelcheck.kernel.Kernel.expand` on it in chunks. It returns rows of one
schema (:func:`output_fields`), told apart by ``tag`` (``kind << 24 | aux``):

=========  =========================  ==============================  ===========
kind       ``fp``                     ``pk``                          ``act``
=========  =========================  ==============================  ===========
TRANS 0    successor fingerprint      parent fp ^ 2**63 (see below)   action id
INV 1      smallest violating state   0                               partition
DEAD 2     smallest deadlocked state  0                               partition
PROP 3     smallest successor         parent fp ^ 2**63               action id
FIRED 4    partition id               number of enabled transitions   action id
NEWACT 5   partition id               states of the frontier reached  action id
                                      by that action
=========  =========================  ==============================  ===========

``aux`` is the invariant index (INV), the property index (PROP) or the action id
(FIRED, NEWACT). Only TRANS rows go on to the shuffle; the others (at most a few per
partition and action or predicate) are gathered by an ``Observation`` on the driver.
They are per partition: minima (INV, DEAD, PROP, where "smallest" is the local
explorer's order, unsigned fingerprint then parent then action) and counts (FIRED,
NEWACT) that the driver sums once per partition id, so a re-executed task can never
count twice.

``pk`` is the parent fingerprint with its top bit flipped: as a *signed* int64 it
orders like the unsigned fingerprint, so the JVM's ``min(pk)`` picks the parent
with the smallest fingerprint, as the local explorer does. Transitions are first
de-duplicated here, per partition, keeping for each child the smallest (parent
fingerprint, action id); every transition out of a parent is produced by the one
partition that holds the parent, so the JVM never sees two rows with the same
(child, parent) and ``min_by(act, pk)`` is exact.

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
    "WorkerConfig", "expand_partition", "get_kernel", "output_fields", "TRANS", "INV", "DEAD",
    "PROP", "FIRED", "NEWACT", "KIND_SHIFT", "AUX_MASK", "SIGN", "ERROR_BEGIN", "ERROR_END",
    "tag_of", "decode_error", "LevelExpansion", "encode_error",
]

KIND_SHIFT = 24
AUX_MASK = (1 << KIND_SHIFT) - 1
TRANS, INV, DEAD, PROP, FIRED, NEWACT = 0, 1, 2, 3, 4, 5
#: the int64 with only the top bit set: ``x ^ SIGN`` maps unsigned order to signed order
SIGN = -(1 << 63)
_SIGN_U = np.uint64(1 << 63)
ERROR_BEGIN = "<<modelcheck-worker-error>>"
ERROR_END = "<<end-modelcheck-worker-error>>"

_KERNELS: dict[tuple[Any, ...], Any] = {}


def tag_of(kind: int, aux: int = 0) -> int:
    """The ``tag`` column value of a row of ``kind`` with ``aux``."""
    return (kind << KIND_SHIFT) | aux


@dataclass(frozen=True)
class WorkerConfig:
    """What an executor needs to rebuild the driver's kernel (pickled into the task)."""

    target: str  # loader target, e.g. "specs.kraft_broker:KRaftBroker"
    constants: tuple[tuple[str, Any], ...]
    invariants: tuple[str, ...] | None  # names given with --invariant, or None for all
    check_deadlock: bool | None
    symmetry: bool
    n_words: int
    expand: bool = True  # False at --max-depth: check invariants only
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


def output_fields(n_words: int) -> list[tuple[str, str]]:
    """Column names and Spark SQL types of the expansion output, in order."""
    cols = [("fp", "bigint"), ("tag", "int"), ("pk", "bigint"), ("act", "int")]
    if n_words > 1:
        cols += [(f"w{i}", "bigint") for i in range(n_words)]
    return cols


def _partition_id() -> int:
    try:
        from pyspark import TaskContext

        tc = TaskContext.get()
        return int(tc.partitionId()) if tc is not None else 0
    except ImportError:  # pragma: no cover - only outside Spark
        return 0


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


def expand_partition(cfg: WorkerConfig, batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` body: expand one frontier partition (see the module docstring)."""
    try:
        yield from _expand(cfg, batches)
    except Exception as e:  # noqa: BLE001 - everything is reported to the driver
        raise encode_error(e) from None


def _column(b: Any, i: int) -> np.ndarray:
    return np.asarray(b.column(i).to_numpy(zero_copy_only=False), dtype=np.int64)


def _read_frontier(batches: Iterator[Any], n_words: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The partition's states sorted by unsigned fp: ``(fps, words, acts)``."""
    fps: list[np.ndarray] = []
    acts: list[np.ndarray] = []
    words: list[np.ndarray] = []
    for b in batches:
        if b.num_rows == 0:
            continue
        fps.append(_column(b, 0))
        acts.append(_column(b, 1))
        if n_words > 1:
            words.append(np.stack([_column(b, 2 + i) for i in range(n_words)], axis=1))
    if not fps:
        return (np.zeros(0, dtype=np.uint64), np.zeros((0, n_words), dtype=np.uint64),
                np.zeros(0, dtype=np.int64))
    fp = np.concatenate(fps).view(np.uint64)
    act = np.concatenate(acts)
    order = np.argsort(fp, kind="stable")
    fp = fp[order]
    if n_words > 1:
        w = np.ascontiguousarray(np.concatenate(words)[order]).view(np.uint64)
    else:
        w = fp.reshape(-1, 1)
    return fp, w, act


def _flip(u: np.ndarray) -> np.ndarray:
    return (np.asarray(u, dtype=np.uint64) ^ _SIGN_U).view(np.int64)


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


def _expand(cfg: WorkerConfig, batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    kernel = get_kernel(cfg)
    n_words = cfg.n_words
    exact = n_words == 1
    n_act = len(kernel.actions)
    names = [n for n, _ in output_fields(n_words)]
    fps, words, acts = _read_frontier(batches, n_words)
    n = len(fps)
    pid = _partition_id()

    def batch(fp: np.ndarray, tag: np.ndarray | int, pk: np.ndarray | int,
              act: np.ndarray | int, w: np.ndarray | None = None) -> Any:
        m = len(fp)
        fp = np.asarray(fp)
        cols = [pa.array(fp.view(np.int64) if fp.dtype == np.uint64 else fp, type=pa.int64()),
                pa.array(np.broadcast_to(np.asarray(tag, dtype=np.int32), (m,)), type=pa.int32()),
                pa.array(np.broadcast_to(np.asarray(pk, dtype=np.int64), (m,)), type=pa.int64()),
                pa.array(np.broadcast_to(np.asarray(act, dtype=np.int32), (m,)), type=pa.int32())]
        if not exact:
            if w is None:
                w = np.zeros((m, n_words), dtype=np.uint64)
            wi = w.view(np.int64)
            cols += [pa.array(np.ascontiguousarray(wi[:, i]), type=pa.int64())
                     for i in range(n_words)]
        return pa.RecordBatch.from_arrays(cols, names=names)

    def counts(kind: int, values: np.ndarray) -> Any:
        nz = np.flatnonzero(values)
        return batch(np.full(len(nz), pid, dtype=np.int64),
                     np.int32(kind << KIND_SHIFT) | nz.astype(np.int32),
                     values[nz].astype(np.int64), nz.astype(np.int32))

    # How the states of this frontier were reached (coverage: new states per action).
    reached = np.bincount(acts[acts >= 0], minlength=n_act) if n else np.zeros(n_act, np.int64)
    lx = LevelExpansion(kernel, fps, words, expand=cfg.expand, chunk=cfg.chunk,
                        flush_rows=cfg.flush_rows)
    step = 1 << 20
    for u, kmin, w in lx.candidates():
        parent, act = lx.parents(kmin)
        for s in range(0, len(u), step):
            yield batch(u[s:s + step], tag_of(TRANS), _flip(parent[s:s + step]),
                        act[s:s + step], None if w is None else w[s:s + step])
    side: list[Any] = [counts(NEWACT, reached)]
    if lx.inv_min:
        js = sorted(lx.inv_min)
        side.append(batch(np.array([lx.inv_min[j] for j in js], dtype=np.uint64),
                          np.array([tag_of(INV, j) for j in js], dtype=np.int32), 0, pid))
        yield from side
        return
    side.append(counts(FIRED, lx.fired))
    if lx.dead_min is not None:
        side.append(batch(np.array([lx.dead_min], dtype=np.uint64), tag_of(DEAD), 0, pid))
    for j, (f, prow, a) in sorted(lx.prop_min.items()):
        side.append(batch(np.array([f], dtype=np.uint64), tag_of(PROP, j),
                          _flip(np.array([fps[prow]], dtype=np.uint64)), a))
    yield from side
