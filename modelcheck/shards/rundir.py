"""The run directory of a Spark exploration: the manifest and its checks.

A run directory (``--checkpoint-dir DIR``, or a temporary one) holds::

    DIR/manifest.json     what was committed (written atomically, last)
    DIR/shards/...        the level, visited and candidate files of the shard tasks
                          (layout: :mod:`modelcheck.shards.files`)

``manifest.json`` is rewritten (temp file + ``os.replace``) only after a level is
complete; files it no longer needs are deleted only after that. So a run killed at
any moment leaves a consistent checkpoint: ``--resume`` continues from
``manifest["level"]`` (a directory without a manifest starts afresh, as with
``modelcheck check --resume``). The manifest has the format of every backend
(:func:`modelcheck.checkpoint.manifest`; manifests of the former Spark format are read
as that one): the spec (class, module, constants, a digest of the state layout and
action list), the checks, the counters, and in ``engine_state`` the bucket count and
the pending level; a checkpoint from a different spec or different constants is
refused with :class:`CheckpointError`.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..checkpoint import (
    FORMAT,
    MANIFEST,
    VERSION,
    CheckpointError,
    identity,
    key_width_diff,
    parse_manifest,
    refuse_other_engine,
    write_manifest,
)
from ..kernel import Kernel

__all__ = ["CheckpointError", "RunDir", "spec_identity", "MANIFEST", "FORMAT", "VERSION"]


def spec_identity(kernel: Kernel, target: str) -> dict[str, Any]:
    """What a checkpoint must match to be resumed by this run: the local explorer's
    identity, the module executors import the spec from and the state's words."""
    return {**identity(kernel), "target": target, "n_words": kernel.layout.n_words}


def _first_line(e: BaseException) -> str:
    for line in str(e).splitlines():
        if line.strip():
            return line.strip()[:500]
    return type(e).__name__


def _describe(ident: dict[str, Any]) -> str:
    consts = ", ".join(f"{k}={v}" for k, v in ident.get("constants", {}).items())
    return f"{ident.get('class')}({consts})"


@dataclass
class RunDir:
    """A run directory: paths, manifest I/O and compatibility checks.

    A local directory (``path``), or with ``store`` a directory on a Hadoop file
    system (``hdfs://...``) whose manifest is read and written through it.
    """

    path: Path
    temporary: bool = False
    store: Any = None  # a spark_explore.hadoop_fs.HadoopDir, for URIs

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    @property
    def where(self) -> str:
        """The directory as the user knows it (a path or a URI)."""
        return str(self.store.uri) if self.store is not None else str(self.path)

    @property
    def has_checkpoint(self) -> bool:
        """Whether the directory holds a committed checkpoint (a manifest)."""
        if self.store is not None:
            return bool(self.store.exists(MANIFEST))
        return self.manifest_path.is_file()

    @classmethod
    def prepare_remote(cls, store: Any, *, resume: bool) -> RunDir:
        """As :meth:`prepare`, for a directory on a Hadoop file system."""
        uri = store.uri
        try:
            held = store.exists(MANIFEST)
            if held and not resume:
                raise CheckpointError(
                    f"{uri} already holds a checkpoint; pass --resume to continue it, or "
                    "choose an empty --checkpoint-dir to start a new run.")
            if not held:
                store.mkdirs()
                store.write_bytes(".write-test", b"ok")
                store.delete(".write-test")
        except CheckpointError:
            raise
        except Exception as e:  # noqa: BLE001 - py4j carries Hadoop's IOExceptions
            raise CheckpointError(
                f"cannot use {uri} as checkpoint directory: {_first_line(e)}") from None
        return cls(Path(uri.split("://", 1)[-1]), store=store)

    # ------------------------------------------------------------ preparing
    @classmethod
    def prepare(cls, path: str | os.PathLike[str], *, resume: bool) -> RunDir:
        """Check ``path`` before Spark starts. Without ``resume`` it must not hold a
        checkpoint; with ``resume`` a directory without one (or none at all) starts
        afresh, as ``modelcheck check --resume`` does."""
        p = Path(path).expanduser().resolve()
        if (p / MANIFEST).is_file():
            if resume:
                return cls(p)
            raise CheckpointError(
                f"{p} already holds a checkpoint; pass --resume to continue it, or choose an "
                "empty --checkpoint-dir (or delete that directory) to start a new run."
            )
        try:
            p.mkdir(parents=True, exist_ok=True)
            probe = p / ".write-test"
            probe.write_bytes(b"ok")
            probe.unlink()
        except OSError as e:
            raise CheckpointError(
                f"cannot use {p} as checkpoint directory: {e.strerror or e}."
            ) from None
        return cls(p)

    # ------------------------------------------------------------ manifest
    def read_manifest(self) -> dict[str, Any]:
        where = f"{self.where}/{MANIFEST}"
        try:
            if self.store is not None:
                data: dict[str, Any] = json.loads(self.store.read_bytes(MANIFEST))
            else:
                data = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError) as e:
            raise CheckpointError(f"cannot read {where}: {e}") from None
        except Exception as e:  # noqa: BLE001 - py4j
            raise CheckpointError(f"cannot read {where}: {_first_line(e)}") from None
        data = parse_manifest(data, self.where)
        refuse_other_engine(data, self.where, local=False)
        return data

    def write_manifest(self, data: dict[str, Any]) -> None:
        """Atomically replace the manifest (write a temp file, fsync, rename)."""
        data = dict(data, format=FORMAT, version=VERSION, written=time.time())
        if self.store is not None:
            try:
                self.store.write_bytes(MANIFEST, json.dumps(data, indent=1).encode())
            except Exception as e:  # noqa: BLE001 - py4j carries Hadoop's IOExceptions
                raise CheckpointError(
                    f"cannot write {self.where}/{MANIFEST}: {_first_line(e)}; the levels "
                    "committed before stay usable with --resume once the problem is fixed."
                ) from None
            return
        write_manifest(self.path, data)

    def check_compatible(self, manifest: dict[str, Any], ident: dict[str, Any]) -> None:
        """Refuse a checkpoint made for another spec, other constants or other checks."""
        have = manifest.get("spec", {})
        diffs = []
        if have.get("class") != ident["class"]:
            diffs.append(f"spec class {have.get('class')} vs {ident['class']}")
        hc, ic = have.get("constants", {}), ident["constants"]
        for k in sorted(set(hc) | set(ic)):
            if hc.get(k) != ic.get(k):
                diffs.append(f"constant {k} = {hc.get(k)} vs {ic.get(k)}")
        if not diffs and have.get("layout") != ident["layout"]:
            diffs.append("the state layout or action list differs (the spec code changed)")
        if not diffs and (why := key_width_diff(have, ident)) is not None:
            diffs.append(why)
        for key in ("invariants", "properties", "deadlock", "symmetry", "view"):
            if have.get(key, [] if key == "view" else None) != ident[key]:
                diffs.append(f"checked {key} {have.get(key)} vs {ident[key]}")
        if diffs:
            raise CheckpointError(
                f"the checkpoint in {self.where} was made for {_describe(have)}, not for this "
                f"run's {_describe(ident)}: {'; '.join(diffs)}. Resume it with the same spec, "
                "constants and checks, or use another --checkpoint-dir for this run."
            )

    def bytes_on_disk(self, sub: str = "shards") -> int:
        """Bytes of the files under the subdirectory ``sub`` of the run directory."""
        if self.store is not None:
            return int(self.store.du(sub))
        total = 0
        for root, _, files in os.walk(self.path / sub):
            for f in files:
                try:
                    total += os.path.getsize(os.path.join(root, f))
                except OSError:
                    pass
        return total

    def cleanup(self) -> None:
        if self.temporary:
            shutil.rmtree(self.path, ignore_errors=True)
