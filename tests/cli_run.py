"""Running pingce (or a Python snippet) in a child process, the way tests do it everywhere: an
environment without the caller's terminal size or colours, UTF-8, a time limit, the result kept
(never raised) so that a test can assert on the exit status and stderr."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["ENV", "loopback_pingce", "run_pingce", "run_python"]

ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")},
    "PYTHONUTF8": "1",
    "NO_COLOR": "1",
    "COLUMNS": "120",
}
if not ENV.get("PINGCE_STORE"):  # tests/conftest.py sets one; without it, still never the user's
    ENV["PINGCE_STORE"] = os.path.join(tempfile.mkdtemp(prefix="pingce-test-store-"), "runs.db")


def run_python(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with :data:`ENV`; the completed process, whatever its status."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=ENV,
        timeout=timeout,
        check=False,
    )


def run_pingce(
    *args: str, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m pingce ARGS`` (the command as users run it) with :data:`ENV`."""
    return run_python("-m", "pingce", *args, cwd=cwd, timeout=timeout)


def loopback_pingce(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``python -m pingce ARGS`` for a test that talks to a loopback server: :data:`ENV` without
    proxies (127.0.0.1 reached directly), a cache and a run store of the test's own."""
    env = {k: v for k, v in ENV.items() if not k.upper().endswith("_PROXY")}
    env.update(
        NO_PROXY="127.0.0.1,localhost",
        PINGCE_CACHE_DIR=str(tmp_path / "cache"),
        PINGCE_STORE=str(tmp_path / "runs.db"),
    )

    def pingce(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pingce", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            timeout=300,
            check=False,
        )

    pingce.env = env  # type: ignore[attr-defined]  # for a test that reads the store in process
    return pingce
