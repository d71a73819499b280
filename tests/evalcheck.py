"""The batch evaluator against the scalar evaluator, on given states (shared by the
evaluator tests): the same successors with the same action ids and fingerprints, the
same invariant and action-property verdicts."""

from __future__ import annotations

import numpy as np

from modelcheck.kernel import Kernel
from modelcheck.store import key_ints

__all__ = ["assert_batch_matches_scalar"]


def assert_batch_matches_scalar(k: Kernel, states: list[list[int]]) -> None:
    layout = k.layout
    words = np.stack([layout.pack(c) for c in states])
    ex = k.expand(words)
    for row, cells in enumerate(states):
        succ = k.successors(cells)
        scalar = sorted((inst.id, k.fingerprint(nxt)) for inst, nxt in succ)
        mine = ex.parent_rows == row
        batch = sorted(zip(ex.action_ids[mine].tolist(), key_ints(ex.child_fps[mine])))
        assert batch == scalar
        bad_scalar = {p.name for p in k.check_invariants(cells)}
        bad_batch = {k.invariants[j].name for j, rows in enumerate(ex.invariant_rows)
                     if row in rows}
        assert bad_batch == bad_scalar
        hits = set()
        for j, (rows, acts, fps) in enumerate(ex.property_hits):
            hits |= {(k.properties[j].name, int(a), f)
                     for r, a, f in zip(rows, acts, key_ints(fps)) if r == row}
        scalar_hits = {(p.name, inst.id, k.fingerprint(nxt))
                       for inst, nxt in succ for p in k.check_properties(cells, nxt)}
        assert hits == scalar_hits
