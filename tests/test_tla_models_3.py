"""Ports of tlaplus/Examples models (third batch): pinned counts from the repository's
manifests, invariants, broken variants with counterexamples and, where the model's
cfg checks temporal properties that modelcheck supports, liveness.

Each model's docstring names its source files and how its counts compare with TLC's
(TLC's depth counts states, ours steps: TLC's ``stateDepth`` is ours + 1).
"""

from __future__ import annotations

from examples.tla.tcp import MCtcp, MCtcpBugNoAck
from modelcheck import explore

# -- tcp: MCtcp ---------------------------------------------------------------------


def test_tcp_mctcp_matches_the_manifest() -> None:
    r = explore(MCtcp())
    assert r.status == "ok"
    # manifest: distinctStates 1182, totalStates 6322 (with the 2 initial states),
    # stateDepth 14
    assert (r.distinct_states, r.generated_states + 2, r.depth + 1) == (1182, 6322, 14)


def test_tcp_capacity_is_large_enough() -> None:
    assert explore(MCtcp(Cap=6)).distinct_states == 1182


def test_tcp_bug_breaks_inv() -> None:
    r = explore(MCtcpBugNoAck())
    assert r.status == "violation" and r.violation.property == "Inv"
    assert [st.action for st in r.violation.trace] == [None, "Listen", "SynSent[synack]"]
