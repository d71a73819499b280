"""Tests for scripts/spark_cluster.py: a real Spark standalone cluster on 127.0.0.1.

The Spark driver of these tests runs in a child Python process (``_DRIVER`` below),
so that it never shares a JVM / SparkContext with other test modules that may hold a
``local[*]`` session in this pytest process, and so that its start-up can be timed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.spark_cluster import StandaloneCluster, find_spark_home

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark missing"),
    pytest.mark.skipif(shutil.which("java") is None, reason="java missing"),
]

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "spark-cluster"

_DRIVER = textwrap.dedent(
    '''
    """Connect to a standalone master, run two tiny jobs, print one JSON line."""
    import json
    import os
    import socket
    import sys
    import time

    from pyspark.sql import SparkSession


    def executor_jvm() -> tuple[int, int]:
        """(pid, parent pid) of the executor JVM that runs this Python worker."""
        pid = os.getpid()
        while pid > 1:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            if comm == "java":
                return pid, ppid
            pid = ppid
        return -1, -1


    url, n_exec = sys.argv[1], int(sys.argv[2])
    t0 = time.monotonic()
    spark = (
        SparkSession.builder.master(url)
        .appName("modelcheck-cluster-test")
        .config("spark.executor.memory", "512m")
        .config("spark.cores.max", "2")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    t_session = time.monotonic() - t0
    sc = spark.sparkContext
    deadline = time.monotonic() + 120
    # getExecutorMemoryStatus also lists the driver's block manager.
    while sc._jsc.sc().getExecutorMemoryStatus().size() < n_exec + 1:
        if time.monotonic() > deadline:
            raise SystemExit("executors did not register within 120 s")
        time.sleep(0.05)
    t_executors = time.monotonic() - t0
    total = spark.range(1000).selectExpr("sum(id) AS s").collect()[0]["s"]
    t_sql = time.monotonic() - t0
    rows = (
        sc.parallelize(range(8), 8)
        .map(lambda i: (i, socket.gethostname(), *executor_jvm()))
        .collect()
    )
    t_rdd = time.monotonic() - t0
    spark.stop()
    t_stop = time.monotonic() - t0
    result = {
        "sum": total,
        "rows": rows,
        "session_s": t_session,
        "executors_s": t_executors,
        "sql_s": t_sql,
        "rdd_s": t_rdd,
        "stop_s": t_stop,
    }
    print("RESULT " + json.dumps(result), flush=True)
    '''
)


def _spark_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["SPARK_HOME"] = str(find_spark_home())
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _run_driver(tmp_path: Path, url: str, executors: int) -> dict[str, Any]:
    driver = tmp_path / "driver.py"
    driver.write_text(_DRIVER)
    proc = subprocess.run(
        [sys.executable, str(driver), url, str(executors)],
        env=_spark_env(),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, (
        f"driver failed (rc={proc.returncode})\nstdout:\n{proc.stdout[-3000:]}\n"
        f"stderr:\n{proc.stderr[-6000:]}"
    )
    result: dict[str, Any] = json.loads(lines[-1][len("RESULT ") :])
    return result


@pytest.fixture(scope="module")
def cluster() -> Iterator[StandaloneCluster]:
    """A 2-worker cluster shared by the tests of this module (the last one kills a worker)."""
    t0 = time.monotonic()
    with StandaloneCluster(workers=2, cores=1, memory="1g", die_with_parent=True) as c:
        print(f"\ncluster ready in {time.monotonic() - t0:.1f} s {c.timings}")
        yield c
    assert not any(c.is_alive(d) for d in c.daemons)


def test_cluster_is_up(cluster: StandaloneCluster) -> None:
    status = cluster.master_status()
    assert status["status"] == "ALIVE"
    assert status["url"] == cluster.master_url
    assert status["aliveworkers"] == 2
    assert {w["port"] for w in status["workers"]} == {w.port for w in cluster.workers}
    assert len(set(cluster.pids)) == 3
    assert all(cluster.is_alive(d) for d in cluster.daemons)


def test_job_runs_on_two_executors(cluster: StandaloneCluster, tmp_path: Path) -> None:
    result = _run_driver(tmp_path, cluster.master_url, executors=2)
    print(
        "\nsession {session_s:.1f} s, executors registered {executors_s:.1f} s, "
        "sql job done {sql_s:.1f} s, rdd job done {rdd_s:.1f} s, stopped {stop_s:.1f} s".format(
            **result
        )
    )
    assert result["sum"] == 499500
    rows = result["rows"]
    assert sorted(r[0] for r in rows) == list(range(8))
    jvm_pids = {r[2] for r in rows}
    worker_pids = {r[3] for r in rows}
    # Two distinct executor JVMs ran tasks, one forked by each of our two workers.
    assert len(jvm_pids) == 2, rows
    assert worker_pids == {w.pid for w in cluster.workers}, rows
    # The application finished; the cluster is idle again with both workers alive.
    assert cluster.alive_workers() == 2


def test_kill_idle_worker(cluster: StandaloneCluster) -> None:
    victim = cluster.kill_worker(1)
    assert not cluster.is_alive(victim)
    assert cluster.is_alive(cluster.workers[0]) and cluster.is_alive(cluster.master)
    status = cluster.wait_for_alive_workers(1, timeout=90)
    assert status["aliveworkers"] == 1
    states = {w["port"]: w["state"] for w in status["workers"]}
    assert states[cluster.workers[0].port] == "ALIVE"
    assert states[victim.port] == "DEAD"


def test_stop_is_idempotent(tmp_path: Path) -> None:
    c = StandaloneCluster(workers=0, base_dir=tmp_path / "c")
    c.stop()  # never started: no-op
    assert not c.started


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root and unshare(1)")
def test_private_mounts_keep_a_venv_in_the_hidden_temporary_directory(tmp_path: Path) -> None:
    """A worker's private mounts over the temporary directory and over a checkout in it
    (nested: hidden already) hide the checkout's files but keep the executors' Python,
    a venv in that directory, and Spark: the command runs in the namespace."""
    import tempfile

    clone = tmp_path / "clone"
    (clone / "specs").mkdir(parents=True)
    (clone / "specs" / "spec.py").write_text("x")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    python = str(venv / "bin" / "python")
    c = StandaloneCluster(workers=0, base_dir=tmp_path / "c",
                          extra_env={"PYSPARK_PYTHON": python},
                          private_mounts=(tempfile.gettempdir(), str(clone)))
    probe = ("import json, os, sys; print(json.dumps([sys.prefix, os.path.exists(sys.argv[1]),"
             " os.path.isfile(sys.argv[2]), os.getcwd()]))")
    args = c.isolated([python, "-c", probe, str(clone / "specs" / "spec.py"),
                       str(find_spark_home() / "bin" / "spark-class")])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    prefix, clone_seen, spark_seen, cwd = json.loads(p.stdout)
    assert prefix == str(venv) and not clone_seen and spark_seen
    assert not cwd.startswith(str(tmp_path))
    assert (clone / "specs" / "spec.py").exists()  # hidden in the namespace only


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        cwd=cwd,
        env=_spark_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_start_status_stop(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    started = _cli("start", "--workers", "1", "--dir", str(state_dir), cwd=tmp_path)
    try:
        assert started.returncode == 0, started.stderr[-4000:]
        url = started.stdout.strip().splitlines()[-1]
        assert url.startswith("spark://127.0.0.1:")
        state = json.loads((state_dir / "cluster.json").read_text())
        assert state["master_url"] == url
        # The daemons outlived the `start` process.
        attached = StandaloneCluster.attach(state_dir / "cluster.json")
        assert len(attached.pids) == 2
        assert all(attached.is_alive(d) for d in attached.daemons)
        assert attached.alive_workers() == 1

        status = _cli("status", "--dir", str(state_dir), cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        assert url in status.stdout
    finally:
        stopped = _cli("stop", "--dir", str(state_dir), cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert not any(attached.is_alive(d) for d in attached.daemons)
    assert _cli("status", "--dir", str(state_dir), cwd=tmp_path).returncode != 0
