"""The records encoder of report.html: a run's per-record rows (:class:`~pingce.results.RecordRows`)
as the JSON that the page's script (``report/assets/report.js``) reads, written a column at a time
(one orjson call per column, values rounded to the decimals the page shows, repeated reasons
written once and referred to by number, misses stored sparsely), and escaped so that no record
text can end the ``<script type="application/json">`` element that holds it."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from itertools import repeat
from typing import Any

import numpy as np
import orjson

from .._json import json_texts
from ..results import EvaluationResult, RecordRows

__all__ = [
    "DIGITS",
    "FIELD_CHARS",
    "FREQUENT",
    "escaped",
    "page_ids",
    "records_json",
    "script_json",
    "slice_groups",
]

FIELD_CHARS = 120
"""Characters of a field's value kept in the page (longer values end in an ellipsis; records.jsonl
has them whole)."""
DIGITS = 4
"""Decimals of the per-record values in the page (records.jsonl has them at full precision)."""


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
    """A field as a JSON array. When the whole column's JSON fits the page's budget (on average
    FIELD_CHARS a record) it is that JSON, values as they are (the page's script shows an object
    as its JSON text and cuts long texts); otherwise numbers stay numbers and every other value
    is its JSON text cut at FIELD_CHARS. None, NaN and infinities are null."""
    if isinstance(column, np.ndarray) and column.dtype.kind in "fiub":
        return _rounded(column.astype(np.float64) if column.dtype.kind == "b" else column)
    values = column.tolist() if isinstance(column, np.ndarray) else list(column)
    try:
        whole = orjson.dumps(values)
    except TypeError:  # an integer beyond 64 bits, or a value orjson cannot write
        whole = b""
    if whole and len(whole) <= 2 + FIELD_CHARS * len(values):
        return whole
    others = [i for i, v in enumerate(values) if not (v is None or type(v) in _SCALARS)]
    texts = json_texts([values[i] for i in others]) if others else []
    out: list[Any] = values
    for i, text in zip(others, texts, strict=True):
        out[i] = text.decode("utf-8")
    for i, v in enumerate(out):
        if type(v) is str and len(v) > FIELD_CHARS:
            out[i] = _cut(v)
        elif type(v) is float and not math.isfinite(v):
            out[i] = None
        elif type(v) is int and not -(2**63) <= v < 2**64:
            out[i] = json_texts([v])[0].decode("utf-8")
    return orjson.dumps(out)


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


def _cut(text: str) -> str:
    return text[: FIELD_CHARS - 1] + "…"


def _slice_codes(result: EvaluationResult, rows: RecordRows) -> list[np.ndarray | None]:
    """For each slice field (in :func:`slice_groups`' order), each record's position among that
    field's slice values in results.json (-1 when its value is not among them; the values named
    as the engine names slices), or None when the rows do not hold the field."""
    out: list[np.ndarray | None] = []
    for field, members in slice_groups(result).items():
        column = rows.fields.get(field)
        if column is None:
            out.append(None)
            continue
        if isinstance(column, np.ndarray) and column.dtype.kind == "f":
            names = [
                "(missing)" if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
                for v in column.tolist()
            ]
        else:
            names = ["(missing)" if v is None else str(v) for v in column]
        index = {value: k for k, (value, _) in enumerate(members)}
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


def records_json(result: EvaluationResult, rows: RecordRows) -> Iterator[bytes]:
    """The records as the JSON the page's script reads, a column at a time (not yet escaped
    for a script element): ids, lines, the metrics' names, ``values`` (a column per metric),
    ``fields`` (a column per field), ``misses`` (per metric that missed somewhere: the rows that
    missed and each one's reason as a number), ``slices`` (per slice field, each record's slice
    value as a number), ``reasons`` (the distinct reasons, by number), ``frequent`` (the
    numbers of the most frequent reasons, most frequent first) and ``context`` (a column per
    context field, values whole, null where a record lacks it)."""
    numpy_option = orjson.OPT_SERIALIZE_NUMPY
    metrics = list(dict.fromkeys([*rows.values, *rows.misses]))
    yield b'{"n":' + str(rows.n).encode() + b',"field_chars":' + str(FIELD_CHARS).encode()
    yield b',"ids":'
    yield orjson.dumps(page_ids(result, rows))
    yield b',"lines":' + orjson.dumps(np.asarray(rows.lines, dtype=np.int64), option=numpy_option)
    yield b',"metrics":' + orjson.dumps(metrics) + b',"values":{'
    for k, (name, column) in enumerate(rows.values.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _rounded(np.asarray(column))
    yield b'},"fields":{'
    for k, (name, column) in enumerate(rows.fields.items()):
        yield (b"," if k else b"") + orjson.dumps(name) + b":" + _field_texts(column)
    yield b'},"context":{'
    for k, (name, column) in enumerate(rows.context.items()):
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
    for k, positions in enumerate(_slice_codes(result, rows)):
        yield (b"," if k else b"") + (
            b"null" if positions is None else orjson.dumps(positions, option=numpy_option)
        )
    counts = np.zeros(len(code), dtype=np.int64)
    for tally in tallies:
        counts[: len(tally)] += tally
    frequent = np.argsort(-counts, kind="stable")[:FREQUENT]
    yield b'],"reasons":' + orjson.dumps(list(code))
    yield b',"frequent":' + orjson.dumps(frequent.astype(np.int64), option=numpy_option) + b"}"


FREQUENT = 200
"""Reasons offered in the reason filter's list (the most frequent)."""


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
