"""Helpers for the explorer's tests (and its screenshot script): a bug variant's run
folder, an explorer served on a free port, JSON requests, and the oracles.

The oracles share no code with the explorer's answers: which values changed between
two states is read off the differing cells of the layout (not the trace renderer's
``changes``), and the successors of a state come from the batch evaluator
(:meth:`Kernel.expand`, numpy columns) while the explorer uses the scalar one.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from click.testing import CliRunner

from modelcheck.cli import cli
from modelcheck.cli_trace import bind_recorded
from modelcheck.kernel import Kernel
from modelcheck.layout import Layout
from modelcheck.web import ExploreServer, ExploreSession
from modelcheck.web.runview import load_run

BUG = "specs/kraft_lifecycle.py:KRaftLifecycleBugFenceKeepsLeader"
LASSO = "examples/flip.py:FlipWeakSet"
SMALL = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"
SMALL_CONSTS = ("MaxLog=2",)


def cli_run(*args: str) -> Any:
    """``modelcheck ARGS`` in this process (click's runner): exit code and output."""
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def check_run(target: str, out: str) -> str:
    """``modelcheck check TARGET --out OUT``: a run folder with its counterexample."""
    r = cli_run("check", target, "-q", "--out", out)
    assert r.exit_code == 1, r.output
    assert os.path.exists(os.path.join(out, "trace.itf.json"))
    return out


def session_for(target: str, *, run: str | None = None, consts: tuple[str, ...] = (),
                **kw: Any) -> ExploreSession:
    """The explorer of ``target`` with the run folder ``run`` (and its trace)."""
    view = load_run(run) if run is not None else None
    trace = view.trace if view is not None else None
    spec = bind_recorded(target, trace.constants if trace else {}, consts)
    return ExploreSession(spec, target=target, trace=trace, trace_source=run, run=view, **kw)


@contextmanager
def served(session: ExploreSession) -> Iterator[str]:
    """The explorer served on a free loopback port, in a thread; yields its URL."""
    with ExploreServer(session, "127.0.0.1", 0) as server:
        yield server.url


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.load(r)


def post(url: str, body: Any, *, raw: bytes | None = None,
         ctype: str = "application/json") -> tuple[int, Any]:
    """POST ``body`` as JSON (or the bytes ``raw``): the status and the JSON answer."""
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def path_body(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A path as the page sends it, from steps as the server sends them."""
    return [{"action": s["action"], "params": s["params"], "cells": s["state"]["cells"]}
            for s in steps]


# ------------------------------------------------------------------ oracles
def changed_leaves(layout: Layout, old: list[int], new: list[int]) -> set[str]:
    """The array elements (or variables) whose value differs between two states, from
    their cells: ``bstate[1]``, ``logEnd``."""
    out = set()
    for c, a, b in zip(layout.cells, old, new):
        if a != b:
            dims = len(layout.vars[c.var].dims)
            out.add(c.var + "".join(f"[{p}]" for p in c.path[:dims]))
    return out


def batch_successors(kernel: Kernel, cells: list[int]) -> list[tuple[int, tuple[int, ...]]]:
    """``(action instance id, successor cells)`` of every enabled instance in one state,
    from the batch evaluator (constraints not applied), sorted."""
    layout = kernel.layout
    ex = kernel.expand(layout.pack(cells).reshape(1, -1), constrain=False)
    return sorted((int(a), tuple(layout.unpack(w))) for a, w in zip(ex.action_ids,
                                                                     ex.child_words))
