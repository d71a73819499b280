"""A real Spark standalone cluster on 127.0.0.1, for tests and benchmarks.

A development harness, not part of the installed package: ``scripts/spark-cluster``
is its command line, and the cluster tests import it from here
(``from scripts.spark_cluster import StandaloneCluster``, the project root on
``sys.path``).

:class:`StandaloneCluster` starts one standalone master and ``N`` workers with the
launcher scripts bundled in the ``pyspark`` wheel (``bin/spark-class``), waits until
every worker has registered with the master, and stops everything again by PID.

Each daemon runs in its own session / process group (``start_new_session``), so

* the processes outlive the Python process that started them (``scripts/spark-cluster
  start`` relies on this; use :meth:`StandaloneCluster.state` /
  :meth:`StandaloneCluster.attach` to hand the cluster over to another process), and
* a whole worker, including the executor JVMs it forked, can be killed with one
  ``killpg`` (:meth:`StandaloneCluster.kill_worker`, for fault-injection tests).

Typical use::

    with StandaloneCluster(workers=2) as cluster:
        spark = SparkSession.builder.master(cluster.master_url).getOrCreate()
        ...

``pyspark`` is *not* imported by this module; it is only located on disk with
:func:`importlib.util.find_spec`, so importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import psutil

__all__ = [
    "ClusterError",
    "SparkDaemon",
    "StandaloneCluster",
    "find_spark_home",
    "kept_dirs",
    "free_port",
]

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
STATE_VERSION = 1
#: JVM flags for the master/worker daemons: C1-only JIT and serial GC start faster on
#: small machines; the daemons do little work, so peak performance is irrelevant.
DEFAULT_DAEMON_JAVA_OPTS: tuple[str, ...] = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
#: Master options always set: the REST submission server would bind the fixed port 6066,
#: which clashes between concurrent clusters (and we never submit through it).
BASE_MASTER_OPTS: tuple[str, ...] = ("-Dspark.master.rest.enabled=false",)
_BIND_ERRORS = ("Address already in use", "BindException", "Failed to bind")


class ClusterError(RuntimeError):
    """The cluster could not be started, or a daemon misbehaved."""


@dataclass(frozen=True)
class SparkDaemon:
    """One master or worker JVM started by :class:`StandaloneCluster`."""

    role: str  # "master" or "worker"
    index: int  # worker index (0-based); 0 for the master
    pid: int  # also the process-group id (each daemon leads its own session)
    create_time: float  # psutil create time, guards against PID reuse
    port: int
    webui_port: int
    log_path: Path
    work_dir: Path | None = None  # workers only
    cores: int | None = None  # workers only
    memory: str | None = None  # workers only

    @property
    def pgid(self) -> int:
        """Process-group id of the daemon (equal to its PID)."""
        return self.pid

    def to_json(self) -> dict[str, Any]:
        """JSON-serialisable form (see :meth:`from_json`)."""
        return {
            "role": self.role,
            "index": self.index,
            "pid": self.pid,
            "create_time": self.create_time,
            "port": self.port,
            "webui_port": self.webui_port,
            "log_path": str(self.log_path),
            "work_dir": None if self.work_dir is None else str(self.work_dir),
            "cores": self.cores,
            "memory": self.memory,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SparkDaemon:
        """Inverse of :meth:`to_json`."""
        work_dir = data.get("work_dir")
        return cls(
            role=str(data["role"]),
            index=int(data["index"]),
            pid=int(data["pid"]),
            create_time=float(data["create_time"]),
            port=int(data["port"]),
            webui_port=int(data["webui_port"]),
            log_path=Path(data["log_path"]),
            work_dir=None if work_dir is None else Path(work_dir),
            cores=None if data.get("cores") is None else int(data["cores"]),
            memory=data.get("memory"),
        )


def _inside(path: str, top: str) -> bool:
    """Whether ``path`` is ``top`` or lies under it (both absolute, normalised)."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def _outermost(dirs: Sequence[str]) -> list[str]:
    """``dirs`` (normalised, in order) without those inside another one of them."""
    norm = [os.path.normpath(os.path.abspath(d)) for d in dirs]
    out: list[str] = []
    for i, d in enumerate(norm):
        inside_other = any(_inside(d, o) and (d != o or j < i) for j, o in enumerate(norm)
                           if j != i)
        if not inside_other:
            out.append(d)
    return out


def kept_dirs(hidden: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The directories a worker run with ``env`` needs that lie inside one of ``hidden``
    (the private mounts): the Spark install (``SPARK_HOME``), ``JAVA_HOME`` and the
    executors' Python (``PYSPARK_PYTHON``: its venv, where ``bin/python`` is, and the
    installation its symbolic link leads to), outermost first, none inside another."""
    wanted: list[str] = []
    for key in ("SPARK_HOME", "JAVA_HOME"):
        if env.get(key):
            wanted.append(env[key])
    python = env.get("PYSPARK_PYTHON") or sys.executable
    python = shutil.which(python) or python
    for exe in (os.path.abspath(python), os.path.realpath(python)):
        wanted.append(os.path.dirname(os.path.dirname(exe)))  # .../bin/python -> prefix
    top = [os.path.normpath(d) for d in hidden]
    under = [os.path.normpath(os.path.abspath(w)) for w in wanted]
    under = [w for w in under if any(_inside(w, h) and w != h for h in top)]
    return _outermost(sorted(set(under)))


def find_spark_home() -> Path:
    """Directory of the installed ``pyspark`` package (it contains ``bin/`` and ``jars/``)."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ClusterError("pyspark is not installed (pip install pyspark)")
    for location in spec.submodule_search_locations:
        home = Path(location)
        if (home / "bin" / "spark-class").is_file() and (home / "jars").is_dir():
            return home
    raise ClusterError(
        f"pyspark found at {list(spec.submodule_search_locations)} but without bin/spark-class "
        "and jars/ (a pyspark-client / pyspark-connect install cannot run a cluster)"
    )


def free_port(host: str = HOST) -> int:
    """A TCP port that was free a moment ago (bind to port 0 and release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _free_ports(count: int, host: str = HOST) -> list[int]:
    """``count`` distinct free ports (all sockets held open together, then released)."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(sock)
            sock.bind((host, 0))
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for sock in socks:
            sock.close()


def _tail(path: Path, lines: int = 30) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    return "\n".join(text.splitlines()[-lines:])


def _process_matches(daemon: SparkDaemon) -> psutil.Process | None:
    """The live process for ``daemon``, or None if it is gone, a zombie, or its PID was reused."""
    try:
        proc = psutil.Process(daemon.pid)
        if abs(proc.create_time() - daemon.create_time) > 0.05:
            return None
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def _die_with_parent_hook() -> Callable[[], None]:
    """A ``preexec_fn`` making the kernel SIGKILL the child when its parent thread exits.

    libc is resolved here, in the parent: the hook runs between fork and exec, where
    importing or loading libraries could deadlock.
    """
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    pr_set_pdeathsig = 1
    sigkill = int(signal.SIGKILL)

    def hook() -> None:
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)

    return hook


def _killpg(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class StandaloneCluster:
    """One Spark standalone master and ``workers`` workers on 127.0.0.1.

    Parameters
    ----------
    workers:
        Number of worker daemons.
    cores, memory:
        ``--cores`` / ``--memory`` offered by *each* worker to applications.
    base_dir:
        Directory for logs, work dirs, local dirs and the (empty) Spark conf dir.
        Default: a fresh temporary directory, removed by :meth:`stop` unless
        ``keep_dir`` is true (a given directory is never removed).
    ready_timeout:
        Seconds :meth:`start` waits for the master and all workers to be up.
    daemon_memory:
        Heap of each master/worker JVM (``SPARK_DAEMON_MEMORY``; Spark's default is 1g).
    daemon_java_opts:
        JVM flags for master and workers only (``SPARK_DAEMON_JAVA_OPTS``; executors
        are not affected). The default (C1 JIT only, serial GC) cut the JVM start-up
        CPU time by about half on a 2-core machine.
    master_opts, worker_opts:
        Extra ``-Dspark.*`` options for the daemons (``SPARK_MASTER_OPTS`` /
        ``SPARK_WORKER_OPTS``).
    extra_env:
        Extra environment variables for the daemons.
    keep_dir:
        Keep an auto-created temporary ``base_dir`` (logs!) after :meth:`stop`.
    start_attempts:
        How often :meth:`start` retries with fresh ports when a daemon lost a race
        for its port.
    die_with_parent:
        Linux only: the daemons get SIGKILL when the *thread* that started them
        exits (``PR_SET_PDEATHSIG``), so a crashed or killed test run leaks no JVMs.
        Incompatible with :meth:`detach` (leave it false for detached clusters).
    private_mounts:
        Linux, as root: each worker (and the executors it starts) runs in its own
        mount namespace (``unshare --mount``) where these directories are empty
        private ``tmpfs`` mounts, and its working directory is a fresh directory
        inside the first of them. With ``("/tmp", "/work")`` no file of the driver
        under those directories is visible to the executors, as on a real cluster:
        the spec and the packages must travel with the job. The daemons' logs still
        reach ``base_dir`` (their output is a file opened by this process). What a
        worker needs to run stays visible even when it lies in a hidden directory
        (a checkout or a venv in the system's temporary directory): Spark (the
        ``pyspark`` install), ``JAVA_HOME`` and the executors' Python
        (``PYSPARK_PYTHON``, with its venv or prefix) are bound back into the
        namespace, as a cluster's hosts have them installed. A directory inside
        another one of the list is hidden already and not mounted again.
    """

    def __init__(
        self,
        workers: int = 2,
        *,
        cores: int = 1,
        memory: str = "1g",
        base_dir: str | os.PathLike[str] | None = None,
        ready_timeout: float = 120.0,
        daemon_memory: str = "512m",
        daemon_java_opts: Sequence[str] = DEFAULT_DAEMON_JAVA_OPTS,
        master_opts: Sequence[str] = (),
        worker_opts: Sequence[str] = (),
        extra_env: Mapping[str, str] | None = None,
        keep_dir: bool = False,
        start_attempts: int = 3,
        die_with_parent: bool = False,
        private_mounts: Sequence[str] = (),
    ) -> None:
        if workers < 0:
            raise ValueError("workers must be >= 0")
        if cores < 1:
            raise ValueError("cores must be >= 1")
        self.num_workers = workers
        self.cores = cores
        self.memory = memory
        self.ready_timeout = ready_timeout
        self.daemon_memory = daemon_memory
        self.daemon_java_opts = list(daemon_java_opts)
        self.master_opts = list(master_opts)
        self.worker_opts = list(worker_opts)
        self.extra_env = dict(extra_env or {})
        self.keep_dir = keep_dir
        self.start_attempts = max(1, start_attempts)
        self.die_with_parent = die_with_parent and sys.platform.startswith("linux")
        self.private_mounts = tuple(str(p) for p in private_mounts)
        if self.private_mounts and (os.geteuid() != 0 or shutil.which("unshare") is None):
            raise ClusterError("private_mounts needs root and unshare(1) (util-linux)")
        self._given_base_dir = None if base_dir is None else Path(base_dir).resolve()
        self._base_dir: Path | None = self._given_base_dir
        self._owns_base_dir = False
        self._master: SparkDaemon | None = None
        self._workers: list[SparkDaemon] = []
        self._popens: dict[int, subprocess.Popen[bytes]] = {}
        self._stopped = False
        #: Seconds from the launch of the last successful :meth:`start` attempt until
        #: ``master_up`` (master reports ALIVE) and ``ready`` (all workers ALIVE).
        self.timings: dict[str, float] = {}
        self._started_at: float | None = None

    # ------------------------------------------------------------------ properties
    @property
    def started(self) -> bool:
        """True once :meth:`start` succeeded (or the cluster was attached) and until stop."""
        return self._master is not None and not self._stopped

    @property
    def base_dir(self) -> Path:
        """Directory holding ``logs/``, ``work/``, ``local/`` and ``conf/``."""
        if self._base_dir is None:
            raise ClusterError("cluster not started")
        return self._base_dir

    @property
    def master(self) -> SparkDaemon:
        """The master daemon."""
        if self._master is None:
            raise ClusterError("cluster not started")
        return self._master

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:PORT``, for ``SparkSession.builder.master(...)``."""
        return f"spark://{HOST}:{self.master.port}"

    @property
    def master_webui_url(self) -> str:
        """``http://127.0.0.1:WEBUI_PORT`` of the master."""
        return f"http://{HOST}:{self.master.webui_port}"

    @property
    def workers(self) -> list[SparkDaemon]:
        """The worker daemons (including killed ones), in index order."""
        return list(self._workers)

    @property
    def daemons(self) -> list[SparkDaemon]:
        """Master followed by the workers."""
        return ([self._master] if self._master is not None else []) + list(self._workers)

    @property
    def pids(self) -> list[int]:
        """PIDs of master and workers."""
        return [d.pid for d in self.daemons]

    # ------------------------------------------------------------ context manager
    def __enter__(self) -> Self:
        if not self.started:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        if self._master is None:
            return f"<StandaloneCluster workers={self.num_workers} (not started)>"
        state = "stopped" if self._stopped else "running"
        return f"<StandaloneCluster {self.master_url} workers={self.num_workers} {state}>"

    # ------------------------------------------------------------------ start
    def start(self) -> Self:
        """Start master and workers and wait until all workers are registered and ALIVE.

        Retries with fresh ports if a daemon lost a port race. Raises
        :class:`ClusterError` (with log tails) on failure, after stopping whatever
        it started.
        """
        if self.started:
            raise ClusterError(f"{self!r} already started")
        spark_home = find_spark_home()
        if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
            raise ClusterError("java not found on PATH and JAVA_HOME not set")
        self._stopped = False
        self._prepare_base_dir()
        last_error: ClusterError | None = None
        for attempt in range(1, self.start_attempts + 1):
            t0 = time.monotonic()
            try:
                self.timings = {}
                self._started_at = time.time()
                self._launch_and_wait(spark_home, t0)
                return self
            except ClusterError as exc:
                last_error = exc
                port_race = any(marker in str(exc) for marker in _BIND_ERRORS)
                self._terminate(grace=5.0)
                if not port_race or attempt == self.start_attempts:
                    break
                self._master, self._workers, self._popens = None, [], {}
            except BaseException:
                self._terminate(grace=5.0)
                self._master, self._workers, self._popens = None, [], {}
                self._stopped = True
                self._cleanup_base_dir()
                raise
        self._master, self._workers, self._popens = None, [], {}
        self._stopped = True
        self._cleanup_base_dir()
        assert last_error is not None
        raise last_error

    def _prepare_base_dir(self) -> None:
        if self._given_base_dir is None:
            self._base_dir = Path(tempfile.mkdtemp(prefix="spark-cluster-"))
            self._owns_base_dir = True
        else:
            self._base_dir = self._given_base_dir
            self._base_dir.mkdir(parents=True, exist_ok=True)
            self._owns_base_dir = False
        for sub in ("logs", "work", "local", "conf"):
            (self.base_dir / sub).mkdir(exist_ok=True)

    def _env(self, spark_home: Path, local_dir: Path | None) -> dict[str, str]:
        env = dict(os.environ)
        # A stale SPARK_HOME (e.g. a system Spark of another version) would make the
        # bundled scripts mix jars; always point it at the pyspark install.
        env["SPARK_HOME"] = str(spark_home)
        env["SPARK_CONF_DIR"] = str(self.base_dir / "conf")  # empty: no stray spark-env.sh
        env["SPARK_LOG_DIR"] = str(self.base_dir / "logs")
        env["PYSPARK_PYTHON"] = sys.executable
        env["SPARK_LOCAL_IP"] = HOST
        env["SPARK_NO_DAEMONIZE"] = "1"
        env["SPARK_DAEMON_MEMORY"] = self.daemon_memory
        for key in (
            "SPARK_ENV_LOADED",
            "PYSPARK_GATEWAY_PORT",
            "PYSPARK_GATEWAY_SECRET",
            "SPARK_MASTER_HOST",
            "SPARK_MASTER_PORT",
            "SPARK_WORKER_INSTANCES",
        ):
            env.pop(key, None)
        if local_dir is not None:
            env["SPARK_LOCAL_DIRS"] = str(local_dir)
        # Fixed ports: fail fast instead of silently moving to port+1 (we must know them).
        fixed = "-Dspark.port.maxRetries=0"
        env["SPARK_MASTER_OPTS"] = " ".join([fixed, *BASE_MASTER_OPTS, *self.master_opts])
        env["SPARK_WORKER_OPTS"] = " ".join([fixed, *self.worker_opts])
        inherited = env.get("SPARK_DAEMON_JAVA_OPTS", "").split()
        env["SPARK_DAEMON_JAVA_OPTS"] = " ".join([*self.daemon_java_opts, *inherited])
        env.update(self.extra_env)
        return env

    def _spawn(
        self, args: list[str], env: Mapping[str, str], log_path: Path
    ) -> tuple[subprocess.Popen[bytes], float]:
        preexec = _die_with_parent_hook() if self.die_with_parent else None
        with open(log_path, "wb") as log:
            popen = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(env),
                cwd=str(self.base_dir),
                start_new_session=True,  # own process group; survives our exit
                close_fds=True,
                preexec_fn=preexec,
            )
        try:
            create_time = psutil.Process(popen.pid).create_time()
        except psutil.NoSuchProcess:
            create_time = 0.0
        self._popens[popen.pid] = popen
        return popen, create_time

    def _launch_master(self, spark_home: Path) -> None:
        spark_class = str(spark_home / "bin" / "spark-class")
        port, ui = _free_ports(2)
        log_path = self.base_dir / "logs" / "master.out"
        args = [spark_class, MASTER_CLASS, "--host", HOST, "--port", str(port)]
        args += ["--webui-port", str(ui)]
        popen, ctime = self._spawn(args, self._env(spark_home, None), log_path)
        self._master = SparkDaemon("master", 0, popen.pid, ctime, port, ui, log_path)
        self._workers = []

    def _launch_workers(self, spark_home: Path) -> None:
        spark_class = str(spark_home / "bin" / "spark-class")
        ports = _free_ports(2 * self.num_workers)
        for i in range(self.num_workers):
            port, ui = ports[2 * i], ports[2 * i + 1]
            work_dir = self.base_dir / "work" / f"worker-{i}"
            local_dir = self.base_dir / "local" / f"worker-{i}"
            work_dir.mkdir(parents=True, exist_ok=True)
            local_dir.mkdir(parents=True, exist_ok=True)
            log_path = self.base_dir / "logs" / f"worker-{i}.out"
            args = [spark_class, WORKER_CLASS, "--host", HOST, "--port", str(port)]
            args += ["--webui-port", str(ui), "--cores", str(self.cores)]
            args += ["--memory", self.memory, "--work-dir", str(work_dir), self.master_url]
            env = self._env(spark_home, local_dir)
            if self.private_mounts:
                args = self.isolated(args, i, env)
            popen, ctime = self._spawn(args, env, log_path)
            daemon = SparkDaemon(
                "worker", i, popen.pid, ctime, port, ui, log_path, work_dir, self.cores, self.memory
            )
            self._workers.append(daemon)

    def isolated(self, args: Sequence[str], index: int = 0,
                 env: Mapping[str, str] | None = None) -> list[str]:
        """``args`` run in a new mount namespace with private ``tmpfs`` mounts over
        :attr:`private_mounts` and a working directory inside the first one; the
        worker's work and local directories (under ``base_dir``) are created again
        inside it when ``base_dir`` is hidden, and the directories a worker needs
        (:func:`kept_dirs` of ``env``, by default this cluster's daemon environment)
        are bound back: each is opened (a file descriptor) before the mounts hide it
        and bound from ``/proc/self/fd`` after. ``unshare`` and ``sh`` ``exec``, so the
        worker JVM keeps the PID (and process group) this object records."""
        if env is None:
            env = self._env(find_spark_home(), None)
        hidden = _outermost(self.private_mounts)
        keep = kept_dirs(hidden, env)
        if len(keep) > 7:  # sh redirects file descriptors 3 to 9 only
            raise ClusterError(f"too many directories to keep visible: {keep}")
        q = shlex.quote
        steps = ["set -e"]
        steps += [f"exec {3 + k}<{q(d)}" for k, d in enumerate(keep)]
        steps += [f"mount -t tmpfs -o size=4g tmpfs {q(p)}" for p in hidden]
        for k, d in enumerate(keep):
            steps += [f"mkdir -p {q(d)}",
                      f"mount --no-canonicalize --bind /proc/self/fd/{3 + k} {q(d)}",
                      f"exec {3 + k}<&-"]
        home = f"{self.private_mounts[0].rstrip('/')}/worker-{index}-home"
        dirs = " ".join(q(str(self.base_dir / sub / f"worker-{index}"))
                        for sub in ("work", "local"))
        steps += [f"mkdir -p {q(home)} {dirs}", f"cd {q(home)}", 'exec "$@"']
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                "; ".join(steps), "sh", *args]

    def _wait_until(self, t0: float, what: str, ready: Callable[[dict[str, Any]], bool]) -> None:
        """Poll the master's JSON until ``ready(status)``; fail fast if a daemon dies."""
        deadline = t0 + self.ready_timeout
        delay = 0.05
        last = "master web UI not answering yet"
        while True:
            for daemon in self.daemons:
                if not self.is_alive(daemon):
                    raise ClusterError(
                        f"spark {daemon.role} {daemon.index} (pid {daemon.pid}) exited during "
                        f"startup (exit code {self._returncode(daemon)})\n{self.log_tails()}"
                    )
            try:
                status = self.master_status(timeout=2.0)
            except (OSError, ValueError) as exc:
                last = f"master web UI not answering: {exc}"
            else:
                if ready(status):
                    return
                alive = self._alive_registered(status)
                last = (
                    f"master status={status.get('status')}, "
                    f"{len(alive)}/{self.num_workers} workers registered and ALIVE"
                )
            if time.monotonic() >= deadline:
                raise ClusterError(
                    f"spark standalone cluster: {what} not reached within "
                    f"{self.ready_timeout:.0f} s ({last})\n{self.log_tails()}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)

    def _launch_and_wait(self, spark_home: Path, t0: float) -> None:
        # Master first: a worker that starts before the master is ALIVE gets
        # "connection refused" and only retries registration after 5-15 s.
        self._launch_master(spark_home)
        self._wait_until(t0, "master ALIVE", lambda st: st.get("status") == "ALIVE")
        self.timings["master_up"] = time.monotonic() - t0
        self._launch_workers(spark_home)
        self._wait_until(
            t0,
            f"{self.num_workers} workers ALIVE",
            lambda st: len(self._alive_registered(st)) == self.num_workers,
        )
        self.timings["ready"] = time.monotonic() - t0

    def _alive_registered(self, status: Mapping[str, Any]) -> set[int]:
        """Ports of *our* workers that the master lists as ALIVE."""
        ours = {w.port for w in self._workers}
        return {
            int(w.get("port", -1))
            for w in status.get("workers", [])
            if w.get("state") == "ALIVE" and int(w.get("port", -1)) in ours
        }

    # ------------------------------------------------------------------ queries
    def master_status(self, timeout: float = 5.0) -> dict[str, Any]:
        """The master's ``/json/`` document (``url``, ``workers``, ``aliveworkers``, ...)."""
        with urllib.request.urlopen(f"{self.master_webui_url}/json/", timeout=timeout) as resp:
            data: dict[str, Any] = json.loads(resp.read().decode("utf-8"))
        return data

    def alive_workers(self) -> int:
        """Number of this cluster's workers the master currently reports as ALIVE."""
        return len(self._alive_registered(self.master_status()))

    def wait_for_alive_workers(self, count: int, timeout: float = 60.0) -> dict[str, Any]:
        """Poll the master until exactly ``count`` of our workers are ALIVE; return its status."""
        deadline = time.monotonic() + timeout
        delay = 0.1
        status: dict[str, Any] = {}
        while True:
            with contextlib.suppress(OSError, ValueError):
                status = self.master_status(timeout=2.0)
                if len(self._alive_registered(status)) == count:
                    return status
            if time.monotonic() >= deadline:
                workers = status.get("workers", [])
                raise ClusterError(
                    f"master did not report {count} alive workers within {timeout:.0f} s; "
                    f"last status: aliveworkers={status.get('aliveworkers')} "
                    f"workers={[(w.get('port'), w.get('state')) for w in workers]}"
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 1.0)

    def is_alive(self, daemon: SparkDaemon) -> bool:
        """True if the daemon's process still runs (and is the one we started)."""
        popen = self._popens.get(daemon.pid)
        if popen is not None:
            return popen.poll() is None
        return _process_matches(daemon) is not None

    def _returncode(self, daemon: SparkDaemon) -> int | None:
        popen = self._popens.get(daemon.pid)
        return None if popen is None else popen.poll()

    def log_tails(self, lines: int = 30) -> str:
        """The last ``lines`` lines of every daemon log, for error messages."""
        parts = []
        for d in self.daemons:
            parts.append(
                f"----- {d.log_path} (last {lines} lines) -----\n{_tail(d.log_path, lines)}"
            )
        return "\n".join(parts)

    # ------------------------------------------------------------------ faults / stop
    def kill_worker(self, index: int) -> SparkDaemon:
        """SIGKILL worker ``index``'s process group (the worker JVM and its executors).

        Returns the killed daemon. The master notices the lost connection and marks
        the worker DEAD; use :meth:`wait_for_alive_workers` to wait for that.
        """
        daemon = self._workers[index]
        if self.is_alive(daemon):
            _killpg(daemon.pgid, signal.SIGKILL)
        self._wait_gone([daemon], time.monotonic() + 10.0)
        return daemon

    def stop(self, grace: float = 10.0) -> None:
        """Stop all daemons (SIGTERM to each process group, SIGKILL after ``grace`` s).

        Idempotent. Removes the base dir if it was a temporary one we created and
        ``keep_dir`` is false.
        """
        if self._stopped or self._master is None:
            self._stopped = True
            return
        try:
            self._terminate(grace)
        finally:
            self._stopped = True
            self._cleanup_base_dir()

    def _terminate(self, grace: float) -> None:
        daemons = self.daemons
        # Workers first so they do not try to re-register with a dying master.
        for daemon in reversed(daemons):
            if self.is_alive(daemon):
                _killpg(daemon.pgid, signal.SIGTERM)
        left = self._wait_gone(daemons, time.monotonic() + grace)
        for daemon in left:
            _killpg(daemon.pgid, signal.SIGKILL)
        self._wait_gone(left, time.monotonic() + 10.0)
        # Leftover group members (executor JVMs) whose leader already exited.
        for daemon in daemons:
            _killpg(daemon.pgid, signal.SIGKILL)

    def _wait_gone(self, daemons: Sequence[SparkDaemon], deadline: float) -> list[SparkDaemon]:
        """Wait until the daemons exit (reaping our children); return those still alive."""
        pending = list(daemons)
        delay = 0.05
        while pending:
            pending = [d for d in pending if self.is_alive(d)]
            if not pending or time.monotonic() >= deadline:
                break
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        return pending

    def _cleanup_base_dir(self) -> None:
        if self._owns_base_dir and not self.keep_dir and self._base_dir is not None:
            shutil.rmtree(self._base_dir, ignore_errors=True)

    def detach(self) -> dict[str, Any]:
        """Forget the processes without stopping them (they keep running); return :meth:`state`.

        After this, :meth:`stop` / ``__exit__`` are no-ops; use :meth:`attach` on the
        returned state to control the cluster again.
        """
        if self.die_with_parent:
            raise ClusterError("a cluster started with die_with_parent=True cannot be detached")
        state = self.state()
        self._owns_base_dir = False
        self._popens.clear()
        self._stopped = True
        return state

    # ------------------------------------------------------------------ persistence
    def state(self) -> dict[str, Any]:
        """JSON-serialisable description of the running cluster (see :meth:`attach`)."""
        return {
            "version": STATE_VERSION,
            "master_url": self.master_url,
            "master_webui_url": self.master_webui_url,
            "base_dir": str(self.base_dir),
            "log_dir": str(self.base_dir / "logs"),
            "workers": self.num_workers,
            "cores": self.cores,
            "memory": self.memory,
            "python": sys.executable,
            "started_at": self._started_at,
            "timings": dict(self.timings),
            "master": self.master.to_json(),
            "worker_daemons": [w.to_json() for w in self._workers],
        }

    def write_state(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`state` as JSON to ``path`` (atomically); return the path."""
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(json.dumps(self.state(), indent=2) + "\n")
        os.replace(tmp, target)
        return target

    @classmethod
    def attach(cls, state: Mapping[str, Any] | str | os.PathLike[str]) -> StandaloneCluster:
        """A cluster object controlling daemons described by ``state`` (dict or JSON file).

        The daemons are identified by PID *and* creation time, so a reused PID is
        never signalled. :meth:`stop` works as usual (the base dir is kept).
        """
        if isinstance(state, Mapping):
            data: Mapping[str, Any] = state
        else:
            data = json.loads(Path(state).read_text())
        state = data
        if state.get("version") != STATE_VERSION:
            raise ClusterError(f"unsupported cluster state version {state.get('version')!r}")
        cluster = cls(
            workers=int(state["workers"]),
            cores=int(state["cores"]),
            memory=str(state["memory"]),
            base_dir=state["base_dir"],
        )
        cluster._base_dir = Path(state["base_dir"])
        cluster._master = SparkDaemon.from_json(state["master"])
        cluster._workers = [SparkDaemon.from_json(w) for w in state["worker_daemons"]]
        cluster.timings = dict(state.get("timings", {}))
        cluster._started_at = state.get("started_at")
        return cluster

    def iter_alive(self) -> Iterator[SparkDaemon]:
        """The daemons whose processes are still running."""
        return (d for d in self.daemons if self.is_alive(d))
