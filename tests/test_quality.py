"""Static checks as tests: ruff over the tree, mypy over the engine, import-linter over the
layering (the contracts in pyproject.toml)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_ruff_clean() -> None:
    if shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    r = subprocess.run(["ruff", "check", "."], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_engine_types_check() -> None:
    pytest.importorskip("mypy")
    r = subprocess.run([sys.executable, "-m", "mypy", "modelcheck", "spark_explore",
                        "--ignore-missing-imports"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_import_layering() -> None:
    """modelcheck never imports spark_explore, specs or pyspark; only the CLI modules
    import the invariants library; modelcheck's layers (CLI, reports, traces, engine,
    foundation) and those of modelcheck.trace import downwards only."""
    lint = shutil.which("lint-imports")
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    r = subprocess.run([lint, "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
