"""Outputs first: every output and working path is tried before any work.

``--out``, ``--trace-out``, ``--spill-dir`` and ``--checkpoint-dir`` that cannot be
used are a usage error (exit 2) naming the user's path, reported before the spec is
explored; a write that still fails at the end keeps a violation's exit code 1.
"""

from __future__ import annotations

import os
import stat
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


# ---------------------------------------------------------------- not a regular file
# An output never replaces what is not a regular file: a symbolic link, a FIFO, a
# device or a directory at an output path is refused before any work (exit 2, naming
# the path and what it is), and left exactly as it was.

GRAPH_SPEC = "examples/counter.py"
#: (command line before the option, option, the option's kind)
FILE_OPTIONS = [
    (["check", BUG, "-q"], "--trace-out"),
    (["simulate", BUG, "-q", "--runs", "5"], "--trace-out"),
    (["graph", GRAPH_SPEC, "--format", "dot"], "--output"),
    (["graph", GRAPH_SPEC, "--format", "dot"], "-o"),
]
DIR_OPTIONS = [
    (["check", BUG, "-q"], "--out"),
    (["check", BUG, "-q"], "--checkpoint-dir"),
    (["check", BUG, "-q"], "--spill-dir"),
    (["simulate", BUG, "-q", "--runs", "5"], "--out"),
]


def _snapshot(path: str) -> tuple[int, str | None, bytes | None]:
    """What is at ``path``: its file type, a link's target, a regular file's bytes."""
    st = os.lstat(path)
    kind = st.st_mode & 0o170000
    target = os.readlink(path) if os.path.islink(path) else None
    data = Path(path).read_bytes() if os.path.isfile(path) and target is None else None
    return kind, target, data


def _make(tmp_path: Path, kind: str) -> tuple[str, str]:
    """An existing non-regular file of ``kind`` in ``tmp_path``: (path, its description)."""
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    if kind == "symlink":
        (tmp_path / "link").symlink_to(victim)
        return str(tmp_path / "link"), "symbolic link"
    if kind == "dangling-symlink":
        (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
        return str(tmp_path / "dangling"), "symbolic link"
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo")
        return str(tmp_path / "fifo"), "FIFO"
    if kind == "device":
        return _device(tmp_path), "character device"
    assert kind == "directory"
    (tmp_path / "dir").mkdir()
    return str(tmp_path / "dir"), "directory"


def _device(tmp_path: Path) -> str:
    """A character device to aim an output at. As root, a private node (the null
    device's numbers) in ``tmp_path``: a regression that replaced it must not destroy
    the system's /dev/null. Otherwise /dev/null itself, which only root could replace."""
    if os.geteuid() != 0:
        return "/dev/null"
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as e:
        pytest.skip(f"cannot make a device node as root: {e}")
    return str(node)


def _refused(runner: CliRunner, args: list[str], path: str, what: str) -> None:
    before = _snapshot(path)
    r = runner.invoke(cli, args)
    assert r.exit_code == 2, (args, r.output)
    assert "error: " in r.stderr and path in r.stderr and what in r.stderr, r.stderr
    assert "Traceback" not in r.output
    assert "Checking" not in r.stderr and "Simulating" not in r.stderr  # before any work
    assert "State graph" not in r.stderr
    assert _snapshot(path) == before  # left exactly as it was


@pytest.mark.parametrize("args, option", FILE_OPTIONS, ids=lambda x: x if isinstance(x, str)
                         else x[0])
@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "device",
                                  "directory"])
def test_an_output_file_replaces_only_a_regular_file(runner: CliRunner, tmp_path: Path,
                                                    args: list[str], option: str,
                                                    kind: str) -> None:
    path, what = _make(tmp_path, kind)
    _refused(runner, [*args, option, path], path, what)
    assert (tmp_path / "precious.txt").read_text() == "keep me"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


@pytest.mark.parametrize("args, option", DIR_OPTIONS, ids=lambda x: x if isinstance(x, str)
                         else x[0])
@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "device"])
def test_an_output_directory_is_a_directory(runner: CliRunner, tmp_path: Path,
                                            args: list[str], option: str, kind: str) -> None:
    path, what = _make(tmp_path, kind)
    _refused(runner, [*args, option, path], path, what)
    assert (tmp_path / "precious.txt").read_text() == "keep me"


def test_a_regular_file_is_replaced_where_the_help_says_so(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "t.itf.json"
    out.write_text("old")
    assert runner.invoke(cli, ["check", BUG, "-q", "--trace-out", str(out)]).exit_code == 1
    assert out.read_text().startswith("{")
    g = tmp_path / "g.dot"
    g.write_text("old")
    assert runner.invoke(cli, ["graph", GRAPH_SPEC, "-o", str(g)]).exit_code == 0
    assert g.read_text().startswith("digraph")
    for command, option in (("check", "--trace-out"), ("graph", "--output")):
        text = runner.invoke(cli, [command, "--help"]).output
        assert "regular file there is replaced" in " ".join(text.split()), (command, option)


def test_a_symlink_to_a_directory_is_an_output_directory(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    r = runner.invoke(cli, ["check", BUG, "-q", "--out", str(tmp_path / "via")])
    assert r.exit_code == 1, r.output
    assert os.path.islink(tmp_path / "via")
    assert sorted(os.listdir(tmp_path / "real")) == ["result.json", "trace.itf.json",
                                                     "trace.json"]


def test_spark_outputs_refuse_a_symlink_and_a_fifo(runner: CliRunner, tmp_path: Path) -> None:
    from spark_explore.cli import spark

    fifo, _ = _make(tmp_path, "fifo")
    link, _ = _make(tmp_path, "symlink")
    for option, path, what in (("--trace-out", fifo, "FIFO"), ("--out", link, "symbolic link"),
                               ("--checkpoint-dir", fifo, "FIFO")):
        before = _snapshot(path)
        r = runner.invoke(spark, [BUG, option, path, "--master", "local[1]"])
        assert r.exit_code == 2, (option, r.output)
        assert path in r.stderr and what in r.stderr and "Starting Spark" not in r.stderr
        assert _snapshot(path) == before


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_atomic_write_replaces_only_a_regular_file(tmp_path: Path, kind: str) -> None:
    """Checked again at the rename: what appeared at the target after the probe (a
    link planted meanwhile) is left alone too."""
    from modelcheck.fileio import NotRegularFileError, atomic_write

    path, _ = _make(tmp_path, kind)
    before = _snapshot(path)
    with pytest.raises(NotRegularFileError) as e:
        atomic_write(path, b"data")
    assert "not a regular file" in str(e.value)
    assert _snapshot(path) == before
    assert (tmp_path / "precious.txt").read_text() == "keep me"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    regular = tmp_path / "regular"
    regular.write_text("old")
    atomic_write(regular, b"new")
    assert regular.read_bytes() == b"new"


@pytest.mark.parametrize("args, option", FILE_OPTIONS + DIR_OPTIONS,
                         ids=lambda x: x if isinstance(x, str) else x[0])
def test_an_empty_path_is_refused(runner: CliRunner, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch, args: list[str],
                                  option: str) -> None:
    """An empty path is not the current directory (--checkpoint-dir '' checkpointed
    into it)."""
    root = Path(__file__).resolve().parent.parent
    monkeypatch.chdir(tmp_path)
    args = [str(root / a) if a.endswith(".py") or ".py:" in a else a for a in args]
    r = runner.invoke(cli, [*args, option, ""])
    assert r.exit_code == 2, r.output
    assert "the path is empty" in r.stderr and "Checking" not in r.stderr
    assert os.listdir(tmp_path) == []
