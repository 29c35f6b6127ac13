"""A run's statistic blocks kept for later (stats.npz): made from the blocks after the statistics
phase, and made back into blocks for a plan of the same suite, so that a comparison of two stored
runs pairs their per-record statistics without evaluating anything again.

What is kept is what values and intervals read: each block's one-hot codes (in the smallest
integer type that holds them) or its rows, whether it adds up, its scope, its unparsed records
and the records left out after failed similarity calls (``left_out``); plus the records' ids and
lines (and, for records without an id, their values of the suite's ``match_by`` fields), the
unit codes of a unit suite and each ``--slice`` field's value per record. Miss reasons are not
kept (records.jsonl has them)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import orjson

from .._json import dumps
from ..errors import OptionError
from ..metrics.protocol import LEFT_OUT, MODEL_FAILED, StatBlock
from ..records import Table
from ..runfolder.stats import SavedStats, small_codes
from .groups import unit_sort_keys
from .plan import Plan, StatBlocks
from .slices import slice_keys

__all__ = ["match_keys", "saved_blocks", "saved_stats"]


def saved_stats(
    plan: Plan,
    table: Table,
    blocks: StatBlocks,
    units: np.ndarray | None,
    *,
    piece: bool = False,
) -> SavedStats:
    """The blocks of a run over ``table`` as plain arrays (see :class:`SavedStats`). ``piece``:
    ``table`` is one piece of a run's records (``--engine ray``), whose records keep their
    ``match_by`` values even when all of them have ids (another piece's may not)."""
    ids = table.ids
    arrays: dict[str, np.ndarray] = {
        # one JSON text (null for a record without an id) as bytes: a tenth of the memory and
        # the file of a fixed-width text array, which a million ids would make 28 MB of
        "ids_json": np.frombuffer(dumps([None if i is None else str(i) for i in ids]), np.uint8),
        "lines": np.asarray(table.lines, dtype=np.int64),
    }
    match_by: list[str] = []
    missing = any(i is None for i in ids)
    if missing:
        arrays["ids_missing"] = np.array([i is None for i in ids], dtype=bool)
    if missing or piece:
        fields = plan.suite.spec.match_by or []
        if fields and all(path in table.columns for path in fields):
            match_by = list(fields)
            arrays["match"] = match_keys(table, match_by)
    if table.repeats is not None:  # a row a record's repeat: a comparison sums them by id
        arrays["repeats"] = np.asarray(table.repeats, dtype=np.int64)
    unit_keys = None
    if units is not None:
        arrays["units"] = np.asarray(units, dtype=np.int64)
        if piece:  # how to number the units of all pieces as one table's
            assert plan.unit is not None
            unit_keys = unit_sort_keys(table, plan.unit, arrays["units"])
    statistics: dict[str, dict[str, object]] = {}
    names: dict[Hashable, str] = {}
    for k, (key, block) in enumerate(blocks.items()):
        name = names[key] = f"s{k}"
        arrays.update(_block_arrays(name, block))
        statistics[name] = {
            "key": repr(key),
            "width": block.width,
            "layout": "codes" if block.codes is not None else "rows",
            "decomposable": block.decomposable,
            "counts": dict(block.counts),
        }
        named = plan.statistics[key].column_names(block.width) if key in plan.statistics else None
        if named is not None and len(named) == block.width:
            statistics[name]["columns"] = list(named)
    slices: dict[str, list[str]] = {}
    for path in plan.options.slices:
        values, inverse = np.unique(
            np.asarray(slice_keys(table, path, plan), dtype=object).astype(str),
            return_inverse=True,
        )
        slices[path] = [str(v) for v in values]
        arrays[f"slice.{path}"] = inverse.reshape(-1).astype(np.int64)
    manifest = {
        "format": SavedStats.FORMAT,
        "n": table.n,
        "suite": plan.suite.spec.name,
        "statistics": statistics,
        "metrics": {metric: names[key] for metric, key in plan.keys.items() if key in names},
        "unit": plan.unit,
        "slices": slices,
    }
    if match_by:
        manifest["match_by"] = match_by
    if unit_keys is not None:
        manifest["unit_keys"] = unit_keys
    return SavedStats(manifest, arrays)


def _block_arrays(name: str, block: StatBlock) -> dict[str, np.ndarray]:
    """The arrays stats.npz keeps of one statistic's block, named ``<name>.<part>``."""
    arrays: dict[str, np.ndarray] = {}
    if block.codes is not None:
        arrays[f"{name}.codes"] = small_codes(block.codes, block.width)
    elif block.rows is not None and block.rows.ndim == 2 and block.rows.strides[0] == 0:
        arrays[f"{name}.row"] = np.array(block.rows[0])  # the same row for every record
    else:
        assert block.rows is not None
        arrays[f"{name}.rows"] = np.asarray(block.rows)
    for part, mask in (("scope", block.scope), ("unparsed", block.unparsed)):
        if mask is not None:
            arrays[f"{name}.{part}"] = np.asarray(mask, dtype=bool)
    left_out = block.reasons.get(LEFT_OUT)
    if left_out is not None:
        arrays[f"{name}.left_out"] = np.array([r is not None for r in left_out], dtype=bool)
    model_failed = block.reasons.get(MODEL_FAILED)
    if model_failed is not None:  # of those left out, the records the model did not answer
        arrays[f"{name}.model_failed"] = np.array([r is not None for r in model_failed], dtype=bool)
    return arrays


def match_keys(table: Table, paths: list[str]) -> np.ndarray:
    """Each record's values of the suite's ``match_by`` fields as one JSON text (an array, in
    ``paths`` order), written so that two records' texts are equal exactly when their values
    are equal as JSON (``1`` and ``1.0`` alike, object keys sorted): how a comparison of stored
    runs pairs records that have no id."""
    columns = []
    for path in paths:
        column = table.column(path)
        columns.append(column.tolist() if isinstance(column, np.ndarray) else list(column))
    texts = _plain_texts(columns)
    if texts is None:
        texts = [
            dumps([_canonical(c[i]) for c in columns], sort_keys=True).decode()
            for i in range(table.n)
        ]
    return np.array(texts, dtype=str)


def _plain_texts(columns: list[list[Any]]) -> list[str] | None:
    """The texts of :func:`match_keys` when every value is a string or an integer orjson writes
    (:func:`_canonical` leaves those as they are): one orjson call per record, without the
    walk (a dialogue's id and turn: a fifth of the time). None when a value is of another type
    (a boolean among them) or orjson cannot write one."""
    if not columns or not all(set(map(type, column)) <= {str, int} for column in columns):
        return None
    try:
        return list(map(bytes.decode, map(orjson.dumps, zip(*columns, strict=True))))
    except TypeError:  # an integer beyond 64 bits, or a string orjson will not write
        return None


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return _canonical(value.item())
    return value


def saved_blocks(saved: SavedStats, plan: Plan) -> StatBlocks:
    """The blocks of ``saved`` keyed as ``plan`` keys its statistics (an :class:`OptionError`
    when the plan has a statistic the saved run did not compute)."""
    by_key = {entry["key"]: name for name, entry in saved.manifest["statistics"].items()}
    arrays = saved.arrays
    blocks: dict[Hashable, StatBlock] = {}
    for key in plan.statistics:
        name = by_key.get(repr(key))
        if name is None:
            raise OptionError(
                f"the saved statistics of this {saved.manifest['suite']} run have no {key!r}: "
                "the run was made with another suite version or other options"
            )
        entry = saved.manifest["statistics"][name]
        codes = arrays.get(f"{name}.codes")
        left_out = arrays.get(f"{name}.left_out")
        reasons = {}
        if left_out is not None:
            column = np.full(left_out.shape[0], None, dtype=object)
            column[left_out] = "left out after failed similarity calls"
            reasons[LEFT_OUT] = column
        model_failed = arrays.get(f"{name}.model_failed")
        if model_failed is not None:
            column = np.full(model_failed.shape[0], None, dtype=object)
            column[model_failed] = "left out after a failed model call"
            reasons[MODEL_FAILED] = column
            reasons[LEFT_OUT][model_failed] = column[model_failed]
        rows = arrays.get(f"{name}.rows")
        row = arrays.get(f"{name}.row")
        if row is not None:
            rows = np.broadcast_to(row, (int(saved.manifest["n"]), row.shape[0]))
        blocks[key] = StatBlock(
            width=int(entry["width"]),
            codes=None if codes is None else codes.astype(np.int64),
            rows=rows,
            decomposable=bool(entry["decomposable"]),
            counts=dict(entry["counts"]),
            reasons=reasons,
            scope=arrays.get(f"{name}.scope"),
            unparsed=arrays.get(f"{name}.unparsed"),
        )
    return blocks
