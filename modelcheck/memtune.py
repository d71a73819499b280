"""glibc ``malloc`` settings for processes whose work is large numpy arrays.

An exploration allocates and frees arrays of a batch's or a level's size over and over.
glibc serves blocks above a *dynamic* threshold with ``mmap`` and trims the heap's free
top above another one, so the same few megabytes are handed back to the system and
faulted in again page by page (on KRaft L3 a third of the explorer's page faults and
most of its system time). :func:`steady_arrays` fixes both thresholds; the Spark
backend's Python workers go further with :func:`keep_freed_memory`.

Both are no-ops (returning False) where the C library is not glibc.
"""

from __future__ import annotations

import ctypes

__all__ = ["steady_arrays", "keep_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

#: blocks of at least this many bytes are mapped (and unmapped when freed): whole
#: levels and the visited set, which grow by ``realloc`` (served by remapping pages)
MMAP_THRESHOLD = 32 << 20
#: free memory at the heap's top kept for reuse, at most
TRIM_THRESHOLD = 128 << 20
#: the largest value ``mallopt`` takes (its argument is a C ``int``: a larger Python int
#: would be cut to its low 32 bits, and a threshold of 0 trims at every ``free``)
_INT_MAX = 2**31 - 1
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4

_done: set[str] = set()


def _mallopt(*settings: tuple[int, int]) -> bool:
    try:
        libc = ctypes.CDLL("libc.so.6")
        return all(bool(libc.mallopt(param, min(value, _INT_MAX)))
                   for param, value in settings)
    except (OSError, AttributeError):
        return False


def steady_arrays() -> bool:
    """Fixed thresholds (:data:`MMAP_THRESHOLD`, :data:`TRIM_THRESHOLD`) for this
    process, once: blocks below 32 MiB come from the heap, and up to 128 MiB of freed
    memory stays there for the next batch. True when set."""
    if "steady" not in _done:
        if not _mallopt((_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
            return False
        _done.add("steady")
    return True


def keep_freed_memory() -> bool:
    """Keep every freed block for reuse in this process: no ``mmap`` of large blocks,
    no trimming of the heap (up to 2 GiB free at its top). True when set.

    For the Spark backend's Python workers: a task allocates and frees arrays of its
    bucket's size many times over, and from ``mmap`` each one is fresh pages, a page
    fault each (and for huge pages a compaction), which cost a worker a large share of
    its CPU (measured on the shard pipeline: a quarter to a half of its numpy time).
    Reused heap memory costs none; the price is that a worker's resident memory stays
    at its peak, which the next level needs again anyway."""
    return _mallopt((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _INT_MAX))
