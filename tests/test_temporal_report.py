"""``modelcheck check``'s text report lists every temporal property it checked, with its
verdict and the fairness it was checked under, as ``--format json`` does."""

from __future__ import annotations

import json
import re

from modelcheck import Bool, Int, Spec, action, eventually, invariant, leads_to
from modelcheck.cli import cli
from modelcheck.liveness import check_liveness
from modelcheck.report import render_text


class Flip(Spec):
    """``Toggle`` flips ``b``; ``Set`` sets ``n`` when ``b`` holds."""

    check_deadlock = False
    fairness = {"Set": "strong"}
    b = Bool()
    n = Int(0, 1)

    @action(fair="weak")
    def Toggle(self, s, t):
        t.b = ~s.b
        return s.n == 0

    @action
    def Set(self, s, t):
        t.n = 1
        return s.b

    @eventually(fairness=("Toggle",))
    def SetWeak(self, s):
        return s.n == 1

    @eventually
    def SetStrong(self, s):
        return s.n == 1

    @leads_to(fairness=())
    def Unfair(self, s):
        return s.b, s.n == 1


class FlipBroken(Flip):
    """An invariant fails first: the temporal properties are not checked."""

    @invariant
    def NeverB(self, s):
        return ~s.b


def _table(text: str) -> dict[str, tuple[str, str, str]]:
    """The report's temporal property lines: name -> (formula, verdict, fairness); a
    line without ``under ...`` is checked under the ``Fairness`` line's conditions."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("Temporal properties"))
    out = {}
    rows = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            label, _, common = line.partition(": ")
            assert label in ("Fairness", "Fairness of the others"), line
            break
        # columns are two spaces apart; a formula or a verdict may hold one space
        rows.append(re.split(r" {2,}", line.strip()))
    for name, formula, verdict, *fair in rows:
        assert not fair or fair[0].startswith("under ")
        out[name] = (formula, verdict, fair[0][len("under "):] if fair else common)
    marked = sum(1 for r in rows if len(r) == 4)
    assert (label == "Fairness") == (marked == 0)  # listed once when they all share it
    return out


def test_text_lists_every_temporal_property_with_verdict_and_fairness() -> None:
    r = check_liveness(Flip())
    text = render_text(r)
    assert "Temporal properties:" in text.splitlines()
    assert _table(text) == {
        "SetWeak": ("<>P", "violated", "WF(Toggle)"),
        "SetStrong": ("<>P", "holds", "WF(Toggle), SF(Set)"),
        "Unfair": ("P ~> Q", "violated", "no fairness"),
    }
    # the same as the JSON
    live = r.to_json()["liveness"]
    assert live["properties"] == {"SetWeak": "violated", "SetStrong": "holds",
                                  "Unfair": "violated"}
    assert live["formulas"] == {"SetWeak": "<>P", "SetStrong": "<>P", "Unfair": "P ~> Q"}
    assert live["fairness"] == {"SetWeak": ["WF(Toggle)"],
                                "SetStrong": ["WF(Toggle)", "SF(Set)"], "Unfair": []}


def test_not_checked_after_a_safety_violation() -> None:
    r = check_liveness(FlipBroken())
    assert r.status == "violation" and r.violation.property == "NeverB"
    text = render_text(r)
    assert ("Temporal properties (not checked: the exploration ended with status "
            "violation):") in text.splitlines()
    assert {n: v for n, (_, v, _) in _table(text).items()} == dict.fromkeys(
        ("SetWeak", "SetStrong", "Unfair"), "not checked")
    assert r.liveness["fairness"]["SetStrong"] == ["WF(Toggle)", "SF(Set)"]


def test_no_temporal_section_without_temporal_properties() -> None:
    r = check_liveness(FlipBroken(), invariants=["NeverB"])
    assert "Temporal properties" not in render_text(r)


def test_cli_text_and_json_agree(runner) -> None:
    spec = "examples/tla/live_hour_clock.py"
    text = runner.invoke(cli, ["check", spec, "-q"])
    js = runner.invoke(cli, ["check", spec, "-q", "--format", "json"])
    assert text.exit_code == js.exit_code == 0, text.output
    live = json.loads(js.stdout)["liveness"]
    table = _table(text.output)
    assert list(table) == list(live["properties"])  # every one, in declaration order
    for name, (formula, verdict, fair) in table.items():
        assert (formula, verdict, fair) == (live["formulas"][name], live["properties"][name],
                                            ", ".join(live["fairness"][name]))
    for n in range(1, 13):  # AllTimes: \A n \in 1..12: []<>(hr = n), under WF(HCnxt)
        assert table[f"AllTimes{n}"] == ("[]<>P", "holds", "WF(HCnxt)")
