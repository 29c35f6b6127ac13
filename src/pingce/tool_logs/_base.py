"""What every reader of another tool's file gives: a :class:`ToolRun`, and the registry of the
readers (``@tool_reader``), each recognising its tool's files by content."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "READERS",
    "SCORES",
    "TOOL_NAMES",
    "Score",
    "ToolReader",
    "ToolRun",
    "head_of",
    "suite_from_result",
    "tool_reader",
]

TOOL_NAMES = {"inspect": "Inspect", "promptfoo": "promptfoo", "lm-eval": "lm-eval", "bfcl": "BFCL"}
"""How the notes name each tool."""

SCORES = "scores"
"""The record field holding each scorer's per-sample value (``scores.<name>``)."""


@dataclass(frozen=True)
class Score:
    """One of the tool's scorers (or metrics): its name, as a metric of the suite made from the
    file, what the tool itself reported for the run (None when the file holds no summary), and
    how that number is made from the per-sample values when it is not their mean."""

    name: str
    reported: float | None = None
    reported_as: str = "its mean"
    higher_is_better: bool = True
    differs: str | None = None
    """Why the tool's number is not the mean of the values pingce reads (Inspect's reducers
    over epochs, say), or None when it must be equal."""

    @property
    def field(self) -> str:
        return f"{SCORES}.{self.name}"


@dataclass
class ToolRun:
    """The samples of another tool's run as pingce records, and what the tool said of them.

    Each record holds ``id`` (unique; with repeats, unique with ``repeat``), ``input``,
    ``target``, ``output``, ``metadata`` (the tool's own, as it recorded it), ``scores`` (each
    scorer's value as a number: what the tool recorded, mapped as the tool maps it) and the
    fields the tool's natural groupings live in (:attr:`slices`)."""

    tool: str
    source: str
    name: str
    """The suite's name: the tool and its task (``inspect-arithmetic``)."""
    records: list[dict[str, Any]]
    scores: list[Score]
    slices: list[str] = field(default_factory=list)
    """Fields the records group by naturally (a promptfoo provider, an lm-eval task)."""
    context: list[str] = field(default_factory=lambda: ["input", "target", "output"])
    notes: list[str] = field(default_factory=list)
    keys: dict[str, list[str]] = field(default_factory=dict)
    """For a file holding several systems (promptfoo's providers and prompts): each such field
    (``provider``) and the record fields that identify a sample without it (``--by``)."""

    def suite(self) -> Any:
        """The suite made from the file: one ``mean_score`` a scorer."""
        from ..suites.spec import SuiteSpec

        metrics: dict[str, dict[str, Any]] = {
            score.name: {
                "metric": "mean_score" if score.higher_is_better else "mean_score_lower",
                "field": score.field,
            }
            for score in self.scores
        }
        return SuiteSpec(
            name=self.name,
            description=f"The per-sample scores of a {self.tool} run ({self.source}).",
            metrics=metrics,
            context=self.context,
        )


_MADE = re.compile(r"^(mean_score(?:_lower)?)\(field=([^,()]+)[,)]")


def suite_from_result(result: Any) -> Any:
    """The suite a stored run of another tool's file was made with, from the run's own
    signature (each metric a ``mean_score`` of its field), so that two such runs compare as
    any two stored runs do; None for a run of any other suite."""
    from ..suites.spec import SuiteSpec

    metrics = getattr(result.signature, "metrics", None) or {}
    if not metrics or not str(result.suite).startswith(tuple(f"{t}-" for t in TOOL_NAMES)):
        return None
    made: dict[str, dict[str, Any]] = {}
    for name, text in metrics.items():
        found = _MADE.match(str(text))
        if found is None:
            return None
        made[name] = {"metric": found[1], "field": found[2]}
    return SuiteSpec(name=result.suite, metrics=made, context=["input", "target", "output"])


@dataclass(frozen=True)
class ToolReader:
    """A tool's reader: whether a file is the tool's (from its first bytes and its name) and
    how to read it."""

    name: str
    recognises: Callable[[Path, bytes], bool]
    read: Callable[[Path], ToolRun]


READERS: dict[str, ToolReader] = {}
"""The registered readers by tool name (filled as the readers' modules are imported:
:func:`pingce.tool_logs.tool_readers`)."""


def tool_reader(
    name: str, recognises: Callable[[Path, bytes], bool]
) -> Callable[[Callable[[Path], ToolRun]], Callable[[Path], ToolRun]]:
    """Register ``read`` as the reader of ``name``'s files (``--from NAME``)."""

    def register(read: Callable[[Path], ToolRun]) -> Callable[[Path], ToolRun]:
        READERS[name] = ToolReader(name, recognises, read)
        return read

    return register


def head_of(path: Path, size: int = 65536) -> bytes:
    """The first bytes of a file (b"" for a folder)."""
    if path.is_dir():
        return b""
    with open(path, "rb") as handle:
        return handle.read(size)
