"""Command-line options shared by several ``modelcheck`` commands, in a module that
imports only click, so that the command line starts without the engine.

The run commands (``check``, ``simulate``) are one command per *mode* whose run is
made by a *backend* chosen with ``--backend local|spark``: the Spark backend's own
options (:data:`SPARK_OPTIONS`, :class:`SparkOption`) are declared here, so that a
command offers them without importing the backend, and are accepted only with
``--backend spark``. The command class (:class:`ModeCommand`) lists them apart in
``--help`` and says why an option of another mode is not taken."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import click

__all__ = ["const_option", "backend_option", "SparkOption", "ModeCommand", "SparkOptions",
           "SPARK_OPTIONS", "spark_options", "given_params"]

const_option = click.option(
    "--const", "consts", multiple=True, metavar="K=V",
    help="Override a constant of the spec, e.g. --const N=3 (repeatable).",
)

backend_option = click.option(
    "--backend", type=click.Choice(["local", "spark"]), default="local", show_default=True,
    help="Where the run is made: local (this machine, one process or --workers) or spark "
         "(Spark, local[*] or a cluster; the Spark backend options below). Same results, "
         "report and exit codes.")


class SparkOption(click.Option):
    """An option of the Spark backend: taken only with ``--backend spark`` (the command
    checks, :func:`given_params`), listed under "Spark backend options" in ``--help``."""


class ModeCommand(click.Command):
    """A run command of one mode (``check``, ``simulate``): its ``--help`` lists the
    Spark backend's options in their own section, and an option of another mode that
    it does not take (``not_taken``: option -> the one-paragraph reason) is a usage
    error giving that reason, rather than click's bare "No such option"."""

    def __init__(self, *args: Any, not_taken: dict[str, str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.not_taken: dict[str, str] = dict(not_taken or {})

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        general: list[tuple[str, str]] = []
        spark: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                (spark if isinstance(param, SparkOption) else general).append(record)
        if general:
            with formatter.section("Options"):
                formatter.write_dl(general)
        if spark:
            with formatter.section("Spark backend options (only with --backend spark)"):
                formatter.write_dl(spark)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as e:
            reason = self.not_taken.get(e.option_name)
            if reason is None:
                raise
            raise click.UsageError(reason, ctx) from None


def given_params(ctx: click.Context, names: Sequence[str]) -> list[str]:
    """Those of the parameters ``names`` given on the command line or by the
    environment (not left at their defaults), in the order of ``names``."""
    return [n for n in names if ctx.get_parameter_source(n) not in (
        click.core.ParameterSource.DEFAULT, click.core.ParameterSource.DEFAULT_MAP, None)]


@dataclass(frozen=True)
class SparkOptions:
    """The Spark backend's options of a command, as given (see :func:`spark_options`)."""

    master: str | None = None
    partitions: int | None = None
    driver_threshold: int | None = None
    engine: str = "auto"
    confs: tuple[str, ...] = ()
    connect_timeout: float = 60.0
    verbose: bool = False
    tasks: int | None = None
    #: the options among these given on the command line (parameter names)
    given: tuple[str, ...] = ()


#: The Spark backend's options, by parameter name (the fields of :class:`SparkOptions`).
SPARK_OPTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "tasks": click.option(
        "--tasks", cls=SparkOption, type=click.IntRange(min=1), default=None,
        help="Simulation: tasks per round of walks (default: the cores Spark offers). The "
             "counts of a run that finds a violation depend on it."),
    "master": click.option(
        "--master", cls=SparkOption, default=None, metavar="URL",
        help="Spark master: local[*] (default), local[N], spark://HOST:PORT, yarn, "
             "k8s://... Under spark-submit the submitted master is used."),
    "partitions": click.option(
        "--partitions", cls=SparkOption, type=click.IntRange(min=1), default=None,
        help="Buckets of the state set: tasks per level (default: the cores Spark "
             "offers)."),
    "driver_threshold": click.option(
        "--driver-threshold", cls=SparkOption, type=click.IntRange(min=0), default=None,
        metavar="STATES",
        help="Levels with at most this many candidate states are expanded in the "
             "driver process, without a Spark job (default 300000, or "
             "$MODELCHECK_SPARK_DRIVER_THRESHOLD; 0: every level on the executors)."),
    "engine": click.option(
        "--engine", cls=SparkOption, type=click.Choice(["auto", "shards", "rdd"]),
        default="auto", show_default=True,
        help="shards: levels as files in the run directory (one host, or storage "
             "every host mounts); rdd: levels in Spark, blocks through its shuffle "
             "(any cluster); auto: shards on a local master with a local "
             "--checkpoint-dir, else rdd."),
    "confs": click.option(
        "--conf", "confs", cls=SparkOption, multiple=True, metavar="K=V",
        help="A Spark setting, e.g. --conf spark.executor.memory=4g (repeatable)."),
    "connect_timeout": click.option(
        "--connect-timeout", cls=SparkOption, type=click.FloatRange(min=1), default=60.0,
        show_default=True, help="Seconds to wait for the master and the first executor."),
    "verbose": click.option(
        "--verbose", cls=SparkOption, is_flag=True,
        help="Show Spark's own start-up messages and log (filtered out by default)."),
}

#: The Spark options of an exhaustive check, and of a simulation (whose walks are
#: split by --tasks, not by the state space's partitions).
CHECK_SPARK_OPTIONS = ("master", "partitions", "driver_threshold", "engine", "confs",
                       "connect_timeout", "verbose")
SIMULATE_SPARK_OPTIONS = ("tasks", "master", "confs", "connect_timeout", "verbose")


def spark_options(names: Sequence[str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the Spark options ``names`` (keys of :data:`SPARK_OPTIONS`) to a command,
    which receives them as one ``spark`` (:class:`SparkOptions`, the others at their
    defaults)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            values = {n: kwargs.pop(n) for n in names}
            given = given_params(click.get_current_context(), names)
            return f(*args, spark=SparkOptions(**values, given=tuple(given)), **kwargs)

        decorated: Callable[..., Any] = command
        for name in reversed(names):
            decorated = SPARK_OPTIONS[name](decorated)
        return decorated

    return decorate
