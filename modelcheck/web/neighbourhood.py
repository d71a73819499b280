"""The reachable state graph of a small spec, and the part of it around one state.

This module owns the explorer's Graph view. :class:`ReachableGraph` explores the
spec once with the level explorer (:class:`~modelcheck.explorer.Explorer`, no
symmetry, nothing checked, at most ``limit`` states: a larger spec raises
:class:`~modelcheck.graph.GraphTooLarge`) and keeps every state's packed words and
every transition into a stored state, collected through the explorer's
``on_level``/``on_transitions`` seams (as liveness checking collects its graph).
:meth:`ReachableGraph.around` gives the states a few steps before and after one
state, each with its signed distance (negative: predecessors), and the
transitions among them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import networkx as nx
import numpy as np

from ..config import CheckConfig
from ..explorer import Explorer
from ..graph import GraphTooLarge
from ..kernel import Kernel

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
    """Every reachable state of a spec (within its state constraints) and transition."""

    def __init__(self, kernel: Kernel, limit: int) -> None:
        self.kernel = kernel
        layout = kernel.layout
        fps: list[np.ndarray] = []
        words: list[np.ndarray] = []
        src: list[np.ndarray] = []
        act: list[np.ndarray] = []
        dst: list[np.ndarray] = []
        #: the fingerprints of the initial states
        self.initial: set[int] = set()

        def on_level(depth: int, level_fps: np.ndarray, level_words: np.ndarray) -> None:
            fps.append(np.array(level_fps, dtype=np.uint64))
            words.append(np.array(level_words, dtype=np.uint64).reshape(len(level_fps), -1))
            if depth == 0:
                self.initial = {int(f) for f in level_fps}

        def on_transitions(rows: np.ndarray, acts: np.ndarray, children: np.ndarray) -> None:
            # the parents are rows of the level being expanded (the last one reported)
            src.append(fps[-1][rows])
            act.append(np.array(acts, dtype=np.int64))
            dst.append(np.array(children, dtype=np.uint64))

        config = CheckConfig(invariants=(), check_deadlock=False, symmetry=False,
                             view=False, max_states=limit)
        res = Explorer(kernel.spec, config, on_level=on_level,
                       on_transitions=on_transitions).run()
        if res.status != "ok":
            raise GraphTooLarge(
                f"the state graph of {kernel.spec!r} has more than {limit:,} reachable states "
                f"({res.reason or res.status}); the graph view is for small models "
                "(--graph-limit, or smaller constants with --const).")
        all_fps = np.concatenate(fps) if fps else np.zeros(0, dtype=np.uint64)
        all_words = np.concatenate(words) if words else np.zeros((0, layout.n_words), np.uint64)
        self._row = {int(f): i for i, f in enumerate(all_fps)}
        self._words = all_words
        self.graph = nx.MultiDiGraph()
        self.graph.add_nodes_from(self._row)
        if src:
            self.graph.add_edges_from(
                (int(u), int(v), int(a)) for u, v, a in zip(np.concatenate(src),
                                                            np.concatenate(dst),
                                                            np.concatenate(act)))

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
