"""Keys under a view (TLA+'s ``VIEW``) are sized by the view, not by the state.

A state of two words whose view packs into one word is keyed by one ``uint64`` column;
a state of three words or more (hashed without a view) whose view packs into two words
or fewer is keyed exactly, with no collision probability in the result. The counts,
depth and verdicts stay those of :func:`bruteforce.brute_force_view` (views compared as
cell tuples, no packing), one process and ``--workers 2``; the key width expected is
computed from the view's cell sizes (a mixed-radix word holds cells whose sizes
multiply to at most 2**64), not read back from the layout.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from bruteforce import brute_force_view
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_random_specs import _assert_agrees
from test_view_oracle import view_spec

from modelcheck import Explorer, Int, Spec, action, explore, where
from modelcheck.checkpoint import MANIFEST, CheckpointError
from modelcheck.kernel import Kernel
from modelcheck.shards.pool import ParallelExplorer

BIG = 2**62


def _view_product(spec: Spec) -> int:
    """The number of values the view can take (its cells' sizes multiplied)."""
    return math.prod(c.size for c in spec.layout.cells if c.var in spec.view)


class TwoWordsOneWordView(Spec):
    """Two words of state (``big`` alone needs 62 bits), a view of 3 bits: ``big``
    toggles while ``x`` counts, so every view has two states."""

    check_deadlock = False
    view = ("x",)
    x = Int(0, 5)
    big = Int(0, BIG)
    c = Int(0, 2**10)

    @action
    def Step(self, s, t):
        t.x = s.x + 1
        t.big = where(s.big == 0, BIG, 0)
        return s.x < 5

    @action
    def Flip(self, s, t):
        t.big = where(s.big == 0, BIG, 0)
        return s.x < 5


class WideSmallView(Spec):
    """Four words of state (three 62-bit cells), a view of two small variables."""

    check_deadlock = False
    view = ("x", "y")
    x = Int(0, 3)
    y = Int(0, 3)
    p0 = Int(0, BIG)
    p1 = Int(0, BIG)
    p2 = Int(0, BIG)

    @action
    def X(self, s, t):
        t.x = s.x + 1
        t.p0 = s.p0 + 1
        return s.x < 3

    @action
    def Y(self, s, t):
        t.y = s.y + 1
        t.p1 = s.p1 + 3
        return s.y < 3


def test_a_two_word_state_with_a_one_word_view_has_one_key_column() -> None:
    spec = TwoWordsOneWordView()
    assert spec.layout.n_words == 2
    k = Kernel(spec)
    assert (k.key_width, k.key_kind, k.exact) == (1, "exact", False)
    r = Explorer(spec).run()
    o = brute_force_view(spec)
    _assert_agrees(spec, r, o)
    assert (r.fingerprint, r.collision_probability) == ("exact", 0.0)
    assert r.distinct_states == 6


def test_a_wide_state_with_a_small_view_is_keyed_exactly() -> None:
    spec = WideSmallView()
    assert spec.layout.n_words >= 3 and spec.layout.fingerprint_kind == "hash128"
    k = Kernel(spec)
    assert (k.key_width, k.key_kind) == (1, "exact")
    r = Explorer(spec).run()
    _assert_agrees(spec, r, brute_force_view(spec))
    assert (r.fingerprint, r.collision_probability) == ("exact", 0.0)
    assert r.distinct_states == 16
    # without the view the same spec is hashed (and has more states)
    nv = Explorer(spec, view=False).run()
    assert nv.fingerprint == "hash128" and nv.collision_probability > 0


@st.composite
def padded_view_spec(draw: st.DrawFn) -> type[Spec]:
    """A random spec with a view (:func:`test_view_oracle.view_spec`, its variables
    small or 41 bits wide) padded to three words or more with 62-bit variables outside
    the view, one of which an extra action toggles (so states with one view differ)."""
    cls = draw(view_spec(wide=draw(st.booleans())))
    ns = {f"pad{i}": Int(0, BIG) for i in range(draw(st.integers(0, 3)))}
    guard = draw(st.integers(0, 3))

    def Pad(self, s, t):
        t.pad_t = where(s.pad_t == 0, BIG, 0)
        return s.h != guard

    ns.update(pad_t=Int(0, BIG), Pad=action(Pad), __module__=cls.__module__)
    return type("PaddedViewSpec", (cls,), ns)


def _expected_keys(spec: Spec, k: Kernel) -> None:
    product = _view_product(spec)
    if product <= 2**64:
        assert (k.key_width, k.key_kind) == (1, "exact")
    elif k.key_kind == "hash128":
        assert spec.layout.fingerprint_kind == "hash128" and k.key_width == 2
    else:
        assert k.key_width == 2
    if spec.layout.n_words <= 2:
        assert k.key_kind == "exact"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(padded_view_spec())
def test_random_padded_specs_agree_with_the_oracle(cls: type[Spec]) -> None:
    spec = cls()
    k = Kernel(spec)
    _expected_keys(spec, k)
    r = Explorer(spec).run()
    _assert_agrees(spec, r, brute_force_view(spec))
    assert r.fingerprint == k.key_kind
    if r.fingerprint == "exact":
        assert r.collision_probability == 0.0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(padded_view_spec())
def test_random_padded_specs_with_two_workers(cls: type[Spec]) -> None:
    spec = cls()
    r = ParallelExplorer(spec, workers=2, buckets=2, driver_threshold=0).run()
    _assert_agrees(spec, r, brute_force_view(spec))
    one = Explorer(spec).run()
    assert (r.fingerprint, r.collision_probability) == \
        (one.fingerprint, one.collision_probability)


def test_two_workers_key_a_wide_state_by_its_small_view() -> None:
    spec = WideSmallView()
    r = ParallelExplorer(spec, workers=2, buckets=2, driver_threshold=0).run()
    _assert_agrees(spec, r, brute_force_view(spec))
    assert (r.fingerprint, r.collision_probability, r.distinct_states) == \
        ("exact", 0.0, 16)


def _drop_key_width(path: Path) -> None:
    """Make the checkpoint in ``path`` one written before the identity held the key
    width (when a view's states were keyed by two columns)."""
    m = json.loads((path / MANIFEST).read_text())
    del m["spec"]["key_width"]
    (path / MANIFEST).write_text(json.dumps(m))


def test_a_checkpoint_keyed_otherwise_is_refused(tmp_path: Path) -> None:
    spec = WideSmallView()
    explore(spec, max_depth=2, checkpoint_dir=tmp_path / "a")
    m = json.loads((tmp_path / "a" / MANIFEST).read_text())
    assert m["spec"]["key_width"] == 1
    want = explore(spec)
    assert explore(spec, checkpoint_dir=tmp_path / "a", resume=True).distinct_states == \
        want.distinct_states
    explore(spec, max_depth=2, checkpoint_dir=tmp_path / "b")
    _drop_key_width(tmp_path / "b")
    with pytest.raises(CheckpointError, match=r"keyed by 2 uint64 column\(s\) and this "
                                              r"run's by 1"):
        explore(spec, checkpoint_dir=tmp_path / "b", resume=True)
    # without a view nothing changed: an older checkpoint resumes
    explore(spec, max_depth=2, checkpoint_dir=tmp_path / "c", view=False)
    _drop_key_width(tmp_path / "c")
    assert explore(spec, checkpoint_dir=tmp_path / "c", resume=True, view=False
                   ).distinct_states == explore(spec, view=False).distinct_states


def test_a_workers_checkpoint_keyed_otherwise_is_refused(tmp_path: Path) -> None:
    spec = WideSmallView()
    ParallelExplorer(spec, workers=2, max_depth=2, checkpoint_dir=str(tmp_path)).run()
    _drop_key_width(tmp_path)
    with pytest.raises(CheckpointError, match=r"keyed by 2 uint64 column\(s\)"):
        ParallelExplorer(spec, workers=2, checkpoint_dir=str(tmp_path), resume=True).run()
