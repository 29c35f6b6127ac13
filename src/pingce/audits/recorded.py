"""An audit recorded in the audited run's own folder (``pingce audit RUN --labels SHEET``), all
or nothing (:func:`pingce.runfolder.atomic.atomic_files`): audit.json and audit.md beside the
run's files; records.jsonl (or records.parquet) with each record people checked whole marked
``audit`` (:data:`pingce.runfolder.layout.RECORDS`), every other byte as it was; report.html and
report.md written again with the audit (:func:`pingce.report.rewrite.write_reports`). A later
audit replaces the earlier one whole (its marks removed, never merged). Nothing is evaluated
again: the run's rows and results are read back from the folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..results import RecordRows

__all__ = ["MARK_KEYS", "record_audit", "record_marks"]

MARK_KEYS = ("verified", "stratum", "pairs", "grades")
"""The members of a record's audit mark in records.jsonl, in order (``id`` and ``line`` are
the record's own)."""


def record_marks(audit: dict[str, Any], rows: RecordRows, where: str) -> dict[int, Any]:
    """Each checked record's audit mark by its place among ``rows`` (found by its line in the
    data file): ``verified`` and audit.json's entry for it but its id and line."""
    place = {int(line): k for k, line in enumerate(rows.lines.tolist())}
    marks: dict[int, Any] = {}
    for entry in audit.get("verified", []):
        k = place.get(int(entry["line"]))
        if k is None:
            raise InputError(
                f"the audited record of line {entry['line']} is not among the folder's records: "
                "the folder holds another run's outputs",
                source=where,
            )
        mark = {
            "verified": True,
            **{key: v for key, v in entry.items() if key not in ("id", "line")},
        }
        marks[k] = {key: mark[key] for key in MARK_KEYS if key in mark}
    return marks


def _columns(marks: dict[int, Any], n: int) -> dict[str, list[Any]]:
    """The marks as :attr:`RecordRows.audit`'s sparse columns (None where a record has none)."""
    columns: dict[str, list[Any]] = {}
    for key in MARK_KEYS:
        if any(key in mark for mark in marks.values()):
            column: list[Any] = [None] * n
            for k, mark in marks.items():
                column[k] = mark.get(key)
            columns[key] = column
    return columns


def record_audit(result: Any, folder: str | os.PathLike[str]) -> list[Path]:
    """Record the audit ``result`` (:class:`pingce.audits.runs.AuditResult`) in the run's
    folder ``folder``; the paths written (nothing when an error is raised)."""
    from .._json import dumps_indented
    from ..report.audit_html import audit_data, render_audit_markdown
    from ..report.rewrite import write_reports
    from ..runfolder import layout
    from ..runfolder.atomic import atomic_files
    from ..runfolder.reader import read_run
    from ..runfolder.records import mark_records
    from ..runfolder.records_parquet import write_records_parquet

    path = Path(folder)
    audit = audit_data(result)
    run = read_run(path)
    outputs = run.outputs
    rows = outputs.records if outputs is not None else None
    rest = layout.rows_in(path)
    if rows is None or rest == layout.RECORD_SHARDS + "/":
        raise InputError(
            "the run folder holds no records.jsonl or records.parquet to mark the checked "
            "records in: write the audit elsewhere with --out",
            source=str(path),
        )
    marks = record_marks(audit, rows, str(path / rest))
    rows.audit = _columns(marks, rows.n)
    with atomic_files(path) as staging:
        staging.write_bytes(layout.AUDIT_JSON, dumps_indented(audit).encode("utf-8"))
        staging.write_text(layout.AUDIT_MD, render_audit_markdown(audit))
        staging.replaces(layout.AUDIT_HTML)  # an earlier audit's page, if one was written here
        if rest == layout.RECORDS:
            mark_records(path / layout.RECORDS, staging.path(layout.RECORDS), marks)
        else:
            kept = outputs.kept if outputs is not None else None
            fields = bool(kept and kept.fields)
            write_records_parquet(rows, staging.path(layout.RECORDS_PARQUET), fields=fields)
        write_reports(run, staging, rest, audit)
    return list(staging.placed().values())
