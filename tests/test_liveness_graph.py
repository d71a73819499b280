"""The liveness checker's state graph against simple reference implementations: the
collected graph (targets mapped to node indices level by level, CSR order, parallel
edges) against a dictionary built from the raw transitions, the fingerprint index,
the CSR helpers, and the spilled edge arrays against the in-memory ones."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Bool, Int, Spec, action, check_liveness, where
from modelcheck.config import CheckConfig
from modelcheck.explorer import Explorer
from modelcheck.graphstore import (
    FpIndex,
    any_per_node,
    csr_order,
    csr_place,
    parallel_edges,
    parallel_in_rows,
    restrict,
)
from modelcheck.kernel import Kernel
from modelcheck.liveness import fair_components, nodes_on_cycles, split_checks
from modelcheck.stategraph import GraphCollector, StateGraph
from modelcheck.store import keys_of
from modelcheck.temporal import FairnessCondition, always_eventually, fairness_conditions
from tests.livespec import live_spec

U64 = st.integers(0, 2**64 - 1)


# ------------------------------------------------------------------ the collected graph
def _collect(spec: Spec, batch_size: int, spill_dir: str | None = None, background: bool = True,
             parts: list[Any] | None = None
             ) -> tuple[StateGraph, list[np.ndarray], list[tuple[int, int, int]], GraphCollector]:
    """The collector's graph, the levels and every raw transition ``(parent fp, action,
    child fp)`` the engine reported."""
    col = GraphCollector(spec, parts or [], batch_size, spill_dir, background)
    raw: list[tuple[int, int, int]] = []
    levels: list[np.ndarray] = []

    def on_transitions(rows: np.ndarray, acts: np.ndarray, children: np.ndarray) -> None:
        raw.extend(zip(levels[-1][rows].tolist(), acts.tolist(), children.tolist()))
        col.on_transitions(rows, acts, children)

    def on_level(depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        levels.append(np.array(fps))
        col.on_level(depth, fps, words)

    res = Explorer(spec, CheckConfig(batch_size=batch_size), on_transitions=on_transitions,
                   on_level=on_level).run()
    assert res.status == "ok"
    return col.graph(), levels, raw, col


def _reference(levels: list[np.ndarray], raw: list[tuple[int, int, int]]
               ) -> tuple[np.ndarray, list[tuple[int, int, int]], list[int]]:
    """Node fingerprints in BFS order, the edges ``(source, action, target)`` in CSR
    order (by source, then action) and the positions of parallel edges."""
    fps = np.concatenate(levels)
    index = {int(f): i for i, f in enumerate(fps)}
    edges = sorted((index[p], a, index[c]) for p, a, c in raw if p != c)
    seen: set[tuple[int, int]] = set()
    parallel = []
    for i, (s, _a, d) in enumerate(edges):
        if (s, d) in seen:
            parallel.append(i)
        seen.add((s, d))
    return fps, edges, parallel


def _same_graph(g: StateGraph, levels: list[np.ndarray], raw: list[tuple[int, int, int]]
                ) -> int:
    fps, edges, parallel = _reference(levels, raw)
    assert np.array_equal(g.fps, fps)
    assert g.initial.tolist() == [i < len(levels[0]) for i in range(len(fps))]
    src = np.array([e[0] for e in edges], dtype=np.int64)
    assert np.array_equal(g.indptr, np.searchsorted(src, np.arange(len(fps) + 1)))
    assert g.src.tolist() == src.tolist()
    assert np.asarray(g.act).tolist() == [e[1] for e in edges]
    assert np.asarray(g.dst).tolist() == [e[2] for e in edges]
    # the SCC routine's copy leaves out the parallel edges
    indptr, dst = restrict(g.indptr, g.dst, np.ones(g.n, dtype=bool), simple=True)
    simple = [e for i, e in enumerate(edges) if i not in set(parallel)]
    assert [(u, int(d)) for u in range(g.n) for d in dst[indptr[u]:indptr[u + 1]]] == \
        [(s, d) for s, _a, d in simple]
    return len(parallel)


class Resets(Spec):
    """A counter with a reset from every state: edges back to level 0 from every level
    (targets further back than the level before), and two actions reaching the same
    state (parallel edges)."""

    check_deadlock = False
    x = Int(0, 9)
    b = Bool()

    @action
    def Inc(self, s, t):
        t.x = where(s.x < 9, s.x + 1, s.x)
        return s.x < 9

    @action
    def Reset(self, s, t):
        t.x = 0
        t.b = False
        return s.x > 0

    @action
    def Clear(self, s, t):  # the same as Reset where b is false
        t.x = 0
        t.b = False
        return s.x > 0

    @action
    def Flip(self, s, t):
        t.b = ~s.b
        return s.x >= 0


@pytest.mark.parametrize("batch_size", [1, 3, 1 << 16])
def test_the_graph_of_a_spec_with_far_back_edges_and_parallel_edges(batch_size):
    g, levels, raw, col = _collect(Resets(), batch_size)
    assert _same_graph(g, levels, raw) > 0
    level = np.repeat(np.arange(len(levels)), [len(x) for x in levels])
    assert (level[g.dst] < level[g.src] - 1).any()  # beyond the last three levels' indexes
    col.close()


def test_far_targets_take_the_index_of_all_states_past_a_few_searches(monkeypatch):
    """``_find_far`` searches level by level, or builds one index of all states when
    there are many far targets: both give the same graph."""
    g1, levels, raw, _ = _collect(Resets(), 3)
    orig = GraphCollector._find_far

    def through_index(self, far, fps):
        return FpIndex(fps).find(far)

    monkeypatch.setattr(GraphCollector, "_find_far", through_index)
    g2, _, _, _ = _collect(Resets(), 3)
    monkeypatch.setattr(GraphCollector, "_find_far", orig)
    _same_graph(g2, levels, raw)
    assert np.array_equal(g1.dst, g2.dst)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 2, 5, 1 << 16]), st.booleans())
def test_random_specs_graph_matches_the_raw_transitions(cls, batch_size, background):
    """(with the look-ups in a worker thread or not)"""
    g, levels, raw, col = _collect(cls(), batch_size, background=background)
    _same_graph(g, levels, raw)
    col.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 3, 1 << 16]), st.booleans())
def test_step_formulas_per_edge_against_the_scalar_evaluator(tmp_path_factory, cls, batch_size,
                                                             spill):
    """Every step formula's value on every edge (CSR order, edges in memory or
    spilled) is the scalar evaluator's on the edge's states and action."""
    spec = cls()
    _, temporal = split_checks(spec, CheckConfig())
    parts = [part for p in temporal for part in p.parts()]
    d = str(tmp_path_factory.mktemp("spill")) if spill else None
    g, levels, raw, col = _collect(spec, batch_size, spill_dir=d, parts=parts)
    _same_graph(g, levels, raw)
    step_parts = [part for part in parts if part.kind == "action"]
    assert sorted(g.steps) == sorted(part.name for part in step_parts)
    k = Kernel(spec, invariants=[], properties=step_parts, check_deadlock=False,
               symmetry=False)
    cells = {k.fingerprint(c): c for c in k.initial_states()}
    todo = list(cells.values())
    while todo:  # every state, by the scalar successor function
        cur = todo.pop()
        for _inst, nxt in k.successors(cur):
            if k.fingerprint(nxt) not in cells:
                cells[k.fingerprint(nxt)] = nxt
                todo.append(nxt)
    src = g.src
    for e in range(g.n_edges):
        u, a, v = int(src[e]), int(g.act[e]), int(g.dst[e])
        nxt = k.step(cells[int(g.fps[u])], k.actions[a])
        assert nxt is not None and k.fingerprint(nxt) == int(g.fps[v])
        false = {p.name for p in k.check_properties(cells[int(g.fps[u])], nxt)}
        for name, values in g.steps.items():
            assert bool(values[e]) == (name not in false), (name, e)
    col.close()


# ------------------------------------------------------------------ spilled edge arrays
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec())
def test_spilled_edges_are_the_same_arrays_memory_mapped(tmp_path_factory, cls):
    d = str(tmp_path_factory.mktemp("spill"))
    g, levels, raw, col = _collect(cls(), 2)
    gs, _, _, cols = _collect(cls(), 2, spill_dir=d)
    _same_graph(gs, levels, raw)
    if gs.n_edges:
        assert isinstance(gs.dst, np.memmap) and isinstance(gs.act, np.memmap)
        assert [n for n in os.listdir(d) if n.startswith("edges-")]
    for a, b in [(g.dst, gs.dst), (g.act, gs.act), (g.indptr, gs.indptr)]:
        assert np.array_equal(a, b)
    cols.close()
    col.close()
    assert os.listdir(d) == []


def test_check_with_spill_dir_gives_the_same_verdicts_and_lasso(tmp_path):
    from examples.flip import FlipWeakSet
    from tests.test_liveness import ProcsFamily

    for cls in (FlipWeakSet, ProcsFamily, ResetsLive):
        plain = check_liveness(cls())
        spilled = check_liveness(cls(), spill_dir=str(tmp_path / "s"))
        assert spilled.liveness.pop("spilled") is True
        assert plain.liveness.pop("spilled") is False
        for r in (plain, spilled):
            r.liveness.pop("seconds")
            r.liveness.pop("graph_bytes")
        assert spilled.liveness == plain.liveness
        assert spilled.status == plain.status
        assert spilled.violation == plain.violation
        assert os.listdir(tmp_path / "s") == []


def test_spill_dir_that_is_a_file_is_a_usage_error(tmp_path):
    from examples.flip import FlipWeakSet
    from modelcheck.errors import UsageError

    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match="--spill-dir"):
        check_liveness(FlipWeakSet(), spill_dir=str(tmp_path / "f"))


class ResetsLive(Resets):
    fairness = {"Inc": "weak"}

    @always_eventually
    def Zero(self, s):
        return s.x == 0

    @always_eventually
    def Nine(self, s):
        return s.x == 9


def test_whole_graph_cycles_restrict_each_property_to_the_same_fair_components():
    """With two properties, the nodes on no cycle of the whole graph are left out of the
    SCC routine: the same fair nodes as without."""
    spec = ResetsLive()
    g, _, _, col = _collect(spec, 4)
    conds = fairness_conditions(spec)
    x = np.array([int(f) for f in g.fps])  # any mask will do: by fingerprint bits
    for mask in (np.ones(g.n, dtype=bool), x % 3 != 0, x % 2 == 0):
        plain = fair_components(g, mask, conds)
        cut = fair_components(g, mask, conds, cyclic=nodes_on_cycles(g))
        assert np.array_equal(plain >= 0, cut >= 0)
        # the same partition into components
        for c in np.unique(plain[plain >= 0]):
            assert len(np.unique(cut[plain == c])) == 1
    r = check_liveness(spec)
    assert r.liveness["properties"] == {"Zero": "violated", "Nine": "violated"}
    col.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec())
def test_enabled_of_all_conditions_at_once_is_each_alone(cls):
    spec = cls()
    g, _, _, col = _collect(spec, 3)
    n_act = len(spec.actions)
    # and more than 64 conditions (two passes), some of several actions
    many = [FairnessCondition("weak", f"A{i}", "A", tuple(sorted({i % n_act, i * 7 % n_act})))
            for i in range(70)]
    conds = [*fairness_conditions(spec), *many]
    for got, c in zip(g.enabled_all(conds), conds, strict=True):
        src = g.src
        want = np.zeros(g.n, dtype=bool)
        want[src[np.isin(g.act, c.action_ids)]] = True
        assert np.array_equal(got, want) and np.array_equal(g.enabled(c), want)
    col.close()


@st.composite
def _bfs_graph(draw: st.DrawFn) -> tuple[StateGraph, list[FairnessCondition]]:
    """A random state graph as the collector numbers it: the nodes reachable from the
    initial ones in breadth-first order (level by level, in any order within a level),
    edges in CSR order by source then action, no self-loops, at most one edge per
    (source, action), some sources with two actions to one target; its levels."""
    k = draw(st.integers(1, 14))
    n_act = draw(st.integers(1, 4))
    succ = {(u, a): draw(st.integers(0, k - 1)) for u in range(k) for a in range(n_act)
            if draw(st.booleans())}
    init = sorted(draw(st.sets(st.integers(0, k - 1), min_size=1, max_size=3)))
    order, levels, frontier, seen = [], [0], init, set(init)
    while frontier:
        order += frontier
        levels.append(len(order))
        nxt = sorted({v for u in frontier for a in range(n_act)
                      if (v := succ.get((u, a))) is not None and v not in seen})
        seen |= set(nxt)
        frontier = draw(st.permutations(nxt)) if nxt else []
    node = {u: i for i, u in enumerate(order)}
    edges = sorted((node[u], a, node[v]) for (u, a), v in succ.items()
                   if u in node and u != v)
    n = len(order)
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount([e[0] for e in edges], minlength=n), out=indptr[1:])
    g = StateGraph(np.arange(n, dtype=np.uint64), np.arange(n) < levels[1],
                   np.array([e[2] for e in edges], dtype=np.int32),
                   np.array([e[1] for e in edges], dtype=np.uint16), indptr, {},
                   levels=np.array(levels, dtype=np.int64))
    conds = [FairnessCondition(draw(st.sampled_from(["weak", "strong"])), f"C{i}", "C",
                               tuple(sorted(draw(st.sets(st.integers(0, n_act - 1),
                                                         min_size=1)))))
             for i in range(draw(st.integers(0, 3)))]
    return g, conds


@settings(max_examples=300, deadline=None)
@given(_bfs_graph(), st.data())
def test_fair_components_leave_out_nodes_on_no_cycle_by_levels(gc, data):
    """The nodes that may lie on a cycle by the BFS levels (reached by edges one level
    up from the target of an edge that is not, and reaching such an edge's source)
    hold every node on a cycle (networkx's SCCs); and the fair components found with
    that filter are those found without it (the same nodes, the same partition)."""
    import networkx as nx

    from modelcheck.liveness import _may_cycle

    g, conds = gc
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=g.n, max_size=g.n)), bool)
    sub_indptr, sub_dst = restrict(g.indptr, g.dst, mask)
    dg = nx.DiGraph()
    dg.add_nodes_from(range(g.n))
    dg.add_edges_from((u, int(v)) for u in range(g.n)
                      for v in sub_dst[sub_indptr[u]:sub_indptr[u + 1]])
    on_cycle = np.zeros(g.n, dtype=bool)
    for c in nx.strongly_connected_components(dg):
        if len(c) > 1:
            on_cycle[list(c)] = True
    assert not (on_cycle & ~_may_cycle(g.levels, g.indptr, g.dst, mask)).any()
    got = fair_components(g, mask, conds)
    plain = StateGraph(g.fps, g.initial, g.dst, g.act, g.indptr, {})  # no levels
    want = fair_components(plain, mask, conds)
    assert np.array_equal(got >= 0, want >= 0)
    for c in np.unique(want[want >= 0]):
        assert len(np.unique(got[want == c])) == 1
    assert np.array_equal(nodes_on_cycles(g), nodes_on_cycles(plain))



def _may_cycle_oracle(g, mask, edge_ok):
    """``_may_cycle`` by its definition, one edge at a time: the nodes reached by edges
    one level up (within ``mask``, of ``edge_ok``) from the target of an edge that is
    not one level up, and reaching the source of such an edge the same way."""
    level = np.searchsorted(g.levels, np.arange(g.n), side="right") - 1
    edges = [(u, int(g.dst[e])) for u in range(g.n) for e in range(g.indptr[u], g.indptr[u + 1])
             if mask[u] and mask[g.dst[e]] and edge_ok[e]]
    fwd = [(u, v) for u, v in edges if level[v] == level[u] + 1]
    reached = {v for u, v in edges if level[v] != level[u] + 1}
    reaching = {u for u, v in edges if level[v] != level[u] + 1}
    grew = True
    while grew:
        before = len(reached) + len(reaching)
        reached |= {v for u, v in fwd if u in reached}
        reaching |= {u for u, v in fwd if v in reaching}
        grew = len(reached) + len(reaching) > before
    return np.array([u in reached and u in reaching for u in range(g.n)], dtype=bool)


@settings(max_examples=300, deadline=None)
@given(_bfs_graph(), st.data())
def test_may_cycle_equals_its_definition(gc, data):
    """``_may_cycle`` (per level, rows flagged by prefix sums of the edge flags) gives
    exactly the nodes of its definition computed one edge at a time, with and without
    a node mask and an edge mask (all nodes, all edges included)."""
    from modelcheck.liveness import _may_cycle

    g, _ = gc
    m = len(g.dst)
    mask = np.array(data.draw(st.one_of(
        st.just([True] * g.n), st.lists(st.booleans(), min_size=g.n, max_size=g.n))), bool)
    edge_ok = np.array(data.draw(st.one_of(
        st.just([True] * m), st.lists(st.booleans(), min_size=m, max_size=m))), bool)
    want = _may_cycle_oracle(g, mask, edge_ok)
    assert np.array_equal(_may_cycle(g.levels, g.indptr, g.dst, mask.copy(), edge_ok), want)
    if edge_ok.all():
        assert np.array_equal(_may_cycle(g.levels, g.indptr, g.dst, mask.copy()), want)

@st.composite
def _csr_graph(draw):
    """A random small directed graph in CSR form (sorted targets per source, no
    repeats; self-loops allowed), sometimes acyclic (edges only to larger nodes)."""
    n = draw(st.integers(0, 12))
    acyclic = draw(st.booleans())
    rows = []
    for u in range(n):
        pool = list(range(u + 1, n)) if acyclic else list(range(n))
        rows.append(sorted(draw(st.sets(st.sampled_from(pool), max_size=4)) if pool else []))
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    dst = np.array([v for r in rows for v in r], dtype=np.int32)
    return n, indptr, dst


@settings(max_examples=400, deadline=None)
@given(_csr_graph())
def test_peel_leaves_the_nodes_reached_from_cycles(graph):
    """Kahn's peeling (``_peel``: in-degrees counted down wave by wave) leaves exactly
    the nodes reachable from a cycle (networkx: a component of several nodes or a
    self-loop, then its descendants): none iff the graph is acyclic."""
    import networkx as nx

    from modelcheck.liveness import _peel

    n, indptr, dst = graph
    dg = nx.DiGraph()
    dg.add_nodes_from(range(n))
    dg.add_edges_from((u, int(v)) for u in range(n) for v in dst[indptr[u]:indptr[u + 1]])
    want: set[int] = set()
    for c in nx.strongly_connected_components(dg):
        u = next(iter(c))
        if len(c) > 1 or dg.has_edge(u, u):
            want |= c | nx.descendants(dg, u)
    got = _peel(indptr, dst)
    assert got.tolist() == sorted(want)
    assert (len(got) == 0) == nx.is_directed_acyclic_graph(dg)


# ------------------------------------------------------------------ the fingerprint index
@settings(max_examples=200, deadline=None)
@given(st.lists(U64, unique=True, max_size=300), st.lists(U64, max_size=50),
       st.integers(0, 1000), st.booleans())
def test_fp_index_finds_what_a_dict_finds(fps, extra, offset, small):
    if small:  # packed states: small, structured values
        fps = sorted({f % 4096 << 8 for f in fps})
        extra = [e % 4096 << 8 for e in extra]
    arr = np.array(sorted(fps), dtype=np.uint64)
    ix = FpIndex(arr, offset)
    want = {int(f): i + offset for i, f in enumerate(arr)}
    q = np.array([*fps, *extra, *fps[:5]], dtype=np.uint64)
    assert ix.find(q).tolist() == [want.get(int(f), -1) for f in q]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(U64, U64), unique=True, max_size=200),
       st.lists(st.tuples(U64, U64), max_size=40), st.integers(0, 1000),
       st.integers(0, 20))
def test_fp_index_of_two_word_keys_finds_what_a_dict_finds(pairs, extra, offset, twins):
    """Two-column keys hash to 64 bits (no bijection): keys whose hashes collide
    (``(a + M2, b - M1)`` has the hash of ``(a, b)``) are each found at their own row."""
    m1, m2, mask = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 2**64 - 1
    keys = {(a << 64) | b for a, b in pairs}
    for a, b in pairs[:twins]:
        keys.add((((a + m2) & mask) << 64) | ((b - m1) & mask))
    srt = sorted(keys)
    arr = keys_of(srt, 2)
    ix = FpIndex(arr, offset)
    want = {k: i + offset for i, k in enumerate(srt)}
    q = [*srt, *((a << 64) | b for a, b in extra)]
    assert ix.find(keys_of(q, 2)).tolist() == [want.get(k, -1) for k in q]


def test_fp_index_empty_and_full_range():
    assert FpIndex(np.zeros(0, dtype=np.uint64)).find(np.array([5], dtype=np.uint64)).tolist() \
        == [-1]
    arr = np.array([0, 1, 2**63, 2**64 - 1], dtype=np.uint64)
    q = np.array([2**64 - 1, 0, 3, 2**63, 1, 2**64 - 2], dtype=np.uint64)
    assert FpIndex(arr, 10).find(q).tolist() == [13, 10, -1, 12, 11, -1]


# ------------------------------------------------------------------ CSR helpers
@st.composite
def _transitions(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, int]:
    n_rows = draw(st.integers(1, 12))
    n_act = draw(st.integers(1, 6))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_rows - 1), st.integers(0, n_act - 1)),
                          unique=True, max_size=60))
    if draw(st.booleans()):  # as the kernel emits them: by action, rows in order
        acts_order = draw(st.permutations(range(n_act)))
        pairs.sort(key=lambda p: (acts_order.index(p[1]), p[0]))
    rows = np.array([p[0] for p in pairs], dtype=np.int64)
    acts = np.array([p[1] for p in pairs], dtype=np.int32)
    return rows, acts, n_rows, n_act


@settings(max_examples=300, deadline=None)
@given(_transitions())
def test_csr_order_is_the_order_by_row_then_action(t):
    rows, acts, n_rows, n_act = t
    deg, dest = csr_order(rows, acts, n_rows, n_act)
    assert deg.tolist() == np.bincount(rows, minlength=n_rows).tolist()
    placed = [None] * len(rows)
    for i, d in enumerate(dest):
        placed[d] = (int(rows[i]), int(acts[i]))
    assert placed == sorted(zip(rows.tolist(), acts.tolist()))


@settings(max_examples=300, deadline=None)
@given(_transitions(), st.data())
def test_csr_place_puts_each_transition_where_the_sort_by_row_then_action_does(t, data):
    """``csr_place`` (each run of the kernel's order placed at once; many short runs
    through ``csr_order``) against the definition: the transitions sorted by (row,
    action) with their targets, the degrees, and each row's OR of its actions' bits."""
    rows, acts, n_rows, n_act = t
    rows, acts = rows.astype(np.int32), acts.astype(np.uint16)
    m = len(rows)
    targets = np.array(data.draw(st.lists(st.integers(0, 2**31 - 1), min_size=m,
                                          max_size=m)), dtype=np.int32)
    lut = np.array(data.draw(st.lists(st.integers(0, 255), min_size=n_act, max_size=n_act)),
                   dtype=np.uint8)
    words = np.array(data.draw(st.lists(st.integers(0, 255), min_size=n_rows,
                                        max_size=n_rows)), dtype=np.uint8)
    want_words = words.copy()
    for r, a in zip(rows.tolist(), acts.tolist()):
        want_words[r] |= lut[a]
    dst_out = np.full(m, -7, dtype=np.int32)
    act_out = np.full(m, 9999, dtype=np.uint16)
    deg = csr_place(rows, acts, targets, n_rows, n_act, dst_out, act_out, (words, lut))
    assert deg.tolist() == np.bincount(rows, minlength=n_rows).tolist()
    want = sorted(zip(rows.tolist(), acts.tolist(), targets.tolist()))
    assert dst_out.tolist() == [w[2] for w in want]
    assert act_out.tolist() == [w[1] for w in want]
    assert words.tolist() == want_words.tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 50), st.integers(-30, -1)), max_size=80),
       st.integers(1, 40), st.integers(0, 100), st.data())
def test_observed_targets_become_the_node_indices_a_dict_gives(targets, n_cands, first, data):
    """The collector's numbering of an observer's targets (``_observed_nodes``: the few
    new ones alone, or all at once when many are new) against a dictionary: a node
    index stays, candidate ``j`` (``-1 - j``) becomes the next level's first node plus
    its row."""
    targets = [t if t >= 0 else -1 - ((-1 - t) % n_cands) for t in targets]
    new_rows = np.array(data.draw(st.lists(st.integers(0, 60), min_size=n_cands,
                                           max_size=n_cands)), dtype=np.int32)
    node_of = {-1 - j: first + int(r) for j, r in enumerate(new_rows)}
    col = GraphCollector.__new__(GraphCollector)
    col._offsets = [0, 0, first]
    got = col._observed_nodes(1, np.array(targets, dtype=np.int32), new_rows)
    assert got.dtype == np.int32
    assert got.tolist() == [t if t >= 0 else node_of[t] for t in targets]


@st.composite
def _csr(draw: st.DrawFn, unknown: bool = False) -> tuple[np.ndarray, np.ndarray]:
    deg = np.array(draw(st.lists(st.integers(0, 40), min_size=1, max_size=8)), dtype=np.int64)
    lo = -1 if unknown else 0
    dst = np.array(draw(st.lists(st.integers(lo, 5), min_size=int(deg.sum()),
                                 max_size=int(deg.sum()))), dtype=np.int32)
    return deg, dst


def _naive_parallel(rows: list[int], dst: list[int]) -> list[int]:
    seen: set[tuple[int, int]] = set()
    out = []
    for i, (r, d) in enumerate(zip(rows, dst)):
        if d < 0:
            continue
        if (r, d) in seen:
            out.append(i)
        seen.add((r, d))
    return out


@settings(max_examples=300, deadline=None)
@given(_csr(unknown=True), st.integers(1, 40))
def test_parallel_edges_in_rows_and_by_sorting(csr, short):
    deg, dst = csr
    rows = np.repeat(np.arange(len(deg)), deg)
    want = _naive_parallel(rows.tolist(), dst.tolist())
    assert parallel_in_rows(deg, dst, short).tolist() == want
    assert parallel_edges(rows, dst).tolist() == want


@settings(max_examples=300, deadline=None)
@given(_csr(), st.data())
def test_restrict_and_any_per_node_against_loops(csr, data):
    deg, dst = csr
    n = len(deg)
    dst = dst % n
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(deg, out=indptr[1:])
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    flags = np.array(data.draw(st.lists(st.booleans(), min_size=len(dst),
                                        max_size=len(dst))), dtype=bool)
    for simple in (False, True):
        sub_indptr, sub_dst = restrict(indptr, dst, mask, simple)
        kept: list[list[int]] = [[] for _ in range(n)]
        for u in range(n):
            for e in range(indptr[u], indptr[u + 1]):
                if mask[u] and mask[dst[e]] and not (simple and int(dst[e]) in kept[u]):
                    kept[u].append(int(dst[e]))
        assert [sub_dst[sub_indptr[u]:sub_indptr[u + 1]].tolist() for u in range(n)] == kept
    assert any_per_node(indptr, flags).tolist() == [
        bool(flags[indptr[u]:indptr[u + 1]].any()) for u in range(n)]


def test_cli_spill_dir_gives_the_same_result_and_cleans_up(tmp_path):
    import json

    from click.testing import CliRunner

    from modelcheck.cli import cli

    runner = CliRunner()
    for target in ("tests/test_liveness.py:ProcsFamily", "tests/test_liveness.py:ProcsStrongEach"):
        args = ["check", target, "--format", "json", "-q"]
        plain = json.loads(runner.invoke(cli, args).stdout)
        spilled = json.loads(runner.invoke(cli, [*args, "--spill-dir", str(tmp_path)]).stdout)
        assert spilled["liveness"].pop("spilled") and not plain["liveness"].pop("spilled")
        for d in (plain, spilled):
            for k in ("seconds", "states_per_second", "levels", "memory"):
                d.pop(k)
            for k in ("seconds", "graph_bytes"):
                d["liveness"].pop(k)
        assert plain == spilled
        assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ small-graph SCCs
@st.composite
def _csr_graphs(draw: Any) -> tuple[int, np.ndarray, np.ndarray]:
    """A directed graph of up to 12 nodes in CSR form, without repeated targets."""
    n = draw(st.integers(0, 12))
    succ = [sorted(draw(st.sets(st.integers(0, n - 1), max_size=4))) if n else []
            for _ in range(n)]
    indptr = np.cumsum([0, *map(len, succ)]).astype(np.int64)
    dst = np.array([w for s in succ for w in s], dtype=np.int32)
    return n, indptr, dst


def _reaches(n: int, indptr: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Reflexive-transitive closure by repeated squaring of the adjacency (the oracle)."""
    r = np.eye(n, dtype=bool)
    for v in range(n):
        r[v, dst[indptr[v]:indptr[v + 1]]] = True
    for _ in range(max(1, n).bit_length() + 1):
        r = r | ((r.astype(np.int64) @ r.astype(np.int64)) > 0)
    return r


@settings(max_examples=200, deadline=None)
@given(_csr_graphs())
def test_small_strong_components_are_the_mutual_reachability_classes(g) -> None:
    from modelcheck.liveness import small_strong_components

    n, indptr, dst = g
    ncomp, lab = small_strong_components(n, indptr, dst)
    r = _reaches(n, indptr, dst)
    assert sorted(set(lab.tolist())) == list(range(ncomp))
    assert ((lab[:, None] == lab[None, :]) == (r & r.T)).all()
    if n:  # the same partition as scipy's routine (the one larger graphs take)
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components
        m = csr_matrix((np.ones(len(dst)), dst, indptr), shape=(n, n))
        k, theirs = connected_components(m, directed=True, connection="strong")
        assert k == ncomp
        assert ((lab[:, None] == lab[None, :]) == (theirs[:, None] == theirs[None, :])).all()


@settings(max_examples=100, deadline=None)
@given(_csr_graphs())
def test_small_transpose_is_the_reversed_edge_list(g) -> None:
    from modelcheck.liveness import _transpose

    n, indptr, dst = g
    rp, src = _transpose(n, indptr, dst)
    got = sorted((int(w), int(v)) for w in range(n) for v in src[rp[w]:rp[w + 1]])
    want = sorted((int(w), v) for v in range(n) for w in dst[indptr[v]:indptr[v + 1]])
    assert got == want
    for w in range(n):  # each node's sources ascending, as scipy's transpose gives them
        assert list(src[rp[w]:rp[w + 1]]) == sorted(src[rp[w]:rp[w + 1]])


def test_a_small_liveness_check_does_not_import_scipy() -> None:
    # importing scipy costs about 0.35 CPU seconds, more than a small graph's SCCs take
    import subprocess
    import sys
    code = ("import sys\n"
            "from modelcheck import check_liveness\n"
            "from examples.tla.live_hour_clock import LiveHourClock\n"
            "r = check_liveness(LiveHourClock())\n"
            "print(r.status, 'scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["ok", "False"]


@settings(max_examples=300, deadline=None)
@given(_csr_graphs())
def test_trim_keeps_every_node_on_a_cycle(g) -> None:
    """The nodes left by trimming hold every node on a cycle (the oracle: a node
    whose mutual-reachability class has several nodes; no self-loops), and the SCCs
    of the trimmed graph are those of the whole graph on the nodes left."""
    from modelcheck.liveness import _induced, _trim, small_strong_components

    n, indptr, dst = g
    r = _reaches(n, indptr, dst)
    on_cycle = (r & r.T).sum(axis=1) > 1
    keep = _trim(indptr, dst)
    assert list(keep) == sorted(set(keep.tolist()))
    kept = np.zeros(n, dtype=bool)
    kept[keep] = True
    assert not (on_cycle & ~kept).any()
    sub_indptr, sub_dst = _induced(keep, indptr, dst)
    lab = small_strong_components(len(keep), sub_indptr, sub_dst)[1]
    rk = r[np.ix_(keep, keep)]
    assert ((lab[:, None] == lab[None, :]) == (rk & rk.T)).all()


def test_trim_removes_a_wide_graph_without_cycles_in_full() -> None:
    from modelcheck.liveness import _trim

    w, k = 50, 20  # k layers of w nodes, each node to two of the next layer
    succ = [[(i + 1) * w + j, (i + 1) * w + (j + 1) % w] if i + 1 < k else []
            for i in range(k) for j in range(w)]
    n = w * k
    succ += [[n + 1], [n + 2], [n]]  # and a triangle beside it
    indptr = np.cumsum([0, *map(len, succ)]).astype(np.int64)
    dst = np.array([v for s in succ for v in s], dtype=np.int32)
    assert _trim(indptr, dst).tolist() == [n, n + 1, n + 2]


def test_a_large_liveness_check_without_cycles_does_not_import_scipy() -> None:
    # KRaftBrokerLive's graph (172k states) has no cycle: trimming leaves no node to
    # the SCC routine, and scipy (about 0.23 CPU seconds to import) is not imported
    import subprocess
    import sys
    code = ("import sys\n"
            "from modelcheck import check_liveness\n"
            "from benchmarks.kraft_broker_live import KRaftBrokerLive\n"
            "r = check_liveness(KRaftBrokerLive(N=2, P=1, MaxLog=5, MaxRestarts=2))\n"
            "print(r.status, r.distinct_states > 50_000, r.liveness['properties'], "
            "'scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["ok", "True", "{'ReplayCatchesUp':", "'holds'}", "False"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.permutations(range(7)) | st.just([]), max_size=4), st.booleans())
def test_edge_store_append_at_places_each_edge_at_its_place(perms, spill) -> None:
    """``EdgeStore.append_at`` (in memory, or in files) stores what ``append`` of the
    edges put in place first stores (the oracle: a Python list per array)."""
    import tempfile

    from modelcheck.graphstore import EdgeStore

    with tempfile.TemporaryDirectory() as tmp:
        store = EdgeStore(np.uint16, tmp if spill else None)
        want_dst: list[int] = []
        want_act: list[int] = []
        for k, perm in enumerate(perms):
            dest = np.array(perm, dtype=np.int32)
            dst = np.arange(len(dest), dtype=np.int32) + 10 * k
            act = (np.arange(len(dest)) * 3 + k).astype(np.uint16)
            placed_dst = [0] * len(dest)
            placed_act = [0] * len(dest)
            for i, d in enumerate(perm):
                placed_dst[d], placed_act[d] = int(dst[i]), int(act[i])
            want_dst += placed_dst
            want_act += placed_act
            store.append_at(dest, dst, act)
        got_dst, got_act = store.finish()
        assert np.asarray(got_dst).tolist() == want_dst
        assert np.asarray(got_act).tolist() == want_act
        del got_dst, got_act
        store.close()
