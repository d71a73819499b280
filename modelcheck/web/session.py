"""What ``modelcheck explore`` serves: one spec, and optionally a trace and a run.

:class:`ExploreSession` answers every request of the page with JSON data and holds
no per-page state: the page keeps its path (the states as cell values, with the
actions between them) and sends what a request needs. It owns

* the overview (:meth:`~ExploreSession.overview`): the spec, the loaded trace as
  steps with their changes, its lasso loop and whether it is a behaviour of the
  spec (:func:`~modelcheck.trace.replay.replay`), the run's summary;
* the initial states and the successors of a state, from the scalar evaluator
  (:meth:`Kernel.successors_checked <modelcheck.kernel.Kernel.successors_checked>`:
  action properties on every transition, state constraints on every successor);
* an expression over the path (:func:`~modelcheck.trace.evaluate.evaluate`, bounded
  in time and memory as ``trace eval`` is);
* the path as an ITF trace that ``trace replay`` accepts, replayed first;
* the reachable graph around a state, for small specs
  (:class:`~modelcheck.web.neighbourhood.ReachableGraph`, built on first use).

Spec code is not thread-safe: requests are served one at a time (a lock), but for
the expression's evaluation, which runs in a child process.
"""

from __future__ import annotations

import threading
from typing import Any

from ..graph import GraphTooLarge
from ..kernel import Kernel
from ..spec import Spec
from ..trace import Trace, trace_to_itf
from ..trace.evaluate import DEFAULT_LIMITS, Limits, evaluate
from ..trace.itf import dumps_itf
from ..trace.render import action_label, format_value, loop_lines
from ..trace.replay import replay, trace_cells
from .neighbourhood import ReachableGraph
from .runview import RunView
from .states import (
    RequestError,
    params_json,
    parse_cells,
    path_trace,
    state_text,
    step_json,
)

__all__ = ["ExploreSession", "MAX_INITIAL", "MAX_RADIUS"]

#: the most initial states the page is offered
MAX_INITIAL = 500
#: the most steps the graph view reaches each way
MAX_RADIUS = 4


class ExploreSession:
    """The spec ``spec`` (bound, as named by ``target``), the ``trace`` to show first
    (from ``trace_source``), the ``run`` whose results to show, and ``notes`` to show
    on the page (what loading noticed)."""

    def __init__(self, spec: Spec, *, target: str, trace: Trace | None = None,
                 trace_source: str | None = None, run: RunView | None = None,
                 notes: list[str] | None = None, graph_limit: int = 10_000,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.spec = spec
        self.target = target
        self.kernel = Kernel(spec, symmetry=False, view=False)
        self.trace = trace
        self.trace_source = trace_source
        self.run = run
        self.notes = list(notes or [])
        self.graph_limit = graph_limit
        self.limits = limits
        self._lock = threading.Lock()
        self._graph: ReachableGraph | GraphTooLarge | None = None
        #: the cells of the trace's states (raises TraceMismatchError if it does not fit)
        self.trace_cells = trace_cells(spec, trace) if trace is not None else None

    # ------------------------------------------------------------------ overview
    def overview(self) -> dict[str, Any]:
        """The spec, the trace (as steps) and the run: what the page shows first."""
        with self._lock:
            spec, cls = self.spec, type(self.spec)
            return {
                "spec": spec.name,
                "title": repr(spec),
                "target": self.target,
                "version": _version(),
                "constants": dict(spec.constants),
                "vars": list(spec.layout.vars),
                "actions": [{"name": d.name, "params": list(d.params)}
                            for d in cls._actions.values()],
                "invariants": [p.name for p in spec.invariants],
                "properties": [p.name for p in spec.properties],
                "notes": self.notes,
                "trace": self._trace_json(),
                "run": self.run.summary if self.run is not None else None,
                "graph_limit": self.graph_limit,
            }

    def _trace_json(self) -> dict[str, Any] | None:
        t, cells = self.trace, self.trace_cells
        if t is None or cells is None:
            return None
        rep = replay(self.spec, t)
        return {
            "source": self.trace_source,
            "describe": t.describe(),
            "recorded_from": t.spec,
            "violation": t.violation_text(),
            "loop": t.loop,
            "loop_text": loop_lines(t),
            "replay": {"ok": rep.ok, "message": rep.message, "notes": rep.notes},
            "steps": [step_json(self.kernel, s.action, s.params, cells[i],
                                cells[i - 1] if i else None)
                      for i, s in enumerate(t.steps)],
        }

    # ------------------------------------------------------------------ states
    def initial_states(self) -> dict[str, Any]:
        """The initial states (at most :data:`MAX_INITIAL`) as first steps of a path."""
        with self._lock:
            inits = self.kernel.initial_states()
            return {"count": len(inits),
                    "states": [step_json(self.kernel, None, {}, c, None)
                               for c in inits[:MAX_INITIAL]]}

    def successors(self, body: dict[str, Any]) -> dict[str, Any]:
        """Every enabled action instance in state ``body["cells"]``, with its successor:
        whether the transition is in the model (``inside``: its successor satisfies the
        state constraints and it satisfies the action constraints) and the action
        properties it violates (``properties``). A state outside the state
        constraints has none (``outside_constraints``): the checker never expands it."""
        cells = parse_cells(self.spec.layout, body.get("cells"))
        with self._lock:
            k = self.kernel
            if not k.satisfies_constraints(cells):
                return {"successors": [], "outside_constraints": True}
            out = []
            for inst, nxt, inside, bad in k.successors_checked(cells):
                step = step_json(k, inst.name, dict(inst.params), nxt, cells)
                step.update(id=inst.id, inside=inside, properties=[p.name for p in bad])
                out.append(step)
            return {"successors": out, "outside_constraints": False}

    # ------------------------------------------------------------------ the path
    def evaluate(self, body: dict[str, Any]) -> dict[str, Any]:
        """The expression ``body["expr"]`` in every state of ``body["path"]``, as
        ``trace eval`` prints each value."""
        expr = body.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            raise RequestError("expr: expected the expression (a non-empty string).")
        trace = path_trace(self.spec, body.get("path"))
        values = evaluate(trace, expr, limits=self.limits)
        return {"expr": expr, "values": [format_value(v, python=True) for _, _, v in values]}

    def save(self, body: dict[str, Any]) -> dict[str, Any]:
        """The path ``body["path"]`` (a lasso from ``body["loop"]``) as ITF text, and
        whether it replays as a behaviour of the spec."""
        trace = path_trace(self.spec, body.get("path"), body.get("loop"), source=self.target)
        with self._lock:
            rep = replay(self.spec, trace)
        itf = dumps_itf(trace_to_itf(trace, generator=f"modelcheck {_version()} explore"))
        return {"itf": itf, "filename": f"{self.spec.name}.path.itf.json",
                "replay": {"ok": rep.ok, "message": rep.message, "notes": rep.notes}}

    # ------------------------------------------------------------------ the graph
    def neighbourhood(self, body: dict[str, Any]) -> dict[str, Any]:
        """The reachable states within ``body["radius"]`` steps of state ``body["cells"]``
        either way, with the transitions among them (``status`` ``too-large`` when the
        spec has more than ``graph_limit`` reachable states, ``absent`` when the state
        is not one of them)."""
        cells = parse_cells(self.spec.layout, body.get("cells"))
        radius = body.get("radius", 2)
        if isinstance(radius, bool) or not isinstance(radius, int) \
                or not 1 <= radius <= MAX_RADIUS:
            raise RequestError(f"radius: expected an integer in 1..{MAX_RADIUS}.")
        with self._lock:
            if self._graph is None:
                try:
                    self._graph = ReachableGraph(self.kernel, self.graph_limit)
                except GraphTooLarge as e:
                    self._graph = e
            g = self._graph
            if isinstance(g, GraphTooLarge):
                return {"status": "too-large", "message": str(g)}
            fp = self.kernel.fingerprint(cells)
            if fp not in g:
                return {"status": "absent", "states": len(g),
                        "message": "this state is not among the reachable states of the spec "
                                   "(within its state constraints)."}
            hood = g.around(fp, radius)
            layout = self.spec.layout
            nodes = []
            for n, d in sorted(hood.distance.items(), key=lambda kv: (kv[1], kv[0])):
                c = g.cells(n)
                nodes.append({"id": f"{n:#x}", "distance": d, "cells": c,
                              "label": state_text(layout, c), "initial": n in g.initial,
                              "invariants": [p.name for p in self.kernel.check_invariants(c)]})
            edges = []
            for u, v, a in hood.edges:
                inst = self.spec.actions[a]
                edges.append({"from": f"{u:#x}", "to": f"{v:#x}", "action": inst.name,
                              "params": params_json(dict(inst.params)),
                              "label": action_label(inst.name, dict(inst.params))})
            return {"status": "ok", "states": len(g), "radius": radius, "nodes": nodes,
                    "edges": edges, "truncated": hood.truncated}


def _version() -> str:
    from .. import __version__

    return __version__
