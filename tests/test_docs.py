"""The documentation site in docs/: it builds with every reference resolved
(``sphinx -W``, ``nitpicky``), every page is reachable from the index, and the
architecture page names only modules that exist."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def toctree_entries(text: str) -> list[str]:
    """The entries of every ``{toctree}`` block of a MyST page (options left out)."""
    out = []
    for block in re.findall(r"```\{toctree\}\n(.*?)```", text, re.S):
        out += [x.strip() for x in block.splitlines()
                if x.strip() and not x.strip().startswith(":")]
    return out


def test_every_page_is_reachable_from_the_index() -> None:
    """Every top-level page is an entry of the index's toctree, by name or by a glob
    entry (which takes the pages a new engineer adds without editing the index)."""
    from fnmatch import fnmatch

    entries = toctree_entries((DOCS / "index.md").read_text())
    pages = {p.stem for p in DOCS.glob("*.md")} - {"index"}
    unreachable = sorted(p for p in pages if not any(fnmatch(p, e) for e in entries))
    assert not unreachable, f"pages no toctree of docs/index.md reaches: {unreachable}"
    assert not [e for e in entries if "*" not in e and e not in pages], entries


def test_toctree_parsing() -> None:
    assert toctree_entries("```{toctree}\n:glob:\n\na\n*\n```\n") == ["a", "*"]


_MODULE = re.compile(r"\b((?:modelcheck|spark_explore)(?:[./]\w+)+)(?:\.py)?\b")


def module_paths(text: str) -> set[str]:
    """The dotted module names a page mentions (``modelcheck/level.py``,
    ``modelcheck.run.observers``; an attribute may follow, ``modelcheck.level.report``),
    entry point groups (``entry point group `modelcheck.predicates```) left out."""
    return {m.group(1).replace("/", ".").removesuffix(".py") for m in _MODULE.finditer(text)
            if not text[:m.start()].endswith("group `")}


def diagram_names(text: str) -> set[str]:
    """The module names of the page's layer diagram (its first plain ``` block): every
    name outside parentheses, and the names of a parenthesised list of names
    (``trace (model, itf, render)``); parentheses holding prose are remarks."""
    block = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
    assert block, "no layer diagram"
    body = block.group(1)
    names: set[str] = set()
    depth, outside, inside = 0, [], []
    for ch in body:
        if ch == "(":
            depth += 1
            inside.append("")
        elif ch == ")":
            depth -= 1
            group = inside.pop()
            items = [x.strip() for x in re.split(r"[,;\n|]", group.split(":")[-1])]
            items = [x for x in items if x]
            if len(items) > 1 and all(re.fullmatch(r"[a-z_]+", x) for x in items):
                names.update(x for x in items if x)
        elif depth:
            inside[-1] += ch
        else:
            outside.append(ch)
    names.update(re.findall(r"[a-z_][\w.]*", "".join(outside)))
    return {n for n in names if n not in ("static",)} - {""}


def known_modules() -> set[str]:
    """Every module and package of modelcheck and spark_explore, by its last name and
    by its dotted name."""
    out: set[str] = set()
    for top in ("modelcheck", "spark_explore"):
        for path in (ROOT / top).rglob("*.py"):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out.add(".".join(parts))
            out.add(parts[-1])
    return out


def exists(name: str) -> bool:
    """``name`` is a module or package, or an attribute of one."""
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        mod = ".".join(parts[:n])
        path = ROOT.joinpath(*parts[:n])
        if path.with_suffix(".py").exists() or (path / "__init__.py").exists():
            if n == len(parts):
                return True
            module = importlib.import_module(mod)
            return hasattr(module, parts[n])
    return False


def test_architecture_names_only_modules_that_exist() -> None:
    names = module_paths((DOCS / "architecture.md").read_text())
    assert len(names) >= 10, names
    missing = sorted(n for n in names if not exists(n))
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"


def test_architecture_diagram_names_only_modules_that_exist() -> None:
    names = diagram_names((DOCS / "architecture.md").read_text())
    assert {"engine", "explorer", "kernel", "liveness"} <= names, names
    missing = sorted(names - known_modules())
    assert not missing, f"the layer diagram names modules that do not exist: {missing}"


def diagram_rows(text: str) -> list[set[str]]:
    """The names outside parentheses on each line of the layer diagram (a parenthesis
    opened or closed on another line is a remark running to the end or from the start
    of this one)."""
    block = re.search(r"^```\n(.*?)^```", text, re.S | re.M)
    assert block
    rows = []
    for line in block.group(1).splitlines():
        while re.search(r"\([^()]*\)", line):
            line = re.sub(r"\([^()]*\)", "", line)
        line = line.split("(")[0].split(")")[-1]
        rows.append(set(re.findall(r"[a-z_][\w.]*", line)))
    return rows


def test_architecture_diagram_follows_the_layers_contract() -> None:
    """Every module of the import-linter contract "modelcheck layers" is on the diagram,
    and the layers come top to bottom in the contract's order."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"]
                   if c.get("containers") == ["modelcheck"] and c["type"] == "layers"]
    rows = diagram_rows((DOCS / "architecture.md").read_text())

    def row_of(module: str) -> int:
        found = [i for i, names in enumerate(rows)
                 if module in names or f"modelcheck.{module}" in names]
        assert found, f"module {module} of the layers contract is not on the diagram"
        return found[0]

    last = -1
    for layer in contract["layers"]:
        modules = re.split(r"\s*[|:]\s*", layer)
        at = [row_of(m) for m in modules]
        assert min(at) > last, f"layer {layer!r} is drawn above a higher layer"
        last = max(at)


def test_module_name_parsing() -> None:
    text = "```\n  checker (check(): prose)\n  trace (model, itf)  : store\n```\n"
    assert diagram_names(text) == {"checker", "trace", "model", "itf", "store"}
    assert module_paths("see `modelcheck/level.py` and modelcheck.run.observers") == {
        "modelcheck.level", "modelcheck.run.observers"}
    assert exists("modelcheck.cli") and not exists("modelcheck.no_such_module")


@pytest.mark.xdist_group("sphinx")
def test_sphinx_build_with_every_reference_resolved(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    pytest.importorskip("sphinx_click")
    p = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                        "html", str(DOCS), str(tmp_path / "html")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr[-5000:]
    # sphinx-click saw every command, the lazily loaded ones and plugins included
    from modelcheck.cli import LAZY_COMMANDS, PLUGIN_HELP, cli

    html = (tmp_path / "html" / "cli.html").read_text()
    names = set(cli.commands) | set(LAZY_COMMANDS) | set(PLUGIN_HELP) | {"trace-show"}
    missing = sorted(n for n in names if f'id="modelcheck-{n}"' not in html)
    assert not missing, f"commands missing from the command reference: {missing}"
    assert "--memory-limit" in html and "--seed" in html  # options of check, simulate


def test_readme_headline_figures_are_in_the_benchmarks_page() -> None:
    """Each KRaft row of the README's "Measured" table (model, distinct states, depth, the
    one-process, ``--workers 2`` and Spark ``local[2]`` seconds) is in the benchmarks
    page's logs: the workers table's rows for one and two workers, the Spark table's
    shards row."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Measured"):]
    rows = re.findall(r"^\| KRaft (L\d) \| ([\d,]+) \| (\d+) \| ([\d.]+) s [^|]*\| "
                      r"([\d.]+) s[^|]*\| ([\d.]+) s \|", section, re.M)
    assert len(rows) >= 2, section[:500]
    bench = (DOCS / "benchmarks.md").read_text()
    for config, states, depth, local, workers, spark in rows:
        for label, seconds in (("1", local), ("2", workers), ("shards", spark)):
            row = (rf"^\| {config} \| {label} \| {states} \| {depth} \| "
                   rf"{re.escape(seconds)} \|")
            assert re.search(row, bench, re.M), (config, label, states, depth, seconds)
