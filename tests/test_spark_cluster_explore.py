"""The Spark backend on a real standalone cluster (one master, two 1-core workers).

The drivers run in child processes (``spark-submit`` and ``modelcheck spark``), so no
SparkContext is shared with other test modules of this pytest process. One test
submits KRaft L1 and compares the report with the local explorer's; the other kills
a worker (with its executor) a few levels into the run and shows the run still
completes with the same result: Spark reschedules the lost tasks and recomputes the
lost shuffle output from the level files in the (shared) run directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from modelcheck.explorer import Explorer
from modelcheck.loader import load_spec_class

pytestmark = [
    pytest.mark.spark,
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
                 "--conf", "spark.driver.bindAddress=127.0.0.1"]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from scripts.spark_cluster import StandaloneCluster

    with StandaloneCluster(workers=2, cores=1, memory="1g") as c:
        yield c


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
