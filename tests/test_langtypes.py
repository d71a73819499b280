"""Records, sequences, sets of any finite type and bags, end to end.

``examples/mailbox.py``: ``Mailbox`` sends requests (records) through a FIFO queue
(a ``Seq``) into an unordered channel that may hold duplicates (a ``Bag``); acknowledged senders go
into a ``SetOf`` ids, every message seen into a ``SetOf`` records. It is checked
by the batch explorer and by the brute-force oracle (scalar evaluator only), with
and without symmetry; its counterexample renders, round-trips through ITF and
replays; overflowing the queue or the bag on an enabled transition is a spec error
naming the variable, its bound, the action and the state, and never on a disabled
one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from bruteforce import brute_force, random_walk

from examples.mailbox import Mailbox, MailboxBug, MailboxSym
from modelcheck import Bag, Int, Seq, Spec, action, explore
from modelcheck.errors import SpecEvaluationError
from modelcheck.kernel import Kernel
from modelcheck.store import key_ints
from modelcheck.trace import Trace, loads_trace, trace_to_itf
from modelcheck.trace.itf import dumps_itf
from modelcheck.trace.render import render_trace
from modelcheck.trace.replay import replay


def test_counts_match_the_brute_force_oracle() -> None:
    spec = Mailbox()
    r = explore(spec)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert (r.distinct_states, r.depth) == (334, 19)


def test_batch_and_scalar_agree_on_random_states() -> None:
    spec = Mailbox()
    k = Kernel(spec, symmetry=False)
    rng = np.random.default_rng(7)
    states = [random_walk(k, list(rng.integers(0, 100, size=int(rng.integers(0, 12)))))
              for _ in range(40)]
    words = np.stack([spec.layout.pack(c) for c in states])
    ex = k.expand(words)
    for row, cells in enumerate(states):
        scalar = sorted((inst.id, k.fingerprint(nxt)) for inst, nxt in k.successors(cells))
        mine = ex.parent_rows == row
        assert sorted(zip(ex.action_ids[mine].tolist(), key_ints(ex.child_fps[mine]))) == scalar


def _permute(values: dict, pi: dict[int, int]) -> dict:
    """A state of Mailbox with the ids permuted, written from the values (not cells)."""
    def rec(r):
        return {**r, "src": pi.get(r["src"], r["src"])}

    return {
        "queue": [rec(m) for m in values["queue"]],
        "chan": {frozenset(rec(k).items()): n for k, n in values["chan"].items()},
        "acked": frozenset(pi[i] for i in values["acked"]),
        "seen": frozenset(frozenset(rec(m).items()) for m in values["seen"]),
        "last": rec(values["last"]),
    }


def test_symmetry_counts_orbits() -> None:
    """Under symmetry the count is the number of orbits of the unreduced state space,
    computed here by permuting values."""
    spec = Mailbox()
    k = Kernel(spec, symmetry=False)
    seen, frontier = set(), [tuple(c) for c in k.initial_states()]
    seen.update(frontier)
    while frontier:
        nxt = []
        for c in frontier:
            for _, n in k.successors(list(c)):
                if tuple(n) not in seen:
                    seen.add(tuple(n))
                    nxt.append(tuple(n))
        frontier = nxt
    def norm(x):
        if isinstance(x, frozenset):
            return tuple(sorted(repr(sorted(m)) if isinstance(m, frozenset) else repr(m)
                                for m in x))
        if isinstance(x, dict):
            return tuple(sorted((repr(sorted(k)), n) for k, n in x.items()))
        if isinstance(x, list):
            return tuple(repr(sorted(m.items())) for m in x)
        return repr(sorted(x.items()))

    def key(cells):
        v = spec.layout.values_from_cells(list(cells))
        v = {**v, "queue": [dict(m) for m in v["queue"]], "last": dict(v["last"]),
             "chan": {k: n for k, n in v["chan"].items()}}
        return min(tuple((name, norm(x)) for name, x in _permute(v, pi).items())
                   for pi in ({1: 1, 2: 2}, {1: 2, 2: 1}))
    orbits = {key(c) for c in seen}
    r = explore(MailboxSym())
    assert r.status == "ok"
    assert r.distinct_states == len(orbits) < len(seen)


@pytest.fixture(scope="module")
def bug() -> tuple[Spec, Trace]:
    spec = MailboxBug()
    r = explore(spec)
    assert r.status == "violation" and r.violation.property == "AckSeen"
    return spec, Trace.from_violation(spec, r.violation)


def test_counterexample_renders(bug) -> None:
    spec, t = bug
    shown = render_trace(t)
    assert "queue = []" in shown and "chan  = {}" in shown
    assert "queue: [] -> [[kind: REQ, src: 1]]" in shown or \
        "queue: [] -> [[src: 1, kind: REQ]]" in shown


def test_itf_round_trip_and_replay(bug) -> None:
    spec, t = bug
    text = dumps_itf(trace_to_itf(t))
    doc = json.loads(text)
    last = doc["states"][-1]
    assert isinstance(last["queue"], list)
    assert "#map" in last["chan"] and "#set" in last["seen"] and "src" in last["last"]
    back = loads_trace(text, source_file="t.itf.json")
    assert [s.state for s in back.steps] == [s.state for s in t.steps]
    rep = replay(spec, back)
    assert rep.ok, rep.message


class Overflow(Spec):
    check_deadlock = False
    q = Seq(Int(0, 3), 2)
    b = Bag(Int(0, 1), 1)
    armed = Int(0, 1)

    @action
    def Push(self, s, t):
        t.q = s.q.append(1)
        return s.armed == 1

    @action
    def Put(self, s, t):
        t.b = s.b.add(0)
        return s.armed == 1

    @action
    def Arm(self, s, t):
        t.armed = 1
        return s.q.len() == 2

    @action
    def Fill(self, s, t):
        t.q = [1, 2]
        t.b = {0: 1}
        return s.q.len() == 0


def test_overflow_is_an_error_on_enabled_rows_only() -> None:
    spec = Overflow()
    k = Kernel(spec)
    full = spec.layout.cells_from_values({"q": [1, 2], "b": {0: 1}, "armed": 0})
    # disabled: the overflowing assignments are never reported
    assert [i.name for i, _ in k.successors(full)] == ["Arm"]
    assert len(k.expand(np.stack([spec.layout.pack(full)] * 3)).child_words) == 3
    armed = spec.layout.cells_from_values({"q": [1, 2], "b": {0: 1}, "armed": 1})
    with pytest.raises(SpecEvaluationError) as e:
        k.successors(armed)
    msg = str(e.value)
    assert "action Push makes q longer than its capacity 2 (length 3)" in msg
    assert "in the state [q.len=2, q[1]=1, q[2]=2" in msg
    with pytest.raises(SpecEvaluationError, match="action Push makes q longer than its "
                                                  "capacity 2"):
        k.expand(np.stack([spec.layout.pack(full), spec.layout.pack(armed)]))
    with pytest.raises(SpecEvaluationError, match="action Put puts 2 copies of 0 in b, more "
                                                  "than its max_count 1"):
        k.step(armed, spec.actions[1])


def test_inspect_shows_the_new_types() -> None:
    rows = {r["name"]: r for r in Mailbox().layout.describe()}
    assert rows["queue"]["domain"] == "Seq([src: 1..2, kind: {REQ, ACK}], 2)"
    assert rows["queue"]["cells"] == 5 and rows["queue"]["bits"] == 2 + 2 * 2
    assert rows["chan"]["domain"] == "Bag([src: 1..2, kind: {REQ, ACK}], 2)"
    assert rows["chan"]["cells"] == 4 and rows["chan"]["bits"] == 8
    assert rows["seen"]["domain"] == "SUBSET [src: 1..2, kind: {REQ, ACK}]"
    assert rows["seen"]["bits"] == 4
    names = [c.name for c in Mailbox().layout.cells]
    assert names[:5] == ["queue.len", "queue[1].src", "queue[1].kind", "queue[2].src",
                         "queue[2].kind"]
    assert "chan[[src: 1, kind: REQ]]" in names and "last.src" in names


def test_cli_run_folder_and_trace_commands(tmp_path) -> None:
    from click.testing import CliRunner

    from modelcheck.cli import cli

    runner = CliRunner()
    out = tmp_path / "run"
    r = runner.invoke(cli, ["check", "examples/mailbox.py:MailboxBug", "-q", "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "seen: {} -> {[src: 1, kind: ACK]}" in r.output
    for name in ("trace.itf.json", "trace.json"):
        shown = runner.invoke(cli, ["trace", "show", str(out / name)])
        assert shown.exit_code == 0, shown.output
        # (ITF writes record fields sorted, so they read back in that order)
        # (a bag that loses its last element changes as a whole, into the empty bag)
        assert ("chan: {[src: 1, kind: REQ]: 1} -> {}" in shown.output
                or "chan: {[kind: REQ, src: 1]: 1} -> {}" in shown.output)
        rep = runner.invoke(cli, ["trace", "replay", "examples/mailbox.py:MailboxBug",
                                  str(out / name)])
        assert rep.exit_code == 0, rep.output
    ev = runner.invoke(cli, ["trace", "eval", str(out / "trace.itf.json"), "len(queue)"])
    assert ev.output.splitlines()[1:] == ["step 2 (Send(p=1)): 1", "step 3 (Deliver): 0",
                                          "step 4 (Ack(p=1)): 0"]
    ins = runner.invoke(cli, ["inspect", "examples/mailbox.py"])
    assert "SUBSET [src: 1..2, kind: {REQ, ACK}]" in ins.output

