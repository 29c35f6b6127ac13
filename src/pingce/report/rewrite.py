"""``pingce report RUN``: a stored run's report.html and report.md written again, later, from its
results.json and records.jsonl alone (read by :func:`pingce.runfolder.reader.read_run`; nothing
is evaluated again and no model is called), with its audit by people when the folder holds
audit.json."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..results import EvaluationResult
from ..runfolder import layout
from ..runfolder.atomic import Staging, atomic_files
from ..runfolder.reader import read_audit, read_comparison, read_run
from .comparison_html import render_comparison_html
from .html import write_html
from .markdown import render_comparison_markdown, render_markdown

__all__ = ["rewrite_comparison", "rewrite_reports", "write_reports"]


def rewrite_reports(
    folder: str | os.PathLike[str], out: str | os.PathLike[str] | None
) -> list[Path]:
    """Write report.html and report.md of the run in ``folder`` into ``out`` (default: the
    folder itself); the paths written."""
    result = read_run(folder)
    audit = read_audit(folder)
    with atomic_files(Path(out) if out is not None else Path(folder)) as staging:
        write_reports(result, staging, layout.rows_in(folder), audit)
    return list(staging.placed().values())


def write_reports(
    result: EvaluationResult, staging: Staging, rest: str, audit: dict[str, Any] | None = None
) -> None:
    """A run's report.html and report.md made in ``staging`` (``rest``: what holds all its
    records; ``audit``: its audit by people, audit.json's data, shown in both)."""
    write_html(result, staging.path(layout.REPORT_HTML), rest=rest, audit=audit)
    staging.write_text(layout.REPORT_MD, render_markdown(result, audit))


def rewrite_comparison(
    folder: str | os.PathLike[str], out: str | os.PathLike[str] | None
) -> list[Path]:
    """Write comparison.html and comparison.md of the comparison in ``folder`` (its
    comparison.json) into ``out`` (default: the folder itself); the paths written. The page
    lists no flipped records: comparison.json holds no per-record rows."""
    result = read_comparison(folder)
    with atomic_files(Path(out) if out is not None else Path(folder)) as staging:
        page = render_comparison_html(result, None, None)
        staging.write_text(layout.COMPARISON_HTML, page)
        staging.write_text(layout.COMPARISON_MD, render_comparison_markdown(result))
    return list(staging.placed().values())
