"""The reachable state graph of a small model, as a networkx graph and as files.

This module owns ``modelcheck graph``: :func:`build_graph` explores breadth-first
with the scalar evaluator (:meth:`Kernel.successors`), keys nodes by fingerprint
and stops with :class:`GraphTooLarge` as soon as more than ``max_states`` states
are reached (it never holds more than that). :func:`write_graph` writes DOT (our
own small writer with correct quoting, no pydot/pygraphviz needed), GraphML
(``networkx.write_graphml``) or JSON (``networkx.node_link_data``).

Node attributes: ``label`` (the state, one variable per line), ``initial``,
``violates`` (names of violated invariants, comma-separated; empty if none),
``depth`` (BFS level), ``fp`` (fingerprint, hex), ``state`` (the state as JSON
text; a JSON object in the JSON format). Edge attributes: ``action``, ``params``
(``b=1, c=2``), ``label`` (``Register(b=1)``, as every output labels a step:
:func:`~modelcheck.trace.render.action_label`), ``violates`` (violated action
properties). A node outside the state constraints, or reached only by transitions
that violate an action constraint, is drawn but not expanded and has
``constrained``; such a transition has ``constrained`` too (dashed in DOT).
Attribute values are strings, booleans or integers so that every format can hold
them.
"""

from __future__ import annotations

import io
import json
from collections import deque
from collections.abc import Callable

import networkx as nx

from .codec import tla_text
from .errors import ModelcheckError
from .kernel import Kernel
from .layout import Layout
from .result import constants_out, json_value
from .spec import Spec
from .trace.render import action_label

__all__ = ["GraphTooLarge", "build_graph", "state_label", "to_dot", "graph_bytes",
           "FORMATS"]

FORMATS = ("dot", "graphml", "json")


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


def build_graph(spec: Spec, *, max_states: int = 10_000,
                progress: Callable[[int], None] | None = None) -> nx.MultiDiGraph:
    """The reachable state graph of ``spec`` (a multigraph: two actions may link the
    same states). Raises :class:`GraphTooLarge` past ``max_states`` states."""
    kernel = Kernel(spec, symmetry=False, view=False)
    layout = spec.layout
    g = nx.MultiDiGraph()
    g.graph.update(spec=spec.name, constants=json.dumps(constants_out(spec.constants)),
                   variables=",".join(layout.vars))
    queue: deque[tuple[int, list[int], int]] = deque()
    queued: set[int] = set()  # reached by a transition of the model (or initial)

    def add(cells: list[int], depth: int, initial: bool, in_model: bool = True) -> int:
        fp = kernel.fingerprint(cells)
        if fp in g:
            if in_model and fp not in queued:  # reached before only outside the model
                queued.add(fp)
                g.nodes[fp]["depth"] = depth
                queue.append((fp, cells, depth))
            return fp
        if g.number_of_nodes() >= max_states:
            raise GraphTooLarge(
                f"the state graph of {spec!r} has more than {max_states:,} reachable states "
                f"(stopped at depth {depth}); raise --max-states or use smaller constants. "
                "`modelcheck check` counts the states of large models without building a graph."
            )
        bad = [p.name for p in kernel.check_invariants(cells)]
        g.add_node(fp, label=state_label(layout, cells), initial=initial, violates=",".join(bad),
                   depth=depth, fp=f"{fp:#x}",
                   state=json.dumps(json_value(layout.values_from_cells(cells)), sort_keys=False))
        if in_model:
            queued.add(fp)
            queue.append((fp, cells, depth))
        if progress is not None:
            progress(g.number_of_nodes())
        return fp

    for cells in kernel.initial_states():
        add(list(cells), 0, True)
    while queue:
        fp, cells, depth = queue.popleft()
        if not kernel.satisfies_constraints(cells):
            g.nodes[fp]["constrained"] = True
            continue
        for inst, nxt in kernel.successors(cells):
            allowed = kernel.satisfies_action_constraints(cells, nxt)
            nfp = add(nxt, depth + 1, False, allowed)
            props = [p.name for p in kernel.check_properties(cells, nxt)]
            params = ", ".join(f"{k}={tla_text(v)}" for k, v in inst.params)
            label = action_label(inst.name, dict(inst.params))
            g.add_edge(fp, nfp, key=label, action=inst.name, params=params, label=label,
                       violates=",".join(props), **({} if allowed else {"constrained": True}))
    for fp in g:
        if fp not in queued:
            g.nodes[fp]["constrained"] = True
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
        if a.get("constrained"):
            attrs.append("style=dashed")
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
