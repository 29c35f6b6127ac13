"""Loading records: JSONL and CSV, streamed, validated, stored by column.

A suite declares which fields it reads and of which kind (:class:`FieldSpec`). The loader reads
the file one line at a time, checks each declared field, and keeps only those fields, as numpy
arrays where it can. A 2 GB JSONL file therefore costs the memory of a few arrays, not of two
gigabytes of Python dictionaries. The first bad record stops the load with an :class:`InputError`
that names the file, the line, the field and the value.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson

from .errors import InputError
from .labels import LabelScale

__all__ = [
    "FieldKind",
    "FieldSpec",
    "Table",
    "load_records",
    "parse_path",
]

FieldKind = Literal["label", "number", "string", "value"]
"""``label``: a label of the suite's scale, stored as its integer code;
``number``: a JSON number (not a boolean), stored as float64 (NaN when optional and absent);
``string``: a JSON string; ``value``: any JSON scalar, stored as its text (slices, strata)."""

_MISSING = object()
_PATH_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str) -> tuple[str | int, ...]:
    """Split a field path such as ``output.evidence[0].clause`` into keys and indexes."""
    if not path or path != path.strip():
        raise ValueError(f"invalid field path {path!r}")
    parts: list[str | int] = []
    pos = 0
    for match in _PATH_TOKEN.finditer(path):
        if match.start() != pos and path[pos : match.start()] != ".":
            raise ValueError(f"invalid field path {path!r}")
        key, index = match.groups()
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

    def __post_init__(self) -> None:
        parse_path(self.path)
        if self.kind == "label" and self.scale is None:
            raise ValueError(f"field {self.path!r} is a label field but has no label scale")


@dataclass
class Table:
    """Validated records, by column. ``columns`` is keyed by field path."""

    source: str
    ids: list[str]
    lines: np.ndarray
    columns: dict[str, Any] = field(default_factory=dict)
    specs: dict[str, FieldSpec] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

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


class _Column:
    """Accumulates one field's values while the file streams by."""

    def __init__(self, spec: FieldSpec):
        self.spec = spec
        self.parts = parse_path(spec.path)
        self.values: Any
        if spec.kind == "label":
            self.values = bytearray() if spec.scale is not None and spec.scale.k < 128 else []
        elif spec.kind == "number":
            self.values = []
        else:
            self.values = []

    def add(self, record: Mapping[str, Any], fail: Callable[..., InputError]) -> None:
        spec = self.spec
        raw = _get(record, self.parts)
        if raw is _MISSING or raw is None:
            if spec.required:
                what = "is missing" if raw is _MISSING else "is null"
                raise fail(f"required field {what}", spec.path)
            if spec.kind == "number":
                self.values.append(math.nan)
            elif spec.kind == "label":
                raise fail("a label field cannot be optional", spec.path)
            else:
                self.values.append(None)
            return
        if spec.kind == "label":
            assert spec.scale is not None
            code = spec.scale.code(raw)
            if code is None:
                raise fail(f"unknown label; expected {spec.scale.describe()}", spec.path, raw)
            self.values.append(code)
        elif spec.kind == "number":
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                raise fail("expected a number", spec.path, raw)
            number = float(raw)
            if not math.isfinite(number):
                raise fail("expected a finite number", spec.path, raw)
            if spec.minimum is not None and number < spec.minimum:
                raise fail(f"expected a number >= {spec.minimum:g}", spec.path, raw)
            self.values.append(number)
        elif spec.kind == "string":
            if not isinstance(raw, str):
                raise fail("expected a string", spec.path, raw)
            self.values.append(raw)
        else:
            if isinstance(raw, dict | list):
                raise fail("expected a single value (string, number or boolean)", spec.path, raw)
            self.values.append(_scalar_text(raw))

    def finish(self) -> Any:
        if self.spec.kind == "label":
            return (
                np.frombuffer(bytes(self.values), dtype=np.int8).astype(np.int16)
                if isinstance(self.values, bytearray)
                else np.asarray(self.values, dtype=np.int16)
            )
        if self.spec.kind == "number":
            return np.asarray(self.values, dtype=np.float64)
        return self.values


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


def _iter_jsonl(path: Path, progress: Callable[[int], None] | None) -> Iterator[tuple[int, Any]]:
    source = str(path)
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if progress is not None:
                progress(len(line))
            if not line.strip():
                continue
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                snippet = line.decode("utf-8", errors="replace").strip()
                raise InputError(
                    f"not valid JSON: {exc.msg} at character {exc.pos + 1}",
                    source=source,
                    line=number,
                    value=snippet,
                ) from None
            yield number, record


def _iter_csv(
    path: Path, specs: Sequence[FieldSpec], progress: Callable[[int], None] | None
) -> Iterator[tuple[int, Any]]:
    by_name = {spec.path: spec for spec in specs}
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None:
            return
        for row in reader:
            if progress is not None:
                progress(sum(len(v) + 1 for v in row.values() if isinstance(v, str)))
            record: dict[str, Any] = {}
            for key, text in row.items():
                if key is None or text is None:
                    continue
                spec = by_name.get(key)
                record[key] = _csv_value(text, spec) if spec else text
            yield reader.line_num, record


def load_records(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    specs: Sequence[FieldSpec],
    *,
    id_path: str = "id",
    progress: Callable[[int], None] | None = None,
) -> Table:
    """Read and validate records, keeping the declared fields by column.

    ``source`` is a ``.jsonl``/``.json``/``.csv`` path or an iterable of dictionaries (line numbers
    are then 1-based positions). Records without ``id_path`` get ``line-N`` as their id; ids must
    be unique. Raises :class:`InputError` on the first invalid record, and on an empty input.
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
    columns = [_Column(spec) for spec in specs]
    ids: list[str] = []
    lines: list[int] = []
    seen: dict[str, int] = {}

    for number, record in records:

        def fail(
            message: str,
            field: str | None = None,
            value: Any = InputError._MISSING,
            number: int = number,
        ) -> InputError:
            return InputError(message, source=label, line=number, field=field, value=value)

        if not isinstance(record, dict):
            raise fail("each record must be a JSON object", value=record)
        raw_id = _get(record, id_parts)
        if raw_id is _MISSING or raw_id is None:
            record_id = f"line-{number}"
        elif isinstance(raw_id, str | int) and not isinstance(raw_id, bool):
            record_id = str(raw_id)
        else:
            raise fail("an id must be a string or an integer", id_path, raw_id)
        first = seen.setdefault(record_id, number)
        if first != number:
            raise fail(f"duplicate id; first seen on line {first}", id_path, record_id)
        for column in columns:
            column.add(record, fail)
        ids.append(record_id)
        lines.append(number)

    if not ids:
        raise InputError("no records: the input is empty", source=label)
    return Table(
        source=label,
        ids=ids,
        lines=np.asarray(lines, dtype=np.int64),
        columns={column.spec.path: column.finish() for column in columns},
        specs={spec.path: spec for spec in specs},
    )
