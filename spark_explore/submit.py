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
executors as a zip, so executors need only Python with numpy and pyarrow (the
interpreter of ``spark.pyspark.python``). On a multi-host cluster give
``--checkpoint-dir`` on storage every host shares (for fault tolerance and resume).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    """Run ``modelcheck spark`` with ``argv`` (default: this process's arguments)."""
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
