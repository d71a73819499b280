"""Checkpoints of the local explorer: resume a long run after a kill, a crash or Ctrl-C.

With ``--checkpoint-dir DIR`` the explorer commits, at the end of every level, what it
needs to continue exactly where it stopped::

    DIR/manifest.json               identity, level list, counters; written last
    DIR/level-00007.fps.npy         level 7's fingerprints (sorted, uint64)
    DIR/level-00007.parents.npy     index of each state's parent in level 6 (uint32)
    DIR/frontier-00008.words.npy    packed states of the next level (hash64 layouts only;
                                    for exact layouts the fingerprints are the states)

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

The identity digest (:func:`layout_digest`) is generic; the Spark backend keeps its
own copy in ``spark_explore.checkpoint`` and could use this one.
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
from .engine import Verdict
from .errors import ModelcheckError
from .kernel import Kernel
from .result import LevelStats
from .store import FingerprintSet, LevelStore

__all__ = ["CheckpointError", "Checkpoint", "Snapshot", "Final", "has_checkpoint",
           "layout_digest", "MANIFEST", "FORMAT", "VERSION"]

MANIFEST = "manifest.json"
FORMAT = "modelcheck-checkpoint"
VERSION = 1


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
        "fingerprint": "exact" if layout.exact else "hash64-splitmix-v1",
        "actions": [a.label for a in kernel.actions],
    }
    return hashlib.sha256(json.dumps(desc, sort_keys=True).encode()).hexdigest()


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


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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
        target = self.path / name
        tmp = self.path / f".{name}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                np.save(f, a)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise CheckpointError(
                f"--checkpoint-dir: cannot write {target}: {e.strerror or e}; the checkpoint "
                "committed before stays usable with --resume.") from None
        return _crc(a)

    def _write_levels(self, levels: LevelStore, upto: int) -> None:
        for d in range(len(self._levels), upto + 1):
            lv = levels.levels[d]
            self._levels.append({
                "states": len(lv.fps),
                "fps_crc32": self._save(f"level-{d:05d}.fps.npy", lv.fps),
                "parents_crc32": self._save(f"level-{d:05d}.parents.npy", lv.parents)})

    def _write_manifest(self, final: Final | None) -> None:
        data = {"format": FORMAT, "version": VERSION, "written": time.time(),
                "identity": self.identity, "config": self.config.identity,
                "levels": self._levels, "state": self._state,
                "complete": final is not None,
                "final": None if final is None else final.to_json()}
        tmp = self.path / f".{MANIFEST}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w") as f:
                f.write(json.dumps(data, separators=(",", ":")))  # the fast C encoder
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.manifest_path)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise CheckpointError(
                f"--checkpoint-dir: cannot write {self.manifest_path}: {e.strerror or e}; "
                "the checkpoint committed before stays usable with --resume.") from None
        _fsync_dir(self.path)

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
        return CheckpointError(
            f"--resume: the checkpoint in {self.path} is damaged ({what}); delete that "
            "directory (or choose another --checkpoint-dir) to start afresh.")

    def _read_manifest(self) -> dict[str, Any]:
        try:
            data = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as e:
            raise self._fail(f"cannot read {MANIFEST}: {e}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise self._fail(f"{MANIFEST} is not a modelcheck checkpoint manifest")
        if data.get("version") != VERSION:
            raise CheckpointError(
                f"--resume: the checkpoint in {self.path} has format version "
                f"{data.get('version')!r}; this modelcheck reads version {VERSION}. Delete "
                "it to start afresh.")
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
                         ("symmetry", "--no-symmetry")):
            if have.get(key) != ident[key]:
                diffs.append(f"checked {key} {have.get(key)} vs {ident[key]} ({opt})")
        if not diffs and have.get("layout") != ident["layout"]:
            diffs.append("the state layout or the action list differs (the spec changed)")
        if not diffs and have.get("source_sha256") != ident["source_sha256"]:
            diffs.append(f"the spec's source file {ident['source']} changed since")
        if diffs:
            consts = ", ".join(f"{k}={v!r}" for k, v in hc.items())
            raise CheckpointError(
                f"--resume: the checkpoint in {self.path} was written for another check "
                f"({have.get('class')}({consts})), so it cannot be continued by this one: "
                f"{'; '.join(diffs)} (checkpoint vs this run). Resume with the same spec, "
                "--const values and checks, or use another --checkpoint-dir.")

    def _load(self, name: str, crc: int, rows: int, dtype: type) -> np.ndarray:
        try:
            a = np.load(self.path / name, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise self._fail(f"cannot read {name}: {e}") from None
        if a.dtype != dtype or len(a) != rows or _crc(a) != crc:
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
            self._check_identity(data["identity"])
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
                             np.uint64)
            parents = self._load(f"level-{d:05d}.parents.npy", lv["parents_crc32"],
                                 lv["states"], np.uint32)
            levels.append(fps, parents)
            visited.add_sorted(fps)
        del self._levels[upto + 1:]
        self._state = state
        if final is not None or snap is None:
            return snap, final
        front = state.get("frontier") if state else None
        if front is not None:
            snap.words = self._load(front["file"], int(front["crc32"]), int(front["rows"]),
                                    np.uint64)
        elif not self.kernel.layout.exact:
            raise self._fail(f"{MANIFEST} records no frontier states")
        return snap, None
