"""The ```console blocks of README.md and of every docs/ page, run and compared with
what they show, and the claims beside their commands checked.

Convention (stated in the README): in a ```console block, a line ``$ modelcheck ...``
is a command (``\\`` continues it on the next line) and the lines up to the next
``$`` are its output, stdout and stderr as a terminal shows them. ``...`` alone on a
line stands for any number of lines (progress, parts left out); ``$ echo $?`` shows
the previous command's exit code. Timings (``0.00 s (1,234 distinct states/s)``) are
normalised. The blocks run in order, in one temporary directory holding links to
``specs/`` and ``examples/``, so a block may read a file an earlier block wrote.
Blocks fenced as ``text`` or ``bash`` are illustrations and are not run.

A ``modelcheck check`` command anywhere in the README (a ``bash`` or ``text`` block
too) with a ``# comment`` beside it makes a claim, and the claim is checked: the
command is run with ``-q --format json`` and the comment must say what happened. The
comment is ``[Label:] VERDICT[, FACT]...``: VERDICT is ``ok``, or the violated
property followed by others also violated (``EpochMonotonic + UniqueEpochs``); a FACT
is ``N states`` (distinct states when ok, the counterexample's length when violated;
``N classes`` and a bare ``N`` the same), ``lasso of N [states]`` (a liveness
counterexample), ``depth D``, ``N edges`` (the liveness graph's) or ``~N s`` (a
timing, not checked); text in parentheses is a remark, not checked. A command with a
placeholder (``SPEC``) and ``modelcheck spark`` are not run.

``python tests/test_readme.py`` prints every block as the program prints it now.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
#: README.md and every page of the documentation site (each page runs in its own
#: temporary directory, so a page may read only files its own earlier blocks wrote).
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


@dataclass
class Command:
    line: int  # in README.md
    command: str
    expected: list[str]


def console_commands(text: str) -> list[Command]:
    """Every command of every ```console block, in order."""
    out: list[Command] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if not line.startswith("$ "):
                raise AssertionError(f"line {i + 1}: output without a command")
            start = i
            cmd = line[2:]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1].rstrip() + " " + lines[i].strip()
            i += 1
            expected: list[str] = []
            while i < len(lines) and lines[i].strip() != "```" and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            out.append(Command(start + 1, cmd, expected))
        i += 1
    return out


_TIME = re.compile(r"\d[\d.,]* s \([\d,.]+ distinct states/s\)")


def normalise(line: str) -> str:
    return _TIME.sub("<time>", line.rstrip())


def matches(expected: list[str], actual: list[str]) -> bool:
    """``expected`` equals ``actual``, a line ``...`` matching any run of lines."""
    exp = [normalise(x) for x in expected]
    act = [normalise(x) for x in actual]
    exp = [x if x.strip() != "..." else "..." for x in exp]

    def go(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    return go(0, 0)


def run(cmd: str, cwd: Path) -> tuple[int, list[str]]:
    if not cmd.startswith("modelcheck "):
        raise AssertionError(f"only modelcheck commands are run: {cmd!r}")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", COLUMNS="100")
    env.pop("FORCE_COLOR", None)
    shell = f"{sys.executable} -m {cmd}"
    p = subprocess.run(shell, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600, check=False)
    return p.returncode, p.stdout.splitlines()


def workdir(tmp: Path) -> Path:
    for name in ("specs", "examples"):
        (tmp / name).symlink_to(ROOT / name)
    return tmp


def outputs(tmp: Path, page: Path = README) -> list[tuple[Command, list[str]]]:
    cwd = workdir(tmp)
    rc = 0
    out = []
    for c in console_commands(page.read_text()):
        if c.command.strip() == "echo $?":
            actual = [str(rc)]
        else:
            rc, actual = run(c.command, cwd)
        out.append((c, actual))
    return out


def test_console_blocks_are_found() -> None:
    counts = {rel(p): len(console_commands(p.read_text())) for p in PAGES}
    assert counts["README.md"] >= 2, counts  # the check and the counterexample
    assert sum(counts.values()) >= 12, counts  # the tutorial and the trace walk-through


@pytest.mark.parametrize("page", [p for p in PAGES if "```console" in p.read_text()],
                         ids=rel)
def test_console_blocks(page: Path, tmp_path: Path) -> None:
    failures = []
    for c, actual in outputs(tmp_path, page):
        if not matches(c.expected, actual):
            failures.append(f"{rel(page)}:{c.line}: $ {c.command}\n--- page\n"
                            + "\n".join(c.expected) + "\n--- program\n" + "\n".join(actual))
    assert not failures, "\n\n".join(failures)


@dataclass
class Claim:
    line: int  # in its page
    command: str
    claim: str
    page: str = "README.md"


def commented_commands(text: str) -> list[Claim]:
    """Every ``modelcheck check ... # claim`` line of the README (continued with
    ``\\``), placeholders (``SPEC``) left out."""
    out: list[Claim] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].strip().removeprefix("$ ")
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        m = re.match(r"(modelcheck check \S.*?)\s+#\s*(.+)$", line)
        if m and "SPEC" not in m.group(1).split():
            out.append(Claim(start + 1, m.group(1), m.group(2).strip()))
    return out


@dataclass
class Expected:
    ok: bool
    properties: list[str]
    facts: list[tuple[str, int]]


def parse_claim(claim: str) -> Expected:
    """The verdict and facts a README comment claims (see the module docstring)."""
    text = re.sub(r"\([^)]*\)", "", claim)  # remarks
    text = re.sub(r"^L\d+:\s*", "", text.strip())
    parts = [p.strip() for p in re.split(r"[,:]\s+", text) if p.strip()]
    if not parts:
        raise AssertionError(f"empty claim {claim!r}")
    ok = parts[0] == "ok"
    names = [] if ok else [n.strip() for n in parts[0].split(" + ")]
    if not ok and not all(re.fullmatch(r"[A-Z]\w*", n) for n in names):
        raise AssertionError(f"claim {claim!r}: {parts[0]!r} is neither ok nor property names")
    facts: list[tuple[str, int]] = []
    for p in parts[1:]:
        for kind, pattern in (("states", r"([\d,]+)(?: states| classes)?"),
                              ("lasso", r"lasso of ([\d,]+)(?: states)?"),
                              ("depth", r"depth ([\d,]+)"),
                              ("edges", r"([\d,]+) edges"),
                              ("time", r"~[\d.]+ s()")):
            m = re.fullmatch(pattern, p)
            if m:
                if kind != "time":
                    facts.append((kind, int(m.group(1).replace(",", ""))))
                break
        else:
            raise AssertionError(f"claim {claim!r}: {p!r} is not a fact the test knows")
    return Expected(ok, names, facts)


def claim_mismatches(expected: Expected, d: dict) -> list[str]:
    """What of ``expected`` the ``--format json`` result ``d`` contradicts."""
    bad = []
    v = d.get("violation") or {}
    if expected.ok and d["status"] != "ok":
        bad.append(f"status {d['status']} (violated: {v.get('property')})")
    if not expected.ok:
        if d["status"] != "violation":
            bad.append(f"status {d['status']}, not a violation")
        elif v["property"] != expected.properties[0] or not set(
                expected.properties[1:]) <= set(v.get("also_violated", [])):
            bad.append(f"violated: {v['property']}, also {v.get('also_violated')}")
    for kind, n in expected.facts:
        got = {"states": d["distinct_states"] if expected.ok else v.get("trace_length"),
               "lasso": v.get("trace_length") if v.get("kind") == "liveness" else None,
               "depth": d["depth"],
               "edges": (d.get("liveness") or {}).get("edges")}[kind]
        if got != n:
            bad.append(f"{kind}: {got}, not {n}")
    return bad


CLAIMS = [Claim(c.line, c.command, c.claim, rel(p))
          for p in PAGES for c in commented_commands(p.read_text())]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.page}:{c.line}")
def test_readme_claims_beside_commands(claim: Claim) -> None:
    import json

    expected = parse_claim(claim.claim)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(f"{sys.executable} -m {claim.command} -q --format json", shell=True,
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                       check=False)
    assert p.returncode in (0, 1, 3), p.stderr[-2000:]
    bad = claim_mismatches(expected, json.loads(p.stdout))
    assert not bad, f"{claim.page}:{claim.line}: $ {claim.command}  # {claim.claim}\n" + \
        "\n".join(bad)


def test_claims_are_found_and_parsed() -> None:
    assert len(CLAIMS) >= 40
    text = "$ modelcheck check a.py \\\n    --const X=1  # L2: ok, 1,234 states (a remark), depth 3"
    (c,) = commented_commands(text)
    assert c.command == "modelcheck check a.py --const X=1" and c.line == 1
    assert parse_claim(c.claim) == Expected(True, [], [("states", 1234), ("depth", 3)])
    assert parse_claim("A + B, lasso of 7 states") == Expected(False, ["A", "B"],
                                                                [("lasso", 7)])
    with pytest.raises(AssertionError):
        parse_claim("it holds")
    with pytest.raises(AssertionError):
        parse_claim("ok, four properties hold")
    assert commented_commands("modelcheck check SPEC --seed 7  # ok") == []


def pytest_commands(text: str) -> list[str]:
    """The ``python -m pytest ...`` commands of a text, each up to its comment or ``&&``."""
    found = []
    for line in text.splitlines():
        if "python -m pytest" in line:
            cmd = line[line.index("python -m pytest"):]
            cmd = re.split(r"\s+#|\s&&|\s;", cmd)[0]
            found.append(" ".join(cmd.split()))
    return found


def test_readme_test_command_is_what_ci_runs() -> None:
    """The README's set-up command runs the tests as .ci/run does (in parallel)."""
    readme = pytest_commands(README.read_text())
    ci = pytest_commands((ROOT / ".ci" / "run").read_text())
    assert len(ci) == 1, ci
    assert readme and readme[0] == ci[0], (readme[:1], ci)
    assert " -n " in f" {ci[0]} ", f"{ci[0]}: the suite runs on every core (-n auto)"
    assert pytest_commands("x && python -m pytest -q -n auto   # run") == [
        "python -m pytest -q -n auto"]


@pytest.mark.parametrize("expected, actual, ok", [
    (["a", "...", "d"], ["a", "b", "c", "d"], True),
    (["a", "...", "d"], ["a", "d"], True),
    (["a", "d"], ["a", "b", "d"], False),
    (["x 0.00 s (...)"], ["x 1.25 s (12,345 distinct states/s)"], False),
    (["x 0.00 s (1 distinct states/s)"], ["x 1.25 s (12,345 distinct states/s)"], True),
])
def test_matching(expected: list[str], actual: list[str], ok: bool) -> None:
    assert matches(expected, actual) is ok


if __name__ == "__main__":  # print the blocks as the program prints them now
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        for page in PAGES:
            (Path(d) / page.stem).mkdir()
            for c, actual in outputs(Path(d) / page.stem, page):
                print(f"{rel(page)}:{c.line}: $ {c.command}")
                print("\n".join(actual))
                print()
