"""The files other evaluation tools write, read as pingce records (issue 36).

Inspect AI's logs (:mod:`.inspect_log`), promptfoo's ``-o results.json`` (:mod:`.promptfoo`),
lm-evaluation-harness's ``samples_<task>_*.jsonl`` (:mod:`.lm_eval`) and BFCL's score files
(:mod:`.bfcl`): each recognised by its content (:func:`detect_tool`; ``--from TOOL`` forces one),
read into a :class:`ToolRun` (records with ids, inputs, targets, outputs, metadata, epochs as
repeats and each scorer's per-sample value as the tool recorded it), from which a suite is made
(one mean a scorer) unless one is named. :mod:`.evaluate` runs and compares them, and checks
each mean against the number the tool itself reported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import InputError, OptionError
from ._base import READERS, SCORES, Score, ToolReader, ToolRun, head_of, suite_from_result

__all__ = [
    "SCORES",
    "TOOLS",
    "Score",
    "ToolRun",
    "detect_tool",
    "read_tool_file",
    "suite_from_result",
    "tool_readers",
]

TOOLS = ("inspect", "promptfoo", "lm-eval", "bfcl")
"""The tools whose files pingce reads (``--from``)."""


def tool_readers() -> Mapping[str, ToolReader]:
    """The readers by tool name, each tool's module imported (its ``@tool_reader``)."""
    from . import bfcl, inspect_log, lm_eval, promptfoo  # noqa: F401  (they register)

    return READERS


def detect_tool(path: str | os.PathLike[str]) -> str | None:
    """The tool that wrote ``path``, recognised by its content; None for any other file (a
    suite file, pingce records, a folder that holds no tool's files)."""
    where = Path(path)
    if not where.exists():
        return None
    head = head_of(where)
    for name, reader in tool_readers().items():
        if reader.recognises(where, head):
            return name
    return None


def read_tool_file(path: str | os.PathLike[str], tool: str | None = None) -> ToolRun:
    """The records of another tool's file (``tool`` forces the reader: ``--from``)."""
    where = Path(path)
    if not where.exists():
        raise InputError("no such file", source=os.fspath(path))
    readers = tool_readers()
    if tool is None:
        tool = detect_tool(where)
        if tool is None:
            raise InputError(
                "not a file pingce recognises as another tool's ("
                + ", ".join(TOOLS)
                + "); give --from TOOL to read it as one",
                source=os.fspath(path),
            )
    if tool not in readers:
        raise OptionError(f"--from {tool}: pingce reads the files of " + ", ".join(TOOLS))
    return readers[tool].read(where)
