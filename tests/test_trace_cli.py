"""The trace commands end to end: check --trace-out, then trace show / replay / eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck.cli import cli

KRAFT = "specs/kraft_broker.py"
DONE_WHEN = ["--const", "N=2", "--const", "P=1", "--const", "MaxLog=4", "--const",
             "MaxRestarts=1"]


@pytest.fixture(scope="module")
def itf_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The issue's Done-when command: exits 1 and writes the ITF trace."""
    path = tmp_path_factory.mktemp("trace") / "t.itf.json"
    r = CliRunner().invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", *DONE_WHEN,
                                 "--trace-out", str(path)])
    assert r.exit_code == 1, r.output
    assert f"Counterexample written to {path} (ITF, 5 states)." in r.stderr
    return str(path)


def test_done_when_writes_five_itf_states(itf_file: str) -> None:
    doc = json.loads(Path(itf_file).read_text())
    assert len(doc["states"]) == 5
    assert doc["vars"][:3] == ["logEnd", "regEpoch", "regInc"]


def test_done_when_replays(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "replay", f"{KRAFT}:KRaftBrokerBugEpochReuse", itf_file])
    assert r.exit_code == 0, r.output
    assert ("trace of 5 states is a behaviour of KRaftBrokerBugEpochReuse(N=2, P=1, "
            "MaxLog=4, MaxRestarts=1)") in r.stdout
    assert "note: step 5 violates action property EpochMonotonic" in r.stdout


def test_done_when_shows_only_changes(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "show", itf_file])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "\x1b[" not in out  # not a terminal: no colours
    assert "State 1: <initial state>" in out and "State 5: Register(b=" in out
    after_init = out.split("State 2:")[1]
    assert "offset" not in after_init and "fenced" not in after_init
    assert "logEnd: 1 -> 2" in after_init and "regEpoch[" in after_init


def test_done_when_evaluates(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf_file, "offset[1] - regEpoch[1]"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0] == "step 1 (init): 0"
    assert lines[1].startswith("step 2 (Start(b=")
    assert lines[4].startswith("step 5 (Register(b=")


def test_show_options(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "show", itf_file, "--step", "5", "--vars",
                            "logEnd,regEpoch", "--color"])
    assert r.exit_code == 0, r.output
    assert "\x1b[" in r.stdout  # forced colours
    plain = runner.invoke(cli, ["trace", "show", itf_file, "--step", "5", "--vars",
                                "regEpoch,logEnd", "--no-color"]).stdout
    assert "\x1b[" not in plain
    assert "State 5: Register(b=" in plain and "State 4" not in plain
    assert plain.index("logEnd: 1 -> 2") < plain.index("regEpoch[")  # declaration order
    assert "bEpoch" not in plain
    full = runner.invoke(cli, ["trace", "show", itf_file, "--full"]).stdout
    assert full.count("offset   = {1: 0, 2: 0}") == 5


@pytest.mark.parametrize("args, message", [
    (["--step", "9"], "--step 9: the trace has only 5 states"),
    (["--vars", "nope"], "--vars nope: unknown variable(s) nope"),
])
def test_show_bad_options(runner: CliRunner, itf_file: str, args: list[str],
                          message: str) -> None:
    r = runner.invoke(cli, ["trace", "show", itf_file, *args])
    assert r.exit_code == 2
    assert message in r.stderr and "Traceback" not in r.output


def test_replay_against_the_fixed_spec_fails_at_the_step(runner: CliRunner,
                                                         itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "replay", KRAFT, itf_file])
    assert r.exit_code == 1
    assert "not a behaviour of KRaftBroker(N=2, P=1, MaxLog=4, MaxRestarts=1)" in r.stdout
    assert "step 5: action Register(b=" in r.stdout
    assert "the spec gives 2, the trace has 1" in r.stdout
    assert "recorded from KRaftBrokerBugEpochReuse" in r.stderr


def test_replay_constants_from_trace_and_overrides(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "replay", f"{KRAFT}:KRaftBrokerBugEpochReuse", itf_file,
                            "--const", "MaxLog=6"])
    assert r.exit_code == 0, r.output
    assert "MaxLog=6" in r.stdout
    r = runner.invoke(cli, ["trace", "replay", f"{KRAFT}:KRaftBrokerBugEpochReuse", itf_file,
                            "--const", "N=3"])
    assert r.exit_code == 2  # regEpoch has indices 1..3 in the spec, 1..2 in the trace
    assert "must map exactly the indices 1..3" in r.stderr
    r = runner.invoke(cli, ["trace", "replay", "examples/counter.py", itf_file])
    assert r.exit_code == 2
    assert "ignoring constant(s)" in r.stderr
    assert "the trace's variables do not match spec Counter" in r.stderr
    assert "Traceback" not in r.output


def test_eval_error_exit_2(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf_file, "offset[3]"])
    assert r.exit_code == 2
    assert "error: evaluating 'offset[3]' in state 1 (init) failed with KeyError: 3" in r.stderr
    r = runner.invoke(cli, ["trace", "eval", itf_file, "import os"])
    assert r.exit_code == 2 and "not valid Python" in r.stderr


def test_eval_is_bounded_in_memory(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf_file, "[x for x in range(10**9)]",
                            "--memory-limit", "64M"])
    assert r.exit_code == 2
    assert "needed more than 64 MiB of memory and was stopped" in r.stderr


def test_eval_is_bounded_in_time(runner: CliRunner, itf_file: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf_file, "sum(range(10**15))", "--timeout", "0.5"])
    assert r.exit_code == 2
    assert "took longer than 0.5 s and was stopped" in r.stderr


def test_eval_limits_through_the_api(itf_file: str) -> None:
    """What a web explorer calls: the same function, bounded by default."""
    from modelcheck.trace import load_trace
    from modelcheck.trace.evaluate import EvaluationLimitError, Limits, evaluate

    t = load_trace(itf_file)
    assert [v for _, _, v in evaluate(t, "logEnd + 1")] == [1, 1, 1, 2, 3]
    assert evaluate(t, "logEnd", limits=None) == evaluate(t, "logEnd")
    with pytest.raises(EvaluationLimitError, match="took longer"):
        evaluate(t, "sum(range(10**15))", limits=Limits(seconds=0.3))
    with pytest.raises(EvaluationLimitError, match="memory"):
        evaluate(t, "[0] * 10**9", limits=Limits(memory=32 * 2**20))


@pytest.mark.parametrize("size", ["0", "lots", "-1M"])
def test_eval_bad_memory_limit(runner: CliRunner, itf_file: str, size: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf_file, "logEnd", "--memory-limit", size])
    assert r.exit_code == 2 and "--memory-limit" in r.stderr


def test_missing_file(runner: CliRunner, tmp_path: Path) -> None:
    for cmd in (["trace", "show"], ["trace", "eval"], ["trace", "replay", KRAFT]):
        args = [*cmd, str(tmp_path / "nope.json")] + (["logEnd"] if cmd[1] == "eval" else [])
        r = runner.invoke(cli, args)
        assert r.exit_code == 2, r.output
        assert "cannot read the trace file: No such file or directory" in r.stderr


def test_json_trace_and_run_folder_are_readable(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugNoCatchUpCheck", *DONE_WHEN,
                            "--out", str(out), "-q"])
    assert r.exit_code == 1
    for target in (out, out / "trace.json", out / "trace.itf.json", out / "result.json"):
        r = runner.invoke(cli, ["trace", "replay", f"{KRAFT}:KRaftBrokerBugNoCatchUpCheck",
                                str(target)])
        assert r.exit_code == 0, (target, r.output)
        assert "trace of 5 states is a behaviour" in r.stdout
        shown = runner.invoke(cli, ["trace", "show", str(target)]).stdout
        assert "invariant CaughtUpBeforeUnfence" in shown
