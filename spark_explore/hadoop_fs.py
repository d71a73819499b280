"""Files on any Hadoop file system (``file://``, ``hdfs://``, ``s3a://``, ...), from the driver.

:class:`HadoopDir` reads and writes the files of a directory through Hadoop's
``FileSystem`` API in the driver's JVM (``spark._jvm.org.apache.hadoop.fs``), with
the session's Hadoop configuration: any scheme that configuration reaches works
(``s3a://`` once the user adds the connector jars and credentials). Writes go to a
temporary name and are renamed into place (replacing the target: ``FileContext``'s
``rename`` with ``OVERWRITE``, atomic on HDFS and on local disks), so a reader never
sees half a file.

:func:`is_uri` and :func:`local_path` tell a URI with a scheme from a local path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

__all__ = ["HadoopDir", "is_uri", "local_path", "scheme_of"]

#: bytes per py4j call when writing
_CHUNK = 1 << 24
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def scheme_of(path: str | os.PathLike[str]) -> str | None:
    """The URI scheme of ``path`` (``hdfs``, ``file``, ...), or None for a plain path."""
    m = _SCHEME.match(os.fspath(path))
    return m.group(1).lower() if m else None


def is_uri(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Hadoop file system other than the local disk."""
    return scheme_of(path) not in (None, "file")


def local_path(path: str | os.PathLike[str]) -> str:
    """``file:///x/y`` -> ``/x/y``; a plain path is returned as it is."""
    text = os.fspath(path)
    if scheme_of(text) == "file":
        rest = text[len("file://"):]
        if not rest.startswith("/"):  # file://host/path: only the local host is ours
            host, _, tail = rest.partition("/")
            if host not in ("", "localhost"):
                raise ValueError(f"{text}: a file:// URI must name a path on this host")
            rest = "/" + tail
        return rest
    return text


class HadoopDir:
    """A directory ``uri`` on a Hadoop file system, used from the driver.

    ``spark`` is a session (its JVM and Hadoop configuration are used). Names are
    relative paths with ``/``.
    """

    def __init__(self, spark: Any, uri: str) -> None:
        sc = spark.sparkContext
        self._jvm = sc._jvm
        self._conf = sc._jsc.hadoopConfiguration()
        fs_pkg = self._jvm.org.apache.hadoop.fs
        self._fs_pkg = fs_pkg
        if scheme_of(uri) is None:
            uri = Path(uri).resolve().as_uri()
        self.uri = uri.rstrip("/")
        self._root = fs_pkg.Path(self.uri)
        self._fs = self._root.getFileSystem(self._conf)
        self._fc = fs_pkg.FileContext.getFileContext(self._root.toUri(), self._conf)

    def _path(self, name: str) -> Any:
        return self._fs_pkg.Path(f"{self.uri}/{name}") if name else self._root

    def exists(self, name: str = "") -> bool:
        return bool(self._fs.exists(self._path(name)))

    def mkdirs(self, name: str = "") -> None:
        self._fs.mkdirs(self._path(name))

    def read_bytes(self, name: str) -> bytes:
        stream = self._fs.open(self._path(name))
        try:
            return bytes(stream.readAllBytes())  # a Java byte[] arrives as bytes
        finally:
            stream.close()

    def write_bytes(self, name: str, data: bytes) -> None:
        """Write ``data`` to ``name`` through a temporary name and an atomic rename."""
        target = self._path(name)
        tmp = self._path(f"{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        out = self._fs.create(tmp, True)
        try:
            view = memoryview(data)
            for i in range(0, len(view), _CHUNK):
                out.write(bytearray(view[i:i + _CHUNK]))
            out.hsync()
        finally:
            out.close()
        try:
            self._fc.rename(tmp, target, self._overwrite())
        except Exception:
            self._fs.delete(tmp, False)
            raise

    def _overwrite(self) -> Any:
        """A Java ``Options.Rename[] {OVERWRITE}`` (the varargs of ``FileContext.rename``)."""
        cls = self._jvm.java.lang.Class.forName("org.apache.hadoop.fs.Options$Rename")
        value = next(c for c in cls.getEnumConstants() if str(c.name()) == "OVERWRITE")
        arr = self._jvm.java.lang.reflect.Array.newInstance(cls, 1)
        arr[0] = value
        return arr

    def delete(self, name: str, recursive: bool = True) -> None:
        self._fs.delete(self._path(name), recursive)

    def list(self, name: str = "") -> list[str]:
        """Names of the entries of directory ``name`` (empty if it does not exist)."""
        p = self._path(name)
        if not self._fs.exists(p):
            return []
        return sorted(str(s.getPath().getName()) for s in self._fs.listStatus(p))

    def du(self, name: str = "") -> int:
        p = self._path(name)
        if not self._fs.exists(p):
            return 0
        return int(self._fs.getContentSummary(p).getLength())
