"""``modelcheck spark --simulate`` against two oracles.

* ``modelcheck simulate`` itself: with the same seed and ``runs``, the Spark run reports
  the same violation, walk and shrunk trace for any task count, and a run without
  violation has the same counts;
* the documented round schedule, run here walk set by walk set with the engine's own
  :func:`~modelcheck.simulate.run_walks` and summed in this file: a run that stops at a
  violation has exactly its counts (the driver's schedule, merge and distinct count
  are not used).

One local[2] SparkSession serves the module; the usage errors need none.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bruteforce import assert_replays
from click.testing import CliRunner

from examples.flip import FlipStrongSet, FlipWeakSet
from modelcheck.cli import cli
from modelcheck.config import CheckConfig
from modelcheck.kernel import Kernel
from modelcheck.result import Result
from modelcheck.simulate import SimConfig, Simulator, WalkSet, run_walks, simulate
from modelcheck.spec import Spec
from modelcheck.store import key_ints
from spark_explore.cli import spark as spark_command
from spark_explore.simulate import SparkSimulator
from specs.kraft_broker import KRaftBroker
from specs.kraft_lifecycle import KRaftLifecycleBugNoOffsetCheck, KRaftLifecycleBugStaleEpoch
from specs.kraft_lifecycle_live import (
    KRaftLifecycleLive,
    KRaftLifecycleLiveBugNoRegistrationTimeout,
)

HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and (
    shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME")))


def needs_spark(f: Any) -> Any:
    return pytest.mark.spark(pytest.mark.skipif(not HAVE_SPARK,
                                                reason="needs pyspark and Java")(f))


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from spark_explore.session import get_session

    session, created = get_session("local[2]")
    yield session
    if created:
        session.stop()


def on_spark(spark: Any, spec: Spec, tasks: int, config: CheckConfig | None = None,
             **sim: Any) -> Result:
    sim.setdefault("time_limit", None)
    return SparkSimulator(spec, config, sim=SimConfig(**sim), tasks=tasks, spark=spark).run()


def stable(r: Result) -> dict[str, Any]:
    """A result's JSON without what depends on timing."""
    d = r.to_json()
    for key in ("seconds", "states_per_second", "levels", "memory"):
        d.pop(key, None)
    sim = dict(d["simulation"])
    for key in ("walks_per_second", "steps_per_second"):
        sim.pop(key)
    if sim.get("shrinking"):
        sim["shrinking"] = {k: v for k, v in sim["shrinking"].items() if k != "seconds"}
    d["simulation"] = sim
    return d


def counts(r: Result) -> dict[str, Any]:
    sim = r.simulation
    assert sim is not None
    return {"walks": sim["walks"], "steps": sim["steps"], "ends": sim["walk_ends"],
            "generated": r.generated_states, "distinct": r.distinct_states, "depth": r.depth,
            "fired": {c.name: c.fired for c in r.coverage}}


# ---------------------------------------------------------------------- the schedule
def schedule_oracle(spec: Spec, seed: int, runs: int, tasks: int, width: int
                    ) -> dict[str, Any]:
    """The documented rounds, walk set by walk set, summed here."""
    sim = Simulator(spec, sim=SimConfig(seed=seed, runs=runs, time_limit=None,
                                        walks_per_batch=width))
    names = [a.name for a in sim.kernel.actions]
    total: dict[str, Any] = {"walks": 0, "steps": 0, "generated": 0, "depth": 0,
                             "ends": {}, "fired": dict.fromkeys(names, 0)}
    states: set[int] = set()
    found = None
    a, r = 0, 0
    while a < runs and found is None:
        b = min(a + tasks * width * min(2 ** r, 4), runs)
        for t in range(tasks):
            mine = range(a + t, b, tasks)
            tally = run_walks(sim.kernel, WalkSet(seed, a + t, tasks, len(mine)),
                              weights=sim.weights, depth=sim.sim.depth, walks_per_batch=width,
                              record_states=True)
            total["walks"] += tally.walks
            total["steps"] += tally.steps
            total["generated"] += tally.generated
            total["depth"] = max(total["depth"], tally.longest)
            for why, n in tally.ends.items():
                total["ends"][why] = total["ends"].get(why, 0) + n
            for name, n in zip(names, tally.fired):
                total["fired"][name] += int(n)
            states |= set(key_ints(tally.states))
            if tally.found is not None and (found is None or tally.found.walk < found.walk):
                found = tally.found
        a, r = b, r + 1
    total["distinct"] = len(states)
    total["rounds"] = r
    total["violation_walk"] = None if found is None else found.walk
    return total


# ---------------------------------------------------------------------- against local
@needs_spark
@pytest.mark.parametrize("tasks", [1, 3])
def test_no_violation_runs_the_local_walks(spark: Any, tasks: int) -> None:
    spec = KRaftBroker()
    local = simulate(spec, seed=5, runs=300, walks_per_batch=32)
    remote = on_spark(spark, spec, tasks, seed=5, runs=300, walks_per_batch=32)
    assert remote.status == local.status == "ok"
    assert remote.memory["spark_jobs"] > 1
    assert counts(remote) == counts(local)
    assert [(c.name, c.new_states) for c in remote.coverage] == \
        [(c.name, c.new_states) for c in local.coverage]
    assert remote.simulation["tasks"] == tasks
    # the new states per action add up to the states not initial
    init = len(Kernel(spec, symmetry=False).initial_states())
    assert sum(c.new_states for c in remote.coverage) <= remote.distinct_states - 1
    assert sum(c.new_states for c in remote.coverage) >= remote.distinct_states - init


@needs_spark
def test_same_seed_same_json_and_the_local_violation(spark: Any) -> None:
    """Same seed and task count: the same JSON; any task count: the violation, walk and
    shrunk trace of ``modelcheck simulate``; the counts are the documented schedule's."""
    spec = KRaftLifecycleBugStaleEpoch()
    opts = {"seed": 11, "runs": 1500, "walks_per_batch": 64}
    a = on_spark(spark, spec, 3, **opts)
    b = on_spark(spark, spec, 3, **opts)
    assert stable(a) == stable(b)
    assert a.status == "violation" and a.exit_code == 1
    local = simulate(spec, **opts)
    two = on_spark(spark, spec, 2, **opts)
    for r in (a, two):
        assert r.violation == local.violation
        for key in ("violation_walk", "found_length", "shrunk_length", "shrinking"):
            got, want = r.simulation[key], local.simulation[key]
            if key == "shrinking":
                got, want = ({k: v for k, v in d.items() if k != "seconds"}
                             for d in (got, want))
            assert got == want, key
    oracle = schedule_oracle(spec, 11, 1500, 3, 64)
    assert oracle["violation_walk"] == a.simulation["violation_walk"]
    # the violating round is counted again up to the violating walk: one more job
    assert oracle["rounds"] <= a.memory["spark_jobs"] <= oracle["rounds"] + 1
    assert a.memory["spark_jobs"] > 1
    # every count is the local run's (walks 0 .. v), whatever the task count
    for r in (a, two):
        assert counts(r) == counts(local)
        assert [(c.name, c.new_states) for c in r.coverage] == \
            [(c.name, c.new_states) for c in local.coverage]
    assert a.simulation["walks"] == a.simulation["violation_walk"] + 1
    # more walks than the violating one's round would hold: the run stopped early
    assert a.simulation["walks"] < 1500 and a.simulation["stopped_by"] == "violation"


def as_local(r: Result) -> dict[str, Any]:
    """:func:`stable` less what only names the backend (``backend``, ``tasks``)."""
    d = stable(r)
    d.pop("backend")
    d["simulation"].pop("tasks", None)
    return d


@needs_spark
@pytest.mark.parametrize("spec,invariants,tasks,runs", [
    (FlipWeakSet(), None, 2, 40),                       # SetWeak and SetStrong violated
    (FlipStrongSet(), None, 3, 40),                     # SetWeak violated, SetStrong not
    (FlipStrongSet(), ("SetStrong",), 2, 40),           # holds on every walk
    (KRaftLifecycleLiveBugNoRegistrationTimeout(), None, 3, 200),
    (KRaftLifecycleLive(), None, 2, 60),                # holds on every walk
], ids=["flip-weak", "flip-strong", "flip-strong-holds", "lifecycle-live-bug",
        "lifecycle-live"])
def test_temporal_properties_checked_as_local(spark: Any, spec: Spec,
                                              invariants: tuple[str, ...] | None,
                                              tasks: int, runs: int) -> None:
    """The walks' temporal properties: the verdicts, the lasso, its walk and every count
    of ``modelcheck simulate`` with the same seed (one process), the JSON equal but for
    the backend's name."""
    config = CheckConfig(invariants=invariants)
    opts = {"seed": 3, "runs": runs, "walks_per_batch": 4}
    local = Simulator(spec, config, SimConfig(time_limit=None, **opts)).run()
    remote = on_spark(spark, spec, tasks, config, **opts)
    assert local.liveness is not None and not local.simulation["not_checked"]
    assert as_local(remote) == as_local(local)
    assert remote.simulation["warnings"] == []
    violated = {p for p, v in remote.liveness["properties"].items() if v == "violated"}
    if remote.violation is None:
        assert remote.status == "ok" and not violated
    else:
        assert remote.violation.kind == "liveness" and remote.violation.loop is not None
        assert remote.violation.property in violated


@needs_spark
def test_time_bounded_run(spark: Any) -> None:
    r = on_spark(spark, KRaftBroker(), 2, seed=1, time_limit=1.0, walks_per_batch=16)
    assert r.status == "ok" and r.simulation["stopped_by"] == "time"
    assert r.simulation["walks"] > 0 and r.distinct_states > 0


# ---------------------------------------------------------------------- the command
def _assert_violates(spec: Spec, trace: Any, prop: str, kind: str) -> None:
    """The trace is a behaviour of ``spec`` (scalar evaluator) ending in ``prop``."""
    assert_replays(spec, trace)
    k = Kernel(spec, symmetry=False)
    states = [spec.layout.cells_from_values(s.state) for s in trace]
    if kind == "invariant":
        assert prop in {p.name for p in k.check_invariants(states[-1])}
    else:
        assert prop in {p.name for p in k.check_properties(states[-2], states[-1])}


@needs_spark
def test_lifecycle_bug_found_and_its_trace_replays(spark: Any, tmp_path: Path) -> None:
    from modelcheck import load_trace

    target = "specs/kraft_lifecycle.py:KRaftLifecycleBugNoOffsetCheck"
    out = tmp_path / "cex.itf.json"
    r = CliRunner().invoke(spark_command, [
        target, "--simulate", "--seed", "3", "--runs", "3000", "--tasks", "2",
        "--master", "local[2]", "--trace-out", str(out), "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    d = json.loads(r.stdout)
    assert d["status"] == "violation" and d["backend"] == "spark-simulate"
    v = d["violation"]
    local = simulate(KRaftLifecycleBugNoOffsetCheck(), seed=3, runs=3000)
    assert local.violation is not None
    assert (v["property"], len(v["trace"])) == (local.violation.property,
                                                len(local.violation.trace))
    assert d["simulation"]["violation_walk"] == local.simulation["violation_walk"]
    replay = CliRunner().invoke(cli, ["trace", "replay", target, str(out)])
    assert replay.exit_code == 0, replay.output
    assert "is a behaviour of KRaftLifecycleBugNoOffsetCheck" in replay.output
    assert f"violates {'invariant' if v['kind'] == 'invariant' else 'action property'} " \
           f"{v['property']}" in replay.output
    _assert_violates(KRaftLifecycleBugNoOffsetCheck(), load_trace(str(out)).steps,
                     v["property"], v["kind"])


@needs_spark
def test_flip_command_same_verdict_as_local(spark: Any) -> None:
    """``simulate --backend spark`` on examples/flip.py: the local command's temporal
    verdicts and lasso, and no warning that they were not checked."""
    args = ["simulate", "examples/flip.py:FlipStrongSet", "--seed", "5", "--runs", "30",
            "--format", "json", "-q"]
    local = CliRunner().invoke(cli, args)
    remote = CliRunner().invoke(cli, [*args, "--backend", "spark", "--master", "local[2]"])
    assert local.exit_code == remote.exit_code == 1, remote.output
    assert "NOT checked" not in remote.output
    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert b["backend"] == "spark-simulate"
    for key in ("status", "violation", "liveness", "checked", "distinct_states"):
        assert b[key] == a[key], key
    assert b["liveness"]["properties"]["SetWeak"] == "violated"
    for key in ("violation_walk", "walks", "steps", "walk_ends", "not_checked", "warnings"):
        assert b["simulation"][key] == a["simulation"][key], key


@needs_spark
def test_ctrl_c_cancels_the_running_round(spark: Any) -> None:
    """SIGINT while a round's job runs: the job is cancelled, the finished rounds are
    reported (status incomplete, exit code 3)."""
    seen: list[int] = []

    def interrupt_next_job() -> None:
        tracker = spark.sparkContext.statusTracker()
        deadline = time.monotonic() + 300
        while not tracker.getActiveJobsIds() and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    def progress(p: Any) -> None:
        seen.append(p.walks)
        if len(seen) == 1:
            threading.Thread(target=interrupt_next_job, daemon=True).start()

    r = SparkSimulator(KRaftBroker(), sim=SimConfig(seed=2, time_limit=600,
                                                    walks_per_batch=16),
                       tasks=2, spark=spark, progress=progress).run()
    assert (r.status, r.reason, r.exit_code) == ("incomplete", "interrupted", 3)
    assert r.simulation["stopped_by"] == "interrupted"
    # the finished rounds only (each reported when it finished), not the cancelled one
    assert r.simulation["walks"] == seen[-1] >= 32
    assert r.memory["spark_jobs"] == len(seen)


@pytest.mark.parametrize("args,needle", [
    (["--simulate", "--weights", "Nope=2"], "no action Nope"),
    (["--simulate", "--tasks", "0"], "--tasks"),
    (["--tasks", "2"], "--tasks: an option of random simulation; add --simulate"),
    (["--seed", "3", "--runs", "5"], "--runs, --seed: options of random simulation"),
    (["--simulate", "--partitions", "2"], "does not take --partitions"),
    (["--simulate", "--checkpoint-dir", "{tmp}/ck"], "does not take --checkpoint-dir"),
    (["--simulate", "--depth", "3", "--max-depth", "4"], "same bound"),
])
def test_bad_input(tmp_path: Path, args: list[str], needle: str) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = CliRunner().invoke(spark_command, ["specs/kraft_broker.py", "--master", "local[1]",
                                           "-q", *args])
    assert r.exit_code == 2, r.output
    assert needle in r.output
