"""TLA+'s ``VIEW`` (``Spec.view``): states equal on the view are one state, as in TLC.

The tiny specs below are pinned to what TLC 2.20 printed for their TLA+ twins (one
worker, ``VIEW V`` with ``V == x``; the modules are in the docstrings): TLC keeps the
first state of a view it reaches (the first initial state in enumeration order, the
first successor in BFS order), checks the invariants on that state only (a state whose
view was seen is dropped unchecked) and counts distinct views. The random-spec oracle
is in ``tests/test_view_oracle.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from modelcheck import Int, Spec, action, check_liveness, explore, invariant, where
from modelcheck.errors import SpecDefinitionError
from modelcheck.kernel import Kernel
from modelcheck.liveness import LivenessError
from modelcheck.temporal import eventually
from modelcheck.types import Bool
from tests.bruteforce import assert_replays, brute_force_view


class FirstWins(Spec):
    """TLC twin (``A.tla``)::

        Init == x = 0 /\\ y = 0
        A == x = 0 /\\ x' = 1 /\\ y' = 0
        B == x = 0 /\\ x' = 1 /\\ y' = 1
        C == x = 1 /\\ y = 1 /\\ x' = 2 /\\ y' = y
        Next == A \\/ B \\/ C
        Inv == y = 0

    TLC: no error, 3 states generated, 2 distinct states, depth 2: B's successor has
    the view of A's (x = 1) and is dropped unchecked, so C is never enabled."""

    check_deadlock = False
    view = ("x",)
    x = Int(0, 2)
    y = Int(0, 1)

    @action
    def A(self, s, t):
        t.x = 1
        t.y = 0
        return s.x == 0

    @action
    def B(self, s, t):
        t.x = 1
        t.y = 1
        return s.x == 0

    @action
    def C(self, s, t):
        t.x = 2
        return (s.x == 1) & (s.y == 1)

    @invariant
    def Inv(self, s):
        return s.y == 0


class SecondWins(FirstWins):
    """``Next == B \\/ A \\/ C`` (TLC's ``B.tla``): TLC reports Inv violated by B's
    successor, a 2-state trace, 2 distinct states."""

    @action
    def A(self, s, t):  # now the one that sets y = 1, first in action order
        t.x = 1
        t.y = 1
        return s.x == 0

    @action
    def B(self, s, t):
        t.x = 1
        t.y = 0
        return s.x == 0


class InitOrder(Spec):
    """TLC twin (``I.tla``)::

        Init == x = 0 /\\ y \\in {0, 1}
        Next == x < 1 /\\ x' = x + 1 /\\ y' = y

    With ``Inv == y = 0`` TLC finds no error (2 distinct states, depth 2: the initial
    state with y = 1 has a seen view and is never checked); with ``Inv2 == y = 1`` it
    reports Inv2 violated by the initial state x = 0, y = 0."""

    check_deadlock = False
    view = ("x",)
    x = Int(0, 1)
    y = Int(0, 1)

    def init_states(self):
        yield {"y": 0}
        yield {"y": 1}

    @action
    def Step(self, s, t):
        t.x = s.x + 1
        return s.x < 1

    @invariant
    def Inv(self, s):
        return s.y == 0

    @invariant
    def Inv2(self, s):
        return s.y == 1


def test_the_first_state_of_a_view_is_kept_and_the_others_dropped_unchecked() -> None:
    r = explore(FirstWins())
    assert r.status == "ok"
    assert (r.distinct_states, r.depth + 1) == (2, 2)  # TLC: 2 distinct, depth 2
    assert {c.name: c.fired for c in r.coverage} == {"A": 1, "B": 1, "C": 0}
    assert r.view == ["x"]
    whole = explore(FirstWins(), view=False)  # every state counts: (1, 1) reached, C too
    assert whole.status == "violation" and whole.violation.property == "Inv"


def test_a_violation_is_found_on_the_state_kept() -> None:
    r = explore(SecondWins())
    assert r.status == "violation" and r.violation.property == "Inv"
    assert [st.action for st in r.violation.trace] == [None, "A"]
    assert r.violation.trace[-1].state == {"x": 1, "y": 1}
    assert r.distinct_states == 2  # TLC: 2 distinct states found
    assert_replays(SecondWins(), r.violation.trace)


def test_initial_states_the_first_in_enumeration_order_is_kept() -> None:
    r = explore(InitOrder(), invariants=["Inv"])
    assert r.status == "ok" and (r.distinct_states, r.depth + 1) == (2, 2)
    r = explore(InitOrder(), invariants=["Inv2"])
    assert r.status == "violation" and r.violation.property == "Inv2"
    assert [st.state for st in r.violation.trace] == [{"x": 0, "y": 0}]
    # without the view, both initial states are checked
    assert explore(InitOrder(), invariants=["Inv"], view=False).status == "violation"


@pytest.mark.parametrize("batch_size", [1, 2, 3, 1 << 16])
def test_the_state_kept_does_not_depend_on_the_batches(batch_size: int) -> None:
    """Of several successors with one view, the one from the smallest parent (in the
    level's fingerprint order), then the first action, is kept, whatever the batches:
    the states kept at each level are the oracle's (keeping another one of a view
    reaches 24 views instead of 26)."""
    from tests.test_view_oracle import explore as explore_kept

    got = explore_kept(Wide(), batch_size=batch_size)
    want = brute_force_view(Wide())
    assert (got.status, got.distinct_states, got.depth) == ("ok", 26, 7) == \
        (want.status, want.distinct, want.depth)
    assert got.kept_levels == want.levels


class Wide(Spec):
    """Counters a, b, a flag c and a history h outside the view: many parents reach
    each view, and which state of a view is kept decides whether Flag is enabled."""

    check_deadlock = False
    view = ("a", "b", "c")
    a = Int(0, 3)
    b = Int(0, 3)
    c = Int(0, 1)
    h = Int(0, 7)

    @action(k=range(1, 3))
    def IncA(self, s, t, k):
        t.a = s.a + 1
        t.h = (s.h * 2 + k) % 8
        return s.a < 3

    @action
    def IncB(self, s, t):
        t.b = s.b + 1
        t.h = (s.h + 3) % 8
        return (s.b < 3) & (s.h != 5)

    @action
    def Flag(self, s, t):
        t.c = 1
        return s.h == 6


def test_projection_zeroes_the_dropped_cells_only() -> None:
    for spec in (Wide(), FirstWins()):
        lay = spec.layout
        rng = np.random.default_rng(1)
        cols = [rng.integers(c.lo, c.lo + c.size, 50) for c in lay.cells]
        words = lay.pack_columns(cols)
        proj = lay.projection(spec.view)(words)
        kept = {c.index for c in lay.cells if c.var in spec.view}
        want = lay.pack_columns([col if i in kept else np.full(50, lay.cells[i].lo)
                                 for i, col in enumerate(cols)])
        assert (proj == want).all()


def test_mixed_radix_projection() -> None:
    """A layout past 64 bits packs in mixed radix: words of kept cells only, of dropped
    cells only, and mixed ones."""

    class Big(Spec):
        view = ("a", "c")
        a = Int(0, 999_999)
        b = Int(0, 999_999)
        c = Int(0, 999_999)
        d = Int(0, 999_999)
        e = Bool()

        @action
        def Tick(self, s, t):
            t.e = ~s.e
            return s.a == 0

    spec = Big()
    lay = spec.layout
    assert lay.n_words >= 2 and not lay.bitfields
    rng = np.random.default_rng(2)
    cols = [rng.integers(c.lo, c.lo + c.size, 200) for c in lay.cells]
    proj = lay.projection(spec.view)(lay.pack_columns(cols))
    want = lay.pack_columns([col if lay.cells[i].var in spec.view
                             else np.full(200, lay.cells[i].lo) for i, col in enumerate(cols)])
    assert (proj == want).all()


def test_a_view_keeps_whole_states_even_when_they_fit_one_word() -> None:
    # two words, keyed by the views' (exact) keys, never taken for the states; the view
    # packs into one word on its own, so one key column
    k = Kernel(FirstWins())
    assert FirstWins().layout.n_words == 2 and k.key_kind == "exact" and not k.exact
    assert k.key_width == 1 and Kernel(FirstWins(), view=False).exact


class Live(Spec):
    check_deadlock = False
    view = ("x",)
    x = Int(0, 1)

    @action(fair="weak")
    def Up(self, s, t):
        t.x = 1
        return s.x == 0

    @eventually
    def Reaches(self, s):
        return s.x == 1


def test_temporal_properties_are_refused_under_a_view() -> None:
    with pytest.raises(LivenessError, match="--no-view"):
        check_liveness(Live())
    r = check_liveness(Live(), view=False)
    assert r.status == "ok"


def test_cli_refuses_liveness_with_a_view_and_no_view_checks_it(tmp_path) -> None:
    src = tmp_path / "live.py"
    src.write_text(
        "from modelcheck import Int, Spec, action\n"
        "from modelcheck.temporal import eventually\n"
        "class Live(Spec):\n"
        "    check_deadlock = False\n"
        "    view = ('x',)\n"
        "    x = Int(0, 1)\n"
        "    y = Int(0, 1)\n"
        "    @action(fair='weak')\n"
        "    def Up(self, s, t):\n"
        "        t.x = 1\n"
        "        return s.x == 0\n"
        "    @eventually\n"
        "    def Reaches(self, s):\n"
        "        return s.x == 1\n")
    run = [sys.executable, "-m", "modelcheck", "check", f"{src}:Live"]
    p = subprocess.run(run, capture_output=True, text=True)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--no-view" in p.stdout + p.stderr and "Traceback" not in p.stderr
    p = subprocess.run([*run, "--no-view", "--format", "json"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["view"] == []
    p = subprocess.run([*run, "--invariant", "Reaches", "--format", "json"],
                       capture_output=True, text=True)
    assert p.returncode == 2


def test_cli_reports_the_view(tmp_path) -> None:
    p = subprocess.run([sys.executable, "-m", "modelcheck", "check",
                        "tests/test_view.py:FirstWins", "--format", "json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout)
    assert (out["distinct_states"], out["view"]) == (2, ["x"])
    p = subprocess.run([sys.executable, "-m", "modelcheck", "check",
                        "tests/test_view.py:FirstWins", "--no-view"],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "Inv" in p.stdout


@pytest.mark.parametrize("view, match", [
    ("x", "tuple of state variable names"),
    (("x", "z"), "'z', which is not a state variable"),
    (("x", "x"), "each kept variable once"),
    ((), "at least one"),
])
def test_a_bad_view_is_refused_when_the_class_is_defined(view, match) -> None:
    with pytest.raises(SpecDefinitionError, match=match):
        type("Bad", (Spec,), {"view": view, "x": Int(0, 1),
                              "Up": action(lambda self, s, t: s.x == 0),
                              "__module__": __name__})


def test_view_and_symmetry_are_not_combined() -> None:
    from modelcheck import Array, Ids

    with pytest.raises(SpecDefinitionError, match="both symmetry"):
        type("Both", (Spec,), {"P": Ids(1, 2), "symmetry": ("P",), "view": ("x",),
                               "x": Array(Ids(1, 2), Int(0, 1)),
                               "Up": action(lambda self, s, t: s.x[1] == 0),
                               "__module__": __name__})


def test_simulation_walks_whole_states() -> None:
    """Walks ignore the view (as TLC's -simulate): every initial state can start one,
    a state with a seen view is still checked, and the states counted are states."""
    from examples.audited_mutex import AuditedPeterson
    from modelcheck.simulate import simulate

    r = simulate(InitOrder(), invariants=["Inv"], seed=1, runs=40, depth=3)
    assert r.status == "violation" and r.violation.property == "Inv"  # y = 1 is checked
    assert r.view == []
    r = simulate(AuditedPeterson(), seed=3, runs=300, depth=40)
    assert r.status == "ok" and r.distinct_states > 20  # histories are counted


def test_walk_lassos_are_of_states_not_views() -> None:
    """A temporal property on walks of a spec with a view: a walk that comes back to a
    view but not to a state is no lasso (``Loop`` cycles x, the counter c only grows;
    <>(c = 3) holds on every maximal walk)."""
    from modelcheck.simulate import simulate

    r = simulate(Climb(), seed=2, runs=30, depth=12)
    assert r.status == "ok", r.violation


class Climb(Spec):
    check_deadlock = False
    view = ("x",)
    x = Int(0, 1)
    c = Int(0, 3)

    @action(fair="weak")
    def Loop(self, s, t):
        t.x = 1 - s.x
        t.c = where(s.c < 3, s.c + 1, 3)
        return s.c < 3

    @eventually
    def Reaches(self, s):
        return s.c == 3


def test_the_web_state_graph_is_of_whole_states() -> None:
    """The explore page's state graph (``ReachableGraph``) has every state, keyed by the
    page's whole-state fingerprints, even for a spec with a view."""
    from modelcheck.kernel import Kernel
    from modelcheck.web.neighbourhood import ReachableGraph

    k = Kernel(FirstWins(), symmetry=False, view=False)
    g = ReachableGraph(k, 100)
    assert len(g) == 4  # (0,0) (1,0) (1,1) (2,1): C is enabled after B
    for cells in ([0, 0], [1, 1], [2, 1]):
        assert k.fingerprint(cells) in g
