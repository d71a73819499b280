"""Paths through levels that let their keys go.

A level keeps its keys only until it has been expanded (the visited set holds the same
keys); a counterexample's path through such levels is rebuilt by replaying the spec
from the initial state along each state's recorded action instance
(:func:`modelcheck.explorer.replay_keys`). Oracles: the same run with its levels spilled
to disk, which keep their keys (the path is then read from the keys and the replay is
never asked), and the brute-force BFS's shortest trace. One, two and four words of
state (exact one- and two-word keys, 128-bit hashes past that), with and without
symmetry, under a view, and resumed from a checkpoint (whose levels carry keys, not
actions: a path then mixes both)."""

from __future__ import annotations

from typing import Any

import pytest
from bruteforce import brute_force_check

from examples.tla.two_phase import RMState, TwoPhase
from modelcheck import Int, Result, any_of, explore, invariant
from modelcheck import explorer as explorer_module


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
def replays(monkeypatch) -> list[int]:
    """How many paths the explorer replayed (the spy's record)."""
    calls: list[int] = []
    real = getattr(explorer_module, "replay_keys", None)

    def spy(kernel, levels, rows):  # type: ignore[no-untyped-def]
        calls.append(len(rows))
        assert real is not None
        return real(kernel, levels, rows)

    monkeypatch.setattr(explorer_module, "replay_keys", spy, raising=False)
    return calls


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
    assert replays == [r.depth + 1]  # the path through the levels, replayed
    spilled = _check(spec, symmetry=symmetry, spill_dir=str(tmp_path))
    assert replays == [r.depth + 1]  # spilled levels keep their keys: no replay
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
    assert replays == [want.depth + 1]
    assert resumed.violation == want.violation
    assert (resumed.distinct_states, resumed.depth) == (want.distinct_states, want.depth)
