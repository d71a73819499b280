"""A slow set-up (a large action family) shows progress and stops at the first Ctrl-C.

Building a million action instances and their kernel takes seconds: from a second on
the command prints ``setting up:`` lines, and a Ctrl-C in any phase of the set-up
stops it at once with exit code 3 (there is no partial result yet: no state was
explored). The tests wait on those lines (no sleeps), then send SIGINT. And a run that
stopped early never calls an action it did not try ``(never enabled)``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from modelcheck import Const, Int, Spec, action, check
from modelcheck.interrupt import Interrupts
from modelcheck.report import render_text

ROOT = Path(__file__).resolve().parent.parent

BIG = '''
from modelcheck import Const, Int, Spec, action


class BigFamily(Spec):
    """One action family of A*B instances over four states."""

    A = Const(1000)
    B = Const(1000)
    x = Int(0, 3)
    check_deadlock = False

    @action(i=lambda self: range(self.A), j=lambda self: range(self.B))
    def Step(self, s, t, i, j):
        t.x = (s.x + 1) % 4
        return (i + j) % 1000 == 0
'''


@pytest.mark.parametrize(("phase", "fmt"), [("action instances", "text"),
                                            ("building the kernel", "json")])
def test_ctrl_c_during_set_up_stops_it(tmp_path: Path, phase: str, fmt: str) -> None:
    spec = tmp_path / "big.py"
    spec.write_text(BIG)
    proc = subprocess.Popen([sys.executable, "-m", "modelcheck", "check", str(spec),
                             "--format", fmt], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        assert proc.stderr is not None
        seen = []
        while True:  # the set-up's progress, before any result
            line = proc.stderr.readline()
            seen.append(line)
            assert line, f"no set-up progress line about {phase!r}: {seen}"
            if "setting up:" in line and phase in line:
                break
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, (out[-500:], err[-500:])
    assert "Traceback" not in err and "interrupted while setting up" in err, err
    assert "distinct states" not in out  # stopped before exploring: nothing to report
    if fmt == "json":
        assert json.loads(out)["reason"] == "interrupted"


@pytest.fixture
def python_sigint():
    """SIGINT handled as Python's default for the test (an earlier test in this process,
    e.g. one that started Spark, may have left a foreign handler), restored after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("handler", [signal.SIG_IGN, lambda signum, frame: None])
def test_the_run_starts_under_a_set_up_guard_that_installed_nothing(handler) -> None:
    """With SIGINT ignored (a background run) or handled by foreign code, no guard
    installs a handler, but entering the run's guard still ends the set-up (its
    progress lines stop)."""
    previous = signal.signal(signal.SIGINT, handler)
    try:
        with Interrupts(setup=True) as outer:
            assert not outer.started
            with Interrupts():
                assert outer.started
    finally:
        signal.signal(signal.SIGINT, previous)


def test_set_up_guard_raises_at_the_first_sigint_until_the_run_starts(python_sigint) -> None:
    with Interrupts(setup=True) as outer:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10**8):  # the handler runs at the next bytecode
                pass
        assert not outer.started
    with Interrupts(setup=True) as outer, Interrupts() as inner:  # the run starts: recorded
        assert outer.started and inner.started
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10**6):
            if inner.requested:
                break
        assert inner.requested


class LateAction(Spec):
    """``Late`` is enabled only from depth 3 on; ``Never`` is never enabled."""

    Max = Const(5)
    x = Int(0, Max)
    check_deadlock = False

    @action
    def Inc(self, s, t):
        t.x = s.x + 1
        return s.x < self.Max

    @action
    def Late(self, s, t):
        t.x = 0
        return s.x >= 3

    @action
    def Never(self, s, t):
        t.x = 0
        return s.x > self.Max


def _flagged(text: str) -> set[str]:
    return {line.split()[0] for line in text.splitlines() if "(never enabled)" in line}


def test_an_early_stop_calls_no_action_never_enabled() -> None:
    full = check(LateAction())
    assert full.status == "ok"
    assert _flagged(render_text(full)) == {a.name for a in full.coverage if a.fired == 0}
    assert _flagged(render_text(full)) == {"Never"}
    early = check(LateAction(), max_depth=1)
    assert early.status == "incomplete"
    assert {a.name for a in early.coverage if a.fired == 0} >= {"Late", "Never"}
    assert _flagged(render_text(early)) == set()
