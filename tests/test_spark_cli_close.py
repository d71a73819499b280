"""The Spark command lets go of what a run holds however it ends: the temporal
properties' :class:`~modelcheck.liveness.ShardedLiveness` is closed (a context manager:
its run detached) and the temporary run directory the explorer prepares before Spark
starts is removed, also when the run raises before it began (it used to stay behind,
``modelcheck-spark-run-*`` in the temporary directory). No Spark session is started:
the explorer's run is replaced by one that raises."""

from __future__ import annotations

import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from modelcheck.cli_options import SparkOptions
from modelcheck.config import CheckConfig
from modelcheck.liveness import ShardedLiveness

SPEC = textwrap.dedent('''
    from modelcheck import Int, Spec, action, eventually


    class Counter(Spec):
        x = Int(0, 3)

        def init_states(self):
            yield {"x": 0}

        @action(fair="weak")
        def Inc(self, s, t):
            g = s.x < 3
            t.x = s.x + 1
            return g

        @eventually
        def Done(self, s):
            return s.x == 3
''')


class _Run:
    after: Any = None
    on_commit: Any = None


def test_sharded_liveness_is_closed_when_the_block_raises(tmp_path: Path) -> None:
    spec_file = tmp_path / "counter.py"
    spec_file.write_text(SPEC)
    from modelcheck.cli import bind_spec

    bound = bind_spec(str(spec_file), ())
    run = _Run()
    with pytest.raises(RuntimeError), ShardedLiveness(bound, CheckConfig()) as live:
        live.attach(run)
        assert run.after == live.decide
        assert run.on_commit == live._committed  # the graph read while the run goes on
        raise RuntimeError("the run failed")
    assert run.after is None and run.on_commit is None and live.run is None
    assert live.reader is None
    live.close()  # idempotent


def test_a_spark_run_that_raises_leaves_no_run_directory(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("pyspark")
    from spark_explore import cli as spark_cli
    from spark_explore.driver import SparkExplorer

    spec_file = tmp_path / "counter.py"
    spec_file.write_text(SPEC)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    seen: dict[str, Any] = {}

    def run(self: Any) -> Any:
        seen["rundir"] = Path(self.rundir.path)
        assert seen["rundir"].is_dir()  # prepared by precheck, before Spark starts
        raise KeyboardInterrupt  # (Ctrl-C while the session starts)

    closed: list[ShardedLiveness] = []
    real_close = ShardedLiveness.close

    def close(self: ShardedLiveness) -> None:
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(SparkExplorer, "run", run)
    monkeypatch.setattr(ShardedLiveness, "close", close)
    with pytest.raises(SystemExit) as exit_info:
        spark_cli.run_check(str(spec_file), (), CheckConfig(), SparkOptions(), "text", True,
                            None, None)
    assert exit_info.value.code == 3
    assert seen["rundir"].parent == temp and not seen["rundir"].exists()
    assert list(temp.iterdir()) == []
    assert len(closed) == 1 and closed[0].run is None
