"""The reachable state graph of a small model: one run of the explorer, as networkx and as files.

This module owns ``modelcheck graph`` and the graph of the web explorer.
:func:`state_graph` runs the explorer (:class:`~modelcheck.explorer.Explorer`, the
one run loop of ``modelcheck check``) with the state-graph store
(:class:`~modelcheck.stategraph.GraphCollector`, liveness's too) as an observer of the run,
so the graph's states are the states that ``modelcheck check --no-symmetry --no-view``
stores: the state constraints, the action constraints and ``--max-states`` mean what
they mean there (a state outside the constraints, or reached only by transitions that
violate an action constraint, is no node, and such a transition no edge); nothing
ends the run early (no invariant, action property or deadlock is checked: they are
labels), and a spec with more than ``max_states`` reachable states raises
:class:`GraphTooLarge` when the level that passes the limit is counted. Nodes are
whole states (no symmetry reduction, no view).

:func:`build_graph` turns that graph into a networkx multigraph (two actions may link
the same states) and :func:`graph_bytes` writes it as DOT (our own small writer with
correct quoting, :func:`to_dot`, no pydot/pygraphviz needed), GraphML
(``networkx.write_graphml``) or JSON (``networkx.node_link_data``). Node attributes:
``label`` (the state, one variable per line), ``initial``, ``violates`` (names of
violated invariants, comma-separated; empty if none), ``depth`` (BFS level), ``fp``
(fingerprint, hex), ``state`` (the state as JSON text; a JSON object in the JSON
format). Edge attributes: ``action``, ``params`` (``b=1, c=2``), ``label``
(``Register(b=1)``, as every output labels a step:
:func:`~modelcheck.trace.render.action_label`), ``violates`` (violated action
properties). Attribute values are strings, booleans or integers so that every format
can hold them.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import networkx as nx
import numpy as np

from .codec import tla_text
from .config import CheckConfig
from .errors import ModelcheckError
from .explorer import Explorer
from .layout import Layout
from .result import Status, constants_out, json_value
from .spec import Spec
from .stategraph import GraphCollector, StateGraph
from .store import key_ints
from .trace.render import action_label

__all__ = ["GraphTooLarge", "state_graph", "build_graph", "state_label", "to_dot",
           "graph_bytes", "FORMATS"]

FORMATS = ("dot", "graphml", "json")

#: what ``modelcheck graph`` advises when a graph is too large
EXPORT_ADVICE = ("raise --max-states or use smaller constants. `modelcheck check` counts the "
                 "states of large models without building a graph.")


class GraphTooLarge(ModelcheckError):
    """More states are reachable than the graph may hold."""


def state_label(layout: Layout, cells: list[int]) -> str:
    """A compact state text, one variable per line: ``regEpoch=[1,0]``, ``fenced=[T,F]``."""
    lines = []
    for name, info in layout.vars.items():
        assert info.leaf is not None
        vals = [info.leaf.show(codes, short=True) for _, codes in layout.leaf_values(cells, name)]
        lines.append(f"{name}={vals[0]}" if not info.dims else f"{name}=[{','.join(vals)}]")
    return "\n".join(lines)


def state_graph(spec: Spec, max_states: int, *, labels: bool = True,
                advice: str = EXPORT_ADVICE,
                progress: Callable[[int], None] | None = None) -> StateGraph:
    """The reachable state graph of ``spec`` from one run of the explorer (see the
    module docstring): nodes in BFS order with their packed states
    (:attr:`~modelcheck.stategraph.StateGraph.words`), every transition between them an
    edge (those that do not change the state too), and with ``labels`` which
    invariants hold in each state (``preds``, by name) and which action properties on
    each transition (``steps``). Raises :class:`GraphTooLarge` (its message ending
    with ``advice``) past ``max_states`` states; ``progress`` is told the states stored
    so far now and then."""
    parts = [*spec.invariants, *spec.properties] if labels else []
    config = CheckConfig(invariants=(), check_deadlock=False, symmetry=False, view=False,
                         max_states=max_states)
    collector = GraphCollector(spec, parts, config.batch_size, background=False,
                               observer=True, words=True, stutter=True)
    tell = None if progress is None else (lambda p, told=progress: told(p.distinct))
    try:
        res = Explorer(spec, config, observer=collector, progress=tell).run()
        if res.status is Status.OK:
            return collector.graph()
        if res.reason == "interrupted":
            raise KeyboardInterrupt
        if res.reason == "max-states":
            # the run stored levels 0..depth; the next one passes the limit
            at = res.depth + 1 if res.distinct_states else 0
            raise GraphTooLarge(f"the state graph of {spec!r} has more than {max_states:,} "
                                f"reachable states (stopped at depth {at}); {advice}")
        raise GraphTooLarge(f"the state graph of {spec!r} was not built: "
                            f"{res.message or res.reason or res.status}")
    finally:
        collector.close()


def build_graph(spec: Spec, *, max_states: int = 10_000,
                progress: Callable[[int], None] | None = None) -> nx.MultiDiGraph:
    """The reachable state graph of ``spec`` (:func:`state_graph`) as a networkx
    multigraph keyed by fingerprint, with the attributes the module docstring lists.
    Raises :class:`GraphTooLarge` past ``max_states`` states."""
    sg = state_graph(spec, max_states, progress=progress)
    assert sg.words is not None and sg.levels is not None
    layout = spec.layout
    g = nx.MultiDiGraph()
    g.graph.update(spec=spec.name, constants=json.dumps(constants_out(spec.constants)),
                   variables=",".join(layout.vars))
    invariants = [p.name for p in spec.invariants]
    properties = [p.name for p in spec.properties]
    depth = np.repeat(np.arange(len(sg.levels) - 1), np.diff(sg.levels))
    fps = key_ints(sg.fps)
    for i, fp in enumerate(fps):
        cells = layout.unpack(sg.words[i])
        bad = [name for name in invariants if not sg.preds[name][i]]
        g.add_node(fp, label=state_label(layout, cells), initial=bool(sg.initial[i]),
                   violates=",".join(bad), depth=int(depth[i]), fp=f"{fp:#x}",
                   state=json.dumps(json_value(layout.values_from_cells(cells)),
                                    sort_keys=False))
    for e, (u, v, a) in enumerate(zip(sg.src.tolist(), sg.dst.tolist(), sg.act.tolist())):
        inst = spec.actions[a]
        params = ", ".join(f"{k}={tla_text(x)}" for k, x in inst.params)
        label = action_label(inst.name, dict(inst.params))
        props = [name for name in properties if not sg.steps[name][e]]
        g.add_edge(fps[u], fps[v], key=label, action=inst.name, params=params, label=label,
                   violates=",".join(props))
    return g


def _dot_id(text: str) -> str:
    """A DOT double-quoted string: backslash and quote escaped, newlines as ``\\n``."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    out = out.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{out}"'


def to_dot(g: nx.MultiDiGraph) -> str:
    """DOT text: initial states doubly outlined, violating states and edges in red."""
    name = str(g.graph.get("spec", "states"))
    lines = [f"digraph {_dot_id(name)} {{",
             '  graph [rankdir=TB, fontname="monospace"];',
             '  node [shape=box, fontname="monospace", fontsize=10];',
             '  edge [fontname="monospace", fontsize=9];']
    for n, a in g.nodes(data=True):
        attrs = [f"label={_dot_id(str(a.get('label', n)))}"]
        if a.get("initial"):
            attrs.append("peripheries=2")
        if a.get("violates"):
            attrs += ['color="red"', 'fontcolor="red"', f"tooltip={_dot_id(a['violates'])}"]
        lines.append(f"  {_dot_id(str(n))} [{', '.join(attrs)}];")
    for u, v, a in g.edges(data=True):
        attrs = [f"label={_dot_id(str(a.get('label', '')))}"]
        if a.get("violates"):
            attrs += ['color="red"', 'fontcolor="red"']
        lines.append(f"  {_dot_id(str(u))} -> {_dot_id(str(v))} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph_bytes(g: nx.MultiDiGraph, fmt: str) -> bytes:
    """The graph in ``fmt`` (dot, graphml or json) as file contents."""
    if fmt == "dot":
        return to_dot(g).encode("utf-8")
    if fmt == "graphml":
        h = nx.MultiDiGraph()
        h.graph.update(g.graph)
        # GraphML stores node ids as strings anyway; name them by fingerprint text.
        h.add_nodes_from((str(n), a) for n, a in g.nodes(data=True))
        h.add_edges_from((str(u), str(v), k, a) for u, v, k, a in g.edges(keys=True, data=True))
        buf = io.BytesIO()
        nx.write_graphml(h, buf, encoding="utf-8", prettyprint=True)
        return buf.getvalue()
    if fmt == "json":
        data = nx.node_link_data(g, edges="edges")
        for node in data["nodes"]:  # JSON can hold the state itself, not its text
            node["state"] = json.loads(node["state"])
        return (json.dumps(data, indent=1) + "\n").encode("utf-8")
    raise ValueError(f"unknown graph format {fmt!r}")
