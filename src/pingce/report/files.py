"""Writing a run's files (results.json, records.jsonl or records.parquet, report.md, report.html,
stats.npz) or a comparison's (comparison.json, comparison.html), all or nothing."""

from __future__ import annotations

import os
from pathlib import Path

from ..results import ComparisonResult, EvaluationResult, RecordRows
from ..runfolder import layout
from ..runfolder.atomic import Staging, atomic_files
from ..runfolder.outputs import RunOutputs
from ..runfolder.records import FieldTexts, write_predictions, write_records
from ..runfolder.records_parquet import write_records_parquet
from .html import write_html
from .markdown import render_comparison_markdown, render_markdown

__all__ = ["write_comparison", "write_outputs"]


def write_outputs(
    result: EvaluationResult,
    out: str | os.PathLike[str],
    outputs: RunOutputs | None = None,
) -> dict[str, Path]:
    """Write the output files into ``out`` (created if needed) and return their paths: the
    result's, and those of what its run produced beside it (``outputs``: by default the
    result's own, :attr:`EvaluationResult.outputs`; nothing of the kind for a result made from
    results.json alone: no records.jsonl rows, no stats.npz).

    Files are written into a staging folder inside ``out`` first and moved into place only when
    all of them are complete, so an interrupted run never leaves half a result behind; a folder
    that cannot be written, or a failure while writing (a full disk), is an
    :class:`~pingce.errors.OutputError` with the path and the reason, and leaves nothing
    (:mod:`pingce.runfolder.atomic`)."""
    if outputs is None:
        outputs = result.outputs or RunOutputs()
    elif outputs is not result.outputs:  # the reports read the rows given
        result = result.with_outputs(outputs)
    with atomic_files(out) as staging:
        _write_outputs(result, outputs, staging)
    return staging.placed()


def _write_outputs(result: EvaluationResult, outputs: RunOutputs, staging: Staging) -> None:
    staging.write_text(layout.RESULTS, result.to_json() + "\n")
    staging.replaces(*layout.ROWS)  # never another run's rows or statistics
    staging.replaces(*layout.AUDIT_FILES)  # nor the audit of the run written over
    shards, kept = outputs.record_shards, outputs.kept
    rest, shared = layout.RECORD_SHARDS + "/", None
    if shards is None and kept.format == "parquet" and outputs.records is not None:
        write_records_parquet(
            outputs.records, staging.path(layout.RECORDS_PARQUET), fields=kept.fields
        )
        rest = layout.RECORDS_PARQUET
    elif shards is None:  # the embedded records' field texts made once, for both files
        if kept.fields and outputs.records is not None:
            shared = FieldTexts(outputs.records, kept.report_records)
        path = staging.path(layout.RECORDS)
        write_records(outputs.records, path, fields=kept.fields, shared=shared)
        rest = layout.RECORDS
    staging.write_text(layout.REPORT_MD, render_markdown(result))
    page = staging.path(layout.REPORT_HTML)
    write_html(result, page, bound=kept.report_records, rest=rest, shared=shared)
    if shards is not None:  # --engine ray: the workers' Parquet shards
        staging.link_tree(layout.RECORD_SHARDS, shards)
    if outputs.stat_shards is not None:  # --engine ray: the workers' stats shards
        staging.link_tree(layout.STAT_SHARDS, outputs.stat_shards)
    elif outputs.stats is not None:  # (a result read from results.json alone has no blocks)
        outputs.stats.save(staging.path(layout.STATS))
    if outputs.predictions is not None:
        write_predictions(outputs.predictions, staging.path(layout.PREDICTIONS))


def write_comparison(
    result: ComparisonResult,
    out: str | os.PathLike[str],
    *,
    candidate: RecordRows | None = None,
    baseline: RecordRows | None = None,
) -> Path:
    """Write comparison.json, its page comparison.html and comparison.md into ``out`` and return
    the path of comparison.json. All are made first, in a staging folder, and renamed into place
    only then (a failure: an :class:`~pingce.errors.OutputError`, nothing left). The page lists
    the records that flipped when both sides' per-record rows are given (by default, those
    the comparison made: :attr:`ComparisonResult.records`)."""
    if candidate is None and baseline is None and result.records is not None:
        candidate, baseline = result.records
    from .comparison_html import render_comparison_html  # a run writes no comparison page

    with atomic_files(out) as staging:
        staging.write_text(layout.COMPARISON_JSON, result.to_json() + "\n")
        staging.write_text(
            layout.COMPARISON_HTML, render_comparison_html(result, candidate, baseline)
        )
        staging.write_text(layout.COMPARISON_MD, render_comparison_markdown(result))
    return staging.target / layout.COMPARISON_JSON
