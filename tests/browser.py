"""Headless Chromium for the explorer's tests and screenshots: Debian's ``chromium``
driven by Playwright (never a browser Playwright downloads).

:func:`chromium` launches it with the flags it needs as root on a closed network
(no sandbox, no GPU, no background traffic) and a fresh profile; :func:`missing`
says why it cannot, for a skip message.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: Debian's chromium (package ``chromium``)
CHROMIUM = os.environ.get("MODELCHECK_CHROMIUM") or shutil.which("chromium") \
    or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


def missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    if not os.path.exists(CHROMIUM):
        return f"{CHROMIUM} is missing (apt-get install chromium chromium-driver; .ci/run does)"
    return None


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed on exit. Playwright gives
    it a fresh temporary profile (``--user-data-dir``) of its own."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS,
                                    timeout=60_000)
        try:
            yield browser
        finally:
            browser.close()
