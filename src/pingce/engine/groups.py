"""Groups of records: units that resample together (dialogues) and slices (``--slice``)."""

from __future__ import annotations

import math

import numpy as np

from ..records import Table, json_equal_key
from .plan import Plan

__all__ = ["slice_keys", "unit_codes"]


def unit_codes(table: Table, path: str | None) -> np.ndarray | None:
    """A unit code per record (records with equal values of ``path``, equal as JSON values:
    ``1`` and ``"1"`` are two units), numbered in sorted order of the values; or None."""
    if path is None:
        return None
    keys = [v if isinstance(v, str) else json_equal_key(v) for v in table.column(path)]
    distinct = sorted(
        set(keys), key=lambda k: (0, k, "") if isinstance(k, str) else (1, "", repr(k))
    )
    number = {key: code for code, key in enumerate(distinct)}
    return np.fromiter((number[k] for k in keys), np.int64, len(keys))


def slice_keys(table: Table, path: str, plan: Plan) -> list[str]:
    """Each record's value of ``path`` as a slice name; ``(missing)`` where it has none."""
    column = table.column(path)
    scale = plan.label_scales.get(path)
    if scale is not None:
        return scale.names(np.asarray(column, dtype=np.int64))
    if isinstance(column, np.ndarray):  # a number field: NaN is a missing value
        return [
            "(missing)" if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
            for v in column.tolist()
        ]
    return ["(missing)" if v is None else str(v) for v in column]


def slice_order(names: list[str], path: str, plan: Plan) -> list[int]:
    """Positions of the slice names (sorted as text) in report order: scale order for labels,
    numeric order when every name is a number, else as given; ``(missing)`` last."""
    scale = plan.label_scales.get(path)
    if scale is not None:
        rank = {label: i for i, label in enumerate(scale.labels)}
        return sorted(range(len(names)), key=lambda i: rank.get(names[i], 0))
    numbers = {}
    for i, name in enumerate(names):
        try:
            numbers[i] = float(name)
        except ValueError:
            if name != "(missing)":
                return sorted(range(len(names)), key=lambda i: names[i] == "(missing)")
    return sorted(range(len(names)), key=lambda i: (i not in numbers, numbers.get(i, 0.0)))
