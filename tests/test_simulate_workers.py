"""``modelcheck simulate --workers N`` against one worker.

The oracle is the one-worker run (:meth:`Simulator.run`: every walk of the seed in one
process, counted in walk order, no rounds and no merge): with the same seed and
``runs``, N workers report the same JSON (times, ``workers`` and ``memory`` aside):
the same walks, counts, coverage, violation, walk and trace.

* the schedule and merge of :mod:`modelcheck.simrounds` (shared with ``spark
  --simulate``), with the tasks of each round run in this process: many random specs,
  seeds, task counts, batch sizes and weights, temporal properties included;
* real worker processes (spawned, loading the spec by name) on random spec *files*
  written outside the working directory, on a seed spec's bug variant through the
  command line, a spec error raised in a worker, Ctrl-C, and the option itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from livespec import live_spec
from randspec import random_spec

from modelcheck import Int, Spec, action
from modelcheck.errors import UsageError
from modelcheck.loader import load_spec_class
from modelcheck.result import Result
from modelcheck.simrounds import (
    MAX_ROUND_BATCHES,
    ParallelSimulator,
    RoundPlan,
    WalkBlock,
    available_cores,
    parse_workers,
    run_block,
    run_rounds,
)
from modelcheck.simulate import SimConfig, Simulator, WalkTally
from specs.kraft_broker import KRaftBroker

ROOT = Path(__file__).resolve().parent.parent


def figures(r: Result | dict[str, Any]) -> dict[str, Any]:
    """A result's JSON without what depends on timing or on the worker count."""
    d = r.to_json() if isinstance(r, Result) else dict(r)
    for key in ("seconds", "states_per_second", "levels", "memory"):
        d.pop(key, None)
    sim = dict(d["simulation"])
    for key in ("walks_per_second", "steps_per_second", "workers", "workers_cpu_seconds"):
        sim.pop(key, None)
    if sim.get("shrinking"):
        sim["shrinking"] = {k: v for k, v in sim["shrinking"].items() if k != "seconds"}
    d["simulation"] = sim
    return d


# ---------------------------------------------------------------------- the schedule
@settings(max_examples=200, deadline=None, derandomize=True)
@given(runs=st.integers(1, 3000), tasks=st.integers(1, 9), width=st.integers(1, 70))
def test_rounds_split_the_walks_as_documented(runs: int, tasks: int, width: int) -> None:
    """Round r holds tasks * width * min(2**r, 4) walks (the last one fewer); its tasks'
    walk sets partition it, task t taking every tasks-th walk from the round's first + t."""
    plan = RoundPlan(runs, tasks, width)
    a, r = 0, 0
    while (block := plan.next_block()) is not None:
        assert block == (a, min(a + tasks * width * min(2 ** r, MAX_ROUND_BATCHES), runs))
        job = WalkBlock(7, block[0], block[1], tasks, 10, width, None, True)
        got = []
        for t in range(tasks):
            ws = job.walks(t)
            assert ws.seed == 7 and ws.stride == tasks
            idx = [ws.index(j) for j in range(ws.count or 0)]
            assert all(i % tasks == (block[0] + t) % tasks for i in idx)
            got += idx
        assert sorted(got) == list(range(*block))
        plan.done(block[1], 0.0)
        a, r = block[1], r + 1
    assert a == runs


# ------------------------------------------------------- the merge, in this process
def in_rounds(sim: Simulator, tasks: int) -> Result:
    """``sim``'s run in rounds of ``tasks`` tasks, each task run here, one after the
    other (what the worker processes run, without the processes)."""
    def run_round(block: WalkBlock) -> list[tuple[int, WalkTally]]:
        return [(t, run_block(sim, block, t)) for t in reversed(range(block.tasks))]

    tally, rounds, seconds = run_rounds(sim, tasks, run_round, stop=lambda: False)
    assert rounds >= 1
    return sim.result(tally, seconds)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(random_spec(), st.integers(0, 2**16), st.integers(1, 4), st.integers(1, 6),
       st.integers(1, 60), st.sampled_from([0.0, 0.5, 1.0, 3.0]))
def test_rounds_give_the_one_worker_result(cls: type[Spec], seed: int, tasks: int,
                                           width: int, runs: int, weight: float) -> None:
    spec = cls()
    first = sorted({a.name for a in spec.actions})[0]
    cfg = SimConfig(seed=seed, runs=runs, depth=12, time_limit=None, walks_per_batch=width,
                    weights=((first, weight),), shrink_states=500)
    one = Simulator(spec, sim=cfg).run()
    assert figures(in_rounds(Simulator(spec, sim=cfg), tasks)) == figures(one)


@pytest.mark.parametrize("tasks", [2, 3])
def test_rounds_on_a_seed_spec(tasks: int) -> None:
    """KRaftBroker: states reached in several walks of a round by different actions
    (each state's first action is that of its smallest walk, whichever task ran it)."""
    cfg = SimConfig(seed=5, runs=200, time_limit=None, walks_per_batch=16)
    one = Simulator(KRaftBroker(), sim=cfg).run()
    assert one.status == "ok"
    assert figures(in_rounds(Simulator(KRaftBroker(), sim=cfg), tasks)) == figures(one)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(live_spec(), st.integers(0, 2**16), st.integers(2, 4), st.integers(1, 5))
def test_rounds_check_temporal_properties_as_one_worker(cls: type[Spec], seed: int,
                                                         tasks: int, width: int) -> None:
    """The walks' lassos: the same temporal violation (or none) as one worker."""
    spec = cls()
    cfg = SimConfig(seed=seed, runs=40, depth=8, time_limit=None, walks_per_batch=width)
    sim = Simulator(spec, sim=cfg)
    assert sim.live is not None
    one = sim.run()
    assert figures(in_rounds(Simulator(spec, sim=cfg), tasks)) == figures(one)


# ------------------------------------------------------------ real worker processes
VARS_MAX = 3


@st.composite
def spec_source(draw: st.DrawFn) -> str:
    """The source of a random small spec module (class ``Rand``): bounded ints, guarded
    increments, resets and copies, an invariant, maybe several initial states, a state
    constraint, an action property, and a temporal property with fair actions."""
    n = draw(st.integers(1, VARS_MAX))
    his = [draw(st.integers(1, 3)) for _ in range(n)]
    lines = ["from modelcheck import Int, Spec, action, action_property, constraint, "
             "invariant, where",
             "from modelcheck.temporal import always_eventually", "", "",
             "class Rand(Spec):",
             f"    check_deadlock = {draw(st.booleans())}"]
    lines += [f"    v{i} = Int(0, {hi})" for i, hi in enumerate(his)]
    inits = draw(st.lists(st.tuples(*(st.integers(0, hi) for hi in his)), max_size=3))
    if inits:
        lines += ["", "    def init_states(self):"]
        lines += [f"        yield {dict((f'v{i}', v) for i, v in enumerate(vals))!r}"
                  for vals in inits]
    for a in range(draw(st.integers(1, 5))):
        g, tgt, src = (draw(st.integers(0, n - 1)) for _ in range(3))
        op = draw(st.sampled_from(["<", "==", "!="]))
        kind = draw(st.sampled_from(["inc", "inc", "reset", "copy"]))
        effect = {"inc": f"where(s.v{tgt} < {his[tgt]}, s.v{tgt} + 1, 0)", "reset": "0",
                  "copy": f"where(s.v{src} <= {his[tgt]}, s.v{src}, {his[tgt]})"}[kind]
        fair = draw(st.sampled_from(["", "", '(fair="weak")', '(fair="strong")']))
        lines += ["", f"    @action{fair}", f"    def A{a}(self, s, t):",
                  f"        t.v{tgt} = {effect}",
                  f"        return s.v{g} {op} {draw(st.integers(0, his[g]))}"]
    lines += ["", "    @invariant", "    def SumBounded(self, s):",
              f"        return s.v0 + s.v{n - 1} <= {draw(st.integers(max(his), 2 * max(his)))}"]
    if draw(st.integers(0, 3)) == 0:
        lines += ["", "    @constraint", "    def Small(self, s):",
                  f"        return s.v{draw(st.integers(0, n - 1))} != {draw(st.integers(0, 3))}"]
    if draw(st.booleans()):
        v = draw(st.integers(0, n - 1))
        lines += ["", "    @action_property", "    def Grows(self, s, t):",
                  f"        return t.v{v} >= s.v{v}"]
    if draw(st.integers(0, 3)):
        lines += ["", "    @always_eventually", "    def Back(self, s):",
                  f"        return s.v{draw(st.integers(0, n - 1))} == 0"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Outside the working directory: the loader names these modules
    ``_modelcheck_spec_...``, which a worker finds again by the file's path only."""
    return tmp_path_factory.mktemp("workerspecs")


_files = iter(range(10**6))

#: a walk that climbs to x = 9 (in at most 15 steps) may take Trap, a fair lasso that
#: violates <>[](trap = 0): seed 2 finds one in walk 51, several rounds into the run
TRAP_SOURCE = """\
from modelcheck import Int, Spec, action
from modelcheck.temporal import eventually_always


class Rand(Spec):
    check_deadlock = False
    x = Int(0, 9)
    trap = Int(0, 1)

    @action
    def Up(self, s, t):
        t.x = s.x + 1
        return (s.x < 9) & (s.trap == 0)

    @action
    def Down(self, s, t):
        t.x = s.x - 1
        return (s.x > 0) & (s.trap == 0)

    @action
    def Trap(self, s, t):
        t.trap = 1
        return (s.x == 9) & (s.trap == 0)

    @eventually_always
    def Free(self, s):
        return s.trap == 0
"""


@settings(max_examples=3, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow,
                                 HealthCheck.function_scoped_fixture])
@given(spec_source(), st.integers(0, 2**16), st.integers(2, 40))
@example(TRAP_SOURCE, 2, 2)
def test_worker_processes_give_the_one_worker_result(spec_dir: Path, source: str, seed: int,
                                                     width: int) -> None:
    """--workers 1, 2 and 3 on a random spec file: the same JSON as one worker."""
    path = spec_dir / f"rand_{next(_files)}.py"
    path.write_text(source)
    cls = load_spec_class(f"{path}:Rand")
    assert cls.__module__.startswith("_modelcheck_spec_")
    cfg = SimConfig(seed=seed, runs=200, depth=15, time_limit=None, walks_per_batch=width,
                    shrink_states=500)
    one = figures(Simulator(cls(), sim=cfg).run())
    for n in (1, 2, 3):
        r = ParallelSimulator(cls(), sim=cfg, workers=n).run()
        assert figures(r) == one, (n, source)
        if n > 1:
            assert r.simulation["workers"] == n and r.memory["rounds"] >= 1
            assert r.simulation["workers_cpu_seconds"] > 0


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "modelcheck", "simulate", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)


def test_bug_variant_same_violation_walk_and_trace() -> None:
    """KRaftLifecycleBugStaleEpoch through the command line: --workers 2 finds the
    violation of the same walk, shrinks it to the same trace and counts the same walks
    0 .. v as one worker (the violating round is counted again up to v)."""
    args = ["specs/kraft_lifecycle.py:KRaftLifecycleBugStaleEpoch", "--seed", "11",
            "--runs", "1500", "--batch-size", "64", "--format", "json", "-q"]
    one, two = cli(*args), cli(*args, "--workers", "2")
    assert one.returncode == two.returncode == 1, two.stderr
    a, b = json.loads(one.stdout), json.loads(two.stdout)
    assert b["simulation"]["workers"] == 2 and "workers" not in a["simulation"]
    assert figures(b) == figures(a)
    assert b["violation"]["trace"] == a["violation"]["trace"]
    assert b["simulation"]["walks"] == b["simulation"]["violation_walk"] + 1 < 1500
    # rounds of 2 x 64, 2 x 128, 2 x 256 walks: walk v is past the first round
    assert b["memory"]["rounds"] >= 2


def test_spec_error_in_a_worker_reads_as_with_one_worker() -> None:
    """The action raises once x reaches 2, in the walks (a worker's): one paragraph,
    exit 2, word for word the one-worker message, no traceback."""
    args = ["tests/bad_specs/raises_in_action.py", "--runs", "50", "-q"]
    one, two = cli(*args), cli(*args, "--workers", "2")
    assert one.returncode == two.returncode == 2
    assert two.stderr == one.stderr
    assert two.stderr.startswith("error: ") and two.stderr.count("\n") == 1
    assert "the broker table is corrupt" in two.stderr and "Traceback" not in two.stderr


def assert_group_ends(group: int) -> None:
    """No process of the command's group outlives it: the workers are gone, and the
    helpers (the fork server, the resource tracker) end once they see the command end
    (an ended one may wait for init to reap it)."""
    deadline = time.monotonic() + 30
    while True:
        ps = subprocess.run(["ps", "-o", "stat=,cmd=", "-g", str(group)],
                            capture_output=True, text=True, check=False).stdout
        if all(line.startswith("Z") for line in ps.splitlines()):
            return
        assert time.monotonic() < deadline, f"processes left running:\n{ps}"
        time.sleep(0.05)  # polling the helpers' exit


PROGRESS = re.compile(r"\[\s*[\d.]+s\] walks\s+([\d,]+) ")


def test_ctrl_c_reports_the_walks_finished() -> None:
    """SIGINT to the whole process group (as a terminal sends it) after the first
    round: the workers stop between two steps, the run reports the walks finished
    (status incomplete, exit 3), no traceback, and no worker is left running."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen([sys.executable, "-m", "modelcheck", "simulate",
                          "specs/kraft_broker.py", "--time", "120", "--workers", "2",
                          "--format", "json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
                         start_new_session=True)
    assert p.stderr is not None
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = p.stderr.readline()
        lines.append(line)
        if not line or PROGRESS.match(line):  # a round's progress line (or the end)
            break
    m = PROGRESS.match(lines[-1])
    assert m, "".join(lines)
    first = int(m.group(1).replace(",", ""))
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 3, err
    assert "Traceback" not in err
    assert_group_ends(p.pid)
    d = json.loads(out)
    assert (d["status"], d["reason"]) == ("incomplete", "interrupted")
    assert d["simulation"]["stopped_by"] == "interrupted"
    assert d["simulation"]["walks"] >= first > 0
    assert sum(d["simulation"]["walk_ends"].values()) == d["simulation"]["walks"]


# ---------------------------------------------------------------------- the option
def test_help_names_the_option() -> None:
    r = cli("--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "--workers N" in text and "'auto'" in text and "[default: 1]" in text


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", ""])
def test_bad_worker_counts_are_refused(value: str) -> None:
    r = cli("specs/kraft_broker.py", "--runs", "5", "-q", "--workers", value)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"error: --workers {value}: expected a positive whole number of "
                        "processes, or 'auto' (the cores available).\n")


def test_workers_auto_is_the_cores_available() -> None:
    assert parse_workers("auto") == parse_workers(" AUTO ") == available_cores()
    assert available_cores() == len(os.sched_getaffinity(0))
    assert parse_workers("3") == parse_workers(3) == 3
    for bad in (0, -2, True, "x"):
        with pytest.raises(UsageError, match="--workers"):
            parse_workers(bad)  # type: ignore[arg-type]
    r = cli("examples/counter.py", "--runs", "20", "-q", "--format", "json",
            "--workers", "auto")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["simulation"].get("workers", 1) == available_cores()


def test_a_spec_workers_cannot_load_is_refused() -> None:
    class Local(Spec):
        x = Int(0, 2)
        check_deadlock = False

        @action
        def Inc(self, s: Any, t: Any) -> Any:
            t.x = s.x + 1
            return s.x < 2

    with pytest.raises(UsageError, match="module level"):
        ParallelSimulator(Local(), sim=SimConfig(runs=5), workers=2)
    r = ParallelSimulator(Local(), sim=SimConfig(runs=5, time_limit=None), workers=1).run()
    assert r.status == "ok" and r.simulation["walks"] == 5



def test_a_worker_that_dies_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """A worker process killed mid-round (here: it exits once x reaches 2): one
    paragraph, exit 2, the other workers stopped."""
    spec = tmp_path / "dies.py"
    spec.write_text(textwrap.dedent('''\
        import os

        import numpy as np

        from modelcheck import Int, Spec, action


        class Dies(Spec):
            x = Int(0, 4)
            check_deadlock = False

            @action
            def Inc(self, s, t):
                if np.any(s.x == 2):
                    os._exit(9)
                t.x = s.x + 1
                return s.x < 4
        '''))
    r = cli(f"{spec}:Dies", "--runs", "50", "-q", "--workers", "2")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: a worker process ended abruptly while running walks")
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_spawned_workers_give_the_same_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no fork server, the workers are spawned: the same result."""
    import multiprocessing

    from examples.counter import Counter
    from modelcheck import simrounds

    monkeypatch.setattr(simrounds, "_context", lambda: multiprocessing.get_context("spawn"))
    cfg = SimConfig(seed=4, runs=60, depth=10, time_limit=None, walks_per_batch=4)
    r = ParallelSimulator(Counter(), sim=cfg, workers=2).run()
    assert r.simulation["workers"] == 2
    assert figures(r) == figures(Simulator(Counter(), sim=cfg).run())


def test_a_script_without_a_main_guard_runs_workers(tmp_path: Path) -> None:
    """The workers never run the parent's main script again, so a script that calls
    the simulator at its top level (no ``if __name__ == "__main__"``) works."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""\
        from examples.counter import Counter
        from modelcheck.simrounds import ParallelSimulator
        from modelcheck.simulate import SimConfig

        sim = SimConfig(seed=1, runs=30, time_limit=None, walks_per_batch=4)
        r = ParallelSimulator(Counter(), sim=sim, workers=2).run()
        print("result", r.status, r.simulation["walks"], r.memory["rounds"])
        """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300,
                       check=False)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("result") == 1 and p.stdout.startswith("result ok 30 ")
    assert "Traceback" not in p.stderr
