"""Record fields named like any TLA+ field, and records holding functions.

A record value's own operations live in its underscore namespace (``r._type``,
``r._columns()``, ``r._with_fields(...)``), so a field may take any other name:
``type`` (as nearly every TLA+ message record has), ``columns``, ``select``,
``with_fields``, a Python keyword (read as ``r["from"]``). Only a name starting with
an underscore, or no TLA+ field name at all, is refused when the spec class is
defined. A field (or a set, sequence, bag element) may be an ``Array``: a function
value (``[forward |-> [p \\in P |-> ...]]``).

The oracles: the brute-force BFS (scalar evaluator, one state at a time) for the
counts, the batch evaluator against the scalar one on random states (hypothesis),
and the fields read in spec code against the Python values of the layout.
"""

from __future__ import annotations

import enum
import re
import textwrap

import numpy as np
import pytest
from bruteforce import brute_force
from evalcheck import assert_batch_matches_scalar
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import (
    Array,
    Bag,
    Bool,
    Enum,
    Ids,
    Int,
    Record,
    Ref,
    Seq,
    SetOf,
    Spec,
    SpecDefinitionError,
    action,
    explore,
    invariant,
)
from modelcheck.cli import cli
from modelcheck.kernel import Kernel


def _spec_with(typ: object) -> type[Spec]:
    return type("Fields", (Spec,), {"m": typ, "A": action(lambda self, s, t: True)})


@pytest.mark.parametrize("field", ["type", "columns", "select", "with_fields", "from",
                                   "class", "size", "has", "n2", "x_y"])
def test_tla_field_names_are_accepted_and_read(field: str) -> None:
    spec = _spec_with(Record(**{field: Int(0, 2), "n": Int(0, 1)}))()
    k = Kernel(spec, symmetry=False)
    cells = k.initial_states()[0]
    s = k.scalar_view(cells)
    assert int(s.m[field]) == 0
    if field.isidentifier() and field not in ("from", "class"):
        assert int(getattr(s.m, field)) == 0


@pytest.mark.parametrize("field, why", [
    ("_hidden", "starts with an underscore"),
    ("__eq__", "starts with an underscore"),
    ("_type", "starts with an underscore"),
    ("a-b", "is not a TLA+ field name"),
    ("", "is not a TLA+ field name"),
])
def test_true_clashes_are_refused(field: str, why: str) -> None:
    with pytest.raises(SpecDefinitionError, match=re.escape(why)) as e:
        _spec_with(Record(**{field: Int(0, 1), "n": Int(0, 1)}))
    assert "spec Fields, variable m: the record" in str(e.value)
    assert "rename the field" in str(e.value)


@pytest.mark.parametrize("wrap", [
    lambda r: r,
    lambda r: Array(Ids(1, 2), r),
    lambda r: SetOf(r),
    lambda r: Seq(r, 2),
    lambda r: Bag(r, 2),
    lambda r: Record(inner=r, x=Int(0, 1)),
    lambda r: Array(Ids(1, 2), Seq(Record(outer=r), 1)),
], ids=["record", "array", "set", "seq", "bag", "nested", "deep"])
def test_refused_wherever_the_record_is(wrap) -> None:
    with pytest.raises(SpecDefinitionError, match="has a field '_x'"):
        _spec_with(wrap(Record(_x=Int(0, 1))))


class Kind(enum.IntEnum):
    PREPARE = 0
    ACK = 1


P = Ids(1, 2)
#: a message record with the names a record value's methods have, and a function field
Msg = Record(type=Enum(Kind), select=Int(0, 1), fwd=Array(P, Int(0, 2)))


class Messages(Spec):
    """Records named like TLA+ messages, with function fields, in a set, a bag and a
    sequence; fields read as ``m.type``, ``m.select``, ``m["from"]``, ``m.fwd[p]``."""

    check_deadlock = False
    cur = Record(type=Enum(Kind), columns=Int(0, 2), fwd=Array(P, Int(0, 2)),
                 **{"from": P})
    msgs = SetOf(Msg)
    chan = Bag(Record(type=Enum(Kind), fwd=Array(P, Bool())), 1)
    log = Seq(Msg, 2)

    @action(p=P)
    def Forward(self, s, t, p):
        c = s.cur
        t.cur = c.with_fields(fwd=c.fwd.set_at(p, c.fwd[p] + 1), **{"from": p})
        return c.fwd[p] < 2

    @action(p=P)
    def Send(self, s, t, p):
        c = s.cur
        m = {"type": c.type, "select": (c["from"] == p) * 1, "fwd": c.fwd}
        t.msgs = s.msgs.with_(m)
        t.chan = s.chan.add({"type": c.type, "fwd": {1: c.fwd[1] > 0, 2: c.fwd[p] > 1}})
        return ~s.msgs.has(m) & (s.chan.size() == 0)

    @action
    def Flip(self, s, t):
        c = s.cur
        t.cur = c._with_fields(type=Kind.ACK, columns=c.columns + 1)
        return (c.type == Kind.PREPARE) & (c.columns < 2)

    @action
    def Drain(self, s, t):
        m = s.chan.choose()
        t.chan = s.chan.remove(m)
        t.log = s.log.append({"type": m.type, "select": m.fwd[2] * 1, "fwd": {1: 0, 2: 1}})
        return ~s.chan.is_empty() & (s.log.len() < 2)

    @invariant
    def SelectedAreAcks(self, s):
        return (s.log.len() < 2) | (s.log.at(1).select <= 1)


def test_counts_match_the_brute_force_oracle() -> None:
    spec = Messages()
    r = explore(spec)
    assert r.status == "ok", r.violation
    assert (r.distinct_states, r.depth) == brute_force(spec)
    assert r.distinct_states > 50


def _random_cells(spec: Spec, data) -> list[int]:
    return [data.draw(st.integers(c.lo, c.hi)) for c in spec.layout.cells]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_batch_matches_scalar_on_random_states(data) -> None:
    spec = Messages()
    k = Kernel(spec, symmetry=False)
    states = [_random_cells(spec, data) for _ in range(data.draw(st.integers(2, 6)))]
    states = [c for c in states if _sane(spec, c)] or [k.initial_states()[0]] * 2
    assert_batch_matches_scalar(k, states)


def _sane(spec: Spec, cells: list[int]) -> bool:
    """Random cells that are a state (sequence slots past the length at their first
    value, as every stored state has them)."""
    try:
        values = spec.layout.values_from_cells(cells)
        return list(spec.layout.cells_from_values(values)) == list(cells)
    except Exception:
        return False


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fields_read_in_spec_code_equal_the_python_values(data) -> None:
    """``s.cur.type``, ``s.cur["from"]``, ``s.cur.fwd[p]`` on one state and on a batch
    against the values the layout decodes (an independent path: no expression values)."""
    spec = Messages()
    k = Kernel(spec, symmetry=False)
    states = [c for c in (_random_cells(spec, data) for _ in range(4)) if _sane(spec, c)]
    if not states:
        return
    words = np.stack([spec.layout.pack(c) for c in states])
    b = k.batch_view(words)
    for row, cells in enumerate(states):
        want = spec.layout.values_from_cells(cells)["cur"]
        s = k.scalar_view(cells)
        for view, pick in ((s, lambda x: x), (b, lambda x, r=row: np.asarray(x)[r])):
            cur = view.cur
            assert Kind(int(pick(cur.type))).name == want["type"]
            assert int(pick(cur.columns)) == want["columns"]
            assert int(pick(cur["from"])) == want["from"]
            assert [int(pick(cur.fwd[p])) for p in (1, 2)] == [want["fwd"][1], want["fwd"][2]]
            assert cur._type.describe().startswith("[type: ")


def test_the_value_namespace_stays_reachable() -> None:
    spec = Messages()
    k = Kernel(spec, symmetry=False)
    cur = k.scalar_view(k.initial_states()[0]).cur
    assert len(cur._columns()) == spec.layout.vars["cur"].btype.n_cells
    assert int(cur._with_fields(columns=2).columns) == 2
    with pytest.raises(Exception, match="has no field 'nope'"):
        _ = cur.nope


def test_cli_refuses_an_underscore_field(runner, tmp_path) -> None:
    p = tmp_path / "typed.py"
    p.write_text(textwrap.dedent('''
        from modelcheck import Int, Record, Spec, action

        Msg = Record(_type=Int(0, 1), n=Int(0, 1))


        class Typed(Spec):
            msg = Msg

            @action
            def Step(self, s, t):
                return s.msg.n == 0
    '''))
    r = runner.invoke(cli, ["check", str(p), "-q"])
    assert r.exit_code == 2
    assert "typed.py:" in r.output and "spec Typed, variable msg" in r.output
    assert "has a field '_type'" in r.output and "Traceback" not in r.output


# -- symmetry through function fields -------------------------------------------------

Q = Ids(1, 3)


class Ring(Spec):
    """Function fields indexed by a symmetric set, holding ids of it, in a record and in
    set elements: symmetry moves the indices and renames the values."""

    check_deadlock = False
    symmetry = ("Q",)
    Q = Q
    cur = Record(next=Array(Q, Ref(Q)), mark=Array(Q, Bool()))
    seen = SetOf(Record(mark=Array(Q, Bool()), who=Q))

    @action(p=Q, q=Q)
    def Link(self, s, t, p, q):
        c = s.cur
        t.cur = c.with_fields(next=c.next.set_at(p, q))
        return (c.next[p] == 0) & (p != q)

    @action(p=Q)
    def Mark(self, s, t, p):
        c = s.cur
        t.cur = c.with_fields(mark=c.mark.set_at(p, True))
        t.seen = s.seen.with_({"mark": c.mark, "who": p})
        return ~c.mark[p] & (c.next[p] != 0)


def _permute(btype, v, pi):
    """A Python value of a bound type with the ids of ``Q`` permuted, by walking the type
    (an implementation independent of the types' cell permutations)."""
    from modelcheck.types import BoundFunction, BoundRecord, BoundRef, BoundSet

    if isinstance(btype, BoundFunction):
        moved = btype.index_name == "Q"
        return {(pi[i] if moved else i): _permute(btype.elem, x, pi) for i, x in v.items()}
    if isinstance(btype, BoundRecord):
        return {k: _permute(t, v[k], pi) for k, t in btype.fields.items()}
    if isinstance(btype, BoundSet):
        return [_permute(btype.elem, x, pi) for x in v]
    if isinstance(btype, BoundRef) and btype.ref == "Q":
        return pi.get(v, v)
    return v


def test_symmetry_counts_the_orbits_computed_from_values() -> None:
    import itertools

    spec = Ring()
    layout = spec.layout
    k = Kernel(spec, symmetry=False)
    seen, todo = set(), [tuple(c) for c in k.initial_states()]
    while todo:
        c = todo.pop()
        if c not in seen:
            seen.add(c)
            todo.extend(tuple(n) for _, n in k.successors(list(c)))
    pis = [dict(zip((1, 2, 3), p)) for p in itertools.permutations((1, 2, 3))]

    def canon(c):
        values = layout.values_from_cells(list(c))
        return min(tuple(layout.cells_from_values(
            {v: _permute(info.btype, values[v], pi) for v, info in layout.vars.items()}))
            for pi in pis)

    orbits = {canon(c) for c in seen}
    r = explore(spec)
    assert r.symmetry == ["Q"] and r.status == "ok"
    assert r.distinct_states == len(orbits) < len(seen)
