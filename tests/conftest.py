"""Every test's runs go to a throwaway run store, never the user's (~/.local/share/pingce): the
environment is set when pytest loads this file, before any test module (or tests/cli_run.py,
whose ENV the child processes get) is imported, so in-process commands and child processes alike
record into it. The ``browser`` fixture is Debian's chromium (:mod:`tests._browser`), one a
test module.

``make test`` runs the tests on every core with pytest-xdist (``-n auto --dist loadfile``): each
worker is a process of its own (its own run store, registries and session fixtures) and runs
whole units of tests, in order (:func:`xdist_unit`). Without ``-n`` nothing changes."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._browser import MISSING, browser_available, chromium

_STORE_HOME = Path(tempfile.mkdtemp(prefix="pingce-test-store-"))
# every process that loads this file makes one (under xdist the controller too, which runs no
# test): removed when the process ends, whatever ran
atexit.register(shutil.rmtree, _STORE_HOME, True)
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


SHARED: dict[str, str] = {
    # a test file, or one test of a file (without its parameters): the unit it shares a worker
    # with, instead of its file's
    "tests/test_ray_engine.py": "ray",
    "tests/test_golden.py::test_every_example_on_ray_gives_its_golden_outputs": "ray",
}
"""Under ``make test`` (pytest-xdist, ``--dist loadfile``) a test file's tests run on one worker,
in order: a module's fixtures (an example's run, a browser, a model) are built once, and the
docs pages, which write the same ``/tmp/pingce-docs/`` paths, never run at the same time. The
units named here join tests of several files: the tests on a local Ray cluster, so that one
cluster runs at a time."""


def xdist_unit(nodeid: str) -> str:
    """The unit of work (one worker, in order) of the test ``nodeid``: its entry in
    :data:`SHARED`, else its file."""
    file, _, test = nodeid.partition("::")
    return SHARED.get(f"{file}::{test.split('[', 1)[0]}") or SHARED.get(file) or file


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: absent without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` by :func:`xdist_unit` (other ``--dist`` modes as xdist has them).
    ``loadgroup``'s marks would say the same, but pytest 9.2 ignores the node ids xdist rewrites
    for them (pytest-dev/pytest-xdist#1386)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class ByUnit(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    return ByUnit(config, log)
