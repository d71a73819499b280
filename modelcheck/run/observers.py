"""Observers of a run: collaborators handed what the run already computes.

An :class:`Observer` is told each level's stored states before they are expanded
(:meth:`Observer.on_level`) and each batch of the level's expansion as the level rule
produced it (:meth:`Observer.on_batch`: the transitions into stored states, and the
values of the predicates the observer asked the kernel to evaluate on every state and
transition, its ``labels`` and ``step_labels``, see
:class:`~modelcheck.kernel.Checks`), then the *node index* of each transition's target
as the run found it when it de-duplicated the batch's successors against the visited
states (:meth:`Observer.on_edges`, per distinct successor with the de-duplication's
inverse; a node index is a state's place in breadth-first
order: the states of the levels before, then its row in its level). A target that is
a new state is numbered among the level's new candidates until the level's end, when
:meth:`Observer.on_new_states` tells each one's row in the next level. So an observer
never evaluates or expands a level again, nor looks a state up. The state-graph store
(:class:`~modelcheck.stategraph.GraphCollector`) is one: liveness's graph for the SCCs,
and the graph of ``modelcheck graph`` and of the web explorer
(:func:`~modelcheck.graph.state_graph`).
The memory it holds (:meth:`Observer.nbytes`) counts towards the run's memory budget
(``--memory-limit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from ..kernel import Expansion
from ..spec import PredicateDecl

__all__ = ["Observer"]


class Observer(Protocol):
    """What a run hands an observer (see the module docstring)."""

    @property
    def labels(self) -> Sequence[PredicateDecl]:
        """State predicates the kernel evaluates on every state for the observer."""

    @property
    def step_labels(self) -> Sequence[PredicateDecl]:
        """Step predicates the kernel evaluates on every transition for the observer."""

    def on_level(self, depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        """Level ``depth``'s stored states (sorted fingerprints, packed words), before
        it is expanded."""

    def on_batch(self, start: int, ex: Expansion) -> None:
        """The expansion of the level's rows ``start..start + ex.n`` (batches come in
        row order): ``ex.parent_rows`` (relative to ``start``), ``ex.action_ids`` and
        ``ex.child_fps`` are its transitions into stored states, ``ex.label_rows`` and
        ``ex.step_label_hits`` the observer's labels (``ex.child_words`` has no rows when
        the keys are the packed states: the batch is expanded for its keys only)."""

    def on_edges(self, targets: np.ndarray, inverse: np.ndarray) -> None:
        """The targets of the transitions of the batch :meth:`on_batch` saw last, as
        the run de-duplicated them: ``targets`` per distinct successor (``int32``), the
        node index of a state stored before (``>= 0``), or ``-1 - j`` for the level's
        ``j``-th new candidate (the candidates numbered in the order the run found
        them, over the level's batches); ``inverse`` per transition (in its order) the
        index of its successor in ``targets`` (so transition ``i``'s target is
        ``targets[inverse[i]]``)."""

    def on_new_states(self, depth: int, rows: np.ndarray) -> None:
        """After level ``depth``'s expansion: the row in level ``depth + 1`` of each of
        its new candidates (``rows[j]`` for candidate ``j``; several candidates of
        different batches may be one state)."""

    def nbytes(self) -> int:
        """Bytes the observer holds in memory (counted by the memory budget)."""
