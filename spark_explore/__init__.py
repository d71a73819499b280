"""PySpark backend for modelcheck: the same breadth-first exploration, distributed.

Modules (``pyspark`` is imported only inside their functions, never by ``modelcheck``):

* :mod:`spark_explore.shard_explorer` — :class:`ShardExplorer`, the exploration:
  one Spark job of per-bucket numpy tasks per level (:mod:`spark_explore.shards`).
* :mod:`spark_explore.explorer` — :class:`SparkExplorer`, its driver-side base
  (session, run directory, error translation, end-of-level rule).
* :mod:`spark_explore.worker` — executor-side helpers (kernel cache, error transport,
  :class:`~spark_explore.worker.LevelExpansion`).
* :mod:`spark_explore.session` — starting/reusing a SparkSession, shipping the spec.
* :mod:`spark_explore.checkpoint` — the run directory: Parquet runs and manifest.json.
* :mod:`spark_explore.cli` — ``modelcheck spark``; :mod:`spark_explore.submit` — the
  ``spark-submit`` entry point.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SparkExplorer", "ShardExplorer"]


def __getattr__(name: str) -> Any:
    if name == "SparkExplorer":
        from .explorer import SparkExplorer

        return SparkExplorer
    if name == "ShardExplorer":
        from .shard_explorer import ShardExplorer

        return ShardExplorer
    raise AttributeError(name)
