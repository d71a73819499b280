"""Ports of tlaplus/Examples models (``examples/tla/``): the manifest's distinct-state
counts pinned, invariants checked, and a broken variant of each caught.

Each count below is the one the model's ``manifest.json`` gives for its ``.cfg``
(TLC counts initial states among the distinct states, as we do; TLC's depth is ours
plus one). Where the manifest's configuration takes longer than ~30 s here, the test
is marked ``slow`` and a smaller configuration (or an independent count) runs fast.
"""

from __future__ import annotations

import numpy as np
import pytest
from bakery_iinv import iinv_holds
from bruteforce import brute_force

from examples.tla.bakery import (
    PC,
    Bakery,
    BakeryFromInit,
    BakeryFromInitBug,
)
from examples.tla.inner_fifo import InnerFIFO, InnerFIFOBugIncrement
from examples.tla.simple_regular import SimpleRegular, SimpleRegularBugNoWrite
from examples.tla.single_lane_bridge import SingleLaneBridge, SingleLaneBridgeBugNoDirection
from examples.tla.token_ring import TokenRing, TokenRingSmallM
from modelcheck import check_liveness, explore
from modelcheck.errors import SpecEvaluationError
from modelcheck.kernel import Kernel


def _all_states(spec) -> tuple[Kernel, np.ndarray]:
    """Every state of the variables' types, packed (the product of the cells' ranges)."""
    k = Kernel(spec, symmetry=False)
    cells = k.layout.cells
    grids = np.meshgrid(*[np.arange(c.lo, c.hi + 1) for c in cells], indexing="ij")
    return k, k.layout.pack_columns([g.ravel() for g in grids])


def _holds(k: Kernel, spec, name: str, words: np.ndarray) -> np.ndarray:
    (p,) = [p for p in spec.invariants if p.name == name]
    return np.asarray(p.fn(spec, k.batch_view(words)), dtype=bool)


# ------------------------------------------------------------------ Bakery
def test_bakery_inv_states_are_the_manifest_count() -> None:
    # ISpec's initial states are the type-correct states satisfying Inv: the spec's
    # own Inv, evaluated in one batch over all 1,679,616 type-correct states, holds
    # in exactly the manifest's 655,200 (every state of MCBakery is initial)
    spec = Bakery()
    k, words = _all_states(spec)
    assert len(words) == 9 * 4 * 16 * 9 * 4 * 81
    assert int(_holds(k, spec, "Inv", words).sum()) == 655_200


def test_bakery_init_filter_agrees_with_the_spec_inv() -> None:
    # the initial states (init_product(...).such_that(self.Inv), built in packed
    # batches) against IInv written in plain Python, state by state over a sample of
    # the type-correct states (MaxNat=1: 331,776 of them, 112,160 initial)
    spec = Bakery(MaxNat=1)
    k, words = _all_states(spec)
    init = k.initial_packed()
    assert len(init) == int(_holds(k, spec, "Inv", words).sum()) == 112_160
    initial = set(init[:, 0].tolist())
    names = ("num", "flag", "unchecked", "max", "nxt", "pc")
    for row in words[::97]:
        v = k.layout.values_from_cells(k.layout.unpack(row))
        st = {i: tuple(v[n][i] for n in names) for i in (1, 2)}
        st = {i: (a, b, frozenset(c), d, e, PC[f]) for i, (a, b, c, d, e, f)
              in st.items()}
        assert iinv_holds(st) == (int(row[0]) in initial)


def test_bakery_small_config() -> None:
    r = explore(Bakery(MaxNat=0))
    assert (r.status, r.distinct_states, r.depth) == ("ok", 4_096, 0)


@pytest.mark.slow
def test_bakery_manifest_config() -> None:
    # MCBakery.cfg: N=2, MaxNat=2; manifest: 655,200 distinct, 3,403,584 total
    # (TLC's total counts the 655,200 initial states too), depth 1 (ours 0)
    r = explore(Bakery())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 655_200, 0)
    assert r.generated_states + 655_200 == 3_403_584


def test_bakery_from_init_and_its_bug() -> None:
    r = explore(BakeryFromInit())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 2_303, 38)
    r = explore(BakeryFromInitBug())
    assert r.status == "violation" and r.violation.property == "Inv"
    assert len(r.violation.trace) == 11


# ------------------------------------------------------------ SimpleRegular
def test_simple_regular_manifest_config() -> None:
    # SimpleRegular.cfg: N=8; manifest: 277,726 distinct, 1,454,776 total (our
    # generated plus the initial state), depth 25 (ours 24)
    r = explore(SimpleRegular())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 277_726, 24)
    assert r.generated_states + 1 == 1_454_776


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_simple_regular_small_n_against_brute_force(n: int) -> None:
    r = explore(SimpleRegular(N=n))
    assert r.status == "ok"
    assert (r.distinct_states, r.depth) == brute_force(SimpleRegular(N=n))


def test_simple_regular_bug() -> None:
    r = explore(SimpleRegularBugNoWrite(N=3))
    assert r.status == "violation" and r.violation.property == "Inv"
    r = explore(SimpleRegularBugNoWrite(N=3), invariants=["PCorrect"])
    assert r.status == "violation" and r.violation.property == "PCorrect"
    assert len(r.violation.trace) == 10  # three processes, three steps each


# ---------------------------------------------------------------- InnerFIFO
def test_inner_fifo_manifest_config() -> None:
    # MCInnerFIFO.cfg: Message = {m1, m2, m3}, qLen = 3, CONSTRAINT Len(q) <= qLen;
    # manifest: 3,864 distinct, 9,660 total (our generated plus the 36 initial
    # states), depth 11 (ours 10)
    r = explore(InnerFIFO())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 3_864, 10)
    assert r.generated_states + 36 == 9_660


@pytest.mark.parametrize("qlen", [0, 1, 3])
def test_inner_fifo_against_brute_force(qlen: int) -> None:
    r = explore(InnerFIFO(qLen=qlen))
    assert (r.distinct_states, r.depth) == brute_force(InnerFIFO(qLen=qlen))


def test_inner_fifo_bug_is_a_type_error() -> None:
    with pytest.raises(SpecEvaluationError, match=r"SSend.*in_\.rdy = 2, outside its declared"):
        explore(InnerFIFOBugIncrement())


# ---------------------------------------------------------------- TokenRing
def test_token_ring_manifest_config_and_stab() -> None:
    # TokenRing.cfg: N=6, M=6, PROPERTIES Stab; manifest: 46,656 distinct (= 6^6, all
    # initial), 248,832 total (our generated plus the initial states), depth 1 (ours 0)
    r = check_liveness(TokenRing())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 46_656, 0)
    assert r.generated_states + 46_656 == 248_832
    assert r.liveness["properties"] == {"Stab": "holds"}


@pytest.mark.parametrize("n, m", [(2, 1), (3, 2), (4, 4)])
def test_token_ring_small_against_brute_force(n: int, m: int) -> None:
    r = check_liveness(TokenRing(N=n, M=m))
    assert r.status == "ok" and r.distinct_states == m ** n
    assert (r.distinct_states, r.depth) == brute_force(TokenRing(N=n, M=m))


def test_token_ring_needs_enough_counter_values() -> None:
    # N = 5 > M + 1 = 4 breaks the module's ASSUME: several tokens may circulate forever
    # (TLC 2.20 on TokenRing.tla without that ASSUME, N=5, M=3, WF_vars(CreateToken \/
    # \E i \in Node \ {0}: PassToken(i)): 243 distinct states, Stab violated)
    r = check_liveness(TokenRingSmallM())
    assert r.distinct_states == 243
    assert r.status == "violation" and r.violation.kind == "liveness"
    assert r.violation.property == "Stab" and r.violation.loop is not None


# --------------------------------------------------------- SingleLaneBridge
def test_single_lane_bridge_manifest_config_and_properties() -> None:
    # MC.cfg: CarsRight = {r1, r2}, CarsLeft = {l1, l2}, Bridge = {4, 5}, Positions =
    # 1..8; manifest: 3,605 distinct, 20,181 total, depth 29 (ours 28)
    r = check_liveness(SingleLaneBridge())
    assert (r.status, r.distinct_states, r.depth) == ("ok", 3_605, 28)
    assert set(r.liveness["properties"].values()) == {"holds"}
    assert len(r.liveness["properties"]) == 8  # two \A car properties, four cars
    # TLC's total: our generated, the initial state, and EnterBridge (quantified by
    # an unused \E car in Next) counted once per car
    enter = sum(c.fired for c in r.coverage if c.name.startswith("EnterBridge"))
    assert r.generated_states + 1 + 3 * enter == 20_181


@pytest.mark.parametrize("n_right, n_cars", [(1, 2), (2, 3)])
def test_single_lane_bridge_against_brute_force(n_right: int, n_cars: int) -> None:
    spec = SingleLaneBridge(NRight=n_right, NCars=n_cars)
    r = explore(spec)
    assert r.status == "ok" and (r.distinct_states, r.depth) == brute_force(spec)


class _BridgeUnfairEntry(SingleLaneBridge):
    fairness = {"MoveOutsideBridge": "weak", "MoveInsideBridge": "weak"}


def test_single_lane_bridge_entry_needs_fairness() -> None:
    # without WF(EnterBridge) a waiting car may wait forever while others drive round
    r = check_liveness(_BridgeUnfairEntry())
    props = r.liveness["properties"]
    assert r.status == "violation" and r.violation.kind == "liveness"
    assert {props[f"CarsEnterBridge_{c}"] for c in ("r1", "r2", "l1", "l2")} == {"violated"}


def test_single_lane_bridge_bug() -> None:
    r = explore(SingleLaneBridgeBugNoDirection())
    assert r.status == "violation" and r.violation.property == "Invariants"
    assert len(r.violation.trace) == 7
