"""PySpark backend for modelcheck: the same breadth-first exploration, distributed.

Modules (``pyspark`` is imported only inside their functions, never by ``modelcheck``):

* :mod:`spark_explore.driver` — :class:`SparkExplorer`, what ``modelcheck spark``
  calls: a sharded run (:class:`modelcheck.shards.backend.ShardedRun`: the one run
  loop, the run directory and manifest, the trace) whose jobs run on Spark; the
  session, Hadoop run directories, Ctrl-C and Spark's errors are its own.
* :mod:`spark_explore.shard_engine` — :class:`~spark_explore.shard_engine.ShardEngine`,
  the engine of one host (or a shared mount): the bucket engine of
  :mod:`modelcheck.shards` (the engine of ``check --workers N``), one Spark job of
  per-bucket numpy tasks per level; small levels in the driver.
* :mod:`spark_explore.rdd_engine` — :class:`~spark_explore.rdd_engine.RddEngine`, the
  engine of clusters: the levels as persisted pair RDDs partitioned by bucket, the
  successors through Spark's shuffle; checkpoints through Hadoop.
* :mod:`spark_explore.simulate` — :class:`~spark_explore.simulate.SparkSimulator`,
  ``modelcheck spark --simulate``: random walks in rounds of Spark tasks, each running
  a part of the walks with the local engine's function; the driver adds up and shrinks.
* :mod:`spark_explore.hadoop_fs` — files on Hadoop file systems, from the driver.
* :mod:`spark_explore.session` — starting/reusing a SparkSession, shipping the spec.
* :mod:`spark_explore.cli` — ``modelcheck spark``; :mod:`spark_explore.submit` — the
  ``spark-submit`` entry point.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SparkExplorer"]


def __getattr__(name: str) -> Any:
    if name == "SparkExplorer":
        from .driver import SparkExplorer

        return SparkExplorer
    raise AttributeError(name)
