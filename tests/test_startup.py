"""Start-up: the command line imports only what the command needs.

``modelcheck --help`` and ``--version`` import no numpy (nor anything heavier);
``check`` of a spec without temporal properties imports numpy but no web server,
networkx, scipy or pyspark; ``import modelcheck`` for a spec likewise. Measured by the
modules a fresh interpreter has imported (``python -X importtime``), never by wall time.
The group's table of lazily loaded subcommands is checked against the real commands.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parent.parent

#: packages a command must not import unless it needs them
HEAVY = {"numpy", "networkx", "scipy", "starlette", "uvicorn", "anyio", "pyspark", "py4j"}
SERVER = HEAVY - {"numpy"}


def imported(*args: str) -> set[str]:
    """The top-level packages ``python -X importtime ARGS`` imports (from its report)."""
    p = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    names = set()
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if not name.startswith("package"):
                names.add(name.split(".")[0])
    assert names, p.stderr[-2000:]
    return names


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["check", "--help"]])
def test_help_and_version_import_no_numpy(args: list[str]) -> None:
    got = imported("-m", "modelcheck", *args)
    assert "click" in got and "modelcheck" in got  # the report is read
    assert not got & HEAVY, sorted(got & HEAVY)


def test_check_imports_no_server_or_graph_library() -> None:
    got = imported("-m", "modelcheck", "check", "examples/counter.py", "-q")
    assert "numpy" in got
    assert not got & SERVER, sorted(got & SERVER)


def test_small_liveness_check_imports_no_scipy() -> None:
    # scipy (~0.35 CPU s) is for the SCCs of graphs past stategraph.SMALL_GRAPH
    got = imported("-m", "modelcheck", "check", "examples.tla.live_hour_clock:LiveHourClock",
                   "-q")
    assert "numpy" in got
    assert "scipy" not in got


def test_check_imports_no_package_metadata_or_secrets() -> None:
    # importlib.metadata (the invariants library's entry points, looked up only for a
    # name the spec lacks) and secrets (temporary names) cost ~20 ms at start-up
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "modelcheck", "check",
                        "examples/counter.py", "-q"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    names = {line.rsplit("|", 1)[1].strip() for line in p.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    assert "numpy" in names, p.stderr[-2000:]
    assert not names & {"importlib.metadata", "secrets"}, sorted(names)


def test_import_modelcheck_for_a_spec_is_light() -> None:
    assert not imported("-c", "import modelcheck") & HEAVY
    got = imported("-c", "from modelcheck import Spec, Int, action, invariant, check")
    assert "numpy" in got and not got & SERVER, sorted(got & SERVER)


def test_command_line_module_imports_no_numpy() -> None:
    code = ("import sys, modelcheck.cli; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert "click" in out and not set(out) & HEAVY, sorted(set(out) & HEAVY)


def _help(group: click.Group) -> str:
    ctx = click.Context(group, info_name="modelcheck")
    return group.get_help(ctx)


def test_lazy_short_helps_are_the_commands_own() -> None:
    """``modelcheck --help`` with the placeholders reads exactly as with the real
    commands, and every placeholder loads a command of its name."""
    from importlib.metadata import entry_points

    from modelcheck import cli as cli_module

    cli_module._load_plugins()
    lazy = dict(cli_module.cli.commands)
    # the placeholders as the module makes them (a command invoked earlier in this
    # process, e.g. by another test, has replaced its placeholder in cli.commands)
    for name, (target, short) in cli_module.LAZY_COMMANDS.items():
        lazy[name] = cli_module._LazyCommand(name, target, short)
    for ep in entry_points(group="modelcheck.commands"):
        lazy[ep.name] = cli_module._LazyCommand(ep.name, ep.value,
                                                cli_module.PLUGIN_HELP.get(ep.name))
    placeholders = {n: c for n, c in lazy.items() if isinstance(c, cli_module._LazyCommand)}
    as_made = click.Group("modelcheck", commands=lazy, help=cli_module.cli.help,
                          epilog=cli_module.cli.epilog, params=cli_module.cli.params)
    assert set(cli_module.LAZY_COMMANDS) <= set(placeholders)
    assert "spark" in placeholders  # the plugin, listed without importing it
    real = click.Group("modelcheck", help=cli_module.cli.help, epilog=cli_module.cli.epilog,
                       params=cli_module.cli.params)
    for name, cmd in lazy.items():
        loaded = placeholders[name].load() if name in placeholders else cmd
        assert loaded.name == name
        real.add_command(loaded, name)
    for name in placeholders:
        assert name in cli_module.LAZY_COMMANDS or name in cli_module.PLUGIN_HELP, name
    assert _help(as_made) == _help(real)


def test_lazy_subcommands_run() -> None:
    from click.testing import CliRunner

    from modelcheck.cli import cli

    r = CliRunner().invoke(cli, ["graph", "--help"])
    assert r.exit_code == 0 and "Usage: " in r.output and "graph" in r.output
    r = CliRunner().invoke(cli, ["nosuch"])
    assert r.exit_code == 2 and "No such command" in r.output
