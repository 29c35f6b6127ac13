"""records.jsonl, the per-record values and miss reasons of a run (:class:`pingce.results.
RecordRows`), written and read: :func:`jsonl_lines` makes the text a column at a time,
:func:`write_records` writes the file (in halves on two cores), :func:`read_jsonl` makes the
lines columns again; and predictions.jsonl (:func:`write_predictions`). One line a record:
``{"id":..,"line":..,"context":{..},"values":{..}}`` and, when the record missed a metric,
``"misses":{"metric":"reason"}``; a NaN value is null (:mod:`pingce._json`). The input fields
the suite read are not echoed by default (the data file holds them, at the record's ``line``):
``--records-fields all`` adds them as ``"fields":{..}`` before ``"values"``.
``context`` holds the record's context fields (the suite's ``context:``, ``--context``; with
``--model`` the prompt's fields, the messages sent) that no statistic reads, whole, as the record
has them: a field the record lacks (or holds null) is not there, and a record with none has no
``context``; a context field that a statistic reads is one of the input fields. With ``--model``,
``"model"`` holds the record's model call (:data:`pingce.engine.model.CALL_KEYS`: the messages
sent, the tools' names, the whole answer, tokens, latency, whether the cache answered, the cost
where a price is set, the line of predictions.jsonl; a key whose value is null is not there);
with the LLM judge, ``"judge"`` holds what it was asked and answered for the record's pairs
(:func:`pingce.engine.similarities.judge_columns`); in a run audited by people, ``"audit"``, last,
marks the records they checked (:data:`pingce.runfolder.layout.RECORDS`)."""

from __future__ import annotations

import operator
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import orjson

from .._collector import collector_paused
from .._halves import in_halves
from .._json import dumps, json_texts
from ..errors import InputError
from ..results import RecordRows
from .layout import part_files

__all__ = [
    "AUDIT_KEY",
    "RECORDS_IN_MEMORY",
    "FieldTexts",
    "jsonl_lines",
    "mark_records",
    "read_jsonl",
    "read_record_shards",
    "records_in_memory",
    "write_predictions",
    "write_record_shard",
    "write_records",
]


class FieldTexts:
    """The JSON text of each input field's value of the first ``n`` records, made once (when
    first asked for) and shared by the writers that need them: records.jsonl with
    ``--records-fields all`` and report.html, which embeds those records (a field of numbers
    is not shared: the page rounds its numbers)."""

    def __init__(self, rows: RecordRows, n: int) -> None:
        self.rows = rows
        self.n = min(n, rows.n)
        self._texts: dict[str, list[bytes]] = {}

    def shares(self, name: str) -> bool:
        """Whether the field's texts are shared (a column of objects or texts, not numbers)."""
        column = self.rows.fields.get(name)
        return column is not None and not (
            isinstance(column, np.ndarray) and column.dtype.kind in "fiub"
        )

    def texts(self, name: str) -> list[bytes]:
        """The field's value texts of the first :attr:`n` records (``orjson.dumps`` of each,
        NaN null: :func:`pingce._json.json_texts`)."""
        if name not in self._texts:
            self._texts[name] = json_texts(list(self.rows.fields[name][: self.n]))
        return self._texts[name]


def _field_piece(
    column: Any, text: bytes, name: str | None, shared: FieldTexts | None, first: int, last: int
) -> Pieces:
    """A field's pieces of the rows [first, last): the shared texts where they reach."""
    if shared is None or name is None or first >= shared.n:
        return _fragments(column[first:last], text)
    cut = min(last, shared.n)
    head = [text + t for t in shared.texts(name)[first:cut]]
    return head + (_rows(_fragments(column[cut:last], text)) if cut < last else [])


def jsonl_lines(
    rows: RecordRows,
    chunk: int = 4096,
    start: int = 0,
    stop: int | None = None,
    *,
    fields: bool = False,
    shared: FieldTexts | None = None,
) -> Iterator[bytes]:
    """The text of records.jsonl, ``chunk`` lines at a time: byte for byte
    ``orjson.dumps(row) + b"\\n"`` for each row of :meth:`RecordRows.iter_rows` (without its
    ``"fields"`` unless ``fields``: the input fields, which the data file holds, are echoed only
    when asked, ``--records-fields all``), but made a column at a time (one orjson call per
    column, values that repeat serialised once, neighbouring columns of few distinct values
    joined once per distinct combination) instead of a dictionary per record. ``start`` and
    ``stop``: only the records in that range (a line depends on its own record alone, so the
    text of a range is that part of the whole). ``shared``: the fields' texts of the first
    records, made once for records.jsonl and report.html (:class:`FieldTexts` of these rows)."""
    heading: list[Any] = [b'{"id":', rows.ids, b',"line":', rows.lines]
    if rows.repeat is not None:
        heading += [b',"repeat":', np.asarray(rows.repeat)]
    if rows.judge_call is not None:
        heading += [b',"judge_call":', np.asarray(rows.judge_call)]
    if rows.flaky is not None:
        heading += [b',"flaky":', np.asarray(rows.flaky)]
    head, _ = _row_template([*heading, b""])
    names = {
        id(column): name
        for name, column in rows.fields.items()
        if shared is not None and fields and shared.shares(name)
    }
    echoed = [b',"fields":{', *_members(rows.fields), b"}"] if fields else []
    columns, closing = _row_template(
        [
            *echoed,
            b',"values":{',
            *_members(rows.values),
            b"}",
        ]
    )
    misses = [(dumps(name) + b":", column) for name, column in rows.misses.items()]
    end = rows.n if stop is None else min(stop, rows.n)
    for first in range(start, end, chunk):
        last = min(first + chunk, end)
        with collector_paused():  # many small containers, no cycles
            pieces = [_fragments(column[first:last], text) for text, column in head]
            pieces.extend(_sparse(b',"context":{', rows.context, first, last))
            pieces.extend(_sparse(b',"model":{', rows.model, first, last))
            pieces.extend(_sparse(b',"judge":{', rows.judge, first, last))
            pieces.extend(
                _field_piece(column, text, names.get(id(column)), shared, first, last)
                for text, column in columns
            )
            audit = _sparse(b',"audit":{', rows.audit, first, last)
            pieces.extend(_endings(closing, misses, first, last, audit))
            merged = _merged(pieces, last - first)
            text = b"".join(chain.from_iterable(zip(*merged, strict=True)))
        yield text


def read_jsonl(lines: Iterable[bytes], source: str) -> RecordRows:
    """The lines of records.jsonl (:func:`jsonl_lines`) back into columns; ``source`` names
    them in the error of a line that is not JSON."""
    ids: list[str | None] = []
    numbers: list[int] = []
    repeats: list[Any] = []
    flaky: list[Any] = []
    calls: list[Any] = []
    fields: dict[str, list[Any]] = {}
    values: dict[str, list[float]] = {}
    misses: dict[str, list[Any]] = {}
    context: dict[str, list[Any]] = {}
    model: dict[str, list[Any]] = {}
    judge: dict[str, list[Any]] = {}
    audit: dict[str, list[Any]] = {}
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
        repeats.append(row.get("repeat"))
        flaky.append(row.get("flaky"))
        calls.append(row.get("judge_call"))
        # a column first seen on this line is padded for the lines before it (made only
        # then: a default built on every line would make reading quadratic in the lines)
        sparse = (
            ("fields", fields),
            ("misses", misses),
            ("context", context),
            ("model", model),
            ("judge", judge),
            ("audit", audit),
        )
        for column, data in sparse:
            for key, value in (row.get(column) or {}).items():
                if key not in data:
                    data[key] = [None] * i
                data[key].append(value)
        for key, value in (row.get("values") or {}).items():
            if key not in values:
                values[key] = [np.nan] * i
            values[key].append(np.nan if value is None else value)
        n = i + 1
        for data in (fields, misses, context, model, judge, audit):
            for column_values in data.values():
                if len(column_values) < n:
                    column_values.append(None)
        for floats in values.values():
            if len(floats) < n:
                floats.append(np.nan)
    return RecordRows(
        ids,
        np.asarray(numbers, dtype=np.int64),
        {k: np.fromiter(v, dtype=object, count=len(v)) for k, v in fields.items()},
        {k: np.asarray(v, dtype=np.float64) for k, v in values.items()},
        {k: np.fromiter(v, dtype=object, count=len(v)) for k, v in misses.items()},
        context,
        model,
        judge,
        audit,
        None if all(r is None for r in repeats) else np.asarray(repeats, dtype=np.int64),
        None if all(f is None for f in flaky) else np.asarray(flaky, dtype=bool),
        None if all(c is None for c in calls) else np.asarray(calls, dtype=np.int64),
    )


AUDIT_KEY = b',"audit":'
"""What opens a record's audit mark, the last member of its records.jsonl line."""


def mark_records(
    source: str | os.PathLike[str], target: str | os.PathLike[str], marks: dict[int, Any]
) -> int:
    """records.jsonl ``source`` written to ``target`` with the audit marks ``marks`` (by the
    record's place in the file, from 0: the ``"audit"`` object, last in its line) and no other:
    an earlier audit's marks are removed, every other byte kept (the lines are what
    :func:`jsonl_lines` writes of the rows with these marks as :attr:`RecordRows.audit`). The
    number of records marked."""
    marked = k = 0
    with open(source, "rb") as lines, open(target, "wb") as out:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                out.write(line)
                continue
            body = line.rstrip(b"\r\n")
            if b'"audit":' in body:
                body = _unmarked(body, str(source), number)
            mark = marks.get(k)
            if mark is not None:
                body = body[:-1] + AUDIT_KEY + dumps(mark) + b"}"
                marked += 1
            out.write(body + b"\n")
            k += 1
    return marked


def _unmarked(body: bytes, source: str, number: int) -> bytes:
    """A records.jsonl line without its audit mark (as it was before the audit)."""
    try:
        mark = orjson.loads(body).get("audit")
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc})", source=source, line=number) from None
    if mark is None:  # the words are inside a text
        return body
    suffix = AUDIT_KEY + dumps(mark) + b"}"
    if not body.endswith(suffix):
        raise InputError(
            "its audit mark is not the last member of the line, where pingce audit writes it",
            source=source,
            line=number,
        )
    return body[: -len(suffix)] + b"}"


def write_predictions(records: Sequence[dict[str, Any]], path: Path) -> None:
    """predictions.jsonl: the records the model answered (``--model``), one JSON line each, as
    they were read with the answers filled (integers beyond 64 bits too: :mod:`pingce._json`)."""
    with open(path, "wb") as handle:
        for start in range(0, len(records), 4096):
            lines = json_texts(records[start : start + 4096])
            handle.writelines(line + b"\n" for line in lines)


def write_records(
    rows: RecordRows | None,
    path: Path,
    *,
    fields: bool = False,
    shared: FieldTexts | None = None,
) -> None:
    """records.jsonl (``fields``: with the input fields, :func:`jsonl_lines`): with many records
    on an idle two-core Linux machine, the second half of the lines made and written by a
    forked child process into a file of its own while this process writes the first half
    (:func:`pingce._halves.in_halves` decides; the lines of a record depend on that record
    alone), then appended (by the kernel, without a copy through Python). The bytes are those
    of one process writing every line."""
    if rows is None:
        path.write_bytes(b"")
        return

    def write(part: Sequence[int]) -> str:
        start, stop = (part[0], part[-1] + 1) if len(part) else (0, 0)
        name = f"{path.name}.{start}-{stop}"
        with open(path.with_name(name), "wb") as handle:
            made = jsonl_lines(rows, start=start, stop=stop, fields=fields, shared=shared)
            for text in made:
                handle.write(text)
        return name

    first, *rest = in_halves(write, range(rows.n))
    os.replace(path.with_name(first), path)
    for name in rest:
        with open(path, "r+b") as whole, open(path.with_name(name), "rb") as part:
            whole.seek(0, os.SEEK_END)
            if not _copied_in_kernel(part, whole):
                shutil.copyfileobj(part, whole)
        os.remove(path.with_name(name))


def _copied_in_kernel(source: BinaryIO, target: BinaryIO) -> bool:
    """Append all of ``source`` at ``target``'s position with ``os.copy_file_range`` (no copy
    through Python); False, with nothing written, where it is not available."""
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    size = os.fstat(source.fileno()).st_size
    done = 0
    try:
        while done < size:
            sent = copy(source.fileno(), target.fileno(), size - done, done)
            if sent == 0:
                raise OSError("copy_file_range copied nothing")
            done += sent
    except OSError:
        if done:
            raise
        return False
    return True


# ------------------------------------------------------------ --engine ray: Parquet shards
# records/part-N.parquet, one a piece of the data, written by the worker that scored it. One row
# a record: ``record`` is its records.jsonl line, byte for byte, beside ``id``, ``line``, ``file``
# and one ``value.<metric>`` column a metric (null where undefined) for queries that read a
# column; :func:`read_record_shards` reads the lines back by :func:`read_jsonl`.

VALUE = "value."
RECORDS_IN_MEMORY = 1_000_000
"""Up to this many records, a ray run's per-record rows are also read back into memory (its
``result.records``, the table of report.html, when run and in ``pingce report``); beyond, they
stay in the Parquet shards."""


def write_record_shard(rows: RecordRows, source: str, path: str | os.PathLike[str]) -> None:
    """Write ``rows`` (the records of one piece of ``source``) as one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = b"".join(jsonl_lines(rows, fields=True)).split(b"\n")[: rows.n]
    columns = {
        "id": pa.array([None if i is None else str(i) for i in rows.ids], pa.string()),
        "line": pa.array(np.asarray(rows.lines, dtype=np.int64)),
        "file": pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(rows.n, dtype=np.int32)), pa.array([source])
        ),
        "record": pa.array(lines, pa.binary()),
    }
    for name, column in rows.values.items():
        values = np.array(column, dtype=np.float64)  # a broadcast view made whole
        columns[VALUE + name] = pa.array(values, mask=np.isnan(values))
    pq.write_table(pa.table(columns), path)


def read_record_shards(folder: str | os.PathLike[str]) -> RecordRows:
    """The Parquet shards in ``folder`` (in piece order) as one :class:`RecordRows`."""
    import pyarrow.parquet as pq

    def lines() -> Iterator[bytes]:
        for part in part_files(folder, ".parquet"):
            yield from pq.read_table(part, columns=["record"]).column("record").to_pylist()

    return read_jsonl(lines(), str(folder))


def records_in_memory(folder: str | os.PathLike[str], n: int) -> RecordRows | None:
    """The shards in ``folder`` (of a run of ``n`` records) read back, or None beyond
    :data:`RECORDS_IN_MEMORY` records."""
    return read_record_shards(folder) if n <= RECORDS_IN_MEMORY else None


# ------------------------------------------------------ the column writer of jsonl_lines


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
    closing: bytes,
    misses: list[tuple[bytes, Any]],
    start: int,
    stop: int,
    audit: list[Pieces] | None = None,
) -> list[Pieces]:
    """Per row of [start, stop), the pieces after the last column: ``closing``, the metrics the
    row missed as ``,"misses":{"metric":"reason",...}`` (nothing when none), the record's
    ``audit`` pieces (:func:`_sparse` of :attr:`RecordRows.audit`: nothing in a run no one
    audited), the end of the row and of its line. Made a metric at a time (a piece per metric,
    empty where it did not miss)."""
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
    if not audit:
        return [opening, *entries, _Coded([b"}\n", b"}}\n"], codes)]
    end = _Coded([b"}\n"], np.zeros(n, dtype=np.int64))
    return [opening, *entries, _Coded([b"", b"}"], codes), *audit, end]


def _sparse(opening: bytes, columns: dict[str, Any], start: int, stop: int) -> list[Pieces]:
    """Per row of [start, stop), an object of the columns' values that are not None, as
    ``opening`` (``,"name":{``), the members and ``}``; nothing where every value is None (and
    no pieces at all when no row has one). Made a column at a time, as the misses are."""
    n = stop - start
    some = np.zeros(n, dtype=bool)
    entries: list[Pieces] = []
    for name, column in columns.items():
        values = np.empty(n, dtype=object)
        for i, value in enumerate(column[start:stop]):  # a list value stays one value
            values[i] = value
        present = np.fromiter(map(operator.is_not, values, repeat(None)), bool, n)
        if present.any():
            entries.append(_entries(values, present, some, dumps(name) + b":"))
            some |= present
    if not some.any():
        return []
    codes = some.astype(np.int64)
    return [_Coded([b"", opening], codes), *entries, _Coded([b"", b"}"], codes)]


def _entries(reasons: np.ndarray, missed: np.ndarray, some: np.ndarray, key: bytes) -> Pieces:
    """One metric's ``"metric":"reason"`` per row that missed it (after a comma when an earlier
    metric was missed too), empty where it did not."""
    coded = _coded_entries(reasons, missed, some, key)
    if coded is not None:
        return coded
    texts = np.full(len(reasons), b"", dtype=object)
    for rows, prefix in ((missed & ~some, key), (missed & some, b"," + key)):
        if rows.any():
            texts[rows] = _objects(_rows(_fragments(reasons[rows], prefix)))
    plain: list[bytes] = texts.tolist()
    return _coded(plain) or plain


def _coded_entries(
    reasons: np.ndarray, missed: np.ndarray, some: np.ndarray, key: bytes
) -> _Coded | None:
    """:func:`_entries` of reasons that are strings (or None), at most half of the rows'
    entries distinct: coded from the distinct reasons at once (code 0 the empty text, then
    each reason after ``key``, then after ``,`` and ``key``), each reason written once; None
    otherwise (written row by row)."""
    values = reasons[missed].tolist()
    if not set(map(type, values)) <= {str}:
        return None
    distinct = list(set(values))
    k = len(distinct)
    if 2 * (2 * k + 1) > len(reasons):  # at most half of all the rows' texts distinct
        return None
    index = {value: code for code, value in enumerate(distinct)}
    codes = np.fromiter(map(index.__getitem__, values), np.int64, len(values))
    texts = [b"", *json_texts(distinct, key), *json_texts(distinct, b"," + key)]
    out = np.zeros(len(reasons), dtype=np.int64)
    out[missed] = codes + 1 + k * some[missed]
    return _Coded(texts, out)


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
        out.extend([(b"," if k else b"") + dumps(name) + b":", column])
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
