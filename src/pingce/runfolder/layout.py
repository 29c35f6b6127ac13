"""The names of the files in a run's output folder (and a comparison's), with their variants.

A run folder holds ``results.json``, ``report.md`` and ``report.html``; per-record values as
``records.jsonl``, as ``records.parquet`` (``--records parquet``) or, from ``--engine ray``, as
Parquet shards in ``records/``; saved statistics
as ``stats.npz`` or, from ``--engine ray``, a stats.npz a piece in ``stats/``; with ``--model``,
``predictions.jsonl``. A shard is ``part-N<suffix>``, N the number of its piece. A comparison's
folder holds ``comparison.json``, ``comparison.html`` and ``comparison.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "AUDIT_FILES",
    "AUDIT_HTML",
    "AUDIT_JSON",
    "AUDIT_MD",
    "COMPARISON_FILES",
    "COMPARISON_HTML",
    "COMPARISON_JSON",
    "COMPARISON_MD",
    "OUTPUT_FILES",
    "PREDICTIONS",
    "RECORDS",
    "RECORDS_PARQUET",
    "RECORD_SHARDS",
    "REPORT_HTML",
    "REPORT_MD",
    "RESULTS",
    "ROWS",
    "STATS",
    "STAT_SHARDS",
    "part_file",
    "part_files",
    "rows_in",
]

RESULTS = "results.json"
"""The result of the run: every metric's value, interval and definition, the slices, the
failures, the data and the signature (:class:`pingce.EvaluationResult` as JSON)."""
RECORDS = "records.jsonl"
"""One JSON line per record: its id, line, ``context`` (the record's context fields that no
metric reads, whole: the suite's ``context:`` and ``--context``, with ``--model`` the prompt's
fields; a field the record lacks is not there, and a record with none has no ``context``), with
``--model`` its ``model`` call (the messages sent, the tools' names, the whole answer, prompt and
completion tokens, latency, whether the cache answered, the cost where the suite sets a price,
its line in predictions.jsonl), with the LLM judge its ``judge`` (what the judge was asked and
answered), with repeats its ``repeat`` (and with ``--judge-repeats`` its ``judge_call``) and
``flaky`` (its record flagged flaky for a 0/1 metric: a line a record x repeat x judge call),
each metric's value (``values``) and why a record missed a metric (``misses``)
(:mod:`pingce.runfolder.records`). The input fields the suite read are not echoed (the data
file holds them; the line says where): ``--records-fields all`` adds them as ``fields``. After
``pingce audit RUN --labels SHEET``, each record people checked whole has, last, ``audit``:
``{"verified": true, "stratum": h, "pairs": [{"a", "b", "judge", "human"}, ...]}`` (a similarity
judge's pairs: both texts, the judge's score, the person's label in [0, 1]) and/or ``"grades":
{"task": {"judge", "human"}}`` (answers graded by a model, on the scale's units); the other
records have none. A later audit replaces the marks; :data:`AUDIT_JSON` lists the same records."""
RECORDS_PARQUET = "records.parquet"
"""``--records parquet``: records.jsonl's rows as one Parquet file (zstd), a column each
(``id``, ``line``, ``value.<metric>``, ``miss.<metric>``, ``context.<field>``, ``model.<key>``,
``judge.<key>``, with ``--records-fields all`` ``field.<field>``), for runs too large for JSON
Lines (:mod:`pingce.runfolder.records_parquet`; pyarrow: ``pip install 'pingce[files]'``)."""
RECORD_SHARDS = "records"
"""``--engine ray``: records.jsonl as Parquet shards (``part-N.parquet``)."""
STATS = "stats.npz"
"""The run's per-record statistics as NumPy arrays, which ``pingce compare RUN_A RUN_B`` pairs
without evaluating again (:mod:`pingce.runfolder.stats`)."""
STAT_SHARDS = "stats"
"""``--engine ray``: stats.npz a piece (``part-N.npz``)."""
PREDICTIONS = "predictions.jsonl"
"""``--model``: the records as the model under test answered them, one JSON line each, each with
its prediction (the whole ``chat.completion``) in the suite's prediction field; the same record's
records.jsonl line has the call itself under ``model`` (the messages sent, the answer, tokens,
latency, cache; its ``predictions_line`` is the line here)."""
REPORT_MD = "report.md"
"""The report as Markdown: the metrics with their intervals and definitions."""
REPORT_HTML = "report.html"
"""The report as one HTML page (no server needed): metrics, charts and the records."""

AUDIT_JSON = "audit.json"
"""``pingce audit RUN --labels SHEET``: the judge's agreement with the people and every metric
corrected (:class:`pingce.audits.runs.AuditResult` as JSON), in the run's folder beside
``audit.md`` (or in ``--out DIR``, with ``audit.html``); report.html shows it."""
AUDIT_MD = "audit.md"
"""The audit as Markdown."""
AUDIT_HTML = "audit.html"
"""The audit as a page of its own (``pingce audit --out DIR``; a run's report.html has it)."""
AUDIT_FILES = (AUDIT_JSON, AUDIT_MD, AUDIT_HTML)

OUTPUT_FILES = (RESULTS, RECORDS, REPORT_MD, REPORT_HTML, STATS)
"""The files of a run folder that every local run writes (stats.npz but for a result read back
from results.json alone)."""

ROWS = (RECORDS, RECORDS_PARQUET, RECORD_SHARDS, STATS, STAT_SHARDS)
"""The per-record files and their variants: a run writing one removes the others (never another
run's rows or statistics beside this run's result)."""

COMPARISON_JSON = "comparison.json"
"""A comparison's result: per metric both values, the difference, its paired interval and tests
(:class:`pingce.ComparisonResult` as JSON)."""
COMPARISON_HTML = "comparison.html"
"""A comparison as one HTML page, with the records that flipped."""
COMPARISON_MD = "comparison.md"
"""A comparison as Markdown."""
COMPARISON_FILES = (COMPARISON_JSON, COMPARISON_HTML, COMPARISON_MD)


def part_file(folder: str | os.PathLike[str], piece: int, suffix: str) -> str:
    """The path of piece number ``piece``'s shard in ``folder`` (``part-00007.npz``)."""
    return os.path.join(folder, f"part-{piece:05d}{suffix}")


def part_files(folder: str | os.PathLike[str], suffix: str) -> list[Path]:
    """The shards ``part-N<suffix>`` in ``folder`` in the order of their pieces (by the number
    N, whatever its digits: ``part-100000`` comes after ``part-99999``)."""
    found = Path(folder).glob(f"part-*{suffix}")
    return sorted(found, key=lambda p: (int(p.name[5 : -len(suffix)]), p.name))


def rows_in(folder: str | os.PathLike[str]) -> str:
    """The name of what holds the per-record rows in a run folder: records.jsonl,
    records.parquet or records/ (the first found; records.jsonl when none is)."""
    path = Path(folder)
    if (path / RECORDS_PARQUET).is_file() and not (path / RECORDS).is_file():
        return RECORDS_PARQUET
    if (path / RECORD_SHARDS).is_dir() and not (path / RECORDS).is_file():
        return RECORD_SHARDS + "/"
    return RECORDS
