"""The names of the files in a run's output folder (and a comparison's), with their variants.

A run folder holds ``results.json``, ``report.md`` and ``report.html``; per-record values as
``records.jsonl`` or, from ``--engine ray``, as Parquet shards in ``records/``; saved statistics
as ``stats.npz`` or, from ``--engine ray``, a stats.npz a piece in ``stats/``; with ``--model``,
``predictions.jsonl``. A shard is ``part-N<suffix>``, N the number of its piece. A comparison's
folder holds ``comparison.json``, ``comparison.html`` and ``comparison.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "COMPARISON_FILES",
    "COMPARISON_HTML",
    "COMPARISON_JSON",
    "COMPARISON_MD",
    "OUTPUT_FILES",
    "PREDICTIONS",
    "RECORDS",
    "RECORD_SHARDS",
    "REPORT_HTML",
    "REPORT_MD",
    "RESULTS",
    "ROWS",
    "STATS",
    "STAT_SHARDS",
    "part_file",
    "part_files",
]

RESULTS = "results.json"
RECORDS = "records.jsonl"
RECORD_SHARDS = "records"
"""``--engine ray``: records.jsonl as Parquet shards (``part-N.parquet``)."""
STATS = "stats.npz"
STAT_SHARDS = "stats"
"""``--engine ray``: stats.npz a piece (``part-N.npz``)."""
PREDICTIONS = "predictions.jsonl"
REPORT_MD = "report.md"
REPORT_HTML = "report.html"

OUTPUT_FILES = (RESULTS, RECORDS, REPORT_MD, REPORT_HTML, STATS)
"""The files of a run folder that every local run writes (stats.npz but for a result read back
from results.json alone)."""

ROWS = (RECORDS, RECORD_SHARDS, STATS, STAT_SHARDS)
"""The per-record files and their variants: a run writing one removes the others (never another
run's rows or statistics beside this run's result)."""

COMPARISON_JSON = "comparison.json"
COMPARISON_HTML = "comparison.html"
COMPARISON_MD = "comparison.md"
COMPARISON_FILES = (COMPARISON_JSON, COMPARISON_HTML, COMPARISON_MD)


def part_file(folder: str | os.PathLike[str], piece: int, suffix: str) -> str:
    """The path of piece number ``piece``'s shard in ``folder`` (``part-00007.npz``)."""
    return os.path.join(folder, f"part-{piece:05d}{suffix}")


def part_files(folder: str | os.PathLike[str], suffix: str) -> list[Path]:
    """The shards ``part-N<suffix>`` in ``folder`` in the order of their pieces (by the number
    N, whatever its digits: ``part-100000`` comes after ``part-99999``)."""
    found = Path(folder).glob(f"part-*{suffix}")
    return sorted(found, key=lambda p: (int(p.name[5 : -len(suffix)]), p.name))
