"""Traces as data: the :class:`Trace` model and its two file formats.

This module owns the in-memory :class:`Trace` (a sequence of states, each with the
action and parameters that led to it, plus what the trace was recorded from), the
errors of reading one (:class:`TraceFileError`) and of fitting one to a spec
(:class:`TraceMismatchError`), and reading and writing trace files:

* conversion from a checker :class:`~modelcheck.result.Violation`
  (:meth:`Trace.from_violation`; :meth:`Trace.from_result` without the spec);
* the two file formats: ITF, the Informal Trace Format of Apalache/Quint
  (through the strict codec :mod:`modelcheck.trace.itf`), and our own JSON
  (``{"format": "modelcheck-trace", "spec", "constants", "property", "kind",
  "vars", "steps": [{"action", "params", "state"}]}``); :func:`loads_trace`
  detects which one a file holds (a ``result.json`` run record works too).

Showing a trace is :mod:`modelcheck.trace.render`, replaying it against a spec
:mod:`modelcheck.trace.replay`, evaluating expressions over it
:mod:`modelcheck.trace.evaluate`.

Trace values are plain Python data: ``int``, ``bool``, ``str`` (enum members by
name), ``dict`` (arrays, keyed by index), ``frozenset`` (sets), ``tuple``, and
``list`` (sequences: a list stays a list through every reader and writer; it is
never taken for a set). A spec variable's type decides how a value becomes a
state (:meth:`~modelcheck.types.base.ScalarType.from_itf`; a ``SetOf`` variable
accepts a set or a list of distinct ids). Files are plain JSON; nothing here ever
unpickles or imports anything from a trace.
"""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .. import codec
from ..errors import ModelcheckError
from ..result import Result, TraceStep, Violation, ViolationKind, constants_out
from ..spec import Spec
from .itf import (
    ItfError,
    ItfTrace,
    Record,
    decode_value,
    encode_value,
    freeze,
    from_itf,
    parse_json_strict,
)

__all__ = [
    "Trace",
    "TraceFileError",
    "TraceMismatchError",
    "TRACE_JSON_FORMAT",
    "ITF_FORMAT_DESCRIPTION",
    "loads_trace",
    "load_trace",
    "trace_from_document",
    "trace_to_itf",
    "trace_from_itf",
    "trace_to_json",
    "trace_from_json",
    "dumps_trace_json",
    "index_key",
    "value_sort_key",
]

TRACE_JSON_FORMAT = "modelcheck-trace"
#: version 2 writes sets as ``{"#set": [...]}`` and tuples as ``{"#tup": [...]}`` (version 1
#: wrote sets as plain lists, which now read back as lists)
TRACE_JSON_VERSION = 2
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
    #: the violation's kind as recorded: a :class:`~modelcheck.result.ViolationKind`'s
    #: value (a trace file may carry another text, shown as it is)
    kind: str | None = None
    also_violated: tuple[str, ...] = ()
    file_format: str = "json"
    #: a lasso (an infinite behaviour): the index of the state where the loop starts;
    #: the last state equals it when the loop has steps, else the last state stutters
    loop: int | None = None
    #: why the loop satisfies each fairness condition (liveness counterexamples)
    fairness: tuple[str, ...] = ()
    #: the violated temporal property as a formula (``P ~> Q``)
    formula: str | None = None

    def __len__(self) -> int:
        return len(self.steps)

    @builtins.property  # the field ``property`` shadows the builtin in this class body
    def has_actions(self) -> bool:
        """Whether any step names the action that led to it."""
        return any(s.action is not None for s in self.steps[1:])

    @classmethod
    def from_violation(cls, spec: Spec, violation: Violation, source: str | None = None) -> Trace:
        """The counterexample of a check result, with the spec's variables and constants."""
        layout = spec.layout
        steps = tuple(TraceStep(s.action, dict(s.params),
                                layout.itf_values_from_cells(layout.cells_from_values(s.state)))
                      for s in violation.trace)
        return cls(vars=tuple(spec.layout.vars), steps=steps, spec=spec.name, source=source,
                   constants=dict(spec.constants), property=violation.property,
                   kind=violation.kind, also_violated=tuple(violation.also_violated),
                   loop=violation.loop, fairness=tuple(violation.fairness),
                   formula=violation.formula)

    @classmethod
    def from_result(cls, result: Result, source: str | None = None) -> Trace | None:
        """The counterexample of a check result without its spec (None if it has none):
        the variables are those of its states, in their order."""
        v = result.violation
        if v is None:
            return None
        steps = tuple(TraceStep(s.action, dict(s.params),
                                {k: codec.normalize(x) for k, x in s.state.items()})
                      for s in v.trace)
        return cls(vars=tuple(v.trace[0].state) if v.trace else (), steps=steps, spec=result.spec,
                   source=source, constants=dict(result.constants), property=v.property,
                   kind=v.kind, also_violated=tuple(v.also_violated), loop=v.loop,
                   fairness=tuple(v.fairness), formula=v.formula)

    def describe(self) -> str:
        """One line: what the trace is of, and how long."""
        what = self.spec or "a spec"
        if self.constants:
            shown = constants_out(self.constants)
            what += " (" + ", ".join(f"{k}={v}" for k, v in shown.items()) + ")"
        return f"{what}, {len(self.steps)} state{'s' if len(self.steps) != 1 else ''}"

    def violation_text(self) -> str | None:
        """What the trace is a counterexample to, if recorded."""
        if not self.kind:
            return None
        if self.kind == ViolationKind.DEADLOCK:
            return "Deadlock: the last state has no enabled action."
        if self.kind == ViolationKind.LIVENESS or self.loop is not None:
            formula = f" ({self.formula})" if self.formula else ""
            also = f" (also violated: {', '.join(self.also_violated)})" \
                if self.also_violated else ""
            return (f"Counterexample: this infinite behaviour violates temporal property "
                    f"{self.property}{formula}{also}.")
        names: dict[str, str] = {ViolationKind.INVARIANT: "invariant",
                                 ViolationKind.ACTION: "action property"}
        what = names.get(self.kind, self.kind)
        where = "the last step" if self.kind == ViolationKind.ACTION else "the last state"
        also = f" (also violated: {', '.join(self.also_violated)})" if self.also_violated else ""
        return f"Counterexample: {where} violates {what} {self.property}{also}."


index_key = codec.index_key


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
        meta["constants"] = constants_out(trace.constants)
    if trace.property is not None:
        meta["property"] = trace.property
    if trace.kind is not None:
        meta["kind"] = trace.kind
    if trace.also_violated:
        meta["also_violated"] = list(trace.also_violated)
    if trace.fairness:
        meta["fairness"] = list(trace.fairness)
    if trace.formula:
        meta["formula"] = trace.formula
    states = tuple({v: _itf_value(s.state[v]) for v in trace.vars} for s in trace.steps)
    state_meta = tuple(
        {"index": i, "action": "init", "params": {}} if i == 0
        else {"index": i} if s.action is None  # unknown action: say nothing
        else {"index": i, "action": s.action, "params": _itf_params(s.params)}
        for i, s in enumerate(trace.steps)
    )
    return ItfTrace(vars=trace.vars, states=states, meta=meta, state_meta=state_meta,
                    loop=trace.loop)


def _itf_description(trace: Trace) -> str:
    what = f"Counterexample to {trace.property}" if trace.property else "Trace"
    return f"{what} found by modelcheck" + (f" in {trace.spec}" if trace.spec else "")


def _itf_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values for a state's ``#meta``: ints as they are, a compound value (a
    record, a set) in ITF's JSON (``{"#set": [...]}``)."""
    return {k: v if isinstance(v, (int, str)) else encode_value(_itf_value(v))
            for k, v in params.items()}


def _param_value(v: Any) -> Any:
    """A parameter value read from a trace file: an int or string as it is, ITF JSON (a
    record, a set) decoded and frozen, as action instances hold it; None if neither."""
    if isinstance(v, bool) or isinstance(v, (int, str)):
        return None if isinstance(v, bool) else v
    if isinstance(v, (dict, list)):
        try:
            return freeze(decode_value(v))
        except (ItfError, TypeError, ValueError):
            return None
    return None


def _itf_value(v: Any) -> Any:
    if codec.kind(v) is codec.Kind.MAP:
        return {k: _itf_value(x) for k, x in v.items()}
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
        loop=itf.loop, fairness=_meta_names(meta, "fairness", where),
        formula=_meta_str(meta, "formula", where),
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
        pv = _param_value(v)
        if pv is None:
            raise TraceFileError(f"{path}.params.{k}: expected an integer, a string or an "
                                 f"ITF value, got {json.dumps(v)[:40]}.")
        params[k] = pv
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
        stack.extend((y, d + 1) for y in codec.children(x))
    return False


def _thaw(v: Any) -> Any:
    """ITF values in trace form: frozen maps and sequences back to dicts and lists."""
    k = codec.kind(v)
    if k is codec.Kind.MAP:
        return {key: _thaw(x) for key, x in v.items()}
    if k is codec.Kind.SEQ:
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
        if not isinstance(x, (int, bool, str)):
            raise TraceFileError(f"{where}: constants.{k}: expected an integer, a boolean or "
                                 f"the name of an enum member, got {json.dumps(x)[:40]}.")
    return dict(v)


# --------------------------------------------------------------------------- our JSON


def trace_to_json(trace: Trace) -> dict[str, Any]:
    """Our JSON trace document: arrays as objects keyed by index, sets as
    ``{"#set": [sorted members]}``, tuples as ``{"#tup": [...]}``, lists as lists."""
    return {
        "format": TRACE_JSON_FORMAT,
        "version": TRACE_JSON_VERSION,
        "spec": trace.spec,
        "source": trace.source,
        "constants": constants_out(trace.constants),
        "property": trace.property,
        "kind": trace.kind,
        "also_violated": list(trace.also_violated),
        **({"loop": trace.loop, "fairness": list(trace.fairness), "formula": trace.formula}
           if trace.loop is not None else {}),
        "vars": list(trace.vars),
        "steps": [{"action": s.action, "params": {k: _json_value(v) for k, v in s.params.items()},
                   "state": {v: _json_value(s.state[v]) for v in trace.vars}}
                  for s in trace.steps],
    }


def dumps_trace_json(trace: Trace) -> str:
    """The text of our JSON trace file (indent 2, trailing newline)."""
    return json.dumps(trace_to_json(trace), indent=2, allow_nan=False) + "\n"


def _json_value(v: Any) -> Any:
    try:
        return codec.to_trace_json(v)
    except ValueError as e:
        raise TraceFileError(str(e)) from None


#: the order of set members and map keys in files and text: TLC's
#: (:func:`modelcheck.codec.sort_key`)
value_sort_key = codec.sort_key


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
        for k, v in list(params.items()):
            if isinstance(v, bool) or not isinstance(v, (int, str, dict, list)):
                fail(f"{p}.params.{k}", f"expected an integer, a string or a value, got "
                                        f"{_jdesc(v)}.")
            if isinstance(v, (dict, list)):
                params[k] = freeze(_from_json_value(v, f"{p}.params.{k}", fail))
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
        loop=_doc_loop(doc, len(steps), fail), fairness=_meta_names(doc, "fairness", where),
        formula=_doc_str(doc, "formula", fail),
    )


def _doc_loop(doc: Mapping[str, Any], n: int, fail: Callable[[str, str], NoReturn]) -> int | None:
    v = doc.get("loop")
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < n:
        fail("loop", f"expected the index of a state (0..{n - 1}) or null, got {_jdesc(v)}.")
    return v


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
    if isinstance(j, dict) and len(j) == 1 and next(iter(j)) == "#rec":
        body = j["#rec"]
        if not isinstance(body, dict):
            fail(f"{path}.#rec", f"expected an object, got {_jdesc(body)}.")
        return Record({k: _from_json_value(x, f"{path}.{k}", fail, depth + 1)
                       for k, x in body.items()})
    if isinstance(j, dict) and len(j) == 1 and next(iter(j)) == "#map":
        body = j["#map"]
        if not isinstance(body, list) or not all(isinstance(e, list) and len(e) == 2
                                                 for e in body):
            fail(f"{path}.#map", "expected a list of [key, value] pairs.")
        return {freeze(_from_json_value(k, f"{path}.#map[{i}][0]", fail, depth + 1)):
                _from_json_value(x, f"{path}.#map[{i}][1]", fail, depth + 1)
                for i, (k, x) in enumerate(body)}
    if isinstance(j, dict) and len(j) == 1 and next(iter(j)) in ("#set", "#tup"):
        tag, body = next(iter(j.items()))
        if not isinstance(body, list):
            fail(f"{path}.{tag}", f"expected a list, got {_jdesc(body)}.")
        if tag == "#tup":
            return tuple(_from_json_value(x, f"{path}.#tup[{i}]", fail, depth + 1)
                         for i, x in enumerate(body))
        out: set[Any] = set()
        for i, x in enumerate(body):
            if isinstance(x, dict) and len(x) == 1 and next(iter(x)) in ("#rec", "#tup", "#set",
                                                                         "#map"):
                x = freeze(_from_json_value(x, f"{path}.#set[{i}]", fail, depth + 1))
            elif isinstance(x, list):
                x = freeze(_from_json_value(x, f"{path}.#set[{i}]", fail, depth + 1))
            elif not isinstance(x, (bool, int, str)):
                fail(f"{path}.#set[{i}]", f"a set holds integers, strings, records, tuples, "
                                          f"sequences or sets, got {_jdesc(x)}.")
            if x in out:
                fail(f"{path}.#set[{i}]", "duplicate set element"
                     + (" (a boolean equals 0 or 1)." if isinstance(x, bool)
                        or type(next(y for y in out if y == x)) is bool else "."))
            out.add(x)
        return frozenset(out)
    if isinstance(j, dict):
        return {index_key(k): _from_json_value(x, f"{path}[{k}]", fail, depth + 1)
                for k, x in j.items()}
    if isinstance(j, list):
        # a sequence stays a sequence (a set is {"#set": [...]})
        return [_from_json_value(x, f"{path}[{i}]", fail, depth + 1) for i, x in enumerate(j)]
    fail(path, f"expected an integer, boolean, string, list, object (array), {{\"#set\": "
               f"[...]}} or {{\"#tup\": [...]}}, got {_jdesc(j)}.")


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
        hint = "" if "truncated" in str(e) else " (not a trace file: trace files are JSON text)"
        raise TraceFileError(f"{e}{hint}.") from None
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
    run_doc = doc.get("run")
    run: dict[str, Any] = run_doc if isinstance(run_doc, dict) else {}
    spec_doc = run.get("spec")
    spec_info: dict[str, Any] = spec_doc if isinstance(spec_doc, dict) else {}
    tdoc = {
        "spec": doc.get("spec"), "source": spec_info.get("target"),
        "constants": doc.get("constants", {}), "property": v.get("property"),
        "kind": v.get("kind"), "also_violated": v.get("also_violated", []),
        "steps": v["trace"],
        **{k: v[k] for k in ("loop", "fairness", "formula") if k in v},
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
