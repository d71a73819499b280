"""The reachable state graph of a small spec, and the part of it around one state.

This module owns the explorer's Graph view. :class:`ReachableGraph` is the state
graph that ``modelcheck graph`` writes (:func:`~modelcheck.graph.state_graph`: one run
of the explorer with the state-graph store as its observer; no symmetry, no view,
nothing checked, the state and action constraints applied, at most ``limit`` states:
a larger spec raises :class:`~modelcheck.graph.GraphTooLarge`): every state's packed
words and every transition between states.
:meth:`ReachableGraph.around` gives the states a few steps before and after one
state, each with its signed distance (negative: predecessors), and the
transitions among them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx

from ..graph import state_graph
from ..kernel import Kernel
from ..store import key_ints

__all__ = ["ReachableGraph", "Neighbourhood"]


@dataclass(frozen=True)
class Neighbourhood:
    """States around one state: ``distance`` per fingerprint (0 for the state itself,
    ``+k`` k steps after it, ``-k`` k steps before it) and the transitions
    ``(from fp, to fp, action instance id)`` among them; ``truncated`` when more
    states were within reach than were kept."""

    distance: dict[int, int]
    edges: list[tuple[int, int, int]]
    truncated: bool


class ReachableGraph:
    """Every reachable state of a spec (within its state and action constraints) and
    transition (of ``kernel``'s spec: ``kernel`` fingerprints whole states)."""

    def __init__(self, kernel: Kernel, limit: int) -> None:
        self.kernel = kernel
        g = state_graph(kernel.spec, limit, labels=False,
                        advice="the graph view is for small models (--graph-limit, or "
                               "smaller constants with --const).")
        assert g.words is not None
        fps = key_ints(g.fps)
        self._row = {f: i for i, f in enumerate(fps)}
        self._words = g.words
        #: the fingerprints of the initial states
        self.initial: set[int] = {f for f, init in zip(fps, g.initial.tolist()) if init}
        self.graph = nx.MultiDiGraph()
        self.graph.add_nodes_from(fps)
        self.graph.add_edges_from((fps[u], fps[v], a) for u, v, a in
                                  zip(g.src.tolist(), g.dst.tolist(), g.act.tolist()))

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, fp: int) -> bool:
        return fp in self._row

    def cells(self, fp: int) -> list[int]:
        """The cell values of the state with fingerprint ``fp``."""
        return self.kernel.layout.unpack(self._words[self._row[fp]])

    def around(self, fp: int, radius: int, max_states: int = 80) -> Neighbourhood:
        """The states at most ``radius`` steps after or before state ``fp`` (at most
        ``max_states`` of them, nearest first) and the transitions among them."""
        distance = {fp: 0}
        truncated = False
        g = self.graph
        for sign, neighbours in ((1, g.successors), (-1, g.predecessors)):
            queue = deque([(fp, 0)])
            seen = {fp}
            while queue:
                u, d = queue.popleft()
                if d == radius:
                    continue
                for v in sorted(neighbours(u)):
                    if v in seen:
                        continue
                    seen.add(v)
                    if v not in distance:
                        if len(distance) >= max_states:
                            truncated = True
                            continue
                        distance[v] = sign * (d + 1)
                    queue.append((v, d + 1))
        edges = sorted({(u, v, a) for u, v, a in g.subgraph(distance).edges(keys=True)})
        return Neighbourhood(distance, edges, truncated)
