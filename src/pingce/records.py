"""Loading records: JSONL and CSV, streamed, validated, stored by column.

A suite declares which fields it reads and of which kind (:class:`FieldSpec`). The loader reads
the file one line at a time, checks each declared field, and keeps only those fields, as numpy
arrays where it can. A 2 GB JSONL file therefore costs the memory of a few arrays, not of two
gigabytes of Python dictionaries. The first bad record stops the load with an :class:`InputError`
that names the file, the line, the field and the value.
"""

from __future__ import annotations

import csv
import json
import os
import re
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson

from .errors import InputError
from .labels import LabelScale
from .progress import Advance

__all__ = [
    "FieldKind",
    "FieldSpec",
    "ParseFailure",
    "Table",
    "json_equal_key",
    "load_records",
    "parse_path",
]

FieldKind = Literal["label", "number", "string", "value", "json"]
"""``label``: a label of the suite's scale, stored as its integer code;
``number``: a JSON number (not a boolean), stored as float64 (NaN when optional and absent);
``string``: a JSON string; ``value``: any JSON scalar, stored as its text (slices, strata);
``json``: any JSON value, passed through the field's ``parser`` (a function that returns the
parsed value or raises ``ValueError`` with the reason) and stored as the parsed object."""

_MISSING = object()
_LONG_INT = re.compile(rb"\d{19,}")
_DIGITS = b"0123456789"
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> tuple[str | int, ...]:
    """Split a field path such as ``output.evidence[0].clause`` into keys and indexes."""
    if not path or path != path.strip():
        raise ValueError(f"invalid field path {path!r}")
    parts: list[str | int] = []
    pos = 0
    for match in _PATH_TOKEN.finditer(path):
        key, index = match.groups()
        between = path[pos : match.start()]
        # a key follows a dot (or starts the path); an index follows its key directly
        expected = "." if (key is not None and parts) else ""
        if between != expected:
            raise ValueError(f"invalid field path {path!r}")
        parts.append(int(index) if index is not None else key)
        pos = match.end()
    if pos != len(path) or not parts or isinstance(parts[0], int):
        raise ValueError(f"invalid field path {path!r}")
    return tuple(parts)


def _get(obj: Any, parts: tuple[str | int, ...]) -> Any:
    for part in parts:
        if isinstance(part, int):
            if not isinstance(obj, list) or part >= len(obj):
                return _MISSING
            obj = obj[part]
        else:
            if not isinstance(obj, dict):
                return _MISSING
            obj = obj.get(part, _MISSING)
            if obj is _MISSING:
                return _MISSING
    return obj


@dataclass(frozen=True)
class FieldSpec:
    """One field a suite reads from every record."""

    path: str
    kind: FieldKind
    required: bool = True
    scale: LabelScale | None = None
    minimum: float | None = None
    choices: tuple[str, ...] | None = None
    """For ``string`` fields: the values allowed."""
    parser: Callable[[Any], Any] | None = field(default=None, compare=False)
    """For ``json`` fields: turns a raw value into the stored one or raises ValueError (an
    input error naming the value). An ``identity_types`` attribute on it (a set of types it
    returns unchanged) lets the loader skip the calls for chunks made only of those types."""
    lenient: bool = False
    """For ``json`` fields: a value the parser rejects is kept as a :class:`ParseFailure` (a
    prediction that failed to parse is a wrong answer) instead of stopping the load."""
    what: str = field(default="", compare=False)
    """What the field holds, in words, for messages ("a list of function calls")."""

    def __post_init__(self) -> None:
        parse_path(self.path)
        if self.kind == "label" and self.scale is None:
            raise ValueError(f"field {self.path!r} is a label field but has no label scale")

    def describe(self) -> str:
        """What the field is read as, in words."""
        if self.what:
            return self.what
        if self.kind == "label":
            assert self.scale is not None
            return "a label (" + "/".join(self.scale.labels) + ")"
        if self.kind == "json":
            name = getattr(self.parser, "__name__", "")
            return f"JSON read by {name}" if name else "any JSON value"
        return {"number": "a number", "string": "text", "value": "a single value"}[self.kind]

    def reads_like(self, other: FieldSpec) -> bool:
        """Whether both read the field the same way (they may differ in being required)."""
        return (
            self.kind == other.kind
            and self.parser is other.parser
            and self.scale == other.scale
            and self.minimum == other.minimum
            and self.choices == other.choices
            and self.lenient == other.lenient
        )


def json_equal_key(value: Any) -> Hashable:
    """A hashable key under which two JSON values are equal exactly when they are equal as JSON:
    ``1`` and ``1.0`` match, ``true`` and ``1`` do not, objects ignore key order."""
    if type(value) is str:
        return value  # the common case; every other kind is a tuple, so none can collide
    if isinstance(value, bool) or value is None:
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("number", value)  # exact: 2**53 + 1 is not 2**53, and 10**400 does not overflow
    if isinstance(value, float):
        return ("number", int(value) if value.is_integer() else value)
    if isinstance(value, list):
        return ("array", tuple(json_equal_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, json_equal_key(v)) for k, v in value.items()))
    return ("other", repr(value))


@dataclass(frozen=True)
class ParseFailure:
    """A lenient field's value that its parser rejected: why, and the raw value."""

    reason: str
    raw: Any = None

    def __str__(self) -> str:
        return self.reason


@dataclass
class Table:
    """Validated records, by column. ``columns`` is keyed by field path; ``ids`` holds each
    record's id (a string), or None for a record without one."""

    source: str
    ids: list[str | None]
    lines: np.ndarray
    columns: dict[str, Any] = field(default_factory=dict)
    specs: dict[str, FieldSpec] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

    def first_without_id(self) -> int | None:
        """Index of the first record that has no id, or None when every record has one."""
        return next((i for i, record_id in enumerate(self.ids) if record_id is None), None)

    def column(self, path: str) -> Any:
        """The values of one field, in record order."""
        return self.columns[path]

    def take(self, index: np.ndarray) -> Table:
        """The records at ``index`` (a sample or a slice), in that order."""
        index = np.asarray(index, dtype=np.int64)
        columns: dict[str, Any] = {}
        for name, values in self.columns.items():
            if isinstance(values, np.ndarray):
                columns[name] = values[index]
            else:
                columns[name] = [values[i] for i in index]
        return Table(
            source=self.source,
            ids=[self.ids[i] for i in index],
            lines=self.lines[index],
            columns=columns,
            specs=self.specs,
        )


_CHUNK = 65536


class _Column:
    """One field's values: raw values are buffered while the file streams by, then checked and
    converted a chunk at a time (a tight loop per chunk instead of a method call per value)."""

    def __init__(self, spec: FieldSpec):
        self.spec = spec
        self.parts = parse_path(spec.path)
        self.key = self.parts[0] if len(self.parts) == 1 else None
        self.buffer: list[Any] = []
        self.chunks: list[Any] = []
        self.lookup: dict[str, int] = {}
        if spec.scale is not None:
            self.lookup = {label: spec.scale.code(label) or 0 for label in spec.scale.labels}
            for alias in spec.scale.aliases:
                code = spec.scale.code(alias)
                assert code is not None
                self.lookup[alias] = code

    def get(self, record: dict[str, Any]) -> Any:
        if self.key is not None:
            return record.get(self.key, _MISSING)  # type: ignore[arg-type]
        return _get(record, self.parts)

    def flush(self) -> tuple[int, str, Any] | None:
        """Convert the buffer; on the first bad value return (position, message, value)."""
        buffer = self.buffer[:]
        self.buffer.clear()  # the same list: the loader holds its bound ``append``
        if not buffer:
            return None
        kind = self.spec.kind
        if kind == "label":
            converted, bad = self._labels(buffer)
        elif kind == "number":
            converted, bad = self._numbers(buffer)
        elif kind == "json":
            converted, bad = self._parsed(buffer)
        else:
            converted, bad = self._texts(buffer)
        if bad is not None:
            return bad
        self.chunks.append(converted)
        return None

    def _missing(self, position: int, raw: Any) -> tuple[int, str, Any] | None:
        if self.spec.required or self.spec.kind == "label":
            what = "is missing" if raw is _MISSING else "is null"
            return (position, f"required field {what}", InputError._MISSING)
        return None

    def _labels(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        lookup = self.lookup
        try:
            return np.fromiter((lookup[r] for r in buffer), np.int16, len(buffer)), None
        except (KeyError, TypeError):
            pass
        scale = self.spec.scale
        assert scale is not None
        codes = np.empty(len(buffer), dtype=np.int16)
        for i, raw in enumerate(buffer):
            if raw is _MISSING or raw is None:
                missing = self._missing(i, raw)
                assert missing is not None
                return None, missing
            code = lookup.get(raw) if type(raw) is str else None
            if code is None:
                code = scale.code(raw)
                if code is None:
                    return None, (i, f"unknown label; expected {scale.describe()}", raw)
                if type(raw) is str:
                    lookup[raw] = code
            codes[i] = code
        return codes, None

    def _numbers(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        spec = self.spec
        absent = None  # positions of missing/null values (NaN in the column)
        try:
            if set(map(type, buffer)) <= {float, int}:
                values = np.asarray(buffer, dtype=np.float64)
            else:
                values = np.empty(len(buffer), dtype=np.float64)
                absent = np.zeros(len(buffer), dtype=bool)
                for i, raw in enumerate(buffer):
                    if raw is _MISSING or raw is None:
                        missing = self._missing(i, raw)
                        if missing is not None:
                            return None, missing
                        absent[i] = True
                    elif type(raw) is float or type(raw) is int:
                        values[i] = raw
                    else:
                        return None, (i, "expected a number", raw)
        except OverflowError:  # an integer too large for a float
            i = next(i for i, raw in enumerate(buffer) if type(raw) is int and abs(raw) > 2**1023)
            return None, (i, "expected a finite number", buffer[i])
        present = ~absent if absent is not None else np.ones(len(buffer), dtype=bool)
        bad = present & ~np.isfinite(values)
        if spec.minimum is not None:
            bad |= present & (values < spec.minimum)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = (
                "a finite number" if not np.isfinite(values[i]) else f"a number >= {spec.minimum:g}"
            )
            return None, (i, f"expected {what}", buffer[i])
        if absent is not None:
            values[absent] = np.nan
        return values, None

    def _parsed(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        parser = self.spec.parser
        lenient = self.spec.lenient
        # a parser may declare the types it returns unchanged (``parser.identity_types``): a
        # chunk made only of those skips the per-value calls
        identity = getattr(parser, "identity_types", None)
        if identity is not None and set(map(type, buffer)) <= identity:
            return buffer, None
        out: list[Any] = []
        for i, raw in enumerate(buffer):
            if raw is _MISSING or raw is None:
                missing = self._missing(i, raw)
                if missing is not None:
                    return None, missing
                out.append(None)
                continue
            if parser is None:
                out.append(raw)
                continue
            try:
                out.append(parser(raw))
            except ValueError as exc:
                if not lenient:
                    return None, (i, str(exc), raw)
                out.append(ParseFailure(str(exc), raw))
        return out, None

    def _texts(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        converted, bad = self._texts_unchecked(buffer)
        choices = self.spec.choices
        if bad is None and choices is not None:
            allowed = set(choices)
            for i, value in enumerate(converted):
                if value is not None and value not in allowed:
                    return None, (i, f"expected one of {list(choices)}", value)
        return converted, bad

    def _texts_unchecked(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        string = self.spec.kind == "string"
        if set(map(type, buffer)) == {str}:
            return buffer, None
        out: list[Any] = []
        for i, raw in enumerate(buffer):
            if raw is _MISSING or raw is None:
                missing = self._missing(i, raw)
                if missing is not None:
                    return None, missing
                out.append(None)
            elif string:
                if not isinstance(raw, str):
                    return None, (i, "expected a string", raw)
                out.append(raw)
            elif isinstance(raw, dict | list):
                return None, (i, "expected a single value (string, number or boolean)", raw)
            else:
                out.append(_scalar_text(raw))
        return out, None

    def finish(self) -> Any:
        if self.spec.kind in ("label", "number"):
            empty = np.empty(0, dtype=np.int16 if self.spec.kind == "label" else np.float64)
            return np.concatenate(self.chunks) if self.chunks else empty
        return [value for chunk in self.chunks for value in chunk]


def _scalar_text(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw)


def _csv_value(text: str, spec: FieldSpec) -> Any:
    """CSV cells are text: an empty cell is missing; numbers are parsed."""
    if text == "":
        return None
    if spec.kind == "number":
        try:
            return float(text)
        except ValueError:
            return text
    return text


def _iter_jsonl(path: Path, progress: Advance | None) -> Iterator[tuple[int, Any]]:
    source = str(path)
    pending = 0
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if progress is not None:
                pending += len(line)
                if number % 16384 == 0:
                    progress(pending)
                    pending = 0
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # a UTF-8 byte-order mark
            if not line.strip():
                continue
            try:
                # orjson reads integers beyond 64 bits as floats; json keeps them exact
                # (a line with fewer than 19 digits in all cannot hold one: skip the regex)
                long_int = len(line) - len(line.translate(None, _DIGITS)) >= 19 and (
                    _LONG_INT.search(line) is not None
                )
                record = json.loads(line) if long_int else orjson.loads(line)
            except (orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
                snippet = line.decode("utf-8", errors="replace").strip()
                raise InputError(
                    "not valid JSON: "
                    + (
                        f"{exc.msg} at character {exc.pos + 1}"
                        if isinstance(exc, json.JSONDecodeError)
                        else str(exc)
                    ),
                    source=source,
                    line=number,
                    value=snippet,
                ) from None
            yield number, record
    if progress is not None and pending:
        progress(pending)


def _iter_csv(
    path: Path, specs: Sequence[FieldSpec], progress: Advance | None
) -> Iterator[tuple[int, Any]]:
    by_name = {spec.path: spec for spec in specs}
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return
        pending = 0
        for row in reader:
            if progress is not None:
                pending += sum(len(v) + 1 for v in row.values() if isinstance(v, str))
                if reader.line_num % 16384 == 0:
                    progress(pending)
                    pending = 0
            record: dict[str, Any] = {}
            for key, text in row.items():
                if key is None or text is None:
                    continue
                spec = by_name.get(key)
                record[key] = _csv_value(text, spec) if spec else text
            yield reader.line_num, record
        if progress is not None and pending:
            progress(pending)


def load_records(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    specs: Sequence[FieldSpec],
    *,
    id_path: str = "id",
    progress: Advance | None = None,
) -> Table:
    """Read and validate records, keeping the declared fields by column.

    ``source`` is a ``.jsonl``/``.json``/``.csv`` path or an iterable of dictionaries (line numbers
    are then 1-based positions). A record without ``id_path`` has the id None (its line number
    identifies it); the ids records have must be unique. Raises :class:`InputError` on the first
    invalid record, and on an empty input.
    """
    label: str
    records: Iterable[tuple[int, Any]]
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        label = str(source)
        if not path.is_file():
            raise InputError("no such file", source=label)
        suffix = path.suffix.lower()
        if suffix == ".csv":
            records = _iter_csv(path, specs, progress)
        elif suffix in {".jsonl", ".json", ".ndjson", ""}:
            records = _iter_jsonl(path, progress)
        else:
            raise InputError(
                f"unsupported file type {suffix!r}; use .jsonl (one JSON object a line) or .csv",
                source=label,
            )
    else:
        label = "<records>"
        records = enumerate(source, start=1)

    id_parts = parse_path(id_path)
    id_key = id_parts[0] if len(id_parts) == 1 else None
    columns = [_Column(spec) for spec in specs]
    ids: list[str | None] = []
    lines = array("q")  # 8 bytes a record, not a Python int object each
    chunk_start = 0  # index in ids of the first record of the pending chunk
    appenders = [(column.buffer.append, column.key, column) for column in columns]

    seen_ids: set[str | None] = {None}  # records without an id never clash

    def flush() -> None:
        nonlocal chunk_start
        failures = []
        chunk_ids = ids[chunk_start:]
        before = len(seen_ids)
        seen_ids.update(chunk_ids)
        if len(seen_ids) - before != sum(1 for i in chunk_ids if i is not None):
            earlier = set(ids[:chunk_start])  # a duplicate id: find the first one
            for position, record_id in enumerate(chunk_ids):
                if record_id is not None and record_id in earlier:
                    first = lines[ids.index(record_id)]
                    failures.append(
                        (
                            position,
                            -1,
                            id_path,
                            f"duplicate id; first seen on line {first}",
                            record_id,
                        )
                    )
                    break
                earlier.add(record_id)
        for order, column in enumerate(columns):
            bad = column.flush()
            if bad is not None:
                failures.append((bad[0], order, column.spec.path, bad[1], bad[2]))
        if failures:
            position, _, field, message, value = min(failures, key=lambda f: (f[0], f[1]))
            raise InputError(
                message,
                source=label,
                line=lines[chunk_start + position],
                field=field,
                value=value,
            )
        chunk_start = len(ids)

    try:
        for number, record in records:
            if type(record) is not dict and isinstance(record, Mapping):
                record = dict(record)
            if not isinstance(record, dict):
                flush()
                raise InputError(
                    "each record must be a JSON object", source=label, line=number, value=record
                )
            raw_id = record.get(id_key, _MISSING) if id_key else _get(record, id_parts)
            record_id: str | None
            if type(raw_id) is str:
                record_id = raw_id
            elif raw_id is _MISSING or raw_id is None:
                record_id = None
            elif type(raw_id) is int:
                record_id = str(raw_id)
            else:
                flush()
                raise InputError(
                    "an id must be a string or an integer",
                    source=label,
                    line=number,
                    field=id_path,
                    value=raw_id,
                )
            ids.append(record_id)
            lines.append(number)
            for append, key, column in appenders:
                append(record.get(key, _MISSING) if key is not None else column.get(record))
            if len(ids) - chunk_start >= _CHUNK:
                flush()
    except InputError:
        if len(ids) > chunk_start:
            flush()  # an earlier record of this chunk may be the first bad one
        raise
    flush()

    if not ids:
        raise InputError("no records: the input is empty", source=label)
    return Table(
        source=label,
        ids=ids,
        lines=np.frombuffer(lines, dtype=np.int64).copy(),
        columns={column.spec.path: column.finish() for column in columns},
        specs={spec.path: spec for spec in specs},
    )
