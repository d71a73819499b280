"""Executor side of the shard engine: per-bucket de-duplication and expansion in numpy.

The state space is split into ``K`` *buckets* by fingerprint (:func:`bucket_of`, a
SplitMix64 mix of the fingerprint's column 0: the same on every machine and every run).
Fingerprints are the run's state keys (:mod:`modelcheck.store`): one ``uint64`` column
(one-word states) or two (two-word states, exact; 128-bit hashes of wider ones), and
every fingerprint file below (children, parents, visited runs) has the keys' shape,
``(n,)`` or ``(n, 2)``, sorted as keys sort (column 0, then column 1). One
level is one Spark job of ``K`` tasks; task ``k`` of level ``d``
(:func:`run_bucket`) owns bucket ``k``:

1. it gathers the candidate transitions into bucket ``k`` that the ``K`` tasks of
   level ``d - 1`` wrote, keeps per child fingerprint the smallest (parent
   fingerprint, action id) (the local explorer's parent rule), drops the children
   already in the bucket's visited shard, and writes the survivors as the bucket's
   part of level ``d`` and the merged visited shard;
2. it expands those states (sorted by fingerprint, in batches, with the level
   engine's :class:`modelcheck.level.LevelExpansion`, exactly as the local explorer
   does), splits the de-duplicated successors by target bucket and writes them for
   level ``d + 1``;
3. it returns a small summary: counts, per-action coverage and the bucket's
   :class:`modelcheck.level.LevelFindings`, which the driver merges (by minima) and
   decides with the level rule.

**Expansion by range** (``modelcheck check --workers N``,
:class:`~modelcheck.shards.pool.PoolEngine`, whose jobs cost a few milliseconds): a
level is two jobs instead. Task ``k`` of the first commits bucket ``k`` (step 1 only,
:func:`run_bucket` with ``expand=None``); task ``i`` of the second (:func:`run_range`)
expands the ``i``-th fingerprint range of the whole level (:func:`range_cuts`, every
bucket's states in it, merged; cut where the level before's tasks would have taken
equal CPU, :func:`balanced_fractions`), drops the successors already in the visited shards
(complete now that every bucket committed the level) and writes the rest, parents
named by their rank in the level (:func:`write_unvisited`, :func:`narrow_ranks`); the
next commit then skips its visited check. A bucket is every other state of a span of
the level, a hash's choice, so its batches' successors overlap less than a range's,
whose states are neighbours as in a batch of the one-process explorer: on TwoPhase
RM=9 a bucket's batches left 36M successors to carry after their de-duplication, a
range's 29M, and after the visited check 10.3M are written instead of ~28M.

Everything a task reads was committed by an earlier, finished job, and everything it
writes goes to a temporary name first and is then linked into place unless the name
is taken (the first complete write stands): a task can be re-run (a lost executor, a
speculative copy, a resumed run) and writes the same bytes, and an attempt that
outlived its job cannot replace what the job committed. The files live in the run
directory, which all executors and the driver must reach (a local disk on one host;
shared storage on a multi-host cluster)::

    shards/L00012/b0003.fp.npy     level 12, bucket 3: fingerprints (sorted keys, uint64)
    shards/L00012/b0003.rank.npy   each state's parent as its rank in level 11 (its
                                    row among all buckets' states of level 11 in
                                    fingerprint order; uint32, int64 past 2**32 - 1)
    shards/L00012/b0003.parent.npy  or the parent fingerprints (keys, uint64): a level
                                    whose successors tasks of single buckets found
    shards/L00012/b0003.act.npy     action ids that reached them (-1: initial; int8,
                                    int16 or int32, the narrowest that holds them)
    shards/L00012/b0003.w.npy       packed words (n, k) (only where the keys are not
                                    the states: wider than two words, or a view)
    shards/V00012/b0003.base.npy    visited fingerprints of bucket 3 (sorted), levels
                                    0..s-1, and the bucket's level files of levels s..12
    shards/V00012/b0003.since.npy   complete the shard (``since``: s; see below)
    shards/C00012/f0003.*.npy       successors found by task 3 of level 12, ordered
                                    by target bucket (``off``: K + 1 offsets): ``fp``,
                                    the parent as ``rank`` (its rank in level 12, as
                                    above: the range tasks of ``--workers N`` and a
                                    level expanded in the driver, which has one
                                    producer) or ``row`` (its row in L00012/b0003,
                                    uint32: a task that expanded its bucket), and
                                    ``act`` (int8/16/32)

    shards/E00012/b0003.*.npy       with temporal properties: the state graph's part
                                    of task 3 of level 12 (:func:`write_graph_part`),
                                    each edge's row among the task's successors
                                    (``cix``, ``coff``: :func:`write_graph_targets`);
                                    ``all.*`` for a level expanded in the driver
    shards/E00012/t0003.*.npy       where the targets of those successors that lie in
                                    bucket 3 are (``rel``, ``row``: new in level 13 or
                                    a row of an earlier level; :func:`write_target_rows`)

Only the levels (``L*``) and the graph parts (``E*``) are kept to the end (traces
are rebuilt from the levels, the state graph from both); the driver retires a level's
``V`` and ``C`` files once the next level is committed: they move to
``shards/spare/``, and later writes overwrite them rather than create files
(:func:`retire`), so the run reuses its page-cache pages instead of freeing and
allocating them level after level.

**The visited shard** of a bucket is sorted runs: ``base``, and the bucket's level
files (``L``) since ``base`` was written, which hold the states of those levels sorted
already. ``base`` is rewritten to hold them all only once they hold more than
:data:`REBASE` times its states (bucket 0's decide for all buckets:
:func:`rebase_due`); an unchanged ``base`` moves to the next level as a hard link. So
a state is copied a few times over a run rather than once per level (rewriting the
whole shard every level cost more than the rest of a task on deep models), and
nothing but ``base`` is written for the shard (a ``delta`` run rewritten every level
was 0.43 GB of the 2.17 GB KRaft L6 wrote). The runs are only ever read memory-mapped.
"""

from __future__ import annotations

import contextlib
import errno
import mmap as _mmap
import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import SpecEvaluationError
from ..layout import words_of_keys
from ..level import KeptWords, LevelExpansion, LevelFindings
from ..memtune import arrays_for
from ..store import (
    empty_keys,
    group_min_mask,
    key_columns,
    key_find,
    key_int,
    key_ne,
    key_order,
    key_searchsorted,
    key_starts,
    keys_of,
    take_rows,
)
from .worker import WorkerConfig, encode_error, get_kernel

__all__ = ["ShardConfig", "bucket_of", "run_bucket", "level_dir", "visited_dir",
           "cand_dir", "write_array", "write_candidates", "write_candidate_rows",
           "BucketSummary", "INIT", "Block",
           "commit_block", "expand_block", "split_by_bucket", "merge_sorted", "load_visited",
           "visited_runs", "REBASE", "rebase_due", "run_level_here", "producers_of", "retire",
           "SPARE", "SPARE_DIRS", "parent_in", "graph_dir", "GraphPart", "write_graph_part",
           "graph_part_names", "write_graph_targets", "write_target_rows", "split_order",
           "range_cuts", "level_range", "run_range",
           "write_unvisited", "balanced_fractions", "BALANCE_MIN_CPU", "BALANCE_STEP",
           "narrow_ranks", "parent_kind", "key_at_rank"]

_U = np.uint64
_M1 = _U(0xBF58476D1CE4E5B9)
_M2 = _U(0x94D049BB133111EB)
#: the "level" whose candidate files hold the initial states (written by the driver)
INIT = -1
#: a bucket's visited ``delta`` run is merged into its ``base`` once it holds more than
#: this share of ``base``'s states
REBASE = 0.5


def bucket_of(fps: np.ndarray, k: int) -> np.ndarray:
    """Bucket (``0..k-1``) of each fingerprint: SplitMix64's finaliser of its column 0,
    then a range map.

    Exact fingerprints are packed states whose low bits vary little; mixing spreads
    them evenly. (Column 0 of a two-column key mixes both words of a two-word state, and
    is a 64-bit hash of a wider one.) Pure arithmetic on uint64: no process-dependent
    hashing. Computed in slices of :data:`_MIX_ROWS` in two reused buffers, which stay
    in the cache (the whole-array form made two temporaries of the input's size and went
    through memory a dozen times: 2-5x slower on 4M fingerprints).
    """
    fps = key_columns(np.asarray(fps, dtype=_U))[0]
    out = np.empty(len(fps), dtype=np.int64)
    n = min(len(fps), _MIX_ROWS)
    x = np.empty(n, dtype=_U)
    t = np.empty(n, dtype=_U)
    with np.errstate(over="ignore"):
        for lo in range(0, len(fps), _MIX_ROWS):
            m = min(_MIX_ROWS, len(fps) - lo)
            xv, tv = x[:m], t[:m]
            xv[...] = fps[lo:lo + m]
            for shift, mult in ((30, _M1), (27, _M2)):
                np.right_shift(xv, _U(shift), out=tv)
                xv ^= tv
                xv *= mult
            np.right_shift(xv, _U(31), out=tv)
            xv ^= tv
            xv >>= _U(32)
            xv *= _U(k)
            xv >>= _U(32)
            out[lo:lo + m] = xv
    return out


#: fingerprints mixed per slice by :func:`bucket_of` (two 256 KiB buffers)
_MIX_ROWS = 1 << 15


def _d(depth: int) -> str:
    return "init" if depth == INIT else f"{depth:05d}"


def level_dir(root: Path, depth: int) -> Path:
    return root / f"L{_d(depth)}"


def visited_dir(root: Path, depth: int) -> Path:
    return root / f"V{_d(depth)}"


def cand_dir(root: Path, depth: int) -> Path:
    return root / f"C{_d(depth)}"


def graph_dir(root: Path, depth: int) -> Path:
    """The directory of level ``depth``'s part of the state graph (temporal properties)."""
    return root / f"E{_d(depth)}"


def write_array(path: Path, a: np.ndarray, spare: Path | None = None) -> None:
    """Write ``a`` as ``.npy`` at ``path`` atomically: to a temporary name, then linked
    into place unless a file is there already (every writer of a path writes the same
    bytes; and a task attempt that outlived its job, whose inputs may since have been
    recycled, must not replace what its job committed). ``spare``: a directory of
    retired files (:func:`retire`), one of which is overwritten instead of creating a
    file, so that its pages in the page cache are reused rather than allocated anew."""
    make_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    a = np.ascontiguousarray(a)
    try:
        reused = spare is not None and _take_spare(spare, a.nbytes + 128, tmp)
        # Unbuffered: numpy writes the data of a raw file (FileIO) with one call, but
        # of a buffered "r+b" file in 16 MiB copies (overwriting a spare took 2-3x
        # as long).
        with open(tmp, "r+b" if reused else "wb", buffering=0) as f:
            np.save(f, a, allow_pickle=False)
            if reused:
                f.truncate()
        _link_new(tmp, path, spare)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        if e.errno is None and _free_bytes(path.parent) < a.nbytes:
            # numpy reports a short write without errno: say what it was
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from None
        raise
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _link_new(tmp: Path, path: Path, spare: Path | None) -> None:
    """Give the complete file ``tmp`` the name ``path`` unless ``path`` exists (then
    ``tmp`` goes back to ``spare``, or is deleted)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        if spare is not None:
            with contextlib.suppress(OSError):
                os.replace(tmp, spare / f"g00000.{tmp.name}")  # gone at the next retire
                return
        tmp.unlink(missing_ok=True)
        return
    except OSError as e:  # a file system without hard links: replace
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK):
            raise
        os.replace(tmp, path)
        return
    tmp.unlink()


#: the shards directory's subdirectory of retired files (:func:`retire`)
SPARE = "spare"
#: the shards directory's subdirectory of retired, empty directories (:func:`retire`)
SPARE_DIRS = "spare-dirs"


def make_dir(d: Path) -> None:
    """Make directory ``d`` (a level, visited or candidates directory of the shards
    directory) unless it exists: a retired one from ``SPARE_DIRS`` is renamed to it if
    there is one (removing and making directories cost ~4 ms each on an ext4 disk of a
    virtual machine, a rename 0.1 ms)."""
    if d.is_dir():
        return
    spare = d.parent / SPARE_DIRS
    try:
        with os.scandir(spare) as it:
            names = [e.path for e in it]
    except FileNotFoundError:
        names = []
    for p in names:
        try:
            os.rename(p, d)  # fails if another writer made ``d`` and wrote into it
            return
        except OSError:
            if d.is_dir():
                return
    d.mkdir(parents=True, exist_ok=True)


def _take_spare(spare: Path, nbytes: int, tmp: Path) -> bool:
    """Rename a retired file from ``spare`` to ``tmp``: the smallest of at least
    ``nbytes``, else the largest. False when there is none (another writer may take
    the chosen one first: then the next is tried)."""
    try:
        sizes = []
        with os.scandir(spare) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    sizes.append((e.stat().st_size, e.path))
    except FileNotFoundError:
        return False
    sizes.sort()
    fit = [p for n, p in sizes if n >= nbytes]
    for p in fit + [p for n, p in reversed(sizes) if n < nbytes]:
        try:
            os.rename(p, tmp)
            return True
        except FileNotFoundError:
            continue
    return False


def retire(root: Path, dirs: Sequence[Path], generation: int) -> None:
    """Delete ``dirs`` (subdirectories of ``root`` no longer read), keeping their files
    as spares: moved to ``root/spare``, where writers (:func:`write_array`) overwrite
    them instead of creating files. Deleting a file frees its page-cache pages, and
    allocating pages costs more than overwriting cached ones; on a VM that reports
    free memory to its host, much more (measured on such a VM, 512 MB: overwriting a
    cached file 0.08 s; a new file 0.16 s while the guest still holds the freed
    pages, 1.9 s once it has handed them back to the host). Files that are also linked
    elsewhere (a visited ``base`` shared with a later level) are only unlinked. Spares
    of an earlier ``generation`` that no writer took are deleted: the pool holds at
    most what one tidy retired."""
    spare = root / SPARE
    spare.mkdir(parents=True, exist_ok=True)
    with os.scandir(spare) as it:
        for e in it:
            if not e.name.startswith(f"g{generation:05d}."):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(e.path)
    for d in dirs:
        try:
            entries = list(os.scandir(d))
        except FileNotFoundError:
            continue
        for e in entries:
            try:
                if not e.is_file(follow_symlinks=False):
                    continue  # removed with the directory below
                if e.name.startswith(".") or e.stat(follow_symlinks=False).st_nlink != 1:
                    os.unlink(e.path)  # a writer's leftover, or linked elsewhere
                else:
                    os.rename(e.path, spare / f"g{generation:05d}.{d.name}.{e.name}")
            except FileNotFoundError:
                continue
        try:  # empty now: kept for a later level (make_dir)
            with os.scandir(d) as it:
                if next(it, None) is not None:
                    raise OSError(errno.ENOTEMPTY, "not empty")
            (root / SPARE_DIRS).mkdir(exist_ok=True)
            os.rename(d, root / SPARE_DIRS / f"{d.name}.{generation}.{os.getpid()}")
        except OSError:
            shutil.rmtree(d, ignore_errors=True)


def _free_bytes(directory: Path) -> int:
    try:
        st = os.statvfs(directory)
    except OSError:
        return 1 << 62
    return st.f_bavail * st.f_frsize


#: numpy reads a ``.npy`` header with ``ast.literal_eval``, and CPython 3.11's parser
#: is not safe to run in two threads at once ("SystemError: AST constructor recursion
#: depth mismatch"); the state graph is read by several threads, so a header that
#: :data:`_HEADER` does not match is parsed by numpy under this lock (the data is read
#: outside it)
_PARSE = threading.Lock()
#: the header ``numpy.save`` writes for a C-ordered array of at most two dimensions
#: (``{'descr': '<u8', 'fortran_order': False, 'shape': (12, 2), }``, padded):
#: parsed without ``ast.literal_eval``, which cost ~0.1 ms a file, and a task opens
#: dozens (its level's and visited runs' files, every level)
_HEADER = re.compile(r"\{'descr': '([<>|=][a-zA-Z]\d*)', 'fortran_order': False, "
                     r"'shape': \((\d*)(?:, (\d+))?,?\), \} *\n?")
#: ``.npy`` format versions whose header length is two bytes (1.x) or four (2.x, 3.x)
_HEADER_LEN = {1: 2, 2: 4, 3: 4}


def _load(path: Path, mmap: bool = True) -> np.ndarray:
    """The ``.npy`` array at ``path``, memory-mapped (read-only) or read; safe in any
    thread. Mapped with :mod:`mmap` and :func:`numpy.frombuffer` (a plain array over
    the mapping: ``numpy.load``'s ``memmap`` cost twice as much to open, and a
    ``memmap`` subclass instance is made for every slice of it)."""
    with open(path, "rb") as f:
        shape, fortran, dtype = _header(f)
        if fortran:  # pragma: no cover - never written so
            with _PARSE:
                return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
        count = int(np.prod(shape, dtype=np.int64))
        if not mmap:
            return np.fromfile(f, dtype=dtype, count=count).reshape(shape)
        offset = f.tell()
        if count == 0:
            out = np.empty(shape, dtype=dtype)
            out.flags.writeable = False
            return out
        buf = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
    return np.frombuffer(buf, dtype=dtype, count=count, offset=offset).reshape(shape)


def _header(f: Any) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran order, dtype)`` of the ``.npy`` file ``f`` (at its start), which
    is left at the start of the data."""
    start = f.tell()
    magic = f.read(8)
    width = _HEADER_LEN.get(magic[6]) if magic[:6] == b"\x93NUMPY" and len(magic) == 8 \
        else None
    if width is not None:
        size = int.from_bytes(f.read(width), "little")
        m = _HEADER.fullmatch(f.read(size).decode("latin1"))
        if m is not None:
            shape = () if not m[2] else (int(m[2]),) if m[3] is None else \
                (int(m[2]), int(m[3]))
            return shape, False, np.dtype(m[1])
    f.seek(start)
    fmt = np.lib.format
    with _PARSE:
        version = fmt.read_magic(f)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else \
            fmt.read_array_header_2_0
        return read_header(f)  # type: ignore[no-any-return]


def _rows(path: Path) -> int:
    """The number of rows of the ``.npy`` array at ``path`` (its header alone is read)."""
    with open(path, "rb") as f:
        return int(_header(f)[0][0])


def _read_rows(path: Path, lo: int, hi: int, out: np.ndarray | None = None) -> np.ndarray:
    """Rows ``lo:hi`` of the ``.npy`` array at ``path``, read with one ``read`` call
    (into ``out`` when given: an array of those rows' shape and type)."""
    with open(path, "rb") as f:
        shape, fortran, dtype = _header(f)
        if fortran:  # pragma: no cover - never written so
            rows = np.array(np.load(path, mmap_mode="r")[lo:hi])
            if out is None:
                return rows
            out[...] = rows
            return out
        row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
        f.seek(lo * row * dtype.itemsize, os.SEEK_CUR)
        if out is None:
            out = np.empty((hi - lo, *shape[1:]), dtype=dtype)
        elif out.dtype != dtype or out.shape != (hi - lo, *shape[1:]) \
                or not out.flags.c_contiguous:
            raise ValueError(f"{path}: rows of {dtype} {shape[1:]} do not fit the buffer")
        want = out.nbytes
        got = f.readinto(out.data)
        if got != want:
            raise OSError(f"{path}: {got} bytes read where {want} were expected "
                          "(a truncated file)")
    return out


@dataclass(frozen=True)
class ShardConfig:
    """What a task needs (pickled into it): the kernel's config and the run's layout."""

    worker: WorkerConfig
    root: str  # the shards directory of the run directory
    buckets: int

    @property
    def exact(self) -> bool:
        """The fingerprints are the packed states (no word files)."""
        return self.worker.exact

    @property
    def key_width(self) -> int:
        """The ``uint64`` columns of a fingerprint."""
        return self.worker.key_width

    def keys(self, n: int) -> np.ndarray:
        """An uninitialised array of ``n`` fingerprints."""
        return np.empty(n if self.key_width == 1 else (n, 2), dtype=_U)


@dataclass
class BucketSummary:
    """What task ``bucket`` of a level found (returned to the driver)."""

    bucket: int
    new: int  # states of this level in the bucket
    reached: list[int]  # of those, per action id that reached them
    expand: bool | None  # the mode of run_bucket
    found: LevelFindings  # what expanding the bucket found (empty when not expanded)
    candidates: int  # distinct successors written (before the visited check)
    cpu: float = 0.0  # CPU seconds the task took (its process's time)


def write_candidates(root: Path, depth: int, producer: int, buckets: int, fps: np.ndarray,
                     parents: np.ndarray, acts: np.ndarray, words: np.ndarray | None,
                     ranks: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Write transitions (child fingerprints, parent fingerprints, action ids, child words)
    split by target bucket (their order kept within each bucket), for level
    ``depth + 1``; returns the split (:func:`split_order`). ``ranks``: ``parents`` are
    the parents' ranks in level ``depth`` (:func:`narrow_ranks`; the level's states
    in fingerprint order), written as the ``rank`` column."""
    return _write_split(cand_dir(root, depth), f"f{producer:04d}", buckets, fps,
                        {"rank" if ranks else "parent": parents, "act": narrow_acts(acts),
                         "w": words})


def narrow_ranks(rows: np.ndarray, start: int = 0) -> np.ndarray:
    """Ranks ``start + rows`` as uint32, or int64 where one exceeds it: a parent named by
    its rank in its level (the level's states, every bucket's, in fingerprint order)
    rather than by its fingerprint takes 4 bytes instead of 8 or 16 in the candidate
    and level files, and ranks in one level compare as the fingerprints do, so the
    parent rule (the smallest parent fingerprint) picks by rank."""
    if not len(rows):
        return np.zeros(0, np.uint32)
    if int(rows.max()) + start < 1 << 32:
        out = rows.astype(np.uint32)
        if start:
            out += np.uint32(start)
        return out
    return rows.astype(np.int64) + start


def write_candidate_rows(root: Path, depth: int, producer: int, buckets: int,
                         fps: np.ndarray, rows: np.ndarray, acts: np.ndarray,
                         words: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`write_candidates`, for task ``producer`` of job ``depth``, whose parents
    are named by their ``rows`` in the producer's part of level ``depth`` (the file
    ``L{depth}/b{producer}``) rather than by fingerprint: 4 bytes a transition for the row
    and action id (5-8 bytes) instead of 12, and the task that commits them looks the parents up."""
    row_t = np.uint32 if len(rows) == 0 or int(rows.max()) < 1 << 32 else np.int64
    return _write_split(cand_dir(root, depth), f"f{producer:04d}", buckets, fps,
                        {"row": rows.astype(row_t), "act": narrow_acts(acts), "w": words})


def narrow_acts(acts: np.ndarray) -> np.ndarray:
    """Action ids (-1: an initial state) in the narrowest of int8, int16 and int32 that
    holds them: readers take the type from the file."""
    n = int(acts.max()) + 1 if len(acts) else 0
    return acts.astype(np.int8 if n <= 1 << 7 else np.int16 if n <= 1 << 15 else np.int32)


def _write_split(d: Path, name: str, buckets: int, fps: np.ndarray,
                 columns: dict[str, np.ndarray | None]) -> tuple[np.ndarray, np.ndarray]:
    order, off = split_order(fps, buckets)
    spare = d.parent / SPARE
    write_array(d / f"{name}.fp.npy", take_rows(fps, order), spare)
    for col, a in columns.items():
        if a is not None:
            write_array(d / f"{name}.{col}.npy", take_rows(a, order), spare)
    write_array(d / f"{name}.off.npy", off)  # last: its presence marks the set complete
    return order, off


def producers_of(root: Path, depth: int, buckets: int) -> int:
    """How many producers wrote the successors of level ``depth`` (1: the driver, or
    ``buckets`` tasks), read from the run directory (for a resumed run, which does not
    know where that level ran)."""
    d = cand_dir(root, depth)
    n = 1 if buckets == 1 or not (d / "f0001.off.npy").exists() else buckets
    if not (d / f"f{n - 1:04d}.off.npy").exists():
        raise RuntimeError(f"{d} does not hold the successors of level {depth} in full")
    return n


def _gather(cfg: ShardConfig, depth: int, bucket: int, producers: int | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """All candidate transitions into ``bucket`` for level ``depth``, written by
    ``producers`` producers (1: the driver; default: one task per bucket), with their
    parents' ranks in level ``depth - 1`` where the producers wrote ranks, else their
    fingerprints (looked up in level ``depth - 1`` where a task wrote rows), each
    column read into one array. The producers of one level all name parents the same
    way (:func:`parent_kind`)."""
    root = Path(cfg.root)
    src = cand_dir(root, depth - 1 if depth > 0 else INIT)
    if depth == 0 or producers is None:
        producers = 1 if depth == 0 else cfg.buckets
    spans = []
    for j in range(producers):
        off = _load(src / f"f{j:04d}.off.npy", mmap=False)
        lo, hi = int(off[bucket]), int(off[bucket + 1])
        if hi > lo:
            spans.append((j, lo, hi))
    n = sum(hi - lo for _, lo, hi in spans)
    kinds = {parent_kind(src / f"f{j:04d}") for j in range(producers)}
    if len(kinds) != 1:
        raise RuntimeError(f"{src}: producers name parents in different ways {kinds} "
                           "(a bug: please report it)")
    kind = kinds.pop()
    fps = cfg.keys(n)
    parents = cfg.keys(n) if kind != "rank" else np.empty(n, np.result_type(
        *(_dtype(src / f"f{j:04d}.rank.npy") for j in range(producers))))
    acts = np.empty(n, np.int32)
    words = None if cfg.exact else np.empty((n, cfg.worker.n_words), _U)
    at = 0
    for j, lo, hi in spans:
        name = f"f{j:04d}"
        part = slice(at, at + hi - lo)
        _read_rows(src / f"{name}.fp.npy", lo, hi, out=fps[part])
        if kind == "rank":
            rank_file = src / f"{name}.rank.npy"
            if _dtype(rank_file) == parents.dtype:
                _read_rows(rank_file, lo, hi, out=parents[part])
            else:
                parents[part] = _read_rows(rank_file, lo, hi)
        elif kind == "row":
            level = _load(level_dir(root, depth - 1) / f"b{j:04d}.fp.npy")
            np.take(level, _read_rows(src / f"{name}.row.npy", lo, hi), axis=0,
                    out=parents[part])
        else:
            _read_rows(src / f"{name}.parent.npy", lo, hi, out=parents[part])
        acts[part] = _read_rows(src / f"{name}.act.npy", lo, hi)
        if words is not None:
            _read_rows(src / f"{name}.w.npy", lo, hi, out=words[part])
        at += hi - lo
    return fps, parents, acts, words


def parent_kind(prefix: Path) -> str:
    """How the producer's files ``prefix.*.npy`` (or a level's bucket files) name
    parents: ``rank`` (rank in the level before, :func:`narrow_ranks`), ``row`` (row in
    the producer's bucket of the level, candidate files only) or ``parent``
    (fingerprints)."""
    for kind in ("rank", "row"):
        if prefix.with_name(f"{prefix.name}.{kind}.npy").exists():
            return kind
    return "parent"


def _dtype(path: Path) -> np.dtype:
    with open(path, "rb") as f:
        return _header(f)[2]


def _dedupe(fps: np.ndarray, parents: np.ndarray, acts: np.ndarray,
            words: np.ndarray | None, inverse: list[np.ndarray] | None = None
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Per child fingerprint the row with the smallest (parent fp, action id);
    ``parents`` may be the parents' ranks in their level, which compare as their
    fingerprints do.

    Each producer already kept, per flush of its successors, one row per child (its
    smallest action from the smallest parent in the flush), and a parent belongs to
    exactly one flush of one producer: rows of one child have distinct parents, so the
    smallest parent picks the row. The input is a few runs sorted by fp (one per
    producer flush), which a stable sort merges. ``inverse``, when given, receives per
    input row the index of its fingerprint among the returned ones.
    """
    if len(fps) == 0:
        if inverse is not None:
            inverse.append(np.zeros(0, np.int64))
        return fps, parents, acts, words
    order = key_order(fps)
    sf = take_rows(fps, order)
    first = key_starts(sf)
    if inverse is not None:
        inv = np.empty(len(fps), dtype=np.int64)
        inv[order] = np.cumsum(first) - 1
        inverse.append(inv)
    sp = take_rows(parents, order)
    keep = group_min_mask(first, sp)
    rows = order[keep]
    return (take_rows(sf, keep), take_rows(sp, keep), acts[rows],
            None if words is None else take_rows(words, rows))


def _not_in(runs: Sequence[np.ndarray], fps: np.ndarray) -> np.ndarray:
    """Mask of ``fps`` (sorted, distinct) in none of ``runs`` (sorted, disjoint keys of
    the same shape).

    Runs holding together at most :data:`MERGE_SEARCH` times as many fingerprints as
    ``fps`` are merged with them (sorted runs: a linear pass for two, then only the
    fingerprints found twice are located in ``fps``); larger ones are binary-searched.
    Measured on 2-13M-state runs and 1-2M queries: the merge costs ~5 ns per element
    of both, the search 45-60 ns a query, out of cache."""
    out = np.ones(len(fps), dtype=bool)
    if len(fps) == 0:
        return out
    # only the part of each run between the smallest and the largest query can hold
    # one (a range task's successors lie near its range: a fraction of the shard)
    ends = take_rows(fps, np.array([0, len(fps) - 1]))
    spans = [key_searchsorted(r, ends) if len(r) else (0, 0) for r in runs]
    runs = [r[int(lo):int(hi) + 1] for r, (lo, hi) in zip(runs, spans, strict=True)
            if int(hi) + 1 > int(lo) and int(lo) < len(r)]
    if not runs:
        return out
    if sum(len(r) for r in runs) > MERGE_SEARCH * len(fps):
        for r in runs:
            pos = key_searchsorted(r, fps)
            pos[pos == len(r)] = 0
            out &= key_ne(take_rows(r, pos), fps)
        return out
    both = merge_sorted(*runs, fps)
    twice = take_rows(both, np.flatnonzero(~key_starts(both)))  # in a run and in fps
    out[key_searchsorted(fps, twice)] = False
    return out


#: :func:`_not_in` merges runs holding up to this many times as many fingerprints as the
#: queries, and binary-searches larger ones
MERGE_SEARCH = 8


def run_bucket(cfg: ShardConfig, depth: int, bucket: int, expand: bool | None,
               again: bool = False, producers: int | None = None,
               unvisited: bool = False) -> BucketSummary:
    """Task ``bucket`` of level ``depth`` (see the module docstring).

    ``expand`` is ``None`` to only commit the level (count its new states; a run that
    stops at the level before needs their number), ``False`` to check invariants on
    them without generating successors (``--max-depth``), ``True`` for both.
    ``again`` expands the already committed level ``depth`` once more (a resumed run
    whose ``--max-depth`` differs from the interrupted one's). ``producers`` says how
    many wrote the level's transitions (1 when the level before ran in the driver;
    default: one task per bucket); ``unvisited`` that they wrote no visited state
    (:func:`write_unvisited`: the commit skips the visited check). Failures are re-raised
    carrying their message for the driver (:func:`modelcheck.shards.worker.encode_error`).
    """
    try:
        cpu = time.process_time()
        out = _run_bucket(cfg, depth, bucket, expand, again, producers, unvisited)
        out.cpu = time.process_time() - cpu
        return out
    except Exception as e:  # noqa: BLE001 - everything is reported to the driver
        raise encode_error(e) from None


def _committed(cfg: ShardConfig, depth: int, bucket: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    lvl = level_dir(Path(cfg.root), depth)
    name = f"b{bucket:04d}"
    return (_load(lvl / f"{name}.fp.npy", mmap=False),
            _load(lvl / f"{name}.{parent_kind(lvl / name)}.npy", mmap=False),
            _load(lvl / f"{name}.act.npy", mmap=False),
            None if cfg.exact else _load(lvl / f"{name}.w.npy", mmap=False))


def visited_files(root: Path, depth: int, bucket: int) -> tuple[Path, Path]:
    """The ``base`` run of ``bucket``'s visited shard after level ``depth``, and the file
    holding ``since``: the first of the levels whose files complete the shard."""
    d = visited_dir(root, depth)
    return d / f"b{bucket:04d}.base.npy", d / f"b{bucket:04d}.since.npy"


def visited_runs(root: Path, depth: int, bucket: int) -> tuple[Path, list[Path], bool]:
    """The files of ``bucket``'s visited shard after level ``depth``: its ``base`` run,
    the runs that complete it (the bucket's level files ``since`` ``base`` was
    written), and whether the shard has this form. Older run directories hold a
    ``delta`` run beside ``base``, or a single run ``b0003.npy``."""
    base, since = visited_files(root, depth, bucket)
    name = f"b{bucket:04d}"
    if since.exists():
        first = int(_load(since, mmap=False)[0])
        return base, [level_dir(root, j) / f"{name}.fp.npy"
                      for j in range(first, depth + 1)], True
    if base.exists():
        return base, [visited_dir(root, depth) / f"{name}.delta.npy"], False
    return visited_dir(root, depth) / f"{name}.npy", [], False


def load_visited(root: Path, depth: int, bucket: int) -> list[np.ndarray]:
    """``bucket``'s visited fingerprints after level ``depth`` as disjoint sorted runs,
    memory-mapped: ``base`` first (see :func:`visited_runs`)."""
    base, runs, _ = visited_runs(root, depth, bucket)
    return [_load(base)] + [_load(r) for r in runs]


def rebase_due(root: Path, depth: int) -> bool:
    """Whether job ``depth`` rewrites each bucket's visited ``base`` to hold all its
    states: when bucket 0's level runs after level ``depth - 1`` hold more than
    :data:`REBASE` times its ``base``'s states (or its shard has an older form). One
    bucket decides for all (buckets hold near equal shares of the states), so the
    tasks of a level rewrite their bases together: a level lasts as long as its
    slowest task, and bases rewritten one level apart made two levels slow instead of
    one. Read from the files of a committed level, so every task (and a re-run or
    resumed one) decides the same."""
    base, runs, current = visited_runs(root, depth - 1, 0)
    if not current:
        return True
    return sum(_rows(r) for r in runs) > REBASE * _rows(base)


def merge_sorted(*runs: np.ndarray) -> np.ndarray:
    """The union of sorted runs of keys (of one shape), sorted (a new array)."""
    out = np.concatenate(runs, dtype=_U)
    if out.ndim == 1:
        out.sort(kind="stable")  # sorted runs: merged (timsort)
        return out
    return take_rows(out, key_order(out))  # a stable sort of column 0 merges the runs


def link_or_copy(src: Path, dst: Path, spare: Path | None = None) -> None:
    """Make ``dst`` hold ``src``'s bytes unless it exists (as :func:`write_array`): a
    hard link where the file system has them, a copy elsewhere."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except FileExistsError:
        return
    except OSError:
        write_array(dst, _load(src, mmap=False), spare)


def _commit(cfg: ShardConfig, depth: int, bucket: int, producers: int | None = None,
            unvisited: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """De-duplicate the transitions into ``bucket`` (``unvisited``: their producers
    dropped the visited ones); write its part of level ``depth`` and its visited
    shard; with temporal properties, where each transition's target lies
    (:func:`write_target_rows`)."""
    root = Path(cfg.root)
    name = f"b{bucket:04d}"
    seen = load_visited(root, depth - 1, bucket) if depth > 0 else None
    targets: list[np.ndarray] | None = [] if cfg.worker.temporal and depth > 0 else None
    cands = _gather(cfg, depth, bucket, producers)
    fps, parents, acts, words = commit_block(cands, seen, unvisited, targets)
    lvl = level_dir(root, depth)
    spare = root / SPARE
    if targets is not None:
        write_target_rows(root, depth, bucket, *targets)
    write_array(lvl / f"{name}.fp.npy", fps, spare)
    # ranks (1-D, never of a key's type) or fingerprints
    kind = "rank" if parents.dtype != _U else "parent"
    write_array(lvl / f"{name}.{kind}.npy", parents, spare)
    write_array(lvl / f"{name}.act.npy", narrow_acts(acts), spare)
    if words is not None:
        write_array(lvl / f"{name}.w.npy", words, spare)
    # The shard after this level: ``base`` and the bucket's level files from ``since``
    # on (this level's among them), or everything merged into a new ``base``.
    base_file, since_file = visited_files(root, depth, bucket)
    if seen is None or rebase_due(root, depth):
        write_array(base_file, merge_sorted(*(seen or ()), fps), spare)
        since = depth + 1
    else:  # the shard has the current form (else a rebase is due): base, then the
        # level runs since..depth-1
        link_or_copy(visited_files(root, depth - 1, bucket)[0], base_file, spare)
        since = depth + 1 - len(seen)
    write_array(since_file, np.array([since], dtype=np.int64))
    return fps, parents, acts, words


#: transitions or states of a bucket: ``(fps, parent fps, action ids, words or None)``
Block = tuple[np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]


def commit_block(cands: Block, seen: Sequence[np.ndarray] | None,
                 unvisited: bool = False, targets: list[np.ndarray] | None = None) -> Block:
    """A bucket's part of the next level, sorted by fingerprint, from the transitions
    into it (``cands``, any order) and its visited fingerprints (sorted runs; None for
    level 0). ``unvisited``: the transitions' producers dropped the visited states
    already (:func:`write_unvisited`). ``targets``, when given, receives the distinct
    fingerprints of ``cands`` (sorted), per transition the index of its own among them,
    and the indices of those that are new (the rows of the returned block)."""
    inverse: list[np.ndarray] | None = [] if targets is not None else None
    fps, parents, acts, words = _dedupe(*cands, inverse=inverse)
    if targets is not None:
        assert inverse is not None
        targets += [fps, inverse[0]]
    if seen is None or unvisited:
        if targets is not None:
            targets.append(np.arange(len(fps)))
        return fps, parents, acts, words
    rows = np.arange(len(fps))
    # The level runs first (a successor seen before was mostly seen lately: KRaft L5,
    # 16% of the de-duplicated successors in the last levels, 7% in the base), then
    # ``base`` for what they left.
    for runs in (seen[1:], seen[:1]):
        rows = rows[_not_in(runs, take_rows(fps, rows))]
    if targets is not None:
        targets.append(rows)
    return (take_rows(fps, rows), take_rows(parents, rows), acts[rows],
            None if words is None else take_rows(words, rows))


#: told the error of a batch that raised, before the level rule locates its first
#: raising state (set in a worker process of ``--workers N``: it tells the coordinator,
#: so that a Ctrl-C meanwhile still reports the spec error)
SPEC_ERROR_NOTICE: Callable[[SpecEvaluationError], None] | None = None


def expand_block(cfg: ShardConfig, bucket: int, level: Block, expand: bool | None,
                 rows: bool = False, graph: Path | None = None,
                 targets: list[np.ndarray] | None = None
                 ) -> tuple[BucketSummary, Block | None]:
    """Expand a bucket's part of a level (``expand`` as in :func:`run_bucket`): its
    summary and the de-duplicated successors (sorted by fingerprint), or None when the
    level has no next level to write. ``rows`` names each successor's parent by its row
    in ``level`` instead of its fingerprint. With ``graph`` (a file prefix) and temporal
    properties in the worker's config, the block's part of the state graph is written
    there (:func:`write_graph_part`), and ``targets``, when given, receives the index of
    each of its edges' target among the returned successors (for
    :func:`write_graph_targets`)."""
    kernel = get_kernel(cfg.worker)
    if (kernel.key_width, kernel.exact) != (cfg.key_width, cfg.exact):
        raise RuntimeError(
            f"spec {cfg.worker.target} keys states by {kernel.key_width} column(s) "
            f"({kernel.key_kind}) here but {cfg.key_width} where the run started: the "
            "workers run different spec code.")
    n_act = len(kernel.actions)
    fps, parents, acts, words = level
    real = acts[acts >= 0]
    reached = np.bincount(real, minlength=n_act) if len(real) else np.zeros(n_act, np.int64)
    out = BucketSummary(bucket, len(fps), [int(x) for x in reached], expand,
                        LevelFindings(n_act), 0)
    if expand is None:
        return out, None
    w = words_of_keys(fps) if words is None else words
    part = GraphPart(fps, n_act, len(kernel.labels)) \
        if graph is not None and cfg.worker.temporal else None
    # Successors are de-duplicated per batch and per flush (a few million rows); the
    # duplicates left across flushes and producers meet in the owning bucket's task.
    lx = LevelExpansion(kernel, fps, w, expand=expand, batch_size=cfg.worker.batch_size,
                        flush_rows=cfg.worker.flush_rows,
                        on_batch=None if part is None else part.on_batch,
                        inverse=part is not None, on_error=SPEC_ERROR_NOTICE)
    chunks = []
    inverses = []  # per flush: each transition's successor among all flushes' successors
    at = 0
    for chunk in lx.candidates():
        chunks.append(chunk)
        if part is not None:
            assert lx.inverse is not None
            wide = at + len(chunk[0]) >= 1 << 31  # (int32, 4 bytes a transition, else)
            inverses.append(np.add(lx.inverse, at, dtype=np.int64 if wide else np.int32))
        at += len(chunk[0])
    out.found = lx.findings
    if part is not None and graph is not None and not lx.findings.phase1_problem \
            and lx.findings.exp_error is None:
        write_graph_part(graph, part, Path(cfg.root) / SPARE)
    if not expand or lx.findings.phase1_problem or lx.findings.exp_error is not None:
        return out, None  # no next level
    if len(chunks) == 1:  # one flush (most levels): no copy
        u, kmin, cw = chunks[0]
        assert not isinstance(cw, KeptWords)  # (words as arrays: no ``lazy_words``)
    elif chunks:
        u = np.concatenate([c[0] for c in chunks])
        kmin = np.concatenate([c[1] for c in chunks])
        cw = None if cfg.exact else np.concatenate([c[2] for c in chunks])  # type: ignore[misc]
    else:
        u, kmin = empty_keys(cfg.key_width), np.zeros(0, np.int64)
        cw = None if cfg.exact else np.zeros((0, cfg.worker.n_words), _U)
    cparents, cacts = lx.rows_and_actions(kmin) if rows else lx.parents(kmin)
    out.candidates = len(u)
    if part is not None and targets is not None:
        # each edge's successor among the yielded ones (the transitions that change
        # the state, in the order the graph part holds them)
        inv = np.concatenate(inverses) if inverses else np.zeros(0, np.int64)
        targets.append(inv[np.concatenate(part.keep)] if part.keep else inv[:0])
    return out, (u, cparents, cacts, cw)


class GraphPart:
    """A block's part of the state graph (temporal properties), as its expansion
    reports it batch by batch (:meth:`on_batch`, the hook of
    :class:`~modelcheck.level.LevelExpansion`): the transitions that change the
    state (source row in the block, action id; their targets are numbered through the
    task's successors, :func:`write_graph_targets`), per step formula whether it holds
    on each, and per row of
    the block whether each state predicate holds (the kernel's ``labels`` and
    ``step_labels``, see :class:`~modelcheck.kernel.Checks`)."""

    def __init__(self, fps: np.ndarray, n_act: int, n_labels: int) -> None:
        self.fps = fps
        self.n_act = n_act
        self.labels = np.ones((len(fps), n_labels), dtype=bool)
        self.src: list[np.ndarray] = []
        self.act: list[np.ndarray] = []
        self.steps: list[np.ndarray] = []
        #: per batch with successors: which of its transitions change the state
        self.keep: list[np.ndarray] = []

    def on_batch(self, start: int, ex: Any) -> None:
        for j, rows in enumerate(ex.label_rows):
            self.labels[start + rows, j] = False
        if not len(ex.child_fps):
            return
        src = ex.parent_rows.astype(np.int64) + start
        keep = key_ne(ex.child_fps, take_rows(self.fps, src))  # stuttering is implicit
        self.keep.append(keep)
        src, act = src[keep], ex.action_ids[keep].astype(np.int64)
        self.src.append(src.astype(np.uint32))
        self.act.append(act)
        if ex.step_label_hits:
            key = src * self.n_act + act
            self.steps.append(np.stack(
                [~np.isin(key, (rows.astype(np.int64) + start) * self.n_act + ids)
                 for rows, ids, _ in ex.step_label_hits], axis=1))


def write_graph_part(prefix: Path, part: GraphPart, spare: Path | None = None) -> None:
    """Write ``part`` as ``.npy`` files named ``prefix`` then ``.lab`` (state predicates:
    bool, a row per state of the block, a column per predicate), ``.src`` (``uint32``
    rows), ``.act`` (int8/16/32) and ``.step`` (bool, a column per step formula) a row
    per transition; ``.src`` last, so a reader that finds it
    finds the others (every attempt writes the same bytes)."""
    def cat(parts: list[np.ndarray], empty: np.ndarray) -> np.ndarray:
        return np.concatenate(parts) if parts else empty

    n_steps = part.steps[0].shape[1] if part.steps else 0
    base = prefix.name
    files = {
        "lab": part.labels,
        "act": narrow_acts(cat(part.act, np.zeros(0, np.int64))),
        "step": cat(part.steps, np.zeros((0, n_steps), dtype=bool)),
        "src": cat(part.src, np.zeros(0, np.uint32)),
    }
    for ext, a in files.items():
        write_array(prefix.with_name(f"{base}.{ext}.npy"), a, spare)


def graph_part_names(root: Path, depth: int, buckets: int) -> list[str]:
    """The names of level ``depth``'s state-graph parts (:func:`write_graph_part`), in
    the order :func:`~modelcheck.shards.stategraph.read_state_graph` reads them: one
    ``all`` when the driver expanded the level, else one per bucket."""
    if (graph_dir(root, depth) / "all.src.npy").exists():
        return ["all"]
    return [f"b{b:04d}" for b in range(buckets)]


def write_graph_targets(prefix: Path, targets: np.ndarray, order: np.ndarray,
                        off: np.ndarray, spare: Path | None = None) -> None:
    """Write where the targets of a graph part's edges went among its task's successors
    (``targets``: each edge's index among them, as :func:`expand_block` gives it),
    which :func:`write_candidates` wrote split by bucket (``order``, ``off``: as
    :func:`split_order` gives them): ``prefix`` then ``.cix`` (each edge's row in the
    successors' files, ``uint32`` or ``int64``) and ``.coff`` (the buckets' offsets
    there). The task of the next level that owns a bucket writes where those rows lie
    (:func:`write_target_rows`), so the coordinating process numbers the targets by
    gathers instead of searching their keys."""
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    cix = place[targets]
    base = prefix.name
    write_array(prefix.with_name(f"{base}.coff.npy"), off.astype(np.int64), spare)
    write_array(prefix.with_name(f"{base}.cix.npy"),
                cix.astype(np.uint32 if len(order) < 1 << 32 else np.int64), spare)


def write_target_rows(root: Path, depth: int, bucket: int, ufps: np.ndarray,
                      inverse: np.ndarray, new: np.ndarray) -> None:
    """For every transition into ``bucket`` of level ``depth`` (in the order its task
    gathered them: producer by producer, each producer's rows of the bucket in its
    file's order), where its target lies: ``t<bucket>.rel.npy`` in level ``depth - 1``'s
    graph directory (``int8``, ``int16`` past 127 levels: the target is in level
    ``depth - rel``) and ``t<bucket>.row.npy`` (its row in that level's file of the
    bucket, ``uint32`` or ``int64``). ``ufps`` are the transitions' distinct targets
    (sorted), ``inverse`` each transition's index among them and ``new`` the indices of
    those new in level ``depth`` (see :func:`commit_block`); the others are looked up
    in the bucket's files of the levels before, the most recent first (nearly all lie in
    the one before)."""
    rel = np.zeros(len(ufps), dtype=np.int8 if depth < 1 << 7 else np.int16)
    row = np.empty(len(ufps), dtype=np.int64)
    row[new] = np.arange(len(new))
    seen = np.ones(len(ufps), dtype=bool)
    seen[new] = False
    rest = np.flatnonzero(seen)
    name = f"b{bucket:04d}"
    for x in range(depth - 1, -1, -1):
        if not len(rest):
            break
        keys = _load(level_dir(root, x) / f"{name}.fp.npy")
        got = key_find(keys, take_rows(ufps, rest))
        hit = got >= 0
        rel[rest[hit]] = depth - x
        row[rest[hit]] = got[hit]
        rest = rest[~hit]
    if len(rest):
        raise RuntimeError(f"a successor of level {depth - 1} in bucket {bucket} is neither "
                           "new nor in the bucket's levels (a bug: please report it)")
    gd = graph_dir(root, depth - 1)
    spare = root / SPARE
    # the row file first, the rel file last: a reader that finds it finds both
    write_array(gd / f"t{bucket:04d}.row.npy",
                row[inverse].astype(np.uint32 if len(row) == 0 or int(row.max()) < 1 << 32
                                    else np.int64), spare)
    write_array(gd / f"t{bucket:04d}.rel.npy", rel[inverse], spare)


def split_order(fps: np.ndarray, buckets: int) -> tuple[np.ndarray, np.ndarray]:
    """The order of the keys ``fps`` by target bucket (their order kept within each
    bucket) and the ``buckets + 1`` offsets of the buckets' rows in it."""
    b = bucket_of(fps, buckets)
    if buckets <= 1 << 16:
        b = b.astype(np.uint16)
    order = np.argsort(b, kind="stable")  # by bucket (a radix sort), fp order kept inside
    off = np.searchsorted(b[order], np.arange(buckets + 1)).astype(np.int64)
    return order, off


def split_by_bucket(block: Sequence[np.ndarray | None], buckets: int
                    ) -> tuple[Block, np.ndarray]:
    """``block`` (arrays of one row per transition, the first the fingerprints; None
    entries stay None) ordered by target bucket (order kept within each bucket) and the
    ``buckets + 1`` offsets of the buckets' rows."""
    fps = block[0]
    assert fps is not None
    order, off = split_order(fps, buckets)
    return tuple(None if a is None else take_rows(a, order)  # type: ignore[return-value]
                 for a in block), off


def _run_bucket(cfg: ShardConfig, depth: int, bucket: int, expand: bool | None, again: bool,
                producers: int | None, unvisited: bool = False) -> BucketSummary:
    if again:
        level = _committed(cfg, depth, bucket)
    else:
        level = _commit(cfg, depth, bucket, producers, unvisited)
    graph = graph_dir(Path(cfg.root), depth) / f"b{bucket:04d}"
    targets: list[np.ndarray] = []
    out, cands = expand_block(cfg, bucket, level, expand, rows=True, graph=graph,
                              targets=targets)
    if cands is not None:
        order, off = write_candidate_rows(Path(cfg.root), depth, bucket, cfg.buckets,
                                          *cands)
        if targets:
            write_graph_targets(graph, targets[0], order, off, Path(cfg.root) / SPARE)
    return out


def range_cuts(root: Path, depth: int, buckets: int, parts: int,
               fractions: Sequence[float] | None = None) -> list[np.ndarray | None]:
    """The ``parts + 1`` bounds of the fingerprint ranges that split committed level
    ``depth`` into ``parts`` expansion tasks (:func:`run_range`): None at both ends, and
    between them the keys at ``i / parts`` of the largest bucket's sorted keys (the
    lowest such bucket), or at the ``parts - 1`` increasing ``fractions`` when given
    (:func:`balanced_fractions`). Buckets are near-uniform random samples of a level (a
    hash of the fingerprint picks the bucket), so these quantiles of one bucket split
    every bucket, and so the level, in those shares. Read from the committed files:
    every task (and a re-run of the same job) finds the same ranges."""
    lvl = level_dir(root, depth)
    sizes = [_rows(lvl / f"b{b:04d}.fp.npy") for b in range(buckets)]
    ref = max(range(buckets), key=lambda b: (sizes[b], -b))
    n = sizes[ref]
    keys = _load(lvl / f"b{ref:04d}.fp.npy")
    if fractions is None or len(fractions) != parts - 1:
        at = [n * i // parts for i in range(1, parts)]
    else:  # increasing positions inside the bucket, whatever the fractions
        at = [min(n - 1, max(0, int(n * f))) for f in fractions]
        at = [max(at[:i + 1]) for i in range(len(at))]
    inner = [np.array(keys[i:i + 1]) if n else None for i in at]
    return [None, *inner, None]


#: the share of the way to the balanced cuts that the next level's cuts move
#: (:func:`balanced_fractions`)
BALANCE_STEP = 0.5
#: a level whose range tasks took less CPU than this (seconds) does not move the cuts
#: of the next one (:func:`balanced_fractions`): too short to measure
BALANCE_MIN_CPU = 0.05


def balanced_fractions(fractions: Sequence[float] | None, cpu: Sequence[float],
                       step: float = 1.0) -> tuple[float, ...] | None:
    """The cuts (fractions of the level, :func:`range_cuts`) that would have given each
    of a level's ``len(cpu)`` range tasks the same CPU seconds, had the CPU per state
    been, inside each range, what its task measured (``cpu``, with the level cut at
    ``fractions``; None: equal parts): the next level's cuts. Expansion costs more
    in some parts of the fingerprint space than in others (KRaft, TwoPhase: one range
    ~10% more than the other, level after level), and a level waits for its slowest
    task. Returns ``fractions`` unchanged when the level was too short to measure
    (:data:`BALANCE_MIN_CPU`). ``step`` below 1 moves the cuts only that share of
    the way (the engine's :data:`BALANCE_STEP`: a task's CPU seconds vary by 5-10%
    from level to level when other work shares the machine, and cuts moved all the
    way swung from one side to the other). Only the work each task does depends on
    the cuts, never the run's results."""
    parts = len(cpu)
    bounds = [0.0, *(fractions if fractions is not None and len(fractions) == parts - 1
                     else [i / parts for i in range(1, parts)]), 1.0]
    total = float(sum(cpu))
    if parts < 2 or total < BALANCE_MIN_CPU or min(cpu) <= 0:
        return None if fractions is None else tuple(fractions)
    out = []
    part, done = 0, 0.0  # cost of the ranges before ``part``
    for k in range(1, parts):
        want = total * k / parts
        while part < parts - 1 and done + cpu[part] < want:
            done += cpu[part]
            part += 1
        width = bounds[part + 1] - bounds[part]
        full = bounds[part] + width * (want - done) / cpu[part]
        out.append(bounds[k] + step * (full - bounds[k]))
    # every range keeps at least 1/(4 parts) of the level: a level unlike the one
    # measured still splits
    lo = 1 / (4 * parts)
    for i in range(len(out)):
        out[i] = min(max(out[i], (out[i - 1] if i else 0.0) + lo), 1.0 - lo * (parts - 1 - i))
    return tuple(out)


def level_range(cfg: ShardConfig, depth: int, part: int, parts: int,
                fractions: Sequence[float] | None = None
                ) -> tuple[np.ndarray, np.ndarray | None, int]:
    """The states of committed level ``depth`` in fingerprint range ``part`` of
    ``parts`` (:func:`range_cuts`, at ``fractions``; ``lo <= key < hi``), gathered from
    every bucket's level files and merged: ``(sorted keys, their words or None for
    exact keys, the rank in the level of the range's first state)``: the range's
    ``i``-th state has rank ``start + i`` (the ranges are cut in fingerprint order)."""
    root = Path(cfg.root)
    cuts = range_cuts(root, depth, cfg.buckets, parts, fractions)
    lo_key, hi_key = cuts[part], cuts[part + 1]
    lvl = level_dir(root, depth)
    fps: list[np.ndarray] = []
    words: list[np.ndarray] = []
    start = 0  # the level's states below the range
    for b in range(cfg.buckets):
        keys = _load(lvl / f"b{b:04d}.fp.npy")
        lo = 0 if lo_key is None else int(key_searchsorted(keys, lo_key)[0])
        hi = len(keys) if hi_key is None else int(key_searchsorted(keys, hi_key)[0])
        start += lo
        if hi <= lo:
            continue
        fps.append(np.array(keys[lo:hi]))
        if not cfg.exact:
            words.append(np.array(_load(lvl / f"b{b:04d}.w.npy")[lo:hi]))
    if not fps:
        return empty_keys(cfg.key_width), \
            None if cfg.exact else np.zeros((0, cfg.worker.n_words), _U), start
    fp = np.concatenate(fps)
    if cfg.exact and fp.ndim == 1:
        fp.sort(kind="stable")  # sorted runs, one per bucket: merged (timsort)
        return fp, None, start
    order = key_order(fp)
    fp = take_rows(fp, order)
    if cfg.exact:
        return fp, None, start
    return fp, take_rows(np.concatenate(words), order), start


def run_range(cfg: ShardConfig, depth: int, part: int, expand: bool,
              fractions: Sequence[float] | None = None) -> BucketSummary:
    """Expansion task ``part`` of committed level ``depth`` (of ``cfg.buckets`` parts,
    cut at ``fractions``, :func:`range_cuts`):
    the level's states in fingerprint range ``part`` (:func:`level_range`), every
    bucket's, expanded as :func:`run_bucket` expands a bucket's (``expand`` True or
    False), and the de-duplicated successors written as producer ``part`` of the
    level's candidates, their parents named by rank in the level.

    A range of the sorted level is a run of neighbouring states, as a batch of the
    one-process explorer is: their successors overlap as much (TwoPhase RM=9: a batch
    of a bucket, every other state of a span, found 3.1 successors per distinct one, a
    batch of a range 4.9), so fewer rows are carried through the de-duplication,
    the split, the files and the owning bucket's commit. The summary counts no new
    states (the commit job did)."""
    try:
        cpu = time.process_time()
        fps, words, start = level_range(cfg, depth, part, cfg.buckets, fractions)
        kernel = get_kernel(cfg.worker)
        n_act = len(kernel.actions)
        level: Block = (fps, fps[:0], np.zeros(0, np.int32), words)
        out, cands = expand_block(cfg, part, level, expand, rows=True)
        out.new = 0
        out.reached = [0] * n_act
        if cands is not None:
            u, rows, acts, cw = cands
            write_unvisited(Path(cfg.root), depth, part, cfg.buckets,
                            (u, narrow_ranks(rows, start), acts, cw))
        out.cpu = time.process_time() - cpu
        return out
    except Exception as e:  # noqa: BLE001 - everything is reported to the driver
        raise encode_error(e) from None


def write_unvisited(root: Path, depth: int, producer: int, buckets: int,
                    cands: Block) -> None:
    """As :func:`write_candidates` with ranks (``cands``' parents are their ranks in
    level ``depth``), once the successors in the visited shards after
    level ``depth`` are dropped (each looked up in its bucket's shard, complete once
    every bucket committed level ``depth``): what is written is new states only, and
    the commit that reads them skips the visited check (a
    :class:`~modelcheck.shards.engine.Job` with
    ``unvisited``). Every visited state met here is one row fewer to split, write,
    read and sort (TwoPhase RM=9: 28.7M successors, 10.3M of them new)."""
    fps, parents, acts, words = cands
    # One flush's successors are sorted and distinct; several flushes' are sorted runs
    # that may share states (each row stays: the commit's de-duplication picks the
    # parent): merged, and looked up once per distinct state. Only the fingerprints are
    # reordered and split by bucket here; every other column is gathered once, for the
    # rows kept (most successors are visited states: TwoPhase RM=9, 10.3M of 28.7M are
    # new), by composing the merge order, the split and the visited check into one
    # index.
    pieces = len(fps) > 1 and not bool(np.all(_increasing(fps)))
    order = key_order(fps) if pieces else None
    if order is not None:
        fps = take_rows(fps, order)
    b = bucket_of(fps, buckets) if buckets > 1 else None
    rows: list[np.ndarray] = []
    off = np.zeros(buckets + 1, dtype=np.int64)
    for k in range(buckets):
        # the rows of bucket k, in fingerprint order (the split of split_by_bucket)
        mine = np.flatnonzero(b == k) if b is not None else np.arange(len(fps))
        if len(mine):
            part = take_rows(fps, mine)
            if pieces:
                first = key_starts(part)
                new = _not_in(load_visited(root, depth, k), take_rows(part, first))
                mine = mine[new[np.cumsum(first) - 1]]
            else:
                mine = mine[_not_in(load_visited(root, depth, k), part)]
        rows.append(mine)
        off[k + 1] = off[k] + len(mine)
    keep = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    src = keep if order is None else order[keep]  # the kept rows in the input's order
    d = cand_dir(root, depth)
    name = f"f{producer:04d}"
    spare = root / SPARE
    write_array(d / f"{name}.fp.npy", take_rows(fps, keep), spare)
    write_array(d / f"{name}.rank.npy", parents[src], spare)
    write_array(d / f"{name}.act.npy", narrow_acts(acts[src]), spare)
    if words is not None:
        write_array(d / f"{name}.w.npy", take_rows(words, src), spare)
    write_array(d / f"{name}.off.npy", off)  # last: its presence marks the set complete


def _increasing(fps: np.ndarray) -> np.ndarray:
    """Per neighbouring pair of keys, whether the first is below the second."""
    if fps.ndim == 1:
        return fps[:-1] < fps[1:]
    a0, b0 = fps[:-1, 0], fps[1:, 0]
    return (a0 < b0) | ((a0 == b0) & (fps[:-1, 1] < fps[1:, 1]))


def run_level_here(cfg: ShardConfig, depth: int, expand: bool | None, again: bool = False,
                   producers: int | None = None) -> list[BucketSummary]:
    """All of job ``depth`` in this process (the driver, for a small level): every bucket
    is committed as its task would, then the level is expanded as one, as the local
    explorer does (the kernel's fixed cost is paid per batch of the level, not per
    bucket), and its successors are written as the one producer of the level's
    candidates (parents named by rank in the level). ``producers`` as for
    :func:`run_bucket`."""
    try:
        arrays_for(cfg.worker.n_words)  # this process's malloc (executors keep all freed)
        cpu = time.process_time()
        blocks = [_committed(cfg, depth, b) if again else _commit(cfg, depth, b, producers)
                  for b in range(cfg.buckets)]
        fps = np.concatenate([b[0] for b in blocks])
        order = key_order(fps)  # sorted runs: merged
        level: Block = (take_rows(fps, order),
                        take_rows(np.concatenate([b[1] for b in blocks]), order),
                        np.concatenate([b[2] for b in blocks])[order],
                        None if cfg.exact else
                        take_rows(np.concatenate([b[3] for b in blocks]), order))
        graph = graph_dir(Path(cfg.root), depth) / "all"
        targets: list[np.ndarray] = []
        # the whole level in fingerprint order: a state's row is its rank
        out, cands = expand_block(cfg, 0, level, expand, rows=True, graph=graph,
                                  targets=targets)
        if cands is not None:
            root = Path(cfg.root)
            shutil.rmtree(cand_dir(root, depth), ignore_errors=True)  # earlier attempts'
            u, rows, acts, cw = cands
            order, off = write_candidates(root, depth, 0, cfg.buckets, u,
                                          narrow_ranks(rows), acts, cw, ranks=True)
            if targets:
                write_graph_targets(graph, targets[0], order, off, root / SPARE)
        out.cpu = time.process_time() - cpu
        return [out]
    except Exception as e:  # noqa: BLE001 - reported as a task's would be
        raise encode_error(e) from None


def sum_reached(summaries: Sequence[BucketSummary], n_act: int) -> np.ndarray:
    out = np.zeros(n_act, dtype=np.int64)
    for s in summaries:
        out += np.asarray(s.reached, dtype=np.int64)
    return out


def read_level_sorted(root: Path, depth: int, cfg: ShardConfig
                      ) -> tuple[np.ndarray, np.ndarray]:
    """All states of level ``depth`` in fingerprint order: ``(fps, words)`` (driver side)."""
    buckets, exact, n_words = cfg.buckets, cfg.exact, cfg.worker.n_words
    fps: list[Any] = []
    words: list[Any] = []
    for b in range(buckets):
        name = f"b{b:04d}"
        f = _load(level_dir(root, depth) / f"{name}.fp.npy", mmap=False)
        fps.append(f)
        if not exact:
            words.append(_load(level_dir(root, depth) / f"{name}.w.npy", mmap=False))
    fp = np.concatenate(fps) if fps else empty_keys(cfg.key_width)
    order = key_order(fp)
    fp = take_rows(fp, order)
    if exact:
        return fp, words_of_keys(fp)
    w = np.concatenate(words) if words else np.zeros((0, n_words), _U)
    return fp, np.ascontiguousarray(take_rows(w, order))


def parent_of(root: Path, depth: int, cfg: ShardConfig, fp: int) -> int | None:
    """The parent fingerprint of state ``fp`` of level ``depth`` (driver side)."""
    lvl = level_dir(root, depth)
    b = int(bucket_of(keys_of([fp], cfg.key_width), cfg.buckets)[0])
    name = f"b{b:04d}"
    kind = parent_kind(lvl / name)  # the state's parent, or its rank in the level before
    got = parent_in(fp, cfg.key_width, 1, lambda _: (_load(lvl / f"{name}.fp.npy"),
                                                     _load(lvl / f"{name}.{kind}.npy")))
    if got is None or kind != "rank":
        return got
    return key_at_rank([_load(level_dir(root, depth - 1) / f"b{c:04d}.fp.npy")
                        for c in range(cfg.buckets)], got)


def key_at_rank(runs: Sequence[np.ndarray], rank: int) -> int:
    """The key (as an int) of rank ``rank`` in the union of ``runs`` (sorted keys, no
    key in two runs): in run ``b`` the row ``i`` whose rank, ``i`` plus the keys below
    it in the other runs, is ``rank`` (binary searches: a trace rebuild's step, not a
    merge of the level)."""
    def rank_of(b: int, i: int) -> int:
        q = runs[b][i:i + 1]
        return i + sum(int(key_searchsorted(r, q)[0]) for c, r in enumerate(runs) if c != b)

    for b, run in enumerate(runs):
        lo, hi = 0, len(run)
        while lo < hi:
            mid = (lo + hi) // 2
            if rank_of(b, mid) < rank:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(run) and rank_of(b, lo) == rank:
            return key_int(run, lo)
    raise RuntimeError(f"no state of rank {rank} in a level of "
                       f"{sum(len(r) for r in runs)} states (a bug: please report it)")


def parent_in(fp: int, width: int, buckets: int,
              level: Callable[[int], tuple[np.ndarray, np.ndarray] | None]) -> int | None:
    """The parent fingerprint of state ``fp`` (a key ``width`` columns wide, as an int) in
    a level whose bucket ``b`` holds the fingerprints and parents ``level(b)`` (None: not
    at hand), or None if it holds no ``fp``."""
    q = keys_of([fp], width)
    got = level(int(bucket_of(q, buckets)[0]))
    if got is None:
        return None
    fps, parents = got
    i = int(key_searchsorted(fps, q)[0])
    if i >= len(fps) or key_int(fps, i) != fp:
        return None
    return key_int(parents, i)
