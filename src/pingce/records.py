"""Loading records: validated, stored by column.

A suite declares which fields it reads and of which kind (:class:`FieldSpec`). The readers of
:mod:`pingce.readers` turn a file (JSONL a block of 256 KB of lines at a time, CSV, Parquet,
Excel, ...), a data frame or an iterable into blocks of records; the loader takes each declared
field from a block with one pass in C, checks it, and keeps only those fields, as numpy arrays
where it can. A 2 GB JSONL file therefore costs the memory of a few arrays, not of two gigabytes
of Python dictionaries. The first bad record stops the load with an :class:`InputError` that
names the file, the line (or row, or record), the field and the value (the same error as
reading one line at a time).
"""

from __future__ import annotations

import dataclasses
import operator
import os
import re
from array import array
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any, Literal

import numpy as np

from ._collector import collector_paused
from .errors import EmptyInputError, InputError
from .labels import LabelScale
from .progress import Advance
from .readers import (
    Block,
    Reading,
    TextKind,
    Unit,
    Wanted,
    frame_reading,
    is_frame,
    iterable_reading,
    path_reading,
)

__all__ = [
    "FieldKind",
    "FieldSpec",
    "InsideError",
    "ParseFailure",
    "Table",
    "json_equal_key",
    "load_records",
    "missing_field",
    "parse_path",
    "wanted_fields",
]

FieldKind = Literal["label", "number", "string", "value", "json"]
"""``label``: a label of the suite's scale, stored as its integer code;
``number``: a JSON number (not a boolean), stored as float64 (NaN when optional and absent);
``string``: a JSON string; ``value``: any JSON scalar, stored as its text (slices, strata);
``json``: any JSON value, passed through the field's ``parser`` (a function that returns the
parsed value or raises ``ValueError`` with the reason) and stored as the parsed object."""


class _Missing:
    """The type of ``_MISSING``: a field a record does not have."""


_MISSING = _Missing()
REPEAT_FIELDS = ("repeat", "epoch")
"""The fields that number a record's attempts (``--repeats K`` writes ``repeat``; Inspect's logs
call it ``epoch``): when the records have one, a record is its id and its repeat."""
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


def _path_text(parts: tuple[str | int, ...]) -> str:
    """The path of ``parts`` as written (``a.b[0].c``): :func:`parse_path`'s inverse."""
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


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
    returns unchanged) lets the loader skip the calls for blocks made only of those types (and
    nulls, when the field is optional); a ``parse_block`` attribute (a function of a block's
    list of values, nulls as None, returning the parsed list or None to decline) parses a whole
    block at once, and must agree with the parser value by value. A ``cell`` attribute
    (``number`` or ``boolean``) says how a cell of text is read for a parser that takes numbers
    (a turn, a confidence) or booleans (a flag): see :meth:`cell_kind`."""
    lenient: bool = False
    """A prediction: a model's answer is never bad input. For ``json`` fields a value the parser
    rejects is kept as a :class:`ParseFailure` (a prediction that failed to parse is a wrong
    answer) instead of stopping the load (and null is given to a parser whose ``reads_null``
    attribute is true, rather than read as absent). For ``label`` fields a value off the scale,
    blank or null is kept as code ``k`` (:data:`~pingce.labels.INVALID`). An absent field stays
    an input error where it is required."""
    what: str = field(default="", compare=False)
    """What the field holds, in words, for messages ("a list of function calls")."""
    name: str | None = field(default=None, compare=False)
    """The suite's name of the field when the data names it otherwise (``--map``, a suite's
    ``fields:``), for messages; None when ``path`` is the suite's name."""
    echo: bool = field(default=True, compare=False)
    """Whether records.jsonl and report.html repeat the field's value beside each record's
    values. False for context that is large and mostly the same from record to record (the
    function schemas offered to a model): the record's line number points to it."""
    context: bool = field(default=False, compare=False)
    """Whether the field is kept only to be shown beside the record (a suite's ``context:``,
    ``--context``): no statistic reads it; records.jsonl writes it under ``context``."""

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

    def cell_kind(self) -> TextKind:
        """How a cell of text (CSV, TSV, a spreadsheet's text cell) of this field is read
        (:func:`pingce.readers.text_cell`): by the field's kind, or for a ``json`` field by its
        parser's ``cell`` attribute (a number, a boolean), else as JSON text of an array or
        object. The one rule for every suite: a cell ``1`` of a turn is the number 1."""
        cell: TextKind | None = getattr(self.parser, "cell", None)
        return cell if cell is not None and self.kind == "json" else self.kind

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


class InsideError(ValueError):
    """A parser's error for a value whose part ``inner`` (a key) holds what the field reads: a
    whole assistant message where gold calls were expected, its ``tool_calls`` the calls. The
    loader's message adds the ``--map`` that reads that part."""

    def __init__(self, reason: str, inner: str):
        super().__init__(reason)
        self.inner = inner


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
    notes: list[str] = field(default_factory=list)
    """What the reading left to say (records left out of a join under ``--allow-missing``, a
    text encoding other than UTF-8)."""
    encoding: str | None = None
    """The text encoding the records were read in (:attr:`pingce.readers.Reading.encoding`);
    None for a source that is not text."""
    found: list[str] = field(default_factory=list)
    """The data's field names: a columnar source's columns; the keys of the records of the first
    block and of the first record of each later one (what a missing field's message lists)."""
    paths: dict[str, str] = field(default_factory=dict)
    """The data's path of each field read under another name (``--map``; the columns are keyed
    by the suite's names)."""
    repeats: np.ndarray | None = None
    """Each record's repeat number (its ``repeat`` field, or Inspect's ``epoch``: one attempt
    of several at the same record, :data:`REPEAT_FIELDS`), or None when the records have none.
    With repeats a record is an id and a repeat: ids recur, the pair is unique."""
    judge_calls: np.ndarray | None = None
    """With ``--judge-repeats J``: each row's judge call (1 … J; the table's rows are each
    record × repeat J times, :meth:`with_judge_calls`), or None."""
    _derived: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False)

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

    @property
    def read_from_text(self) -> bool:
        """Whether the records were read from text (JSON, JSON lines, CSV, TSV: :attr:`encoding`
        is set): their values, before a field's parser, are of the JSON parser's types alone
        (strings, numbers, booleans, None, lists and objects with string keys)."""
        return self.encoding is not None

    def first_without_id(self) -> int | None:
        """Index of the first record that has no id, or None when every record has one."""
        return next((i for i, record_id in enumerate(self.ids) if record_id is None), None)

    def column(self, path: str) -> Any:
        """The values of one field, in record order."""
        return self.columns[path]

    def derived(self, key: Hashable, make: Callable[[], Any]) -> Any:
        """``make()``, made once per table and kept under ``key``: a value computed from the
        columns that several statistics need (an order of the records, say). A table made by
        :meth:`take` starts without any."""
        if key not in self._derived:
            self._derived[key] = make()
        return self._derived[key]

    def missing(self, position: int, name: str, need: str) -> InputError:
        """The error of record ``position`` lacking field ``name`` (the suite's name), which it
        ``need`` s (a statistic's check: some records need a field others may leave out): the
        one message of a missing field (:func:`missing_field`)."""
        path = self.paths.get(name, name)
        taken = {self.paths.get(spec, spec) for spec in self.specs}
        message = missing_field(
            path, self.found, taken, name=name if path != name else None, need=need, own=False
        )
        return InputError(message, source=self.source, line=int(self.lines[position]), field=path)

    def take(self, index: np.ndarray) -> Table:
        """The records at ``index`` (a sample or a slice), in that order."""
        index = np.asarray(index, dtype=np.int64)
        columns: dict[str, Any] = {}
        for name, values in self.columns.items():
            if isinstance(values, np.ndarray):
                columns[name] = values[index]
            else:
                columns[name] = [values[i] for i in index]
        return dataclasses.replace(
            self,
            ids=[self.ids[i] for i in index],
            lines=self.lines[index],
            columns=columns,
            repeats=None if self.repeats is None else self.repeats[index],
            judge_calls=None if self.judge_calls is None else self.judge_calls[index],
        )

    def with_judge_calls(self, calls: int) -> Table:
        """Each row ``calls`` times in a row, numbered ``judge_calls`` 1 … ``calls`` (a record
        without repeats becomes repeat 1 of its id, so its calls resample together)."""
        index = np.repeat(np.arange(self.n, dtype=np.int64), calls)
        out = self.take(index)
        out.judge_calls = np.tile(np.arange(1, calls + 1, dtype=np.int64), self.n)
        if out.repeats is None:
            out.repeats = np.ones(out.n, dtype=np.int64)
        return out


_NONE = type(None)


class _Column:
    """One field's values: taken from a block of records with one list comprehension, then
    checked and converted together (a tight loop per block instead of a call per value)."""

    def __init__(self, spec: FieldSpec):
        self.spec = spec
        self.parts = parse_path(spec.path)
        first = self.parts[0]
        self.key = first if len(self.parts) == 1 and isinstance(first, str) else None
        # an optional field (not a label) treats absent and null alike: both read as None;
        # a prediction whose parser reads null tells them apart
        self.reads_null = spec.lenient and bool(getattr(spec.parser, "reads_null", False))
        self.nullable = not spec.required and spec.kind != "label" and not self.reads_null
        self.chunks: list[Any] = []
        self.lookup: dict[str, int] = {}
        if spec.scale is not None:
            self.lookup = {label: spec.scale.code(label) or 0 for label in spec.scale.labels}
            for alias in spec.scale.aliases:
                code = spec.scale.code(alias)
                assert code is not None
                self.lookup[alias] = code

    def add(self, records: _Rows) -> tuple[int, str, Any] | None:
        """Take this field from ``records`` and keep it converted; on the first bad value return
        (position, message, value) and keep nothing."""
        converted, bad = self.convert(self.extract(records))
        if bad is not None:
            return bad
        self.chunks.append(converted)
        return None

    def extract(self, records: _Rows) -> list[Any]:
        """The raw value of each record (None where absent when the field is nullable, else the
        ``_MISSING`` marker)."""
        if isinstance(records, _Columns):
            return records.values(self.parts, self.nullable)
        key = self.key
        if key is not None:  # dict.get mapped in C: no Python step per record
            if self.nullable:
                return list(map(dict.get, records, repeat(key)))
            return list(map(dict.get, records, repeat(key), repeat(_MISSING)))
        values = [_get(record, self.parts) for record in records]
        if self.nullable:
            return [None if value is _MISSING else value for value in values]
        return values

    def convert(self, values: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        """The stored form of a block of raw values, or the first bad one."""
        kind = self.spec.kind
        if kind == "label":
            return self._labels(values)
        if kind == "number":
            return self._numbers(values)
        if kind == "json":
            return self._parsed(values)
        return self._texts(values)

    def _missing(self, position: int, raw: Any) -> tuple[int, str, Any] | None:
        if self.spec.required or self.spec.kind == "label":
            message = _ABSENT_MESSAGE if raw is _MISSING else "required field is null"
            return (position, message, InputError._MISSING)
        return None

    def _present_types(self, values: list[Any]) -> tuple[set[type] | None, bool]:
        """The types of the values other than null and whether there is a null; the types are
        None when a value is absent or null where the field may not be (the per-value path
        then names it)."""
        types = set(map(type, values))
        nulls = _NONE in types
        if nulls:
            if not self.nullable:
                return None, nulls
            types.discard(_NONE)
        return (None if _Missing in types else types), nulls

    def _labels(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        lookup = self.lookup
        try:
            return np.fromiter(map(lookup.__getitem__, buffer), np.int16, len(buffer)), None
        except (KeyError, TypeError):
            pass
        scale = self.spec.scale
        assert scale is not None
        lenient = self.spec.lenient
        codes = np.empty(len(buffer), dtype=np.int16)
        for i, raw in enumerate(buffer):
            if raw is _MISSING or (raw is None and not lenient):
                missing = self._missing(i, raw)
                assert missing is not None
                return None, missing
            code = lookup.get(raw) if type(raw) is str else None
            if code is None:
                code = scale.code(raw)
                if code is None:
                    if not lenient:
                        return None, (i, f"unknown label; expected {scale.describe()}", raw)
                    code = scale.k  # a prediction off the scale, blank or null: INVALID
                if type(raw) is str:
                    lookup[raw] = code
            codes[i] = code
        return codes, None

    def _numbers(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        spec = self.spec
        absent = None  # positions of missing/null values (NaN in the column)
        types, nulls = self._present_types(buffer)
        try:
            if types is not None and types <= {float, int}:
                values = np.array(buffer, dtype=np.float64)  # None (absent) becomes NaN
                if nulls:
                    absent = _none_positions(buffer, values)
            else:
                values, absent, bad = self._numbers_one_by_one(buffer)
                if bad is not None:
                    return None, bad
        except OverflowError:  # an integer too large for a float
            i = next(i for i, raw in enumerate(buffer) if type(raw) is int and abs(raw) > 2**1023)
            return None, (i, "expected a finite number", buffer[i])
        present = ~absent if absent is not None else np.ones(len(buffer), dtype=bool)
        bad_values = present & ~np.isfinite(values)
        if spec.minimum is not None:
            bad_values |= present & (values < spec.minimum)
        if bad_values.any():
            i = int(np.flatnonzero(bad_values)[0])
            what = (
                "a finite number" if not np.isfinite(values[i]) else f"a number >= {spec.minimum:g}"
            )
            return None, (i, f"expected {what}", buffer[i])
        if absent is not None:
            values[absent] = np.nan
        return values, None

    def _numbers_one_by_one(
        self, buffer: list[Any]
    ) -> tuple[np.ndarray, np.ndarray, tuple[int, str, Any] | None]:
        values = np.empty(len(buffer), dtype=np.float64)
        absent = np.zeros(len(buffer), dtype=bool)
        for i, raw in enumerate(buffer):
            if raw is _MISSING or raw is None:
                missing = self._missing(i, raw)
                if missing is not None:
                    return values, absent, missing
                absent[i] = True
            elif type(raw) is float or type(raw) is int:
                values[i] = raw
            else:
                return values, absent, (i, "expected a number", raw)
        return values, absent, None

    def _parsed(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        parser = self.spec.parser
        types, _ = self._present_types(buffer)
        if types is not None:
            if parser is None or not types:  # (no types: every value null, where that is allowed)
                return buffer, None
            # a parser may declare the types it returns unchanged (``parser.identity_types``)
            # and a function that parses a whole block (``parser.parse_block``): a block they
            # cover skips the per-value calls
            identity = getattr(parser, "identity_types", None)
            if identity is not None and types <= identity:
                return buffer, None
            parse_block = getattr(parser, "parse_block", None)
            if parse_block is not None:
                parsed = parse_block(buffer)
                if parsed is not None:
                    return parsed, None
        return self._parsed_one_by_one(buffer)

    def _parsed_one_by_one(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        parser = self.spec.parser
        lenient = self.spec.lenient
        out: list[Any] = []
        for i, raw in enumerate(buffer):
            if raw is _MISSING or (raw is None and not self.reads_null):
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
                    return None, (i, self._reason(exc), raw)
                out.append(ParseFailure(str(exc), raw))
        return out, None

    def _reason(self, error: ValueError) -> str:
        """A parser's error as the message says it: with the ``--map`` that reads the part of
        the value that holds the field (:class:`InsideError`)."""
        if not isinstance(error, InsideError):
            return str(error)
        spec = self.spec
        return f"{error}; --map {spec.name or spec.path}={spec.path}.{error.inner} reads them"

    def _texts(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        types, _ = self._present_types(buffer)
        if types is not None and types <= {str}:
            converted, bad = buffer, None
        else:
            converted, bad = self._texts_one_by_one(buffer)
        choices = self.spec.choices
        if bad is None and choices is not None:
            allowed = set(choices)
            outside = set(converted) - allowed
            outside.discard(None)
            if outside:  # other letter case or spaces: the choice it means, when unambiguous
                canon = _canonical_choices(choices)
                meant = {value: canon.get(value.strip().casefold()) for value in outside}
                if all(meant.values()):
                    converted = [meant.get(value, value) for value in converted]
                else:
                    i = next(
                        i
                        for i, value in enumerate(converted)
                        if meant.get(value) is None and value in outside
                    )
                    return None, (i, f"expected one of {list(choices)}", converted[i])
        return converted, bad

    def _texts_one_by_one(self, buffer: list[Any]) -> tuple[Any, tuple[int, str, Any] | None]:
        string = self.spec.kind == "string"
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
                inside = (
                    (f".{next(iter(raw))}" if raw else ".KEY") if isinstance(raw, dict) else "[0]"
                )
                return None, (
                    i,
                    "expected a single value (string, number or boolean); a path reads one "
                    f"inside it, e.g. {self.spec.path}{inside}",
                    raw,
                )
            else:
                out.append(_scalar_text(raw))
        return out, None

    def finish(self) -> Any:
        if self.spec.kind in ("label", "number"):
            empty = np.empty(0, dtype=np.int16 if self.spec.kind == "label" else np.float64)
            return np.concatenate(self.chunks) if self.chunks else empty
        return list(chain.from_iterable(self.chunks))


def _canonical_choices(choices: Sequence[str]) -> dict[str, str]:
    """Each choice by its case-folded form, the choices that differ only in letter case left out
    (they are told apart exactly)."""
    folded: dict[str, list[str]] = {}
    for choice in choices:
        folded.setdefault(choice.casefold(), []).append(choice)
    return {key: same[0] for key, same in folded.items() if len(same) == 1}


_ABSENT_MESSAGE = "required field is missing"
_ROLES = (
    frozenset({"gold", "gt", "truth", "ground", "expected", "reference", "references", "label",
               "target"}),
    frozenset({"pred", "prediction", "predicted", "output", "response", "completion",
               "generated", "hypothesis"}),
    frozenset({"functions", "function", "tools", "schemas"}),
)  # fmt: skip
"""Words that name the same role in a column's name (``gold`` and ``expected``), for the
did-you-mean of a missing field when no name is close in spelling."""


def missing_field(
    path: str,
    keys: Iterable[str],
    taken: Collection[str] = (),
    *,
    name: str | None = None,
    need: str = "",
    own: bool = True,
) -> str:
    """The one message of a missing field, whichever check finds it (the loader, or a
    statistic's check of a field some records need): ``need`` (why this record needs it), the
    fields the record has (``own``; else those the records have), the closest of them that no
    other field reads (``taken``: the data paths read), and the ``--map`` that reads it from
    another column. ``path`` is the field's path in the data; ``name`` the suite's name for it
    when a map renamed it (the ``--map`` to give is the suite's name's)."""
    keys = [str(key) for key in keys]
    parts = parse_path(path)
    leaf = str(parts[-1])
    prefix = path[: len(path) - len(leaf)] if len(parts) > 1 else ""
    free = [key for key in keys if prefix + key not in taken]
    suite = name or path
    close = _closest(leaf, free) or (_closest(str(parse_path(suite)[-1]), free) if name else "")
    said = [need] if need else []
    if name is not None and name != path:
        said.append(f"read for {name} by --map {name}={path}")
    if keys:
        shown = ", ".join(repr(key) for key in keys[:12]) + (", ..." if len(keys) > 12 else "")
        said.append(f"the record{' has' if own else 's have'} {shown}")
    hint = f"; did you mean {close!r}?" if close else ""
    text = _ABSENT_MESSAGE + (f" ({'; '.join(said)}{hint})" if said else "")
    return text + f"; --map {suite}=COLUMN reads it from another column"


def _closest(leaf: str, keys: Sequence[str]) -> str:
    """The key most like ``leaf``: close in spelling, one name inside the other (pred_level /
    level), the same first word (pred_level / prediction), or a word of the same role (gold /
    expected); else ""."""
    import difflib

    close = difflib.get_close_matches(leaf, keys, n=1, cutoff=0.6)
    if not close:
        close = [key for key in keys if leaf in key or (len(key) > 2 and key in leaf)][:1]
    stem = re.split(r"[_\-.]", leaf)[0].casefold()
    if not close and len(stem) >= 3:
        close = [key for key in keys if key.casefold().startswith(stem)][:1]
    if not close:
        words = set(_words(leaf))
        role = next((role for role in _ROLES if words & role), frozenset())
        close = [key for key in keys if role & set(_words(key))][:1]
    return close[0] if close else ""


def _words(name: str) -> list[str]:
    return re.split(r"[_\-.\s]+", name.casefold())


def _record_keys(path: str, record: dict[str, Any]) -> list[str]:
    """The keys of the deepest object on ``path`` that ``record`` has (its own fields for a
    top-level path)."""
    inner: Any = record
    for part in parse_path(path)[:-1]:
        has = (
            part in inner
            if isinstance(part, str) and isinstance(inner, dict)
            else isinstance(part, int) and isinstance(inner, list) and part < len(inner)
        )
        if not has:
            break
        inner = inner[part]
    return [str(key) for key in inner] if isinstance(inner, dict) else []


def _none_positions(raw: list[Any], values: np.ndarray) -> np.ndarray:
    """Where ``raw`` holds None, given ``values`` (its float conversion, NaN there)."""
    absent: np.ndarray = np.isnan(values)
    if absent.any():  # a NaN given as a value is not an absent one
        absent &= np.fromiter(map(operator.is_, raw, repeat(None)), bool, len(raw))
    return absent


def _scalar_text(raw: Any) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, float) and raw.is_integer():
        return str(int(raw))
    return str(raw)


def _whole(value: Any) -> int | None:
    """A repeat's number: a whole number of 0 or more (an integer, a float with no fraction,
    ASCII digits as a CSV cell writes it), else None."""
    if type(value) is bool:
        return None
    if isinstance(value, int | np.integer):
        return int(value) if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if type(value) is str and value.isascii() and value.strip().isdigit():
        return int(value)
    return None


def load_records(
    source: str | os.PathLike[str] | Iterable[Mapping[str, Any]] | Any,
    specs: Sequence[FieldSpec],
    *,
    id_path: str = "id",
    progress: Advance | None = None,
    encoding: str | None = None,
) -> Table:
    """Read and validate records, keeping the declared fields by column.

    ``source`` is a path (``.jsonl``, ``.json``, ``.csv``, ``.tsv``, each also ``.gz``;
    ``.parquet``; ``.xlsx``; ``-`` for standard input: see :mod:`pingce.readers`), a data frame
    (pandas, polars, a pyarrow Table, a ``datasets.Dataset``: one record a row) or an iterable
    of dictionaries (line numbers are then 1-based positions). ``encoding`` forces the encoding
    of a text file (else it is detected). A record without ``id_path`` has the id None (its line
    number identifies it); the ids records have must be unique. Raises :class:`InputError` on
    the first invalid record, and on an empty input.
    """
    reading: Reading
    if isinstance(source, Reading):  # a reading made elsewhere (two files joined by id)
        reading = source
    elif isinstance(source, str | os.PathLike):
        reading = path_reading(
            source, wanted=wanted_fields(specs, id_path), encoding=encoding, advance=progress
        )
    elif is_frame(source):
        reading = frame_reading(source, wanted_fields(specs, id_path))
    else:
        reading = iterable_reading(source)

    loader = _Loader(specs, id_path, reading.label, reading.unit)
    # a file or a frame is read by pingce's code alone, which makes no reference cycles; records
    # from the caller's iterable are read with the collector as it is
    with collector_paused() if reading.own_objects else nullcontext():
        try:
            for block in reading.blocks:
                loader.add(block)
        finally:
            reading.blocks.close()  # the file, at once, when a record stops the reading
    table = loader.table()
    table.encoding = reading.encoding
    note = reading.encoding_note()
    if note is not None:
        table.notes.append(note)
    return table


def wanted_fields(specs: Sequence[FieldSpec], id_path: str) -> Wanted:
    """What a reader needs to know of the fields: the columns they (and the id) are read from,
    and the kind of each."""
    paths = [spec.path for spec in specs] + [id_path, *REPEAT_FIELDS]
    columns = {str(parse_path(path)[0]) for path in paths}
    kinds: dict[str, TextKind] = {spec.path: spec.cell_kind() for spec in specs}
    for path in paths:  # a field inside a column: a flattened column, or the column's JSON
        first = parse_path(path)[0]
        if len(parse_path(path)) > 1 and isinstance(first, str):
            columns.add(path)  # ``human.rating`` as a column's name (a flattened table)
            kinds.setdefault(first, "json")  # ``{"rating": 5}`` in a cell of ``human``
    return Wanted(frozenset(columns), kinds)


def _row(records: _Rows, position: int, found: Sequence[str] | None) -> dict[str, Any]:
    """The record at ``position`` as an object; a columnar block's has the source's columns
    (``found``), with the values of those that were read."""
    if isinstance(records, _Columns):
        names = found if found is not None else list(records.data)
        return {
            name: records.data[name][position] if name in records.data else None for name in names
        }
    return records[position]


class _Columns:
    """The records of a columnar block: each column's values (a column the source lacks is
    absent in every record)."""

    def __init__(self, data: dict[str, list[Any]], n: int):
        self.data = data
        self.n = n

    def values(self, parts: tuple[str | int, ...], nullable: bool) -> list[Any]:
        """The raw value of a field in each record, as :meth:`_Column.extract` gives them. A
        field inside a column (``human.rating``) is read from a column of that whole name when
        the source has one and no column ``human`` (a table flattened as pandas'
        ``json_normalize`` writes it)."""
        column = self.data.get(parts[0]) if isinstance(parts[0], str) else None
        if column is None and len(parts) > 1:
            column = self.data.get(_path_text(parts))
            if column is not None:
                return column
        if column is None:
            return [None if nullable else _MISSING] * self.n
        if len(parts) == 1:
            return column
        rest = parts[1:]
        values = [_get(value, rest) for value in column]
        if nullable:
            return [None if value is _MISSING else value for value in values]
        return values

    def head(self, n: int) -> _Columns:
        """The first ``n`` records."""
        return _Columns({name: values[:n] for name, values in self.data.items()}, n)


_Rows = list[dict[str, Any]] | _Columns


class _Loader:
    """Checks blocks of records and keeps their ids, line numbers and declared fields."""

    def __init__(self, specs: Sequence[FieldSpec], id_path: str, source: str, unit: Unit = "line"):
        self.specs = specs
        self.id_path = id_path
        self.id_parts = parse_path(id_path)
        self.source = source
        self.unit = unit
        self.columns = [_Column(spec) for spec in specs]
        self.ids: list[str | None] = []
        self.lines = array("q")  # 8 bytes a record, not a Python int object each
        self.seen_ids: set[Any] = {None}  # records without an id never clash
        self.repeats = array("q")  # each row's repeat; -1 where it has none (or not a number)
        self.repeat_field: str | None = None  # the field the repeats are read from, once known
        self.repeat_values: dict[int, Any] = {}  # row -> its repeat, where not a number
        self.names = {spec.path: spec.name for spec in specs if spec.name is not None}
        self.found: dict[str, None] = {}  # the data's field names, in order (Table.found)

    def add(self, block: Block) -> None:
        """Check a block and keep it; raise the first error in it (the earliest line; on one
        line, the id before the fields, and fields in the order of the specs)."""
        records: _Rows
        if block.columns is not None:
            numbers, error = block.numbers, block.error
            records = _Columns(block.columns, len(numbers))
            if not self.found:
                self.found = dict.fromkeys(block.found or block.columns)
        else:
            numbers, records, error = self._objects(block)
            # every record of the first block, the first of each later one: what a check after
            # loading lists as the records' fields (all of them would cost a key walk a record)
            for record in records if not self.found else records[:1]:
                self.found.update(dict.fromkeys(map(str, record)))
        numbers, records, ids, error = self._ids(numbers, records, error)
        failures = []
        repeats = self._repeats(records)
        duplicate = self._duplicate(ids, numbers, repeats)
        if duplicate is not None:
            failures.append((duplicate[0], -1, self.id_path, duplicate[1], duplicate[2]))
        for order, column in enumerate(self.columns):
            bad = column.add(records)
            if bad is not None:
                failures.append((bad[0], order, column.spec.path, bad[1], bad[2]))
        if failures:
            position, _, field, message, value = min(failures, key=lambda f: (f[0], f[1]))
            if message == _ABSENT_MESSAGE:
                taken = {spec.path for spec in self.specs} | {self.id_path}
                keys = _record_keys(field, _row(records, position, block.found))
                message = missing_field(field, keys, taken, name=self.names.get(field))
            raise InputError(
                message,
                source=self.source,
                line=numbers[position],
                field=field,
                value=value,
                unit=self.unit,
            )
        if error is not None:
            raise error
        self.ids.extend(ids)
        self.lines.extend(numbers)
        if repeats is not None:
            self.repeats.extend(repeats)

    def _objects(
        self, block: Block
    ) -> tuple[Sequence[int], list[dict[str, Any]], InputError | None]:
        """The block's records as dictionaries, up to the first that is not an object."""
        records = block.records
        if set(map(type, records)) <= {dict}:
            return block.numbers, records, block.error
        objects: list[dict[str, Any]] = []
        for i, record in enumerate(records):
            if type(record) is not dict and isinstance(record, Mapping):
                record = dict(record)
            if not isinstance(record, dict):
                error = InputError(
                    "each record must be a JSON object",
                    source=self.source,
                    line=block.numbers[i],
                    value=record,
                    unit=self.unit,
                )
                return block.numbers[:i], objects, error
            objects.append(record)
        return block.numbers, objects, block.error

    def _ids(
        self, numbers: Sequence[int], records: _Rows, error: InputError | None
    ) -> tuple[Sequence[int], _Rows, list[str | None], InputError | None]:
        """Each record's id (None without one), up to the first id of a wrong type."""
        parts = self.id_parts
        key = parts[0]
        if isinstance(records, _Columns):
            raw = records.values(parts, nullable=True)
        elif len(parts) == 1 and isinstance(key, str):
            raw = list(map(dict.get, records, repeat(key)))
        else:
            raw = [_get(record, parts) for record in records]
        if set(map(type, raw)) <= {str, _NONE}:
            return numbers, records, raw, error
        ids: list[str | None] = []
        for i, raw_id in enumerate(raw):
            if type(raw_id) is str:
                ids.append(raw_id)
            elif raw_id is _MISSING or raw_id is None:
                ids.append(None)
            elif type(raw_id) is int or isinstance(raw_id, np.integer):
                ids.append(str(int(raw_id)))
            else:
                error = InputError(
                    "an id must be a string or an integer",
                    source=self.source,
                    line=numbers[i],
                    field=self.id_path,
                    value=raw_id,
                    unit=self.unit,
                )
                head = records.head(i) if isinstance(records, _Columns) else records[:i]
                return numbers[:i], head, ids, error
        return numbers, records, ids, error

    def _repeats(self, records: _Rows) -> list[int] | None:
        """Each record's value of the repeat field (:data:`REPEAT_FIELDS`: the first one a
        record has), -1 where it has none or it is not a whole number of 0 or more (kept, to be
        an error only if the records turn out to have repeats: :meth:`table`); None while no
        record has the field. Records read before the field appeared have -1."""
        found = self.repeat_field
        if found is None:
            for name in REPEAT_FIELDS:
                if isinstance(records, _Columns):
                    present = any(v is not _MISSING for v in records.values((name,), False))
                else:
                    present = any(name in record for record in records)
                if present:
                    found = self.repeat_field = name
                    self.repeats.extend([-1] * len(self.ids))
                    break
            if found is None:
                return None
        if isinstance(records, _Columns):
            raw = records.values((found,), True)
        else:
            raw = [record.get(found) for record in records]
        start = len(self.ids)
        if set(map(type, raw)) <= {int}:  # the usual column: whole numbers, checked at once
            numbers = np.fromiter(raw, np.int64, len(raw))
            if (numbers >= 0).all():
                out_list: list[int] = numbers.tolist()
                return out_list
        out: list[int] = []
        for position, value in enumerate(raw):
            number = _whole(value)
            if number is None:
                self.repeat_values[start + position] = None if value is _MISSING else value
                number = -1
            out.append(number)
        return out

    def _repeat_error(self) -> InputError | None:
        """With repeats (ids recur and the records have a repeat field), the first record whose
        repeat is wrong: absent, not a whole number of 0 or more, or without an id."""
        found = self.repeat_field
        assert found is not None
        wrong = np.flatnonzero(np.frombuffer(self.repeats, dtype=np.int64) == -1)
        bad = [int(wrong[0])] if wrong.size else []
        no_id = next((i for i, record_id in enumerate(self.ids) if record_id is None), None)
        if no_id is not None:
            bad.append(no_id)
        if not bad:
            return None
        first = min(bad)
        line = int(self.lines[first])
        if wrong.size and first == int(wrong[0]):
            value = self.repeat_values.get(first)  # None: absent (or read before the field)
            if value is None:
                message = (
                    f"no {found}: the records have repeats (ids recur, and {found} numbers a "
                    "record's attempts), so every record needs one"
                )
            else:
                message = f"a {found} is a whole number of 0 or more"
            where = {"value": value} if value is not None else {}
            return InputError(
                message, source=self.source, line=line, field=found, unit=self.unit, **where
            )
        return InputError(
            f"the records have repeats (a {found} field, and ids that recur), and this record "
            f"has no id: its {found}s are found by id (field {self.id_path})",
            source=self.source,
            line=line,
            field=self.id_path,
            unit=self.unit,
        )

    def _duplicate(
        self, ids: list[str | None], numbers: Sequence[int], repeats: list[int] | None = None
    ) -> tuple[int, str, str] | None:
        """(position, message, id) of the first of ``ids`` seen before (in an earlier block or
        earlier in this one), or None; with ``repeats``, of the first id and repeat seen
        before."""
        keys: list[Any] = (
            list(ids)
            if repeats is None
            else [None if i is None else (i, r) for i, r in zip(ids, repeats, strict=True)]
        )
        seen = self.seen_ids
        before = len(seen)
        seen.update(keys)
        if len(seen) - before == len(keys) - ids.count(None):
            return None
        earlier_keys: list[Any] = (
            list(self.ids)
            if repeats is None
            else [
                None if i is None else (i, r)
                for i, r in zip(self.ids, self.repeats.tolist(), strict=True)
            ]
        )
        earlier = {key: k for k, key in reversed(list(enumerate(earlier_keys)))}
        in_block: dict[Any, int] = {}  # key -> line, for the keys of this block
        what = "id" if repeats is None else f"id and {self.repeat_field}"
        if repeats is not None and all(r == -1 for r in repeats):
            what = "id"
        for position, key in enumerate(keys):
            if ids[position] is None:
                continue
            if key in earlier:
                first = self.lines[earlier[key]]
            elif key in in_block:
                first = in_block[key]
            else:
                in_block[key] = numbers[position]
                continue
            record_id = str(ids[position])
            if repeats is not None and repeats[position] != -1:
                record_id += f" {self.repeat_field} {repeats[position]}"
            return position, f"duplicate {what}; first seen on {self.unit} {first}", record_id
        raise AssertionError("a duplicate id was counted but not found")

    def table(self) -> Table:
        """The records read, by column; with repeats when the records have a repeat field and
        ids that recur (a repeat field beside unique ids is a field like any other)."""
        if not self.ids:
            raise EmptyInputError("no records: the input is empty", source=self.source)
        repeats = None
        if self.repeat_field is not None:
            named = [i for i in self.ids if i is not None]
            if len(set(named)) < len(named):
                error = self._repeat_error()
                if error is not None:
                    raise error
                repeats = np.frombuffer(self.repeats, dtype=np.int64).copy()
        return Table(
            source=self.source,
            ids=self.ids,
            lines=np.frombuffer(self.lines, dtype=np.int64).copy(),
            columns={column.spec.path: column.finish() for column in self.columns},
            specs={spec.path: spec for spec in self.specs},
            found=list(self.found),
            repeats=repeats,
        )
