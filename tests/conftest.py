"""Every test's runs go to a throwaway run store, never the user's (~/.local/share/pingce): the
environment is set when pytest loads this file, before any test module (or tests/cli_run.py,
whose ENV the child processes get) is imported, so in-process commands and child processes alike
record into it. The ``browser`` fixture is Debian's chromium (:mod:`tests._browser`), one a
test module."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._browser import MISSING, browser_available, chromium

_STORE_HOME = Path(tempfile.mkdtemp(prefix="pingce-test-store-"))
os.environ["PINGCE_STORE"] = str(_STORE_HOME / "runs.db")
os.environ["XDG_DATA_HOME"] = str(_STORE_HOME / "data")


@pytest.fixture(scope="session", autouse=True)
def _throwaway_store() -> Iterator[Path]:
    """The session's run store (removed at the end)."""
    yield Path(os.environ["PINGCE_STORE"])
    shutil.rmtree(_STORE_HOME, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """A headless chromium for the module's browser tests; skips them without one."""
    if not browser_available():
        pytest.skip(MISSING)
    with chromium() as launched:
        yield launched
