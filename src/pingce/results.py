"""The results of a run and of a comparison: plain data that reports only read.

``pingce.evaluate`` returns an :class:`EvaluationResult`; ``result.model_dump_json()`` is the
content of results.json (see CONTRACT.md). Values are full-precision floats or ``None`` (null)
with an ``undefined_reason``; nothing is rounded here, only in reports. The per-record values
and miss reasons (records.jsonl) are :class:`RecordRows`: arrays made by the engine in its one
pass over the statistics, never a callback into the metrics. ``pingce.compare`` returns a
:class:`ComparisonResult` (comparison.json). ``to_pandas()`` and ``record_frame()`` give the same
numbers as pandas DataFrames (:mod:`pingce.frames`; pandas imported only then).
"""

from __future__ import annotations

import json
import operator
import shutil
import weakref
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import orjson
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from ._collector import collector_paused
from ._json import NON_FINITE, json_texts
from .sampling import SamplingInfo

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ComparisonResult",
    "ComparisonSlice",
    "DataInfo",
    "EvaluationResult",
    "Failures",
    "MetricComparison",
    "MetricResult",
    "RecordRows",
    "SavedStats",
    "ShardFolder",
    "Signature",
    "SignificanceTest",
    "SliceResult",
]


class ShardFolder:
    """A folder of a run's shards (``--engine ray``), removed with the last result that holds
    it (a result and its copies, shallow or deep, share it) or at :meth:`remove`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._remove = weakref.finalize(self, shutil.rmtree, path, True)

    def remove(self) -> None:
        """Remove the folder now (once)."""
        self._remove()

    def __deepcopy__(self, memo: dict[int, Any]) -> ShardFolder:
        return self  # a copy of a result shares its folder on disk


_JSON = ConfigDict(ser_json_inf_nan=NON_FINITE)
"""The JSON policy of results.json and comparison.json (:mod:`pingce._json`): NaN is null."""


class _Plain(BaseModel):
    """A result model whose keys in ``OMIT_WHEN_NONE`` are left out of its JSON when None."""

    model_config = _JSON
    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in self.OMIT_WHEN_NONE:
            if data.get(key) is None:
                data.pop(key, None)
        return data


class MetricResult(_Plain):
    """One metric's value, its confidence interval and the units it was computed over."""

    OMIT_WHEN_NONE = (
        "undefined_reason",
        "value_note",
        "ci_note",
        "failed_records",
        "model_failed_records",
        "n_records",
        "n_scored",
        "unparsed_records",
    )

    value: float | None = Field(
        description="The metric; null when undefined (see undefined_reason)."
    )
    ci_low: float | None = Field(None, description="Lower end of the bootstrap interval.")
    ci_high: float | None = Field(None, description="Upper end of the bootstrap interval.")
    n: int = Field(description="Units (records, predicted positives, ...) it was computed over.")
    undefined_reason: str | None = Field(None, description="Why the value is null.")
    value_note: str | None = Field(
        None,
        description="Where the value comes from a convention rather than the data (a 0/0 "
        "filled by the zero-division policy).",
    )
    ci_note: str | None = Field(None, description="Anything to know about the interval.")
    failed_records: int | None = Field(
        None,
        description="Records this metric needed that had failed similarity calls (judge, "
        "embedding endpoint, reranker) or a failed call to the model under test (--model): "
        "the value is null, or computed without them under --on-judge-failure skip.",
    )
    model_failed_records: int | None = Field(
        None,
        description="Of failed_records, those whose call to the model under test (--model) "
        "failed: they have no prediction, and are never scored as wrong.",
    )
    n_records: int | None = Field(
        None,
        description="Records the metric covers (the records of its task; all, for most).",
    )
    n_scored: int | None = Field(
        None,
        description="Records it was computed over: n_records less those left out after failed "
        "similarity calls.",
    )
    unparsed_records: int | None = Field(
        None,
        description="Records it covers whose prediction did not parse (never dropped: each "
        "suite's section of the README says how they score).",
    )

    def partial(self) -> str | None:
        """``scored/total`` when the metric was computed over fewer records than it covers."""
        if self.n_records is None or self.n_scored is None or self.n_scored >= self.n_records:
            return None
        return f"{self.n_scored}/{self.n_records}"

    def note(self) -> str:
        """The remarks a report shows beside the value (empty when there are none): why it is
        null or where it comes from, the interval's caveat, and unparsed predictions."""
        parts = [self.undefined_reason or self.value_note or self.ci_note or ""]
        if self.unparsed_records:
            covered = f" of {self.n_records}" if self.n_records is not None else ""
            parts.append(f"{self.unparsed_records}{covered} predictions did not parse")
        return "; ".join(part for part in parts if part)


class SliceResult(BaseModel):
    """Metrics (and tables) over the records whose slice field has one value."""

    model_config = _JSON

    n_records: int
    metrics: dict[str, MetricResult]
    tables: dict[str, dict[str, Any]] = {}


class Failures(BaseModel):
    """Failures counted during the run; a failure is never turned into a score.

    ``judge``: similarity calls that failed after retries; ``parse``: records whose prediction
    could not be parsed (scored as wrong). Suites may add counts, such as ``empty_text``: records
    a seed-compatible text score set to 0 because the seed's library raises on them, and
    ``invalid_prediction`` (every suite with a label scale): records whose predicted label is
    off the scale, blank or null (scored as wrong; left out of the kappas, with a note).
    """

    model_config = ConfigDict(extra="allow", ser_json_inf_nan=NON_FINITE)

    judge: int = 0
    parse: int = 0


class Signature(BaseModel):
    """Everything needed to reproduce the numbers."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan=NON_FINITE)

    seed: int
    bootstrap: int
    ci_method: str
    ci_level: float
    bootstrap_method: str = "multinomial"
    """``multinomial`` (n records drawn with replacement) or ``poisson`` (a Poisson(1) weight
    per record keyed on the record)."""
    similarity: str | None
    unit: str | None = None
    """The field whose values the bootstrap resamples (whole dialogues), or None for records."""
    zero_division: float | None
    labels: list[str] | None
    metrics: dict[str, str]
    versions: dict[str, str]


class DataInfo(BaseModel):
    """Where the records came from."""

    model_config = _JSON

    source: str
    n_loaded: int
    id_field: str
    field_map: dict[str, str] = {}
    """The data's column for each suite field read from another name (``--map``, ``fields:``)."""
    encoding: str | None = None
    """The text encoding the records were read in (``utf-8``, ``gb18030``, ...: detected, or
    ``--encoding``); None for a source that is not text (Parquet, Excel, a frame)."""


@dataclass
class RecordRows:
    """Per-record values and miss reasons, by column (what records.jsonl holds).

    ``ids`` are the records' ids (None for a record without one), ``lines`` their line numbers,
    ``fields`` the values of the fields the suite read (labels as their names), ``values`` one
    float array per metric (NaN where undefined) and ``misses`` one object array per metric (the
    reason a record missed, None where it did not or nothing is known)."""

    ids: list[str | None]
    lines: np.ndarray
    fields: dict[str, Any] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    misses: dict[str, np.ndarray] = field(default_factory=dict)

    CHUNK = 65536

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

    def take(self, index: np.ndarray) -> RecordRows:
        """The rows of the records at ``index`` (positions), in that order."""
        at = np.asarray(index, dtype=np.int64)
        positions = at.tolist()

        def pick(column: Any) -> Any:
            if isinstance(column, np.ndarray):
                return column[at]
            return [column[i] for i in positions]

        return RecordRows(
            [self.ids[i] for i in positions],
            np.asarray(self.lines)[at],
            {k: pick(v) for k, v in self.fields.items()},
            {k: v[at] for k, v in self.values.items()},
            {k: v[at] for k, v in self.misses.items()},
        )

    @classmethod
    def from_jsonl(cls, lines: Iterable[bytes], source: str) -> RecordRows:
        """The lines of records.jsonl (:meth:`iter_jsonl`) back into columns; ``source`` names
        them in the error of a line that is not JSON."""
        from .errors import InputError

        ids: list[str | None] = []
        numbers: list[int] = []
        fields: dict[str, list[Any]] = {}
        values: dict[str, list[float]] = {}
        misses: dict[str, list[Any]] = {}
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise InputError(f"not valid JSON ({exc})", source=source, line=number) from None
            i = len(ids)
            ids.append(row.get("id"))
            numbers.append(int(row.get("line") or number))
            # a column first seen on this line is padded for the lines before it (made only
            # then: a default built on every line would make reading quadratic in the lines)
            for column, data in (("fields", fields), ("misses", misses)):
                for key, value in (row.get(column) or {}).items():
                    if key not in data:
                        data[key] = [None] * i
                    data[key].append(value)
            for key, value in (row.get("values") or {}).items():
                if key not in values:
                    values[key] = [np.nan] * i
                values[key].append(np.nan if value is None else value)
            n = i + 1
            for data in (fields, misses):
                for column_values in data.values():
                    if len(column_values) < n:
                        column_values.append(None)
            for floats in values.values():
                if len(floats) < n:
                    floats.append(np.nan)
        return cls(
            ids,
            np.asarray(numbers, dtype=np.int64),
            {k: np.asarray(v, dtype=object) for k, v in fields.items()},
            {k: np.asarray(v, dtype=np.float64) for k, v in values.items()},
            {k: np.asarray(v, dtype=object) for k, v in misses.items()},
        )

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """One dictionary per record: id, line, the fields read, values and miss reasons, as
        plain JSON data (what the record's records.jsonl line reads back as: an evidence item
        an object, a tuple a list, NaN None); made a chunk at a time, so a million records never
        sit in memory as a million dictionaries."""
        for start in range(0, self.n, self.CHUNK):
            stop = min(start + self.CHUNK, self.n)
            fields = [
                (path, _json_data(_plain(column[start:stop])))
                for path, column in self.fields.items()
            ]
            values = [(name, _plain(column[start:stop])) for name, column in self.values.items()]
            misses = [(name, column[start:stop]) for name, column in self.misses.items()]
            ids, lines = self.ids[start:stop], self.lines[start:stop].tolist()
            for i in range(stop - start):
                row: dict[str, Any] = {
                    "id": ids[i],
                    "line": lines[i],
                    "fields": {path: column[i] for path, column in fields},
                    "values": {name: column[i] for name, column in values},
                }
                missed = {name: column[i] for name, column in misses if column[i] is not None}
                if missed:
                    row["misses"] = missed
                yield row

    def iter_jsonl(
        self, rows: int = 4096, start: int = 0, stop: int | None = None
    ) -> Iterator[bytes]:
        """The text of records.jsonl, ``rows`` lines at a time: byte for byte
        ``orjson.dumps(row) + b"\\n"`` for each row of :meth:`iter_rows`, but made a column at a
        time (one orjson call per column, values that repeat serialised once, neighbouring
        columns of few distinct values joined once per distinct combination) instead of a
        dictionary per record. ``start`` and ``stop``: only the records in that range (a line
        depends on its own record alone, so the text of a range is that part of the whole)."""
        columns, closing = _row_template(
            [
                b'{"id":',
                self.ids,
                b',"line":',
                self.lines,
                b',"fields":{',
                *_members(self.fields),
                b'},"values":{',
                *_members(self.values),
                b"}",
            ]
        )
        misses = [(orjson.dumps(name) + b":", column) for name, column in self.misses.items()]
        end = self.n if stop is None else min(stop, self.n)
        for first in range(start, end, rows):
            last = min(first + rows, end)
            with collector_paused():  # many small containers, no cycles
                pieces = [_fragments(column[first:last], text) for text, column in columns]
                pieces.extend(_endings(closing, misses, first, last))
                merged = _merged(pieces, last - first)
                text = b"".join(map(b"".join, zip(*merged, strict=True)))
            yield text


@dataclass
class SavedStats:
    """A run's per-record statistic blocks as plain arrays: the content of stats.npz, what a
    later comparison pairs without evaluating again (:mod:`pingce.engine.saved` makes it from
    the blocks and makes blocks of it).

    ``manifest`` is JSON-able: ``format``, ``n`` (records), ``suite``, ``statistics`` (per
    statistic name ``s0``, ``s1``...: ``key`` (the statistic's identity, as text), ``width``,
    ``layout`` (``codes`` or ``rows``), ``decomposable``, ``counts``), ``metrics`` (each
    metric's and table's statistic name), ``unit`` (the unit field, or None) and ``slices``
    (per slice field, its values in code order), and ``match_by`` when ``match`` is kept.

    ``arrays``: ``ids_json`` (the ids as one JSON array in UTF-8 bytes, null for a record
    without one; files of earlier versions hold ``ids``, a text array instead) and
    ``ids_missing`` (marks records without an id; then ``match``, in a suite with ``match_by``
    fields, holds each record's values of them as a JSON array), ``lines``, ``units`` (unit
    codes, in a unit suite), per statistic ``<name>.codes`` or ``<name>.rows`` (or
    ``<name>.row``: one row that every record shares) and, when present, ``<name>.scope``,
    ``<name>.unparsed``, ``<name>.left_out`` (boolean masks), and ``slice.<field>`` (a code per
    record into that slice field's values)."""

    FORMAT: ClassVar[int] = 1

    manifest: dict[str, Any]
    arrays: dict[str, np.ndarray]

    @classmethod
    def load(cls, path: Any) -> SavedStats:
        """Read stats.npz (no pickled objects: plain arrays and the manifest as JSON text)."""
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        manifest = orjson.loads(str(arrays.pop("manifest")))
        if manifest.get("format") != cls.FORMAT:
            raise ValueError(f"{path}: stats.npz format {manifest.get('format')} is not known")
        return cls(manifest, arrays)

    def save(self, path: Any) -> None:
        """Write stats.npz: every array as ``<name>.npy`` and the manifest as JSON text
        (``manifest.npy``), in an uncompressed zip that ``numpy.load`` reads without pickles.
        The members carry a fixed date, so the same statistics give the same bytes."""
        members = {"manifest": np.array(orjson.dumps(self.manifest).decode("utf-8"))}
        members.update(self.arrays)
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name, array in members.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                with zf.open(info, "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)

    def ids(self) -> list[str | None]:
        """The records' ids (None for a record without one)."""
        if "ids_json" in self.arrays:
            return list(orjson.loads(self.arrays["ids_json"].tobytes()))
        ids: list[str | None] = self.arrays["ids"].tolist()  # written by earlier versions
        missing = self.arrays.get("ids_missing")
        if missing is not None:
            for i in np.flatnonzero(missing).tolist():
                ids[i] = None
        return ids


@dataclass
class _Coded:
    """A column of row texts as the distinct texts and a code per row (``texts[code]``)."""

    texts: list[bytes]
    codes: np.ndarray

    def rows(self) -> list[bytes]:
        out: list[bytes] = _objects(self.texts)[self.codes].tolist()
        return out

    def then(self, other: _Coded, limit: int) -> _Coded | None:
        """This column's text followed by ``other``'s, as one column; None when the rows hold
        more than ``limit`` distinct combinations."""
        width = len(other.texts)
        pairs = self.codes * width + other.codes
        seen = np.zeros(len(self.texts) * width, dtype=bool)
        seen[pairs] = True
        combinations = np.flatnonzero(seen)
        if len(combinations) > limit:
            return None
        renumber = np.cumsum(seen) - 1
        texts = [self.texts[c // width] + other.texts[c % width] for c in combinations.tolist()]
        return _Coded(texts, renumber[pairs])


Pieces = list[bytes] | _Coded


def _merged(pieces: list[Pieces], n: int) -> list[list[bytes]]:
    """The row texts of each piece, neighbouring coded pieces joined while their rows hold few
    distinct combinations (a row is then joined from fewer, shared pieces)."""
    limit = max(1, n // 4)
    out: list[list[bytes]] = []
    group: _Coded | None = None
    for piece in pieces:
        if isinstance(piece, _Coded):
            joined = group.then(piece, limit) if group is not None else piece
            if joined is None:
                assert group is not None
                out.append(group.rows())
                joined = piece
            group = joined
            continue
        if group is not None:
            out.append(group.rows())
            group = None
        out.append(piece)
    if group is not None:
        out.append(group.rows())
    return out


def _endings(
    closing: bytes, misses: list[tuple[bytes, Any]], start: int, stop: int
) -> list[Pieces]:
    """Per row of [start, stop), the pieces after the last column: ``closing``, the metrics the
    row missed as ``,"misses":{"metric":"reason",...}`` (nothing when none), the end of the row
    and of its line. Made a metric at a time (a piece per metric, empty where it did not miss).
    """
    n = stop - start
    some = np.zeros(n, dtype=bool)  # the row missed an earlier metric (a comma goes first)
    entries: list[Pieces] = []
    for key, column in misses:
        reasons = column[start:stop]
        missed = np.fromiter(map(operator.is_not, reasons, repeat(None)), bool, n)
        if missed.any():
            entries.append(_entries(reasons, missed, some, key))
            some |= missed
    codes = some.astype(np.int64)
    opening = _Coded([closing, closing + b',"misses":{'], codes)
    return [opening, *entries, _Coded([b"}\n", b"}}\n"], codes)]


def _entries(reasons: np.ndarray, missed: np.ndarray, some: np.ndarray, key: bytes) -> Pieces:
    """One metric's ``"metric":"reason"`` per row that missed it (after a comma when an earlier
    metric was missed too), empty where it did not."""
    texts = np.full(len(reasons), b"", dtype=object)
    for rows, prefix in ((missed & ~some, key), (missed & some, b"," + key)):
        if rows.any():
            texts[rows] = _objects(_rows(_fragments(reasons[rows], prefix)))
    plain: list[bytes] = texts.tolist()
    return _coded(plain) or plain


def _coded(texts: list[bytes]) -> _Coded | None:
    """``texts`` as distinct texts and codes, when at most half are distinct (else None)."""
    found = _distinct_codes(texts)
    return None if found is None else _Coded(*found)


def _distinct_codes(values: list[Any]) -> tuple[list[Any], np.ndarray] | None:
    """The distinct values and each value's code among them, when at most half of the values
    are distinct (else None: coding would not pay)."""
    distinct = list(set(values))
    if 2 * len(distinct) > len(values):
        return None
    index = {value: code for code, value in enumerate(distinct)}
    return distinct, np.fromiter(map(index.__getitem__, values), np.int64, len(values))


def _rows(piece: Pieces) -> list[bytes]:
    return piece.rows() if isinstance(piece, _Coded) else piece


def _objects(items: list[bytes]) -> np.ndarray:
    """``items`` as an object array (numpy would make fixed-width bytes of a list of bytes)."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _members(columns: dict[str, Any]) -> list[bytes | Any]:
    """The members of a JSON object of columns: each name's text, then its column."""
    out: list[bytes | Any] = []
    for k, (name, column) in enumerate(columns.items()):
        out.extend([(b"," if k else b"") + orjson.dumps(name) + b":", column])
    return out


def _row_template(segments: list[bytes | Any]) -> tuple[list[tuple[bytes, Any]], bytes]:
    """(text before it, column) for each column of ``segments`` (texts and columns in row
    order, texts merged), and the text after the last column."""
    columns: list[tuple[bytes, Any]] = []
    text = b""
    for segment in segments:
        if isinstance(segment, bytes):
            text += segment
        else:
            columns.append((text, segment))
            text = b""
    return columns, text


_SHARED = {str, bool, type(None)}
"""Types whose values may be serialised once per distinct value: equal values of these types
serialise alike (unlike 1, 1.0 and True, or 0.0 and -0.0, which compare equal)."""


def _fragments(values: Any, prefix: bytes) -> Pieces:
    """``prefix`` followed by ``orjson.dumps`` of each value, as it appears inside a row (NaN
    of a float array: null); values that repeat are serialised once (and coded)."""
    if isinstance(values, np.ndarray):
        if values.dtype in (np.float64, np.int64):
            return _number_fragments(values, prefix)
        values = values.tolist()
    if set(map(type, values)) <= _SHARED:
        found = _distinct_codes(values)
        if found is not None:
            distinct, codes = found
            return _Coded(json_texts(distinct, prefix), codes)
    return json_texts(values, prefix)


def _number_fragments(values: np.ndarray, prefix: bytes) -> Pieces:
    """:func:`_fragments` of a float64 or int64 array: numbers that repeat (a metric of 0 or 1
    per record, say) serialised once; floats told apart by their bits (0.0 and -0.0 differ)."""
    distinct, inverse = np.unique(values.view(np.int64), return_inverse=True)
    if 2 * len(distinct) > len(values):
        return json_texts(values, prefix)  # orjson writes the numbers as Python's
    return _Coded(json_texts(distinct.view(values.dtype), prefix), inverse.reshape(-1))


_JSON_SCALARS = {str, int, bool, type(None)}
"""Types that are plain JSON data as they are."""


def _json_data(values: list[Any]) -> list[Any]:
    """A column of field values as the plain JSON data a records.jsonl line holds: a value of
    another type (an evidence item, a tuple, a float, a numpy number) written as the line
    writes it (:func:`pingce._json.json_texts`) and read back by the standard library
    (which, unlike orjson, reads an integer beyond 64 bits as that integer)."""
    if set(map(type, values)) <= _JSON_SCALARS:
        return values
    texts = json_texts(values)
    pairs = zip(values, texts, strict=True)
    return [v if type(v) in _JSON_SCALARS else json.loads(t) for v, t in pairs]


def _plain(values: Any) -> list[Any]:
    """A column as a list: numeric arrays with NaN as None, object arrays as they are."""
    if not isinstance(values, np.ndarray):
        return list(values)
    out: list[Any] = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(np.isnan(values)):
            out[i] = None
    return out


class EvaluationResult(_Plain):
    """The whole result of a run (the content of results.json)."""

    OMIT_WHEN_NONE = ("profile",)

    pingce_version: str
    suite: str
    n_records: int
    metrics: dict[str, MetricResult]
    tables: dict[str, dict[str, Any]] = {}
    slices: dict[str, SliceResult] = {}
    failures: Failures = Failures()
    signature: Signature
    data: DataInfo
    sampling: SamplingInfo | None = None
    similarity: dict[str, Any] | None = None
    """What the similarity backend did: pairs, requests, cache hits, failures, tokens, cost,
    latency (present when a metric needed similarities)."""
    model: dict[str, Any] | None = None
    """What ``--model`` did: the model, requests, cached answers, failures, tokens, cost,
    latency (present when the model under test was run)."""
    definitions: dict[str, str] = {}
    notes: list[str] = Field(
        default_factory=list, description="Things to know about this run (deprecated names...)."
    )
    profile: dict[str, float] | None = Field(
        None, description="Seconds spent in each phase of the run (with --profile)."
    )

    _records: RecordRows | None = PrivateAttr(default=None)
    _stats: SavedStats | Callable[[], SavedStats] | None = PrivateAttr(default=None)
    _predictions: list[dict[str, Any]] | None = PrivateAttr(default=None)
    _record_shards: Any = PrivateAttr(default=None)
    _stat_shards: Any = PrivateAttr(default=None)
    _shard_folder: ShardFolder | None = PrivateAttr(default=None)

    def value(self, name: str) -> float | None:
        """Shortcut: the value of metric ``name``."""
        return self.metrics[name].value

    def attach_records(self, rows: RecordRows) -> None:
        """Attach the per-record values and reasons (the engine does, once per run)."""
        self._records = rows

    @property
    def records(self) -> RecordRows | None:
        """Per-record values and miss reasons, by column (None for a result read from JSON)."""
        return self._records

    def attach_record_shards(self, folder: Any) -> None:
        """Attach the folder of Parquet shards of per-record values (``--engine ray``: each
        piece's workers write ``part-NNNNN.parquet``; the outputs' ``records/``)."""
        self._record_shards = folder

    @property
    def record_shards(self) -> Any:
        """The folder of the run's per-record Parquet shards (``--engine ray``), or None."""
        return self._record_shards

    def attach_stat_shards(self, folder: Any) -> None:
        """Attach the folder of the run's saved statistics as shards (``--engine ray``: each
        piece's worker writes ``part-NNNNN.npz``; the outputs' ``stats/``): :attr:`stats` joins
        them when first asked for (:func:`pingce.stat_shards.read_stat_shards`)."""
        from .stat_shards import read_stat_shards

        self._stat_shards = folder
        self._stats = lambda: read_stat_shards(folder)

    @property
    def stat_shards(self) -> Any:
        """The folder of the run's saved statistics as shards (``--engine ray``), or None."""
        return self._stat_shards

    def attach_shard_folder(self, folder: ShardFolder) -> None:
        """Hold the folder of the run's shards (``--engine ray``): it lasts as long as this
        result or a copy of it does."""
        self._shard_folder = folder

    def release_shards(self) -> None:
        """Remove the folder of the run's shards now (``--engine ray``; the written outputs
        hold links to them), for this result and its copies: :attr:`record_shards` and
        :attr:`stat_shards` are None after, and :attr:`stats` too unless it was read. Nothing
        to do for a local run."""
        if self._shard_folder is None:
            return
        self._shard_folder.remove()
        self._shard_folder = self._record_shards = self._stat_shards = None
        if callable(self._stats):
            self._stats = None

    def attach_predictions(self, records: list[dict[str, Any]]) -> None:
        """Attach the input records with the model's answers (``--model``; the engine does)."""
        self._predictions = records

    @property
    def predictions(self) -> list[dict[str, Any]] | None:
        """The records the model answered, its answers filled (predictions.jsonl; None when
        the run did not call the model)."""
        return self._predictions

    def attach_stats(self, stats: SavedStats | Callable[[], SavedStats]) -> None:
        """Attach the per-record statistic blocks as plain arrays, or what makes them when they
        are first asked for (the engine does)."""
        self._stats = stats

    @property
    def stats(self) -> SavedStats | None:
        """The per-record statistic blocks (stats.npz; None for a result read from JSON)."""
        if callable(self._stats):
            self._stats = self._stats()
        return self._stats

    def record_values(self) -> list[dict[str, Any]]:
        """Per-record values and miss reasons (what records.jsonl holds), as dictionaries of
        plain JSON data: ``json.dumps`` writes them."""
        return list(self.record_values_iter())

    def record_values_iter(self) -> Iterator[dict[str, Any]]:
        """The rows of records.jsonl, one at a time."""
        if self._records is None:
            return iter(())
        return self._records.iter_rows()

    def to_json(self) -> str:
        """results.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)

    def to_pandas(self) -> pd.DataFrame:
        """The metrics as a pandas DataFrame, one row per metric, in results.json's order:
        ``metric``, ``value``, ``ci_low``, ``ci_high``, ``n``, ``failed_records`` (nullable
        integer), then ``undefined_reason``, ``value_note`` and ``ci_note`` (text). A null value
        is NaN with its ``undefined_reason``. With slices, two text columns come first,
        ``slice`` (the field) and ``slice_value``, missing on the rows of all records, and each
        slice's metrics follow those rows (one slice value after another, as in results.json).
        Needs pandas (imported here, not by ``import pingce``)."""
        from .frames import entry_frame, split_slice_key

        rows: list[tuple[dict[str, Any], MetricResult]] = []
        for name, entry in self.metrics.items():
            rows.append(({"slice": None, "slice_value": None, "metric": name}, entry))
        for key, part in self.slices.items():
            field_name, value = split_slice_key(key)
            for name, entry in part.metrics.items():
                labels = {"slice": field_name, "slice_value": value, "metric": name}
                rows.append((labels, entry))
        leading = ["slice", "slice_value", "metric"] if self.slices else ["metric"]
        return entry_frame(
            "EvaluationResult.to_pandas()",
            rows,
            MetricResult.model_fields,
            leading,
            last=(
                "failed_records",
                "model_failed_records",
                "undefined_reason",
                "value_note",
                "ci_note",
            ),
        )

    def record_frame(self, *, fields: bool = False) -> pd.DataFrame:
        """Per-record values as a pandas DataFrame, one row per record in the input's order
        (records.jsonl's rows): ``id``, ``line``, then a float column per metric that has
        per-record values (named as the metric; NaN where records.jsonl has null) and, for the
        metrics whose records can miss with a reason, ``<metric>_reason`` (text, missing where the
        record did not miss). ``fields=True`` adds the fields the suite read, after ``line``.
        The rows are the ones this result holds from :func:`pingce.evaluate`; a result built from
        results.json holds none (use ``pandas.read_json("records.jsonl", lines=True)``). Needs
        pandas."""
        from .frames import record_frame

        if self._records is None:
            raise ValueError(
                "this result holds no per-record rows (results.json does not carry them): "
                "pingce.evaluate(...).record_frame() has them, or read records.jsonl with "
                'pandas.read_json("records.jsonl", lines=True)'
            )
        return record_frame("EvaluationResult.record_frame()", self._records, fields)


class SignificanceTest(_Plain):
    """One test of "no difference" between the two systems on one metric."""

    OMIT_WHEN_NONE = ("resamples", "candidate_only", "baseline_only")

    test: str = Field(
        description="paired-bootstrap-<method> (the p-value that inverts the interval), "
        "mcnemar-exact (accuracy-type metrics) or approximate-randomisation."
    )
    p_value: float | None = Field(description="Two-sided p-value; null when not computable.")
    resamples: int | None = Field(None, description="Bootstrap resamples or randomisation trials.")
    candidate_only: int | None = Field(
        None, description="McNemar: units right for the candidate only."
    )
    baseline_only: int | None = Field(
        None, description="McNemar: units right for the baseline only."
    )


class MetricComparison(_Plain):
    """One metric of both systems, their difference, its paired bootstrap interval, the tests
    of "no difference" and what they say."""

    OMIT_WHEN_NONE = ("note", "left_out")

    candidate: float | None = Field(description="The candidate's value (null when undefined).")
    baseline: float | None = Field(description="The baseline's value (null when undefined).")
    delta: float | None = Field(description="candidate - baseline; null if either is.")
    ci_low: float | None = Field(None, description="Lower end of the interval of delta.")
    ci_high: float | None = Field(None, description="Upper end of the interval of delta.")
    p_value: float | None = Field(
        None,
        description="Two-sided p-value of 'no difference' (p_method): the paired bootstrap's, "
        "which inverts the interval, so the interval excludes 0 exactly when "
        "p_value < 1 - ci_level.",
    )
    p_method: str | None = Field(None, description="The test p_value comes from.")
    p_holm: float | None = Field(
        None, description="p_value adjusted by Holm-Bonferroni across the comparison's metrics."
    )
    significant: bool | None = Field(
        None, description="p_holm < 1 - ci_level; null when there is no p-value."
    )
    verdict: str | None = Field(None, description="What the test says, in words.")
    tests: list[SignificanceTest] = Field(
        default_factory=list, description="Every test run on this metric, p_method's first."
    )
    n: int = Field(description="Units the candidate's value was computed over.")
    n_baseline: int = Field(description="Units the baseline's value was computed over.")
    higher_is_better: bool = True
    left_out: int | None = Field(
        None,
        description="Records left out of this metric's comparison because their similarity "
        "calls failed on either side (under --on-judge-failure skip both values are computed "
        "without them; under null the metric has no difference to test).",
    )
    note: str | None = Field(None, description="Why a value is null, or about the interval.")


class ComparisonSlice(BaseModel):
    """The comparison over the records whose slice field has one value."""

    model_config = _JSON

    n_records: int
    metrics: dict[str, MetricComparison]


class ComparisonResult(_Plain):
    """The content of comparison.json."""

    OMIT_WHEN_NONE = ("profile", "slices")

    pingce_version: str
    suite: str
    n_records: int
    candidate: str
    baseline: str
    metrics: dict[str, MetricComparison]
    failures: dict[str, Failures] = Field(
        default_factory=dict,
        description="Per side: parse failures, failed judge calls, records left out.",
    )
    signature: Signature
    slices: dict[str, ComparisonSlice] | None = Field(
        None,
        description="Per --slice value; Holm runs across every metric of every slice at once.",
    )
    notes: list[str] = Field(default_factory=list)
    profile: dict[str, float] | None = None

    _sides: tuple[RecordRows, RecordRows] | Callable[[], tuple[RecordRows, RecordRows]] | None = (
        PrivateAttr(default=None)
    )

    def attach_records(
        self,
        candidate: RecordRows | Callable[[], tuple[RecordRows, RecordRows]],
        baseline: RecordRows | None = None,
    ) -> None:
        """Attach both sides' per-record rows, the same records in the same order (or what
        makes both when they are first asked for): comparison.html lists the records that
        flipped from them. The engine does, for both ways of comparing."""
        if callable(candidate):
            self._sides = candidate
            return
        if baseline is None or candidate.n != baseline.n:
            raise ValueError("both sides' rows must hold the same records")
        self._sides = (candidate, baseline)

    @property
    def records(self) -> tuple[RecordRows, RecordRows] | None:
        """The candidate's and the baseline's per-record rows, paired (None when none were
        attached, as for a result read from comparison.json)."""
        if callable(self._sides):
            self._sides = self._sides()
        return self._sides

    def to_json(self) -> str:
        """comparison.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)

    def to_pandas(self) -> pd.DataFrame:
        """The comparison as a pandas DataFrame, one row per metric in comparison.json's order:
        ``metric``, ``candidate``, ``baseline``, ``delta`` (candidate - baseline), ``ci_low``,
        ``ci_high`` (its paired interval), ``p_value``, ``p_method``, ``p_holm``,
        ``significant``, ``verdict``, ``n``, ``n_baseline``, ``higher_is_better``, ``left_out``
        (nullable integer), ``note`` (text); the list of ``tests`` stays in the result. Null
        values are NaN, with the note saying why. Needs pandas (imported here, not by
        ``import pingce``)."""
        from .frames import entry_frame

        rows = [({"metric": name}, entry) for name, entry in self.metrics.items()]
        return entry_frame(
            "ComparisonResult.to_pandas()",
            rows,
            {k: v for k, v in MetricComparison.model_fields.items() if k != "tests"},
            ["metric"],
            last=("note",),
        )
