"""The run of a check, written once for every backend.

* :mod:`modelcheck.run.rules` — the rules of a run: when it stops and what it says
  (``--max-depth``, ``--max-states``, a verdict's status, the checkpoint a stopped run
  leaves), the same words for the local explorer and the Spark backend;
* :mod:`modelcheck.run.progress` — :class:`~modelcheck.run.progress.Progress`, the one
  progress report of a breadth-first run, and the one line that prints it.

* :mod:`modelcheck.run.loop` — :class:`~modelcheck.run.loop.RunLoop`, the level loop
  (resume, stops, progress, checkpoint commits, the result) over a
  :class:`~modelcheck.run.loop.Backend`: the local explorer's (``modelcheck.explorer``)
  and the Spark driver's (``spark_explore.driver``);
* :mod:`modelcheck.run.results` — the result of a run, begun and completed the same
  way by every backend;
* :mod:`modelcheck.run.observers` — :class:`~modelcheck.run.observers.Observer`, a
  collaborator of the run (liveness's state graph) handed each level's states and
  each batch's transitions and labels as the run computes them.
"""

from __future__ import annotations
