"""The state graph (``modelcheck graph`` and the web explorer's) against the brute-force
oracle: the same nodes (states, their BFS level, initial or not, the invariants they
violate) and the same edges (transitions with their action instances and the action
properties they violate) on random specs with state and action constraints, and the
same ``--max-states`` limit as the explorer's run."""

from __future__ import annotations

import json

import pytest
from bruteforce import GraphOracle, brute_force_graph
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from randspec import random_spec

from modelcheck import (
    Ids,
    Int,
    Spec,
    action,
    action_constraint,
    action_property,
    constraint,
    invariant,
)
from modelcheck.cli import bind_spec
from modelcheck.explorer import Explorer
from modelcheck.graph import GraphTooLarge, build_graph
from modelcheck.kernel import Kernel
from modelcheck.result import json_value
from modelcheck.trace.render import action_label
from modelcheck.web.neighbourhood import ReachableGraph


def assert_export_is(spec: Spec, want: GraphOracle) -> None:
    """``build_graph(spec)`` is the oracle's graph, attribute by attribute."""
    k = Kernel(spec, symmetry=False, view=False)
    layout = spec.layout
    g = build_graph(spec)
    fp = {c: k.fingerprint(list(c)) for c in want.nodes}
    assert len(set(fp.values())) == len(fp)
    assert set(g.nodes) == set(fp.values())
    for c, (depth, initial, bad) in want.nodes.items():
        a = g.nodes[fp[c]]
        assert (a["depth"], a["initial"], a["violates"]) == (depth, initial, ",".join(bad)), c
        assert json.loads(a["state"]) == json_value(layout.values_from_cells(list(c)))
        assert a["fp"] == f"{fp[c]:#x}"
        assert set(a) == {"label", "initial", "violates", "depth", "fp", "state"}
    inst = {action_label(i.name, dict(i.params)): i for i in spec.actions}
    got = {}
    for u, v, key, a in g.edges(keys=True, data=True):
        i = inst[a["label"]]
        assert key == a["label"] and a["action"] == i.name
        assert (u, v, i.id) not in got, "one edge per transition"
        got[(u, v, i.id)] = tuple(a["violates"].split(",")) if a["violates"] else ()
    assert got == {(fp[c], fp[n], i): bad for (c, n, i), bad in want.edges.items()}


def assert_web_is(spec: Spec, want: GraphOracle) -> None:
    """The web explorer's graph is the oracle's: nodes, edges and initial states."""
    k = Kernel(spec, symmetry=False, view=False)
    g = ReachableGraph(k, max(1, len(want.nodes)))
    fp = {c: k.fingerprint(list(c)) for c in want.nodes}
    assert len(g) == len(want.nodes) and all(f in g for f in fp.values())
    assert all(g.cells(fp[c]) == list(c) for c in want.nodes)
    assert g.initial == {fp[c] for c, (_d, initial, _b) in want.nodes.items() if initial}
    assert sorted(g.graph.edges(keys=True)) == sorted(
        (fp[c], fp[n], i) for c, n, i in want.edges)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.booleans().flatmap(lambda ac: random_spec(action_constraints=ac)))
def test_the_graph_is_the_oracles(cls: type[Spec]) -> None:
    spec = cls()
    want = brute_force_graph(spec)
    assert_export_is(spec, want)
    assert_web_is(spec, want)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(), st.integers(1, 40))
def test_max_states_is_the_explorers(cls: type[Spec], cap: int) -> None:
    """``build_graph(max_states=N)`` refuses exactly when the explorer stores more than
    ``N`` states (``--max-states`` means one thing), and the web graph's limit too."""
    spec = cls()
    n = len(brute_force_graph(spec).nodes)
    res = Explorer(spec, invariants=(), check_deadlock=False, symmetry=False, view=False,
                   max_states=cap).run()
    assert (res.reason == "max-states") == (n > cap)
    if n > cap:
        with pytest.raises(GraphTooLarge, match=f"more than {cap:,} reachable states"):
            build_graph(spec, max_states=cap)
        with pytest.raises(GraphTooLarge, match="the graph view is for small models"):
            ReachableGraph(Kernel(spec, symmetry=False, view=False), cap)
    else:
        assert build_graph(spec, max_states=cap).number_of_nodes() == n


class Tokens(Spec):
    """Parameterised actions, a self-loop (``Keep``), a state constraint, an action
    constraint, an invariant and an action property that some states and transitions
    violate."""

    check_deadlock = False
    D = Ids(1, 2)
    V = Ids(0, 2)
    x = Int(0, 4)
    y = Int(0, 2)

    @action(d=D)
    def Add(self, s, t, d):
        t.x = s.x + d
        return s.x + d <= 4

    @action(v=V)
    def Set(self, s, t, v):
        t.y = v
        return s.y != v

    @action
    def Keep(self, s, t):
        return s.x == 0

    @constraint
    def Small(self, s):
        return s.x + s.y <= 5

    @action_constraint
    def NoBigJump(self, s, t):
        return (t.x - s.x <= 1) | (s.y == 0)

    @invariant
    def Low(self, s):
        return s.x <= 3

    @action_property
    def YGrows(self, s, t):
        return t.y >= s.y


def test_a_spec_with_parameters_constraints_and_self_loops() -> None:
    spec = Tokens()
    want = brute_force_graph(spec)
    assert any(c == n for c, n, _ in want.edges)  # Keep
    assert any(bad for *_n, bad in want.nodes.values())
    assert any(want.edges.values())
    assert_export_is(spec, want)
    assert_web_is(spec, want)


def test_kraft_epoch_reuse() -> None:
    spec = bind_spec("specs/kraft_broker.py:KRaftBrokerBugEpochReuse",
                     ("N=2", "P=1", "MaxLog=2", "MaxRestarts=1"))
    want = brute_force_graph(spec)
    assert len(want.nodes) == 207
    assert_export_is(spec, want)
