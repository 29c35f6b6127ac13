"""Groups of records: units that resample together (dialogues) and the Poisson bootstrap's keys
(slices are :mod:`.slices`')."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, TypeVar

import numpy as np

from ..metrics.protocol import StatBlock
from ..records import Table, json_equal_key
from ..stats import record_keys

K = TypeVar("K", bound=Hashable)

__all__ = [
    "UNGROUPED",
    "bootstrap_keys",
    "first_of_units",
    "groupable",
    "paired_keys",
    "repeat_clusters",
    "resampled_blocks",
    "unclustered_notes",
    "unit_codes",
    "unit_sort_keys",
]


def bootstrap_keys(table: Table, unit: str | None, *, file: int | None = None) -> np.ndarray:
    """Each record's key for the Poisson bootstrap (:func:`pingce.stats.record_keys`): of its
    unit's value in a unit suite (every record of a dialogue shares it), else of its id, or of
    its line for a record without one (in a run over several files, of its line and ``file``,
    the number of its file among them: line N of each file is another record). A record keeps
    its key in any slice, shard or run."""
    if unit is not None:
        column = table.column(unit)
        values = column.tolist() if isinstance(column, np.ndarray) else column
        names = [
            "unit " + v if type(v) is str else "unit-value " + repr(json_equal_key(v))
            for v in values
        ]
    else:
        lines = np.asarray(table.lines).tolist()
        where = "line " if file is None else f"line {file}:"
        names = [
            where + str(line) if i is None else "id " + str(i)
            for i, line in zip(table.ids, lines, strict=True)
        ]
    return record_keys(names)


def paired_keys(names: list[str], by_id: bool) -> np.ndarray:
    """The Poisson keys of a comparison's paired records, from what pairs them: ``id X`` (as in
    a run, so a record weighs alike in its run and in a comparison) or ``match M`` (the JSON
    text of its ``match_by`` values, :func:`pingce.engine.saved.match_keys`)."""
    return record_keys(("id " if by_id else "match ") + name for name in names)


def first_of_units(keys: np.ndarray, dense: np.ndarray, n_units: int) -> np.ndarray:
    """Each unit's key: that of its first record (``dense``: a unit number per record, 0 to
    ``n_units - 1``)."""
    first = np.unique(dense, return_index=True)[1]
    assert first.shape[0] == n_units
    out: np.ndarray = np.asarray(keys, dtype=np.uint64)[first]
    return out


def resampled_blocks(
    blocks: Mapping[K, StatBlock], units: np.ndarray | None, keys: np.ndarray | None
) -> tuple[dict[K, StatBlock], np.ndarray | None]:
    """What a bootstrap resamples, in a run or a comparison (whose units also swap and pair
    together): the blocks (summed within units in a unit suite, ``units`` a unit code per
    record) and their Poisson keys, a unit's that of its first record (in a run every record
    of a unit shares it, :func:`bootstrap_keys`; a comparison keys a unit by its first
    record's pairing key, :func:`paired_keys`)."""
    if units is None:
        return dict(blocks), keys
    codes, dense = np.unique(units, return_inverse=True)
    grouped = {k: b.grouped(dense, len(codes)) for k, b in blocks.items() if groupable(b)}
    return grouped, None if keys is None else first_of_units(keys, dense, len(codes))


def groupable(block: StatBlock) -> bool:
    """Whether a block sums within units (:meth:`StatBlock.grouped`): a statistic of raw rows
    (a latency percentile) does not, so when units resample (repeats) it has no interval and a
    comparison of runs with repeats leaves it out, saying so (:data:`UNGROUPED`)."""
    return block.decomposable and block.tally is None


UNGROUPED = (
    "a percentile of all rows does not split into records with their repeats, which is what "
    "the intervals resample and a comparison pairs"
)
"""Why a metric of raw rows has no interval in a run with repeats, nor a comparison."""


def repeat_clusters(table: Table, unit: str | None) -> np.ndarray | None:
    """With repeats (:attr:`Table.repeats`), each record's cluster: in a unit suite its unit
    code (:func:`unit_codes`: a dialogue's turns with all their repeats resample, draw and pair
    together; each repeat of the dialogue is read as a dialogue of its own by the statistics),
    else the code of its id (its repeats together), numbered in sorted order of the ids; else
    its unit code, also when no id recurs (one repeat a record: resampled as a run without
    repeats resamples it)."""
    if table.repeats is None or unit is not None:
        return unit_codes(table, unit)
    codes, distinct = _text_codes([str(i) for i in table.ids])
    if distinct == len(table.ids):
        return None
    return codes


def unclustered_notes(plan: Any, blocks: Mapping[Any, StatBlock]) -> list[str]:
    """The note of the metrics left without an interval when records resample with their
    repeats: those of raw rows (:func:`resampled_blocks`)."""
    names = [name for name in plan.metrics if not groupable(blocks[plan.keys[name]])]
    if not names:
        return []
    return [
        f"{', '.join(names)}: no interval with repeats ({UNGROUPED}); the value is over every row"
    ]


def unit_codes(table: Table, path: str | None) -> np.ndarray | None:
    """A unit code per record (records with equal values of ``path``, equal as JSON values:
    ``1`` and ``"1"`` are two units), numbered in sorted order of the values; or None.

    Strings sort first (as Python sorts them), then other values by the ``repr`` of their
    :func:`json_equal_key`. Only the distinct values are sorted (a column of strings numbered
    from their sorted set in one pass; others numbered in order of first appearance in C,
    ``dict.fromkeys``, first)."""
    if path is None:
        return None
    column = table.column(path)
    values = column.tolist() if isinstance(column, np.ndarray) else column
    if set(map(type, values)) <= {str}:  # strings: their own keys, sorted as they are
        return _text_codes(values)[0]
    keys = [v if isinstance(v, str) else json_equal_key(v) for v in values]
    first_seen = list(dict.fromkeys(keys))
    index = {key: code for code, key in enumerate(first_seen)}
    codes = np.fromiter(map(index.__getitem__, keys), np.int64, len(keys))
    ordered = sorted(first_seen, key=_unit_order)
    rank = np.empty(len(first_seen), dtype=np.int64)
    rank[[index[key] for key in ordered]] = np.arange(len(ordered), dtype=np.int64)
    return rank[codes]


def _text_codes(values: list[str]) -> tuple[np.ndarray, int]:
    """Each text's code in the sorted set of the texts, and how many distinct texts there are
    (the units' numbering of a column of strings; the clusters' of ids)."""
    ranks = {key: code for code, key in enumerate(sorted(set(values)))}
    return np.fromiter(map(ranks.__getitem__, values), np.int64, len(values)), len(ranks)


def _unit_order(key: Hashable) -> tuple[int, str]:
    """Where a unit's key (its text value, or :func:`json_equal_key` of another value) sorts:
    texts first, in Python's order, then the others by their ``repr``."""
    return (0, key) if isinstance(key, str) else (1, repr(key))


def unit_sort_keys(table: Table, path: str, units: np.ndarray) -> list[tuple[int, str]]:
    """What :func:`unit_codes` sorted the units by (:func:`_unit_order`), in code order; so that
    units numbered in pieces of the records can be numbered as one table's are
    (:mod:`pingce.runfolder.stats`)."""
    column = table.column(path)
    values = column.tolist() if isinstance(column, np.ndarray) else column
    _, first = np.unique(units, return_index=True)
    return [
        _unit_order(v if isinstance(v, str) else json_equal_key(v))
        for v in (values[i] for i in first.tolist())
    ]
