"""The public API (``modelcheck/__init__.py``): what spec authors and tool builders use,
and nothing of the engine's internals."""

from __future__ import annotations

from pathlib import Path

import modelcheck
from modelcheck import (
    CheckConfig,
    Const,
    Int,
    Spec,
    Trace,
    action,
    check,
    dumps_trace_json,
    invariant,
    load_trace,
)


class Counter(Spec):
    Max = Const(3)
    x = Int(0, Max)

    @action
    def Inc(self, s, t):  # type: ignore[no-untyped-def]
        t.x = s.x + 1
        return s.x < self.Max

    @invariant
    def Small(self, s):  # type: ignore[no-untyped-def]
        return s.x < 3


def test_exports_the_spec_api_check_and_traces_not_the_engine() -> None:
    public = set(modelcheck.__all__)
    for name in ("Spec", "Int", "action", "invariant", "constraint", "check", "CheckConfig",
                 "Result", "Violation", "TraceStep", "Trace", "load_trace", "loads_trace"):
        assert name in public, name
        assert getattr(modelcheck, name) is not None
    for internal in ("Kernel", "Expansion", "Layout", "fingerprint64", "rebuild_trace"):
        assert internal not in public, internal
        assert not hasattr(modelcheck, internal), internal


def test_check_with_a_config_returns_the_result_and_records_the_config(tmp_path: Path) -> None:
    r = check(Counter(), CheckConfig(invariants=(), check_deadlock=False))
    assert (r.status, r.distinct_states, r.depth) == ("ok", 4, 3)
    assert r.config["invariants"] == []
    r = check(Counter(), max_depth=1, invariants=["Small"])
    assert (r.status, r.distinct_states) == ("incomplete", 2)
    assert r.config["max_depth"] == 1
    r = check(Counter())
    assert r.violation is not None and r.violation.property == "Small"
    # the trace API writes a counterexample and reads it back
    path = tmp_path / "trace.json"
    path.write_text(dumps_trace_json(Trace.from_violation(Counter(), r.violation)))
    t = load_trace(path)
    assert [s.state["x"] for s in t.steps] == [0, 1, 2, 3]
    assert (t.property, t.kind, t.spec) == ("Small", "invariant", "Counter")
