"""Screenshots of ``modelcheck explore`` for the documentation (docs/explore-*.png).

    python scripts/explore_screenshots.py [OUTDIR]     # default: docs/

It checks the bug variant ``KRaftLifecycleBugFenceKeepsLeader`` into a temporary run
folder, serves the explorer on a free loopback port and drives the page in headless
Chromium (Debian's ``chromium`` through Playwright, as the browser tests do: see
tests/browser.py), taking four pictures: the trace at its violating state, a branch
off the trace with an expression column, the run's results, and the graph around a
state of a small spec.
"""

from __future__ import annotations

import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from browser import chromium  # noqa: E402
from explorehelp import BUG, SMALL, SMALL_CONSTS, check_run, served, session_for  # noqa: E402

VIEWPORT = {"width": int(os.environ.get("EXPLORE_WIDTH", "1280")), "height": 860}


def main(out: str) -> None:
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, chromium() as browser:
        # as a user would: in a working folder, with the run folder beside the specs
        os.symlink(os.path.join(ROOT, "specs"), os.path.join(tmp, "specs"))
        os.chdir(tmp)
        run = check_run(BUG, "runs/fence")
        page = browser.new_page(viewport=VIEWPORT)
        with served(session_for(BUG, run=run)) as url:
            page.goto(url)
            page.wait_for_selector("#timeline-body tr[data-step='6']")
            page.keyboard.press("End")
            page.wait_for_selector("#successors button.succ")
            shot(page, out, "explore-trace.png")
            page.keyboard.press("ArrowUp")
            page.keyboard.press("ArrowUp")
            page.wait_for_selector("#timeline-body tr.current[data-step='4']")
            page.click("#successors button.succ[data-label='Crash(b=1)']")
            page.wait_for_selector("#timeline-body tr.current[data-step='5']")
            page.wait_for_selector("#successors button.succ")
            page.click("#successors button.succ[data-label='Start(b=1)']")
            page.wait_for_selector("#timeline-body tr.current[data-step='6']")
            page.fill("#expr", "inc[1] + restarts")
            page.press("#expr", "Enter")
            page.wait_for_function("() => ![...document.querySelectorAll('td.expr-value')]"
                                   ".some(td => td.textContent === '…')")
            page.wait_for_selector("#successors button.succ")
            shot(page, out, "explore-branch.png")
            page.click("#tabs button[data-view='run']")
            page.wait_for_selector("#coverage-body tr")
            shot(page, out, "explore-run.png", full=True)
        with served(session_for(SMALL, consts=SMALL_CONSTS)) as url:
            page.goto(url)
            for label in ("Start(b=1)", "Start(b=2)", "Register(b=1)"):
                page.wait_for_selector(f"#successors button.succ[data-label='{label}']")
                page.click(f"#successors button.succ[data-label='{label}']")
            page.wait_for_selector("#timeline-body tr[data-step='3']")
            page.click("#tabs button[data-view='graph']")
            page.wait_for_selector("svg.graph g.node.current")
            page.click("svg.graph g.node[data-distance='1'] >> nth=1")
            page.wait_for_selector("#timeline-body tr[data-step='4']", state="attached")
            page.wait_for_selector("svg.graph g.node[data-distance='-1']")
            shot(page, out, "explore-graph.png")
        os.chdir(ROOT)


def shot(page: object, out: str, name: str, full: bool = False) -> None:
    path = os.path.join(out, name)
    page.screenshot(path=path, full_page=full)  # type: ignore[attr-defined]
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs"))
