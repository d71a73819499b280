"""``modelcheck explore`` on the command line: bad input is one message and exit code 2
before anything is served; a good start prints the URL, serves on loopback and stops
on Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest
from explorehelp import BUG, LASSO, SMALL, check_run, cli_run, get

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def bug_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    return check_run(BUG, str(tmp_path_factory.mktemp("explore") / "run"))


def _fails(*args: str) -> str:
    r = cli_run("explore", *args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    return r.output


def test_unknown_spec() -> None:
    assert "error: spec file 'specs/no_such_spec.py' does not exist." in \
        _fails("specs/no_such_spec.py")
    assert "error: specs/kraft_broker.py: no spec named 'Nope'" in \
        _fails("specs/kraft_broker.py:Nope")


def test_malformed_trace(tmp_path) -> None:
    bad = tmp_path / "t.itf.json"
    bad.write_text('{"vars": ["x"], "states": [')
    out = _fails(BUG, "--trace", str(bad))
    assert f"error: {bad}" in out and "truncated" in out
    bad.write_text('{"hello": 1}')
    assert "not a trace" in _fails(BUG, "--trace", str(bad))
    assert "cannot read the trace file" in _fails(BUG, "--trace", str(tmp_path / "missing"))


def test_trace_of_another_spec(bug_run: str) -> None:
    out = _fails("specs/kraft_broker.py", "--trace", bug_run)
    assert f"error: {bug_run}: the trace's variables do not match spec KRaftBroker" in out


def test_trace_with_values_outside_the_spec(tmp_path, bug_run: str) -> None:
    doc = json.load(open(os.path.join(bug_run, "trace.json")))
    doc["steps"][2]["state"]["logEnd"] = 99
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(doc))
    out = _fails(BUG, "--trace", str(bad))
    assert "state 3 is not a state of KRaftLifecycleBugFenceKeepsLeader: logEnd" in out


def test_bad_run_folder(tmp_path, bug_run: str) -> None:
    assert "no result.json there" in _fails(BUG, "--run", str(tmp_path))
    (tmp_path / "result.json").write_text("[1, 2")
    assert "is not JSON" in _fails(BUG, "--run", str(tmp_path))
    doc = json.load(open(os.path.join(bug_run, "result.json")))
    doc["coverage"][0]["fired"] = "many"
    (tmp_path / "result.json").write_text(json.dumps(doc))
    assert "coverage[0].fired: expected an integer" in _fails(BUG, "--run", str(tmp_path))


def test_port_in_use() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out = _fails(SMALL, "--port", str(port))
    assert f"error: --port {port}: 127.0.0.1:{port} is already in use" in out
    assert "--port 0" in out


def test_listens_on_loopback_unless_told() -> None:
    from modelcheck.cli_explore import explore
    from modelcheck.web.server import DEFAULT_HOST, is_loopback

    host = next(p for p in explore.params if p.name == "host")
    assert host.default == DEFAULT_HOST == "127.0.0.1"
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("8.8.8.8")


def test_bad_options() -> None:
    assert "--port" in _fails(SMALL, "--port", "70000")
    assert "--host nowhere.invalid" in _fails(SMALL, "--host", "nowhere.invalid", "--port", "0")


def test_serves_on_loopback_and_stops_on_ctrl_c(tmp_path) -> None:
    run = check_run(LASSO, str(tmp_path / "run"))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "modelcheck", "explore", LASSO, "--run", run,
                          "--port", "0"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()  # printed once the socket listens
        assert line.startswith("Exploring FlipWeakSet() at http://127.0.0.1:"), \
            line + p.stderr.read()
        url = line.split(" at ")[1].split()[0]
        o = get(url + "api/session")
        assert o["spec"] == "FlipWeakSet" and o["trace"]["loop"] == 0
        assert o["run"]["status"] == "violation"
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=30) == 0
        assert "stopped" in p.stderr.read()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


class _NoServe:
    """Stands in for the server: records what ``explore`` would serve, serves nothing."""

    sessions: list = []

    def __init__(self, session, host, port) -> None:
        self.sessions.append(session)
        self.url = f"http://{host}:{port}/"

    def serve(self) -> None:
        pass


def test_what_is_loaded(monkeypatch, bug_run: str) -> None:
    import modelcheck.cli_explore as ce

    monkeypatch.setattr(ce, "ExploreServer", _NoServe)
    itf = os.path.join(bug_run, "trace.itf.json")
    for args in (["--trace", itf], ["--trace", os.path.join(bug_run, "trace.json")],
                 ["--run", bug_run], ["--run", bug_run, "--trace", itf]):
        r = cli_run("explore", BUG, *args)
        assert r.exit_code == 0, r.output
        assert r.output.startswith("Exploring KRaftLifecycleBugFenceKeepsLeader(N=2, P=1, "
                                   "MaxLog=4, MaxRestarts=1, MaxDelays=1) at http://127.0.0.1:")
        s = _NoServe.sessions[-1]
        assert len(s.trace) == 7 and s.trace_source == args[-1]
        assert (s.run is not None) == ("--run" in args)
    # constants from the trace, --const overrides them; a trace explored in another spec
    # (same variables) is said so, and whether it is a behaviour of that spec
    r = cli_run("explore", "specs/kraft_lifecycle.py", "--trace", itf, "--const", "MaxRestarts=2")
    assert r.exit_code == 0, r.output
    s = _NoServe.sessions[-1]
    assert s.spec.constants["MaxRestarts"] == 2 and s.spec.constants["MaxDelays"] == 1
    assert "note: the trace was recorded from KRaftLifecycleBugFenceKeepsLeader; exploring " \
           "it in KRaftLifecycle." in r.output
    t = s.overview()["trace"]
    assert not t["replay"]["ok"] and t["replay"]["message"].startswith("step 7: ")
    # no trace: the spec's own constants
    r = cli_run("explore", SMALL, "--const", "MaxLog=2", "--port", "0")
    assert r.exit_code == 0 and _NoServe.sessions[-1].trace is None
    assert _NoServe.sessions[-1].spec.constants["MaxLog"] == 2
