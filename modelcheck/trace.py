"""Traces as data: reading and writing trace files, showing, replaying and evaluating them.

This module owns the in-memory :class:`Trace` (a sequence of states, each with the
action and parameters that led to it, plus what the trace was recorded from) and
everything that works on one without writing files:

* conversion from a checker :class:`~modelcheck.result.Violation`
  (:meth:`Trace.from_violation`);
* the two file formats: ITF, the Informal Trace Format of Apalache/Quint
  (through the strict codec :mod:`modelcheck.itf`), and our own JSON
  (``{"format": "modelcheck-trace", "spec", "constants", "property", "kind",
  "vars", "steps": [{"action", "params", "state"}]}``); :func:`loads_trace`
  detects which one a file holds (a ``result.json`` run record works too);
* rendering for ``modelcheck trace show`` (:func:`render_trace`: only the
  variables that changed, per array index);
* :func:`replay`: is a trace a behaviour of a spec? Failures name the step, the
  action, the false guard conjunct (found by re-evaluating the conjuncts of the
  action's ``return`` expression) or the variables that differ;
* :func:`evaluate`: a Python expression over every state, in a restricted namespace.

Trace values are plain Python data: ``int``, ``bool``, ``str`` (enum members by
name), ``dict`` (arrays, keyed by index), ``frozenset`` (sets). Files are plain
JSON; nothing here ever unpickles or imports anything from a trace.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import os
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np

from .errors import ModelcheckError, SpecEvaluationError, source_location
from .itf import (
    FrozenMap,
    FrozenSeq,
    ItfError,
    ItfTrace,
    Record,
    Unserializable,
    from_itf,
    parse_json_strict,
)
from .layout import Layout
from .result import TraceStep, Violation
from .spec import ActionInstance, Spec

__all__ = [
    "Trace",
    "TraceFileError",
    "TraceMismatchError",
    "ReplayReport",
    "TRACE_JSON_FORMAT",
    "ITF_FORMAT_DESCRIPTION",
    "loads_trace",
    "load_trace",
    "trace_from_document",
    "state_to_cells",
    "cell_diffs",
    "Styles",
    "ExpressionError",
    "trace_to_itf",
    "trace_from_itf",
    "trace_to_json",
    "trace_from_json",
    "dumps_trace_json",
    "render_trace",
    "format_value",
    "changes",
    "replay",
    "guard_conjuncts",
    "compile_expression",
    "evaluate",
    "action_label",
]

TRACE_JSON_FORMAT = "modelcheck-trace"
TRACE_JSON_VERSION = 1
ITF_FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
#: Quint's model-based-testing variables: the action taken and its nondeterministic picks
_MBT_ACTION = "mbt::actionTaken"
_MBT_PICKS = "mbt::nondetPicks"


class TraceFileError(ModelcheckError):
    """A trace file cannot be read: not JSON, not a trace, or malformed."""


class TraceMismatchError(ModelcheckError):
    """A trace does not fit a spec: other variables, or values of the wrong type."""


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Trace:
    """A finite behaviour: ``steps[i]`` is state ``i + 1`` and the action that led to it.

    ``steps[0].action`` is None (the initial state). ``vars`` lists the state
    variables in declaration order. The remaining fields describe where the
    trace comes from; they are None/empty for traces written by other tools.
    """

    vars: tuple[str, ...]
    steps: tuple[TraceStep, ...]
    spec: str | None = None
    source: str | None = None
    constants: dict[str, Any] = field(default_factory=dict)
    property: str | None = None
    kind: str | None = None
    also_violated: tuple[str, ...] = ()
    file_format: str = "json"

    def __len__(self) -> int:
        return len(self.steps)

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def has_actions(self) -> bool:
        """Whether any step names the action that led to it."""
        return any(s.action is not None for s in self.steps[1:])

    @classmethod
    def from_violation(cls, spec: Spec, violation: Violation, source: str | None = None) -> Trace:
        """The counterexample of a check result, with the spec's variables and constants."""
        steps = tuple(TraceStep(s.action, dict(s.params), {k: _norm(v) for k, v in s.state.items()})
                      for s in violation.trace)
        return cls(vars=tuple(spec.layout.vars), steps=steps, spec=spec.name, source=source,
                   constants=dict(spec.constants), property=violation.property,
                   kind=violation.kind, also_violated=tuple(violation.also_violated))

    def describe(self) -> str:
        """One line: what the trace is of, and how long."""
        what = self.spec or "a spec"
        if self.constants:
            what += " (" + ", ".join(f"{k}={v}" for k, v in self.constants.items()) + ")"
        return f"{what}, {len(self.steps)} state{'s' if len(self.steps) != 1 else ''}"

    def violation_text(self) -> str | None:
        """What the trace is a counterexample to, if recorded."""
        if not self.kind:
            return None
        if self.kind == "deadlock":
            return "Deadlock: the last state has no enabled action."
        what = {"invariant": "invariant", "action": "action property"}.get(self.kind, self.kind)
        where = "the last step" if self.kind == "action" else "the last state"
        also = f" (also violated: {', '.join(self.also_violated)})" if self.also_violated else ""
        return f"Counterexample: {where} violates {what} {self.property}{also}."


def _norm(v: Any) -> Any:
    """A value from the checker or our JSON in trace form: lists (sets) become frozensets,
    decimal-string keys become ints."""
    if isinstance(v, Mapping):
        return {_key(k): _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return frozenset(_norm(x) for x in v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _key(k: Any) -> Any:
    if isinstance(k, str):
        t = k[1:] if k.startswith("-") else k
        if t.isdigit() and t.isascii():
            return int(k)
    return k


def action_label(action: str | None, params: Mapping[str, Any]) -> str:
    """``Register(b=1)``; ``<initial state>`` for the first state."""
    if action is None:
        return "<initial state>"
    if not params:
        return action
    return f"{action}({', '.join(f'{k}={format_value(v)}' for k, v in params.items())})"


# --------------------------------------------------------------------------- ITF


def trace_to_itf(trace: Trace, *, generator: str | None = None) -> ItfTrace:
    """The ITF form of ``trace``: vars in declaration order, ``#meta`` per state with
    ``index``, ``action`` (``"init"`` for the first state) and ``params``."""
    meta: dict[str, Any] = {
        "format": "ITF",
        "format-description": ITF_FORMAT_DESCRIPTION,
        "description": _itf_description(trace),
    }
    if generator:
        meta["generator"] = generator
    if trace.source is not None:
        meta["source"] = trace.source
    if trace.spec is not None:
        meta["spec"] = trace.spec
    if trace.constants:
        meta["constants"] = dict(trace.constants)
    if trace.property is not None:
        meta["property"] = trace.property
    if trace.kind is not None:
        meta["kind"] = trace.kind
    if trace.also_violated:
        meta["also_violated"] = list(trace.also_violated)
    states = tuple({v: _itf_value(s.state[v]) for v in trace.vars} for s in trace.steps)
    state_meta = tuple(
        {"index": i, "action": "init", "params": {}} if i == 0
        else {"index": i} if s.action is None  # unknown action: say nothing
        else {"index": i, "action": s.action, "params": dict(s.params)}
        for i, s in enumerate(trace.steps)
    )
    return ItfTrace(vars=trace.vars, states=states, meta=meta, state_meta=state_meta)


def _itf_description(trace: Trace) -> str:
    what = f"Counterexample to {trace.property}" if trace.property else "Trace"
    return f"{what} found by modelcheck" + (f" in {trace.spec}" if trace.spec else "")


def _itf_value(v: Any) -> Any:
    if isinstance(v, Mapping) and not isinstance(v, Record):
        return {k: _itf_value(x) for k, x in v.items()}
    if isinstance(v, list):  # our sets, if a caller did not normalise
        return frozenset(v)
    return v


def trace_from_itf(itf: ItfTrace, *, source_file: str | None = None) -> Trace:
    """A :class:`Trace` from a decoded ITF trace (ours, or another tool's)."""
    meta = itf.meta
    where = source_file or "the ITF trace"
    vars_ = tuple(v for v in itf.vars if not v.startswith("mbt::"))
    steps: list[TraceStep] = []
    for i, (state, smeta) in enumerate(zip(itf.states, itf.state_meta)):
        for v in vars_:
            if _too_deep(state[v]):
                raise TraceFileError(f"{where}: states[{i}].{v}: value nested more than "
                                     f"{_MAX_DEPTH} levels deep.")
        action, params = _itf_action(state, smeta, i, where)
        steps.append(TraceStep(None if i == 0 else action, params,
                               {v: _thaw(state[v]) for v in vars_}))
    return Trace(
        vars=vars_, steps=tuple(steps),
        spec=_meta_str(meta, "spec", where), source=_meta_str(meta, "source", where),
        constants=_meta_constants(meta, where),
        property=_meta_str(meta, "property", where), kind=_meta_str(meta, "kind", where),
        also_violated=_meta_names(meta, "also_violated", where), file_format="itf",
    )


def _itf_action(state: Mapping[str, Any], smeta: Mapping[str, Any], i: int,
                where: str) -> tuple[str | None, dict[str, Any]]:
    path = f"{where}: states[{i}].#meta"
    action = smeta.get("action")
    if action is not None and not isinstance(action, str):
        raise TraceFileError(f"{path}.action: expected the action name (a string), got "
                             f"{json.dumps(action)[:40]}.")
    params_raw = smeta.get("params", {})
    if not isinstance(params_raw, dict):
        raise TraceFileError(f"{path}.params: expected an object of parameter values, got "
                             f"{json.dumps(params_raw)[:40]}.")
    params: dict[str, Any] = {}
    for k, v in params_raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise TraceFileError(f"{path}.params.{k}: expected an integer or a string, got "
                                 f"{json.dumps(v)[:40]}.")
        params[k] = v
    if action is None and _MBT_ACTION in state and isinstance(state[_MBT_ACTION], str):
        action = state[_MBT_ACTION] or None
        picks = state.get(_MBT_PICKS)
        if isinstance(picks, Record):
            for name, variant in picks.items():
                if isinstance(variant, Record) and variant.get("tag") == "Some":
                    params[name] = _thaw(variant.get("value"))
    if action == "init" and i == 0:
        action = None
    return action, params


_MAX_DEPTH = 32


def _too_deep(v: Any) -> bool:
    """Whether ``v`` nests containers more than ``_MAX_DEPTH`` deep (checked without
    recursion, so that rendering and evaluating it later cannot overflow the stack)."""
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if d > _MAX_DEPTH:
            return True
        if isinstance(x, Mapping):
            stack.extend((y, d + 1) for kv in x.items() for y in kv)
        elif isinstance(x, (list, tuple, set, frozenset, FrozenSeq)):
            stack.extend((y, d + 1) for y in x)
    return False


def _thaw(v: Any) -> Any:
    """ITF values in trace form: frozen maps and sequences back to dicts and lists."""
    if isinstance(v, (dict, FrozenMap)):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, FrozenSeq):
        return [_thaw(x) for x in v]
    if isinstance(v, list):
        return [_thaw(x) for x in v]
    return v


def _meta_str(meta: Mapping[str, Any], key: str, where: str) -> str | None:
    v = meta.get(key)
    if v is None or isinstance(v, str):
        return v
    raise TraceFileError(f"{where}: #meta.{key}: expected a string, got {json.dumps(v)[:40]}.")


def _meta_names(meta: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    v = meta.get(key, [])
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)
    raise TraceFileError(f"{where}: #meta.{key}: expected a list of names, got "
                         f"{json.dumps(v)[:40]}.")


def _meta_constants(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    v = meta.get("constants", {})
    if not isinstance(v, dict):
        raise TraceFileError(f"{where}: constants: expected an object of NAME: value, got "
                             f"{json.dumps(v)[:40]}.")
    for k, x in v.items():
        if not isinstance(x, (int, bool)):
            raise TraceFileError(f"{where}: constants.{k}: expected an integer or a boolean, "
                                 f"got {json.dumps(x)[:40]}.")
    return dict(v)


# --------------------------------------------------------------------------- our JSON


def trace_to_json(trace: Trace) -> dict[str, Any]:
    """Our JSON trace document (arrays as objects keyed by index, sets as sorted lists)."""
    return {
        "format": TRACE_JSON_FORMAT,
        "version": TRACE_JSON_VERSION,
        "spec": trace.spec,
        "source": trace.source,
        "constants": dict(trace.constants),
        "property": trace.property,
        "kind": trace.kind,
        "also_violated": list(trace.also_violated),
        "vars": list(trace.vars),
        "steps": [{"action": s.action, "params": {k: _json_value(v) for k, v in s.params.items()},
                   "state": {v: _json_value(s.state[v]) for v in trace.vars}}
                  for s in trace.steps],
    }


def dumps_trace_json(trace: Trace) -> str:
    """The text of our JSON trace file (indent 2, trailing newline)."""
    return json.dumps(trace_to_json(trace), indent=2, allow_nan=False) + "\n"


def _json_value(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset, list, tuple)):
        return sorted((_json_value(x) for x in v), key=_order)
    if isinstance(v, (bool, int, str)):
        return v
    raise TraceFileError(f"cannot write {v!r} in a modelcheck JSON trace.")


def _order(v: Any) -> tuple[int, Any]:
    if isinstance(v, bool):
        return (0, v)
    if isinstance(v, int):
        return (1, v)
    return (2, str(v))


def trace_from_json(doc: Any, *, source_file: str | None = None) -> Trace:
    """A :class:`Trace` from our JSON document; strict, raises :class:`TraceFileError`."""
    where = source_file or "the trace"

    def fail(path: str, msg: str) -> NoReturn:
        raise TraceFileError(f"{where}: {path}: {msg}")

    if not isinstance(doc, dict):
        fail("$", f"expected a JSON object, got {_jdesc(doc)}.")
    fmt = doc.get("format", TRACE_JSON_FORMAT)
    if fmt != TRACE_JSON_FORMAT:
        fail("format", f"expected {TRACE_JSON_FORMAT!r}, got {json.dumps(fmt)[:40]}.")
    steps_raw = doc.get("steps")
    if not isinstance(steps_raw, list) or not steps_raw:
        fail("steps", f"expected a non-empty list of steps, got {_jdesc(steps_raw)}.")
    vars_raw = doc.get("vars")
    first = steps_raw[0]
    if vars_raw is None and isinstance(first, dict) and isinstance(first.get("state"), dict):
        vars_raw = list(first["state"])
    if not isinstance(vars_raw, list) or not all(isinstance(v, str) for v in vars_raw):
        fail("vars", f"expected a list of variable names, got {_jdesc(vars_raw)}.")
    if len(set(vars_raw)) != len(vars_raw):
        fail("vars", "a variable name appears twice.")
    vars_ = tuple(vars_raw)
    steps: list[TraceStep] = []
    for i, raw in enumerate(steps_raw):
        p = f"steps[{i}]"
        if not isinstance(raw, dict):
            fail(p, f"expected an object with action, params and state, got {_jdesc(raw)}.")
        unknown_keys = set(raw) - {"action", "params", "state"}
        if unknown_keys:
            fail(p, f"unknown key(s) {', '.join(sorted(map(repr, unknown_keys)))}; a step has "
                    "action, params and state.")
        action = raw.get("action")
        if action is not None and not isinstance(action, str):
            fail(f"{p}.action", f"expected the action name (a string) or null, got "
                                f"{_jdesc(action)}.")
        params = raw.get("params", {})
        if not isinstance(params, dict):
            fail(f"{p}.params", f"expected an object of parameter values, got {_jdesc(params)}.")
        for k, v in params.items():
            if isinstance(v, bool) or not isinstance(v, (int, str)):
                fail(f"{p}.params.{k}", f"expected an integer or a string, got {_jdesc(v)}.")
        state = raw.get("state")
        if not isinstance(state, dict):
            fail(f"{p}.state", f"expected an object of variable values, got {_jdesc(state)}.")
        extra = [k for k in state if k not in vars_]
        if extra:
            fail(f"{p}.state", f"unknown variable {extra[0]!r} (the trace's variables are: "
                               f"{', '.join(vars_)}).")
        missing = [v for v in vars_ if v not in state]
        if missing:
            fail(f"{p}.state", f"missing variable {missing[0]!r}.")
        values = {v: _from_json_value(state[v], f"{p}.state.{v}", fail) for v in vars_}
        steps.append(TraceStep(None if i == 0 else action, dict(params), values))
    return Trace(
        vars=vars_, steps=tuple(steps),
        spec=_doc_str(doc, "spec", fail), source=_doc_str(doc, "source", fail),
        constants=_meta_constants(doc, where),
        property=_doc_str(doc, "property", fail), kind=_doc_str(doc, "kind", fail),
        also_violated=_meta_names(doc, "also_violated", where), file_format="json",
    )


def _doc_str(doc: Mapping[str, Any], key: str, fail: Callable[[str, str], NoReturn]) -> str | None:
    v = doc.get(key)
    if v is None or isinstance(v, str):
        return v
    fail(key, f"expected a string or null, got {_jdesc(v)}.")


def _from_json_value(j: Any, path: str, fail: Callable[[str, str], NoReturn],
                     depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        fail(path, "value nested too deeply.")
    if isinstance(j, (bool, str)):
        return j
    if isinstance(j, int):
        return j
    if isinstance(j, dict):
        return {_key(k): _from_json_value(x, f"{path}[{k}]", fail, depth + 1)
                for k, x in j.items()}
    if isinstance(j, list):
        out = set()
        for i, x in enumerate(j):
            if isinstance(x, (dict, list)) or x is None or isinstance(x, float):
                fail(f"{path}[{i}]", f"a set holds integers or strings, got {_jdesc(x)}.")
            if x in out and type(next(y for y in out if y == x)) is type(x):
                fail(f"{path}[{i}]", "duplicate set element.")
            out.add(x)
        return frozenset(out)
    fail(path, f"expected an integer, boolean, string, object (array) or list (set), got "
               f"{_jdesc(j)}.")


def _jdesc(j: Any) -> str:
    if j is None:
        return "null"
    if isinstance(j, bool):
        return "true" if j else "false"
    if isinstance(j, (int, float)):
        return f"the number {j!r}"
    if isinstance(j, str):
        return f"the string {json.dumps(j[:30])}"
    if isinstance(j, list):
        return "a list"
    if isinstance(j, dict):
        return "an object"
    return type(j).__name__


# --------------------------------------------------------------------------- loading


def loads_trace(data: bytes | str, *, source_file: str | None = None) -> Trace:
    """Parse a trace file's contents: ITF, our JSON, or a run record's ``result.json``."""
    where = source_file or "the trace"
    try:
        doc = parse_json_strict(data, source=where)
    except ItfError as e:
        raise TraceFileError(f"{e} (not a trace file: trace files are JSON text).") from None
    return trace_from_document(doc, source_file=source_file)


def trace_from_document(doc: Any, *, source_file: str | None = None) -> Trace:
    """Detect the kind of a parsed JSON document and read the trace in it."""
    where = source_file or "the trace"
    try:
        if isinstance(doc, dict) and "states" in doc and "vars" in doc:
            return trace_from_itf(from_itf(doc, source=source_file), source_file=source_file)
        if isinstance(doc, dict) and "steps" in doc:
            return trace_from_json(doc, source_file=source_file)
        if isinstance(doc, dict) and "violation" in doc and "status" in doc:
            return _trace_from_run_record(doc, where)
    except RecursionError:
        raise TraceFileError(f"{where}: the document is nested too deeply.") from None
    except ItfError as e:
        raise TraceFileError(f"not a valid ITF trace: {e}") from None
    raise TraceFileError(
        f"{where}: not a trace: expected an ITF trace (an object with \"vars\" and "
        f"\"states\"), a modelcheck JSON trace (with \"steps\") or a run record "
        f"(result.json), got {_jdesc(doc)}"
        + (f" with keys {', '.join(sorted(doc)[:6])}" if isinstance(doc, dict) and doc else "")
        + "."
    )


def _trace_from_run_record(doc: dict[str, Any], where: str) -> Trace:
    v = doc.get("violation")
    if v is None:
        raise TraceFileError(f"{where}: the run record has no counterexample (status "
                             f"{doc.get('status')!r}).")
    if not isinstance(v, dict) or not isinstance(v.get("trace"), list):
        raise TraceFileError(f"{where}: violation.trace: expected a list of steps.")
    run = doc.get("run") if isinstance(doc.get("run"), dict) else {}
    spec_info = run.get("spec") if isinstance(run.get("spec"), dict) else {}
    tdoc = {
        "spec": doc.get("spec"), "source": spec_info.get("target"),
        "constants": doc.get("constants", {}), "property": v.get("property"),
        "kind": v.get("kind"), "also_violated": v.get("also_violated", []),
        "steps": v["trace"],
    }
    return trace_from_json(tdoc, source_file=where)


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a trace file (or a run folder: its ``trace.json``, else ``trace.itf.json``)."""
    name = os.fsdecode(os.fspath(path))
    if os.path.isdir(name):
        for candidate in ("trace.json", "trace.itf.json", "result.json"):
            if os.path.exists(os.path.join(name, candidate)):
                return load_trace(os.path.join(name, candidate))
        raise TraceFileError(f"{name}: a directory without trace.json, trace.itf.json or "
                             "result.json; give a trace file.")
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        raise TraceFileError(f"{name}: cannot read the trace file: {e.strerror or e}.") from None
    return loads_trace(data, source_file=name)


# --------------------------------------------------------------------------- rendering


def format_value(v: Any, *, python: bool = False) -> str:
    """A trace value as text: TRUE/FALSE (``True``/``False`` with ``python``), enum names,
    maps ``{1: 0, 2: 3}``, sets ``{1, 2}``."""
    if isinstance(v, (bool, np.bool_)):
        if python:
            return "True" if v else "False"
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, str):
        return repr(v) if python else v
    if isinstance(v, Record):
        inner = ", ".join(f"{k}: {format_value(x, python=python)}" for k, x in v.items())
        return f"[{inner}]"
    if isinstance(v, Mapping):
        items = sorted(v.items(), key=lambda kv: _order(kv[0]))
        return "{" + ", ".join(f"{format_value(k, python=python)}: "
                               f"{format_value(x, python=python)}" for k, x in items) + "}"
    if isinstance(v, (set, frozenset)):
        if python and not v:
            return "set()"
        return "{" + ", ".join(format_value(x, python=python)
                               for x in sorted(v, key=_order)) + "}"
    if isinstance(v, tuple):
        return "<<" + ", ".join(format_value(x, python=python) for x in v) + ">>"
    if isinstance(v, (list, FrozenSeq)):
        return "[" + ", ".join(format_value(x, python=python) for x in v) + "]"
    if isinstance(v, Unserializable):
        return f"<{v.text}>"
    return repr(v)


def _same(a: Any, b: Any) -> bool:
    """Equality that tells booleans from integers, recursively."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


_ABSENT = Unserializable("absent")


def changes(old: Mapping[str, Any], new: Mapping[str, Any],
            names: Iterable[str]) -> list[tuple[str, Any, Any]]:
    """``(path, old, new)`` for every changed value; arrays per index (``regEpoch[2]``)."""
    out: list[tuple[str, Any, Any]] = []
    for name in names:
        _diff(name, old.get(name, _ABSENT), new.get(name, _ABSENT), out)
    return out


def _diff(path: str, a: Any, b: Any, out: list[tuple[str, Any, Any]]) -> None:
    if _same(a, b):
        return
    if (isinstance(a, Mapping) and isinstance(b, Mapping)
            and not isinstance(a, Record) and not isinstance(b, Record)):
        keys = list(a) + [k for k in b if k not in a]
        for k in sorted(keys, key=_order):
            _diff(f"{path}[{format_value(k)}]", a.get(k, _ABSENT), b.get(k, _ABSENT), out)
        return
    out.append((path, a, b))


@dataclass(frozen=True)
class Styles:
    """How to colour parts of the output; identity functions for plain text."""

    header: Callable[[str], str] = str
    action: Callable[[str], str] = str
    old: Callable[[str], str] = str
    new: Callable[[str], str] = str
    alert: Callable[[str], str] = str
    dim: Callable[[str], str] = str


def render_trace(trace: Trace, *, full: bool = False, names: Sequence[str] | None = None,
                 step: int | None = None, styles: Styles | None = None) -> str:
    """The ``trace show`` text: the initial state in full, then per state the action and
    the changed variables (``old -> new``); ``full`` prints whole states, ``names``
    restricts to some variables, ``step`` (1-based) prints one state only."""
    st = styles or Styles()
    shown = list(names) if names is not None else list(trace.vars)
    lines = [st.header(f"Trace of {trace.describe()}")]
    vt = trace.violation_text()
    if vt and step is None:
        lines.append(st.alert(vt))
    indices = range(len(trace.steps)) if step is None else [step - 1]
    width = max((len(n) for n in shown), default=0)
    for i in indices:
        s = trace.steps[i]
        label = action_label(s.action, s.params) if i == 0 or s.action is not None \
            else "<unnamed action>"
        lines.append("")
        lines.append(st.header(f"State {i + 1}: ") + st.action(label))
        if i == 0 or full:
            for n in shown:
                lines.append(f"    {n:<{width}} = {format_value(s.state.get(n, _ABSENT))}")
            continue
        diff = changes(trace.steps[i - 1].state, s.state, shown)
        if not diff:
            what = "variable" if names is None else "selected variable"
            lines.append(st.dim(f"    (no {what} changed)"))
        for path, a, b in diff:
            lines.append(f"    {path}: {st.old(format_value(a))} -> {st.new(format_value(b))}")
    if vt and step is not None and step == len(trace.steps):
        lines.append(st.alert(vt))
    return "\n".join(lines)


# --------------------------------------------------------------------------- spec values


def state_to_cells(layout: Layout, state: Mapping[str, Any],
                   where: str) -> tuple[list[int], str | None]:
    """Cell values of a trace state, and the first out-of-domain value (or None).

    Values of the wrong type or shape raise :class:`TraceMismatchError`.
    """
    cells: list[int] = []
    bad: str | None = None
    for name, info in layout.vars.items():
        leaves: list[tuple[str, Any]] = []
        _leaves(name, state[name], info.dims, leaves, where)
        for j, (path, v) in enumerate(leaves):
            ci = info.first_cell + j
            c = layout.cells[ci]
            val: int
            if c.kind == "bool":
                if not isinstance(v, bool):
                    _type_error(where, path, v, "a boolean")
                val = int(v)
            elif c.kind == "enum":
                labels = c.labels or ()
                if not isinstance(v, str):
                    _type_error(where, path, v, "one of " + ", ".join(labels))
                if v not in labels:
                    bad = bad or f"{path} = {v} is not one of {', '.join(labels)}"
                    val = 0
                else:
                    val = labels.index(v)
            elif c.kind == "set":
                labels = c.labels or ()
                if not isinstance(v, (frozenset, set)):
                    _type_error(where, path, v, "a set")
                mask = 0
                for m in v:
                    if isinstance(m, bool) or str(m) not in labels:
                        bad = bad or (f"{path} = {format_value(v)} has member {format_value(m)} "
                                      f"outside {{{', '.join(labels)}}}")
                        continue
                    mask |= 1 << labels.index(str(m))
                val = mask
            else:
                if isinstance(v, bool) or not isinstance(v, int):
                    _type_error(where, path, v, f"an integer in {c.lo}..{c.hi}")
                if not c.lo <= v <= c.hi:
                    bad = bad or f"{path} = {v} is outside its domain {c.lo}..{c.hi}"
                val = v if c.lo <= v <= c.hi else c.lo
            cells.append(val)
    return cells, bad


def _leaves(path: str, v: Any, dims: tuple[range, ...], out: list[tuple[str, Any]],
            where: str) -> None:
    if not dims:
        out.append((path, v))
        return
    ids = dims[0]
    if not isinstance(v, Mapping) or isinstance(v, Record):
        _type_error(where, path, v, f"a map from {ids.start}..{ids.stop - 1}")
    keys = {_key(k) if isinstance(k, str) else k: k for k in v}
    want = set(ids)
    got = {k for k in keys if isinstance(k, int) and not isinstance(k, bool)}
    if got != want or len(keys) != len(want):
        extra = [format_value(k) for k in keys if k not in want]
        missing = [str(k) for k in ids if k not in got]
        detail = []
        if missing:
            detail.append(f"missing index {', '.join(missing)}")
        if extra:
            detail.append(f"unexpected index {', '.join(extra)}")
        raise TraceMismatchError(
            f"{where}: {path} must map exactly the indices {ids.start}..{ids.stop - 1} "
            f"({'; '.join(detail)})."
        )
    for i in ids:
        _leaves(f"{path}[{i}]", v[keys[i]], dims[1:], out, where)


def _type_error(where: str, path: str, v: Any, want: str) -> NoReturn:
    raise TraceMismatchError(f"{where}: {path} is {format_value(v)} ({_pytype(v)}); the spec "
                             f"expects {want}.")


def _pytype(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", dict: "a map",
            frozenset: "a set", list: "a sequence", tuple: "a tuple"}.get(
        type(v), "a " + type(v).__name__)


def cell_diffs(layout: Layout, want: Sequence[int], got: Sequence[int],
               labels: tuple[str, str] = ("the spec gives", "the trace has")) -> list[str]:
    """``regEpoch[2]: the spec gives 2, the trace has 1`` for each differing cell."""
    out = []
    for c, a, b in zip(layout.cells, want, got):
        if a != b:
            out.append(f"{c.name}: {labels[0]} {layout.display_value(c, int(a))}, "
                       f"{labels[1]} {layout.display_value(c, int(b))}")
    return out


# --------------------------------------------------------------------------- guard conjuncts


@dataclass(frozen=True)
class Conjunct:
    """One top-level conjunct of an action's guard (or of a helper it calls), evaluated
    in a state. ``inner`` explains a false call of a spec helper (``self.caught_up(s, b)``)
    by that helper's own false conjuncts."""

    text: str
    where: str
    value: Any  # bool, or the exception it raised
    reads: tuple[tuple[str, Any], ...]  # (``s.x[b]`` or a local name, value) inside it
    inner: tuple[Conjunct, ...] = ()


@dataclass(frozen=True)
class _ConjMeta:
    text: str
    line: int
    reads: list[str]  # ``s.x`` / ``s.x[...]`` texts, one lambda each
    names: list[str]  # plain names, looked up in the function's locals
    call: str | None  # ``NAME`` when the conjunct is ``self.NAME(args)``


@dataclass(frozen=True)
class _Probe:
    fn: Callable[..., Any]
    returns: dict[int, list[_ConjMeta]]  # per rewritten return statement


_PROBES: dict[tuple[Any, bool], _Probe | None] = {}
_CALL_DEPTH = 2


def _flatten_and(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return _flatten_and(node.left) + _flatten_and(node.right)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [x for v in node.values for x in _flatten_and(v)]
    return [node]


def _state_reads(node: ast.expr, sname: str,
                 skip: frozenset[str]) -> tuple[list[ast.expr], list[str]]:
    """``s.x`` and ``s.x[...]`` sub-expressions and plain names (possibly locals such as
    ``b = s.leader[p]``), outside nested lambdas and comprehensions."""
    out: list[ast.expr] = []
    names: list[str] = []

    def visit(n: ast.AST) -> None:
        if isinstance(n, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                          ast.GeneratorExp)):
            return
        if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
                and isinstance(n.value.value, ast.Name) and n.value.value.id == sname):
            out.append(n)
            visit(n.slice)
            return
        if isinstance(n, ast.Attribute):
            if isinstance(n.value, ast.Name):
                if n.value.id == sname:
                    out.append(n)
                return  # self.MaxLog, module.X: not a local
            visit(n.value)
            return
        if isinstance(n, ast.Name) and n.id not in skip and n.id not in names:
            names.append(n.id)
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return out, names


def _lambda(body: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])
    return ast.Lambda(args, body)


class _ReturnRewriter(ast.NodeTransformer):
    """Rewrites ``return E1 & E2`` in the function body (not in nested functions) to
    ``return (id, [lambda: E1, ...], [lambda: s.x[b], ...], [lambda: (args,) | None, ...],
    locals())``: the conjuncts, the state reads in them and the arguments of helper
    calls, all evaluated later, in the function's scope."""

    def __init__(self, src: str, selfname: str, sname: str, line0: int,
                 skip: frozenset[str]) -> None:
        self.src = src
        self.selfname = selfname
        self.sname = sname
        self.line0 = line0
        self.skip = skip
        self.depth = 0
        self.returns: dict[int, list[_ConjMeta]] = {}

    def _text(self, node: ast.AST) -> str:
        return " ".join((ast.get_source_segment(self.src, node) or ast.unparse(node)).split())

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:  # noqa: N802 - ast API
        self.depth += 1
        if self.depth == 1:
            self.generic_visit(node)
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815 - ast API

    def visit_Lambda(self, node: ast.Lambda) -> Any:  # noqa: N802 - ast API
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:  # noqa: N802 - ast API
        return node

    def visit_Return(self, node: ast.Return) -> Any:  # noqa: N802 - ast API
        if node.value is None:
            return node
        rid = len(self.returns)
        metas: list[_ConjMeta] = []
        conj_l: list[ast.expr] = []
        read_l: list[ast.expr] = []
        call_l: list[ast.expr] = []
        for c in _flatten_and(node.value):
            reads: list[str] = []
            found, names = _state_reads(c, self.sname, self.skip)
            for r in found:
                rt = self._text(r)
                if rt not in reads:
                    reads.append(rt)
                    read_l.append(_lambda(r))
            call = None
            if (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                    and isinstance(c.func.value, ast.Name) and c.func.value.id == self.selfname
                    and not c.keywords and not any(isinstance(a, ast.Starred) for a in c.args)):
                call = c.func.attr
                call_l.append(_lambda(ast.Tuple(list(c.args), ast.Load())))
            else:
                call_l.append(ast.Constant(None))
            metas.append(_ConjMeta(self._text(c), c.lineno + self.line0, reads, names, call))
            conj_l.append(_lambda(c))
        self.returns[rid] = metas
        value = ast.Tuple([ast.Constant(rid), ast.List(conj_l, ast.Load()),
                           ast.List(read_l, ast.Load()), ast.List(call_l, ast.Load()),
                           ast.Call(ast.Name("locals", ast.Load()), [], [])], ast.Load())
        return ast.copy_location(ast.Return(value), node)


def _probe_for(fn: Callable[..., Any], is_action: bool) -> _Probe | None:
    """A copy of ``fn`` whose return statements report their conjuncts, or None when
    its source cannot be analysed (a lambda, a builtin, a file that changed...)."""
    fn = inspect.unwrap(fn)
    key = (fn, is_action)
    if key in _PROBES:
        return _PROBES[key]
    probe: _Probe | None = None
    try:
        lines, start = inspect.getsourcelines(fn)
        src = textwrap.dedent("".join(lines))
        fdef = ast.parse(src).body[0]
        if isinstance(fdef, ast.FunctionDef) and len(fdef.args.args) >= 2:
            fdef.decorator_list = []
            params = [a.arg for a in fdef.args.args]
            # actions show their parameters in the label; helpers show theirs as reads
            skip = frozenset(params) if is_action else frozenset(params[:2])
            rw = _ReturnRewriter(src, params[0], params[1], start - 1, skip)
            rw.visit(fdef)
            if rw.returns:
                freevars = list(fn.__code__.co_freevars)
                outer = ast.FunctionDef(
                    name="__mc_outer__",
                    args=ast.arguments(posonlyargs=[], args=[ast.arg(v) for v in freevars],
                                       vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                                       defaults=[]),
                    body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
                    decorator_list=[], returns=None)
                module = ast.Module([outer], type_ignores=[])
                ast.fix_missing_locations(module)
                ast.increment_lineno(module, start - 1)
                code = compile(module, inspect.getsourcefile(fn) or "<spec>", "exec")
                ns: dict[str, Any] = {}
                exec(code, fn.__globals__, ns)  # noqa: S102 - the spec's own source, rewritten
                cells = [c.cell_contents for c in (fn.__closure__ or ())]
                probe = _Probe(ns["__mc_outer__"](*cells), rw.returns)
    except Exception:  # noqa: BLE001 - any failure: no conjunct analysis, plain message
        probe = None
    _PROBES[key] = probe
    return probe


def guard_conjuncts(kernel: Any, inst: ActionInstance, cells: Sequence[int]) -> list[Conjunct]:
    """The top-level conjuncts of ``inst``'s guard (the ``&`` operands of the ``return``
    expression the action reached), each evaluated in the state ``cells``. A false call
    of a spec helper (``self.caught_up(s, b)``) is explained by the helper's conjuncts.

    Empty when the action's source cannot be analysed.
    """
    from .views import NextView

    s = kernel.scalar_view(cells)
    return _conjuncts(kernel, inst.decl.fn, (kernel.spec, s, NextView(s),
                                             *(v for _, v in inst.params)), True, 0)


def _conjuncts(kernel: Any, fn: Callable[..., Any], args: tuple[Any, ...], is_action: bool,
               depth: int) -> list[Conjunct]:
    probe = _probe_for(fn, is_action)
    if probe is None:
        return []
    try:
        rid, conj_fns, read_fns, call_fns, local_vars = probe.fn(*args)
    except Exception:  # noqa: BLE001 - the real evaluation reports spec errors
        return []
    metas = probe.returns.get(rid, [])
    reads: dict[str, Any] = {}
    for text, f in zip([r for m in metas for r in m.reads], read_fns):
        reads[text] = _try(f)
    rel = source_location(fn).rsplit(":", 1)[0]
    out: list[Conjunct] = []
    for m, f, cf in zip(metas, conj_fns, call_fns):
        value = _try(f)
        if isinstance(value, (np.bool_, np.ndarray)) and np.ndim(value) == 0:
            value = bool(value)
        shown = [(r, reads.get(r)) for r in m.reads if r != m.text]
        shown += [(n, local_vars[n]) for n in m.names
                  if n != m.text and n in local_vars
                  and isinstance(local_vars[n], (int, np.integer, np.bool_))]
        inner: list[Conjunct] = []
        if value is False and m.call is not None and cf is not None and depth < _CALL_DEPTH:
            helper = getattr(type(kernel.spec), m.call, None)
            call_args = _try(cf)
            if inspect.isfunction(helper) and isinstance(call_args, tuple):
                inner = [c for c in _conjuncts(kernel, helper, (kernel.spec, *call_args),
                                               False, depth + 1) if c.value is not True]
        out.append(Conjunct(m.text, f"{rel}:{m.line}", value, tuple(shown), tuple(inner)))
    return out


def _try(f: Callable[[], Any]) -> Any:
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - shown to the user as the value
        return e


def _read_text(layout: Layout, text: str, value: Any) -> str:
    if isinstance(value, Exception):
        return f"{text} raises {type(value).__name__}"
    var = text.split(".", 1)[1].split("[", 1)[0] if "." in text else ""
    info = layout.vars.get(var)
    v = value
    if isinstance(v, (np.bool_, bool)):
        return f"{text} = {'TRUE' if v else 'FALSE'}"
    if isinstance(v, np.integer):
        v = int(v)
    if info is not None and isinstance(v, int):
        c = layout.cells[info.first_cell]
        return f"{text} = {layout.display_value(c, v)}"
    return f"{text} = {v}"


def _is_array_view(v: Any) -> bool:
    from .views import ArrayView

    return isinstance(v, ArrayView)


def _conjunct_lines(layout: Layout, conj: Sequence[Conjunct], indent: str) -> list[str]:
    lines: list[str] = []
    for c in conj:
        status = "" if c.value is False else (
            f"  [raised {type(c.value).__name__}: {c.value}]" if isinstance(c.value, Exception)
            else f"  [is {format_value(c.value)}, not a boolean]")
        lines.append(f"{indent}{c.text}    ({c.where}){status}")
        reads = [_read_text(layout, t, v) for t, v in c.reads
                 if v is not None and not _is_array_view(v)]
        if reads:
            lines.append(f"{indent}  where {', '.join(reads)}")
        if c.inner:
            lines.append(f"{indent}  false inside it:")
            lines.extend(_conjunct_lines(layout, c.inner, indent + "    "))
    return lines


# --------------------------------------------------------------------------- replay


@dataclass
class ReplayReport:
    """The outcome of :func:`replay`."""

    spec: str
    states: int
    ok: bool
    failed_step: int | None = None  # 1-based state number that could not be reached
    message: str = ""
    notes: list[str] = field(default_factory=list)
    inferred: dict[int, str] = field(default_factory=dict)  # step -> action found


def _kernel(spec: Spec) -> Any:
    from .kernel import Kernel

    params = inspect.signature(Kernel).parameters
    if "symmetry" in params:
        return Kernel(spec, symmetry=False)
    return Kernel(spec)


def replay(spec: Spec, trace: Trace) -> ReplayReport:
    """Check that ``trace`` is a behaviour of ``spec``.

    Raises :class:`TraceMismatchError` when the trace's variables or value types do
    not fit the spec. Otherwise returns a report; on failure it names the step, the
    action and why: the false guard conjunct(s), or the variables whose values
    differ from the spec's successor.
    """
    layout = spec.layout
    spec_vars = list(layout.vars)
    unknown = [v for v in trace.vars if v not in layout.vars]
    missing = [v for v in spec_vars if v not in trace.vars]
    if unknown or missing:
        parts = []
        if unknown:
            parts.append(f"not variables of the spec: {', '.join(unknown)}")
        if missing:
            parts.append(f"missing from the trace: {', '.join(missing)}")
        raise TraceMismatchError(
            f"the trace's variables do not match spec {spec.name} ({'; '.join(parts)}). "
            f"The spec's variables are: {', '.join(spec_vars)}."
        )
    kernel = _kernel(spec)
    converted: list[tuple[list[int], str | None]] = [
        state_to_cells(layout, s.state, f"state {i + 1}") for i, s in enumerate(trace.steps)
    ]
    rep = ReplayReport(repr(spec), len(trace.steps), ok=False)

    def fail(step: int, msg: str) -> ReplayReport:
        rep.failed_step = step
        rep.message = f"step {step}: {msg}"
        return rep

    cells0, bad0 = converted[0]
    if bad0:
        return fail(1, f"state 1 is not a state of {spec.name}: {bad0}.")
    inits = kernel.initial_states()
    if cells0 not in inits:
        best = min(inits, key=lambda c: sum(a != b for a, b in zip(c, cells0)))
        diffs = cell_diffs(layout, best, cells0, ("the spec's initial state has", "the trace has"))
        return fail(1, f"state 1 is not an initial state of {spec.name}; it differs from "
                       f"the {'closest ' if len(inits) > 1 else ''}initial state in:\n  "
                       + "\n  ".join(diffs[:12]) + _more(diffs, 12))
    for k in range(1, len(trace.steps)):
        step_no = k + 1
        prev = converted[k - 1][0]
        cur, bad = converted[k]
        st = trace.steps[k]
        if bad:
            return fail(step_no, f"state {step_no} is not a state of {spec.name}: {bad}.")
        if st.action is None:
            found = next((inst for inst, nxt in kernel.successors(prev) if nxt == cur), None)
            if found is None:
                return fail(step_no, _no_action_leads(kernel, prev, cur, step_no, spec))
            rep.inferred[step_no] = found.label
            continue
        inst, why = _instance(spec, st.action, st.params)
        label = action_label(st.action, st.params)
        if inst is None:
            return fail(step_no, f"{label}: {why}")
        nxt = kernel.step(prev, inst)
        if nxt is None:
            return fail(step_no, _not_enabled(kernel, inst, label, prev, step_no))
        if nxt != cur:
            diffs = cell_diffs(layout, nxt, cur)
            return fail(step_no, f"action {label} is enabled in state {step_no - 1}, but its "
                                 f"successor differs from state {step_no} of the trace in:\n  "
                                 + "\n  ".join(diffs[:12]) + _more(diffs, 12))
    rep.ok = True
    rep.notes = _violations_along(kernel, [c for c, _ in converted])
    return rep


def _more(items: Sequence[Any], n: int) -> str:
    return f"\n  ... and {len(items) - n} more" if len(items) > n else ""


def _instance(spec: Spec, name: str, params: Mapping[str, Any]) -> tuple[ActionInstance | None,
                                                                        str]:
    decl = type(spec)._actions.get(name)
    if decl is None:
        return None, (f"{spec.name} has no action {name!r}; its actions are: "
                      f"{', '.join(type(spec)._actions)}.")
    want = list(decl.params)
    if sorted(params) != sorted(want):
        sig = f"{name}({', '.join(want)})" if want else name
        return None, (f"action {sig} takes the parameters ({', '.join(want)}), the trace gives "
                      f"({', '.join(params)}).")
    clean: dict[str, int] = {}
    for k, v in params.items():
        if isinstance(v, bool) or not isinstance(v, int):
            return None, f"parameter {k} = {format_value(v)} is not an integer."
        clean[k] = v
    inst = spec.action_by_label(name, clean)
    if inst is None:
        ranges = []
        for p in want:
            vals = sorted({dict(a.params)[p] for a in spec.actions if a.name == name})
            ranges.append(f"{p} in {_range_text(vals)}")
        return None, f"no such instance of {name}: {'; '.join(ranges)}."
    return inst, ""


def _range_text(vals: list[int]) -> str:
    if vals and vals == list(range(vals[0], vals[-1] + 1)):
        return f"{vals[0]}..{vals[-1]}"
    return "{" + ", ".join(map(str, vals)) + "}"


def _not_enabled(kernel: Any, inst: ActionInstance, label: str, prev: Sequence[int],
                 step_no: int) -> str:
    head = f"action {label} is not enabled in state {step_no - 1}"
    conj = guard_conjuncts(kernel, inst, prev)
    false = [c for c in conj if c.value is not True]
    if not false:
        return head + f" (its guard at {source_location(inst.decl.fn)} is false)."
    lines = [head + ("; this guard conjunct is false:" if len(false) == 1
                     else "; these guard conjuncts are false:")]
    lines += _conjunct_lines(kernel.layout, false, "  ")
    return "\n".join(lines)


def _no_action_leads(kernel: Any, prev: Sequence[int], cur: Sequence[int], step_no: int,
                     spec: Spec) -> str:
    succ = kernel.successors(prev)
    head = f"no action of {spec.name} leads from state {step_no - 1} to state {step_no}"
    if not succ:
        return head + f" (no action is enabled in state {step_no - 1})."
    ranked = sorted(succ, key=lambda p: sum(a != b for a, b in zip(p[1], cur)))[:3]
    lines = [head + "; the closest enabled actions:"]
    for inst, nxt in ranked:
        diffs = cell_diffs(kernel.layout, nxt, cur)
        lines.append(f"  {inst.label} differs in {', '.join(diffs[:4])}{' ...' * (len(diffs) > 4)}")
    return "\n".join(lines)


def _violations_along(kernel: Any, states: list[list[int]]) -> list[str]:
    notes: list[str] = []
    try:
        for i, cells in enumerate(states):
            bad = kernel.check_invariants(cells)
            if bad:
                notes.append(f"state {i + 1} violates invariant "
                             f"{', '.join(p.name for p in bad)}")
            if i:
                badp = kernel.check_properties(states[i - 1], cells)
                if badp:
                    notes.append(f"step {i + 1} violates action property "
                                 f"{', '.join(p.name for p in badp)}")
    except SpecEvaluationError as e:  # a broken property: say so, the replay itself stands
        notes.append(f"checking the properties along the trace failed: {e}")
    return notes


# --------------------------------------------------------------------------- evaluation

SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name)
    for name in ("abs", "min", "max", "len", "sum", "any", "all", "sorted", "set", "range",
                 "int", "bool")
}
_BLOCKED_ATTRS = frozenset({"format", "format_map", "mro"})


class ExpressionError(ModelcheckError):
    """A ``trace eval`` expression is malformed or failed on a state."""


def compile_expression(expr: str, variables: Sequence[str]) -> Any:
    """Compile ``expr`` for :func:`evaluate`; names must be trace variables or safe builtins.

    Raises :class:`ExpressionError` for syntax errors, unknown names and access to
    ``_private`` attributes. (This keeps mistakes and accidents out; it is not a
    security sandbox for hostile input.)
    """
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        caret = " " * max(0, (e.offset or 1) - 1) + "^"
        raise ExpressionError(f"the expression is not valid Python: {e.msg}:\n  {expr.strip()}"
                              f"\n  {caret}") from None
    bound: set[str] = set()
    loaded: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr.startswith("_")
                                                or node.attr in _BLOCKED_ATTRS):
            raise ExpressionError(f"attribute .{node.attr} is not allowed in trace "
                                  "expressions.")
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            else:
                loaded.append(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    known = set(variables) | set(SAFE_BUILTINS) | {"True", "False", "None"}
    for name in loaded:
        if name.startswith("__"):
            raise ExpressionError(f"name {name} is not allowed in trace expressions.")
        if name not in known and name not in bound:
            raise ExpressionError(
                f"unknown name {name!r} in the expression; the trace's variables are: "
                f"{', '.join(variables)}; available functions: {', '.join(SAFE_BUILTINS)}."
            )
    return compile(tree, "<expression>", "eval")


def evaluate(trace: Trace, expr: str) -> list[tuple[int, str, Any]]:
    """``(state number, action label, value)`` of ``expr`` in every state of ``trace``."""
    code = compile_expression(expr, trace.vars)
    out: list[tuple[int, str, Any]] = []
    for i, st in enumerate(trace.steps):
        ns: dict[str, Any] = {"__builtins__": SAFE_BUILTINS}
        ns.update({v: _eval_value(st.state[v]) for v in trace.vars})
        label = "init" if i == 0 else (action_label(st.action, st.params)
                                       if st.action else "<unnamed action>")
        try:
            value = eval(code, ns)  # noqa: S307 - restricted namespace, checked names
        except Exception as e:  # noqa: BLE001 - reported as one message
            raise ExpressionError(
                f"evaluating {expr.strip()!r} in state {i + 1} ({label}) failed with "
                f"{type(e).__name__}: {e}" + _eval_hint(e)
            ) from None
        out.append((i + 1, label, value))
    return out


def _eval_value(v: Any) -> Any:
    if isinstance(v, Mapping) and not isinstance(v, Record):
        return {k: _eval_value(x) for k, x in v.items()}
    return v


def _eval_hint(e: Exception) -> str:
    if isinstance(e, KeyError):
        return " (arrays are maps indexed by ints, e.g. offset[1])."
    if isinstance(e, TypeError) and "not subscriptable" in str(e):
        return " (only arrays can be indexed)."
    return "."
