"""What a new user tripped on: expressions that end in a traceback, and smaller frictions.

Every bad input here is one paragraph (``error: ...``) with exit code 2 on the command
line, HTTP 400 in the explorer, never a traceback; every answer is compared with an
oracle computed here from the trace, the spec's instances or a second spec.
"""

from __future__ import annotations

import enum
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck import Const, Enum, Int, Spec, action, invariant
from modelcheck.cli import cli
from modelcheck.errors import SpecDefinitionError
from modelcheck.explorer import Explorer
from modelcheck.trace import evaluate as evaluation
from modelcheck.trace import load_trace

BUG = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def itf(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("newuser") / "t.itf.json"
    r = CliRunner().invoke(cli, ["check", BUG, "-q", "--trace-out", str(path)])
    assert r.exit_code == 1, r.output
    return str(path)


def _one_paragraph(r) -> str:  # type: ignore[no-untyped-def]
    """The error of a finished command: exit 2, one ``error:`` paragraph on stderr."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    err = r.stderr.strip()
    assert err.startswith("error: ") and "\n\n" not in err, err
    assert "Traceback" not in r.output and "Error:" not in err.split(":", 1)[1][:40]
    return err


def _chain(n: int) -> str:
    return " + ".join(["logEnd"] * n)


# ------------------------------------------------------------------ expressions
def test_a_deep_expression_is_one_paragraph(runner: CliRunner, itf: str) -> None:
    r = runner.invoke(cli, ["trace", "eval", itf, _chain(1000)])
    err = _one_paragraph(r)
    assert "nested" in err and f"at most {evaluation.MAX_DEPTH} levels" in err
    assert "sum([" in err
    assert "RecursionError" not in err
    # just under the bound it is evaluated, and right: n times logEnd in every state
    n = evaluation.MAX_DEPTH - 10
    r = runner.invoke(cli, ["trace", "eval", itf, _chain(n)])
    assert r.exit_code == 0, r.output
    want = [n * st.state["logEnd"] for st in load_trace(itf).steps]
    got = [int(line.rsplit(": ", 1)[1]) for line in r.stdout.splitlines()]
    assert got == want


@pytest.mark.parametrize("expr, what", [("lambda: 1", "a function"),
                                        ("[1, lambda: 2]", "a list holding a function"),
                                        ("(x for x in range(3))", "a generator")])
def test_a_value_that_is_not_data_is_one_paragraph(runner: CliRunner, itf: str, expr: str,
                                                   what: str) -> None:
    err = _one_paragraph(runner.invoke(cli, ["trace", "eval", itf, expr]))
    assert f"gave {what}, which is not a value" in err
    assert "Pickl" not in err and "0x" not in err


@pytest.mark.parametrize("command", [["trace", "eval", "{itf}", "1"],
                                     ["check", BUG, "-q"],
                                     ["simulate", BUG, "-q", "--runs", "1"]])
@pytest.mark.parametrize("size, shown", [("1", "1 byte"), ("1K", "1,024 bytes"),
                                         ("1000000", "1,000,000 bytes")])
def test_a_memory_limit_below_a_mebibyte_is_refused(runner: CliRunner, itf: str,
                                                    command: list[str], size: str,
                                                    shown: str) -> None:
    args = [a.format(itf=itf) for a in command]
    r = runner.invoke(cli, [*args, "--memory-limit", size])
    assert r.exit_code == 2, r.output
    assert shown in r.stderr and "at least 1M" in r.stderr
    assert "Checking" not in r.stderr and "Simulating" not in r.stderr
    r = runner.invoke(cli, [*args, "--memory-limit", "1M"])
    assert r.exit_code in (0, 1), r.output


def test_the_memory_stop_names_the_limit_in_its_unit(itf: str) -> None:
    from modelcheck.trace.evaluate import EvaluationLimitError, Limits, evaluate

    with pytest.raises(EvaluationLimitError) as e:
        evaluate(load_trace(itf), "[0] * 10**8", limits=Limits(seconds=30,
                                                               memory=3 << 19))
    assert "needed more than 1.5 MiB of memory" in str(e.value)


def test_the_explorer_answers_400_to_a_bad_expression() -> None:
    from explorehelp import get, path_body, post, served, session_for

    session = session_for(BUG)
    with served(session) as url:
        path = path_body(get(url + "api/initial")["states"][:1])
        for expr, words in ((_chain(1000), "nested"), ("lambda: 1", "not a value")):
            status, r = post(url + "api/eval", {"expr": expr, "path": path})
            assert status == 400 and words in r["error"], (status, r)
        status, r = post(url + "api/eval", {"expr": _chain(3), "path": path})
        assert status == 200 and r["values"] == ["0"], r  # logEnd is 0 initially


# ------------------------------------------------------------------ frictions
def test_a_local_resume_says_where_it_resumes(runner: CliRunner, tmp_path: Path) -> None:
    cp = str(tmp_path / "cp")
    first = runner.invoke(cli, ["check", "specs/kraft_broker.py", "-q", "--max-depth", "4",
                                "--checkpoint-dir", cp, "--format", "json"])
    assert first.exit_code == 3, first.output
    stored = json.loads(first.stdout)["distinct_states"]  # levels 0..4
    r = runner.invoke(cli, ["check", "specs/kraft_broker.py", "-q", "--checkpoint-dir", cp,
                            "--resume"])
    assert r.exit_code == 0, r.output
    assert f"resuming at level 4 ({stored:,} states)" in r.stderr.splitlines()
    again = runner.invoke(cli, ["check", "specs/kraft_broker.py", "-q", "--checkpoint-dir",
                                cp, "--resume"])
    assert "holds the run's end (5,353 states)" in again.stderr


@pytest.mark.parametrize("args", [
    ["simulate", BUG, "--runs", "1"],                       # simulate takes none
    ["check", "specs/no_such_spec.py"],                     # a spec that does not load
    ["check", BUG, "--invariant", "NoSuchProperty"],        # a check that is refused
])
def test_a_refused_checkpoint_dir_creates_no_directory(runner: CliRunner, tmp_path: Path,
                                                       args: list[str]) -> None:
    cp = tmp_path / "a" / "cp"
    r = runner.invoke(cli, [*args, "-q", "--checkpoint-dir", str(cp)])
    assert r.exit_code == 2, r.output
    assert os.listdir(tmp_path) == []
    if args[0] == "check":  # nor does --spill-dir (made when the levels are stored)
        r = runner.invoke(cli, [*args, "-q", "--spill-dir", str(cp)])
        assert r.exit_code == 2, r.output
        assert os.listdir(tmp_path) == []


def test_explore_refuses_a_run_of_another_spec(tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    r = CliRunner().invoke(cli, ["check", "examples/counter.py:CounterBug", "-q", "--out", out])
    assert r.exit_code == 1
    try:
        p = subprocess.run([sys.executable, "-m", "modelcheck", "explore",
                            "examples/counter.py", "--run", out, "--port", "0"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("explore served a run of another spec")
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"error: --run {out}: the run is of CounterBug, not of Counter")
    assert "examples/counter.py:CounterBug" in p.stderr


def _domain_text(values: list[int]) -> str:
    """The oracle's rendering of a set of parameter values (TLA+ notation)."""
    if len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}"
    return "{" + ", ".join(map(str, values)) + "}"


def test_inspect_shows_a_callable_domain_by_its_values() -> None:
    from modelcheck.loader import bind_spec

    target = "specs/kraft_metadata.py"
    runs = [subprocess.run([sys.executable, "-m", "modelcheck", "inspect", target, *fmt],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout
            for fmt in ([], [], ["--format", "json"], ["--format", "json"])]
    assert runs[0] == runs[1] and runs[2] == runs[3]  # the same from run to run
    assert "0x" not in runs[0] + runs[2] and "<function" not in runs[0] + runs[2]
    spec = bind_spec(target, ())
    actions = {a["name"]: a["params"] for a in json.loads(runs[2])["actions"]}
    for name in ("Write", "Failover", "LoadSnapshot"):
        decl = type(spec)._actions[name]
        for p, dom in decl.params.items():
            if not callable(dom):
                continue
            values = sorted({v for a in spec.actions if a.decl is decl
                             for q, v in a.params if q == p})
            assert actions[name][p] == _domain_text(values), (name, p)
            assert f"{p} \\in {_domain_text(values)}" in runs[0]


class Colour(enum.IntEnum):
    RED = 0
    GREEN = 1
    BLUE = 2


class Paint(Spec):
    check_deadlock = False
    c = Enum(Colour)
    n = Int(0, 3)

    @action(v=Colour)
    def Set(self, s, t, v):
        t.c = v
        t.n = s.n + 1
        return (s.n < 3) & (s.c != v)

    @invariant
    def NotBlueTwice(self, s):
        return ~((s.c == Colour.BLUE) & (s.n >= 2))


class PaintByRange(Paint):
    """The oracle: the same action over range(3) (the members' values)."""

    @action(v=range(3))
    def Set(self, s, t, v):
        t.c = v
        t.n = s.n + 1
        return (s.n < 3) & (s.c != v)


def test_an_intenum_parameter_ranges_over_its_members() -> None:
    spec = Paint()
    assert [dict(a.params)["v"] for a in spec.actions] == [int(m) for m in Colour]
    got, want = Explorer(spec).run(), Explorer(PaintByRange()).run()
    assert (got.status, got.distinct_states, got.generated_states) == (
        want.status, want.distinct_states, want.generated_states)
    assert got.violation.property == "NotBlueTwice"
    assert [s.params for s in got.violation.trace] == [s.params for s in
                                                        want.violation.trace]


def test_an_empty_domain_names_the_constant() -> None:
    class Empty(Spec):
        N = Const(1)
        x = Int(1, N - 1)

        @action
        def Stay(self, s, t):
            t.x = s.x
            return s.x < 0

    with pytest.raises(SpecDefinitionError) as e:
        Empty().layout  # noqa: B018 - binding the layout reports the empty domain
    assert "N - 1" in str(e.value) and "<const>" not in str(e.value)


def test_the_fairness_list_is_printed_once(runner: CliRunner) -> None:
    r = runner.invoke(cli, ["check", "examples/tla/live_hour_clock.py", "-q"])
    assert r.exit_code == 0, r.output
    props = json.loads(runner.invoke(cli, ["check", "examples/tla/live_hour_clock.py",
                                           "-q", "--format", "json"]).stdout)["liveness"]
    assert len(props["properties"]) > 10
    assert all(f == ["WF(HCnxt)"] for f in props["fairness"].values())
    assert r.output.count("WF(HCnxt)") == 1 and "Fairness: WF(HCnxt)" in r.output
    r = runner.invoke(cli, ["inspect", "specs/kraft_lease.py:KRaftLeaseLive"])
    fair = json.loads(runner.invoke(cli, ["inspect", "specs/kraft_lease.py:KRaftLeaseLive",
                                          "--format", "json"]).stdout)["fairness"]
    assert len(fair) > 5
    assert all(r.output.count(c) == 1 for c in fair), r.output


@pytest.mark.parametrize("name, fmt", [("g.unknown", None), ("g", None), ("g.gv", "dot"),
                                       ("g.GRAPHML", "graphml"), ("g.json", "json")])
def test_graph_takes_its_format_from_a_known_suffix_only(runner: CliRunner, tmp_path: Path,
                                                        name: str, fmt: str | None) -> None:
    out = tmp_path / name
    r = runner.invoke(cli, ["graph", "examples/counter.py", "-o", str(out)])
    if fmt is None:
        err = _one_paragraph(r)
        assert str(out) in err and "--format" in err
        assert os.listdir(tmp_path) == []
        r = runner.invoke(cli, ["graph", "examples/counter.py", "-o", str(out), "--format",
                                "json"])
        assert r.exit_code == 0 and json.loads(out.read_text())
        return
    assert r.exit_code == 0, r.output
    assert re.search(rf"written to {re.escape(str(out))} \({fmt}\)", r.stderr)
