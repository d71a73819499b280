"""The state graph of a run: the one state-graph store and its collector.

:class:`GraphCollector` is an observer of the run
(:class:`~modelcheck.run.observers.Observer`, given to the
:class:`~modelcheck.explorer.Explorer`) that is handed every level's states (numbered
in BFS order; one byte a state per state predicate) and every batch's transitions into
stored states as arrays, never a Python object per edge; the memory budget counts what
it holds. The run hands over the targets of a batch's transitions as node indices
per distinct successor, with the de-duplication's inverse (found as it de-duplicates
the batch's successors against the visited states; a new state's once the level is
merged), so the collector looks nothing up. A level's transitions wait as reported
(about 12 bytes an edge) until the next level is known; then, in a worker thread
beside the explorer, each one's target is gathered and they are put in CSR order
(:mod:`modelcheck.graphstore`, which holds the edges); the edges whose target was
stored before are kept apart too (:attr:`StateGraph.back`, for the SCC analysis'
filter by levels), and the levels' keys are copied into one array there. The
:class:`StateGraph` it builds holds 6 bytes an edge (``int32`` target, ``uint16``
action; in memory-mapped files with ``spill_dir``) and about 15 bytes a state
(fingerprint, CSR offset, initial and predicate flags).

Its consumers sit above it and beside each other: liveness
(:mod:`modelcheck.liveness`: fair SCCs and lassos on the graph), the graph export
(:mod:`modelcheck.graph`: ``modelcheck graph``) and through it the web explorer
(:mod:`modelcheck.web`); the graph export and the web explorer do not import liveness
(an import-linter contract in ``pyproject.toml``).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from .errors import UsageError
from .graphstore import (
    NODE_LIMIT,
    CycleSeeds,
    EdgeStore,
    FpIndex,
    GrowArray,
    action_set_table,
    any_per_node,
    back_edge_cap,
    csr_order,
    csr_place,
    edge_chunks,
    mark_sets,
    set_columns,
)
from .kernel import Checks, Expansion, Kernel
from .spec import PredicateDecl, RoleKind, Spec
from .store import empty_keys, key_find, key_ne, take_rows
from .temporal import FairnessCondition

__all__ = ["StateGraph", "GraphCollector", "LivenessError", "in_selection",
           "temporal_kernel", "SMALL_GRAPH"]


class LivenessError(UsageError):
    """Liveness cannot be checked as asked (constraints, symmetry, max depth, ...).

    Defined here, below liveness, because the collector raises it past
    ``graphstore.NODE_LIMIT`` states; :mod:`modelcheck.liveness`
    exports it."""



#: graphs of at most this many nodes and edges get their SCCs (and reversed edges) in
#: plain Python and numpy: importing scipy costs about 0.25 CPU seconds, more than
#: Tarjan's algorithm takes on such a graph, and a small liveness check would pay it
#: (scipy is imported only when a larger SCC analysis needs it)
SMALL_GRAPH = 50_000


# ------------------------------------------------------------------ the graph
@dataclass
class StateGraph:
    """The reachable state graph: nodes are states in BFS order (level by level, each
    level sorted by fingerprint), edges the transitions that change the state
    (self-loops are implicit: every state stutters; a collector with ``stutter`` keeps
    the transitions that do not change the state as edges too), in CSR order: by
    source, then action id. ``dst`` and ``act`` may be memory-mapped files
    (``--spill-dir``)."""

    fps: np.ndarray        # uint64 keys, per node (:mod:`modelcheck.store`)
    initial: np.ndarray    # bool per node
    dst: np.ndarray        # int32 per edge
    act: np.ndarray        # uint16 (int32 past 65,536 instances) action instance id
    indptr: np.ndarray     # CSR: edges of node i are indptr[i]:indptr[i + 1] (int32;
    #                        int64 past 2**31 - 1 edges)
    preds: dict[str, np.ndarray]  # state predicate values per node
    #: step formula values per edge, in CSR order (temporal properties over steps), by
    #: part name
    steps: dict[str, np.ndarray] = field(default_factory=dict)
    #: per set of action ids: the nodes where one of them has a step (computed while
    #: the graph was collected; :meth:`enabled_all` computes the others)
    enabled_sets: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)
    #: the first node of each breadth-first level, then the number of nodes (None: the
    #: nodes are not in BFS order); an edge goes at most one level up
    levels: np.ndarray | None = None
    #: per node its packed state (``uint64`` words, a row a node), when collected
    #: (``GraphCollector(words=True)``; the graph export's and the web explorer's)
    words: np.ndarray | None = None
    #: per node: it lies on a cycle, once computed (by
    #: :func:`modelcheck.liveness.nodes_on_cycles`, which the SCC analysis owns)
    cyclic_nodes: np.ndarray | None = field(default=None, repr=False)
    #: the edges that do not go one level up (``levels``), as ``(sources, targets)``
    #: (``int32``, in no particular order), when collected (an observer's collector
    #: knows them as the run hands them over: a target the run had stored before);
    #: None: found from the levels when needed
    back: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    #: the first pass of :func:`modelcheck.liveness._may_cycle` (no edge mask) as the
    #: collector followed it level by level, as ``(node mask, result)`` pairs: its
    #: nodes that may lie on a cycle within the mask
    may_cycle: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list, repr=False)

    @property
    def n(self) -> int:
        return len(self.fps)

    @property
    def n_edges(self) -> int:
        return len(self.dst)

    @property
    def src(self) -> np.ndarray:
        """The source of every edge (computed: ``int32``, 4 bytes an edge)."""
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.indptr))

    @property
    def edge_bytes(self) -> int:
        """Bytes of the edge arrays (on disk when spilled)."""
        return int(self.dst.nbytes + self.act.nbytes)

    @property
    def nbytes(self) -> int:
        """Bytes held in memory (memory-mapped edge arrays count as none)."""
        edges = 0 if isinstance(self.dst, np.memmap) else self.edge_bytes
        back = 0 if self.back is None else self.back[0].nbytes + self.back[1].nbytes
        return int(self.fps.nbytes + self.initial.nbytes + edges + self.indptr.nbytes
                   + sum(p.nbytes for p in self.preds.values())
                   + sum(p.nbytes for p in self.steps.values()) + back)

    def enabled(self, cond: FairnessCondition) -> np.ndarray:
        """Per node: the condition's action has a step (an edge to another node)."""
        if not cond.guards and cond.action_ids in self.enabled_sets:
            return self.enabled_sets[cond.action_ids]
        out = np.zeros(self.n, dtype=bool)
        for u, v, e0, e1 in edge_chunks(self.indptr):
            if e1 > e0:
                src = None
                if cond.guards:
                    src = np.repeat(np.arange(u, v, dtype=np.int64),
                                    np.diff(self.indptr[u:v + 1]))
                out[u:v] = any_per_node(self.indptr[u:v + 1] - e0,
                                        self.in_cond(cond, self.act[e0:e1], src))
        return out

    def enabled_all(self, conds: Sequence[FairnessCondition]) -> list[np.ndarray]:
        """:meth:`enabled` of each of ``conds``, 64 at a time in one pass over the
        edges (a bit per condition in a per-action table), unless collected."""
        if any(c.guards for c in conds):  # selected by the state: one at a time
            plain = [c for c in conds if not c.guards]
            done = dict(zip(map(id, plain), self.enabled_all(plain)))
            return [done[id(c)] if id(c) in done else self.enabled(c) for c in conds]
        if all(c.action_ids in self.enabled_sets for c in conds):
            return [self.enabled_sets[c.action_ids] for c in conds]
        out: list[np.ndarray] = []
        for i in range(0, len(conds), 64):
            part = conds[i:i + 64]
            top = max(max(c.action_ids) for c in part) + 1  # larger ids: no condition
            lut = action_set_table([c.action_ids for c in part], top + 1)
            bits: np.ndarray = np.zeros(self.n, dtype=lut.dtype)
            for u, v, e0, e1 in edge_chunks(self.indptr):
                if e1 == e0:
                    continue
                a = self.act[e0:e1]
                if top <= np.iinfo(a.dtype).max:
                    a = np.minimum(a, a.dtype.type(top))
                per_edge = lut[a]
                nz = np.flatnonzero(self.indptr[u + 1:v + 1] > self.indptr[u:v])
                bits[u + nz] = np.bitwise_or.reduceat(per_edge, self.indptr[u + nz] - e0)
            out.extend(set_columns(bits, len(part)))
        return out

    def in_cond(self, cond: FairnessCondition, act: np.ndarray | None = None,
                src: np.ndarray | None = None) -> np.ndarray:
        """Per edge (of ``act``, default: all; ``src`` their sources, needed for a
        condition whose action the state selects): its action is one of the
        condition's (selected at its source)."""
        a = self.act if act is None else act
        if len(cond.action_ids) == 1:
            out = np.asarray(a == cond.action_ids[0])
        else:
            out = np.isin(a, np.asarray(cond.action_ids, dtype=a.dtype))
        if cond.guards:
            sources = self.src if src is None else src
            out = in_selection(cond, out, a, sources, self.preds)
        return out


def in_selection(cond: FairnessCondition, hit: np.ndarray, act: np.ndarray, src: np.ndarray,
                 preds: dict[str, np.ndarray]) -> np.ndarray:
    """``hit`` (per edge: its action is one of ``cond``'s) where, for the actions the
    state selects, the guards hold at the edge's source (``preds``: per guard, per node)."""
    hit = hit.copy()
    for a, names in cond.guards:
        at = np.flatnonzero(act == a)
        if len(at):
            ok = np.ones(len(at), dtype=bool)
            for name in names:
                ok &= preds[name][src[at]]
            hit[at] = ok
    return hit


# ------------------------------------------------------------------ the collector
def temporal_kernel(spec: Spec, parts: Sequence[Any]) -> tuple[Kernel, list[str], list[str]]:
    """A kernel evaluating the state and step formulas among ``parts`` (the parts of
    temporal properties) on every state and transition as its labels
    (:class:`~modelcheck.kernel.Checks`: nothing checked, no deadlock check) with no
    symmetry reduction, and the names of the state and of the step formulas in order."""
    state_parts = tuple(p for p in parts if p.kind is not RoleKind.ACTION)
    step_parts = tuple(p for p in parts if p.kind is RoleKind.ACTION)
    kernel = Kernel(spec, checks=Checks(check_deadlock=False, labels=state_parts,
                                        step_labels=step_parts), symmetry=False,
                    view=False)
    return kernel, [p.name for p in state_parts], [p.name for p in step_parts]


class GraphCollector:
    """Collects the state graph of a run with the values of the state predicates
    ``parts`` (invariant-like declarations) on every stored state and of the step
    formulas among them (``kind`` ``RoleKind.ACTION``) on every transition; the transitions
    where a step formula is false are kept as (source node, action) keys (an action
    instance has at most one successor), turned into one boolean per edge in CSR
    order by :meth:`graph` (kept in memory, also when the edges are spilled).

    With ``observer`` it is an observer of the run
    (:class:`~modelcheck.run.observers.Observer`, given to the
    :class:`~modelcheck.explorer.Explorer`): the run's kernel evaluates the parts (its
    ``labels`` and ``step_labels``), :meth:`on_batch` takes them with the batch's
    transitions and :meth:`on_edges` their targets' node indices, as the run found
    them (a new state's row in the next level comes with :meth:`on_new_states`).
    Without, it takes the explorer's ``on_level`` and ``on_transitions`` hooks,
    evaluates the parts itself (each level once more, expanded again when there are
    step formulas) and looks the targets' fingerprints up (the tests' oracle).

    Nodes are numbered in BFS order (level by level, each level sorted by
    fingerprint). The transitions of a level (sources in it) are held as the engine
    reports them until the next level is known. Then they are put in CSR order (by
    source, then action). An observer's targets are node indices already (a new
    state's filled in from its row in the next level), and each batch's
    transitions are written straight to their places in the
    :class:`~modelcheck.graphstore.EdgeStore`'s arrays
    (:func:`~modelcheck.graphstore.csr_place`). The hooks' targets, which lie in the
    next level or an earlier one, are looked up in the indexes of the last three
    levels (cache-sized :class:`~modelcheck.graphstore.FpIndex`), a target further
    back at the end, and placed by :func:`~modelcheck.graphstore.csr_order`. The edge
    store holds 6 bytes an edge (``int32`` target, ``uint16`` action; in files under
    ``spill_dir``). The source of an edge is its place: the CSR offsets (4 bytes a
    node).

    With ``enabled`` (the action-id sets of fairness conditions, 64 at most) the
    nodes where one of a set's actions has a step are marked level by level, a bit per
    set (:attr:`StateGraph.enabled_sets`).

    With ``may_cycle`` (an observer's, edges in memory; the masks by state predicate
    name, None for every node) each level's job also follows the first pass of
    :func:`modelcheck.liveness._may_cycle` over the mask (:class:`CycleSeeds`), so that
    the analysis after the run starts from it (:attr:`StateGraph.may_cycle`).

    With ``background`` this work on a level runs in a worker thread while the
    explorer expands the next level (numpy releases the GIL in it), one level at a
    time and in level order: the graph is the same.

    With ``words`` every node's packed state is kept (:attr:`StateGraph.words`), and
    with ``stutter`` the transitions that do not change the state are edges too: the
    whole graph of the run, as ``modelcheck graph`` writes it and the web explorer
    shows it (:mod:`modelcheck.graph`)."""

    def __init__(self, spec: Spec, parts: Sequence[Any], batch_size: int,
                 spill_dir: str | None = None, background: bool = True,
                 observer: bool = False, enabled: Sequence[tuple[int, ...]] = (),
                 words: bool = False, stutter: bool = False,
                 may_cycle: Sequence[str | None] = ()) -> None:
        #: an observer of the run (:class:`~modelcheck.run.observers.Observer`): the
        #: run's kernel evaluates the parts (``labels``, ``step_labels``) and
        #: :meth:`on_batch` records them; else :meth:`on_level` evaluates them
        self.observer = observer
        self.labels: tuple[PredicateDecl, ...] = tuple(p for p in parts
                                                       if p.kind is not RoleKind.ACTION)
        self.step_labels: tuple[PredicateDecl, ...] = tuple(p for p in parts
                                                            if p.kind is RoleKind.ACTION)
        self.kernel: Kernel | None = None
        if observer:
            self.names = [p.name for p in self.labels]
            self.step_names = [p.name for p in self.step_labels]
        else:
            self.kernel, self.names, self.step_names = temporal_kernel(spec, parts)
        self._level_bits: np.ndarray | None = None  # the labels of the level expanded
        self._level_base = 0  # its first node
        self._step_false_bytes = 0
        #: per step formula: the (source node * actions + action) keys of the
        #: transitions where it is false
        self._step_false: list[list[np.ndarray]] = [[] for _ in self.step_names]
        self.batch_size = max(2, batch_size)
        self.n_act = len(spec.actions)
        act_type = np.uint16 if self.n_act <= 1 << 16 else np.int32
        self.edges = EdgeStore(act_type, spill_dir)
        self._fps: list[np.ndarray] = []  # per level (the explorer's arrays)
        #: an observer's one-column keys of every level so far, in one array (written by
        #: the level jobs, so that the graph's are not concatenated at the end); None
        #: for two-column keys
        self._all_fps: GrowArray | None = GrowArray(np.uint64) if observer else None
        #: the keys' ``uint64`` columns: the run's kernel's (under a view, sized by the
        #: view), taken from the first level's keys; the state's until then
        self.key_width = spec.layout.key_width
        #: per level its packed states (with ``words``), else None
        self._words: list[np.ndarray] | None = [] if words else None
        self._n_words = spec.layout.n_words
        self.stutter = stutter
        self._bits: list[np.ndarray] = []
        #: the CSR offsets of the nodes of the levels stored so far (and the end of the
        #: last one's edges), appended by each level's job: ``int32`` until the edges pass
        #: ``NODE_LIMIT``
        self._indptr = GrowArray(np.int32)
        self._indptr.append(np.zeros(1, dtype=np.int32))
        #: the action-id sets whose enabled nodes are collected (64 at most, a bit each
        #: in a per-action table), and per level a word per node
        self._en_sets = list(dict.fromkeys(tuple(ids) for ids in enabled))
        self._en_lut: np.ndarray | None = None
        if 0 < len(self._en_sets) <= 64:
            self._en_lut = action_set_table(self._en_sets, max(1, self.n_act))
        self._en: list[np.ndarray] = []
        self._index: dict[int, FpIndex] = {}
        self._n_init = 0
        self._n = 0
        #: the transitions of the level being expanded, as the engine reports them
        #: (children's fingerprints) or, for an observer, as the run numbered their
        #: targets (node indices, or -1 - j for the level's new candidate j)
        self._raw: list[_Raw] = []
        self._raw_bytes = 0
        self._batch: tuple[np.ndarray, np.ndarray] | None = None  # awaiting on_edges
        self._offsets: list[int] = []  # per level: its first node
        #: per level expanded (an observer's): the row in the next level of each new
        #: candidate
        self._new_rows: np.ndarray | None = None
        self._far: list[np.ndarray] = []  # target fps not in the last three levels
        #: an observer's edges that do not go one level up, as (source, target) node
        #: pairs (:attr:`StateGraph.back`), while they are few
        #: (:func:`~modelcheck.graphstore.back_edge_cap`; past it, None: found from the
        #: levels)
        self._back: list[tuple[np.ndarray, np.ndarray]] | None = [] if observer else None
        self._back_bytes = 0
        #: the first pass of the nodes that may lie on a cycle, followed level by level
        #: (an observer's, edges in memory): per mask of ``may_cycle``
        self._cycles: list[CycleSeeds] | None = None
        if observer and spill_dir is None and not stutter and may_cycle:
            self._cycles = [CycleSeeds(None if name is None else self.names.index(name))
                            for name in dict.fromkeys(may_cycle)
                            if name is None or name in self.names]
        self.peak_pending_bytes = 0
        self._worker = (ThreadPoolExecutor(1, thread_name_prefix="liveness-graph")
                        if background else None)
        self._job: Future[None] | None = None
        self._job_bytes = 0  # held by the transitions the job works on

    def _wait(self) -> None:
        """Wait for the background job (and raise what it raised)."""
        job, self._job = self._job, None
        if job is not None:
            job.result()
        self._job_bytes = 0

    def on_level(self, depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        """Level ``depth``'s states (before it is expanded): they become the next
        nodes, and the transitions of the level before are stored (in the
        background). Unless an observer of the run, the state predicates (and the
        step formulas, by expanding the level) are evaluated on them here."""
        if depth == 0:
            self._n_init = len(fps)
            self.key_width = 1 if np.ndim(fps) == 1 else 2
        bits = np.ones((len(fps), len(self.names)), dtype=bool)
        self._level_bits, self._level_base = bits, self._n
        if self.kernel is not None:
            for start in range(0, len(fps), self.batch_size):
                ex = self.kernel.expand(words[start:start + self.batch_size],
                                        expand=bool(self.step_names))
                self._labels(bits, start, ex.label_rows, ex.step_label_hits)
        if self._n + len(fps) > NODE_LIMIT:
            raise LivenessError(f"temporal properties are checked on at most {NODE_LIMIT:,} "
                                f"states; this spec has more.")
        self._wait()
        self._offsets.append(self._n)  # (before the job, which reads it)
        level = np.asarray(fps, dtype=np.uint64)
        raw, self._raw = self._raw, []
        new_rows, self._new_rows = self._new_rows, None
        self._job_bytes, self._raw_bytes = self._raw_bytes, 0
        job = partial(self._level_job, depth, level, self._n, raw, new_rows)
        if self._worker is None:
            job()
        else:
            self._job = self._worker.submit(job)
        self._n += len(fps)
        self._fps.append(level)
        self._bits.append(bits)
        if self._words is not None:
            self._words.append(np.array(words, dtype=np.uint64).reshape(len(fps),
                                                                        self._n_words))

    def _labels(self, bits: np.ndarray, start: int, label_rows: Sequence[np.ndarray],
                step_hits: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        """Record a batch's labels (rows ``start..`` of the level whose node flags are
        ``bits``): the rows where each state predicate is false, and the transitions
        where each step formula is false as (source node, action) keys."""
        for j, rows in enumerate(label_rows):
            bits[start + rows, j] = False
        for j, (rows, ids, _fps) in enumerate(step_hits):
            if len(rows):
                node = (rows + start + self._level_base).astype(np.int64)
                keys = node * self.n_act + ids
                self._step_false[j].append(keys)
                self._step_false_bytes += keys.nbytes

    def on_batch(self, start: int, ex: Expansion) -> None:
        """A batch of the level's expansion by the run (the observer's hook): its
        labels, and its transitions into stored states."""
        assert self._level_bits is not None, "on_level comes first"
        self._labels(self._level_bits, start, ex.label_rows, ex.step_label_hits)
        if len(ex.child_fps):
            # (one pass each: the rows are computed in their type, not cast afterwards)
            self._batch = (np.add(ex.parent_rows, start, dtype=np.int32),
                           ex.action_ids.astype(self.edges.act_type))

    def on_edges(self, targets: np.ndarray, inverse: np.ndarray) -> None:
        """The node indices of the targets of the batch :meth:`on_batch` took last, per
        distinct successor, and per transition its successor's (the observer's hook:
        see :meth:`~modelcheck.run.observers.Observer.on_edges`); each transition's
        target is gathered by the worker thread."""
        assert self._batch is not None and len(self._batch[0]) == len(inverse)
        rows, acts = self._batch
        self._batch = None
        self._pending(rows, acts, targets.astype(np.int32, copy=False), inverse)

    def on_new_states(self, depth: int, rows: np.ndarray) -> None:
        """The rows of level ``depth``'s new candidates in the next level (the observer's
        hook)."""
        self._new_rows = rows.astype(np.int32, copy=False)
        self._raw_bytes += self._new_rows.nbytes

    def nbytes(self) -> int:
        """Bytes held in memory: the nodes' fingerprints, flags and degrees, the edges
        (unless spilled), the transitions waiting for their level, the step formulas'
        false keys and the indexes of the last levels (the memory budget counts them)."""
        all_fps = self._all_fps
        nodes = sum(f.nbytes for f in self._fps) + sum(b.nbytes for b in self._bits) + \
            (0 if all_fps is None else all_fps.nbytes) + \
            self._indptr.nbytes + sum(f.nbytes for f in self._far) + \
            sum(e.nbytes for e in self._en) + sum(w.nbytes for w in self._words or ()) + \
            self._back_bytes + sum(c.nbytes for c in self._cycles or ())
        index = sum(ix.nbytes for ix in list(self._index.values()))
        return int(nodes + index + self.edges.nbytes + self._raw_bytes + self._job_bytes
                   + self._step_false_bytes)

    def on_transitions(self, rows: np.ndarray, acts: np.ndarray, children: np.ndarray
                       ) -> None:
        """A batch's transitions into stored states, the children by fingerprint (the
        explorer's ``on_transitions`` hook; not for an observer)."""
        self._pending(rows.astype(np.int32), acts.astype(self.edges.act_type), children)

    def _pending(self, rows: np.ndarray, acts: np.ndarray, targets: np.ndarray,
                 inverse: np.ndarray | None = None) -> None:
        self._raw.append((rows, acts, targets, inverse))
        self._raw_bytes += rows.nbytes + acts.nbytes + targets.nbytes + \
            (0 if inverse is None else inverse.nbytes)
        self.peak_pending_bytes = max(self.peak_pending_bytes,
                                      self._raw_bytes + self._job_bytes)

    def _level_job(self, depth: int, fps: np.ndarray, offset: int,
                   raw: list[_Raw],
                   new_rows: np.ndarray | None) -> None:
        """Index level ``depth`` (nodes from ``offset`` on; an observer's targets need no
        index) and store the transitions ``raw`` of the level before (the background
        job)."""
        if not self.observer:
            self._index[depth] = FpIndex(fps, offset)
        if self._all_fps is not None:
            if fps.ndim == 1 and self._all_fps.n == offset:
                self._all_fps.append(fps)
            else:
                self._all_fps = None
        if depth > 0:
            self._store(depth - 1, raw, new_rows, offset + len(fps))
        self._index.pop(depth - 3, None)

    def _observed_nodes(self, depth: int, targets: np.ndarray, new_rows: np.ndarray | None
                        ) -> np.ndarray:
        """An observer's targets of a batch's transitions from level ``depth`` (per
        distinct successor) as node indices: the run's node indices, or -1 - j for the
        level's new candidate j, whose node is the next level's first plus
        ``new_rows[j]`` (numbered in place: the run's array is held for this level
        alone). When most are new, all are computed at once (a gather of every
        target's clipped candidate and a masked copy: no index arrays)."""
        new = targets < 0
        k = int(np.count_nonzero(new))
        if not k:
            return targets
        assert new_rows is not None, "the new candidates' rows come first"
        first = np.int32(self._offsets[depth + 1])
        if 4 * k < len(targets):  # few new: those alone
            at = np.flatnonzero(new)
            targets[at] = new_rows[-1 - targets[at]] + first
            return targets
        j = np.invert(targets)  # -1 - target: the candidate (< 0 for the others)
        np.maximum(j, 0, out=j)
        got = new_rows[j]
        got += first
        np.copyto(targets, got, where=new)
        return targets

    def _nodes(self, depth: int, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(nodes, far)`` of a batch's transitions from level ``depth`` (targets by
        fingerprint): their targets' node indices, and the positions whose targets are
        further back than the indexed levels (-1 in ``nodes``, looked up at the end)."""
        window = [self._index[d] for d in (depth + 1, depth, depth - 1) if d in self._index]
        found = window[0].find(targets)
        miss = np.flatnonzero(found < 0)
        for ix in window[1:]:
            if not len(miss):
                break
            got = ix.find(targets[miss])
            found[miss] = got
            miss = miss[got < 0]
        return found, miss

    def _store(self, depth: int, raw: list[_Raw],
               new_rows: np.ndarray | None = None, end: int | None = None) -> None:
        """The transitions ``raw`` of level ``depth``, batch by batch, in CSR order with
        their targets' node indices, to the edge store (and the sources' degrees); ``end``:
        the nodes known (to the end of the next level; default: to this one's)."""
        cycles = self._cycles
        level_back: list[tuple[np.ndarray, np.ndarray]] = []
        level = self._fps[depth]
        base = self._offsets[depth]
        deg = np.zeros(len(level), dtype=np.int32)
        lut = self._en_lut
        en = None if lut is None else np.zeros(len(level), dtype=lut.dtype)
        row = 0  # the first row of the level that later batches may hold
        for rows, acts, children, inverse in raw:
            miss: np.ndarray | None = None
            if self.observer:  # the run's node indices: none unknown
                assert inverse is not None
                # a target stored before the next level: an edge not one level up
                old = (children >= 0)[inverse] \
                    if self._back is not None or cycles is not None else None
                # the distinct successors' nodes, then each transition's
                found = self._observed_nodes(depth, children, new_rows)[inverse]
                del inverse
                if not self.stutter:  # a step that changes the state
                    keep = found != rows + np.int32(base)
                    if not keep.all():
                        rows, acts, found = rows[keep], acts[keep], found[keep]
                        if old is not None:
                            old = old[keep]
                    del keep
                if old is not None:
                    back = np.flatnonzero(old)
                    if len(back):
                        pair = (rows[back] + np.int32(base), found[back])
                        level_back.append(pair)
                        if self._back is not None:
                            self._back.append(pair)
                            self._back_bytes += pair[0].nbytes + pair[1].nbytes
                    del old, back
            else:
                found, miss = self._nodes(depth, children)
                if not self.stutter:
                    keep = key_ne(take_rows(level, rows), children)
                    if not keep.all():
                        rows, acts, found = rows[keep], acts[keep], found[keep]
                        children = take_rows(children, keep)
                        miss = np.flatnonzero(found < 0)
            if not len(rows):
                continue
            lo, hi = int(rows.min()), int(rows.max()) + 1
            assert lo >= row, "batches come in level order"
            row = hi
            sets = None if en is None or lut is None else (en[lo:hi], lut)
            if miss is None:  # every target known: put in place in the store
                m = len(rows)
                spilled = self.edges.spilled
                dst_out, act_out = (np.empty(m, dtype=np.int32),
                                    np.empty(m, dtype=self.edges.act_type)) if spilled \
                    else self.edges.slots(m)
                deg[lo:hi] += csr_place(rows - lo, acts, found, hi - lo, self.n_act,
                                        dst_out, act_out, sets)
                if spilled:
                    self.edges.append(dst_out, act_out)
                continue
            d, dest = csr_order(rows - lo, acts, hi - lo, self.n_act)
            deg[lo:hi] += d
            if sets is not None:
                mark_sets(sets[0], rows - lo, sets[1][acts])
            if len(miss):  # in CSR order, the order in which they are patched at the end
                self._far.append(children[miss[np.argsort(dest[miss])]])
            self.edges.append_at(dest, found, acts)
        self._append_offsets(deg)
        if en is not None:
            self._en.append(en)
        cap = back_edge_cap(self.edges.n)
        if self._back is not None and self._back_bytes > cap:
            self._back, self._back_bytes = None, 0  # many: found from the levels
        if cycles is not None:
            bits = self._bits[depth]
            offsets = np.asarray(self._offsets, dtype=np.int64)
            indptr, dst = self._indptr.view(), self.edges.dst_view()
            for c in cycles:
                c.level(depth, bits, level_back, offsets, base + len(level),
                        base + len(level) if end is None else end, indptr, dst)
            if sum(c.kept_bytes for c in cycles) > 2 * cap:  # many: left to the analysis
                self._cycles = None

    def _append_offsets(self, deg: np.ndarray) -> None:
        """Append the CSR offsets of a level's nodes (their out-degrees ``deg``) to
        :attr:`_indptr`, widened to ``int64`` once the edges pass ``NODE_LIMIT``."""
        ends = self._indptr
        last = int(ends.view(ends.n - 1)[0])
        if last + int(deg.sum()) > NODE_LIMIT and ends.view().dtype != np.int64:
            wide = GrowArray(np.int64)
            wide.append(ends.view())
            self._indptr = ends = wide
        at = ends.n
        ends.extend(len(deg))
        out = ends.view(at)
        np.cumsum(deg, out=out, dtype=out.dtype)
        out += out.dtype.type(last)

    def graph(self) -> StateGraph:
        """The collected graph, with node indices (frees the collected arrays)."""
        self._wait()
        raw, self._raw = self._raw, []
        if self._fps:
            self._store(len(self._fps) - 1, raw, self._new_rows)
        self._new_rows = None
        n_nodes = sum(len(f) for f in self._fps)
        cycles, self._cycles = self._cycles or [], None
        # the followed first passes go down in the worker thread while the rest is built
        finish = partial(_finish_cycles, [c for c in cycles if c.complete(n_nodes)])
        hints_job = None if self._worker is None else self._worker.submit(finish)
        del raw, cycles
        self._index = {}
        all_fps, self._all_fps = self._all_fps, None
        n = sum(len(f) for f in self._fps)
        if all_fps is not None and all_fps.n == n and n:
            fps = all_fps.finish()  # (one-column keys, every level's)
        else:
            fps = np.concatenate(self._fps) if self._fps else empty_keys(self.key_width)
        del all_fps
        bits = np.concatenate(self._bits) if self._bits else np.zeros((0, len(self.names)), bool)
        self._bits = []
        initial = np.zeros(len(fps), dtype=bool)
        initial[:self._n_init] = True
        far = np.concatenate(self._far) if self._far else empty_keys(self.key_width)
        self._far = []
        offsets, self._indptr = self._indptr, GrowArray(np.int32)
        assert offsets.n == len(fps) + 1, "every level's edges are stored"
        indptr = offsets.finish()
        del offsets
        enabled_sets: dict[tuple[int, ...], np.ndarray] = {}
        if self._en_lut is not None:
            en = np.concatenate(self._en) if self._en else np.zeros(0, self._en_lut.dtype)
            self._en = []
            if len(en) == len(fps):
                enabled_sets = dict(zip(self._en_sets, set_columns(en, len(self._en_sets))))
            del en
        if len(far):  # targets further back than the level before
            got = self._find_far(far, fps)
            assert (got >= 0).all(), "every target is a state"
            where = self.edges.patch_unknown(lambda where: got)
            assert len(where) == len(far)
        dst, act = self.edges.finish()
        self._fps = []
        preds = {name: np.ascontiguousarray(bits[:, j]) for j, name in enumerate(self.names)}
        steps = {name: self._step_values(false, indptr, act)
                 for name, false in zip(self.step_names, self._step_false)}
        self._step_false = []
        levels = np.array([*self._offsets, len(fps)], dtype=np.int64)
        self._offsets = []
        words = None
        if self._words is not None:
            words = (np.concatenate(self._words) if self._words
                     else np.zeros((0, self._n_words), dtype=np.uint64))
            self._words = []
        back = None
        if self._back is not None:
            back = (np.concatenate([b[0] for b in self._back]) if self._back
                    else np.zeros(0, dtype=np.int32),
                    np.concatenate([b[1] for b in self._back]) if self._back
                    else np.zeros(0, dtype=np.int32))
            self._back, self._back_bytes = [], 0
        hints = finish() if hints_job is None else hints_job.result()
        self._shutdown()
        return StateGraph(fps, initial, dst, act, indptr, preds, steps, enabled_sets, levels,
                          words, back=back, may_cycle=hints)

    def _step_values(self, false: list[np.ndarray], indptr: np.ndarray, act: np.ndarray
                     ) -> np.ndarray:
        """Per edge (CSR order): the step formula holds, i.e. its (source node,
        action) key is not among ``false``. The keys are computed from the CSR
        positions, a chunk of edges at a time."""
        bad = _sorted_distinct(false)
        out = np.ones(len(act), dtype=bool)
        if not len(bad):
            return out
        for u, v, e0, e1 in edge_chunks(indptr):
            if e1 == e0:
                continue
            keys = np.repeat(np.arange(u, v, dtype=np.int64), np.diff(indptr[u:v + 1]))
            keys *= self.n_act
            keys += act[e0:e1]
            pos = np.minimum(np.searchsorted(bad, keys), len(bad) - 1)
            out[e0:e1] = bad[pos] != keys
        return out

    def _find_far(self, far: np.ndarray, fps: np.ndarray) -> np.ndarray:
        """Nodes of the fingerprints ``far`` (few, usually): each level's sorted
        fingerprints are searched, the most recent first; past a few searches per
        state, one index of all states is built instead."""
        sizes = [len(f) for f in self._fps]
        if len(far) * len(sizes) > len(fps):
            return FpIndex(fps).find(far)
        out = np.full(len(far), -1, dtype=np.int32)
        rest = np.arange(len(far))
        end = len(fps)
        for level in reversed(self._fps):
            start = end - len(level)
            if len(rest) and len(level):
                pos = key_find(level, far[rest])
                hit = pos >= 0
                out[rest[hit]] = pos[hit] + start
                rest = rest[~hit]
            end = start
        return out

    def _shutdown(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    def close(self) -> None:
        """Drop what is held (and the spilled edge files). A failure of the background
        job is not raised here: the run ended already."""
        self._job = None
        self._shutdown()  # (waits for the job)
        self._raw, self._far, self._index = [], [], {}
        self._back, self._back_bytes = None, 0
        self._cycles = None
        self._all_fps = None
        if self._words is not None:
            self._words = []
        self.edges.close()


def _finish_cycles(cycles: list[CycleSeeds]) -> list[tuple[np.ndarray, np.ndarray]]:
    """:meth:`CycleSeeds.finish` of each of ``cycles``."""
    return [c.finish() for c in cycles]


#: a batch's transitions as reported: source rows, actions, targets (fingerprints; an
#: observer's node indices per distinct successor) and an observer's inverse (per
#: transition its target's index among those)
_Raw = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


def _sorted_distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct keys of ``parts``, sorted: one in-place sort of their concatenation
    (``np.unique`` of tens of millions of keys takes many times longer: it hashes
    them first, then sorts)."""
    if not parts:
        return np.zeros(0, dtype=np.int64)
    keys = np.concatenate(parts)
    keys.sort()
    if len(keys) > 1:
        new = np.empty(len(keys), dtype=bool)
        new[0] = True
        np.not_equal(keys[1:], keys[:-1], out=new[1:])
        if not new.all():
            keys = keys[new]
    return keys
