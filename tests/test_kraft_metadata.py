"""The KRaft metadata propagation spec: pinned counts, bug variants, the fold, liveness."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from bruteforce import assert_replays, brute_force
from hypothesis import given, settings
from hypothesis import strategies as st

import specs.kraft_metadata as module
from invariants import lookup
from invariants.metadata import RecKind, fold_log
from modelcheck import Explorer, check_liveness, explore
from modelcheck.cli import cli
from specs.kraft_metadata import (
    KRaftMetadata,
    KRaftMetadataBugAbortPublishesDelta,
    KRaftMetadataBugLoadUncommitted,
    KRaftMetadataBugNoAbortOnFailover,
    KRaftMetadataBugNoCatchUpGate,
    KRaftMetadataBugNoFlushOnBegin,
    KRaftMetadataBugPublishInsideTxn,
    KRaftMetadataBugReaderReReads,
    KRaftMetadataBugSnapshotNoRemovals,
    KRaftMetadataLiteralAbort,
    KRaftMetadataLive,
)

SPEC = "specs/kraft_metadata.py"
DEFAULT: dict[str, Any] = {}  # N=1, K=2, V=1, MaxLog=5, MaxFailovers=1, MaxCrashes=0
SMALL = dict(MaxLog=3)  # the brute-force oracle's configuration
AGREE = dict(N=2, MaxLog=4)  # two loaders: Agreement is not vacuous
AGREE_SMALL = dict(N=2, MaxLog=3, K=1)

SAFETY = {
    "AbortedNeverVisible", "PublishedIsCommittedPrefix", "CatchUpBeforePublish",
    "ImageMonotonic", "Agreement", "LoaderNeverFaults", "ReaderSeesOneImage",
}
TEMPORAL = {"EventuallyPublishes", "EventuallyCurrent", "DanglingTxnEventuallyAborted"}


def test_defaults_and_declarations() -> None:
    spec = KRaftMetadata()
    assert dict(spec.constants) == dict(N=1, K=2, V=1, MaxLog=5, MaxFailovers=1,
                                        MaxCrashes=0, GateCurrentHwm=True, FlushAtAbort=True)
    assert KRaftMetadata.symmetry == ("Brokers",) and not KRaftMetadata.check_deadlock
    assert {p.name for p in spec.invariants} | {p.name for p in spec.properties} == SAFETY
    for name in SAFETY:
        p = lookup(name)
        assert p is not None and p.name == name
    assert KRaftMetadataLive.symmetry == ()


@pytest.mark.parametrize(
    "consts, distinct, depth, full, never",
    [
        (DEFAULT, 263_553, 16, 263_553, {"Crash"}),
        (SMALL, 2_565, 10, 2_565, {"Crash"}),
        (dict(MaxCrashes=1), 527_106, 18, 527_106, set()),
        (dict(GateCurrentHwm=False), 507_158, 16, 507_158, {"Crash"}),
    ],
    ids=["default", "small", "crash", "learned-hwm-gate"],
)
def test_counts(consts: dict, distinct: int, depth: int, full: int, never: set[str]) -> None:
    spec = KRaftMetadata(**consts)
    r = explore(spec)
    assert r.status == "ok" and r.violation is None
    assert (r.distinct_states, r.depth) == (distinct, depth)
    assert set(r.checked["invariants"]) | set(r.checked["properties"]) == SAFETY
    assert {c.name for c in r.coverage if c.fired == 0} == never
    if consts.get("N", 1) > 1:
        assert explore(spec, symmetry=False).distinct_states == full


@pytest.mark.slow
def test_two_loaders_counts() -> None:
    spec = KRaftMetadata(**AGREE)
    r = explore(spec)
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == (837_463, 19)
    assert explore(spec, symmetry=False).distinct_states == 1_647_185


def test_small_counts_match_the_brute_force_oracle() -> None:
    """The naive BFS (values, no packing, no symmetry module) on the small config."""
    assert brute_force(KRaftMetadata(**SMALL)) == (2_565, 10)


@pytest.mark.slow
def test_two_loader_orbits_match_the_brute_force_oracle() -> None:
    spec = KRaftMetadata(**AGREE_SMALL)
    assert explore(spec).distinct_states == 12_189
    assert explore(spec, symmetry=False).distinct_states == 23_549
    assert brute_force(spec, spec.symmetry_sets()) == (12_189, 15)


# (variant, violated property, also violated, trace length, actions)
BUGS = [
    (KRaftMetadataBugNoCatchUpGate, "CatchUpBeforePublish", set(), 6,
     ["Write", "Commit", "Start", "LearnHwm", "LoadSnapshot"]),
    (KRaftMetadataBugPublishInsideTxn, "PublishedIsCommittedPrefix", set(), 8,
     ["Begin", "Start", "Commit", "LearnHwm", "Load[data]", "Load[begin]", "Flush"]),
    (KRaftMetadataBugAbortPublishesDelta, "AbortedNeverVisible",
     {"PublishedIsCommittedPrefix"}, 15,
     ["Begin", "Write", "Failover", "AbortDangling", "Start", "Commit", "Commit", "Commit",
      "LearnHwm", "Load[data]", "Load[begin]", "Load[data]", "Load[abort]", "Flush"]),
    (KRaftMetadataBugNoFlushOnBegin, "PublishedIsCommittedPrefix", set(), 15,
     ["Write", "Begin", "Failover", "AbortDangling", "Start", "Commit", "Commit", "Commit",
      "LearnHwm", "Load[data]", "Load[data]", "Load[begin]", "Load[abort]", "Flush"]),
    (KRaftMetadataBugNoAbortOnFailover, "LoaderNeverFaults", set(), 11,
     ["Begin", "Start", "Commit", "Failover", "Begin", "Commit", "LearnHwm", "Load[data]",
      "Load[begin]", "Load[begin]"]),
    (KRaftMetadataBugSnapshotNoRemovals, "PublishedIsCommittedPrefix", set(), 9,
     ["Write", "Write", "Start", "Commit", "Commit", "LearnHwm", "LoadSnapshot",
      "LoadSnapshot"]),
    (KRaftMetadataBugReaderReReads, "ReaderSeesOneImage", set(), 9,
     ["Write", "Write", "Start", "Commit", "Commit", "LearnHwm", "LoadSnapshot", "ReadKey"]),
    (KRaftMetadataBugLoadUncommitted, "PublishedIsCommittedPrefix", set(), 7,
     ["Write", "Start", "LearnHwm", "Load[data]", "Load[data]", "Flush"]),
    (KRaftMetadataLiteralAbort, "AbortedNeverVisible", {"PublishedIsCommittedPrefix"}, 18,
     ["Begin", "Write", "Failover", "AbortDangling", "Write", "Start", "Commit", "Commit",
      "Commit", "Commit", "LearnHwm", "Load[data]", "Load[begin]", "Load[data]",
      "Load[abort]", "Load[data]", "Flush"]),
]
IDS = [b[0].__name__.removeprefix("KRaftMetadata") for b in BUGS]


@pytest.mark.parametrize("cls, prop, also, length, actions", BUGS, ids=IDS)
def test_bug_variants(cls, prop, also, length, actions) -> None:
    spec = cls()
    r = explore(spec)
    assert r.status == "violation"
    v = r.violation
    assert (v.property, set(v.also_violated), len(v.trace)) == (prop, also, length)
    assert [s.action for s in v.trace[1:]] == actions
    assert_replays(spec, v.trace)


def test_every_variant_is_listed() -> None:
    variants = {c for _, c in inspect.getmembers(module, inspect.isclass)
                if issubclass(c, KRaftMetadata) and c is not KRaftMetadata
                and c.__module__ == module.__name__ and c is not KRaftMetadataLive}
    assert variants == {b[0] for b in BUGS}
    assert len([c for c in variants if "Bug" in c.__name__]) == 8


@pytest.mark.parametrize("cls, prop, also, length, actions", BUGS, ids=IDS)
def test_variants_fail_with_their_own_defaults(runner, cls, prop, also, length,
                                               actions) -> None:
    """``modelcheck check specs/kraft_metadata.py:<variant>``, no options."""
    r = runner.invoke(cli, ["check", f"{SPEC}:{cls.__name__}", "--format", "json", "-q"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert out["violation"]["property"] == prop
    assert out["violation"]["trace_length"] == length


def test_abort_publishes_the_aborted_write() -> None:
    """The last flush publishes the key the aborted transaction wrote."""
    v = explore(KRaftMetadataBugAbortPublishesDelta()).violation
    last = v.trace[-1].state
    assert last["cache"][1] == {1: 1, 2: 0} and last["cacheOff"][1] == 4
    assert [e["kind"] for e in last["log"]] == ["DATA", "BEGIN", "DATA", "ABORT"]


def test_both_gates_pass_and_differ() -> None:
    """The learned-high-water-mark gate (KIP-631) publishes below the current one; the
    current-high-water-mark gate (4.4) never does."""
    class Probe(KRaftMetadata):
        from modelcheck import action_property

        @action_property
        def FirstPublishAtCurrentHwm(self, s, t):
            from modelcheck import all_of, implies
            return all_of(self.Brokers, lambda b: implies(
                (s.cacheOff[b] == 0) & (t.cacheOff[b] > 0), t.cacheOff[b] >= s.hwm))

    assert Explorer(Probe(), invariants=["FirstPublishAtCurrentHwm"]).run().status == "ok"
    r = Explorer(Probe(GateCurrentHwm=False), invariants=["FirstPublishAtCurrentHwm"]).run()
    assert r.status == "violation"


def test_liveness_holds_and_needs_fair_flushes() -> None:
    r = check_liveness(KRaftMetadataLive())
    assert r.status == "ok" and r.distinct_states == 263_553
    assert r.liveness["properties"] == {n: "holds" for n in TEMPORAL}
    r = check_liveness(KRaftMetadataLive(GateCurrentHwm=False))
    assert r.liveness["properties"] == {n: "holds" for n in TEMPORAL}

    class NoFairFlush(KRaftMetadataLive):
        fairness = {k: v for k, v in KRaftMetadataLive.fairness.items() if k != "Flush"}

    v = check_liveness(NoFairFlush()).violation
    assert v.property == "EventuallyPublishes" and v.trace[-1].action == "Load[data]"


def _naive_fold(log: list[tuple[int, int, int]], keys: range) -> tuple[list, list]:
    """Images and open flags after every prefix, by replaying transactions directly."""
    images, opens = [], []
    for i in range(len(log) + 1):
        cur = {k: 0 for k in keys}
        txn: dict[int, int] | None = None
        for kind, key, val in log[:i]:
            if kind == RecKind.BEGIN:
                txn = {}
            elif kind == RecKind.END and txn is not None:
                cur.update(txn)
                txn = None
            elif kind == RecKind.ABORT and txn is not None:
                txn = None
            elif kind == RecKind.DATA and key in cur:
                (txn if txn is not None else cur)[key] = val
        images.append(cur)
        opens.append(txn is not None)
    return images, opens


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(RecKind)), st.integers(0, 2),
                          st.integers(0, 1)), max_size=5))
def test_fold_matches_a_direct_replay(log: list[tuple[int, int, int]]) -> None:
    spec = KRaftMetadata()
    q = spec.layout.vars["log"].btype.value_of(
        [{"kind": k, "key": key, "val": v} for k, key, v in log])
    f = fold_log(q, spec.Keys)
    images, opens = _naive_fold(log, spec.Keys)
    n = len(log)
    assert [dict(im) for im in f.images[:n + 1]] == images
    assert [bool(o) for o in f.open[:n + 1]] == opens
