"""The Chang-Roberts port (examples/tla/chang_roberts.py) against TLC 2.20 and an
independent breadth-first search written directly from ChangRoberts.tla: the
manifest's model (ids 1, 2, 3: each ``msgs[n]`` a bit vector) and the same ring with
ids 4096, 8192, 12288 (12,289 possible ids: member codes, chosen by ``SetOf`` from
the element count and ``max_size``), the same counts on both; liveness under the
fairness, and the broken variants."""

from __future__ import annotations

import itertools
import json

import pytest

from examples.tla.chang_roberts import (
    MCChangRoberts,
    MCChangRobertsBugStaysCand,
    MCChangRobertsBugUnfair,
    MCChangRobertsWideIds,
)
from modelcheck import check_liveness, explore
from modelcheck.types import BoundSparseSet

#: TLC 2.20 (-workers 1) on MCChangRoberts.cfg, and on the same model with
#: ``Id == [i \in 1..N |-> 4096 * i]``: distinct, generated (with the 8 initial
#: states), depth (TLC counts states)
TLC = (137, 227, 10)


def _bfs(ids: tuple[int, ...]) -> tuple[int, int, int]:
    """(distinct, generated with the initial states, depth in TLC's numbering) of
    ChangRoberts.tla's Spec, from its TLA+ alone: tuples of frozensets, no modelcheck."""
    n = len(ids)
    succ = {i: 0 if i == n - 1 else i + 1 for i in range(n)}
    inits = []
    for ini in itertools.product([False, True], repeat=n):
        inits.append(((frozenset(),) * n, ("n0",) * n, ini,
                      tuple("cand" if x else "lost" for x in ini)))
    depth = {s: 0 for s in inits}
    frontier, generated = list(inits), len(inits)
    while frontier:
        nxt = []
        for st in frontier:
            msgs, pc, ini, state = st
            outs = []
            for me in range(n):
                if pc[me] == "n0":
                    m = list(msgs)
                    if ini[me]:
                        m[succ[me]] = m[succ[me]] | {ids[me]}
                    outs.append((tuple(m), pc[:me] + ("n1",) + pc[me + 1:], ini, state))
                elif pc[me] == "n1":
                    for ident in msgs[me]:
                        m = list(msgs)
                        m[me] = m[me] - {ident}
                        s2 = list(state)
                        if state[me] == "lost" or ident < ids[me]:
                            m[succ[me]] = m[succ[me]] | {ident}
                            if state[me] != "lost":
                                s2[me] = "lost"
                        elif ident == ids[me]:
                            s2[me] = "won"
                        outs.append((tuple(m), pc, ini, tuple(s2)))
            for t in outs:
                generated += 1
                if t not in depth:
                    depth[t] = depth[st] + 1
                    nxt.append(t)
        frontier = nxt
    return len(depth), generated, max(depth.values()) + 1


@pytest.mark.parametrize("cls, ids", [(MCChangRoberts, (1, 2, 3)),
                                      (MCChangRobertsWideIds, (4096, 8192, 12288))])
def test_counts_equal_tlcs_and_an_independent_bfs_and_liveness_holds(cls, ids) -> None:
    assert tuple(cls().Id.values()) == ids
    assert _bfs(ids) == TLC
    r = check_liveness(cls())
    assert r.status == "ok" and r.liveness["properties"] == {"Liveness": "holds"}
    assert (r.distinct_states, r.generated_states + 8, r.depth + 1) == TLC


def test_each_model_stores_its_sets_in_the_form_of_fewer_bits() -> None:
    """Ids 0..3, at most 3 held: a bit vector of 4 bits (3 codes would take 9); ids
    0..12288: beyond the bit vector's 4,096, 3 codes of 14 bits."""
    small, wide = MCChangRoberts().layout, MCChangRobertsWideIds().layout
    assert not isinstance(small.vars["msgs"].leaf, BoundSparseSet)
    leaf = wide.vars["msgs"].leaf
    assert isinstance(leaf, BoundSparseSet) and leaf.max_size == 3
    assert leaf.elem.n_values == 12_289
    rows = {r["name"]: r for r in small.describe()}
    assert rows["msgs"]["sets"] == ["bit vector 12 bits"]
    rows = {r["name"]: r for r in wide.describe()}
    assert rows["msgs"]["sets"] == ["member codes 126 bits"]


def test_the_bugs() -> None:
    r = check_liveness(MCChangRobertsBugUnfair())
    assert r.status == "violation" and r.violation.property == "Liveness"
    r = explore(MCChangRobertsBugStaysCand())
    assert r.status == "violation" and r.violation.property == "Correctness"


def test_the_docstring_commands_say_what_happens(runner) -> None:
    import re
    import shlex

    import examples.tla.chang_roberts as mod
    from modelcheck.cli import cli

    lines = [m for m in (re.match(r"\s+modelcheck check (.+?)\s+#\s*(.+)$", line)
                         for line in mod.__doc__.splitlines()) if m]
    assert len(lines) == 4
    for m in lines:
        d = json.loads(runner.invoke(cli, ["check", *shlex.split(m.group(1)), "--format",
                                           "json", "-q"]).stdout)
        bad = re.search(r"violates (\w+)", m.group(2))
        if bad:
            assert d["status"] == "violation" and d["violation"]["property"] == bad.group(1)
        else:  # (the wide ids: "the same")
            assert d["status"] == "ok" and d["distinct_states"] == 137
            assert d["liveness"]["properties"]["Liveness"] == "holds"
