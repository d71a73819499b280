"""Getting a Spark session fit for exploration, and shipping the spec's code to executors.

This module owns the driver-side Spark setup:

* :func:`get_session` — reuse the active ``SparkSession`` or start one with the
  defaults exploration needs (UI off, adaptive execution off, ``PYSPARK_PYTHON`` =
  this interpreter, a private warehouse dir, more driver memory for ``local``
  masters), check that a ``spark://`` master is reachable first, and wait (with a
  timeout) until executors have registered, so an unreachable or saturated master
  gives one clear error instead of a hang.
* :func:`ship_spec` — resolve the loader target executors use to import the spec,
  and add a zip of the needed packages (``modelcheck``, ``invariants``,
  ``spark_explore`` and the spec's own package or file) with ``SparkContext.addPyFile``,
  so executors on any host can import them.

``pyspark`` is imported only inside functions.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from modelcheck.errors import ModelcheckError, UsageError

__all__ = ["SparkBackendError", "get_session", "ship_spec", "ShippedSpec",
           "is_local_master", "check_master_url", "check_master_reachable",
           "wait_for_executors", "driver_paths"]


class SparkBackendError(ModelcheckError):
    """Spark could not be started or reached, or a Spark job failed for a non-spec reason."""


_SHIPPED: dict[tuple[int, str], str] = {}
#: file name inside a shipped zip -> the driver's file it was copied from
SHIPPED_FILES: dict[str, str] = {}


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-")


def _quiet_log4j(dirpath: Path) -> Path:
    path = dirpath / "log4j2.properties"
    path.write_text(
        "rootLogger.level = error\n"
        "rootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\n"
        "appender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n%ex\n"
        # A failed task is reported once, as one paragraph, by the driver (the spec's
        # error, a full disk, ...): not as the executor's and scheduler's stack traces.
        "logger.executor.name = org.apache.spark.executor.Executor\n"
        "logger.executor.level = off\n"
        "logger.tasks.name = org.apache.spark.scheduler.TaskSetManager\n"
        "logger.tasks.level = off\n"
        # Spark prints 'Setting default log level to "WARN"' (and how to change it) when
        # the shell logger's level differs from the root's: keep them equal.
        "logger.repl.name = org.apache.spark.repl.Main\n"
        "logger.repl.level = error\n"
        # A session that cannot start is reported by the driver as one paragraph with
        # Spark's reason, not as SparkContext's stack trace.
        "logger.context.name = org.apache.spark.SparkContext\n"
        "logger.context.level = off\n"
        # Blocks of a broadcast that a finished or cancelled job no longer needs are
        # removed as the session stops ("ERROR TorrentBroadcast: Store broadcast ...
        # fail"): nothing a run lost.
        "logger.broadcast.name = org.apache.spark.broadcast.TorrentBroadcast\n"
        "logger.broadcast.level = off\n"
    )
    return path


#: Lines the JVM prints on every start that tell a modelcheck user nothing (dropped
#: from its stderr unless ``modelcheck spark --verbose``).
JVM_NOISE = (
    re.compile(r"^WARNING: Using incubator modules: "),
    re.compile(r"^Setting default log level to "),
    re.compile(r"^To adjust logging level use sc\.setLogLevel\("),
)


#: the exceptions of a Python worker whose socket the JVM closed (a job cancelled by
#: Ctrl-C, the session stopping): the run's result does not depend on them
_LOST_PIPE = re.compile(rb"^(BrokenPipeError|ConnectionResetError)\b")


class DroppedTracebacks:
    """A line filter that drops a Python traceback (``Traceback (most recent call
    last):`` or ``Exception ignored in: ...`` up to its exception line) ending in
    ``BrokenPipeError`` or ``ConnectionResetError``, and passes every other line on:
    pyspark's workers print one, now and then, when the JVM closes their socket as a
    session stops or a job is cancelled."""

    def __init__(self) -> None:
        self._block: list[bytes] = []

    def feed(self, line: bytes) -> list[bytes]:
        """The lines to write now, given the next ``line``."""
        if not self._block:
            if line.startswith((b"Traceback (most recent call last):",
                                b"Exception ignored in:")):
                self._block = [line]
                return []
            return [line]
        self._block.append(line)
        if line[:1] in (b" ", b"\t") or line.startswith(b"Traceback (most recent"):
            return []  # a frame: the block goes on
        block, self._block = self._block, []
        return [] if _LOST_PIPE.match(line) else block

    def flush(self) -> list[bytes]:
        """The lines held back at the end of the stream."""
        block, self._block = self._block, []
        return block


@contextlib.contextmanager
def filtered_stderr(noise: tuple[re.Pattern[str], ...] = JVM_NOISE) -> Iterator[None]:
    """Processes started inside this block (the JVM, and through it Python workers)
    write their stderr through a filter that drops lines matching ``noise`` and passes
    every other line on to this process's stderr, for as long as they run.

    The JVM's start-up warning (``WARNING: Using incubator modules``) is printed by the
    JVM itself, before any logging configuration applies, so it can only be filtered.
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable file descriptor 2: nothing to filter
        yield
        return
    read_end, write_end = os.pipe()

    def pump() -> None:
        blocks = DroppedTracebacks()
        with os.fdopen(read_end, "rb") as src:
            for line in src:
                text = line.decode("utf-8", "replace")
                if not any(p.search(text) for p in noise):
                    for out in blocks.feed(line):
                        os.write(saved, out)
        for out in blocks.flush():
            os.write(saved, out)
        os.close(saved)

    threading.Thread(target=pump, name="spark-stderr-filter", daemon=True).start()
    os.dup2(write_end, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(write_end)  # the children keep their copies; EOF when they exit


#: the JVM option of the sessions started here (see :func:`default_conf`)
JIT_OPTION = "-XX:TieredStopAtLevel=1"
#: the garbage collector of the JVMs of the sessions started here (driver and
#: executors): the parallel (throughput) collector. The rdd engine's records are
#: pickled blocks of megabytes, each a "humongous" object to the default G1, which
#: started a concurrent marking cycle at nearly every one (KRaft L6 local[2]: 97-99
#: cycles, 9-13 s of pauses, ~8 CPU-s; the heap never a quarter full): with this
#: collector the run's JVM CPU went from 25 to 16 s.
GC_OPTION = "-XX:+UseParallelGC"


def default_conf(master: str, workdir: Path, quiet: bool = True) -> dict[str, str]:
    """Static settings for a session we start ourselves (users' ``--conf`` override them)."""
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
        "spark.python.worker.reuse": "true",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        # Executors and their Python workers talk over Unix domain sockets: a task's
        # round trip over local TCP cost ~50 ms more per job here (measured: a
        # two-task Python job 100 -> 55 ms), and the shard engine runs one job a level.
        "spark.python.unix.domain.socket.enabled": "true",
        # Lost executors (a dead worker) must not fail the run: retry tasks and stages.
        "spark.task.maxFailures": "8",
        "spark.stage.maxConsecutiveAttempts": "8",
        # The only shuffle is the rdd engine's: successors as fingerprints, parents'
        # fingerprints and action ids, which LZ4 cannot shrink (uniform 64-bit keys);
        # compressing and checksumming them was most of its executors' JVM time
        # (KRaft L6: the LZ4 and xxHash native calls, by Java Flight Recorder).
        "spark.shuffle.compress": "false",
        # The buffers of the streams between the executors and their Python workers
        # (both sides: the JVM's and PySpark's daemon read it from here): the rdd
        # engine moves its levels, visited blocks and successors through them, blocks
        # of megabytes; 64 KiB buffers cost a system call per 64 KiB each way.
        "spark.buffer.size": "1048576",
    }
    if is_local_master(master):
        conf["spark.driver.memory"] = "4g"
    # The driver's JVM schedules jobs and moves small summaries (and, on a local master,
    # blocks between Python workers): the client JIT compiler alone serves it as well
    # at half the CPU, which the C2 compiler otherwise spends on start-up and every
    # early job, competing with the Python workers for the cores.
    java = [JIT_OPTION, GC_OPTION]
    if quiet:
        java.append(f"-Dlog4j2.configurationFile=file:{_quiet_log4j(workdir)}")
    conf["spark.driver.extraJavaOptions"] = " ".join(java)
    conf["spark.executor.extraJavaOptions"] = GC_OPTION
    return conf


_LOCAL = re.compile(r"local(\[(\*|\d+)(,\s*\d+)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[\s*\d+\s*,\s*\d+\s*,\s*\d+\s*\]")


def _spark_major() -> int:
    """The major version of the installed pyspark (4 when unknown)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("pyspark").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 4


def check_master_url(master: str) -> None:
    """Raise a one-paragraph :class:`~modelcheck.errors.UsageError` naming ``master``
    unless Spark can start with it: ``local``, ``local[N]`` (N >= 1 threads),
    ``local[*]``, ``local[N,F]``, ``local-cluster[N,C,M]``, ``spark://HOST:PORT``,
    ``yarn``, ``k8s://...`` or (Spark 3) ``mesos://...``, as Spark itself accepts
    them (checked here, before Java starts: Spark reports a bad one with a Java stack
    trace)."""
    forms = ("local, local[N] (N >= 1 threads), local[*], spark://HOST:PORT, yarn or "
             "k8s://HOST:PORT")
    m = _LOCAL.fullmatch(master)
    if m is not None:
        if m.group(2) is not None and m.group(2) != "*" and int(m.group(2)) < 1:
            raise UsageError(f"--master {master!r}: a local master needs at least one "
                             f"thread (local[1] or more, or local[*] for every core).")
        return
    if _LOCAL_CLUSTER.fullmatch(master) or master == "yarn":
        return
    for scheme in ("spark://", "k8s://", *(("mesos://",) if _spark_major() < 4 else ())):
        if master.startswith(scheme):
            if len(master) == len(scheme):
                raise UsageError(f"--master {master!r}: no host after {scheme}; give "
                                 f"{scheme}HOST:PORT.")
            return
    raise UsageError(f"--master {master!r} is not a Spark master URL: give {forms}.")


def check_master_reachable(master: str, timeout: float) -> None:
    """For ``spark://host:port[,host:port]`` masters: fail fast if no master port answers."""
    if not master.startswith("spark://"):
        return
    hosts = master[len("spark://"):].split(",")
    errors = []
    for hp in hosts:
        host, _, port = hp.rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=min(timeout, 10.0)):
                return
        except (OSError, ValueError) as e:
            errors.append(f"{hp}: {e}")
    raise SparkBackendError(
        f"cannot reach the Spark master {master} ({'; '.join(errors)}). Check that the "
        "master is running and the URL (host and port, usually 7077) is right; "
        "use --master 'local[*]' to run on this machine."
    )


def wait_for_executors(spark: Any, timeout: float) -> int:
    """Wait until at least one executor registered; return how many there are."""
    sc = spark.sparkContext
    if is_local_master(sc.master):
        return 1
    jsc = sc._jsc.sc()
    deadline = time.monotonic() + timeout
    while True:
        if jsc.isStopped():
            raise SparkBackendError(
                f"the Spark context stopped while waiting for executors from {sc.master} "
                "(the master rejected or lost the application)."
            )
        n = len(jsc.statusTracker().getExecutorInfos()) - 1  # minus the driver
        if n > 0:
            return n
        if time.monotonic() >= deadline:
            raise SparkBackendError(
                f"no executor registered with the application within {timeout:.0f} s "
                f"(master {sc.master}). The master is reachable but gives no resources: are "
                "workers alive and do they have free cores and memory for "
                f"spark.executor.memory={sc.getConf().get('spark.executor.memory', '1g')}?"
            )
        time.sleep(0.2)


def get_session(master: str | None = "local[*]", conf: Mapping[str, str] | None = None, *,
                app_name: str = "modelcheck", connect_timeout: float = 60.0,
                quiet: bool = True) -> tuple[Any, bool]:
    """The active SparkSession, or a new one for ``master``; returns ``(session, created)``.

    ``master=None`` takes the master from the environment (``spark-submit --master``,
    ``spark-defaults.conf``), else ``local[*]``. A new session gets
    :func:`default_conf` overridden by ``conf``. Raises
    :class:`SparkBackendError` with one clear paragraph when Spark cannot start
    (no Java, bad master URL, unreachable master, no executors within
    ``connect_timeout`` seconds).
    """
    # The backend never uses pandas; PySpark warns about the pandas version anyway.
    warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas",
                            category=FutureWarning)
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise SparkBackendError(
            f"pyspark is not installed ({e}); install it with pip install 'modelcheck[spark]'."
        ) from None
    active = SparkSession.getActiveSession()
    if active is not None:
        wait_for_executors(active, connect_timeout)
        return active, False
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SparkBackendError(
            "Java was not found (no java on PATH and JAVA_HOME unset); Spark needs a Java 17 "
            "runtime, e.g. apt-get install openjdk-17-jre-headless."
        )
    submitted = master is None and "PYSPARK_GATEWAY_PORT" in os.environ
    if submitted:
        # Started by spark-submit: the JVM and its configuration already exist.
        from pyspark import SparkConf, SparkContext

        SparkContext._ensure_initialized()
        effective = SparkConf().get("spark.master", "local[*]") or "local[*]"
    else:
        effective = master or "local[*]"
    if not submitted:
        check_master_url(effective)
    check_master_reachable(effective, connect_timeout)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    workdir = Path(tempfile.mkdtemp(prefix="modelcheck-spark-session-"))
    atexit.register(shutil.rmtree, workdir, True)
    settings = default_conf(effective, workdir, quiet)
    if submitted:  # JVM-level settings were fixed by spark-submit; keep only SQL ones
        settings = {k: v for k, v in settings.items() if k.startswith("spark.sql.")}
    settings.update(conf or {})
    builder = SparkSession.builder.appName(app_name)
    if not submitted:
        builder = builder.master(effective)
    for k, v in settings.items():
        builder = builder.config(k, v)
    try:
        with filtered_stderr() if quiet else contextlib.nullcontext():
            spark = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - Spark start-up errors come in many types
        raise SparkBackendError(
            f"Spark could not start with master {effective!r}: {_first_line(e)}"
        ) from None
    spark.sparkContext.setLogLevel("ERROR")
    try:
        wait_for_executors(spark, connect_timeout)
    except SparkBackendError:
        spark.stop()
        raise
    return spark, True


#: py4j's and Spark's wrapper lines, which say nothing about the cause
_WRAPPERS = ("An error occurred while calling", "Exception thrown in awaitResult",
             "JVM stacktrace")


def _first_line(e: BaseException) -> str:
    """What went wrong, in one line: for a Java exception its own message (``Asked to run
    locally with 0 threads``), not py4j's "An error occurred while calling ..."."""
    texts = []
    java = getattr(e, "java_exception", None)
    if java is not None:
        with contextlib.suppress(Exception):
            texts.append(str(java.toString()))
    texts.append(str(e).strip() or type(e).__name__)
    for text in texts:
        for line in text.splitlines():
            line = line.strip().removeprefix(": ")
            if line and not line.startswith(("at ", "...")) \
                    and not any(w in line for w in _WRAPPERS):
                return line[:500]
    return texts[-1][:500]


# ------------------------------------------------------------------ shipping code
@dataclass(frozen=True)
class ShippedSpec:
    """How executors find the spec: a loader target and the zip that contains it."""

    target: str
    zip_path: str | None


def _module_root(modname: str, file: str) -> Path:
    """The sys.path entry from which ``modname`` (defined in ``file``) is importable."""
    p = Path(file).resolve()
    depth = modname.count(".")
    root = p.parent
    if p.name == "__init__.py":
        depth += 1
    for _ in range(depth):
        root = root.parent
    return root


def _files_of(top: str, root: Path) -> list[tuple[str, Path]]:
    pkg = root / top
    if pkg.is_dir():
        return [(str(f.relative_to(root)), f) for f in sorted(pkg.rglob("*.py"))
                if "__pycache__" not in f.parts]
    mod = root / f"{top}.py"
    return [(mod.name, mod)] if mod.is_file() else []


def _package_files(name: str) -> list[tuple[str, Path]]:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return []
    if spec.submodule_search_locations:
        pkg = Path(list(spec.submodule_search_locations)[0])
        return _files_of(name, pkg.parent)
    origin = Path(spec.origin)
    return [(origin.name, origin)] if origin.suffix == ".py" else []


def spec_target(cls: type) -> tuple[str, list[tuple[str, Path]]]:
    """The executor-side loader target of spec class ``cls`` and the files it needs."""
    qual = cls.__qualname__
    modname = cls.__module__
    if "<locals>" in qual:
        raise UsageError(
            f"spec class {qual} is defined inside a function; the Spark backend loads specs "
            "on executors by module and class name, so define it at module level."
        )
    mod = sys.modules.get(modname)
    file = getattr(mod, "__file__", None)
    if modname == "__main__" or file is None:
        raise UsageError(
            f"spec class {qual} is defined in {modname!r}, which executors cannot import; "
            "put the spec in a module file (e.g. specs/my_spec.py) and load it from there."
        )
    if modname.startswith("_modelcheck_spec_"):
        # Loaded from a file outside the working directory: ship the file under its
        # module name, so executors import it exactly like the driver did.
        return f"{modname}:{qual}", [(f"{modname}.py", Path(file))]
    top = modname.split(".")[0]
    root = _module_root(modname, file)
    return f"{modname}:{qual}", _files_of(top, root)


def ship_spec(spark: Any, cls: type) -> ShippedSpec:
    """Make the spec importable on executors (a zip via ``addPyFile``); return its target."""
    target, files = spec_target(cls)
    members: dict[str, Path] = {}
    for name in ("modelcheck", "invariants", "spark_explore"):
        for arc, path in _package_files(name):
            members.setdefault(arc, path)
    for arc, path in files:
        members[arc] = path
    for arc, path in members.items():
        SHIPPED_FILES[arc] = str(path)
    digest = hashlib.sha1()
    blobs: list[tuple[str, bytes]] = []
    for arc in sorted(members):
        data = members[arc].read_bytes()
        blobs.append((arc, data))
        digest.update(arc.encode() + b"\0" + data)
    h = digest.hexdigest()[:16]
    sc = spark.sparkContext
    key = (id(sc), h)
    if key in _SHIPPED:
        return ShippedSpec(target, _SHIPPED[key])
    outdir = Path(tempfile.gettempdir()) / "modelcheck-spark-code"
    outdir.mkdir(parents=True, exist_ok=True)
    zpath = outdir / f"modelcheck_code_{h}.zip"
    if not zpath.exists():
        tmp = zpath.with_name(zpath.name + f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for arc, data in blobs:
                info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
                z.writestr(info, data)
        os.replace(tmp, zpath)
    try:
        sc.addPyFile(str(zpath))
    except Exception as e:  # noqa: BLE001
        if "already" not in str(e).lower():
            raise SparkBackendError(f"could not ship the spec code to executors: "
                                    f"{_first_line(e)}") from None
    _SHIPPED[key] = str(zpath)
    return ShippedSpec(target, str(zpath))


_ZIP_PATH = re.compile(r"[^\s'\"\[\]()]*modelcheck_code_[0-9a-f]+\.zip/([^\s:'\"]+\.py)")


def driver_paths(text: str) -> str:
    """Rewrite executor paths of shipped files (``.../modelcheck_code_H.zip/specs/x.py``)
    as the driver shows them (``specs/x.py``), so messages read as locally."""

    def repl(m: re.Match[str]) -> str:
        local = SHIPPED_FILES.get(m.group(1))
        if local is None:
            return m.group(1)
        try:
            rel = os.path.relpath(local)
        except ValueError:
            return local
        return local if rel.startswith("..") else rel

    return _ZIP_PATH.sub(repl, text)
