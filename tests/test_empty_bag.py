"""An empty bag prints as the empty bag, ``{}``, in every output, and round-trips.

A bag's trace value is a map from its elements to their (positive) counts, so the
empty bag is the empty map. It used to print nothing in ``modelcheck check``'s
initial state and ``<absent>`` in a step that emptied or filled it.
"""

from __future__ import annotations

import json

from modelcheck import Array, Bag, Ids, Int, Spec, action, explore, invariant
from modelcheck.cli import cli
from modelcheck.result import json_value
from modelcheck.trace import Trace
from modelcheck.trace.itf import dumps_itf
from modelcheck.trace.model import load_trace, loads_trace, trace_to_itf
from modelcheck.trace.render import changes, leaves, render_states, render_trace


class Boxes(Spec):
    """Two bags of 0s and 1s; ``Put`` adds a copy of ``v`` to box ``p``."""

    check_deadlock = False
    Procs = Ids(1, 2)
    box = Array(Procs, Bag(Int(0, 1), 2))

    @action(p=Procs, v=range(2))
    def Put(self, s, t, p, v):
        t.box[p] = s.box[p].add(v)
        return s.box[p].count(v) < 2

    @action(p=Procs, v=range(2))
    def Take(self, s, t, p, v):
        t.box[p] = s.box[p].remove(v)
        return s.box[p].has(v)

    @invariant
    def NotTwice(self, s):
        return s.box[1].count(0) < 2


def test_changes_of_a_bag() -> None:
    # same elements: per element; elements added or removed: the whole bag
    assert changes({"b": {0: 1}}, {"b": {0: 2}}, ["b"]) == [("b[0]", 1, 2)]
    assert changes({"b": {}}, {"b": {0: 1}}, ["b"]) == [("b", {}, {0: 1})]
    assert changes({"b": {0: 1}}, {"b": {}}, ["b"]) == [("b", {0: 1}, {})]
    assert changes({"b": {0: 1}}, {"b": {0: 1, 1: 1}}, ["b"]) == [
        ("b", {0: 1}, {0: 1, 1: 1})]
    # a bag inside an array: the array per index, the bag as above
    assert changes({"box": {1: {}, 2: {}}}, {"box": {1: {0: 1}, 2: {}}}, ["box"]) == [
        ("box[1]", {}, {0: 1})]
    assert leaves("chan", {}) == [("chan", {})]
    assert leaves("box", {1: {}, 2: {0: 2}}) == [("box[1]", {}), ("box[2][0]", 2)]


def test_check_report_shows_the_empty_bag(runner) -> None:
    r = runner.invoke(cli, ["check", "examples/mailbox.py:MailboxBug", "-q"])
    assert r.exit_code == 1, r.output
    assert "<absent>" not in r.output
    lines = r.output.splitlines()
    assert "      chan = {}" in lines  # the initial state, in full
    assert "      chan: {} -> {[src: 1, kind: REQ]: 1}" in lines
    assert "      chan: {[src: 1, kind: REQ]: 1} -> {}" in lines


def test_a_bag_in_an_array() -> None:
    spec = Boxes()
    r = explore(spec)
    assert r.status == "violation"
    trace = Trace.from_violation(spec, r.violation)
    assert [s.state["box"] for s in trace.steps] == [
        {1: {}, 2: {}}, {1: {0: 1}, 2: {}}, {1: {0: 2}, 2: {}}]
    text = "\n".join(render_states(trace, compact=True))
    assert "box[1] = {}" in text and "box[2] = {}" in text
    assert "box[1]: {} -> {0: 1}" in text and "box[1][0]: 1 -> 2" in text
    assert "<absent>" not in text


def test_the_empty_bag_round_trips(runner, tmp_path) -> None:
    out = tmp_path / "run"
    r = runner.invoke(cli, ["check", "examples/mailbox.py:MailboxBug", "-q", "--out", str(out),
                            "--format", "json"])
    assert r.exit_code == 1, r.output
    doc = json.loads(r.stdout)
    chans = [s["state"]["chan"] for s in doc["violation"]["trace"]]
    assert chans[0] == {} and chans[-1] == {} and len(chans[2]) == 1
    itf = json.loads((out / "trace.itf.json").read_text())
    assert itf["states"][0]["chan"] == {"#map": []}
    for name in ("trace.itf.json", "trace.json"):
        t = load_trace(out / name)
        assert t.steps[0].state["chan"] == {} and t.steps[-1].state["chan"] == {}
        shown = render_trace(t)
        assert "    chan  = {}" in shown.splitlines() and "<absent>" not in shown
        # written again and read back: the same states
        again = loads_trace(dumps_itf(trace_to_itf(t)))
        assert [s.state for s in again.steps] == [s.state for s in t.steps]
        assert json_value(again.steps[0].state["chan"]) == {}
        rep = runner.invoke(cli, ["trace", "replay", "examples/mailbox.py:MailboxBug",
                                  str(out / name)])
        assert rep.exit_code == 0, rep.output
