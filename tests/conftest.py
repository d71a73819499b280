"""Shared fixtures: the project root on sys.path and a CLI runner; xdist groups.

The suite runs in parallel (``python -m pytest -q -n auto``, what .ci/run does;
pyproject's addopts give ``--dist loadgroup``). Tests are spread one by one over
the workers, except two kinds that are kept together on one worker (an
``xdist_group``), in collection order:

* every test marked ``spark`` (group ``spark``): one Spark session or standalone
  cluster at a time on this 2-core machine, each module's own session started once;
* the tests of a module that share a module-scoped fixture defined in the suite (a
  served explorer, a browser, a checked run, a big exploration): the fixture is built
  once, on one worker, and tests that read what an earlier one left behind still do.

Each worker is a separate process with its own ``tmp_path`` root (pytest names it per
worker), so tests share no temporary path; servers listen on port 0.
"""

from __future__ import annotations

import os
import signal
import sys

import pytest
from click.testing import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# A suite started in the background of a non-interactive shell (`.ci/run &`) inherits
# SIGINT ignored, and so would every process it starts: the Ctrl-C tests would see the
# interrupt dropped, as an ignored SIGINT should be. Take Python's own handler back
# (processes started from here then get the default action).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _group(item: pytest.Item) -> str | None:
    """The xdist group of a test (see the module docstring), or None to spread it."""
    if item.get_closest_marker("spark") is not None:
        return "spark"
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        for d in defs:
            if d.scope in ("module", "class", "package", "session") and \
                    str(getattr(d, "baseid", "")).startswith("tests/"):
                return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that must share a worker (before xdist reads the marks)."""
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = _group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _project_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test from the project root, where spec paths are relative to."""
    monkeypatch.chdir(ROOT)
