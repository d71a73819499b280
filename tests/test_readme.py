"""The README's ```console blocks, run and compared with what they show.

Convention (stated in the README): in a ```console block, a line ``$ modelcheck ...``
is a command (``\\`` continues it on the next line) and the lines up to the next
``$`` are its output, stdout and stderr as a terminal shows them. ``...`` alone on a
line stands for any number of lines (progress, parts left out); ``$ echo $?`` shows
the previous command's exit code. Timings (``0.00 s (1,234 distinct states/s)``) are
normalised. The blocks run in order, in one temporary directory holding links to
``specs/`` and ``examples/``, so a block may read a file an earlier block wrote.
Blocks fenced as ``text`` or ``bash`` are illustrations and are not run.

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
                raise AssertionError(f"README.md:{i + 1}: output without a command")
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


def outputs(tmp: Path) -> list[tuple[Command, list[str]]]:
    cwd = workdir(tmp)
    rc = 0
    out = []
    for c in console_commands(README.read_text()):
        if c.command.strip() == "echo $?":
            actual = [str(rc)]
        else:
            rc, actual = run(c.command, cwd)
        out.append((c, actual))
    return out


def test_readme_console_blocks(tmp_path: Path) -> None:
    commands = console_commands(README.read_text())
    assert len(commands) >= 10  # the tutorial and the trace walk-through
    failures = []
    for c, actual in outputs(tmp_path):
        if not matches(c.expected, actual):
            failures.append(f"README.md:{c.line}: $ {c.command}\n--- README\n"
                            + "\n".join(c.expected) + "\n--- program\n" + "\n".join(actual))
    assert not failures, "\n\n".join(failures)


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
        for c, actual in outputs(Path(d)):
            print(f"README.md:{c.line}: $ {c.command}")
            print("\n".join(actual))
            print()
