"""Slices (``--slice FIELD``): the one home of what every engine does with them.

A record's slice name (:func:`slice_keys`), the slices of a field in report order
(:func:`slice_order`, :func:`slices_of`), the seed of a slice's bootstrap (:func:`slice_seed`)
and the unit-split rule (:func:`splits_units`, :func:`unit_split_reason`): a field that varies
within a unit (a dialogue) splits units, and a metric that reads a unit as a whole has no value
in such a slice, rather than a misleading one. A run (local or on Ray), a comparison of two
record files and a comparison of two stored runs all slice through here.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..records import ParseFailure, Table
from .plan import Plan

__all__ = [
    "Slice",
    "slice_codes",
    "slice_keys",
    "slice_order",
    "slice_seed",
    "slices_of",
    "splits_units",
    "table_slices",
    "unit_split_reason",
]

MISSING = "(missing)"
"""The slice of the records that have no value of the field."""


def slice_keys(table: Table, path: str, plan: Plan) -> list[str]:
    """Each record's value of ``path`` as a slice name (:func:`_slice_name`); ``(missing)``
    where it has none."""
    column = table.column(path)
    scale = plan.label_scales.get(path)
    if scale is not None:
        return scale.names(np.asarray(column, dtype=np.int64))
    if isinstance(column, np.ndarray):  # a number field: NaN is a missing value
        return [
            MISSING if math.isnan(v) else str(int(v)) if float(v).is_integer() else repr(v)
            for v in column.tolist()
        ]
    if set(map(type, column)) <= {str, type(None)}:
        return [MISSING if v is None else v for v in column]
    return [_slice_name(v) for v in column]


def _slice_name(value: Any) -> str:
    """A value as a slice's name: text as it is; a boolean, a number as their JSON text (``true``,
    ``3``, as the data has them and as a field the suite does not parse is read, not Python's
    ``True``); ``(did not parse)`` for a value that did not parse. A list or an object is no
    slice (:func:`pingce.engine.plan.check_records` refuses them)."""
    if value is None:
        return MISSING
    if isinstance(value, ParseFailure):
        return "(did not parse)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def slice_codes(names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct slice names (sorted as text) and each record's position among them."""
    values, inverse = np.unique(np.asarray(names, dtype=object).astype(str), return_inverse=True)
    return [str(v) for v in values], inverse.reshape(-1)


def slice_order(names: list[str], path: str, plan: Plan) -> list[int]:
    """Positions of the slice names (sorted as text) in report order: scale order for labels,
    numeric order when every name is a number, else as given; ``(missing)`` last."""
    scale = plan.label_scales.get(path)
    if scale is not None:
        rank = {label: i for i, label in enumerate(scale.labels)}  # (invalid) after them
        return sorted(range(len(names)), key=lambda i: rank.get(names[i], len(rank)))
    numbers = {}
    for i, name in enumerate(names):
        try:
            numbers[i] = float(name)
        except ValueError:
            if name != MISSING:
                return sorted(range(len(names)), key=lambda i: names[i] == MISSING)
    return sorted(range(len(names)), key=lambda i: (i not in numbers, numbers.get(i, 0.0)))


def splits_units(units: np.ndarray | None, inverse: np.ndarray) -> bool:
    """Whether a slice field (``inverse``: each record's slice) varies within a unit (``units``:
    each record's unit code; None outside a unit suite)."""
    if units is None:
        return False
    pairs = np.unique(np.stack([units, inverse]), axis=1).shape[1]
    return bool(pairs > np.unique(units).size)


def unit_split_reason(plan: Plan, path: str, name: str) -> str | None:
    """Why metric ``name`` has no value in a slice of ``path`` that splits units (None: the
    metric reads records alone, and has one)."""
    unit = plan.statistic_of(name).unit_field
    if unit is None:
        return None
    return (
        f"{path} varies within {unit} units and {plan.metrics[name].registry_name} reads each "
        f"{unit} as a whole: slice by a field that is constant within a {unit}"
    )


def slice_seed(seed: int, key: str, poisson: bool) -> int | list[int]:
    """The seed of slice ``key``'s bootstrap: the run's own with the Poisson bootstrap (a record
    weighs alike in every slice), else one derived from the run's seed and the slice's name."""
    if poisson:
        return seed
    return [seed, 2, zlib.crc32(key.encode("utf-8"))]


@dataclass(frozen=True)
class Slice:
    """One value of a ``--slice`` field: ``key`` is ``field=value``, ``rows`` its records."""

    key: str
    path: str
    rows: np.ndarray
    splits_units: bool
    """Whether the field varies within a unit (:func:`splits_units`)."""

    @property
    def n(self) -> int:
        return int(self.rows.shape[0])


def slices_of(
    plan: Plan, names: Mapping[str, Sequence[str]], units: np.ndarray | None
) -> list[Slice]:
    """Every slice of each field in ``names`` (each record's slice name), fields in the given
    order and each field's values in report order (``units``: each record's unit code in a unit
    suite)."""
    out: list[Slice] = []
    for path, names_of in names.items():
        values, inverse = slice_codes(names_of)
        split = splits_units(units, inverse)
        for i in slice_order(values, path, plan):
            out.append(Slice(f"{path}={values[i]}", path, np.flatnonzero(inverse == i), split))
    return out


def table_slices(plan: Plan, table: Table, units: np.ndarray | None) -> list[Slice]:
    """The slices of the run's ``--slice`` fields over ``table``."""
    names = {path: slice_keys(table, path, plan) for path in plan.options.slices}
    return slices_of(plan, names, units)
