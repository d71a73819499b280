"""Replay: is a trace a behaviour of a spec?

This module owns :func:`replay` and its :class:`ReplayReport`, and the conversion
of trace values into a spec's cells (:func:`state_to_cells`, :func:`cell_diffs`).
A failed replay names the step, the action and why: the false guard conjunct(s)
(:mod:`modelcheck.trace.conjuncts`), or the variables whose values differ from the
spec's successor. Values of the wrong type or shape raise
:class:`~modelcheck.trace.TraceMismatchError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from .. import codec
from ..errors import SpecEvaluationError, source_location
from ..kernel import Kernel
from ..layout import Layout
from ..spec import ActionInstance, Spec
from ..types import ValueDomainError, ValueKindError
from .conjuncts import conjunct_lines, guard_conjuncts
from .model import Trace, TraceMismatchError, index_key
from .render import action_label, format_value

__all__ = [
    "ReplayReport",
    "replay",
    "state_to_cells",
    "trace_cells",
    "cell_diffs",
]


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
        leaf = info.leaf
        assert leaf is not None
        for path, v in leaves:
            try:
                vals = leaf.codes_from_itf(v)
            except ValueKindError as e:
                _type_error(where, path, v, e.expected)
            except ValueDomainError as e:
                bad = bad or f"{path} {e}"
                vals = [t.lo for _, t in leaf.cells()]
            cells.extend(vals)
    return cells, bad


def _leaves(path: str, v: Any, dims: tuple[range, ...], out: list[tuple[str, Any]],
            where: str) -> None:
    if not dims:
        out.append((path, v))
        return
    ids = dims[0]
    if codec.kind(v) is not codec.Kind.MAP:
        _type_error(where, path, v, f"a map from {ids.start}..{ids.stop - 1}")
    keys = {index_key(k): k for k in v}
    want = set(ids)
    got = {k for k in keys if codec.kind(k) is codec.Kind.INT}
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


def trace_cells(spec: Spec, trace: Trace) -> list[list[int]]:
    """The cells of every state of ``trace`` in ``spec``'s layout.

    Raises :class:`TraceMismatchError` when the trace does not fit the spec: other
    variables, a value of the wrong type or shape, or a value outside its declared
    domain (``state 2 is not a state of S: logEnd = 99 is outside its domain 0..4.``).
    ``trace replay`` and ``trace show``/``eval --spec`` check a trace with it.
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
    out: list[list[int]] = []
    for i, step in enumerate(trace.steps):
        cells, bad = state_to_cells(layout, step.state, f"state {i + 1}")
        if bad:
            raise TraceMismatchError(f"state {i + 1} is not a state of {spec.name}: {bad}.")
        out.append(cells)
    return out


def replay(spec: Spec, trace: Trace) -> ReplayReport:
    """Check that ``trace`` is a behaviour of ``spec``.

    Raises :class:`TraceMismatchError` when the trace does not fit the spec (see
    :func:`trace_cells`: other variables, a value of the wrong type or outside its
    domain). Otherwise returns a report; on failure it names the step, the
    action and why: the false guard conjunct(s), or the variables whose values
    differ from the spec's successor.
    """
    layout = spec.layout
    converted = trace_cells(spec, trace)
    kernel = Kernel(spec, symmetry=False, view=False)
    rep = ReplayReport(repr(spec), len(trace.steps), ok=False)

    def fail(step: int, msg: str) -> ReplayReport:
        rep.failed_step = step
        rep.message = f"step {step}: {msg}"
        return rep

    cells0 = converted[0]
    inits = kernel.initial_states()
    if cells0 not in inits:
        best = min(inits, key=lambda c: sum(a != b for a, b in zip(c, cells0)))
        diffs = cell_diffs(layout, best, cells0, ("the spec's initial state has", "the trace has"))
        return fail(1, f"state 1 is not an initial state of {spec.name}; it differs from "
                       f"the {'closest ' if len(inits) > 1 else ''}initial state in:\n  "
                       + "\n  ".join(diffs[:12]) + _more(diffs, 12))
    for k in range(1, len(trace.steps)):
        step_no = k + 1
        prev = converted[k - 1]
        cur = converted[k]
        st = trace.steps[k]
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
    loop = trace.loop
    if loop is not None and loop < len(converted) - 1 and converted[-1] != converted[loop]:
        n = len(converted)
        diffs = cell_diffs(layout, converted[loop], converted[-1],
                           (f"state {loop + 1} has", f"state {n} has"))
        return fail(n, f"the loop does not close: the last state (state {n}) should be state "
                       f"{loop + 1}, where the loop starts, but differs from it in:\n  "
                       + "\n  ".join(diffs[:12]) + _more(diffs, 12))
    rep.ok = True
    rep.notes = _violations_along(kernel, converted)
    if loop is not None:
        rep.notes.insert(0, f"the loop closes: state {len(converted)} is state {loop + 1}"
                         if loop < len(converted) - 1
                         else f"the behaviour stutters forever in state {loop + 1}")
    return rep


def _more(items: Sequence[Any], n: int) -> str:
    return f"\n  ... and {len(items) - n} more" if len(items) > n else ""


def _instance(spec: Spec, name: str, params: Mapping[str, Any]) -> tuple[ActionInstance | None,
                                                                        str]:
    base, _, branch = name.partition("[")
    decl = type(spec)._actions.get(base)
    if decl is None:
        return None, (f"{spec.name} has no action {name!r}; its actions are: "
                      f"{', '.join(type(spec)._actions)}.")
    if (branch[:-1] if branch else None) not in (decl.branches or (None,)):
        have = ", ".join(f"{base}[{b}]" for b in decl.branches) or f"{base} (no branches)"
        return None, f"{spec.name} has no action {name!r}; its branches are: {have}."
    want = list(decl.params)
    if sorted(params) != sorted(want):
        sig = f"{name}({', '.join(want)})" if want else name
        return None, (f"action {sig} takes the parameters ({', '.join(want)}), the trace gives "
                      f"({', '.join(params)}).")
    typed = {p for a in spec.actions if a.name == name for p, v in a.params
             if type(v) is not int}
    clean: dict[str, Any] = {}
    for k, v in params.items():
        if k not in typed and (isinstance(v, bool) or not isinstance(v, int)):
            return None, f"parameter {k} = {format_value(v)} is not an integer."
        clean[k] = v
    inst = spec.action_by_label(name, clean)
    if inst is None:
        ranges = []
        for p in want:
            if p in typed:
                ranges.append(f"{p} = {format_value(clean[p])} is none of its values")
                continue
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
    lines += conjunct_lines(kernel.layout, false, "  ")
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
        lines.append(f"  {action_label(inst.name, dict(inst.params))} differs in "
                     f"{', '.join(diffs[:4])}{' ...' * (len(diffs) > 4)}")
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
