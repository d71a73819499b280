"""Sharded runs: the state space split into buckets by fingerprint, each level one job
of per-bucket tasks over ``.npy`` files in a run directory.

* :mod:`modelcheck.shards.files` — the task code (commit a bucket, expand it, split its
  successors by target bucket) and the file layout;
* :mod:`modelcheck.shards.engine` — :class:`~modelcheck.shards.engine.BucketEngine`, a
  level as one job of tasks, small levels in the coordinating process;
* :mod:`modelcheck.shards.backend` — :class:`~modelcheck.shards.backend.ShardedRun`, the
  one run loop over the level rule, the manifest, the trace rebuild;
* :mod:`modelcheck.shards.pool` — ``modelcheck check --workers N``: the tasks run by
  local worker processes;
* :mod:`modelcheck.shards.rundir` and :mod:`modelcheck.shards.worker` — the run
  directory, and the kernel cache and error transport of a worker.

The Spark backend (``spark_explore``) runs the same tasks on executors.
"""
