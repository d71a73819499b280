"""Variable types as objects: a new type is one class, and lists stay lists in traces.

``Point`` below is defined in this file only, touching no module of modelcheck: a
spec using it checks, its counterexample renders (report, ``trace show``, graph
labels), and its trace survives ITF and JSON round trips and replays against the
spec. The trace readers keep a JSON list a list (a set is ``{"#set": [...]}``), and
a ``SetOf`` variable accepts either when a trace is replayed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from modelcheck import Ids, Int, SetOf, Spec, action, explore, has, invariant, with_
from modelcheck.graph import build_graph
from modelcheck.report import render_text
from modelcheck.trace import (
    Trace,
    TraceMismatchError,
    dumps_trace_json,
    loads_trace,
    trace_to_itf,
)
from modelcheck.trace.itf import dumps_itf
from modelcheck.trace.render import render_trace
from modelcheck.trace.replay import replay
from modelcheck.types import (
    BoundType,
    ScalarType,
    Type,
    ValueDomainError,
    ValueKindError,
    resolve,
)

# --------------------------------------------------------------------------- a new type


class BoundPoint(ScalarType):
    """A point ``(x, y)`` of a ``w`` x ``h`` grid in one cell: code ``x * h + y``.

    Its Python and trace value is the tuple ``(x, y)`` (ITF ``#tup``); it shows as
    ``<<x, y>>``, as TLA+ writes a tuple.
    """

    kind = "point"

    def __init__(self, w: int, h: int, init: tuple[int, int]) -> None:
        self.w, self.h = w, h
        super().__init__(0, w * h, init[0] * h + init[1], f"(0..{w - 1}) \\X (0..{h - 1})")

    def to_python(self, code: int) -> Any:
        return divmod(code, self.h)

    def from_python(self, value: Any) -> int:
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return int(value[0]) * self.h + int(value[1])
        return super().from_python(value)

    def from_itf(self, value: Any) -> int:
        if not (isinstance(value, tuple) and len(value) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
            raise ValueKindError("a pair of integers <<x, y>>")
        x, y = value
        if not (0 <= x < self.w and 0 <= y < self.h):
            raise ValueDomainError(f"= <<{x}, {y}>> is outside {self.text}")
        return x * self.h + y

    def display(self, code: int) -> str:
        x, y = self.to_python(code)
        return f"<<{x}, {y}>>"


class Point(Type):
    """A point of a ``w`` x ``h`` grid; ``w`` and ``h`` may be constants."""

    def __init__(self, w: Any, h: Any, *, init: tuple[int, int] = (0, 0)) -> None:
        self.w, self.h, self.init = w, h, init

    def bound(self, consts: Mapping[str, Any]) -> BoundType:
        return BoundPoint(int(resolve(self.w, consts)), int(resolve(self.h, consts)), self.init)

    def describe(self) -> str:
        return f"({self.w!r} x {self.h!r})"


class Robot(Spec):
    """A robot walks right or up on a 3 x 2 grid; the far corner is forbidden."""

    check_deadlock = False
    pos = Point(3, 2)
    moves = Int(0, 3)

    @action
    def Right(self, s, t):
        t.pos = s.pos + 2
        t.moves = s.moves + 1
        return s.pos // 2 < 2

    @action
    def Up(self, s, t):
        t.pos = s.pos + 1
        t.moves = s.moves + 1
        return s.pos % 2 < 1

    @invariant
    def NotInTheCorner(self, s):
        return s.pos != 2 * 2 + 1


@pytest.fixture(scope="module")
def robot() -> tuple[Spec, Trace, Any]:
    spec = Robot()
    r = explore(spec)
    assert r.violation is not None
    return spec, Trace.from_violation(spec, r.violation, source="test_types.py:Robot"), r


def test_a_new_type_checks(robot) -> None:
    spec, t, r = robot
    assert (r.status, r.violation.property) == ("violation", "NotInTheCorner")
    assert (r.distinct_states, r.depth) == (6, 3)
    assert [c.kind for c in spec.layout.cells] == ["point", "int"]
    assert spec.layout.describe()[0]["domain"] == "(0..2) \\X (0..1)"
    assert r.violation.trace[-1].state["pos"] == (2, 1)
    assert json.loads(json.dumps(r.to_json()))["violation"]["trace"][-1]["state"]["pos"] \
        == [2, 1]


def test_a_new_type_renders(robot) -> None:
    spec, t, r = robot
    assert [s.state["pos"] for s in t.steps] == [(0, 0), (0, 1), (1, 1), (2, 1)]
    shown = render_trace(t)
    assert "pos   = <<0, 0>>" in shown and "pos: <<1, 1>> -> <<2, 1>>" in shown
    report = render_text(r)
    assert "pos = <<0, 0>>" in report and "pos: <<1, 1>> -> <<2, 1>>" in report
    labels = [d["label"] for _, d in build_graph(spec).nodes(data=True)]
    assert "pos=<<2, 1>>\nmoves=3" in labels


@pytest.mark.parametrize("fmt", ["itf", "json"])
def test_a_new_type_round_trips_and_replays(robot, fmt: str) -> None:
    spec, t, _ = robot
    text = dumps_itf(trace_to_itf(t)) if fmt == "itf" else dumps_trace_json(t)
    assert '"#tup"' in text
    back = loads_trace(text, source_file=f"t.{fmt}")
    assert [s.state for s in back.steps] == [s.state for s in t.steps]
    assert isinstance(back.steps[-1].state["pos"], tuple)
    rep = replay(spec, back)
    assert rep.ok, rep.message


def test_a_new_type_rejects_bad_trace_values(robot) -> None:
    spec, t, _ = robot
    doc = json.loads(dumps_trace_json(t))
    doc["steps"][1]["state"]["pos"] = {"#tup": [7, 0]}
    # a value outside its domain does not fit the spec (exit 2), as a wrong type
    with pytest.raises(TraceMismatchError,
                       match=r"pos = <<7, 0>> is outside \(0\.\.2\) \\X \(0\.\.1\)"):
        replay(spec, loads_trace(json.dumps(doc)))
    doc["steps"][1]["state"]["pos"] = [1, 0]  # a list is not a tuple
    want = r"pos is \[1, 0\] \(a sequence\); the spec expects a pair of integers"
    with pytest.raises(TraceMismatchError, match=want):
        replay(spec, loads_trace(json.dumps(doc)))


# --------------------------------------------------------------------------- lists stay lists


class Tokens(Spec):
    check_deadlock = False
    Procs = Ids(1, 3)
    holders = SetOf(Procs)

    @action(p=Procs)
    def Take(self, s, t, p):
        t.holders = with_(s.holders, p)
        return ~has(s.holders, p)

    @invariant
    def NotAll(self, s):
        return s.holders != {1, 2, 3}


@pytest.fixture(scope="module")
def tokens() -> tuple[Spec, Trace]:
    spec = Tokens()
    r = explore(spec)
    assert r.violation is not None
    return spec, Trace.from_violation(spec, r.violation)


def test_sets_are_tagged_and_lists_stay_lists_in_json_traces(tokens) -> None:
    spec, t = tokens
    doc = json.loads(dumps_trace_json(t))
    assert doc["steps"][-1]["state"]["holders"] == {"#set": [1, 2, 3]}
    assert isinstance(loads_trace(json.dumps(doc)).steps[-1].state["holders"], frozenset)
    # a plain list (as version 1 wrote sets) stays a list, nested lists too ...
    for step in doc["steps"]:
        step["state"]["holders"] = step["state"]["holders"]["#set"]
    back = loads_trace(json.dumps(doc))
    assert back.steps[-1].state["holders"] == [1, 2, 3]
    assert isinstance(back.steps[-1].state["holders"], list)
    assert "holders: [1] -> [1, 2]" in render_trace(back)
    # ... and the SetOf variable's type accepts it on replay
    rep = replay(spec, back)
    assert rep.ok, rep.message
    nested = json.loads(dumps_trace_json(t))
    nested["steps"][0]["state"]["holders"] = [[1, 2], []]
    assert loads_trace(json.dumps(nested)).steps[0].state["holders"] == [[1, 2], []]


def test_lists_stay_lists_in_itf_traces(tokens) -> None:
    spec, t = tokens
    doc = json.loads(dumps_itf(trace_to_itf(t)))
    assert doc["states"][-1]["holders"]["#set"]
    for state in doc["states"]:
        state["holders"] = state["holders"]["#set"]  # an ITF sequence
    back = loads_trace(json.dumps(doc))
    assert all(isinstance(s.state["holders"], list) for s in back.steps)
    assert replay(spec, back).ok
    # a list written back is a sequence again, never a set
    again = json.loads(dumps_itf(trace_to_itf(back)))
    assert isinstance(again["states"][-1]["holders"], list)
    assert json.loads(dumps_trace_json(back))["steps"][-1]["state"]["holders"] == [1, 2, 3]


def test_set_values_from_a_list_must_be_distinct_members(tokens) -> None:
    spec, t = tokens
    doc = json.loads(dumps_trace_json(t))
    doc["steps"][1]["state"]["holders"] = [1, 1]
    with pytest.raises(TraceMismatchError, match="has member 1 twice"):
        replay(spec, loads_trace(json.dumps(doc)))
    doc["steps"][1]["state"]["holders"] = {"#set": [4]}
    with pytest.raises(TraceMismatchError, match=r"has member 4 outside \{1, 2, 3\}"):
        replay(spec, loads_trace(json.dumps(doc)))
