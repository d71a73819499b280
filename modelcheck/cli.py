"""The ``modelcheck`` command line.

Exit codes: 0 ok (no violation), 1 violation or deadlock, 2 usage or spec
error, 3 incomplete (interrupted or a bound reached).
"""

from __future__ import annotations

import functools
import json
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import click

from .budget import SAFE_SHARE, format_size, parse_memory_limit
from .cli_options import (
    CHECK_SPARK_OPTIONS,
    SIMULATE_SPARK_OPTIONS,
    ModeCommand,
    SparkOptions,
    backend_option,
    const_option,
    given_params,
    spark_options,
)
from .config import CheckConfig, parse_workers
from .errors import ModelcheckError, UsageError
from .fileio import file_uri_path, has_scheme, prepare_dir
from .interrupt import Interrupts

if TYPE_CHECKING:
    from .result import Result
    from .run.progress import Progress
    from .simulate import SimConfig, SimProgress
    from .spec import Spec
    from .trace.runrecord import RunRecorder

# The command line starts fast: this module imports only click and the light modules
# above; the engine (numpy), the traces, the web server (uvicorn) and networkx are
# imported by the command that needs them, in its body, and the subcommands of other
# modules are loaded when invoked (see _Group and LAZY_COMMANDS).

__all__ = ["main", "cli", "bind_spec", "print_error", "check_options", "simulate",
           "simulate_options", "SimOptions", "sim_progress_printer", "SetupProgress",
           "progress_printer"]

EXIT_HELP = """\b
Exit codes:
  0  ok: every reachable state explored, nothing violated
  1  an invariant, action property or temporal property is violated, or a
     deadlock was found
  2  usage error, or an error in the spec (reported with file and line)
  3  incomplete: interrupted (Ctrl-C), --max-depth or --max-states reached, or
     the memory limit reached (counts cover the complete levels)"""


INSPECT_EXIT_HELP = """\b
Exit codes:
  0  ok
  2  usage error, or an error in the spec (reported with file and line)"""


def print_error(e: BaseException, fmt: str = "text") -> NoReturn:
    """Report a user-facing error as one paragraph and exit with code 2."""
    msg = str(e)
    if fmt == "json":
        click.echo(json.dumps({"status": "error", "error": msg}, indent=2))
    click.echo(f"error: {msg}", err=True)
    sys.exit(2)


def bind_spec(target: str, consts: tuple[str, ...]) -> Spec:
    """Load ``target`` and bind it with ``K=V`` constant overrides
    (:func:`modelcheck.loader.bind_spec`)."""
    from .loader import bind_spec as bind

    return bind(target, consts)


class SetupProgress:
    """Progress lines on stderr while a command sets up (loads the spec, builds its
    action instances and kernel), which for a large action family takes long: from a
    second on, ``[   1.0s] setting up: PHASE`` when the phase changes and every few
    seconds, until the run starts (``stop.started``) or the block ends. Printed by a
    daemon thread, so that it shows whatever the main thread is computing.

    For example::

        with Interrupts(setup=True) as stop, SetupProgress(stop, True) as setup:
            setup.phase("loading the spec")
            ...
    """

    def __init__(self, stop: Interrupts, enabled: bool, first: float = 1.0,
                 every: float = 5.0) -> None:
        import threading

        self.stop, self.enabled, self.first, self.every = stop, enabled, first, every
        self._phase = "starting"
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._tick, name="setup-progress",
                                        daemon=True)

    def phase(self, text: str) -> None:
        """Say what the set-up does now."""
        self._phase = text

    def _tick(self) -> None:
        import time

        t0 = time.perf_counter()
        shown, last = "", 0.0
        if self._done.wait(self.first):
            return
        while not self._done.is_set() and not self.stop.started:
            now = time.perf_counter() - t0
            if self._phase != shown or now - last >= self.every:
                shown, last = self._phase, now
                click.echo(f"[{now:7.1f}s] setting up: {shown}", err=True)
            self._done.wait(0.25)

    def __enter__(self) -> SetupProgress:
        if self.enabled:
            self._thread.start()
        return self

    def end(self) -> None:
        """The set-up is over: no more lines."""
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def __exit__(self, *exc: object) -> None:
        self.end()


def progress_printer(enabled: bool) -> Callable[[Progress], None] | None:
    """A progress callback printing each report's line on stderr (every backend's)."""
    if not enabled:
        return None
    from .run.progress import progress_line

    def show(p: Progress) -> None:
        click.echo(progress_line(p), err=True)

    return show


class _Group(click.Group):
    """The ``modelcheck`` group: its subcommands of other modules and of plugins are
    loaded when invoked (so ``--help``, ``--version`` and ``check`` import no web
    server, networkx or pyspark); a user error is one paragraph, a Ctrl-C exit code 3."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load_plugins()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            _load_plugins()
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if isinstance(cmd, _LazyCommand) and name is not None:
            cmd = cmd.load()
            self.commands[name] = cmd
        return name, cmd, rest

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ModelcheckError as e:
            print_error(e)
        except KeyboardInterrupt as e:  # not click's "Aborted!" with exit code 1
            if isinstance(e.__context__, SystemExit):
                raise e.__context__ from None  # the command had finished: its exit stands
            click.echo("interrupted", err=True)
            sys.exit(3)


class MemorySize(click.ParamType):
    """A size such as ``512M`` or ``8G`` (bytes), or ``none`` for no limit."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str | None:
        if value is None or isinstance(value, int) or value == "auto":
            return value  # type: ignore[no-any-return]
        if str(value).strip().lower() in ("none", "off", "unlimited"):
            return None
        try:
            return parse_memory_limit(str(value))
        except ValueError as e:
            self.fail(str(e), param, ctx)


@click.group(cls=_Group, epilog=EXIT_HELP)
@click.version_option(package_name="modelcheck")
def cli() -> None:
    """Explicit-state model checker for TLA+-style specs written in Python."""


format_option = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="Report format; json prints one object on stdout.",
)


def check_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options that say what to check and how, shared by ``check``, ``spark`` and
    any later subcommand: ``--invariant``, ``--no-deadlock``/``--deadlock``,
    ``--no-symmetry``, ``--no-view``, ``--max-depth``, ``--batch-size``, ``--checkpoint-dir``,
    ``--resume``, ``--max-states``, ``--memory-limit``. The command receives them as one
    ``config`` (:class:`~modelcheck.config.CheckConfig`); a contradiction among them is a usage
    error reported in the command's ``--format``, and so is a ``--checkpoint-dir``
    that cannot be created or written in (probed before any work, and created only
    when the run starts)."""
    return _check_options(f, "check")


def simulation_check_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options of :func:`check_options` that a simulation takes (``simulate``):
    every one but those of a run that keeps levels (:data:`LEVEL_OPTIONS`) and
    ``--no-view`` (walks are of whole states: a view changes nothing), with
    ``--batch-size`` the walks advanced together (default 2048), ``--max-depth`` the
    steps of a walk (default 100) and ``--memory-limit`` the set of distinct states
    counted."""
    return _check_options(f, "simulate")


#: The options of a run that keeps its levels (exhaustive exploration), which a
#: simulation does not take, by parameter name.
LEVEL_OPTIONS = ("checkpoint_dir", "resume", "max_states")


def _check_options(f: Callable[..., Any], mode: str) -> Callable[..., Any]:
    """:func:`check_options` for ``mode`` ``check`` (every option) or ``simulate``
    (:func:`simulation_check_options`)."""

    @functools.wraps(f)
    def command(*args: Any, invariants: tuple[str, ...], no_deadlock: bool,
                force_deadlock: bool, no_symmetry: bool,
                max_depth: int | None, batch_size: int, no_view: bool = False,
                memory_limit: int | str | None, checkpoint_dir: str | None = None,
                resume: bool = False, max_states: int | None = None,
                **kwargs: Any) -> Any:
        try:
            if no_deadlock and force_deadlock:
                raise UsageError("--deadlock and --no-deadlock contradict each other.")
            if resume and checkpoint_dir is None:
                raise UsageError("--resume needs --checkpoint-dir: the directory of the run "
                                 "to continue.")
            if checkpoint_dir is not None and checkpoint_dir.startswith("file://"):
                checkpoint_dir = file_uri_path(checkpoint_dir, "--checkpoint-dir")
            if checkpoint_dir is not None and not has_scheme(checkpoint_dir):
                # a working directory: tried before any work (a URI such as hdfs://... is
                # for the Spark backend, which checks it through Hadoop)
                # probed, not created: a run refused later (another option, the spec)
                # leaves nothing behind; the explorer creates it when it starts
                prepare_dir(checkpoint_dir, "--checkpoint-dir", create=False)
        except UsageError as e:
            print_error(e, kwargs.get("fmt", "text"))
        config = CheckConfig(
            invariants=invariants or None,
            check_deadlock=False if no_deadlock else (True if force_deadlock else None),
            symmetry=not no_symmetry, view=not no_view, max_depth=max_depth,
            batch_size=batch_size, checkpoint_dir=checkpoint_dir, resume=resume,
            max_states=max_states, memory_limit=memory_limit)  # type: ignore[arg-type]
        return f(*args, config=config, **kwargs)

    check = mode == "check"
    options = [
        click.option("--invariant", "invariants", multiple=True, metavar="NAME",
                     help="Check only these invariants/action properties/temporal "
                          "properties (repeatable); names from the spec or from a "
                          "predicate library such as the invariants package."),
        click.option("--no-deadlock", is_flag=True,
                     help="Do not report states without successors."),
        click.option("--deadlock", "force_deadlock", is_flag=True,
                     help="Report deadlocks even if the spec turns the check off."),
        click.option("--no-symmetry", is_flag=True,
                     help="Explore every state even if the spec declares symmetric ids."
                     if check else "Shrink the counterexample without the spec's "
                                   "symmetry (walks never use it)."),
        *([click.option("--no-view", is_flag=True,
                        help="Count and expand every state even if the spec declares a "
                             "view (TLA+'s VIEW); needed to check temporal properties of "
                             "such a spec.")] if check else []),
        click.option("--max-depth", type=click.IntRange(min=0), default=None,
                     help="Stop after exploring this many steps from the initial states."
                     if check else "Steps per walk at most (default 100; TLC's -depth "
                                   "counts states, one more)."),
        click.option("--batch-size", type=click.IntRange(min=1),
                     default=1 << 16 if check else 2048, show_default=True,
                     help="States evaluated per batch (speed and memory only: never "
                          "changes a result)." if check else
                          "Walks advanced together, one state each per batch (speed and "
                          "memory only: never changes a result)."),
        *([click.option("--checkpoint-dir", metavar="DIR", default=None,
                        help="Commit every finished level here (atomically: a killed run "
                             "leaves the last complete level), so that --resume can "
                             "continue the run. With the Spark backend: storage every "
                             "executor reaches at the same path, or a URI (hdfs://...)."),
           click.option("--resume", is_flag=True,
                        help="Continue the run checkpointed in --checkpoint-dir (refused if "
                             "the spec, constants or checks differ)."),
           click.option("--max-states", type=click.IntRange(min=1), default=None,
                        metavar="N",
                        help="Stop at the last complete level rather than store more than N "
                             "distinct states (exit code 3, reason max-states).")]
          if check else []),
        click.option("--memory-limit", type=MemorySize(), default="auto", metavar="SIZE",
                     help="Memory the explorer's states may take, e.g. 8G; at the limit it "
                          "stops at the last complete level (exit code 3, reason memory). "
                          f"Default: {SAFE_SHARE:.0%} of the memory available at start; "
                          "'none' for no limit. The Spark backend refuses a size "
                          "(bound it with --max-states and --conf "
                          "spark.executor.memory=...)." if check else
                          "Memory the set of distinct states counted may take, e.g. 1G; "
                          "beyond it the walks go on and the count is a lower bound. "
                          f"Default: {SAFE_SHARE:.0%} of the memory available at start; "
                          "'none' for no limit."),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command


def record_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--out DIR`` and ``--trace-out FILE`` (see :func:`prepare_recorder`)."""
    f = click.option("--trace-out", metavar="FILE", default=None,
                     help="Write the counterexample, if any, as an ITF trace to FILE "
                          "(a regular file there is replaced; a symbolic link, FIFO, "
                          "device or directory is refused).")(f)
    return click.option(
        "--out", "out_dir", metavar="DIR", default=None,
        help="Write a run folder: result.json, and on a violation trace.itf.json (ITF) "
             "and trace.json. Never overwrites an earlier run.")(f)


def prepare_recorder(spec: str, out_dir: str | None, trace_out: str | None
                     ) -> RunRecorder | None:
    """Probe ``--out``/``--trace-out`` before a run starts (a file is created and removed
    where each will be written), so that a bad destination is a usage error naming the
    user's path, before any work."""
    if out_dir is None and trace_out is None:
        return None
    from .trace.runrecord import RunRecorder

    ctx = click.get_current_context()
    return RunRecorder.prepare(spec, out_dir=out_dir, trace_out=trace_out, ctx=ctx,
                               options=ctx.params)


def finish(result: Result, fmt: str, recorder: RunRecorder | None, bound: Spec,
           quiet: bool) -> None:
    """Print ``result``, write its run record and trace, and exit with its code.

    The destinations were probed before the run (:func:`prepare_recorder`); should a
    write still fail, the error is reported and the exit code stays the result's
    (a violation is still 1), or 2 when the result alone would have been 0."""
    emit(result, fmt)
    if recorder is not None:
        try:
            notes = recorder.write(result, bound)
        except ModelcheckError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(result.exit_code or 2)
        if not quiet:
            click.echo("\n".join(notes), err=True)
    sys.exit(result.exit_code)


#: Why the Spark backend does not take an option of the local one, by parameter name.
LOCAL_ONLY = {
    "workers": "--workers is the number of local worker processes: on Spark the run is "
               "spread over the executors (--master, and --partitions or --tasks); leave "
               "it out, or use --backend local.",
    "spill_dir": "--spill-dir keeps the local explorer's levels in files: on Spark the "
                 "levels live in the executors or the run directory (--checkpoint-dir); "
                 "leave it out, or use --backend local.",
}


def check_backend(command: str, backend: str, spark: SparkOptions,
                  local_only: tuple[str, ...]) -> None:
    """Refuse, as a :class:`~modelcheck.errors.UsageError` naming them, the Spark
    backend's options given without ``--backend spark``, and the local options
    ``local_only`` (parameter names) given with it."""
    if backend != "spark" and spark.given:
        names = ", ".join(option_name(n) for n in spark.given)
        one = len(spark.given) == 1
        raise UsageError(f"{names}: {'an option' if one else 'options'} of the Spark "
                         f"backend; add --backend spark to run `{command}` on Spark, or "
                         f"leave {'it' if one else 'them'} out.")
    if backend == "spark":
        given = given_params(click.get_current_context(), local_only)
        if given:
            raise UsageError(LOCAL_ONLY[given[0]])


def spark_backend(fmt: str) -> Any:
    """The Spark backend's command-line module (``run_check``, ``run_simulate``): the
    module of the ``spark`` command registered under the ``modelcheck.commands`` entry
    point group (``spark_explore.cli``), imported now; its absence is a usage error."""
    import importlib
    from importlib.metadata import entry_points

    for ep in entry_points(group="modelcheck.commands", name="spark"):
        try:
            return importlib.import_module(ep.module)
        except ImportError as e:
            print_error(UsageError(f"--backend spark: the Spark backend cannot be loaded "
                                   f"({e}); install it with pip install "
                                   "'modelcheck[spark]'."), fmt)
    print_error(UsageError("--backend spark: no Spark backend is installed (the "
                           "modelcheck.commands entry point `spark`); install it with pip "
                           "install 'modelcheck[spark]'."), fmt)


@cli.command(cls=ModeCommand, epilog=EXIT_HELP)
@click.argument("spec")
@const_option
@backend_option
@check_options
@click.option("--spill-dir", metavar="DIR", default=None,
              help="Keep the BFS levels (parent pointers, used only to rebuild a "
                   "counterexample) in files under DIR instead of memory (local backend).")
@click.option("--workers", metavar="N", default="1", show_default=True,
              help="Explore with N worker processes ('auto': one per core available). "
                   "Same result as one; the levels go to files (in --checkpoint-dir, else "
                   "a temporary directory). Invariants, action properties and deadlocks "
                   "only; temporal properties need 1. Local backend only.")
@format_option
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@record_options
@spark_options(CHECK_SPARK_OPTIONS)
def check(spec: str, consts: tuple[str, ...], backend: str, config: CheckConfig,
          spill_dir: str | None, workers: str, fmt: str, quiet: bool, spark: SparkOptions,
          out_dir: str | None = None, trace_out: str | None = None) -> None:
    """Explore every reachable state of SPEC breadth-first and check its properties.

    SPEC is a file (specs/kraft_broker.py) or module (specs.kraft_broker), optionally
    followed by :Name to pick one spec class from it.

    --backend spark makes the run on Spark (as `modelcheck spark`, its alias), with the
    Spark backend options; --workers and --spill-dir are the local backend's.
    """
    try:
        check_backend("check", backend, spark, ("workers", "spill_dir"))
        cp = config.checkpoint_dir
        if backend == "local" and cp is not None and has_scheme(cp):
            raise UsageError(f"--checkpoint-dir {cp}: the local backend checkpoints to a "
                             "local directory (or a file:// URI); URIs of Hadoop file "
                             "systems are for --backend spark.")
    except UsageError as e:
        print_error(e, fmt)
    if backend == "spark":
        spark_backend(fmt).run_check(spec, consts, config, spark, fmt, quiet, out_dir,
                                     trace_out)
        return
    from .checker import check as run_check
    from .checker import resolve_names
    from .checkpoint import has_checkpoint

    # Ctrl-C is recorded from here to the exit, and the run stops at the next batch:
    # never lost, never a half-printed report (a second Ctrl-C exits at once).
    # During set-up (nothing to report yet) the first Ctrl-C stops at once, exit code 3.
    with Interrupts(setup=True) as stop, SetupProgress(stop, not quiet) as setup:
        try:
            n_workers = parse_workers(workers)
            if spill_dir is not None and n_workers > 1:
                raise UsageError("--spill-dir is an option of the one-process explorer; "
                                 "with --workers the levels are files in the run directory "
                                 "(--checkpoint-dir, else a temporary one).")
            recorder = prepare_recorder(spec, out_dir, trace_out)
            if spill_dir is not None:
                prepare_dir(spill_dir, "--spill-dir", create=False)  # made when used
            setup.phase("loading the spec and building its action instances")
            bound = bind_spec(spec, consts)
            cfg = config.replace(spill_dir=spill_dir, workers=n_workers)
            resolve_names(bound, cfg)  # report a wrong --invariant before anything else
            if not quiet:
                click.echo(f"Checking {bound!r}: {len(bound.layout.cells)} state cells, "
                           f"{len(bound.actions)} action instances.", err=True)
            cp = config.checkpoint_dir
            if config.resume and cp and not has_checkpoint(cp) and n_workers == 1:
                click.echo(f"--resume: no checkpoint in {cp}; starting afresh.", err=True)
            setup.phase(f"building the kernel of {len(bound.actions):,} action instances")
            result = run_check(bound, cfg, progress=progress_printer(not quiet),
                               notice=lambda line: click.echo(line, err=True))
            setup.end()
        except KeyboardInterrupt:
            if stop.started:
                raise
            interrupted_in_setup(fmt)
        except ModelcheckError as e:
            print_error(e, fmt)
        except MemoryError as e:
            out_of_memory(e, fmt)
        finish(result, fmt, recorder, bound, quiet)


SIMULATE_EXIT_HELP = """\b
Exit codes:
  0  ok: no violation in the walks run (--runs, or until --time)
  1  an invariant or action property is violated, or a deadlock was found
  2  usage error, or an error in the spec (reported with file and line)
  3  incomplete: interrupted (Ctrl-C) before any violation was found, or no walk
     took a step (every enabled action of the initial states weighs 0)"""


class Weight(click.ParamType):
    """``Action=W``: the weight of each transition of an action (a number >= 0)."""

    name = "ACTION=W"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[str, float]:
        if isinstance(value, tuple):
            return value  # type: ignore[return-value]
        name, eq, w = str(value).partition("=")
        try:
            weight = float(w)
        except ValueError:
            weight = -1.0
        if not eq or not name.strip() or not (weight >= 0 and weight != float("inf")):
            self.fail(f"{value!r}: give an action name and a weight >= 0, e.g. "
                      "Crash=0.1", param, ctx)
        return name.strip(), weight


def sim_progress_printer(enabled: bool) -> Callable[[SimProgress], None] | None:
    """A progress callback of a simulation printing one line on stderr (or None)."""
    if not enabled:
        return None

    def show(p: SimProgress) -> None:
        click.echo(f"[{p.seconds:7.1f}s] walks {p.walks:>10,}  steps {p.steps:>12,}  "
                   f"{p.steps_per_second:>9,.0f} steps/s  distinct {p.distinct:>11,}  "
                   f"actions fired {int((p.fired > 0).sum())}/{len(p.fired)}", err=True)

    return show


@dataclass(frozen=True)
class SimOptions:
    """The simulation options of a command, as given (see :func:`simulate_options`)."""

    seed: int
    runs: int | None
    depth: int | None
    time_limit: float | None
    weights: tuple[tuple[str, float], ...]
    no_shrink: bool
    shrink_states: int
    #: the parameters given on the command line (not defaults), check options included
    given: frozenset[str]

    #: the options of a simulation, by parameter name
    NAMES = ("seed", "runs", "depth", "time_limit", "weights", "no_shrink", "shrink_states")

    def resolve(self, config: CheckConfig, command: str = "simulate"
                ) -> tuple[CheckConfig, SimConfig]:
        """The check and simulation configurations these options and ``config`` (the
        check options) give; contradictions and check options that do not apply to a
        simulation are a :class:`~modelcheck.errors.UsageError` naming them."""
        from .simulate import SimConfig

        refused = sorted(self.given & set(LEVEL_OPTIONS))
        if refused:
            names = ", ".join(option_name(n) for n in refused)
            raise UsageError(f"{command} does not take {names}: a simulation keeps no "
                             "levels (bound it with --runs, --time and --max-depth).")
        depth = self.depth
        if depth is not None and "max_depth" in self.given and depth != config.max_depth:
            raise UsageError("--depth and --max-depth are the same bound; give one.")
        if depth is not None:
            config = config.replace(max_depth=depth)
        elif config.max_depth is None:
            config = config.replace(max_depth=100)
        try:
            sim = SimConfig(seed=self.seed, runs=self.runs,
                            time_limit=self.time_limit if self.time_limit is not None
                            or self.runs else 60.0,
                            weights=self.weights,
                            walks_per_batch=config.batch_size if "batch_size" in self.given
                            else 2048,
                            shrink=not self.no_shrink, shrink_states=self.shrink_states)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return config, sim


def option_name(param: str) -> str:
    """The command-line spelling of parameter ``param`` (``time_limit``: ``--time``)."""
    return {"time_limit": "--time", "invariants": "--invariant",
            "consts": "--const", "confs": "--conf"}.get(param, "--" + param.replace("_", "-"))


def simulate_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options of a random simulation, shared by ``simulate`` and ``spark
    --simulate``: ``--seed``, ``--runs``, ``--time``, ``--weights``, ``--no-shrink``,
    ``--shrink-states`` (and ``--depth``, not offered: the same as ``--max-depth``). The
    command receives them as one ``sim_options`` (:class:`SimOptions`), which it
    resolves against the check options (:meth:`SimOptions.resolve`), so it must also
    take :func:`simulation_check_options` or :func:`check_options`."""

    @functools.wraps(f)
    def command(*args: Any, seed: int, runs: int | None, depth: int | None,
                time_limit: float | None, weights: tuple[tuple[str, float], ...],
                no_shrink: bool, shrink_states: int, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        given = frozenset(n for n, _ in ctx.params.items()
                          if ctx.get_parameter_source(n) not in (
                              click.core.ParameterSource.DEFAULT, None))
        opts = SimOptions(seed, runs, depth, time_limit, weights, no_shrink, shrink_states,
                          given)
        return f(*args, sim_options=opts, **kwargs)

    options = [
        click.option("--seed", type=click.IntRange(0, (1 << 64) - 1), default=0,
                     show_default=True,
                     help="The run's seed: the same seed gives the same walks and result "
                          "everywhere."),
        click.option("--runs", type=click.IntRange(min=1), default=None,
                     help="Walks to run (default: until --time)."),
        # --max-depth is the option's one name (as `check`'s); --depth, TLC's spelling,
        # is still taken, not offered
        click.option("--depth", type=click.IntRange(min=0), default=None, hidden=True,
                     help="The same as --max-depth (kept for older scripts)."),
        click.option("--time", "time_limit", type=click.FloatRange(min=0, min_open=True),
                     default=None, help="Seconds to run at most (default 60 without --runs)."),
        click.option("--weights", "weights", type=Weight(), multiple=True,
                     help="Weight of each transition of an action, e.g. Crash=0.1 "
                          "(repeatable; default 1, 0 never picks it)."),
        click.option("--no-shrink", is_flag=True, help="Show the counterexample as found."),
        click.option("--shrink-states", type=click.IntRange(min=0), default=200_000,
                     show_default=True,
                     help="States the shrinker's bounded BFS may store (0: no BFS)."),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command


#: The options of ``check`` (and of the Spark backend's exhaustive run) that
#: ``simulate`` does not take, by command-line spelling: the reason given when one is.
SIMULATE_NOT_TAKEN = {
    **{option_name(n): f"simulate does not take {option_name(n)}: a simulation keeps no "
                       "levels (bound it with --runs, --time and --max-depth)."
       for n in (*LEVEL_OPTIONS, "spill_dir")},
    "--no-view": "simulate does not take --no-view: walks are of whole states, so a "
                 "spec's view changes nothing in a simulation (as in TLC's -simulate).",
    **{option_name(n): f"simulate does not take {option_name(n)}: it says how to split a "
                       "state space; the walks are split by --tasks (--backend spark) or "
                       "--workers."
       for n in CHECK_SPARK_OPTIONS if n not in SIMULATE_SPARK_OPTIONS},
}


@cli.command(cls=ModeCommand, epilog=SIMULATE_EXIT_HELP, not_taken=SIMULATE_NOT_TAKEN)
@click.argument("spec")
@const_option
@backend_option
@simulation_check_options
@simulate_options
@click.option("--workers", metavar="N", default="1", show_default=True,
              help="Run the walks in N worker processes ('auto': one per core "
                   "available): the same walks, counts and violation as one. Local "
                   "backend only.")
@format_option
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@record_options
@spark_options(SIMULATE_SPARK_OPTIONS)
def simulate(spec: str, consts: tuple[str, ...], backend: str, config: CheckConfig,
             sim_options: SimOptions, workers: str, fmt: str, quiet: bool,
             spark: SparkOptions, out_dir: str | None = None,
             trace_out: str | None = None) -> None:
    """Random walks through SPEC from seeded random numbers, checking its properties at
    every step (TLC's -simulate); a counterexample is shrunk before it is shown.
    Temporal properties are checked on each walk's lassos (a fair loop of the walk,
    or stuttering in its last state), as TLC's simulation does.

    --backend spark runs the walks in Spark tasks (as `modelcheck spark --simulate`):
    the same walks for the same --seed, the same result and exit codes.
    """
    try:
        check_backend("simulate", backend, spark, ("workers",))
    except UsageError as e:
        print_error(e, fmt)
    if backend == "spark":
        spark_backend(fmt).run_simulate(spec, consts, config, sim_options, spark, fmt, quiet,
                                        out_dir, trace_out)
        return
    from .simrounds import ParallelSimulator

    with Interrupts(setup=True) as stop, SetupProgress(stop, not quiet) as setup:
        try:
            n_workers = parse_workers(workers)
            config, sim = sim_options.resolve(config, "simulate")
            recorder = prepare_recorder(spec, out_dir, trace_out)
            setup.phase("loading the spec and building its action instances")
            bound = bind_spec(spec, consts)
            setup.phase(f"building the kernel of {len(bound.actions):,} action instances")
            simulator = ParallelSimulator(bound, config, sim, workers=n_workers,
                                          progress=sim_progress_printer(not quiet))
            if not quiet:
                on = f", in {n_workers} worker processes" if n_workers > 1 else ""
                click.echo(f"Simulating {bound!r} from seed {sim.seed}: "
                           f"{len(bound.actions)} action instances, walks of at most "
                           f"{simulator.sim.depth} steps{on}.", err=True)
            result = simulator.run()
            setup.end()
        except KeyboardInterrupt:
            if stop.started:
                raise
            interrupted_in_setup(fmt)
        except ModelcheckError as e:
            print_error(e, fmt)
        except ValueError as e:
            print_error(UsageError(str(e)), fmt)
        except MemoryError as e:
            out_of_memory(e, fmt)
        finish(result, fmt, recorder, bound, quiet)


def interrupted_in_setup(fmt: str) -> NoReturn:
    """Report a Ctrl-C during set-up (before any state was explored: no partial result
    to show) and exit with code 3."""
    msg = "interrupted while setting up, before exploring: no states to report."
    if fmt == "json":
        click.echo(json.dumps({"status": "incomplete", "reason": "interrupted",
                               "message": msg}, indent=2))
    click.echo(msg, err=True)
    sys.exit(3)


def out_of_memory(e: MemoryError, fmt: str) -> NoReturn:
    """Report a ``MemoryError`` outside exploration (loading a spec, building its
    layout and action instances, or reporting) as one paragraph; exit code 3."""
    avail = available_memory_text()
    msg = (f"Ran out of memory before exploring ({e or 'MemoryError'}). The spec's state "
           f"layout and action instances do not fit{avail}: try smaller constants (--const).")
    if fmt == "json":
        click.echo(json.dumps({"status": "incomplete", "reason": "memory", "message": msg},
                              indent=2))
    click.echo(f"error: {msg}", err=True)
    sys.exit(3)


def available_memory_text() -> str:
    from .budget import available_memory

    avail = available_memory()
    return "" if avail is None else f" in the {format_size(avail)} available"


def emit(result: Result, fmt: str) -> None:
    """Print a result in the chosen format."""
    if fmt == "json":
        click.echo(json.dumps(result.to_json(), indent=2))
    else:
        from .report import render_text

        click.echo(render_text(result))


@cli.command(epilog=INSPECT_EXIT_HELP)
@click.argument("spec")
@const_option
@format_option
def inspect(spec: str, consts: tuple[str, ...], fmt: str) -> None:
    """List SPEC's constants, variables (domains, cells, bits), actions and properties."""
    from .temporal import fairness_conditions

    try:
        bound = bind_spec(spec, consts)
    except ModelcheckError as e:
        print_error(e, fmt)
    cls = type(bound)
    layout = bound.layout
    info: dict[str, Any] = {
        "spec": bound.name,
        "doc": (cls.__doc__ or "").strip().split("\n\n")[0],
        "constants": [{"name": n, "value": bound.constants[n], "default": c.default,
                       "doc": c.doc} for n, c in cls._consts.items()],
        "variables": layout.describe(),
        "state_bits": layout.bits,
        "words": layout.n_words,
        "fingerprint": layout.fingerprint_kind,
        "actions": [{"name": d.name,
                     "params": {p: _dom_text(bound, d, p, v) for p, v in d.params.items()},
                     "instances": sum(1 for a in bound.actions if a.decl is d),
                     "defined": d.where} for d in cls._actions.values()],
        "invariants": [{"name": p.name, "doc": p.doc, "defined": p.where}
                       for p in bound.invariants],
        "properties": [{"name": p.name, "doc": p.doc, "defined": p.where}
                       for p in bound.properties],
        "initially": [{"name": p.name, "doc": p.doc, "defined": p.where}
                      for p in bound.initial_properties],
        "temporal": [{"name": p.name, "form": getattr(p, "formula", ""), "doc": p.doc,
                      "steps": getattr(p, "steps", False),
                      "fairness": [c.name for c in fairness_conditions(
                          bound, getattr(p, "fairness", None))],
                      "defined": p.where} for p in bound.temporal],
        "fairness": [c.name for c in fairness_conditions(bound)],
        "constraints": [p.name for p in bound.constraints],
        "action_constraints": [p.name for p in bound.action_constraints],
        "check_deadlock": bound.check_deadlock,
    }
    if fmt == "json":
        click.echo(json.dumps(info, indent=2))
        return
    out = [f"Spec {info['spec']}: {info['doc']}", "", "Constants:"]
    for c in info["constants"]:
        out.append(f"  {c['name']} = {c['value']}  (default {c['default']}) {c['doc']}")
    out.append(f"Variables ({info['state_bits']} bits in {info['words']} word(s), "
               f"fingerprints {info['fingerprint']}):")
    for v in info["variables"]:
        out.append(f"  {v['name']:<16} {v['domain']:<36} cells {v['cells']:>3}  "
                   f"bits {v['bits']:>3}" + _set_forms_text(v["sets"]))
    out.append("Actions:")
    for a in info["actions"]:
        params = ", ".join(f"{k} \\in {v}" for k, v in a["params"].items())
        out.append(f"  {a['name']}({params})  [{a['instances']} instances]  {a['defined']}")
    out.append("Invariants:")
    out.extend(f"  {p['name']}: {p['doc']}" for p in info["invariants"])
    out.append("Action properties:")
    out.extend(f"  {p['name']}: {p['doc']}" for p in info["properties"])
    if info["initially"]:
        out.append("Initial-state properties:")
        out.extend(f"  {p['name']}: {p['doc']}" for p in info["initially"])
    if info["temporal"]:
        out.append("Temporal properties:")
        for p in info["temporal"]:
            # the fairness is listed once (below); a property under other conditions
            # says which
            fair = ("" if p["fairness"] == info["fairness"] else
                    f"  [fairness: {', '.join(p['fairness']) or 'none'}]")
            form = p["form"] + ("; A a formula of steps (s, t)" if p["steps"] else "")
            doc = f": {p['doc']}" if p["doc"] else ""
            out.append(f"  {p['name']} ({form}){doc}{fair}")
    if info["fairness"]:
        out.append("Fairness: " + ", ".join(info["fairness"]))
    if info["constraints"]:
        out.append("State constraints: " + ", ".join(info["constraints"]))
    if info["action_constraints"]:
        out.append("Action constraints: " + ", ".join(info["action_constraints"]))
    out.append(f"Deadlock check: {'on' if info['check_deadlock'] else 'off'}")
    click.echo("\n".join(out))


def _set_forms_text(forms: list[str]) -> str:
    """The sets of a variable as ``inspect`` lists them after its bits: the form of
    one set, or the forms counted when the variable holds several."""
    if not forms:
        return ""
    if len(set(forms)) == 1:
        return f"  ({forms[0]})" if len(forms) == 1 else f"  ({len(forms)} sets: {forms[0]} each)"
    return f"  ({len(forms)} sets: {', '.join(forms)})"


def _dom_text(bound: Spec, decl: Any, pname: str, dom: Any) -> str:
    """A parameter domain as ``inspect`` shows it: an Ids set by name, an IntEnum by
    its members, a function by the values its instances take (the same text every
    run: never a function's address)."""
    import enum
    import inspect as pyinspect

    from .spec import MemberOf
    from .types import Deferred, Type

    if isinstance(dom, MemberOf):
        if dom.keep is None:
            return dom.var  # ``m \in msgs``
        kept = len({v for a in bound.actions if a.decl is decl for p, v in a.params
                    if p == pname})
        return f"{dom.var} ({kept} element values kept)"  # ``m \in {m \in msgs: ...}``
    if isinstance(dom, Type):
        return dom.describe()
    name = getattr(dom, "name", None)
    if isinstance(name, str) and not callable(dom):
        return name
    if isinstance(dom, type) and issubclass(dom, enum.Enum):
        return f"{dom.__name__} {{{', '.join(dom.__members__)}}}"
    if callable(dom) and not isinstance(dom, Deferred):
        values = sorted({v for a in bound.actions if a.decl is decl
                         for p, v in a.params if p == pname})
        if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
            text = f"{values[0]}..{values[-1]}"
        else:
            text = "{" + ", ".join(str(v) for v in values) + "}"
        given = list(pyinspect.signature(dom).parameters)[1:]
        return text + (f" (given {', '.join(given)})" if given else "")
    return repr(dom)


#: The subcommands defined in other modules, imported only when invoked: name ->
#: (``module:attribute``, the short help ``modelcheck --help`` shows for it). A test
#: checks each short help against the command's own.
LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "trace": ("modelcheck.cli_trace:trace",
              "Read counterexample traces: ITF (*.itf.json), modelcheck JSON (trace.json) "
              "or a run record (result.json or the run folder)."),
    "graph": ("modelcheck.cli_trace:graph",
              "Write the reachable state graph of SPEC (nodes: states, edges: actions with "
              "their parameters; initial and violating states marked) as DOT, GraphML or "
              "JSON."),
    "explore": ("modelcheck.cli_explore:explore",
                "Serve a web page to explore SPEC: step through a trace with the changed "
                "variables highlighted, branch off into the actions it did not take, "
                "evaluate expressions along the path, save it as an ITF trace, see a run's "
                "coverage and levels and the state graph around a state."),
}

#: The short help of plugin commands (entry point group ``modelcheck.commands``) known
#: here, so that ``modelcheck --help`` lists them without importing them.
PLUGIN_HELP: dict[str, str] = {
    "spark": "Explore every reachable state of SPEC on Spark: the alias of `check --backend "
             "spark`.",
}


class _LazyCommand(click.Command):
    """A placeholder listed in the group's help; the group loads the real command when
    it is invoked (:meth:`_Group.resolve_command`)."""

    def __init__(self, name: str, target: str, short_help: str | None = None) -> None:
        super().__init__(name)
        self.target = target
        self.summary = short_help or f"(plugin command from {target.split(':')[0]})"

    def get_short_help_str(self, limit: int = 45) -> str:
        return click.utils.make_default_short_help(self.summary, limit)

    def load(self) -> click.Command:
        """The real command (its module imported now)."""
        import importlib

        module, _, attr = self.target.partition(":")
        real = getattr(importlib.import_module(module), attr)
        if not isinstance(real, click.Command):  # pragma: no cover - a broken plugin
            raise UsageError(f"{self.target} is not a click command.")
        return real


def _load_plugins() -> None:
    """Add the subcommands registered by other packages (entry point group
    ``modelcheck.commands``), e.g. ``modelcheck spark`` from ``spark_explore``, as
    placeholders: a plugin is imported only when its command is the one invoked, so
    heavy dependencies (pyspark) never load for other commands."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="modelcheck.commands"):
        if ep.name not in cli.commands:
            cli.add_command(_LazyCommand(ep.name, ep.value, PLUGIN_HELP.get(ep.name)),
                            ep.name)


_plugins_loaded = False

for _name, (_target, _help) in LAZY_COMMANDS.items():
    cli.add_command(_LazyCommand(_name, _target, _help), _name)


def main() -> None:
    """Console-script entry point."""
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:  # pragma: no cover - interrupted outside exploration
        click.echo("interrupted", err=True)
        sys.exit(3)
    finally:
        # The command is over and its result printed: a Ctrl-C now must not turn the
        # exit into a kill by SIGINT.
        signal.signal(signal.SIGINT, signal.SIG_IGN)

