"""Per-record values as Parquet shards: what ``--engine ray`` writes instead of records.jsonl
(``records/part-NNNNN.parquet``, one a piece of the data, written by the worker that scored it).

One row a record, the content of a records.jsonl line by columns: ``id`` (text, null without
one), ``line`` (its line or record number in its file), ``file``, ``fields`` (the fields read,
as a JSON object), ``value.<metric>`` (a float, null where undefined) and ``misses`` (the reasons
records missed, as a JSON object, null where none). :func:`read_record_shards` makes them a
:class:`pingce.results.RecordRows` again, for the report and ``pingce report``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .results import RecordRows

__all__ = ["read_record_shards", "write_record_shard"]

VALUE = "value."


def write_record_shard(rows: RecordRows, source: str, path: str | os.PathLike[str]) -> None:
    """Write ``rows`` (the records of one piece of ``source``) as one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields: list[str] = []
    misses: list[str | None] = []
    for row in rows.iter_rows():
        fields.append(orjson.dumps(row["fields"]).decode("utf-8"))
        missed = row.get("misses")
        misses.append(None if not missed else orjson.dumps(missed).decode("utf-8"))
    columns: dict[str, Any] = {
        "id": pa.array([None if i is None else str(i) for i in rows.ids], pa.string()),
        "line": pa.array(np.asarray(rows.lines, dtype=np.int64)),
        "file": pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(rows.n, dtype=np.int32)), pa.array([source])
        ),
        "fields": pa.array(fields, pa.string()),
    }
    for name, column in rows.values.items():
        values = np.array(column, dtype=np.float64)  # a broadcast view made whole
        columns[VALUE + name] = pa.array(values, mask=np.isnan(values))
    columns["misses"] = pa.array(misses, pa.string())
    pq.write_table(pa.table(columns), path)


def read_record_shards(folder: str | os.PathLike[str]) -> RecordRows:
    """The Parquet shards in ``folder`` (in name order) as one :class:`RecordRows`."""
    import pyarrow.parquet as pq

    parts = sorted(Path(folder).glob("part-*.parquet"))
    ids: list[str | None] = []
    lines: list[np.ndarray] = []
    read: list[dict[str, Any]] = []
    missed: list[dict[str, Any]] = []
    values: dict[str, list[np.ndarray]] = {}
    for part in parts:
        table = pq.read_table(part)
        ids.extend(table.column("id").to_pylist())
        lines.append(table.column("line").to_numpy())
        read.extend(orjson.loads(text) for text in table.column("fields").to_pylist())
        missed.extend(
            {} if text is None else orjson.loads(text)
            for text in table.column("misses").to_pylist()
        )
        for name in table.column_names:
            if name.startswith(VALUE):
                column = table.column(name).to_numpy(zero_copy_only=False)
                values.setdefault(name[len(VALUE) :], []).append(
                    np.asarray(column, dtype=np.float64)
                )
    field_names = list(dict.fromkeys(name for row in read for name in row))
    miss_names = list(dict.fromkeys(name for row in missed for name in row))
    return RecordRows(
        ids,
        np.concatenate(lines) if lines else np.empty(0, dtype=np.int64),
        {name: [row.get(name) for row in read] for name in field_names},
        {name: np.concatenate(chunks) for name, chunks in values.items()},
        {name: np.array([row.get(name) for row in missed], dtype=object) for name in miss_names},
    )
