"""Progress reporting: one hook type for every phase of a run.

The engine asks the hook for a task (``hook(description, total)``) and gets back the function
that advances it (``advance(amount)``). The command line's hook draws rich progress bars; the
Python API's default draws nothing. An advance may also show a line of news beside its bar
(``advance.note(text)``, e.g. calls failing and the last error): :func:`show_note` passes it to
advances that have one and ignores it for the others (plain functions).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Advance", "ProgressHook", "no_progress", "show_note"]

Advance = Callable[[float], None]
"""Advances one progress task by an amount (records, bytes, pairs, resamples)."""

ProgressHook = Callable[[str, float | None], Advance]
"""``hook(description, total)`` starts a progress task and returns its :data:`Advance`."""


def _ignore(amount: float) -> None:
    return None


def no_progress(description: str, total: float | None) -> Advance:
    """A hook that shows nothing."""
    return _ignore


def show_note(advance: Advance, text: str) -> None:
    """Show ``text`` beside the bar of ``advance`` if it can show one (``advance.note``)."""
    note = getattr(advance, "note", None)
    if callable(note):
        note(text)
