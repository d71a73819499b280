"""The command line of the Spark backend: :func:`run_check` and :func:`run_simulate`,
the runs of ``modelcheck check --backend spark`` and ``modelcheck simulate --backend
spark``, and ``modelcheck spark``, their alias.

This module is registered as the ``spark`` subcommand through the
``modelcheck.commands`` entry point, through which ``modelcheck check`` and
``simulate`` also find it (:func:`modelcheck.cli.spark_backend`); ``pyspark`` is
imported only when a run starts. Same report, JSON contract and exit codes as the
local backend (0 ok, 1 violation or deadlock, 2 usage, spec or Spark error, 3
interrupted or bounded), with the Spark options of
:data:`modelcheck.cli_options.SPARK_OPTIONS` (``--master``, ``--partitions``,
``--conf K=V``...). Progress goes to stderr, one line per level. ``spark --simulate``:
random walks as ``modelcheck simulate`` (its options, shared through
:func:`modelcheck.cli.simulate_options`, and ``--tasks``), run by Spark tasks
(:mod:`spark_explore.simulate`).
"""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from modelcheck.cli import (
    EXIT_HELP,
    SimOptions,
    bind_spec,
    check_options,
    const_option,
    finish,
    format_option,
    option_name,
    prepare_recorder,
    print_error,
    progress_printer,
    record_options,
    sim_progress_printer,
    simulate_options,
)
from modelcheck.cli_options import (
    CHECK_SPARK_OPTIONS,
    SIMULATE_SPARK_OPTIONS,
    SPARK_OPTIONS,
    SparkOptions,
    spark_options,
)
from modelcheck.config import CheckConfig
from modelcheck.errors import ModelcheckError, UsageError
from modelcheck.initial import check_initial, select_initial_checks
from modelcheck.library import lookup as library_lookup
from modelcheck.liveness import ShardedLiveness

from .session import check_master_url

__all__ = ["spark", "run_check", "run_simulate", "progress_printer", "parse_conf"]


def parse_conf(items: tuple[str, ...]) -> dict[str, str]:
    """``K=V`` Spark settings from ``--conf``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {item!r}: expected KEY=VALUE, e.g. "
                             "--conf spark.executor.memory=4g.")
        out[key.strip()] = value.strip()
    return out


def _under_spark_submit() -> bool:
    """True when this Python driver was started by ``spark-submit`` (a JVM is waiting)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


@click.command(epilog=EXIT_HELP)
@click.argument("spec")
@const_option
@check_options
@click.option("--simulate", is_flag=True,
              help="Random walks instead of exhaustive exploration, as `modelcheck simulate` "
                   "(same walks for the same --seed, same result and exit codes), spread "
                   "over Spark tasks; takes the simulation options below.")
@simulate_options
@spark_options(tuple(SPARK_OPTIONS))
@format_option
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@record_options
def spark(spec: str, consts: tuple[str, ...], config: CheckConfig, simulate: bool,
          sim_options: SimOptions, spark: SparkOptions, fmt: str, quiet: bool,
          out_dir: str | None = None, trace_out: str | None = None) -> None:
    """Explore every reachable state of SPEC on Spark: the alias of `check --backend spark`.

    The same options, output and exit codes as `modelcheck check --backend spark` (with
    --simulate, as `modelcheck simulate --backend spark`). SPEC is a file
    (specs/kraft_broker.py) or module (specs.kraft_broker), optionally followed by
    :Name. Spark's fixed cost (a session takes 10-20 s to start, each level 0.2-1 s)
    makes this worthwhile only for big state spaces; small ones belong to the local
    backend. --checkpoint-dir is the run directory: every finished level is committed
    there (level files + manifest.json); a path, or a URI such as file:///...,
    hdfs://... (written by the driver through Hadoop).

    With --simulate: random walks as `modelcheck simulate` (see its --help), run by
    --tasks Spark tasks in rounds; the violation of the smallest walk index is
    reported, shrunk on the driver. --partitions, --engine, --driver-threshold,
    --checkpoint-dir, --resume and --max-states do not apply.
    """
    if simulate:
        try:
            not_taken = [n for n in spark.given if n not in SIMULATE_SPARK_OPTIONS]
            if not_taken:
                raise UsageError(f"spark --simulate does not take "
                                 f"{', '.join(option_name(n) for n in not_taken)}: they say "
                                 "how to split a state space; the walks are split by "
                                 "--tasks.")
        except UsageError as e:
            print_error(e, fmt)
        run_simulate(spec, consts, config, sim_options, spark, fmt, quiet, out_dir, trace_out,
                     command="spark --simulate")
        return
    try:
        needs = [option_name(n) for n in sorted(
            {n for n in SimOptions.NAMES if n in sim_options.given}
            | {n for n in spark.given if n not in CHECK_SPARK_OPTIONS})]
        if needs:
            raise UsageError(f"{', '.join(needs)}: "
                             f"{'options' if len(needs) > 1 else 'an option'} of "
                             "random simulation; add --simulate.")
    except UsageError as e:
        print_error(e, fmt)
    run_check(spec, consts, config, spark, fmt, quiet, out_dir, trace_out)


def run_check(spec: str, consts: tuple[str, ...], config: CheckConfig, spark: SparkOptions,
              fmt: str, quiet: bool, out_dir: str | None, trace_out: str | None) -> None:
    """Explore every reachable state of ``spec`` on Spark, print the report and exit
    with its code (:func:`modelcheck.cli.finish`): ``modelcheck check --backend spark``
    (and ``modelcheck spark``)."""
    try:
        recorder = prepare_recorder(spec, out_dir, trace_out)
        bound = bind_spec(spec, consts)
        config, initial, invariants = select_initial_checks(bound, config, library_lookup)
        with ShardedLiveness(bound, config) as live:  # (refuses what `check` refuses)
            result = check_initial(bound, config, initial, invariants)
            if result is None:  # (else an initial state violates an initial-state property)
                result = live.finish(_explore(bound, live, spark, quiet))
    except BaseException as e:  # noqa: BLE001 - never show users a raw traceback
        _report_failure(e, fmt)
    finish(result, fmt, recorder, bound, quiet)


def _explore(bound: Any, live: ShardedLiveness, spark: SparkOptions, quiet: bool) -> Any:
    """Explore ``bound`` on Spark (the ``spark`` command's run)."""
    conf = parse_conf(spark.confs)
    master = _master(spark)
    from .driver import SparkExplorer

    # The session is started by run() and stopped at its end if it started it.
    explorer = SparkExplorer(
        bound, live.safety, master=master, partitions=spark.partitions, spark_conf=conf,
        progress=progress_printer(not quiet), connect_timeout=spark.connect_timeout,
        stop_session=True, verbose=spark.verbose, driver_threshold=spark.driver_threshold,
        engine=spark.engine,
        notice=lambda message: click.echo(message, err=True), temporal=live.names)
    live.attach(explorer)
    try:
        # Fail on the checkpoint dir and the spec before paying for a Spark session.
        explorer.precheck()
        resumed = explorer.resume_point
        if resumed is not None:
            click.echo(f"resuming at level {resumed[0]} ({resumed[1]:,} states)", err=True)
        if not quiet:
            where = master or "the master given to spark-submit"
            click.echo(f"Checking {bound!r} on Spark ({where}): {len(bound.layout.cells)} "
                       f"state cells, {len(bound.actions)} action instances. Starting "
                       "Spark...", err=True)
        return explorer.run()
    finally:
        # the temporary run directory precheck made, should run() not have started (run()
        # removes it itself; a checkpoint directory is not temporary: kept)
        rundir = getattr(explorer, "rundir", None)
        if rundir is not None:
            rundir.cleanup()


def _report_failure(e: BaseException, fmt: str) -> NoReturn:
    """End a ``spark`` run that raised: a user error as one paragraph (exit 2), Ctrl-C
    before a result (exit 3), anything else as an internal error (exit 2; the traceback
    with MODELCHECK_DEBUG=1)."""
    if isinstance(e, ModelcheckError):
        print_error(e, fmt)
    if isinstance(e, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        sys.exit(3)
    if not isinstance(e, Exception) or os.environ.get("MODELCHECK_DEBUG"):
        raise e
    print_error(RuntimeError(
        f"internal error in the Spark backend: {type(e).__name__}: {e} (set "
        "MODELCHECK_DEBUG=1 for the traceback)"), fmt)


# The shared --memory-limit bounds one local process (default: a share of its memory);
# on Spark no one limit can be enforced, and a size is refused (SparkExplorer.precheck):
# the help says so, with no default that would then be refused.
for _param in spark.params:
    if isinstance(_param, click.Option) and _param.name == "memory_limit":
        _param.help = ("No default: exploration on Spark refuses a size (its states live "
                       "in the executors' Python workers; 'none' is accepted). Bound a run "
                       "with --max-states and the executors with Spark's settings "
                       "(--conf spark.executor.memory=8g).")


def _master(spark: SparkOptions) -> str | None:
    """The master of the run: ``--master``, else ``local[*]`` unless under
    ``spark-submit`` (whose master is used); a malformed URL is a usage error."""
    master = spark.master
    if master is None and not _under_spark_submit():
        master = "local[*]"
    if master is not None:
        check_master_url(master)
    return master


def run_simulate(spec: str, consts: tuple[str, ...], config: CheckConfig,
                 sim_options: SimOptions, spark: SparkOptions, fmt: str, quiet: bool,
                 out_dir: str | None, trace_out: str | None,
                 command: str = "simulate --backend spark") -> None:
    """Random walks through ``spec`` in Spark tasks, print the report and exit with its
    code: ``modelcheck simulate --backend spark`` (and ``modelcheck spark
    --simulate``)."""
    try:
        config, sim = sim_options.resolve(config, command)
        recorder = prepare_recorder(spec, out_dir, trace_out)
        bound = bind_spec(spec, consts)
        conf = parse_conf(spark.confs)
        master = _master(spark)
        from .simulate import SparkSimulator

        simulator = SparkSimulator(bound, config, sim, master=master, tasks=spark.tasks,
                                   spark_conf=conf, progress=sim_progress_printer(not quiet),
                                   connect_timeout=spark.connect_timeout, stop_session=True,
                                   verbose=spark.verbose)
        if not quiet:
            where = master or "the master given to spark-submit"
            click.echo(f"Simulating {bound!r} on Spark ({where}) from seed {sim.seed}: "
                       f"{len(bound.actions)} action instances, walks of at most "
                       f"{simulator.sim.depth} steps. Starting Spark...", err=True)
        result = simulator.run()
    except BaseException as e:  # noqa: BLE001 - never show users a raw traceback
        _report_failure(e, fmt)
    finish(result, fmt, recorder, bound, quiet)
