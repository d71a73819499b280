"""The table in docs/specs.md "Which seed rule is checked by which property", checked claim by
claim: every rule of the seed-systems note's coverage matrix has a row; every property
a row names is checked by default on the spec it names, every action or constant it
names exists there; every bug variant it names fails with the property it names under a
plain ``modelcheck check`` (with the options shown)."""

from __future__ import annotations

import importlib
import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck import Spec
from modelcheck.cli import cli

PAGE = Path(__file__).resolve().parent.parent / "docs" / "specs.md"
SECTION = "## Which seed rule is checked by which property"

# the rules of the seed-systems note's coverage matrix (000 the broker lifecycle chapter,
# 001 KIP-631, 002 the heartbeat RPC, 003 ZooKeeper-era Kafka, 004 Kafka 4.4 metadata)
RULES = (
    "0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.9 0.10 0.11 0.12 "
    "1.1 1.3 1.4 1.5 1.6 1.7 1.10 1.11 "
    "2.1 2.2 2.3 2.6 "
    "3.1 3.2 3.3 3.4 3.5 3.6 3.7 3.8 "
    "4.1 4.2 4.3 4.4 4.5 4.7 4.8 4.9 4.10 4.11 4.13 4.15 4.16 4.17"
).split()
OUT_OF_SCOPE = "*out of scope*"


def _section() -> str:
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def legend() -> dict[str, tuple[str, str]]:
    """Abbreviation -> (spec file, class), from ``KB = `specs/x.py:Class```."""
    return {m[1]: (m[2], m[3]) for m in re.finditer(
        r"\b(\w+) = `(specs/\w+\.py):(\w+)`", _section())}


def rows() -> list[list[str]]:
    out = []
    for line in _section().splitlines():
        if line.startswith("| ") and not line.startswith("| # ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            assert len(cells) == 4, line
            out.append(cells)
    return out


def _strip_parens(text: str) -> str:
    while True:
        new = re.sub(r"\([^()]*\)", "", text)
        if new == text:
            return text
        text = new


@cache
def spec_class(path: str, name: str) -> type[Spec]:
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    cls = getattr(module, name)
    assert isinstance(cls, type) and issubclass(cls, Spec)
    return cls


def checked_by(cell: str) -> list[tuple[str, str]]:
    """(abbreviation, item) pairs of a "spec: checked by" cell; an item in backquotes
    stays quoted."""
    out = []
    for segment in _strip_parens(cell).split(";"):
        abbr, _, items = segment.strip().partition(": ")
        assert items, f"no 'SPEC: ...' in {segment!r}"
        out.extend((abbr, item.strip()) for item in items.split(",") if item.strip())
    return out


def variant_claims(cell: str) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(class, options, properties) of a bug-variant cell: `` `Class --const K=V` → P, Q ``."""
    if cell.startswith("—"):
        return []
    out = []
    for part in _strip_parens(cell).split(";"):
        m = re.fullmatch(r"\s*`(\w+)((?: --const \w+=\w+)*)` → ([\w, ]+?)\s*", part)
        assert m, f"cannot read the claim {part!r}"
        opts = tuple(m[2].split())
        out.append((m[1], opts, tuple(p.strip() for p in m[3].split(","))))
    return out


def _all_claims() -> dict[tuple[str, tuple[str, ...]], set[str]]:
    claims: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for _, _, _, cell in rows():
        for cls, opts, props in variant_claims(cell):
            claims.setdefault((cls, opts), set()).update(props)
    return claims


def _locate(name: str) -> str:
    """The spec file defining class ``name``: the one of the legend whose class it extends
    by name (``KRaftLeaseLiveBug...`` is in ``kraft_lease.py``)."""
    best = max((cls for _, (_, cls) in legend().items() if name.startswith(cls)), key=len)
    return next(path for path, cls in legend().values() if cls == best)


def test_every_rule_of_the_matrix_has_a_row() -> None:
    have = [r[0] for r in rows()]
    assert set(RULES) <= set(have), sorted(set(RULES) - set(have))
    assert set(have) - set(RULES) <= {"—"}
    # a rule either has a checking property and a variant, or says why not
    for rule, _, cell, bugs in rows():
        if cell.startswith(OUT_OF_SCOPE):
            assert bugs == "—", rule
        else:
            assert bugs.startswith("— (") or variant_claims(bugs), rule


def test_the_legend_names_spec_classes() -> None:
    spec_of = legend()
    assert set(spec_of) == {"KB", "KL", "KLL", "KLe", "KLeL", "KM", "KML", "ZK", "ZKL"}
    for path, name in spec_of.values():
        spec_class(path, name)


def test_every_named_property_action_and_constant_exists_on_its_spec() -> None:
    spec_of = legend()
    named = 0
    for rule, _, cell, _ in rows():
        if cell.startswith(OUT_OF_SCOPE):
            continue
        for abbr, item in checked_by(cell):
            assert abbr in spec_of, f"{rule}: unknown spec {abbr!r}"
            spec = spec_class(*spec_of[abbr])()
            if item.startswith("`"):
                name = item.strip("`")
                assert (name in {a.decl.name for a in spec.actions}
                        or name in spec.constants), f"{rule}: {abbr} has no {name!r}"
            else:
                checked = {p.name for p in (*spec.invariants, *spec.properties,
                                            *spec.temporal)}
                assert item in checked, f"{rule}: {abbr} does not check {item!r}"
                named += 1
    assert named >= 80


def test_claims_are_read() -> None:
    claims = _all_claims()
    assert len(claims) >= 35
    assert claims[("KRaftLease", ("--const", "Sem=K44"))] == {"NoStaleRefence"}
    assert variant_claims("`A` → P, Q (why); `B --const X=1` → R") == [
        ("A", (), ("P", "Q")), ("B", ("--const", "X=1"), ("R",))]


@cache
def _run(target: str, opts: tuple[str, ...]) -> tuple[int, dict]:
    r = CliRunner().invoke(cli, ["check", target, *opts, "--format", "json", "-q"])
    text = r.output
    return r.exit_code, json.loads(text[text.index("{\n"):] if "{\n" in text else text)


def _params() -> list:
    out = []
    for (cls, opts), props in sorted(_all_claims().items()):
        live = "Live" in cls
        out.append(pytest.param(cls, opts, props, id=" ".join((cls, *opts)),
                                marks=[pytest.mark.slow] if live else []))
    return out


@pytest.mark.parametrize("cls, opts, props", _params())
def test_each_bug_variant_fails_with_the_property_named(cls, opts, props) -> None:
    code, out = _run(f"{_locate(cls)}:{cls}", opts)
    assert code == 1, out
    v = out["violation"]
    violated = {v["property"], *v.get("also_violated", [])}
    if out.get("liveness"):
        violated |= {p for p, x in out["liveness"]["properties"].items() if x == "violated"}
    assert props <= violated, (cls, opts, sorted(violated))
