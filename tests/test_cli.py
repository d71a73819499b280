"""The command line: JSON contract, exit codes, inspect, progress, interruption."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from modelcheck import Explorer
from modelcheck.cli import cli
from specs.kraft_broker import KRaftBroker

KRAFT = "specs/kraft_broker.py"
L1 = ["--const", "N=2", "--const", "P=1", "--const", "MaxLog=4", "--const", "MaxRestarts=1"]


def test_check_json_ok(runner) -> None:
    r = runner.invoke(cli, ["check", KRAFT, *L1, "--format", "json", "-q"])
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["status"] == "ok"
    assert (d["distinct_states"], d["depth"], d["generated_states"]) == (5353, 18, 15802)
    assert d["violation"] is None
    assert {c["action"] for c in d["coverage"]} >= {"Start", "Register", "Unfence"}
    assert d["constants"] == {"N": 2, "P": 1, "MaxLog": 4, "MaxRestarts": 1}


def test_check_json_violation(runner) -> None:
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugNoCatchUpCheck", *L1,
                            "--format", "json", "-q"])
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert d["status"] == "violation"
    v = d["violation"]
    assert v["property"] == "CaughtUpBeforeUnfence" and v["kind"] == "invariant"
    assert len(v["trace"]) == 5
    assert v["trace"][0]["action"] is None
    assert [s["action"] for s in v["trace"][1:]] == ["Start", "Register", "CatchUp", "Unfence"]
    assert v["trace"][1]["params"] == {"b": 1} or v["trace"][1]["params"] == {"b": 2}
    assert v["trace"][4]["state"]["fenced"] in ({"1": False, "2": True}, {"1": True, "2": False})


def test_check_text_violation_shows_only_changes(runner) -> None:
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", "-q"])
    assert r.exit_code == 1
    assert "Action property EpochMonotonic is violated" in r.output
    assert "UniqueEpochs" in r.output
    assert "State 5: Register(b=" in r.output
    assert "regEpoch[" in r.output and " -> " in r.output
    # the initial state is printed in full, later states only with what changed
    assert r.output.count("offset[1] = 0") == 1


def test_max_depth_gives_incomplete(runner) -> None:
    r = runner.invoke(cli, ["check", KRAFT, "--max-depth", "3", "--format", "json", "-q"])
    assert r.exit_code == 3
    d = json.loads(r.stdout)
    assert d["status"] == "incomplete" and d["depth"] == 3
    assert "max-depth" in d["reason"]


def test_no_deadlock_flag(runner) -> None:
    r = runner.invoke(cli, ["check", "examples/counter.py", "--deadlock", "-q"])
    assert r.exit_code == 1 and "Deadlock reached" in r.output
    r = runner.invoke(cli, ["check", "examples/counter.py", "--no-deadlock", "-q"])
    assert r.exit_code == 0


def test_invariant_selection_including_library(runner) -> None:
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", "--invariant",
                            "CaughtUpBeforeUnfence", "--format", "json", "-q"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["checked"]["invariants"] == ["CaughtUpBeforeUnfence"]
    assert d["checked"]["properties"] == []
    r = runner.invoke(cli, ["check", f"{KRAFT}:KRaftBrokerBugEpochReuse", "--invariant",
                            "UniqueEpochs", "--format", "json", "-q"])
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert d["violation"]["property"] == "UniqueEpochs"
    # the same library predicate, by name, on a spec that does not declare it
    from modelcheck import explore
    from specs.kraft_broker import KRaftBrokerBugEpochReuse

    class Bare(KRaftBrokerBugEpochReuse):
        pass

    Bare._predicates = {}
    assert explore(Bare(), invariants=["EpochMonotonic"]).violation.property == "EpochMonotonic"


def test_inspect(runner) -> None:
    r = runner.invoke(cli, ["inspect", KRAFT, "--const", "N=3", "--format", "json"])
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["spec"] == "KRaftBroker"
    assert {c["name"]: c["value"] for c in d["constants"]}["N"] == 3
    names = [v["name"] for v in d["variables"]]
    assert names[:3] == ["logEnd", "regEpoch", "regInc"]
    regepoch = d["variables"][1]
    assert regepoch["cells"] == 3 and regepoch["bits"] == 9
    move = next(a for a in d["actions"] if a["name"] == "MoveLeader")
    assert move["instances"] == 4  # 1 partition x (0..3)
    assert {p["name"] for p in d["properties"]} == {"EpochMonotonic"}
    r = runner.invoke(cli, ["inspect", KRAFT])
    assert "Deadlock check: off" in r.output and "MoveLeader(p \\in Partitions" in r.output


def test_progress_lines_and_summary_on_stderr(runner) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "modelcheck", "check", KRAFT, *L1],
        capture_output=True, text=True, check=False,
    )
    assert r.returncode == 0
    assert "Checking KRaftBroker(N=2, P=1, MaxLog=4, MaxRestarts=1)" in r.stderr
    assert "5,353 distinct states" in r.stdout


def test_interrupt_leaves_a_partial_result() -> None:
    calls = []

    def interrupt(p) -> None:
        calls.append(p)
        if p.depth >= 5:
            raise KeyboardInterrupt

    r = Explorer(KRaftBroker(), progress=interrupt, progress_interval=0.0).run()
    assert r.status == "incomplete" and r.reason == "interrupted"
    assert r.exit_code == 3
    assert 0 < r.distinct_states < 5353
    assert r.depth >= 4
    assert r.distinct_states == 1 + sum(lv.new for lv in r.levels)


@pytest.mark.parametrize("seed", ["0", "1", "12345"])
def test_same_result_for_every_hash_seed(seed: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    out = subprocess.run(
        [sys.executable, "-m", "modelcheck", "check", f"{KRAFT}:KRaftBrokerBugGrantWithLeaders",
         "--const", "MaxLog=5", "--format", "json", "-q"],
        capture_output=True, text=True, env=env, check=False,
    )
    d = json.loads(out.stdout)
    for k in ("seconds", "states_per_second", "levels", "memory"):
        d.pop(k)
    ref = _reference_run()
    assert d == ref


_REF: dict = {}


def _reference_run() -> dict:
    if not _REF:
        out = subprocess.run(
            [sys.executable, "-m", "modelcheck", "check",
             f"{KRAFT}:KRaftBrokerBugGrantWithLeaders", "--const", "MaxLog=5", "--format",
             "json", "-q"],
            capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="987"),
            check=False,
        )
        d = json.loads(out.stdout)
        for k in ("seconds", "states_per_second", "levels", "memory"):
            d.pop(k)
        _REF.update(d)
    return _REF


def test_python_dash_m_and_help(runner) -> None:
    r = runner.invoke(cli, ["check", "--help"])
    assert "Exit codes" in r.output and "3  incomplete" in r.output


def test_spill_dir_gives_the_same_result_and_cleans_up(runner, tmp_path) -> None:
    args = ["check", f"{KRAFT}:KRaftBrokerBugGrantWithLeaders", "--const", "MaxLog=5",
            "--format", "json", "-q"]
    plain = json.loads(runner.invoke(cli, args).stdout)
    spilled = json.loads(runner.invoke(cli, [*args, "--spill-dir", str(tmp_path)]).stdout)
    assert spilled["memory"]["levels_spilled"] == 1 and spilled["memory"]["levels_bytes"] == 0
    for d in (plain, spilled):
        for k in ("seconds", "states_per_second", "levels", "memory"):
            d.pop(k)
    assert plain == spilled
    assert list(tmp_path.iterdir()) == []


def test_no_symmetry_flag(runner) -> None:
    base = ["check", "examples/two_phase_commit.py", "--format", "json", "-q"]
    reduced = json.loads(runner.invoke(cli, base).stdout)
    full = json.loads(runner.invoke(cli, [*base, "--no-symmetry"]).stdout)
    assert (reduced["distinct_states"], reduced["symmetry"]) == (80, ["RMs_"])
    assert (full["distinct_states"], full["symmetry"]) == (288, [])


def test_progress_reports_every_finished_level_as_the_result_counts_it() -> None:
    """One progress type for every backend: an end-of-level report carries the level's
    counts as the result records them, and the one printer shows them."""
    from modelcheck.run.progress import progress_line

    reports: list = []
    r = Explorer(KRaftBroker(), progress=reports.append, progress_interval=0.0).run()
    finished = [p for p in reports if p.finished is not None]
    assert [p.finished for p in finished] == r.levels[:len(finished)]
    assert len(finished) >= len(r.levels) - 1
    assert all(p.level == p.depth - 1 and p.distinct <= r.distinct_states for p in finished)
    last = finished[-1]
    assert f" level {last.level:>3} expanded {last.finished.frontier:,} " in progress_line(last)
