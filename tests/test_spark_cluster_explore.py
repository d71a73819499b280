"""The Spark backend on a real standalone cluster (one master, two 1-core workers).

As root (CI), each worker runs in its own mount namespace with private, empty ``/tmp``
and ``/work`` and a working directory of its own (``unshare --mount``): no file of
the driver (the project, its specs, the editable install of ``modelcheck``, the
driver's temporary files) is visible to the executors, as on a real cluster. The
first test proves that; the others show that the code travels with the job and the
blocks through Spark (the rdd engine, chosen for a cluster master):

* ``spark-submit`` of KRaft L1 gives the local explorer's report field by field;
* the driver killed with SIGKILL a few levels in, then ``--resume`` from a
  ``file://`` checkpoint URI (written by the driver through Hadoop), gives it too;
* a worker killed (with its executor) a few levels in: Spark recomputes what was
  lost and the run still gives it (this test runs last: it leaves one worker).

The drivers run in child processes (``spark-submit`` and ``modelcheck spark``), so no
SparkContext is shared with other test modules of this pytest process. Every level
runs on the executors (``MODELCHECK_SPARK_DRIVER_THRESHOLD=0``).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelcheck.explorer import Explorer
from modelcheck.loader import load_spec_class

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,  # ~4 minutes: a cluster, four drivers; still run by .ci/run
    pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark missing"),
    pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                       reason="java missing"),
]

ROOT = Path(__file__).resolve().parent.parent
L1 = {"N": 2, "P": 1, "MaxLog": 4, "MaxRestarts": 1}
COMPARED = ("status", "distinct_states", "generated_states", "depth", "coverage",
            "violation", "fingerprint", "collision_probability", "state_bits", "checked",
            "reason")
EXECUTOR_CONF = ["--conf", "spark.executor.memory=512m", "--conf", "spark.cores.max=2",
                 "--conf", "spark.driver.host=127.0.0.1",
                 "--conf", "spark.driver.bindAddress=127.0.0.1",
                 # Executors on one host read each other's shuffle files from disk; ours
                 # share the address but not the file system (private /tmp): fetch them.
                 "--conf", "spark.shuffle.readHostLocalDisk=false"]




def _private_dirs() -> tuple[str, ...]:
    """Directories hidden from the workers: the driver's temporary files, the project
    (with ``/work``, where this machine keeps its checkouts) and the source of an
    editable install of ``modelcheck``. The cluster keeps what a worker needs visible
    (Spark, this Python and its venv) even when it lies in one of them."""
    top = Path("/work") if ROOT.is_relative_to("/work") else ROOT
    hidden = ["/tmp", tempfile.gettempdir(), str(top)]
    try:
        url = json.loads(importlib.metadata.distribution("modelcheck")
                         .read_text("direct_url.json") or "{}").get("url", "")
    except importlib.metadata.PackageNotFoundError:
        url = ""
    if url.startswith("file://"):
        hidden.append(url[len("file://"):])
    return tuple(hidden)


PRIVATE = _private_dirs()
ISOLATED = os.geteuid() == 0 and shutil.which("unshare") is not None


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from scripts.spark_cluster import StandaloneCluster

    private = PRIVATE if ISOLATED else ()
    with StandaloneCluster(workers=2, cores=1, memory="1g", private_mounts=private,
                           die_with_parent=True) as c:
        yield c


PROBE = """
import importlib.util, json, os, sys
from pyspark.sql import SparkSession

spark = (SparkSession.builder.master(sys.argv[1]).config("spark.executor.memory", "512m")
         .config("spark.cores.max", "2").config("spark.driver.host", "127.0.0.1")
         .config("spark.ui.enabled", "false").getOrCreate())
paths = json.loads(sys.argv[2])

def probe(i):
    return [os.getcwd(), [os.path.exists(p) for p in paths],
            importlib.util.find_spec("modelcheck") is not None]

print("PROBE " + json.dumps(spark.sparkContext.parallelize(range(4), 4).map(probe).collect()))
spark.stop()
"""


@pytest.mark.skipif(not ISOLATED, reason="needs root and unshare(1)")
def test_a_clone_and_a_venv_in_the_temporary_directory(tmp_path: Path) -> None:
    """The checkout copied into the system's temporary directory and run by a venv
    there: the isolation test below passes from it. (The workers' private mount over
    the temporary directory used to hide the venv's Python and fail on the checkout's
    own, nested, mount point.) Runs before the module's cluster starts."""
    clone = tmp_path / "clone"
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, clone / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    assert (clone / "specs").is_relative_to(tempfile.gettempdir())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYSPARK"))}
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pytest", "-q",
                        "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestWarning",
                        "tests/test_spark_cluster_explore.py::"
                        "test_workers_see_no_file_of_the_driver"],
                       cwd=clone, env=env, capture_output=True, text=True, timeout=600,
                       check=False)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert "1 passed" in p.stdout, p.stdout[-2000:]


@pytest.mark.skipif(not ISOLATED, reason="needs root and unshare(1)")
def test_workers_see_no_file_of_the_driver(cluster: Any, tmp_path: Path) -> None:
    marker = tmp_path / "driver-only"
    marker.write_text("x")
    driver = tmp_path / "probe.py"
    driver.write_text(PROBE)
    seen = [str(marker), str(ROOT / "specs" / "kraft_broker.py"), str(driver)]
    p = subprocess.run([sys.executable, str(driver), cluster.master_url, json.dumps(seen)],
                       capture_output=True, text=True, timeout=300, check=False)
    line = next((x for x in p.stdout.splitlines() if x.startswith("PROBE ")), None)
    assert line is not None, p.stderr[-3000:]
    for cwd, exists, has_modelcheck in json.loads(line[len("PROBE "):]):
        assert exists == [False, False, False]
        assert not has_modelcheck  # executors import the shipped zip, nothing installed
        assert not cwd.startswith(str(tmp_path))


def local_l1() -> dict[str, Any]:
    spec = load_spec_class("specs/kraft_broker.py:KRaftBroker")(**L1)
    return Explorer(spec).run().to_json()


def const_args() -> list[str]:
    out = ["specs/kraft_broker.py"]
    for k, v in L1.items():
        out += ["--const", f"{k}={v}"]
    return out


def assert_same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["backend"] == "spark"
    for key in COMPARED:
        assert got[key] == want[key], key
    assert ([(lv["depth"], lv["frontier"], lv["new"], lv["generated"]) for lv in got["levels"]]
            == [(lv["depth"], lv["frontier"], lv["new"], lv["generated"])
                for lv in want["levels"]])


def test_spark_submit_matches_local(cluster: Any) -> None:
    from scripts.spark_cluster import find_spark_home

    submit = str(find_spark_home() / "bin" / "spark-submit")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               MODELCHECK_SPARK_DRIVER_THRESHOLD="0")  # every level on the executors
    p = subprocess.run(
        [submit, "--master", cluster.master_url, *EXECUTOR_CONF,
         str(ROOT / "spark_explore" / "submit.py"), *const_args(), "--format", "json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    # spark-submit merges the Python driver's stderr into its stdout; submit.py routes it
    # to the JVM's stderr: progress lines (and warnings) there, the report alone on stdout.
    assert p.stdout.startswith("{"), f"stdout is not the report alone:\n{p.stdout[:2000]}"
    assert re.search(r" level +0 ", p.stderr), p.stderr[-3000:]
    assert_same(json.loads(p.stdout), local_l1())


def test_driver_killed_then_resumed_from_a_file_uri(cluster: Any, tmp_path: Path) -> None:
    """SIGKILL the driver once level 5 is committed; --resume from the same file://
    checkpoint URI gives the local result."""
    import psutil

    ck = (tmp_path / "ck").as_uri()
    env = dict(os.environ, PYTHONUNBUFFERED="1", MODELCHECK_SPARK_DRIVER_THRESHOLD="0")
    args = [sys.executable, "-m", "modelcheck", "spark", *const_args(), "--master",
            cluster.master_url, *EXECUTOR_CONF, "--checkpoint-dir", ck, "--format", "json"]
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    manifest = tmp_path / "ck" / "manifest.json"
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if json.loads(manifest.read_text())["level"] >= 5:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        children = psutil.Process(proc.pid).children(recursive=True)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(children, timeout=30)
        for c in alive:
            c.kill()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert json.loads(manifest.read_text())["level"] >= 5
    cluster.wait_for_alive_workers(2, timeout=60)
    resumed = subprocess.run([*args, "--resume"], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=900, check=False)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert re.search(r"^resuming at level \d+", resumed.stderr, re.M), resumed.stderr[-3000:]
    assert_same(json.loads(resumed.stdout), local_l1())


def test_lost_worker_still_same_result(cluster: Any) -> None:
    """Kill worker 1 (and its executor) once level 3 is done; the run still matches."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", MODELCHECK_SPARK_DRIVER_THRESHOLD="0")
    proc = subprocess.Popen(
        [sys.executable, "-m", "modelcheck", "spark", *const_args(),
         "--master", cluster.master_url, *EXECUTOR_CONF, "--format", "json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = threading.Event()
    lines: list[str] = []

    def watch() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            m = re.search(r" level +(\d+) ", line)
            if not killed.is_set() and m and int(m.group(1)) >= 3:
                cluster.kill_worker(1)
                killed.set()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        assert proc.stdout is not None
        out = proc.stdout.read()  # stderr belongs to the watcher thread
        proc.wait(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
    t.join(timeout=30)
    assert killed.is_set(), "".join(lines)[-3000:]
    assert proc.returncode == 0, "".join(lines)[-3000:]
    cluster.wait_for_alive_workers(1, timeout=60)
    assert_same(json.loads(out), local_l1())
