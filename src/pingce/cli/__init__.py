"""The ``pingce`` command line: run, compare, audit, calibrate, metrics, suites, demo, report, runs,
view; one module per command (:mod:`pingce.cli.run`, ...), imported when the command runs (or
when ``pingce --help`` lists them).

Only click is imported at start-up: numpy, pydantic, rich and the metric families are imported by
the command that needs them, so ``pingce --help`` answers at once.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

import click

from .._collector import collector_paused
from .._version import __version__
from .common import EXIT_INTERRUPTED, end_at_once

__all__ = ["cli", "main"]

COMMANDS = (
    "audit",
    "calibrate",
    "compare",
    "demo",
    "metrics",
    "plan",
    "report",
    "run",
    "runs",
    "suites",
    "view",
)
"""The commands, each the function of that name in the module of that name."""


class LazyCommands(dict[str, click.Command]):
    """The group's commands by name, each imported when it is first looked up (click's lazy
    loading): names are listed without importing anything; a command is the function of its
    name in the module of its name, imported with the collector paused (:mod:`pingce._collector`:
    modules and classes live to the end, so collecting among them is wasted)."""

    def __missing__(self, name: str) -> click.Command:
        if name not in COMMANDS:
            raise KeyError(name)
        with collector_paused():  # modules and classes, alive to the end: nothing to collect
            command = getattr(importlib.import_module(f"{__name__}.{name}"), name)
        assert isinstance(command, click.Command)
        self[name] = command
        return command

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*super().keys(), *COMMANDS}))

    def __len__(self) -> int:
        return len({*super().keys(), *COMMANDS})

    def __contains__(self, name: object) -> bool:
        return name in COMMANDS or super().__contains__(name)

    def keys(self) -> Any:
        return list(self)

    def items(self) -> Any:
        return [(name, self[name]) for name in self]

    def values(self) -> Any:
        return [self[name] for name in self]


class LazyGroup(click.Group):
    """A group whose commands are imported when they are asked for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pingce")
def cli() -> None:
    """pingce (评测): evaluate LLM applications against ground truth."""


_default_show_warning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """pingce's own warnings as one line for people (``pingce: warning: ...``), without the
    source file and line of the code that warned; other packages' warnings as Python shows them."""
    if category.__module__.startswith("pingce"):
        print(f"pingce: warning: {message}", file=file or sys.stderr)
        return
    _default_show_warning(message, category, filename, lineno, file, line)


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a job scheduler's stop): the command ends as Ctrl+C ends it, through
    every ``finally`` on the way out (a staging folder removed, a folder made for --out and a
    reserved run name given back), with status 128 + 15."""
    raise SystemExit(128 + signum)


_interrupted = False
"""Whether Ctrl+C stopped the command (click then says "Aborted!" and exits 1)."""


def _ctrl_c(number: int, frame: object) -> None:
    """SIGINT: Python's own handler (a KeyboardInterrupt, so every ``finally`` runs, the cache
    writes among them), remembered for the exit status."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def main() -> None:
    """Entry point of the ``pingce`` command (the console script and ``python -m pingce``).

    When the command is done (its files written and closed), the process ends at once with the
    command's exit status (``os._exit`` after flushing stdout and stderr): freeing half a
    million records an object at a time, and the interpreter's own teardown, would only make
    the user wait. Code that calls :func:`cli` itself (tests, other programs) is not ended.
    ``atexit`` handlers do not run: whatever a command must finish (a cache, a connection, a
    cluster) it finishes inside the command.

    pydantic's plugins are off in this process (``PYDANTIC_DISABLE_PLUGINS=__all__`` unless the
    variable is set): pingce's option models need none, and looking for them scans the entry
    points of every installed package on each start. ``PYDANTIC_DISABLE_PLUGINS=`` (empty)
    turns them back on."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    end_at_once()
    warnings.showwarning = _show_warning
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, _ctrl_c)
    code: int
    try:
        cli(prog_name="pingce")
        code = 0
    except SystemExit as exc:
        if _interrupted and exc.code == 1:  # click's "Aborted!" (pingce view stops with 0)
            code = EXIT_INTERRUPTED
        elif exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:  # sys.exit("message"): the message on stderr, status 1
            print(exc.code, file=sys.stderr)
            code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can be said
            code = code or 1
    os._exit(code)
