"""The ZooKeeper-era controller spec on Spark: the local explorer's result, field by field."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from modelcheck.explorer import Explorer
from modelcheck.loader import load_spec_class

HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and (
    shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME")))

pytestmark = [pytest.mark.spark,
              pytest.mark.skipif(not HAVE_SPARK, reason="needs pyspark and Java")]

COMPARED = ("status", "distinct_states", "generated_states", "depth", "coverage",
            "violation", "fingerprint", "collision_probability", "state_bits", "checked",
            "reason", "symmetry")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from spark_explore.session import get_session

    session, created = get_session("local[2]")
    yield session
    if created:
        session.stop()


def test_default_and_zombie_counterexample_agree(spark: Any) -> None:
    """The passing default check (symmetry, hashed fingerprints) and the zombie
    counterexample of the epoch-only configuration: same counts, levels and trace."""
    from spark_explore import SparkExplorer

    for cls, status in (("ZkController", "ok"), ("ZkControllerEpochOnlyFencing", "violation")):
        spec = load_spec_class(f"specs/zk_controller.py:{cls}")()
        a = Explorer(spec).run().to_json()
        b = SparkExplorer(spec, spark=spark, partitions=3).run().to_json()
        assert b["backend"] == "spark" and a["status"] == status
        for key in COMPARED:
            assert b[key] == a[key], f"{cls} {key}: spark {b[key]!r} != local {a[key]!r}"
        assert [(lv["depth"], lv["new"], lv["generated"]) for lv in b["levels"]] == \
            [(lv["depth"], lv["new"], lv["generated"]) for lv in a["levels"]]
