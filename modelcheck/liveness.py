"""Liveness: temporal properties under weak and strong fairness, with lasso counterexamples.

This module owns checking the temporal properties of :mod:`modelcheck.temporal`.
:func:`check_liveness` runs the local explorer (so the invariants, action properties
and deadlocks are checked as usual, and decide first) and collects the state graph
through its seams: ``on_level`` gives every level's states (numbered in BFS order), on
which the properties' state predicates are evaluated in batches by the kernel (one
byte a state per predicate), and ``on_transitions`` every transition into a stored
state as arrays (source index, target fingerprint, action id: 14 bytes an edge while
exploring, no Python object per edge). After the BFS the targets become node indices:
the graph holds 10 bytes an edge (``int32`` source and target, ``int16`` action) and
17 bytes a state (fingerprint, CSR offset, flags), plus transient arrays while it is
built and searched (peak about twice that).

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
where its stuttering step is not an ``A`` step. ``A`` is evaluated on every edge (the
collector expands each level once more, with the step formulas as the kernel's action
properties) and on each node's stuttering step (as a state predicate of ``s``, ``s``).

**Fair cycles** by strongly connected components (``scipy.sparse.csgraph``): an SCC C
satisfies ``WF(A)`` iff an A-step lies inside C or A is disabled at some node of C (if
not, no cycle inside C is fair: C is dropped); ``SF(A)`` iff an A-step lies inside C or
A is disabled at every node of C (if not, the nodes of C where A is enabled are removed
and the rest is split into SCCs again: Emerson-Lei refinement). The nodes left in
fair SCCs are exactly the nodes on fair cycles.

**Counterexamples** are lassos: the shortest prefix from an initial state (for ``~>``:
to the nearest ``P /\\ ~Q`` state, then the shortest path within ``~Q`` to a fair SCC),
then a cycle inside the SCC through an edge that takes, or a node that disables, each
fairness condition, back to its start (no step at all when the start alone does: the
behaviour stutters there). States are rebuilt by replaying the spec's actions with the
scalar evaluator, and why each fairness condition holds on the loop is computed on the
replayed states.

Refused: state constraints (TLC warns that liveness with ``CONSTRAINT`` may be
unsound: cut-off states would stutter forever), symmetry reduction unless switched off
(unsound for liveness, as TLC warns), ``--max-depth`` and checkpoints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .config import CheckConfig
from .errors import SpecEvaluationError, UsageError
from .explorer import Explorer, Progress
from .kernel import Kernel, format_state
from .library import Library
from .library import lookup as library_lookup
from .result import Result, TraceStep, Violation
from .spec import Spec
from .temporal import FairnessCondition, TemporalDecl, fairness_conditions

__all__ = ["check_liveness", "run_check", "split_checks", "refuse_liveness", "StateGraph",
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
    (self-loops are implicit: every state stutters)."""

    fps: np.ndarray        # uint64, per node
    initial: np.ndarray    # bool per node
    src: np.ndarray        # int32 per edge, edges sorted by source
    dst: np.ndarray        # int32
    act: np.ndarray        # int16 (int32 past 32,767 instances) action instance id
    indptr: np.ndarray     # CSR: edges of node i are indptr[i]:indptr[i + 1]
    preds: dict[str, np.ndarray]  # state predicate values per node
    #: step formula values per edge (temporal properties over steps), by part name
    steps: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.fps)

    @property
    def nbytes(self) -> int:
        return int(self.fps.nbytes + self.initial.nbytes + self.src.nbytes + self.dst.nbytes
                   + self.act.nbytes + self.indptr.nbytes
                   + sum(p.nbytes for p in self.preds.values())
                   + sum(p.nbytes for p in self.steps.values()))

    def enabled(self, cond: FairnessCondition) -> np.ndarray:
        """Per node: the condition's action has a step (an edge to another node)."""
        out = np.zeros(self.n, dtype=bool)
        out[self.src[self.in_cond(cond)]] = True
        return out

    def in_cond(self, cond: FairnessCondition) -> np.ndarray:
        """Per edge: its action is one of the condition's."""
        if len(cond.action_ids) == 1:
            return self.act == cond.action_ids[0]
        return np.isin(self.act, np.asarray(cond.action_ids, dtype=self.act.dtype))


class GraphCollector:
    """Collects the state graph through the explorer's hooks and evaluates the state
    predicates ``parts`` (invariant-like declarations) on every stored state, and the
    step formulas among them (``kind == "action"``) on every transition: each level
    is then expanded once more by the collector's kernel, which reports the
    transitions where a step formula is false as (source, action) keys (an action
    instance has at most one successor), turned into one boolean per edge.

    Nodes are numbered in BFS order (level by level, each level sorted by
    fingerprint), so a transition's source, a state of the level being expanded, gets
    its index at once (``int32``); its target keeps its fingerprint until the end (14
    bytes an edge while exploring: ``int32`` source, ``uint64`` target, ``int16``
    action)."""

    def __init__(self, spec: Spec, parts: Sequence[Any], batch_size: int) -> None:
        state_parts = [p for p in parts if p.kind != "action"]
        step_parts = [p for p in parts if p.kind == "action"]
        self.kernel = Kernel(spec, invariants=state_parts, properties=step_parts,
                             check_deadlock=False, symmetry=False)
        self.names = [p.name for p in state_parts]
        self.step_names = [p.name for p in step_parts]
        self._n_act = len(spec.actions)
        self._step_false: list[list[np.ndarray]] = [[] for _ in step_parts]
        self.batch_size = max(2, batch_size)
        self._act_type = np.int16 if len(spec.actions) < 1 << 15 else np.int32
        self._fps: list[np.ndarray] = []
        self._bits: list[np.ndarray] = []
        self._n_init = 0
        self._n = 0
        self._level = np.zeros(0, dtype=np.uint64)
        self._offset = 0
        self._src: list[np.ndarray] = []
        self._dst: list[np.ndarray] = []
        self._act: list[np.ndarray] = []
        self.edge_bytes = 0

    def on_level(self, depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        if depth == 0:
            self._n_init = len(fps)
        bits = np.ones((len(fps), len(self.names)), dtype=bool)
        for start in range(0, len(fps), self.batch_size):
            ex = self.kernel.expand(words[start:start + self.batch_size],
                                    expand=bool(self.step_names))
            for j, rows in enumerate(ex.invariant_rows):
                bits[start + rows, j] = False
            for j, (rows, ids, _fps) in enumerate(ex.property_hits):
                node = (rows + start + self._n).astype(np.int64)
                self._step_false[j].append(node * self._n_act + ids)
        self._level = np.array(fps, dtype=np.uint64)
        self._offset = self._n
        self._n += len(fps)
        self._fps.append(self._level)
        self._bits.append(bits)

    def on_transitions(self, parents: np.ndarray, acts: np.ndarray,
                       children: np.ndarray) -> None:
        keep = parents != children
        src = np.searchsorted(self._level, parents[keep]) + self._offset
        self._src.append(src.astype(np.int32))
        self._dst.append(children[keep].astype(np.uint64))
        self._act.append(acts[keep].astype(self._act_type))
        self.edge_bytes += len(src) * (4 + 8 + np.dtype(self._act_type).itemsize)

    def graph(self) -> StateGraph:
        """The collected graph, with node indices (frees the collected arrays)."""
        fps = np.concatenate(self._fps) if self._fps else np.zeros(0, dtype=np.uint64)
        bits = np.concatenate(self._bits) if self._bits else np.zeros((0, len(self.names)), bool)
        self._fps, self._bits = [], []
        initial = np.zeros(len(fps), dtype=bool)
        initial[:self._n_init] = True

        def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        src = cat(self._src, np.int32)
        self._src = []
        act = cat(self._act, self._act_type)
        self._act = []
        # targets: fingerprints to BFS indices, through the sorted fingerprints and with
        # sorted queries (searchsorted is cache-friendly on sorted keys)
        by_fp = np.argsort(fps, kind="stable")
        sorted_fps = fps[by_fp]
        dst_fp = cat(self._dst, np.uint64)
        self._dst = []
        q = np.argsort(dst_fp)
        dst = np.empty(len(dst_fp), dtype=np.int32)
        dst[q] = by_fp[np.searchsorted(sorted_fps, dst_fp[q])]
        del dst_fp, q, sorted_fps, by_fp
        if len(src) > 1 and np.any(src[1:] < src[:-1]):
            order = np.argsort(src, kind="stable")
            src, dst, act = src[order], dst[order], act[order]
        indptr = np.zeros(len(fps) + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=len(fps)), out=indptr[1:])
        preds = {name: np.ascontiguousarray(bits[:, j]) for j, name in enumerate(self.names)}
        steps = {}
        if self.step_names:
            keys = src.astype(np.int64) * self._n_act + act
            for name, false in zip(self.step_names, self._step_false):
                steps[name] = ~np.isin(keys, cat(false, np.int64))
            self._step_false = []
        return StateGraph(fps, initial, src, dst, act, indptr, preds, steps)


# ------------------------------------------------------------------ fair SCCs
def fair_components(g: StateGraph, mask: np.ndarray, conds: Sequence[FairnessCondition],
                    enabled: Sequence[np.ndarray] | None = None,
                    edges: np.ndarray | None = None, stutter: np.ndarray | None = None
                    ) -> np.ndarray:
    """Per node, the id of the fair SCC (within the nodes of ``mask`` and the edges of
    ``edges``) it lies in, or -1: the nodes with id >= 0 are exactly those on fair
    cycles inside them. A cycle of no steps stutters forever at its node: with
    ``stutter``, only at the nodes it marks."""
    en = list(enabled) if enabled is not None else [g.enabled(c) for c in conds]
    cond_edges = [g.in_cond(c) for c in conds]
    comp = np.full(g.n, -1, dtype=np.int64)
    next_id = 0
    mask = mask.copy()
    while mask.any():
        em = mask[g.src] & mask[g.dst]
        if edges is not None:
            em &= edges
        s, d = g.src[em], g.dst[em]
        m = csr_matrix((np.ones(len(s), dtype=np.int8), (s, d)), shape=(g.n, g.n))
        ncomp, lab = connected_components(m, directed=True, connection="strong")
        nodes = np.flatnonzero(mask)
        lab_nodes = lab[nodes]
        size = np.bincount(lab_nodes, minlength=ncomp)
        internal = lab[s] == lab[d]
        ok = size > 0
        if stutter is not None:
            # a component of one node has no step inside: its cycle is stuttering
            stuck = np.zeros(ncomp, dtype=bool)
            stuck[lab_nodes] = stutter[nodes]
            ok &= (size > 1) | stuck
        remove = np.zeros(g.n, dtype=bool)
        refine = np.zeros(ncomp, dtype=bool)
        for c, en_c, ce in zip(conds, en, cond_edges):
            taken = np.zeros(ncomp, dtype=bool)
            taken[lab[s[internal & ce[em]]]] = True
            n_en = np.bincount(lab_nodes, weights=en_c[nodes], minlength=ncomp)
            if c.kind == "weak":
                ok &= taken | (n_en < size)
            else:
                fail = ~taken & (n_en > 0)
                refine |= fail
                remove[nodes] |= fail[lab_nodes] & en_c[nodes]
        fair = ok & ~refine
        in_fair = fair[lab_nodes]
        ids = np.cumsum(fair) - 1 + next_id
        comp[nodes[in_fair]] = ids[lab_nodes[in_fair]]
        next_id += int(fair.sum())
        again = (ok & refine)[lab_nodes] & ~remove[nodes]
        mask = np.zeros(g.n, dtype=bool)
        mask[nodes[again]] = True
    return comp


# ------------------------------------------------------------------ paths
def _bfs(g: StateGraph, sources: np.ndarray, allowed: np.ndarray, targets: np.ndarray,
         edges: np.ndarray | None = None) -> tuple[list[int], list[int]] | None:
    """The shortest path within ``allowed`` (and the edges of ``edges``) from a source
    to a target: ``(nodes, actions)`` (``actions[i]`` leads from ``nodes[i]`` to
    ``nodes[i + 1]``); among equal lengths the smallest node indices win
    (deterministic). None if no target is reachable."""
    seen = np.zeros(g.n, dtype=bool)
    pred = np.full(g.n, -1, dtype=np.int64)
    pact = np.full(g.n, -1, dtype=np.int64)
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
        starts, ends = g.indptr[frontier], g.indptr[frontier + 1]
        counts = ends - starts
        if counts.sum() == 0:
            break
        eidx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        nb = g.dst[eidx]
        ok = allowed[nb] & ~seen[nb]
        if edges is not None:
            ok &= edges[eidx]
        eidx, nb = eidx[ok], nb[ok]
        uniq, first = np.unique(nb, return_index=True)  # first: the smallest source
        pred[uniq] = g.src[eidx[first]]
        pact[uniq] = g.act[eidx[first]]
        seen[uniq] = True
        frontier = uniq
    return None


def _reach_back(g: StateGraph, targets: np.ndarray, allowed: np.ndarray,
                edges: np.ndarray | None = None) -> np.ndarray:
    """The nodes of ``allowed`` from which a path within ``allowed`` (and the edges of
    ``edges``) reaches ``targets``."""
    em = allowed[g.src] & allowed[g.dst]
    if edges is not None:
        em &= edges
    rs, rd = g.dst[em], g.src[em]  # reversed edges
    order = np.argsort(rs, kind="stable")
    rs, rd = rs[order], rd[order]
    indptr = np.searchsorted(rs, np.arange(g.n + 1))
    seen = targets & allowed
    frontier = np.flatnonzero(seen)
    while len(frontier):
        starts, ends = indptr[frontier], indptr[frontier + 1]
        counts = ends - starts
        if counts.sum() == 0:
            break
        eidx = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        nb = np.unique(rd[eidx])
        nb = nb[~seen[nb]]
        seen[nb] = True
        frontier = nb
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
    cin = inside[g.src] & inside[g.dst]
    if edges is not None:
        cin &= edges
    for c, en_c in zip(conds, en):
        steps = np.flatnonzero(cin & g.in_cond(c))
        if c.kind == "weak" and not en_c[start]:
            continue  # disabled at the start of the loop
        if c.kind == "strong" and not (en_c & inside).any():
            continue  # disabled on the whole SCC
        if len(steps):
            e = int(steps[0])
            waypoints.append((int(g.src[e]), int(g.act[e]), int(g.dst[e])))
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
        e = g.indptr[start] + int(np.flatnonzero(cin[g.indptr[start]:g.indptr[start + 1]])[0])
        waypoints.append((start, int(g.act[e]), int(g.dst[e])))
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
               en: Sequence[np.ndarray] | None = None) -> Lasso | None:
    """A lasso violating ``prop`` under ``conds``, or None if the property holds."""
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
    comp = fair_components(g, mask, conds, en, edges, stutter)
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
    fp0 = int(g.fps[lasso.nodes[0]])
    cur = next(c for c in kernel.initial_states() if kernel.fingerprint(c) == fp0)
    states = [cur]
    for a, node in zip(lasso.acts, lasso.nodes[1:]):
        nxt = kernel.step(cur, kernel.actions[a])
        if nxt is None or kernel.fingerprint(nxt) != int(g.fps[node]):  # pragma: no cover
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
        ids = set(c.action_ids)

        def enabled(i: int, ids: set[int] = ids) -> bool:
            cells = states[i]
            return any((nxt := kernel.step(cells, kernel.actions[a])) is not None
                       and nxt != list(cells) for a in ids)

        taken = [k for k in range(loop, len(acts))
                 if acts[k] in ids and list(states[k]) != list(states[k + 1])]
        if taken:
            k = taken[0]
            out.append(f"{c.name}: taken on the loop (step to state {k + 2}, "
                       f"{kernel.actions[acts[k]].label})")
            continue
        off = [i for i in loop_states if not enabled(i)]
        if c.kind == "weak":
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
                   **options: Any) -> Result:
    """Explore ``spec`` (checking what ``config`` selects of its invariants, action
    properties and deadlocks) and then its temporal properties (``temporal``, default:
    those ``config`` selects, see :func:`split_checks`). A safety violation is reported
    first; otherwise the first violated temporal property in declaration order, with a
    lasso (``Violation.kind == "liveness"``; the other violated ones are listed in its
    ``also_violated``, and every verdict in ``Result.liveness["properties"]``)."""
    cfg = CheckConfig.of(config, options, "check_liveness")
    safety, selected = split_checks(spec, cfg, library)
    if temporal is not None:
        selected = list(temporal)
    if not selected:
        return Explorer(spec, safety, library=library, progress=progress).run()
    _refusals(spec, cfg, selected)
    per_prop = [(p, fairness_conditions(spec, p.fairness)) for p in selected]
    checked_as = {"formulas": {p.name: p.formula for p in selected},
                  "fairness": {p.name: [c.name for c in cs] for p, cs in per_prop}}
    parts = [part for p in selected for part in p.parts()]
    collector = GraphCollector(spec, parts, cfg.batch_size)
    explorer = Explorer(spec, safety, library=library, progress=progress,
                        on_transitions=collector.on_transitions, on_level=collector.on_level)
    res = explorer.run()
    res.checked["temporal"] = [p.name for p in selected]
    if res.status != "ok":
        res.liveness = {"properties": {p.name: "not checked" for p in selected},
                        "reason": f"the exploration ended with status {res.status}",
                        **checked_as}
        return res
    t0 = time.perf_counter()
    collected = collector.edge_bytes
    g = collector.graph()
    kernel = Kernel(spec, invariants=[], properties=[], check_deadlock=False, symmetry=False)
    _refuse_next_state_reads(g, selected, spec, kernel)
    verdicts: dict[str, str] = {}
    enabled_cache: dict[tuple[int, ...], np.ndarray] = {}
    for p, conds in per_prop:
        en = []
        for c in conds:
            if c.action_ids not in enabled_cache:
                enabled_cache[c.action_ids] = g.enabled(c)
            en.append(enabled_cache[c.action_ids])
        lasso = find_lasso(g, p, conds, en)
        if lasso is None:
            verdicts[p.name] = "holds"
            continue
        verdicts[p.name] = "violated"
        if res.violation is not None:
            v = res.violation
            res.violation = Violation(v.property, v.kind, v.trace, (*v.also_violated, p.name),
                                      v.loop, v.fairness, v.formula)
            continue
        states = _replay(kernel, g, lasso)
        why = explain_fairness(kernel, conds, states, lasso.acts, lasso.loop)
        layout = spec.layout
        steps = [TraceStep(None, {}, layout.values_from_cells(states[0]))]
        for a, cells in zip(lasso.acts, states[1:]):
            inst = kernel.actions[a]
            steps.append(TraceStep(inst.name, dict(inst.params), layout.values_from_cells(cells)))
        res.violation = Violation(p.name, "liveness", tuple(steps), loop=lasso.loop,
                                  fairness=tuple(why), formula=p.formula)
        res.status = "violation"
    res.seconds += time.perf_counter() - t0
    res.liveness = {
        "properties": verdicts, "nodes": g.n, "edges": len(g.src),
        "seconds": round(time.perf_counter() - t0, 3),
        "graph_bytes": g.nbytes, "collected_edge_bytes": collected, **checked_as,
    }
    return res


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
            here = np.zeros(g.n, dtype=bool)
            here[g.src[e]] = True
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


def run_check(spec: Spec, config: CheckConfig, *, progress: Callable[[Progress], None] | None
              = None, **kwargs: Any) -> Result:
    """What ``modelcheck check`` runs: the explorer, and the liveness checker when
    ``config`` selects temporal properties of ``spec``."""
    return check_liveness(spec, config, progress=progress, **kwargs)
