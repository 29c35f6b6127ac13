"""Bootstrap intervals of a prediction-powered value (:mod:`pingce.audits.ppi`): each resample
draws, in every stratum, the labelled records and the unlabelled records separately with
replacement (as many of each as there are), recomputes the corrected mean row (λ tuned again
when it is tuned, fixed when given, as :func:`pingce.audits.ppi.metric_lambda`'s is) and the
metric's ``finalize``; the interval is the resampled values' percentile, basic or BCa interval
(:func:`pingce.stats.replicate_interval`, the same definitions as every other interval of
pingce), or, with ``method="normal"``, the delta method's
(:func:`pingce.audits.ppi.delta_interval`).

A row is whatever is resampled as one: a record, or a dialogue whose rows the caller has added
up (the cluster bootstrap). The strata's shares of the records stay fixed, as the sizes of the
labelled and unlabelled samples do (stratified sampling).

**Vectorised.** A resample's corrected mean depends on the rows only through a few sums per
stratum: of the human rows ``S``, the judge's ``Ŝ`` on the labelled records and ``Ũ`` on the
others, and, to tune λ, of ``S·Ŝ``, ``Ŝ²`` and ``Ũ²`` (``cov(S, Ŝ)`` and ``var(Ŝ)`` from sums, the
judge's rows centred on their mean first so that nothing cancels). Each part's rows are grouped
into their distinct rows (:func:`pingce.block_draws.categories`: a binary verdict's rows take a
handful of values however many records there are), and a chunk of resamples is one draw of
Multinomial counts of those categories times the categories' sums, ``counts @ features``, at
most ``memory`` bytes of counts at a time. Each part draws from its own generator (the seed,
the stratum, the part), and the product is numpy's ``einsum`` (no BLAS: the sum of a row does
not depend on how many rows are computed with it), so the chunk size changes no bit.

**BCa's acceleration** for several independent samples (Davison and Hinkley 1997, section
3.2.1): with ``l_pi = (n_p - 1)(θ̄_p - θ_(pi))`` the jackknife influence of row ``i`` of part
``p`` (the labelled or the unlabelled records of a stratum, ``n_p`` rows; ``θ_(pi)`` the value
without it, λ tuned again), ``a = Σ_p Σ_i l_pi³ / n_p³ / (6 (Σ_p Σ_i l_pi² / n_p²)^1.5)``; with one
part this is scipy's single-sample formula. The leave-one-out values come from the same sums
(a part's totals less one category's row), so the jackknife costs one pass per distinct row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..block_draws import categories
from ..metrics.protocol import StatBlock
from ..stats import Interval, replicate_interval
from .ppi import Lambda, Stratum, corrected_mean, delta_interval

__all__ = [
    "MEMORY",
    "AuditCIMethod",
    "bootstrap_interval",
    "corrected_interval",
    "jackknife_acceleration",
    "resampled_values",
]

AuditCIMethod = Literal["bca", "percentile", "basic", "normal"]
"""``--ci-method`` of ``pingce audit``: a bootstrap interval (scipy's definitions) or the normal
interval of the delta method."""

MEMORY = 64 << 20
"""Bytes of resampled counts (and of leave-one-out sums) held at a time."""

Finalize = Callable[[np.ndarray], np.ndarray | float]
"""A metric's value from mean rows: ``(k, d)`` rows to ``k`` values (a ``(d,)`` row to one), as
:meth:`pingce.metrics.protocol.Metric.finalize` of totals; NaN where undefined."""


@dataclass(frozen=True)
class _Part:
    """One stratum's labelled or unlabelled rows as their distinct feature rows, how many
    records hold each, and each record's category (None: each row is its own)."""

    multiplicities: np.ndarray
    features: np.ndarray
    codes: np.ndarray | None = None

    @property
    def size(self) -> int:
        return int(self.multiplicities.sum())

    @property
    def total(self) -> np.ndarray:
        summed: np.ndarray = self.multiplicities @ self.features
        return summed


@dataclass(frozen=True)
class _Prepared:
    """One stratum ready to resample: its labelled part's features ``[S', Ŝ']`` (and ``S'Ŝ'``,
    ``Ŝ'²`` when λ is tuned), its unlabelled part's ``[Ũ']`` (and ``Ũ'²``), the primes meaning
    centred (the human rows on their labelled mean ``centre``, the judge's on their mean over
    the stratum), its share of the records and its λ (None: tuned)."""

    labelled: _Part
    unlabelled: _Part
    centre: np.ndarray
    share: float
    lam: np.ndarray | None
    rowwise: bool = False
    """A λ for each labelled row (cross-fitted): the labelled features are ``[S', λ Ŝ', λ]``
    and ``lam`` is unused."""

    @property
    def parts(self) -> tuple[_Part, _Part]:
        return self.labelled, self.unlabelled


def _grouped(rows: np.ndarray, features: Callable[[np.ndarray], np.ndarray]) -> _Part:
    """Rows as categories of equal rows (each row its own where they are nearly all distinct),
    with each category's ``features``."""
    if rows.shape[0] == 0:
        return _Part(np.zeros(0), features(rows))
    found = categories(StatBlock(width=rows.shape[1], rows=np.ascontiguousarray(rows)))
    if found is None:
        return _Part(np.ones(rows.shape[0]), features(rows))
    codes, distinct = found
    multiplicities = np.bincount(codes, minlength=distinct.shape[0]).astype(np.float64)
    return _Part(multiplicities, np.ascontiguousarray(features(distinct)), codes)


def _prepared(stratum: Stratum, share: float, lam: float | np.ndarray | None) -> _Prepared:
    human, judge, unlabelled = stratum.human, stratum.judge, stratum.unlabelled
    d = human.shape[1]
    if stratum.n == 0:
        raise ValueError("a stratum has no labelled record: the judge cannot be corrected there")
    centre = human.mean(axis=0)
    shift = np.concatenate([judge, unlabelled], axis=0).mean(axis=0)
    rowwise = lam is not None and np.ndim(lam) == 2
    labelled = [human, judge]
    if rowwise:
        labelled.append(np.asarray(lam, dtype=np.float64).reshape(stratum.n, d))

    def labelled_features(rows: np.ndarray) -> np.ndarray:
        s, j = rows[:, :d] - centre, rows[:, d : 2 * d] - shift
        if rowwise:
            return np.concatenate([s, rows[:, 2 * d :] * j, rows[:, 2 * d :]], axis=1)
        return np.concatenate([s, j] if lam is not None else [s, j, s * j, j * j], axis=1)

    def unlabelled_features(rows: np.ndarray) -> np.ndarray:
        u = rows - shift
        return u if lam is not None else np.concatenate([u, u * u], axis=1)

    fixed = None
    if lam is not None and not rowwise:
        fixed = np.broadcast_to(np.asarray(lam, dtype=np.float64), (d,))
    return _Prepared(
        _grouped(np.concatenate(labelled, axis=1), labelled_features),
        _grouped(unlabelled, unlabelled_features),
        centre,
        share,
        fixed,
        rowwise,
    )


def _tuned(labelled: np.ndarray, n: int, unlabelled: np.ndarray, size: int) -> np.ndarray:
    """PPI++'s λ from sums (:func:`pingce.audits.ppi.tuned_lambda`): ``cov(S, Ŝ)`` over ``(1 +
    n/N) var(Ŝ)`` (labelled and unlabelled together, ``ddof=1``), clipped to [0, 1]."""
    d = labelled.shape[1] // 4
    s, j, sj, jj = (labelled[:, k * d : (k + 1) * d] for k in range(4))
    u, uu = unlabelled[:, :d], unlabelled[:, d:]
    if n < 2:
        return np.zeros_like(s)
    covariance = sj / n - (s / n) * (j / n)
    together = n + size
    variance = (jj + uu - (j + u) ** 2 / together) / (together - 1)
    lam = covariance / ((1 + n / size) * np.where(variance > 0, variance, 1.0))
    tuned: np.ndarray = np.clip(np.where(variance > 0, lam, 0.0), 0.0, 1.0)
    return tuned


def _stratum_means(
    prepared: _Prepared, labelled: np.ndarray, n: int, unlabelled: np.ndarray, size: int
) -> np.ndarray:
    """The stratum's corrected mean row for ``k`` sets of sums of its parts' features (``n``
    labelled and ``size`` unlabelled rows each): ``centre + mean(S') + λ (mean(Ũ') -
    mean(Ŝ'))``; NaN without a labelled row."""
    d = prepared.centre.size
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_s = labelled[:, :d] / n
        if size == 0:  # every record labelled: the labels alone
            out: np.ndarray = prepared.centre + mean_s
            return out
        if prepared.rowwise:  # mean(S') - mean(λ Ŝ') + mean(λ) mean(Ũ')
            weighted, lam = labelled[:, d : 2 * d] / n, labelled[:, 2 * d :] / n
            out = prepared.centre + mean_s + lam * unlabelled[:, :d] / size - weighted
            return out
        lam = _tuned(labelled, n, unlabelled, size) if prepared.lam is None else prepared.lam
        out = (
            prepared.centre + mean_s + lam * (unlabelled[:, :d] / size - labelled[:, d : 2 * d] / n)
        )
    return out


def _values(finalize: Finalize, means: np.ndarray) -> np.ndarray:
    """``finalize`` of ``k`` mean rows: ``k`` values."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        values = np.asarray(finalize(means), dtype=np.float64)
    if values.shape != (means.shape[0],):
        raise ValueError(
            f"finalize gave shape {values.shape} for {means.shape[0]} mean rows: it must "
            "map (k, d) rows to k values, as Metric.finalize does"
        )
    return values


_FEW = 10
"""Categories drawn as Multinomial counts when there are at most ``1 / _FEW`` as many as rows
(a binomial draw per category costs about ten times an index per row); otherwise ``n`` row
indices are drawn and counted per category."""


def _draw(part: _Part, take: int, rng: np.random.Generator) -> np.ndarray:
    """``take`` resamples' counts of the part's categories (``take x K``, float)."""
    n, k = part.size, part.multiplicities.size
    if _FEW * k <= n:
        counts: np.ndarray = rng.multinomial(n, part.multiplicities / n, size=take)
        return counts.astype(np.float64)
    index = rng.integers(0, n, size=(take, n))
    if part.codes is not None:
        index = part.codes[index]
    index += k * np.arange(take)[:, None]
    return np.bincount(index.ravel(), minlength=take * k).reshape(take, k).astype(np.float64)


def _counts(part: _Part, resamples: int, rng: np.random.Generator, memory: int) -> np.ndarray:
    """Each resample's sums of the part's features: Multinomial(n, multiplicities / n) counts
    of its categories (as :func:`_draw` draws them) times their features, a chunk of resamples
    at a time (at most ``memory`` bytes of draws and counts)."""
    out = np.zeros((resamples, part.features.shape[1]))
    n, k = part.size, part.multiplicities.size
    if n == 0:
        return out
    rows = max(1, memory // (16 * (k if _FEW * k <= n else n + k)))
    for start in range(0, resamples, rows):
        take = min(rows, resamples - start)
        out[start : start + take] = np.einsum("bk,kf->bf", _draw(part, take, rng), part.features)
    return out


def _generators(seed: int | list[int], strata: int) -> list[list[np.random.Generator]]:
    base = seed if isinstance(seed, list) else [seed]
    return [[np.random.default_rng([*base, h, part]) for part in (0, 1)] for h in range(strata)]


def _prepare(strata: Sequence[Stratum], lam: Lambda) -> list[_Prepared]:
    if not strata:
        raise ValueError("no stratum")
    total = sum(s.size for s in strata)
    return [
        _prepared(s, s.size / total, lam[h] if isinstance(lam, list) else lam)
        for h, s in enumerate(strata)
    ]


def resampled_values(
    strata: Sequence[Stratum],
    finalize: Finalize,
    lam: Lambda = None,
    *,
    resamples: int = 1000,
    seed: int | list[int] = 0,
    memory: int = MEMORY,
) -> np.ndarray:
    """The metric's value on each of ``resamples`` bootstrap resamples of the strata (module
    docstring); NaN where it is undefined."""
    prepared = _prepare(strata, lam)
    means = np.zeros((resamples, prepared[0].centre.size))
    for one, (rng_l, rng_u) in zip(prepared, _generators(seed, len(prepared)), strict=True):
        labelled = _counts(one.labelled, resamples, rng_l, memory)
        unlabelled = _counts(one.unlabelled, resamples, rng_u, memory)
        sizes = one.labelled.size, one.unlabelled.size
        means += one.share * _stratum_means(one, labelled, sizes[0], unlabelled, sizes[1])
    return _values(finalize, means)


def _part_moments(values: np.ndarray, multiplicities: np.ndarray) -> tuple[float, float]:
    """One part's ``Σ l³ / n³`` and ``Σ l² / n²`` (undefined leave-one-out values left out)."""
    keep = ~np.isnan(values)
    values, multiplicities = values[keep], multiplicities[keep]
    n = float(multiplicities.sum())
    if n < 2:
        return 0.0, 0.0
    mean = float(multiplicities @ values) / n
    influence = (n - 1) * (mean - values)
    third = float(multiplicities @ influence**3) / n**3
    second = float(multiplicities @ influence**2) / n**2
    return third, second


def _whole(one: _Prepared) -> np.ndarray:
    """The stratum's corrected mean row on all its rows."""
    labelled, unlabelled = one.labelled, one.unlabelled
    means = _stratum_means(
        one, labelled.total[None, :], labelled.size, unlabelled.total[None, :], unlabelled.size
    )
    whole: np.ndarray = means[0]
    return whole


def _left_out(
    prepared: list[_Prepared], h: int, which: int, finalize: Finalize, memory: int
) -> np.ndarray:
    """The value without each category's row of part ``which`` (0 labelled, 1 unlabelled) of
    stratum ``h``, every other part whole (λ tuned again where it is tuned)."""
    whole = [_whole(p) for p in prepared]
    base = np.sum([p.share * m for p, m in zip(prepared, whole, strict=True)], axis=0)
    one = prepared[h]
    part, other = one.parts[which], one.parts[1 - which].total[None, :]
    sizes = [one.labelled.size, one.unlabelled.size]
    sizes[which] -= 1
    rows = max(1, memory // (32 * (part.features.shape[1] + other.shape[1])))
    out = np.empty(part.multiplicities.size)
    for start in range(0, out.size, rows):
        less = part.total[None, :] - part.features[start : start + rows]
        labelled, unlabelled = (less, other) if which == 0 else (other, less)
        means = _stratum_means(one, labelled, sizes[0], unlabelled, sizes[1])
        out[start : start + rows] = _values(finalize, base + one.share * (means - whole[h]))
    return out


def jackknife_acceleration(
    strata: Sequence[Stratum],
    finalize: Finalize,
    lam: Lambda = None,
    *,
    memory: int = MEMORY,
) -> float:
    """BCa's acceleration of the corrected value from the jackknife over every part of every
    stratum (module docstring); NaN when no part has two rows."""
    prepared = _prepare(strata, lam)
    third = second = 0.0
    for h, one in enumerate(prepared):
        for which, part in enumerate(one.parts):
            if part.size < 2:
                continue
            values = _left_out(prepared, h, which, finalize, memory)
            t, s = _part_moments(values, part.multiplicities)
            third, second = third + t, second + s
    if second <= 0:
        return 0.0 if third == 0 else math.nan
    return third / (6.0 * math.sqrt(second) ** 3)


def bootstrap_interval(
    strata: Sequence[Stratum],
    finalize: Finalize,
    lam: Lambda = None,
    *,
    method: Literal["bca", "percentile", "basic"] = "bca",
    level: float = 0.95,
    resamples: int = 1000,
    seed: int | list[int] = 0,
    memory: int = MEMORY,
) -> tuple[float, Interval]:
    """The corrected value and its bootstrap interval, with the interval's notes (resamples
    where the value is undefined, BCa falling back to the percentile interval)."""
    value = float(_values(finalize, corrected_mean(strata, lam).mean[None, :])[0])
    if not math.isfinite(value):
        return value, Interval(None, None, "the corrected value is undefined")
    theta = resampled_values(strata, finalize, lam, resamples=resamples, seed=seed, memory=memory)

    def acceleration() -> float:
        return jackknife_acceleration(strata, finalize, lam, memory=memory)

    return value, replicate_interval(
        value, theta, method=method, level=level, jackknife=acceleration
    )


def corrected_interval(
    strata: Sequence[Stratum],
    finalize: Finalize,
    lam: Lambda = None,
    *,
    method: AuditCIMethod = "bca",
    level: float = 0.95,
    resamples: int = 1000,
    seed: int | list[int] = 0,
    memory: int = MEMORY,
) -> tuple[float, float, float]:
    """A metric's corrected value and its interval at ``level`` by ``method`` (``--ci-method``):
    ``(value, low, high)``, NaN where there is none. ``normal`` is
    :func:`pingce.audits.ppi.delta_interval`; the others resample (:func:`bootstrap_interval`)."""
    if method == "normal":
        return delta_interval(
            lambda m: float(np.asarray(finalize(m))), corrected_mean(strata, lam), level
        )
    value, interval = bootstrap_interval(
        strata,
        finalize,
        lam,
        method=method,
        level=level,
        resamples=resamples,
        seed=seed,
        memory=memory,
    )
    low = math.nan if interval.low is None else interval.low
    high = math.nan if interval.high is None else interval.high
    return value, low, high
