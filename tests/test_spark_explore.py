"""The Spark backend gives the local explorer's answer, field by field.

One local[2] SparkSession is shared by the whole module (a session costs 10-20 s).
Specs that executors must import are written to files (generated source), so the
executors never import this test module.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelcheck.errors import SpecEvaluationError, UsageError
from modelcheck.explorer import Explorer
from modelcheck.loader import load_spec_class
from modelcheck.result import Result
from modelcheck.spec import Spec

HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and (
    shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME")))

pytestmark = [pytest.mark.spark,
              pytest.mark.skipif(not HAVE_SPARK, reason="needs pyspark and Java")]

ROOT = Path(__file__).resolve().parent.parent
KRAFT = "specs/kraft_broker.py"
L1 = {"N": 2, "P": 1, "MaxLog": 4, "MaxRestarts": 1}
L3 = {"N": 2, "P": 1, "MaxLog": 6, "MaxRestarts": 2}
COMPARED = ("status", "distinct_states", "generated_states", "depth", "coverage",
            "violation", "fingerprint", "collision_probability", "state_bits", "checked",
            "reason", "symmetry", "view")


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def _levels_on_executors(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every level a Spark job (these models are small enough for the driver), in this
    process and in the CLI runs it starts; tests of the driver threshold pass their own."""
    monkeypatch.setenv("MODELCHECK_SPARK_DRIVER_THRESHOLD", "0")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from spark_explore.session import get_session

    session, created = get_session("local[2]")
    yield session
    if created:
        session.stop()


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-specs")


def write_spec(directory: Path, source: str, cls: str) -> type[Spec]:
    """Write generated spec source to a file named by its hash and load class ``cls``."""
    source = textwrap.dedent(source)
    h = hashlib.sha1(source.encode()).hexdigest()[:12]
    path = directory / f"gen_{h}.py"
    if not path.exists():
        path.write_text(source)
    return load_spec_class(f"{path}:{cls}")


def kraft(cls: str = "KRaftBroker", **consts: int) -> Spec:
    return load_spec_class(f"{KRAFT}:{cls}")(**consts)


def run_spark(spark: Any, spec: Spec, **kw: Any) -> Result:
    from spark_explore import SparkExplorer

    return SparkExplorer(spec, spark=spark, **kw).run()


def levels_of(r: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    return [(lv["depth"], lv["frontier"], lv["new"], lv["generated"]) for lv in r["levels"]]


def assert_same(local: Result, remote: Result) -> None:
    a, b = local.to_json(), remote.to_json()
    assert b["backend"] == "spark"
    for key in COMPARED:
        assert b[key] == a[key], f"{key}: spark {b[key]!r} != local {a[key]!r}"
    assert levels_of(b) == levels_of(a)


def compare(spark: Any, spec: Spec, spark_kw: dict[str, Any] | None = None,
            **kw: Any) -> Result:
    """Run ``spec`` locally and on Spark with the same options ``kw``; compare."""
    local = Explorer(spec, **kw).run()
    remote = run_spark(spark, spec, **kw, **(spark_kw or {}))
    assert_same(local, remote)
    return remote


def compare_wide(spark: Any, spec: Spec, spark_kw: dict[str, Any] | None = None,
                 **kw: Any) -> Result:
    """:func:`compare` for states of several words, which Spark keys as the local
    explorer does (two ``uint64`` columns: exact up to two words, 128-bit hashes of
    wider states): the same result field by field, the fingerprint kind and the
    collision figure among them."""
    r = compare(spark, spec, spark_kw, **kw)
    assert r.fingerprint == ("exact" if spec.layout.n_words <= 2 else "hash128")
    return r


# ---------------------------------------------------------------------- KRaft
def test_sessions_started_here_reach_python_workers_by_unix_socket(spark: Any) -> None:
    """The session the backend starts has its executors talk to their Python workers
    over Unix domain sockets (a job's round trip over local TCP cost ~50 ms more), and
    Python tasks and accumulators work so."""
    sc = spark.sparkContext
    assert sc.getConf().get("spark.python.unix.domain.socket.enabled") == "true"
    acc = sc.accumulator(0)

    def count(x: int) -> int:
        acc.add(1)
        return x * x

    assert sc.parallelize(range(10), 2).map(count).collect() == [x * x for x in range(10)]
    assert acc.value == 10


def test_kraft_l1(spark: Any) -> None:
    r = compare(spark, kraft(**L1))
    assert (r.status, r.distinct_states, r.generated_states, r.depth) == ("ok", 5353, 15802, 18)


def test_kraft_l3(spark: Any) -> None:
    r = compare(spark, kraft(**L3))
    assert (r.status, r.distinct_states, r.generated_states, r.depth) == (
        "ok", 552953, 1812322, 30)


@pytest.mark.parametrize("engine", ["shards", "rdd"])
@pytest.mark.parametrize("threshold", [0, 2_000, 10**9])
def test_small_levels_on_the_driver(spark: Any, threshold: int, engine: str) -> None:
    """Levels of at most ``threshold`` candidates run in the driver process: the same
    result field by field whether none, some or all levels do (on the rdd engine, the
    first levels up to the first level too large, which hands the visited set to Spark)."""
    r = compare(spark, kraft(**L3), {"driver_threshold": threshold, "partitions": 3,
                                     "engine": engine})
    jobs, on_driver = r.memory["spark_jobs"], r.memory["driver_levels"]
    assert jobs + on_driver in (r.depth + 1, r.depth + 2)  # + the job finding no new state
    cpu = r.memory["spark_task_cpu_ms"], r.memory["driver_level_cpu_ms"]
    if threshold == 0:
        assert on_driver == 0 and cpu[0] > 0 and cpu[1] == 0
    elif threshold == 2_000:
        assert jobs > 0 and on_driver > 0 and min(cpu) > 0
    else:
        assert jobs == 0 and cpu[0] == 0 and cpu[1] > 0


@pytest.mark.parametrize("engine", ["shards", "rdd"])
def test_driver_levels_find_the_same_violation(spark: Any, engine: str) -> None:
    spec = kraft("KRaftBrokerBugGrantWithLeaders", **{**L1, "MaxLog": 5})
    ex = compare(spark, spec, {"driver_threshold": 0, "engine": engine})
    dr = compare(spark, spec, {"driver_threshold": 10**9, "engine": engine})
    assert ex.violation is not None and dr.memory["spark_jobs"] == 0
    assert dr.violation == ex.violation


@pytest.mark.parametrize(("cls", "consts", "prop", "length"), [
    ("KRaftBrokerBugNoCatchUpCheck", L1, "CaughtUpBeforeUnfence", 5),
    ("KRaftBrokerBugEpochReuse", L1, None, 5),
    ("KRaftBrokerBugGrantWithLeaders", {**L1, "MaxLog": 5}, "ShutdownLeadsNothing", 10),
])
def test_kraft_bug_variants(spark: Any, cls: str, consts: dict[str, int], prop: str | None,
                            length: int) -> None:
    r = compare(spark, kraft(cls, **consts))
    assert r.status == "violation" and r.violation is not None
    assert len(r.violation.trace) == length
    if prop is not None:
        assert r.violation.property == prop


@pytest.mark.parametrize(("cls", "symmetry"), [
    ("KRaftLifecycleBugNoOffsetCheck", True),
    ("KRaftLifecycleBugStaleEpoch", True),
    ("KRaftLifecycleBugNoOffsetCheck", False),
])
def test_symmetric_spec_bug_variants(spark: Any, cls: str, symmetry: bool) -> None:
    """The lifecycle spec declares symmetric brokers: canonical fingerprints, real traces."""
    spec = load_spec_class(f"specs/kraft_lifecycle.py:{cls}")()
    r = compare(spark, spec, symmetry=symmetry)
    assert r.status == "violation"
    assert r.symmetry == (["Brokers"] if symmetry else [])


@pytest.mark.parametrize("buckets", [1, 3, 7])
def test_shards_max_depth_and_bucket_counts(spark: Any, buckets: int) -> None:
    """Any number of buckets gives the same answer; --max-depth stops at that level."""
    spec = kraft(**L1)
    assert_same(Explorer(spec, max_depth=7).run(),
                run_spark(spark, spec, max_depth=7, partitions=buckets))
    assert_same(Explorer(spec, invariants=["UniqueEpochs"]).run(),
                run_spark(spark, spec, invariants=["UniqueEpochs"], partitions=buckets))


# ---------------------------------------------------------------------- multi-word
MULTIWORD = """
    from modelcheck import Array, Ids, Int, Spec, action, invariant

    class Wide(Spec):
        '''Six counters with huge domains: 6 x 20 bits > 64, so fingerprints are hashed.'''
        Cells = Ids(1, 6)
        a = Array(Cells, Int(0, 1_000_000))
        b = Int(0, 1_000_000)

        @action(i=Cells)
        def Bump(self, s, t, i):
            t.a[i] = s.a[i] + 1
            t.b = s.b + i
            return (s.a[i] < 2) & ((i == 1) | (s.a[1] >= 1))

        @action(i=Cells)
        def Drop(self, s, t, i):
            t.a[i] = 0
            return (s.a[i] == 2) & (s.b < 6)

    class WideInv(Wide):
        @invariant
        def Small(self, s):
            return s.a[2] + s.a[3] < 4
"""


def test_multiword_layout_deadlock(spark: Any, spec_dir: Path) -> None:
    spec = write_spec(spec_dir, MULTIWORD, "Wide")()
    assert spec.layout.n_words > 1
    r = compare_wide(spark, spec)
    assert r.fingerprint == "hash128" and spec.layout.n_words == 3
    assert r.status == "deadlock"


def test_multiword_layout_invariant(spark: Any, spec_dir: Path) -> None:
    spec = write_spec(spec_dir, MULTIWORD, "WideInv")()
    r = compare_wide(spark, spec, spark_kw={"partitions": 3})
    assert r.status == "violation" and r.violation is not None
    assert r.violation.property == "Small"


WIDE_LADDER = """
    from modelcheck import Int, Spec, action, invariant, where

    class LADDER(Spec):
        '''Two 41-bit counters (and PAD): two words, or three.'''
        check_deadlock = False
        x = Int(0, 8)
        y = Int(0, 2**40 + 5)
        z = Int(0, 2**40 + 5)
        PAD

        @action
        def Climb(self, s, t):
            t.x = s.x + 1
            t.y = where(s.y < 5, s.y + 1, 0)
            return s.x < 8

        @action
        def ClimbZ(self, s, t):
            t.x = s.x + 1
            t.z = where(s.z < 5, s.z + 1, 0)
            return s.x < 8

        @invariant
        def NotTop(self, s):
            return (s.x < 8) | (s.y != s.z)
"""


@pytest.mark.parametrize("engine", ["shards", "rdd"])
def test_wide_states_keyed_as_locally(spark: Any, spec_dir: Path, tmp_path: Path,
                                      engine: str) -> None:
    """Two-word states (exact two-column keys) and three-word ones (128-bit hashes) on
    both engines give the local result field by field (the fingerprint kind, the
    collision figure and the shortest counterexample among them), also when resumed from
    a checkpoint that --max-depth stopped (levels and visited sets of two-column keys;
    the rdd engine's read back from its level files)."""
    from tests.bruteforce import assert_replays

    for words, pad in ((2, ""), (3, "pad = Int(0, 2**40)")):
        name = f"Ladder{words}"
        spec = write_spec(spec_dir, WIDE_LADDER.replace("LADDER", name).replace("PAD", pad),
                          name)()
        assert spec.layout.n_words == words
        r = compare_wide(spark, spec, {"engine": engine, "partitions": 3})
        assert r.status == "violation" and r.violation is not None
        assert_replays(spec, r.violation.trace)
        ck = tmp_path / f"{engine}-{words}"
        kw = {"engine": engine, "partitions": 3,
              "checkpoint_dir": str(ck) if engine == "shards" else ck.as_uri()}
        assert run_spark(spark, spec, max_depth=4, **kw).status == "incomplete"
        assert_same(Explorer(spec).run(), run_spark(spark, spec, resume=True, **kw))


# ---------------------------------------------------------------------- random specs
try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a dev dependency
    given = None


def render_spec(desc: dict[str, Any]) -> str:
    """Python source of a random spec: bounded ints/bools, guarded increments and resets."""
    lines = ["from modelcheck import Bool, Int, Spec, action, constraint, invariant", "",
             "class Rand(Spec):", "    check_deadlock = True"]
    variables = desc["vars"]
    for i, (kind, hi, init) in enumerate(variables):
        if kind == "int":
            lines.append(f"    v{i} = Int(0, {hi}, init={min(init, hi)})")
        else:
            lines.append(f"    v{i} = Bool(init={bool(init)})")
    if desc["inits"]:
        lines += ["", "    def init_states(self):", "        yield {}"]
        for i, v in desc["inits"]:
            kind, hi, _ = variables[i % len(variables)]
            val = min(v, hi) if kind == "int" else bool(v % 2)
            lines.append(f"        yield {{'v{i % len(variables)}': {val!r}}}")
    for a, act in enumerate(desc["actions"]):
        lines += ["", "    @action", f"    def A{a}(self, s, t):"]
        guard = ["(s.v0 == s.v0)"]
        for (target, op, c) in act["effects"]:
            i = target % len(variables)
            kind, hi, _ = variables[i]
            if kind == "int" and op == "inc":
                lines.append(f"        t.v{i} = s.v{i} + 1")
                guard.append(f"(s.v{i} < {hi})")
            elif kind == "int":
                lines.append(f"        t.v{i} = {min(c, hi)}")
            elif op == "inc":
                lines.append(f"        t.v{i} = ~s.v{i}")
            else:
                lines.append(f"        t.v{i} = {bool(c % 2)}")
        if act["cond"] is not None:
            j, c, eq = act["cond"]
            j %= len(variables)
            kind, hi, _ = variables[j]
            if kind == "int":
                guard.append(f"(s.v{j} {'==' if eq else '!='} {min(c, hi)})")
            else:
                guard.append(f"{'' if eq else '~'}s.v{j}")
        lines.append(f"        return {' & '.join(guard)}")
    if desc["inv"] is not None:
        i, bound = desc["inv"]
        i %= len(variables)
        lines += ["", "    @invariant", "    def Bounded(self, s):",
                  f"        return (s.v{i} + 0) <= {bound}"]
    if desc.get("constraint") is not None:
        i, bound = desc["constraint"]
        i %= len(variables)
        lines += ["", "    @constraint", "    def Within(self, s):",
                  f"        return (s.v{i} + 0) <= {bound}"]
    return "\n".join(lines) + "\n"


if given is not None:
    var = st.tuples(st.sampled_from(["int", "int", "bool"]), st.integers(1, 4),
                    st.integers(0, 4))
    effect = st.tuples(st.integers(0, 3), st.sampled_from(["inc", "inc", "set"]),
                       st.integers(0, 4))
    act_s = st.fixed_dictionaries({
        "effects": st.lists(effect, min_size=1, max_size=2),
        "cond": st.none() | st.tuples(st.integers(0, 3), st.integers(0, 4), st.booleans()),
    })
    desc_s = st.fixed_dictionaries({
        "vars": st.lists(var, min_size=1, max_size=4),
        "actions": st.lists(act_s, min_size=1, max_size=4),
        "inits": st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=2),
        "inv": st.none() | st.tuples(st.integers(0, 3), st.integers(1, 4)),
        "constraint": st.none() | st.tuples(st.integers(0, 3), st.integers(0, 3)),
    })

    @settings(max_examples=8, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow,
                                     HealthCheck.function_scoped_fixture])
    @given(desc=desc_s)
    def test_random_specs(spark: Any, spec_dir: Path, desc: dict[str, Any]) -> None:
        spec = write_spec(spec_dir, render_spec(desc), "Rand")()
        compare(spark, spec, spark_kw={"partitions": 2})


# ---------------------------------------------------------------------- errors
BOOM = """
    import numpy as np
    from modelcheck import Int, Spec, action

    class Boom(Spec):
        check_deadlock = False
        x = Int(0, 6)

        @action
        def Inc(self, s, t):
            t.x = s.x + 1
            return s.x < 6

        @action
        def Explode(self, s, t):
            if np.any(np.asarray(s.x) == 3):
                raise ValueError("boom at three")
            t.x = s.x
            return s.x < 0
"""


FIRST_PROBLEM = """
    import numpy as np
    from modelcheck import Int, Spec, action, invariant

    class FirstProblem(Spec):
        check_deadlock = False
        x = Int(0, 10)

        def init_states(self):
            for v in range(10):
                yield {"x": v}

        @action
        def Step(self, s, t):
            if np.any(np.asarray(s.x) == 5):
                raise ValueError("boom at five")
            t.x = s.x
            return s.x < 0

        @invariant
        def NotTwo(self, s):
            return s.x != 2
"""


@pytest.mark.parametrize("partitions,batch_size", [(1, 1), (1, 16), (2, 4), (3, 64)])
def test_first_problem_wins_whatever_the_partitions(spark: Any, spec_dir: Path,
                                                    partitions: int, batch_size: int) -> None:
    # The level rule: the first problem in fingerprint order decides, whether it is a
    # violation or an error, whatever the buckets and the batch size.
    spec = write_spec(spec_dir, FIRST_PROBLEM, "FirstProblem")()
    local = Explorer(spec).run()
    assert local.violation is not None and local.violation.property == "NotTwo"
    remote = run_spark(spark, spec, partitions=partitions, batch_size=batch_size)
    assert_same(local, remote)


CONSTRAINED = """
    from modelcheck import Int, Spec, action, constraint, invariant

    class Constrained(Spec):
        x = Int(0, 5)
        y = Int(0, 5)

        def init_states(self):
            for v in range(4):
                yield {"x": v, "y": 0}

        @action
        def IncX(self, s, t):
            t.x = s.x + 1
            return s.x < 5

        @action
        def IncY(self, s, t):
            t.y = s.y + 1
            return s.y < 5

        @invariant
        def Small(self, s):
            return s.x + s.y <= MAX

        @constraint
        def Bounded(self, s):
            return s.x <= 2
"""


@pytest.mark.parametrize("bound", [9, 7, 6])
def test_state_constraints_as_locally(spark: Any, spec_dir: Path, bound: int) -> None:
    # Initial states outside the constraint are not counted; successors outside it are
    # checked against the invariants (bound 7: violated only outside) but not stored.
    spec = write_spec(spec_dir, CONSTRAINED.replace("MAX", str(bound)), "Constrained")()
    local = Explorer(spec, check_deadlock=False).run()
    assert_same(local, run_spark(spark, spec, partitions=2, check_deadlock=False))


VIEWED = """
    from modelcheck import Int, Spec, action, invariant

    class Viewed(Spec):
        check_deadlock = False
        view = ("a", "b", "c")
        a = Int(0, 3)
        b = Int(0, 3)
        c = Int(0, 1)
        h = Int(0, 7)

        @action(k=range(1, 3))
        def IncA(self, s, t, k):
            t.a = s.a + 1
            t.h = (s.h * 2 + k) % 8
            return s.a < 3

        @action
        def IncB(self, s, t):
            t.b = s.b + 1
            t.h = (s.h + 3) % 8
            return (s.b < 3) & (s.h != 5)

        @action
        def Flag(self, s, t):
            t.c = 1
            return s.h == 6

        @invariant
        def Small(self, s):
            return s.a + s.b + s.c <= MAX
"""


@pytest.mark.parametrize("bound", [7, 4])
def test_a_view_as_locally(spark: Any, spec_dir: Path, bound: int) -> None:
    # Under a view the state kept of each view (the first reached: smallest parent
    # fingerprint, then action) decides what comes next (IncB and Flag read h, which
    # the view leaves out; keeping another state of a view reaches 24 views, not 26):
    # the same as locally whatever the engine and the partitions, and the
    # counterexample replays
    from tests.bruteforce import assert_replays

    spec = write_spec(spec_dir, VIEWED.replace("MAX", str(bound)), "Viewed")()
    local = Explorer(spec).run()
    assert local.view == ["a", "b", "c"]
    for kw in ({"partitions": 1}, {"partitions": 3, "batch_size": 2},
               {"engine": "rdd", "partitions": 2}):
        remote = run_spark(spark, spec, **kw)
        assert_same(local, remote)
        if remote.violation is not None:
            assert_replays(spec, remote.violation.trace)
    assert local.status == ("ok" if bound == 7 else "violation")
    assert bound != 7 or local.distinct_states == 26


ACTION_CONSTRAINED = """
    from modelcheck import Int, Spec, action, action_constraint, invariant

    class Diagonal(Spec):
        check_deadlock = False
        x = Int(0, 6)
        y = Int(0, 6)

        @action
        def IncX(self, s, t):
            t.x = s.x + 1
            return s.x < 6

        @action
        def Both(self, s, t):
            t.x = s.x + 1
            t.y = s.y + 1
            return (s.x < 6) & (s.y < 6)

        @action_constraint
        def NoDiagonalOffTheLine(self, s, t):
            return (t.y == s.y) | (s.x == s.y)

        @invariant
        def Small(self, s):
            return s.x + s.y <= MAX
"""


@pytest.mark.parametrize("bound", [12, 9, 4])
def test_action_constraints_as_locally(spark: Any, spec_dir: Path, bound: int) -> None:
    # Both is taken only from the diagonal (x = y); its other steps fire, and their
    # successors are checked against the invariants, but not stored through them
    spec = write_spec(spec_dir, ACTION_CONSTRAINED.replace("MAX", str(bound)), "Diagonal")()
    local = Explorer(spec).run()
    for kw in ({"partitions": 2}, {"engine": "rdd", "partitions": 3}):
        assert_same(local, run_spark(spark, spec, **kw))
    assert local.status == ("ok" if bound == 12 else "violation")


def test_spec_error_in_executor_reads_as_locally(spark: Any, spec_dir: Path) -> None:
    spec = write_spec(spec_dir, BOOM, "Boom")()
    with pytest.raises(SpecEvaluationError) as local:
        Explorer(spec).run()
    with pytest.raises(SpecEvaluationError) as remote:
        run_spark(spark, spec)
    assert str(remote.value) == str(local.value)
    assert "Explode" in str(remote.value) and "x=3" in str(remote.value)


def test_unknown_invariant_is_a_usage_error() -> None:
    from spark_explore import SparkExplorer

    with pytest.raises(UsageError, match="NoSuchThing"):
        SparkExplorer(kraft(**L1), invariants=["NoSuchThing"])


def test_interrupt_gives_incomplete(spark: Any) -> None:
    def stop(p: Any) -> None:
        if p.level == 3:
            raise KeyboardInterrupt

    r = run_spark(spark, kraft(**L1), progress=stop)
    assert (r.status, r.reason) == ("incomplete", "interrupted")
    assert r.depth == 4 and r.distinct_states == 31


# ---------------------------------------------------------------------- checkpoints
def test_checkpoint_refuses_other_constants_and_missing_dirs(spark: Any, tmp_path: Path) -> None:
    from modelcheck.shards.rundir import CheckpointError

    ck = tmp_path / "ck"
    spec = kraft(**L1)
    r = run_spark(spark, spec, checkpoint_dir=ck, max_depth=4)
    assert r.status == "incomplete"
    manifest = json.loads((ck / "manifest.json").read_text())
    assert manifest["level"] == 4 and manifest["spec"]["constants"] == L1
    with pytest.raises(CheckpointError, match="MaxLog = 4 vs 5"):
        run_spark(spark, kraft(**{**L1, "MaxLog": 5}), checkpoint_dir=ck, resume=True)
    with pytest.raises(CheckpointError, match="spec class KRaftBroker vs"):
        run_spark(spark, kraft("KRaftBrokerBugEpochReuse", **L1), checkpoint_dir=ck,
                  resume=True)
    with pytest.raises(CheckpointError, match="already holds a checkpoint"):
        run_spark(spark, spec, checkpoint_dir=ck)
    # --resume where no checkpoint is starts afresh, as `modelcheck check --resume` does.
    notices: list[str] = []
    assert_same(Explorer(spec, max_depth=3).run(),
                run_spark(spark, spec, checkpoint_dir=tmp_path / "nope", resume=True,
                          max_depth=3, notice=notices.append))
    assert notices == [f"--resume: no checkpoint in {tmp_path / 'nope'}; starting afresh."]
    assert json.loads((tmp_path / "nope" / "manifest.json").read_text())["level"] == 3
    # A checkpoint of the former dataframe engine is refused.
    other = tmp_path / "other"
    shutil.copytree(ck, other)
    manifest["engine"] = "dataframe"
    (other / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckpointError, match="written by the dataframe engine"):
        run_spark(spark, spec, checkpoint_dir=other, resume=True)
    # The same spec resumes (without the depth bound) and finishes with the
    # uninterrupted answer.
    assert_same(Explorer(spec).run(), run_spark(spark, spec, checkpoint_dir=ck, resume=True))


def test_run_folders_of_the_former_formats(spark: Any, tmp_path: Path) -> None:
    """A Spark run folder of the former manifest format (written by commit fe8d9ae,
    tests/legacy_runs) resumes with the uninterrupted answer and commits in the one
    format; a local explorer's checkpoint is refused with the command that continues
    it."""
    from modelcheck.loader import bind_spec
    from modelcheck.shards.rundir import CheckpointError

    legacy = ROOT / "tests" / "legacy_runs"
    spec = bind_spec("tests/ladder_spec.py", ("L=8", "M=3"))
    ck = tmp_path / "spark"
    shutil.copytree(legacy / "spark", ck)
    assert json.loads((ck / "manifest.json").read_text())["format"] == \
        "modelcheck-spark-checkpoint"
    assert_same(Explorer(spec).run(), run_spark(spark, spec, checkpoint_dir=ck, resume=True))
    manifest = json.loads((ck / "manifest.json").read_text())
    assert (manifest["format"], manifest["engine"]) == ("modelcheck-checkpoint", "shards")
    local = tmp_path / "local"
    shutil.copytree(legacy / "local", local)
    with pytest.raises(CheckpointError, match="written by the one-process explorer.*modelcheck "
                                              "check --resume"):
        run_spark(spark, spec, checkpoint_dir=local, resume=True)


def cli(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.Popen[str]:
    env = dict(os.environ if env is None else env, PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "modelcheck", "spark", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, **kw)


def test_cli_filters_spark_noise() -> None:
    """Spark's start-up chatter (the JVM's incubator-module warning, the log-level
    lines) is not shown without --verbose; our own lines are."""
    p = cli("examples/counter.py", "--master", "local[1]")
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert "Checking Counter" in err and "level   0" in err
    for noise in ("Using incubator modules", "Setting default log level",
                  "sc.setLogLevel"):
        assert noise not in err


def kraft_args(consts: dict[str, int]) -> list[str]:
    out = [KRAFT]
    for k, v in consts.items():
        out += ["--const", f"{k}={v}"]
    return out


@pytest.mark.parametrize("engine", ["shards", "rdd"])
def test_cli_kill_and_resume(tmp_path: Path, engine: str) -> None:
    """SIGKILL the driver once >= 5 levels are committed; --resume gives the same JSON
    (the rdd engine's checkpoint given as a file:// URI, written through Hadoop)."""
    import psutil

    ck = tmp_path / "ck"
    where = str(ck) if engine == "shards" else ck.as_uri()
    args = [*kraft_args(L3), "--master", "local[2]", "--partitions", "2", "--engine", engine,
            "--checkpoint-dir", where, "--format", "json", "-q"]
    proc = cli(*args, start_new_session=True)
    manifest = ck / "manifest.json"
    children: list[psutil.Process] = []
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the run ended before it could be killed: {proc.stderr.read()}")
            if manifest.exists():
                try:
                    level = json.loads(manifest.read_text())["level"]
                except ValueError:
                    level = 0  # being replaced right now
                if level >= 5:
                    break
            children = psutil.Process(proc.pid).children(recursive=True) or children
            time.sleep(0.05)
        children = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        # The JVM leaves when its parent's pipe closes; make sure nothing lingers.
        _, alive = psutil.wait_procs(children, timeout=30)
        for p in alive:
            p.kill()
    killed_at = json.loads(manifest.read_text())["level"]
    assert killed_at >= 5
    assert_resumes_to_local(args, L3)


def assert_resumes_to_local(args: list[str], consts: dict[str, int]) -> None:
    """``modelcheck spark ARGS --resume`` prints the local explorer's JSON answer."""
    resumed = cli(*args, "--resume")
    out, err = resumed.communicate(timeout=900)
    assert resumed.returncode == 0, err
    assert re.search(r"^resuming at level \d+ \([\d,]+ states\)$", err, re.M), err
    got = json.loads(out)
    want = Explorer(kraft(**consts)).run().to_json()
    for key in COMPARED:
        assert got[key] == want[key], key
    assert levels_of(got) == levels_of(want)
    assert got["backend"] == "spark"


def test_cli_errors_are_one_paragraph(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = cli(*kraft_args(L1), "--master", f"spark://127.0.0.1:{port}", "--connect-timeout", "5",
            "--format", "json")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2
    assert json.loads(out)["status"] == "error"
    assert "cannot reach the Spark master" in err and "Traceback" not in err
    p = cli(*kraft_args(L1), "--memory-limit", "1G")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "Traceback" not in err
    assert "--memory-limit 1.0 GiB bounds the memory of the local explorer" in err
    assert "--max-states" in err
    p = cli(*kraft_args(L1), "--resume")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "--resume needs --checkpoint-dir" in err
    boom = tmp_path / "boom_spec.py"
    boom.write_text(textwrap.dedent(BOOM))
    p = cli(f"{boom}:Boom", "--master", "local[2]", "--format", "json")
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2 and json.loads(out)["status"] == "error"
    assert "boom at three" in err and "Explode" in err and "Traceback" not in err


def test_cli_names_a_package_the_executors_lack(tmp_path: Path) -> None:
    """Executors whose Python has no numpy: one paragraph naming it (the project's own
    packages travel with the job; numpy must be installed on every host)."""
    fake = tmp_path / "no-numpy" / "numpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    python = tmp_path / "python-without-numpy"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={fake.parent}${{PYTHONPATH:+:$PYTHONPATH}} "
                      f"exec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    p = cli(*kraft_args(L1), "--master", "local[1]", "--format", "json",
            env=dict(os.environ, PYSPARK_PYTHON=str(python)))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 2 and json.loads(out)["status"] == "error"
    assert "cannot import 'numpy'" in err and "every host" in err, err
    assert "Traceback" not in err


def test_cli_out_writes_the_local_trace(tmp_path: Path) -> None:
    """``spark --out/--trace-out`` write the same counterexample files as ``check``."""
    target = f"{KRAFT}:KRaftBrokerBugNoCatchUpCheck"
    consts = [a for k, v in L1.items() for a in ("--const", f"{k}={v}")]
    local = subprocess.run([sys.executable, "-m", "modelcheck", "check", target, *consts,
                            "--out", str(tmp_path / "local"), "-q"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert local.returncode == 1, local.stderr
    p = cli(target, *consts, "--master", "local[2]", "--out", str(tmp_path / "spark"),
            "--trace-out", str(tmp_path / "t.itf.json"), "-q")
    out, err = p.communicate(timeout=600)
    assert p.returncode == 1, err
    for name in ("trace.itf.json", "trace.json"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert (tmp_path / "t.itf.json").read_bytes() == (tmp_path / "local" / "trace.itf.json"
                                                       ).read_bytes()
    record = json.loads((tmp_path / "spark" / "result.json").read_text())
    want = json.loads((tmp_path / "local" / "result.json").read_text())
    assert record["backend"] == "spark"
    for key in COMPARED:
        assert record[key] == want[key], key
    assert record["run"]["options"]["master"] == "local[2]"
    # An existing run folder is refused before Spark starts.
    p = cli(target, *consts, "--out", str(tmp_path / "spark"), "-q")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2 and "already holds a run" in err and "Traceback" not in err


def test_full_checkpoint_dir_keeps_committed_levels(tmp_path: Path) -> None:
    """A checkpoint dir that fills up: one paragraph, exit 2, and the committed levels
    resume (here after moving them somewhere roomier) to the uninterrupted answer."""
    small = tmp_path / "small"
    small.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(small)],
                                 capture_output=True, check=False).returncode == 0
    except OSError:
        mounted = False
    if not mounted:
        pytest.skip("needs to mount a 3 MB tmpfs (root)")
    roomy = tmp_path / "roomy"
    try:
        ck = small / "ck"
        p = cli(*kraft_args(L3), "--master", "local[2]", "--checkpoint-dir", str(ck),
                "--format", "json", "-q")
        out, err = p.communicate(timeout=600)
        assert p.returncode == 2, err
        assert json.loads(out)["status"] == "error"
        assert "No space left on device" in err and "Traceback" not in err
        assert "--resume" in err
        level = json.loads((ck / "manifest.json").read_text())["level"]
        assert level >= 1
        shutil.copytree(ck, roomy)
    finally:
        subprocess.run(["umount", str(small)], check=False)
    assert_resumes_to_local([*kraft_args(L3), "--master", "local[2]", "--checkpoint-dir",
                             str(roomy), "--format", "json", "-q"], L3)


def test_cli_ctrl_c_gives_the_finished_levels() -> None:
    """SIGINT (Ctrl-C) mid-run: exit 3, status incomplete, the levels finished so far
    (a prefix of the local explorer's level table), and no stack trace."""
    p = cli(*kraft_args(L3), "--master", "local[2]", "--format", "json")
    assert p.stderr is not None
    seen: list[str] = []
    for line in p.stderr:
        seen.append(line)
        if " level   5 " in line:
            p.send_signal(signal.SIGINT)
            break
    else:
        pytest.fail("the run ended before level 5: " + "".join(seen))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 3, err
    assert "Traceback" not in err
    got = json.loads(out)
    assert (got["status"], got["reason"]) == ("incomplete", "interrupted")
    want = Explorer(kraft(**L3)).run().to_json()
    n = len(got["levels"])
    assert n >= 6
    assert levels_of(got) == levels_of(want)[:n]
    assert got["distinct_states"] == sum(lv["new"] for lv in want["levels"][:n]) + 1


def test_compound_types_as_locally(spark: Any) -> None:
    """Records, sequences, sets of records and bags (examples/mailbox.py) on Spark."""
    for cls in ("Mailbox", "MailboxSym", "MailboxBug"):
        r = compare(spark, load_spec_class(f"examples/mailbox.py:{cls}")())
        assert r.distinct_states == {"Mailbox": 334, "MailboxSym": 170}.get(cls, 13)


# ---------------------------------------------------------------------- the rdd engine
@pytest.mark.parametrize("buckets", [1, 3])
def test_rdd_engine_kraft(spark: Any, buckets: int) -> None:
    """The engine whose blocks travel through Spark's shuffle gives the same answers."""
    kw = {"engine": "rdd", "partitions": buckets}
    r = compare(spark, kraft(**L1), kw)
    assert (r.distinct_states, r.depth, r.memory["spark_jobs"]) == (5353, 18, 20)
    # the levels' wall time, split into waiting for Spark's jobs and the driver's own work
    jobs, driver = r.memory["spark_job_wall_ms"], r.memory["driver_level_wall_ms"]
    assert jobs > 0 and driver >= 0 and (jobs + driver) / 1000 <= r.seconds
    compare(spark, kraft(**L1), kw, max_depth=7)
    r = compare(spark, kraft("KRaftBrokerBugGrantWithLeaders", **{**L1, "MaxLog": 5}), kw)
    assert r.violation is not None and len(r.violation.trace) == 10


def test_rdd_engine_multiword_constraints_and_errors(spark: Any, spec_dir: Path) -> None:
    kw = {"engine": "rdd", "partitions": 3}
    assert compare_wide(spark, write_spec(spec_dir, MULTIWORD, "Wide")(), kw).status == \
        "deadlock"
    r = compare_wide(spark, write_spec(spec_dir, MULTIWORD, "WideInv")(), kw)
    assert r.violation is not None and r.violation.property == "Small"
    spec = write_spec(spec_dir, CONSTRAINED.replace("MAX", "7"), "Constrained")()
    compare(spark, spec, kw, check_deadlock=False)
    spec = write_spec(spec_dir, BOOM, "Boom")()
    with pytest.raises(SpecEvaluationError) as local:
        Explorer(spec).run()
    with pytest.raises(SpecEvaluationError) as remote:
        run_spark(spark, spec, **kw)
    assert str(remote.value) == str(local.value)


MANY_ACTIONS = """
    from modelcheck import Ids, Int, Spec, action, invariant

    class ManyOk(Spec):
        '''150 action instances: ids past int8's range cross the rdd engine's shuffle.'''
        check_deadlock = False
        Cells = Ids(1, 150)
        x = Int(0, 150)
        y = Int(0, 3)

        @action(i=Cells)
        def Jump(self, s, t, i):
            t.x = i
            t.y = s.y + 1
            return s.y < 3

    class Many(ManyOk):
        @invariant
        def NotLast(self, s):
            return ~((s.x == 150) & (s.y == 3))
"""


def test_rdd_engine_action_ids_past_a_byte(spark: Any, spec_dir: Path) -> None:
    """The successors cross the rdd engine's shuffle with their action ids narrowed to
    the smallest integer type that holds them (int16 here): the coverage of every
    action instance and the counterexample's actions as locally."""
    r = compare(spark, write_spec(spec_dir, MANY_ACTIONS, "ManyOk")(),
                {"engine": "rdd", "partitions": 3})
    assert (r.distinct_states, r.depth) == (1 + 150 * 3, 3)
    r = compare(spark, write_spec(spec_dir, MANY_ACTIONS, "Many")(),
                {"engine": "rdd", "partitions": 2})
    assert r.violation is not None and r.violation.property == "NotLast"


def test_run_dir_on_a_hadoop_file_system(spark: Any, tmp_path: Path) -> None:
    """A run directory reached through Hadoop's FileSystem API (here file://): the
    checks before a run and the manifest, replaced atomically."""
    from modelcheck.shards.rundir import CheckpointError, RunDir
    from spark_explore.hadoop_fs import HadoopDir, is_uri, local_path

    assert is_uri("hdfs://nn:8020/ck") and not is_uri("file:///ck") and not is_uri("ck")
    assert local_path("file:///x/y") == "/x/y" and local_path("file://localhost/x") == "/x"
    ck = tmp_path / "ck"
    store = HadoopDir(spark, ck.as_uri())
    # --resume where there is no checkpoint (not even the directory) starts afresh.
    assert not RunDir.prepare_remote(store, resume=True).has_checkpoint and ck.is_dir()
    rd = RunDir.prepare_remote(store, resume=False)
    assert not RunDir.prepare_remote(store, resume=True).has_checkpoint
    rd.write_manifest({"level": 3})
    rd.write_manifest({"level": 4})
    assert json.loads((ck / "manifest.json").read_text())["level"] == 4
    assert not [p for p in ck.iterdir() if p.name.endswith(".tmp")]
    with pytest.raises(CheckpointError, match="already holds a checkpoint"):
        RunDir.prepare_remote(store, resume=False)
    assert RunDir.prepare_remote(store, resume=True).read_manifest()["level"] == 4
    store.write_bytes("levels/L00000/b0000.npz", b"x" * 100)
    assert store.read_bytes("levels/L00000/b0000.npz") == b"x" * 100
    assert store.du("levels") == 100 and store.list("levels") == ["L00000"]


# ---------------------------------------------------------------------- budgets
def max_states_caps(spec: Spec) -> list[int]:
    """Caps that stop a run in its first, middle and last levels, and one it meets."""
    local = Explorer(spec).run()
    total = 0
    ends = []
    for lv in local.levels:
        total += lv.frontier
        ends.append(total)
    return [ends[0] + 1, ends[len(ends) // 2], ends[len(ends) // 2] + 1, ends[-1] - 1,
            ends[-1]]


@pytest.mark.parametrize("engine", ["shards", "rdd"])
def test_max_states_as_locally(spark: Any, engine: str) -> None:
    """--max-states stops at the last complete level with the local explorer's counts,
    status, reason and per-level table (the local explorer is the oracle)."""
    spec = kraft(**L1)
    caps = max_states_caps(spec)
    for cap in caps:
        r = compare(spark, spec, {"engine": engine, "partitions": 3}, max_states=cap)
        if cap < caps[-1]:
            assert (r.status, r.reason) == ("incomplete", "max-states")
            assert r.message is not None and f"--max-states {cap:,}" in r.message
            assert r.distinct_states <= cap
        else:
            assert r.status == "ok"
    # A violation at a level beyond the cap is not reached; one within it is found.
    bug = kraft("KRaftBrokerBugGrantWithLeaders", **{**L1, "MaxLog": 5})
    for cap in (50, 10**6):
        compare(spark, bug, {"engine": engine}, max_states=cap)


def test_max_states_initial_states_and_resume(spark: Any, spec_dir: Path,
                                              tmp_path: Path) -> None:
    """More initial states than --max-states: nothing is explored, as locally. A run
    stopped by --max-states resumes from its checkpoint with a larger one."""
    spec = write_spec(spec_dir, MANY_INITIAL, "ManyInitial")(N=6)
    compare(spark, spec, max_states=3)
    ck = tmp_path / "ck"
    spec = kraft(**L1)
    cap = max_states_caps(spec)[1]
    r = run_spark(spark, spec, checkpoint_dir=ck, max_states=cap)
    assert r.reason == "max-states" and r.message is not None
    assert f"The checkpoint in {ck} holds levels 0..{r.depth}" in r.message
    assert json.loads((ck / "manifest.json").read_text())["level"] == r.depth
    assert_same(Explorer(spec).run(), run_spark(spark, spec, checkpoint_dir=ck, resume=True))


MANY_INITIAL = """
from modelcheck import Const, Int, Spec, action


class ManyInitial(Spec):
    check_deadlock = False
    N = Const(6)
    x = Int(0, 20)
    y = Int(0, 20)

    def init_states(self):
        for v in range(self.N):
            yield {"x": v, "y": 0}

    @action
    def Step(self, s, t):
        t.y = s.y + 1
        return s.y < 3
"""


def test_memory_limit_is_refused(spark: Any) -> None:
    """--memory-limit bounds one process; on Spark it is refused with what to use instead
    (the default, a share of this machine's memory, and 'none' are accepted)."""
    from spark_explore import SparkExplorer

    with pytest.raises(UsageError, match="spark.executor.memory"):
        SparkExplorer(kraft(**L1), spark=spark, memory_limit=1 << 30).run()
    compare(spark, kraft(**L1), memory_limit=None, max_depth=2)


@pytest.mark.parametrize("through_driver", [False, True])
def test_rdd_resume_reads_the_levels_where_they_are(spark: Any, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    through_driver: bool) -> None:
    """The rdd engine resumes with its executors reading the checkpoint's level files
    (they reach it here), or with the driver streaming them bucket by bucket (a
    driver-local directory on a cluster); either way, the uninterrupted answer."""
    from spark_explore import rdd_engine

    read: list[tuple[int, int]] = []
    load = rdd_engine.RddEngine._load_level

    def counted(self: Any, depth: int, bucket: int) -> Any:
        read.append((depth, bucket))
        return load(self, depth, bucket)

    monkeypatch.setattr(rdd_engine.RddEngine, "_load_level", counted)
    if through_driver:
        monkeypatch.setattr(rdd_engine.RddEngine, "_executors_reach_store", lambda self: False)
    spec = kraft("KRaftBrokerBugGrantWithLeaders", **{**L1, "MaxLog": 5})
    ck = (tmp_path / "ck").as_uri()
    kw = {"engine": "rdd", "partitions": 3, "checkpoint_dir": ck}
    assert run_spark(spark, spec, max_depth=5, **kw).status == "incomplete"
    r = run_spark(spark, spec, resume=True, **kw)
    assert_same(Explorer(spec).run(), r)
    assert r.violation is not None and len(r.violation.trace) == 10
    levels = [d for d, _ in read]
    if through_driver:
        assert sorted(set(read)) == [(d, b) for d in range(6) for b in range(3)]
    else:  # only the violating path's buckets, one per level, for its parents
        assert len(levels) <= 5 and len(set(levels)) == len(levels)


def test_rdd_levels_move_between_the_driver_and_spark(spark: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With a driver threshold the rdd engine runs the small first levels in the driver,
    hands the visited set to Spark at the first large level and takes it back when the
    levels are small again: the same answer, also checkpointed and resumed."""
    from spark_explore import rdd_engine

    moves: list[tuple[str, int]] = []

    def counted(name: str) -> Any:
        move = getattr(rdd_engine.RddEngine, name)

        def moved(self: Any, depth: int, again: bool) -> Any:
            moves.append((name, depth))
            return move(self, depth, again)

        return moved

    for name in ("_to_spark", "_to_driver"):
        monkeypatch.setattr(rdd_engine.RddEngine, name, counted(name))
    kw = {"engine": "rdd", "partitions": 3, "driver_threshold": 20_000}
    r = compare(spark, kraft(**L3), kw)
    assert [m for m, _ in moves] == ["_to_spark", "_to_driver"], moves
    assert r.memory["spark_jobs"] > 0 and r.memory["driver_levels"] > 0
    # a checkpoint whose levels were written by the driver and by Spark, resumed
    ck = (tmp_path / "ck").as_uri()
    back = moves[1][1]
    assert run_spark(spark, kraft(**L3), max_depth=back + 2, checkpoint_dir=ck,
                     **kw).status == "incomplete"
    assert_same(Explorer(kraft(**L3)).run(),
                run_spark(spark, kraft(**L3), resume=True, checkpoint_dir=ck, **kw))


def test_rdd_visited_base_and_runs_against_a_set(spark: Any, monkeypatch: pytest.MonkeyPatch
                                                 ) -> None:
    """The rdd engine's visited set in Spark (a base block per bucket, rewritten only at
    a compaction, plus runs: the levels committed since) holds after every level
    exactly the states of the levels so far (a Python set, the oracle), with runs both
    compacted by size and by number; the answers stay the local explorer's."""
    import numpy as np

    from spark_explore import rdd_engine

    monkeypatch.setattr(rdd_engine, "COMPACT_FRACTION", 0.6)
    monkeypatch.setattr(rdd_engine, "MAX_RUNS", 3)
    run_level = rdd_engine.RddEngine._run_level_spark
    runs_seen: list[int] = []
    bases: list[int] = []
    levels: dict[int, set[str]] = {}

    def checked(self: Any, depth: int, expand: Any, again: bool) -> Any:
        out = run_level(self, depth, expand, again)
        if again:
            return out
        for d in range(depth + 1):
            if d not in levels:
                levels[d] = set(map(repr, self.level_states(d)[0].tolist()))
        oracle = set().union(*levels.values())
        got: list[Any] = []
        for _, rec in self._union(self._visited(depth + 1)).collect():
            if rec[0] == rdd_engine.V:
                got += rec[1].tolist()
            elif rec[2] > self._base_depth:
                got += rec[1][0].tolist()
        assert len(got) == len(oracle) and set(map(repr, got)) == oracle, depth
        runs_seen.append(depth - self._base_depth)
        bases.append(self._base_depth)
        return out

    monkeypatch.setattr(rdd_engine.RddEngine, "_run_level_spark", checked)
    kw = {"engine": "rdd", "partitions": 3, "driver_threshold": 0}
    r = compare(spark, kraft(**L1), kw)
    assert len(bases) >= r.depth + 1  # (and the empty level after the last)
    assert max(runs_seen) == 3 and 0 in runs_seen and 1 in runs_seen, (runs_seen, bases)
    # compacted by size (before MAX_RUNS) and by number (MAX_RUNS runs)
    steps = np.diff(sorted(set(bases)))
    assert 2 in steps and 4 in steps, str(bases)
