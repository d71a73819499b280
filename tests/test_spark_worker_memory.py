"""Executor-side tuning of the shard engine that needs no Spark session: the Python
workers' ``malloc`` keeps freed memory, and levels run in the driver while the
executors are still warming up."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Allocates, touches and frees a 64 MiB buffer twice; prints the page faults of the
# second round. Where freed memory goes back to the system, the second round faults
# every page again (16,384 pages of 4 KiB); where malloc keeps it, almost none.
_FAULTS = textwrap.dedent("""
    import ctypes, resource, sys
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "keep":
        from spark_explore.worker import keep_freed_memory
        assert keep_freed_memory()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    n = 64 << 20
    def round_():
        p = libc.malloc(n)
        ctypes.memset(p, 1, n)
        libc.free(p)
    round_()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    round_()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _second_round_faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _FAULTS, str(ROOT), mode],
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc malloc tuning")
def test_keep_freed_memory_keeps_it() -> None:
    """A freed block is reused without new page faults (the trim threshold must really
    be set: a value that does not fit mallopt's int became 0, which returned every
    freed block to the system)."""
    plain = _second_round_faults("plain")
    kept = _second_round_faults("keep")
    assert plain > 8_000  # the default: a 64 MiB block is mmap'ed and unmapped
    assert kept < 1_000


class _Engine:
    """The attributes :meth:`ShardEngine.on_driver` reads."""

    def __init__(self, threshold: int, candidates: int | None, distinct: int,
                 warming: threading.Thread | None) -> None:
        self.driver_threshold = threshold
        self._candidates = candidates
        self._distinct = distinct
        self._warming = warming


def test_levels_stay_on_the_driver_while_executors_warm_up() -> None:
    from spark_explore.shard_engine import DRIVER_VISITED_FACTOR, WARMING_FACTOR, ShardEngine

    release = threading.Event()
    warming = threading.Thread(target=release.wait, daemon=True)
    warming.start()
    done = threading.Thread(target=lambda: None)
    done.start()
    done.join()

    class Engine(_Engine):
        on_driver = ShardEngine.on_driver
        warming = ShardEngine.warming

    def on_driver(candidates: int | None, distinct: int = 0,
                  warm: threading.Thread | None = None, threshold: int = 100) -> bool:
        return Engine(threshold, candidates, distinct, warm).on_driver()

    for warm in (None, done, warming):
        assert on_driver(100, warm=warm)
        assert not on_driver(None, warm=warm)  # unknown (resumed): executors
        assert not on_driver(100, distinct=DRIVER_VISITED_FACTOR * 100 + 1, warm=warm)
        assert not on_driver(100, warm=warm, threshold=0)  # 0: always executors
    big = WARMING_FACTOR * 100
    assert on_driver(big, warm=warming) and not on_driver(big + 1, warm=warming)
    assert not on_driver(101, warm=done) and not on_driver(101, warm=None)
    release.set()
    warming.join()
    assert not on_driver(101, warm=warming)
