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

__all__ = [
    "RECORDS_IN_MEMORY",
    "part_files",
    "read_record_shards",
    "records_in_memory",
    "write_record_shard",
]

VALUE = "value."
RECORDS_IN_MEMORY = 1_000_000
"""Up to this many records, a ray run's per-record rows are also read back into memory (its
``result.records``, the table of report.html, when run and in ``pingce report``); beyond, they
stay in the Parquet shards."""


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


def part_files(folder: str | os.PathLike[str], suffix: str) -> list[Path]:
    """The shards ``part-N<suffix>`` in ``folder`` in the order of their pieces (by the number
    N, whatever its digits: ``part-100000`` comes after ``part-99999``)."""
    found = Path(folder).glob(f"part-*{suffix}")
    return sorted(found, key=lambda p: (int(p.name[5 : -len(suffix)]), p.name))


def read_record_shards(folder: str | os.PathLike[str]) -> RecordRows:
    """The Parquet shards in ``folder`` (in piece order) as one :class:`RecordRows`."""
    import pyarrow.parquet as pq

    def lines() -> Iterator[bytes]:
        for part in part_files(folder, ".parquet"):
            yield from pq.read_table(part, columns=["record"]).column("record").to_pylist()

    return RecordRows.from_jsonl(lines(), str(folder))


def records_in_memory(folder: str | os.PathLike[str], n: int) -> RecordRows | None:
    """The shards in ``folder`` (of a run of ``n`` records) read back, or None beyond
    :data:`RECORDS_IN_MEMORY` records."""
    return read_record_shards(folder) if n <= RECORDS_IN_MEMORY else None
