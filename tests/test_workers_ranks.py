"""Parents named by their rank in their level (``--workers N``'s level and candidate files).

The range tasks of ``--workers N`` and the levels expanded in the coordinating process
name a state's parent by its rank in the level before (the level's states, every
bucket's, in fingerprint order) instead of its fingerprint. These tests check the
parent every level file names, through :func:`modelcheck.shards.files.parent_of` (the
trace rebuild's step), against the parent rule computed independently from the
brute-force oracle's state graph (the smallest parent fingerprint in the level before,
then the smallest action); that ranks are found back by :func:`key_at_rank` as a merge
finds them; and that a run directory of the format before (parents by fingerprint,
manifest version 2) resumes to the uninterrupted result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from bruteforce import brute_force_check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ladder_spec import Ladder
from randspec import random_spec
from test_workers import _wide_ladder

from modelcheck import Explorer, Spec
from modelcheck.checkpoint import MANIFEST, VERSION
from modelcheck.shards import files
from modelcheck.shards.pool import ParallelExplorer
from modelcheck.store import key_int, key_ints, key_order, take_rows

ROOT = Path(__file__).resolve().parent.parent


def _levels(root: Path, buckets: int) -> list[list[tuple[np.ndarray, np.ndarray, str]]]:
    """Per level, per bucket: (fps, acts, how parents are named)."""
    out = []
    d = 0
    while files.level_dir(root, d).is_dir():
        lvl = files.level_dir(root, d)
        out.append([(np.load(lvl / f"b{b:04d}.fp.npy"), np.load(lvl / f"b{b:04d}.act.npy"),
                     files.parent_kind(lvl / f"b{b:04d}")) for b in range(buckets)])
        d += 1
    return out


def _check_parents(spec: Spec, root: Path, buckets: int) -> set[str]:
    """Every state's parent and action in the level files equal the parent rule on the
    oracle's graph; returns how the levels named their parents."""
    o = brute_force_check(spec, invariants=[], check_deadlock=False)
    layout = spec.layout

    def fp(cells: tuple[int, ...]) -> int:
        return key_int(layout.fingerprints(layout.pack(list(cells))[None, :]), 0)

    level = {fp(c): d for c, d in o.stored}
    want: dict[int, tuple[int, int]] = {}  # state -> (parent fp, action)
    for c, n, a in o.edges:
        p, s = fp(c), fp(n)
        if level[s] == level[p] + 1:
            want[s] = min(want.get(s, (p, a)), (p, a))
    cfg = SimpleNamespace(key_width=layout.key_width, buckets=buckets)
    kinds = set()
    levels = _levels(root, buckets)
    assert sum(len(f) for lv in levels for f, _, _ in lv) == o.distinct
    for d, parts in enumerate(levels):
        for fps, acts, kind in parts:
            if d == 0:
                continue
            kinds.add(kind)
            for s, a in zip(key_ints(fps), acts.tolist(), strict=True):
                assert level[s] == d
                got = files.parent_of(root, d, cfg, s)  # type: ignore[arg-type]
                assert (got, a) == want[s], f"level {d}: state {s:#x}"
    return kinds


@st.composite
def ladders(draw: st.DrawFn) -> Spec:
    """A ladder (several parents per state, up to 49 states a level) of one-, two- or
    three-word states."""
    words = draw(st.sampled_from([1, 1, 2, 3]))
    if words == 1:
        return Ladder(L=draw(st.integers(2, 8)), M=draw(st.integers(1, 6)))
    return _wide_ladder(words)()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(ladders(), random_spec().map(lambda c: c()),
                 random_spec(wide=True).map(lambda c: c())),
       st.integers(2, 3), st.integers(2, 4), st.sampled_from([0, 0, 10**9]))
def test_every_levels_parents_follow_the_parent_rule(spec: Spec, workers: int,
                                                     buckets: int, threshold: int) -> None:
    """The level files of ``--workers N`` (range tasks, or every level in the
    coordinating process) name, for every state, the parent and action the parent
    rule picks on the oracle's state graph."""
    with __import__("tempfile").TemporaryDirectory() as tmp:
        ck = Path(tmp) / "ck"
        r = ParallelExplorer(spec, workers=workers, buckets=buckets,
                             driver_threshold=threshold, checkpoint_dir=str(ck),
                             check_deadlock=False, invariants=[]).run()
        assert r.status == "ok"
        kinds = _check_parents(spec, ck / "shards", buckets)
        assert kinds <= {"rank"}


def test_ladder_levels_are_ranked_and_rebuild_the_trace(tmp_path: Path) -> None:
    """A run whose levels are expanded by range: its level files hold uint32 ranks (no
    parent fingerprints) and its counterexample is the one-process one."""
    spec = Ladder(L=12, M=5)
    ck = tmp_path / "ck"
    r = ParallelExplorer(spec, workers=2, buckets=3, driver_threshold=0,
                         checkpoint_dir=str(ck)).run()
    one = Explorer(spec).run()
    assert r.status == one.status == "violation"
    assert r.to_json()["violation"] == one.to_json()["violation"]
    shards = ck / "shards"
    for d in range(1, 13):
        for b in range(3):
            lvl = files.level_dir(shards, d)
            assert not (lvl / f"b{b:04d}.parent.npy").exists()
            assert np.load(lvl / f"b{b:04d}.rank.npy").dtype == np.uint32
    assert json.loads((ck / MANIFEST).read_text())["version"] == VERSION


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 2), st.data())
def test_key_at_rank_is_the_merge(runs: int, width: int, data: Any) -> None:
    """The key of every rank in disjoint sorted runs is the merged runs' row."""
    n = data.draw(st.integers(0, 60))
    ints = data.draw(st.lists(st.integers(0, (1 << (64 * width)) - 1), min_size=n,
                              max_size=n, unique=True))
    owner = data.draw(st.lists(st.integers(0, runs - 1), min_size=n, max_size=n))
    cols = [[k for k, o in zip(ints, owner, strict=True) if o == r] for r in range(runs)]

    def keys(v: list[int]) -> np.ndarray:
        if width == 1:
            return np.array(v, dtype=np.uint64)
        return np.array([[k >> 64, k & ((1 << 64) - 1)] for k in v],
                        dtype=np.uint64).reshape(-1, 2)

    arrays = []
    for c in cols:
        a = keys(c)
        arrays.append(take_rows(a, key_order(a)))
    merged = sorted(ints)
    for rank, k in enumerate(merged):
        assert files.key_at_rank(arrays, rank) == k
    with pytest.raises(RuntimeError):
        files.key_at_rank(arrays, len(merged))


def test_narrow_ranks() -> None:
    rows = np.array([0, 5, 7], dtype=np.int64)
    got = files.narrow_ranks(rows, 10)
    assert got.dtype == np.uint32 and got.tolist() == [10, 15, 17]
    big = files.narrow_ranks(rows, (1 << 32) - 7)
    assert big.dtype == np.int64 and big.tolist() == [(1 << 32) - 7, (1 << 32) - 2, 1 << 32]
    assert files.narrow_ranks(np.zeros(0, np.int64), 1 << 40).dtype == np.uint32


def test_a_run_directory_of_the_former_format_resumes(tmp_path: Path) -> None:
    """A ``--workers 2`` checkpoint of manifest version 2 (parents by fingerprint; made by
    the code before ranks: ``ParallelExplorer(Ladder(L=10, M=4), workers=2,
    driver_threshold=0, max_depth=4)``) resumes to the uninterrupted result, its
    counterexample rebuilt through levels of both formats."""
    ck = tmp_path / "old"
    shutil.copytree(ROOT / "tests" / "legacy_runs" / "workers_v2", ck)
    assert json.loads((ck / MANIFEST).read_text())["version"] == 2
    assert not list((ck / "shards").glob("L*/*.rank.npy"))
    spec = Ladder(L=10, M=4)
    r = ParallelExplorer(spec, workers=2, driver_threshold=0, checkpoint_dir=str(ck),
                         resume=True).run()
    one = Explorer(spec).run()
    a, b = one.to_json(), r.to_json()
    for key in ("status", "distinct_states", "generated_states", "depth", "violation",
                "coverage"):
        assert b[key] == a[key], key
    shards = ck / "shards"
    kinds = {files.parent_kind(p.with_name(p.name.split(".")[0]))
             for p in shards.glob("L*/b*.fp.npy")}
    assert kinds == {"parent", "rank"}
    assert json.loads((ck / MANIFEST).read_text())["version"] == VERSION
