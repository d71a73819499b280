"""The trace loaders fuzzed: random bytes, truncated JSON, wrong types, unknown variables.

Whatever the input, ``trace show``/``eval``/``replay`` end with a clear one-paragraph
error and exit 2 (or, for a still-valid trace, 0, or 1 for a replay that fails); never
a traceback. The library functions raise only ModelcheckError subclasses.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelcheck import Explorer
from modelcheck.cli import bind_spec, cli
from modelcheck.errors import ModelcheckError
from modelcheck.trace import Trace, dumps_trace_json, loads_trace, trace_to_itf
from modelcheck.trace.evaluate import evaluate
from modelcheck.trace.itf import dumps_itf
from modelcheck.trace.replay import replay

SPEC = "specs/kraft_broker.py:KRaftBrokerBugEpochReuse"
CONSTS = ("N=2", "P=1", "MaxLog=4", "MaxRestarts=1")
FAST = settings(max_examples=80, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CLI = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _make() -> tuple[Any, str, str]:
    spec = bind_spec(SPEC, CONSTS)
    res = Explorer(spec).run()
    assert res.violation is not None
    t = Trace.from_violation(spec, res.violation, source=SPEC)
    return spec, dumps_itf(trace_to_itf(t)), dumps_trace_json(t)


BOUND, ITF_TEXT, JSON_TEXT = _make()
BASES = {"itf": ITF_TEXT, "json": JSON_TEXT}


@pytest.fixture(scope="module")
def workdir() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as d:
        yield d


def _library_accepts_or_rejects_cleanly(data: bytes | str) -> None:
    try:
        t = loads_trace(data, source_file="fuzz.json")
    except ModelcheckError as e:
        assert str(e)
        return
    # a trace that loads must also show, evaluate and replay without crashing
    try:
        replay(BOUND, t)
    except ModelcheckError:
        pass
    try:
        evaluate(t, "len(regEpoch) + logEnd" if {"regEpoch", "logEnd"} <= set(t.vars) else "1")
    except ModelcheckError:
        pass


def _cli_clean(workdir: str, data: bytes, *, replay_too: bool = True) -> None:
    path = os.path.join(workdir, "fuzz.json")
    with open(path, "wb") as f:
        f.write(data)
    runner = CliRunner()
    runs = [["trace", "show", path], ["trace", "eval", path, "1 + 1"]]
    if replay_too:
        runs.append(["trace", "replay", SPEC, path])
    for args in runs:
        r = runner.invoke(cli, args)
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.output)
        assert "Traceback" not in r.output
        allowed = (0, 1, 2) if args[1] == "replay" else (0, 2)
        assert r.exit_code in allowed, (args, r.output)
        if r.exit_code == 2:
            assert r.stderr.startswith("error: "), r.stderr
            assert r.stderr.count("error: ") == 1


# --------------------------------------------------------------------------- strategies

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                         st.floats(allow_nan=False), st.text(max_size=6))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _replace(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (_replace(v, rest, value) if k == head else v) for k, v in doc.items()}
    return [(_replace(v, rest, value) if i == head else v) for i, v in enumerate(doc)]


PATHS = {k: _paths(json.loads(v)) for k, v in BASES.items()}


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(sorted(BASES)))
    doc = json.loads(BASES[kind])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS[kind]))
        try:
            doc = _replace(doc, path, draw(json_values))
        except (KeyError, IndexError, TypeError):  # an earlier mutation changed the shape
            pass
    return json.dumps(doc).encode()


@st.composite
def truncated(draw: st.DrawFn) -> bytes:
    text = BASES[draw(st.sampled_from(sorted(BASES)))].rstrip().encode()
    return text[:draw(st.integers(0, len(text) - 1))]


@st.composite
def unknown_variables(draw: st.DrawFn) -> tuple[str, bytes]:
    """Add a variable (to vars and every state) or drop one."""
    kind = draw(st.sampled_from(sorted(BASES)))
    doc = json.loads(BASES[kind])
    name = draw(st.text(alphabet="abcxyz_", min_size=1, max_size=6).filter(
        lambda n: n not in BOUND.layout.vars))
    drop = draw(st.booleans())
    states = doc["states"] if kind == "itf" else [s["state"] for s in doc["steps"]]
    if drop:
        gone = draw(st.sampled_from(doc["vars"]))
        doc["vars"].remove(gone)
        for s in states:
            del s[gone]
        return f"missing from the trace: {gone}", json.dumps(doc).encode()
    doc["vars"].append(name)
    for s in states:
        s[name] = {"#bigint": "1"} if kind == "itf" else 1
    return f"not variables of the spec: {name}", json.dumps(doc).encode()


# --------------------------------------------------------------------------- library


@FAST
@given(st.binary(max_size=300))
def test_random_bytes_library(data: bytes) -> None:
    _library_accepts_or_rejects_cleanly(data)


@FAST
@given(truncated())
def test_truncated_library(data: bytes) -> None:
    with pytest.raises(ModelcheckError):
        loads_trace(data, source_file="t.json")


@FAST
@given(mutated())
def test_wrong_types_library(data: bytes) -> None:
    _library_accepts_or_rejects_cleanly(data)


# --------------------------------------------------------------------------- command line


@CLI
@given(data=st.binary(max_size=200))
def test_random_bytes_cli(workdir: str, data: bytes) -> None:
    _cli_clean(workdir, data)


@CLI
@given(data=truncated())
def test_truncated_cli(workdir: str, data: bytes) -> None:
    path = os.path.join(workdir, "t.json")
    with open(path, "wb") as f:
        f.write(data)
    r = CliRunner().invoke(cli, ["trace", "show", path])
    assert r.exit_code == 2 and r.stderr.startswith("error: ")
    assert "Traceback" not in r.output


@CLI
@given(data=mutated())
def test_wrong_types_cli(workdir: str, data: bytes) -> None:
    _cli_clean(workdir, data)


@CLI
@given(case=unknown_variables())
def test_unknown_variables_cli(workdir: str, case: tuple[str, bytes]) -> None:
    message, data = case
    path = os.path.join(workdir, "v.json")
    with open(path, "wb") as f:
        f.write(data)
    r = CliRunner().invoke(cli, ["trace", "replay", SPEC, path])
    assert r.exit_code == 2, r.output
    assert message in r.stderr and "Traceback" not in r.output
    shown = CliRunner().invoke(cli, ["trace", "show", path])  # no spec needed to show it
    assert shown.exit_code == 0, shown.output


def test_never_pickle() -> None:
    import modelcheck.trace.conjuncts
    import modelcheck.trace.evaluate
    import modelcheck.trace.model
    import modelcheck.trace.render
    import modelcheck.trace.replay
    import modelcheck.trace.runrecord

    for mod in (modelcheck.trace.model, modelcheck.trace.render, modelcheck.trace.conjuncts,
                modelcheck.trace.replay, modelcheck.trace.evaluate, modelcheck.trace.runrecord):
        with open(mod.__file__ or "", encoding="utf-8") as f:
            source = f.read()
        assert "import pickle" not in source and "pickle.load" not in source
