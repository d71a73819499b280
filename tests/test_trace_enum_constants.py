"""An enum constant is recorded in a trace by its member's name, shown so, and bound
back to the spec by that name; traces that recorded its number still replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from modelcheck.cli import cli
from modelcheck.loader import load_spec_class

LEASE = "specs/kraft_lease.py"


@pytest.fixture(scope="module")
def k44_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """KRaftLease under Sem=K44: NoStaleRefence fails (see the spec's docstring)."""
    path = tmp_path_factory.mktemp("enum") / "k44.itf.json"
    r = CliRunner().invoke(cli, ["check", LEASE, "--const", "Sem=K44", "--trace-out", str(path)])
    assert r.exit_code == 1, r.output
    return path


def test_recorded_and_shown_by_name(k44_trace: Path) -> None:
    meta = json.loads(k44_trace.read_text())["#meta"]
    assert meta["constants"]["Sem"] == "K44"
    r = CliRunner().invoke(cli, ["trace", "show", str(k44_trace)])
    assert r.exit_code == 0, r.output
    header = r.stdout.splitlines()[0]
    assert "Sem=K44" in header and "Sem=0" not in header and "Sem=1" not in header


def test_replays_by_name_and_by_number(k44_trace: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["trace", "replay", LEASE, str(k44_trace)])
    assert r.exit_code == 0, r.output
    assert "Sem=K44" in r.stdout
    # the number a trace written before names were recorded holds
    k44 = load_spec_class(LEASE)._consts["Sem"].default.__class__["K44"]
    doc = json.loads(k44_trace.read_text())
    doc["#meta"]["constants"]["Sem"] = int(k44)
    old = tmp_path / "old.itf.json"
    old.write_text(json.dumps(doc))
    r = CliRunner().invoke(cli, ["trace", "replay", LEASE, str(old)])
    assert r.exit_code == 0, r.output
    # under the other member the same trace is not a behaviour (the oracle: the constant
    # really reaches the spec)
    doc["#meta"]["constants"]["Sem"] = "KIP631"
    other = tmp_path / "kip631.itf.json"
    other.write_text(json.dumps(doc))
    r = CliRunner().invoke(cli, ["trace", "replay", LEASE, str(other)])
    assert r.exit_code != 0


def test_unknown_member_is_one_paragraph(k44_trace: Path, tmp_path: Path) -> None:
    doc = json.loads(k44_trace.read_text())
    doc["#meta"]["constants"]["Sem"] = "Bogus"
    bad = tmp_path / "bad.itf.json"
    bad.write_text(json.dumps(doc))
    r = CliRunner().invoke(cli, ["trace", "replay", LEASE, str(bad)])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert f"{bad} records constant Sem='Bogus'" in r.stderr
    assert "KIP631" in r.stderr and "K44" in r.stderr


def test_run_record_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run record's result.json (and ``--format json``) names the member as the
    traces do, and ``explore --run`` binds it back: the spec it explores has Sem=K44,
    not the default member."""
    import modelcheck.cli_explore as ce

    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["check", LEASE, "--const", "Sem=K44", "--out", str(out),
                                 "--format", "json"])
    assert r.exit_code == 1, r.output
    assert json.loads((out / "result.json").read_text())["constants"]["Sem"] == "K44"
    assert json.loads(r.stdout)["constants"]["Sem"] == "K44"

    served: list = []

    class NoServe:
        def __init__(self, session: object, host: str, port: int) -> None:
            served.append(session)
            self.url = f"http://{host}:{port}/"

        def serve(self) -> None:
            pass

    monkeypatch.setattr(ce, "ExploreServer", NoServe)
    r = CliRunner().invoke(cli, ["explore", LEASE, "--run", str(out)])
    assert r.exit_code == 0, r.output
    sem = served[-1].spec.constants["Sem"]  # type: ignore[attr-defined]
    default = load_spec_class(LEASE)._consts["Sem"].default
    assert sem.name == "K44" and sem != default
