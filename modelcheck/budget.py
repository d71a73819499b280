"""Budgets of a run: how much memory and how many states the explorer may use.

A run stops *before* it would exceed a budget, at the last complete BFS level,
with status ``incomplete`` and reason ``memory`` or ``max-states`` (exit code 3),
rather than being killed by the operating system or dying of a ``MemoryError``.

* :func:`parse_size` / :func:`format_size`: ``--memory-limit 8G`` and back
  (:func:`parse_memory_limit` refuses less than 1 MiB as a slip).
* :func:`available_memory`: what this process may still allocate, measured when a
  run starts: the least of the system's available memory (``MemAvailable``), the
  room left in the cgroup's limit, and the room left under ``RLIMIT_AS`` /
  ``RLIMIT_DATA``. The default limit is :data:`SAFE_SHARE` of it: the rest is left
  for numpy's temporaries, which the cost model below does not count.
* :class:`MemoryBudget`: the explorer's cost model, in bytes, of what it holds
  (visited set, levels, frontier, a level's candidates) and of what it is about to
  allocate (one kernel batch, the merge at the end of a level, the growth of the
  visited set and the levels). The explorer asks it, before every batch, how many
  states the next batch may have (:meth:`MemoryBudget.batch_rows`: the batch shrinks
  as memory fills, and 0 means stop), and before storing a level whether it fits.

The limit bounds the explorer's own data; the interpreter, numpy and the spec
itself (already loaded when the limit is measured) are outside it.
"""

from __future__ import annotations

import os
import re
import resource
from dataclasses import dataclass

__all__ = ["SAFE_SHARE", "MIN_MEMORY_LIMIT", "parse_size", "parse_memory_limit",
           "format_size", "available_memory", "default_memory_limit", "MemoryBudget",
           "StopRun"]

#: the share of the memory available at start that the explorer may use by default
SAFE_SHARE = 0.6

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes in ``text``: a number with an optional unit K, M, G or T (powers of 1024;
    ``KB``, ``KiB`` and lower case are the same), e.g. ``512M``, ``1.5G``, ``8GiB``.

    >>> parse_size("512M"), parse_size("1.5g"), parse_size("2048")
    (536870912, 1610612736, 2048)
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtKMGT]?)(?:i?[bB])?\s*", text)
    if m is None or (m.group(2) == "" and text.strip().lower().endswith("ib")):
        raise ValueError(f"{text!r} is not a size: give a number of bytes with an optional "
                         "unit K, M, G or T, e.g. 512M or 8G")
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n <= 0:
        raise ValueError(f"{text!r}: a size must be positive")
    return n


#: the smallest ``--memory-limit`` taken: anything less is a slip (``1`` is one byte)
MIN_MEMORY_LIMIT = 1 << 20


def parse_memory_limit(text: str) -> int:
    """:func:`parse_size` for a ``--memory-limit``: a size below
    :data:`MIN_MEMORY_LIMIT` is refused as implausible (``ValueError``)."""
    n = parse_size(text)
    if n < MIN_MEMORY_LIMIT:
        raise ValueError(f"{text!r} is {n:,} byte{'s' if n != 1 else ''}, implausibly little "
                         "memory (a size without a unit is in bytes): give at least 1M, "
                         "e.g. 512M or 8G")
    return n


def format_size(n: float) -> str:
    """``n`` bytes for people: ``1.3 GiB``, ``512.0 MiB``, ``900 B``."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _proc_kib(path: str, key: str) -> int | None:
    """A ``key:  N kB`` line of a /proc file, in bytes."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def available_memory() -> int | None:
    """Bytes this process may still allocate (see the module docstring), or None when
    the system says nothing."""
    room: list[int] = []
    avail = _proc_kib("/proc/meminfo", "MemAvailable")
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            avail = None
    if avail is not None:
        room.append(avail)
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None and limit < 1 << 60:
            room.append(max(0, limit - usage))
    for rlim, key in ((resource.RLIMIT_AS, "VmSize"), (resource.RLIMIT_DATA, "VmData")):
        soft = resource.getrlimit(rlim)[0]
        used = _proc_kib("/proc/self/status", key)
        if soft != resource.RLIM_INFINITY and used is not None:
            room.append(max(0, soft - used))
    return min(room) if room else None


def default_memory_limit() -> int | None:
    """:data:`SAFE_SHARE` of :func:`available_memory` (None: unknown, no limit)."""
    avail = available_memory()
    return None if avail is None else int(avail * SAFE_SHARE)


class StopRun(Exception):
    """Raised inside an explorer to stop the run at the last complete level: ``reason``
    is ``memory``, ``max-states`` or ``interrupted`` (never escapes the explorer)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or reason)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class MemoryBudget:
    """The explorer's memory cost model (bytes) under a ``limit`` (None: unbounded).

    ``cells`` and ``words`` describe the state layout, ``actions`` the number of
    action instances, ``exact`` whether fingerprints are the packed states (then the
    frontier and the candidates need no packed words of their own).
    """

    limit: int | None
    cells: int
    words: int
    actions: int
    exact: bool
    #: the kernel's extra copies of each successor's words (symmetry, constraints)
    copies: int = 3
    #: the keys' ``uint64`` columns (``Kernel.key_width``: under a view, the view's);
    #: 0: as the state's words
    key_width: int = 0

    @property
    def per_state(self) -> int:
        """Kernel bytes per expanded state: its decoded cells and words, whatever fires."""
        return 8 * self.cells + 16 * self.words + 64

    @property
    def per_successor(self) -> int:
        """Kernel bytes per generated successor (words and their copies, fingerprint,
        parent, action, keys, de-duplication), plus what the explorer keeps of it."""
        return 8 * self.words * self.copies + 96 + self.per_candidate + self.merge_per_candidate

    @property
    def per_candidate(self) -> int:
        """Bytes the explorer holds per fresh candidate until the level ends."""
        return 8 + self.key_bytes + (0 if self.exact else 8 * self.words)

    @property
    def key_bytes(self) -> int:
        """Bytes of a fingerprint: one word, or two (two-word states, 128-bit hashes)."""
        if self.key_width:
            return 8 * self.key_width
        return 8 if self.words == 1 else 16

    @property
    def merge_per_candidate(self) -> int:
        """Extra bytes per candidate while the level's candidates are merged."""
        return 56 + 2 * self.key_bytes + (0 if self.exact else 16 * self.words)

    def fanout(self, observed: float | None) -> float:
        """Successors per state to plan with: 1.5 times the most seen, at most every
        action instance (before anything is seen: every action instance)."""
        if observed is None:
            return float(self.actions)
        return min(float(self.actions), max(1.0, 1.5 * observed))

    def batch_rows(self, used: int, candidates: int, remaining: int, batch_size: int,
                   fanout: float) -> int:
        """How many of the ``remaining`` states of the level the next batch may expand,
        holding ``used`` bytes and ``candidates`` candidate rows: at most ``batch_size``,
        0 when not even one state fits."""
        if self.limit is None:
            return min(batch_size, remaining)
        room = self.limit - used - candidates * self.merge_per_candidate
        per = self.per_state + fanout * self.per_successor
        return max(0, min(batch_size, remaining, int(room // per)))
