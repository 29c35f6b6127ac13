"""How much of a metric's uncertainty comes from the records, from the model's generations and
from the judge's calls, and how many repeats a target precision needs (issue 35).

The rows are a balanced nested design: ``n`` records, ``K`` generations of each, ``J`` judge
calls on each generation, ``y[i, g, j]`` the per-row value (a 0/1 success, a score, or a
metric's linearised value). The random-effects model ``y = μ + r_i + g_ig + e_igj`` has the
method-of-moments (ANOVA) estimators, from the mean squares

- between records ``MS_R = JK Σ_i (ȳ_i - ȳ)² / (n - 1)``,
- between generations within a record ``MS_G = J Σ_ig (ȳ_ig - ȳ_i)² / (n (K - 1))``,
- between judge calls within a generation ``MS_J = Σ_igj (y_igj - ȳ_ig)² / (n K (J - 1))``,

``σ²_J = MS_J``, ``σ²_G = (MS_G - MS_J) / J``, ``σ²_R = (MS_R - MS_G) / (J K)``, each floored
at 0 (a negative moment estimate is a component too small to see). For a balanced design these
are the REML estimates whenever they are positive (statsmodels' MixedLM gives the same).

The variance of the overall mean is ``σ²_R / n + σ²_G / (n K) + σ²_J / (n K J)`` (``MS_R /
(n K J)`` when nothing was floored); its three terms' shares say how much of the interval's
variance each source makes, with a percentile interval from resampling records (each with all
its rows: the cluster bootstrap). With ``K = 1`` generations cannot be told from records, and
with ``J = 1`` judge calls cannot be told from generations: such a component is None and its
variance stays in the level above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SOURCES", "Components", "Plan", "decompose", "expected_se", "plan_repeats"]

SOURCES = ("records", "generations", "judge")


@dataclass(frozen=True)
class Components:
    """The variance components of one metric's rows and what they make of its mean's
    variance."""

    records: int
    repeats: int
    """Generations of each record (K)."""
    judge_calls: int
    """Judge calls on each generation (J)."""
    mean: float
    standard_error: float
    """Of the mean over every row: ``sqrt(Σ component / its divisor)``."""
    variance: dict[str, float | None]
    """σ² of each source (None: not separable with this design)."""
    share: dict[str, float | None]
    """Each source's share of the mean's variance."""
    share_low: dict[str, float | None] = field(default_factory=dict)
    share_high: dict[str, float | None] = field(default_factory=dict)


def _features(values: np.ndarray) -> np.ndarray:
    """Per record: its mean, its mean squared, and its within sums of squares between
    generations and between judge calls (``(n, 4)``)."""
    j = values.shape[2]
    record_mean = values.mean(axis=(1, 2))
    generation_mean = values.mean(axis=2)
    between = j * ((generation_mean - record_mean[:, None]) ** 2).sum(axis=1)
    within = ((values - generation_mean[:, :, None]) ** 2).sum(axis=(1, 2))
    return np.column_stack([record_mean, record_mean**2, between, within])


def _components(sums: np.ndarray, n: int, k: int, j: int) -> np.ndarray:
    """σ²_R, σ²_G, σ²_J from the records' summed features (``(..., 4)`` to ``(..., 3)``);
    NaN where a component is not separable."""
    grand = sums[..., 0] / n
    ms_r = j * k * (sums[..., 1] - n * grand**2) / (n - 1)
    ms_g = sums[..., 2] / (n * (k - 1)) if k > 1 else np.full_like(grand, np.nan)
    ms_j = sums[..., 3] / (n * k * (j - 1)) if j > 1 else np.full_like(grand, np.nan)
    sigma_j = ms_j
    below_g = np.nan_to_num(ms_j)  # J = 1: the judge's variance stays with the generations
    sigma_g = np.maximum(0.0, (ms_g - below_g) / j) if k > 1 else np.full_like(grand, np.nan)
    below_r = np.nan_to_num(ms_g) if k > 1 else below_g
    sigma_r = np.maximum(0.0, (ms_r - below_r) / (j * k))
    return np.stack([sigma_r, sigma_g, sigma_j], axis=-1)


def _shares(sigma: np.ndarray, n: int, k: int, j: int) -> np.ndarray:
    parts = np.nan_to_num(sigma) / np.array([n, n * k, n * k * j], dtype=np.float64)
    total = parts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = np.where(total > 0, parts / total, np.nan)
    return out


def decompose(
    values: np.ndarray, *, level: float = 0.95, resamples: int = 1000, seed: int = 0
) -> Components:
    """The components of ``values``, an ``(n, K, J)`` array (records, generations, judge
    calls), with bootstrap intervals of the shares (``resamples`` 0: none)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 3 or values.shape[0] < 2:
        raise ValueError("values: an (n, K, J) array with at least two records")
    if not np.isfinite(values).all():
        raise ValueError("values: every record needs all K × J rows (no missing value)")
    n, k, j = values.shape
    features = _features(values)
    sigma = _components(features.sum(axis=0), n, k, j)
    shares = _shares(sigma, n, k, j)
    variance = float((np.nan_to_num(sigma) / np.array([n, n * k, n * k * j])).sum())
    separable = [True, k > 1, j > 1]
    low: dict[str, float | None] = {}
    high: dict[str, float | None] = {}
    if resamples > 0:
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)
        again = _shares(_components(counts @ features, n, k, j), n, k, j)
        alpha = (1 - level) / 2
        for s, name in enumerate(SOURCES):
            column = again[:, s][np.isfinite(again[:, s])]
            if separable[s] and column.size:
                low[name] = float(np.quantile(column, alpha))
                high[name] = float(np.quantile(column, 1 - alpha))
    return Components(
        records=n,
        repeats=k,
        judge_calls=j,
        mean=float(values.mean()),
        standard_error=math.sqrt(variance),
        variance={
            name: float(sigma[s]) if separable[s] else None for s, name in enumerate(SOURCES)
        },
        share={
            name: float(shares[s]) if separable[s] and np.isfinite(shares[s]) else None
            for s, name in enumerate(SOURCES)
        },
        share_low=low,
        share_high=high,
    )


@dataclass(frozen=True)
class Plan:
    """The cheapest repeats that reach a target standard error, or why none does."""

    target_se: float
    reachable: bool
    repeats: int | None
    judge_calls: int | None
    standard_error: float | None
    model_calls: int | None
    judge_calls_total: int | None
    records_needed: int | None
    """When the records alone are too few: the records (at the most repeats allowed) that
    would reach the target."""


def expected_se(components: Components, records: int, repeats: int, judge_calls: int) -> float:
    """The standard error of the mean with ``records`` × ``repeats`` × ``judge_calls`` rows."""
    v = components.variance
    total = (
        (v["records"] or 0.0) / records
        + (v["generations"] or 0.0) / (records * repeats)
        + (v["judge"] or 0.0) / (records * repeats * judge_calls)
    )
    return math.sqrt(total)


def plan_repeats(
    components: Components,
    target_se: float,
    *,
    records: int | None = None,
    generation_cost: float = 1.0,
    judge_cost: float = 1.0,
    max_repeats: int = 100,
    max_judge_calls: int = 20,
) -> Plan:
    """The (K', J') of least cost ``records · K' · (generation_cost + J' · judge_cost)`` whose
    expected standard error is at most ``target_se``, over ``records`` records (default: as
    many as measured)."""
    n = records or components.records
    best: tuple[float, int, int, float] | None = None
    for k in range(1, max_repeats + 1):
        for j in range(1, max_judge_calls + 1):
            se = expected_se(components, n, k, j)
            if se <= target_se:
                cost = n * k * (generation_cost + j * judge_cost)
                if best is None or cost < best[0]:
                    best = (cost, k, j, se)
                break  # more judge calls only cost more at this K
    if best is not None:
        _, k, j, se = best
        return Plan(target_se, True, k, j, se, n * k, n * k * j, None)
    floor = expected_se(components, 1, max_repeats, max_judge_calls)
    needed = math.ceil((floor / target_se) ** 2) if target_se > 0 else None
    return Plan(target_se, False, None, None, None, None, None, needed)
