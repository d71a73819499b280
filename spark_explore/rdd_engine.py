"""The RDD engine: the levels live in Spark, blocks move through Spark's shuffle.

Same buckets, same per-bucket numpy work and the same answers as the shard engine
(:mod:`spark_explore.shard_engine`), but no file is shared between hosts: every
bucket's data is a record ``(bucket, block)`` of a pair RDD partitioned by bucket
(``partitionBy(K, bucket_key)``; partition ``k`` holds bucket ``k``), so a cluster
needs nothing but Spark (YARN, Kubernetes, standalone, without a shared mount).

Per level ``d`` (job ``d``: one Spark stage of ``K`` tasks, one Python pass each)::

    pairs[d]  = (visited[d] ∪ cands[d])                   partition-aware union: no shuffle
                  .mapPartitions(commit, expand)          -> (L, k) level, (V, k) new base,
                                                             (C, t) successors into bucket t
    levels[d] = pairs[d].select(L)                        kept to the end (traces), a run
    state[d]  = pairs[d].select(V)                        at a compaction: the new base
    cands[d+1] = pairs[d].select(C).partitionBy(K)        the shuffle: successors by target
    job d     = the map stage of that shuffle (SparkContext.submitMapStage)

``pairs[d]`` is a JVM pair RDD (PySpark's ``PairwiseRDD``: a key, then a pickled
record) whose keys name the record's tag and bucket (``_key``); it is kept until
``select`` (``sampleByKey`` with fractions 1 and 0, in the JVM) has stored the level
and the new base: the blocks cross into the JVM once, and are not pickled again.
The visited set of level ``d`` is the last base and the levels after it (the runs).

The buckets' summaries (counts, coverage, the level rule's findings) come back in
an accumulator; its merge replaces per bucket, so a re-run task changes nothing.
``state``, ``levels`` and the delivered ``cands`` are persisted (memory and disk,
deserialized: in the JVM the records are the pickled bytes already) and *locally
checkpointed* (a count in the JVM after each level stores them and cuts their
lineage, so it never grows); on a multi-executor cluster they are stored twice
(replication 2): a lost executor loses at most one copy of a block, and Spark
recomputes its lost shuffle output from the level's inputs, all of them kept
blocks (a level's task never needs a base dropped since). ``cands[d]`` is dropped
once level ``d`` ran, an old base at a compaction.

Everything a task computes depends only on its inputs (the parent rule picks per
child the smallest (parent, action), whatever order the shuffle delivers blocks in),
so a recomputed task gives the same blocks.

Blocks are tuples of numpy arrays (pickled by PySpark: a copy of their bytes).

**Small levels in the driver.** As on the shards engine, a level of at most
``driver_threshold`` candidates runs in the driver while the states seen so far are
at most :data:`~modelcheck.shards.engine.DRIVER_VISITED_FACTOR` times that: every
bucket committed as its task would, the level expanded as one. The driver then holds
the visited set (per bucket, two sorted runs) and the next level's candidates; it
hands them to Spark as records at the first level too large (:meth:`RddEngine._to_spark`,
one ``parallelize``) and takes them back in one job when the levels are small again
(:meth:`RddEngine._to_driver`, the small last levels of most runs). The parent rule
picks the same parents whatever the producers, so the results are the same.
"""

from __future__ import annotations

import functools
import io
import struct
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from modelcheck.layout import words_of_keys
from modelcheck.memtune import arrays_for
from modelcheck.shards.engine import DRIVER_VISITED_FACTOR, JobCounters, LevelSummary
from modelcheck.shards.files import (
    Block,
    BucketSummary,
    ShardConfig,
    bucket_of,
    commit_block,
    expand_block,
    merge_sorted,
    narrow_acts,
    parent_in,
    split_by_bucket,
)
from modelcheck.shards.worker import WorkerConfig, encode_error, seed_kernel
from modelcheck.store import key_order, keys_of, take_rows

__all__ = ["RddEngine", "NAME", "bucket_key"]

#: the engine name recorded in a checkpoint's manifest
NAME = "rdd"
_U = np.uint64

#: makes a job's checkpoint step cover every marked RDD of its lineage, not the first
_ALL_MARKED = "spark.checkpoint.checkpointAllMarkedAncestors"
# record tags: (V, base fingerprints), (L, level block, depth), (S, a level's
# fingerprints read from a checkpoint), (C, candidate block)
V, L, S, C = "V", "L", "S", "C"
#: see ``_key``
_KEY = 1 << 40
_TAGS = (L, V, C)
#: the base visited block of every bucket is rewritten with the runs (the levels
#: committed since) merged in once they hold this fraction of its states ...
COMPACT_FRACTION = 0.5
#: ... or once they are this many levels
MAX_RUNS = 8


def bucket_key(k: int) -> int:
    """The partition function of every pair RDD of the engine: bucket ``k`` goes to
    partition ``k`` (one module-level function, so that Spark sees equal partitioners
    and the union of two such RDDs needs no shuffle)."""
    return k


def _empty_block(cfg: ShardConfig) -> Block:
    return (cfg.keys(0), cfg.keys(0), np.zeros(0, np.int32),
            None if cfg.exact else np.zeros((0, cfg.worker.n_words), _U))


def _concat(blocks: list[Block], cfg: ShardConfig) -> Block:
    if not blocks:
        return _empty_block(cfg)
    return (np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks]),
            np.concatenate([b[2] for b in blocks], dtype=np.int32),  # (narrowed candidates')
            None if cfg.exact else np.concatenate([b[3] for b in blocks]))  # type: ignore[misc]


def _commit(cfg: ShardConfig, depth: int, bucket: int,
            records: Iterable[tuple[int, tuple[Any, ...]]], base_depth: int,
            compact: bool) -> tuple[Block, np.ndarray | None]:
    """The commit of bucket ``bucket``'s part of level ``depth``, from its visited set
    (the base block, levels ``0..base_depth``, and the runs, the levels after it) and
    its candidate blocks: the level, and with ``compact`` the new base block (the
    base, the runs and the level merged; else None)."""
    base: np.ndarray | None = None
    runs: list[np.ndarray] = []
    cands: list[Block] = []
    for k, rec in records:
        if k != bucket:  # pragma: no cover - would be a partitioning bug
            raise RuntimeError(f"record of bucket {k} in partition {bucket}")
        if rec[0] == V:
            base = rec[1]
        elif rec[0] == L:
            if rec[2] > base_depth:  # (the base's own level is in the base)
                runs.append(rec[1][0])
        else:
            cands.append(rec[1])
    if depth > 0 and base is None:
        base = cfg.keys(0)
    level = commit_block(_concat(cands, cfg), None if base is None else (base, *runs))
    merged = None
    if compact:
        merged = level[0] if base is None else merge_sorted(base, *runs, level[0])
    return level, merged


def _level_part(cfg: ShardConfig, depth: int, bucket: int,
                records: Iterable[tuple[int, tuple[Any, ...]]], base_depth: int,
                compact: bool, expand: bool | None, again: bool, acc: Any,
                dumps: Callable[[Any], bytes]) -> Iterator[bytes]:
    """Task ``bucket`` of level ``depth``, one pass: the commit (``_commit``; with
    ``again`` the records are the committed level's) and the expansion. Out, as the
    pairs of a ``PairwiseRDD`` (a key, then a pickled list of one record): the level
    and the new base block (keys ``_key`` of ``L`` and ``V``, to stay in this
    partition) and one block of successors per non-empty target bucket (``C``: the
    shuffle's). The summary goes to the accumulator ``acc``."""
    try:
        cpu = time.process_time()
        merged = None
        if again:
            # (read to its end: a Python worker that leaves input unread is not reused)
            level = [rec[1] for _, rec in records if rec[0] == L][0]
        else:
            level, merged = _commit(cfg, depth, bucket, records, base_depth, compact)
        summary, cands = expand_block(cfg, bucket, level, expand)
        out: list[tuple[str, int, tuple[Any, ...]]] = []
        if not again:
            out.append((L, bucket, (L, level, depth)))
        if merged is not None:
            out.append((V, bucket, (V, merged)))
        if cands is not None:
            (fps, parents, acts, words), off = split_by_bucket(cands, cfg.buckets)
            acts = narrow_acts(acts)  # (int8 for most specs: 3 of a candidate's 20 bytes)
            for t in range(cfg.buckets):
                lo, hi = int(off[t]), int(off[t + 1])
                if hi > lo:
                    out.append((C, t, (C, (fps[lo:hi], parents[lo:hi], acts[lo:hi],
                                           None if words is None else words[lo:hi]))))
    except Exception as e:  # noqa: BLE001 - reported to the driver
        raise encode_error(e) from None
    summary.cpu = time.process_time() - cpu  # the commit and the expansion
    acc.add({bucket: summary})
    for tag, k, rec in out:
        yield struct.pack("!q", _key(tag, k, cfg.buckets))  # (PySpark's pack_long)
        yield dumps([(k, rec)])


def _key(tag: str, bucket: int, buckets: int) -> int:
    """The JVM key of a record of ``_level_part``: ``_KEY`` plus the tag's
    number times ``buckets`` plus the bucket. PySpark's partitioner takes the low 32
    bits modulo the buckets (the bucket); the tag lets the JVM select the records
    (``sampleByKey``, fraction 1 or 0); at least 2**31, Py4J passes them as longs."""
    return _KEY + _TAGS.index(tag) * buckets + bucket


class _Summaries:
    """Per-level accumulator of the buckets' summaries, ``{bucket: BucketSummary}`` (a
    ``pyspark.AccumulatorParam``). A re-run task (a lost executor) sends the same
    summary again: adding is replacing."""

    def zero(self, value: Any) -> dict[int, BucketSummary]:
        return {}

    def addInPlace(self, a: dict[int, BucketSummary], b: dict[int, BucketSummary]
                   ) -> dict[int, BucketSummary]:
        a.update(b)
        return a


def _drain(it: Iterable[Any]) -> list[Any]:
    for _ in it:
        pass
    return []


def _is(tag: str) -> Any:
    def pred(kv: tuple[int, tuple[Any, ...]]) -> bool:
        return bool(kv[1][0] == tag)

    return pred


def _value(kv: tuple[int, tuple[Any, ...]]) -> Any:
    return kv[1][1]


def _file_records(depth: int, item: tuple[str, bytes]) -> list[tuple[int, tuple[Any, ...]]]:
    """The records of one level file read by an executor (``.../L00012/b0003.npz``): its
    fingerprints for the bucket's visited set, and for level ``depth`` the level."""
    path, data = item
    d = int(path.rstrip("/").split("/")[-2][1:])
    b = int(path.rsplit("/", 1)[-1][1:].split(".")[0])
    block = _npz_block(data)
    out: list[tuple[int, tuple[Any, ...]]] = [(b, (S, block[0]))]
    if d == depth:
        out.append((b, (L, block)))
    return out


def _resumed_part(cfg: ShardConfig, depth: int, bucket: int,
                  records: Iterable[tuple[int, tuple[Any, ...]]]
                  ) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """A bucket's visited set (the union of its levels) and its level ``depth``."""
    try:
        runs: list[np.ndarray] = []
        level: Block | None = None
        for _, rec in records:
            if rec[0] == S:
                runs.append(rec[1])
            else:
                level = rec[1]
        if level is None:  # pragma: no cover - a missing file would fail the read
            raise RuntimeError(f"level {depth} of bucket {bucket} is missing")
        seen = merge_runs(runs, cfg)
    except Exception as e:  # noqa: BLE001 - reported to the driver
        raise encode_error(e) from None
    yield bucket, (V, seen)
    yield bucket, (L, level, depth)


def merge_runs(runs: list[np.ndarray], cfg: ShardConfig) -> np.ndarray:
    """The union of disjoint sorted fingerprint runs, sorted."""
    if not runs:
        return cfg.keys(0)
    return merge_sorted(*runs)


def _gathered_part(cfg: ShardConfig, depth: int, base_depth: int, again: bool, bucket: int,
                   records: Iterable[tuple[int, tuple[Any, ...]]]
                   ) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Task ``bucket`` of a move to the driver (:meth:`RddEngine._to_driver`): its
    visited set (the base, levels ``0..base_depth``, and the runs after it) merged into
    one sorted array of fingerprints, then its input of level ``depth``: its candidates,
    concatenated, or with ``again`` its committed part of level ``depth`` (a run too)."""
    try:
        parts: list[np.ndarray] = []
        cands: list[Block] = []
        level = _empty_block(cfg)
        for k, rec in records:
            if k != bucket:  # pragma: no cover - would be a partitioning bug
                raise RuntimeError(f"record of bucket {k} in partition {bucket}")
            if rec[0] == V:
                parts.append(rec[1])
            elif rec[0] == C:
                cands.append(rec[1])
            elif rec[2] > base_depth:  # a run (with ``again``, level ``depth`` too)
                parts.append(rec[1][0])
                if rec[2] == depth:
                    level = rec[1]
        seen = merge_runs(parts, cfg)
        out = level if again else _concat(cands, cfg)
    except Exception as e:  # noqa: BLE001 - reported to the driver
        raise encode_error(e) from None
    yield bucket, (V, seen)
    yield bucket, (L if again else C, out)


def _npz_block(data: bytes) -> Block:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return (z["fp"], z["parent"], z["act"], z["w"] if "w" in z else None)


def _parent_in(fp: int, width: int, records: Iterable[tuple[int, tuple[Any, ...]]]
               ) -> list[int | None]:
    found: int | None = None
    for _, rec in records:  # to the end (see _level_part)
        block: tuple[np.ndarray, np.ndarray] = (rec[1][0], rec[1][1])
        got = parent_in(fp, width, 1, functools.partial(_same, block))
        if got is not None:
            found = got
    return [found]


def _same(block: tuple[np.ndarray, np.ndarray], bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """``block``, whatever the bucket asked for (a partition holds one bucket's)."""
    return block


@dataclass
class _DriverLevels:
    """The part of a run the driver holds while its levels run there."""

    #: per bucket, the visited fingerprints as two sorted runs (``base``, ``recent``:
    #: a level is merged into the small one, which is merged into ``base`` when it has
    #: grown to an eighth of it); None before level 0
    seen: list[list[np.ndarray]] | None
    cands: list[Block]  # per bucket, the candidates of the next level

    def add(self, bucket: int, fps: np.ndarray) -> None:
        """Add a bucket's new level (sorted fingerprints) to its visited runs."""
        assert self.seen is not None
        base, recent = self.seen[bucket]
        recent = merge_sorted(recent, fps)
        if 8 * len(recent) > len(base):
            base, recent = merge_sorted(base, recent), recent[:0]
        self.seen[bucket] = [base, recent]


class RddEngine(JobCounters):
    """Levels as persisted pair RDDs partitioned by bucket (see the module docstring).

    ``spark`` is the session, ``buckets`` the number of buckets (tasks per level),
    ``worker`` what executors need to rebuild the kernel, ``n_act`` the number of
    action instances; ``kernel`` (the driver's) serves levels read on the driver.
    With ``store`` (a :class:`~spark_explore.hadoop_fs.HadoopDir`: ``--checkpoint-dir``)
    every committed level is also written there by the driver, one ``.npz`` file per
    bucket (``levels/L00012/b0003.npz``), through Hadoop's FileSystem API: that is what
    :meth:`resume` reads (the visited set is the union of the levels).
    """

    name = NAME

    def __init__(self, spark: Any, buckets: int, worker: WorkerConfig, n_act: int, *,
                 kernel: Any = None, replicate: bool | None = None, store: Any = None,
                 driver_threshold: int = 0) -> None:
        from pyspark import StorageLevel

        from .session import is_local_master

        self.sc = spark.sparkContext
        self.buckets = buckets
        self.n_act = n_act
        self.cfg = ShardConfig(worker, "", buckets)
        self.exact = self.cfg.exact
        self.n_words = worker.n_words
        if replicate is None:
            replicate = not is_local_master(self.sc.master)
        # Memory and disk, kept *deserialized* in the JVM: a PySpark record is already
        # bytes there (the pickled blocks), which the serialized levels would copy once
        # more through the JVM's serializer into the block store and back out at every
        # read (a level's expansion, every later commit reading the visited runs).
        self.kept = StorageLevel(True, True, False, True, 2 if replicate else 1)
        self.cached = StorageLevel(True, True, False, True, 1)
        self._state: dict[int, Any] = {}
        self._levels: dict[int, Any] = {}
        self._cands: dict[int, Any] = {}
        JobCounters.__init__(self, "spark")
        #: levels of at most this many candidates run in the driver, until the first
        #: level that does not (see :meth:`on_driver`)
        self.driver_threshold = max(0, int(driver_threshold))
        #: the driver's part of the run while its levels run there: per bucket, the
        #: visited fingerprints (None before level 0) and the candidates of the next
        #: level; None once the levels run in Spark
        self._here: _DriverLevels | None = None
        #: the next level's input (candidates, or a level to expand again) and the
        #: states committed so far; None when unknown (after a resume)
        self._candidates: int | None = None
        self._distinct: int | None = None
        #: the committed levels the driver ran, per bucket (kept for traces)
        self._dlevels: dict[int, list[Block]] = {}
        #: the checkpoint directory (a HadoopDir) the levels are written to, or None
        self.store = store
        self._parts: list[Any] = []  # per-bucket RDDs of a resume through the driver
        self._fractions: dict[str, Any] = {}  # per tag, the JVM map of ``_select``
        #: the visited set in Spark: the base, levels ``0..base_depth`` in the ``V``
        #: records of ``state[base_depth]``, and the runs, the levels after it (their
        #: ``L`` records, kept anyway); the base is rewritten (compacted) only when the
        #: runs have grown to :data:`COMPACT_FRACTION` of it or number :data:`MAX_RUNS`
        self._base_depth = -1
        #: states in the base (None when unknown: after a resume) and in the runs
        self._base_n: int | None = 0
        self._runs_n = 0
        if kernel is not None:
            seed_kernel(worker, kernel)

    @staticmethod
    def default_buckets(cores: int) -> int:
        return max(1, cores)

    # ------------------------------------------------------------ the levels
    def _partitioned(self, rdd: Any) -> Any:
        return rdd.partitionBy(self.buckets, bucket_key)

    def start(self, fps: np.ndarray, words: np.ndarray | None) -> None:
        """A fresh run: the initial states become the candidates of level 0 (held by the
        driver until a level runs in Spark)."""
        for d in list(self._levels):
            self._drop(d, levels=True)
        self._dlevels.clear()
        self._base_depth, self._base_n, self._runs_n = -1, 0, 0
        m = len(fps)
        block: Block = (np.asarray(fps, _U), np.zeros_like(fps), np.full(m, -1, np.int32),
                        None if self.exact else words)
        self._here = _DriverLevels(None, self._split(block))
        self._candidates, self._distinct = m, 0

    def _split(self, block: Block) -> list[Block]:
        """``block`` split by bucket: one (maybe empty) block per bucket."""
        (f, p, a, w), off = split_by_bucket(block, self.buckets)
        return [(f[lo:hi], p[lo:hi], a[lo:hi], None if w is None else w[lo:hi])
                for lo, hi in zip(off[:-1], off[1:])]

    def on_driver(self) -> bool:
        """Whether the next level runs in the driver: it has at most
        ``driver_threshold`` candidates and the states seen so far are at most
        :data:`~modelcheck.shards.engine.DRIVER_VISITED_FACTOR` times that (the bound of
        the shards engine's driver levels, whose driver also reads every visited shard).
        The visited set and the candidates move between the driver and Spark where the
        levels do (:meth:`_to_spark`, :meth:`_to_driver`). Unknown after a resume: no."""
        t, c, n = self.driver_threshold, self._candidates, self._distinct
        return (t > 0 and c is not None and n is not None and c <= t
                and n <= DRIVER_VISITED_FACTOR * t)

    def run_level(self, depth: int, expand: bool | None, again: bool = False
                  ) -> LevelSummary:
        """Job ``depth``: commit level ``depth`` and expand it as asked (``again``:
        expand the committed level ``depth`` once more)."""
        if self.on_driver():
            if self._here is None:
                self._to_driver(depth, again)
            out = self._run_level_here(depth, expand, again)
        else:
            out = self._run_level_spark(depth, expand, again)
        if self._distinct is not None and not again:
            self._distinct += out.new
        self._candidates = out.candidates if expand is not None else out.new
        return out

    def _run_level_spark(self, depth: int, expand: bool | None, again: bool) -> LevelSummary:
        cfg = self.cfg
        started = time.perf_counter()
        handed = self._to_spark(depth, again) if self._here is not None else None
        compact, base_depth = False, self._base_depth
        used: list[Any] = []  # the successors of the level before, dropped after the job
        if again:  # the committed level, expanded once more
            src = self._levels[depth]
        elif handed is not None:  # the visited blocks and candidates from the driver
            src, compact, base_depth = handed, True, -1
        else:
            cands = self._reduce_side(self._cands.pop(depth))
            src = self._union(self._visited(depth) + [cands])
            compact = self._compacts(depth)
            used.append(cands)
        acc = self.sc.accumulator({}, _Summaries())
        dumps = self.sc._unbatched_serializer.dumps

        def task(b: int, it: Iterable[Any], _d: int = depth, _bd: int = base_depth,
                 _c: bool = compact, _e: bool | None = expand, _a: bool = again
                 ) -> Iterator[bytes]:
            return _level_part(cfg, _d, b, it, _bd, _c, _e, _a, acc, dumps)

        # One pass per bucket commits and expands; its records stay in the JVM (a
        # PairwiseRDD, kept until the level's records are selected from it there).
        keyed = src.mapPartitionsWithIndex(task, preservesPartitioning=True)
        keyed._bypass_serializer = True
        pairs = self.sc._jvm.PairwiseRDD(keyed._jrdd.rdd()).asJavaPairRDD()
        pairs.persist(self.sc._getJavaStorageLevel(self.cached))
        # The successors to their buckets (the shuffle); ``coalesce`` (one parent
        # partition each) drops the partitioner, which ``partitionBy`` would keep
        # else, since it is the same.
        shuffled = self._records(self._select(pairs, C).coalesce(self.buckets, False)
                                 .partitionBy(self._jpartitioner()))
        kept: list[Any] = []
        if not again:
            levels = self._records(self._select(pairs, L))
            self._levels[depth] = levels
            kept.append(levels)
            if compact:
                self._state[depth] = self._records(self._select(pairs, V))
                kept.append(self._state[depth])
            for rdd in kept:
                rdd.persist(self.kept)
                rdd.localCheckpoint()
        levels = self._levels[depth]
        # The job is the map stage of the shuffle that carries the successors to their
        # buckets: one stage per level; the summaries come back in the accumulator.
        self.sc.setJobDescription(f"modelcheck level {depth}")
        try:
            job_start = time.perf_counter()
            self._run_map_stage(shuffled)
            # The level and the new base selected from the kept pairs, and the
            # successors the shuffle delivered, in the JVM: a count stores them and cuts
            # their lineage (their local checkpoints). A task recomputed after a lost
            # executor then reads kept blocks only, never an earlier level's inputs
            # (a base dropped since).
            shuffled.persist(self.kept)
            shuffled.localCheckpoint()
            for rdd in kept + [shuffled]:
                rdd._jrdd.count()
            pairs.unpersist(False)
            for rdd in used:
                rdd.unpersist()
            job_wall = time.perf_counter() - job_start
        finally:
            self.sc.setJobDescription(None)
        self._cands[depth + 1] = shuffled
        if self.store is not None and not again:
            self._save_level(depth, levels)
        parts: list[BucketSummary] = list(acc.value.values())
        if len(parts) != self.buckets:  # pragma: no cover - would be a Spark bug
            raise RuntimeError(f"level {depth}: {len(parts)} of {self.buckets} summaries")
        out = LevelSummary.combine(depth, parts, self.n_act)
        if not again:
            if compact:
                self._rebase(depth, out.new)
            else:
                self._runs_n += out.new
        self.count_job("spark", out.cpu)
        self.count_wall(job_wall, time.perf_counter() - started - job_wall)
        return out

    def _visited(self, depth: int) -> list[Any]:
        """The RDDs holding the visited set before level ``depth``: the base (the ``V``
        and ``L`` records of ``state[base_depth]``), then the runs (the ``L`` records of
        the levels after it)."""
        out = [self._state[self._base_depth]] if self._base_depth >= 0 else []
        return out + [self._levels[d] for d in range(self._base_depth + 1, depth)]

    def _union(self, rdds: list[Any]) -> Any:
        """The union of pair RDDs partitioned alike (partition ``k`` of each, no
        shuffle)."""
        out = rdds[0]
        for rdd in rdds[1:]:
            out = out.union(rdd)
        return out

    def _select(self, pairs: Any, tag: str) -> Any:
        """The pairs of the JVM pair RDD ``pairs`` (keys ``_key``) whose tag is
        ``tag``, selected in the JVM (``sampleByKey`` with fractions 1 and 0: exact)."""
        fractions = self._fractions.get(tag)
        if fractions is None:
            fractions = self.sc._jvm.java.util.HashMap()
            for t in _TAGS:
                for b in range(self.buckets):
                    fractions.put(_key(t, b, self.buckets), 1.0 if t == tag else 0.0)
            self._fractions[tag] = fractions
        return pairs.sampleByKey(False, fractions, _KEY)

    def _jpartitioner(self) -> Any:
        """The JVM's partitioner of ``_partitioned`` (equal to it)."""
        return self.sc._jvm.PythonPartitioner(self.buckets, id(bucket_key))

    def _records(self, jpairs: Any) -> Any:
        """The values of the JVM pair RDD ``jpairs`` (pickled lists of records
        ``(bucket, (tag, ...))``) as a PySpark pair RDD partitioned by bucket."""
        from pyspark.rdd import RDD, Partitioner
        from pyspark.serializers import BatchedSerializer

        rdd = RDD(self.sc._jvm.PythonRDD.valueOfPair(jpairs), self.sc,
                  BatchedSerializer(self.sc._unbatched_serializer))
        rdd.partitioner = Partitioner(self.buckets, bucket_key)
        return rdd

    def _compacts(self, depth: int) -> bool:
        """Whether level ``depth``'s commit writes a new base (see
        :data:`COMPACT_FRACTION`)."""
        runs = depth - 1 - self._base_depth
        if self._base_depth < 0 or runs >= MAX_RUNS:
            return True
        return self._base_n is not None and self._runs_n >= COMPACT_FRACTION * self._base_n

    def _rebase(self, depth: int, new: int) -> None:
        """Level ``depth`` (``new`` states) was committed with a new base: the earlier
        one can go."""
        old, self._base_depth = self._base_depth, depth
        if 0 <= old < depth:
            self._drop(old)
        if self._distinct is not None:  # the states before level ``depth``
            self._base_n = self._distinct + new
        elif self._base_n is not None:
            self._base_n += self._runs_n + new
        self._runs_n = 0

    def _run_level_here(self, depth: int, expand: bool | None, again: bool) -> LevelSummary:
        """Level ``depth`` in the driver: every bucket committed as its task would, then
        the level expanded as one (as the shards engine's driver levels are; the parent
        rule picks the same parents whatever the producers)."""
        here = self._here
        assert here is not None
        started = time.perf_counter()
        try:
            arrays_for(self.n_words)
            cpu = time.process_time()
            if not again:
                blocks = []
                for b in range(self.buckets):
                    blocks.append(commit_block(here.cands[b],
                                               None if here.seen is None else here.seen[b]))
                if here.seen is None:
                    here.seen = [[blk[0], blk[0][:0]] for blk in blocks]
                else:
                    for b, blk in enumerate(blocks):
                        here.add(b, blk[0])
                here.cands = [_empty_block(self.cfg)] * self.buckets
                self._dlevels[depth] = blocks
            blocks = self._dlevels[depth]
            level = _concat(blocks, self.cfg)
            order = key_order(level[0])
            level = (take_rows(level[0], order), take_rows(level[1], order), level[2][order],
                     None if level[3] is None else take_rows(level[3], order))
            summary, cands = expand_block(self.cfg, 0, level, expand)
            if cands is not None:
                here.cands = self._split(cands)
            summary.cpu = time.process_time() - cpu
        except Exception as e:  # noqa: BLE001 - reported as a task's would be
            raise encode_error(e) from None
        out = LevelSummary.combine(depth, [summary], self.n_act)
        self.count_job("driver", out.cpu)
        self.count_wall(0.0, time.perf_counter() - started)
        if self.store is not None and not again:
            self._save_level(depth, None)
        return out

    def _to_spark(self, depth: int, again: bool) -> Any:
        """Hand the driver's part of the run to Spark before level ``depth`` runs there:
        the visited blocks and the candidates of level ``depth`` become the partitioned
        records its commit reads (with ``again``: the visited blocks and the committed
        level ``depth``, as :meth:`resume` leaves them). The records to commit, or None
        with ``again``."""
        here = self._here
        assert here is not None
        self._here = None
        recs: list[tuple[int, tuple[Any, ...]]] = []
        if here.seen is not None:
            recs += [(b, (V, merge_sorted(*runs))) for b, runs in enumerate(here.seen)]
        if again:
            recs += [(b, (L, blk, depth)) for b, blk in enumerate(self._dlevels[depth])]
        else:
            recs += [(b, (C, blk)) for b, blk in enumerate(here.cands) if len(blk[0])]
        src = self._partitioned(self.sc.parallelize(recs, max(1, len(recs))))
        if not again:
            return src
        levels = self._kept(src, whole=True)
        self._state[depth] = src
        self._levels[depth] = levels
        self._base_depth, self._base_n, self._runs_n = depth, self._distinct, 0
        return None

    def _kept(self, state: Any, whole: bool) -> Any:
        """Persist the level's own records filtered from a level's records ``state``
        (with ``whole``, ``state`` too: a new base visited set), with their lineage cut
        at the next job; returns the level's records."""
        if whole:
            state.persist(self.kept)
            state.localCheckpoint()
        levels = state.filter(_is(L))
        levels.persist(self.kept)
        levels.localCheckpoint()
        return levels

    def _to_driver(self, depth: int, again: bool) -> None:
        """Bring the visited set and level ``depth``'s input from Spark to the driver
        (one job), before level ``depth`` runs there: the candidates of level ``depth``
        (with ``again``: the committed level ``depth``, to expand again). Each bucket's
        visited set comes merged by its task (:func:`_gathered_part`): one sorted array
        of fingerprints, without the runs' parents and action ids."""
        base_depth = self._base_depth
        if again:
            src = self._union(self._visited(depth) + [self._levels[depth]])
        else:
            cands = self._reduce_side(self._cands.pop(depth))
            src = self._union(self._visited(depth) + [cands])
        cfg = self.cfg

        def gather(b: int, it: Iterable[Any], _d: int = depth, _bd: int = base_depth,
                   _a: bool = again) -> Iterator[Any]:
            return _gathered_part(cfg, _d, _bd, _a, b, it)

        self.sc.setJobDescription(f"modelcheck level {depth}: to the driver")
        started = time.perf_counter()
        try:
            recs = src.mapPartitionsWithIndex(gather).collect()
        finally:
            self.sc.setJobDescription(None)
        if not again:
            cands.unpersist()
        self.count_wall(time.perf_counter() - started, 0.0)
        seen = [cfg.keys(0)] * self.buckets
        got: list[Block] = [_empty_block(cfg)] * self.buckets
        for b, rec in recs:
            if rec[0] == V:
                seen[b] = rec[1]
            else:
                got[b] = rec[1]
        del recs
        self._here = _DriverLevels([[f, f[:0]] for f in seen],
                                   [_empty_block(cfg)] * self.buckets if again else got)
        if again:
            self._dlevels[depth] = got
        if base_depth >= 0:
            self._drop(base_depth)  # the base visited blocks (the levels stay, for traces)
        self._base_depth, self._base_n, self._runs_n = -1, 0, 0

    def _run_map_stage(self, shuffled: Any) -> None:
        """Run the map stage of ``shuffled`` (an RDD made by ``partitionBy``)."""
        dep = self._shuffle_dependency(shuffled)
        self.sc._jsc.sc().submitMapStage(dep).get()

    @staticmethod
    def _shuffle_dependency(shuffled: Any) -> Any:
        rdd = shuffled._jrdd.rdd()
        for _ in range(4):  # partitionBy: values of the pairs of a ShuffledRDD
            dep = rdd.dependencies().head()
            if dep.getClass().getSimpleName() == "ShuffleDependency":
                return dep
            rdd = dep.rdd()
        raise RuntimeError("no shuffle dependency under a partitionBy RDD")  # pragma: no cover

    def _reduce_side(self, shuffled: Any) -> Any:
        """The successors of a level as records ``(bucket, (C, block))``, partitioned."""
        return shuffled

    # ------------------------------------------------------------ checkpoints
    @staticmethod
    def _level_file(depth: int, bucket: int) -> str:
        return f"levels/L{depth:05d}/b{bucket:04d}.npz"

    def _save_level(self, depth: int, levels: Any) -> None:
        """Write level ``depth`` to the checkpoint directory, bucket by bucket (``levels``
        its RDD, or None for a level the driver ran)."""
        got = (enumerate(self._dlevels[depth]) if levels is None
               else ((b, rec[1]) for b, rec in levels.collect()))
        for b, block in got:
            fps, parents, acts, words = block
            buf = io.BytesIO()
            arrays: dict[str, Any] = {"fp": fps, "parent": parents, "act": acts}
            if words is not None:
                arrays["w"] = words
            np.savez(buf, **arrays)
            self.store.write_bytes(self._level_file(depth, b), buf.getvalue())

    def _load_level(self, depth: int, bucket: int) -> Block:
        return _npz_block(self.store.read_bytes(self._level_file(depth, bucket)))

    def resume(self, depth: int) -> bool:
        """Continue a checkpoint whose levels ``0..depth`` are committed: level ``depth``
        and the visited set (the union of the levels) go back to the executors; the
        driver then expands level ``depth`` again (``run_level(..., again=True)``).

        Where the executors reach the checkpoint directory (a local master, or a URI of a
        file system every host mounts, ``hdfs://``, ``s3a://``) they read the level files
        themselves (``SparkContext.binaryFiles``) and merge each bucket's visited set;
        else (a driver-local directory on a cluster) the driver streams them, one bucket
        at a time, so that it never holds more than one bucket's visited set."""
        self._here = None
        self._candidates = self._distinct = None
        if self._executors_reach_store():
            state = self._resume_on_executors(depth)
        else:
            state = self._resume_through_driver(depth)
        levels = self._kept(state, whole=True)
        self.sc.setLocalProperty(_ALL_MARKED, "true")
        try:
            self.sc.runJob(levels, _drain)  # computes both and cuts their lineage
        finally:
            self.sc.setLocalProperty(_ALL_MARKED, None)
        for rdd in self._parts:
            rdd.unpersist()
        self._parts = []
        self._state[depth] = state
        self._levels[depth] = levels
        # the base: every level so far (its size unknown here: compacted by MAX_RUNS)
        self._base_depth, self._base_n, self._runs_n = depth, None, 0
        return True

    def _executors_reach_store(self) -> bool:
        """Whether executors can read the checkpoint directory's files themselves."""
        from .hadoop_fs import scheme_of
        from .session import is_local_master

        return scheme_of(self.store.uri) != "file" or is_local_master(self.sc.master)

    def _resume_on_executors(self, depth: int) -> Any:
        paths = ",".join(f"{self.store.uri}/levels/L{d:05d}" for d in range(depth + 1))
        files = self.sc.binaryFiles(paths, self.buckets)
        cfg = self.cfg

        def merge(b: int, it: Iterable[Any], _d: int = depth) -> Iterator[Any]:
            return _resumed_part(cfg, _d, b, it)

        recs = files.flatMap(functools.partial(_file_records, depth))
        return self._partitioned(recs).mapPartitionsWithIndex(merge, preservesPartitioning=True)

    def _resume_through_driver(self, depth: int) -> Any:
        parts = []
        for b in range(self.buckets):
            blocks = [self._load_level(d, b) for d in range(depth + 1)]
            seen = merge_runs([blk[0] for blk in blocks], self.cfg)
            part = self.sc.parallelize([(b, (V, seen)), (b, (L, blocks[-1], depth))], 1)
            del blocks, seen
            part.persist(self.cached)
            part.localCheckpoint()
            part.count()  # on the executors now; the driver lets go of its copy
            parts.append(part)
        self._parts = parts
        return self._partitioned(self.sc.union(parts))

    def parent(self, depth: int, fp: int) -> int | None:
        width = self.cfg.key_width
        b = int(bucket_of(keys_of([fp], width), self.buckets)[0])
        if depth in self._dlevels:
            return _parent_in(fp, width, [(b, (L, self._dlevels[depth][b]))])[0]
        if depth not in self._levels and self.store is not None:  # before a resume
            got = _parent_in(fp, width, [(b, (L, self._load_level(depth, b)))])
            return got[0]
        got = self.sc.runJob(self._levels[depth], lambda it: _parent_in(fp, width, it), [b])
        return got[0] if got else None

    def level_states(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        blocks = (self._dlevels[depth] if depth in self._dlevels
                  else self._levels[depth].map(_value).collect())
        fp = np.concatenate([b[0] for b in blocks]) if blocks else self.cfg.keys(0)
        order = key_order(fp)
        fp = take_rows(fp, order)
        if self.exact:
            return fp, words_of_keys(fp)
        w = (np.concatenate([b[3] for b in blocks]) if blocks
             else np.zeros((0, self.n_words), _U))
        return fp, np.ascontiguousarray(take_rows(w, order))

    def tidy(self, depth: int) -> None:
        """Levels ``0..depth`` are committed: drop what level ``depth + 1`` no longer
        needs (the visited blocks and successors of earlier levels)."""
        for d in [d for d in self._state if d < depth and d != self._base_depth]:
            self._drop(d)

    def _drop(self, d: int, levels: bool = False) -> None:
        cands = self._cands.pop(d, None)
        if cands is not None:
            cands.unpersist()
        if levels:
            self._dlevels.pop(d, None)
        for store in (self._state,) + ((self._levels,) if levels else ()):
            rdd = store.pop(d, None)
            if rdd is not None:
                rdd.unpersist()

    def bytes_on_disk(self) -> int:
        return 0 if self.store is None else int(self.store.du("levels"))
