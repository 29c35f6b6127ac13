"""A run read back from its folder: results.json, records.jsonl, records.parquet or records/
(Parquet shards),
stats.npz or stats/ (a stats.npz a piece), for ``pingce report RUN`` and ``pingce compare RUN_A
RUN_B``; its audit by people (audit.json); and a comparison's comparison.json."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from ..results import ComparisonResult, EvaluationResult, RecordRows
from . import layout
from .outputs import Kept, RunOutputs
from .records import read_jsonl, records_in_memory
from .records_parquet import read_records_parquet
from .stats import SavedStats, read_stat_shards

__all__ = ["read_audit", "read_comparison", "read_run"]


def read_run(folder: str | os.PathLike[str]) -> EvaluationResult:
    """The result of the run whose outputs are in ``folder``, with what the run wrote beside it
    (:attr:`EvaluationResult.outputs`): its per-record rows (records.jsonl, records.parquet, or
    ``--engine ray``'s records/ up to :data:`.records.RECORDS_IN_MEMORY` records) and its saved
    per-record statistics (stats.npz, or ``--engine ray``'s stats/ joined, read when first
    asked for)."""
    path = Path(folder)
    results = path / layout.RESULTS
    if not results.is_file():
        raise InputError("not a run's output folder: no results.json", source=str(path))
    try:
        result = EvaluationResult.model_validate_json(results.read_bytes())
    except ValueError as exc:
        raise InputError(f"results.json cannot be read: {exc}", source=str(results)) from None
    rows = _read_rows(path, list(result.metrics), result.n_records)
    return result.with_outputs(RunOutputs(records=rows, saved=_stats(path), kept=_kept(path, rows)))


def _kept(path: Path, rows: RecordRows | None) -> Kept:
    """How the folder keeps its rows, so that writing them elsewhere keeps them alike: the same
    format, and the input fields where the run kept them (``--records-fields all``)."""
    parquet = layout.rows_in(path) == layout.RECORDS_PARQUET
    return Kept(format="parquet" if parquet else "jsonl", fields=bool(rows and rows.fields))


def _read_rows(path: Path, metrics: list[str], n: int) -> RecordRows | None:
    """records.jsonl (or records.parquet, records/) back into columns, the metrics in the run's
    order."""
    rows = None
    if (path / layout.RECORDS).is_file():
        with open(path / layout.RECORDS, "rb") as handle:
            rows = read_jsonl(handle, str(path / layout.RECORDS))
    elif (path / layout.RECORDS_PARQUET).is_file():  # --records parquet
        rows = read_records_parquet(path / layout.RECORDS_PARQUET)
    elif (path / layout.RECORD_SHARDS).is_dir():  # --engine ray: Parquet shards
        rows = records_in_memory(path / layout.RECORD_SHARDS, n)
    if rows is not None:
        order = {name: i for i, name in enumerate(metrics)}
        rows.values = dict(sorted(rows.values.items(), key=lambda kv: order.get(kv[0], 1 << 30)))
        rows.misses = dict(sorted(rows.misses.items(), key=lambda kv: order.get(kv[0], 1 << 30)))
    return rows


def _stats(path: Path) -> Callable[[], SavedStats] | None:
    """What reads the run's stats.npz (or stats/) when it is first asked for."""
    if (path / layout.STATS).is_file():
        return partial(_read_stats, path / layout.STATS)
    if (path / layout.STAT_SHARDS).is_dir():  # --engine ray: a stats.npz a piece
        return partial(_read_stats, path / layout.STAT_SHARDS)
    return None


def _read_stats(path: Path) -> SavedStats:
    try:
        if path.is_dir():
            return read_stat_shards(path)
        return SavedStats.load(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:  # not a run's stats.npz
        raise InputError(f"{path.name} cannot be read: {exc}", source=str(path)) from None


def read_audit(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run's audit by people (audit.json, written by ``pingce audit RUN --labels``) as
    plain data, or None when the folder holds none."""
    source = Path(folder) / layout.AUDIT_JSON
    if not source.is_file():
        return None
    try:
        audit = orjson.loads(source.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"audit.json cannot be read: {exc}", source=str(source)) from None
    needed = ("run", "agreement", "metrics", "notes", "labelled_pairs", "unlabelled_pairs")
    missing = [k for k in needed if k not in audit] if isinstance(audit, dict) else ["metrics"]
    if missing or not isinstance(audit["metrics"], dict):
        what = f"no {missing[0]!r}" if missing else "its metrics are not an object"
        raise InputError(f"audit.json is not pingce audit's: {what}", source=str(source))
    found: dict[str, Any] = audit
    return found


def read_comparison(folder: str | os.PathLike[str]) -> ComparisonResult:
    """The comparison whose comparison.json is in ``folder`` (it holds no per-record rows)."""
    source = Path(folder) / layout.COMPARISON_JSON
    try:
        return ComparisonResult.model_validate_json(source.read_bytes())
    except ValueError as exc:
        raise InputError(f"comparison.json cannot be read: {exc}", source=str(source)) from None
