"""Static checks as tests: ruff over the tree, mypy over the engine."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest


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
