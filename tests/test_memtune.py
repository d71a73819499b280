"""The malloc settings of :mod:`modelcheck.memtune` do what they say: freed blocks are
reused without new page faults. Each case runs in a child process (the settings are
process-wide); the oracle is the same allocation pattern under glibc's defaults."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="glibc malloc settings")

# Allocates, touches and frees the blocks of ``warm`` (KiB) in turn, then prints the
# page faults of allocating, touching and freeing ``measured`` KiB. The mode is
# "default", a memtune function to call first, or "explore:W,..." to explore, one after
# the other, specs of W 64-bit words a state first.
_CHILD = textwrap.dedent("""
    import ctypes, resource, sys
    sys.path.insert(0, sys.argv[1])
    mode = sys.argv[2]
    if mode.startswith("explore:"):
        from modelcheck import Int, Spec, action, explore
        def step(self, s, t, i):
            setattr(t, f"v{i}", getattr(s, f"v{i}") + 1)
            return getattr(s, f"v{i}") < 2
        for words in map(int, mode[len("explore:"):].split(",")):
            body = {f"v{i}": Int(0, 2**62) for i in range(words)}
            body["Step"] = action(i=range(words))(step)
            spec = type("Words", (Spec,), body)()
            assert spec.layout.n_words == words
            assert explore(spec, check_deadlock=False).status == "ok"
    elif mode != "default":
        from modelcheck import memtune
        assert getattr(memtune, mode)()
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    def cycle(kib):
        p = libc.malloc(kib << 10)
        ctypes.memset(p, 1, kib << 10)
        libc.free(p)
    for kib in map(int, sys.argv[3].split(",")):
        cycle(kib)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cycle(int(sys.argv[4]))
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def faults(mode: str, warm: str, measured: int) -> int:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), mode, warm,
                          str(measured)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def test_keep_freed_memory_reuses_a_large_block() -> None:
    """A 64 MiB block freed and allocated again: the default maps it afresh (16,384
    pages of 4 KiB), the workers' setting reuses it. (A trim threshold that did not fit
    mallopt's C int became 0 and returned every freed block to the system.)"""
    assert faults("default", "65536", 65536) > 8_000
    assert faults("keep_freed_memory", "65536", 65536) < 1_000


def test_steady_arrays_reuses_batch_sized_blocks() -> None:
    """Blocks of 2 and 3 MiB, then one of 2.5 MiB (batch-sized, under the 4 MiB
    threshold): under the dynamic thresholds the last one is new heap, faulted page by
    page; with fixed thresholds it reuses the memory the earlier ones left."""
    assert faults("default", "2048,3072", 2560) > 400
    assert faults("steady_arrays", "2048,3072", 2560) < 100


def test_steady_arrays_still_maps_huge_blocks() -> None:
    """Blocks from 4 MiB up are mapped (the visited set grows by remapping; a level's
    arrays pin no heap) and go back to the system when freed."""
    assert faults("steady_arrays", "65536", 65536) > 8_000
    assert faults("steady_arrays", "8192", 8192) > 1_500


_PAGES = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from modelcheck import memtune
    core = getattr(np, "_core", None) or np.core
    before = core.multiarray._get_madvise_hugepage()
    done = getattr(memtune, sys.argv[2])()
    print(int(before), int(core.multiarray._get_madvise_hugepage()))
""")


def hugepage_flags(mode: str, env: str | None) -> tuple[int, int]:
    """numpy's huge-page setting before and after ``memtune.<mode>()`` in a child."""
    import os

    environ = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    if env is not None:
        environ["NUMPY_MADVISE_HUGEPAGE"] = env
    out = subprocess.run([sys.executable, "-c", _PAGES, str(ROOT), mode],
                         capture_output=True, text=True, check=True, env=environ)
    before, after = map(int, out.stdout.split())
    return before, after


@pytest.mark.parametrize("mode", ["steady_arrays", "keep_freed_memory", "small_pages"])
def test_numpy_stops_asking_for_huge_pages(mode: str) -> None:
    """numpy's default (huge pages asked for, where the kernel has them) is turned off by
    the explorer's and the workers' settings."""
    before, after = hugepage_flags(mode, None)
    if not before:
        pytest.skip("numpy does not ask for huge pages on this kernel")
    assert after == 0


def test_the_users_hugepage_choice_wins() -> None:
    """``NUMPY_MADVISE_HUGEPAGE=1`` set by the user is left as it is."""
    assert hugepage_flags("steady_arrays", "1") == (1, 1)


@pytest.mark.parametrize("runs", ["1", "2", "3", "4", "3,1", "1,4", "4,2,3"])
def test_the_explorer_keeps_freed_blocks_for_states_wider_than_two_words(runs) -> None:
    """A run of states of up to two words maps large blocks afresh (steady_arrays: its
    levels grow by remapping, and their memory goes back when freed); a wider one keeps
    every freed block for the next batch (keep_freed_memory). The last run of a process
    decides, whatever the runs before it set."""
    if int(runs.split(",")[-1]) > 2:
        assert faults(f"explore:{runs}", "65536", 65536) < 1_000
    else:
        assert faults(f"explore:{runs}", "65536", 65536) > 8_000
