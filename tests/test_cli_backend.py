"""The run commands by mode and backend: ``check`` and ``simulate`` take ``--backend
local|spark``; ``modelcheck spark`` is the alias of ``check --backend spark`` (same JSON);
the Spark backend's options are refused without ``--backend spark`` and the local
backend's with it, each as one paragraph with exit code 2 naming the option; and
``simulate`` offers no option that it refuses when it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from modelcheck.cli import SimOptions, cli
from modelcheck.cli_options import SparkOption
from modelcheck.config import CheckConfig
from modelcheck.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
SPEC = "examples/counter.py"


def command(name: str) -> click.Command:
    """The real command ``name`` (a lazily loaded plugin command loaded)."""
    ctx = click.Context(cli)
    cmd = cli.get_command(ctx, name)
    assert cmd is not None
    load = getattr(cmd, "load", None)
    return load() if load is not None else cmd


def options(cmd: click.Command) -> list[click.Option]:
    """The options ``cmd`` offers in its ``--help`` (hidden ones and --help left out)."""
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


def argv(opt: click.Option) -> list[str]:
    """``opt`` given on a command line with a value its type accepts (not its default,
    so that it counts as given)."""
    name = max(opt.opts, key=len)
    if opt.is_flag:
        return [name]
    t = opt.type
    if isinstance(t, click.Choice):
        return [name, next(c for c in t.choices if c != opt.default)]
    if isinstance(t, click.IntRange | click.FloatRange):
        return [name, str(int(t.min or 0) + 2)]
    if opt.metavar == "K=V":
        return [name, "spark.x=1"]
    if opt.metavar == "URL":
        return [name, "local[2]"]
    return [name, "x"]


def one_paragraph_error(out: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, out
    return lines[0]


# ------------------------------------------------------------ Spark-only options
SPARK_ONLY = [(name, opt) for name in ("check", "simulate")
              for opt in command(name).params if isinstance(opt, SparkOption)]


def test_the_spark_options_are_those_of_the_alias() -> None:
    """``check`` and ``simulate`` offer, as Spark backend options, exactly the options
    ``modelcheck spark`` has beyond theirs (but --simulate)."""
    alias = {p.name for p in options(command("spark"))} - {"simulate", "help"}
    local = {p.name for n in ("check", "simulate") for p in options(command(n))
             if not isinstance(p, SparkOption)}
    assert alias - local == {opt.name for _, opt in SPARK_ONLY}
    assert len(SPARK_ONLY) >= 10  # (the table is not empty by mistake)


@pytest.mark.parametrize("backend", [[], ["--backend", "local"]], ids=["default", "local"])
@pytest.mark.parametrize("name,opt", SPARK_ONLY, ids=[f"{n}-{o.name}" for n, o in SPARK_ONLY])
def test_a_spark_option_needs_backend_spark(runner, name: str, opt: click.Option,
                                            backend: list[str]) -> None:
    args = [name, SPEC, *backend, *argv(opt), "-q"]
    r = runner.invoke(cli, args)
    assert r.exit_code == 2, (args, r.output)
    error = one_paragraph_error(r.output)
    assert max(opt.opts, key=len) in error and "--backend spark" in error, error


def test_spark_options_in_json_are_a_json_error(runner) -> None:
    r = runner.invoke(cli, ["check", SPEC, "--master", "local[2]", "--format", "json", "-q"])
    assert r.exit_code == 2
    d = json.loads(r.stdout)
    assert d["status"] == "error" and "--master" in d["error"]


@pytest.mark.parametrize("args,option", [
    (["check", "--workers", "2"], "--workers"),
    (["check", "--workers", "auto"], "--workers"),
    (["check", "--spill-dir", "x"], "--spill-dir"),
    (["simulate", "--workers", "2"], "--workers"),
])
def test_a_local_option_is_refused_on_spark(runner, args: list[str], option: str) -> None:
    """Refused before Spark (or the spec) is touched: no session is started."""
    r = runner.invoke(cli, [args[0], SPEC, "--backend", "spark", *args[1:], "-q"])
    assert r.exit_code == 2, r.output
    error = one_paragraph_error(r.output)
    assert error.startswith(f"error: {option} ") and "--backend local" in error, error


def test_help_lists_the_spark_options_apart(runner) -> None:
    for name in ("check", "simulate"):
        text = runner.invoke(cli, [name, "--help"]).output
        general, _, spark = text.partition("\nSpark backend options (only with --backend spark):")
        assert spark, text
        for opt in command(name).params:
            if isinstance(opt, click.Option) and not opt.hidden:
                flag = max(opt.opts, key=len)
                section = spark if isinstance(opt, SparkOption) else general
                assert f" {flag} " in section or f" {flag}\n" in section, (name, flag)
    assert "alias of `check --backend spark`" in " ".join(
        runner.invoke(cli, ["spark", "--help"]).output.split())


def test_a_local_run_refuses_a_hadoop_uri(runner, tmp_path: Path) -> None:
    """With any number of workers, and without leaving a directory named after the
    URI's scheme behind (one worker was refused, several made ``s3a:/x/y`` here)."""
    spec = str(ROOT / SPEC)
    with runner.isolated_filesystem(temp_dir=tmp_path) as cwd:
        for workers in ("1", "2"):
            r = runner.invoke(cli, ["check", spec, "--checkpoint-dir", "s3a://b/run",
                                    "--workers", workers, "-q"])
            assert r.exit_code == 2, r.output
            assert "--backend spark" in one_paragraph_error(r.output)
        assert os.listdir(cwd) == []


# ------------------------------------------------------------ simulate's options
def test_simulate_offers_no_option_it_refuses() -> None:
    """Every option ``simulate --help`` offers, given alone, is taken by the simulation
    (:meth:`SimOptions.resolve`, where both backends refuse the options of a run that
    keeps levels): none is offered only to be refused."""
    for opt in options(command("simulate")):
        sim = SimOptions(seed=0, runs=1, depth=None, time_limit=None, weights=(),
                         no_shrink=False, shrink_states=0, given=frozenset({opt.name}))
        try:
            sim.resolve(CheckConfig(), "simulate")
        except UsageError as e:
            pytest.fail(f"simulate offers {max(opt.opts, key=len)} but refuses it: {e}")


@pytest.mark.parametrize("opt", [o for o in options(command("check"))
                                 if o.name not in {p.name for p in
                                                   command("simulate").params}],
                         ids=lambda o: o.name)
def test_simulate_says_why_it_takes_no_check_option(runner, opt: click.Option) -> None:
    """An option of ``check`` that ``simulate`` does not offer is a usage error saying
    why, not click's bare "No such option"."""
    r = runner.invoke(cli, ["simulate", SPEC, "--runs", "1", *argv(opt)])
    assert r.exit_code == 2, r.output
    assert f"simulate does not take {max(opt.opts, key=len)}:" in r.output, r.output


def test_depth_is_still_taken_as_max_depth(runner) -> None:
    def walks(*args: str) -> dict[str, Any]:
        r = runner.invoke(cli, ["simulate", SPEC, "--runs", "3", "--format", "json", "-q",
                                *args])
        assert r.exit_code == 0, r.output
        d = json.loads(r.stdout)
        return {k: d[k] for k in ("depth", "distinct_states", "generated_states")}

    assert walks("--depth", "2") == walks("--max-depth", "2") != walks()


# ------------------------------------------------------------ the alias on Spark
def run_json(*args: str) -> dict[str, Any]:
    p = subprocess.run([sys.executable, "-m", "modelcheck", *args, "--format", "json", "-q"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode in (0, 1), p.stderr[-2000:]
    return json.loads(p.stdout)


def timeless(d: Any) -> Any:
    """A report without what depends on timing: every ``seconds`` and ``*_per_second``
    figure, and the memory measured, at any depth."""
    if isinstance(d, dict):
        return {k: timeless(v) for k, v in d.items()
                if k not in ("seconds", "memory") and not k.endswith("_per_second")}
    if isinstance(d, list):
        return [timeless(v) for v in d]
    return d


BUG = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"


@pytest.mark.spark
@pytest.mark.parametrize("mode,alias", [
    (["check", "examples/flip.py"], ["spark", "examples/flip.py"]),
    (["simulate", BUG, "--runs", "500", "--seed", "3"],
     ["spark", BUG, "--simulate", "--runs", "500", "--seed", "3"]),
], ids=["check", "simulate"])
def test_backend_spark_is_the_spark_command(mode: list[str], alias: list[str]) -> None:
    """The same JSON (times and memory aside) on a spec with a violation."""
    on = ["--master", "local[1]"]
    a = run_json(*mode, "--backend", "spark", *on)
    b = run_json(*alias, *on)
    assert a["backend"].startswith("spark") and a["status"] == "violation", a
    assert timeless(a) == timeless(b)
