"""Bootstrap confidence intervals from summed statistics.

One seeded index matrix drives every interval of a run: row ``b`` is
``numpy.random.default_rng(seed).integers(0, n, size=n)`` drawn for the ``b``-th time, the records
of resample ``b``. It is generated row by row (a million records times a thousand resamples would
not fit in memory as a whole) and turned into per-record counts (one ``np.bincount``), which
serve every metric at once: a resample then costs a weighted ``np.bincount`` or a product
``counts @ rows`` (on one BLAS thread, :mod:`pingce.threads`) per statistic block, never a
re-tokenisation or a model call; a dense block whose rows take a handful of values is summed over
them instead, with the same bits (:mod:`pingce.block_sums`). The same rows can be applied to two
runs for a paired comparison.

The Poisson bootstrap (``bootstrap_method="poisson"``; Hanley & MacGibbon 2006, Chamandy et al.
2012) draws no index: record ``i``'s weight in resample ``b`` is Poisson(1), computed from the
record's own key (:func:`record_keys`, from its id), the seed and ``b`` alone by a counter-based
generator (:func:`poisson_counts`). A record then weighs the same in the whole run, in a slice,
in any shard of the data and in both runs of a comparison, so resampled sums computed shard by
shard add up to those of the whole. Its resamples do not hold exactly ``n`` records (their size
is Poisson(n)); the intervals agree with the multinomial bootstrap's within Monte Carlo error.

Intervals: ``percentile``, ``basic`` and ``bca`` (bias-corrected and accelerated, the default of
``scipy.stats.bootstrap``), with the same definitions as scipy; BCa's acceleration comes from the
jackknife, which for summed statistics is one vectorised call.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal, TypeVar

import numpy as np

from .block_draws import (
    KEPT_COUNTS,
    Categories,
    block_rng,
    categories,
    joint_categories,
    multinomial_counts,
    partition,
)
from .block_sums import exact_bound, summer
from .metrics.protocol import Metric, StatBlock
from .progress import Advance
from .threads import one_blas_thread

CIMethod = Literal["bca", "percentile", "basic"]
"""Bootstrap interval methods (scipy's definitions)."""
BootstrapStream = Literal["per-block", "indices"]
"""How the multinomial bootstrap draws: per block, Multinomial counts of its distinct rows
(:mod:`pingce.block_draws`), or ``n`` record indices shared by every block (the stream before
issue 32, kept for one release)."""
BootstrapMethod = Literal["multinomial", "poisson"]
"""How resamples are drawn: ``n`` records with replacement (multinomial counts), or a Poisson(1)
weight per record keyed on the record (mergeable across shards)."""
_K = TypeVar("_K")

__all__ = [
    "BootstrapMethod",
    "BootstrapStream",
    "CIMethod",
    "Interval",
    "McNemar",
    "PairedInterval",
    "acceleration_of_moments",
    "approximate_randomisation",
    "benjamini_hochberg",
    "binomial_two_sided",
    "bootstrap_intervals",
    "excludes_zero",
    "holm",
    "inverted_p_value",
    "jackknife_moments",
    "margin_p_value",
    "mcnemar_exact",
    "paired_intervals",
    "poisson_counts",
    "poisson_sums",
    "record_keys",
    "replicate_interval",
    "replicate_intervals",
    "resample_indices",
    "swap_masks",
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


def jackknife_moments(
    metric: Metric, rows: np.ndarray, total: np.ndarray, theta_hat: float
) -> np.ndarray:
    """What ``rows`` (some of a block's records, dense, decomposable) add to BCa's acceleration
    when the whole block sums to ``total`` and its value is ``theta_hat``: the count and the sums
    of ``d``, ``d**2``, ``d**3`` of the leave-one-out deviations ``d = finalize(total - row) -
    theta_hat`` (undefined ones left out). Sums of shards add up to the whole block's
    (:func:`acceleration_of_moments`), so a distributed run needs no record in one place."""
    out = np.zeros(4)
    for start in range(0, rows.shape[0], _JACKKNIFE_CHUNK):
        part = np.asarray(rows[start : start + _JACKKNIFE_CHUNK], dtype=np.float64)
        d = np.asarray(metric.finalize(total[None, :] - part), dtype=np.float64) - theta_hat
        d = d[~np.isnan(d)]
        out += (d.size, d.sum(), np.dot(d, d), np.dot(d * d, d))
    return out


def acceleration_of_moments(moments: np.ndarray) -> float:
    """:func:`_acceleration` from :func:`jackknife_moments` summed over every record: with
    ``m`` the mean deviation, ``Σ(m - d)**2 = S2 - n m**2`` and ``Σ(m - d)**3 = -(S3 - 3 m S2 +
    2 n m**3)`` (the deviations are small, so nothing cancels)."""
    n, s1, s2, s3 = (float(x) for x in moments)
    if n < 2:
        return math.nan
    m = s1 / n
    second = s2 - n * m * m
    third = -(s3 - 3.0 * m * s2 + 2.0 * n * m**3)
    if second <= 0:
        return 0.0
    return float(third / (6.0 * second**1.5))


_SCALED_ABOVE = 1e100
"""Jackknife values beyond this size are divided by a power of two before the acceleration
(which does not change with the scale) so that their cubes stay finite: latencies near 1e308
gave an overflow."""


def _acceleration(values: np.ndarray, counts: np.ndarray) -> float:
    """BCa's acceleration from weighted jackknife values (scipy's formula)."""
    keep = ~np.isnan(values)
    if not keep.all():
        values, counts = values[keep], counts[keep]
    n = float(counts.sum())
    if n < 2:
        return math.nan
    largest = max(float(values.max()), -float(values.min())) if values.size else 0.0
    if not math.isfinite(largest):
        return math.nan
    if largest > _SCALED_ABOVE:  # the cubes would overflow: the same acceleration, scaled
        values = np.ldexp(values, -np.frexp(largest)[1])
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


class _Bounds:
    """One method's interval over a set of resampled values, as a function of ``alpha`` (the
    interval at level ``1 - alpha``): what the interval and the p-value that inverts it share.

    Everything that does not depend on the level (the defined resamples, BCa's bias correction
    and acceleration, whether BCa falls back to the percentile interval) is fixed here once, so
    every level is answered by the same method on the same resamples."""

    def __init__(
        self,
        theta_hat: float,
        theta: np.ndarray,
        method: CIMethod,
        jackknife: Callable[[], tuple[np.ndarray, np.ndarray] | float],
    ) -> None:
        self.theta_hat = theta_hat
        defined = theta[~np.isnan(theta)]
        self.defined = defined
        self.method: CIMethod = method
        self.notes: list[str] = []
        undefined = theta.size - defined.size
        if undefined:
            self.notes.append(f"{undefined} of {theta.size} resamples undefined and left out")
        self.constant: float | None = None
        self.empty = defined.size < 2
        if self.empty:
            return
        if float(defined.min()) == float(defined.max()):
            self.notes.append("every resample gives the same value")
            self.constant = float(defined[0])
            return
        self.z0 = self.a = math.nan
        if method == "bca":
            below = np.count_nonzero(defined < theta_hat) + np.count_nonzero(defined <= theta_hat)
            self.z0 = ndtri(below / (2.0 * defined.size))
            found = jackknife()
            if isinstance(found, float):  # an acceleration from merged moments
                self.a = found
            else:
                values, counts = found
                self.a = _acceleration(values, counts)

    def __call__(self, alpha: float) -> tuple[float, float]:
        """The interval at level ``1 - alpha`` (two-sided: ``alpha / 2`` in each tail)."""
        if self.constant is not None:
            return self.constant, self.constant
        defined, half = self.defined, alpha / 2.0
        if self.method == "percentile":
            return _quantile(defined, half), _quantile(defined, 1 - half)
        if self.method == "basic":
            return (
                2 * self.theta_hat - _quantile(defined, 1 - half),
                2 * self.theta_hat - _quantile(defined, half),
            )
        a1, a2 = _bca_levels(self.z0, ndtri(half), self.a)
        if not (math.isfinite(a1) and math.isfinite(a2)):
            return _quantile(defined, half), _quantile(defined, 1 - half)
        return _quantile(defined, a1), _quantile(defined, a2)

    def fell_back(self, alpha: float) -> bool:
        """Whether BCa is undefined at this level (the percentile interval is given instead)."""
        if self.method != "bca" or self.constant is not None or self.empty:
            return False
        a1, a2 = _bca_levels(self.z0, ndtri(alpha / 2.0), self.a)
        return not (math.isfinite(a1) and math.isfinite(a2))

    def interval(self, level: float) -> Interval:
        if self.empty:
            return Interval(None, None, "too few resamples where the metric is defined")
        notes = list(self.notes)
        if self.fell_back(1.0 - level):
            notes.append("BCa undefined for this distribution; percentile interval shown")
        low, high = self(1.0 - level)
        return Interval(low, high, "; ".join(notes) or None)


def _interval(
    theta_hat: float,
    theta: np.ndarray,
    method: CIMethod,
    level: float,
    jackknife: Callable[[], tuple[np.ndarray, np.ndarray]],
) -> Interval:
    return _Bounds(theta_hat, theta, method, jackknife).interval(level)


def excludes_zero(low: float | None, high: float | None) -> bool:
    """Whether an interval lies wholly on one side of 0 (an interval that touches 0 does not)."""
    return low is not None and high is not None and (low > 0.0 or high < 0.0)


_BISECTIONS = 400
"""Upper bound on bisection steps over the level; the search stops at a relative width of 1e-12
long before (about 40 steps for p near 0.05; halving the logarithm first when p is tiny)."""
_TINY = 1e-300
"""The smallest level searched: an interval that excludes 0 even there excludes it at every
level, and the p-value is given as 0."""


def _smallest_alpha(out: Callable[[float], bool]) -> float:
    """The smallest ``alpha`` in (0, 1] at which ``out(alpha)`` holds, where it holds on one
    range ``[p, 1]`` (nested intervals): 1 when it fails even at 1, 0 when it holds at every
    level the search reaches, else the edge found by bisection."""
    if not out(1.0):
        return 1.0
    if out(_TINY):
        return 0.0
    lo, hi = _TINY, 1.0  # out(hi), not out(lo): the edge lies between
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi) if hi > 1e6 * lo else math.sqrt(lo * hi)
        if not lo < mid < hi or hi - lo <= 1e-12 * hi:
            break
        if out(mid):
            hi = mid
        else:
            lo = mid
    return hi


def margin_p_value(bounds: _Bounds, low: float | None, high: float | None) -> float:
    """The one-sided p-value of "the difference lies at or beyond a margin", by inverting the
    interval as :func:`inverted_p_value` does: the smallest ``alpha`` at which the two-sided
    interval of level ``1 - 2 alpha`` lies above ``low`` (non-inferiority of a metric higher is
    better, ``low = -δ``), below ``high`` (lower is better, ``high = δ``), or both
    (equivalence: the larger of the two one-sided p-values, two one-sided tests). So the
    interval at ``level`` clears the margin exactly when ``p < (1 - level) / 2``. Where even
    the point estimate does not clear it, ``1 -`` the p-value of the opposite side."""
    if bounds.empty:
        raise ValueError("no interval: too few defined resamples")

    if low is not None and high is not None:  # equivalence: two one-sided tests
        return max(margin_p_value(bounds, low, None), margin_p_value(bounds, None, high))

    def clears(alpha: float) -> bool:  # the interval of level 1 - alpha, wholly on the good side
        a, b = bounds(alpha)
        return a > low if low is not None else high is not None and b < high

    def beyond(alpha: float) -> bool:  # ... wholly on the other side of the margin
        a, b = bounds(alpha)
        return b < low if low is not None else high is not None and a > high

    if clears(1.0):
        return _smallest_alpha(clears) / 2.0
    if not beyond(1.0):  # the point estimate sits on the margin
        return 0.5
    return 1.0 - _smallest_alpha(beyond) / 2.0


def inverted_p_value(bounds: _Bounds, level: float) -> float:
    """The two-sided p-value of "no difference" that inverts the interval: the smallest
    ``alpha`` at which the interval of level ``1 - alpha`` (same method, same resamples)
    excludes 0, found by bisection over ``alpha`` in (0, 1].

    The intervals of one method are nested (a lower level, a shorter interval), so the set of
    levels at which 0 is excluded is one range and the p-value is its edge: at every level the
    interval excludes 0 exactly when ``p < 1 - level``. 1 when even the level-0 interval (the
    median, or BCa's point) touches 0; 0 when the interval excludes 0 at every level (all
    resamples on one side of 0: below what the resamples can resolve, ``1 / (B + 1)``). The
    answer is then made to agree exactly with the interval at ``level`` (the one reported),
    whatever rounding does at the edge."""
    if bounds.empty:
        raise ValueError("no interval: too few defined resamples")

    def out(alpha: float) -> bool:
        return excludes_zero(*bounds(alpha))

    p = _smallest_alpha(out)
    alpha = 1.0 - level
    if out(alpha) and not p < alpha:
        p = math.nextafter(alpha, 0.0)
    elif not out(alpha) and p < alpha:
        p = alpha
    return p


def _bca_levels(z0: float, z: float, a: float) -> tuple[float, float]:
    """BCa's adjusted quantile levels (scipy's formula); NaN where they do not exist.

    Past the pole of ``t / (1 - a t)`` (``1 - a t <= 0``, reached only at extreme levels or
    with a large acceleration) scipy's formula wraps around to levels that run backwards; there
    the level is the limit at the pole (0 below, 1 above), so that BCa intervals stay nested as
    the level grows, which the inverted p-value relies on."""
    if not (math.isfinite(z0) and math.isfinite(a) and math.isfinite(z)):
        return math.nan, math.nan
    levels = []
    for t in (z0 + z, z0 - z):
        with np.errstate(all="ignore"):
            denominator = 1.0 - a * t
            if denominator <= 0.0:
                levels.append(0.0 if t < 0 else 1.0)
                continue
            levels.append(ndtr(float(np.float64(z0) + np.float64(t) / np.float64(denominator))))
    return levels[0], levels[1]


def _bootstrap_counts(n: int, resamples: int, seed: int | list[int]) -> Iterator[np.ndarray]:
    """Per-record counts of each row of the bootstrap index matrix (at most two arrays of ``n``
    alive: the index is dropped as soon as it is counted)."""
    for index in resample_indices(n, resamples, seed):
        whole = np.bincount(index, minlength=n)
        del index
        counts = whole.astype(np.float64)
        del whole
        yield counts
        del counts  # the consumer has let go of it: free it before the next draw


_GAMMA = 0x9E3779B97F4A7C15
"""SplitMix64's increment (2**64 divided by the golden ratio, odd)."""
_POISSON_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(40)])
"""P(X <= k) of Poisson(1) for k = 0, 1, ...: a uniform u gives the k with
P(X <= k-1) <= u < P(X <= k)."""
_POISSON_STEPS = np.array([math.ceil(c * 2.0**53) for c in _POISSON_CDF], dtype=np.uint64)
"""The same steps for ``h = u · 2**53`` (an integer below 2**53): ``u >= P(X <= k)`` exactly when
``h >= ceil(P(X <= k) · 2**53)``, so the weight is a search among integers (no float
conversion of a million numbers per resample)."""


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea & Flood 2014): a bijection of 64-bit integers
    whose outputs for consecutive inputs pass BigCrush; arithmetic modulo 2**64."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    out: np.ndarray = z ^ (z >> np.uint64(31))
    return out


def _seed64(seed: int | list[int]) -> int:
    """A 64-bit integer for a seed (a list of integers, as slices and comparisons derive)."""
    text = ",".join(str(int(s)) for s in (seed if isinstance(seed, list) else [seed]))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def record_keys(names: Iterable[str]) -> np.ndarray:
    """The 64-bit key of each record (or unit) for the Poisson bootstrap: the first 8 bytes of
    BLAKE2b of its name in UTF-8, little-endian; the same on any machine and in any shard."""
    digests = b"".join(
        hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest() for name in names
    )
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


def poisson_counts(
    keys: np.ndarray, resamples: int, seed: int | list[int], start: int = 0
) -> Iterator[np.ndarray]:
    """The Poisson bootstrap's weights: for ``b`` in ``range(resamples)`` the array of each
    record's Poisson(1) weight, from a counter-based generator: ``u = (mix(key ^ mix(seed' +
    (b + 1)·γ)) >> 11) / 2**53`` (``mix`` SplitMix64's output function, ``seed'`` the seed as
    64 bits) through Poisson(1)'s inverse distribution function. A weight depends on the key,
    the seed and ``b`` only."""
    keys = np.asarray(keys, dtype=np.uint64)
    base = _seed64(seed)
    for b in range(start, resamples):  # resamples start.. alone: the same weights as in all
        stream = _mix64(np.array([(base + (b + 1) * _GAMMA) % 2**64], dtype=np.uint64))
        top = _mix64(keys ^ stream) >> np.uint64(11)  # u · 2**53
        yield np.searchsorted(_POISSON_STEPS, top, side="right").astype(np.float64)


def _draws(
    n: int, resamples: int, seed: int | list[int], keys: np.ndarray | None
) -> Iterator[np.ndarray]:
    """Per-record weights of each resample: multinomial counts, or Poisson with ``keys``."""
    if keys is None:
        return _bootstrap_counts(n, resamples, seed)
    if len(keys) != n:
        raise ValueError(f"{len(keys)} keys for {n} records")
    return poisson_counts(keys, resamples, seed)


def swap_masks(n: int, trials: int, seed: int | list[int]) -> Iterator[np.ndarray]:
    """The approximate randomisation's trials: ``trials`` boolean masks of ``n`` records (or
    units), True where the two systems' statistics swap places.

    They are the rows of ``numpy.random.default_rng(seed).integers(2, size=(trials, n),
    dtype=bool)``, the matrix sacrebleu's ``paired_ar`` draws, generated a block of rows at a
    time: numpy draws booleans 32 to a word and drops a call's unused bits, so each block holds
    a multiple of 32 booleans and the blocks continue one stream."""
    rng = np.random.default_rng(seed)
    step = 32 // math.gcd(n, 32) if n else 1
    rows = max(step, (1 << 22) // max(n, 1) // step * step)
    done = 0
    while done < trials:
        take = min(rows, trials - done)
        block = rng.integers(2, size=(take, n), dtype=bool)
        yield from block
        done += take


def _resample(
    sides: list[Mapping[object, StatBlock]],
    wanted: Mapping[str, tuple[Metric, object]],
    draws: Iterable[np.ndarray],
    resamples: int,
    progress: Advance | None,
    *,
    swap: bool = False,
) -> list[dict[str, np.ndarray]]:
    """Per side, every wanted metric's value on each of ``resamples`` draws, every side read
    with the same draw.

    A draw is either per-record counts (``swap`` False: the bootstrap with one side, the paired
    bootstrap with two), or, with two sides and ``swap``, a mask of the records whose
    statistics trade places between the sides (the approximate randomisation: side 0 becomes
    ``total_0 - sum_masked(0) + sum_masked(1)``, side 1 the converse)."""
    first = sides[0]
    keys = {key for _, key in wanted.values()}
    decomposable = [k for k in keys if first[k].decomposable]
    raw = [(name, m, key) for name, (m, key) in wanted.items() if not m.decomposable]
    summed = [{k: np.empty((resamples, first[k].width)) for k in decomposable} for _ in sides]
    theta_raw = [{name: np.empty(resamples) for name, _, _ in raw} for _ in sides]
    summers = [{k: summer(blocks[k]) for k in decomposable} for blocks in sides]
    # Not enumerate(): its reused result tuple would keep the last draw alive.
    b = -1
    with one_blas_thread():
        for draw in draws:
            b += 1
            # Every block and raw metric reads the draw, so nothing gathers by an index.
            weights = draw.astype(np.float64) if swap else draw
            for side, blocks in enumerate(sides):
                for key in decomposable:
                    summed[side][key][b] = summers[side][key](weights)
                for name, metric, key in raw:
                    rows = blocks[key].rows
                    assert rows is not None
                    if swap:
                        other = sides[1 - side][key].rows
                        assert other is not None
                        mask = draw.reshape((-1,) + (1,) * (rows.ndim - 1))
                        theta_raw[side][name][b] = metric.finalize_rows(np.where(mask, other, rows))
                    else:
                        theta_raw[side][name][b] = metric.finalize_rows(rows, weights)
            del draw, weights  # and what metrics derived from them (timing's cumulative counts)
            if progress is not None:
                progress(1)
    if swap:  # masked sums -> the sums of the two pseudo-systems
        masked = summed
        summed = [
            {
                k: sides[side][k].total()[None, :] - masked[side][k] + masked[1 - side][k]
                for k in decomposable
            }
            for side in range(2)
        ]
    out: list[dict[str, np.ndarray]] = []
    for side in range(len(sides)):
        values = dict(theta_raw[side])
        for name, (metric, key) in wanted.items():
            if metric.decomposable:
                values[name] = np.asarray(metric.finalize(summed[side][key]), dtype=np.float64)
        out.append(values)
    return out


def _category_block(block: StatBlock, found: tuple[np.ndarray, np.ndarray]) -> StatBlock:
    """A block of one record per category (its row), read with the categories' counts."""
    return StatBlock(width=block.width, rows=found[1], decomposable=block.decomposable)


def _spread(
    chunks: Iterable[np.ndarray], used: np.ndarray, rank: np.ndarray, width: int
) -> Iterator[np.ndarray]:
    """Each resample's counts of a block's categories from the counts of its partition's parts
    (categories no record has: 0)."""
    for chunk in chunks:
        full = np.zeros((chunk.shape[0], width))
        full[:, used] = chunk[:, rank]
        yield from full


def _chunked(
    small: list[Mapping[object, StatBlock]],
    key: object,
    named: Mapping[str, tuple[Metric, object]],
    chunks: Iterable[np.ndarray],
    parts: tuple[np.ndarray, np.ndarray],
    n: int,
    resamples: int,
) -> list[dict[str, np.ndarray]] | None:
    """:func:`_resample` of one block's categories a chunk of resamples at a time (one product
    of the chunk's counts and the categories' rows, not one a resample), where that gives the
    same bits: every metric decomposable and every sum exact in any order of addition (each
    resample's counts add up to ``n``, below the rows' :func:`~pingce.block_sums.exact_bound`);
    None otherwise."""
    if not all(metric.decomposable for metric, _ in named.values()):
        return None
    rows: list[np.ndarray] = []
    for blocks in small:
        side_rows = blocks[key].rows
        if side_rows is None or side_rows.dtype != np.float64 or side_rows.ndim != 2:
            return None
        bound = exact_bound(side_rows)
        if bound is None or not n < bound:
            return None
        rows.append(side_rows)
    used, rank = parts
    summed = [np.empty((resamples, r.shape[1])) for r in rows]
    done = 0
    with one_blas_thread():
        for chunk in chunks:
            full = np.zeros((chunk.shape[0], rows[0].shape[0]))
            full[:, used] = chunk[:, rank]
            for side, side_rows in enumerate(rows):
                summed[side][done : done + chunk.shape[0]] = full @ side_rows
            done += chunk.shape[0]
    return [
        {
            name: np.asarray(metric.finalize(summed[side]), dtype=np.float64)
            for name, (metric, _) in named.items()
        }
        for side in range(len(small))
    ]


def _categorised(sides: list[Mapping[object, StatBlock]], key: object) -> list[Categories] | None:
    """The categories of block ``key`` on every side (two sides: their joint categories, so a
    draw reads both systems' rows of the same records), or None: the index stream."""
    found = [categories(side[key]) for side in sides]
    if len(found) == 2 and found[0] is not None and found[1] is not None:
        joint = joint_categories(found[0], found[1])
        found = [None, None] if joint is None else list(joint)
    cats = [f for f in found if f is not None]
    return cats if len(cats) == len(sides) else None


def _per_block(
    sides: list[Mapping[object, StatBlock]],
    wanted: Mapping[str, tuple[Metric, object]],
    resamples: int,
    seed: int | list[int],
    progress: Advance | None,
) -> list[dict[str, np.ndarray]]:
    """:func:`_resample` with per-block multinomial draws (:mod:`pingce.block_draws`) for the
    blocks that have categories, the record-index stream for the others."""
    groups: dict[object, dict[str, tuple[Metric, object]]] = {}
    for name, (metric, key) in wanted.items():
        groups.setdefault(key, {})[name] = (metric, key)
    out: list[dict[str, np.ndarray]] = [{} for _ in sides]
    rest: dict[str, tuple[Metric, object]] = {}
    planned = []
    for key, named in groups.items():
        cats = _categorised(sides, key)
        if cats is None:
            rest.update(named)
        else:
            planned.append((key, named, cats, partition(cats[0][0])))
    uses = Counter(fingerprint for *_, (fingerprint, _, _) in planned)
    kept: dict[bytes, list[np.ndarray]] = {}
    for key, named, cats, (fingerprint, used, rank) in planned:
        # In order of first record, from the partition's own generator: blocks that split the
        # records alike read the same counts (held for the next such block up to KEPT_COUNTS
        # numbers, else drawn again).
        uses[fingerprint] -= 1
        chunks: Iterable[np.ndarray] | None = (
            kept.get(fingerprint) if uses[fingerprint] else kept.pop(fingerprint, None)
        )
        if chunks is None:
            width = cats[0][1].shape[0]
            ordered = np.empty(used.size)
            ordered[rank] = np.bincount(cats[0][0], minlength=width)[used]
            chunks = multinomial_counts(ordered, resamples, block_rng(seed, fingerprint))
            if uses[fingerprint] and used.size * resamples <= KEPT_COUNTS:
                chunks = kept[fingerprint] = list(chunks)
        small: list[Mapping[object, StatBlock]] = [
            {key: _category_block(side[key], c)} for side, c in zip(sides, cats, strict=True)
        ]
        n = int(cats[0][0].size)
        found = _chunked(small, key, named, chunks, (used, rank), n, resamples)
        if found is None:
            draws = _spread(chunks, used, rank, cats[0][1].shape[0])
            found = _resample(small, named, draws, resamples, None)
        for side, values in enumerate(found):
            out[side].update(values)
    if rest:
        n = next(iter(sides[0].values())).n
        every = _bootstrap_counts(n, resamples, seed)
        for side, values in enumerate(_resample(sides, rest, every, resamples, progress)):
            out[side].update(values)
    elif progress is not None:
        progress(resamples)
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
    keys: np.ndarray | None = None,
    stream: BootstrapStream = "per-block",
) -> dict[str, Interval]:
    """Confidence intervals of every metric from one pass over the resamples.

    ``blocks`` maps statistic keys to their blocks (all over the same ``n`` records), ``metrics``
    maps a metric's result name to the metric and its statistic key, ``values`` holds the point
    estimates. Metrics whose value is undefined get no interval. ``keys`` (one per record,
    :func:`record_keys`): the Poisson bootstrap; None: the multinomial bootstrap.
    """
    if not metrics or resamples <= 0:
        return {}
    wanted = {name: pair for name, pair in metrics.items() if values.get(name) is not None}
    n = next(iter(blocks.values())).n
    if keys is None and stream == "per-block":
        (resampled,) = _per_block([blocks], wanted, resamples, seed, progress)
    else:
        draws = _draws(n, resamples, seed, keys)
        (resampled,) = _resample([blocks], wanted, draws, resamples, progress)

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


def poisson_sums(
    blocks: Mapping[_K, StatBlock], keys: np.ndarray, resamples: int, seed: int | list[int]
) -> dict[_K, np.ndarray]:
    """Each decomposable block's Poisson bootstrap replicate sums, shape ``(resamples, width)``:
    row ``b`` is the sum of the records' statistics weighted by their Poisson(1) weights in
    resample ``b`` (:func:`poisson_counts`). A record's weight depends on its key alone, so the
    sums of the shards of a data set add up to the sums of the whole."""
    dense = {k: b for k, b in blocks.items() if b.decomposable}
    out = {k: np.empty((resamples, b.width)) for k, b in dense.items()}
    if not dense:
        return out
    summers = {key: summer(block) for key, block in dense.items()}
    b = -1
    with one_blas_thread():
        for weights in poisson_counts(keys, resamples, seed):
            b += 1
            for key, total in summers.items():
                out[key][b] = total(weights)
    return out


def _no_jackknife() -> tuple[np.ndarray, np.ndarray]:
    raise ValueError("BCa needs the jackknife of every metric it gives an interval")


def replicate_interval(
    theta_hat: float,
    theta: np.ndarray,
    *,
    method: CIMethod = "bca",
    level: float = 0.95,
    jackknife: Callable[[], tuple[np.ndarray, np.ndarray] | float] = _no_jackknife,
) -> Interval:
    """One value's interval from its resampled values ``theta`` (made elsewhere: the audit's
    prediction-powered resamples, :mod:`pingce.audits.bootstrap`) by the same methods as
    :func:`bootstrap_intervals`; ``jackknife`` gives BCa's jackknife as (values,
    multiplicities) or its acceleration directly (a float)."""
    return _Bounds(theta_hat, theta, method, jackknife).interval(level)


def replicate_intervals(
    metrics: Mapping[str, tuple[Metric, object]],
    values: Mapping[str, float | None],
    thetas: Mapping[str, np.ndarray],
    *,
    method: CIMethod = "bca",
    level: float = 0.95,
    jackknives: Mapping[str, Callable[[], tuple[np.ndarray, np.ndarray] | float]] | None = None,
) -> dict[str, Interval]:
    """Intervals from each metric's resampled values ``thetas`` (made elsewhere, such as from
    Poisson replicate sums merged across shards) by the same methods as
    :func:`bootstrap_intervals`. ``jackknives[name]`` gives BCa's jackknife as (values,
    multiplicities), or its acceleration directly (a float, from merged
    :func:`jackknife_moments`)."""
    out: dict[str, Interval] = {}
    for name in metrics:
        theta_hat = values.get(name)
        if theta_hat is None or name not in thetas:
            continue
        given = None if jackknives is None else jackknives.get(name)
        bounds = _Bounds(theta_hat, thetas[name], method, given or _no_jackknife)
        out[name] = bounds.interval(level)
    return out


@dataclass(frozen=True)
class PairedInterval:
    """Interval of a difference (candidate − baseline) and the two-sided p-value that inverts
    it (:func:`inverted_p_value`); ``method`` is the interval method actually used."""

    low: float | None
    high: float | None
    p_value: float | None
    note: str | None = None
    method: CIMethod = "bca"
    margin_p_value: float | None = None
    """With a margin: the one-sided p-value of the difference lying beyond it
    (:func:`margin_p_value`)."""


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
    keys: np.ndarray | None = None,
    stream: BootstrapStream = "per-block",
    margins: Mapping[str, tuple[float | None, float | None]] | None = None,
) -> dict[str, PairedInterval]:
    """Paired bootstrap of metric differences: each resample draws the same records (or units)
    from both systems, so what the two share does not count as noise.

    ``candidate`` and ``baseline`` map statistic keys to blocks over the same ``n`` records in
    the same order. The interval comes from the resampled differences with ``method``
    (scipy's definitions; BCa's jackknife leaves one record out of both). The two-sided p-value
    inverts that interval (:func:`inverted_p_value`): the smallest ``alpha`` at which the
    interval of the same method on the same resamples excludes 0, so that the interval excludes
    0 exactly when ``p < 1 - level``. ``keys``: the Poisson bootstrap, as in
    :func:`bootstrap_intervals` (a pair of records shares its key, hence its weights).
    ``margins``: per metric, the bounds a difference must clear (``(-δ, None)``,
    ``(None, δ)`` or ``(-δ, δ)``) and whose one-sided p-value is computed from the same
    resamples (:func:`margin_p_value`).
    """
    if not metrics or resamples <= 0:
        return {}
    wanted = {name: pair for name, pair in metrics.items() if deltas.get(name) is not None}
    n = next(iter(candidate.values())).n
    sides = [candidate, baseline]
    if keys is None and stream == "per-block":
        ours, theirs = _per_block(sides, wanted, resamples, seed, progress)
    else:
        draws = _draws(n, resamples, seed, keys)
        ours, theirs = _resample(sides, wanted, draws, resamples, progress)

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

        bounds = _Bounds(delta, theta, chosen, jack)
        interval = bounds.interval(level)
        p_value = None
        notes = [x for x in (note, interval.note) if x]
        if not bounds.empty:
            p_value = inverted_p_value(bounds, level)
            if bounds.fell_back(1.0 - level):
                chosen = "percentile"
            if p_value == 0.0:
                notes.append(
                    "the interval excludes 0 at every level: p below what "
                    f"{bounds.defined.size} resamples resolve"
                )
        margin = (margins or {}).get(name)
        margin_p = None if margin is None or bounds.empty else margin_p_value(bounds, *margin)
        out[name] = PairedInterval(
            interval.low, interval.high, p_value, "; ".join(notes) or None, chosen, margin_p
        )
    return out


def approximate_randomisation(
    candidate: Mapping[object, StatBlock],
    baseline: Mapping[object, StatBlock],
    metrics: Mapping[str, tuple[Metric, object]],
    deltas: Mapping[str, float | None],
    *,
    trials: int,
    seed: int | list[int],
    progress: Advance | None = None,
) -> dict[str, float]:
    """Two-sided p-values of the paired approximate randomisation (permutation) test.

    On each of ``trials`` trials every record (every unit, when the blocks are grouped by unit)
    swaps its candidate and baseline statistics with probability 1/2 (:func:`swap_masks`, the
    draws of sacrebleu's ``paired_ar`` for the same seed); the metric is recomputed from the
    summed statistics of the two pseudo-systems, and
    ``p = (1 + #{trials: |delta*| >= |delta|}) / (trials + 1)``. (sacrebleu counts ``>``,
    which gives a system compared with itself ``p = 1 / (trials + 1)``; ``>=`` gives it 1.)
    A trial whose difference is undefined is left out.
    """
    if not metrics or trials <= 0:
        return {}
    wanted = {name: pair for name, pair in metrics.items() if deltas.get(name) is not None}
    if not wanted:
        return {}
    n = next(iter(candidate.values())).n
    draws = swap_masks(n, trials, seed)
    ours, theirs = _resample([candidate, baseline], wanted, draws, trials, progress, swap=True)
    out: dict[str, float] = {}
    for name in wanted:
        delta = deltas[name]
        assert delta is not None
        shuffled = np.abs(ours[name] - theirs[name])
        shuffled = shuffled[~np.isnan(shuffled)]
        # the difference of a trial equal to the observed one, up to the rounding of a sum
        # taken in another order, counts as reaching it
        reached = np.count_nonzero(shuffled >= abs(delta) - 1e-12 * max(abs(delta), 1e-300))
        out[name] = float((1 + reached) / (shuffled.size + 1))
    return out


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test of a proportion-of-records metric: ``candidate_only`` units right
    (1) for the candidate and wrong (0) for the baseline, ``baseline_only`` the converse."""

    candidate_only: int
    baseline_only: int
    p_value: float


_CHECK_WEIGHTS = 3
"""Random weightings on which a metric must equal the weighted mean of its per-unit values."""


def _zero_one_values(metric: Metric, block: StatBlock) -> np.ndarray | None:
    """Each unit's value (NaN where it has none) when ``metric`` is a proportion of units: every
    unit that counts counts once, with value 0 or 1, and the metric of any weighting of the
    units is the weighted mean of their values. None otherwise."""
    if not metric.decomposable or block.n == 0:
        return None
    rows = block.per_record()
    with np.errstate(all="ignore"):
        values = np.asarray(metric.finalize(rows), dtype=np.float64)
        counts = np.asarray(metric.count(rows), dtype=np.float64)
    if values.shape != (block.n,) or counts.shape != (block.n,):
        return None
    counted = counts > 0
    if not counted.any() or not np.all(counts[counted] == 1.0):
        return None
    v = values[counted]
    if not np.all((v == 0.0) | (v == 1.0)):
        return None
    rng = np.random.default_rng(0)
    for trial in range(_CHECK_WEIGHTS):
        weights = np.ones(block.n) if trial == 0 else rng.uniform(0.5, 2.0, size=block.n)
        with np.errstate(all="ignore"):
            got = float(np.asarray(metric.finalize(weights @ rows)).item())
        expected = float(weights[counted] @ v / weights[counted].sum())
        if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12):
            return None
    out = np.full(block.n, np.nan)
    out[counted] = v
    return out


def mcnemar_exact(metric: Metric, candidate: StatBlock, baseline: StatBlock) -> McNemar | None:
    """Exact McNemar test for an accuracy-type metric (a proportion of units, each 0 or 1; see
    :func:`_zero_one_values`), None for any other metric.

    With ``b`` units right only for the candidate and ``c`` only for the baseline, under "no
    difference" each of the ``b + c`` discordant units is equally likely to go either way:
    ``p = min(1, 2 P(X <= min(b, c)))``, ``X ~ Binomial(b + c, 1/2)`` (1 when ``b + c = 0``), the
    two-sided ``scipy.stats.binomtest(b, b + c)``. Both proportions must be over the same units
    (accuracy, recall: yes; precision, whose units are each side's predicted positives: no);
    otherwise, or for a metric that is not such a proportion, None."""
    ours = _zero_one_values(metric, candidate)
    theirs = _zero_one_values(metric, baseline)
    if ours is None or theirs is None:
        return None
    if not np.array_equal(np.isnan(ours), np.isnan(theirs)):
        return None  # the two proportions are over different units (precision): not paired
    b = int(np.count_nonzero((ours == 1.0) & (theirs == 0.0)))
    c = int(np.count_nonzero((ours == 0.0) & (theirs == 1.0)))
    return McNemar(b, c, binomial_two_sided(min(b, c), b + c))


def binomial_two_sided(k: int, n: int) -> float:
    """``min(1, 2 P(X <= k))`` for ``X ~ Binomial(n, 1/2)`` and ``k <= n / 2``: the exact
    two-sided binomial test of a fair coin (1 when ``n = 0``)."""
    if n == 0:
        return 1.0
    from scipy.special import bdtr  # first use only: scipy.special costs a run half a second

    return min(1.0, 2.0 * float(bdtr(k, n, 0.5)))


def holm(p_values: Mapping[_K, float]) -> dict[_K, float]:
    """Holm–Bonferroni adjusted p-values (``statsmodels.stats.multitest.multipletests(...,
    method="holm")``): with the ``m`` p-values in ascending order ``p_(1) <= ... <= p_(m)``,
    ``p_holm_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``. Rejecting where ``p_holm < alpha``
    keeps the chance of any false rejection among the ``m`` at most ``alpha``, whatever their
    dependence."""
    names = sorted(p_values, key=lambda name: p_values[name])  # stable: ties keep their order
    m = len(names)
    out: dict[_K, float] = {}
    running = 0.0
    for j, name in enumerate(names):
        running = max(running, min(1.0, (m - j) * p_values[name]))
        out[name] = running
    return {name: out[name] for name in p_values}


def benjamini_hochberg(p_values: Mapping[_K, float]) -> dict[_K, float]:
    """Benjamini–Hochberg adjusted p-values (``multipletests(..., method="fdr_bh")``): with the
    ``m`` p-values ascending, ``p_bh_(i) = min_{j >= i} min(1, m p_(j) / j)``. Rejecting where
    ``p_bh < alpha`` keeps the expected share of false rejections at most ``alpha`` (for
    independent or positively dependent tests)."""
    names = sorted(p_values, key=lambda name: p_values[name])
    m = len(names)
    out: dict[_K, float] = {}
    running = 1.0
    for j in range(m - 1, -1, -1):
        running = min(running, min(1.0, m * p_values[names[j]] / (j + 1)))
        out[names[j]] = running
    return {name: out[name] for name in p_values}
