"""Resampled sums of a statistic block by the cheapest route that gives the same numbers.

A bootstrap resample weighs record ``i`` ``weights[i]`` times (whole numbers: multinomial or
Poisson counts) and needs each decomposable block's weighted sum. :meth:`StatBlock.weighted_total`
computes it record by record (``np.bincount`` of one-hot codes, ``weights @ rows`` of dense
rows). Many dense blocks have only a handful of distinct rows (an evidence block of a million
records without evidence: two; rules on level-only records: one, kept broadcast by
:meth:`StatBlock.compact`). Their sum is then ``bincount(code, weights) @ distinct`` (the
records' weights added per distinct row, a ``K``-vector, times the ``K`` distinct rows), or, for
a broadcast block, ``weights.sum() * row``.

Both routes give the exact sum, hence the same bits, whenever every partial sum is a
representable number: each column's values are whole multiples of a power of two ``2**e`` (any
float is) and ``sum(weights) · max|value| / 2**e < 2**53``, so every product and partial sum,
in whatever order BLAS adds them, is a whole multiple of ``2**e`` below ``2**53 · 2**e`` (the
counts of a row are whole numbers too). :func:`summer` takes the short route only where this
holds for the weights at hand (checked per resample from the total weight, one number) and
otherwise the record-by-record one, so no result changes by a bit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .metrics.protocol import StatBlock

__all__ = ["DISTINCT_LIMIT", "distinct_rows", "exact_bound", "summer"]

DISTINCT_LIMIT = 16
"""At most this many distinct rows take the short route (beyond, one pass over the records per
distinct row to find them costs more than it saves)."""
_HEAD = 4096
"""Rows looked at first: a block with more distinct rows than :data:`DISTINCT_LIMIT` among them
is given up at once."""

Summer = Callable[[np.ndarray], np.ndarray]
"""A block's weighted sum for one resample's per-record weights."""


def distinct_rows(
    rows: np.ndarray, limit: int = DISTINCT_LIMIT
) -> tuple[np.ndarray, np.ndarray] | None:
    """Each record's distinct row (``codes``, in first-seen order) and the distinct rows
    themselves (``K × width``), compared bit for bit; None when there are more than ``limit``
    or the rows are not a float64 matrix."""
    if rows.dtype != np.float64 or rows.ndim != 2 or rows.shape[0] == 0:
        return None
    bits = np.ascontiguousarray(rows).view(np.int64)
    if np.unique(bits[:_HEAD], axis=0).shape[0] > limit:
        return None
    codes = np.full(rows.shape[0], -1, dtype=np.intp)
    unassigned = np.ones(rows.shape[0], dtype=bool)
    found: list[np.ndarray] = []
    while unassigned.any():
        if len(found) == limit:
            return None
        first = bits[int(np.argmax(unassigned))]
        same = unassigned.copy()
        for j in range(bits.shape[1]):  # column by column: no temporary of the block's size
            same &= bits[:, j] == first[j]
        codes[same] = len(found)
        unassigned &= ~same
        found.append(first.view(np.float64))
    return codes, np.array(found, dtype=np.float64)


def exact_bound(distinct: np.ndarray) -> float | None:
    """The largest total weight under which any weighted sum of ``distinct``'s rows (whole
    weights) is exact in any order of addition; None when none is (a value not finite, or a
    negative zero, whose sign an order of addition may keep or lose)."""
    if not np.isfinite(distinct).all() or (np.signbit(distinct) & (distinct == 0)).any():
        return None
    bound = math.inf
    for column in distinct.T:
        nonzero = column[column != 0]
        if nonzero.size == 0:
            continue
        fractions, exponents = np.frexp(nonzero)
        mantissas = np.abs(fractions * 2.0**53).astype(np.int64)  # exact: 53 bits
        lowest = (mantissas & -mantissas).astype(np.float64)  # the lowest set bit
        unit = float(np.min(np.ldexp(lowest, exponents - 53)))  # 2**e of the column
        if unit < 2.0**-1000:  # products could fall below the normal range
            return None
        bound = min(bound, 2.0**53 * unit / float(np.max(np.abs(nonzero))) * (1 - 2.0**-40))
    return bound


def summer(block: StatBlock) -> Summer:
    """The weighted sum of ``block`` for a resample's weights, equal bit for bit to
    :meth:`StatBlock.weighted_total`: over the distinct rows where they are few and the sum is
    exact (module docstring), record by record otherwise."""
    rows = block.rows
    if block.codes is not None or rows is None or rows.ndim != 2 or rows.shape[0] < 2:
        return block.weighted_total
    if rows.strides[0] == 0:  # one row broadcast (StatBlock.compact)
        found: tuple[np.ndarray, np.ndarray] | None = (
            np.zeros(0, dtype=np.intp),
            np.asarray(rows[:1], dtype=np.float64),
        )
    else:
        found = distinct_rows(rows)
    if found is None:
        return block.weighted_total
    codes, distinct = found
    bound = exact_bound(distinct)
    if bound is None:
        return block.weighted_total
    k = distinct.shape[0]

    def total(weights: np.ndarray) -> np.ndarray:
        if k == 1:
            counts = np.array([weights.sum()], dtype=np.float64)
        else:
            counts = np.bincount(codes, weights=weights, minlength=k).astype(np.float64)
        if not counts.sum() < bound:  # exact only below the bound (module docstring)
            return block.weighted_total(weights)
        return np.asarray(counts @ distinct, dtype=np.float64)

    return total
