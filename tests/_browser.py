"""Debian's chromium driven by Playwright, launched one way for the browser tests
(``tests/test_report_html.py``, ``tests/test_view.py``, through the ``browser`` fixture of
``tests/conftest.py``) and for ``benchmarks/bench_report_html.py``: ``shutil.which("chromium")``,
``--no-sandbox`` (containers and root), ``--disable-background-networking`` (a page's requests
are the only ones)."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CHROMIUM", "MISSING", "browser_available", "chromium"]

CHROMIUM = shutil.which("chromium")
MISSING = (
    "the browser tests need Debian's chromium and playwright: `make browser-deps` installs "
    "chromium and fonts-wqy-microhei, `pip install -e '.[test]'` playwright"
)


def browser_available() -> bool:
    """Whether chromium is on PATH and playwright is installed."""
    return CHROMIUM is not None and importlib.util.find_spec("playwright") is not None


@contextmanager
def chromium() -> Iterator[Any]:
    """A launched headless chromium (a Playwright ``Browser``), closed on leaving;
    ``RuntimeError`` with :data:`MISSING` when it cannot be."""
    if not browser_available():
        raise RuntimeError(MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-background-networking"]
        )
        try:
            yield browser
        finally:
            browser.close()
