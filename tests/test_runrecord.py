"""Run records: ``check --out DIR`` and ``--trace-out FILE``, atomic and never clobbering."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

import modelcheck
from modelcheck.cli import cli
from modelcheck.trace import load_trace
from modelcheck.trace.runrecord import RunRecorder, RunRecordError, atomic_write

KRAFT = "specs/kraft_broker.py"
SMALL = ["--const", "N=2", "--const", "P=1", "--const", "MaxLog=4", "--const", "MaxRestarts=1"]


def test_out_on_a_violation(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "epoch"  # parents are created
    before = datetime.now(UTC)
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", *SMALL,
                            "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert f"Run record written to {out}/ (result.json, trace.itf.json, trace.json)." in r.stderr
    assert sorted(os.listdir(out)) == ["result.json", "trace.itf.json", "trace.json"]
    doc = json.loads((out / "result.json").read_text())
    # Result.to_json() at the top level ...
    assert doc["status"] == "violation" and doc["spec"] == "KRaftBrokerBugEpochReuse"
    assert doc["constants"] == {"N": 2, "P": 1, "MaxLog": 4, "MaxRestarts": 1}
    assert doc["distinct_states"] > 0 and doc["generated_states"] > 0 and doc["depth"] == 4
    assert {c["action"] for c in doc["coverage"]} >= {"Start", "Register"}
    assert [lv["depth"] for lv in doc["levels"]] == list(range(len(doc["levels"])))
    assert doc["violation"]["property"] == "EpochMonotonic"
    assert len(doc["violation"]["trace"]) == 5
    # ... plus the run's metadata
    assert doc["format"] == "modelcheck-run" and doc["format_version"] == 1
    run = doc["run"]
    assert run["version"] == modelcheck.__version__ and run["tool"] == "modelcheck"
    assert run["command"].startswith(f"modelcheck check {KRAFT}:KRaftBrokerBugEpochReuse ")
    assert "--const N=2" in run["command"] and f"--out {out}" in run["command"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", run["started"])
    started = datetime.fromisoformat(run["started"].replace("Z", "+00:00"))
    assert abs((started - before).total_seconds()) < 60
    assert run["finished"] >= run["started"]
    assert run["spec"] == {"target": f"{KRAFT}:KRaftBrokerBugEpochReuse",
                           "class": "KRaftBrokerBugEpochReuse", "module": "specs.kraft_broker",
                           "file": KRAFT}
    assert run["options"]["consts"] == ["N=2", "P=1", "MaxLog=4", "MaxRestarts=1"]
    assert doc["files"] == {"result": "result.json", "trace_itf": "trace.itf.json",
                            "trace_json": "trace.json"}
    # the traces agree with the result
    for name in ("trace.itf.json", "trace.json"):
        t = load_trace(out / name)
        assert [s.state for s in t.steps] == [
            load_trace(out / "trace.json").steps[i].state for i in range(5)]
        assert t.property == "EpochMonotonic" and t.source == doc["run"]["spec"]["target"]
    tj = json.loads((out / "trace.json").read_text())
    assert set(tj) >= {"spec", "constants", "property", "kind", "steps"}
    assert set(tj["steps"][1]) == {"action", "params", "state"}
    assert tj["steps"][0]["state"]["regEpoch"] == {"1": 0, "2": 0}


def test_out_without_violation_writes_only_the_result(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "ok"
    r = runner.invoke(cli, ["check", "examples/counter.py", "--out", str(out), "-q",
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["status"] == "ok"  # stdout stays pure JSON
    assert os.listdir(out) == ["result.json"]
    doc = json.loads((out / "result.json").read_text())
    assert doc["violation"] is None and doc["files"] == {"result": "result.json"}


def test_existing_run_folder_is_refused_before_exploring(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "result.json").write_text("precious")
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", "--out", str(out)])
    assert r.exit_code == 2
    assert "already holds a run (result.json)" in r.stderr
    assert "Checking" not in r.stderr  # refused before exploring
    assert (out / "result.json").read_text() == "precious"
    assert os.listdir(out) == ["result.json"]


def test_existing_empty_folder_is_fine(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    r = runner.invoke(cli, ["check", "examples/counter.py", "--out", str(tmp_path), "-q"])
    assert r.exit_code == 0
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "result.json"]


@pytest.mark.parametrize("option, make, message", [
    ("--out", "file", "exists and is not a directory"),
    ("--trace-out", "dir", "is a directory"),
    ("--trace-out", "missing-parent", "does not exist"),
])
def test_bad_destinations(runner: CliRunner, tmp_path: Path, option: str, make: str,
                          message: str) -> None:
    target = tmp_path / "x"
    if make == "file":
        target.write_text("")
    elif make == "dir":
        target.mkdir()
    else:
        target = tmp_path / "no" / "t.itf.json"
    r = runner.invoke(cli, ["check", "examples/counter.py", option, str(target)])
    assert r.exit_code == 2
    assert message in r.stderr and "Traceback" not in r.output


def test_trace_out_only(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "t.itf.json"
    path.write_text("old")  # a named file is replaced (atomically)
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugNoCatchUpCheck", *SMALL,
                            "--trace-out", str(path), "-q"])
    assert r.exit_code == 1
    assert os.listdir(tmp_path) == ["t.itf.json"]  # no temporary files left behind
    assert len(load_trace(path)) == 5
    r = runner.invoke(cli, ["check", "examples/counter.py", "--trace-out",
                            str(tmp_path / "none.itf.json")])
    assert r.exit_code == 0
    assert "No counterexample" in r.stderr and not (tmp_path / "none.itf.json").exists()


def test_atomic_write_never_clobbers(tmp_path: Path) -> None:
    p = tmp_path / "f.json"
    atomic_write(p, b"one", overwrite=False)
    with pytest.raises(FileExistsError):
        atomic_write(p, b"two", overwrite=False)
    assert p.read_bytes() == b"one"
    atomic_write(p, b"three")
    assert p.read_bytes() == b"three"
    assert os.listdir(tmp_path) == ["f.json"]


def test_concurrent_writer_is_detected(tmp_path: Path) -> None:
    """A run folder filled by someone else while the check ran is not overwritten."""
    from modelcheck.cli import bind_spec
    from modelcheck.explorer import Explorer

    out = tmp_path / "run"
    rec = RunRecorder.prepare(f"{KRAFT}:KRaftBrokerBugEpochReuse", out_dir=str(out),
                              trace_out=None)
    spec = bind_spec(f"{KRAFT}:KRaftBrokerBugEpochReuse", ())
    result = Explorer(spec).run()
    out.mkdir()
    (out / "trace.json").write_text("theirs")
    with pytest.raises(RunRecordError, match="appeared while the check ran"):
        rec.write(result, spec)
    assert (out / "trace.json").read_text() == "theirs"
    assert not (out / "result.json").exists()  # result.json is written last
