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

from modelcheck.trace.render import action_label, format_value, leaves

pytestmark = pytest.mark.skipif(missing() is not None and not os.environ.get("CI"),
                                reason=str(missing()))


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800},
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


def _in_view(page, selector: str) -> bool:
    """Whether the element is wholly inside the viewport (and not clipped sideways by a
    scrolling pane: its centre is the element found there)."""
    return page.eval_on_selector(selector, """e => {
        const r = e.getBoundingClientRect();
        const inside = r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth
          && r.bottom <= innerHeight;
        const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return inside && (hit === e || e.contains(hit));
    }""")


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
        # the trace opens at its violating state (the last one), in view
        bad = [i for i, c in enumerate(cells) if session.kernel.check_invariants(c)]
        assert _current(page) == bad[0] == len(cells) - 1
        assert _in_view(page, "#timeline-body tr.current")
        page.keyboard.press("Home")
        assert _current(page) == 0 and _highlighted(page) == set()
        # the "(n)" after an action counts the values it changed, and says which
        count = page.locator("#timeline-body tr[data-step='1'] .count")
        paths = changed_leaves(layout, cells[0], cells[1])
        assert count.text_content() == f"({len(paths)})"
        assert all(p in count.get_attribute("title") for p in paths)
        assert page.locator("#path-legend").is_visible()
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
        # the banner no longer says the last state violates the invariant
        banner = page.text_content("#violation-text")
        assert "branched off the counterexample after state 5" in banner, banner
        assert "the last state violates" not in banner
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
        # the new column is on screen and the path's pane needs no sideways scrolling
        assert _in_view(page, f"#timeline-head th.expr[data-expr='{expr}']")
        assert _in_view(page, "#timeline-body tr[data-step='6'] td.expr-value")
        assert page.eval_on_selector("#timeline-pane", "p => p.scrollWidth <= p.clientWidth")
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
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
        assert page.text_content("#violation-text").startswith("Counterexample: the last")


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
        # a legend, and each arrow labelled with its actions
        assert page.locator("#graph-legend").is_visible()
        assert "violates an invariant" in page.text_content("#graph-legend")
        edges = page.evaluate("() => [...document.querySelectorAll('svg.graph path.edge')]"
                              ".map(p => [p.dataset.edge, p.querySelector('title')"
                              ".textContent.split('\\n').join(', ')])")
        labels = page.evaluate("() => Object.fromEntries([...document.querySelectorAll("
                               "'svg.graph text.edge-label')].map(t => [t.dataset.edge, "
                               "t.querySelector('title').textContent.split('\\n')"
                               ".join(', ')]))")
        assert edges and all(labels[k] == text for k, text in edges)
        init = small.kernel.initial_states()[0]
        here = page.get_attribute("svg.graph g.node.current", "data-id")
        assert {label for k, text in edges if k.startswith(here + ">")
                for label in text.split(", ")} == {
            action_label(a.name, dict(a.params)) for a, _ in small.kernel.successors(init)}
        # the state's values as `trace show` and the state table write them
        values = small.spec.layout.itf_values_from_cells(list(init))
        detail = page.text_content("#graph-detail").splitlines()[1:]
        assert [" ".join(line.split()) for line in detail] == [
            f"{n} = {format_value(values[n])}" for n in small.spec.layout.vars]
        table = page.eval_on_selector_all("#state-body .leaf", "ls => ls.map(l => "
                                          "[l.dataset.path, l.lastChild.textContent.trim()])")
        assert table == [[p, format_value(x)] for n in small.spec.layout.vars
                         for p, x in leaves(n, values[n])]
        page.click("svg.graph g.node[data-distance='1'] >> nth=0")
        page.wait_for_selector("svg.graph g.node[data-distance='-1']")
        page.click("#tabs button[data-view='explore']")
        assert page.locator("#timeline-body tr").count() == 2
        cells = page.evaluate("() => S.path[1].state.cells")
        assert tuple(cells) in succ


def test_graph_over_the_limit_says_why_without_controls(page) -> None:
    with served(session_for(SMALL, consts=SMALL_CONSTS, graph_limit=50)) as url:
        page.goto(url)
        page.wait_for_selector("#successors button.succ")
        page.click("#tabs button[data-view='graph']")
        page.wait_for_selector("#graph-message")
        assert "more than 50 reachable states" in page.text_content("#graph-message")
        assert "--graph-limit" in page.text_content("#graph-message")
        assert not page.locator("#graph-controls").is_visible()  # no radius helps
        assert not page.locator("#graph-legend").is_visible()
        assert not page.locator("#graph-detail").is_visible()
