"""Small surprises, each pinned: duplicate constants, traces outside the spec's domains,
no-constant headers, truncated trace files, file names in trace type errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck.cli import cli

BUG = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"


@pytest.fixture(scope="module")
def itf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("surprises") / "t.itf.json"
    r = CliRunner().invoke(cli, ["check", BUG, "-q", "--trace-out", str(path)])
    assert r.exit_code == 1
    return path


def _edited(itf: Path, tmp_path: Path, value: object) -> str:
    doc = json.loads(itf.read_text())
    doc["states"][1]["logEnd"] = value
    out = tmp_path / "edited.itf.json"
    out.write_text(json.dumps(doc))
    return str(out)


@pytest.mark.parametrize("cmd", [["check", "examples/counter.py"],
                                 ["inspect", "examples/counter.py"],
                                 ["graph", "examples/counter.py", "-o", "-"]])
def test_a_constant_given_twice_is_a_usage_error(runner: CliRunner, cmd: list[str]) -> None:
    r = runner.invoke(cli, [*cmd, "--const", "Max=2", "--const", "Max=3"])
    assert r.exit_code == 2
    assert "--const Max is given twice ('Max=2' and 'Max=3')" in r.stderr


def test_replay_override_given_twice(runner: CliRunner, itf: Path) -> None:
    r = runner.invoke(cli, ["trace", "replay", BUG, str(itf), "--const", "N=2",
                            "--const", "N=2"])
    assert r.exit_code == 2 and "--const N is given twice" in r.stderr


def test_out_of_domain_value_is_exit_2_everywhere(runner: CliRunner, itf: Path,
                                                  tmp_path: Path) -> None:
    bad = _edited(itf, tmp_path, {"#bigint": "99"})
    want = (f"error: {bad}: state 2 is not a state of KRaftBrokerBugEpochReuse: "
            "logEnd = 99 is outside its domain 0..4.")
    for cmd in (["trace", "replay", BUG, bad],
                ["trace", "show", bad, "--spec", BUG],
                ["trace", "eval", bad, "logEnd", "--spec", BUG]):
        r = runner.invoke(cli, cmd)
        assert r.exit_code == 2, (cmd, r.output)
        assert want in r.stderr, cmd
    # without a spec, show and eval read the file as it is
    assert runner.invoke(cli, ["trace", "show", bad]).exit_code == 0
    # a trace that fits is shown as before
    r = runner.invoke(cli, ["trace", "eval", str(itf), "logEnd", "--spec", BUG])
    assert r.exit_code == 0 and r.output.splitlines()[-1] == "step 5 (Register(b=2)): 2"


def test_const_needs_spec_on_show(runner: CliRunner, itf: Path) -> None:
    r = runner.invoke(cli, ["trace", "show", str(itf), "--const", "N=2"])
    assert r.exit_code == 2 and "--const needs --spec" in r.stderr


def test_wrong_type_names_the_file(runner: CliRunner, itf: Path, tmp_path: Path) -> None:
    bad = _edited(itf, tmp_path, "x")
    for cmd in (["trace", "replay", BUG, bad], ["trace", "show", bad, "--spec", BUG]):
        r = runner.invoke(cli, cmd)
        assert r.exit_code == 2
        assert (f"error: {bad}: state 2: logEnd is x (a string); the spec expects an "
                "integer in 0..4.") in r.stderr


def test_spec_without_constants_has_no_parentheses(runner: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "stuck.py"
    spec.write_text(textwrap.dedent('''
        from modelcheck import Bool, Spec, action

        class Deadlock(Spec):
            """No constants; no action is ever enabled."""
            x = Bool()

            @action()
            def Flip(self, s, t):
                t.x = ~s.x
                return s.x
    '''))
    r = runner.invoke(cli, ["check", str(spec), "-q"])
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "Spec Deadlock"
    assert lines[1] == "Deadlock reached: a state with no enabled action (trace of 1 state)."


@pytest.mark.parametrize("cut", [1, 50, 300, 1200])
def test_truncated_trace_file_says_so(runner: CliRunner, itf: Path, tmp_path: Path,
                                      cut: int) -> None:
    short = tmp_path / "cut.json"
    short.write_bytes(itf.read_bytes()[:cut])
    r = runner.invoke(cli, ["trace", "show", str(short)])
    assert r.exit_code == 2
    msg = r.stderr.strip()
    assert msg.startswith(f"error: {short}:") and msg.endswith("(is the file truncated?).")
    assert "starting at (" not in msg and "not a trace file" not in msg
