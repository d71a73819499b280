"""The shard engine's driver: Spark schedules per-bucket numpy tasks, one job per level.

:class:`ShardExplorer` gives the same results as :class:`modelcheck.explorer.Explorer`
(the session handling, checkpoint directory, error translation and end-of-level rule
are :class:`spark_explore.explorer.SparkExplorer`'s), with the state space split into
``K`` buckets by fingerprint and each bucket's visited set, levels and candidate
transitions kept as ``.npy`` files in the run directory (:mod:`spark_explore.shards`).
Per level Spark runs one job of ``K`` tasks and moves nothing but their small
summaries; de-duplication, the visited check,
expansion and the checks all run in numpy inside the executors.

Level ``d``'s job commits level ``d`` (de-duplicating the transitions found by level
``d - 1``) and expands it; so the size of level ``d + 1`` is known one job later.
The loop follows the local explorer's rules: an invariant violation stops at the
level where it is found (its successors are not counted); a deadlock or an action
property violation finishes the level, counting the next level's new states (a
commit-only job); the smallest fingerprint wins, invariants before deadlocks before
action properties; a spec error is reported as the local explorer would report it
(the driver replays the level in fingerprint order, batch by batch).

With a checkpoint directory the manifest is rewritten after every job (it carries
the expansion summary of the last committed level), then the files no longer
needed are deleted; ``--resume`` continues from there.
"""

from __future__ import annotations

import functools
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from modelcheck.errors import SpecEvaluationError
from modelcheck.explorer import coverage_table
from modelcheck.result import LevelStats, Result, Violation
from modelcheck.store import dedupe_min

from .checkpoint import CheckpointError
from .explorer import SparkExplorer
from .session import SparkBackendError
from .shards import (
    INIT,
    BucketSummary,
    ShardConfig,
    cand_dir,
    level_dir,
    parent_of,
    read_level_sorted,
    run_bucket,
    visited_dir,
    write_candidates,
)

__all__ = ["ShardExplorer"]

ENGINE = "shards"


@dataclass
class _Level:
    """What one job found: level ``depth`` committed and (maybe) expanded."""

    depth: int
    new: int  # states of level ``depth``
    reached: np.ndarray  # of those, per action id that reached them
    expand: bool | None  # the mode it ran in (see spark_explore.shards.run_bucket)
    fired: np.ndarray
    inv_min: dict[int, int] = field(default_factory=dict)
    dead_min: int | None = None
    prop_min: dict[int, tuple[int, int, int]] = field(default_factory=dict)
    candidates: int = 0  # successors written for level depth + 1
    seconds: float = 0.0

    @classmethod
    def combine(cls, depth: int, parts: Sequence[BucketSummary], n_act: int,
                seconds: float) -> _Level:
        out = cls(depth, 0, np.zeros(n_act, np.int64), None, np.zeros(n_act, np.int64),
                  seconds=seconds)
        for s in sorted(parts, key=lambda s: s.bucket):
            out.new += s.new
            out.reached += np.asarray(s.reached, dtype=np.int64)
            out.expand = s.expand
            out.fired += np.asarray(s.fired, dtype=np.int64)
            for j, f in s.inv_min.items():
                out.inv_min[j] = min(out.inv_min.get(j, f), f)
            if s.dead_min is not None:
                out.dead_min = s.dead_min if out.dead_min is None else min(out.dead_min,
                                                                           s.dead_min)
            for j, hit in s.prop_min.items():
                if j not in out.prop_min or hit < out.prop_min[j]:
                    out.prop_min[j] = hit
            out.candidates += s.candidates
        return out

    def to_json(self) -> dict[str, Any]:
        return {"depth": self.depth, "new": self.new, "reached": [int(x) for x in self.reached],
                "expand": self.expand, "fired": [int(x) for x in self.fired],
                "inv_min": [[j, f] for j, f in sorted(self.inv_min.items())],
                "dead_min": self.dead_min,
                "prop_min": [[j, *hit] for j, hit in sorted(self.prop_min.items())],
                "candidates": self.candidates, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> _Level:
        return cls(int(d["depth"]), int(d["new"]), np.asarray(d["reached"], dtype=np.int64),
                   d["expand"], np.asarray(d["fired"], dtype=np.int64),
                   {int(j): int(f) for j, f in d["inv_min"]},
                   None if d["dead_min"] is None else int(d["dead_min"]),
                   {int(r[0]): (int(r[1]), int(r[2]), int(r[3])) for r in d["prop_min"]},
                   int(d["candidates"]), float(d["seconds"]))


class ShardExplorer(SparkExplorer):
    """Breadth-first exhaustive exploration on Spark with numpy shards.

    Same constructor as :class:`~spark_explore.explorer.SparkExplorer`; ``partitions``
    is the number of buckets (default: the cores Spark offers). The run directory
    (``checkpoint_dir``, else a temporary directory) must be reachable from every
    executor and the driver at the same path.
    """

    engine = ENGINE
    level_offset = 1  # _call(d, ...) runs job d: levels 0..d-1 are committed

    def _default_partitions(self, cores: int) -> int:
        # One bucket per core: every task is one Kernel.expand stream, and a level's
        # fixed cost grows with the number of tasks.
        return max(1, cores)

    def _check_run_dir(self, spark: Any) -> None:
        sc = spark.sparkContext
        from .explorer import _is_this_host
        from .session import is_local_master

        if self.checkpoint_dir is None and not is_local_master(sc.master):
            try:
                infos = sc._jsc.sc().statusTracker().getExecutorInfos()
                hosts = {str(i.host()) for i in infos}
            except Exception:  # noqa: BLE001
                hosts = set()
            if not all(_is_this_host(h) for h in hosts):
                raise SparkBackendError(
                    "executors run on other hosts than this driver, and the shard engine "
                    "keeps the run's files in its run directory: pass --checkpoint-dir on "
                    "storage every host mounts at the same path (e.g. NFS)."
                )

    @property
    def _root(self) -> Path:
        return self.rundir.path / "shards"

    # ------------------------------------------------------------ the loop
    def _explore(self, t0: float, target: str, ident: dict[str, Any],
                 manifest: dict[str, Any] | None) -> Result:
        k = self.kernel
        n_act = len(k.actions)
        K = self.P
        res = self._new_result()
        self._cfg = self._worker_config(target)
        self._scfg = ShardConfig(self._cfg, str(self._root), K)
        fired = np.zeros(n_act, dtype=np.int64)
        new_by_action = np.zeros(n_act, dtype=np.int64)
        generated = 0
        prior = 0.0
        violation: Violation | None = None
        if manifest is not None:
            if manifest.get("engine") != ENGINE:
                raise CheckpointError(
                    f"the checkpoint in {self.rundir.path} was written by the "
                    f"{manifest.get('engine', 'dataframe')} engine, which this version no "
                    "longer has; start a new run in another --checkpoint-dir."
                )
            depth = int(manifest["level"])
            self._sizes = [int(x) for x in manifest["level_sizes"]]
            generated = int(manifest["generated"])
            fired[:] = manifest["fired"]
            new_by_action[:] = manifest["new_by_action"]
            res.levels = [LevelStats(*row) for row in manifest["stats"]]
            prior = float(manifest.get("seconds", 0.0))
            pending = _Level.from_json(manifest["pending"])
            self._tidy(depth)
            if pending.expand is not self._can_expand(depth):
                # Interrupted with another --max-depth: expand the level as this run wants.
                pending = self._call(depth + 1, self._job, depth, self._can_expand(depth),
                                     True)
                pending.new = self._sizes[depth]
        else:
            depth = 0
            shutil.rmtree(self._root, ignore_errors=True)
            self._call(0, self._write_initial_candidates)
            pending = self._call(0, self._job, 0, self._can_expand(0))
            self._sizes = [pending.new]
            self._commit_level(ident, 0, pending, generated, fired, new_by_action, res, t0,
                               prior)
        try:
            while True:
                self._check_interrupt()
                lt = time.perf_counter()
                cur = pending
                n = self._sizes[depth]
                can_expand = self._can_expand(depth)
                if cur.inv_min:
                    violation = self._call(depth, self._invariant_violation, depth,
                                           cur.inv_min)
                    res.status = "violation"
                    break
                level_fired = int(cur.fired.sum())
                generated += level_fired
                fired += cur.fired
                stopping = cur.dead_min is not None or bool(cur.prop_min)
                nxt: _Level | None = None
                if cur.candidates == 0:
                    n_new = 0
                elif stopping:  # count the next level's states, expand nothing
                    nxt = self._call(depth + 1, self._job, depth + 1, None)
                    n_new = nxt.new
                else:
                    nxt = self._call(depth + 1, self._job, depth + 1,
                                     self._can_expand(depth + 1))
                    n_new = nxt.new
                seconds = cur.seconds + (nxt.seconds if nxt is not None else 0.0)
                res.levels.append(LevelStats(depth, n, n_new, level_fired, seconds))
                if n_new:
                    assert nxt is not None
                    self._sizes.append(n_new)
                    new_by_action += nxt.reached
                stop, violation = self._level_end(res, depth, n, n_new, level_fired,
                                                  cur.dead_min, cur.prop_min, can_expand, lt,
                                                  t0 - prior)
                if stop:
                    break
                assert nxt is not None
                depth += 1
                pending = nxt
                self._commit_level(ident, depth, pending, generated, fired, new_by_action,
                                   res, t0, prior)
        except KeyboardInterrupt:
            self._stop_interrupted(res)
        self._complete(res, violation, generated, fired, new_by_action, t0 - prior, "shards")
        return res

    def _can_expand(self, depth: int) -> bool:
        return self.max_depth is None or depth < self.max_depth

    # ------------------------------------------------------------ Spark jobs
    def _write_initial_candidates(self) -> None:
        k = self.kernel
        init_words, init_fps = k.initial_words()
        ufps, _, rows = dedupe_min(init_fps, np.zeros(len(init_fps), dtype=np.int64))
        m = len(ufps)
        write_candidates(self._root, INIT, 0, self.P, ufps, np.zeros(m, np.uint64),
                         np.full(m, -1, np.int32),
                         None if self.layout.exact else init_words[rows])

    def _job(self, depth: int, expand: bool | None, again: bool = False) -> _Level:
        """Level ``depth``'s job; on a spec error, report what the local explorer would."""
        t = time.perf_counter()
        try:
            parts = self._run_tasks(depth, expand, again)
        except SpecEvaluationError as err:
            # Commit the level alone (no spec code runs), then replay it in the local
            # explorer's order: the same error, or the invariant violation before it.
            parts = self._run_tasks(depth, None, again)
            lv = _Level.combine(depth, parts, len(self.kernel.actions),
                                time.perf_counter() - t)
            lv.inv_min = self._replay_level(depth, bool(expand), err)
            return lv
        return _Level.combine(depth, parts, len(self.kernel.actions), time.perf_counter() - t)

    def _run_tasks(self, depth: int, expand: bool | None, again: bool = False
                   ) -> list[BucketSummary]:
        sc = self.spark.sparkContext
        fn = functools.partial(run_bucket, self._scfg, depth, expand=expand, again=again)
        sc.setJobDescription(f"modelcheck level {depth}")
        try:
            t = time.perf_counter()
            out: list[BucketSummary] = self._translated(
                depth, lambda: sc.parallelize(range(self.P), self.P).map(fn).collect())
            self.timings["job"] = self.timings.get("job", 0.0) + time.perf_counter() - t
            return out
        finally:
            sc.setJobDescription(None)

    def _translated(self, depth: int, fn: Any) -> Any:
        from modelcheck.errors import ModelcheckError

        try:
            return fn()
        except (ModelcheckError, KeyboardInterrupt):
            raise
        except Exception as e:  # noqa: BLE001 - py4j / pyspark raise many types
            raise self._translate(e, depth) from None

    # ------------------------------------------------------------ violations
    def _path(self, depth: int, fp: int) -> list[int]:
        out = [fp]
        cur = fp
        for d in range(depth, 0, -1):
            parent = parent_of(self._root, d, self.P, cur)
            if parent is None:  # pragma: no cover - would be an engine bug
                raise SparkBackendError(f"trace rebuild: {cur:#x} is not in level {d}")
            cur = parent
            out.append(cur)
        out.reverse()
        return out

    def _replay_level(self, depth: int, can_expand: bool,
                      err: SpecEvaluationError) -> dict[int, int]:
        """Expand level ``depth`` on the driver as the local explorer does (batches of
        states in fingerprint order, no expansion after an invariant violation)."""
        k = self.kernel
        fps, words = read_level_sorted(self._root, depth, self.P, self.layout.exact,
                                       self.layout.n_words)
        batch_size = 1 << 16  # modelcheck.explorer.Explorer's default batch size
        inv_hits: list[tuple[int, int]] = []
        for s in range(0, len(fps), batch_size):
            ex = k.expand(words[s:s + batch_size], expand=can_expand and not inv_hits)
            for j, bad in enumerate(ex.invariant_rows):
                for r in bad:
                    inv_hits.append((int(fps[s + r]), j))
        if not inv_hits:
            raise err
        out: dict[int, int] = {}
        for fp, j in inv_hits:
            out[j] = min(out.get(j, fp), fp)
        return out

    # ------------------------------------------------------------ commits
    def _commit_level(self, ident: dict[str, Any], depth: int, pending: _Level,
                      generated: int, fired: np.ndarray, new_by_action: np.ndarray,
                      res: Result, t0: float, prior: float) -> None:
        """Record job ``depth`` as committed, then delete the files no longer needed."""
        if not self.rundir.temporary:
            self.rundir.write_manifest({
                "spec": ident,
                "engine": ENGINE,
                "partitions": self.P,
                "level": depth,
                "level_sizes": self._sizes[:depth + 1],
                "distinct": sum(self._sizes[:depth + 1]),
                "generated": generated,
                "fired": [int(x) for x in fired],
                "new_by_action": [int(x) for x in new_by_action],
                "pending": pending.to_json(),
                "stats": [[lv.depth, lv.frontier, lv.new, lv.generated, lv.seconds]
                          for lv in res.levels],
                "coverage": [{"action": c.name, "fired": c.fired, "new_states": c.new_states}
                             for c in coverage_table(self.kernel.actions, fired,
                                                     new_by_action)],
                "seconds": time.perf_counter() - t0 + prior,
            })
        self._tidy(depth)

    def _tidy(self, depth: int) -> None:
        """Keep levels ``0..depth``, the visited shards and candidates of ``depth``."""
        keep = {level_dir(self._root, d).name for d in range(depth + 1)}
        keep |= {visited_dir(self._root, depth).name, cand_dir(self._root, depth).name}
        if not self._root.is_dir():
            return
        for child in self._root.iterdir():
            if child.name not in keep:
                shutil.rmtree(child, ignore_errors=True)
