"""Typed results: a run's status, a counterexample's kind and a predicate's role are
enum members (:class:`~modelcheck.result.Status`, :class:`~modelcheck.result.ViolationKind`,
:class:`~modelcheck.spec.RoleKind`), and the ``--format json`` contract is unchanged.

The oracle for "unchanged" is an independent rendering: the result's JSON data with every
enum member replaced by its plain ``str`` value, dumped by :mod:`json`, must equal the
JSON of the data as the checker builds it, byte for byte, on every non-slow spec class
of ``specs/`` and ``examples/`` (the classes ``tests/test_front_door.py`` checks).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

import pytest

from examples.counter import CounterBug
from modelcheck import check
from modelcheck.fairness import Fairness, FairnessCondition
from modelcheck.level import Verdict, VerdictKind
from modelcheck.result import (
    EXIT_CODES,
    Result,
    Status,
    TraceStep,
    Violation,
    ViolationKind,
    exit_code,
)
from modelcheck.shrink import Target
from modelcheck.spec import PredicateDecl, RoleKind
from tests.test_front_door import SLOW, SMALL, TARGETS, spec_class


def plain(v: Any) -> Any:
    """``v`` with every enum member replaced by its value's plain type (the oracle)."""
    if isinstance(v, enum.Enum):
        return plain(v.value)
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, dict):
        return {plain(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def enums_in(v: Any) -> set[type]:
    if isinstance(v, enum.Enum):
        return {type(v)}
    if isinstance(v, dict):
        return set().union(*(enums_in(k) | enums_in(x) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return set().union(*(enums_in(x) for x in v))
    return set()


@pytest.mark.parametrize("target", [t for t in TARGETS if t not in SLOW])
def test_json_is_the_plain_rendering_on_every_spec(target: str) -> None:
    cls = spec_class(target)
    try:
        res = check(cls(**SMALL.get(target, {})))
    except Exception as e:  # a spec error is the command's error object, no result
        pytest.skip(f"spec error: {e}")
    data = res.to_json()
    assert json.dumps(data, sort_keys=True) == json.dumps(plain(data), sort_keys=True)
    assert type(res.status) is Status
    assert {Status} <= enums_in(data)
    if res.violation is not None:
        assert type(res.violation.kind) is ViolationKind
        assert ViolationKind in enums_in(data)
    for p in cls._predicates.values():
        assert type(p.kind) is RoleKind


def test_members_are_their_values_in_text_and_json() -> None:
    for e in (*Status, *ViolationKind, *RoleKind):
        assert e == e.value and f"{e}" == e.value and str(e) == e.value
        assert json.dumps(e) == json.dumps(e.value)
        assert json.dumps({e: 1}) == json.dumps({e.value: 1})
    assert {exit_code(s.value) for s in Status} == set(EXIT_CODES.values())
    assert [exit_code(s) for s in ("ok", "violation", "deadlock", "error", "incomplete",
                                   "nonsense")] == [0, 1, 1, 2, 3, 2]


def test_status_and_kinds_are_coerced_and_checked() -> None:
    r = Result(spec="S", constants={}, status="ok")
    assert r.status is Status.OK
    r = dataclasses.replace(r, status="violation")
    assert r.status is Status.VIOLATION
    with pytest.raises(ValueError):
        dataclasses.replace(r, status="fine")
    with pytest.raises(ValueError):
        Result(spec="S", constants={}, status="fine")
    v = Violation("Inv", "invariant", ())
    assert v.kind is ViolationKind.INVARIANT
    with pytest.raises(ValueError):
        Violation("Inv", "invariants", ())


def test_a_violation_run_has_typed_fields() -> None:
    res = check(CounterBug())
    assert res.status is Status.VIOLATION and res.exit_code == 1
    assert res.violation is not None and res.violation.kind is ViolationKind.INVARIANT
    assert res.to_json()["status"] == "violation"


def test_results_and_violations_are_immutable() -> None:
    # every field of a run's result and of its violation refuses assignment, and no
    # attribute can be added (slots): a later stage makes a new one with replace()
    res = check(CounterBug())
    v = res.violation
    assert v is not None
    for obj in (res, v, v.trace[0]):
        for f in dataclasses.fields(obj):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, f.name, getattr(obj, f.name))
        with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
            obj.extra = 1  # type: ignore[union-attr]
        assert not hasattr(obj, "__dict__")
    before = json.dumps(res.to_json(), sort_keys=True)
    later = dataclasses.replace(res, status=Status.INCOMPLETE, reason="interrupted")
    assert later.status is Status.INCOMPLETE and res.status is Status.VIOLATION
    assert json.dumps(res.to_json(), sort_keys=True) == before
    w = dataclasses.replace(v, also_violated=("Other",))
    assert w.also_violated == ("Other",) and v.also_violated == ()


def test_every_kind_is_a_member_and_a_misspelled_one_fails() -> None:
    # a misspelled member is an AttributeError, not a comparison that is silently False
    for enum_type in (Status, ViolationKind, RoleKind, VerdictKind, Fairness):
        with pytest.raises(AttributeError):
            _ = enum_type.INVARIANTS  # type: ignore[attr-defined]
    step = TraceStep(None, {}, {})
    assert Target("Inv", "invariant").kind is ViolationKind.INVARIANT
    assert Verdict("deadlock", 1).kind is VerdictKind.DEADLOCK
    with pytest.raises(ValueError):
        Target("Inv", "invariants")
    with pytest.raises(ValueError):
        Verdict("deadlocks", 1)
    decl = PredicateDecl(lambda self, s: True, "invariant", name="P")
    assert decl.kind is RoleKind.INVARIANT
    with pytest.raises(ValueError):
        PredicateDecl(lambda self, s: True, "invariants", name="P")
    assert Violation("D", "deadlock", (step,)).kind is ViolationKind.DEADLOCK
    wf = FairnessCondition("weak", "Tick", "Tick", (0,))
    assert wf.kind is Fairness.WEAK and wf.name == "WF(Tick)"
    assert FairnessCondition(Fairness.STRONG, "Tick", "Tick", (0,)).name == "SF(Tick)"
    with pytest.raises(ValueError):
        FairnessCondition("weakly", "Tick", "Tick", (0,))
