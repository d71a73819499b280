"""The one value codec (:mod:`modelcheck.codec`): TLC's order of values, and every form.

Oracles:

* TLC 2.20 itself: a module that prints sets of values (``PrintT``) gives the order TLC
  lists their members in; the pinned cases below are its output (``/work/shared/tlc``,
  ``TLC2 Version 2.20 rev 96056d9``), and :func:`test_order_agrees_with_tlc_live` runs
  TLC on random typed sets when Java and ``tla2tools.jar`` are there;
* :func:`tlc_compare`, a direct port of TLC's ``compareTo`` (``SetEnumValue``: size
  then members; ``TupleValue``: length then elements; ``RecordValue``: number of fields,
  then names, each before its value; ``FcnRcdValue``: size, then the domain, then the
  values), compared with :func:`modelcheck.codec.sort_key` on hypothesis-generated typed
  values;
* a simple renderer written here for each form, sorting by that comparison.
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modelcheck import codec
from modelcheck.itfvalues import FrozenMap, FrozenSeq, Record, freeze
from modelcheck.result import json_value
from modelcheck.trace.itf import decode_value, encode_value
from modelcheck.trace.render import format_value

# --------------------------------------------------------------------------- the oracle


def tlc_compare(a: Any, b: Any) -> int:
    """TLC's ``Value.compareTo`` for two values of one type (TLC refuses other pairs)."""
    if isinstance(a, bool):
        return int(a) - int(b)
    if isinstance(a, int):
        return (a > b) - (a < b)
    if isinstance(a, str):
        return (a > b) - (a < b)  # TLC: order of first appearance; here: code point
    if isinstance(a, (set, frozenset)):
        if len(a) != len(b):
            return len(a) - len(b)
        for x, y in zip(_tlc_sorted(a), _tlc_sorted(b)):
            c = tlc_compare(x, y)
            if c:
                return c
        return 0
    if isinstance(a, Record):
        if len(a) != len(b):
            return len(a) - len(b)
        for na, nb in zip(sorted(a), sorted(b)):
            c = tlc_compare(na, nb) or tlc_compare(a[na], b[nb])
            if c:
                return c
        return 0
    if isinstance(a, (list, tuple, FrozenSeq)):
        if len(a) != len(b):
            return len(a) - len(b)
        for x, y in zip(a, b):
            c = tlc_compare(x, y)
            if c:
                return c
        return 0
    if isinstance(a, Mapping):
        if len(a) != len(b):
            return len(a) - len(b)
        ka, kb = _tlc_sorted(a), _tlc_sorted(b)
        for x, y in zip(ka, kb):
            c = tlc_compare(x, y)
            if c:
                return c
        for x, y in zip(ka, kb):
            c = tlc_compare(a[x], b[y])
            if c:
                return c
        return 0
    raise TypeError(f"not a value: {a!r}")


def _tlc_sorted(values: Any) -> list[Any]:
    return sorted(values, key=functools.cmp_to_key(tlc_compare))


def ref_tla(v: Any) -> str:
    """TLA+ text, written independently of the codec."""
    if v is True or v is False:
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(map(ref_tla, _tlc_sorted(v))) + "}"
    if isinstance(v, Record):
        return "[" + ", ".join(f"{k} |-> {ref_tla(x)}" for k, x in v.items()) + "]"
    if isinstance(v, Mapping):
        return "(" + " @@ ".join(f"{ref_tla(k)} :> {ref_tla(v[k])}" for k in _tlc_sorted(v)) + ")"
    return "<<" + ", ".join(map(ref_tla, v)) + ">>"


def ref_text(v: Any) -> str:
    """The trace text form, written independently of the codec."""
    if v is True or v is False:
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, (set, frozenset)):
        return "{" + ", ".join(map(ref_text, _tlc_sorted(v))) + "}"
    if isinstance(v, Record):
        return "[" + ", ".join(f"{k}: {ref_text(x)}" for k, x in v.items()) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{ref_text(k)}: {ref_text(v[k])}" for k in _tlc_sorted(v)) + "}"
    if isinstance(v, tuple):
        return "<<" + ", ".join(map(ref_text, v)) + ">>"
    return "[" + ", ".join(map(ref_text, v)) + "]"


def ref_json(v: Any) -> Any:
    """The ``--format json`` form, written independently of the codec."""
    if isinstance(v, (set, frozenset)):
        return [ref_json(x) for x in _tlc_sorted(v)]
    if isinstance(v, Mapping):
        return {k if isinstance(k, str) else str(k) if isinstance(k, int)
                else json.dumps(ref_json(k), sort_keys=True): ref_json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, FrozenSeq)):
        return [ref_json(x) for x in v]
    return v


# --------------------------------------------------------------------------- typed values

_FIELDS = ("fa", "fb", "fc")


def _types() -> st.SearchStrategy[Any]:
    atoms = st.sampled_from([("int",), ("bool",), ("str",)])

    def compound(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.tuples(st.just("set"), inner),
            st.tuples(st.just("seq"), inner),
            st.tuples(st.just("tup"), inner),
            st.tuples(st.just("rec"), st.lists(inner, min_size=1, max_size=3)),
            st.tuples(st.just("fun"), inner),
        )

    return st.recursive(atoms, compound, max_leaves=4)


def _values(t: Any) -> st.SearchStrategy[Any]:
    tag = t[0]
    if tag == "int":
        return st.integers(-3, 12)
    if tag == "bool":
        return st.booleans()
    if tag == "str":
        return st.sampled_from(["", "a", "b", "B", "aa", "ab", "é", "z"])
    if tag == "set":
        return st.frozensets(_values(t[1]).map(freeze), max_size=4)
    if tag == "seq":
        return st.lists(_values(t[1]), max_size=3)
    if tag == "tup":
        return st.lists(_values(t[1]), max_size=3).map(tuple)
    if tag == "rec":
        names = _FIELDS[:len(t[1])]
        # a record type may leave a field out (a variant's fields differ): TLC then
        # compares the field names
        return st.tuples(*(_values(x) for x in t[1]), st.integers(0, len(names) - 1)).map(
            lambda xs: Record({n: x for i, (n, x) in enumerate(zip(names, xs[:-1]))
                               if i != xs[-1] or len(names) == 1}))
    if tag == "fun":
        return st.dictionaries(st.integers(-2, 5), _values(t[1]), max_size=3)
    raise AssertionError(t)


@st.composite
def typed_sets(draw: st.DrawFn) -> frozenset[Any]:
    """A set of values of one type (TLC compares only those)."""
    t = draw(_types())
    return draw(st.frozensets(_values(t).map(freeze), max_size=5))


@st.composite
def values(draw: st.DrawFn) -> Any:
    return draw(_values(draw(_types())))


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(typed_sets())
def test_sort_key_is_tlc_order(s: frozenset[Any]) -> None:
    members = list(s)
    assert sorted(members, key=codec.sort_key) == _tlc_sorted(members)
    keys = [codec.sort_key(x) for x in members]
    assert len(set(keys)) == len(members)  # the key tells apart what == tells apart


@settings(max_examples=300, deadline=None)
@given(values())
def test_forms_agree_with_independent_renderers(v: Any) -> None:
    assert codec.tla_text(v) == ref_tla(v)
    assert codec.text(v) == format_value(v) == ref_text(v)
    assert json.dumps(json_value(v)) == json.dumps(ref_json(v))
    assert decode_value(encode_value(v)) == v


@settings(max_examples=200, deadline=None)
@given(values())
def test_normalize_keeps_the_value(v: Any) -> None:
    assert codec.normalize(v) == v
    assert codec.text(codec.normalize(v)) == codec.text(v)


def test_sort_key_orders_kinds_totally() -> None:
    """Values TLC would not compare (another tool's trace) still sort, the same way
    whatever their order in the set, and unequal values never share a key."""
    mixed = [True, 0, -1, "a", frozenset(), (1,), FrozenSeq([1]), FrozenMap({1: 1}),
             Record(a=1), FrozenMap({"a": 1})]
    keys = [codec.sort_key(x) for x in mixed]
    assert len(set(keys)) == len(mixed)
    for seed in range(5):
        shuffled = mixed[:]
        random.Random(seed).shuffle(shuffled)
        assert sorted(shuffled, key=codec.sort_key) == sorted(mixed, key=codec.sort_key)


# --------------------------------------------------------------------------- TLC itself

#: (value, what TLC 2.20 prints for it with PrintT); the strings in these sets were
#: first met by TLC in code-point order, so its order of first appearance is that one
TLC_PRINTS = [
    (frozenset({frozenset({3}), frozenset({1, 2})}), "{{3}, {1, 2}}"),
    (frozenset({"b", "a"}), '{"a", "b"}'),
    (frozenset({(2,), (1, 1)}), "{<<2>>, <<1, 1>>}"),
    (frozenset({Record(a=2), Record(a=1)}), "{[a |-> 1], [a |-> 2]}"),
    (frozenset({Record(a=1, b=1), Record(a=2, b=0)}), "{[a |-> 1, b |-> 1], [a |-> 2, b |-> 0]}"),
    (frozenset({frozenset({1, 5}), frozenset({2, 3}), frozenset({1, 2, 3}), frozenset()}),
     "{{}, {1, 5}, {2, 3}, {1, 2, 3}}"),
    (frozenset({(1, 2), (1, 1), (), (0, 0, 0)}), "{<<>>, <<1, 1>>, <<1, 2>>, <<0, 0, 0>>}"),
    (frozenset({False, True}), "{FALSE, TRUE}"),
    (frozenset({-3, 2, -10, 0}), "{-10, -3, 0, 2}"),
    (frozenset({FrozenMap({1: 0, 3: 0}), FrozenMap({2: 0, 3: 0})}),
     "{(1 :> 0 @@ 3 :> 0), (2 :> 0 @@ 3 :> 0)}"),
    # a function's domain before its values ((0 :> 0 @@ 3 :> 0) comes after)
    (frozenset({FrozenMap({0: 0, 3: 0}), FrozenMap({0: 9, 2: 0})}),
     "{(0 :> 9 @@ 2 :> 0), (0 :> 0 @@ 3 :> 0)}"),
    # a record's fields one by one, each name before its value
    (frozenset({Record(fa=1, fc=0), Record(fa=2, fb=0)}),
     "{[fa |-> 1, fc |-> 0], [fa |-> 2, fb |-> 0]}"),
    (frozenset({Record(z=0), Record(a=1, b=2, c=3)}), "{[z |-> 0], [a |-> 1, b |-> 2, c |-> 3]}"),
    (frozenset({frozenset({"b"}), frozenset({"a", "c"}), frozenset({"a"})}),
     '{{"a"}, {"b"}, {"a", "c"}}'),
    (frozenset({("b", 1), ("a", 2)}), '{<<"a", 2>>, <<"b", 1>>}'),
    (frozenset({Record(a=frozenset({2})), Record(a=frozenset({1, 0}))}),
     "{[a |-> {2}], [a |-> {0, 1}]}"),
]


@pytest.mark.parametrize("value,printed", TLC_PRINTS, ids=[p for _, p in TLC_PRINTS])
def test_order_is_tlcs(value: Any, printed: str) -> None:
    assert codec.tla_text(value) == printed
    # every form lists the members in that order
    members = codec.sorted_values(value)
    assert codec.text(value) == "{" + ", ".join(codec.text(x) for x in members) + "}"
    assert json_value(value) == [json_value(x) for x in members]
    assert encode_value(value)["#set"] == [encode_value(x) for x in members]


_TLC_JAR = Path(os.environ.get("MODELCHECK_TLC_JAR", "/work/shared/tlc/tla2tools.jar"))


def _tla_unsorted(v: Any, rnd: random.Random) -> str:
    """TLA+ text of ``v`` with set members and function entries shuffled."""
    if isinstance(v, (set, frozenset)):
        items = list(v)
        rnd.shuffle(items)
        return "{" + ", ".join(_tla_unsorted(x, rnd) for x in items) + "}"
    if isinstance(v, Record):
        return "[" + ", ".join(f"{k} |-> {_tla_unsorted(x, rnd)}" for k, x in v.items()) + "]"
    if isinstance(v, Mapping):
        items = list(v.items())
        rnd.shuffle(items)
        return "(" + " @@ ".join(f"{k} :> {_tla_unsorted(x, rnd)}" for k, x in items) + ")"
    if isinstance(v, (list, tuple, FrozenSeq)):
        return "<<" + ", ".join(_tla_unsorted(x, rnd) for x in v) + ">>"
    return ref_tla(v)


def _tlc_prints_like_us(v: Any) -> bool:
    """Whether TLC prints ``v`` as :func:`ref_tla` writes it: TLC prints a function on
    1..n as a sequence, the empty function as ``<<>>``, and a string's position is its
    first appearance (fixed here for the strings of :data:`_STRINGS` only)."""
    if isinstance(v, (set, frozenset, list, tuple, FrozenSeq)):
        return all(_tlc_prints_like_us(x) for x in v)
    if isinstance(v, Record):
        return all(_tlc_prints_like_us(x) for x in v.values())
    if isinstance(v, Mapping):
        return bool(v) and set(v) != set(range(1, len(v) + 1)) \
            and all(_tlc_prints_like_us(x) for x in v.values())
    return not isinstance(v, str) or v in _STRINGS


_STRINGS = ("qA", "qa", "qaa", "qab", "qb")


@pytest.mark.skipif(shutil.which("java") is None or not _TLC_JAR.exists(),
                    reason="needs Java and TLC's tla2tools.jar")
def test_order_agrees_with_tlc_live(tmp_path: Path) -> None:
    """TLC prints random typed sets, written with their members shuffled, in the order
    the codec gives them."""
    rnd = random.Random(20261128)
    sets: list[frozenset[Any]] = []
    while len(sets) < 60:
        s = _draw_set(rnd)
        if len(s) > 1 and _tlc_prints_like_us(s):
            sets.append(s)
    body = "\n".join(f"    /\\ PrintT({_tla_unsorted(s, rnd)})" for s in sets)
    names = ", ".join(f'"{n}"' for n in (*_STRINGS, *_FIELDS))
    (tmp_path / "Order.tla").write_text(
        "---- MODULE Order ----\nEXTENDS Integers, Sequences, TLC\nVARIABLE v\n"
        f"Names == <<{names}>>\nInit == v = 0\n{body}\nNext == UNCHANGED v\n====\n")
    (tmp_path / "Order.cfg").write_text("INIT Init\nNEXT Next\n")
    out = subprocess.run(
        ["java", "-XX:+UseSerialGC", "-Xmx256m", "-cp", str(_TLC_JAR), "tlc2.TLC",
         "-workers", "1", "-config", "Order.cfg", "Order.tla"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False).stdout
    # TLC breaks a long value over lines (continuations are indented): compare the texts
    # without white space (no string here has any)
    lines = out.splitlines()
    start = lines.index("Computing initial states...") + 1
    printed: list[str] = []
    for line in lines[start:]:
        if line.startswith("{"):
            printed.append(line)
        elif line.startswith(" ") and printed:
            printed[-1] += line
        else:
            break
    assert ["".join(p.split()) for p in printed] \
        == ["".join(codec.tla_text(s).split()) for s in sets], out[-2000:]


def _draw_set(rnd: random.Random) -> frozenset[Any]:
    """A random set of values of one random type (hypothesis is not used here: TLC runs
    once on a fixed batch)."""
    t = _random_type(rnd, 2)
    return frozenset(freeze(_random_value(t, rnd)) for _ in range(rnd.randint(2, 5)))


def _random_type(rnd: random.Random, depth: int) -> Any:
    if depth == 0 or rnd.random() < 0.3:
        return rnd.choice([("int",), ("bool",), ("str",)])
    tag = rnd.choice(["set", "seq", "rec", "fun"])
    if tag == "rec":
        return ("rec", [_random_type(rnd, depth - 1) for _ in range(rnd.randint(1, 3))])
    return (tag, _random_type(rnd, depth - 1))


def _random_value(t: Any, rnd: random.Random) -> Any:
    tag = t[0]
    if tag == "int":
        return rnd.randint(-3, 9)
    if tag == "bool":
        return rnd.random() < 0.5
    if tag == "str":
        return rnd.choice(_STRINGS)
    if tag == "set":
        return frozenset(freeze(_random_value(t[1], rnd)) for _ in range(rnd.randint(0, 3)))
    if tag == "seq":
        return tuple(_random_value(t[1], rnd) for _ in range(rnd.randint(0, 3)))
    if tag == "rec":
        names = _FIELDS[:len(t[1])]
        drop = rnd.randrange(len(names)) if len(names) > 1 and rnd.random() < 0.3 else -1
        return Record({n: _random_value(x, rnd) for i, (n, x) in enumerate(zip(names, t[1]))
                       if i != drop})
    keys = rnd.sample([0, 2, 3, 5, 7], rnd.randint(1, 3))
    return {k: _random_value(t[1], rnd) for k in keys}
