"""Bootstrap confidence intervals from summed statistics.

One seeded index matrix drives every interval of a run: row ``b`` is
``numpy.random.default_rng(seed).integers(0, n, size=n)`` drawn for the ``b``-th time, the records
of resample ``b``. It is generated row by row (a million records times a thousand resamples would
not fit in memory as a whole), and each row serves every metric at once: a resample costs one
``np.bincount`` per statistic block, never a re-tokenisation or a model call. The same rows can
be applied to two runs for a paired comparison.

Intervals: ``percentile``, ``basic`` and ``bca`` (bias-corrected and accelerated, the default of
``scipy.stats.bootstrap``), with the same definitions as scipy; BCa's acceleration comes from the
jackknife, which for summed statistics is one vectorised call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri

from .metrics.base import Metric, StatBlock

__all__ = ["CIMethod", "Interval", "bootstrap_intervals", "resample_indices"]

CIMethod = Literal["bca", "percentile", "basic"]


@dataclass(frozen=True)
class Interval:
    """A confidence interval; ``low``/``high`` are None when it cannot be given (see ``note``)."""

    low: float | None
    high: float | None
    note: str | None = None


def resample_indices(n: int, resamples: int, seed: int | list[int]) -> Iterator[np.ndarray]:
    """Rows of the seeded bootstrap index matrix: ``resamples`` arrays of ``n`` record indices."""
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        yield rng.integers(0, n, size=n)


def _quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q).item())


def _jackknife(metric: Metric, block: StatBlock) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out values of ``metric`` as (distinct values, multiplicities)."""
    if not metric.decomposable:
        assert block.rows is not None
        return metric.jackknife_rows(block.rows)
    total = block.total()
    if block.codes is not None:
        counts = np.bincount(block.codes, minlength=block.width).astype(np.float64)
        present = np.flatnonzero(counts)
        values = metric.compute(total[None, :] - np.eye(block.width)[present])
        return np.asarray(values, dtype=np.float64), counts[present]
    assert block.rows is not None
    values = metric.compute(total[None, :] - block.rows)
    return np.asarray(values, dtype=np.float64), np.ones(block.n)


def _acceleration(values: np.ndarray, counts: np.ndarray) -> float:
    """BCa's acceleration from weighted jackknife values (scipy's formula)."""
    keep = ~np.isnan(values)
    values, counts = values[keep], counts[keep]
    n = float(counts.sum())
    if n < 2:
        return math.nan
    mean = float((values * counts).sum() / n)
    u = (n - 1) * (mean - values)
    num = float((counts * u**3).sum()) / n**3
    den = float((counts * u**2).sum()) / n**2
    if den == 0:
        return 0.0
    return float(num / (6.0 * den**1.5))


def _interval(
    theta_hat: float,
    theta: np.ndarray,
    method: CIMethod,
    level: float,
    jackknife: Callable[[], tuple[np.ndarray, np.ndarray]],
) -> Interval:
    alpha = (1.0 - level) / 2.0
    defined = theta[~np.isnan(theta)]
    undefined = theta.size - defined.size
    notes = []
    if undefined:
        notes.append(f"{undefined} of {theta.size} resamples undefined and left out")
    if defined.size < 2:
        return Interval(None, None, "too few resamples where the metric is defined")
    if float(defined.min()) == float(defined.max()):
        notes.append("every resample gives the same value")
        return Interval(float(defined[0]), float(defined[0]), "; ".join(notes))
    if method == "percentile":
        low, high = _quantile(defined, alpha), _quantile(defined, 1 - alpha)
    elif method == "basic":
        low = 2 * theta_hat - _quantile(defined, 1 - alpha)
        high = 2 * theta_hat - _quantile(defined, alpha)
    else:
        below = np.count_nonzero(defined < theta_hat) + np.count_nonzero(defined <= theta_hat)
        z0 = float(ndtri(below / (2.0 * defined.size)))
        values, counts = jackknife()
        a = _acceleration(values, counts)
        z = float(ndtri(alpha))
        with np.errstate(all="ignore"):
            a1 = float(ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))))
            a2 = float(ndtr(z0 + (z0 - z) / (1 - a * (z0 - z))))
        if not (math.isfinite(a1) and math.isfinite(a2)):
            notes.append("BCa undefined for this distribution; percentile interval shown")
            low, high = _quantile(defined, alpha), _quantile(defined, 1 - alpha)
        else:
            low, high = _quantile(defined, a1), _quantile(defined, a2)
    return Interval(low, high, "; ".join(notes) or None)


def bootstrap_intervals(
    blocks: Mapping[object, StatBlock],
    metrics: Mapping[str, tuple[Metric, object]],
    values: Mapping[str, float | None],
    *,
    resamples: int,
    seed: int | list[int],
    method: CIMethod = "bca",
    level: float = 0.95,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Interval]:
    """Confidence intervals of every metric from one pass over the resamples.

    ``blocks`` maps statistic keys to their blocks (all over the same ``n`` records), ``metrics``
    maps a metric's result name to the metric and its statistic key, ``values`` holds the point
    estimates. Metrics whose value is undefined get no interval.
    """
    if not metrics or resamples <= 0:
        return {}
    n = next(iter(blocks.values())).n
    wanted = {name: pair for name, pair in metrics.items() if values.get(name) is not None}
    used_keys = {key for _, key in wanted.values()}
    decomposable = [k for k in used_keys if blocks[k].decomposable]
    raw = [(name, m, blocks[key]) for name, (m, key) in wanted.items() if not m.decomposable]
    summed = {k: np.empty((resamples, blocks[k].width)) for k in decomposable}
    theta_raw = {name: np.empty(resamples) for name, _, _ in raw}

    for b, index in enumerate(resample_indices(n, resamples, seed)):
        cached: list[np.ndarray] = []

        def counts(index: np.ndarray = index, cached: list[np.ndarray] = cached) -> np.ndarray:
            if not cached:
                cached.append(np.bincount(index, minlength=n).astype(np.float64))
            return cached[0]

        for key in decomposable:
            summed[key][b] = blocks[key].resampled_total(index, counts)
        for name, metric, block in raw:
            assert block.rows is not None
            theta_raw[name][b] = metric.compute_rows(block.rows, counts())
        if progress is not None:
            progress(1)

    out: dict[str, Interval] = {}
    for name, (metric, key) in wanted.items():
        block = blocks[key]
        theta = (
            theta_raw[name]
            if not metric.decomposable
            else np.asarray(metric.compute(summed[key]), dtype=np.float64)
        )
        theta_hat = values[name]
        assert theta_hat is not None

        def jack(
            metric: Metric = metric, block: StatBlock = block
        ) -> tuple[np.ndarray, np.ndarray]:
            return _jackknife(metric, block)

        out[name] = _interval(theta_hat, theta, method, level, jack)
    return out
