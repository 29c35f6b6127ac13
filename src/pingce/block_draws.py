"""Per-block multinomial resampling (`--bootstrap-stream per-block`, the default; issue 32).

A bootstrap resample draws ``n`` records with replacement; a block whose ``n`` rows take ``K``
distinct values, value ``k`` held by ``m_k`` records, then sums to ``counts @ distinct`` with
``counts`` ~ Multinomial(n, m / n): the number of draws that fell on a record of each value. One
draw of ``K`` counts per block a resample (all resamples at once) replaces ``n`` indices, their
per-record counts and a pass over the block. The replicates equal the index bootstrap's in law,
block by block; the streams of blocks that split the records differently are independent of
one another (each keyed on its partition, :func:`partition`), which no interval reads: each
metric reads one block. Blocks that split them alike share their counts. A paired comparison
draws the joint values of the two systems' rows (one category per distinct pair), so the
pairing is exact.

Categories: a one-hot block's cells; a dense block's distinct rows (bit for bit); a broadcast
row (one category: every resample sums ``n`` times it); raw latencies' runs of equal values,
with the records without one as one more category. A block whose rows are nearly all distinct
(more than a quarter of ``n`` categories) has none: it keeps the index stream.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np

from .block_sums import distinct_rows
from .metrics.protocol import StatBlock

__all__ = [
    "KEPT_COUNTS",
    "Categories",
    "block_rng",
    "categories",
    "joint_categories",
    "multinomial_counts",
]

_SHARE = 0.25
"""At most this share of ``n`` categories (beyond, the index draw costs no more)."""
_CHUNK = 1 << 22
"""Counts drawn at most this many numbers at a time (resamples x categories)."""
KEPT_COUNTS = 1 << 24
"""A partition's counts (resamples x categories) are held for the next block that splits the
records alike (a latency's mean, then its percentiles) up to this many numbers (128 MB), and
drawn again beyond."""

Categories = tuple[np.ndarray, np.ndarray]
"""Each record's category and the categories' rows (``K x width``; for raw rows, the sorted
values with NaN last)."""


def _factorised(rows: np.ndarray) -> Categories | None:
    if rows.dtype != np.float64 or rows.ndim != 2 or rows.shape[1] == 0:
        return None  # compared bit for bit as 64-bit words: float64 matrices only
    few = distinct_rows(rows)
    if few is not None:
        return few
    code = np.zeros(rows.shape[0], dtype=np.int64)
    bits = np.ascontiguousarray(rows).view(np.int64)
    first = np.zeros(0, dtype=np.intp)
    for j in range(bits.shape[1]):  # one sort per column, the codes packed again after each
        _, inverse = np.unique(bits[:, j], return_inverse=True)
        code = code * (int(inverse.max()) + 1) + inverse
        _, first, code = np.unique(code, return_index=True, return_inverse=True)
        if first.size > _SHARE * rows.shape[0]:
            return None
    return code.astype(np.intp), np.asarray(rows[first], dtype=np.float64)


def categories(block: StatBlock) -> Categories | None:
    """A block of records' categories, or None where they would be nearly as many as records."""
    n = block.n
    if block.codes is not None:
        return block.codes.astype(np.intp), np.eye(block.width)
    rows = block.rows
    assert rows is not None
    if rows.ndim == 2 and rows.strides[0] == 0:
        return np.zeros(n, dtype=np.intp), np.asarray(rows[:1], dtype=np.float64)
    if not block.decomposable:  # raw latencies: sorted values, NaN one category
        values = rows[:, 0]
        missing = np.isnan(values)
        distinct, inverse = np.unique(values[~missing], return_inverse=True)
        if distinct.size > _SHARE * n:
            return None
        code = np.full(n, distinct.size, dtype=np.intp)
        code[~missing] = inverse
        return code, np.append(distinct, np.nan)[:, None]
    return _factorised(rows)


def joint_categories(first: Categories, second: Categories) -> tuple[Categories, Categories] | None:
    """The two sides of a comparison as categories of their joint values (one per distinct
    pair of categories), so that a resample draws both sides' rows of the same records."""
    a, b = first[0].astype(np.int64), second[0].astype(np.int64)
    pair = a * (int(b.max(initial=0)) + 1) + b
    _, first_of, code = np.unique(pair, return_index=True, return_inverse=True)
    if first_of.size > _SHARE * a.size:
        return None
    code = code.astype(np.intp)
    return (code, first[1][a[first_of]]), (code, second[1][b[first_of]])


def partition(code: np.ndarray) -> tuple[bytes, np.ndarray, np.ndarray]:
    """How ``code`` splits the records, whatever its categories are called: a fingerprint
    (BLAKE2b of the categories renumbered in order of first record), the categories that
    records have, and each one's number in that order. Two blocks that split the records alike
    (a latency's mean and its percentiles) draw the same counts."""
    n = code.size
    first = np.full(int(code.max(initial=-1)) + 1, n, dtype=np.intp)
    np.minimum.at(first, code, np.arange(n))  # each category's first record
    used = np.flatnonzero(first < n)
    rank = np.empty(used.size, dtype=np.intp)
    rank[np.argsort(first[used], kind="stable")] = np.arange(used.size)
    renumber = np.zeros(first.size, dtype=np.int64)
    renumber[used] = rank
    digest = hashlib.blake2b(renumber[code].tobytes(), digest_size=16).digest()
    return digest, used, rank


def block_rng(seed: int | list[int], key: object) -> np.random.Generator:
    """The stream of one partition of the records (``key``: its fingerprint) under the run's
    seed, so a metric's interval does not depend on which other statistics the suite has."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    words = [int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")]
    seeds = seed if isinstance(seed, list) else [seed]
    return np.random.default_rng([*(int(s) for s in seeds), *words])


def multinomial_counts(
    multiplicities: np.ndarray, resamples: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """``resamples`` draws of Multinomial(n, m / n), in chunks of rows (float64), drawn as they
    are read: at most :data:`_CHUNK` numbers are held at a time, however many categories."""
    n = int(multiplicities.sum())
    p = multiplicities / n
    rows = max(1, _CHUNK // max(1, multiplicities.size))
    for start in range(0, resamples, rows):
        take = min(rows, resamples - start)
        yield rng.multinomial(n, p, size=take).astype(np.float64)
