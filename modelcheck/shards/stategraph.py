"""The state graph of a sharded run, read back from the bucket tasks' files.

With temporal properties, every task that expands a bucket's part of a level also
writes that part of the state graph beside the level files
(:func:`modelcheck.shards.files.write_graph_part`, ``shards/E*``): the transitions
that change the state (source row, action id, target key), the values of the step
formulas on them and of the state predicates on the bucket's states. Once the run is
over, :func:`read_state_graph` turns them, in the coordinating process, into the arrays
of the one-process state graph (:class:`modelcheck.stategraph.StateGraph`): nodes in
breadth-first order, each level sorted by key (the order of the one-process explorer's
levels: the same node indices), edges in CSR order (by source, then action id). So the
SCC, fairness and lasso analysis that follows sees the graph the one-process check
builds, and finds the same verdicts and the same lassos.

Level by level: the buckets' sorted key files are merged (the rank of each bucket row in
the level), the level's transitions are read, their sources numbered by those ranks and
their targets looked up in the sorted levels (the next, this one and the one before
first, where nearly all lie), and
the level's edges are appended to an :class:`~modelcheck.graphstore.EdgeStore`, which
writes them to files and reads them back memory-mapped when ``spill_dir`` is given. One
level's transitions are in memory at a time, and per node its key, its place in the
sorted copy and its predicate flags.

State keys are one or two ``uint64`` columns, handled by :mod:`modelcheck.store`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelcheckError
from ..graphstore import NODE_LIMIT, EdgeStore, csr_order
from ..store import key_find, key_order, take_rows
from .files import _rows, graph_dir, level_dir

__all__ = ["GraphArrays", "read_state_graph"]


@dataclass
class GraphArrays:
    """The parts of a state graph (see :class:`modelcheck.stategraph.StateGraph`)."""

    fps: np.ndarray  # keys per node, breadth-first, each level sorted
    levels: np.ndarray  # the first node of each level, then the number of nodes
    labels: np.ndarray  # bool (nodes, state predicates): the predicate holds
    dst: np.ndarray  # int32 per edge (CSR order)
    act: np.ndarray  # action id per edge
    indptr: np.ndarray  # CSR offsets
    steps: np.ndarray  # bool (edges, step formulas): the formula holds on the edge
    store: EdgeStore  # holds dst and act (close it to remove spilled files)


def _load(path: Path) -> np.ndarray:
    return np.load(path, mmap_mode=None, allow_pickle=False)


def _level_parts(root: Path, depth: int, buckets: int) -> list[np.ndarray] | None:
    """The buckets' key files of level ``depth`` (None: no such level)."""
    d = level_dir(root, depth)
    if not (d / "b0000.fp.npy").exists():
        return None
    return [_load(d / f"b{b:04d}.fp.npy") for b in range(buckets)]


def _resolved(gd: Path, parts: list[str], lv: int, depth_of: list[int],
              ranks: list[tuple[np.ndarray, np.ndarray]], levels: np.ndarray,
              buckets: int) -> np.ndarray | None:
    """The node of each target of level ``depth_of[lv]``'s transitions (in the order of
    its parts ``parts``' ``.dst`` files) that the next level's bucket tasks found among their
    states of that level, this one or the one before
    (:func:`modelcheck.shards.files.resolve_targets`), -1 for the others; None
    when a task wrote none (the next level is empty or was committed in the driver)."""
    if lv + 1 >= len(depth_of) or depth_of[lv + 1] != depth_of[lv] + 1:
        return None
    if not all((gd / f"t{b:04d}.row.npy").exists() for b in range(buckets)) or \
            not all((gd / f"{p}.src.npy").exists() for p in parts):
        return None
    total = sum(_rows(gd / f"{p}.dst.npy") for p in parts)
    node = np.full(total, -1, dtype=np.int32)
    for b in range(buckets):
        pos = _load(gd / f"t{b:04d}.pos.npy")
        row = _load(gd / f"t{b:04d}.row.npy")
        rel = _load(gd / f"t{b:04d}.lvl.npy")
        for r in range(3):
            x = lv + 1 - r  # the kept level: depth_of[x] == depth_of[lv] + 1 - r
            if x < 0 or depth_of[x] != depth_of[lv] + 1 - r:
                continue
            at = np.flatnonzero(rel == r)
            if len(at):
                boff, rank = ranks[x]
                node[pos[at]] = rank[row[at] + boff[b]] + int(levels[x])
    return node


def read_state_graph(root: Path, buckets: int, n_act: int, n_labels: int, n_steps: int,
                     spill_dir: str | None = None, spill_edges: int = 0) -> GraphArrays:
    """The state graph of the finished run whose shards directory is ``root`` (see the
    module docstring); ``n_act`` action instances, ``n_labels`` state predicates and
    ``n_steps`` step formulas evaluated by its kernel. The edges go to files under
    ``spill_dir`` (memory-mapped) when there are more than ``spill_edges``."""
    total = sum(_rows(f) for f in root.glob(f"{graph_dir(root, 0).name[0]}*/*.src.npy"))
    if total <= spill_edges:
        spill_dir = None
    sorted_levels: list[np.ndarray] = []
    ranks: list[tuple[np.ndarray, np.ndarray]] = []  # per level: bucket offsets, ranks
    depth_of: list[int] = []  # per kept level: its depth (empty levels are left out)
    d = 0
    while (parts := _level_parts(root, d, buckets)) is not None:
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        if sizes.sum():
            cat = np.concatenate(parts)
            order = key_order(cat)
            rank = np.empty(len(cat), dtype=np.int64)
            rank[order] = np.arange(len(cat))
            sorted_levels.append(take_rows(cat, order))
            ranks.append((np.concatenate([[0], np.cumsum(sizes)]), rank))
            depth_of.append(d)
        d += 1
    fps = np.concatenate(sorted_levels) if sorted_levels else np.zeros(0, np.uint64)
    n = len(fps)
    if n > NODE_LIMIT:
        raise ModelcheckError(f"temporal properties are checked on at most {NODE_LIMIT:,} "
                              "states; this spec has more.")
    levels = np.zeros(len(sorted_levels) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in sorted_levels], out=levels[1:])

    def nodes_of(lv: int, keys: np.ndarray) -> np.ndarray:
        """The nodes of the targets ``keys`` of level ``lv``'s transitions: searched in
        the next level, this one and the one before (cache-sized sorted arrays; where
        nearly all targets lie), then in the others, the most recent first."""
        out = np.full(len(keys), -1, dtype=np.int32)
        rest = np.arange(len(keys))
        near = [x for x in (lv + 1, lv, lv - 1) if 0 <= x < len(sorted_levels)]
        far = [x for x in range(len(sorted_levels) - 1, -1, -1) if x not in near]
        for x in near + far:
            if not len(rest):
                break
            got = key_find(sorted_levels[x], keys[rest])
            hit = got >= 0
            out[rest[hit]] = got[hit] + levels[x]
            rest = rest[~hit]
        if len(rest):
            raise ModelcheckError("the state graph names a state the run did not store "
                                  "(a bug: please report it).")
        return out

    labels = np.ones((n, n_labels), dtype=bool)
    store = EdgeStore(np.uint16 if n_act <= 1 << 16 else np.int32, spill_dir)
    deg = np.zeros(n, dtype=np.int64)
    steps: list[np.ndarray] = []
    try:
        for lv, depth in enumerate(depth_of):
            off = int(levels[lv])
            boff, rank = ranks[lv]
            gd = graph_dir(root, depth)
            names: list[tuple[str, np.ndarray | None]]
            if (gd / "all.src.npy").exists():  # expanded in the driver: rows are ranks
                names = [("all", None)]
            else:
                names = [(f"b{b:04d}", rank[boff[b]:boff[b + 1]]) for b in range(buckets)]
            # the targets the tasks of the next level looked up (t*.pos/lvl/row files):
            # numbered by a gather; the rest are searched (nodes_of)
            node = _resolved(gd, [n for n, _ in names], lv, depth_of, ranks, levels, buckets)
            srcs, acts, dsts, sts = [], [], [], []
            for name, row_rank in names:
                if not (gd / f"{name}.src.npy").exists():
                    raise ModelcheckError(
                        f"the state graph's part {name} of level {depth} is missing from "
                        f"{gd.parent}: the level was not expanded with the temporal "
                        "properties (a bug: please report it).")
                src = _load(gd / f"{name}.src.npy").astype(np.int64)
                lab = _load(gd / f"{name}.lab.npy")
                if row_rank is None:
                    labels[off:off + len(lab)] = lab
                    srcs.append(src + off)
                else:
                    labels[off + row_rank] = lab
                    srcs.append(row_rank[src] + off)
                acts.append(_load(gd / f"{name}.act.npy").astype(np.int64))
                dsts.append(_load(gd / f"{name}.dst.npy"))
                st = _load(gd / f"{name}.step.npy")
                sts.append(st.reshape(len(src), n_steps) if st.size == 0 else st)
            size = int(levels[lv + 1]) - off
            src = np.concatenate(srcs) - off
            act = np.concatenate(acts)
            deg[off:off + size], dest = csr_order(src, act, size, n_act)
            order = np.empty(len(dest), dtype=np.intp)
            order[dest] = np.arange(len(dest), dtype=np.intp)
            del src, dest
            if node is None:
                store.append(nodes_of(lv, np.concatenate(dsts)[order]), act[order])
            else:
                rest = np.flatnonzero(node < 0)
                if len(rest):
                    node[rest] = nodes_of(lv, take_rows(np.concatenate(dsts), rest))
                store.append(node[order], act[order])
            if n_steps:
                steps.append(np.concatenate(sts)[order])
        indptr = np.zeros(n + 1, dtype=np.int32 if store.n <= NODE_LIMIT else np.int64)
        np.cumsum(deg, out=indptr[1:], dtype=indptr.dtype)
        del deg
        dst_all, act_all = store.finish()
    except BaseException:
        store.close()
        raise
    step_all = np.concatenate(steps) if steps else np.ones((store.n, n_steps), dtype=bool)
    return GraphArrays(fps, levels, labels, dst_all, act_all, indptr, step_all, store)
