"""PySpark backend for modelcheck: the same breadth-first exploration, distributed.

Modules (``pyspark`` is imported only inside their functions, never by ``modelcheck``):

* :mod:`spark_explore.explorer` — :class:`SparkExplorer`, the driver's level loop.
* :mod:`spark_explore.worker` — the ``mapInArrow`` expansion run in Python workers.
* :mod:`spark_explore.session` — starting/reusing a SparkSession, shipping the spec.
* :mod:`spark_explore.checkpoint` — the run directory: Parquet runs and manifest.json.
* :mod:`spark_explore.cli` — ``modelcheck spark``; :mod:`spark_explore.submit` — the
  ``spark-submit`` entry point.
* :mod:`spark_explore.cluster` — a standalone cluster on 127.0.0.1 for tests.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SparkExplorer"]


def __getattr__(name: str) -> Any:
    if name == "SparkExplorer":
        from .explorer import SparkExplorer

        return SparkExplorer
    raise AttributeError(name)
