"""One front door: the library's :func:`modelcheck.check` checks what ``modelcheck check``
checks, temporal properties included.

Every spec class of ``specs/``, ``examples/`` and ``examples/tla/`` (bug variants
included, found by the loader as the command line finds them) is checked both ways,
``modelcheck check MODULE:Class --format json`` through click's ``CliRunner`` (in this
process: the command's own code, without a second interpreter's start-up; one
subprocess run below shows that the two agree) and ``check(Class(**constants))``, and
the JSON of the two results is compared whole, timings aside: status, violated
property and kind, lasso, counts, depth, coverage, levels, memory, liveness verdicts.
A spec error is compared as the command's one-paragraph error against the exception's.
Each class runs with its default constants except the few in ``SMALL`` (given to both
sides as ``--const`` and as keyword arguments); those over a second are marked slow.
What the command's check options select (``--invariant`` of invariants, action and
temporal properties, ``--deadlock``, ``--no-symmetry``, ``--max-depth``,
``--max-states``) is compared with the ``CheckConfig`` of the same choice on ``Gather``,
a spec of this file.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from examples.tla.elevator_liveness import ElevatorLivenessBugWeakMove
from examples.tla.live_hour_clock import HourClockNoFairness
from modelcheck import (
    CheckConfig,
    Ids,
    Int,
    ModelcheckError,
    SetOf,
    Spec,
    action,
    action_property,
    always_eventually,
    check,
    check_liveness,
    explore,
    invariant,
)
from modelcheck.cli import cli
from modelcheck.liveness import LivenessError
from modelcheck.loader import spec_classes

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("specs", "examples", "examples.tla")

#: constants for the classes whose defaults are too big for this test, given to both
#: sides: MultiPaxos_MC_small.cfg (343,796 states) takes minutes here and
#: MultiPaxos_MC.cfg (two writes) far longer, so one write and no read (2,628 states,
#: the bug still found); SimplifiedPaxos's 4 replicas and 3 values take 23 s for 1,207
#: states, so 3 replicas and 2 values (701; the constants test_tla_models_2 uses)
SMALL: dict[str, dict[str, Any]] = {
    "examples.tla.multi_paxos:MultiPaxos": {"NReads": 0},
    "examples.tla.multi_paxos:MultiPaxosMC": {"NReads": 0, "NWrites": 1},
    "examples.tla.multi_paxos:MultiPaxosBug": {"NReads": 0},
    "examples.tla.simplified_fast_paxos:SimplifiedPaxos": {"NReplicas": 3, "NValues": 2},
    "examples.tla.simplified_fast_paxos:SimplifiedPaxosBug": {"NReplicas": 3, "NValues": 2},
}

#: the classes whose check takes more than a second here (twice that for the two
#: sides); marked slow, still run by CI
SLOW = {
    "specs.kraft_lease:KRaftLease", "specs.kraft_lease:KRaftLeaseLive",
    "specs.kraft_lifecycle:KRaftLifecycle",
    "specs.kraft_metadata:KRaftMetadata", "specs.kraft_metadata:KRaftMetadataLive",
    "specs.kraft_metadata:KRaftMetadataBugAbortPublishesDelta",
    "specs.kraft_metadata:KRaftMetadataBugNoFlushOnBegin",
    "specs.zk_controller:ZkController", "specs.zk_controller_live:ZkControllerLive",
    "specs.zk_controller_live:ZkControllerLiveBugLossyRequests",
    "specs.zk_controller_live:ZkControllerLiveBugShrinkWithoutLeader",
    "examples.tla.live_write_through_cache:LiveWriteThroughCache",
    "examples.tla.live_write_through_cache:LiveWriteThroughCacheWeakRdMiss",
    "examples.tla.mc_paxos_tiny:MCPaxosTiny", "examples.tla.mc_paxos_tiny:MCPaxosTinyBug",
    "examples.tla.multi_paxos:MultiPaxos", "examples.tla.multi_paxos:MultiPaxosMC",
    "examples.tla.multi_paxos:MultiPaxosBug",
    "examples.tla.simplified_fast_paxos:SimplifiedPaxos",
    "examples.tla.simplified_fast_paxos:SimplifiedPaxosBug",
    "examples.tla.token_ring:TokenRing",
}


def spec_targets() -> list[str]:
    """``module:Class`` of every spec class of the spec and example modules."""
    out = []
    for pkg in PACKAGES:
        for mod in pkgutil.iter_modules(importlib.import_module(pkg).__path__):
            if mod.ispkg:
                continue
            name = f"{pkg}.{mod.name}"
            out += [f"{name}:{cls.__name__}"
                    for cls in spec_classes(importlib.import_module(name))]
    return out


def comparable(printed: dict[str, Any]) -> dict[str, Any]:
    """A result's JSON without its timings."""
    out = {k: v for k, v in printed.items() if k not in ("seconds", "states_per_second")}
    if "levels" in out:
        out["levels"] = [{k: v for k, v in lv.items() if k != "seconds"}
                         for lv in out["levels"]]
    if "liveness" in out:
        out["liveness"] = {k: v for k, v in out["liveness"].items() if k != "seconds"}
    return out


def via_command(target: str, args: list[str] | tuple[str, ...] = ()
                ) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON (timings aside) of ``modelcheck check TARGET --format json -q
    ARGS``, run in this process by click's runner."""
    r = CliRunner().invoke(cli, ["check", target, "--format", "json", "-q", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, comparable(json.loads(r.stdout))


def via_library(spec: Spec, config: CheckConfig | None = None
                ) -> tuple[int, dict[str, Any]]:
    """Exit code and JSON (timings aside) of ``check(spec, config)``, as the command
    would print them (a spec or usage error as its ``{"status": "error"}`` object)."""
    try:
        res = check(spec, config)
    except ModelcheckError as e:
        return 2, {"status": "error", "error": str(e)}
    return res.exit_code, comparable(json.loads(json.dumps(res.to_json())))


def spec_class(target: str) -> type[Spec]:
    module, _, name = target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type) and issubclass(cls, Spec)
    return cls


def const_args(consts: dict[str, Any]) -> list[str]:
    return [a for n, v in consts.items() for a in ("--const", f"{n}={v}")]


TARGETS = spec_targets()


@pytest.mark.parametrize("target", [
    pytest.param(t, marks=[pytest.mark.slow] if t in SLOW else []) for t in TARGETS])
def test_check_agrees_with_the_command_on_every_spec(target: str) -> None:
    consts = SMALL.get(target, {})
    printed = via_command(target, const_args(consts))
    assert via_library(spec_class(target)(**consts)) == printed


def test_every_spec_class_is_compared_and_the_lists_name_them() -> None:
    # the survey covers the liveness examples and their bug variants, and the
    # constants and slow marks name classes that exist
    assert {"examples.tla.elevator_liveness:ElevatorLivenessBugWeakMove",
            "specs.zk_controller_live:ZkControllerLiveBugNoStartupSync",
            "examples.counter:CounterBug"} <= set(TARGETS)
    assert set(SMALL) <= set(TARGETS) and SLOW <= set(TARGETS)
    assert len(TARGETS) >= 90


def test_check_reports_a_liveness_violation() -> None:
    # check() used to run the safety explorer alone: status ok on a spec whose
    # liveness fails
    spec = ElevatorLivenessBugWeakMove()
    r = check(spec)
    assert r.status == "violation" and r.exit_code == 1
    assert (r.violation.property, r.violation.kind) == ("Arrives1", "liveness")
    assert r.violation.loop is not None
    assert comparable(r.to_json()) == comparable(check_liveness(spec).to_json())
    assert r.checked["temporal"] == [p.name for p in spec.temporal]
    # the explorer alone (explore()) does not decide temporal properties
    assert explore(spec).status == "ok"


def test_the_command_in_process_is_the_command() -> None:
    target = "examples.tla.live_hour_clock:HourClockNoFairness"
    run = subprocess.run([sys.executable, "-m", "modelcheck", "check", target,
                          "--format", "json", "-q"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    printed = (run.returncode, comparable(json.loads(run.stdout)))
    assert printed == via_command(target)
    assert printed == via_library(HourClockNoFairness())
    assert printed[1]["violation"]["kind"] == "liveness"


class Gather(Spec):
    """Three interchangeable processes join a set one at a time; when all have joined,
    a new round empties it, twice; then no action is enabled (a deadlock). Nothing
    forces a join, so ``AllJoin`` fails (the behaviour may stutter at the start)."""

    Procs = Ids(1, 3)
    symmetry = ("Procs",)
    joined = SetOf(Procs)
    rounds = Int(0, 2)

    @action(p=Procs)
    def Join(self, s, t, p):  # type: ignore[no-untyped-def]
        t.joined = s.joined.with_(p)
        return ~s.joined.has(p)

    @action
    def NewRound(self, s, t):  # type: ignore[no-untyped-def]
        t.joined = set()
        t.rounds = s.rounds + 1
        return (s.joined.size() == 3) & (s.rounds < 2)

    @invariant
    def RoundsBounded(self, s):  # type: ignore[no-untyped-def]
        return s.rounds <= 2

    @invariant
    def OneRound(self, s):  # type: ignore[no-untyped-def]
        return s.rounds < 1

    @action_property
    def RoundsGrow(self, s, t):  # type: ignore[no-untyped-def]
        return t.rounds >= s.rounds

    @always_eventually
    def AllJoin(self, s):  # type: ignore[no-untyped-def]
        return s.joined.size() == 3


NO_SYM = CheckConfig(symmetry=False)


@pytest.mark.parametrize("args, config", [
    # temporal properties under the declared symmetry: refused on both
    ((), CheckConfig()),
    (("--no-symmetry",), NO_SYM),
    (("--no-symmetry", "--no-deadlock"), NO_SYM.replace(check_deadlock=False)),
    (("--no-symmetry", "--deadlock"), NO_SYM.replace(check_deadlock=True)),
    # safety alone: no liveness path, symmetry applies
    (("--invariant", "RoundsBounded"), CheckConfig(invariants=("RoundsBounded",))),
    (("--invariant", "RoundsBounded", "--no-deadlock"),
     CheckConfig(invariants=("RoundsBounded",), check_deadlock=False)),
    (("--invariant", "OneRound", "--invariant", "RoundsGrow"),
     CheckConfig(invariants=("OneRound", "RoundsGrow"))),
    (("--invariant", "RoundsGrow", "--max-depth", "2"),
     CheckConfig(invariants=("RoundsGrow",), max_depth=2)),
    # the temporal property alone, or with the others
    (("--invariant", "AllJoin", "--no-symmetry", "--no-deadlock"),
     NO_SYM.replace(invariants=("AllJoin",), check_deadlock=False)),
    (("--invariant", "AllJoin", "--invariant", "RoundsBounded", "--no-symmetry"),
     NO_SYM.replace(invariants=("AllJoin", "RoundsBounded"))),
    (("--invariant", "AllJoin", "--invariant", "OneRound", "--no-symmetry"),
     NO_SYM.replace(invariants=("AllJoin", "OneRound"))),
    (("--invariant", "AllJoin", "--invariant", "RoundsBounded", "--invariant", "RoundsGrow",
      "--no-symmetry", "--no-deadlock"),
     NO_SYM.replace(invariants=("AllJoin", "RoundsBounded", "RoundsGrow"),
                    check_deadlock=False)),
    (("--invariant", "AllJoin", "--no-symmetry", "--max-depth", "3"),
     NO_SYM.replace(invariants=("AllJoin",), max_depth=3)),
    (("--invariant", "AllJoin"), CheckConfig(invariants=("AllJoin",))),
    (("--invariant", "NoSuchName"), CheckConfig(invariants=("NoSuchName",))),
    (("--invariant", "NoSuchName", "--invariant", "AllJoin", "--no-symmetry"),
     NO_SYM.replace(invariants=("NoSuchName", "AllJoin"))),
    (("--no-symmetry", "--max-states", "5"), NO_SYM.replace(max_states=5)),
    (("--invariant", "OneRound", "--max-states", "5"),
     CheckConfig(invariants=("OneRound",), max_states=5)),
])
def test_check_honours_the_options_as_the_command_does(args: tuple[str, ...],
                                                       config: CheckConfig) -> None:
    printed = via_command(f"{__name__}:Gather", args)
    assert via_library(Gather(), config) == printed


def test_the_option_cases_reach_every_path() -> None:
    # the cases above are not all alike: refusals, liveness and safety verdicts
    outcomes = set()
    for config in [CheckConfig(), CheckConfig(invariants=("OneRound",)),
                   NO_SYM.replace(invariants=("AllJoin",), check_deadlock=False)]:
        code, printed = via_library(Gather(), config)
        kind = (printed.get("violation") or {}).get("kind")
        outcomes.add((code, printed["status"], kind))
    assert outcomes == {(2, "error", None), (1, "violation", "liveness"),
                        (1, "violation", "invariant")}
    with pytest.raises(LivenessError, match="--no-symmetry"):
        check(Gather())
