"""Liveness: temporal properties under weak and strong fairness, with lasso counterexamples.

This module owns checking the temporal properties of :mod:`modelcheck.temporal`.
:func:`check_liveness` runs the local explorer (so the invariants, action properties
and deadlocks are checked as usual, and decide first) with the state graph's collector
(:class:`GraphCollector`) as an observer of that one run
(:class:`~modelcheck.run.observers.Observer`): the run's kernel evaluates the
properties' state predicates on every state and their step formulas on every
transition it generates, alongside the invariants (its
:class:`~modelcheck.kernel.Checks` labels; no level is evaluated or expanded twice),
and hands the collector every level's states (numbered in BFS order; one byte a state
per predicate) and every batch's transitions into stored states as arrays, never a
Python object per edge; the memory budget counts what the collector holds. The run
hands over each transition's target as a node index (found as it de-duplicates the
batch's successors against the visited states; a new state's once the level is merged),
so the collector looks nothing up. A level's transitions wait as reported (10 bytes an
edge) until the next level is known; then, in a worker thread beside the explorer,
they are put in CSR order (:mod:`modelcheck.graphstore`). The graph holds 6 bytes an
edge (``int32`` target, ``uint16`` action; in memory-mapped files with ``spill_dir``)
and about 15 bytes a state (fingerprint, CSR offset, initial and predicate flags);
deciding a property copies the targets of the edges within its subgraph (4 bytes an
edge kept) for the SCC routine.

**Semantics (TLA+/TLC).** Behaviours are infinite and every state may stutter, so
every node has an implicit stuttering self-loop, a state without enabled actions
stutters forever, and a step (or an action's transition) that does not change the
state never satisfies fairness. An action is *enabled* at a node when it has an edge
to a different node. Per property, with the subgraph H of the states named:

* ``[]<>P`` is violated iff a fair cycle lies within the ``~P`` states;
* ``<>[]P`` iff a fair cycle contains a ``~P`` state;
* ``<>P`` iff from an initial ``~P`` state a path within ``~P`` reaches a fair cycle
  within ``~P``;
* ``P ~> Q`` iff from a reachable ``P /\\ ~Q`` state a path within ``~Q`` reaches a
  fair cycle within ``~Q``.

Over steps (a step formula ``A``, :mod:`modelcheck.temporal`), the behaviour must avoid
``A`` steps instead: the edges where ``A`` is false replace the ``~P`` states (paths
and cycles take only them), and a single node is a cycle (stuttering forever) only
where its stuttering step is not an ``A`` step. ``A`` is evaluated on every edge (by
the run's kernel, as action properties are, on the transitions the run generates)
and on each node's stuttering step (as a state predicate of ``s``, ``s``).
One boolean an edge per step formula, in CSR order, held in memory (also with
``--spill-dir``).

**Fair cycles** by strongly connected components (``scipy.sparse.csgraph``): an SCC C
satisfies ``WF(A)`` iff an A-step lies inside C or A is disabled at some node of C (if
not, no cycle inside C is fair: C is dropped); ``SF(A)`` iff an A-step lies inside C or
A is disabled at every node of C (if not, the nodes of C where A is enabled are removed
and the rest is split into SCCs again: Emerson-Lei refinement). The nodes left in
fair SCCs are exactly the nodes on fair cycles. A node alone in its SCC is fair iff no
condition's action is enabled there; with several properties, one SCC pass over the
whole graph leaves out the nodes on no cycle before each property's. The SCC routine
only sees the nodes that may lie on a cycle by the BFS levels (a cycle takes an edge
that does not climb one level; :func:`_may_cycle`), on a copy numbered compactly.

**Counterexamples** are lassos: the shortest prefix from an initial state (for ``~>``:
to the nearest ``P /\\ ~Q`` state, then the shortest path within ``~Q`` to a fair SCC),
then a cycle inside the SCC through an edge that takes, or a node that disables, each
fairness condition, back to its start (no step at all when the start alone does: the
behaviour stutters there). States are rebuilt by replaying the spec's actions with the
scalar evaluator, and why each fairness condition holds on the loop is computed on the
replayed states.

**Sharded runs** (``modelcheck check --workers N``, :func:`check_liveness_workers`;
``modelcheck spark`` with the shards engine): the bucket tasks evaluate the same state
and step formulas and write their parts of the state graph beside the level files;
:class:`ShardedLiveness` reads the graph back in the coordinating process, with the
nodes and edges of the one-process graph in its order, and decides it as above.

Refused: state and action constraints (TLC warns that liveness with ``CONSTRAINT`` may be
unsound: cut-off states would stutter forever), symmetry reduction unless switched off
(unsound for liveness, as TLC warns), ``--max-depth`` and checkpoints.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np

from .config import CheckConfig
from .errors import SpecEvaluationError, UsageError
from .explorer import Explorer, Progress
from .fairness import Fairness
from .graphstore import (
    NODE_LIMIT,
    EdgeStore,
    FpIndex,
    any_per_node,
    csr_order,
    edge_chunks,
    parallel_in_rows,
    restrict,
)
from .kernel import Checks, Expansion, Kernel, format_state
from .library import Library
from .library import lookup as library_lookup
from .result import Result, Status, TraceStep, Violation, ViolationKind
from .spec import PredicateDecl, RoleKind, Spec
from .store import empty_keys, key_find, key_int, key_ne, key_unique, take_rows
from .temporal import FairnessCondition, TemporalDecl, fairness_conditions, graph_parts

__all__ = ["check_liveness", "check_liveness_workers", "ShardedLiveness", "split_checks",
           "refuse_liveness", "StateGraph", "WalkLiveness", "lasso_violation",
           "GraphCollector", "fair_components", "LivenessError", "Lasso", "find_lasso",
           "explain_fairness"]


class LivenessError(UsageError):
    """Liveness cannot be checked as asked (constraints, symmetry, max depth, ...)."""


# ------------------------------------------------------------------ selection
def split_checks(spec: Spec, config: CheckConfig, library: Library | None = library_lookup
                 ) -> tuple[CheckConfig, list[TemporalDecl]]:
    """The safety part of ``config`` and the temporal properties it selects: all of
    the spec's when ``config.invariants`` is None, else those named there, the spec's
    own or, for a name the spec does not declare, a temporal property of ``library``
    (the other names stay invariants and action properties)."""
    own = [p for p in spec.temporal if isinstance(p, TemporalDecl)]
    temporal = {p.name: p for p in own}
    if config.invariants is None:
        return config, own
    declared = {p.name for p in (*spec.invariants, *spec.properties)}
    chosen: list[TemporalDecl] = []
    rest: list[str] = []
    for n in config.invariants:
        found: Any = temporal.get(n)
        if found is None and n not in declared and library is not None:
            found = library(n)
        if isinstance(found, TemporalDecl):
            chosen.append(found)
        else:
            rest.append(n)
    return config.replace(invariants=tuple(rest)), chosen


def refuse_liveness(spec: Spec, config: CheckConfig, backend: str) -> None:
    """Raise :class:`LivenessError` if ``config`` selects temporal properties of
    ``spec`` (for a backend that cannot check them)."""
    _, temporal = split_checks(spec, config)
    if temporal:
        names = ", ".join(p.name for p in temporal)
        raise LivenessError(
            f"the {backend} backend does not check temporal properties ({names}); run "
            f"`modelcheck check` locally for liveness, or select only invariants with "
            f"--invariant NAME."
        )


def _refusals(spec: Spec, config: CheckConfig, temporal: Sequence[TemporalDecl]) -> None:
    names = ", ".join(p.name for p in temporal)
    hint = "; or check only invariants with --invariant NAME"
    if spec.constraints or spec.action_constraints:
        cons = " and ".join(f"{what} ({', '.join(p.name for p in ps)})" for what, ps in (
            ("state constraints", spec.constraints),
            ("action constraints", spec.action_constraints)) if ps)
        raise LivenessError(
            f"spec {spec.name} has {cons}: checking temporal properties "
            f"({names}) with them is refused, as states cut off by a constraint would "
            f"stutter forever (TLC warns such results may be unsound){hint}."
        )
    if config.symmetry and spec.symmetry:
        raise LivenessError(
            f"temporal properties ({names}) are not checked under symmetry reduction "
            f"(unsound for liveness, as TLC warns): add --no-symmetry (symmetry=False){hint}."
        )
    if config.view and spec.view:
        raise LivenessError(
            f"spec {spec.name} declares a view ({', '.join(spec.view)}): temporal properties "
            f"({names}) are not checked under it, since states that agree on the view are "
            "merged and a state's successors stand for those of the states dropped, which "
            "makes the state graph wrong for liveness (TLC's documentation warns VIEW is "
            f"unsound with liveness checking): add --no-view (view=False){hint}.")
    if config.max_depth is not None:
        raise LivenessError(f"temporal properties ({names}) need the whole state graph: "
                            f"drop --max-depth{hint}.")
    if config.checkpoint_dir is not None:
        raise LivenessError(f"temporal properties ({names}) cannot be checked with "
                            f"--checkpoint-dir/--resume yet{hint}.")


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
    _cyclic: np.ndarray | None = field(default=None, repr=False)

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
        return int(self.fps.nbytes + self.initial.nbytes + edges + self.indptr.nbytes
                   + sum(p.nbytes for p in self.preds.values())
                   + sum(p.nbytes for p in self.steps.values()))

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
            word: Any = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                             if np.iinfo(t).bits >= len(part))
            lut: np.ndarray = np.zeros(top + 1, dtype=word)
            for j, c in enumerate(part):
                lut[list(c.action_ids)] |= word(1 << j)
            bits: np.ndarray = np.zeros(self.n, dtype=word)
            for u, v, e0, e1 in edge_chunks(self.indptr):
                if e1 == e0:
                    continue
                a = self.act[e0:e1]
                if top <= np.iinfo(a.dtype).max:
                    a = np.minimum(a, a.dtype.type(top))
                per_edge = lut[a]
                nz = np.flatnonzero(self.indptr[u + 1:v + 1] > self.indptr[u:v])
                bits[u + nz] = np.bitwise_or.reduceat(per_edge, self.indptr[u + nz] - e0)
            out.extend(((bits >> word(j)) & word(1)).astype(bool) for j in range(len(part)))
        return out

    def cyclic(self) -> np.ndarray:
        """Per node: it lies on a cycle (in a strongly connected component of more than
        one node). Computed once, by one SCC pass over the whole graph; the analysis of
        each property may then leave the other nodes out (a cycle within a subgraph
        lies within one component of the whole graph)."""
        if self._cyclic is None:
            everything = np.ones(self.n, dtype=bool)
            self._cyclic = _on_cycles(self, everything, everything)
        return self._cyclic

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


def refuse_empty_selections(g: StateGraph, conds: Sequence[FairnessCondition], spec: Spec,
                            kernel: Kernel) -> None:
    """Raise :class:`SpecEvaluationError` at the first state where a selector of one of
    ``conds`` gives a value that is no instance's (``Return(S=held(c))`` with ``held(c)``
    outside the domain of ``S``): TLA+ would evaluate that action, which has no instance
    here."""
    for c in conds:
        guards = dict(c.guards)
        for ids in c.selections:
            some = np.zeros(g.n, dtype=bool)
            for a in ids:
                ok = np.ones(g.n, dtype=bool)
                for name in guards.get(a, ()):
                    ok &= g.preds[name]
                some |= ok
            if some.all():
                continue
            u = int(np.flatnonzero(~some)[0])
            here = np.zeros(g.n, dtype=bool)
            here[u] = True
            path = _bfs(g, g.initial, np.ones(g.n, dtype=bool), here)
            assert path is not None
            states = _replay(kernel, g, Lasso(tuple(path[0]), tuple(path[1]), len(path[1])))
            calls = ", ".join(dict.fromkeys(p.call for p in c.predicates
                                            if any(p.name in guards.get(a, ()) for a in ids)))
            raise SpecEvaluationError(
                f"spec {spec!r}: fairness {c.name}: in the state "
                f"{format_state(spec.layout, states[-1])} "
                f"(reached in {len(path[1])} steps) the selector {calls} gives a value that "
                f"no instance of the action has (no instance of {c.label} is selected), so "
                "the action TLA+ would take there is not one of the spec's instances: "
                "widen the parameter's domain to every value the selector can give.")


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
    reports them until the next level is known. Then they are put in CSR order
    (:func:`~modelcheck.graphstore.csr_order`: by source, then action); the hooks'
    targets, which lie in the next level or an earlier one, are looked up in the
    indexes of the last three levels (cache-sized
    :class:`~modelcheck.graphstore.FpIndex`), a target further back at the end. The
    resolved edges go to the :class:`~modelcheck.graphstore.EdgeStore` (6 bytes an
    edge: ``int32`` target, ``uint16`` action; in files under ``spill_dir``). The
    source of an edge is its place: the CSR offsets (4 bytes a node).

    With ``enabled`` (the action-id sets of fairness conditions, 64 at most) the
    nodes where one of a set's actions has a step are marked level by level, a bit per
    set (:attr:`StateGraph.enabled_sets`).

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
                 words: bool = False, stutter: bool = False) -> None:
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
        self.key_width = spec.layout.key_width
        #: per level its packed states (with ``words``), else None
        self._words: list[np.ndarray] | None = [] if words else None
        self._n_words = spec.layout.n_words
        self.stutter = stutter
        self._bits: list[np.ndarray] = []
        self._deg: list[np.ndarray] = []  # per level: the out-degree of every node
        #: the action-id sets whose enabled nodes are collected (64 at most, a bit each
        #: in a per-action table), and per level a word per node
        self._en_sets = list(dict.fromkeys(tuple(ids) for ids in enabled))
        self._en_lut: np.ndarray | None = None
        if 0 < len(self._en_sets) <= 64:
            word: Any = next(t for t in (np.uint8, np.uint16, np.uint32, np.uint64)
                             if np.iinfo(t).bits >= len(self._en_sets))
            self._en_lut = np.zeros(max(1, self.n_act), dtype=word)
            for j, ids in enumerate(self._en_sets):
                self._en_lut[list(ids)] |= word(1 << j)
        self._en: list[np.ndarray] = []
        self._index: dict[int, FpIndex] = {}
        self._n_init = 0
        self._n = 0
        #: the transitions of the level being expanded, as the engine reports them
        #: (children's fingerprints) or, for an observer, as the run numbered their
        #: targets (node indices, or -1 - j for the level's new candidate j)
        self._raw: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._raw_bytes = 0
        self._batch: tuple[np.ndarray, np.ndarray] | None = None  # awaiting on_edges
        self._offsets: list[int] = []  # per level: its first node
        #: per level expanded (an observer's): the row in the next level of each new
        #: candidate
        self._new_rows: np.ndarray | None = None
        self._far: list[np.ndarray] = []  # target fps not in the last three levels
        self.peak_pending_bytes = 0
        self._worker = (ThreadPoolExecutor(1, thread_name_prefix="liveness-graph")
                        if background else None)
        self._job: Future[None] | None = None
        self._job_bytes = 0  # held by the transitions the job works on
        #: scipy's SCC routine is imported in the background (while the next levels
        #: are explored) once the graph outgrows :data:`SMALL_GRAPH`
        self._scc_imported = False

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
        if not self._scc_imported and self._n + len(fps) > SMALL_GRAPH:
            self._scc_imported = True
            job = partial(_then_import_scc_routine, job)
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
            self._batch = ((start + ex.parent_rows).astype(np.int32),
                           ex.action_ids.astype(self.edges.act_type))

    def on_edges(self, targets: np.ndarray) -> None:
        """The node indices of the targets of the batch :meth:`on_batch` took last (the
        observer's hook: see :meth:`~modelcheck.run.observers.Observer.on_edges`)."""
        assert self._batch is not None and len(self._batch[0]) == len(targets)
        rows, acts = self._batch
        self._batch = None
        self._pending(rows, acts, targets.astype(np.int32, copy=False))

    def on_new_states(self, depth: int, rows: np.ndarray) -> None:
        """The rows of level ``depth``'s new candidates in the next level (the observer's
        hook)."""
        self._new_rows = rows.astype(np.int32, copy=False)
        self._raw_bytes += self._new_rows.nbytes

    def nbytes(self) -> int:
        """Bytes held in memory: the nodes' fingerprints, flags and degrees, the edges
        (unless spilled), the transitions waiting for their level, the step formulas'
        false keys and the indexes of the last levels (the memory budget counts them)."""
        nodes = sum(f.nbytes for f in self._fps) + sum(b.nbytes for b in self._bits) + \
            sum(d.nbytes for d in self._deg) + sum(f.nbytes for f in self._far) + \
            sum(e.nbytes for e in self._en) + sum(w.nbytes for w in self._words or ())
        index = sum(ix.nbytes for ix in list(self._index.values()))
        return int(nodes + index + self.edges.nbytes + self._raw_bytes + self._job_bytes
                   + self._step_false_bytes)

    def on_transitions(self, rows: np.ndarray, acts: np.ndarray, children: np.ndarray
                       ) -> None:
        """A batch's transitions into stored states, the children by fingerprint (the
        explorer's ``on_transitions`` hook; not for an observer)."""
        self._pending(rows.astype(np.int32), acts.astype(self.edges.act_type), children)

    def _pending(self, rows: np.ndarray, acts: np.ndarray, targets: np.ndarray) -> None:
        self._raw.append((rows, acts, targets))
        self._raw_bytes += rows.nbytes + acts.nbytes + targets.nbytes
        self.peak_pending_bytes = max(self.peak_pending_bytes,
                                      self._raw_bytes + self._job_bytes)

    def _level_job(self, depth: int, fps: np.ndarray, offset: int,
                   raw: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                   new_rows: np.ndarray | None) -> None:
        """Index level ``depth`` (nodes from ``offset`` on; an observer's targets need no
        index) and store the transitions ``raw`` of the level before (the background
        job)."""
        if not self.observer:
            self._index[depth] = FpIndex(fps, offset)
        if depth > 0:
            self._store(depth - 1, raw, new_rows)
        self._index.pop(depth - 3, None)

    def _nodes(self, depth: int, targets: np.ndarray, new_rows: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(nodes, far)`` of a batch's transitions from level ``depth``: their targets'
        node indices, and the positions whose targets are further back than the
        indexed levels (-1 in ``nodes``, looked up at the end). An observer's targets
        are the run's node indices, or -1 - j for the level's new candidate j, whose
        node is the next level's first plus ``new_rows[j]``."""
        if self.observer:
            nodes = targets.copy()
            new = np.flatnonzero(nodes < 0)
            if len(new):
                assert new_rows is not None, "the new candidates' rows come first"
                nodes[new] = new_rows[-1 - nodes[new]] + self._offsets[depth + 1]
            return nodes, new[:0]
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

    def _store(self, depth: int, raw: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
               new_rows: np.ndarray | None = None) -> None:
        """The transitions ``raw`` of level ``depth``, batch by batch, in CSR order with
        their targets' node indices, to the edge store (and the sources' degrees)."""
        level = self._fps[depth]
        base = self._offsets[depth]
        deg = np.zeros(len(level), dtype=np.int32)
        lut = self._en_lut
        en = None if lut is None else np.zeros(len(level), dtype=lut.dtype)
        row = 0  # the first row of the level that later batches may hold
        for rows, acts, children in raw:
            found, miss = self._nodes(depth, children, new_rows)
            # a step that changes the state (or, with stutter, any step)
            keep = (found != rows + base) if self.observer else \
                key_ne(take_rows(level, rows), children)
            if not self.stutter and not keep.all():
                rows, acts, found = rows[keep], acts[keep], found[keep]
                children = take_rows(children, keep)
                miss = np.flatnonzero(found < 0)
            if not len(rows):
                continue
            lo, hi = int(rows.min()), int(rows.max()) + 1
            assert lo >= row, "batches come in level order"
            row = hi
            d, dest = csr_order(rows - lo, acts, hi - lo, self.n_act)
            deg[lo:hi] += d
            dst = np.empty(len(found), dtype=np.int32)
            dst[dest] = found
            act = np.empty(len(acts), dtype=self.edges.act_type)
            act[dest] = acts
            if en is not None and lut is not None:  # per source: its actions' sets
                nz = np.flatnonzero(d)
                first = np.cumsum(d) - d
                en[lo + nz] = np.bitwise_or.reduceat(lut[act], first[nz])
            if len(miss):  # in CSR order, the order in which they are patched at the end
                self._far.append(children[miss[np.argsort(dest[miss])]])
            self.edges.append(dst, act)
        self._deg.append(deg)
        if en is not None:
            self._en.append(en)

    def graph(self) -> StateGraph:
        """The collected graph, with node indices (frees the collected arrays)."""
        self._wait()
        self._shutdown()
        raw, self._raw = self._raw, []
        if self._fps:
            self._store(len(self._fps) - 1, raw, self._new_rows)
        self._new_rows = None
        del raw
        self._index = {}
        fps = np.concatenate(self._fps) if self._fps else empty_keys(self.key_width)
        bits = np.concatenate(self._bits) if self._bits else np.zeros((0, len(self.names)), bool)
        self._bits = []
        initial = np.zeros(len(fps), dtype=bool)
        initial[:self._n_init] = True
        far = np.concatenate(self._far) if self._far else empty_keys(self.key_width)
        self._far = []
        indptr = np.zeros(len(fps) + 1, dtype=np.int32 if self.edges.n <= NODE_LIMIT
                          else np.int64)
        if self._deg:
            np.concatenate(self._deg, out=indptr[1:], casting="same_kind")
            np.cumsum(indptr, out=indptr, dtype=indptr.dtype)  # in place
        self._deg = []
        enabled_sets: dict[tuple[int, ...], np.ndarray] = {}
        if self._en_lut is not None:
            word = self._en_lut.dtype.type
            en = np.concatenate(self._en) if self._en else np.zeros(0, self._en_lut.dtype)
            self._en = []
            if len(en) == len(fps):
                enabled_sets = {ids: ((en >> word(j)) & word(1)).astype(bool)
                                for j, ids in enumerate(self._en_sets)}
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
        return StateGraph(fps, initial, dst, act, indptr, preds, steps, enabled_sets, levels,
                          words)

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
        if self._words is not None:
            self._words = []
        self.edges.close()


def _import_scc_routine() -> None:
    """Import scipy's SCC routine (most of a second; in the collector's worker thread,
    beside the exploration, rather than when the properties are decided)."""
    try:
        import scipy.sparse.csgraph  # noqa: F401
    except ImportError:  # pragma: no cover - reported where it is used
        pass


def _then_import_scc_routine(job: Callable[[], None]) -> None:
    """Run ``job``, then import scipy's SCC routine (see :func:`_import_scc_routine`)."""
    job()
    _import_scc_routine()


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


# ------------------------------------------------------------------ fair SCCs
#: graphs of at most this many nodes and edges get their SCCs (and reversed edges) in
#: plain Python and numpy: importing scipy costs about 0.35 CPU seconds, more than
#: Tarjan's algorithm takes on such a graph, and a small liveness check would pay it
SMALL_GRAPH = 50_000


def strong_components(n: int, indptr: np.ndarray, dst: np.ndarray) -> tuple[int, np.ndarray]:
    """``(count, label per node)`` of the strongly connected components of the CSR
    graph: a graph of at most :data:`SMALL_GRAPH` nodes and edges by
    :func:`small_strong_components`, a larger one by scipy's compiled routine. The edge
    arrays are used as they are (``int32``, memory-mapped or not): the matrix's values
    are one broadcast 1.0, as the routine reads only the structure. No source may list
    a target twice: scipy's routine (1.17) loops forever on a repeated entry
    (``restrict(..., simple=True)`` leaves them out). Labels are ``0..count - 1`` in no
    particular order (callers only group nodes by them)."""
    if n <= SMALL_GRAPH and len(dst) <= SMALL_GRAPH:
        return small_strong_components(n, indptr, dst)
    # scipy is imported where it is used: importing it costs most of a second, which
    # every command would pay at start-up (modelcheck imports this module)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    data = np.broadcast_to(np.float64(1.0), (len(dst),))
    m = csr_matrix((data, dst, indptr), shape=(n, n), copy=False)
    ncomp, lab = connected_components(m, directed=True, connection="strong")
    return int(ncomp), lab


def small_strong_components(n: int, indptr: np.ndarray, dst: np.ndarray
                            ) -> tuple[int, np.ndarray]:
    """``(count, label per node)`` of the strongly connected components of the CSR
    graph by Tarjan's algorithm (iterative, on Python lists): for small graphs, where
    it is faster than importing scipy."""
    ptr: list[int] = np.asarray(indptr).tolist()
    succ: list[int] = np.asarray(dst).tolist()
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    lab = [-1] * n
    stack: list[int] = []
    counter = ncomp = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, ptr[root])]
        while work:
            v, i = work[-1]
            end = ptr[v + 1]
            descended = False
            while i < end:
                w = succ[i]
                i += 1
                if index[w] < 0:  # a tree edge: visit w, then come back to v's i-th edge
                    work[-1] = (v, i)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, ptr[w]))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:  # v is the root of a component: pop it
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    lab[w] = ncomp
                    if w == v:
                        break
                ncomp += 1
    return ncomp, np.array(lab, dtype=np.int32)


def _may_cycle(levels: np.ndarray, indptr: np.ndarray, dst: np.ndarray, sub: np.ndarray,
               edges: np.ndarray | None = None) -> np.ndarray:
    """Per node of the CSR graph (nodes in breadth-first order, ``levels`` the first
    node of each level then the number of nodes; an edge goes at most one level up):
    it may lie on a cycle among the nodes of ``sub`` (and the edges of ``edges``). An
    edge to the next level is *forward*; a cycle takes an edge that is not (forward
    edges only climb), and each of its nodes is reached by forward edges from the
    target of such an edge (the last before it on the cycle) and reaches by forward
    edges the source of one (the next): the nodes so reached and reaching hold every
    cycle. One pass over the edges, then one level by level up (reached) and one down
    (reaching) over the forward ones (a flag an edge held between them)."""
    n = len(indptr) - 1
    reached = np.zeros(n, dtype=bool)
    reaching = np.zeros(n, dtype=bool)
    runs = []  # per level: its nodes, edges, and which are forward edges within sub
    for lv in range(len(levels) - 1):
        u, v = int(levels[lv]), int(levels[lv + 1])
        e0, e1 = int(indptr[u]), int(indptr[v])
        if e1 == e0 or not sub[u:v].any():
            continue
        d = np.asarray(dst[e0:e1])
        deg = np.diff(indptr[u:v + 1])
        ok = np.repeat(sub[u:v], deg)
        ok &= sub[d]
        if edges is not None:
            ok &= edges[e0:e1]
        back = d < v  # not to the next level
        back &= ok
        if back.any():
            reached[d[back]] = True
            reaching[np.repeat(np.arange(u, v, dtype=np.int32), deg)[back]] = True
        np.logical_xor(ok, back, out=ok)  # forward edges within sub
        if ok.any():
            runs.append((lv, u, v, e0, e1, ok))
    for _, u, v, e0, e1, fwd in runs:  # level by level up
        if reached[u:v].any():
            hit = np.repeat(reached[u:v], np.diff(indptr[u:v + 1]))
            hit &= fwd
            reached[np.asarray(dst[e0:e1])[hit]] = True
    for lv, u, v, e0, e1, fwd in reversed(runs):  # and down
        if reaching[v:int(levels[min(lv + 2, len(levels) - 1)])].any():
            hit = reaching[np.asarray(dst[e0:e1])]
            hit &= fwd
            src = np.repeat(np.arange(u, v, dtype=np.int32), np.diff(indptr[u:v + 1]))
            reaching[src[hit]] = True
    reached &= reaching
    return reached


def _induced(nodes: np.ndarray, indptr: np.ndarray, dst: np.ndarray,
             edges: np.ndarray | None = None, simple: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    """The CSR copy ``(indptr, dst)`` of the edges among ``nodes`` (sorted node
    indices of the graph ``indptr``, ``dst``; and of ``edges``), the nodes numbered
    ``0..len(nodes) - 1``; with ``simple`` without repeated targets (see
    :func:`~modelcheck.graphstore.restrict`). Only the edges of ``nodes`` are read,
    about 2**19 at a time."""
    k = len(nodes)
    new = np.full(len(indptr) - 1, -1, dtype=np.int32)
    new[nodes] = np.arange(k, dtype=np.int32)
    deg = (indptr[nodes + 1] - indptr[nodes]).astype(np.int64)
    out_deg = np.zeros(k, dtype=np.int64)
    at = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(deg, out=at[1:])
    sub_dst = np.empty(int(at[-1]), dtype=np.int32)  # pages past the kept edges: untouched
    done = 0
    i = 0
    while i < k:
        j = max(i + 1, int(np.searchsorted(at, at[i] + (1 << 19), side="right")) - 1)
        j = min(j, k)
        eidx, esrc = _out_edges(indptr, nodes[i:j])
        d = new[np.asarray(dst[eidx])]
        keep = d >= 0
        if edges is not None:
            keep &= edges[eidx]
        del eidx
        rows = new[esrc[keep]] - i
        d = d[keep]
        cnt = np.bincount(rows, minlength=j - i)
        if simple and len(d):
            par = parallel_in_rows(cnt, d)
            if len(par):
                drop = np.ones(len(d), dtype=bool)
                drop[par] = False
                rows, d = rows[drop], d[drop]
                cnt = np.bincount(rows, minlength=j - i)
        out_deg[i:j] = cnt
        sub_dst[done:done + len(d)] = d
        done += len(d)
        i = j
    sub_indptr = np.zeros(k + 1, dtype=np.int32 if int(out_deg.sum()) <= NODE_LIMIT
                          else np.int64)
    np.cumsum(out_deg, out=sub_indptr[1:], dtype=sub_indptr.dtype)
    sub_dst.resize(done, refcheck=False)
    return sub_indptr, sub_dst


def _cycle_subgraph(g: StateGraph, sub: np.ndarray, edges: np.ndarray | None = None,
                    levels: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nodes of ``sub`` that may lie on a cycle within it (and the edges of
    ``edges``; by :func:`_may_cycle` when ``g``'s nodes are in BFS order and
    ``levels``, else all of them) and the CSR copy of the edges among them, numbered
    ``0..k - 1``, without repeated targets: ``(nodes, indptr, dst)``."""
    if g.levels is not None and levels:
        sub = _may_cycle(g.levels, g.indptr, g.dst, sub, edges)
    nodes = np.flatnonzero(sub)
    indptr, dst = _induced(nodes, g.indptr, g.dst, edges, simple=True)
    return nodes, indptr, dst


def _on_cycles(g: StateGraph, mask: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """Per node of ``mask``: it lies on a cycle among the nodes of ``sub``."""
    nodes, indptr, dst = _cycle_subgraph(g, mask & sub)
    out = np.zeros(g.n, dtype=bool)
    if len(dst):
        lab = strong_components(len(nodes), indptr, dst)[1]
        out[nodes] = np.bincount(lab)[lab] > 1
    return out


def _taken_inside(g: StateGraph, members: np.ndarray, lab_m: np.ndarray, ncomp: int,
                  conds: Sequence[FairnessCondition], edges: np.ndarray | None = None
                  ) -> list[np.ndarray]:
    """Per condition, per component (``lab_m``: the component of each of ``members``,
    sorted nodes): an edge (of ``edges``, if given) of the condition's actions lies
    inside it."""
    taken = [np.zeros(ncomp, dtype=bool) for _ in conds]
    if not conds or not len(members):
        return taken
    label = np.full(g.n, -1, dtype=np.int32)
    label[members] = lab_m
    for i in range(0, len(members), 1 << 19):
        eidx, esrc = _out_edges(g.indptr, members[i:i + (1 << 19)])
        ls = label[esrc]
        inside = ls == label[g.dst[eidx]]
        if edges is not None:
            inside &= edges[eidx]
        if not inside.any():
            continue
        a = np.asarray(g.act[eidx[inside]])
        ls = ls[inside]
        srcs = esrc[inside]
        for t, c in zip(taken, conds):
            t[ls[g.in_cond(c, a, srcs)]] = True
    return taken


def fair_components(g: StateGraph, mask: np.ndarray, conds: Sequence[FairnessCondition],
                    enabled: Sequence[np.ndarray] | None = None,
                    cyclic: np.ndarray | None = None, edges: np.ndarray | None = None,
                    stutter: np.ndarray | None = None) -> np.ndarray:
    """Per node, the id of the fair SCC (within the nodes of ``mask`` and the edges
    of ``edges``, a flag per edge in CSR order) it lies in, or -1: the nodes with id
    >= 0 are exactly those on fair cycles inside them (a node alone is a cycle: it
    stutters; with ``stutter``, only at the nodes it marks).

    The SCC routine runs on a compacted copy of the edges within ``mask`` (4 bytes an
    edge kept) among the nodes that may lie on a cycle by ``g``'s BFS levels
    (:func:`_may_cycle`), and each refinement round for strong fairness compacts the
    previous round's. A node is on a cycle iff its component has several nodes (the
    graph has no self-loops). With ``cyclic`` (:meth:`StateGraph.cyclic`: the nodes on
    cycles of the whole graph, found with that filter) only on the edges among those
    nodes, without the filter. A node alone in its component
    is fair iff no condition's action is enabled there (no step of it can be taken
    inside; and, with ``stutter``, it is marked there); only the components of several
    nodes are looked at further. ``edges`` applies to the first round, on ``g``'s
    edges; the compacted copies of later rounds hold only edges it marks."""
    en = list(enabled) if enabled is not None else [g.enabled(c) for c in conds]
    comp = np.full(g.n, -1, dtype=np.int32)
    next_id = 0
    first = True
    mask = mask.copy()
    while mask.any():
        sub = mask if cyclic is None else mask & cyclic
        if first:  # on g's edges (``edges`` flags them), then on the compact copies
            # (the nodes on cycles of the whole graph, ``cyclic``, were found so)
            may, indptr, dst = _cycle_subgraph(g, sub, edges, levels=cyclic is None)
            first = False
        else:  # the previous round's copy, among the nodes of sub
            keep = np.flatnonzero(sub[may])
            indptr, dst = _induced(keep, indptr, dst)
            may = may[keep]
        nodes = np.flatnonzero(mask)
        lab_nodes = np.full(len(nodes), -1, dtype=np.int64)
        multi = np.zeros(len(nodes), dtype=bool)
        if len(dst):
            lab = strong_components(len(may), indptr, dst)[1]
            at = np.searchsorted(nodes, may)
            lab_nodes[at] = lab
            # in a component of several nodes (there are no self-loops)
            multi[at] = np.bincount(lab)[lab] > 1
            del lab, at
        single = nodes[~multi]
        alone = np.ones(len(single), dtype=bool)
        for en_c in en:
            alone &= ~en_c[single]
        if stutter is not None:
            alone &= stutter[single]
        fair_single = single[alone]
        comp[fair_single] = np.arange(next_id, next_id + len(fair_single), dtype=np.int32)
        next_id += len(fair_single)
        members = nodes[multi]
        if not len(members):
            break
        _, lab_m = np.unique(lab_nodes[multi], return_inverse=True)
        del nodes, lab_nodes, multi
        ncomp = int(lab_m.max()) + 1
        size = np.bincount(lab_m, minlength=ncomp)
        ok = np.ones(ncomp, dtype=bool)
        refine = np.zeros(ncomp, dtype=bool)
        remove = np.zeros(len(members), dtype=bool)
        taken = _taken_inside(g, members, lab_m, ncomp, conds, edges)
        for c, en_c, tk in zip(conds, en, taken):
            en_m = en_c[members]
            n_en = np.bincount(lab_m[en_m], minlength=ncomp)
            if c.kind is Fairness.WEAK:
                ok &= tk | (n_en < size)
            else:
                fail = ~tk & (n_en > 0)
                refine |= fail
                remove |= fail[lab_m] & en_m
        fair = ok & ~refine
        in_fair = fair[lab_m]
        ids = np.cumsum(fair) - 1 + next_id
        comp[members[in_fair]] = ids[lab_m[in_fair]]
        next_id += int(fair.sum())
        again = (ok & refine)[lab_m] & ~remove
        mask = np.zeros(g.n, dtype=bool)
        mask[members[again]] = True
    return comp


# ------------------------------------------------------------------ paths
def _out_edges(indptr: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(edge indices, their sources)`` of the edges of ``nodes`` (sorted), in CSR order."""
    starts = indptr[nodes].astype(np.int64)
    counts = indptr[nodes + 1].astype(np.int64) - starts
    total = int(counts.sum())
    eidx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(total)
    return eidx, np.repeat(nodes, counts)


def _bfs(g: StateGraph, sources: np.ndarray, allowed: np.ndarray, targets: np.ndarray,
         edges: np.ndarray | None = None) -> tuple[list[int], list[int]] | None:
    """The shortest path within ``allowed`` (and the edges of ``edges``) from a source
    to a target: ``(nodes, actions)`` (``actions[i]`` leads from ``nodes[i]`` to
    ``nodes[i + 1]``); among equal lengths the smallest node indices win
    (deterministic). None if no target is reachable."""
    if not (targets & allowed).any():
        return None
    seen = np.zeros(g.n, dtype=bool)
    pred = np.full(g.n, -1, dtype=np.int64)
    pact = np.full(g.n, -1, dtype=np.int64)
    none = np.iinfo(np.int64).max
    first = np.full(g.n, none, dtype=np.int64)  # per node reached: its first edge's place
    frontier = np.flatnonzero(sources & allowed)
    seen[frontier] = True
    while len(frontier):
        hit = frontier[targets[frontier]]
        if len(hit):
            node = int(hit.min())
            nodes, acts = [node], []
            while pred[node] >= 0:
                acts.append(int(pact[node]))
                node = int(pred[node])
                nodes.append(node)
            return nodes[::-1], acts[::-1]
        eidx, esrc = _out_edges(g.indptr, frontier)
        if not len(eidx):
            break
        nb = g.dst[eidx]
        ok = allowed[nb] & ~seen[nb]
        if edges is not None:
            ok &= edges[eidx]
        eidx, esrc, nb = eidx[ok], esrc[ok], nb[ok]
        # each new node by its first edge (sources in order): the smallest source
        place = np.arange(len(nb))
        np.minimum.at(first, nb, place)
        win = np.flatnonzero(first[nb] == place)
        new = nb[win]
        first[new] = none
        pred[new] = esrc[win]
        pact[new] = g.act[eidx[win]]
        seen[new] = True
        frontier = np.sort(new)
    return None


def _transpose(n: int, indptr: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reversed edges of the CSR graph, as CSR ``(indptr, sources)`` (each node's
    sources ascending): by numpy's stable sort for a small graph (see
    :data:`SMALL_GRAPH`), by scipy's counting sort for a larger one."""
    if len(dst) > SMALL_GRAPH:
        from scipy.sparse import csr_matrix
        rev = csr_matrix((np.ones(len(dst), dtype=bool), dst, indptr), shape=(n, n)).tocsc()
        return rev.indptr, rev.indices
    targets = np.asarray(dst, dtype=np.int64)
    ptr = np.asarray(indptr, dtype=np.int64)
    src = np.repeat(np.arange(n, dtype=np.int64), ptr[1:] - ptr[:-1])
    rev_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(targets, minlength=n), out=rev_indptr[1:])
    return rev_indptr, src[np.argsort(targets, kind="stable")]


def _reach_back(g: StateGraph, targets: np.ndarray, allowed: np.ndarray,
                edges: np.ndarray | None = None) -> np.ndarray:
    """The nodes of ``allowed`` from which a path within ``allowed`` (and the edges of
    ``edges``) reaches ``targets``."""
    indptr, dst = restrict(g.indptr, g.dst, allowed, edges=edges)
    rev_indptr, rev_indices = _transpose(g.n, indptr, dst)
    del indptr, dst
    seen = targets & allowed
    stamp = np.zeros(g.n, dtype=np.int64)
    frontier = np.flatnonzero(seen)
    while len(frontier):
        eidx, _ = _out_edges(rev_indptr, frontier)
        if not len(eidx):
            break
        nb = rev_indices[eidx]
        nb = nb[~seen[nb]]
        # one of each node: the one whose place was written last
        place = np.arange(len(nb))
        stamp[nb] = place
        nb = nb[stamp[nb] == place]
        seen[nb] = True
        frontier = np.sort(nb)
    return seen


@dataclass(frozen=True)
class Lasso:
    """Node indices and action ids: ``nodes[loop]`` starts the loop; when the loop has
    steps, ``nodes[-1] == nodes[loop]``."""

    nodes: tuple[int, ...]
    acts: tuple[int, ...]
    loop: int


def _cycle(g: StateGraph, comp: np.ndarray, start: int, conds: Sequence[FairnessCondition],
           en: Sequence[np.ndarray], must_visit: int | None = None,
           edges: np.ndarray | None = None, stutter: np.ndarray | None = None
           ) -> tuple[list[int], list[int]]:
    """A cycle inside the fair SCC of ``start`` (and the edges of ``edges``) that
    satisfies every condition, as ``(nodes after start, actions)``; empty when
    stuttering at ``start`` does (and ``stutter``, if given, allows it there)."""
    inside = comp == comp[start]
    waypoints: list[tuple[int, int, int] | int] = []
    if must_visit is not None and must_visit != start:
        waypoints.append(must_visit)
    eidx, esrc = _out_edges(g.indptr, np.flatnonzero(inside))
    edst = g.dst[eidx]
    keep = inside[edst]
    if edges is not None:
        keep &= edges[eidx]
    eidx, esrc, edst = eidx[keep], esrc[keep], edst[keep]
    eact = np.asarray(g.act[eidx])
    for c, en_c in zip(conds, en):
        steps = np.flatnonzero(g.in_cond(c, eact, esrc))
        if c.kind is Fairness.WEAK and not en_c[start]:
            continue  # disabled at the start of the loop
        if c.kind is Fairness.STRONG and not (en_c & inside).any():
            continue  # disabled on the whole SCC
        if len(steps):
            e = int(steps[0])
            waypoints.append((int(esrc[e]), int(eact[e]), int(edst[e])))
        else:  # weak, disabled somewhere in the SCC
            waypoints.append(int(np.flatnonzero(inside & ~en_c)[0]))
    nodes: list[int] = []
    acts: list[int] = []
    cur = start
    one = np.zeros(g.n, dtype=bool)

    def walk(to: int) -> None:
        nonlocal cur
        one[:] = False
        one[to] = True
        src = np.zeros(g.n, dtype=bool)
        src[cur] = True
        path = _bfs(g, src, inside, one, edges)
        assert path is not None, "a fair SCC is strongly connected"
        nodes.extend(path[0][1:])
        acts.extend(path[1])
        cur = to

    if not waypoints and stutter is not None and not stutter[start]:
        # the property rules out stuttering at start: the loop takes a step (a fair
        # SCC of one node is one where it stutters, so there is one inside)
        e = int(np.flatnonzero(esrc == start)[0])
        waypoints.append((start, int(eact[e]), int(edst[e])))
    for w in waypoints:
        if isinstance(w, int):
            walk(w)
        else:
            u, a, v = w
            walk(u)
            nodes.append(v)
            acts.append(a)
            cur = v
    if nodes:
        walk(start)
    return nodes, acts


def find_lasso(g: StateGraph, prop: TemporalDecl, conds: Sequence[FairnessCondition],
               en: Sequence[np.ndarray] | None = None, cyclic: np.ndarray | None = None
               ) -> Lasso | None:
    """A lasso violating ``prop`` under ``conds``, or None if the property holds
    (``cyclic``: see :func:`fair_components`)."""
    en = list(en) if en is not None else [g.enabled(c) for c in conds]
    everything = np.ones(g.n, dtype=bool)
    # what the behaviour must avoid from some point on: the nodes of ``mask``, and over
    # steps the edges of ``edges`` (the steps where the formula A is false) and the
    # nodes where stuttering is such a step (``stutter``)
    edges = stutter = None
    if prop.steps:
        mask = everything
        edges = ~g.steps[f"{prop.name}.A"]
        stutter = ~g.preds[f"{prop.name}.A@stutter"]
        if prop.form == "leads_to":
            p = g.preds[f"{prop.name}.P"]
    elif prop.form == "leads_to":
        p, q = g.preds[f"{prop.name}.P"], g.preds[f"{prop.name}.Q"]
        mask = ~q
    else:
        p = g.preds[prop.name]
        mask = ~p if prop.form != "eventually_always" else everything
    comp = fair_components(g, mask, conds, en, cyclic, edges, stutter)
    fair = comp >= 0
    if not fair.any():
        return None
    if prop.form == "always_eventually":
        pre = _bfs(g, g.initial, everything, fair)
    elif prop.form == "eventually_always":
        pre = _bfs(g, g.initial, everything, fair & ~p)
    elif prop.form == "eventually":
        pre = _bfs(g, g.initial, mask, fair, edges)
    else:
        can = _reach_back(g, fair, mask, edges)
        first = _bfs(g, g.initial, everything, p & can)
        if first is None:
            return None
        mid = np.zeros(g.n, dtype=bool)
        mid[first[0][-1]] = True
        second = _bfs(g, mid, mask, fair, edges)
        assert second is not None
        pre = (first[0] + second[0][1:], first[1] + second[1])
    if pre is None:
        return None
    nodes, acts = pre
    start = nodes[-1]
    cyc_nodes, cyc_acts = _cycle(g, comp, start, conds, en, edges=edges, stutter=stutter)
    return Lasso(tuple(nodes + cyc_nodes), tuple(acts + cyc_acts), len(nodes) - 1)


# ------------------------------------------------------------------ replay, explanation
def _replay(kernel: Kernel, g: StateGraph, lasso: Lasso) -> list[list[int]]:
    """The states of a lasso, by replaying its actions with the scalar evaluator."""
    fp0 = key_int(g.fps, lasso.nodes[0])
    cur = next(c for c in kernel.initial_states() if kernel.fingerprint(c) == fp0)
    states = [cur]
    for a, node in zip(lasso.acts, lasso.nodes[1:]):
        nxt = kernel.step(cur, kernel.actions[a])
        if nxt is None or kernel.fingerprint(nxt) != key_int(g.fps, node):  # pragma: no cover
            raise RuntimeError("lasso rebuild: the recorded step is not a transition")
        cur = nxt
        states.append(cur)
    return states


def explain_fairness(kernel: Kernel, conds: Sequence[FairnessCondition],
                     states: Sequence[Sequence[int]], acts: Sequence[int], loop: int
                     ) -> list[str]:
    """Why the loop ``states[loop:]`` (steps ``acts[loop:]``) satisfies each condition,
    computed on the states: ``WF(Tick): taken at step 7`` or ``... disabled at state 5``
    (1-based state numbers, as traces print them). Raises ``AssertionError`` if one
    does not hold (an engine bug)."""
    out = []
    loop_states = range(loop, len(states) - 1) if len(states) - 1 > loop else range(loop,
                                                                                  loop + 1)
    for c in conds:
        guards = dict(c.guards)
        decls = {p.name: p.decl for p in c.predicates}

        def counts(i: int, a: int, guards: dict[int, tuple[str, ...]] = guards,
                   decls: dict[str, PredicateDecl] = decls, ids: tuple[int, ...] = c.action_ids
                   ) -> bool:
            """Action ``a`` is the condition's at state ``i`` (selected there)."""
            if a not in ids:
                return False
            view = kernel.scalar_view(list(states[i])) if guards.get(a) else None
            return all(bool(decls[n].fn(kernel.spec, view)) for n in guards.get(a, ()))

        def enabled(i: int, c: FairnessCondition = c, counts: Any = counts) -> bool:
            cells = states[i]
            return any(counts(i, a) and (nxt := kernel.step(cells, kernel.actions[a]))
                       is not None and nxt != list(cells) for a in c.action_ids)

        taken = [k for k in range(loop, len(acts))
                 if counts(k, acts[k]) and list(states[k]) != list(states[k + 1])]
        if taken:
            k = taken[0]
            out.append(f"{c.name}: taken on the loop (step to state {k + 2}, "
                       f"{kernel.actions[acts[k]].label})")
            continue
        off = [i for i in loop_states if not enabled(i)]
        if c.kind is Fairness.WEAK:
            assert off, f"{c.name} is not satisfied by the loop"
            out.append(f"{c.name}: disabled at state {off[0] + 1} on the loop")
        else:
            assert len(off) == len(loop_states), f"{c.name} is not satisfied by the loop"
            out.append(f"{c.name}: disabled at every state of the loop")
    return out


# ------------------------------------------------------------------ the check
def check_liveness(spec: Spec, config: CheckConfig | None = None, *,
                   temporal: Sequence[TemporalDecl] | None = None,
                   library: Library | None = library_lookup,
                   progress: Callable[[Progress], None] | None = None,
                   notice: Callable[[str], None] | None = None,
                   **options: Any) -> Result:
    """Explore ``spec`` (checking what ``config`` selects of its invariants, action
    properties and deadlocks) and then its temporal properties (``temporal``, default:
    those ``config`` selects, see :func:`~modelcheck.liveness.split_checks`). A safety
    violation is reported first; otherwise the first violated temporal property in
    declaration order, with a lasso (``Violation.kind`` ``ViolationKind.LIVENESS``; the other
    violated ones are listed in its ``also_violated``, and every verdict in
    ``Result.liveness["properties"]``). Without temporal properties, the explorer
    alone. :func:`modelcheck.check` (the
    library's and the command line's front door) calls this when ``config`` selects
    temporal properties.
    ``notice`` is the explorer's (:class:`~modelcheck.explorer.Explorer`)."""
    cfg = CheckConfig.of(config, options, "check_liveness")
    safety, selected = split_checks(spec, cfg, library)
    if temporal is not None:
        selected = list(temporal)
    if not selected:
        return Explorer(spec, safety, library=library, progress=progress,
                        notice=notice).run()
    _refusals(spec, cfg, selected)
    per_prop = [(p, fairness_conditions(spec, p.fairness)) for p in selected]
    checked_as = {"formulas": {p.name: p.formula for p in selected},
                  "fairness": {p.name: [c.name for c in cs] for p, cs in per_prop}}
    parts = graph_parts(per_prop)
    collector = GraphCollector(spec, parts, cfg.batch_size, cfg.spill_dir, observer=True,
                               enabled=[c.action_ids for _, cs in per_prop for c in cs
                                        if not c.guards])
    try:
        explorer = Explorer(spec, safety, library=library, progress=progress, notice=notice,
                            observer=collector)
        res = explorer.run()
        res = replace(res, checked={**res.checked, "temporal": [p.name for p in selected]})
        if res.status is not Status.OK:
            return replace(res, liveness=_not_checked([p.name for p in selected], res.status,
                                                      checked_as))
        t0 = time.perf_counter()
        del explorer
        _release_freed_memory()
        g = collector.graph()
        _release_freed_memory()
        return _decide_into(spec, res, g, per_prop, t0, collector.edges, checked_as,
                            pending_edge_bytes=collector.peak_pending_bytes)
    finally:
        collector.close()


def check_liveness_workers(spec: Spec, config: CheckConfig | None = None, *,
                           workers: int | str | None = None, buckets: int | None = None,
                           driver_threshold: int | None = None,
                           temporal: Sequence[TemporalDecl] | None = None,
                           library: Library | None = library_lookup,
                           progress: Callable[[Progress], None] | None = None,
                           notice: Callable[[str], None] | None = None,
                           **options: Any) -> Result:
    """:func:`~modelcheck.check_liveness` with the exploration by worker processes (``modelcheck
    check --workers N``: :class:`~modelcheck.shards.pool.ParallelExplorer`; ``workers``
    default ``config.workers``, ``buckets`` and ``driver_threshold`` as there), the
    properties decided by ``ShardedLiveness``: the same verdicts and the same
    lassos. Refused as :func:`~modelcheck.check_liveness` refuses (checkpoints among them)."""
    from .shards.pool import ParallelExplorer

    cfg = CheckConfig.of(config, options, "check_liveness_workers")
    live = ShardedLiveness(spec, cfg, temporal, library)
    run = ParallelExplorer(spec, live.safety, workers=workers, buckets=buckets,
                           library=library, progress=progress, notice=notice,
                           driver_threshold=driver_threshold, temporal=live.names)
    live.attach(run)
    return live.finish(run.run())


class ShardedLiveness:
    """The temporal properties of a sharded run (:class:`~modelcheck.shards.backend.
    ShardedRun` over the bucket engine: ``--workers N``, Spark's shards engine).

    ``config`` (and ``temporal``, as for :func:`check_liveness`) selects the
    properties; they are refused as :func:`check_liveness` refuses them. Make the run
    with :attr:`safety` and ``temporal=`` :attr:`names` (its bucket tasks then evaluate
    the properties' state and step formulas and write their parts of the state graph
    beside the level files), :meth:`attach` this to it, run it and pass its result to
    :meth:`finish`. Once the run is complete, and before its run directory is removed,
    :meth:`decide` reads the graph back from those files
    (:func:`~modelcheck.shards.stategraph.read_state_graph`: the one-process check's
    nodes in its order and its edges in its CSR order; memory-mapped in the run
    directory past :data:`SPILL_EDGES` edges) and decides the properties with the
    one-process analysis (:func:`_decide`): the same verdicts, the same lassos."""

    def __init__(self, spec: Spec, config: CheckConfig,
                 temporal: Sequence[TemporalDecl] | None = None,
                 library: Library | None = library_lookup) -> None:
        self.spec = spec
        self.safety, selected = split_checks(spec, config, library)
        if temporal is not None:
            selected = list(temporal)
        if selected:
            _refusals(spec, config, selected)
        self.selected = selected
        #: the properties' names, for the run's ``temporal``
        self.names = tuple(p.name for p in selected)
        self.per_prop = [(p, fairness_conditions(spec, p.fairness)) for p in selected]
        self.checked_as = {"formulas": {p.name: p.formula for p in selected},
                           "fairness": {p.name: [c.name for c in cs]
                                        for p, cs in self.per_prop}}
        self.run: Any = None
        self.decided = False

    def attach(self, run: Any) -> None:
        """Decide the properties at the end of ``run`` (a ``ShardedRun`` made with
        ``temporal=self.names``)."""
        if self.selected:
            self.run = run
            run.after = self.decide

    def decide(self, res: Result) -> Result:
        """``res`` with the properties decided on the state graph of the complete run it
        came from (the run's ``after`` hook)."""
        from .shards.engine import BucketEngine
        from .shards.stategraph import read_state_graph

        self.decided = True
        t0 = time.perf_counter()
        run = self.run
        engine = run.engine
        if not isinstance(engine, BucketEngine):  # pragma: no cover - refused before
            raise LivenessError(f"the {engine.name} engine does not write the state graph.")
        kernel = run.kernel
        names = [p.name for p in kernel.labels]
        step_names = [p.name for p in kernel.step_labels]
        parts = read_state_graph(engine.root, engine.buckets, len(kernel.actions),
                                 len(names), len(step_names), spill_dir=str(run.rundir.path),
                                 spill_edges=SPILL_EDGES)
        try:
            initial = np.zeros(len(parts.fps), dtype=bool)
            initial[:int(parts.levels[1]) if len(parts.levels) > 1 else 0] = True
            g = StateGraph(parts.fps, initial, parts.dst, parts.act, parts.indptr,
                           {n: np.ascontiguousarray(parts.labels[:, j])
                            for j, n in enumerate(names)},
                           {n: np.ascontiguousarray(parts.steps[:, j])
                            for j, n in enumerate(step_names)},
                           levels=parts.levels)
            return _decide_into(self.spec, res, g, self.per_prop, t0, parts.store,
                                self.checked_as)
        finally:
            parts.store.close()

    def finish(self, res: Result) -> Result:
        """``res`` of the run, with the properties marked not checked when it did not
        complete."""
        if not self.selected:
            return res
        res = replace(res, checked={**res.checked, "temporal": list(self.names)})
        if not self.decided:
            res = replace(res, liveness=_not_checked(self.names, res.status, self.checked_as))
        return res


def _decide_into(spec: Spec, res: Result, g: StateGraph, per_prop: Any, t0: float,
                 edges: EdgeStore, checked_as: dict[str, Any], **extra: Any) -> Result:
    """``res`` with the properties decided on ``g`` (:func:`_decide`) and the graph's
    figures in ``liveness`` (``extra`` before ``spilled``); ``t0``: when the graph's
    build began."""
    verdicts, violation = _decide(spec, res.violation, g, per_prop)
    now = time.perf_counter()
    return replace(
        res, violation=violation, seconds=res.seconds + now - t0,
        status=Status.VIOLATION if violation is not None else res.status,
        liveness={
            "properties": verdicts, "nodes": g.n, "edges": g.n_edges,
            "seconds": round(now - t0, 3),
            "graph_bytes": g.nbytes, "edge_bytes": g.edge_bytes,
            "bytes_per_edge": edges.bytes_per_edge, **extra,
            "spilled": edges.spilled, **checked_as,
        })


def _not_checked(names: Iterable[str], status: Status, checked_as: dict[str, Any]
                 ) -> dict[str, Any]:
    """``res.liveness`` of a run that ended with ``status`` before the properties
    ``names`` were decided."""
    return {"properties": {n: "not checked" for n in names},
            "reason": f"the exploration ended with status {status}", **checked_as}


#: a sharded run's state graph is read into memory-mapped files (in its run directory)
#: past this many edges (6 bytes an edge: 400 MB)
SPILL_EDGES = 1 << 26


def _release_freed_memory() -> None:
    """Give the memory freed by the exploration back to the OS before the graph is
    built and searched: glibc keeps freed heap pages for reuse (``malloc_trim``; a
    no-op elsewhere)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _decide(spec: Spec, violation: Violation | None, g: StateGraph,
            per_prop: Sequence[tuple[TemporalDecl, list[FairnessCondition]]]
            ) -> tuple[dict[str, str], Violation | None]:
    """Decide each property on ``g``: the verdicts, and the violation of the run
    (``violation``, the safety run's) or else the first violated property's lasso
    (states replayed, fairness explained), with the later violated ones as
    ``also_violated``."""
    kernel = Kernel(spec, invariants=[], properties=[], check_deadlock=False, symmetry=False,
                    view=False)
    _refuse_next_state_reads(g, [p for p, _ in per_prop], spec, kernel)
    distinct = list({_ckey(c): c for _, conds in per_prop for c in conds}.values())
    refuse_empty_selections(g, distinct, spec, kernel)
    verdicts: dict[str, str] = {}
    # one SCC pass over the whole graph, when it saves more than it costs
    cyclic = g.cyclic() if len(per_prop) > 1 else None
    enabled_cache = dict(zip((_ckey(c) for c in distinct), g.enabled_all(distinct)))
    for p, conds in per_prop:
        en = [enabled_cache[_ckey(c)] for c in conds]
        lasso = find_lasso(g, p, conds, en, cyclic)
        if lasso is None:
            verdicts[p.name] = "holds"
            continue
        verdicts[p.name] = "violated"
        if violation is not None:
            violation = replace(violation, also_violated=(*violation.also_violated, p.name))
            continue
        violation = lasso_violation(spec, kernel, g, p, conds, lasso)
    return verdicts, violation


def _ckey(c: FairnessCondition) -> tuple[Any, ...]:
    """What makes two conditions' actions the same (their enabled nodes)."""
    return (c.action_ids, c.guards)


def lasso_violation(spec: Spec, kernel: Kernel, g: StateGraph, p: TemporalDecl,
                    conds: Sequence[FairnessCondition], lasso: Lasso,
                    also: tuple[str, ...] = ()) -> Violation:
    """The violation of ``p`` that ``lasso`` (in ``g``) shows: its states replayed with
    the scalar evaluator (``kernel``), why each fairness condition holds on the loop."""
    states = _replay(kernel, g, lasso)
    why = explain_fairness(kernel, conds, states, lasso.acts, lasso.loop)
    layout = spec.layout
    steps = [TraceStep(None, {}, layout.values_from_cells(states[0]))]
    for a, cells in zip(lasso.acts, states[1:]):
        inst = kernel.actions[a]
        steps.append(TraceStep(inst.name, dict(inst.params), layout.values_from_cells(cells)))
    return Violation(p.name, ViolationKind.LIVENESS, tuple(steps), also, loop=lasso.loop,
                     fairness=tuple(why), formula=p.formula)


class WalkLiveness:
    """Temporal properties checked on one random walk at a time, as TLC's simulation
    mode does (``LiveCheck1.checkTrace``): the walk is a graph of its own, its distinct
    states the nodes and its steps the edges (a walk that revisits a state closes a
    cycle), and every node stutters, as in :class:`StateGraph`. The properties are
    decided on that graph with the checker's own :func:`find_lasso`, the fairness
    conditions evaluated with each state's real successors (an action is enabled at
    a walk state when the spec has a step by it to another state, whether or not the
    walk took it). So a lasso found is a fair behaviour of the spec violating the
    property: WF(A) holds on its loop iff A is taken on it or disabled at one of its
    states, SF(A) iff taken or disabled at all of them; a walk that ends (no enabled
    action, or cut by the depth bound or zero weights) is followed by stuttering
    forever in its last state, fair only where no fairness condition's action is
    enabled. A walk finds no violation that is not one; not finding one proves
    nothing.

    Refused (``None`` from :meth:`of`, with the reason): specs with state or action
    constraints, as by the checker (a state cut off by a constraint would stutter)."""

    def __init__(self, spec: Spec, props: Sequence[TemporalDecl]) -> None:
        self.spec = spec
        self.per_prop = [(p, fairness_conditions(spec, p.fairness)) for p in props]
        parts = graph_parts(self.per_prop)
        self.kernel, self.names, self.step_names = temporal_kernel(spec, parts)
        self.plain = Kernel(spec, invariants=[], properties=[], check_deadlock=False,
                            symmetry=False, view=False)

    @classmethod
    def of(cls, spec: Spec, props: Sequence[TemporalDecl]
           ) -> tuple[WalkLiveness | None, str | None]:
        """The checker of ``props`` on walks of ``spec``, or None and why not."""
        if not props:
            return None, None
        if spec.constraints or spec.action_constraints:
            return None, (f"spec {spec.name} has state or action constraints: a state cut "
                          "off by one would stutter forever (as `check` refuses them)")
        return cls(spec, props), None

    @property
    def checked_as(self) -> dict[str, Any]:
        """The formulas and fairness conditions of the properties (``Result.liveness``)."""
        return {"formulas": {p.name: p.formula for p, _ in self.per_prop},
                "fairness": {p.name: [c.name for c in cs] for p, cs in self.per_prop}}

    def check(self, words: np.ndarray, fps: np.ndarray, acts: Sequence[int]
              ) -> Violation | None:
        """:meth:`check_many` of one walk."""
        return self.check_many([(words, fps, acts)])[0]

    def check_many(self, walks: Sequence[tuple[np.ndarray, np.ndarray, Sequence[int]]]
                   ) -> list[Violation | None]:
        """Per walk (its packed states, their fingerprints, its steps' actions): the
        first property (in declaration order) a fair lasso of the walk violates, with
        the other violated ones as ``also_violated``; None if there is none. The walks'
        states are evaluated in one batch of the kernel."""
        nodes = []
        for words, fps, _ in walks:
            uniq, first, inv = key_unique(fps)
            order = np.argsort(first, kind="stable")  # nodes in order of first visit
            rank = np.empty(len(uniq), dtype=np.int64)
            rank[order] = np.arange(len(uniq))
            nodes.append((uniq[order], words[first[order]], rank[inv.ravel()]))
        offs = np.cumsum([0] + [len(n[0]) for n in nodes])
        all_fps = np.concatenate([n[0] for n in nodes])
        ex = self.kernel.expand(np.concatenate([n[1] for n in nodes]), expand=True)
        false_at = []
        for rows in ex.label_rows:
            v = np.ones(len(all_fps), dtype=bool)
            v[rows] = False
            false_at.append(v)
        moves = key_ne(ex.child_fps, all_fps[ex.parent_rows])
        en_rows = ex.parent_rows[moves].astype(np.int64)
        en_acts = ex.action_ids[moves].astype(np.int64)
        hits = [(rows.astype(np.int64), ids.astype(np.int64))
                for rows, ids, _ in ex.step_label_hits]
        out: list[Violation | None] = []
        for i, ((_, _, acts), (nfps, _, node)) in enumerate(zip(walks, nodes)):
            lo, hi = int(offs[i]), int(offs[i + 1])
            mine = (en_rows >= lo) & (en_rows < hi)
            g = self._graph(nfps, node, acts, [v[lo:hi] for v in false_at],
                            [(r[(r >= lo) & (r < hi)] - lo, a[(r >= lo) & (r < hi)])
                             for r, a in hits])
            out.append(self._decide(g, en_rows[mine] - lo, en_acts[mine]))
        return out

    def _graph(self, nfps: np.ndarray, node: np.ndarray, acts: Sequence[int],
               preds: list[np.ndarray], hits: list[tuple[np.ndarray, np.ndarray]]
               ) -> StateGraph:
        """The walk's graph: nodes ``nfps``, edges its steps (``node[i]`` the node of
        its ``i``-th state); ``preds`` per state predicate, ``hits`` per step formula
        the (node, action) transitions where it is false."""
        n, n_act = len(nfps), len(self.kernel.actions)
        keys = sorted({(int(node[i]), int(a), int(node[i + 1]))
                       for i, a in enumerate(acts) if node[i] != node[i + 1]})
        src = np.array([k[0] for k in keys], dtype=np.int64)
        act = np.array([k[1] for k in keys], dtype=np.int32)
        dst = np.array([k[2] for k in keys], dtype=np.int32)
        indptr = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        steps = {name: ~np.isin(src * n_act + act, rows * n_act + ids)
                 for name, (rows, ids) in zip(self.step_names, hits)}
        initial = np.zeros(n, dtype=bool)
        initial[0] = True
        return StateGraph(nfps, initial, dst, act, indptr,
                          dict(zip(self.names, preds)), steps)

    def _decide(self, g: StateGraph, en_rows: np.ndarray, en_acts: np.ndarray
                ) -> Violation | None:
        _refuse_next_state_reads(g, [p for p, _ in self.per_prop], self.spec, self.plain)
        found: tuple[TemporalDecl, list[FairnessCondition], Lasso] | None = None
        also: list[str] = []
        distinct = list({_ckey(c): c for _, conds in self.per_prop for c in conds}.values())
        refuse_empty_selections(g, distinct, self.spec, self.plain)
        for p, conds in self.per_prop:
            en = []
            for c in conds:
                e = np.zeros(g.n, dtype=bool)
                hit = np.isin(en_acts, np.asarray(c.action_ids, dtype=np.int64))
                if c.guards:
                    hit = in_selection(c, hit, en_acts, en_rows, g.preds)
                e[en_rows[hit]] = True
                en.append(e)
            lasso = find_lasso(g, p, conds, en)
            if lasso is None:
                continue
            if found is None:
                found = (p, conds, lasso)
            else:
                also.append(p.name)
        if found is None:
            return None
        p, conds, lasso = found
        return lasso_violation(self.spec, self.plain, g, p, conds, lasso, tuple(also))


def _refuse_next_state_reads(g: StateGraph, props: Sequence[TemporalDecl], spec: Spec,
                             kernel: Kernel) -> None:
    """``P`` of ``P ~> A`` over steps is a state predicate: raise
    :class:`SpecEvaluationError` at the first transition where its value differs from
    its value on the state alone (it reads the next state ``t``)."""
    for p in props:
        if not (p.steps and p.form == "leads_to"):
            continue
        on_state = g.preds[f"{p.name}.P"]
        bad = np.flatnonzero(g.steps[f"{p.name}.P@step"] != on_state[g.src])
        if len(bad):
            e = int(bad[0])
            u = int(np.searchsorted(g.indptr, e, side="right")) - 1  # the edge's source
            here = np.zeros(g.n, dtype=bool)
            here[u] = True
            path = _bfs(g, g.initial, np.ones(g.n, dtype=bool), here)
            assert path is not None
            states = _replay(kernel, g, Lasso(tuple(path[0]), tuple(path[1]), len(path[1])))
            raise SpecEvaluationError(
                f"{p.where}: leads-to property {p.name}: its P must be a state predicate, "
                f"but it reads the next state t: on the step by "
                f"{kernel.actions[int(g.act[e])].label} from the state "
                f"{format_state(spec.layout, states[-1])} its value is not its value on "
                "that state alone; write P in terms of s only."
            )
