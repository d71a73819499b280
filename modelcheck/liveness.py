"""Liveness: temporal properties under weak and strong fairness, with lasso counterexamples.

This module owns checking the temporal properties of :mod:`modelcheck.temporal`.
:func:`check_liveness` runs the local explorer (so the invariants, action properties
and deadlocks are checked as usual, and decide first) with the state graph's collector
(:class:`~modelcheck.stategraph.GraphCollector`) as an observer of that one run
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
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .config import CheckConfig, available_cores
from .errors import SpecEvaluationError
from .explorer import Explorer, Progress
from .fairness import Fairness
from .graphstore import (
    NODE_LIMIT,
    EdgeStore,
    parallel_in_rows,
    restrict,
)
from .graphstore import out_edges as _out_edges
from .kernel import Kernel, format_state
from .library import Library
from .library import lookup as library_lookup
from .result import Result, Status, TraceStep, Violation, ViolationKind
from .spec import PredicateDecl, Spec
from .stategraph import (
    SMALL_GRAPH,
    GraphCollector,
    LivenessError,
    StateGraph,
    in_selection,
    temporal_kernel,
)
from .store import key_int, key_ne, key_unique
from .temporal import FairnessCondition, TemporalDecl, fairness_conditions, graph_parts

__all__ = ["check_liveness", "check_liveness_workers", "ShardedLiveness", "split_checks",
           "WalkLiveness", "lasso_violation", "nodes_on_cycles",
           "fair_components", "LivenessError", "Lasso", "find_lasso", "explain_fairness"]


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


# ------------------------------------------------------------------ fair SCCs


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
               edges: np.ndarray | None = None,
               back: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Per node of the CSR graph (nodes in breadth-first order, ``levels`` the first
    node of each level then the number of nodes; an edge goes at most one level up):
    it may lie on a cycle among the nodes of ``sub`` (and the edges of ``edges``). An
    edge to the next level is *forward*; a cycle takes an edge that is not (forward
    edges only climb), and each of its nodes is reached by forward edges from the
    target of such an edge (the last before it on the cycle) and reaches by forward
    edges the source of one (the next): the nodes so reached and reaching hold every
    cycle. One comparison per edge finds the edges that are not forward (few, then
    checked against ``sub`` and ``edges``); then level by level up, the forward
    edges out of the reached nodes only (kept), and down over those kept (a node not
    reached is left out in the end; the forward successors of a reached node are
    reached). ``back``: the edges that are not forward as ``(sources, targets)``
    (:attr:`~modelcheck.stategraph.StateGraph.back`), read instead of every edge
    (unless ``edges`` selects some)."""
    n = len(indptr) - 1
    reached = np.zeros(n, dtype=bool)
    reaching = np.zeros(n, dtype=bool)
    nl = len(levels) - 1
    scan = back is None or edges is not None
    if not scan:
        assert back is not None
        src, t = back
        ok = sub[src]
        ok &= sub[t]
        reached[t[ok]] = True
        reaching[src[ok]] = True
        del src, t, ok
    for lv in range(nl if scan else 0):  # the edges that are not forward
        u, v = int(levels[lv]), int(levels[lv + 1])
        e0, e1 = int(indptr[u]), int(indptr[v])
        if e1 == e0 or not sub[u:v].any():
            continue
        d = np.asarray(dst[e0:e1])
        at = np.flatnonzero(d < v)
        if not len(at):
            continue
        t = d[at]
        ok = sub[t]
        if edges is not None:
            ok &= edges[at + e0]
        at, t = at[ok], t[ok]
        src = np.searchsorted(indptr[u + 1:v + 1] - e0, at, side="right") + u
        ok = sub[src]
        reached[t[ok]] = True
        reaching[src[ok]] = True
    kept = []  # per level: the forward edges within sub out of reached nodes
    for lv in range(nl):  # level by level up (reached nodes lie in sub)
        u, v = int(levels[lv]), int(levels[lv + 1])
        rn = np.flatnonzero(reached[u:v])
        if not len(rn):
            continue
        eidx, esrc = _out_edges(indptr, rn + u)
        t = np.asarray(dst[eidx])
        ok = t >= v
        ok &= sub[t]
        if edges is not None:
            ok &= edges[eidx]
        t = t[ok]
        if len(t):
            reached[t] = True
            kept.append((esrc[ok], t))
    for src, t in reversed(kept):  # and down
        reaching[src[reaching[t]]] = True
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
    if not k:
        return np.zeros(1, dtype=np.int32), np.zeros(0, dtype=np.int32)
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


def _peel(indptr: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The nodes (sorted) of the CSR graph left when those without an edge in from
    the nodes left are removed, wave by wave (Kahn's algorithm): the nodes reached
    from a cycle, a superset of the nodes on cycles; none iff the graph has no cycle.
    Each edge is read once for the in-degrees and once when its source is removed
    (its target's in-degree counted down: the targets of a wave sorted, counted per
    run), however many waves there are (unlike :func:`_trim`'s rounds)."""
    k = len(indptr) - 1
    indeg = np.bincount(np.asarray(dst), minlength=k)
    wave = np.flatnonzero(indeg == 0)
    while len(wave):
        eidx, _ = _out_edges(indptr, wave)
        if not len(eidx):
            break
        t = np.asarray(dst[eidx])
        t.sort()
        first = np.empty(len(t), dtype=bool)
        first[0] = True
        np.not_equal(t[1:], t[:-1], out=first[1:])
        at = np.flatnonzero(first)
        u = t[at]
        indeg[u] -= np.diff(at, append=len(t))
        wave = u[indeg[u] == 0]
    return np.flatnonzero(indeg)


def _cycle_subgraph(g: StateGraph, sub: np.ndarray, edges: np.ndarray | None = None,
                    levels: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The nodes of ``sub`` that may lie on a cycle within it (and the edges of
    ``edges``; by :func:`_may_cycle` when ``g``'s nodes are in BFS order and
    ``levels``, again on what it leaves while that shrinks by half, else all of them;
    then peeled by :func:`_peel`, in one pass over the
    edges, and what is left trimmed by :func:`_trim`) and the CSR copy of the edges
    among them, numbered ``0..k - 1``, without repeated targets:
    ``(nodes, indptr, dst)``. A graph without cycles leaves none, so its check needs
    no SCC routine (nor scipy)."""
    if g.levels is not None and levels:
        first = next((got for mask, got in g.may_cycle if edges is None
                      and np.array_equal(mask, sub)), None)  # followed by the collector
        sub = first.copy() if first is not None else \
            _may_cycle(g.levels, g.indptr, g.dst, sub, edges, g.back)
        # and again on what it left, while that shrinks by half or more: a cycle within
        # sub lies within what is left of it (KRaft L5's P ~> Q: 1,992,964 nodes ->
        # 292,767 -> 2,771 -> none, each pass cheaper than the copy and peel it saves)
        left = int(np.count_nonzero(sub))
        while left:
            sub = _may_cycle(g.levels, g.indptr, g.dst, sub, edges, g.back)
            now = int(np.count_nonzero(sub))
            if 2 * now > left:
                break
            left = now
    nodes = np.flatnonzero(sub)
    indptr, dst = _induced(nodes, g.indptr, g.dst, edges, simple=True)
    keep = _peel(indptr, dst)
    if len(keep) * 2 < len(nodes):  # else left to _trim (a copy costs more)
        indptr, dst = _induced(keep, indptr, dst)
        nodes = nodes[keep]
    keep = _trim(indptr, dst)
    if len(keep) < len(nodes):
        indptr, dst = _induced(keep, indptr, dst)
        nodes = nodes[keep]
    return nodes, indptr, dst


def _trim(indptr: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The nodes (sorted) of the CSR graph left when the nodes without an edge in or
    without an edge out among those left are removed, round by round: a node on a
    cycle keeps its edges along the cycle, so they hold every cycle, and the removed
    nodes are components of one node each. Each round reads the edges left once (a
    graph without cycles is removed in full, in as many rounds as its longest path
    has nodes; the rounds stop early when they remove few nodes, the rest left to
    the SCC routine)."""
    n = len(indptr) - 1
    alive = np.ones(n, dtype=bool)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(indptr))
    d = np.asarray(dst)
    left = n
    while len(d):
        has_in = np.zeros(n, dtype=bool)
        has_in[d] = True
        has_out = np.zeros(n, dtype=bool)
        has_out[src] = True
        alive &= has_in
        alive &= has_out
        now = int(np.count_nonzero(alive))
        if now == left:
            break
        ok = alive[src]
        ok &= alive[d]
        src, d = src[ok], d[ok]
        shrunk, left = left - now, now
        if shrunk * 64 < now:  # few removed: not worth another pass over the edges
            break
    if not len(d):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(alive)


def _on_cycles(g: StateGraph, mask: np.ndarray, sub: np.ndarray) -> np.ndarray:
    """Per node of ``mask``: it lies on a cycle among the nodes of ``sub``."""
    nodes, indptr, dst = _cycle_subgraph(g, mask & sub)
    out = np.zeros(g.n, dtype=bool)
    if len(dst):
        lab = strong_components(len(nodes), indptr, dst)[1]
        out[nodes] = np.bincount(lab)[lab] > 1
    return out


def nodes_on_cycles(g: StateGraph) -> np.ndarray:
    """Per node of ``g``: it lies on a cycle (in a strongly connected component of more
    than one node). Computed once (kept in :attr:`StateGraph.cyclic_nodes`), by one SCC
    pass over the whole graph; the analysis of each property may then leave the other
    nodes out (a cycle within a subgraph lies within one component of the whole
    graph)."""
    if g.cyclic_nodes is None:
        everything = np.ones(g.n, dtype=bool)
        g.cyclic_nodes = _on_cycles(g, everything, everything)
    return g.cyclic_nodes


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
    graph has no self-loops). With ``cyclic`` (:func:`nodes_on_cycles`: the nodes on
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
        multi: np.ndarray | None = None  # no edge on a cycle: every node alone
        if len(dst):
            lab_nodes = np.full(len(nodes), -1, dtype=np.int64)
            multi = np.zeros(len(nodes), dtype=bool)
            lab = strong_components(len(may), indptr, dst)[1]
            at = np.searchsorted(nodes, may)
            lab_nodes[at] = lab
            # in a component of several nodes (there are no self-loops)
            multi[at] = np.bincount(lab)[lab] > 1
            del lab, at
        single = nodes if multi is None else nodes[~multi]
        alone = np.ones(len(single), dtype=bool)
        for en_c in en:
            alone &= ~en_c[single]
        if stutter is not None:
            alone &= stutter[single]
        fair_single = single[alone]
        comp[fair_single] = np.arange(next_id, next_id + len(fair_single), dtype=np.int32)
        next_id += len(fair_single)
        del single, alone, fair_single
        if multi is None or not multi.any():
            break
        members = nodes[multi]
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
    # what the behaviour must avoid from some point on: the nodes of ``mask``
    # (:func:`_avoided`), and over steps the edges of ``edges`` (the steps where the
    # formula A is false) and the nodes where stuttering is such a step (``stutter``)
    avoided = _avoided(prop)
    mask = everything if avoided is None else ~g.preds[avoided]
    edges = stutter = None
    if prop.steps:
        edges = ~g.steps[f"{prop.name}.A"]
        stutter = ~g.preds[f"{prop.name}.A@stutter"]
    if prop.form == "leads_to":
        p = g.preds[f"{prop.name}.P"]
    elif not prop.steps:
        p = g.preds[prop.name]
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
                                        if not c.guards],
                               may_cycle=_first_cycle_masks([p for p, _ in per_prop]))
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


def _avoided(p: TemporalDecl) -> str | None:
    """The state predicate false on the nodes a behaviour violating ``p`` stays in from
    some point on (None: every node), the node mask of :func:`find_lasso`'s search for
    fair components (:func:`fair_components`): ``Q`` of ``P ~> Q``, ``P`` of ``[]<>P``
    and ``<>P``; every node for ``<>[]P`` (a loop through a node where ``P`` is false) and
    over steps (an edge mask then: the steps where ``A`` is false)."""
    if p.steps or p.form == "eventually_always":
        return None
    return f"{p.name}.Q" if p.form == "leads_to" else p.name


def _whole_graph_first(props: Sequence[object]) -> bool:
    """Whether the check of ``props`` (:func:`_decide`) starts with one SCC pass over
    the whole graph (:func:`nodes_on_cycles`), which pays off with several properties;
    each property's search then leaves out the nodes on no cycle, with no pass of
    :func:`_may_cycle` of its own."""
    return len(props) > 1


def _first_cycle_masks(props: Sequence[TemporalDecl]) -> list[str | None]:
    """The node mask of the first pass of :func:`_may_cycle` of the check of ``props``
    (:func:`_decide`), for the collector to follow level by level: the nodes where the
    named state predicate is false, None for every node; none when the first pass has
    an edge mask (a property over steps). Every node when the check starts on the whole
    graph (:func:`_whole_graph_first`), else the mask :func:`find_lasso` gives
    :func:`fair_components` (:func:`_avoided`); a mask the analysis does not ask for is
    unused (it compares them)."""
    if _whole_graph_first(props):
        return [None]
    return [] if props[0].steps else [_avoided(props[0])]


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
    with ShardedLiveness(spec, cfg, temporal, library) as live:
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
    one-process analysis (:func:`_decide`): the same verdicts, the same lassos. A
    context manager: :meth:`close` lets the run go."""

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
        #: the action sets of the fairness conditions without guards: their nodes with
        #: a step are collected as the graph is read (as the one-process collector's)
        self.enabled = tuple(dict.fromkeys(c.action_ids for _, cs in self.per_prop
                                           for c in cs if not c.guards))
        self.run: Any = None
        self.decided = False
        #: reads the state graph while the run goes on (see :meth:`_committed`)
        self.reader: Any = None

    def attach(self, run: Any) -> None:
        """Decide the properties at the end of ``run`` (a ``ShardedRun`` made with
        ``temporal=self.names``)."""
        if self.selected:
            self.run = run
            run.after = self.decide
            if GRAPH_READ_AHEAD:
                run.on_commit = self._committed

    def _committed(self, depth: int) -> None:
        """The run committed levels ``0..depth``: the graph's reader goes on with them
        (:class:`~modelcheck.shards.stategraph.GraphReader`, made at the first)."""
        from .shards.engine import BucketEngine
        from .shards.stategraph import GraphReader

        run = self.run
        if run is None or not isinstance(run.engine, BucketEngine):
            return
        if self.reader is None:
            kernel = run.kernel
            self.reader = GraphReader(run.engine.root, run.engine.buckets,
                                      len(kernel.actions), len(kernel.labels),
                                      len(kernel.step_labels), SPILL_EDGES,
                                      enabled=self.enabled,
                                      cycles=self._cycle_columns(kernel))
        self.reader.committed(depth)

    def _cycle_columns(self, kernel: Kernel) -> list[int | None]:
        """The masks of the analysis' first :func:`_may_cycle` passes
        (:func:`_first_cycle_masks`) as the columns of the kernel's state predicates
        false on them (None: every node), for the graph's read to follow."""
        names = [p.name for p in kernel.labels]
        return [None if m is None else names.index(m)
                for m in _first_cycle_masks([p for p, _ in self.per_prop])
                if m is None or m in names]

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
                                 spill_edges=SPILL_EDGES,
                                 threads=min(GRAPH_READ_THREADS, available_cores()),
                                 ahead=self.reader, enabled=self.enabled,
                                 cycles=self._cycle_columns(kernel))
        self.reader = None
        # The graph is in memory (unless its edges were spilled into the run directory):
        # the run directory, read no more (a lasso is replayed by the kernel), is
        # removed meanwhile, as the run would once this returns; the files' unlinking
        # is the operating system's work, beside the decision's.
        tidy = None
        if not parts.store.spilled and REMOVE_WHILE_DECIDING:
            tidy = threading.Thread(target=run.rundir.cleanup, name="modelcheck-cleanup")
            tidy.start()
        try:
            initial = np.zeros(len(parts.fps), dtype=bool)
            initial[:int(parts.levels[1]) if len(parts.levels) > 1 else 0] = True
            g = StateGraph(parts.fps, initial, parts.dst, parts.act, parts.indptr,
                           {n: np.ascontiguousarray(parts.labels[:, j])
                            for j, n in enumerate(names)},
                           {n: np.ascontiguousarray(parts.steps[:, j])
                            for j, n in enumerate(step_names)},
                           enabled_sets=parts.enabled, levels=parts.levels,
                           back=parts.back, may_cycle=parts.may_cycle)
            return _decide_into(self.spec, res, g, self.per_prop, t0, parts.store,
                                self.checked_as)
        finally:
            parts.store.close()
            if tidy is not None:
                tidy.join()

    def close(self) -> None:
        """Let the run go (its ``after`` hook removed, the reference dropped): a run that
        raised decides nothing, and its engine, kernel and session are freed with it.
        Idempotent; ``with ShardedLiveness(...) as live:`` closes it however the block
        ends."""
        run, self.run = self.run, None
        if run is not None and getattr(run, "after", None) == self.decide:
            run.after = None
        if run is not None and getattr(run, "on_commit", None) == self._committed:
            run.on_commit = None
        reader, self.reader = self.reader, None
        if reader is not None:
            reader.close()

    def __enter__(self) -> ShardedLiveness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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


#: the most threads that read a sharded run's state graph back, a level each (the
#: workers are done by then: their cores are free)
GRAPH_READ_THREADS = 4
#: with workers, read the state graph level by level while the run goes on (a thread of
#: the coordinating process, :class:`~modelcheck.shards.stategraph.GraphReader`), not
#: all after it
GRAPH_READ_AHEAD = True

#: with workers, remove the run directory (when temporary: the run's own cleanup) while
#: the properties are decided, once the state graph is read into memory
REMOVE_WHILE_DECIDING = True

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
    cyclic = nodes_on_cycles(g) if _whole_graph_first(per_prop) else None
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
