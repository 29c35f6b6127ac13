"""What the commands share: exit codes, errors on stderr, consoles and progress bars, the
output folder checked before any work, --profile's timing, the run store's --store option."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from .environment import EXIT_GATE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_JUDGE_FAILURES

STARTED = time.perf_counter()
"""When the command line was imported: ``--profile``'s start-up phase runs from here to the
engine."""

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from ..engine.profile import Profile
    from ..progress import ProgressHook

__all__ = [
    "EXIT_GATE",
    "EXIT_INPUT",
    "EXIT_INTERRUPTED",
    "EXIT_JUDGE_FAILURES",
    "STARTED",
    "consoles",
    "end_at_once",
    "fail",
    "imports_done",
    "keep",
    "out_checked",
    "profiler",
    "progress",
    "show_profile",
    "store_path_option",
]


@contextmanager
def progress(console: Console, enabled: bool) -> Iterator[ProgressHook]:
    """Progress bars on ``console``; disabled (not a terminal, ``--quiet``, ``--no-progress``),
    the hook that shows nothing, and rich's progress module is not imported."""
    if not enabled:
        from ..progress import no_progress

        yield no_progress
        return
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from ..progress import Advance

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )

    class Task:
        """Advances one bar, and shows a note beside its description (failing calls)."""

        def __init__(self, description: str, total: float | None):
            self.description = description
            self.id = progress.add_task(description, total=total)

        def __call__(self, amount: float) -> None:
            progress.advance(self.id, amount)

        def note(self, text: str) -> None:
            shown = f"{self.description} [red]({escape(text)})[/red]"
            progress.update(self.id, description=shown)

    def hook(description: str, total: float | None) -> Advance:
        return Task(description, total)

    with progress:
        yield hook


def consoles() -> tuple[Console, Console]:
    from rich.console import Console

    return Console(stderr=False), Console(stderr=True)


def fail(message: str | Exception) -> None:
    """Exit 2 with the message (of an error: an output error names --out)."""
    if isinstance(message, Exception):
        for_option = getattr(message, "for_option", None)  # errors.OutputError
        message = for_option("--out") if callable(for_option) else str(message)
    click.echo(f"pingce: error: {message}", err=True)
    sys.exit(EXIT_INPUT)


def profiler(enabled: bool) -> Profile | None:
    if not enabled:
        return None
    from ..engine.profile import Profile

    return Profile()


def show_profile(timer: Profile | None, written: float, started: float, console: Console) -> None:
    """With --profile: start-up (importing what the command needs), the engine's phases, then
    writing and printing, on stderr."""
    if timer is None:
        return
    from ..report import print_profile

    seconds = {
        "start-up": _imported - STARTED,
        **timer.ordered(),
        "write": written,
        "report": time.perf_counter() - started,
    }
    print_profile(seconds, console)


_imported = STARTED


def imports_done() -> None:
    """Mark the end of start-up: the command has imported what it needs."""
    global _imported
    _imported = time.perf_counter()


def store_path_option(command: Any) -> Any:
    return click.option(
        "--store",
        "store",
        default=None,
        type=click.Path(dir_okay=False),
        help="Run store file [default: $PINGCE_STORE or ~/.local/share/pingce/runs.db].",
    )(command)


@contextmanager
def out_checked(out: str | Path | None, *, file: bool = False) -> Iterator[None]:
    """Before any work: ``out`` (a folder; with ``file``, a file's path) can be written, else
    exit 2 naming the path and the reason (:func:`pingce._outputs.prepare_out`); the folders
    made for the check are removed again when the command then fails."""
    if out is None:
        yield
        return
    from .._outputs import prepare_out
    from ..errors import OutputError

    try:
        place = prepare_out(out, file=file)
    except OutputError as exc:
        fail(exc.for_option("--out"))
        return
    try:
        yield
    except BaseException:
        place.discard()
        raise


_ends_at_once = False
"""Set by :func:`main` alone: the process ends as soon as the command is done."""
_left_to_the_system: list[object] = []
"""What a command made, kept (when the process ends at once) so that it is not freed an object
at a time on the way out: the operating system takes the memory back whole."""


def keep(*made: object) -> None:
    """Keep what the command made to the end when :func:`main` ends the process at once."""
    if _ends_at_once:
        _left_to_the_system.extend(made)


def end_at_once() -> None:
    """Set by :func:`pingce.cli.main` alone: the process ends as soon as the command is done."""
    global _ends_at_once
    _ends_at_once = True
