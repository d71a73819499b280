"""Shared fixtures: the project root on sys.path and a CLI runner."""

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


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _project_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test from the project root, where spec paths are relative to."""
    monkeypatch.chdir(ROOT)
