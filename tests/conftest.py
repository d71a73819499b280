"""Shared fixtures: the project root on sys.path and a CLI runner."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def _project_cwd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test from the project root, where spec paths are relative to."""
    monkeypatch.chdir(ROOT)
