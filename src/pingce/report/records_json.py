"""The records encoder of report.html: a run's per-record rows (:class:`~pingce.results.RecordRows`)
as the JSON that the page's script (``report/assets/report.js``) reads, written a column at a time
(one orjson call per column, values rounded to the decimals the page shows, repeated reasons
written once and referred to by number, misses stored sparsely), and escaped so that no record
text can end the ``<script type="application/json">`` element that holds it."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import orjson

from .._json import json_texts
from ..results import EvaluationResult, RecordRows
from ..runfolder.records import FieldTexts
from ..runfolder.stats import SavedStats

__all__ = [
    "DIGITS",
    "FIELD_CHARS",
    "FREQUENT",
    "REPORT_RECORDS",
    "STAT_COLUMNS",
    "VALUE_CHARS",
    "Embedded",
    "escaped",
    "page_ids",
    "record_measures",
    "records_json",
    "script_json",
    "slice_groups",
    "stat_rows",
]

FIELD_CHARS = 120
"""Characters of a field's value shown in the records table (longer values end in an ellipsis
there; the record's detail view shows them whole)."""
VALUE_CHARS = 20_000
"""Characters of a field's value (or of its JSON text) kept in the page: the detail view shows
values whole up to this length; a longer one is kept to it, ending in an ellipsis, and the view
says that the data file has it whole."""
DIGITS = 4
"""Decimals of the per-record values in the page (records.jsonl has them at full precision)."""
REPORT_RECORDS = 2000
"""Records report.html embeds by default, the first ones (``--report-records``): the page stays
quick to open and to write at any size, and says where all of them are."""


@dataclass(frozen=True)
class Embedded:
    """What the page's records are part of: ``total`` records in the run, all of them in
    ``rest`` (the run folder's records.jsonl, records.parquet or records/)."""

    total: int
    rest: str


def slice_groups(result: EvaluationResult) -> dict[str, list[tuple[str, str]]]:
    """Slice keys by field: ``{field: [(value, key), ...]}`` in results.json's order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for key in result.slices:
        field, _, value = key.partition("=")
        groups.setdefault(field, []).append((value, key))
    return groups


def _rounded(column: np.ndarray) -> bytes:
    """A float or integer column as a JSON array (floats to DIGITS decimals, NaN as null)."""
    if column.dtype.kind == "f":
        column = np.round(column.astype(np.float64), DIGITS)
        column[column == 0] = 0.0  # no -0.0
    return orjson.dumps(column, option=orjson.OPT_SERIALIZE_NUMPY)


_SCALARS = (str, int, float, bool)


def _field_texts(column: Any) -> bytes:
    """A field as a JSON array, its values whole (objects as objects) up to VALUE_CHARS
    characters each: a longer value (or an object whose JSON text is longer) is its text cut at
    VALUE_CHARS. Numbers stay numbers; None, NaN and infinities are null; an integer beyond
    64 bits is its text."""
    if isinstance(column, np.ndarray) and column.dtype.kind in "fiub":
        return _rounded(column.astype(np.float64) if column.dtype.kind == "b" else column)
    values = column.tolist() if isinstance(column, np.ndarray) else list(column)
    try:
        whole = orjson.dumps(values)
    except TypeError:  # an integer beyond 64 bits, or a value orjson cannot write
        whole = b""
    if whole and (len(whole) <= 2 + VALUE_CHARS or not _any_long(values)):
        return whole
    others = [i for i, v in enumerate(values) if not (v is None or type(v) in _SCALARS)]
    texts = json_texts([values[i] for i in others]) if others else []
    out: list[Any] = values
    for i, text in zip(others, texts, strict=True):
        out[i] = _object(text)
    for i, v in enumerate(out):
        if type(v) is str and len(v) > VALUE_CHARS:
            out[i] = _cut(v)
        elif type(v) is float and not math.isfinite(v):
            out[i] = None
        elif type(v) is int and not -(2**63) <= v < 2**64:
            out[i] = json_texts([v])[0].decode("utf-8")
    return orjson.dumps(out)


_BIG = re.compile(rb"\d{20}")
"""Twenty digits in a row: maybe an integer orjson cannot write (beyond 64 bits), which the page
holds as its text (:func:`_field_texts`)."""


def _shared_texts(shared: FieldTexts | None, name: str, n: int) -> bytes | None:
    """A field's column as :func:`_field_texts` makes it, from the texts records.jsonl made of
    the same values (``shared``), when that is the same array: every value whole (none longer
    than VALUE_CHARS) and no integer beyond 64 bits; else None."""
    if shared is None or shared.n != n or not shared.shares(name):
        return None
    texts = shared.texts(name)
    if max(map(len, texts), default=0) > VALUE_CHARS:
        return None
    array = b"[" + b",".join(texts) + b"]"
    return None if _BIG.search(array) else array


def _whole_texts(column: Any) -> bytes:
    """A context field as a JSON array of its values whole (never cut: the page folds long
    ones), null where a record lacks it; a value orjson cannot write (an integer beyond 64 bits)
    as its JSON text."""
    values = list(column)
    try:
        return orjson.dumps(values)
    except TypeError:
        texts = json_texts(values)
        return orjson.dumps(
            [None if v is None else t.decode("utf-8") for v, t in zip(values, texts, strict=True)]
        )


def _any_long(values: list[Any]) -> bool:
    """Whether some value's text is longer than VALUE_CHARS (texts measured in one pass at C
    speed; objects one at a time)."""
    kinds = set(map(type, values))
    if kinds <= {str, type(None)}:
        return max(map(len, filter(None, values)), default=0) > VALUE_CHARS
    return any(map(_long, values))


def _long(value: Any) -> bool:
    """Whether a value's text (an object's JSON) is longer than VALUE_CHARS (its UTF-8 bytes
    counted for an object: never fewer than its characters)."""
    if value is None or type(value) in (int, float, bool):
        return False
    if type(value) is str:
        return len(value) > VALUE_CHARS
    return len(orjson.dumps(value)) > VALUE_CHARS


def _object(text: bytes) -> Any:
    """An object's JSON text as the page holds it: the object again when the text is short
    enough and orjson reads it back as it was, else the text (cut later when too long)."""
    decoded = text.decode("utf-8")
    if len(decoded) > VALUE_CHARS:
        return decoded
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return decoded
    # an integer beyond 64 bits reads back as a float: the text keeps its digits
    return value if orjson.dumps(value) == text else decoded


def _cut(text: str) -> str:
    return text[: VALUE_CHARS - 1] + "…"


def _saved_slice(saved: SavedStats | None, field: str, n: int) -> list[str] | None:
    """The first ``n`` records' slice names of ``field`` as the run saved them (stats.npz's
    ``slice.<field>`` codes into the manifest's values), or None where it saved none."""
    values = saved.manifest.get("slices", {}).get(field) if saved is not None else None
    codes = saved.arrays.get(f"slice.{field}") if saved is not None else None
    if values is None or codes is None:
        return None
    names: list[str] = np.asarray(values, dtype=object)[np.asarray(codes)[:n]].tolist()
    return names


def _slice_codes(
    result: EvaluationResult, rows: RecordRows, saved: SavedStats | None = None
) -> list[np.ndarray | None]:
    """For each slice field (in :func:`slice_groups`' order), each record's position among that
    field's slice values in results.json (-1 when its value is not among them; the values named
    as the engine names slices), or None when neither the rows hold the field nor ``saved``
    (the run's statistics, aligned with the rows) its slice codes: rows read back from a folder
    keep no input fields unless the run was asked to (``--records-fields all``)."""
    out: list[np.ndarray | None] = []
    for field, members in slice_groups(result).items():
        index = {value: k for k, (value, _) in enumerate(members)}
        column = rows.fields.get(field)
        if column is None:
            kept = _saved_slice(saved, field, rows.n)
            found = None if kept is None else (index.get(name, -1) for name in kept)
            out.append(None if found is None else np.fromiter(found, np.int32, rows.n))
            continue
        if isinstance(column, np.ndarray) and column.dtype.kind == "f":
            names = [
                "(missing)" if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
                for v in column.tolist()
            ]
        else:
            names = ["(missing)" if v is None else str(v) for v in column]
        out.append(np.fromiter((index.get(name, -1) for name in names), np.int32, len(names)))
    return out


def page_ids(result: EvaluationResult, rows: RecordRows) -> list[str | None]:
    """The ids the page shows: each record's id; for a record without one in a suite of units
    (a dialogue's turns: ``Signature.unit``), its unit's value and its place among the unit's
    records in line order (``d1 · 2``: the second turn of dialogue d1 in the file), so that no
    row reads as empty. records.jsonl keeps the id the record had (null)."""
    ids: list[str | None] = [None if i is None else str(i) for i in rows.ids]
    unit = result.signature.unit
    column = rows.fields.get(unit) if unit is not None else None
    if column is None or all(i is not None for i in ids):
        return ids
    units = column.tolist() if isinstance(column, np.ndarray) else list(column)
    order = np.argsort(np.asarray(rows.lines, dtype=np.int64), kind="stable").tolist()
    seen: dict[str, int] = {}
    for i in order:
        if units[i] is None:
            continue
        name = units[i] if isinstance(units[i], str) else orjson.dumps(units[i]).decode()
        seen[name] = seen.get(name, 0) + 1
        if ids[i] is None:
            ids[i] = f"{name} · {seen[name]}"
    return ids


def _numeric(column: Any) -> bool:
    """Whether a field's column holds numbers (and nulls) only, at least one."""
    if isinstance(column, np.ndarray):
        return column.dtype.kind in "fiu"
    kinds = {type(v) for v in column} - {type(None)}
    return bool(kinds) and kinds <= {int, float}


def _usage_tokens(column: Any) -> np.ndarray | None:
    """Each record's total tokens from a field holding the model's whole ``chat.completion``
    (its ``usage``), NaN where there is none; None when no value of the field has a usage."""
    if isinstance(column, np.ndarray) and column.dtype.kind != "O":
        return None
    first = next((v for v in column if v is not None), None)
    if not (isinstance(first, dict) and "usage" in first):  # not the model's answers
        return None
    tokens = np.full(len(column), np.nan)
    for i, value in enumerate(column):
        usage = value.get("usage") if isinstance(value, dict) else None
        total = usage.get("total_tokens") if isinstance(usage, dict) else None
        if isinstance(total, int | float) and not isinstance(total, bool):
            tokens[i] = total
    return None if np.isnan(tokens).all() else tokens


MEASURES = (("latency", ("latency",)), ("tokens", ("tokens",)), ("cost", ("cost",)))
"""The per-record measures the records table gives a column of their own: the first numeric
field whose name (its last part) holds one of the words; tokens also from a field holding the
model's ``chat.completion``; else, with ``--model``, the record's call (``RecordRows.model``)."""


def record_measures(rows: RecordRows) -> dict[str, str | np.ndarray]:
    """The records' latency, tokens and cost where they have them: a field's name (the column
    is the field's), or the values themselves (tokens counted from the model's answers)."""
    out: dict[str, str | np.ndarray] = {}
    for path, column in rows.fields.items():
        name = path.rsplit(".", 1)[-1].lower()
        for measure, words in MEASURES:
            if measure not in out and any(w in name for w in words) and _numeric(column):
                out[measure] = path
                break
    if "tokens" not in out:
        for column in rows.fields.values():
            tokens = _usage_tokens(column)
            if tokens is not None:
                out["tokens"] = tokens
                break
    for measure, column in _call_measures(rows.model).items():
        out.setdefault(measure, column)
    return out


def _call_measures(model: dict[str, Any]) -> dict[str, np.ndarray]:
    """``--model``: each record's call's seconds, tokens (prompt and completion) and cost, where
    some record has them (NaN for the others)."""

    def numbers(*keys: str) -> np.ndarray | None:
        if any(key not in model for key in keys):
            return None
        values = np.array(
            [[np.nan if v is None else float(v) for v in model[key]] for key in keys],
            dtype=np.float64,
        )
        total = values.sum(axis=0)
        return None if np.isnan(total).all() else total

    found = {
        "latency": numbers("latency_sec"),
        "tokens": numbers("prompt_tokens", "completion_tokens"),
        "cost": numbers("cost"),
    }
    return {measure: column for measure, column in found.items() if column is not None}


def _header(
    result: EvaluationResult,
    rows: RecordRows,
    metrics: list[str],
    measures: dict[str, str | np.ndarray],
    embedded: Embedded | None,
) -> bytes:
    """The object's first members, read before the columns: the record count, the two lengths
    of a value (the table's and the page's), the unit field (a dialogue's records are shown as
    one transcript), each metric's direction (``higher``: true, false, or null when unknown)
    and ``measures`` (:func:`record_measures`: a field's name, or a column of values); with
    ``embedded``, ``total`` (the run's records, of which the page holds the first ``n``) and
    ``rest`` (the file that holds them all)."""
    unit = result.signature.unit
    higher = [m.higher_is_better if (m := result.metrics.get(name)) else None for name in metrics]
    head = orjson.dumps(
        {
            "n": rows.n,
            "field_chars": FIELD_CHARS,
            "value_chars": VALUE_CHARS,
            "stats_columns": STAT_COLUMNS,
            "unit": unit if unit in rows.fields else None,
            "higher": higher,
            **({"total": embedded.total, "rest": embedded.rest} if embedded else {}),
        }
    )
    members = b",".join(
        orjson.dumps(key) + b":" + (orjson.dumps(v) if isinstance(v, str) else _rounded(v))
        for key, v in measures.items()
    )
    return head[:-1] + b',"measures":{' + members + b"}"


def records_json(
    result: EvaluationResult,
    rows: RecordRows,
    measures: dict[str, str | np.ndarray] | None = None,
    stats: SavedStats | None = None,
    embedded: Embedded | None = None,
    shared: FieldTexts | None = None,
) -> Iterator[bytes]:
    """The records as the JSON the page's script reads, a column at a time (not yet escaped
    for a script element): the :func:`_header` (``measures``: :func:`record_measures`' of the
    rows, by default), ids, lines, the metrics' names, ``values`` (a
    column per metric), ``fields`` (a column per field), ``misses`` (per metric that missed
    somewhere: the rows that missed and each one's reason as a number), ``slices`` (per slice
    field, each record's slice value as a number), ``reasons`` (the distinct reasons, by
    number), ``frequent`` (the numbers of the most frequent reasons, most frequent first)
    and ``context`` (a column per context field, values whole, null where a record lacks it);
    ``model`` with ``--model`` (a column per key of each record's model call, whole: the
    messages sent, the answer, tokens, latency, cache, cost); ``judge`` with the LLM judge (the
    pairs each record asked about, the judge's answers); with ``stats`` (the run's saved
    statistic blocks), :func:`stat_rows`; with ``embedded`` (the rows are the first records of
    a run of ``embedded.total``), the header's ``total`` and ``rest``; ``shared``: the fields'
    texts of these records as records.jsonl made them (:class:`~pingce.runfolder.records.
    FieldTexts`), used instead of serialising the fields again where they are the same."""
    numpy_option = orjson.OPT_SERIALIZE_NUMPY
    metrics = list(dict.fromkeys([*rows.values, *rows.misses]))
    measures = record_measures(rows) if measures is None else measures
    yield _header(result, rows, metrics, measures, embedded)
    yield b',"ids":'
    yield orjson.dumps(page_ids(result, rows))
    yield b',"lines":' + orjson.dumps(np.asarray(rows.lines, dtype=np.int64), option=numpy_option)
    yield b',"metrics":' + orjson.dumps(metrics) + b',"values":{'
    for k, (name, column) in enumerate(rows.values.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _rounded(np.asarray(column))
    yield b'},"fields":{'
    for k, (name, column) in enumerate(rows.fields.items()):
        texts = _shared_texts(shared, name, rows.n)
        array = _field_texts(column) if texts is None else texts
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + array
    yield b'},"context":{'
    for k, (name, column) in enumerate(rows.context.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _whole_texts(column)
    for part, calls in ((b"model", rows.model), (b"judge", rows.judge), (b"audit", rows.audit)):
        if calls:
            yield b'},"' + part + b'":{'
            for k, (name, column) in enumerate(calls.items()):
                yield (b"," if k else b"") + orjson.dumps(name) + b":" + _whole_texts(column)
    yield b'},"misses":{'
    code: dict[str, int] = {}
    tallies: list[np.ndarray] = []
    first = True
    for name, given in rows.misses.items():
        column = np.asarray(given, dtype=object)
        n = len(column)
        missed = np.flatnonzero(np.fromiter(map(operator.is_not, column, repeat(None)), bool, n))
        if not len(missed):
            continue
        reasons = column[missed].tolist()
        codes = np.fromiter(
            (code.setdefault(str(r), len(code)) for r in reasons), np.int64, len(reasons)
        )
        tallies.append(np.bincount(codes))
        yield (
            (b"" if first else b",")
            + orjson.dumps(name)
            + b":["
            + orjson.dumps(missed.astype(np.int64), option=numpy_option)
            + b","
            + orjson.dumps(codes, option=numpy_option)
            + b"]"
        )
        first = False
    yield b'},"slices":['
    total = embedded.total if embedded else rows.n
    aligned = stats if stats is not None and _aligned(stats, rows, total) else None
    for k, positions in enumerate(_slice_codes(result, rows, aligned)):
        yield (b"," if k else b"") + (
            b"null" if positions is None else orjson.dumps(positions, option=numpy_option)
        )
    counts = np.zeros(len(code), dtype=np.int64)
    for tally in tallies:
        counts[: len(tally)] += tally
    frequent = np.argsort(-counts, kind="stable")[:FREQUENT]
    yield b'],"reasons":' + orjson.dumps(list(code))
    yield b',"frequent":' + orjson.dumps(frequent.astype(np.int64), option=numpy_option)
    yield from stat_rows(stats, rows, embedded.total if embedded else rows.n)
    yield b"}"


FREQUENT = 200
"""Reasons offered in the reason filter's list (the most frequent)."""


STAT_COLUMNS = 32
"""Columns of a statistic's per-record rows kept in the page: a block with more columns that
vary between records keeps each record's non-zero ones only, at most this many (the detail view
says when a record has more; stats.npz has them all)."""


def _aligned(saved: SavedStats, rows: RecordRows, total: int) -> bool:
    """Whether the saved statistics are of a run of ``total`` records whose first ones are the
    rows' records in the rows' order."""
    lines = saved.arrays.get("lines")
    return (
        int(saved.manifest.get("n", -1)) == total
        and lines is not None
        and np.array_equal(np.asarray(lines)[: rows.n], np.asarray(rows.lines))
    )


def _number_column(column: np.ndarray) -> bytes:
    """A column of a statistic as a JSON array: whole numbers as integers, others rounded
    (:func:`_rounded`), NaN as null."""
    column = np.asarray(column, dtype=np.float64)
    finite = np.isfinite(column)
    if finite.all() and (column == np.round(column)).all() and np.abs(column).max() < 2**53:
        return orjson.dumps(column.astype(np.int64), option=orjson.OPT_SERIALIZE_NUMPY)
    return _rounded(column)


def _number(value: float) -> float | int | None:
    """One statistic's number as the page holds it."""
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else round(value, DIGITS)


def _constant(rows: np.ndarray) -> np.ndarray:
    """Which columns of ``rows`` hold the same number (NaN alike) for every record."""
    first = rows[:1]
    same = (rows == first) | (np.isnan(rows) & np.isnan(first))
    return np.asarray(same.all(axis=0))


def _same(row: np.ndarray, constant: np.ndarray) -> dict[str, float | int | None]:
    """The columns the same for every record, by number, with their value: all of them in a
    block of at most STAT_COLUMNS columns; in a wider one the non-zero ones (at most
    STAT_COLUMNS: the view says the others are 0)."""
    if len(row) > STAT_COLUMNS:
        constant = constant & (row != 0)
    at = np.flatnonzero(constant)[:STAT_COLUMNS].tolist()
    return {str(c): _number(float(row[c])) for c in at}


def _nonzero_pairs(rows: np.ndarray, at: np.ndarray) -> tuple[bytes, bool]:
    """Per record, its non-zero numbers in the columns ``at`` as a flat list ``[column, value,
    ...]`` (at most STAT_COLUMNS of them), and whether some record had more."""
    part = rows[:, at]
    record, where = np.nonzero(part != 0)  # NaN too
    starts = np.searchsorted(record, np.arange(rows.shape[0] + 1))
    cut = bool(np.diff(starts).max(initial=0) > STAT_COLUMNS)
    columns = at[where].tolist()
    numbers = [_number(v) for v in part[record, where].tolist()]
    out = []
    for i in range(rows.shape[0]):
        lo, hi = int(starts[i]), min(int(starts[i + 1]), int(starts[i]) + STAT_COLUMNS)
        out.append([x for k in range(lo, hi) for x in (columns[k], numbers[k])])
    return orjson.dumps(out), cut


def _stat_entry(saved: SavedStats, name: str, fed: list[str], n: int) -> bytes:
    """One statistic's per-record rows of the first ``n`` records as the page holds them (see
    :func:`stat_rows`)."""
    entry = saved.manifest["statistics"][name]
    arrays = {
        key: array if key == f"{name}.row" else array[:n]
        for key, array in saved.arrays.items()
        if key.startswith(name + ".")
    }
    head: dict[str, Any] = {
        "metrics": fed,
        "width": int(entry["width"]),
        "columns": saved.columns.get(name),
    }
    scope = arrays.get(f"{name}.scope")
    if scope is not None and not scope.all():
        head["outside"] = np.flatnonzero(~scope).tolist()
    parts = []
    if f"{name}.codes" in arrays:
        parts.append(b'"codes":' + _number_column(arrays[f"{name}.codes"]))
    elif f"{name}.row" in arrays:  # the same row for every record
        row = np.asarray(arrays[f"{name}.row"], dtype=np.float64).reshape(-1)
        head["same"] = _same(row, np.ones(len(row), dtype=bool))
    else:
        rows = np.asarray(arrays[f"{name}.rows"], dtype=np.float64)
        rows = rows.reshape(rows.shape[0], -1)
        constant = _constant(rows) if rows.shape[0] > 1 else np.zeros(rows.shape[1], bool)
        head["same"] = _same(rows[0], constant)
        varying = np.flatnonzero(~constant)
        if len(varying) <= STAT_COLUMNS:
            head["shown"] = varying.tolist()
            parts.append(
                b'"data":[' + b",".join(_number_column(rows[:, c]) for c in varying) + b"]"
            )
        else:
            pairs, head["cut"] = _nonzero_pairs(rows, varying)
            parts.append(b'"nonzero":' + pairs)
    text = orjson.dumps(head)
    return text[:-1] + b"".join(b"," + part for part in parts) + b"}"


def stat_rows(
    saved: SavedStats | None, rows: RecordRows, total: int | None = None
) -> Iterator[bytes]:
    """``,"stats":[...]``: each statistic's per-record rows (the engine's statistic blocks,
    as stats.npz keeps them), for the detail view to show what a record added to each metric:
    per statistic the metrics and tables it feeds, its ``width`` and column names (``columns``,
    null where unnamed), the records outside its scope (``outside``), and either a one-hot cell
    per record (``codes``), or its columns that vary between records (``shown``, each column's
    numbers in ``data``; whole numbers as integers, others to DIGITS decimals), or, for a block
    with more than STAT_COLUMNS varying columns, each record's non-zero ones (``nonzero``,
    ``cut`` when a record had more); columns the same for every record (a broadcast block's
    whole row) are written once (``same``). Nothing when there are no saved statistics or they
    are not of these records (``pingce report`` over a changed folder). ``total``: the run's
    records, when the rows are its first ones (report.html's bound)."""
    if saved is None or not rows.n or not _aligned(saved, rows, rows.n if total is None else total):
        return  # (no record embedded: --report-records 0)
    fed: dict[str, list[str]] = {}
    for metric, name in saved.manifest.get("metrics", {}).items():
        fed.setdefault(name, []).append(metric)
    yield b',"stats":['
    for k, name in enumerate(saved.manifest["statistics"]):
        yield (b"," if k else b"") + _stat_entry(saved, name, fed.get(name, []), rows.n)
    yield b"]"


_ESCAPES = (
    (b"&", b"\\u0026"),
    (b"<", b"\\u003c"),
    (b">", b"\\u003e"),
    ("\u2028".encode(), b"\\u2028"),
    ("\u2029".encode(), b"\\u2029"),
)


def escaped(data: bytes) -> bytes:
    """JSON text safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and the line and
    paragraph separators (which occur only inside strings) as ``\\uXXXX`` escapes."""
    for raw, escaped in _ESCAPES:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def script_json(data: bytes) -> str:
    """:func:`escaped` as text: JSON that no string in it can end a ``<script>`` element."""
    return escaped(data).decode("utf-8")
