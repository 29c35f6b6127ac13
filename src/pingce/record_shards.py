"""Per-record values as Parquet shards: what ``--engine ray`` writes instead of records.jsonl
(``records/part-NNNNN.parquet``, one a piece of the data, written by the worker that scored it).

One row a record: ``record`` is its records.jsonl line, byte for byte (made by the same column
writer, :meth:`pingce.results.RecordRows.iter_jsonl`), beside ``id``, ``line``, ``file`` and one
``value.<metric>`` column a metric (null where undefined) for queries that read a column.
:func:`read_record_shards` makes them a :class:`pingce.results.RecordRows` again by the reader
of records.jsonl (:meth:`pingce.results.RecordRows.from_jsonl`), for the report and ``pingce
report``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .results import RecordRows

__all__ = ["read_record_shards", "write_record_shard"]

VALUE = "value."


def write_record_shard(rows: RecordRows, source: str, path: str | os.PathLike[str]) -> None:
    """Write ``rows`` (the records of one piece of ``source``) as one Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = b"".join(rows.iter_jsonl()).split(b"\n")[: rows.n]
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
    """The Parquet shards in ``folder`` (in name order) as one :class:`RecordRows`."""
    import pyarrow.parquet as pq

    def lines() -> Iterator[bytes]:
        for part in sorted(Path(folder).glob("part-*.parquet")):
            yield from pq.read_table(part, columns=["record"]).column("record").to_pylist()

    return RecordRows.from_jsonl(lines(), str(folder))
