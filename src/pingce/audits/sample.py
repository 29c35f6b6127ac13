"""Which records a human should check: a stratified random sample of the records the judge
decided something for, drawn deterministically from a seed.

Strata follow each record's judge score (the mean of its pairs' scores), at most ``strata`` of
them: a score that many records share (at least 5% of them, or exactly 0 or 1 for two or more: a
judge's point mass, such as a verdict it is sure of) is a stratum of its own, and the other
records are split into quantile bins; records with the same score are never split. (Quantile
bins alone merged a judge's point masses with the uncertain records around them, and Neyman
allocation then gained 2-15% over a uniform sample; with the point masses apart, 20-31%:
benchmarks/README.md.) The budget is split by Neyman allocation, ``n_h ∝ N_h σ_h``, where
``σ_h`` is the judge's own uncertainty in the stratum, ``sqrt(mean(p (1 - p)))`` over its pairs'
scores ``p`` clipped to [0.005, 0.995] (a score near 0.5 is a decision the judge may have got
wrong; a stratum of confident scores needs fewer labels, though never none: the clip keeps a
judge sure of itself from being trusted blindly); ``allocation="uniform"`` splits it in
proportion to ``N_h`` (every record equally likely). Each stratum gets at least two records
(its variance needs two) and at most all of its records; the remainder is given out by largest
remainders. Within a stratum the records are drawn without replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["CLIP", "MASS", "Allocation", "Draw", "allocate", "draw", "strata_of"]

Allocation = Literal["neyman", "uniform"]


@dataclass(frozen=True)
class Draw:
    """The records to label (``indices`` into the decided records' list), each record's
    stratum, and each stratum's size and quota."""

    indices: np.ndarray
    codes: np.ndarray
    """Per decided record, its stratum."""
    sizes: np.ndarray
    quotas: np.ndarray
    bounds: np.ndarray
    """``(len(sizes), 2)``: each stratum's lowest and highest score."""
    groups: np.ndarray | None = None
    """With ``groups`` (``--slice``): each stratum's group."""


MASS = 0.05
"""A score shared by at least this share of the records is a stratum of its own."""
CLIP = 0.005
"""Scores are clipped to ``[CLIP, 1 - CLIP]`` in a stratum's spread."""


def _quantile_bins(scores: np.ndarray, strata: int) -> np.ndarray:
    """Each score's bin among at most ``strata`` quantile bins (equal bounds merged)."""
    edges = np.unique(np.quantile(scores, np.linspace(0, 1, strata + 1)))
    if edges.size < 2:
        return np.zeros(scores.size, dtype=np.intp)
    codes = np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, edges.size - 2)
    return codes.astype(np.intp)


def strata_of(scores: np.ndarray, strata: int) -> tuple[np.ndarray, np.ndarray]:
    """Each record's stratum, numbered in the order of the strata's lowest scores, and each
    stratum's lowest and highest score: the point masses of ``scores`` (a value held by at least
    ``MASS`` of them, or 0 or 1 held by two or more) each a stratum, the largest first, and the
    rest in quantile bins, at most ``strata`` in all."""
    values, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    heavy = (counts >= max(2.0, MASS * scores.size)) | (
        ((values == 0) | (values == 1)) & (counts >= 2)
    )
    ranked = np.flatnonzero(heavy)[np.argsort(-counts[heavy], kind="stable")]
    masses = ranked[:strata]  # the rest, if any, needs a stratum too
    if int(counts[masses].sum()) < scores.size:
        masses = ranked[: strata - 1]
    is_mass = np.isin(inverse, masses)
    raw = np.empty(scores.size, dtype=np.intp)
    # a point mass's records: -1 - its value's index; the rest their quantile bin
    raw[is_mass] = -1 - inverse[is_mass]
    if (~is_mass).any():
        raw[~is_mass] = _quantile_bins(scores[~is_mass], max(1, strata - masses.size))
    labels, codes = np.unique(raw, return_inverse=True)
    lows = np.array([scores[codes == h].min() for h in range(labels.size)])
    highs = np.array([scores[codes == h].max() for h in range(labels.size)])
    order = np.lexsort((highs, lows))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    bounds = np.stack([lows[order], highs[order]], axis=1)
    return rank[codes].astype(np.intp), bounds


def allocate(sizes: np.ndarray, spreads: np.ndarray, budget: int) -> np.ndarray:
    """The quota of each stratum: ``budget`` split in proportion to ``sizes * spreads`` (all
    spreads 0: to ``sizes``), at least 2 (or all of a smaller stratum), at most its size; the
    shares that would exceed a stratum's size are capped and the rest split again."""
    sizes = np.asarray(sizes, dtype=np.int64)
    budget = int(min(budget, sizes.sum()))
    floor = np.minimum(sizes, 2)
    if budget <= floor.sum():  # too few for two a stratum: in turn, largest strata first
        quotas: np.ndarray = np.zeros_like(sizes)
        order = np.argsort(-sizes, kind="stable")
        for r in range(budget):
            quotas[order[r % order.size]] += 1
        return quotas
    room = sizes - floor
    weights = sizes * np.clip(np.asarray(spreads, dtype=np.float64), 0.0, None)
    if not (weights * (room > 0)).sum() > 0:
        weights = room.astype(np.float64)
    target = np.zeros(sizes.size)
    free = (room > 0) & (weights > 0)
    remaining = float(budget - floor.sum())
    while free.any():
        share = remaining * weights[free] / weights[free].sum()
        over = share > room[free]
        if not over.any():
            target[free] = share
            break
        capped = np.flatnonzero(free)[over]
        target[capped] = room[capped]
        remaining -= float(room[capped].sum())
        free[capped] = False
    quotas = floor + np.floor(target + 1e-9).astype(np.int64)
    left = budget - int(quotas.sum())
    for h in np.argsort(-(target - np.floor(target + 1e-9)), kind="stable"):
        if left <= 0:
            break
        if quotas[h] < sizes[h]:
            quotas[h] += 1
            left -= 1
    return quotas


def draw(
    scores: Sequence[np.ndarray],
    budget: int,
    *,
    seed: int = 0,
    strata: int = 4,
    allocation: Allocation = "neyman",
    groups: np.ndarray | None = None,
) -> Draw:
    """Draw ``budget`` of the records whose pairs' judge scores are ``scores`` (one array a
    record), stratified by score within each of ``groups`` (a group code per record) when
    given."""
    if budget < 1:
        raise ValueError(f"--budget {budget}: at least 1 record")
    means = np.array([float(np.mean(s)) for s in scores])
    codes, bounds, of_group = _strata_within(means, budget, strata, groups)
    k = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=k)
    if allocation == "uniform":
        spreads = np.ones(k)
    else:
        spreads = np.zeros(k)
        for h in range(k):
            members = np.flatnonzero(codes == h).tolist()
            p = np.clip(np.concatenate([scores[i] for i in members]), CLIP, 1 - CLIP)
            spreads[h] = float(np.sqrt(np.mean(p * (1 - p))))
    quotas = allocate(sizes, spreads, budget)
    rng = np.random.default_rng(seed)
    chosen = [
        rng.choice(np.flatnonzero(codes == h), size=int(quotas[h]), replace=False) for h in range(k)
    ]
    indices = np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.intp)
    return Draw(indices.astype(np.intp), codes, sizes, quotas, bounds, of_group)


def _strata_within(
    means: np.ndarray, budget: int, strata: int, groups: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Each record's stratum: the score strata (:func:`strata_of`) within each of ``groups``
    (a group code per record: ``--slice``), their bounds, and each stratum's group. A stratum
    without a labelled record could not be corrected: no more strata than half the budget."""
    if groups is None:
        codes, bounds = strata_of(means, max(1, min(strata, budget // 2 or 1)))
        return codes, bounds, None
    groups = np.asarray(groups, dtype=np.intp)
    present = np.unique(groups)
    per = max(1, min(strata, budget // (2 * present.size) or 1))
    codes = np.zeros(means.size, dtype=np.intp)
    parts: list[np.ndarray] = []
    owner: list[int] = []
    for g in present.tolist():
        members = np.flatnonzero(groups == g)
        inner, inner_bounds = strata_of(means[members], per)
        codes[members] = inner + len(owner)
        parts.append(inner_bounds)
        owner += [g] * len(inner_bounds)
    return codes, np.concatenate(parts), np.array(owner, dtype=np.intp)
