"""Writing a run's files (results.json, records.jsonl, report.md) or a comparison's
(comparison.json), all or nothing."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..results import ComparisonResult, EvaluationResult
from .markdown import render_markdown

__all__ = ["OUTPUT_FILES", "write_comparison", "write_outputs"]

OUTPUT_FILES = ("results.json", "records.jsonl", "report.md")


def write_outputs(result: EvaluationResult, out: str | os.PathLike[str]) -> dict[str, Path]:
    """Write the output files into ``out`` (created if needed) and return their paths.

    Files are written into a temporary folder beside ``out`` first and moved into place only when
    all of them are complete, so an interrupted run never leaves half a result behind.
    """
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".pingce-", dir=target))
    try:
        (staging / "results.json").write_text(result.to_json() + "\n", encoding="utf-8")
        with open(staging / "records.jsonl", "wb") as handle:
            if result.records is not None:
                for text in result.records.iter_jsonl():
                    handle.write(text)
        (staging / "report.md").write_text(render_markdown(result), encoding="utf-8")
        paths = {}
        for name in OUTPUT_FILES:
            os.replace(staging / name, target / name)
            paths[name] = target / name
        return paths
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_comparison(result: ComparisonResult, out: str | os.PathLike[str]) -> Path:
    """Write comparison.json into ``out`` (atomically: a temporary file, then a rename)."""
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    path = target / "comparison.json"
    temporary = target / ".comparison.json.tmp"
    temporary.write_text(result.to_json() + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path
