"""Levels run in the driver while the executors are still warming up (the placement
rule of :meth:`modelcheck.shards.engine.BucketEngine.on_driver`; needs no Spark)."""

from __future__ import annotations

import threading


class _Engine:
    """The attributes :meth:`ShardEngine.on_driver` reads."""

    def __init__(self, threshold: int, candidates: int | None, distinct: int,
                 warming: threading.Thread | None) -> None:
        self.driver_threshold = threshold
        self._candidates = candidates
        self._distinct = distinct
        self._warming = warming


def test_levels_stay_on_the_driver_while_executors_warm_up() -> None:
    from modelcheck.shards.engine import DRIVER_VISITED_FACTOR, WARMING_FACTOR
    from spark_explore.shard_engine import ShardEngine

    release = threading.Event()
    warming = threading.Thread(target=release.wait, daemon=True)
    warming.start()
    done = threading.Thread(target=lambda: None)
    done.start()
    done.join()

    class Engine(_Engine):
        on_driver = ShardEngine.on_driver
        warming = ShardEngine.warming

    def on_driver(candidates: int | None, distinct: int = 0,
                  warm: threading.Thread | None = None, threshold: int = 100) -> bool:
        return Engine(threshold, candidates, distinct, warm).on_driver()

    for warm in (None, done, warming):
        assert on_driver(100, warm=warm)
        assert not on_driver(None, warm=warm)  # unknown (resumed): executors
        assert not on_driver(100, distinct=DRIVER_VISITED_FACTOR * 100 + 1, warm=warm)
        assert not on_driver(100, warm=warm, threshold=0)  # 0: always executors
    big = WARMING_FACTOR * 100
    assert on_driver(big, warm=warming) and not on_driver(big + 1, warm=warming)
    assert not on_driver(101, warm=done) and not on_driver(101, warm=None)
    release.set()
    warming.join()
    assert not on_driver(101, warm=warming)
