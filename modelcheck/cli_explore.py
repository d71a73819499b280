"""``modelcheck explore``: the web explorer of a spec, a trace and a run.

This module owns the command: it loads what the command line names (the spec, a
trace with ``--trace``, a run folder with ``--run``) and checks that they fit
together before serving anything, so that an unknown spec, an unreadable or
malformed trace, a trace of another spec or a port in use is one message and exit
code 2; then it serves :mod:`modelcheck.web` until Ctrl-C.
"""

from __future__ import annotations

import sys
import webbrowser

import click

from .cli_trace import bind_recorded, const_option, fit_trace
from .errors import UsageError
from .loader import bind_spec
from .trace import Trace, load_trace
from .web.runview import RunView, load_run
from .web.server import DEFAULT_HOST, ExploreServer, is_loopback
from .web.session import ExploreSession

__all__ = ["explore"]

EXPLORE_EXIT_HELP = """\b
Exit codes:
  0  stopped (Ctrl-C)
  2  unknown spec, unreadable or malformed trace or run folder, a trace that
     does not fit the spec, a run folder of another spec, a port in use, or
     another bad option"""


@click.command(epilog=EXPLORE_EXIT_HELP)
@click.argument("spec")
@click.option("--trace", "trace_file", metavar="FILE", default=None,
              help="Show this trace first (ITF, modelcheck JSON, or a run folder's "
                   "counterexample); constants from the trace, --const overrides them.")
@click.option("--run", "run_dir", metavar="DIR", default=None,
              help="Show the results of this run folder (check --out DIR): coverage, "
                   "levels, the violation; and its counterexample unless --trace is given.")
@const_option
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on. Anything but a loopback address lets other "
                   "machines evaluate expressions in this process: only on a network you "
                   "trust.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to listen on (0: any free port).")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in a browser.")
@click.option("--graph-limit", type=click.IntRange(min=1), default=10_000, show_default=True,
              metavar="N", help="The graph view is offered for specs with at most N "
                                "reachable states.")
def explore(spec: str, trace_file: str | None, run_dir: str | None, consts: tuple[str, ...],
            host: str, port: int, open_browser: bool, graph_limit: int) -> None:
    """Serve a web page to explore SPEC: step through a trace with the changed variables
    highlighted, branch off into the actions it did not take, evaluate expressions
    along the path, save it as an ITF trace, see a run's coverage and levels and the
    state graph around a state.

    The server listens on 127.0.0.1 only (--host to change) and prints its URL.
    """
    run: RunView | None = load_run(run_dir) if run_dir is not None else None
    trace: Trace | None = load_trace(trace_file) if trace_file is not None else None
    source = trace_file
    if trace is None and run is not None and run.trace is not None:
        trace, source = run.trace, run_dir
    notes: list[str] = []
    if trace is not None:
        bound = bind_recorded(spec, trace.constants, consts)
    elif run is not None:
        bound = bind_recorded(spec, run.summary["constants"] or {}, consts, "the run record")
    else:
        bound = bind_spec(spec, consts)
    if run is not None and run.summary["spec"] not in (None, bound.name):
        raise UsageError(f"--run {run_dir}: the run is of {run.summary['spec']}, not of "
                         f"{bound.name} ({spec}); give the spec the run checked"
                         + (f", {run.summary['target']}." if run.summary["target"] else "."))
    if trace is not None:
        fit_trace(source or "the trace", bound, trace)
        if trace.spec and trace.spec != bound.name:
            notes.append(f"the trace was recorded from {trace.spec}; exploring it in "
                         f"{bound.name}.")
    for note in notes:
        click.echo(f"note: {note}", err=True)
    session = ExploreSession(bound, target=spec, trace=trace, trace_source=source, run=run,
                             notes=notes, graph_limit=graph_limit)
    if not is_loopback(host):
        click.echo(f"warning: --host {host} is not a loopback address: whoever reaches it "
                   "can use this explorer, and evaluate expressions in it.", err=True)
    server = ExploreServer(session, host, port)
    click.echo(f"Exploring {bound!r} at {server.url} (Ctrl-C to stop)")
    sys.stdout.flush()
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
