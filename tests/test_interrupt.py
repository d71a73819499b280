"""Ctrl-C is never lost: SIGINT at any moment of a text or JSON run gives exit code 3 and
a partial result (or 0 when the run had already finished), never a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck.interrupt import Interrupts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
L4 = ["--const", "N=3", "--const", "P=1", "--const", "MaxLog=5", "--const", "MaxRestarts=1"]


def _interrupted_run(fmt: str, delay: float) -> tuple[int, str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "modelcheck", "check", "specs/kraft_broker.py", *L4,
         "--format", fmt], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # "Checking ...": the run is about to start
        while first.startswith("[") and "setting up:" in first:  # a slow start's progress
            first = proc.stderr.readline()
        assert first.startswith("Checking"), first
        time.sleep(delay)  # the moment of the Ctrl-C is what the test varies
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, first + err


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(["text", "json"]), delay=st.floats(0.0, 2.5))
def test_sigint_at_any_moment_stops_the_run_with_a_partial_result(fmt: str,
                                                                  delay: float) -> None:
    code, out, err = _interrupted_run(fmt, delay)
    assert "Traceback" not in err, err
    assert code in (0, 3), (code, out[-500:], err[-500:])
    if code == 3 and "interrupted while setting up" in err:  # before the first state
        assert "Result" not in out and "distinct" not in out
        if fmt == "json":
            assert json.loads(out)["status"] == "incomplete"
        return
    if fmt == "json":
        d = json.loads(out)
        if code == 0:
            assert (d["status"], d["distinct_states"]) == ("ok", 1_244_976)
        else:
            assert (d["status"], d["reason"]) == ("incomplete", "interrupted")
            assert 1 <= d["distinct_states"] < 1_244_976
            assert d["distinct_states"] == 1 + sum(lv["new"] for lv in d["levels"])
    elif code == 0:
        assert "1,244,976 distinct states" in out
    else:
        assert "Result: INCOMPLETE (interrupted)" in out


def test_a_guard_records_sigint_and_a_second_one_raises() -> None:
    before = signal.getsignal(signal.SIGINT)
    with Interrupts() as outer:
        with Interrupts() as inner:  # shares the outer guard's record
            assert not inner.requested
            os.kill(os.getpid(), signal.SIGINT)
            deadline = time.monotonic() + 10
            while not inner.requested:  # the handler runs at the next bytecode
                assert time.monotonic() < deadline
            assert outer.requested
            try:
                os.kill(os.getpid(), signal.SIGINT)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    pass
                raise AssertionError("a second SIGINT did not raise")
            except KeyboardInterrupt:
                pass
    assert signal.getsignal(signal.SIGINT) is before


def test_a_guard_calls_on_request_at_the_first_sigint_and_takes_over_when_told() -> None:
    """A backend's ``on_request`` (Spark: cancel the jobs) runs at the first Ctrl-C, from
    another thread, also when an outer guard received the signal; with ``replace`` a
    guard installs itself over a foreign SIGINT handler (PySpark's) and restores it."""
    called = threading.Event()
    with Interrupts() as outer:
        with Interrupts(on_request=called.set) as inner:
            os.kill(os.getpid(), signal.SIGINT)
            assert called.wait(10)
            assert inner.requested and outer.requested
            inner.requested = False  # the record can be cleared (for another run)
            assert not outer.requested

    def foreign(signum: int, frame: object) -> None:
        raise AssertionError("the foreign handler ran")

    before = signal.signal(signal.SIGINT, foreign)
    try:
        with Interrupts() as polite:
            assert signal.getsignal(signal.SIGINT) is foreign and not polite.requested
        again = threading.Event()
        with Interrupts(on_request=again.set, replace=True) as bold:
            os.kill(os.getpid(), signal.SIGINT)
            assert again.wait(10) and bold.requested
        assert signal.getsignal(signal.SIGINT) is foreign
    finally:
        signal.signal(signal.SIGINT, before)
