"""The sizes of the explorer's stored data, deterministic (not RSS): the visited set of
n keys holds 8 bytes a key and column plus a bounded slack, and the levels a 4-byte
parent index and a 2-byte action a state plus the keys of the levels that keep them.
The oracle is the count of distinct states the run reports."""

from __future__ import annotations

import numpy as np
import pytest

from examples.tla.two_phase import TwoPhase
from modelcheck import Explorer
from modelcheck.memtune import MMAP_THRESHOLD
from modelcheck.store import FingerprintSet

#: rows of spare capacity a column may keep: what the heap's quarter-more growth can
#: leave below the mapped sizes
SLACK_ROWS = MMAP_THRESHOLD // 8 // 4 + 1024


@pytest.mark.parametrize("width", [1, 2])
def test_visited_set_holds_eight_bytes_a_key_and_column(width: int) -> None:
    """Below the mapped sizes a column keeps at most a quarter more rows; from them on
    (growth by remapping) exactly the keys it holds."""
    rng = np.random.default_rng(7)
    s = FingerprintSet(width)
    seen = np.zeros((0, width), dtype=np.uint64)
    for m in [1000, 50_000, 300_000, 400_000, 150_000]:
        keys = rng.integers(0, 2**63, size=(m, width), dtype=np.int64).astype(np.uint64)
        keys[: m // 10] = keys[m // 10: 2 * (m // 10)]  # some repeats
        union = np.unique(np.concatenate([seen, keys]), axis=0)
        v = f"V{8 * width}"
        new = union[~np.isin(union.view(v).ravel(), seen.view(v).ravel())]
        new = new.reshape(-1, width)
        seen = union
        s.add_sorted(new[:, 0] if width == 1 else new)
        assert len(s) == len(seen)
        assert s.nbytes <= 8 * width * (len(seen) + SLACK_ROWS)
        if 8 * len(seen) >= MMAP_THRESHOLD:
            assert s.nbytes == 8 * width * len(seen)
    assert 8 * len(seen) >= MMAP_THRESHOLD  # the last sizes were mapped ones


@pytest.mark.parametrize("pad", [0, 40])
def test_explorer_stores_each_key_once(pad: int) -> None:
    """The visited set holds every key; a level keeps its own keys only until it has
    been expanded (level 0, where every path starts, keeps them): the levels hold a
    4-byte parent index and a 2-byte action instance a state (initial states none),
    plus the keys of levels 0 and the last one (every level kept its keys before,
    besides the visited set's)."""
    from benchmarks.wide_states import padded

    spec = TwoPhase(N=6) if pad == 0 else padded(pad, False)(N=6)
    r = Explorer(spec).run()
    width = 1 if pad == 0 else 2
    n = r.distinct_states
    assert r.state_bits > 64 * (width - 1)
    first, last = r.levels[0].frontier, r.levels[-1].frontier
    # initial states have no action (nor a parent: NO_PARENT)
    assert r.memory["levels_bytes"] == n * (4 + 2) - 2 * first + 8 * width * (first + last)
    assert r.memory["visited_bytes"] <= 8 * width * (n + SLACK_ROWS)


@pytest.mark.parametrize("pad", [0, 60])
def test_batches_are_sized_by_their_successor_rows(monkeypatch, pad: int) -> None:
    """A batch's states are chosen so that its successors stay within the explorer's
    successor rows (``BATCH_SUCCESSORS`` over the key's width in words: a two-word key's
    de-duplication takes more bytes a row), not a fixed number of states: every kernel
    expansion of the run yields at most that many successors, and the counts are the
    brute-force oracle's (and those of one batch a level)."""
    from benchmarks.wide_states import padded
    from modelcheck import explorer
    from modelcheck.kernel import Kernel
    from tests.bruteforce import brute_force

    spec = TwoPhase(N=4) if pad == 0 else padded(pad, False)(N=4)
    width = 1 if pad == 0 else 2
    whole = Explorer(spec, batch_size=1 << 20).run()
    cap = 200 * width  # a batch of as many states as the one-word run's
    monkeypatch.setattr(explorer, "BATCH_SUCCESSORS", cap, raising=False)
    rows: list[int] = []
    real = Kernel.expand
    inner = [0]

    def spy(self: Kernel, words: np.ndarray, **kw: object) -> object:
        inner[0] += 1  # a one-state batch is expanded as two copies of it, inside
        try:
            ex = real(self, words, **kw)  # type: ignore[arg-type]
        finally:
            inner[0] -= 1
        if not inner[0]:
            rows.append(len(ex.child_fps))
        return ex

    monkeypatch.setattr(Kernel, "expand", spy)
    r = Explorer(spec).run()
    assert r.state_bits > 64 * (width - 1)
    assert max(rows) <= cap // width < max(lv.generated for lv in whole.levels)
    assert len(rows) > 2 * r.depth  # several batches a level
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert (r.distinct_states, r.depth, r.generated_states) == \
        (whole.distinct_states, whole.depth, whole.generated_states)


@pytest.mark.parametrize("pad", [0, 40])
def test_a_batch_holds_its_successors_once(pad: int) -> None:
    """A kernel batch's successors are never held twice over (its lists of per-action
    results are let go as they are concatenated: peak at most twice what it returns,
    beside the batch's own per-state temporaries, its keys and decoded cells, a few
    times its words), and expanded ``keys_only`` for exact keys it returns no words
    (they are the keys). Exact keys are stepped from the parents' (``Kernel.linear``):
    no action copies words, and the successors' words are made from their keys when
    asked, so a batch holds and peaks the same either way. Measured with
    ``tracemalloc``, which counts numpy's allocations exactly."""
    import tracemalloc

    from benchmarks.wide_states import padded

    spec = TwoPhase(N=6) if pad == 0 else padded(pad, False)(N=6)
    got: dict[str, np.ndarray] = {}

    def on_level(depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        if depth == 7:
            got["words"] = words.copy()

    ex = Explorer(spec, on_level=on_level, max_depth=7)
    ex.run()
    k = ex.kernel
    assert k.exact
    peaks, held, out = [], [], []
    for keys_only in (False, True):
        tracemalloc.start()
        try:
            e = k.expand(got["words"], keys_only=keys_only)
            cur, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        peaks.append(peak)
        held.append(cur)
        out.append(e)
    full, keys = out
    m = len(full.child_fps)
    assert m > 10 * len(got["words"]) // 2
    assert k.linear
    assert peaks[0] <= 2 * held[0] + 4 * got["words"].nbytes
    assert len(keys.child_words) == 0
    assert np.array_equal(spec.layout.words_of_keys(keys.child_fps), full.child_words)
    for a in ("child_fps", "parent_rows", "action_ids", "fired"):
        assert np.array_equal(getattr(keys, a), getattr(full, a))
    assert held[1] <= held[0] + 1024 and peaks[1] <= peaks[0] + 1024


@pytest.mark.parametrize("pad", [0, 60])
def test_a_batch_holds_twelve_bytes_a_successor_besides_its_keys(monkeypatch,
                                                                  pad: int) -> None:
    """Until a kernel batch concatenates its per-action results, it holds them all (from
    the heap, whose freed pages stay resident: they set the explorer's peak RSS): a
    successor's key, its parent row in ``int32`` and nothing per successor for its
    action id (one number per action instance, expanded once concatenated); the old
    pieces took 8 bytes a parent row and 4 an action id, 20 bytes a one-word successor.
    The transitions are those of one state at a time
    (:meth:`~modelcheck.kernel.Kernel.successors`)."""
    from benchmarks.wide_states import padded
    from modelcheck.kernel import _Accumulator
    from modelcheck.store import key_int

    spec = TwoPhase(N=5) if pad == 0 else padded(pad, False)(N=5)
    got: dict[str, np.ndarray] = {}

    def on_level(depth: int, fps: np.ndarray, words: np.ndarray) -> None:
        if depth == 6:
            got["words"] = words.copy()

    ex = Explorer(spec, on_level=on_level, max_depth=6)
    ex.run()
    k = ex.kernel
    width = 1 if pad == 0 else 2
    assert k.key_width == width
    held = [0]
    real = _Accumulator.add

    def spy(self: _Accumulator, *args: object, **kw: object) -> None:
        real(self, *args, **kw)  # type: ignore[arg-type]
        for parts in (self.words, self.fps, self.parents, self.action_ids):
            if parts:
                held[0] += getattr(parts[-1], "nbytes", 0)

    monkeypatch.setattr(_Accumulator, "add", spy)
    e = k.expand(got["words"], keys_only=True)
    m = len(e.child_fps)
    assert m > 4 * len(got["words"])
    assert e.parent_rows.dtype == np.int32 and e.action_ids.dtype == np.int32
    assert held[0] == (8 * width + 4) * m
    want = sorted((r, inst.id, k.fingerprint(nxt))
                  for r, w in enumerate(got["words"])
                  for inst, nxt in k.successors(spec.layout.unpack(w)))
    assert sorted((int(r), int(a), key_int(e.child_fps, i))
                  for i, (r, a) in enumerate(zip(e.parent_rows, e.action_ids))) == want
