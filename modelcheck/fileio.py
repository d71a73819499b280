"""Atomic file writes: results, traces and checkpoints are never left half-written."""

from __future__ import annotations

import contextlib
import os
import secrets

__all__ = ["atomic_write"]


def atomic_write(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    With ``overwrite=False`` an existing ``path`` is never replaced: the write
    fails with :class:`FileExistsError` instead.
    """
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    tmp = os.path.join(directory, f".{os.path.basename(target)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            os.replace(tmp, target)
        else:
            try:
                os.link(tmp, target)  # atomic, and fails if the target exists
            except (NotImplementedError, PermissionError):  # pragma: no cover - no hard links
                if os.path.exists(target):
                    raise FileExistsError(target) from None
                os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
