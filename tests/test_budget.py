"""Budgets: --max-states and --memory-limit stop a run at the last complete level
(status incomplete, exit 3, a message saying what to try), under a real memory ulimit
too, and a MemoryError is never a traceback or exit code 1."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from typing import Any

import pytest

from modelcheck import explore
from modelcheck.budget import format_size, parse_size
from modelcheck.cli import cli
from specs.kraft_broker import KRaftBroker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KRAFT = "specs/kraft_broker.py"
WIDE = "tests/wide_spec.py"
L3 = ["--const", "N=2", "--const", "P=1", "--const", "MaxLog=6", "--const", "MaxRestarts=2"]


def test_parse_and_format_sizes() -> None:
    assert parse_size("512M") == 512 << 20
    assert parse_size("1.5g") == 3 << 29
    assert parse_size("8GiB") == parse_size("8GB") == parse_size("8 G") == 8 << 30
    assert parse_size("4096") == 4096
    for bad in ("", "G", "-1G", "0", "12X", "1.2.3M"):
        with pytest.raises(ValueError, match="size"):
            parse_size(bad)
    assert format_size(3 << 29) == "1.5 GiB" and format_size(900) == "900 B"


def _levels_total(r: Any) -> int:
    return 1 + sum(lv.new for lv in r.levels)


def test_max_states_stops_at_the_last_complete_level() -> None:
    full = explore(KRaftBroker())
    r = explore(KRaftBroker(), max_states=1000)
    assert (r.status, r.reason, r.exit_code) == ("incomplete", "max-states", 3)
    assert r.distinct_states <= 1000 < full.distinct_states
    assert r.distinct_states == _levels_total(r)
    # the same levels as the full run
    assert [lv.new for lv in r.levels] == [lv.new for lv in full.levels[:len(r.levels)]]
    nxt = full.levels[len(r.levels)].new
    assert f"would add {nxt:,} more" in (r.message or "")
    assert r.config["max_states"] == 1000
    # a bound the run stays within changes nothing
    assert explore(KRaftBroker(), max_states=full.distinct_states).status == "ok"


def test_memory_limit_stops_and_resumes_from_the_checkpoint(runner, tmp_path) -> None:
    args = ["check", KRAFT, *L3, "--format", "json", "-q", "--checkpoint-dir", str(tmp_path)]
    r = runner.invoke(cli, [*args, "--memory-limit", "2M"])
    assert r.exit_code == 3, r.output
    d = json.loads(r.stdout)
    assert (d["status"], d["reason"]) == ("incomplete", "memory")
    assert d["distinct_states"] == 1 + sum(lv["new"] for lv in d["levels"])
    assert "memory limit of 2.0 MiB" in d["message"] and "--spill-dir" in d["message"]
    assert "continue with --resume" in d["message"]
    done = runner.invoke(cli, [*args, "--resume", "--memory-limit", "none"])
    assert done.exit_code == 0, done.output
    got = json.loads(done.stdout)
    assert (got["status"], got["distinct_states"], got["depth"]) == ("ok", 552_953, 30)


def test_batches_shrink_to_the_budget_without_changing_the_result() -> None:
    want = explore(KRaftBroker(), memory_limit=None)
    got = explore(KRaftBroker(), memory_limit=4 << 20)
    assert got.status == want.status == "ok"
    assert (got.distinct_states, got.generated_states, got.depth) == \
        (want.distinct_states, want.generated_states, want.depth)


def test_bad_memory_limit_is_a_usage_error(runner) -> None:
    r = runner.invoke(cli, ["check", KRAFT, "--memory-limit", "lots"])
    assert r.exit_code == 2 and "is not a size" in r.output


# ------------------------------------------------------------- a real ulimit
def _base_vm() -> int:
    """Peak virtual memory of a process that has loaded the command line and numpy."""
    code = ("import modelcheck.cli, numpy; "
            "print([l for l in open('/proc/self/status') if l.startswith('VmPeak')][0])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(),
                         capture_output=True, text=True, check=True).stdout
    return int(out.split()[1]) * 1024


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=ROOT, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")


def _run_limited(room: int, *args: str) -> subprocess.CompletedProcess[str]:
    limit = _base_vm() + room

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-m", "modelcheck", "check", WIDE, "-q",
                           "--format", "json", *args], cwd=ROOT, env=_env(),
                          preexec_fn=cap, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
@pytest.mark.parametrize("limit", ["auto", "none"])
def test_under_a_memory_ulimit_the_run_stops_cleanly(limit: str) -> None:
    """With the default limit the budget stops the run; with none, the MemoryError the
    ulimit causes is caught: either way exit 3, reason memory, never a traceback."""
    r = _run_limited(300 << 20, "--memory-limit", limit)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    d = json.loads(r.stdout)
    assert (d["status"], d["reason"]) == ("incomplete", "memory")
    assert d["distinct_states"] == 1 + sum(lv["new"] for lv in d["levels"])
    assert d["depth"] >= 2 and d["message"]
    if limit == "auto":
        assert d["message"].startswith("Stopped before exceeding the memory limit")
