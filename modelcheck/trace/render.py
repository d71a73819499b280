"""Traces as text: the values, the per-state changes and ``modelcheck trace show``.

This module owns how trace values print (:func:`format_value`: ``TRUE``/``FALSE``,
enum names, maps, sets ``{1, 2}``), how an action step is labelled (:func:`action_label`:
``Register(b=1)``), which values changed between two states (:func:`changes`: per
array index), the states of a trace as text (:func:`render_states`, shared by the
counterexample in ``modelcheck check``'s report and by ``trace show``) and the
``trace show`` text (:func:`render_trace`), coloured through :class:`Styles`. Every
place that shows a step's action or a trace value goes through these functions, so
a value reads the same in every output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import codec
from .itf import Unserializable
from .model import Trace

__all__ = [
    "Styles",
    "render_trace",
    "render_states",
    "format_value",
    "changes",
    "action_label",
    "loop_lines",
    "leaves",
]


def format_value(v: Any, *, python: bool = False) -> str:
    """A trace value as text: TRUE/FALSE (``True``/``False`` with ``python``), enum names,
    maps ``{1: 0, 2: 3}``, sets ``{1, 2}`` in TLC's order (:func:`modelcheck.codec.text`)."""
    return codec.text(v, python=python)


def action_label(action: str | None, params: Mapping[str, Any]) -> str:
    """``Register(b=1)``; ``<initial state>`` for the first state."""
    if action is None:
        return "<initial state>"
    if not params:
        return action
    return f"{action}({', '.join(f'{k}={_param(v)}' for k, v in params.items())})"


_COMPOUND = (codec.Kind.MAP, codec.Kind.RECORD, codec.Kind.SET, codec.Kind.SEQ,
             codec.Kind.TUPLE)


def _param(v: Any) -> str:
    """A parameter value in a label: an int as it is, a compound value as TLA+ writes it
    (``m=[type |-> \"ack\", rm |-> 2]``, ``S={1, 2}``), as fairness labels have it."""
    if codec.kind(v) in _COMPOUND:
        return codec.tla_text(v)
    return format_value(v)


_ABSENT = Unserializable("absent")


def changes(old: Mapping[str, Any], new: Mapping[str, Any],
            names: Iterable[str]) -> list[tuple[str, Any, Any]]:
    """``(path, old, new)`` for every changed value; arrays per index (``regEpoch[2]``),
    a map whose keys change (a bag that gains or loses an element) as a whole."""
    out: list[tuple[str, Any, Any]] = []
    for name in names:
        _diff(name, old.get(name, _ABSENT), new.get(name, _ABSENT), out)
    return out


def _diff(path: str, a: Any, b: Any, out: list[tuple[str, Any, Any]]) -> None:
    if codec.same(a, b):
        return
    if codec.kind(a) is codec.Kind.MAP and codec.kind(b) is codec.Kind.MAP \
            and a.keys() == b.keys():
        for k in sorted(a, key=codec.sort_key):
            _diff(f"{path}[{format_value(k)}]", a[k], b[k], out)
        return
    # A map whose domain changes (a bag gaining or losing an element, a function of
    # another tool's trace) changes as a whole: ``chan: {} -> {[src: 1]: 1}``.
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
    """The ``trace show`` text: a header, what the trace is a counterexample to, then
    :func:`render_states`."""
    st = styles or Styles()
    lines = [st.header(f"Trace of {trace.describe()}")]
    vt = trace.violation_text()
    if vt and step is None:
        lines.append(st.alert(vt))
    lines += render_states(trace, full=full, names=names, step=step, styles=st)
    if vt and step is not None and step == len(trace.steps):
        lines.append(st.alert(vt))
    return "\n".join(lines)


def render_states(trace: Trace, *, full: bool = False, names: Sequence[str] | None = None,
                  step: int | None = None, styles: Styles | None = None,
                  compact: bool = False) -> list[str]:
    """The states of ``trace`` as lines: the initial state in full, then per state the
    action and the changed variables (``old -> new``, per array index); ``full`` prints
    whole states, ``names`` restricts to some variables, ``step`` (1-based) prints one
    state only.

    ``compact`` is the form of ``modelcheck check``'s report: indented under it, no
    blank line between states, whole states one line per array element
    (``offset[1] = 0``). Values and action labels are the same in both forms.
    """
    st = styles or Styles()
    shown = list(names) if names is not None else list(trace.vars)
    lines: list[str] = []
    indices = range(len(trace.steps)) if step is None else [step - 1]
    width = max((len(n) for n in shown), default=0)
    head, body = ("  ", "      ") if compact else ("", "    ")
    for i in indices:
        s = trace.steps[i]
        label = action_label(s.action, s.params) if i == 0 or s.action is not None \
            else "<unnamed action>"
        if not compact:
            lines.append("")
        mark = ""
        if trace.loop is not None and i == trace.loop and trace.loop < len(trace.steps) - 1:
            mark = st.alert("   <- the loop starts here")
        lines.append(head + st.header(f"State {i + 1}: ") + st.action(label) + mark)
        if i == 0 or full:
            for n in shown:
                value = s.state.get(n, _ABSENT)
                if compact:
                    lines += [f"{body}{path} = {format_value(v)}" for path, v in leaves(n, value)]
                else:
                    lines.append(f"{body}{n:<{width}} = {format_value(value)}")
            continue
        diff = changes(trace.steps[i - 1].state, s.state, shown)
        if not diff:
            what = "variable" if names is None else "selected variable"
            lines.append(st.dim(f"{body}(no {what} changed)"))
        for path, a, b in diff:
            lines.append(f"{body}{path}: {st.old(format_value(a))} -> {st.new(format_value(b))}")
    if trace.loop is not None and (step is None or step == len(trace.steps)):
        lines += [head + line for line in loop_lines(trace, st)]
    return lines


def loop_lines(trace: Trace, styles: Styles | None = None) -> list[str]:
    """How a lasso continues after its last state, and why its loop is fair."""
    st = styles or Styles()
    n, loop = len(trace.steps), trace.loop
    if loop is None:
        return []
    if loop == n - 1:
        out = [st.alert(f"State {n} stutters forever (the behaviour takes no further "
                        "step; no fair action is enabled there).")]
    else:
        out = [st.alert(f"State {n} is state {loop + 1}: the loop from state {loop + 1} "
                        "repeats forever.")]
    if trace.fairness:
        out.append("Fairness on the loop:")
        out += [f"  {line}" for line in trace.fairness]
    else:
        out.append("No fairness condition applies to the property.")
    return out


def leaves(path: str, v: Any) -> list[tuple[str, Any]]:
    """``(path, value)`` per array element (``offset[1]``), as :func:`changes` names them;
    an empty map (an empty bag) is one leaf, ``chan = {}``."""
    if codec.kind(v) is codec.Kind.MAP and v:
        return [leaf for k in sorted(v, key=codec.sort_key)
                for leaf in leaves(f"{path}[{format_value(k)}]", v[k])]
    return [(path, v)]
