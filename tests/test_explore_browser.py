"""The explorer's page, driven in headless Chromium (Debian's ``chromium`` through
Playwright; see tests/browser.py): a bug variant's counterexample stepped through
with the keyboard, the highlighted values checked against the cells that differ,
a branch into another action, an expression column, the path saved and replayed by
``modelcheck trace replay``; a lasso's loop marks; the run's coverage and levels;
the graph around a state."""

from __future__ import annotations

import os

import pytest
from browser import chromium, missing
from explorehelp import (
    BUG,
    LASSO,
    SMALL,
    SMALL_CONSTS,
    changed_leaves,
    check_run,
    cli_run,
    served,
    session_for,
)

pytestmark = pytest.mark.skipif(missing() is not None and not os.environ.get("CI"),
                                reason=str(missing()))


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900},
                                  accept_downloads=True)
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.set_default_timeout(30_000)
    yield p
    context.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def bug_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    return check_run(BUG, str(tmp_path_factory.mktemp("explore") / "run"))


def _current(page) -> int:
    return int(page.get_attribute("#timeline-body tr.current", "data-step"))


def _highlighted(page) -> set[str]:
    return set(page.eval_on_selector_all("#state-body .leaf.changed",
                                         "els => els.map(e => e.dataset.path)"))


def _column(page, expr: str) -> list[str]:
    page.wait_for_function(
        "() => [...document.querySelectorAll('#timeline-body td.expr-value')]"
        ".every(td => td.textContent !== '…')")
    return page.eval_on_selector_all("#timeline-body td.expr-value",
                                     "tds => tds.map(td => td.textContent)")


def test_step_branch_evaluate_save_and_replay(page, bug_run: str, tmp_path) -> None:
    session = session_for(BUG, run=bug_run)
    layout = session.spec.layout
    cells = session.trace_cells
    with served(session) as url:
        page.goto(url)
        page.wait_for_selector("#timeline-body tr[data-step='6']")
        assert "violates invariant FencedNotLeader" in page.text_content("#violation-text")
        assert _current(page) == 0 and _highlighted(page) == set()
        # step through the trace with the keyboard: the highlighted values are those
        # whose cells differ from the previous state's
        for k in range(1, len(cells)):
            page.keyboard.press("ArrowRight")
            page.wait_for_selector(f"#timeline-body tr.current[data-step='{k}']")
            assert _highlighted(page) == changed_leaves(layout, cells[k - 1], cells[k])
            assert page.text_content("#state-title").startswith(f"State {k + 1}: ")
        assert "FencedNotLeader" in page.text_content("#state-alerts")
        page.keyboard.press("End")
        assert _current(page) == 6
        page.keyboard.press("k")
        page.keyboard.press("ArrowLeft")
        assert _current(page) == 4
        # branch off at state 5 into an action the trace did not take
        taken = "#successors li.taken button.succ"
        assert page.get_attribute(taken, "data-label") == "Heartbeat(b=1, nl=0)"
        page.click("#successors button.succ[data-label='Crash(b=1)']")
        page.wait_for_selector("#timeline-body tr.current[data-step='5']")
        assert page.locator("#timeline-body tr").count() == 6
        assert "branch" in page.text_content("#timeline-body tr[data-step='5']")
        assert _highlighted(page) == {"bstate[1]", "bEpoch[1]"}  # Crash resets the broker
        page.wait_for_selector("#successors button.succ")
        page.click("#successors button.succ >> nth=0")
        page.wait_for_selector("#timeline-body tr.current[data-step='6']")
        labels = page.eval_on_selector_all("#timeline-body td.label .action",
                                           "els => els.map(e => e.textContent)")
        # an expression column over the path
        expr = "logEnd * 10 + bEpoch[1]"
        page.fill("#expr", expr)
        page.press("#expr", "Enter")
        values = _column(page, expr)
        assert len(values) == 7
        # save the path; `trace replay` accepts it and `trace eval` agrees with the column
        with page.expect_download() as dl:
            page.click("#save")
        saved = str(tmp_path / dl.value.suggested_filename)
        dl.value.save_as(saved)
        page.wait_for_function("() => document.getElementById('status').textContent"
                               ".includes('a behaviour of')")
        out = cli_run("trace", "replay", BUG, saved)
        assert out.exit_code == 0, out.output
        assert "trace of 7 states is a behaviour of KRaftLifecycleBugFenceKeepsLeader" \
            in out.output
        out = cli_run("trace", "eval", saved, expr)
        assert out.exit_code == 0, out.output
        assert values == [line.split("): ", 1)[1] for line in out.output.splitlines()]
        assert [line.split(" (", 1)[1].split("): ")[0] for line in out.output.splitlines()
                ][1:] == labels[1:]
        # a bad expression: a message, and the page goes on
        page.fill("#expr", "ofset[1]")
        page.press("#expr", "Enter")
        page.wait_for_selector("#timeline-head th.expr.error")
        assert "unknown name 'ofset'" in page.text_content("#status")
        page.click("#reset")
        page.wait_for_selector("#timeline-body tr[data-step='6']")
        assert "branch" not in page.text_content("#timeline-body")


def test_lasso_run_results_and_graph(page, bug_run: str, tmp_path) -> None:
    run = check_run(LASSO, str(tmp_path / "lasso"))
    with served(session_for(LASSO, run=run)) as url:
        page.goto(url)
        page.wait_for_selector("#timeline-body tr[data-step='2']")
        assert "loop start" in page.text_content("#timeline-body tr[data-step='0']")
        assert "= state 1" in page.text_content("#timeline-body tr[data-step='2']")
        assert "the loop from state 1 repeats forever" in page.text_content("#loop-text")
    session = session_for(BUG, run=bug_run)
    with served(session) as url:
        page.goto(url)
        page.click("#tabs button[data-view='run']")
        page.wait_for_selector("#coverage-body tr")
        run_doc = session.run.summary
        never = page.eval_on_selector_all(
            "#coverage-body tr.never td:first-child", "tds => tds.map(td => td.textContent)")
        assert never == [c["action"] for c in run_doc["coverage"] if c["fired"] == 0]
        assert page.locator("#levels-chart rect.bar.new").count() == len(run_doc["levels"])
        assert "violation" in page.text_content("#run-summary")
    small = session_for(SMALL, consts=SMALL_CONSTS)
    with served(small) as url:
        page.goto(url)
        page.wait_for_selector("#successors button.succ")
        page.click("#tabs button[data-view='graph']")
        page.wait_for_selector("svg.graph g.node.current")
        assert "of 207 reachable states" in page.text_content("#graph-info")
        succ = {tuple(c) for _, c in small.kernel.successors(small.kernel.initial_states()[0])}
        assert page.locator("svg.graph g.node[data-distance='1']").count() == len(succ)
        page.click("svg.graph g.node[data-distance='1'] >> nth=0")
        page.wait_for_selector("svg.graph g.node[data-distance='-1']")
        page.click("#tabs button[data-view='explore']")
        assert page.locator("#timeline-body tr").count() == 2
        cells = page.evaluate("() => S.path[1].state.cells")
        assert tuple(cells) in succ
