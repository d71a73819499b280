"""One spec, two evaluators: the batch kernel agrees with the scalar evaluator.

For random reachable states (random walks from the initial state), the batch
evaluator must produce exactly the scalar evaluator's successors, with the same
action labels and fingerprints, the same invariant verdicts and the same
action-property verdicts.
"""

from __future__ import annotations

import numpy as np
from bruteforce import random_walk
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.two_phase_commit import TwoPhaseCommit
from modelcheck.kernel import Kernel
from modelcheck.store import key_ints
from specs.kraft_broker import KRaftBroker, KRaftBrokerBugEpochReuse

SPECS = [
    KRaftBroker(N=2, P=1, MaxLog=6, MaxRestarts=2),
    KRaftBroker(N=3, P=2, MaxLog=5, MaxRestarts=1),
    KRaftBrokerBugEpochReuse(N=3, P=1, MaxLog=5, MaxRestarts=2),
    TwoPhaseCommit(RMs=3),
]


@settings(max_examples=60, deadline=None)
@given(spec_index=st.integers(0, len(SPECS) - 1),
       walks=st.lists(st.lists(st.integers(0, 1000), max_size=40), min_size=1, max_size=6))
def test_batch_and_scalar_agree(spec_index: int, walks: list[list[int]]) -> None:
    spec = SPECS[spec_index]
    k = Kernel(spec, symmetry=False)
    layout = spec.layout
    states = [random_walk(k, w) for w in walks]
    words = np.stack([layout.pack(c) for c in states])
    ex = k.expand(words)
    for row, cells in enumerate(states):
        scalar = sorted((inst.id, k.fingerprint(nxt)) for inst, nxt in k.successors(cells))
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
                       for inst, nxt in k.successors(cells)
                       for p in k.check_properties(cells, nxt)}
        assert hits == scalar_hits
    # the packed words decode back to the same states
    for row, cells in enumerate(states):
        assert layout.unpack(words[row]) == list(cells)


def test_successor_fingerprints_are_incremental_and_exact() -> None:
    spec = SPECS[0]
    k = Kernel(spec)
    layout = spec.layout
    cells = random_walk(k, [3, 1, 4, 1, 5, 9, 2, 6])
    ex = k.expand(layout.pack(cells).reshape(1, -1))
    for w, f in zip(ex.child_words, key_ints(ex.child_fps)):
        # the incrementally updated words are exactly the packing of the successor
        succ = layout.unpack(w)
        assert key_ints(layout.fingerprints(layout.pack(succ).reshape(1, -1))) == [f]
