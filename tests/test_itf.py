"""Tests of the ITF codec (modelcheck.trace.itf): value round trips, strictness, files."""

from __future__ import annotations

import copy
import json
import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck.errors import ModelcheckError
from modelcheck.trace.itf import (
    FrozenMap,
    FrozenSeq,
    ItfError,
    ItfTrace,
    Record,
    Unserializable,
    decode_value,
    dump_itf,
    dumps_itf,
    encode_value,
    freeze,
    from_itf,
    load_itf,
    loads_itf,
    to_itf,
)

# The whole file should run in a few seconds: keep example counts modest.
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

field_names = st.text(max_size=6).filter(lambda s: not s.startswith("#"))
ints = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([0, -1, 2**53 - 1, 2**53, -(2**53), 2**64, -(2**64) - 1, 10**40]),
)
atoms = st.one_of(
    st.booleans(),
    ints,
    st.text(max_size=8),
    st.builds(Unserializable, st.text(max_size=4)),
)
hashables = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple),
        st.frozensets(inner, max_size=3),
        st.lists(inner, max_size=3).map(FrozenSeq),
        st.dictionaries(field_names, inner, max_size=3).map(Record),
        st.dictionaries(inner, inner, max_size=3).map(FrozenMap),
    ),
    max_leaves=6,
)
values = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.frozensets(hashables, max_size=4),
        st.dictionaries(hashables, inner, max_size=4),
        st.dictionaries(st.integers(), inner, max_size=4),
        st.dictionaries(field_names, inner, max_size=3).map(Record),
    ),
    max_leaves=12,
)
json_data = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(max_size=5),
        st.sampled_from(["#bigint", "#set", "#tup", "#map", "#unserializable", "-12", "x"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["#bigint", "#set", "#tup", "#map", "#unserializable", "#x", "a"]),
            inner,
            max_size=2,
        ),
    ),
    max_leaves=12,
)


def canonical(v: Any) -> str:
    return json.dumps(encode_value(v), sort_keys=True)


# --------------------------------------------------------------------------- values


@FAST
@given(values)
def test_value_round_trip(v: Any) -> None:
    text = json.dumps(encode_value(v))
    back = decode_value(json.loads(text))
    assert back == v
    # Same JSON again: proves kinds survive (bool vs int, list vs tuple, map vs record)
    # and that the encoding does not depend on how the value was built.
    assert json.dumps(encode_value(back)) == text
    assert json.dumps(encode_value(freeze(v))) == text
    assert canonical(copy.deepcopy(v)) == canonical(v)


def test_bool_and_int_are_kept_apart() -> None:
    assert encode_value(True) is True
    assert encode_value(False) is False
    assert encode_value(1) == {"#bigint": "1"}
    assert encode_value(0) == {"#bigint": "0"}
    decoded = decode_value([True, {"#bigint": "1"}, False, 0, 1])
    assert [type(x) for x in decoded] == [bool, int, bool, int, int]
    assert decode_value(True) is True
    assert type(decode_value({"#tup": [1]})[0]) is int
    assert Record(flag=True)["flag"] is True
    assert encode_value({True: "yes"}) == {"#map": [[True, "yes"]]}
    assert encode_value(frozenset({1})) == {"#set": [{"#bigint": "1"}]}
    assert type(next(iter(decode_value({"#set": [False]})))) is bool
    with pytest.raises(ItfError, match=r"#set\[1\].*collides"):
        decode_value({"#set": [True, {"#bigint": "1"}]})
    with pytest.raises(ItfError, match=r"#map\[1\]\[0\].*collides"):
        decode_value({"#map": [[0, "a"], [False, "b"]]})


def test_integers() -> None:
    for n in (0, 7, -7, 2**64 + 1, -(2**100), 10**60):
        assert decode_value(encode_value(n)) == n
        assert encode_value(n) == {"#bigint": str(n)}
    assert decode_value(2**53 - 1) == 2**53 - 1
    assert decode_value(-(2**53) + 1) == -(2**53) + 1
    assert decode_value({"#bigint": "-0042"}) == -42
    for bad in (2**53, -(2**53), 2**70):
        with pytest.raises(ItfError, match=r"^x: .*#bigint"):
            decode_value(bad, "x")
    for body in ("", "-", "+1", "1.0", " 1", "1 ", "0x10", "1e3", "١", 12, None, ["1"]):
        with pytest.raises(ItfError, match=r"^v\.#bigint: expected a decimal"):
            decode_value({"#bigint": body}, "v")
    with pytest.raises(ItfError, match="too long"):
        decode_value({"#bigint": "9" * 5000})
    with pytest.raises(ItfError, match="too many digits"):
        encode_value(10**6000)


def test_frozen_forms() -> None:
    assert FrozenSeq([1, [2]]) == [1, [2]]
    assert [1, [2]] == FrozenSeq([1, [2]])
    assert FrozenSeq([1, 2]) != (1, 2)
    assert FrozenSeq([1, 2])[1:] == [2]
    assert hash(FrozenSeq([1, [2]])) == hash(FrozenSeq([1, FrozenSeq([2])]))
    assert FrozenMap({1: [2]}) == {1: [2]}
    assert {1: [2]} == FrozenMap({1: [2]})
    assert FrozenMap({"a": 1}) != Record(a=1)
    assert Record(a=1) != {"a": 1}
    assert Record(a=1, b=[1]) == Record(b=[1], a=1)
    assert hash(Record(a=1, b=[1])) == hash(Record({"b": FrozenSeq([1]), "a": 1}))
    assert dict(Record(a=1).items()) == {"a": 1}
    assert Record(a=1)["a"] == 1 and len(Record(a=1, b=2)) == 2 and "b" in Record(b=0)
    with pytest.raises(ValueError):
        Record({"#a": 1})
    with pytest.raises(TypeError):
        Record({1: 1})  # type: ignore[dict-item]
    frozen = freeze([(1, (2, [3])), {4: [5]}, {6}])
    hash(frozen)
    assert isinstance(frozen, FrozenSeq) and isinstance(frozen[1], FrozenMap)
    assert frozen == [(1, (2, [3])), {4: [5]}, frozenset({6})]
    for v in (Record(a=[1]), FrozenSeq([{1: 2}]), FrozenMap({1: [2]})):
        assert pickle.loads(pickle.dumps(v)) == v
    # A sequence key stays a sequence (not a tuple) and both may coexist in one map.
    m = decode_value({"#map": [[[1, 2], "seq"], [{"#tup": [1, 2]}, "tup"]]})
    assert m[FrozenSeq([1, 2])] == "seq" and m[(1, 2)] == "tup" and len(m) == 2
    assert encode_value(m) == {
        "#map": [
            [[{"#bigint": "1"}, {"#bigint": "2"}], "seq"],
            [{"#tup": [{"#bigint": "1"}, {"#bigint": "2"}]}, "tup"],
        ]
    }


def test_sorting_is_by_value() -> None:
    assert encode_value(frozenset({10, 2, -1})) == {
        "#set": [{"#bigint": "-1"}, {"#bigint": "2"}, {"#bigint": "10"}]
    }
    mixed = encode_value(frozenset({"a", 3, True, (1,), Record(z=1, a=2)}))["#set"]
    assert mixed[:3] == [True, {"#bigint": "3"}, "a"]
    assert list(mixed[4]) == ["a", "z"]  # record fields sorted
    assert [k for k, _ in encode_value({"b": 1, "a": 2})["#map"]] == ["a", "b"]


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (None, "expected an ITF value, got null"),
        (1.5, "JSON number 1.5"),
        (1.0, "JSON number 1.0"),
        ({"#set": [1, 1]}, r"#set\[1\]: duplicate set element"),
        ({"#set": [[1], [{"#bigint": "1"}]]}, r"#set\[1\]: duplicate"),
        ({"#map": [["a", 1], ["a", 2]]}, r"#map\[1\]\[0\]: duplicate map key"),
        ({"#map": [["a"]]}, r"#map\[0\]: expected a \[key, value\]"),
        ({"#map": [["a", 1, 2]]}, r"#map\[0\]: expected"),
        ({"#map": [{"a": 1}]}, r"#map\[0\]: expected"),
        ({"#map": {"a": 1}}, r"#map: expected an array"),
        ({"#set": "ab"}, r"#set: expected an array"),
        ({"#tup": None}, r"#tup: expected an array"),
        ({"#unserializable": 3}, r"#unserializable: expected a string"),
        ({"#set": [], "#tup": []}, "exactly one key"),
        ({"#set": [], "a": 1}, "exactly one key"),
        ({"#meta": {}}, "unknown ITF tag"),
        ({"#foo": 1}, "unknown ITF tag"),
        ([1, {"a": [None]}], r"\[1\]\.a\[0\]: expected an ITF value"),
        ({"#tup": [1, 2.5]}, r"#tup\[1\]: expected an ITF value"),
        ("\ud800", "lone surrogate"),
        ({"a b": None}, r'\["a b"\]: expected an ITF value'),
        ({1: 2}, "not a string"),
        ((1, 2), "Python tuple"),
        ({1, 2}, "Python set"),
    ],
)
def test_decode_rejects(bad: Any, where: str) -> None:
    with pytest.raises(ItfError, match=where) as info:
        decode_value(bad, "states[3].regEpoch")
    assert str(info.value).startswith("states[3].regEpoch")


def test_null_message_matches_the_documented_example() -> None:
    with pytest.raises(ItfError) as info:
        decode_value(None, "states[3].regEpoch")
    assert str(info.value) == "states[3].regEpoch: expected an ITF value, got null"
    assert info.value.path == "states[3].regEpoch"


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (None, "None is not an ITF value"),
        (0.5, "float"),
        (object(), "Python object"),
        ([1, {2: b"x"}], r"^v\[1\]\.#map\[0\]\[1\]: cannot encode a Python bytes"),
        ((1, None), r"^v\.#tup\[1\]"),
        (Record(a=[1.5]), r"^v\.a\[0\]"),
        ("\udfff", "lone surrogate"),
        (Unserializable(3), "must be a string"),  # type: ignore[arg-type]
    ],
)
def test_encode_rejects(bad: Any, where: str) -> None:
    with pytest.raises(ItfError, match=where):
        encode_value(bad, "v")


@FAST
@given(json_data)
def test_decode_fuzz_only_raises_itf_error(j: Any) -> None:
    try:
        v = decode_value(j, "root")
    except ItfError as error:
        assert str(error).startswith("root") and error.path.startswith("root")
    else:
        json.dumps(encode_value(v))


def test_deep_nesting_is_an_itf_error() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ItfError, match="nested too deeply"):
        decode_value(deep)
    with pytest.raises(ItfError, match="nested too deeply"):
        encode_value(deep)
    text = '{"vars": ["x"], "states": [{"x": ' + "[" * 100_000 + "]" * 100_000 + "}]}"
    with pytest.raises(ItfError, match=r"^deep\.itf\.json: .*nested too deeply"):
        loads_itf(text, source="deep.itf.json")


# --------------------------------------------------------------------------- traces

ADR_STYLE = """
{
  "#meta": {
    "format": "ITF",
    "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
    "source": "Ferry.tla",
    "description": "hand-written example"
  },
  "params": ["Banks"],
  "vars": ["boat", "onBank", "log", "count", "pending", "last", "universe"],
  "states": [
    {
      "#meta": {"index": 0},
      "Banks": {"#set": ["W", "E"]},
      "boat": "E",
      "onBank": {"#map": [["E", {"#set": ["m1", "c1"]}], ["W", {"#set": []}]]},
      "log": [],
      "count": 0,
      "pending": {"#tup": [true, {"#bigint": "-123456789012345678901234567890"}]},
      "last": {"who": "nobody", "to": "E"},
      "universe": {"#unserializable": "Int"}
    },
    {
      "#meta": {"index": 1, "action": "Cross", "params": {"who": "c1"}},
      "boat": "W",
      "onBank": {"#map": [["E", {"#set": ["m1"]}], ["W", {"#set": ["c1"]}]]},
      "log": [{"#tup": ["c1", "W"]}],
      "count": {"#bigint": "1"},
      "pending": {"#tup": [false, {"#bigint": "0"}]},
      "last": {"who": "c1", "to": "W"},
      "universe": {"#unserializable": "Int"}
    }
  ],
  "loop": 0
}
"""


def test_adr_style_document_decodes_to_python_values() -> None:
    trace = loads_itf(ADR_STYLE, source="ferry.itf.json")
    assert trace.vars == ("boat", "onBank", "log", "count", "pending", "last", "universe")
    assert trace.params == ("Banks",)
    assert trace.loop == 0
    assert trace.meta["source"] == "Ferry.tla" and trace.meta["format"] == "ITF"
    assert trace.state_meta == (
        {"index": 0},
        {"action": "Cross", "index": 1, "params": {"who": "c1"}},
    )
    s0, s1 = trace.states
    assert s0 == {
        "Banks": frozenset({"E", "W"}),
        "boat": "E",
        "onBank": {"E": frozenset({"m1", "c1"}), "W": frozenset()},
        "log": [],
        "count": 0,
        "pending": (True, -123456789012345678901234567890),
        "last": Record(who="nobody", to="E"),
        "universe": Unserializable("Int"),
    }
    assert "Banks" not in s1
    assert s1["log"] == [("c1", "W")] and type(s1["log"]) is list
    assert s1["count"] == 1 and type(s1["count"]) is int
    assert s1["pending"] == (False, 0) and s1["pending"][0] is False
    assert isinstance(s1["last"], Record) and s1["last"]["who"] == "c1"
    # Written back canonically, and stable from then on.
    once = dumps_itf(trace)
    assert dumps_itf(loads_itf(once)) == once
    assert loads_itf(once) == trace
    written = json.loads(once)
    assert written["states"][0]["Banks"] == {"#set": ["E", "W"]}
    assert written["states"][0]["count"] == {"#bigint": "0"}
    assert list(written["states"][0]["last"]) == ["to", "who"]


def base_doc() -> dict[str, Any]:
    return {
        "#meta": {"format": "ITF", "source": "Spec.py"},
        "params": ["N"],
        "vars": ["x", "y", "z"],
        "states": [
            {
                "#meta": {"index": 0, "action": "Init"},
                "N": {"#bigint": "3"},
                "x": {"#bigint": "0"},
                "y": {"#set": [{"#tup": ["a", True]}]},
                "z": {"f": [{"#bigint": "1"}, {"#map": [[{"#bigint": "2"}, "b"]]}]},
            },
            {
                "#meta": {"index": 1, "action": "Step", "params": {"i": 1}},
                "x": {"#bigint": "1"},
                "y": {"#set": []},
                "z": {"f": []},
            },
        ],
        "loop": 1,
    }


def sample_trace() -> ItfTrace:
    return from_itf(base_doc())


def positions(j: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    items = j.items() if isinstance(j, dict) else enumerate(j) if isinstance(j, list) else ()
    for key, child in items:
        yield (*path, key)
        yield from positions(child, (*path, key))


def set_at(doc: Any, path: tuple[str | int, ...], value: Any) -> Any:
    doc = copy.deepcopy(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def fmt(path: tuple[str | int, ...]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
    return out


def test_base_doc_round_trips_exactly() -> None:
    trace = sample_trace()
    assert to_itf(trace) == {
        **base_doc(),
        "#meta": {"format": "ITF", "source": "Spec.py"},
    }
    assert from_itf(to_itf(trace)) == trace


WRONG = [None, 1.5, "s", True, 7, 2**60, [], {}, [None], {"#set": 1}, {"#bigint": 5}, {"#x": 1}]


def test_wrong_types_in_every_position() -> None:
    doc = base_doc()
    for path in positions(doc):
        for wrong in WRONG:
            mutated = set_at(doc, path, wrong)
            try:
                from_itf(mutated, source="mut.itf.json")
            except ItfError as error:
                assert str(error).startswith("mut.itf.json: "), (path, wrong, error)
                assert error.path, (path, wrong, error)
                assert error.source == "mut.itf.json"


def test_null_in_every_value_position_is_reported_at_that_path() -> None:
    doc = base_doc()
    value_paths = [p for p in positions(doc) if p[0] == "states" and len(p) > 2 and p[2] != "#meta"]
    assert len(value_paths) > 15
    for path in value_paths:
        with pytest.raises(ItfError) as info:
            from_itf(set_at(doc, path, None), source="n.itf.json")
        assert info.value.path == fmt(path), str(info.value)
        assert str(info.value).startswith(f"n.itf.json: {fmt(path)}: ")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["states"][1].update(w=1), r"states\[1\]\.w: unknown variable"),
        (lambda d: d["states"][1].pop("y"), r"states\[1\]: missing variable 'y'"),
        (lambda d: d["states"][0].pop("N"), r"states\[0\]: missing parameter 'N'"),
        (lambda d: d["states"][1].update({"#x": 1}), r"states\[1\]: unknown reserved key"),
        (lambda d: d["states"][0].update({"#meta": []}), r"states\[0\]\.#meta: expected an obj"),
        (lambda d: d.update(vars=["x", "x"]), r"vars\[1\]: .*twice"),
        (lambda d: d.update(vars=["x", 3]), r"vars\[1\]: expected a variable name"),
        (lambda d: d.update(vars=["#x"]), r"vars\[0\]: .*must not start with '#'"),
        (lambda d: d.update(vars="xyz"), r"vars: expected an array"),
        (lambda d: d.pop("vars"), r"\$: missing required key 'vars'"),
        (lambda d: d.pop("states"), r"\$: missing required key 'states'"),
        (lambda d: d.update(states=[]), r"states: a trace needs at least one state"),
        (lambda d: d.update(states={}), r"states: expected an array"),
        (lambda d: d.update(params=["x"]), r"params\[0\]: 'x' is both"),
        (lambda d: d.update(params="N"), r"params: expected an array"),
        (lambda d: d.update(loop=2), r"loop: state index 2 is out of range"),
        (lambda d: d.update(loop=-1), r"loop: state index -1"),
        (lambda d: d.update(loop=True), r"loop: expected a state index"),
        (lambda d: d.update(loop=None), r"loop: expected a state index"),
        (lambda d: d.update({"#meta": "x"}), r"#meta: expected an object"),
        (lambda d: d.update({"#meta": {"t": float("nan")}}), r"#meta\.t: nan"),
        (lambda d: d.update({"#extra": 1}), r"#extra: unknown reserved top-level key"),
    ],
)
def test_structural_errors(mutate: Any, message: str) -> None:
    doc = base_doc()
    mutate(doc)
    with pytest.raises(ItfError, match=rf"^s\.itf\.json: {message}"):
        from_itf(doc, source="s.itf.json")


def test_structure_accepts_optional_parts() -> None:
    doc = base_doc()
    for key in ("#meta", "params", "loop"):
        doc.pop(key)
    doc["states"][0].pop("N")
    doc["states"][0].pop("#meta")
    doc["extension"] = {"ignored": True}  # unknown keys without '#' are ignored
    trace = from_itf(doc)
    assert trace.meta == {} and trace.params == () and trace.loop is None
    assert trace.state_meta[0] == {}
    assert "extension" not in to_itf(trace)
    # A parameter may be repeated in later states.
    doc = base_doc()
    doc["states"][1]["N"] = {"#bigint": "3"}
    assert from_itf(doc).states[1]["N"] == 3


@pytest.mark.parametrize("obj", [None, [], "x", 3, {1: 2}, {"vars": ("x",), "states": []}])
def test_from_itf_rejects_non_documents(obj: Any) -> None:
    with pytest.raises(ItfError, match=r"^f: "):
        from_itf(obj, source="f")


def trace_with(**changes: Any) -> ItfTrace:
    fields = {
        "vars": ("x",),
        "states": ({"x": 1},),
        "meta": {},
        "state_meta": (),
        "params": (),
        "loop": None,
    }
    fields.update(changes)
    return ItfTrace(**fields)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"states": ({"x": 1.5},)}, r"states\[0\]\.x: the float"),
        ({"states": ({"x": None},)}, r"states\[0\]\.x: None"),
        ({"states": ({"x": [1, {2: None}]},)}, r"states\[0\]\.x\[1\]\.#map\[0\]\[1\]"),
        ({"states": ({"y": 1},)}, r"states\[0\]\.y: unknown variable"),
        ({"states": ({},)}, r"states\[0\]: missing variable 'x'"),
        ({"states": ()}, r"states: a trace needs"),
        ({"states": ([1],)}, r"states\[0\]: expected a dict"),
        ({"states": ({"x": 1, "#meta": {}},)}, r"states\[0\]\.#meta: put state metadata"),
        ({"vars": ("x", "x")}, r"vars\[1\]: .*twice"),
        ({"vars": "x"}, r"vars: expected an array"),
        ({"loop": 1}, r"loop: state index 1 is out of range"),
        ({"loop": 0.0}, r"loop: expected a state index"),
        ({"meta": {"a": {1, 2}}}, r"#meta\.a: expected JSON data"),
        ({"meta": {1: 2}}, r"#meta: object key 1"),
        ({"meta": []}, r"#meta: meta must be a dict"),
        ({"state_meta": ({}, {})}, r"states: state_meta must be a tuple of 1"),
        ({"state_meta": ({"t": float("inf")},)}, r"states\[0\]\.#meta\.t: inf"),
        ({"params": ("N",)}, r"states\[0\]: missing parameter 'N'"),
    ],
)
def test_to_itf_validates(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ItfError, match=rf"^{message}"):
        to_itf(trace_with(**changes))
    with pytest.raises(ItfError, match=rf"^/nonexistent-dir/out\.itf\.json: {message}"):
        dump_itf(trace_with(**changes), "/nonexistent-dir/out.itf.json")


# --------------------------------------------------------------------------- text and files

JSON_TOKENS = [
    *'{ } [ ] , : 0 1 - 1.5 1e999 true null NaN " \\ \xff \ud800'.split(),
    *'"vars" "states" "x" "#meta" "#set" "#bigint" "#map" "#tup" "loop" "params"'.split(),
    " ",
    "\n",
]


@FAST
@given(st.binary(max_size=120))
def test_random_bytes_only_raise_itf_error(data: bytes) -> None:
    with pytest.raises(ItfError) as info:
        loads_itf(data, source="fuzz.itf.json")
    assert str(info.value).startswith("fuzz.itf.json")


@FAST
@given(st.lists(st.sampled_from(JSON_TOKENS), max_size=40).map("".join))
def test_json_like_text_only_raises_itf_error(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    try:
        loads_itf(data, source="tok.itf.json")
    except ItfError as error:
        assert str(error).startswith("tok.itf.json")


@FAST
@given(st.data())
def test_corrupted_documents_only_raise_itf_error(data: st.DataObject) -> None:
    raw = bytearray(dumps_itf(sample_trace()).encode())
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["flip", "delete", "insert"]))
        if op == "flip":
            raw[pos] = data.draw(st.integers(0, 255))
        elif op == "delete":
            del raw[pos]
        else:
            raw.insert(pos, data.draw(st.sampled_from(b'{}[]",:0#-a \xff')))
    try:
        loads_itf(bytes(raw), source="c.itf.json")
    except ItfError as error:
        assert str(error).startswith("c.itf.json")


@FAST
@given(st.sampled_from(["x", "y", "z", "N"]), json_data)
def test_arbitrary_json_in_a_state_only_raises_itf_error(name: str, j: Any) -> None:
    doc = base_doc()
    doc["states"][0][name] = j
    try:
        from_itf(doc, source="j.itf.json")
    except ItfError as error:
        assert str(error).startswith(f"j.itf.json: states[0].{name}")


def test_truncated_documents() -> None:
    trace = sample_trace()
    for full in (dumps_itf(trace), json.dumps(to_itf(trace))):
        data = full.encode()
        for cut in range(len(data)):
            prefix = data[:cut]
            try:
                got = loads_itf(prefix, source="cut.itf.json")
            except ItfError as error:
                assert str(error).startswith("cut.itf.json:"), error
            else:
                assert prefix.rstrip() == data.rstrip() and got == trace


def doc_with_x(raw_json: str) -> str:
    return '{"vars": ["x"], "states": [{"x": ' + raw_json + "}]}"


def test_json_level_errors() -> None:
    with pytest.raises(ItfError, match=r"^f:3:5: invalid JSON"):
        loads_itf('{\n  "vars": [],\n    ,\n}', source="f")
    with pytest.raises(ItfError, match=r"^f:2:3: invalid UTF-8 at byte offset 8"):
        loads_itf(b'{"a":\n  \xc3(', source="f")
    with pytest.raises(ItfError, match=r"^f: invalid JSON: duplicate key 'x'"):
        loads_itf('{"vars": ["x"], "states": [{"x": 1, "x": 2}]}', source="f")
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ItfError, match=rf"^f: invalid JSON: {constant} is not"):
            loads_itf(doc_with_x(constant), source="f")
    with pytest.raises(ItfError, match=r"^f: invalid JSON: "):
        loads_itf(doc_with_x("9" * 5000), source="f")
    with pytest.raises(ItfError, match=r"^f: states\[0\]\.x: string contains a lone surrogate"):
        loads_itf('{"vars": ["x"], "states": [{"x": "\\ud800"}]}', source="f")
    with pytest.raises(ItfError, match=r"^f:1:1: invalid JSON"):
        loads_itf(b"\xef\xbb\xbf{}", source="f")
    with pytest.raises(ItfError, match="expected bytes or str"):
        loads_itf(3, source="f")  # type: ignore[arg-type]


def test_dump_load_is_byte_stable(tmp_path: Path) -> None:
    trace = sample_trace()
    first, second = tmp_path / "a.itf.json", tmp_path / "b.itf.json"
    dump_itf(trace, first)
    dump_itf(load_itf(first), second)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert data.endswith(b"}\n") and not data.endswith(b"\n\n")
    assert data.decode("utf-8") == dumps_itf(trace)
    assert load_itf(str(first)) == trace
    dump_itf(trace, first)  # overwrite in place
    assert first.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.itf.json", "b.itf.json"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert first.stat().st_mode & 0o777 == 0o666 & ~umask


def test_equal_traces_give_identical_bytes() -> None:
    a = ItfTrace(
        vars=("m", "r"),
        states=({"m": {2: "b", 1: "a"}, "r": Record(y=1, x=frozenset({3, 1, 2}))},),
        meta={"source": "S", "format": "ITF"},
        state_meta=({"index": 0, "action": "Init"},),
    )
    b = ItfTrace(
        vars=("m", "r"),
        states=({"m": {1: "a", 2: "b"}, "r": Record(x=frozenset({2, 3, 1}), y=1)},),
        meta={"format": "ITF", "source": "S"},
        state_meta=({"action": "Init", "index": 0},),
    )
    assert a == b
    assert dumps_itf(a) == dumps_itf(b) == dumps_itf(a)


@FEW
@given(st.lists(values, min_size=1, max_size=3))
def test_traces_of_random_values_round_trip(xs: list[Any]) -> None:
    trace = ItfTrace(
        vars=("v",),
        states=tuple({"v": x} for x in xs),
        meta={"format": "ITF"},
        state_meta=tuple({"index": i} for i in range(len(xs))),
        loop=len(xs) - 1,
    )
    text = dumps_itf(trace)
    back = loads_itf(text.encode())
    assert back == trace
    assert dumps_itf(back) == text


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.itf.json"
    with pytest.raises(ItfError, match=r"missing\.itf\.json: cannot read the file"):
        load_itf(missing)
    with pytest.raises(ItfError, match=r"cannot read the file"):
        load_itf(tmp_path)
    bad = tmp_path / "bad.itf.json"
    for content in (b"", b"\xff\xfe", b'{"vars": ["x"], "states": [{"x": null}]}', b"[]"):
        bad.write_bytes(content)
        with pytest.raises(ItfError) as info:
            load_itf(bad)
        assert str(info.value).startswith(str(bad)), info.value
        assert info.value.source == str(bad)


def test_failed_dump_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "t.itf.json"
    with pytest.raises(ItfError, match=r"t\.itf\.json: states\[0\]\.x: the float"):
        dump_itf(trace_with(states=({"x": 0.5},)), target)
    assert list(tmp_path.iterdir()) == []


def test_itf_error_type() -> None:
    error = ItfError("bad", path="states[0].x", source="f.itf.json", line=2, column=3)
    assert str(error) == "f.itf.json:2:3: states[0].x: bad"
    assert isinstance(error, ValueError) and isinstance(error, ModelcheckError)
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error) and again.path == "states[0].x"
