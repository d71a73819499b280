"""The state graph of a sharded run, read back from the bucket tasks' files.

With temporal properties, every task that expands a bucket's part of a level also
writes that part of the state graph beside the level files
(:func:`modelcheck.shards.files.write_graph_part`, ``shards/E*``): the transitions
that change the state (source row, action id, the target's row among the task's
successors), the values of the step
formulas on them and of the state predicates on the bucket's states. Once the run is
over, :func:`read_state_graph` turns them, in the coordinating process, into the arrays
of the one-process state graph (:class:`modelcheck.stategraph.StateGraph`): nodes in
breadth-first order, each level sorted by key (the order of the one-process explorer's
levels: the same node indices), edges in CSR order (by source, then action id). So the
SCC, fairness and lasso analysis that follows sees the graph the one-process check
builds, and finds the same verdicts and the same lassos.

Level by level: the buckets' sorted key files are merged (the rank of each bucket row in
the level), the level's transitions are read, their sources numbered by those ranks and
their targets by gathers: each transition's row among its task's successors
(:func:`~modelcheck.shards.files.write_graph_targets`) and, for that row, the level and
the row in the bucket's file where the next level's task that de-duplicated it found it
(:func:`~modelcheck.shards.files.write_target_rows`: new in its level, or visited in an
earlier one); no key is searched. The level's edges are put in CSR order and appended to an
:class:`~modelcheck.graphstore.EdgeStore`, which writes them to files and reads them
back memory-mapped when ``spill_dir`` is given. Levels are read by ``threads`` threads
at once (the workers are done: their cores are free), a few levels' transitions in
memory at a time, and per node its key, its place in the sorted copy and its predicate
flags.

State keys are one or two ``uint64`` columns, handled by :mod:`modelcheck.store`.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ModelcheckError
from ..graphstore import NODE_LIMIT, EdgeStore, csr_order
from ..store import key_order, take_rows
from .files import _load as load_array
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
    return load_array(path, mmap=False)


def _level_parts(root: Path, depth: int, buckets: int) -> list[np.ndarray] | None:
    """The buckets' key files of level ``depth`` (None: no such level)."""
    d = level_dir(root, depth)
    if not (d / "b0000.fp.npy").exists():
        return None
    return [_load(d / f"b{b:04d}.fp.npy") for b in range(buckets)]


def _resolved(gd: Path, parts: list[str], lv: int, depth_of: list[int],
              ranks: list[tuple[np.ndarray, np.ndarray]], levels: np.ndarray,
              buckets: int) -> np.ndarray | None:
    """The node of each target of level ``depth_of[lv]``'s edges (its parts ``parts``,
    concatenated), from where the next level's bucket tasks found them
    (:func:`modelcheck.shards.files.write_target_rows`) and each edge's row among its
    task's successors (:func:`modelcheck.shards.files.write_graph_targets`): gathers,
    no search. None when a file is missing (the next level was not committed from
    these parts: never in a complete run)."""
    if not all((gd / f"t{b:04d}.rel.npy").exists() for b in range(buckets)) or \
            not all((gd / f"{p}.cix.npy").exists() for p in parts):
        return None
    at_depth = {d: x for x, d in enumerate(depth_of)}
    depth = depth_of[lv]
    offs = [_load(gd / f"{p}.coff.npy") for p in parts]
    sizes = np.array([np.diff(o) for o in offs], dtype=np.int64)  # (producer, bucket)
    nodes: list[np.ndarray] = []  # per bucket: the node of each transition into it
    for b in range(buckets):
        rel = _load(gd / f"t{b:04d}.rel.npy")
        row = _load(gd / f"t{b:04d}.row.npy")
        if len(rel) != int(sizes[:, b].sum()):
            raise ModelcheckError(f"the state graph's targets in {gd} do not match its "
                                  "parts (a bug: please report it).")
        node = np.empty(len(rel), dtype=np.int32)
        for r in np.flatnonzero(np.bincount(rel, minlength=1)) if len(rel) else ():
            x = at_depth.get(depth + 1 - int(r))
            if x is None:
                raise ModelcheckError(f"the state graph's targets in {gd} name an empty "
                                      "level (a bug: please report it).")
            boff, rank = ranks[x]
            at = np.flatnonzero(rel == r)
            node[at] = rank[row[at].astype(np.int64) + boff[b]] + int(levels[x])
        nodes.append(node)
    start = np.zeros(buckets, dtype=np.int64)  # per bucket: the next producer's rows
    out = []
    for j, p in enumerate(parts):
        mine = np.concatenate([nodes[b][start[b]:start[b] + sizes[j, b]]
                               for b in range(buckets)])
        start += sizes[j]
        out.append(mine[_load(gd / f"{p}.cix.npy")])
    return np.concatenate(out) if out else np.zeros(0, np.int32)


def read_state_graph(root: Path, buckets: int, n_act: int, n_labels: int, n_steps: int,
                     spill_dir: str | None = None, spill_edges: int = 0, threads: int = 1
                     ) -> GraphArrays:
    """The state graph of the finished run whose shards directory is ``root`` (see the
    module docstring); ``n_act`` action instances, ``n_labels`` state predicates and
    ``n_steps`` step formulas evaluated by its kernel. The edges go to files under
    ``spill_dir`` (memory-mapped) when there are more than ``spill_edges`` (then the
    levels are read one at a time, else by ``threads`` threads)."""
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

    labels = np.ones((n, n_labels), dtype=bool)
    deg = np.zeros(n, dtype=np.int64)

    def level_edges(lv: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Level ``lv``'s edges in CSR order: ``(targets, action ids, step flags)``; its
        nodes' out-degrees and predicate flags go to ``deg`` and ``labels`` (the level's
        own slices: the levels are read by several threads at once)."""
        depth = depth_of[lv]
        off = int(levels[lv])
        boff, rank = ranks[lv]
        gd = graph_dir(root, depth)
        names: list[tuple[str, np.ndarray | None]]
        if (gd / "all.src.npy").exists():  # expanded in the driver: rows are ranks
            names = [("all", None)]
        else:
            names = [(f"b{b:04d}", rank[boff[b]:boff[b + 1]]) for b in range(buckets)]
        node = _resolved(gd, [n for n, _ in names], lv, depth_of, ranks, levels, buckets)
        srcs, acts, sts = [], [], []
        for name, row_rank in names:
            if not (gd / f"{name}.src.npy").exists():
                raise ModelcheckError(
                    f"the state graph's part {name} of level {depth} is missing from "
                    f"{gd.parent}: the level was not expanded with the temporal "
                    "properties (a bug: please report it).")
            src = _load(gd / f"{name}.src.npy")
            lab = _load(gd / f"{name}.lab.npy")
            if row_rank is None:
                labels[off:off + len(lab)] = lab
                srcs.append(src)
            else:
                labels[off + row_rank] = lab
                srcs.append(row_rank[src])
            acts.append(_load(gd / f"{name}.act.npy"))
            st = _load(gd / f"{name}.step.npy")
            sts.append(st.reshape(len(src), n_steps) if st.size == 0 else st)
        size = int(levels[lv + 1]) - off
        src = np.concatenate(srcs)
        act = np.concatenate(acts)
        deg[off:off + size], dest = csr_order(src, act, size, n_act)
        del src
        if node is None and len(dest):
            raise ModelcheckError(
                f"the state graph's level {depth} in {gd.parent} has no record of where "
                "its targets lie: its next level was not committed by the bucket tasks "
                "(a bug: please report it).")
        out_dst = np.empty(len(dest), dtype=np.int32)
        if node is not None:
            out_dst[dest] = node
        del node
        out_act = np.empty(len(dest), dtype=store.act_type)
        out_act[dest] = act
        out_step = None
        if n_steps:
            out_step = np.empty((len(dest), n_steps), dtype=bool)
            out_step[dest] = np.concatenate(sts)
        return out_dst, out_act, out_step

    store = EdgeStore(np.uint16 if n_act <= 1 << 16 else np.int32, spill_dir)
    steps: list[np.ndarray] = []
    try:
        # levels are read by ``threads`` threads (numpy lets go of the GIL in their
        # copies, gathers and sorts), at most ``threads + 1`` levels held at once,
        # and appended in order; a graph whose edges are spilled (too large for
        # memory) is read a level at a time
        threads = 1 if spill_dir is not None else max(1, threads)
        with ThreadPoolExecutor(threads) as pool:
            pending: deque[Future[tuple[np.ndarray, np.ndarray, np.ndarray | None]]] = \
                deque()

            def take_one() -> None:
                e_dst, e_act, e_step = pending.popleft().result()
                store.append(e_dst, e_act)
                if e_step is not None:
                    steps.append(e_step)

            for lv in range(len(depth_of)):
                pending.append(pool.submit(level_edges, lv))
                if len(pending) > threads:
                    take_one()
            while pending:
                take_one()
        indptr = np.zeros(n + 1, dtype=np.int32 if store.n <= NODE_LIMIT else np.int64)
        np.cumsum(deg, out=indptr[1:], dtype=indptr.dtype)
        dst_all, act_all = store.finish()
    except BaseException:
        store.close()
        raise
    step_all = np.concatenate(steps) if steps else np.ones((store.n, n_steps), dtype=bool)
    return GraphArrays(fps, levels, labels, dst_all, act_all, indptr, step_all, store)
