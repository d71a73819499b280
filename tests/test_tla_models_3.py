"""Ports of tlaplus/Examples models (third batch): pinned counts from the repository's
manifests, invariants, broken variants with counterexamples and, where the model's
cfg checks temporal properties that modelcheck supports, liveness.

Each model's docstring names its source files and how its counts compare with TLC's
(TLC's depth counts states, ours steps: TLC's ``stateDepth`` is ours + 1).
"""

from __future__ import annotations

import pytest

from examples.tla.crdt import MCCRDT, MCCRDTBugGossipOverwrites
from examples.tla.disruptor_spmc import DisruptorSPMC, DisruptorSPMCBugLaps
from examples.tla.echo import MCEcho, MCEchoBugInitiatorSendsC, MCEchoBugSelfParent
from examples.tla.kvstore import KVStore, KVStoreBugInsertOverwrites
from examples.tla.replicated_log import MCReplicatedLog, MCReplicatedLogBugAhead
from examples.tla.span_tree import SpanTree, SpanTreeBugNoMom, SpanTreeBugUnfair
from examples.tla.tcp import MCtcp, MCtcpBugNoAck
from modelcheck import action, all_of, check_liveness, excluding, explore, implies, invariant

# -- tcp: MCtcp ---------------------------------------------------------------------


def test_tcp_mctcp_matches_the_manifest() -> None:
    r = explore(MCtcp())
    assert r.status == "ok"
    # manifest: distinctStates 1182, totalStates 6322 (with the 2 initial states),
    # stateDepth 14
    assert (r.distinct_states, r.generated_states + 2, r.depth + 1) == (1182, 6322, 14)


def test_tcp_capacity_is_large_enough() -> None:
    assert explore(MCtcp(Cap=6)).distinct_states == 1182


def test_tcp_action_constraint_cuts_steps_rather_than_removing_actions() -> None:
    # TLC's run of MCtcp.cfg (deadlock checked) succeeds; with the three actions that
    # SingleActiveOpen forbids removed outright, a reachable state deadlocks
    class Removed(MCtcp):
        @action(local=MCtcp.Peers, remote=lambda self, local: excluding(self.Peers, local))
        def ACTIVE_OPEN(self, s, t, local, remote):
            return False

        @action(local=MCtcp.Peers, remote=lambda self, local: excluding(self.Peers, local))
        def PASSIVE_OPEN(self, s, t, local, remote):
            return False

    r = explore(Removed())
    assert r.status == "deadlock" and len(r.violation.trace) == 3
    assert r.violation.trace[-1].state["connstate"] == {1: "CLOSED", 2: "CLOSED"}


def test_tcp_bug_breaks_inv() -> None:
    r = explore(MCtcpBugNoAck())
    assert r.status == "violation" and r.violation.property == "Inv"
    assert [st.action for st in r.violation.trace] == [None, "Listen", "SynSent[synack]"]


# -- btree: kvstore -----------------------------------------------------------------


def _kvstore_bfs() -> tuple[int, int, int]:
    """(distinct, generated with the initial state, depth) of kvstore.cfg by a BFS
    written directly from kvstore.tla: strings and tuples, no modelcheck."""
    keys, vals = ("A", "B", "C"), ("X", "Y", "Z")

    def succ(st):
        op, args, ret, state, d = st
        dd = dict(d)
        if state == "ready":
            for k in keys:
                yield "get", (k,), None, "working", d
                yield "delete", (k,), None, "working", d
                for v in vals:
                    yield "insert", (k, v), None, "working", d
                    yield "update", (k, v), None, "working", d
        if op == "get":
            yield op, args, dd[args[0]], "ready", d
        if op in ("insert", "update") and (op == "update" or state == "working"):
            k, v = args
            doit = (dd[k] == "missing") == (op == "insert")
            nd = {**dd, k: v} if doit else dd
            yield op, args, "ok" if doit else "error", "ready", tuple(sorted(nd.items()))
        if op == "delete":
            yield op, args, "ok", "ready", tuple(sorted({**dd, args[0]: "missing"}.items()))

    init = (None, None, None, "ready", tuple((k, "missing") for k in keys))
    depth, frontier, gen = {init: 0}, [init], 1
    while frontier:
        nxt = []
        for s in frontier:
            for t in succ(s):
                gen += 1
                if t not in depth:
                    depth[t] = depth[s] + 1
                    nxt.append(t)
        frontier = nxt
    return len(depth), gen, max(depth.values())


def test_kvstore_matches_the_manifest_and_an_independent_bfs() -> None:
    r = explore(KVStore())
    assert r.status == "ok"
    # manifest: distinctStates 2641, totalStates 28585 (with the initial state)
    assert (r.distinct_states, r.generated_states + 1) == (2641, 28585)
    # the manifest's stateDepth 11 is not the BFS depth: 8 steps (TLC would print 9)
    assert (r.distinct_states, r.generated_states + 1, r.depth) == _kvstore_bfs() \
        == (2641, 28585, 8)


def test_kvstore_bug_insert_overwrites() -> None:
    r = explore(KVStoreBugInsertOverwrites())
    assert r.status == "violation" and r.violation.property == "InsertKeepsValue"
    assert len(r.violation.trace) == 5


# -- FiniteMonotonic: MCReplicatedLog and MCCRDT -------------------------------------


def _composed_steps(r) -> int:
    return sum(c.fired for c in r.coverage if c.name.endswith("AndReduction"))


@pytest.mark.parametrize(
    "spec, distinct, total, tlc_depth",
    [(MCReplicatedLog(), 1_363, 17_425, 13), (MCCRDT(), 25_000, 1_350_001, 16)],
    ids=["MCReplicatedLog", "MCCRDT"],
)
def test_finite_monotonic_models_match_the_manifest(spec, distinct, total, tlc_depth) -> None:
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth + 1) == (distinct, tlc_depth)
    # TLC's totalStates also counts the intermediate state of every composed step
    # (A \cdot Reduction) and the initial state
    assert r.generated_states + _composed_steps(r) + 1 == total


def test_finite_monotonic_bounds_lose_nothing() -> None:
    assert explore(MCReplicatedLog(Cap=6)).distinct_states == 1_363
    assert explore(MCCRDT(Max=5)).distinct_states == 25_000


@pytest.mark.parametrize("spec, length", [(MCReplicatedLogBugAhead(), 2),
                                          (MCCRDTBugGossipOverwrites(), 4)])
def test_finite_monotonic_bugs_break_safety(spec, length) -> None:
    r = explore(spec)
    assert r.status == "violation" and r.violation.property == "Safety"
    assert len(r.violation.trace) == length


# -- echo: MCEcho --------------------------------------------------------------------


def test_echo_matches_the_manifest() -> None:
    r = explore(MCEcho())
    assert r.status == "ok"
    # manifest: distinctStates 75, totalStates 116 (with the initial state), stateDepth 16
    assert (r.distinct_states, r.generated_states + 1, r.depth + 1) == (75, 116, 16)


@pytest.mark.parametrize("spec, prop", [(MCEchoBugSelfParent(), "ParentIsNbr"),
                                        (MCEchoBugInitiatorSendsC(), "FirstMessageIsM")])
def test_echo_bugs_fail_the_plus_cal_asserts(spec, prop) -> None:
    r = explore(spec)
    assert r.status == "violation" and r.violation.property == prop


# -- SpanningTree: SpanTree ----------------------------------------------------------


def _span_tree_bfs() -> tuple[int, int, int]:
    """(distinct, generated with the initial state, depth) of SpanTree.cfg by a BFS
    written directly from SpanTree.tla: tuples, no modelcheck."""
    edges = {(1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 5), (4, 5)}
    nodes, mx = range(1, 6), 6
    nbrs = {n: [m for m in nodes if (m, n) in edges or (n, m) in edges] for n in nodes}
    init = (tuple(nodes), tuple(0 if n == 1 else mx for n in nodes))
    depth, frontier, gen = {init: 0}, [init], 1
    while frontier:
        nxt = []
        for mom, dist in frontier:
            for n in nodes:
                for m in nbrs[n]:
                    for d in range(dist[m - 1] + 1, dist[n - 1]):
                        t = (mom[:n - 1] + (m,) + mom[n:], dist[:n - 1] + (d,) + dist[n:])
                        gen += 1
                        if t not in depth:
                            depth[t] = depth[(mom, dist)] + 1
                            nxt.append(t)
        frontier = nxt
    return len(depth), gen, max(depth.values())


def test_span_tree_matches_the_manifest_and_liveness_holds() -> None:
    r = check_liveness(SpanTree())
    assert r.status == "ok" and r.liveness["properties"] == {"Liveness": "holds"}
    # manifest: distinctStates 1236, totalStates 10278 (with the initial state)
    assert (r.distinct_states, r.generated_states + 1) == (1_236, 10_278)
    # the manifest's stateDepth 6 is not the BFS depth: 4 steps (TLC would print 5)
    assert (r.distinct_states, r.generated_states + 1, r.depth) == _span_tree_bfs() \
        == (1_236, 10_278, 4)


def test_span_tree_bugs() -> None:
    r = check_liveness(SpanTreeBugUnfair())
    assert r.status == "violation" and r.violation.property == "Liveness"
    assert r.violation.loop == 0 and len(r.violation.trace) == 1  # stutters at the start
    r = explore(SpanTreeBugNoMom())
    assert r.status == "violation" and r.violation.property == "Safety"


# -- Disruptor: Disruptor_SPMC -------------------------------------------------------


def test_disruptor_spmc_matches_the_manifest() -> None:
    r = explore(DisruptorSPMC())
    assert r.status == "ok"
    # manifest: distinctStates 8496, totalStates 28049 (with the initial state),
    # stateDepth 82
    assert (r.distinct_states, r.generated_states + 1, r.depth + 1) == (8_496, 28_049, 82)


def test_disruptor_spmc_consumers_read_every_value_in_order() -> None:
    # what Liveliness asks of every behaviour, checked here on every state: a
    # consumer's history is 0, 1, ..., read[r] (and one more while it reads)
    class Histories(DisruptorSPMC):
        @invariant
        def ConsumedInOrder(self, s):
            return all_of(self.Readers, lambda r: all_of(
                range(1, self.MaxPublished + 1),
                lambda i: implies(i <= s.consumed[r].len(), s.consumed[r].at(i) == i - 1)))

    assert explore(Histories()).status == "ok"


def test_disruptor_spmc_bug_laps_a_consumer() -> None:
    r = explore(DisruptorSPMCBugLaps())
    assert r.status == "violation" and r.violation.property == "NoDataRaces"
    assert len(r.violation.trace) == 11


# -- the modules' docstring commands say what happens --------------------------------

MODULES = ("tcp", "kvstore", "replicated_log", "crdt", "echo", "span_tree", "disruptor_spmc")


def _docstring_commands() -> list[tuple[str, list[str], str]]:
    import importlib
    import re
    import shlex

    out = []
    for name in MODULES:
        doc = importlib.import_module(f"examples.tla.{name}").__doc__
        for line in doc.splitlines():
            m = re.match(r"\s+modelcheck check (.+?)\s+#\s*(.+)$", line)
            if m:
                out.append((name, shlex.split(m.group(1)), m.group(2)))
    return out


def test_every_module_shows_its_commands() -> None:
    assert {name for name, _, _ in _docstring_commands()} == set(MODULES)


@pytest.mark.parametrize("name, args, comment", _docstring_commands(),
                         ids=lambda x: " ".join(x) if isinstance(x, list) else str(x))
def test_docstring_commands_say_what_happens(runner, name: str, args: list[str],
                                             comment: str) -> None:
    import json
    import re

    from modelcheck.cli import cli

    d = json.loads(runner.invoke(cli, ["check", *args, "--format", "json", "-q"]).stdout)
    m = re.search(r"violates (\w+)", comment)
    if m:
        assert d["status"] == "violation" and d["violation"]["property"] == m.group(1)
    else:
        assert d["status"] == "ok"
        n = re.search(r"([\d,]+) states", comment).group(1)
        assert d["distinct_states"] == int(n.replace(",", ""))
        if "Liveness holds" in comment:
            assert d["liveness"]["properties"]["Liveness"] == "holds"
