"""Bootstrap confidence intervals from summed statistics.

One seeded index matrix drives every interval of a run: row ``b`` is
``numpy.random.default_rng(seed).integers(0, n, size=n)`` drawn for the ``b``-th time, the records
of resample ``b``. It is generated row by row (a million records times a thousand resamples would
not fit in memory as a whole) and turned into per-record counts (one ``np.bincount``), which
serve every metric at once: a resample then costs a weighted ``np.bincount`` or a product
``counts @ rows`` (on one BLAS thread, :mod:`pingce.threads`) per statistic block, never a
re-tokenisation or a model call. The same rows can be applied to two runs for a paired comparison.

Intervals: ``percentile``, ``basic`` and ``bca`` (bias-corrected and accelerated, the default of
``scipy.stats.bootstrap``), with the same definitions as scipy; BCa's acceleration comes from the
jackknife, which for summed statistics is one vectorised call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np

from .metrics.protocol import Metric, StatBlock
from .progress import Advance
from .threads import one_blas_thread

CIMethod = Literal["bca", "percentile", "basic"]
"""Bootstrap interval methods (scipy's definitions)."""

__all__ = [
    "CIMethod",
    "Interval",
    "PairedInterval",
    "bootstrap_intervals",
    "paired_intervals",
    "resample_indices",
]


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


_NORMAL = NormalDist()


def ndtr(x: float) -> float:
    """The standard normal CDF, as ``scipy.special.ndtr`` (NaN stays NaN). The standard
    library's (an erfc) spares every run the half second ``import scipy.special`` costs."""
    if math.isnan(x):
        return math.nan
    return _NORMAL.cdf(x)


def ndtri(p: float) -> float:
    """The standard normal quantile, as ``scipy.special.ndtri``: -inf at 0, inf at 1, NaN
    outside [0, 1] (Wichura's AS241 in the standard library, within 1e-15 of scipy's)."""
    if math.isnan(p) or not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def _quantile(values: np.ndarray, q: float) -> float:
    return float(np.quantile(values, q).item())


_JACKKNIFE_CHUNK = 65536
"""Records per leave-one-out batch of a dense block: the batch's temporaries stay small."""


def _jackknife(metric: Metric, block: StatBlock) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out values of ``metric`` as (distinct values, multiplicities)."""
    if not metric.decomposable:
        assert block.rows is not None
        return metric.jackknife_rows(block.rows)
    total = block.total()
    if block.codes is not None:
        counts = np.bincount(block.codes, minlength=block.width).astype(np.float64)
        present = np.flatnonzero(counts)
        values = metric.finalize(total[None, :] - np.eye(block.width)[present])
        return np.asarray(values, dtype=np.float64), counts[present]
    assert block.rows is not None
    values = np.empty(block.n, dtype=np.float64)
    for start in range(0, block.n, _JACKKNIFE_CHUNK):  # elementwise: chunks change no bit
        stop = start + _JACKKNIFE_CHUNK
        values[start:stop] = metric.finalize(total[None, :] - block.rows[start:stop])
    return values, np.ones(block.n)


def _acceleration(values: np.ndarray, counts: np.ndarray) -> float:
    """BCa's acceleration from weighted jackknife values (scipy's formula)."""
    keep = ~np.isnan(values)
    if not keep.all():
        values, counts = values[keep], counts[keep]
    n = float(counts.sum())
    if n < 2:
        return math.nan
    # scipy's formula with two temporaries of the jackknife's length, reused (a million
    # leave-one-out values: no new peak of memory), every operation the one it writes
    work = np.multiply(values, counts)
    mean = float(work.sum() / n)
    u = np.subtract(mean, values)
    u *= n - 1
    np.multiply(counts, np.power(u, 3, out=work), out=work)
    num = float(work.sum()) / n**3
    np.multiply(counts, np.square(u, out=work), out=work)
    den = float(work.sum()) / n**2
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
        z0 = ndtri(below / (2.0 * defined.size))
        values, counts = jackknife()
        a = _acceleration(values, counts)
        z = ndtri(alpha)
        a1, a2 = _bca_levels(z0, z, a)
        if not (math.isfinite(a1) and math.isfinite(a2)):
            notes.append("BCa undefined for this distribution; percentile interval shown")
            low, high = _quantile(defined, alpha), _quantile(defined, 1 - alpha)
        else:
            low, high = _quantile(defined, a1), _quantile(defined, a2)
    return Interval(low, high, "; ".join(notes) or None)


def _bca_levels(z0: float, z: float, a: float) -> tuple[float, float]:
    """BCa's adjusted quantile levels (scipy's formula); NaN where they do not exist."""
    with np.errstate(all="ignore"):
        terms = np.array([z0 + z, z0 - z], dtype=np.float64)
        shifted = z0 + terms / (1 - a * terms)
    return ndtr(float(shifted[0])), ndtr(float(shifted[1]))


def _resample(
    sides: list[Mapping[object, StatBlock]],
    wanted: Mapping[str, tuple[Metric, object]],
    resamples: int,
    seed: int | list[int],
    progress: Advance | None,
) -> list[dict[str, np.ndarray]]:
    """Per side, every wanted metric's value on each resample, all sides drawn with the same
    index rows (one side: the bootstrap; two: the paired bootstrap)."""
    first = sides[0]
    n = next(iter(first.values())).n
    keys = {key for _, key in wanted.values()}
    decomposable = [k for k in keys if first[k].decomposable]
    raw = [(name, m, key) for name, (m, key) in wanted.items() if not m.decomposable]
    summed = [{k: np.empty((resamples, first[k].width)) for k in decomposable} for _ in sides]
    theta_raw = [{name: np.empty(resamples) for name, _, _ in raw} for _ in sides]
    # Not enumerate(): its reused result tuple would keep the last index alive.
    b = -1
    with one_blas_thread():
        for index in resample_indices(n, resamples, seed):
            b += 1
            # Per-record counts replace the index at once (at most two arrays of n alive);
            # every block and raw metric reads them, so nothing gathers by the index.
            whole = np.bincount(index, minlength=n)
            del index
            counts = whole.astype(np.float64)
            del whole
            for side, blocks in enumerate(sides):
                for key in decomposable:
                    summed[side][key][b] = blocks[key].weighted_total(counts)
                for name, metric, key in raw:
                    rows = blocks[key].rows
                    assert rows is not None
                    theta_raw[side][name][b] = metric.finalize_rows(rows, counts)
            del counts  # and what metrics derived from them (timing's cumulative counts)
            if progress is not None:
                progress(1)
    out: list[dict[str, np.ndarray]] = []
    for side in range(len(sides)):
        values = dict(theta_raw[side])
        for name, (metric, key) in wanted.items():
            if metric.decomposable:
                values[name] = np.asarray(metric.finalize(summed[side][key]), dtype=np.float64)
        out.append(values)
    return out


def bootstrap_intervals(
    blocks: Mapping[object, StatBlock],
    metrics: Mapping[str, tuple[Metric, object]],
    values: Mapping[str, float | None],
    *,
    resamples: int,
    seed: int | list[int],
    method: CIMethod = "bca",
    level: float = 0.95,
    progress: Advance | None = None,
) -> dict[str, Interval]:
    """Confidence intervals of every metric from one pass over the resamples.

    ``blocks`` maps statistic keys to their blocks (all over the same ``n`` records), ``metrics``
    maps a metric's result name to the metric and its statistic key, ``values`` holds the point
    estimates. Metrics whose value is undefined get no interval.
    """
    if not metrics or resamples <= 0:
        return {}
    wanted = {name: pair for name, pair in metrics.items() if values.get(name) is not None}
    (resampled,) = _resample([blocks], wanted, resamples, seed, progress)

    out: dict[str, Interval] = {}
    for name, (metric, key) in wanted.items():
        block = blocks[key]
        theta = resampled[name]
        theta_hat = values[name]
        assert theta_hat is not None

        def jack(
            metric: Metric = metric, block: StatBlock = block
        ) -> tuple[np.ndarray, np.ndarray]:
            return _jackknife(metric, block)

        out[name] = _interval(theta_hat, theta, method, level, jack)
    return out


@dataclass(frozen=True)
class PairedInterval:
    """Interval of a difference (candidate − baseline) and its two-sided bootstrap p-value."""

    low: float | None
    high: float | None
    p_value: float | None
    note: str | None = None


def _per_record_jackknife(metric: Metric, block: StatBlock) -> np.ndarray:
    """Leave-one-record-out values, in record order (decomposable metrics only)."""
    rows = block.per_record()
    return np.asarray(metric.finalize(block.total()[None, :] - rows), dtype=np.float64)


def paired_intervals(
    candidate: Mapping[object, StatBlock],
    baseline: Mapping[object, StatBlock],
    metrics: Mapping[str, tuple[Metric, object]],
    deltas: Mapping[str, float | None],
    *,
    resamples: int,
    seed: int | list[int],
    method: CIMethod = "bca",
    level: float = 0.95,
    progress: Advance | None = None,
) -> dict[str, PairedInterval]:
    """Paired bootstrap of metric differences: each resample draws the same records (or units)
    from both systems, so what the two share does not count as noise.

    ``candidate`` and ``baseline`` map statistic keys to blocks over the same ``n`` records in
    the same order. The interval comes from the resampled differences with ``method``
    (scipy's definitions; BCa's jackknife leaves one record out of both). The two-sided p-value
    is the one that matches the percentile interval (which excludes 0 at level 1 - p):
    ``min(1, 2 (1 + min(#{d* <= 0}, #{d* >= 0})) / (B + 1))``.
    """
    if not metrics or resamples <= 0:
        return {}
    wanted = {name: pair for name, pair in metrics.items() if deltas.get(name) is not None}
    ours, theirs = _resample([candidate, baseline], wanted, resamples, seed, progress)

    out: dict[str, PairedInterval] = {}
    for name, (metric, key) in wanted.items():
        delta = deltas[name]
        assert delta is not None
        theta = ours[name] - theirs[name]
        chosen: CIMethod = method
        note = None
        if method == "bca" and not metric.decomposable:
            chosen, note = "percentile", "percentile interval (BCa needs a decomposable metric)"

        def jack(metric: Metric = metric, key: object = key) -> tuple[np.ndarray, np.ndarray]:
            values = _per_record_jackknife(metric, candidate[key]) - _per_record_jackknife(
                metric, baseline[key]
            )
            return values, np.ones(values.shape[0])

        interval = _interval(delta, theta, chosen, level, jack)
        defined = theta[~np.isnan(theta)]
        p_value = None
        if defined.size:
            below = np.count_nonzero(defined <= 0.0)
            above = np.count_nonzero(defined >= 0.0)
            p_value = min(1.0, float(2 * (1 + min(below, above)) / (defined.size + 1)))
        notes = "; ".join(x for x in (note, interval.note) if x) or None
        out[name] = PairedInterval(interval.low, interval.high, p_value, notes)
    return out
