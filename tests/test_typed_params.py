"""Action parameters of any finite type and parameters over the members of a state set.

``@action(m=Msg)`` (a record type), ``@action(S=SetOf(RM))`` (TLA+'s ``\\E S \\in SUBSET
RM``) and ``@action(m=MemberOf("msgs"))`` (TLA+'s ``\\E m \\in msgs``). The oracles:

* TLC 2.20's counts for ``examples/tla/two_phase.py`` (TwoPhase.tla, RM = 3 and 5);
* the brute-force BFS (scalar evaluator, one state at a time);
* the batch evaluator against the scalar one on random states (hypothesis);
* ``MemberOf`` against the same spec written with a parameter over the whole element
  type and the membership test in its guard by hand: the same state graph, the same
  generated count, instance by instance;
* the values a ``MemberOf`` action body is called with, on batches: only members of
  some state of the batch.
"""

from __future__ import annotations

import enum
import json

import numpy as np
import pytest
from bruteforce import brute_force
from evalcheck import assert_batch_matches_scalar
from hypothesis import given, settings
from hypothesis import strategies as st

from examples.tla.two_phase import Msg as TPMsg
from examples.tla.two_phase import MsgType, TwoPhase, TwoPhaseBugEagerCommit
from modelcheck import (
    Bag,
    Enum,
    Ids,
    Int,
    MemberOf,
    Record,
    Seq,
    SetOf,
    Spec,
    SpecDefinitionError,
    Union,
    action,
    explore,
    invariant,
    where,
)
from modelcheck.kernel import Kernel
from modelcheck.trace import Trace, loads_trace, trace_to_itf
from modelcheck.trace.itf import dumps_itf
from modelcheck.trace.model import dumps_trace_json
from modelcheck.trace.render import render_trace
from modelcheck.trace.replay import replay
from modelcheck.web.states import params_json, parse_path

# -- TwoPhase.tla against TLC -------------------------------------------------------


@pytest.mark.parametrize("n, distinct, generated, depth", [
    (3, 288, 1_146, 11),     # TLC 2.20 -workers 1, RM = {r1, r2, r3}
    (5, 8_832, 58_146, 17),  # RM = {r1, ..., r5}
])
def test_two_phase_matches_tlc(n: int, distinct: int, generated: int, depth: int) -> None:
    r = explore(TwoPhase(N=n))
    assert r.status == "ok", r.violation
    # TLC counts the initial state among the generated ones, and states in its depth
    assert (r.distinct_states, r.generated_states + 1, r.depth + 1) == (
        distinct, generated, depth)


def test_two_phase_matches_the_brute_force_oracle() -> None:
    spec = TwoPhase()
    r = explore(spec)
    assert (r.distinct_states, r.depth) == brute_force(spec)


class TwoPhaseByHand(TwoPhase):
    """The receiving actions over the whole message type, the membership test written
    in their guards: what ``MemberOf`` must mean."""

    @action(m=TPMsg)
    def TMRcvPrepared(self, s, t, m):
        t.tmPrepared = s.tmPrepared.with_(m.rm)
        return s.msgs.has(m) & (s.tmState == 0) & (m.type == MsgType.Prepared)

    @action(rm=TwoPhase.RM, m=TPMsg)
    def RMRcvCommitMsg(self, s, t, rm, m):
        t.rmState[rm] = 2
        return s.msgs.has(m) & (m.type == MsgType.Commit)

    @action(rm=TwoPhase.RM, m=TPMsg)
    def RMRcvAbortMsg(self, s, t, rm, m):
        t.rmState[rm] = 3
        return s.msgs.has(m) & (m.type == MsgType.Abort)


@pytest.mark.parametrize("n", [2, 3])
def test_member_of_equals_the_guard_written_by_hand(n: int) -> None:
    a, b = explore(TwoPhase(N=n)), explore(TwoPhaseByHand(N=n))
    assert (a.distinct_states, a.generated_states, a.depth) == (
        b.distinct_states, b.generated_states, b.depth)
    ka, kb = Kernel(TwoPhase(N=n), symmetry=False), Kernel(TwoPhaseByHand(N=n), symmetry=False)
    assert [i.label for i in ka.actions] == [i.label for i in kb.actions]
    # instance by instance: the same successors from every reachable state
    seen, todo = set(), [tuple(c) for c in ka.initial_states()]
    while todo:
        c = todo.pop()
        if c in seen:
            continue
        seen.add(c)
        sa = [(i.label, tuple(x)) for i, x in ka.successors(list(c))]
        sb = [(i.label, tuple(x)) for i, x in kb.successors(list(c))]
        assert sa == sb
        todo.extend(x for _, x in sa)


# -- a spec with every form, for the evaluator oracles ------------------------------

P = Ids(1, 3)


class Kind(enum.IntEnum):
    req = 0
    ack = 1


FMsg = Record(type=Enum(Kind), rm=P)


class Forms(Spec):
    """A record parameter, a subset parameter, MemberOf a set of records, of a bag and
    of a set of ids."""

    check_deadlock = False
    msgs = SetOf(FMsg)
    chan = Bag(Record(type=Enum(Kind), n=Int(0, 1)), 2)
    held = SetOf(P)
    count = Int(0, 3)

    @action(m=FMsg)
    def Send(self, s, t, m):
        t.msgs = s.msgs.with_(m)
        return (m.type == Kind.req) & ~s.msgs.has(m)

    @action(m=MemberOf("msgs"))
    def Reply(self, s, t, m):
        t.msgs = s.msgs.without(m)
        t.chan = s.chan.add({"type": Kind.ack, "n": (m.rm == 2) * 1})
        return (m.type == Kind.req) & (s.chan.size() < 2)

    @action(c=MemberOf("chan"))
    def Deliver(self, s, t, c):
        t.chan = s.chan.remove(c)
        t.count = s.count + 1 + c.n
        return s.count + 1 + c.n <= 3

    @action(S=SetOf(P))
    def Acquire(self, s, t, S):
        t.held = s.held | S
        return (S.size() == 2) & (s.held & S).is_empty() & (s.count > 0)

    @action(p=MemberOf("held"))
    def Release(self, s, t, p):
        # an int parameter (a member of a set of ids): never evaluated on the family grid
        t.held = s.held.without(p)
        t.count = s.count - 1
        return s.count > 1

    @invariant
    def Bounded(self, s):
        return s.msgs.size() <= 3


def test_forms_match_the_brute_force_oracle() -> None:
    spec = Forms()
    r = explore(spec)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == brute_force(spec)
    fired = {c.name: c.fired for c in r.coverage}
    assert all(fired[a] > 0 for a in ("Send", "Reply", "Deliver", "Acquire", "Release"))


def _state(spec: Spec, data) -> list[int]:
    return [data.draw(st.integers(c.lo, c.hi)) for c in spec.layout.cells]


@settings(max_examples=40, deadline=None)
@given(data=st.data(), which=st.sampled_from(["forms", "two_phase"]),
       family_min=st.sampled_from([2, 8]))
def test_batch_matches_scalar_on_random_states(data, which: str, family_min: int) -> None:
    # family_min=2: families of a few instances are evaluated on the (instance, state)
    # grid, which must leave MemberOf actions to the per-instance evaluator
    spec = Forms() if which == "forms" else TwoPhase()
    k = Kernel(spec, symmetry=False, family_min=family_min)
    states = [_state(spec, data) for _ in range(data.draw(st.integers(2, 8)))]
    assert_batch_matches_scalar(k, states)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_member_of_body_sees_only_members_of_its_batch(data) -> None:
    seen: list[tuple[int, int]] = []

    class Watched(Forms):
        @action(m=MemberOf("msgs"))
        def Reply(self, s, t, m):
            seen.append((int(m.type), int(m.rm)))
            return Forms.Reply.fn(self, s, t, m)

    spec = Watched()
    k = Kernel(spec, symmetry=False)
    states = [_state(spec, data) for _ in range(data.draw(st.integers(2, 6)))]
    words = np.stack([spec.layout.pack(c) for c in states])
    k.expand(words)
    members = set()
    for c in states:
        members |= {(Kind[m["type"]].value, m["rm"])
                    for m in spec.layout.values_from_cells(c)["msgs"]}
    assert set(seen) == members


# -- labels, traces, fairness --------------------------------------------------------


def test_labels_show_values_as_tla_writes_them() -> None:
    labels = {i.label for i in Forms().actions}
    assert 'Reply([type |-> "req", rm |-> 2])' in labels
    assert "Acquire({1, 3})" in labels
    r = explore(TwoPhaseBugEagerCommit())
    assert r.status == "violation" and r.violation.property == "TCConsistent"
    text = render_trace(Trace.from_result(r))
    assert 'TMRcvPrepared(m=[type |-> "Prepared", rm |-> 1])' in text
    assert 'RMRcvCommitMsg(rm=1, m=[type |-> "Commit"])' in text


@pytest.mark.parametrize("fmt", ["itf", "json"])
def test_traces_round_trip_and_replay(fmt: str) -> None:
    spec = TwoPhaseBugEagerCommit()
    t = Trace.from_result(explore(spec))
    text = dumps_itf(trace_to_itf(t)) if fmt == "itf" else dumps_trace_json(t)
    back = loads_trace(text, source_file="t.itf.json" if fmt == "itf" else "t.json")
    assert [dict(s.params) for s in back.steps] == [dict(s.params) for s in t.steps]
    assert replay(spec, back).ok


def test_fairness_names_instances_with_values() -> None:
    class Fair(Forms):
        @action(m=MemberOf("msgs"), fair="weak")
        def Reply(self, s, t, m):
            return Forms.Reply.fn(self, s, t, m)

    names = {c.name for c in Fair().fairness_conditions}
    assert 'WF(Reply(m=[type |-> "req", rm |-> 1]))' in names


# -- refusals -----------------------------------------------------------------------


@pytest.mark.parametrize("dom, why", [
    (MemberOf("nope"), "nope is no state variable"),
    (MemberOf("count"), "count is a variable of type 0..3"),
    (SetOf(Ids(1, 17)), "at most 65,536"),
])
def test_bad_domains_are_refused(dom, why: str) -> None:
    class Bad(Forms):
        @action(x=dom)
        def Extra(self, s, t, x):
            return False

    with pytest.raises(SpecDefinitionError, match=why):
        Bad()


def test_the_explorer_page_gets_and_sends_back_compound_parameters() -> None:
    spec = TwoPhase()
    cells = Kernel(spec, symmetry=False).initial_states()[0]
    inst = next(i for i in spec.actions if i.name == "TMRcvPrepared")
    raw = [{"action": None, "params": {}, "cells": list(cells)},
           {"action": inst.name, "params": params_json(dict(inst.params)),
            "cells": list(cells)}]
    back = parse_path(spec.layout, json.loads(json.dumps(raw)))
    assert back[1][1] == dict(inst.params)
    assert spec.action_by_label(inst.name, back[1][1]) is inst


# -- message unions ------------------------------------------------------------------


class Shape(enum.IntEnum):
    req = 0
    ack = 1
    stop = 2


Note = Union("type", Shape, req=Record(src=P, n=Int(0, 1)), ack=Record(src=P), stop=None)


class Unions(Spec):
    """A union of record shapes in a bag, a sequence and a plain variable: literals
    with a constant and with a state-dependent tag, a change of shape, MemberOf."""

    check_deadlock = False
    chan = Bag(Note, 1)
    log = Seq(Note, 2)
    last = Note

    @action(p=P)
    def Ask(self, s, t, p):
        t.chan = s.chan.add({"type": Shape.req, "src": p, "n": (s.log.len() > 0) * 1})
        return ~s.chan.has({"type": Shape.req, "src": p, "n": (s.log.len() > 0) * 1})

    @action(m=MemberOf("chan"))
    def Answer(self, s, t, m):
        reply = m.with_fields(type=where(m.n == 1, Shape.stop, Shape.ack))
        t.chan = s.chan.remove(m)
        t.log = s.log.append(reply)
        t.last = {"type": where(m.type == Shape.req, Shape.ack, Shape.stop), "src": m.src}
        return (m.type == Shape.req) & (s.log.len() < 2)

    @invariant
    def AcksNameTheirSource(self, s):
        return (s.last.type != Shape.ack) | (s.last.src >= 1)


def test_unions_match_the_brute_force_oracle() -> None:
    spec = Unions()
    r = explore(spec)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert spec.layout.vars["last"].btype.n_values == 3 * 2 + 3 + 1  # no filler fields


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_union_batch_matches_scalar_and_fields_match_the_values(data) -> None:
    spec = Unions()
    k = Kernel(spec, symmetry=False)
    states = [c for c in (_state(spec, data) for _ in range(data.draw(st.integers(2, 6))))
              if list(spec.layout.cells_from_values(spec.layout.values_from_cells(c))) == c]
    if len(states) < 1:
        return
    assert_batch_matches_scalar(k, states)
    words = np.stack([spec.layout.pack(c) for c in states])
    b = k.batch_view(words)
    for row, c in enumerate(states):
        want = spec.layout.values_from_cells(c)["last"]
        for view, pick in ((k.scalar_view(c), lambda x: x),
                           (b, lambda x, r=row: np.asarray(x)[r])):
            assert Shape(int(pick(view.last.type))).name == want["type"]
            if "src" in want:
                assert int(pick(view.last.src)) == want["src"]


def test_union_values_show_as_tla_records() -> None:
    spec = Unions()
    labels = {i.label for i in spec.actions}
    assert 'Answer([type |-> "req", src |-> 2, n |-> 0])' in labels
    assert 'Answer([type |-> "stop"])' in labels
    r = explore(TwoPhaseBugEagerCommit())
    t = Trace.from_result(r)
    back = loads_trace(dumps_itf(trace_to_itf(t)), source_file="t.itf.json")
    assert replay(TwoPhaseBugEagerCommit(), back).ok
    assert any(dict(x) == {"type": "Commit"} for s in back.steps for x in s.state["msgs"])


def test_union_declarations_are_checked() -> None:
    with pytest.raises(SpecDefinitionError, match="one shape per member"):
        Union("type", Shape, req=Record(src=P), ack=None)
    with pytest.raises(SpecDefinitionError, match="starts with an underscore"):
        Union("_type", Shape, req=Record(src=P), ack=None, stop=None)
    with pytest.raises(SpecDefinitionError, match="which is the tag"):
        Union("type", Shape, req=Record(type=P), ack=None, stop=None)


def test_inspect_shows_the_domains_as_tla_does(runner) -> None:
    from modelcheck.cli import cli

    r = runner.invoke(cli, ["inspect", "examples/tla/two_phase.py:TwoPhase"])
    assert r.exit_code == 0, r.output
    assert "RMRcvCommitMsg(rm \\in RM, m \\in msgs)  [15 instances]" in r.output
    assert "TMRcvPrepared(m \\in msgs)  [5 instances]" in r.output


class WideMembers(Spec):
    """``MemberOf`` a set over 130 ids: its members sit in three chunks of the packed set,
    so the batch evaluator's bit planes are taken from every chunk, at every bit."""

    check_deadlock = False
    held = SetOf(Int(0, 129))
    budget = Int(0, 3)

    @action(x=range(0, 130, 7))
    def Take(self, s, t, x):
        t.held = s.held.with_(x)
        t.budget = s.budget + 1
        return (s.budget < 3) & ~s.held.has(x)

    @action(p=MemberOf("held"))
    def Give(self, s, t, p):
        t.held = s.held.without(p)
        return s.held.size() > 1


def test_member_of_a_set_of_many_chunks_matches_the_brute_force_oracle() -> None:
    spec = WideMembers()
    assert len(spec.layout.cells) > 2  # the set takes several chunks
    r = explore(spec)
    assert (r.distinct_states, r.depth) == brute_force(spec)


@settings(max_examples=40, deadline=None)
@given(members=st.lists(st.sets(st.integers(0, 129), max_size=6), min_size=2, max_size=8))
def test_member_of_a_set_of_many_chunks_batch_matches_scalar(members) -> None:
    spec = WideMembers()
    k = Kernel(spec, symmetry=False)
    states = [k.layout.cells_from_values({"held": frozenset(ms), "budget": len(ms) % 4})
              for ms in members]
    assert_batch_matches_scalar(k, states)


# -- MemberOf with a test of the element -----------------------------------------------


def _receivers(kept: frozenset[tuple[int, int, int]], by_hand: bool) -> type[Spec]:
    """Notes sent into one set and taken out of it by two receiving actions whose
    parameter ranges over the members that pass a test of the element (``kept``, keys
    of the notes); ``by_hand``: over every member, the test in the guard instead."""

    def key(m) -> tuple[int, int, int]:
        return int(m.type), int(m.src), int(m.n)

    def take_test(m):
        return key(m) in kept

    def stop_test(m, p, self):
        return (key(m) in kept) & (m.src != p) & (self.Hi >= 2)

    class Receivers(Spec):
        check_deadlock = False
        Hi = 2
        msgs = SetOf(Note)
        got = SetOf(P)

        @action(p=P, tag=Shape)
        def Send(self, s, t, p, tag):
            t.msgs = s.msgs.with_({"type": tag, "src": p, "n": 0} if tag == Shape.req else
                                  {"type": tag, "src": p} if tag == Shape.ack else
                                  {"type": tag})
            return s.msgs.size() < 2

        if by_hand:
            @action(m=MemberOf("msgs"))
            def Take(self, s, t, m):
                t.msgs = s.msgs.without(m)
                t.got = s.got.with_(m.src)
                return take_test(m)

            @action(p=P, m=MemberOf("msgs"))
            def Stop(self, s, t, p, m):
                t.got = s.got.without(p)
                return stop_test(m, p, self)
        else:
            @action(m=MemberOf("msgs", take_test))
            def Take(self, s, t, m):
                t.msgs = s.msgs.without(m)
                t.got = s.got.with_(m.src)
                return True

            @action(p=P, m=MemberOf("msgs", stop_test))
            def Stop(self, s, t, p, m):
                t.got = s.got.without(p)
                return True

    return Receivers


def _note_keys() -> list[tuple[int, int, int]]:
    elem = _receivers(frozenset(), False)().layout.vars["msgs"].btype.elem
    return [(int(m.type), int(m.src), int(m.n))
            for m in (elem.value_at(i) for i in range(elem.n_values))]


@settings(max_examples=15, deadline=None)
@given(kept=st.sets(st.sampled_from(_note_keys())))
def test_member_of_with_a_test_equals_the_test_in_the_guard(kept) -> None:
    a = _receivers(frozenset(kept), False)()
    b = _receivers(frozenset(kept), True)()
    ra, rb = explore(a), explore(b)
    assert ra.status == rb.status == "ok"
    assert (ra.distinct_states, ra.generated_states, ra.depth) == (
        rb.distinct_states, rb.generated_states, rb.depth)
    assert (ra.distinct_states, ra.depth) == brute_force(a)
    # the instances are those of the values that pass: Take has one per kept note
    takes = [i for i in a.actions if i.name == "Take"]
    assert len(takes) == len(kept)
    fired_a = {c.name: c.fired for c in ra.coverage}
    fired_b = {c.name: c.fired for c in rb.coverage}
    # (an action none of whose values passes has no instance, hence no coverage row)
    assert {n: fired_a.get(n, 0) for n in fired_b} == fired_b


def test_member_of_tests_are_checked() -> None:
    class NoBool(Forms):
        @action(m=MemberOf("msgs", lambda m: m.rm))
        def Extra(self, s, t, m):
            return False

    with pytest.raises(SpecDefinitionError, match="keep must give a boolean"):
        NoBool()

    class Unknown(Forms):
        @action(m=MemberOf("msgs", lambda m, q: m.rm == q))
        def Extra(self, s, t, m):
            return False

    with pytest.raises(SpecDefinitionError, match="q is not a parameter declared before"):
        Unknown()
    with pytest.raises(SpecDefinitionError, match="keep is a test of the element"):
        MemberOf("msgs", 3)  # type: ignore[arg-type]


def test_inspect_shows_the_kept_values(runner) -> None:
    from modelcheck.cli import cli

    r = runner.invoke(cli, ["inspect", "examples/tla/multi_paxos.py:MultiPaxos"])
    assert r.exit_code == 0, r.output
    assert "HandlePrepare(r \\in Replicas, m \\in msgs (6 element values kept))" in r.output
