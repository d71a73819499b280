"""The KRaft lease spec on Spark: the local explorer's result, field by field."""

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


def test_restart_config_and_refencing_counterexample_agree(spark: Any) -> None:
    """A passing check with a restart, 001's exit and 000's recovery (symmetry, hashed
    fingerprints), and the re-fencing counterexample under Sem=K44: same counts, levels
    and trace."""
    from spark_explore import SparkExplorer

    cls = load_spec_class("specs/kraft_lease.py:KRaftLease")
    for consts, status in ((dict(MaxLog=2, MaxRestarts=1, RejectExits=True,
                                 RecoveryOnRegister=True), "ok"), (dict(Sem="K44"), "violation")):
        spec = cls(**consts)
        a = Explorer(spec).run().to_json()
        b = SparkExplorer(spec, spark=spark, partitions=3).run().to_json()
        assert b["backend"] == "spark" and a["status"] == status
        for key in COMPARED:
            assert b[key] == a[key], f"{consts} {key}: spark {b[key]!r} != local {a[key]!r}"
        assert [(lv["depth"], lv["new"], lv["generated"]) for lv in b["levels"]] == \
            [(lv["depth"], lv["new"], lv["generated"]) for lv in a["levels"]]
