"""Temporal properties with ``--workers N``: the state graph written by the bucket tasks
and read back by the coordinating process gives the one-process check's verdicts and
lassos, field by field (random specs with fairness against one process and the
brute-force fair-cycle oracle of :mod:`tests.livespec`, 1-4 workers, 1-5 buckets, levels
on the workers, in the coordinator or both; the KRaft lifecycle and ZooKeeper liveness
specs with their bug variants); Ctrl-C, the checkpoint refusal and the command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ladder_spec import Ladder

from examples.tla.simple_allocator import SimpleAllocator, SimpleAllocator2
from modelcheck import Result, Spec, check, check_liveness, eventually
from modelcheck.errors import SpecDefinitionError
from modelcheck.liveness import LivenessError, check_liveness_workers
from modelcheck.shards.pool import ParallelExplorer
from specs.kraft_lifecycle_live import (
    KRaftLifecycleLive,
    KRaftLifecycleLiveBugNoRegistrationTimeout,
    KRaftLifecycleLiveBugStuckPublisher,
)
from specs.zk_controller_live import (
    ZkControllerLive,
    ZkControllerLiveBugLossyRequests,
    ZkControllerLiveBugNoStartupSync,
    ZkControllerLiveBugShrinkWithoutLeader,
)
from tests.fairspec import fair_spec
from tests.lassocheck import check_lasso_generic
from tests.livespec import check_lasso, live_spec, oracle_verdicts
from tests.test_fairness import _bind
from tests.test_liveness import _small_enough

ROOT = Path(__file__).resolve().parent.parent
#: the graph's figures that must agree (the others are timings and memory)
GRAPH = ("nodes", "edges", "properties", "formulas", "fairness")


def assert_same(one: Result, many: Result) -> None:
    """``many`` (a run with workers) reports what ``one`` (one process) does."""
    assert many.status == one.status and many.reason == one.reason
    assert (many.distinct_states, many.generated_states, many.depth) == \
        (one.distinct_states, one.generated_states, one.depth)
    assert many.violation == one.violation  # the same lasso: states, actions, loop, why
    assert many.checked == one.checked
    for key in GRAPH:
        assert many.liveness.get(key) == one.liveness.get(key), key
    assert many.memory["workers"] >= 1


# ---------------------------------------------------------------- random specs
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(live_spec(), st.integers(1, 4), st.integers(1, 5), st.sampled_from([0, 0, 3, 10**9]),
       st.sampled_from([3, 1 << 16]))
def test_random_specs_equal_one_process_and_the_oracle(cls: type[Spec], workers: int,
                                                       buckets: int, threshold: int,
                                                       batch: int) -> None:
    """Every level on the workers (0), small ones in the coordinator (3), or every one
    there (10**9: its graph parts are one producer's, numbered by the merged level)."""
    spec = cls()
    one = check_liveness(spec, batch_size=batch)
    many = check_liveness_workers(spec, workers=workers, buckets=buckets,
                                  driver_threshold=threshold, batch_size=batch)
    assert_same(one, many)
    assert many.memory["workers"] == workers and many.memory["partitions"] == buckets
    if not _small_enough(spec):
        return
    want = oracle_verdicts(spec)
    assert {n: v == "holds" for n, v in many.liveness["properties"].items()} == want
    if many.violation is not None:
        check_lasso(spec, many.violation)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(live_spec(), st.integers(2, 3))
def test_each_property_alone_and_by_the_front_door(cls: type[Spec], workers: int) -> None:
    """``check(..., workers=N)`` (the command line's front door) with each temporal
    property selected alone: the one-process result."""
    spec = cls()
    names = [p.name for p in spec.temporal]
    assume(names)
    for name in names:
        one = check(spec, invariants=(name,))
        many = check(spec, invariants=(name,), workers=workers)
        assert_same(one, many)


# ---------------------------------------------------------------- fairness forms
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fair_spec(), st.integers(2, 3))
def test_random_fairness_declarations_as_in_one_process(cls: type[Spec], workers: int
                                                        ) -> None:
    """Every fairness form (groups, patterns, conditions whose action the state
    selects): the tasks evaluate what the one process evaluates, the selectors' state
    predicates among it (the fair-cycle oracle checks the one process in
    tests/test_fairness.py)."""
    try:
        spec = _bind(cls, {})
    except SpecDefinitionError:
        return  # a declaration the checker refuses (tests/test_fairness.py)
    assert_same(check_liveness(spec), check_liveness_workers(spec, workers=workers,
                                                             buckets=3, driver_threshold=0))


@pytest.mark.parametrize("cls", [SimpleAllocator, SimpleAllocator2],
                         ids=["SimpleAllocator", "SimpleAllocator2"])
def test_fairness_selected_by_the_state_gives_the_same_verdicts(cls: type[Spec]) -> None:
    """``\\A c: WF_vars(Return(c, alloc[c]))``: a condition whose action the state selects."""
    spec = cls()
    assert_same(check(spec), check_liveness_workers(spec, workers=2, buckets=2,
                                                    driver_threshold=0))


# ---------------------------------------------------------------- the Kafka liveness specs
SPECS = [KRaftLifecycleLive, KRaftLifecycleLiveBugNoRegistrationTimeout,
         KRaftLifecycleLiveBugStuckPublisher, ZkControllerLive, ZkControllerLiveBugNoStartupSync,
         ZkControllerLiveBugLossyRequests, ZkControllerLiveBugShrinkWithoutLeader]


@pytest.mark.parametrize("cls", SPECS, ids=[c.__name__ for c in SPECS])
def test_liveness_specs_and_bug_variants_give_the_same_lasso(cls: type[Spec]) -> None:
    spec = cls()
    one = check(spec)
    assert one.liveness["properties"]  # temporal properties were checked
    many = check_liveness_workers(spec, workers=2, buckets=3, driver_threshold=0)
    assert_same(one, many)
    if one.violation is not None:
        assert one.violation.kind == "liveness"
        check_lasso_generic(spec, many.violation)


def test_a_large_graph_is_read_memory_mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``SPILL_EDGES`` edges the graph's edge arrays are files in the run directory,
    memory-mapped: the same verdicts and lasso."""
    import modelcheck.liveness as liveness

    spec = KRaftLifecycleLiveBugStuckPublisher()
    one = check(spec)
    monkeypatch.setattr(liveness, "SPILL_EDGES", 1000)
    many = check_liveness_workers(spec, workers=2, buckets=2)
    assert many.liveness["spilled"] and not one.liveness["spilled"]
    assert_same(one, many)


# ---------------------------------------------------------------- interrupts, checkpoints
class LiveLadder(Ladder):
    """The ladder with a temporal property (which holds: ``x`` climbs to ``L``)."""

    fairness = {"Climb": "weak"}

    @eventually
    def Tops(self, s: Any) -> Any:
        return s.x == self.L


def test_ctrl_c_ends_the_run_without_deciding_the_properties() -> None:
    """Ctrl-C (a ``KeyboardInterrupt`` from the progress callback, as the run loop takes
    a second Ctrl-C) mid-run: status incomplete, the properties not checked, as the
    one-process check reports a run that did not finish."""
    def stop_at_level_5(p: Any) -> None:
        if p.depth >= 5:
            raise KeyboardInterrupt

    chosen = ("InRange", "Tops")  # (NotTop fails at the last level)
    res = check_liveness_workers(LiveLadder(L=40, M=10), workers=2, invariants=chosen,
                                 progress=stop_at_level_5, driver_threshold=0)
    assert (res.status, res.reason) == ("incomplete", "interrupted")
    assert res.liveness["properties"] == {"Tops": "not checked"}
    assert 5 <= res.depth < 40
    done = check_liveness_workers(LiveLadder(L=40, M=10), workers=2, invariants=chosen)
    assert done.status == "ok" and done.liveness["properties"] == {"Tops": "holds"}
    assert_same(check(LiveLadder(L=40, M=10), invariants=chosen), done)


def test_a_safety_violation_is_reported_first_as_in_one_process() -> None:
    """The invariant NotTop fails at the ladder's last level: that violation, and the
    temporal property not checked, with any number of workers."""
    spec = LiveLadder(L=12, M=4)
    one = check(spec)
    assert one.violation is not None and one.violation.kind == "invariant"
    assert one.liveness["properties"] == {"Tops": "not checked"}
    for workers, buckets in ((2, 3), (3, 1)):
        assert_same(one, check_liveness_workers(spec, workers=workers, buckets=buckets,
                                                driver_threshold=0))
        assert check_liveness_workers(spec, workers=workers).liveness == one.liveness


def test_checkpoints_are_refused_as_in_one_process(tmp_path: Path) -> None:
    for workers in (1, 2):
        with pytest.raises(LivenessError, match="--checkpoint-dir"):
            check(LiveLadder(), workers=workers, checkpoint_dir=str(tmp_path / "ck"))


@pytest.mark.parametrize("spilled", [False, True])
def test_the_run_directory_is_removed_while_deciding(tmp_path: Path, spilled: bool,
                                                     monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    """Once the state graph is read into memory, the temporary run directory is removed
    while the properties are decided (gone when the decision returns); the lasso, which
    the kernel replays, is the one process's. With the edges spilled into the run
    directory it is kept until the decision is over; either way nothing is left."""
    import tempfile

    import modelcheck.liveness as liveness

    spec = KRaftLifecycleLiveBugStuckPublisher()
    one = check_liveness(spec)
    assert one.violation is not None  # a lasso to replay
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    if spilled:
        monkeypatch.setattr(liveness, "SPILL_EDGES", 10)
    left: list[list[Path]] = []
    decide = liveness.ShardedLiveness.decide

    def deciding(self: Any, res: Result) -> Result:
        out = decide(self, res)
        left.append(list(tmp_path.iterdir()))
        return out

    monkeypatch.setattr(liveness.ShardedLiveness, "decide", deciding)
    many = check_liveness_workers(spec, workers=2, driver_threshold=0, batch_size=500)
    assert_same(one, many)
    assert many.liveness["spilled"] is spilled
    (at_decision,) = left
    assert (at_decision != []) is spilled
    assert list(tmp_path.iterdir()) == []


def test_without_temporal_properties_it_is_the_parallel_explorer() -> None:
    spec = LiveLadder(L=10, M=5)
    plain = ParallelExplorer(spec, workers=2, invariants=("InRange",)).run()
    res = check_liveness_workers(spec, workers=2, invariants=("InRange",))
    assert res.liveness is None or not res.liveness.get("properties")
    assert (res.status, res.distinct_states) == (plain.status, plain.distinct_states)


# ---------------------------------------------------------------- command line
def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "modelcheck", "check", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def _comparable(d: dict[str, Any]) -> dict[str, Any]:
    d = {k: v for k, v in d.items() if k not in ("seconds", "states_per_second", "memory",
                                                  "backend")}
    d["levels"] = [{k: v for k, v in lv.items() if k != "seconds"} for lv in d["levels"]]
    d["liveness"] = {k: v for k, v in d["liveness"].items() if k in GRAPH}
    return d


@pytest.mark.parametrize("target", ["examples/flip.py:FlipWeakSet",
                                    "examples/flip.py:FlipStrongSet",
                                    "specs/kraft_lifecycle_live.py:"
                                    "KRaftLifecycleLiveBugStuckPublisher"])
def test_cli_workers_gives_the_one_process_lasso(target: str) -> None:
    one = _run(target, "--format", "json", "-q")
    many = _run(target, "--format", "json", "-q", "--workers", "2")
    assert many.returncode == one.returncode, many.stderr
    assert "Traceback" not in many.stderr
    assert _comparable(json.loads(many.stdout)) == _comparable(json.loads(one.stdout))
    text = _run(target, "-q", "--workers", "2")
    assert _untimed(text.stdout) == _untimed(_run(target, "-q").stdout)


def _untimed(text: str) -> str:
    """The text report without its timings (``0.54 s (6 distinct/s)``)."""
    return re.sub(r"\d[\d.,]* s \([^)]*\)", "T", text)


# ---------------------------------------------------------------- Spark's shards engine
def _spark_liveness(spec: Spec, session: Any, **kw: Any) -> Result:
    from modelcheck.config import CheckConfig
    from modelcheck.liveness import ShardedLiveness
    from spark_explore.driver import SparkExplorer

    live = ShardedLiveness(spec, CheckConfig())
    run = SparkExplorer(spec, live.safety, spark=session, temporal=live.names, **kw)
    live.attach(run)
    return live.finish(run.run())


@pytest.fixture(scope="module")
def spark() -> Any:
    from spark_explore.session import get_session

    session, created = get_session("local[2]")
    yield session
    if created:
        session.stop()


SPARK_SPECS = [KRaftLifecycleLiveBugStuckPublisher, ZkControllerLiveBugNoStartupSync]


@pytest.mark.spark
@pytest.mark.parametrize("cls", SPARK_SPECS, ids=[c.__name__ for c in SPARK_SPECS])
def test_spark_shards_engine_gives_the_same_lasso(cls: type[Spec], spark: Any) -> None:
    spec = cls()
    one = check(spec)
    many = _spark_liveness(spec, spark, engine="shards", partitions=3, driver_threshold=0)
    assert many.backend == "spark"
    many.memory["workers"] = 1  # (assert_same's check of a worker count)
    assert_same(one, many)


@pytest.mark.spark
def test_spark_rdd_engine_refuses_temporal_properties(spark: Any) -> None:
    with pytest.raises(LivenessError, match="--engine shards"):
        _spark_liveness(KRaftLifecycleLiveBugStuckPublisher(), spark, engine="rdd")


@pytest.mark.spark
def test_cli_spark_gives_the_one_process_lasso() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    target = "examples/flip.py:FlipWeakSet"
    spark = subprocess.run([sys.executable, "-m", "modelcheck", "spark", target, "--master",
                            "local[2]", "--format", "json", "-q"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=600)
    one = _run(target, "--format", "json", "-q")
    assert spark.returncode == one.returncode == 1, spark.stderr
    got, want = _comparable(json.loads(spark.stdout)), _comparable(json.loads(one.stdout))
    assert got == want
