"""Static checks as tests: ruff over the tree, mypy over the engine, import-linter over the
layering (the contracts in pyproject.toml).

A missing tool skips its check on a developer's machine, but fails it in CI (the ``CI``
environment variable set to anything, as CI services and ``.ci/run`` do): there, a
check that did not run must not pass as one that did."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def missing(what: str) -> None:
    """A tool the check needs is not installed: fail in CI, else skip."""
    text = f"{what} is not installed (pip install -e '.[dev]')"
    if os.environ.get("CI"):  # as the browser tests read it
        pytest.fail(f"{text}; CI runs every static check", pytrace=False)
    pytest.skip(text)


def test_ruff_clean() -> None:
    if shutil.which("ruff") is None:
        missing("ruff")
    r = subprocess.run(["ruff", "check", "."], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_engine_types_check() -> None:
    if importlib.util.find_spec("mypy") is None:
        missing("mypy")
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
        missing("import-linter")
    r = subprocess.run([lint, "--no-cache", "--no-logo"], cwd=ROOT, capture_output=True,
                       text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("ci", ["1", ""])
def test_a_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch, ci: str) -> None:
    """Without ``lint-imports`` (or ruff) the check fails when ``CI`` is set, and is
    skipped otherwise."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    for check in (test_import_layering, test_ruff_clean):
        got: BaseException | None = None
        try:
            check()
        except BaseException as e:  # a skip is not an Exception: catch it to compare
            got = e
        assert isinstance(got, outcome) and "is not installed" in str(got), (check, got)


#: the directories whose files may cite only files of the repository
SOURCE_DIRS = ("modelcheck", "specs", "invariants", "spark_explore", "examples",
               "benchmarks", "scripts")
#: names of files the tools write at run time (outputs, not references)
WRITTEN = {"result.json", "trace.json", "trace.itf.json", "args.json", "out.json",
           "manifest.json", "cluster.json", "bench_chain.py"}
#: placeholders in messages and docstrings (``specs/my_spec.py``: "a module like this")
PLACEHOLDERS = {"path/to/spec.py", "specs/my_spec.py", "specs/x.py"}
_FILE_REF = r"(?<![\w./-])(/?(?:[\w.-]+/)*[\w-][\w.-]*\.(?:md|py|json|toml|txt))(?![\w/])"


def _file_refs() -> list[tuple[str, int, str]]:
    import re

    out = []
    for d in SOURCE_DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [n for n in dirnames if not n.startswith((".", "__"))]
            for name in files:
                if name.endswith((".pyc", ".so")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for no, line in enumerate(f, 1):
                        for m in re.finditer(_FILE_REF, line):
                            out.append((os.path.relpath(path, ROOT), no, m.group(1)))
    return out


def test_source_files_cite_only_files_of_the_repository() -> None:
    """Every relative path ending in .md/.py/.json/.toml/.txt that a source file
    mentions exists in the repository (a bare name: some file of that name does),
    but for files the tools write and placeholders; no absolute paths."""
    names: set[str] = set()
    for _dirpath, dirnames, files in os.walk(ROOT):
        dirnames[:] = [n for n in dirnames if not n.startswith(".")]
        names.update(files)
    refs = _file_refs()
    assert any(ref == "specs/kraft_broker.py" for _, _, ref in refs)  # the scan sees refs
    bad = []
    for where, no, ref in refs:
        if ref in WRITTEN or ref in PLACEHOLDERS or ref.startswith(("DIR/", "...")):
            continue
        if ref.startswith("/"):
            ok = False
        elif "/" in ref:
            ok = os.path.exists(os.path.join(ROOT, ref))
        else:
            ok = ref in names
        if not ok:
            bad.append(f"{where}:{no}: {ref}")
    assert not bad, "references to files that are not in the repository:\n" + "\n".join(bad)
