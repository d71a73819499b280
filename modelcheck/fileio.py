"""Files the commands write: atomic writes, and destinations probed before a run.

* :func:`atomic_write` — results, traces and checkpoints are never left half-written:
  the data goes to a temporary file in the target's directory, which is renamed into
  place. It replaces nothing but a regular file: a symbolic link, a FIFO, a device,
  a socket or a directory at the target is left alone (:class:`NotRegularFileError`).
* :func:`prepare_dir` / :func:`probe_file` — an output or working path given on the
  command line (``--out``, ``--trace-out``, ``--spill-dir``, ``--checkpoint-dir``,
  ``graph --output``) is tried for real (a directory created, a file created and
  removed beside the target) before any work, so a bad path is a usage error naming
  the user's path, never a failure at the end of a long run. An output file must be
  absent or a regular file, an output directory absent or a directory (possibly
  reached through a symbolic link): anything else is refused, saying what it is.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

from .errors import UsageError

__all__ = ["atomic_write", "prepare_dir", "probe_file", "OutputPathError", "has_scheme",
           "file_uri_path", "spill_subdir", "path_kind", "NotRegularFileError"]


def _token() -> str:
    """12 random hex digits for a temporary file's name (``secrets.token_hex(6)``
    without importing ``secrets``, whose ``hmac``/``hashlib`` cost ~10 ms at start-up)."""
    return os.urandom(6).hex()


class OutputPathError(UsageError):
    """An output or working path given on the command line cannot be used."""


class NotRegularFileError(OSError):
    """:func:`atomic_write` found something other than a regular file at its target
    (and left it alone)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EEXIST, f"it is {kind}, not a regular file, and is never "
                                       "replaced", path)


def path_kind(path: str | os.PathLike[str]) -> str | None:
    """What is at ``path`` (not following a symbolic link) when it is not a regular
    file: ``"a symbolic link to X"``, ``"a FIFO (named pipe)"``, ``"a character
    device"``, ``"a block device"``, ``"a socket"``, ``"a directory"``; None when
    nothing is there, or a regular file."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        try:
            return f"a symbolic link to {os.readlink(path)}"
        except OSError:  # pragma: no cover - removed meanwhile
            return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _not_empty(path: str | os.PathLike[str], option: str, what: str) -> None:
    """An empty path is refused (it would mean the current directory)."""
    if not os.fspath(path):
        raise OutputPathError(f"{option}: the path is empty; give a {what} name.")


def _reason(e: OSError) -> str:
    if isinstance(e, FileExistsError | NotADirectoryError):
        return "a file is in the way (a directory is needed)"
    return e.strerror or str(e)


def _probe_write(directory: str, what: str) -> None:
    """Create and remove a file in ``directory`` (raises :class:`OutputPathError`)."""
    tmp = os.path.join(directory, f".modelcheck-probe.{_token()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:
        raise OutputPathError(f"{what}: cannot write in {directory}: {_reason(e)}.") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def has_scheme(path: str) -> bool:
    """Whether ``path`` is a URI with a scheme (``hdfs://...``, ``s3a://...``)."""
    head, sep, _ = path.partition("://")
    return bool(sep) and head.replace("+", "").replace(".", "").replace("-", "").isalnum() \
        and head[:1].isalpha()


def file_uri_path(uri: str, option: str) -> str:
    """The local path of a ``file://`` URI (``file:///x/y`` -> ``/x/y``)."""
    rest = uri[len("file://"):]
    if not rest.startswith("/"):
        host, _, tail = rest.partition("/")
        if host not in ("", "localhost"):
            raise OutputPathError(f"{option} {uri}: a file:// URI must name a path on this "
                                  "host (file:///path).")
        rest = "/" + tail
    return rest


def prepare_dir(path: str | os.PathLike[str], option: str, *, create: bool = True) -> None:
    """Make sure ``path`` is (or can become) a directory this process can write in.

    With ``create`` the directory is made now (with its parents); otherwise the
    nearest existing ancestor is probed, so that nothing is left behind when the
    directory is created only at the end of the run. Raises
    :class:`OutputPathError` naming ``option`` and ``path`` as the user gave it.
    """
    _not_empty(path, option, "directory")
    what = f"{option} {os.fspath(path)}"
    full = os.path.abspath(os.fspath(path))
    if os.path.lexists(full) and not os.path.isdir(full):
        kind = path_kind(full)
        raise OutputPathError(f"{what}: exists and is not a directory"
                              + (f" (it is {kind}, and is left alone)." if kind else "."))
    if create:
        try:
            os.makedirs(full, exist_ok=True)
        except OSError as e:
            raise OutputPathError(f"{what}: cannot create the directory: {_reason(e)}.") from None
        _probe_write(full, what)
        return
    p = full
    while not os.path.lexists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    if not os.path.isdir(p):
        raise OutputPathError(f"{what}: {p} is not a directory.")
    _probe_write(p, what)


def spill_subdir(spill_dir: str, prefix: str) -> str:
    """A new private directory for one run's files under ``--spill-dir`` (created if
    missing), or a usage error naming the user's path."""
    import tempfile

    try:
        os.makedirs(spill_dir, exist_ok=True)
        return tempfile.mkdtemp(prefix=prefix, dir=spill_dir)
    except OSError as e:
        raise UsageError(f"--spill-dir {spill_dir}: cannot use it: {_reason(e)}.") from None


def probe_file(path: str | os.PathLike[str], option: str) -> None:
    """Make sure a file can be written (atomically) at ``path``; nothing is created.

    Raises :class:`OutputPathError` when ``path`` is anything but a regular file (a
    directory, a symbolic link, a FIFO, a device, a socket: never replaced), its
    directory is missing, or no file can be created there.
    """
    _not_empty(path, option, "file")
    what = f"{option} {os.fspath(path)}"
    full = os.path.abspath(os.fspath(path))
    if os.path.isdir(full) and not os.path.islink(full):
        raise OutputPathError(f"{what}: is a directory; give a file name such as "
                              "trace.itf.json.")
    kind = path_kind(full)
    if kind is not None:
        raise OutputPathError(f"{what}: is {kind}; an output is written only as a regular "
                              "file (a new one, or one replacing a regular file), so this "
                              "is left alone. Give another file name.")
    parent = os.path.dirname(full)
    if not os.path.isdir(parent):
        if os.path.lexists(parent) or any(
                os.path.isfile(a) for a in _ancestors(parent)):
            raise OutputPathError(f"{what}: {parent} is not a directory.")
        raise OutputPathError(f"{what}: the directory {parent} does not exist.")
    _probe_write(parent, what)


def _ancestors(p: str) -> list[str]:
    out: list[str] = []
    while True:
        parent = os.path.dirname(p)
        if parent == p:
            return out
        out.append(parent)
        p = parent


def atomic_write(path: str | os.PathLike[str], data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    With ``overwrite=False`` an existing ``path`` is never replaced: the write
    fails with :class:`FileExistsError` instead. With ``overwrite=True`` only a
    regular file is replaced: anything else at ``path`` (a symbolic link, a FIFO, a
    device, a directory) makes the write fail with :class:`NotRegularFileError`,
    leaving it as it was.
    """
    target = os.fspath(path)
    kind = path_kind(target)
    if kind is not None:
        raise NotRegularFileError(target, kind)
    directory = os.path.dirname(os.path.abspath(target))
    tmp = os.path.join(directory, f".{os.path.basename(target)}.{_token()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if overwrite:
            kind = path_kind(target)  # again: it may have appeared while writing
            if kind is not None:
                raise NotRegularFileError(target, kind)
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
