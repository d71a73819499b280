"""``spark-submit`` entry point of the Spark backend: the same command as ``modelcheck spark``.

Run it from the project root (where the spec lives), with any master and any
standard Spark options; everything after the script is the ``modelcheck spark``
command line::

    spark-submit --master spark://HOST:7077 \\
        --conf spark.executor.memory=4g --conf spark.pyspark.python="$(which python)" \\
        spark_explore/submit.py specs/kraft_broker.py \\
        --const N=2 --const P=1 --const MaxLog=6 --const MaxRestarts=2 --format json

It prints the same report as ``modelcheck check`` / ``modelcheck spark`` and exits
with the same codes (0 ok, 1 violation or deadlock, 2 usage, spec or Spark error,
3 interrupted or bounded). The master and the ``--conf`` settings given to
``spark-submit`` are used as they are (``--master`` after the script is not needed).
The spec, ``modelcheck``, ``invariants`` and ``spark_explore`` are shipped to the
executors as a zip, so executors need only Python with numpy (the interpreter of
``spark.pyspark.python``). On a cluster master the rdd engine keeps the levels in
Spark (no shared directory); ``--checkpoint-dir hdfs://...`` (or ``file://`` on the
driver's disk) is where the driver commits them for ``--resume``.

``spark-submit`` runs this driver with its stderr merged into its stdout (Spark's
``PythonRunner`` redirects the error stream), so progress lines, notes and warnings
(e.g. PySpark's pandas-version ``FutureWarning``) would end up in front of the report.
:func:`main` therefore sends the driver's ``sys.stderr`` to the ``spark-submit`` JVM's
own stderr: stdout carries the report alone, as with ``modelcheck spark``.
"""

from __future__ import annotations

import io
import os
import sys
import threading
from typing import Any


class JvmStderr(io.TextIOBase):
    """A text stream writing to a JVM ``java.io.PrintStream`` (through the py4j gateway).

    Text written while a write is being forwarded (py4j itself may warn, e.g. PySpark's
    converters import ``pyspark.testing`` on the first call) is forwarded right after it
    by the same thread. If the JVM cannot be reached, this and all later text go to
    ``fallback``.
    """

    def __init__(self, stream: Any, fallback: Any) -> None:
        super().__init__()
        self._stream: Any = stream
        self._fallback = fallback
        self._local = threading.local()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "strict"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        pending: list[str] | None = getattr(self._local, "pending", None)
        if pending is not None:  # written while this thread forwards text
            pending.append(s)
            return len(s)
        self._local.pending = pending = [s]
        try:
            while pending:
                text = "".join(pending)
                pending.clear()
                if not text:
                    continue
                stream = self._stream
                if stream is not None:
                    try:
                        stream.print(text)
                        stream.flush()
                        continue
                    except Exception:  # noqa: BLE001 - gateway gone: write locally from now on
                        self._stream = None
                self._fallback.write(text)
                self._fallback.flush()
        finally:
            self._local.pending = None
        return len(s)

    def flush(self) -> None:
        if self._stream is None:
            self._fallback.flush()


def stderr_to_jvm() -> bool:
    """Under ``spark-submit``, send ``sys.stderr`` to the JVM's stderr; True if done.

    Only when stdout and stderr of this process are the same file (Spark's
    ``PythonRunner`` merges them) and the py4j gateway of ``spark-submit`` is reachable.
    """
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return False
    try:
        if not os.path.samestat(os.fstat(1), os.fstat(2)):
            return False
    except OSError:
        return False
    try:
        from pyspark import SparkContext

        SparkContext._ensure_initialized()
        jvm = SparkContext._jvm
        assert jvm is not None
        stream = jvm.java.lang.System.err
    except Exception:  # noqa: BLE001 - leave stderr as it is
        return False
    sys.stderr.flush()
    sys.stderr = JvmStderr(stream, sys.stderr)
    return True


def main(argv: list[str] | None = None) -> None:
    """Run ``modelcheck spark`` with ``argv`` (default: this process's arguments)."""
    stderr_to_jvm()
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    # spark-submit puts this file's directory first on sys.path; make the packages of
    # the project it belongs to importable, and prefer the working directory's specs.
    if sys.path and os.path.abspath(sys.path[0]) == here:
        sys.path.pop(0)
    for p in (root, os.getcwd()):
        if p not in sys.path:
            sys.path.insert(0, p)
    from spark_explore.cli import spark

    spark.main(args=sys.argv[1:] if argv is None else argv, prog_name="submit.py")


if __name__ == "__main__":
    main()
