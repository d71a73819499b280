"""Symmetry reduction: reduced counts equal the number of orbits; verdicts and traces hold."""

from __future__ import annotations

import pytest
from bruteforce import brute_force

from modelcheck import explore
from modelcheck.kernel import Kernel
from specs.kraft_broker import KRaftBroker, KRaftBrokerBugEpochReuse, KRaftBrokerBugNoCatchUpCheck


class KRaftSym(KRaftBroker):
    symmetry = ("Brokers",)


class EpochReuseSym(KRaftBrokerBugEpochReuse):
    symmetry = ("Brokers",)


class NoCatchUpSym(KRaftBrokerBugNoCatchUpCheck):
    symmetry = ("Brokers",)


@pytest.mark.parametrize("consts", [dict(N=2, P=1, MaxLog=3, MaxRestarts=1),
                                    dict(N=3, P=1, MaxLog=2, MaxRestarts=1)])
def test_reduced_count_is_number_of_orbits(consts) -> None:
    spec = KRaftSym(**consts)
    full = explore(spec, symmetry=False)
    reduced = explore(spec)
    assert reduced.symmetry == ["Brokers"] and full.symmetry == []
    orbits, depth = brute_force(spec, spec.symmetry_sets())
    assert reduced.distinct_states == orbits
    assert full.distinct_states == brute_force(spec)[0]
    assert reduced.distinct_states < full.distinct_states
    assert reduced.depth == full.depth == depth


@pytest.mark.parametrize("cls", [EpochReuseSym, NoCatchUpSym])
def test_same_verdict_and_a_real_counterexample(cls) -> None:
    spec = cls()
    with_sym, without = explore(spec), explore(spec, symmetry=False)
    assert with_sym.status == without.status == "violation"
    assert with_sym.violation.property == without.violation.property
    assert len(with_sym.violation.trace) == len(without.violation.trace)
    # the reduced run's trace is a behaviour of the spec, step by step
    k = Kernel(spec, symmetry=False)
    layout = spec.layout
    cells = layout.cells_from_values(with_sym.violation.trace[0].state)
    assert cells in k.initial_states()
    for step in with_sym.violation.trace[1:]:
        inst = spec.action_by_label(step.action, step.params)
        cells = k.step(cells, inst)
        assert cells == layout.cells_from_values(step.state)


def test_symmetry_needs_a_used_ids_set() -> None:
    from modelcheck import Const, Ids, Int, Spec, SpecDefinitionError, action

    class Unused(Spec):
        symmetry = ("Procs",)
        N = Const(2)
        Procs = Ids(1, N)
        x = Int(0, 1)

        @action
        def Flip(self, s, t):
            t.x = 1 - s.x
            return s.x == 0

    with pytest.raises(SpecDefinitionError, match="not used by any variable"):
        explore(Unused())
