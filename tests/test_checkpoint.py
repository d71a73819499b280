"""Checkpoint and resume (``--checkpoint-dir``, ``--resume``): a run stopped anywhere and
resumed gives the result of an uninterrupted run, field by field (wall times aside)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from killrun import kill_at_level
from ladder_spec import Ladder
from randspec import random_spec

from modelcheck import Explorer, Result, explore
from modelcheck.checkpoint import MANIFEST, VERSION, Checkpoint, CheckpointError
from modelcheck.cli import cli
from modelcheck.config import CheckConfig
from modelcheck.kernel import Kernel

ROOT = Path(__file__).resolve().parent.parent
LADDER = "tests/ladder_spec.py"


def comparable(r: Result | dict[str, Any]) -> dict[str, Any]:
    """A result without its wall-time fields."""
    d = dict(r.to_json() if isinstance(r, Result) else r)
    for key in ("seconds", "states_per_second"):
        d.pop(key)
    d["levels"] = [{k: v for k, v in lv.items() if k != "seconds"} for lv in d["levels"]]
    return d


def interrupt_after(n: int) -> Any:
    """An ``on_transitions`` hook that presses Ctrl-C at its ``n``-th call."""
    calls = [0]

    def hook(*_: Any) -> None:
        calls[0] += 1
        if calls[0] == n:
            raise KeyboardInterrupt

    return hook


# ---------------------------------------------------------------- in process
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_spec(), random_spec(wide=True)), st.booleans(), st.integers(0, 6),
       st.integers(1, 8))
def test_stopped_and_resumed_equals_uninterrupted(cls, checks, stop_level, interrupt_at) -> None:
    spec = cls()
    opts: dict[str, Any] = {} if checks else {"invariants": [], "check_deadlock": False}
    want = comparable(explore(spec, batch_size=3, **opts))
    with tempfile.TemporaryDirectory() as d:
        # stopped by --max-depth, then resumed without a bound
        first = explore(spec, batch_size=3, max_depth=stop_level, checkpoint_dir=f"{d}/a",
                        **opts)
        assert comparable(explore(spec, checkpoint_dir=f"{d}/a", resume=True, **opts)) == want
        # interrupted (Ctrl-C) midway through a level, then resumed
        cut = explore(spec, batch_size=1, checkpoint_dir=f"{d}/b",
                      on_transitions=interrupt_after(interrupt_at), **opts)
        event(f"first run {first.status}, interrupted run {cut.reason or cut.status}")
        resumed = explore(spec, batch_size=5, checkpoint_dir=f"{d}/b", resume=True, **opts)
        assert comparable(resumed) == want
        if cut.reason != "interrupted":
            assert comparable(cut) == want


def test_violation_found_after_resume_has_the_same_trace(tmp_path) -> None:
    spec = Ladder(L=30, M=6)
    want = explore(spec)
    assert want.status == "violation" and len(want.violation.trace) == 31
    first = explore(spec, max_depth=10, checkpoint_dir=tmp_path)
    assert first.status == "incomplete" and first.depth == 10
    resumed = explore(spec, checkpoint_dir=tmp_path, resume=True)
    assert resumed.violation == want.violation
    assert comparable(resumed) == comparable(want)


def test_a_finished_checkpoint_returns_its_result_without_exploring(tmp_path) -> None:
    spec = Ladder(L=12, M=4)
    done = explore(spec, checkpoint_dir=tmp_path)
    assert done.status == "violation"
    assert json.loads((tmp_path / MANIFEST).read_text())["complete"] is True
    again = explore(spec, checkpoint_dir=tmp_path, resume=True,
                    on_transitions=interrupt_after(1))  # any exploration would interrupt
    assert again.to_json() == done.to_json()
    # a bounded finished run extends under a larger bound
    bounded = explore(spec, max_depth=5, checkpoint_dir=tmp_path / "b")
    assert explore(spec, max_depth=5, checkpoint_dir=tmp_path / "b", resume=True,
                   on_transitions=interrupt_after(1)).to_json() == bounded.to_json()
    assert comparable(explore(spec, max_depth=8, checkpoint_dir=tmp_path / "b",
                              resume=True)) == comparable(explore(spec, max_depth=8))
    with pytest.raises(CheckpointError, match="beyond --max-depth 3"):
        explore(spec, max_depth=3, checkpoint_dir=tmp_path / "b", resume=True)


def test_with_spilled_levels(tmp_path) -> None:
    spec = Ladder(L=20, M=5)
    explore(spec, max_depth=7, checkpoint_dir=tmp_path / "c", spill_dir=tmp_path / "s")
    resumed = explore(spec, checkpoint_dir=tmp_path / "c", spill_dir=tmp_path / "s",
                      resume=True)
    want = explore(spec, spill_dir=tmp_path / "s")
    assert comparable(resumed) == comparable(want)


def test_resume_without_a_checkpoint_starts_afresh(tmp_path) -> None:
    spec = Ladder(L=5, M=2)
    r = explore(spec, checkpoint_dir=tmp_path / "new", resume=True)
    assert comparable(r) == comparable(explore(spec))
    with pytest.raises(CheckpointError, match="--resume needs --checkpoint-dir"):
        Explorer(spec, resume=True).run()


def test_one_run_at_a_time_per_directory(tmp_path) -> None:
    spec = Ladder(L=5, M=2)
    holder = Checkpoint(tmp_path, Kernel(spec), CheckConfig())
    try:
        with pytest.raises(CheckpointError, match="in use by another running check"):
            explore(spec, checkpoint_dir=tmp_path)
    finally:
        holder.close()
    assert explore(spec, checkpoint_dir=tmp_path).status == "violation"


# ---------------------------------------------------------------- command line
def _check(runner, *args: str) -> Any:
    return runner.invoke(cli, ["check", LADDER, "--format", "json", "-q", *args])


def test_sigkill_midway_then_resume_gives_the_uninterrupted_result(runner, tmp_path) -> None:
    consts = ["--const", "L=150", "--const", "M=100"]
    ckpt = tmp_path / "ckpt"
    cmd = [sys.executable, "-m", "modelcheck", "check", LADDER, *consts,
           "--checkpoint-dir", str(ckpt), "--format", "json", "-q"]
    kill_at_level(cmd, ckpt, 5, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    manifest = json.loads((ckpt / MANIFEST).read_text())
    assert manifest["complete"] is False and 5 <= manifest["state"]["depth"] < 150
    resumed = _check(runner, *consts, "--checkpoint-dir", str(ckpt), "--resume")
    assert resumed.exit_code == 1, resumed.output
    plain = _check(runner, *consts)
    assert plain.exit_code == 1
    got, want = json.loads(resumed.stdout), json.loads(plain.stdout)
    assert want["status"] == "violation" and want["violation"]["trace_length"] == 151
    assert comparable(got) == comparable(want)


@pytest.mark.parametrize("change, says", [
    (["--const", "M=4"], "constant M = 3 vs 4"),
    # the same checks named explicitly: accepted
    (["--invariant", "NotTop", "--invariant", "InRange", "--no-deadlock"], None),
    (["--deadlock"], "checked deadlock False vs True (--deadlock/--no-deadlock)"),
])
def test_refuses_a_checkpoint_of_another_check(runner, tmp_path, change, says) -> None:
    base = ["--const", "L=8", "--checkpoint-dir", str(tmp_path)]
    assert _check(runner, *base, "--const", "M=3", "--max-depth", "3").exit_code == 3
    m = [] if "--const" in change else ["--const", "M=3"]
    r = _check(runner, *base, *m, "--resume", *change)
    if says is None:
        assert r.exit_code == 1, r.output
        return
    assert r.exit_code == 2
    assert says in r.stderr and "Traceback" not in r.output + r.stderr
    assert json.loads(r.stdout)["status"] == "error"


def test_refuses_other_invariants(runner, tmp_path) -> None:
    base = ["--const", "L=8", "--const", "M=3", "--checkpoint-dir", str(tmp_path)]
    assert _check(runner, *base, "--max-depth", "3").exit_code == 3
    r = _check(runner, *base, "--resume", "--invariant", "InRange")
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "checked invariants ['NotTop', 'InRange'] vs ['InRange'] (--invariant)" in r.stderr


@pytest.mark.parametrize("damage, says", [
    (lambda d: (d / MANIFEST).write_text("{not json"), "cannot read manifest.json"),
    (lambda d: (d / MANIFEST).write_text('{"format": "x"}'), "not a modelcheck checkpoint"),
    (lambda d: (d / MANIFEST).write_text(json.dumps(
        dict(json.loads((d / MANIFEST).read_text()), identity=[], levels=3))),
     "manifest.json lacks or garbles"),
    (lambda d: (d / "level-00002.fps.npy").unlink(), "cannot read level-00002.fps.npy"),
    (lambda d: (d / "level-00001.parents.npy").write_bytes(
        (d / "level-00001.parents.npy").read_bytes()[:-4]), "level-00001.parents.npy"),
])
def test_refuses_a_damaged_checkpoint(runner, tmp_path, damage, says) -> None:
    base = ["--const", "L=8", "--const", "M=3", "--checkpoint-dir", str(tmp_path)]
    assert _check(runner, *base, "--max-depth", "3").exit_code == 3
    damage(tmp_path)
    r = _check(runner, *base, "--resume")
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "is damaged" in r.stderr and says in r.stderr


def test_cli_refusals_and_notes(runner, tmp_path) -> None:
    base = ["--const", "L=6", "--const", "M=2", "--checkpoint-dir", str(tmp_path)]
    fresh = _check(runner, *base, "--resume")
    assert fresh.exit_code == 1 and "no checkpoint in" in fresh.stderr
    again = _check(runner, *base)
    assert again.exit_code == 2 and "already holds a checkpoint" in again.stderr
    alone = _check(runner, "--resume")
    assert alone.exit_code == 2 and "--resume needs --checkpoint-dir" in alone.stderr


#: run folders written by the code before the backends shared one manifest format
#: (commit fe8d9ae: `modelcheck check|spark tests/ladder_spec.py --const L=8 --const M=3
#: --max-depth 3 --checkpoint-dir DIR`, the Spark one with --engine shards)
LEGACY = ROOT / "tests" / "legacy_runs"


def test_a_run_folder_of_the_former_format_resumes_and_the_other_backends_is_refused(
        runner, tmp_path) -> None:
    """A local checkpoint of manifest version 1 resumes: under its --max-depth it gives
    the recorded result, without it the uninterrupted run's, and its next commit is in
    the one format. A Spark run folder is refused with the command that continues it."""
    import shutil

    consts = ["--const", "L=8", "--const", "M=3"]
    ck = tmp_path / "old"
    shutil.copytree(LEGACY / "local", ck)
    assert json.loads((ck / MANIFEST).read_text())["version"] == 1
    for depth in (["--max-depth", "3"], []):
        want = _check(runner, *consts, *depth)
        got = _check(runner, *consts, *depth, "--checkpoint-dir", str(ck), "--resume")
        assert got.exit_code == want.exit_code, got.output
        # (its levels record no actions: they keep their keys, which the memory shows)
        got_r, want_r = comparable(json.loads(got.stdout)), comparable(json.loads(want.stdout))
        got_m, want_m = got_r.pop("memory"), want_r.pop("memory")
        assert got_r == want_r
        assert got_m["visited_bytes"] == want_m["visited_bytes"]
        assert got_m["levels_bytes"] >= want_m["levels_bytes"]
    manifest = json.loads((ck / MANIFEST).read_text())
    assert (manifest["version"], manifest["engine"], manifest["complete"]) == \
        (VERSION, "local", True)
    assert manifest["spec"]["constants"] == {"L": 8, "M": 3}
    spark_dir = tmp_path / "spark"
    shutil.copytree(LEGACY / "spark", spark_dir)
    r = _check(runner, *consts, "--checkpoint-dir", str(spark_dir), "--resume")
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert "written by a sharded run (engine shards" in r.stderr
    assert "modelcheck spark --resume" in r.stderr


def test_max_states_names_its_checkpoint_and_the_resumed_run_finishes(tmp_path) -> None:
    """--max-states with a checkpoint: the run loop's one rule (as on Spark) says where
    the checkpoint is and to raise --max-states; resuming with room gives the
    uninterrupted result."""
    spec = Ladder(L=12, M=4)
    want = explore(spec)
    cap = want.levels[0].frontier + want.levels[0].new + want.levels[1].new
    r = explore(spec, max_states=cap, checkpoint_dir=tmp_path)
    assert (r.status, r.reason, r.depth) == ("incomplete", "max-states", 2)
    assert r.message is not None and r.message.endswith(
        f"The checkpoint in {tmp_path} holds levels 0..2: continue with --resume (and a "
        "larger --max-states).")
    resumed = explore(spec, checkpoint_dir=tmp_path, resume=True)
    assert comparable(resumed) == comparable(want)
