"""Liveness is an observer of the one run: each level is evaluated and expanded once.

The state graph's collector (:class:`modelcheck.stategraph.GraphCollector`) given to the
explorer as an observer (:mod:`modelcheck.run.observers`) takes the temporal
properties' state and step formulas as the run's kernel evaluated them on the states
and transitions the run generated. The oracle is the collector fed through the
explorer's ``on_level``/``on_transitions`` hooks, which evaluates the formulas with a
kernel of its own (expanding every level again for the step formulas): on random
specs with fairness and properties over states and steps (``tests.livespec``) both
give the same graph, node flags and edge flags. The observer's targets are the node
indices the run handed it (:meth:`~modelcheck.run.observers.Observer.on_edges`,
without a look-up); the oracle looks every target's fingerprint up in its indexes of
the last levels, and further back at the end. And a whole check expands every state
exactly once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Int, Spec, action, always_eventually, check
from modelcheck.config import CheckConfig
from modelcheck.explorer import Explorer
from modelcheck.kernel import Kernel
from modelcheck.liveness import split_checks
from modelcheck.stategraph import GraphCollector, StateGraph
from modelcheck.temporal import fairness_conditions
from tests.livespec import live_spec


def _graph(spec: Any, batch_size: int, observer: bool, spill_dir: str | None = None,
           background: bool = True, steps: bool = True, back: bool = False,
           may_cycle: Sequence[str | None] = ()) -> StateGraph:
    """The collected graph; the observer's collects the enabled nodes of the spec's
    fairness conditions too (and follows the first pass of ``_may_cycle`` of the masks
    ``may_cycle``)."""
    _, temporal = split_checks(spec, CheckConfig())
    parts = [part for p in temporal for part in p.parts()]
    if steps:
        assert any(part.kind == "action" for part in parts)  # step formulas too
    sets = [c.action_ids for c in fairness_conditions(spec)] if observer else []
    col = GraphCollector(spec, parts, batch_size, spill_dir, background, observer=observer,
                         enabled=sets, may_cycle=may_cycle)
    try:
        cfg = CheckConfig(batch_size=batch_size, invariants=())
        ex = (Explorer(spec, cfg, observer=col) if observer else
              Explorer(spec, cfg, on_level=col.on_level, on_transitions=col.on_transitions))
        assert ex.run().status == "ok"
        g = col.graph()
        # (copies: the spilled edge files go with the collector)
        return StateGraph(g.fps, g.initial, np.array(g.dst), np.array(g.act), g.indptr,
                          g.preds, g.steps, g.enabled_sets, g.levels,
                          back=g.back if back else None, may_cycle=g.may_cycle)
    finally:
        col.close()


@pytest.mark.parametrize("batch_size", [1, 3, 1 << 16])
@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize("background", [False, True])
def test_observed_targets_reach_far_back_and_into_the_next_level(tmp_path, batch_size, spill,
                                                                 background):
    """A spec with edges back to level 0 from every level (further back than the
    oracle's indexes of the last levels), parallel edges, and new states reached from
    several batches: the observer's graph, edges in memory or spilled, worker thread
    or not, is the oracle's edge for edge."""
    from tests.test_liveness_graph import Resets

    spill_dir = str(tmp_path) if spill else None
    got = _graph(Resets(), batch_size, True, spill_dir, background, steps=False)
    want = _graph(Resets(), batch_size, False, steps=False)
    assert got.n_edges > 0
    for name in ("fps", "initial", "dst", "act", "indptr"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert (got.dst < got.src).any()  # edges back (to level 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 2, 5, 1 << 16]))
def test_the_observed_graph_is_the_one_the_collector_evaluates_itself(cls, batch_size):
    spec = cls()
    got, want = _graph(spec, batch_size, True), _graph(spec, batch_size, False)
    for name in ("fps", "initial", "dst", "act", "indptr"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    assert got.preds.keys() == want.preds.keys() and got.steps.keys() == want.steps.keys()
    for name in want.preds:
        assert np.array_equal(got.preds[name], want.preds[name]), name
    for name in want.steps:
        assert np.array_equal(got.steps[name], want.steps[name]), name
    # the enabled nodes collected level by level are those the edges give
    conds = fairness_conditions(spec)
    assert sorted(got.enabled_sets) == sorted({c.action_ids for c in conds})
    assert not want.enabled_sets
    for c in conds:
        assert np.array_equal(got.enabled(c), want.enabled(c)), c.name
    for a, b in zip(got.enabled_all(conds), want.enabled_all(conds), strict=True):
        assert np.array_equal(a, b)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec())
def test_a_check_with_temporal_properties_expands_every_state_once(cls):
    """Rows the kernels expand (the outermost calls: a one-state batch is evaluated
    as two copies inside) over a whole check: the distinct states, once each."""
    spec = cls()
    rows = [0]
    depth = [0]
    orig = Kernel.expand

    def counting(self: Kernel, words: np.ndarray, **kw: Any) -> Any:
        if kw.get("expand", True) and depth[0] == 0:
            rows[0] += len(words)
        depth[0] += 1
        try:
            return orig(self, words, **kw)
        finally:
            depth[0] -= 1

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Kernel, "expand", counting)
        res = check(spec, batch_size=1 << 16)
    assert res.status in ("ok", "violation")
    assert res.liveness["properties"]
    if res.violation is None or res.violation.kind == "liveness":
        assert rows[0] == res.distinct_states


def _back_by_levels(g: StateGraph) -> list[tuple[int, int]]:
    """The edges of ``g`` that do not go one level up, by its levels, one at a time."""
    assert g.levels is not None
    level = np.searchsorted(g.levels, np.arange(g.n), side="right") - 1
    src = g.src
    return sorted((int(u), int(v)) for u, v in zip(src, g.dst)
                  if v < g.levels[level[u] + 1])


def _back_pairs(g: StateGraph) -> list[tuple[int, int]]:
    assert g.back is not None
    src, dst = g.back
    assert src.dtype == np.int32 and dst.dtype == np.int32
    return sorted(zip(src.tolist(), dst.tolist()))


@pytest.mark.parametrize("batch_size", [1, 3, 1 << 16])
@pytest.mark.parametrize("spill", [False, True])
@pytest.mark.parametrize("background", [False, True])
def test_the_edges_not_one_level_up_are_collected_as_the_run_hands_them_over(
        tmp_path, batch_size, spill, background):
    """The observer's collector keeps the edges whose target the run had stored before
    the next level (``StateGraph.back``: targets back to level 0 from every level,
    parallel edges, no self-loops): exactly the edges that do not go one level up by
    the graph's levels."""
    from tests.test_liveness_graph import Resets

    g = _graph(Resets(), batch_size, True, str(tmp_path) if spill else None, background,
               steps=False, back=True)
    want = _back_by_levels(g)
    assert want and len(want) < g.n_edges
    assert _back_pairs(g) == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 2, 5, 1 << 16]))
def test_the_collected_edges_not_one_level_up_are_those_of_the_levels(cls, batch_size):
    """On random specs (self-loops among their transitions): ``StateGraph.back`` is the
    set of edges that do not go one level up, and the nodes that may lie on a cycle
    found from it are those found by reading every edge."""
    from modelcheck.liveness import _may_cycle

    g = _graph(cls(), batch_size, True, back=True)
    assert g.levels is not None
    assert _back_pairs(g) == _back_by_levels(g)
    for name, mask in [("all", np.ones(g.n, dtype=bool)), *g.preds.items()]:
        got = _may_cycle(g.levels, g.indptr, g.dst, mask, back=g.back)
        assert np.array_equal(got, _may_cycle(g.levels, g.indptr, g.dst, mask)), name


def test_past_a_share_of_the_edges_those_not_one_level_up_are_found_from_the_levels(
        monkeypatch):
    """A collector whose edges not one level up pass ``BACK_SHARE`` of its edges (and
    ``BACK_BYTES``) lets them go (None: ``_may_cycle`` reads every edge)."""
    import modelcheck.graphstore as gs
    from tests.test_liveness_graph import Resets

    monkeypatch.setattr(gs, "BACK_SHARE", 0.0)
    monkeypatch.setattr(gs, "BACK_BYTES", 0)
    g = _graph(Resets(), 1 << 16, True, steps=False, back=True)
    assert g.back is None


def _may_cycle_masks(g: StateGraph) -> dict[str | None, np.ndarray]:
    """Per mask name (a state predicate's: the nodes where it is false; None: all)."""
    return {None: np.ones(g.n, dtype=bool), **{k: ~v for k, v in g.preds.items()}}


def _check_followed_first_pass(g: StateGraph, names: Sequence[str | None]) -> None:
    """The collector's first pass of each mask of ``names`` is ``_may_cycle``'s by its
    definition (one edge at a time, ``tests.test_liveness_graph``)."""
    from tests.test_liveness_graph import _may_cycle_oracle

    masks = _may_cycle_masks(g)
    assert len(g.may_cycle) == len(dict.fromkeys(names))
    for name, (mask, got) in zip(dict.fromkeys(names), g.may_cycle, strict=True):
        assert np.array_equal(mask, masks[name]), name
        want = _may_cycle_oracle(g, mask, np.ones(g.n_edges, dtype=bool))
        assert np.array_equal(got, want), name


@pytest.mark.parametrize("batch_size", [1, 3, 1 << 16])
@pytest.mark.parametrize("background", [False, True])
def test_the_first_pass_followed_level_by_level_reaches_far_back(batch_size, background):
    """Edges back to level 0 from every level (reached nodes of levels whose edges were
    stored long before), parallel edges: the collector's first pass of the nodes that
    may lie on a cycle, followed level by level, is the one of the definition."""
    from tests.test_liveness_graph import Resets

    g = _graph(Resets(), batch_size, True, None, background, steps=False,
               may_cycle=[None])
    assert g.may_cycle and g.may_cycle[0][1].any()
    _check_followed_first_pass(g, [None])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 2, 5, 1 << 16]), st.booleans(), st.data())
def test_the_first_pass_followed_level_by_level_is_the_one_of_the_definition(
        cls, batch_size, background, data):
    """On random specs, for every mask of their state predicates (the nodes where one is
    false) and for all nodes: the first pass the collector followed is the
    definition's; a check gives the same verdicts and lasso with it as without."""
    spec = cls()
    probe = _graph(spec, batch_size, True, steps=False)
    names = data.draw(st.lists(st.sampled_from([None, *probe.preds]), min_size=1,
                               max_size=3))
    g = _graph(spec, batch_size, True, None, background, steps=False, may_cycle=names)
    _check_followed_first_pass(g, names)


class Hop(Spec):
    """``x`` climbs 0..5, with edges back ``1 -> 0`` and ``5 -> 4``; ``AtTwo``'s mask
    (the nodes where ``x = 2`` is false) leaves ``x = 2`` out, the one way to ``x = 3``:
    within the mask ``x = 3`` is not reached from an edge back."""

    check_deadlock = False
    x = Int(0, 5)

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < 5

    @action
    def Back(self, s, t):
        t.x = s.x - 1
        return (s.x == 1) | (s.x == 5)

    @always_eventually
    def AtTwo(self, s):
        return s.x == 2


@pytest.mark.parametrize("background", [False, True])
def test_the_first_pass_followed_level_by_level_keeps_to_the_next_levels_mask(background):
    """A node of the next level reached before its mask is known (``x = 2``, out of
    the mask) is not gone on from: ``x = 3``, reached only through it, is not in the
    first pass."""
    g = _graph(Hop(), 1 << 16, True, None, background, steps=False, may_cycle=["AtTwo"])
    _check_followed_first_pass(g, ["AtTwo"])
    assert g.may_cycle[0][1].tolist() == [True, True, False, False, True, True]


def test_a_first_pass_of_another_mask_is_not_taken():
    """The analysis takes a followed first pass only for the mask it was followed for."""
    from modelcheck.liveness import nodes_on_cycles
    from tests.test_liveness_graph import Resets

    g = _graph(Resets(), 3, True, steps=False, may_cycle=[None])
    want = nodes_on_cycles(g)
    assert want.any()
    g.cyclic_nodes = None
    g.may_cycle = [(g.may_cycle[0][0].copy(), np.zeros(g.n, dtype=bool))]  # (wrong)
    assert not nodes_on_cycles(g).any()  # taken for its mask: every node
    g.cyclic_nodes = None
    mask = np.ones(g.n, dtype=bool)
    mask[0] = False
    g.may_cycle = [(mask, np.zeros(g.n, dtype=bool))]  # another mask: not taken
    assert np.array_equal(nodes_on_cycles(g), want)


def _check_with_and_without_followed_passes(spec: Any, batch_size: int) -> int:
    """``check_liveness`` of ``spec`` with the collector following the first pass of
    the analysis and without: the same verdicts and violation (lasso); the first passes
    the analysis computed itself with them."""
    import modelcheck.liveness as lv
    from modelcheck.liveness import check_liveness

    calls = []
    orig = lv._may_cycle

    def counting(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return orig(*a, **k)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(lv, "_may_cycle", counting)
        got = check_liveness(spec, CheckConfig(batch_size=batch_size))
        passes = len(calls)
        calls.clear()
        m.setattr(lv, "_first_cycle_masks", lambda props: [])
        want = check_liveness(spec, CheckConfig(batch_size=batch_size))
    assert got.status == want.status
    assert got.liveness["properties"] == want.liveness["properties"]
    assert got.violation == want.violation
    assert passes <= len(calls)
    return len(calls) - passes


def test_a_check_follows_the_first_pass_of_its_analysis():
    """KRaft's broker with ``ReplayCatchesUp`` (leads-to, no cycle): the collector
    follows the first pass over the nodes where ``Q`` is false, which the analysis then
    does not compute; the verdict is the same."""
    from benchmarks.kraft_broker_live import KRaftBrokerLive

    spec = KRaftBrokerLive(N=2, P=1, MaxLog=2, MaxRestarts=1)
    assert _check_with_and_without_followed_passes(spec, 64) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.sampled_from([1, 3, 1 << 16]))
def test_checks_with_followed_first_passes_give_the_same_verdicts_and_lassos(cls, batch_size):
    _check_with_and_without_followed_passes(cls(), batch_size)
