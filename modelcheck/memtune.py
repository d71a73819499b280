"""glibc ``malloc`` settings for processes whose work is large numpy arrays.

An exploration allocates and frees arrays of a batch's or a level's size over and over.
glibc serves blocks above a *dynamic* threshold with ``mmap`` and trims the heap's free
top above another one, so the same few megabytes are handed back to the system and
faulted in again page by page (on KRaft L3 a third of the explorer's page faults and
most of its system time). :func:`steady_arrays` fixes both thresholds; the Spark
backend's Python workers go further with :func:`keep_freed_memory`.

Both are no-ops (returning False) where the C library is not glibc. Both also stop
numpy from asking for transparent huge pages (:func:`small_pages`).
"""

from __future__ import annotations

import ctypes
import functools
import os

__all__ = ["steady_arrays", "keep_freed_memory", "small_pages", "release_free",
           "arrays_for", "keeps_all_freed", "MMAP_THRESHOLD", "TRIM_THRESHOLD",
           "KEEP_FREED_WORDS", "HUGEPAGE_ENV"]

#: blocks of at least this many bytes are mapped (and unmapped when freed): whole
#: levels and the visited set, which grow by ``realloc`` (served by remapping pages),
#: and a batch's successor arrays. At 32 MiB a level's arrays under that size came from
#: the heap among the batches' temporaries and pinned the heap's free memory around
#: them: KRaft L5 peaked at 37-40 bytes a state over the 20 it stores; at 4 MiB, 27
#: (page faults 29.4K -> 31.2K, system time the same)
MMAP_THRESHOLD = 4 << 20
#: free memory at the heap's top kept for reuse, at most
TRIM_THRESHOLD = 128 << 20
#: a run of states wider than this many words keeps every freed block
#: (:func:`keeps_all_freed`)
KEEP_FREED_WORDS = 2
#: the largest value ``mallopt`` takes (its argument is a C ``int``: a larger Python int
#: would be cut to its low 32 bits, and a threshold of 0 trims at every ``free``)
_INT_MAX = 2**31 - 1
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4

#: numpy's own switch for huge pages; when the user sets it, :func:`small_pages` leaves
#: numpy as the user asked
HUGEPAGE_ENV = "NUMPY_MADVISE_HUGEPAGE"

#: the settings this process runs with: "steady", "keep", or None (glibc's own)
_mode: list[str | None] = [None]
#: glibc's default ``M_MMAP_MAX`` (the mapped blocks allowed at once), which
#: :func:`keep_freed_memory` sets to 0 and :func:`steady_arrays` back
_DEFAULT_MMAP_MAX = 65536


def small_pages() -> bool:
    """Stop numpy from asking the kernel for transparent huge pages for its arrays
    (numpy's default on Linux: ``madvise(MADV_HUGEPAGE)`` on every block of 4 MiB and
    more), unless the user set ``NUMPY_MADVISE_HUGEPAGE``. True when numpy's setting is
    now off.

    An exploration keeps allocating level- and batch-sized arrays; each fault of a
    huge-page region zeroes 2 MiB and, with the kernel's ``defrag=madvise`` (the
    common default), compacts memory first, on a machine whose memory is full of the
    page cache of the run's own files. Measured on KRaft L6: the local explorer's
    system time 3.0-4.6 s -> 1.6-1.8 s, the Spark workers' task CPU 36 -> 33 s."""
    if os.environ.get(HUGEPAGE_ENV) is not None:
        return False
    try:
        import numpy as np

        core = getattr(np, "_core", None) or np.core
        setter = core.multiarray._set_madvise_hugepage
    except (ImportError, AttributeError):
        return False
    setter(False)
    return True


def _mallopt(*settings: tuple[int, int]) -> bool:
    try:
        libc = ctypes.CDLL("libc.so.6")
        return all(bool(libc.mallopt(param, min(value, _INT_MAX)))
                   for param, value in settings)
    except (OSError, AttributeError):
        return False


def release_free() -> bool:
    """Hand the free pages inside the heap back to the system (glibc's
    ``malloc_trim(0)``; False where the C library is not glibc).

    The heap keeps what it frees (:func:`steady_arrays`) and cannot shrink past the
    blocks still in use above a free one, so a level's batches leave their freed
    temporaries resident among the level's stored arrays, level after level; the local
    explorer calls this once a level of two-word keys is stored, so that the heap holds
    at most one level's worth of free pages (TwoPhase RM=8 with two-word keys: peak RSS
    ~4 bytes a state lower). The next level's batches fault those pages in again: once
    a level, not once a batch, but for one-word keys that still cost more than it saved
    (KRaft L5: 94K more page faults, 0.3 s of system time, for ~2 bytes a state)."""
    libc = _libc()
    if libc is None:
        return False
    try:
        libc.malloc_trim(0)
    except AttributeError:
        return False
    return True


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def steady_arrays() -> bool:
    """Fixed thresholds (:data:`MMAP_THRESHOLD`, :data:`TRIM_THRESHOLD`) for this
    process, set once unless :func:`keep_freed_memory` was called since: blocks below
    4 MiB come from the heap, and up to 128 MiB of freed memory stays there for the
    next batch (and :func:`small_pages`). True when set."""
    small_pages()
    if _mode[0] != "steady":
        if not _mallopt((_M_MMAP_MAX, _DEFAULT_MMAP_MAX), (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
            return False
        _mode[0] = "steady"
    return True


def keep_freed_memory() -> bool:
    """Keep every freed block for reuse in this process: no ``mmap`` of large blocks,
    no trimming of the heap (up to 2 GiB free at its top). True when set.

    For the Spark backend's Python workers: a task allocates and frees arrays of its
    bucket's size many times over, and from ``mmap`` each one is fresh pages, a page
    fault each (and for huge pages a compaction), which cost a worker a large share of
    its CPU (measured on the shard pipeline: a quarter to a half of its numpy time).
    Reused heap memory costs none; the price is that a worker's resident memory stays
    at its peak, which the next level needs again anyway. Also :func:`small_pages`."""
    small_pages()
    if _mode[0] != "keep":
        if not _mallopt((_M_MMAP_MAX, 0), (_M_TRIM_THRESHOLD, _INT_MAX)):
            return False
        _mode[0] = "keep"
    return True


def keeps_all_freed(n_words: int) -> bool:
    """Whether a run of states of ``n_words`` words keeps every freed block
    (:func:`keep_freed_memory`) rather than :func:`steady_arrays`: states wider than
    :data:`KEEP_FREED_WORDS` words. A batch's arrays then hold hundreds of bytes a
    state, over the mapping threshold: mapped afresh every batch and, trimmed every
    level (:func:`release_free`), faulted in again, for a peak that the batch arrays set
    anyway. Measured on the Kafka replication model (77 words a state, 1,627,914 states,
    one process): system time 21 s of a 113 s run -> 1.6 s of 78 s, page faults 5.4
    million -> 0.36 million, the same peak RSS (1.3 GB)."""
    return n_words > KEEP_FREED_WORDS


def arrays_for(n_words: int) -> bool:
    """The ``malloc`` settings of a run of states of ``n_words`` words
    (:func:`keeps_all_freed`), whatever an earlier run of the process set. True when
    set."""
    return keep_freed_memory() if keeps_all_freed(n_words) else steady_arrays()
