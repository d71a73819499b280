"""Checkpoints of the local explorer: resume a long run after a kill, a crash or Ctrl-C.

With ``--checkpoint-dir DIR`` the explorer commits, at the end of every level, what it
needs to continue exactly where it stopped::

    DIR/manifest.json               identity, level list, counters; written last
    DIR/level-00007.fps.npy         level 7's fingerprints (sorted, uint64; shape (n,)
                                    for one-word states, (n, 2) otherwise)
    DIR/level-00007.parents.npy     index of each state's parent in level 6 (uint32)
    DIR/frontier-00008.words.npy    packed states of the next level (hash128 layouts
                                    only; for exact layouts the fingerprints are the
                                    states)

Level files are immutable: a commit writes only the levels not yet on disk, the
frontier words and the manifest. Every file is written to a temporary name, synced
and renamed; the manifest goes last, so a process killed at any instant leaves either
the previous complete checkpoint or the new one (stray files of an unfinished commit
are overwritten by the next). The visited set is not stored: it is the union of the
levels, rebuilt on resume level by level (as the run built it).

The manifest's ``state`` is the next level to expand and the counters so far (fired
and new states per action instance, generated, per-level stats, elapsed seconds).
When a run ends (ok, violation, deadlock, or ``--max-depth`` reached) its ``final``
block records the outcome (the level rule's verdict, counts, memory); resuming under
the same ``--max-depth`` returns that result without exploring, under another one
continues from ``state``. A checkpoint is refused (:class:`CheckpointError`) when its
spec class, spec source, constants, state layout, action list or checks differ from
this run's, or its files are missing or damaged.

The manifest's format is every backend's (:func:`manifest`; the Spark backend writes
it into its run directory): ``engine`` (``local``, or the Spark engine), ``spec``
(:func:`identity`, plus what the backend adds), ``config``, ``level`` (the next level
to expand), ``levels`` (``states`` of each committed level, and what the backend needs
to read it back), ``state`` (the counters, :class:`Snapshot`), ``complete`` and
``final``, and ``engine_state`` (what else the backend needs to continue).
:func:`parse_manifest` reads it, and the older formats (version 1 of the local
explorer, ``modelcheck-spark-checkpoint`` version 1) as the current one, so run
directories written before still resume; a checkpoint of another backend is refused
with a sentence saying which command continues it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import json
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .config import CheckConfig
from .errors import ModelcheckError
from .kernel import Kernel
from .level import Verdict
from .result import LevelStats
from .store import FingerprintSet, LevelStore, act_dtype

__all__ = ["CheckpointError", "Checkpoint", "Snapshot", "Final", "has_checkpoint",
           "layout_digest", "identity", "key_width_diff", "manifest", "parse_manifest",
           "damaged", "refuse_other_engine", "write_manifest", "MANIFEST", "FORMAT", "VERSION",
           "LOCAL"]

MANIFEST = "manifest.json"
FORMAT = "modelcheck-checkpoint"
#: 3: a sharded run's level and candidate files may name parents by their rank in their
#: level (``rank``, :func:`modelcheck.shards.files.narrow_ranks`), which a version 2
#: reader does not know; a version 2 checkpoint is read as it is (its files name
#: parents by fingerprint, which this version reads too)
VERSION = 3
#: the format of the Spark backend's manifests before they took this one (version 1)
SPARK_FORMAT_V1 = "modelcheck-spark-checkpoint"
#: the engine name of the local explorer's checkpoints
LOCAL = "local"


class CheckpointError(ModelcheckError):
    """A checkpoint directory is unusable, damaged, or belongs to another check."""


def has_checkpoint(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a committed checkpoint (a manifest)."""
    return (Path(path) / MANIFEST).is_file()


def layout_digest(kernel: Kernel) -> str:
    """A digest of everything that gives fingerprints and action ids their meaning."""
    layout = kernel.layout
    desc = {
        "cells": [[c.name, c.lo, c.size, c.kind] for c in layout.cells],
        "n_words": layout.n_words,
        "fingerprint": (kernel.key_kind if kernel.key_kind == "exact"
                        else f"{kernel.key_kind}-sum-v2"),
        "actions": [a.label for a in kernel.actions],
    }
    if kernel.symmetry is not None:
        # which member of each orbit is stored (a checkpoint of another choice holds
        # other fingerprints for the same classes)
        desc["canonical"] = kernel.symmetry.FORM
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()


def key_width_diff(have: dict[str, Any], ident: dict[str, Any]) -> str | None:
    """Why a checkpoint's keys (spec identity ``have``) are not this run's (``ident``),
    or None. A checkpoint written before the identity held the width keyed a view's
    states by two columns, and other states as today."""
    had = have.get("key_width", 2 if have.get("view") else ident["key_width"])
    if had == ident["key_width"]:
        return None
    return (f"its states are keyed by {had} uint64 column(s) and this run's by "
            f"{ident['key_width']} (keys under a view are sized by the view's own "
            "variables since; the checkpoint's keys cannot be read as this run's)")


def _source(cls: type) -> tuple[str | None, str | None]:
    try:
        path = inspect.getsourcefile(cls)
        if path is None:
            return None, None
        return path, hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except (OSError, TypeError):
        return None, None


def identity(kernel: Kernel) -> dict[str, Any]:
    """What a checkpoint must match to be resumed: spec, constants, layout, checks."""
    spec = kernel.spec
    path, digest = _source(type(spec))
    return {
        "class": type(spec).__qualname__,
        "module": type(spec).__module__,
        "source": path,
        "source_sha256": digest,
        "constants": {k: v for k, v in spec.constants.items()},
        "layout": layout_digest(kernel),
        "invariants": [p.name for p in kernel.invariants],
        "properties": [p.name for p in kernel.properties],
        "deadlock": bool(kernel.check_deadlock),
        "symmetry": list(kernel.symmetry.names) if kernel.symmetry else [],
        "view": list(kernel.view) if kernel.view else [],
        #: the keys' ``uint64`` columns (under a view, the view's packing's)
        "key_width": kernel.key_width,
    }


@dataclass
class Snapshot:
    """The explorer's counters at the end of a level (or of the run)."""

    #: the next level to expand (levels ``0..depth`` are stored)
    depth: int
    generated: int
    fired: np.ndarray
    new_by_action: np.ndarray
    stats: list[LevelStats]
    seconds: float
    #: packed states of level ``depth`` (None for exact layouts: they are its fps)
    words: np.ndarray | None = None

    def to_json(self) -> dict[str, Any]:
        return {"depth": self.depth, "generated": self.generated,
                "fired": [int(x) for x in self.fired],
                "new_by_action": [int(x) for x in self.new_by_action],
                "stats": [[s.depth, s.frontier, s.new, s.generated, s.seconds]
                          for s in self.stats],
                "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Snapshot:
        return cls(int(d["depth"]), int(d["generated"]),
                   np.asarray(d["fired"], dtype=np.int64),
                   np.asarray(d["new_by_action"], dtype=np.int64),
                   [LevelStats(int(a), int(b), int(c), int(e), float(s))
                    for a, b, c, e, s in d["stats"]],
                   float(d["seconds"]))


@dataclass
class Final:
    """How a run ended: its counters, status and the verdict to report (if any)."""

    counters: Snapshot
    status: str
    reason: str | None
    max_depth: int | None
    distinct: int
    result_depth: int
    memory: dict[str, int] = field(default_factory=dict)
    verdict: Verdict | None = None

    def to_json(self) -> dict[str, Any]:
        v = self.verdict
        return {"counters": self.counters.to_json(), "status": self.status,
                "reason": self.reason, "max_depth": self.max_depth,
                "distinct": self.distinct, "depth": self.result_depth,
                "memory": dict(self.memory),
                "verdict": None if v is None else
                {"kind": v.kind, "at": list(v.at) if isinstance(v.at, tuple) else v.at,
                 "which": list(v.which)}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Final:
        v = d["verdict"]
        verdict = None
        if v is not None:
            at = tuple(int(x) for x in v["at"]) if isinstance(v["at"], list) else int(v["at"])
            verdict = Verdict(v["kind"], at, tuple(int(j) for j in v["which"]))
        return cls(Snapshot.from_json(d["counters"]), str(d["status"]), d["reason"],
                   d["max_depth"], int(d["distinct"]), int(d["depth"]),
                   {str(k): int(x) for k, x in d["memory"].items()}, verdict)


def damaged(where: str, what: str) -> CheckpointError:
    """The error for a checkpoint in ``where`` whose files are damaged (``what``)."""
    return CheckpointError(
        f"--resume: the checkpoint in {where} is damaged ({what}); delete that "
        "directory (or choose another --checkpoint-dir) to start afresh.")


def manifest(engine: str, spec: dict[str, Any], config: dict[str, Any] | None,
             levels: list[dict[str, Any]], state: dict[str, Any] | None, *,
             final: dict[str, Any] | None = None,
             engine_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """A manifest of this version, for every backend (see the module docstring):
    ``levels`` the committed levels (each with its ``states``), ``state`` the counters
    (:meth:`Snapshot.to_json`; its ``depth`` is the next level to expand)."""
    return {"format": FORMAT, "version": VERSION, "written": time.time(),
            "engine": engine, "spec": spec, "config": config,
            "level": None if state is None else int(state["depth"]),
            "levels": levels, "state": state, "complete": final is not None,
            "final": final, "engine_state": dict(engine_state or {})}


def parse_manifest(data: Any, where: str) -> dict[str, Any]:
    """The manifest ``data`` read from the checkpoint in ``where``, in this version's
    format: older formats are converted (a local version 1 manifest, a Spark one of
    format ``modelcheck-spark-checkpoint``); anything else is refused."""
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt not in (FORMAT, SPARK_FORMAT_V1):
        raise damaged(where, f"{MANIFEST} is not a modelcheck checkpoint manifest")
    version = data.get("version")
    try:
        if fmt == SPARK_FORMAT_V1 and version == 1:
            return _from_spark_v1(data)
        if fmt == FORMAT and version == 1:
            return _from_local_v1(data)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise damaged(where, f"{MANIFEST} lacks or garbles {e}") from None
    if fmt == FORMAT and version == 2:
        return dict(data, version=VERSION)
    if fmt != FORMAT or version != VERSION:
        raise CheckpointError(
            f"--resume: the checkpoint in {where} has format version {version!r}; this "
            f"modelcheck reads versions 1 to {VERSION}. Delete it to start afresh.")
    return dict(data)


def _from_local_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A local explorer's manifest of version 1: ``identity`` was ``spec``."""
    out = {k: v for k, v in d.items() if k != "identity"}
    state = d.get("state")
    out.update(version=VERSION, engine=LOCAL, spec=d["identity"],
               level=None if state is None else int(state["depth"]), engine_state={})
    return out


def _from_spark_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A Spark manifest of version 1: counters at the top, ``level_sizes``."""
    state = {"depth": int(d["level"]), "generated": d["generated"], "fired": d["fired"],
             "new_by_action": d["new_by_action"], "stats": d["stats"],
             "seconds": d.get("seconds", 0.0)}
    engine_state: dict[str, Any] = {k: d[k] for k in ("partitions", "pending") if k in d}
    out = manifest(str(d.get("engine", "dataframe")), d["spec"], None,
                   [{"states": int(n)} for n in d.get("level_sizes", [])], state,
                   engine_state=engine_state)
    out["written"] = d.get("updated")
    return out


def refuse_other_engine(data: dict[str, Any], where: str, local: bool) -> None:
    """Refuse a checkpoint of the other backend (``local``: this run is local)."""
    engine = data.get("engine")
    if local and engine == "shards":
        raise CheckpointError(
            f"--resume: the checkpoint in {where} was written by a sharded run (engine "
            "shards: `modelcheck check --workers N` or the Spark backend); continue it "
            "with `modelcheck check --workers N --resume` (N at least 2) or `modelcheck "
            "check --backend spark --resume` (alias `modelcheck spark --resume`), or "
            "choose another --checkpoint-dir for this run.")
    if local and engine != LOCAL:
        raise CheckpointError(
            f"--resume: the checkpoint in {where} was written by the Spark backend "
            f"(engine {engine}); continue it with `modelcheck check --backend spark "
            "--resume` (alias `modelcheck spark --resume`), or choose another "
            "--checkpoint-dir for this run.")
    if not local and engine == LOCAL:
        raise CheckpointError(
            f"--resume: the checkpoint in {where} was written by the one-process explorer; "
            "continue it with `modelcheck check --resume` (--workers 1), or choose another "
            "--checkpoint-dir for this run.")


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_manifest(directory: Path, data: dict[str, Any]) -> None:
    """Replace ``directory``'s manifest by ``data`` atomically (a temporary file, synced,
    renamed; then the directory synced): a reader sees the old one or the new one."""
    _write_atomic(directory / MANIFEST,
                  json.dumps(data, separators=(",", ":")).encode())  # the fast C encoder
    _fsync_dir(directory)


def _write_atomic(target: Path, data: bytes | np.ndarray) -> None:
    """Write ``data`` (bytes, or an array as ``.npy``) to ``target`` through a temporary
    file, synced and renamed."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            if isinstance(data, np.ndarray):
                np.save(f, data)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CheckpointError(
            f"--checkpoint-dir: cannot write {target}: {e.strerror or e}; the checkpoint "
            "committed before stays usable with --resume.") from None


def _crc(a: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(a).data)


class Checkpoint:
    """The checkpoint directory of one local run (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str], kernel: Kernel, config: CheckConfig
                 ) -> None:
        self.path = Path(path).expanduser().resolve()
        self.kernel = kernel
        self.config = config
        self.identity = identity(kernel)
        self._levels: list[dict[str, int]] = []  # the levels on disk, as in the manifest
        self._state: dict[str, Any] | None = None
        self._stale_frontiers: list[str] | None = None  # frontier files to delete
        if not config.resume and has_checkpoint(self.path):
            raise CheckpointError(
                f"--checkpoint-dir {self.path} already holds a checkpoint; pass --resume to "
                "continue it, or choose an empty directory (or delete that one) to start a "
                "new run.")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            # held while this object lives; the OS drops it when the process dies
            self._lock = open(self.path / ".lock", "a")  # noqa: SIM115
        except OSError as e:
            raise CheckpointError(f"--checkpoint-dir: cannot use {self.path}: "
                                  f"{e.strerror or e}.") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            raise CheckpointError(
                f"--checkpoint-dir {self.path} is in use by another running check; wait for "
                "it to end, or choose another directory.") from None

    def close(self) -> None:
        """Release the directory (for other runs)."""
        self._lock.close()

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    # ------------------------------------------------------------ writing
    def _save(self, name: str, a: np.ndarray) -> int:
        """Write ``a`` to ``name`` atomically; its crc32."""
        _write_atomic(self.path / name, a)
        return _crc(a)

    @property
    def levels_written(self) -> int:
        """The levels the checkpoint holds (``0..levels_written - 1``)."""
        return len(self._levels)

    def _write_levels(self, levels: LevelStore, upto: int) -> None:
        for d in range(len(self._levels), upto + 1):
            lv = levels.levels[d]
            assert lv.keyed, f"level {d} let its keys go before the checkpoint wrote it"
            entry = {"states": len(lv.fps),
                     "fps_crc32": self._save(f"level-{d:05d}.fps.npy", lv.fps),
                     "parents_crc32": self._save(f"level-{d:05d}.parents.npy", lv.parents)}
            if lv.acts is not None:
                entry["acts_crc32"] = self._save(f"level-{d:05d}.acts.npy", lv.acts)
            self._levels.append(entry)

    def _write_manifest(self, final: Final | None) -> None:
        write_manifest(self.path, manifest(
            LOCAL, self.identity, self.config.identity, self._levels, self._state,
            final=None if final is None else final.to_json()))

    def commit(self, levels: LevelStore, snap: Snapshot) -> None:
        """Commit the end of a level: ``snap.depth`` is the next level to expand."""
        self._write_levels(levels, snap.depth)
        state = snap.to_json()
        if snap.words is not None:
            name = f"frontier-{snap.depth:05d}.words.npy"
            state["frontier"] = {"file": name, "rows": len(snap.words),
                                 "crc32": self._save(name, snap.words)}
        self._state = state
        self._write_manifest(None)
        keep = state.get("frontier", {}).get("file")
        if self._stale_frontiers is None:  # the first commit: any left by earlier runs
            self._stale_frontiers = [p.name for p in self.path.glob("frontier-*.words.npy")]
            for p in self.path.glob(".*.tmp"):  # of commits cut short
                p.unlink(missing_ok=True)
        for name in self._stale_frontiers:
            if name != keep:
                (self.path / name).unlink(missing_ok=True)
        self._stale_frontiers = [keep] if keep else []

    def finish(self, levels: LevelStore, depth: int, final: Final) -> None:
        """Record how the run ended at level ``depth`` (keeping the resumable state)."""
        self._write_levels(levels, depth)
        self._write_manifest(final)

    # ------------------------------------------------------------ reading
    def _fail(self, what: str) -> CheckpointError:
        return damaged(str(self.path), what)

    def _read_manifest(self) -> dict[str, Any]:
        try:
            data = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as e:
            raise self._fail(f"cannot read {MANIFEST}: {e}") from None
        data = parse_manifest(data, str(self.path))
        refuse_other_engine(data, str(self.path), local=True)
        return data

    def _check_identity(self, have: dict[str, Any]) -> None:
        ident = self.identity
        diffs = []
        if have.get("class") != ident["class"] or have.get("module") != ident["module"]:
            diffs.append(f"spec {have.get('module')}.{have.get('class')} vs "
                         f"{ident['module']}.{ident['class']}")
        hc, ic = have.get("constants", {}), ident["constants"]
        for k in sorted(set(hc) | set(ic)):
            if hc.get(k) != ic.get(k):
                diffs.append(f"constant {k} = {hc.get(k)!r} vs {ic.get(k)!r}")
        for key, opt in (("invariants", "--invariant"), ("properties", "--invariant"),
                         ("deadlock", "--deadlock/--no-deadlock"),
                         ("symmetry", "--no-symmetry"), ("view", "--no-view")):
            if have.get(key, [] if key == "view" else None) != ident[key]:
                diffs.append(f"checked {key} {have.get(key)} vs {ident[key]} ({opt})")
        if not diffs and have.get("layout") != ident["layout"]:
            diffs.append("the state layout or the action list differs (the spec changed)")
        if not diffs and (why := key_width_diff(have, ident)) is not None:
            diffs.append(why)
        if not diffs and have.get("source_sha256") != ident["source_sha256"]:
            diffs.append(f"the spec's source file {ident['source']} changed since")
        if diffs:
            consts = ", ".join(f"{k}={v!r}" for k, v in hc.items())
            raise CheckpointError(
                f"--resume: the checkpoint in {self.path} was written for another check "
                f"({have.get('class')}({consts})), so it cannot be continued by this one: "
                f"{'; '.join(diffs)} (checkpoint vs this run). Resume with the same spec, "
                "--const values and checks, or use another --checkpoint-dir.")

    def _load(self, name: str, crc: int, rows: int, dtype: type, ndim: int = 0
              ) -> np.ndarray:
        try:
            a = np.load(self.path / name, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise self._fail(f"cannot read {name}: {e}") from None
        if a.dtype != dtype or len(a) != rows or _crc(a) != crc or \
                (ndim and a.ndim != ndim):
            raise self._fail(f"{name} does not hold what the manifest records")
        return a

    def load(self, levels: LevelStore, visited: FingerprintSet
             ) -> tuple[Snapshot | None, Final | None]:
        """Read the checkpoint into ``levels`` and ``visited``: ``(state, final)``.

        ``final`` is given when the run ended under this run's ``max_depth`` (the result
        is then known); otherwise ``state`` is where to continue (None: start afresh).
        """
        if not has_checkpoint(self.path):
            return None, None
        data = self._read_manifest()
        try:
            self._check_identity(data["spec"])
            final = Final.from_json(data["final"]) if data.get("final") else None
            state = data.get("state")
            snap = Snapshot.from_json(state) if state is not None else None
            self._levels = [{k: int(v) for k, v in lv.items()} for lv in data["levels"]]
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise self._fail(f"{MANIFEST} lacks or garbles {e}") from None
        if final is not None and final.max_depth != self.config.max_depth:
            final = None
        if final is None and snap is None:
            self._levels = []
            return None, None  # ended at level 0 under another --max-depth: start afresh
        if final is None and snap is not None:
            md = self.config.max_depth
            if md is not None and md < snap.depth:
                raise CheckpointError(
                    f"--resume: the checkpoint in {self.path} has explored level "
                    f"{snap.depth - 1} already, beyond --max-depth {md}; resume with "
                    f"--max-depth {snap.depth} or more (or none).")
        upto = len(self._levels) - 1 if final is not None else snap.depth  # type: ignore[union-attr]
        if upto >= len(self._levels):
            raise self._fail(f"{MANIFEST} records {len(self._levels)} levels, needs {upto + 1}")
        for d in range(upto + 1):
            lv = self._levels[d]
            fps = self._load(f"level-{d:05d}.fps.npy", lv["fps_crc32"], lv["states"],
                             np.uint64, self.kernel.key_width)
            parents = self._load(f"level-{d:05d}.parents.npy", lv["parents_crc32"],
                                 lv["states"], np.uint32)
            acts = None
            if "acts_crc32" in lv:  # (checkpoints written before level actions have none)
                acts = self._load(f"level-{d:05d}.acts.npy", lv["acts_crc32"], lv["states"],
                                  act_dtype(len(self.kernel.actions)))
            levels.append(fps, parents, acts)
            visited.add_sorted(fps)
        del self._levels[upto + 1:]
        self._state = state
        if final is not None or snap is None:
            return snap, final
        front = state.get("frontier") if state else None
        if front is not None:
            snap.words = self._load(front["file"], int(front["crc32"]), int(front["rows"]),
                                    np.uint64)
        elif not self.kernel.exact:
            raise self._fail(f"{MANIFEST} records no frontier states")
        return snap, None
