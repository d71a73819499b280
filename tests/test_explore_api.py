"""The explorer's JSON API, served for real (uvicorn on a free loopback port), against
independent oracles: the changed values against the cells that differ, the successors
against the batch evaluator, expressions against ``trace eval``, saved paths through
``trace replay``, the graph around a state against the brute-force BFS (``tests/bruteforce.py``).
Malformed requests get one JSON message and the server goes on serving."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import urllib.request

import networkx as nx
import pytest
from bruteforce import brute_force_graph
from explorehelp import (
    BUG,
    LASSO,
    SMALL,
    SMALL_CONSTS,
    batch_successors,
    changed_leaves,
    check_run,
    cli_run,
    get,
    path_body,
    post,
    served,
    session_for,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck.kernel import Kernel
from modelcheck.loader import bind_spec
from modelcheck.trace import load_trace
from modelcheck.trace.render import action_label
from modelcheck.web.app import MAX_BODY


@pytest.fixture(scope="module")
def bug_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    return check_run(BUG, str(tmp_path_factory.mktemp("explore") / "run"))


@pytest.fixture(scope="module")
def bug(bug_run: str):
    session = session_for(BUG, run=bug_run)
    with served(session) as url:
        yield session, url


def test_overview_shows_the_trace_with_the_changed_values(bug, bug_run: str) -> None:
    session, url = bug
    o = get(url + "api/session")
    trace = load_trace(bug_run)
    steps = o["trace"]["steps"]
    assert o["spec"] == "KRaftLifecycleBugFenceKeepsLeader" == trace.spec
    assert [s["action"] for s in steps] == [s.action for s in trace.steps]
    assert [s["params"] for s in steps] == [s.params for s in trace.steps]
    assert o["trace"]["replay"]["ok"] and o["trace"]["loop"] is None
    assert o["trace"]["violation"] == trace.violation_text()
    assert steps[-1]["state"]["invariants"] == ["FencedNotLeader", "FencedNotInIsr"]
    assert all(not s["state"]["invariants"] for s in steps[:-1])
    layout = session.spec.layout
    assert [s["state"]["cells"] for s in steps] == [
        layout.cells_from_values(s.state) for s in trace.steps]
    for prev, cur in zip(steps, steps[1:]):
        want = changed_leaves(layout, prev["state"]["cells"], cur["state"]["cells"])
        assert {c["path"] for c in cur["changes"]} == want
        leaves = {leaf["path"] for v in cur["state"]["vars"] for leaf in (v["leaves"] or [])}
        scalars = {v["name"] for v in cur["state"]["vars"] if v["leaves"] is None}
        assert want <= leaves | scalars  # every change has its place on the page
    assert steps[0]["changes"] == [] and steps[0]["label"] == "<initial state>"
    run = o["run"]
    result = json.load(open(os.path.join(bug_run, "result.json")))
    assert [lv["new"] for lv in run["levels"]] == [lv["new"] for lv in result["levels"]]
    assert [c["never_enabled"] for c in run["coverage"]] == [
        c["fired"] == 0 for c in result["coverage"]]
    assert any(c["never_enabled"] for c in run["coverage"])  # IsrExpand, in this variant
    assert run["violation"]["property"] == "FencedNotLeader"


def _successor_oracle(session, url: str, cells: list[int]) -> None:
    status, r = post(url + "api/successors", {"cells": cells})
    assert status == 200, r
    kernel = Kernel(session.spec, symmetry=False)
    spec = session.spec
    view = kernel.scalar_view(cells)
    inside = all(bool(p.fn(spec, view)) for p in spec.constraints)
    assert r["outside_constraints"] == (not inside)
    got = sorted((s["id"], tuple(s["state"]["cells"])) for s in r["successors"])
    assert got == (batch_successors(kernel, cells) if inside else [])
    for s in r["successors"]:
        inst = spec.actions[s["id"]]
        assert (s["action"], s["params"]) == (inst.name, dict(inst.params))
        nxt = s["state"]["cells"]
        view = kernel.scalar_view(nxt)
        assert s["inside"] == all(bool(p.fn(spec, view)) for p in spec.constraints)
        assert {c["path"] for c in s["changes"]} == changed_leaves(spec.layout, cells, nxt)


def test_successors_of_the_trace_states_are_the_batch_evaluators(bug) -> None:
    session, url = bug
    for cells in session.trace_cells:
        _successor_oracle(session, url, cells)


@pytest.fixture(scope="module")
def walkers():
    """The explorers of the bug variant and of a spec with a state constraint."""
    with contextlib.ExitStack() as stack:
        out = {}
        for target in (BUG, "examples/bounded_queue.py"):
            session = session_for(target)
            out[target] = session, stack.enter_context(served(session))
        yield out


@pytest.mark.parametrize("target", [BUG, "examples/bounded_queue.py"])
@settings(max_examples=10, deadline=None)
@given(choices=st.lists(st.integers(0, 50), max_size=10), start=st.integers(0, 5))
def test_successors_along_random_walks(walkers, target: str, choices: list[int],
                                       start: int) -> None:
    session, url = walkers[target]
    inits = session.kernel.initial_states()
    cells = inits[start % len(inits)]
    for c in choices:  # a walk through the explorer's own answers
        _successor_oracle(session, url, cells)
        _, r = post(url + "api/successors", {"cells": cells})
        if not r["successors"]:
            break
        cells = r["successors"][c % len(r["successors"])]["state"]["cells"]


def test_expression_column_is_trace_eval(bug, bug_run: str) -> None:
    _, url = bug
    steps = get(url + "api/session")["trace"]["steps"]
    for expr in ("logEnd * 10 + restarts", "{b for b in bstate if bstate[b] == 'RUNNING'}",
                 "fenced[1] and leader[1] == 1"):
        status, r = post(url + "api/eval", {"expr": expr, "path": path_body(steps)})
        assert status == 200, r
        out = cli_run("trace", "eval", os.path.join(bug_run, "trace.itf.json"), expr)
        assert out.exit_code == 0, out.output
        assert r["values"] == [line.split("): ", 1)[1] for line in out.output.splitlines()]
    status, r = post(url + "api/eval", {"expr": "ofset[1]", "path": path_body(steps)})
    assert status == 400 and "unknown name 'ofset'" in r["error"]
    status, r = post(url + "api/eval", {"expr": "1 // (logEnd - 2)", "path": path_body(steps)})
    assert status == 400 and "state 6" in r["error"] and "ZeroDivisionError" in r["error"]


def test_saved_path_replays_through_the_cli(bug, tmp_path) -> None:
    session, url = bug
    steps = get(url + "api/session")["trace"]["steps"][:5]
    # branch off at state 5: the first enabled action the trace did not take
    _, r = post(url + "api/successors", {"cells": steps[-1]["state"]["cells"]})
    other = next(s for s in r["successors"] if s["label"] != "Heartbeat(b=1, nl=0)")
    path = steps + [other]
    status, saved = post(url + "api/save", {"path": path_body(path), "loop": None})
    assert status == 200 and saved["replay"]["ok"], saved
    f = tmp_path / saved["filename"]
    f.write_text(saved["itf"])
    out = cli_run("trace", "replay", BUG, str(f))
    assert out.exit_code == 0, out.output
    assert "trace of 6 states is a behaviour of KRaftLifecycleBugFenceKeepsLeader" in out.output
    back = load_trace(str(f))
    assert [s.action for s in back.steps[1:]] == [s["action"] for s in path[1:]]
    assert back.constants == session.spec.constants
    # a path that skips a step is saved, but said not to be a behaviour
    status, saved = post(url + "api/save", {"path": path_body(steps[:2] + steps[3:])})
    assert status == 200 and not saved["replay"]["ok"]
    assert saved["replay"]["message"].startswith("step 3: ")


def test_a_lasso_keeps_its_loop(tmp_path) -> None:
    run = check_run(LASSO, str(tmp_path / "run"))
    session = session_for(LASSO, run=run)
    with served(session) as url:
        o = get(url + "api/session")
        t = o["trace"]
        assert t["loop"] == load_trace(run).loop == 0
        assert t["loop_text"][0] == "State 3 is state 1: the loop from state 1 repeats forever."
        assert t["steps"][-1]["state"]["cells"] == t["steps"][0]["state"]["cells"]
        _, saved = post(url + "api/save", {"path": path_body(t["steps"]), "loop": t["loop"]})
        assert saved["replay"]["ok"]
        assert saved["replay"]["notes"][0] == "the loop closes: state 3 is state 1"
        assert json.loads(saved["itf"])["loop"] == 0
        _, bad = post(url + "api/save", {"path": path_body(t["steps"][:2]), "loop": 0})
        assert not bad["replay"]["ok"] and "the loop does not close" in bad["replay"]["message"]


def oracle_graph(spec, kernel: Kernel) -> nx.MultiDiGraph:
    """The brute-force oracle's state graph (:func:`bruteforce.brute_force_graph`) as
    ``modelcheck graph`` writes it: nodes by fingerprint with ``initial`` and
    ``violates``, edges labelled with their actions."""
    want = brute_force_graph(spec)
    g = nx.MultiDiGraph()
    for c, (_depth, initial, bad) in want.nodes.items():
        g.add_node(kernel.fingerprint(list(c)), initial=initial, violates=",".join(bad))
    for c, n, a in want.edges:
        inst = spec.actions[a]
        g.add_edge(kernel.fingerprint(list(c)), kernel.fingerprint(list(n)),
                   label=action_label(inst.name, dict(inst.params)))
    return g


def test_graph_around_a_state_is_the_state_graph() -> None:
    session = session_for(SMALL, consts=SMALL_CONSTS)
    kernel = session.kernel
    g = oracle_graph(session.spec, kernel)  # the brute-force BFS, keyed by fingerprint
    with served(session) as url:
        cells = kernel.initial_states()[0]
        for _ in range(3):
            fp = kernel.fingerprint(cells)
            status, r = post(url + "api/graph", {"cells": cells, "radius": 2})
            assert status == 200 and r["status"] == "ok", r
            assert r["states"] == g.number_of_nodes() == 207
            dist = {int(n["id"], 16): n["distance"] for n in r["nodes"]}
            after = nx.single_source_shortest_path_length(g, fp, cutoff=2)
            before = nx.single_source_shortest_path_length(g.reverse(copy=False), fp, cutoff=2)
            assert set(dist) == set(after) | set(before)
            assert {n for n, d in dist.items() if d > 0} == set(after) - {fp}
            assert {n for n, d in dist.items() if d < 0} == set(before) - set(after)
            want = {(u, v, a["label"]) for u, v, a in g.subgraph(dist).edges(data=True)}
            assert {(int(e["from"], 16), int(e["to"], 16), e["label"]) for e in r["edges"]} \
                == want
            for n in r["nodes"]:
                assert n["initial"] == g.nodes[int(n["id"], 16)]["initial"]
                assert ",".join(n["invariants"]) == g.nodes[int(n["id"], 16)]["violates"]
            cells = next(n["cells"] for n in r["nodes"] if n["distance"] == 1)


def test_graph_of_a_large_spec_is_refused(bug) -> None:
    session = session_for(BUG, graph_limit=300)
    with served(session) as url:
        cells = session.kernel.initial_states()[0]
        status, r = post(url + "api/graph", {"cells": cells})
        assert status == 200 and r["status"] == "too-large"
        assert "more than 300 reachable states" in r["message"]


def test_malformed_requests_get_a_message_and_the_server_goes_on(bug) -> None:
    session, url = bug
    n = len(session.spec.layout.cells)
    good = session.kernel.initial_states()[0]
    cases = [
        ({"cells": [0, 1]}, 400, f"cells: expected a list of {n} cell values."),
        ({"cells": "x"}, 400, "cells: expected a list"),
        ({}, 400, "cells: expected a list"),
        ({"cells": [True] + good[1:]}, 400, "cells: logEnd must be an integer in"),
        ({"cells": [99] + good[1:]}, 400, "cells: logEnd must be an integer in 0..4, got 99."),
    ]
    for body, code, msg in cases:
        status, r = post(url + "api/successors", body)
        assert status == code and r["error"].startswith(msg), (body, r)
    assert post(url + "api/successors", None, raw=b"{not json")[0] == 400
    assert post(url + "api/successors", None, raw=b"[1, 2]")[0] == 400
    assert post(url + "api/successors", None, raw=b"\xff\xfe")[0] == 400
    assert post(url + "api/successors", None, raw=b"[" * 100_000)[0] == 400
    assert post(url + "api/successors", {"cells": good}, ctype="text/plain")[0] == 415
    assert post(url + "api/eval", {"expr": "1", "path": []})[0] == 400
    assert post(url + "api/eval", {"expr": "", "path": [{"cells": good}]})[0] == 400
    assert post(url + "api/eval", {"expr": "1", "path": [{"cells": good, "params": [1]}]}
                )[1]["error"].startswith("path[0].params")
    assert post(url + "api/save", {"path": [{"cells": good}], "loop": 5})[1]["error"] \
        .startswith("loop: expected the index of a state (0..0)")
    assert post(url + "api/graph", {"cells": good, "radius": 99})[0] == 400
    host, port = url.split("//")[1].rstrip("/").split(":")
    # a body announced too large is refused before it is read
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    conn.putrequest("POST", "/api/successors")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(MAX_BODY + 1))
    conn.endheaders()
    answer = conn.getresponse()
    assert answer.status == 413 and "larger than" in json.load(answer)["error"]
    conn.close()
    # not HTTP at all, and a request for another host (DNS rebinding)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"\x16\x03\x01garbage\r\n\r\n")
        assert sock.recv(100).startswith(b"HTTP/1.1 400")
    req = urllib.request.Request(url + "api/session", headers={"Host": "evil.example"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400
    assert get(url + "api/session")["spec"] == "KRaftLifecycleBugFenceKeepsLeader"
    status, r = post(url + "api/successors", {"cells": good})
    assert status == 200 and r["successors"]


def test_page_and_static_files_are_served_with_a_strict_policy(bug) -> None:
    _, url = bug
    with urllib.request.urlopen(url, timeout=10) as r:
        html = r.read().decode()
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    for name in ("app.js", "style.css"):
        assert f"/static/{name}" in html
        with urllib.request.urlopen(url + "static/" + name, timeout=10) as r:
            body = r.read().decode()
        assert "http://" not in body.replace("http://www.w3.org/2000/svg", "")
        assert "https://" not in body


def test_initial_states() -> None:
    spec = bind_spec(BUG, ())
    session = session_for(BUG)
    with served(session) as url:
        r = get(url + "api/initial")
    inits = Kernel(spec, symmetry=False).initial_states()
    assert r["count"] == len(inits)
    assert [s["state"]["cells"] for s in r["states"]] == inits


def test_the_page_is_package_data() -> None:
    """Every file of the page is installed with the package (pyproject's package-data)."""
    import fnmatch
    import tomllib

    import modelcheck.web

    with open(os.path.join(os.path.dirname(__file__), "..", "pyproject.toml"), "rb") as f:
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["modelcheck.web"]
    static = os.path.join(os.path.dirname(modelcheck.web.__file__), "static")
    files = [f"static/{name}" for name in os.listdir(static)]
    assert {"static/index.html", "static/app.js", "static/style.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, p) for p in patterns) for f in files)
