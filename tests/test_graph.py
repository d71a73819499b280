"""``modelcheck graph``: the reachable state graph through networkx, as DOT, GraphML, JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

from modelcheck import Explorer
from modelcheck.cli import bind_spec, cli
from modelcheck.graph import GraphTooLarge, _dot_id, build_graph, graph_bytes, to_dot

KRAFT = "specs/kraft_broker.py"
TINY = ["--const", "N=2", "--const", "P=1", "--const", "MaxLog=2", "--const", "MaxRestarts=1"]


@pytest.fixture(scope="module")
def epoch_graph() -> nx.MultiDiGraph:
    spec = bind_spec(f"{KRAFT}:KRaftBrokerBugEpochReuse", tuple(a for a in TINY if "=" in a))
    return build_graph(spec)


def test_counts_match_the_explorer() -> None:
    for target in ("examples/counter.py", f"{KRAFT}"):
        consts = () if "counter" in target else tuple(a for a in TINY if "=" in a)
        spec = bind_spec(target, consts)
        g = build_graph(spec)
        res = Explorer(spec, symmetry=False).run() if _has_symmetry_option() \
            else Explorer(spec).run()
        assert g.number_of_nodes() == res.distinct_states, target
        assert g.number_of_edges() == res.generated_states, target  # one edge per transition
        assert sum(1 for _, a in g.nodes(data=True) if a["initial"]) == 1


def _has_symmetry_option() -> bool:
    import inspect

    return "symmetry" in inspect.signature(Explorer).parameters


def test_node_and_edge_attributes(epoch_graph: nx.MultiDiGraph) -> None:
    g = epoch_graph
    (init,) = [n for n, a in g.nodes(data=True) if a["initial"]]
    a = g.nodes[init]
    assert a["depth"] == 0 and a["violates"] == ""
    assert a["label"].splitlines()[:2] == ["logEnd=0", "regEpoch=[0,0]"]
    assert "fenced=[T,T]" in a["label"] and "bstate=[OFFLINE,OFFLINE]" in a["label"]
    assert json.loads(a["state"])["regEpoch"] == {"1": 0, "2": 0}
    assert a["fp"] == f"{init:#x}"
    labels = sorted(d["label"] for _, _, d in g.out_edges(init, data=True))
    assert labels == ["Start(b=1)", "Start(b=2)"]
    e = next(iter(g.out_edges(init, data=True)))[2]
    assert e["action"] == "Start" and e["params"] in ("b=1", "b=2")
    bad = [a for _, a in g.nodes(data=True) if a["violates"]]
    assert bad and all(a["violates"] == "UniqueEpochs" for a in bad)
    assert any(d["violates"] == "EpochMonotonic" for _, _, d in g.edges(data=True))


def test_max_states_refuses(runner: CliRunner, tmp_path: Path) -> None:
    spec = bind_spec(KRAFT, ())
    with pytest.raises(GraphTooLarge, match="more than 50 reachable states"):
        build_graph(spec, max_states=50)
    out = tmp_path / "g.dot"
    r = runner.invoke(cli, ["graph", KRAFT, "--max-states", "50", "-o", str(out)])
    assert r.exit_code == 2
    assert "error: the state graph of KRaftBroker(N=2, P=1, MaxLog=4, MaxRestarts=1) has " \
           "more than 50 reachable states" in r.stderr
    assert not out.exists() and "Traceback" not in r.output


def _parse_dot(text: str) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """A strict little reader for the DOT subset we write; fails on bad quoting."""
    q = r'"((?:[^"\\]|\\.)*)"'
    attrs = r"\[((?:[^\]\"]|" + q.replace("(", "(?:", 1) + r")*)\]"
    lines = text.splitlines()
    assert re.fullmatch(r"digraph " + q + r" \{", lines[0]) and lines[-1] == "}"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in lines[1:-1]:
        line = line.strip()
        if re.fullmatch(r"(graph|node|edge) \[.*\];", line):
            continue
        m = re.fullmatch(q + r" -> " + q + r" " + attrs + ";", line)
        if m:
            label = re.search(r"label=" + q, m.group(3))
            assert label is not None
            edges.append((m.group(1), m.group(2), label.group(1)))
            continue
        m = re.fullmatch(q + r" " + attrs + ";", line)
        assert m, f"not a DOT statement: {line!r}"
        label = re.search(r"label=" + q, m.group(2))
        assert label is not None
        nodes[m.group(1)] = label.group(1)
    return nodes, edges


def test_dot_output(runner: CliRunner, tmp_path: Path, epoch_graph: nx.MultiDiGraph) -> None:
    text = to_dot(epoch_graph)
    nodes, edges = _parse_dot(text)
    assert len(nodes) == epoch_graph.number_of_nodes()
    assert len(edges) == epoch_graph.number_of_edges()
    assert all(u in nodes and v in nodes for u, v, _ in edges)
    assert text.count("peripheries=2") == 1 and 'color="red"' in text
    assert any(label == "Register(b=1)" for _, _, label in edges)
    assert all("\\n" in label for label in nodes.values())  # one variable per line
    out = tmp_path / "g.dot"
    r = runner.invoke(cli, ["graph", "examples/counter.py", "--format", "dot",
                            "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert "16 states (1 initial, 0 violating an invariant)" in r.stderr
    nodes, edges = _parse_dot(out.read_text())
    assert len(nodes) == 16 and edges


def test_dot_quoting() -> None:
    nasty = 'a "quoted" \\ back\nslash'
    assert _dot_id(nasty) == '"a \\"quoted\\" \\\\ back\\nslash"'
    g = nx.MultiDiGraph(spec='we"ird')
    g.add_node(1, label=nasty, initial=True, violates="")
    g.add_edge(1, 1, label='go "now"', violates="X")
    nodes, edges = _parse_dot(to_dot(g))
    assert nodes == {"1": 'a \\"quoted\\" \\\\ back\\nslash'}
    assert edges == [("1", "1", 'go \\"now\\"')]


def test_graphml_and_json_read_back(runner: CliRunner, tmp_path: Path,
                                    epoch_graph: nx.MultiDiGraph) -> None:
    gml = tmp_path / "g.graphml"
    gml.write_bytes(graph_bytes(epoch_graph, "graphml"))
    back = nx.read_graphml(gml)
    assert back.number_of_nodes() == epoch_graph.number_of_nodes()
    assert back.number_of_edges() == epoch_graph.number_of_edges()
    assert len([n for n, a in back.nodes(data=True) if a["initial"]]) == 1
    assert {a["label"] for _, _, a in back.edges(data=True)} >= {"Start(b=1)", "Register(b=2)"}
    data = json.loads(graph_bytes(epoch_graph, "json"))
    h = nx.node_link_graph(data, edges="edges")
    assert h.number_of_nodes() == epoch_graph.number_of_nodes()
    assert h.is_multigraph() and h.is_directed()
    node = next(n for n in data["nodes"] if n["initial"])
    assert node["state"]["bstate"] == {"1": "OFFLINE", "2": "OFFLINE"}
    assert {"action", "params", "label", "source", "target"} <= set(data["edges"][0])
    # the command picks the format from the suffix
    for name, fmt in (("c.graphml", "graphml"), ("c.json", "json")):
        r = runner.invoke(cli, ["graph", "examples/counter.py", "-o", str(tmp_path / name)])
        assert r.exit_code == 0 and f"({fmt})" in r.stderr
    assert nx.read_graphml(tmp_path / "c.graphml").number_of_nodes() == 16
    assert len(json.loads((tmp_path / "c.json").read_text())["nodes"]) == 16


def test_stdout_output(runner: CliRunner) -> None:
    r = runner.invoke(cli, ["graph", "examples/counter.py", "--const", "Max=1", "-o", "-"])
    assert r.exit_code == 0
    assert r.stdout.startswith('digraph "Counter" {')
    assert graph_bytes(build_graph(bind_spec("examples/counter.py", ("Max=1",))), "dot") \
        .decode() == r.stdout
