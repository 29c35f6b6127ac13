"""``pingce report RUN``: a stored run's report.html and report.md written again, later, from its
results.json and records.jsonl alone (nothing is evaluated again and no model is called); and
:func:`read_run`, a run read back from its folder (also for ``pingce compare RUN_A RUN_B``)."""

from __future__ import annotations

import os
import zipfile
from functools import partial
from pathlib import Path

from ..errors import InputError
from ..results import EvaluationResult, RecordRows, SavedStats
from ..runfolder import layout
from ..runfolder.atomic import atomic_files
from .html import write_html
from .markdown import render_markdown

__all__ = ["read_run", "rewrite_comparison", "rewrite_reports"]


def read_run(folder: str | os.PathLike[str]) -> EvaluationResult:
    """The result of the run whose outputs are in ``folder``, its per-record rows (records.jsonl)
    and its saved per-record statistics (stats.npz, read when first asked for) attached."""
    path = Path(folder)
    results = path / "results.json"
    if not results.is_file():
        raise InputError("not a run's output folder: no results.json", source=str(path))
    try:
        result = EvaluationResult.model_validate_json(results.read_bytes())
    except ValueError as exc:
        raise InputError(f"results.json cannot be read: {exc}", source=str(results)) from None
    records = path / "records.jsonl"
    shards = path / "records"
    rows = None
    if records.is_file():
        rows = _read_rows(records)
    elif shards.is_dir():  # --engine ray: Parquet shards (up to a million records)
        from ..record_shards import records_in_memory

        rows = records_in_memory(shards, result.n_records)
    if rows is not None:
        order = {name: i for i, name in enumerate(result.metrics)}  # the run's metric order
        rows.values = dict(sorted(rows.values.items(), key=lambda kv: order.get(kv[0], 1 << 30)))
        rows.misses = dict(sorted(rows.misses.items(), key=lambda kv: order.get(kv[0], 1 << 30)))
        result.attach_records(rows)
    stats = path / "stats.npz"
    if stats.is_file():
        result.attach_stats(partial(_read_stats, stats))
    elif (path / "stats").is_dir():  # --engine ray: a stats.npz a piece
        result.attach_stats(partial(_read_stats, path / "stats"))
    return result


def _read_stats(path: Path) -> SavedStats:
    try:
        if path.is_dir():
            from ..stat_shards import read_stat_shards

            return read_stat_shards(path)
        return SavedStats.load(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:  # not a run's stats.npz
        raise InputError(f"{path.name} cannot be read: {exc}", source=str(path)) from None


def _read_rows(path: Path) -> RecordRows:
    """records.jsonl back into columns."""
    with open(path, "rb") as handle:
        return RecordRows.from_jsonl(handle, str(path))


def rewrite_reports(
    folder: str | os.PathLike[str], out: str | os.PathLike[str] | None
) -> list[Path]:
    """Write report.html and report.md of the run in ``folder`` into ``out`` (default: the
    folder itself); the paths written."""
    result = read_run(folder)
    with atomic_files(Path(out) if out is not None else Path(folder)) as staging:
        write_html(result, staging.path(layout.REPORT_HTML))
        staging.write_text(layout.REPORT_MD, render_markdown(result))
    return list(staging.placed().values())


def rewrite_comparison(
    folder: str | os.PathLike[str], out: str | os.PathLike[str] | None
) -> list[Path]:
    """Write comparison.html and comparison.md of the comparison in ``folder`` (its
    comparison.json) into ``out`` (default: the folder itself); the paths written. The page
    lists no flipped records: comparison.json holds no per-record rows."""
    from ..results import ComparisonResult
    from .html import render_comparison_html
    from .markdown import render_comparison_markdown

    source = Path(folder) / "comparison.json"
    try:
        result = ComparisonResult.model_validate_json(source.read_bytes())
    except ValueError as exc:
        raise InputError(f"comparison.json cannot be read: {exc}", source=str(source)) from None
    with atomic_files(Path(out) if out is not None else Path(folder)) as staging:
        page = render_comparison_html(result, None, None)
        staging.write_text(layout.COMPARISON_HTML, page)
        staging.write_text(layout.COMPARISON_MD, render_comparison_markdown(result))
    return list(staging.placed().values())
