"""The state graph's layering: the graph export (``modelcheck graph``) and the web
explorer take the state graph from its store (:mod:`modelcheck.stategraph`), not from
liveness. Importing them, and building a graph, loads no :mod:`modelcheck.liveness`
(checked in a fresh interpreter's ``sys.modules``; the import-linter contract in
``pyproject.toml`` checks the imports statically)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def loaded_after(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter (run from the repository) by ``code``."""
    p = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\n"
                        "print(json.dumps(sorted(sys.modules)))"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return set(json.loads(p.stdout.strip().splitlines()[-1]))


def test_graph_export_and_web_import_no_liveness() -> None:
    got = loaded_after("import modelcheck.graph, modelcheck.web, modelcheck.stategraph")
    assert {"modelcheck.graph", "modelcheck.web", "modelcheck.stategraph"} <= got
    assert "modelcheck.liveness" not in got


def test_building_a_graph_loads_no_liveness() -> None:
    got = loaded_after(
        "from modelcheck.graph import build_graph\n"
        "from modelcheck.loader import bind_spec\n"
        "g = build_graph(bind_spec('examples/counter.py', ('Max=1',)))\n"
        "assert g.number_of_nodes() > 1 and g.number_of_edges() > 0\n")
    assert "modelcheck.explorer" in got  # the graph comes from a run
    assert "modelcheck.liveness" not in got
