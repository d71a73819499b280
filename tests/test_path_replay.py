"""Paths through levels that let their keys go.

A level keeps its keys only until it has been expanded (the visited set holds the same
keys); a counterexample's path through such levels is rebuilt by replaying the spec
from the initial state along each state's recorded action instance, once: the trace's
rebuild (:func:`modelcheck.level.rebuild_trace`) takes each step's fingerprint from the
successors it evaluates anyway (under symmetry, from the one successor of the state's
canonical form). Oracles: the same run with its levels spilled to disk, which keep
their keys (the path is then read from the keys), and the brute-force BFS's shortest
trace; a spy counts the kernel's evaluations while the counterexample is rebuilt. One,
two and four words of state (exact one- and two-word keys, 128-bit hashes past that),
with and without symmetry, under a view, and resumed from a checkpoint (whose levels
carry keys, not actions: a path then mixes both)."""

from __future__ import annotations

from typing import Any

import pytest
from bruteforce import brute_force_check

from examples.tla.two_phase import RMState, TwoPhase
from modelcheck import Array, Ids, Int, Result, Spec, action, any_of, explore, invariant
from modelcheck import explorer as explorer_module
from modelcheck.kernel import Kernel


class AllCommit(TwoPhase):
    """TwoPhase with an invariant that fails once every RM has committed (depth
    ``3 N + 1``: every level on the way is expanded before it is found)."""

    @invariant
    def NotAllCommitted(self, s):
        return any_of(self.RM, lambda r: s.rmState[r] != RMState.committed)


class AllCommitView(AllCommit):
    """The same under a view of TwoPhase's own variables (padded below: the padding is
    left out of the view, so the keys are the view's, not the state's words)."""

    view = ("rmState", "tmState", "tmPrepared", "msgs")


def _padded(bits: int, base: type = AllCommit) -> type:
    pads: dict[str, Any] = {f"pad{i}": Int(0, 2 ** min(60, bits - 60 * i) - 1)
                            for i in range((bits + 59) // 60)}
    return type(f"{base.__name__}Pad{bits}", (base,), pads)


SPECS = {"one word": AllCommit, "two words": _padded(60), "wide, hashed": _padded(130),
         "view": _padded(60, AllCommitView), "view, wide": _padded(130, AllCommitView)}


@pytest.fixture
def replays(monkeypatch) -> list[tuple[str, int]]:
    """The kernel's evaluations while a counterexample is rebuilt (the spy's record):
    ``("successors", 1)`` for a state's successors, ``("step", 1)`` for one action
    instance, ``("expand", n)`` for a batch of ``n`` states."""
    calls: list[tuple[str, int]] = []
    rebuilding = [False]
    real_report = explorer_module.report

    def report(*args: Any, **kw: Any) -> Any:
        rebuilding[0] = True
        try:
            return real_report(*args, **kw)
        finally:
            rebuilding[0] = False

    inside = [0]  # (successors calls step: the outermost call counts)

    def spy(name: str, real: Any) -> Any:
        def counted(self, first, *args: Any, **kw: Any):  # type: ignore[no-untyped-def]
            if rebuilding[0] and not inside[0]:
                calls.append((name, len(first) if name == "expand" else 1))
            inside[0] += 1
            try:
                return real(self, first, *args, **kw)
            finally:
                inside[0] -= 1
        return counted

    monkeypatch.setattr(explorer_module, "report", report)
    for name in ("successors", "step", "expand"):
        monkeypatch.setattr(Kernel, name, spy(name, getattr(Kernel, name)))
    return calls


def _evaluations(calls: list[tuple[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, n in calls:
        out[name] = out.get(name, 0) + n
    return out


def _check(spec: Any, **opts: Any) -> Result:
    return explore(spec, invariants=["NotAllCommitted"], **opts)


@pytest.mark.parametrize("symmetry", [True, False])
@pytest.mark.parametrize("name", list(SPECS))
def test_a_replayed_path_is_the_stored_one(name: str, symmetry: bool, replays: list[int],
                                           tmp_path) -> None:
    spec = SPECS[name](N=3)
    if spec.view is not None and symmetry:
        pytest.skip("symmetry with a view is refused")
    r = _check(spec, symmetry=symmetry)
    assert r.status == "violation" and r.violation.property == "NotAllCommitted"
    # the path through the levels, replayed once: every state's successors evaluated
    # once (the trace's last state is the violation's: none), under symmetry one more
    # action instance a step (of the state's canonical form, where it is another)
    steps = len(r.violation.trace) - 1
    got = _evaluations(replays)
    assert got.get("expand", 0) == 0 and got["successors"] == steps
    assert got.get("step", 0) <= (steps if symmetry else 0)
    replays.clear()
    spilled = _check(spec, symmetry=symmetry, spill_dir=str(tmp_path))
    assert _evaluations(replays) == {"successors": steps}  # keys kept: read, not replayed
    assert r.violation == spilled.violation
    assert (r.distinct_states, r.depth) == (spilled.distinct_states, spilled.depth)
    if not symmetry and spec.view is None:
        o = brute_force_check(spec, invariants=["NotAllCommitted"])
        assert len(r.violation.trace) == len(o.trace) == 3 * 3 + 2


@pytest.mark.parametrize("older", [False, True])
@pytest.mark.parametrize("name", ["one word", "two words", "wide, hashed", "view"])
def test_a_resumed_run_replays_through_levels_read_from_its_checkpoint(
        name: str, older: bool, replays: list[int], tmp_path) -> None:
    """``older``: the checkpoint's levels 1 and 2 record no actions (as one written
    before actions were recorded): they keep their keys, and the replay through them
    takes the successor with the level's key."""
    import json

    from modelcheck.checkpoint import MANIFEST

    spec = SPECS[name](N=3)
    want = _check(spec)
    first = _check(spec, max_depth=4, checkpoint_dir=str(tmp_path))
    assert first.status == "incomplete"
    if older:
        manifest = json.loads((tmp_path / MANIFEST).read_text())
        for lv in manifest["levels"][1:3]:
            del lv["acts_crc32"]
        (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    replays.clear()
    resumed = _check(spec, checkpoint_dir=str(tmp_path), resume=True)
    assert _evaluations(replays) == {"successors": len(want.violation.trace) - 1}
    assert resumed.violation == want.violation
    assert (resumed.distinct_states, resumed.depth) == (want.distinct_states, want.depth)


class SymmetricCounters(Spec):
    """Three symmetric counters and a step count: the trace's states are not the stored
    canonical ones (``Inc(p=1)`` first, where the stored form raised another counter),
    so each key-less step evaluates the recorded instance on the canonical form."""

    Procs = Ids(1, 3)
    symmetry = ("Procs",)
    x = Array(Procs, Int(0, 3))
    y = Int(0, 9)

    def init_states(self):
        yield {"x": {i: 0 for i in range(1, 4)}, "y": 0}

    @action(p=Procs)
    def Inc(self, s, t, p):
        g = s.x[p] < 3
        t.x[p] = s.x[p] + 1
        t.y = s.y + 1
        return g

    @invariant
    def Small(self, s):
        return s.y < 6


def test_a_path_off_the_canonical_forms_is_replayed_once(replays: list[tuple[str, int]],
                                                          tmp_path) -> None:
    r = explore(SymmetricCounters(), symmetry=True)
    assert r.status == "violation" and r.violation.property == "Small"
    steps = len(r.violation.trace) - 1
    got = _evaluations(replays)
    assert got.get("expand", 0) == 0 and got["successors"] == steps
    assert 0 < got["step"] < steps  # the canonical form's one successor, where it differs
    spilled = explore(SymmetricCounters(), symmetry=True, spill_dir=str(tmp_path))
    assert r.violation == spilled.violation
    assert [s.params for s in r.violation.trace[1:]] == [{"p": p} for p in (1, 2, 3) * 2]
