"""``modelcheck spark``'s errors are one paragraph: a bad master is refused before Java
starts, a session that cannot start says why in Spark's words (not py4j's "An error
occurred while calling ..." after a Java stack trace), a worker's lost-socket traceback
never reaches the terminal, and ``spark --help`` shows no --memory-limit default that
the command would then refuse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spark_explore.session import DroppedTracebacks, check_master_url

ROOT = Path(__file__).resolve().parent.parent
SPEC = "examples/counter.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "modelcheck", "spark", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def assert_one_paragraph(p: subprocess.CompletedProcess[str], *words: str) -> str:
    assert p.returncode == 2, (p.stdout[-500:], p.stderr[-2000:])
    errors = [line for line in p.stderr.splitlines() if not line.startswith("Checking ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), p.stderr
    for bad in ("\tat ", "Traceback", "An error occurred while calling", "Exception in thread",
                "JAVA_GATEWAY_EXITED"):
        assert bad not in p.stderr, p.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize("master", ["local[0]", "bogus://x", "local[2]x", "spark://",
                                   "Local[2]"])
@pytest.mark.parametrize("simulate", [False, True])
def test_a_bad_master_is_one_paragraph(master: str, simulate: bool) -> None:
    args = [SPEC, "--master", master] + (["--simulate", "--runs", "1"] if simulate else [])
    assert_one_paragraph(run(*args), f"--master {master!r}")


@pytest.mark.parametrize("master", ["local", "local[1]", "local[*]", "local[4,2]",
                                    "local[*,3]", "local-cluster[2,1,1024]",
                                    "spark://h:7077", "spark://a:1,b:2", "yarn",
                                    "k8s://https://h:443"])
def test_masters_spark_accepts_pass(master: str) -> None:
    check_master_url(master)


@pytest.mark.spark
def test_a_session_that_cannot_start_says_why() -> None:
    p = run(SPEC, "--master", "local[1]", "--conf", "spark.memory.fraction=2")
    assert_one_paragraph(p, "'local[1]'", "spark.memory.fraction")


def test_spark_help_shows_no_refused_memory_default() -> None:
    def memory_help(command: str) -> str:
        out = subprocess.run([sys.executable, "-m", "modelcheck", command, "--help"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        text = " ".join(out.split())
        return text[text.index("--memory-limit"):][:400].split(" --", 1)[0]

    assert "Default:" in memory_help("check")
    spark_help = memory_help("spark")
    assert "Default" not in spark_help and "%" not in spark_help, spark_help
    assert "refuses a size" in spark_help


# ------------------------------------------------------ lost-socket tracebacks
_FRAMES = st.lists(st.sampled_from([b'  File "x.py", line 3, in f\n', b"    f()\n",
                                    b"\tg()\n"]), max_size=3)
_EXC = st.sampled_from([b"BrokenPipeError: [Errno 32] Broken pipe\n",
                        b"ConnectionResetError: [Errno 104] reset\n",
                        b"ValueError: boom\n", b"KeyError: 'k'\n"])
_PLAIN = st.sampled_from([b"12:00:01 WARN x: y\n", b"plain line\n", b"\n",
                          b"BrokenPipeError alone, not in a traceback\n"])


@st.composite
def _stream(draw: st.DrawFn) -> tuple[list[bytes], list[bytes]]:
    """Lines of a worker's stderr, and those a user must see (an oracle: blocks are
    built here, so which to drop is known)."""
    lines: list[bytes] = []
    shown: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            line = draw(_PLAIN)
            lines.append(line)
            shown.append(line)
            continue
        head = draw(st.sampled_from([b"Traceback (most recent call last):\n",
                                     b"Exception ignored in: <socket>\n"]))
        block = [head, *draw(_FRAMES), draw(_EXC)]
        lines += block
        if not block[-1].startswith((b"BrokenPipeError", b"ConnectionResetError")):
            shown += block
    return lines, shown


@given(_stream())
def test_lost_socket_tracebacks_are_dropped(case: tuple[list[bytes], list[bytes]]) -> None:
    lines, shown = case
    f = DroppedTracebacks()
    out = [o for line in lines for o in f.feed(line)] + f.flush()
    assert out == shown
