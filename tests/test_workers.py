"""``modelcheck check --workers N``: the one-process explorer's result, field by field.

The parallel run (:class:`modelcheck.shards.pool.ParallelExplorer`) is compared with
the one-process explorer (itself compared with the brute-force oracle) on random
specs (hypothesis: 1-4 workers, 1-5 buckets, every level on the workers or small ones
in this process, one- and multi-word states, constraints, ``--max-depth`` and
``--max-states``), on every spec class in ``specs/`` (its safety checks), and through
the command line: Ctrl-C, SIGKILL and ``--resume``, a worker that dies, a spec error in
a worker, and the refusals.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bruteforce import assert_replays, brute_force_check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from killrun import kill_at_level
from randspec import random_spec
from test_view_oracle import view_spec

from modelcheck import Explorer, Int, Result, Spec, action, invariant, where
from modelcheck.checkpoint import MANIFEST
from modelcheck.cli import cli
from modelcheck.config import CheckConfig, parse_workers
from modelcheck.errors import SpecEvaluationError, UsageError
from modelcheck.liveness import split_checks
from modelcheck.shards import engine
from modelcheck.shards.pool import ParallelExplorer, WorkerError

ROOT = Path(__file__).resolve().parent.parent
LADDER = "tests/ladder_spec.py"

COMPARED = ("status", "reason", "distinct_states", "generated_states", "depth", "coverage",
            "violation", "fingerprint", "collision_probability", "state_bits", "checked",
            "symmetry", "config", "backend")


def levels_of(r: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    return [(lv["depth"], lv["frontier"], lv["new"], lv["generated"]) for lv in r["levels"]]


def assert_same(one: Result, many: Result) -> None:
    a, b = one.to_json(), many.to_json()
    for key in COMPARED:
        assert b[key] == a[key], f"{key}: --workers {b[key]!r} != one process {a[key]!r}"
    assert levels_of(b) == levels_of(a)
    assert b["memory"]["workers"] >= 1 and "workers" not in a["memory"]


def parallel(spec: Spec, workers: int, **kw: Any) -> Result:
    kw.setdefault("driver_threshold", 0)
    return ParallelExplorer(spec, workers=workers, **kw).run()


# ---------------------------------------------------------------- random specs
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_spec(), random_spec(wide=True), random_spec(action_constraints=True)),
       st.integers(1, 4), st.integers(1, 5), st.sampled_from([0, 0, 10**9]),
       st.sampled_from([None, None, 0, 2, 5]), st.sampled_from([None, None, 1, 7, 40]))
def test_random_specs_equal_one_process(cls: type[Spec], workers: int, buckets: int,
                                        threshold: int, max_depth: int | None,
                                        max_states: int | None) -> None:
    spec = cls()
    kw: dict[str, Any] = dict(max_depth=max_depth, max_states=max_states)
    one = Explorer(spec, **kw).run()
    many = parallel(spec, workers, buckets=buckets, driver_threshold=threshold, **kw)
    assert_same(one, many)
    if max_depth is None and max_states is None:  # and the oracle, directly
        o = brute_force_check(spec)
        assert (many.status, many.distinct_states, many.depth) == (o.status, o.distinct,
                                                                    o.depth)
        if o.status != "ok":
            assert many.violation is not None
            assert len(many.violation.trace) == len(o.trace)


# ---------------------------------------------------------------- wide states
def _kind(spec: Spec) -> str:
    """The keys a spec's states get (docs/fingerprints.md): the packed state itself up to
    two words, a 128-bit hash beyond."""
    return "exact" if spec.layout.n_words <= 2 else "hash128"


def _level_files(root: Path) -> list[tuple[int, Path]]:
    return sorted((int(p.parent.name[1:]), p) for p in (root / "shards").glob("L0*/b*.fp.npy"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_spec(wide=True), random_spec(wide=True, max_vars=2),
                 random_spec(wide=True, action_constraints=True)),
       st.integers(1, 3), st.integers(1, 4), st.sampled_from([0, 0, 10**9]))
def test_random_wide_specs_keyed_as_one_process(cls: type[Spec], workers: int, buckets: int,
                                                threshold: int) -> None:
    """States of one, two (41-bit variables: exact two-column keys) and three or four
    words (128-bit hashes): the workers' bucket files hold the run's keys, one column or
    two, and the run is the one process's field by field (the fingerprint kind and the
    collision figure, the shortest counterexample). Against the brute-force oracle: the
    verdict, counts and trace length, and, where keys are exact, every level's states
    decoded from the keys in the level files are the oracle's states of that level."""
    spec = cls()
    words = spec.layout.n_words
    one = Explorer(spec).run()
    with tempfile.TemporaryDirectory() as d:
        many = parallel(spec, workers, buckets=buckets, driver_threshold=threshold,
                        checkpoint_dir=d)
        assert_same(one, many)
        n = many.distinct_states
        assert many.fingerprint == _kind(spec)
        assert many.collision_probability == (
            0.0 if words <= 2 else pytest.approx(n * (n - 1) / 2 / 2.0**128))
        files = _level_files(Path(d))
        assert files
        levels: dict[int, set[tuple[int, ...]]] = {}
        for depth, f in files:
            fps = np.load(f)
            assert fps.ndim == (1 if words == 1 else 2)
            has_words = f.with_name(f.name.replace(".fp.", ".w.")).exists()
            assert has_words == (words > 2)
            if words <= 2 and len(fps):
                cells = levels.setdefault(depth, set())
                cells |= {tuple(spec.layout.unpack(w)) for w in spec.layout.words_of_keys(fps)}
    o = brute_force_check(spec)
    assert (many.status, many.distinct_states, many.depth) == (o.status, o.distinct, o.depth)
    if o.status != "ok":
        assert many.violation is not None
        assert len(many.violation.trace) == len(o.trace)
        assert_replays(spec, many.violation.trace)
    elif words <= 2:
        want: dict[int, set[tuple[int, ...]]] = {}
        for c, depth in o.stored:
            want.setdefault(depth, set()).add(tuple(c))
        assert levels == want


def _wide_ladder(words: int) -> type[Spec]:
    """:class:`tests.ladder_spec.Ladder`'s steps over variables wide enough for
    ``words`` words (41-bit ``y`` and ``z``, and a third for three words), with an
    invariant that fails at the last level."""
    ns: dict[str, Any] = {"x": Int(0, 12), "y": Int(0, 2**40 + 6), "z": Int(0, 2**40 + 6),
                          "check_deadlock": False}
    if words == 3:
        ns["pad"] = Int(0, 2**40)

    def climb(self: Any, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        t.y = where(s.y < 6, s.y + 1, 0)
        return s.x < 12

    def climb_z(self: Any, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        t.z = where(s.z < 6, s.z + 1, 0)
        return s.x < 12

    def not_top(self: Any, s: Any) -> Any:
        return (s.x < 12) | (s.y != s.z)

    ns["Climb"] = action(climb)
    ns["ClimbZ"] = action(climb_z)
    ns["NotTop"] = invariant(not_top)
    return type(f"WideLadder{words}", (Spec,), ns)


@pytest.mark.parametrize("words", [2, 3])
def test_wide_states_resume_as_one_process(tmp_path: Path, words: int) -> None:
    """A run of two- and three-word states stopped by --max-depth and resumed from its
    checkpoint (levels, visited shards and successors of two-column keys) gives the
    uninterrupted one-process result: the same counts and the same shortest
    counterexample, rebuilt from the parents' two-column keys."""
    spec = _wide_ladder(words)()
    assert spec.layout.n_words == words
    one = Explorer(spec).run()
    assert one.status == "violation" and one.fingerprint == _kind(spec)
    ck = tmp_path / "ck"
    first = parallel(spec, 2, buckets=3, checkpoint_dir=str(ck), max_depth=5)
    assert (first.depth, first.status) == (5, "incomplete")
    resumed = parallel(spec, 2, buckets=3, checkpoint_dir=str(ck), resume=True)
    a, b = one.to_json(), resumed.to_json()
    for key in ("status", "distinct_states", "generated_states", "depth", "violation",
                "fingerprint", "collision_probability", "coverage"):
        assert b[key] == a[key], key
    assert all(np.load(f).ndim == 2 for _, f in _level_files(ck))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(view_spec(), st.integers(1, 3), st.integers(1, 4))
def test_random_specs_under_a_view_equal_one_process(cls: type[Spec], workers: int,
                                                     buckets: int) -> None:
    """Under a view the state kept of each view decides what comes next: the workers keep
    the one process's (the first reached: smallest parent fingerprint, then action)."""
    spec = cls()
    assert_same(Explorer(spec).run(), parallel(spec, workers, buckets=buckets))


# ---------------------------------------------------------------- every spec
def _spec_classes() -> list[str]:
    out = []
    for path in sorted((ROOT / "specs").glob("*.py")):
        if path.name == "__init__.py":
            continue
        mod = importlib.import_module(f"specs.{path.stem}")
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, Spec) and \
                    obj.__module__ == mod.__name__ and not name.startswith("_"):
                out.append(f"specs.{path.stem}:{name}")
    return out


SPECS = _spec_classes()


@pytest.mark.parametrize("target", SPECS, ids=[t.rsplit(":", 1)[1] for t in SPECS])
def test_every_spec_and_bug_variant_equals_one_process(target: str) -> None:
    """Each spec class with its default constants (its invariants, action properties
    and deadlock check; up to 60,000 states so the suite stays short, which also
    checks the --max-states stop), on two workers with every level on the workers."""
    mod, name = target.split(":")
    spec = getattr(importlib.import_module(mod), name)()
    safety, _ = split_checks(spec, CheckConfig(max_states=60_000))
    assert_same(Explorer(spec, safety).run(), parallel(spec, 2, config=safety))


def test_the_variants_include_violations_and_symmetry() -> None:
    """The parametrisation above is not vacuous: it covers counterexamples (with traces
    longer than one state), symmetric specs and a stop by --max-states."""
    statuses = set()
    for target in ("specs.kraft_lifecycle:KRaftLifecycleBugNoOffsetCheck",
                   "specs.kraft_broker:KRaftBrokerBugGrantWithLeaders"):
        mod, name = target.split(":")
        spec = getattr(importlib.import_module(mod), name)()
        r = parallel(spec, 3)
        statuses.add(r.status)
        assert r.violation is not None and len(r.violation.trace) > 3
    assert statuses == {"violation"}
    assert importlib.import_module("specs.kraft_lifecycle").KRaftLifecycle().symmetry
    assert len(SPECS) >= 40


# ---------------------------------------------------------------- errors
class Boom(Spec):
    """A counter whose action ``Explode`` raises on a batch holding ``x = 3``: a spec
    error in a worker."""

    check_deadlock = False
    x = Int(0, 6)

    @action
    def Inc(self, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        return s.x < 6

    @action
    def Explode(self, s: Any, t: Any) -> Any:
        if np.any(np.asarray(s.x) == 3):
            raise ValueError("boom at three")
        t.x = s.x
        return s.x < 0


def test_a_spec_error_in_a_worker_reads_as_in_one_process() -> None:
    with pytest.raises(SpecEvaluationError) as one:
        Explorer(Boom()).run()
    with pytest.raises(SpecEvaluationError) as many:
        parallel(Boom(), 2)
    assert str(many.value) == str(one.value)
    assert "Explode" in str(many.value) and "x=3" in str(many.value)


def test_a_worker_that_dies_ends_the_run_with_one_paragraph(tmp_path: Path) -> None:
    """A worker killed mid-run (as the kernel's out-of-memory killer would) is a
    WorkerError naming the signal; the run does not hang."""
    from ladder_spec import Ladder

    killed: list[int] = []
    before = set(_children())  # e.g. a Spark gateway another test of this process started

    def progress(p: Any) -> None:
        if killed:
            return
        for child in sorted(set(_children()) - before):
            os.kill(child, signal.SIGKILL)
            killed.append(child)
            break

    with pytest.raises(WorkerError) as e:
        ParallelExplorer(Ladder(L=60, M=40), workers=2, driver_threshold=0,
                         progress=progress).run()
    assert killed
    assert "killed by signal 9 (SIGKILL)" in str(e.value)
    assert set(_children()) <= before  # no worker is left behind


def _children() -> list[int]:
    """The live child processes of this process (Linux)."""
    me = os.getpid()
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == me and fields[0] != "Z":
                out.append(int(d.name))
    return out


def test_workers_end_with_the_run() -> None:
    from ladder_spec import Ladder

    before = set(_children())
    parallel(Ladder(L=8, M=5), 3)
    assert set(_children()) <= before


@pytest.mark.parametrize("stopped", [False, True])
def test_workers_reaped_and_run_directory_removed(tmp_path: Path, monkeypatch: Any,
                                                  stopped: bool) -> None:
    """The workers are told to stop before the temporary run directory is removed and
    reaped after: when the run returns, none is left and neither is the directory."""
    from ladder_spec import Ladder

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = set(_children())
    spec = Ladder(L=12, M=7)
    r = parallel(spec, 2, **({"max_states": 40} if stopped else {}))
    assert r.distinct_states > 0
    assert set(_children()) <= before
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, ok", [("auto", True), ("3", True), (2, True), ("0", False),
                                       ("-1", False), ("two", False), (0, False)])
def test_parse_workers(value: Any, ok: bool) -> None:
    if ok:
        assert parse_workers(value) >= 1
    else:
        with pytest.raises(UsageError, match="--workers"):
            parse_workers(value)


def test_refusals_in_the_library() -> None:
    from ladder_spec import Ladder

    with pytest.raises(UsageError, match="--memory-limit"):
        ParallelExplorer(Ladder(), workers=2, memory_limit=1 << 30)
    with pytest.raises(ValueError, match="workers"):
        CheckConfig(workers=0)


# ---------------------------------------------------------------- command line
def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "modelcheck", "check", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def comparable(d: dict[str, Any]) -> dict[str, Any]:
    d = {k: v for k, v in d.items() if k not in ("seconds", "states_per_second", "memory")}
    d["levels"] = [{k: v for k, v in lv.items() if k != "seconds"} for lv in d["levels"]]
    return d


def test_cli_workers_gives_the_one_process_json() -> None:
    args = [LADDER, "--const", "L=30", "--const", "M=20", "--format", "json", "-q"]
    one, many = _run(*args), _run(*args, "--workers", "2")
    assert one.returncode == many.returncode == 1, many.stderr
    assert comparable(json.loads(many.stdout)) == comparable(json.loads(one.stdout))
    assert json.loads(many.stdout)["memory"]["workers"] == 2


@pytest.mark.parametrize("args, says", [
    (["--workers", "0"], "--workers 0: expected a positive whole number"),
    (["--workers", "x"], "--workers x: expected a positive whole number"),
    (["--workers", "2", "--memory-limit", "1G"], "--memory-limit"),
    (["--workers", "2", "--spill-dir", "/tmp"], "--spill-dir"),
])
def test_cli_refusals(args: list[str], says: str) -> None:
    p = _run(LADDER, *args)
    assert p.returncode == 2
    assert says in p.stderr and "Traceback" not in p.stderr


def test_cli_ctrl_c_gives_the_finished_levels(tmp_path: Path) -> None:
    """SIGINT mid-run: exit 3, status incomplete, the levels finished so far (a prefix
    of the one-process level table), no stack trace, no worker left."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-m", "modelcheck", "check", LADDER, "--const",
                          "L=400", "--const", "M=300", "--workers", "2", "--format", "json"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stderr is not None
    seen: list[str] = []
    for line in p.stderr:
        seen.append(line)
        if " level  20 " in line or "level 20 " in line:
            p.send_signal(signal.SIGINT)
            break
    else:
        pytest.fail("the run ended before level 20: " + "".join(seen))
    out, err = p.communicate(timeout=300)
    assert p.returncode == 3, err
    assert "Traceback" not in err
    got = json.loads(out)
    assert (got["status"], got["reason"]) == ("incomplete", "interrupted")
    from ladder_spec import Ladder

    want = Explorer(Ladder(L=400, M=300)).run().to_json()
    n = len(got["levels"])
    assert n >= 20
    assert levels_of(got) == levels_of(want)[:n]


def test_cli_sigkill_then_resume_gives_the_uninterrupted_result(tmp_path: Path) -> None:
    consts = ["--const", "L=150", "--const", "M=100"]
    ckpt = tmp_path / "ckpt"
    cmd = [sys.executable, "-m", "modelcheck", "check", LADDER, *consts, "--workers", "2",
           "--checkpoint-dir", str(ckpt), "--format", "json", "-q"]
    kill_at_level(cmd, ckpt, 5, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    manifest = json.loads((ckpt / MANIFEST).read_text())
    assert manifest["complete"] is False and 5 <= manifest["state"]["depth"] < 150
    resumed = _run(LADDER, *consts, "--workers", "3", "--checkpoint-dir", str(ckpt),
                   "--resume", "--format", "json")
    assert resumed.returncode == 1, resumed.stderr
    assert "resuming" in resumed.stderr
    plain = _run(LADDER, *consts, "--format", "json", "-q")
    got, want = json.loads(resumed.stdout), json.loads(plain.stdout)
    assert want["status"] == "violation" and want["violation"]["trace_length"] == 151
    assert comparable(got) == comparable(want)
    # the one-process explorer does not take this checkpoint over, and says why
    other = _run(LADDER, *consts, "--checkpoint-dir", str(ckpt), "--resume")
    assert other.returncode == 2 and "--workers" in other.stderr


def test_cli_help_lists_workers() -> None:
    from click.testing import CliRunner

    out = CliRunner().invoke(cli, ["check", "--help"]).output
    assert "--workers N" in out and "'auto'" in out


# ---------------------------------------------------------------- batch sizes
class Grid(Spec):
    """Two counters: level ``d`` holds the ``d + 1`` states with ``x + y == d`` (levels of
    up to 21 states, so that a bucket's part of a level is several batches)."""

    x = Int(0, 20)
    y = Int(0, 20)
    check_deadlock = False

    @action
    def IncX(self, s: Any, t: Any) -> Any:
        t.x = s.x + 1
        return s.x < 20

    @action
    def IncY(self, s: Any, t: Any) -> Any:
        t.y = s.y + 1
        return s.y < 20


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_a_worker_expands_its_bucket_in_batches_of_the_configured_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int) -> None:
    """Every ``Kernel.expand`` call of a worker task has at most ``--batch-size`` states,
    and a task expands its fingerprint range's ``n`` states of a level (every bucket's
    states in the range) in ``ceil(n / batch)`` calls, as the one process expands a
    level: the workers' kernel cost per state is the one process's (recorded from the
    forked workers through a file)."""
    from modelcheck.kernel import Kernel

    calls = tmp_path / "calls.txt"
    expand = Kernel.expand

    inside: list[int] = []  # a one-row batch is expanded as two rows, by a nested call

    def counted(self: Any, words: np.ndarray, *args: Any, **kw: Any) -> Any:
        if not inside:
            with open(calls, "a") as f:
                f.write(f"{len(words)}\n")
        inside.append(1)
        try:
            return expand(self, words, *args, **kw)
        finally:
            inside.pop()

    monkeypatch.setattr(Kernel, "expand", counted)
    # levels cut in equal parts, as _range_sizes counts them (the cuts otherwise follow
    # the tasks' measured CPU: modelcheck.shards.files.balanced_fractions)
    monkeypatch.setattr(engine, "balanced_fractions", lambda *_: None)
    spec = Grid()
    one = Explorer(spec).run()
    calls.unlink(missing_ok=True)
    run = tmp_path / "run"
    many = parallel(spec, 2, buckets=3, batch_size=batch, checkpoint_dir=str(run))
    assert_same(one, many)
    sizes = [int(x) for x in calls.read_text().split()]
    assert sizes and max(sizes) <= batch
    want = sum(-(-n // batch) for n in _range_sizes(run, 3))
    assert len(sizes) == want


def _range_sizes(run: Path, buckets: int) -> list[int]:
    """The states of every fingerprint range (``buckets`` of them) of every level of
    the run directory ``run``, as the expansion tasks split the levels."""
    from modelcheck.shards.files import range_cuts
    from modelcheck.store import key_searchsorted

    root = run / "shards"
    out = []
    for depth in sorted({d for d, _ in _level_files(run)}):
        cuts = range_cuts(root, depth, buckets, buckets)
        keys = [np.load(root / f"L{depth:05d}" / f"b{b:04d}.fp.npy") for b in range(buckets)]

        def at(k: np.ndarray, cut: np.ndarray | None, end: int) -> int:
            return end if cut is None else int(key_searchsorted(k, cut)[0])

        out += [sum(at(k, cuts[i + 1], len(k)) - at(k, cuts[i], 0) for k in keys)
                for i in range(buckets)]
    assert sum(out) == sum(len(np.load(f)) for _, f in _level_files(run))
    return out


def _parallel_flushing(spec: Spec, flush: int, workers: int, buckets: int) -> Any:
    """``parallel`` with the range tasks flushing their successors every ``flush`` rows."""
    import dataclasses

    from modelcheck.shards.backend import ShardedRun

    base = ShardedRun.worker_config

    def small_flushes(self: Any, target: str) -> Any:
        return dataclasses.replace(base(self, target), flush_rows=flush)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ShardedRun, "worker_config", small_flushes)
        return parallel(spec, workers, buckets=buckets, batch_size=2)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(random_spec(), random_spec(wide=True)), st.integers(1, 3),
       st.integers(2, 4), st.integers(1, 5))
def test_ranges_flushed_in_pieces_equal_one_process(cls: type[Spec], workers: int,
                                                    buckets: int, flush: int) -> None:
    """A range task whose successors come in several flushes (each sorted, not the
    whole) sorts them before dropping the visited ones: with a flush every few rows
    the run is still the one process's, and the brute-force oracle's counts."""
    spec = cls()
    many = _parallel_flushing(spec, flush, workers, buckets)
    assert_same(Explorer(spec).run(), many)
    o = brute_force_check(spec)
    assert (many.status, many.distinct_states, many.depth) == (o.status, o.distinct, o.depth)


class Scramble(Spec):
    """Successors in no order of their parents': a range's successors flushed every
    few rows come as runs that are not sorted as a whole."""

    a = Int(0, 15)
    b = Int(0, 15)
    check_deadlock = False

    @action
    def MixA(self, s: Any, t: Any) -> Any:
        t.a = (s.a * 5 + 3) % 16
        return True

    @action
    def MixB(self, s: Any, t: Any) -> Any:
        t.b = (s.b * 7 + s.a) % 16
        return True


@pytest.mark.parametrize("flush", [1, 2, 7])
def test_ranges_flushed_in_unsorted_pieces_equal_one_process(flush: int) -> None:
    """The successors of a range flushed in pieces that are not sorted as a whole are
    sorted before the visited ones are dropped (else states seen before come back)."""
    spec = Scramble()
    many = _parallel_flushing(spec, flush, 2, 2)
    assert_same(Explorer(spec).run(), many)
    o = brute_force_check(spec)
    assert (many.distinct_states, many.depth) == (o.distinct, o.depth)
