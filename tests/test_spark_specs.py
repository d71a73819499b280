"""The seed-system specs on Spark: the local explorer's result, field by field.

Each spec is checked in a passing configuration and in one with a counterexample
(symmetry and hashed fingerprints among them): same counts, levels and trace. One
local[2] SparkSession serves the module.
"""

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

#: (spec target, constants, expected local status)
RUNS = [
    # the ZooKeeper-era controller: the default check and the zombie counterexample of
    # the epoch-only configuration
    ("specs/zk_controller.py:ZkController", {}, "ok"),
    ("specs/zk_controller.py:ZkControllerEpochOnlyFencing", {}, "violation"),
    # metadata propagation: two loaders, and the aborted-delta counterexample
    ("specs/kraft_metadata.py:KRaftMetadata", dict(N=2, MaxLog=3, K=1), "ok"),
    ("specs/kraft_metadata.py:KRaftMetadataBugAbortPublishesDelta", {}, "violation"),
    # leases: a restart with 001's exit and 000's recovery, and the re-fencing
    # counterexample under Sem=K44
    ("specs/kraft_lease.py:KRaftLease",
     dict(MaxLog=2, MaxRestarts=1, RejectExits=True, RecoveryOnRegister=True), "ok"),
    ("specs/kraft_lease.py:KRaftLease", dict(Sem="K44"), "violation"),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from spark_explore.session import get_session

    session, created = get_session("local[2]")
    yield session
    if created:
        session.stop()


@pytest.mark.parametrize("target, consts, status", RUNS,
                         ids=[f"{t.rsplit(':', 1)[1]}-{i}" for i, (t, _, _) in enumerate(RUNS)])
def test_spec_agrees_with_the_local_explorer(spark: Any, target: str, consts: dict[str, Any],
                                             status: str) -> None:
    from spark_explore import SparkExplorer

    spec = load_spec_class(target)(**consts)
    a = Explorer(spec).run().to_json()
    # Spark keys states as the local explorer does (exact up to two words)
    b = SparkExplorer(spec, spark=spark, partitions=3).run().to_json()
    assert b["backend"] == "spark" and a["status"] == status
    assert b["fingerprint"] == ("exact" if spec.layout.n_words <= 2 else "hash128")
    for key in COMPARED:
        assert b[key] == a[key], f"{target} {consts} {key}: spark {b[key]!r} != local {a[key]!r}"
    assert [(lv["depth"], lv["new"], lv["generated"]) for lv in b["levels"]] == \
        [(lv["depth"], lv["new"], lv["generated"]) for lv in a["levels"]]
