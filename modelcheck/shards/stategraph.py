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

**While the run goes on.** A level's edges can be read as soon as the job after it has
committed (its targets are then located), so :class:`GraphReader` does it in a thread of
the coordinating process, told of each commit by the run (``ShardedRun.on_commit``):
the coordinator mostly waits for its workers' jobs, and runs the small levels itself
with one core left free. Once the run is over, :func:`read_state_graph` given the
reader reads only what it has not (the same functions, the same order: the same graph).
The reader holds the edges in memory; past the edges a graph keeps in memory it gives
up, and the read after the run does it all (spilled to files).

**What the analysis would otherwise scan the edges for** is collected as each level is
read, as the one-process collector collects it while the run goes on: the edges that do
not go one level up (``GraphArrays.back``, while they are few), per fairness condition
the nodes with a step by its actions (``GraphArrays.enabled``) and the first pass of the
cycle search within the mask the analysis starts from (``GraphArrays.may_cycle``,
:class:`_Follow`; edges in memory only). So the decision after the run (the workers'
cores idle) starts from them.

State keys are one or two ``uint64`` columns, handled by :mod:`modelcheck.store`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ModelcheckError
from ..graphstore import (
    NODE_LIMIT,
    CycleSeeds,
    EdgeStore,
    GrowArray,
    action_set_table,
    back_edge_cap,
    csr_order,
    mark_sets,
    set_columns,
    set_word,
)
from ..store import key_order, take_rows
from .files import _load as load_array
from .files import _rows, graph_dir, level_dir

__all__ = ["GraphArrays", "GraphReader", "read_state_graph"]


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
    #: per set of action ids asked for (``enabled``): the nodes with an edge by one
    #: of them (:attr:`modelcheck.stategraph.StateGraph.enabled_sets`)
    enabled: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)
    #: the edges that do not go one level up, ``(sources, targets)`` (``int32``), or
    #: None when they were too many to keep (:attr:`modelcheck.stategraph.StateGraph.
    #: back`)
    back: tuple[np.ndarray, np.ndarray] | None = None
    #: the first passes of :func:`modelcheck.liveness._may_cycle` followed as the levels
    #: were read (:attr:`modelcheck.stategraph.StateGraph.may_cycle`)
    may_cycle: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


def _load(path: Path) -> np.ndarray:
    return load_array(path, mmap=False)


def _level_parts(root: Path, depth: int, buckets: int) -> list[np.ndarray] | None:
    """The buckets' key files of level ``depth`` (None: no such level)."""
    d = level_dir(root, depth)
    if not (d / "b0000.fp.npy").exists():
        return None
    return [_load(d / f"b{b:04d}.fp.npy") for b in range(buckets)]


def _resolved(gd: Path, parts: list[str], lv: int, kept: _Levels) -> np.ndarray | None:
    """The node of each target of level ``kept.depth_of[lv]``'s edges (its parts
    ``parts``, concatenated), from where the next level's bucket tasks found them
    (:func:`modelcheck.shards.files.write_target_rows`) and each edge's row among its
    task's successors (:func:`modelcheck.shards.files.write_graph_targets`): gathers
    in :attr:`_Levels.nodes`, no search. None when a file is missing (the next level
    was not committed from these parts: never in a complete run)."""
    buckets = kept.buckets
    if not all((gd / f"t{b:04d}.rel.npy").exists() for b in range(buckets)) or \
            not all((gd / f"{p}.cix.npy").exists() for p in parts):
        return None
    depth = kept.depth_of[lv]
    offs = [_load(gd / f"{p}.coff.npy") for p in parts]
    sizes = np.array([np.diff(o) for o in offs], dtype=np.int64)  # (producer, bucket)
    table = kept.nodes.view()
    nodes: list[np.ndarray] = []  # per bucket: the node of each transition into it
    for b in range(buckets):
        rel = _load(gd / f"t{b:04d}.rel.npy")
        row = _load(gd / f"t{b:04d}.row.npy")
        if len(rel) != int(sizes[:, b].sum()):
            raise ModelcheckError(f"the state graph's targets in {gd} do not match its "
                                  "parts (a bug: please report it).")
        # per ``rel`` (the target is in level ``depth + 1 - rel``), where that level's
        # rows of the bucket start in ``table``
        start = np.full(depth + 2, -1, dtype=np.int64)
        for x, d in enumerate(kept.depth_of):
            if d <= depth + 1:
                start[depth + 1 - d] = kept.starts[x] + int(kept.ranks[x][0][b])
        used = np.flatnonzero(np.bincount(rel, minlength=1)) if len(rel) else rel[:0]
        if len(used) and (int(used[-1]) >= len(start) or (start[used] < 0).any()):
            raise ModelcheckError(f"the state graph's targets in {gd} name an empty "
                                  "level (a bug: please report it).")
        at = start[rel]
        at += row
        nodes.append(table[at])
    start_p = np.zeros(buckets, dtype=np.int64)  # per bucket: the next producer's rows
    out = []
    for j, p in enumerate(parts):
        mine = np.concatenate([nodes[b][start_p[b]:start_p[b] + sizes[j, b]]
                               for b in range(buckets)])
        start_p += sizes[j]
        out.append(mine[_load(gd / f"{p}.cix.npy")])
    return np.concatenate(out) if out else np.zeros(0, np.int32)


class _Levels:
    """The levels of a run's state graph ranked so far (:meth:`add`, in depth order):
    per non-empty level its keys sorted, the rank of each bucket row among them and its
    first node."""

    def __init__(self, root: Path, buckets: int) -> None:
        self.root = root
        self.buckets = buckets
        self.sorted: list[np.ndarray] = []
        self.ranks: list[tuple[np.ndarray, np.ndarray]] = []  # bucket offsets, ranks
        self.depth_of: list[int] = []  # per kept level its depth (empty ones left out)
        self.starts: list[int] = [0]  # the first node of each kept level, then the nodes
        self.depths = 0  # levels 0..depths-1 ranked (empty ones too)
        #: per level, per bucket, per row of the bucket's file: its node (the rows of
        #: level ``x``'s bucket ``b`` from ``starts[x] + ranks[x][0][b]`` on)
        self.nodes = GrowArray(np.int32)

    def add(self) -> bool:
        """Rank level :attr:`depths` (False: no such level)."""
        parts = _level_parts(self.root, self.depths, self.buckets)
        if parts is None:
            return False
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        if sizes.sum():
            cat = np.concatenate(parts)
            order = key_order(cat)
            rank = np.empty(len(cat), dtype=np.int64)
            rank[order] = np.arange(len(cat))
            self.sorted.append(take_rows(cat, order))
            self.ranks.append((np.concatenate([[0], np.cumsum(sizes)]), rank))
            self.nodes.append(rank + self.starts[-1])
            self.starts.append(self.starts[-1] + len(cat))
            self.depth_of.append(self.depths)
        self.depths += 1
        return True


#: one level's edges in CSR order, read by :func:`_level_edges`: the out-degree and
#: predicate flags of its nodes, then the targets, action ids and step flags (or None),
#: the edges that do not go one level up (or None) and per node the bits of the action
#: sets that have an edge from it (or None; :func:`_level_extras`)
LevelEdges = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None",
                   "tuple[np.ndarray, np.ndarray] | None", "np.ndarray | None"]

#: the most action sets whose nodes with an edge a read collects (a bit each in a word
#: per node); past that, none (the analysis finds them from the edges)
ENABLED_MAX = 64


def _level_extras(src: np.ndarray, act: np.ndarray, node: np.ndarray | None, off: int,
                  size: int, end: int, n_act: int, enabled: Sequence[tuple[int, ...]],
                  back: bool) -> tuple[tuple[np.ndarray, np.ndarray] | None,
                                       np.ndarray | None]:
    """What the analysis of a level's edges otherwise finds from the edges after the
    run, found while they are read: the edges (sources ``off + src``, targets ``node``,
    actions ``act``, any order; the level's ``size`` nodes from ``off``) whose target
    lies before ``end`` (the next level's first node: the edges that do not go one
    level up, :attr:`modelcheck.stategraph.StateGraph.back`) when ``back``, and per
    node a word whose bit ``j`` says an edge from it is by an action of
    ``enabled[j]`` (:attr:`modelcheck.stategraph.StateGraph.enabled_sets`)."""
    pair = None
    if back:
        if node is None or not len(node):
            pair = (np.zeros(0, np.int32), np.zeros(0, np.int32))
        else:
            b = np.flatnonzero(node < end)
            pair = ((src[b] + off).astype(np.int32), node[b].astype(np.int32))
    bits = None
    if enabled:
        lut = action_set_table(enabled, n_act)
        bits = np.zeros(size, dtype=lut.dtype)
        if len(act):
            mark_sets(bits, src, lut[act])
    return pair, bits


def _level_edges(lv: int, kept: _Levels, n_act: int, n_labels: int, n_steps: int,
                 act_type: np.dtype, into: EdgeStore | None = None,
                 enabled: Sequence[tuple[int, ...]] = (), back: bool = True
                 ) -> LevelEdges:
    """Level ``lv``'s edges in CSR order (``kept`` holds every level their targets may
    lie in: up to the next one): its nodes' out-degrees and predicate flags, the
    targets, action ids and step flags, and :func:`_level_extras` (``enabled``,
    ``back``). ``into``: the targets and action ids are appended there, put in place
    with no copy in between (the arrays returned are empty)."""
    root, buckets = kept.root, kept.buckets
    depth = kept.depth_of[lv]
    off = kept.starts[lv]
    size = kept.starts[lv + 1] - off
    boff, rank = kept.ranks[lv]
    gd = graph_dir(root, depth)
    names: list[tuple[str, np.ndarray | None]]
    if (gd / "all.src.npy").exists():  # expanded in the driver: rows are ranks
        names = [("all", None)]
    else:
        names = [(f"b{b:04d}", rank[boff[b]:boff[b + 1]]) for b in range(buckets)]
    node = _resolved(gd, [n for n, _ in names], lv, kept)
    labels = np.ones((size, n_labels), dtype=bool)
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
            labels[:len(lab)] = lab
            srcs.append(src)
        else:
            labels[row_rank] = lab
            srcs.append(row_rank[src])
        acts.append(_load(gd / f"{name}.act.npy"))
        st = _load(gd / f"{name}.step.npy")
        sts.append(st.reshape(len(src), n_steps) if st.size == 0 else st)
    src = np.concatenate(srcs)
    act = np.concatenate(acts)
    deg, dest = csr_order(src, act, size, n_act)
    extras = _level_extras(src, act, node, off, size, kept.starts[lv + 1], n_act, enabled,
                           back)
    del src
    if node is None and len(dest):
        raise ModelcheckError(
            f"the state graph's level {depth} in {gd.parent} has no record of where "
            "its targets lie: its next level was not committed by the bucket tasks "
            "(a bug: please report it).")
    out_step = None
    if n_steps:
        out_step = np.empty((len(dest), n_steps), dtype=bool)
        out_step[dest] = np.concatenate(sts)
    if into is not None:
        into.append_at(dest, node if node is not None else np.zeros(0, np.int32), act)
        return (deg, labels, np.zeros(0, np.int32), np.zeros(0, act_type), out_step,
                *extras)
    out_dst = np.empty(len(dest), dtype=np.int32)
    if node is not None:
        out_dst[dest] = node
    del node
    out_act = np.empty(len(dest), dtype=act_type)
    out_act[dest] = act
    return deg, labels, out_dst, out_act, out_step, *extras


def _keep(done: list[LevelEdges], e: LevelEdges, n_edges: int) -> None:
    """Append level ``e`` to ``done`` (``n_edges``: the edges stored, its own among
    them), its arrays dropped (in the store); the edges that do not go one level up
    are kept while they hold at most :func:`~modelcheck.graphstore.back_edge_cap`
    bytes (8 bytes each), as the one-process collector keeps them: past that, every
    level's are dropped."""
    e = (e[0], e[1], e[2][:0], e[3][:0], *e[4:])
    if done and done[0][5] is None:
        e = (*e[:5], None, e[6])
    done.append(e)
    if e[5] is None:
        held = None
    else:
        held = sum(d[5][0].nbytes + d[5][1].nbytes for d in done if d[5] is not None)
    if held is None or held > back_edge_cap(n_edges):
        done[:] = [(*d[:5], None, d[6]) for d in done]


def _collecting_back(done: list[LevelEdges]) -> bool:
    """Whether the next levels' edges that do not go one level up are collected."""
    return not done or done[0][5] is not None


def _act_type(n_act: int) -> np.dtype:
    return np.dtype(np.uint16 if n_act <= 1 << 16 else np.int32)


class _Follow:
    """The first passes of :func:`modelcheck.liveness._may_cycle` (no edge mask) that a
    read follows level by level as the levels' edges are stored in memory, as the
    one-process collector does (:class:`modelcheck.graphstore.CycleSeeds`): per mask,
    the column of the state predicate false on it (``columns``; None: every node). It
    stops (the analysis then makes the pass) when the edges are spilled, the edges
    that do not go one level up were dropped, or the edges it keeps take more than
    twice what those may."""

    def __init__(self, columns: Sequence[int | None]) -> None:
        self.seeds: list[CycleSeeds] | None = \
            [CycleSeeds(c) for c in dict.fromkeys(columns)] or None
        self.indptr = GrowArray(np.int64)  # the CSR offsets of the levels stored
        self.indptr.append(np.zeros(1, dtype=np.int64))

    def level(self, kept: _Levels, done: list[LevelEdges], store: EdgeStore) -> None:
        """The last level of ``done`` (level ``len(done) - 1`` of ``kept``) is stored in
        ``store``."""
        if self.seeds is None:
            return
        lv = len(done) - 1
        e = done[lv]
        if store.spilled or e[5] is None:
            self.seeds = None
            return
        at = self.indptr.n
        last = int(self.indptr.view(at - 1)[0])
        self.indptr.extend(len(e[0]))
        out = self.indptr.view(at)
        np.cumsum(e[0], out=out)
        out += last
        starts = kept.starts
        stop = starts[lv + 1]
        end = starts[lv + 2] if lv + 2 < len(starts) else stop
        offsets = np.asarray(starts[:lv + 1], dtype=np.int64)
        indptr, dst = self.indptr.view(), store.dst_view()
        for c in self.seeds:
            c.level(lv, e[1], [e[5]], offsets, stop, end, indptr, dst)
        cap = back_edge_cap(store.n)
        if sum(c.kept_bytes for c in self.seeds) > 2 * cap:
            self.seeds = None

    def finish(self, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The passes' ``(mask, nodes that may lie on a cycle within it)`` once every
        level of the ``n`` nodes was followed (else none)."""
        seeds, self.seeds = self.seeds, None
        if seeds is None or not all(c.complete(n) for c in seeds):
            return []
        return [c.finish() for c in seeds]


def _assemble(kept: _Levels, done: list[LevelEdges], store: EdgeStore,
              n_labels: int, n_steps: int, enabled: Sequence[tuple[int, ...]] = (),
              follow: _Follow | None = None) -> GraphArrays:
    """The graph of the levels ``kept``, whose edges ``done`` holds level by level
    (after :meth:`EdgeStore.append`: their targets and actions are in ``store``), with
    the nodes of the action sets ``enabled`` collected by the read."""
    fps = np.concatenate(kept.sorted) if kept.sorted else np.zeros(0, np.uint64)
    n = len(fps)
    levels = np.asarray(kept.starts, dtype=np.int64)
    labels = np.concatenate([e[1] for e in done]) if done else \
        np.ones((0, n_labels), dtype=bool)
    deg = np.concatenate([e[0] for e in done]) if done else np.zeros(0, np.int64)
    indptr = np.zeros(n + 1, dtype=np.int32 if store.n <= NODE_LIMIT else np.int64)
    np.cumsum(deg, out=indptr[1:], dtype=indptr.dtype)
    steps = [e[4] for e in done if e[4] is not None]
    dst_all, act_all = store.finish()
    step_all = np.concatenate(steps) if steps else np.ones((store.n, n_steps), dtype=bool)
    back = None
    if done and done[0][5] is not None:
        back = (np.concatenate([e[5][0] for e in done]),  # type: ignore[index]
                np.concatenate([e[5][1] for e in done]))  # type: ignore[index]
    elif not done:
        back = (np.zeros(0, np.int32), np.zeros(0, np.int32))
    found: dict[tuple[int, ...], np.ndarray] = {}
    if enabled and all(e[6] is not None for e in done):
        bits = np.concatenate([e[6] for e in done]) if done \
            else np.zeros(0, set_word(len(enabled)))
        found = dict(zip(enabled, set_columns(bits, len(enabled))))
    may = follow.finish(n) if follow is not None else []
    return GraphArrays(fps, levels, labels, dst_all, act_all, indptr, step_all, store,
                       found, back, may)


def _check_nodes(n: int) -> None:
    if n > NODE_LIMIT:
        raise ModelcheckError(f"temporal properties are checked on at most {NODE_LIMIT:,} "
                              "states; this spec has more.")


def read_state_graph(root: Path, buckets: int, n_act: int, n_labels: int, n_steps: int,
                     spill_dir: str | None = None, spill_edges: int = 0, threads: int = 1,
                     ahead: GraphReader | None = None,
                     enabled: Sequence[tuple[int, ...]] = (),
                     cycles: Sequence[int | None] = ()) -> GraphArrays:
    """The state graph of the finished run whose shards directory is ``root`` (see the
    module docstring); ``n_act`` action instances, ``n_labels`` state predicates and
    ``n_steps`` step formulas evaluated by its kernel. The edges go to files under
    ``spill_dir`` (memory-mapped) when there are more than ``spill_edges`` (then the
    levels are read one at a time, else by ``threads`` threads). ``ahead``, a
    :class:`GraphReader` of the run, gives the levels it read while the run went on
    (unless it gave up: then all are read here; made with the same ``enabled``).
    ``enabled``: sets of action ids (at most :data:`ENABLED_MAX`) whose nodes with an
    edge by one of them are collected as the edges are read (``GraphArrays.enabled``);
    the edges that do not go one level up are too (``GraphArrays.back``), and the first
    passes of :func:`modelcheck.liveness._may_cycle` within the masks ``cycles``
    (:class:`_Follow`; ``GraphArrays.may_cycle``)."""
    enabled = tuple(enabled) if len(enabled) <= ENABLED_MAX else ()
    got = ahead.take() if ahead is not None else None
    total = sum(_rows(f) for f in root.glob(f"{graph_dir(root, 0).name[0]}*/*.src.npy"))
    if total <= spill_edges:
        spill_dir = None
    if got is not None:
        kept, done, store, follow = got
        if spill_dir is None:
            return _read_rest(kept, done, store, n_act, n_labels, n_steps, threads, enabled,
                              follow)
        store.close()  # to be spilled: read again, into files
    store = EdgeStore(_act_type(n_act), spill_dir)
    # a graph whose edges are spilled (too large for memory) is read a level at a time
    threads = 1 if spill_dir is not None else threads
    return _read_rest(_Levels(root, buckets), [], store, n_act, n_labels, n_steps, threads,
                      enabled, _Follow(cycles))


def _read_rest(kept: _Levels, done: list[LevelEdges], store: EdgeStore, n_act: int,
               n_labels: int, n_steps: int, threads: int,
               enabled: Sequence[tuple[int, ...]] = (), follow: _Follow | None = None
               ) -> GraphArrays:
    """Rank the levels after those ``kept``, read the edges of the levels after those
    ``done`` (appended to ``store``; ``enabled`` as :func:`read_state_graph`, ``follow``
    told of each) and assemble the graph."""
    try:
        while kept.add():
            pass
        _check_nodes(kept.starts[-1])
        # levels are read by ``threads`` threads (numpy lets go of the GIL in their
        # copies, gathers and sorts), at most ``threads + 1`` levels held at once,
        # and appended in order
        threads = max(1, threads)
        with ThreadPoolExecutor(threads) as pool:
            pending: deque[Future[LevelEdges]] = deque()

            def take_one() -> None:
                e = pending.popleft().result()
                store.append(e[2], e[3])
                _keep(done, e, store.n)
                if follow is not None:
                    follow.level(kept, done, store)

            for lv in range(len(done), len(kept.depth_of)):
                pending.append(pool.submit(_level_edges, lv, kept, n_act, n_labels,
                                           n_steps, store.act_type, None, enabled,
                                           _collecting_back(done)))
                if len(pending) > threads:
                    take_one()
            while pending:
                take_one()
        return _assemble(kept, done, store, n_labels, n_steps, enabled, follow)
    except BaseException:
        store.close()
        raise


class GraphReader:
    """Reads a run's state graph while the run goes on: told each committed level
    (:meth:`committed`), a thread of this process ranks it and reads the edges of the
    level before (whose targets the commit located), into memory, so that once the run
    is over :func:`read_state_graph` (given this reader) reads only the last levels.
    The same graph as a read after the run: the same functions, in the same order. It
    gives up (and the read after the run does it all) past ``spill_edges`` edges, or
    when anything fails (a read after the run reports it). :meth:`close` stops it."""

    def __init__(self, root: Path, buckets: int, n_act: int, n_labels: int, n_steps: int,
                 spill_edges: int, enabled: Sequence[tuple[int, ...]] = (),
                 cycles: Sequence[int | None] = ()) -> None:
        self.n_act, self.n_labels, self.n_steps = n_act, n_labels, n_steps
        #: as :func:`read_state_graph`'s (which is given the same)
        self.enabled = tuple(enabled) if len(enabled) <= ENABLED_MAX else ()
        self.cycles = tuple(cycles)
        self._follow = _Follow(self.cycles)
        self.spill_edges = spill_edges
        self._kept = _Levels(root, buckets)
        self._done: list[LevelEdges] = []
        self._store = EdgeStore(_act_type(n_act))
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(1)
        self._asked = 0  # levels 0.._asked-1 handed to the thread
        self.gave_up = False

    def committed(self, depth: int) -> None:
        """Levels ``0..depth`` are committed (their key files and the targets of the
        levels before them are written): rank them and read the edges of those before."""
        if self._pool is None or self.gave_up:
            return
        while self._asked <= depth:
            self._pool.submit(self._step, self._asked)
            self._asked += 1

    def _step(self, depth: int) -> None:
        if self.gave_up:
            return
        try:
            kept = self._kept
            if kept.depths != depth or not kept.add():
                raise RuntimeError(f"level {depth} is not there to read")
            _check_nodes(kept.starts[-1])
            # the edges of every level before this one: their targets are located
            while len(self._done) < len(kept.depth_of) and \
                    kept.depth_of[len(self._done)] < depth:
                e = _level_edges(len(self._done), kept, self.n_act, self.n_labels,
                                 self.n_steps, self._store.act_type, into=self._store,
                                 enabled=self.enabled, back=_collecting_back(self._done))
                if self._store.n > self.spill_edges:
                    raise RuntimeError("too many edges to hold")
                _keep(self._done, e, self._store.n)
                self._follow.level(kept, self._done, self._store)
        except Exception:  # noqa: BLE001 - the read after the run does it all again
            self._give_up()

    def _give_up(self) -> None:
        self.gave_up = True
        self._done = []
        self._follow = _Follow(())
        self._store.close()
        self._store = EdgeStore(self._store.act_type)

    @property
    def levels_read(self) -> int:
        """Levels whose edges the thread has read so far."""
        return len(self._done)

    def take(self) -> tuple[_Levels, list[LevelEdges], EdgeStore, _Follow] | None:
        """Wait for the thread to read every level it was told of; what it read (None:
        it gave up). The reader is closed."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        if self.gave_up:
            return None
        return self._kept, self._done, self._store, self._follow

    def close(self) -> None:
        """Stop the thread (waiting for the level it reads, dropping the others).
        Idempotent."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
