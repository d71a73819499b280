"""The inspection commands: ``modelcheck trace show|replay|eval`` and ``modelcheck graph``.

This module owns the command-line surface of traces and state graphs; the work is
done in the :mod:`modelcheck.trace` package (:mod:`~modelcheck.trace.render`,
:mod:`~modelcheck.trace.replay`, :mod:`~modelcheck.trace.evaluate`) and
:mod:`modelcheck.graph`. Errors are :class:`~modelcheck.errors.ModelcheckError`
subclasses, which the top-level group prints as one paragraph with exit code 2.

Exit codes: ``trace show``/``trace eval``/``graph``: 0, or 2 on a bad file,
expression or option. ``trace replay``: 0 the trace is a behaviour of the spec,
1 it is not (the message names the step), 2 the trace does not fit the spec
(other variables, values of the wrong type) or another error.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import click

from .budget import parse_memory_limit
from .cli_options import const_option
from .errors import ConstantError, SpecLoadError, UsageError
from .fileio import probe_file
from .graph import FORMATS, build_graph, graph_bytes
from .loader import bind_spec, load_spec_class, parse_consts
from .spec import Spec
from .trace import Trace, TraceMismatchError, load_trace
from .trace.evaluate import DEFAULT_LIMITS, Limits, evaluate
from .trace.render import Styles, format_value, render_trace
from .trace.replay import replay, trace_cells
from .trace.runrecord import atomic_write

__all__ = ["trace", "graph", "const_option", "bind_recorded", "fit_trace"]

TRACE_EXIT_HELP = """\b
Exit codes:
  0  ok (replay: the trace is a behaviour of the spec)
  1  replay: the trace is not a behaviour of the spec (the step is named)
  2  unreadable trace file, a trace that does not fit the spec, a bad
     expression or option"""
SHOW_EXIT_HELP = """\b
Exit codes:
  0  ok
  2  unreadable trace file, a trace that does not fit --spec, a bad option"""
EVAL_EXIT_HELP = """\b
Exit codes:
  0  ok
  2  unreadable trace file, a trace that does not fit --spec, a bad
     expression or option, --timeout or --memory-limit exceeded"""
REPLAY_EXIT_HELP = """\b
Exit codes:
  0  the trace is a behaviour of the spec
  1  the trace is not a behaviour of the spec (the step is named)
  2  unreadable trace file, a trace that does not fit the spec (other
     variables, a value of the wrong type or outside its domain), a spec
     error or a bad option"""
GRAPH_EXIT_HELP = """\b
Exit codes:
  0  the graph is written
  2  usage or spec error, more reachable states than --max-states, or
     --output cannot be written"""

_color_option = click.option(
    "--color/--no-color", default=None,
    help="Colour the output (default: only on a terminal).",
)


def _styles() -> Styles:
    s = partial(click.style)
    return Styles(
        header=partial(s, bold=True),
        action=partial(s, fg="cyan", bold=True),
        old=partial(s, fg="red"),
        new=partial(s, fg="green"),
        alert=partial(s, fg="red", bold=True),
        dim=partial(s, dim=True),
    )


def _echo(color: bool | None) -> Callable[..., None]:
    return partial(click.echo, color=color)


@click.group(epilog=TRACE_EXIT_HELP)
def trace() -> None:
    """Read counterexample traces: ITF (*.itf.json), modelcheck JSON (trace.json) or a
    run record (result.json or the run folder)."""


_spec_option = click.option(
    "--spec", "spec_target", metavar="SPEC", default=None,
    help="Check first that the trace fits SPEC (its variables, and every value in its "
         "declared domain), as `trace replay` does; constants from the trace, --const "
         "overrides them.")


def _load(file: str, spec_target: str | None = None, consts: tuple[str, ...] = ()) -> Trace:
    """Load the trace in ``file``; with ``spec_target``, check that it fits that spec."""
    t = load_trace(file)
    if spec_target is not None:
        fit_trace(file, bind_recorded(spec_target, t.constants, consts, file), t)
    elif consts:
        raise UsageError("--const needs --spec: constants belong to a spec.")
    return t


def fit_trace(file: str, spec: Spec, t: Trace) -> list[list[int]]:
    """The cells of every state of trace ``t`` (read from ``file``) in ``spec``; raises
    :class:`TraceMismatchError` naming the file when the trace does not fit the spec."""
    try:
        return trace_cells(spec, t)
    except TraceMismatchError as e:
        raise TraceMismatchError(f"{file}: {e}") from None


@trace.command(epilog=SHOW_EXIT_HELP)
@click.argument("file")
@_spec_option
@const_option
@click.option("--full", is_flag=True, help="Print every state in full, not only the changes.")
@click.option("--vars", "var_list", metavar="A,B", default=None,
              help="Only these variables (comma-separated).")
@click.option("--step", type=click.IntRange(min=1), default=None, metavar="K",
              help="Only state K (1-based) and the action that led to it.")
@_color_option
def show(file: str, spec_target: str | None, consts: tuple[str, ...], full: bool,
         var_list: str | None, step: int | None, color: bool | None) -> None:
    """Print a trace step by step: each action with its parameters and the variables it
    changed (old -> new, per array index)."""
    t = _load(file, spec_target, consts)
    names = _select_vars(t, var_list)
    if step is not None and step > len(t):
        raise UsageError(f"--step {step}: the trace has only {len(t)} states.")
    _echo(color)(render_trace(t, full=full, names=names, step=step, styles=_styles()))


def _select_vars(t: Trace, var_list: str | None) -> list[str] | None:
    if var_list is None:
        return None
    names = [v.strip() for v in var_list.split(",") if v.strip()]
    unknown = [v for v in names if v not in t.vars]
    if unknown or not names:
        raise UsageError(f"--vars {var_list}: unknown variable(s) {', '.join(unknown) or '-'}; "
                         f"the trace's variables are: {', '.join(t.vars)}.")
    return [v for v in t.vars if v in names]


@trace.command("replay", epilog=REPLAY_EXIT_HELP)
@click.argument("spec")
@click.argument("file")
@const_option
@_color_option
def replay_cmd(spec: str, file: str, consts: tuple[str, ...], color: bool | None) -> None:
    """Check that the trace in FILE is a behaviour of SPEC: its first state is initial and
    every step is a transition of the named action with those parameters (of some action
    when the trace names none).

    Constants default to those recorded in the trace; --const overrides them.
    """
    t = load_trace(file)
    bound = bind_recorded(spec, t.constants, consts, file)
    if t.spec and t.spec != bound.name:
        click.echo(f"note: the trace was recorded from {t.spec}; replaying it against "
                   f"{bound.name}.", err=True)
    fit_trace(file, bound, t)
    rep = replay(bound, t)
    echo = _echo(color)
    st = _styles()
    if not rep.ok:
        echo(st.alert(f"{file}: not a behaviour of {rep.spec}:") + "\n" + rep.message)
        sys.exit(1)
    if rep.inferred:
        echo(f"actions found for {len(rep.inferred)} unnamed step(s): "
             + ", ".join(f"step {k}: {v}" for k, v in rep.inferred.items()))
    echo(f"trace of {rep.states} states is a behaviour of {rep.spec}")
    for note in rep.notes:
        echo(f"note: {note}")


def bind_recorded(target: str, recorded: Mapping[str, Any], consts: tuple[str, ...],
                  where: str = "the trace") -> Spec:
    """Bind the spec ``target`` with the constants ``recorded`` in a trace or run record
    (``where`` names it), overridden by ``--const``; recorded constants the spec does not
    have are ignored with a note on stderr."""
    cls = load_spec_class(target)
    known = {name: c.default for name, c in cls._consts.items()}
    values: dict[str, Any] = {}
    ignored = [k for k in recorded if k not in known]
    for k, v in recorded.items():
        if k in known:
            # an enum constant is recorded by its member's name (older traces: its number)
            if not isinstance(v, str):
                values[k] = v
                continue
            try:
                values[k] = parse_consts((f"{k}={v}",), known)[k]
            except SpecLoadError:
                members = getattr(type(known[k]), "__members__", None)
                what = f"one of {', '.join(members)}" if members else "a number or a boolean"
                raise ConstantError(f"{where} records constant {k}={v!r}, but {k} of "
                                    f"{cls.__name__} is {what}.") from None
    if ignored:
        click.echo(f"note: ignoring constant(s) {', '.join(ignored)} recorded in {where}: "
                   f"not constants of {cls.__name__}.", err=True)
    values.update(parse_consts(consts, known))
    try:
        return cls(**values)
    except ConstantError as e:
        raise ConstantError(f"{e} (constants from {where}'s metadata, overridden by "
                            "--const)") from None


class ByteSize(click.ParamType):
    """A size in bytes (:func:`modelcheck.budget.parse_memory_limit`): ``512M``,
    ``2G``, ``1.5GiB``, ``2000000`` (units of 1024; at least 1 MiB)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_memory_limit(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)


@trace.command("eval", epilog=EVAL_EXIT_HELP)
@click.argument("file")
@click.argument("expr")
@_spec_option
@const_option
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_LIMITS.seconds, show_default=True, metavar="SECONDS",
              help="Stop (exit 2) when evaluating the whole trace takes longer.")
@click.option("--memory-limit", type=ByteSize(), default="512M", show_default=True,
              help="Stop (exit 2) when the evaluation needs more memory than this.")
def eval_cmd(file: str, expr: str, spec_target: str | None, consts: tuple[str, ...],
             timeout: float, memory_limit: int) -> None:
    """Evaluate the Python expression EXPR in every state of the trace in FILE.

    Variables are the trace's; arrays are dicts indexed by ints (offset[1] - regEpoch[1]),
    sets are frozensets, enum values are strings ("RUNNING"). Available functions: abs,
    min, max, len, sum, any, all, sorted, set, range, int, bool. The evaluation runs in
    a child process bounded by --timeout and --memory-limit.
    """
    t = _load(file, spec_target, consts)
    limits = Limits(seconds=timeout, memory=memory_limit)
    for k, label, value in evaluate(t, expr, limits=limits):
        click.echo(f"step {k} ({label}): {format_value(value, python=True)}")


#: the --output suffixes ``graph`` knows, and the format each means
GRAPH_SUFFIXES = {".dot": "dot", ".gv": "dot", ".graphml": "graphml", ".json": "json"}


def _graph_format(output: str) -> str:
    """The format ``graph --output`` names by its suffix (standard output: dot); a
    usage error for any other suffix (never silently DOT)."""
    if output == "-":
        return "dot"
    suffix = os.path.splitext(output)[1].lower()
    if suffix in GRAPH_SUFFIXES:
        return GRAPH_SUFFIXES[suffix]
    known = ", ".join(GRAPH_SUFFIXES)
    said = f"its suffix {suffix} is not one of" if suffix else "it has none of the suffixes"
    raise UsageError(f"--output {output}: {said} {known}, which name the format; give "
                     f"--format {'|'.join(FORMATS)}, or a file name with one of them.")


@click.command("graph", epilog=GRAPH_EXIT_HELP)
@click.argument("spec")
@const_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format [default: from the --output suffix: .dot or .gv, "
                   ".graphml, .json; dot on standard output].")
@click.option("--output", "-o", required=True, metavar="FILE",
              help="Where to write the graph ('-' for standard output); a regular file "
                   "there is replaced, a symbolic link, FIFO, device or directory is "
                   "refused.")
@click.option("--max-states", type=click.IntRange(min=1), default=10_000, show_default=True,
              help="Refuse (exit 2) when more states than this are reachable.")
def graph(spec: str, consts: tuple[str, ...], fmt: str | None, output: str,
          max_states: int) -> None:
    """Write the reachable state graph of SPEC (nodes: states, edges: actions with their
    parameters; initial and violating states marked) as DOT, GraphML or JSON."""
    if fmt is None:
        fmt = _graph_format(output)
    if output != "-":
        probe_file(output, "--output")  # before any work: a usage error naming it
    bound = bind_spec(spec, consts)
    g = build_graph(bound, max_states=max_states)
    data = graph_bytes(g, fmt)
    if output == "-":
        click.echo(data.decode("utf-8"), nl=False)
    else:
        try:
            atomic_write(output, data)
        except OSError as e:
            raise UsageError(f"--output {output}: cannot write: {e.strerror or e}.") from None
    initial = sum(1 for _, a in g.nodes(data=True) if a["initial"])
    bad = sum(1 for _, a in g.nodes(data=True) if a["violates"])
    where = "standard output" if output == "-" else output
    click.echo(f"State graph of {bound!r}: {g.number_of_nodes():,} states ({initial} initial, "
               f"{bad} violating an invariant), {g.number_of_edges():,} transitions; "
               f"written to {where} ({fmt}).", err=True)
