"""One exception hierarchy for pingce.

Every error a user can cause derives from :class:`PingceError`; the command line turns those into
exit status 2 with the message on stderr. :class:`InputError` carries the file, line, field and
offending value, so a message always says where to look.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

__all__ = [
    "EmptyInputError",
    "InputError",
    "OptionError",
    "OutputError",
    "PingceError",
    "SuiteError",
    "did_you_mean",
    "show_value",
]


def show_value(value: Any, limit: int = 80) -> str:
    """Render an offending value for an error message: JSON-like, shortened when long."""
    if isinstance(value, str):
        text = repr(value)
        if text.startswith("'") and '"' not in value:
            text = '"' + text[1:-1] + '"'
    elif value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict | list):
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'accuracy'?"`` for the choice closest to a misspelt ``name`` (difflib's
    ratio at least 0.6), else ``""``: one wording for every "no such name" message."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class PingceError(Exception):
    """Base class of every error pingce raises on purpose."""


class OptionError(PingceError):
    """A command-line option or a keyword argument of :func:`pingce.evaluate` is invalid."""


class OutputError(PingceError):
    """An output folder or file cannot be made or written (``--out``): names the path and the
    operating system's reason (a file where a folder should be, a read-only file system, no
    permission, a full disk, a name too long)."""

    def __init__(self, detail: str, *, path: str, reason: str, what: str = "output folder"):
        self.path = path
        self.reason = reason
        self.detail = detail
        super().__init__(f"{what} {path}: {detail}")

    def for_option(self, option: str) -> str:
        """The message as the command line says it: the option, the path and what failed."""
        return f"{option} {self.path}: {self.detail}"


class SuiteError(PingceError):
    """A suite file is invalid; the message names the file, the line (where the file has the
    key) and the key."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        key: str | None = None,
        line: int | None = None,
    ):
        self.source = source
        self.key = key
        self.line = line
        self.reason = message
        where = source or "suite"
        if line is not None:
            where += f":{line}"
        if key:
            where += f": key '{key}'"
        super().__init__(f"{where}: {message}")


class InputError(PingceError):
    """A record is invalid. Names the file, the 1-based line (or the ``unit`` counted instead:
    ``row``, ``record``), the field and the value."""

    _MISSING = object()

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        field: str | None = None,
        value: Any = _MISSING,
        unit: str = "line",
    ):
        self.source = source
        self.line = line
        self.field = field
        self.value = None if value is InputError._MISSING else value
        self.reason = message
        self.unit = unit
        parts = []
        location = source or "<records>"
        if line is not None:
            # a line as FILE:LINE; an Excel row or the record of an array as "FILE: row 7"
            location += f":{line}" if unit == "line" else f": {unit} {line}"
        parts.append(location)
        if field is not None:
            parts.append(f"field '{field}'")
        text = ": ".join(parts) + ": " + message
        if value is not InputError._MISSING:
            text += f" (got {show_value(value)})"
        super().__init__(text)


class EmptyInputError(InputError):
    """The input holds no record (an empty file, or one of blank lines only): an error for a run,
    nothing for one piece of a data set of many files (``--engine ray``)."""
