"""Outputs first: every output and working path is tried before any work.

``--out``, ``--trace-out``, ``--spill-dir`` and ``--checkpoint-dir`` that cannot be
used are a usage error (exit 2) naming the user's path, reported before the spec is
explored; a write that still fails at the end keeps a violation's exit code 1.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck.cli import cli
from modelcheck.trace.runrecord import RunRecorder, RunRecordError

BUG = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"
OPTIONS = ["--out", "--trace-out", "--spill-dir", "--checkpoint-dir"]


def _bad_paths(tmp_path: Path) -> dict[str, str]:
    blocker = tmp_path / "file.txt"
    blocker.write_text("a regular file")
    return {"is-a-file": str(blocker), "under-a-file": str(blocker / "sub")}


@pytest.mark.parametrize("option", OPTIONS)
@pytest.mark.parametrize("kind", ["is-a-file", "under-a-file"])
def test_unusable_path_is_refused_before_exploring(runner: CliRunner, tmp_path: Path,
                                                   option: str, kind: str) -> None:
    path = _bad_paths(tmp_path)[kind]
    if option == "--trace-out" and kind == "is-a-file":
        path = str(tmp_path / "file.txt" / "t.itf.json")  # a file may be replaced
    r = runner.invoke(cli, ["check", BUG, option, path])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("error: ") or "Invalid value" in r.stderr
    assert path in r.stderr
    assert "Traceback" not in r.output and "Checking" not in r.stderr  # before any work
    assert sorted(os.listdir(tmp_path)) == ["file.txt"]


@pytest.mark.parametrize("option", ["--out", "--spill-dir", "--checkpoint-dir"])
def test_unwritable_directory(runner: CliRunner, tmp_path: Path, option: str) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as root: permissions do not block writes")
        r = runner.invoke(cli, ["check", BUG, option, str(locked / "x")])
        assert r.exit_code == 2
        assert f"{option} {locked / 'x'}" in r.stderr and "Checking" not in r.stderr
    finally:
        locked.chmod(0o700)


def test_spark_refuses_before_starting_spark(runner: CliRunner, tmp_path: Path) -> None:
    """``modelcheck spark`` shares the probes (no Spark session is started)."""
    from spark_explore.cli import spark

    bad = _bad_paths(tmp_path)["under-a-file"]
    for option in ["--out", "--trace-out", "--checkpoint-dir"]:  # no --spill-dir on spark
        r = runner.invoke(spark, [BUG, option, bad, "--master", "local[1]"])
        assert r.exit_code == 2, (option, r.output)
        assert bad in r.stderr and "Starting Spark" not in r.stderr


def test_a_failed_write_at_the_end_keeps_the_verdict(runner: CliRunner, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(self: RunRecorder, result: object, spec: object) -> list[str]:
        raise RunRecordError(f"--trace-out {self.trace_out}: cannot write the run record: "
                             "No space left on device.")

    monkeypatch.setattr(RunRecorder, "write", fail)
    out = str(tmp_path / "t.itf.json")
    r = runner.invoke(cli, ["check", BUG, "-q", "--trace-out", out])
    assert r.exit_code == 1  # still the violation's code
    assert f"error: --trace-out {out}" in r.stderr
    r = runner.invoke(cli, ["check", "examples/counter.py", "-q", "--trace-out", out])
    assert r.exit_code == 2


def test_write_errors_name_the_users_path(tmp_path: Path) -> None:
    from modelcheck.cli import bind_spec
    from modelcheck.explorer import Explorer

    where = tmp_path / "d"
    where.mkdir()
    target = where / "t.itf.json"
    rec = RunRecorder.prepare(BUG, out_dir=None, trace_out=str(target))
    spec = bind_spec(BUG, ())
    result = Explorer(spec).run()
    where.rmdir()  # the directory vanished while the check ran
    with pytest.raises(RunRecordError) as e:
        rec.write(result, spec)
    assert str(e.value).startswith(f"--trace-out {target}: ") and ".tmp" not in str(e.value)
