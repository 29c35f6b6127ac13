"""pass@k and pass^k from repeated attempts at each record (issue 35).

A record attempted ``n`` times with ``c`` successes:

- **pass@k**, the chance that at least one of ``k`` attempts drawn without replacement from its
  ``n`` succeeds: ``1 - C(n - c, k) / C(n, k)``, the unbiased estimator of Chen et al. (2021,
  "Evaluating large language models trained on code");
- **pass^k**, the chance that all ``k`` succeed: ``C(c, k) / C(n, k)``, τ-bench's
  ``pass_hat_ks`` (Yao et al. 2024).

Both are averaged over the records; the interval is a Clopper–Pearson interval of that mean at
the records' effective number (their variance over a binomial one's), so that it
neither collapses to a point when every record has the same value nor under-covers near 0 or 1
(measured in ``benchmarks/bench_repeats.py``: about 95% in the middle, conservative at the
bounds). A ratio of binomials is computed as the product ``Π_{i<k} (n - c - i) / (n - i)``,
never as two huge integers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PassK", "pass_at_k", "pass_curves", "pass_hat_k"]


def _falling_ratio(top: np.ndarray, n: np.ndarray, k: int) -> np.ndarray:
    """``C(top, k) / C(n, k)`` per record (0 where ``top < k``; NaN where ``n < k``)."""
    top = np.asarray(top, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    ratio = np.ones(np.broadcast(top, n).shape)
    for i in range(k):
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = ratio * np.clip(top - i, 0.0, None) / (n - i)
    out: np.ndarray = np.where(n >= k, ratio, np.nan)
    return out


def pass_at_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per record, the unbiased pass@k from ``n`` attempts with ``c`` successes (NaN where
    ``n < k``)."""
    if k < 1:
        raise ValueError(f"k {k}: at least 1")
    n = np.asarray(n, dtype=np.float64)
    out: np.ndarray = 1.0 - _falling_ratio(n - np.asarray(c, dtype=np.float64), n, k)
    return out


def pass_hat_k(n: np.ndarray, c: np.ndarray, k: int) -> np.ndarray:
    """Per record, pass^k (τ-bench's): the chance that ``k`` of its ``n`` attempts drawn
    without replacement all succeed (NaN where ``n < k``)."""
    if k < 1:
        raise ValueError(f"k {k}: at least 1")
    return _falling_ratio(np.asarray(c, dtype=np.float64), np.asarray(n, dtype=np.float64), k)


@dataclass(frozen=True)
class PassK:
    """pass@k and pass^k for one ``k``: their means over the ``records`` with at least ``k``
    attempts, each with its normal interval (None with fewer than two records)."""

    k: int
    records: int
    pass_at: float | None
    pass_at_low: float | None
    pass_at_high: float | None
    pass_hat: float | None
    pass_hat_low: float | None
    pass_hat_high: float | None


def _mean_interval(
    values: np.ndarray, level: float, floor: float = 0.0
) -> tuple[float | None, float | None, float | None]:
    """The mean of per-record values in [0, 1] and a Clopper–Pearson interval at the effective
    number of records (Korn and Graubard's effective-sample-size form): ``n / d`` with ``d =
    s² / (p̂ (1 - p̂))``, the records' variance over a binomial one's (the exact binomial
    interval itself when every value is 0 or 1; ``d = 1`` when the mean is 0 or 1 or every
    record has the same value; ``d`` at least ``floor``). Unlike the normal interval it is
    never a point where every record has the same value (every record solved at k = 10 is
    still a sample), and it keeps its level when the mean is near 0 or 1, where a normal
    interval (and Wilson's, a few failures from the bound) under-covers."""
    from scipy.special import betaincinv

    values = values[np.isfinite(values)]
    if values.size == 0:
        return None, None, None
    n = values.size
    mean = float(values.mean())
    if n < 2:
        return mean, None, None
    binomial = mean * (1.0 - mean)
    spread = float(values.var(ddof=1))
    # every record alike (no spread to measure): the binomial variance. A design effect below
    # ``floor`` (k / the attempts: the variance of a mean of attempts/k independent blocks of
    # k) is read from a few rare values (nearly every record solved, one at 0.9) and would
    # shrink the interval more than the data vouch for (measured in
    # benchmarks/bench_repeats.py: it binds only where the values crowd a bound)
    design = max(spread / binomial, floor) if binomial > 0 and spread > 0 else 1.0
    n_eff = n / design
    x = mean * n_eff
    alpha = 1.0 - level
    low = float(betaincinv(x, n_eff - x + 1, alpha / 2)) if x > 0 else 0.0
    high = float(betaincinv(x + 1, n_eff - x, 1 - alpha / 2)) if x < n_eff else 1.0
    return mean, low, high


def pass_curves(n: np.ndarray, c: np.ndarray, level: float = 0.95) -> list[PassK]:
    """pass@k and pass^k for k = 1 … the most attempts any record has."""
    n = np.asarray(n, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if n.size == 0:
        return []
    if (c < 0).any() or (c > n).any():
        raise ValueError("successes must lie between 0 and the attempts")
    out = []
    for k in range(1, int(n.max()) + 1):
        attempts = n[n >= k]
        floor = k / float(attempts.mean()) if attempts.size else 0.0
        at = _mean_interval(pass_at_k(n, c, k), level, floor)
        hat = _mean_interval(pass_hat_k(n, c, k), level, floor)
        out.append(PassK(k, int((n >= k).sum()), *at, *hat))
    return out
