"""records.parquet (``--records parquet``): a run's per-record rows (:class:`pingce.results.
RecordRows`) as one Parquet file, zstd-compressed, a column each instead of a JSON line a record:
what records.jsonl holds, for runs too large for JSON Lines (pyarrow, from ``pingce[files]``).

Columns: ``id`` and ``line``; ``value.<metric>`` (float64, null where undefined) for every
metric; ``miss.<metric>`` for every metric some record missed (null where it did not);
``context.<field>``, ``model.<key>``, ``judge.<key>`` and ``audit.<key>`` for each of those that
some record has;
with ``--records-fields all``, ``field.<field>`` for every field the suite read. A column whose
values are all texts is stored as text, all floats as float64, all integers as int64, anything
else as each value's JSON text (:mod:`pingce._json`); the file's metadata (``pingce.records``)
names each column's kind. :func:`read_records_parquet` makes the same :class:`RecordRows` as
:func:`pingce.runfolder.records.read_jsonl` of the records.jsonl that the run would have written.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import orjson

from .._json import dumps, json_texts
from ..errors import InputError
from ..results import RecordRows

__all__ = ["KINDS_KEY", "read_records_parquet", "write_records_parquet"]

KINDS_KEY = b"pingce.records"
"""The key of the file's metadata naming each column's kind (``text``, ``float``, ``int``,
``json``)."""
FORMAT = 1

_PARTS = ("field", "value", "miss", "context", "model", "judge", "audit")
"""The prefixes of the per-record columns, ``<part>.<name>`` (a name may hold dots)."""


def _pyarrow() -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, or an error saying which extra installs them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            "records.parquet (--records parquet) needs pyarrow: pip install 'pingce[files]'"
        ) from None
    return pa, pq


def _plain(column: Any) -> list[Any]:
    """A column as a list of Python values (NaN in a float array kept: written as null)."""
    return column.tolist() if isinstance(column, np.ndarray) else list(column)


def _encoded(pa: Any, column: Any) -> tuple[Any, str]:
    """A column as an Arrow array and its kind: texts as text, floats as float64 (NaN null),
    integers as int64, anything else (objects, lists, mixed) as each value's JSON text; a None
    (or NaN) is null in every kind."""
    values = _plain(column)
    kinds = set(map(type, values)) - {type(None)}
    if kinds <= {str}:
        return pa.array(values, pa.string()), "text"
    if kinds == {float}:
        floats = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        return pa.array(floats, mask=np.isnan(floats)), "float"
    if kinds == {int} and all(v is None or -(2**63) <= v < 2**63 for v in values):
        return pa.array(values, pa.int64()), "int"
    texts = json_texts(values)
    return pa.array([None if t == b"null" else t.decode("utf-8") for t in texts], pa.string()), (
        "json"
    )


def _present(column: Any) -> bool:
    """Whether some record has a value in a sparse column (records.jsonl writes it only then)."""
    if isinstance(column, np.ndarray) and column.dtype.kind == "f":
        return bool((~np.isnan(column)).any())
    return any(v is not None for v in _plain(column))


def write_records_parquet(
    rows: RecordRows, path: str | os.PathLike[str], *, fields: bool = False
) -> None:
    """Write ``rows`` as records.parquet (zstd); ``fields``: with the input fields
    (``--records-fields all``)."""
    pa, pq = _pyarrow()
    columns: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    columns["id"], kinds["id"] = _encoded(pa, rows.ids)
    columns["line"] = pa.array(np.asarray(rows.lines, dtype=np.int64))
    sparse = [("miss", rows.misses), ("context", rows.context)]
    sparse += [("model", rows.model), ("judge", rows.judge), ("audit", rows.audit)]
    parts = [*((("field", rows.fields),) if fields else ()), *sparse]
    for name, column in rows.values.items():
        values = np.array(column, dtype=np.float64)  # a broadcast view made whole
        columns["value." + name] = pa.array(values, mask=np.isnan(values))
        kinds["value." + name] = "float"
    for part, data in parts:
        for name, column in data.items():
            if part != "field" and not _present(column):
                continue  # as records.jsonl: a sparse object's key only where some record has it
            key = f"{part}.{name}"
            columns[key], kinds[key] = _encoded(pa, column)
    table = pa.table(columns)
    meta = dumps({"format": FORMAT, "kinds": kinds})
    pq.write_table(table.replace_schema_metadata({KINDS_KEY: meta}), path, compression="zstd")


def _decoded(column: Any, kind: str) -> list[Any]:
    """An Arrow column back into Python values by its kind (null: None)."""
    values: list[Any] = column.to_pylist()
    if kind != "json":
        return values
    return [None if v is None else orjson.loads(v) for v in values]


def _floats(column: Any) -> np.ndarray:
    """A float64 column with nulls as NaN."""
    import pyarrow.compute as pc

    filled = pc.fill_null(column, np.nan)
    return np.asarray(filled.to_numpy(), dtype=np.float64)


def read_records_parquet(path: str | os.PathLike[str]) -> RecordRows:
    """records.parquet back into columns: the :class:`RecordRows` that
    :func:`pingce.runfolder.records.read_jsonl` makes of the same run's records.jsonl."""
    _, pq = _pyarrow()
    try:
        table = pq.read_table(path)
        meta = orjson.loads((table.schema.metadata or {})[KINDS_KEY])
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"not a run's records.parquet ({exc})", source=str(path)) from None
    kinds: dict[str, str] = meta["kinds"]
    ids = _decoded(table.column("id"), kinds["id"])
    lines = np.asarray(table.column("line").to_numpy(), dtype=np.int64)
    found: dict[str, dict[str, Any]] = {part: {} for part in _PARTS}
    for key in table.column_names[2:]:
        part, _, name = key.partition(".")
        column = table.column(key)
        if part == "value":
            found[part][name] = _floats(column)
        else:
            found[part][name] = _decoded(column, kinds.get(key, "json"))
    for part in ("miss", "context", "model", "judge", "audit"):
        found[part] = _first_seen(found[part])
    return RecordRows(
        ids,
        lines,
        {k: np.fromiter(v, dtype=object, count=len(v)) for k, v in found["field"].items()},
        found["value"],
        {k: np.fromiter(v, dtype=object, count=len(v)) for k, v in found["miss"].items()},
        found["context"],
        found["model"],
        found["judge"],
        found["audit"],
    )


def _first_seen(columns: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Sparse columns in the order records.jsonl's reader meets their keys: by the first record
    that has each (then in the columns' order)."""

    def first(item: tuple[str, list[Any]]) -> int:
        return next((i for i, v in enumerate(item[1]) if v is not None), len(item[1]))

    return dict(sorted(columns.items(), key=first))
