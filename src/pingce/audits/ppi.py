"""Prediction-powered inference (PPI, PPI++) on a metric's statistic rows: a judge's rows on every
record made unbiased by a human audit of a random sample, for any metric that is a function of
the mean row (its own ``finalize``), not only a mean of per-record scores.

Notation, per stratum ``h`` (the whole run is one stratum when the audit sample is uniform):
``S`` the rows the human labels give on the ``n`` labelled records, ``Ŝ`` the judge's rows on the
same records, ``Ũ`` the judge's rows on the ``N`` records no human labelled. Per component ``k``
of the rows, with ``λ_k`` in [0, 1],

    m_k = λ_k · mean(Ũ_k) + mean(S_k − λ_k · Ŝ_k)

is unbiased for the mean row whatever the judge's errors (the second term corrects the first),
and its variance, ``λ_k² var(Ũ_k) / N + var(S_k − λ_k Ŝ_k) / n`` (the two samples are disjoint,
so independent), is smallest at PPI++'s ``λ_k = cov(S_k, Ŝ_k) / ((1 + n/N) var(Ŝ_k))``
estimated from the data and clipped to [0, 1] (Angelopoulos, Duchi and Zrnic 2023, "PPI++:
Efficient Prediction-Powered Inference"; ``lam=1`` is classic PPI, ``lam=0`` the human labels
alone). This is ``ppi_py.ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``Yhat_unlabeled``
the unlabelled records' rows, component by component (``lam_optim_mode="element"``); with one
component, ``"overall"`` is the same.

A stratified audit sample (:mod:`pingce.audits.sample` draws more records where the judge is
least sure) is uniform within each stratum: the estimate is the strata's estimates weighted by
their share of the records, ``m = Σ_h (N_h + n_h)/N_all · m_h``, with variance ``Σ_h w_h²
var(m_h)`` (stratified sampling, no cross terms), so no record's inclusion probability enters
anywhere else.

A metric's value is ``finalize(m)``; its normal interval is the delta method through
``finalize`` (its gradient at ``m`` by central differences) with the covariance of ``m``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..stats import ndtri

__all__ = [
    "Corrected",
    "Lambda",
    "Stratum",
    "corrected_mean",
    "crossfit_lambda",
    "delta_interval",
    "metric_lambda",
    "tuned_lambda",
]


@dataclass(frozen=True)
class Stratum:
    """One stratum's rows: ``human`` and ``judge`` on its labelled records (``(n, d)`` each),
    ``unlabelled`` the judge's on its other records (``(N, d)``)."""

    human: np.ndarray
    judge: np.ndarray
    unlabelled: np.ndarray

    def __post_init__(self) -> None:
        for name in ("human", "judge", "unlabelled"):
            value = np.asarray(getattr(self, name), dtype=np.float64)
            object.__setattr__(self, name, value[:, None] if value.ndim == 1 else value)
        if self.human.shape != self.judge.shape:
            raise ValueError(
                f"the human rows {self.human.shape} and the judge's rows {self.judge.shape} on "
                "the labelled records differ in shape"
            )
        if self.unlabelled.shape[1] != self.judge.shape[1]:
            raise ValueError("the labelled and unlabelled rows have different widths")

    @property
    def n(self) -> int:
        """Labelled records."""
        return int(self.human.shape[0])

    @property
    def size(self) -> int:
        """All its records, labelled or not."""
        return self.n + int(self.unlabelled.shape[0])


@dataclass(frozen=True)
class Corrected:
    """The corrected mean row, its covariance and the λ of each stratum (cross-fitted: their
    mean over its labelled rows)."""

    mean: np.ndarray
    """``(d,)``: the prediction-powered estimate of the mean row."""
    covariance: np.ndarray
    """``(d, d)``: the estimate's covariance (CLT)."""
    lambdas: list[np.ndarray]
    """Per stratum, ``(d,)``: the λ used for each component."""
    labelled: int
    unlabelled: int

    @property
    def standard_error(self) -> np.ndarray:
        """``(d,)``: each component's standard error."""
        spread: np.ndarray = np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))
        return spread


def tuned_lambda(human: np.ndarray, judge: np.ndarray, unlabelled: np.ndarray) -> np.ndarray:
    """PPI++'s variance-minimising λ per component, clipped to [0, 1]: ``cov(S, Ŝ)`` (labelled,
    divided by n) over ``(1 + n/N) var(Ŝ)`` (labelled and unlabelled rows together, divided by
    their count less one), as ``ppi_py`` estimates it; 0 where the judge's rows do not vary."""
    n, size = human.shape[0], unlabelled.shape[0]
    if n < 2 or size < 1:
        return np.zeros(human.shape[1])
    centred_s, centred_j = human - human.mean(axis=0), judge - judge.mean(axis=0)
    covariance = (centred_s * centred_j).sum(axis=0) / n
    together = np.concatenate([judge, unlabelled], axis=0)
    variance = together.var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = covariance / ((1 + n / size) * variance)
    tuned: np.ndarray = np.clip(np.where(variance > 0, lam, 0.0), 0.0, 1.0)
    return tuned


def _one(
    stratum: Stratum, lam: float | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One stratum's estimate, covariance and λ."""
    human, judge, unlabelled = stratum.human, stratum.judge, stratum.unlabelled
    d = human.shape[1]
    n, size = human.shape[0], unlabelled.shape[0]
    if lam is None:
        lam_k = tuned_lambda(human, judge, unlabelled)
    elif np.ndim(lam) == 2:  # one λ a labelled row (cross-fitted): their mean on the others
        lam_k = np.asarray(lam, dtype=np.float64).reshape(n, d)
    else:
        lam_k = np.broadcast_to(np.asarray(lam, dtype=np.float64), (d,)).copy()
    if size == 0:  # every record labelled: the labels alone (no judge's mean to lean on)
        lam_k = np.zeros(d)
    if n == 0:
        raise ValueError("a stratum has no labelled record: the judge cannot be corrected there")
    rectifier = human - lam_k * judge
    mean = rectifier.mean(axis=0)
    covariance = np.cov(rectifier, rowvar=False, ddof=0).reshape(d, d) / n
    if lam_k.ndim == 2:
        lam_k = lam_k.mean(axis=0)
    if size:
        imputed = lam_k * unlabelled
        mean = mean + imputed.mean(axis=0)
        covariance = covariance + np.cov(imputed, rowvar=False, ddof=0).reshape(d, d) / size
    return mean, covariance, lam_k


Lambda = float | np.ndarray | list[np.ndarray] | None
"""λ: None tunes it per component and stratum (PPI++); a number or a ``(d,)`` vector fixes it for
every stratum; a list, one per stratum, of ``(d,)`` vectors (:func:`metric_lambda`'s) or of
``(n_h, d)`` arrays, a λ for each labelled row (:func:`crossfit_lambda`'s: the unlabelled rows'
term then takes their mean)."""


def corrected_mean(strata: Sequence[Stratum], lam: Lambda = None) -> Corrected:
    """The prediction-powered mean row over ``strata`` (module docstring): ``lam`` None tunes λ
    per component and stratum (PPI++), a number or a ``(d,)`` vector fixes it (1: PPI, 0: the
    human labels alone), a list gives each stratum its own."""
    if not strata:
        raise ValueError("no stratum")
    total = sum(s.size for s in strata)
    mean = np.zeros(strata[0].human.shape[1])
    covariance = np.zeros((mean.size, mean.size))
    lambdas = []
    for h, stratum in enumerate(strata):
        m, c, lam_k = _one(stratum, lam[h] if isinstance(lam, list) else lam)
        share = stratum.size / total
        mean += share * m
        covariance += share**2 * c
        lambdas.append(lam_k)
    labelled = sum(s.n for s in strata)
    return Corrected(mean, covariance, lambdas, labelled, total - labelled)


def _gradient(finalize: Callable[[np.ndarray], float], at: np.ndarray) -> np.ndarray:
    """``finalize``'s gradient at ``at`` by central differences (a step relative to each
    component's size)."""
    gradient = np.zeros(at.size)
    for k in range(at.size):
        step = 1e-6 * max(1.0, abs(float(at[k])))
        up, down = at.copy(), at.copy()
        up[k] += step
        down[k] -= step
        gradient[k] = (float(finalize(up)) - float(finalize(down))) / (2 * step)
    return gradient


def metric_lambda(
    strata: Sequence[Stratum], finalize: Callable[[np.ndarray], float]
) -> list[np.ndarray]:
    """Per stratum, the λ vector tuned for the metric rather than per component: the one that
    makes the delta method's variance of ``finalize(m)`` smallest. With ``g`` the gradient of
    ``finalize`` (at the per-component PPI++ estimate) and ``a = g ∘ λ``, that variance is
    ``var(g·S - a·Ŝ)/n + var(a·Ũ)/N``, least at ``a = Σ⁻¹ cov(Ŝ, g·S) / (1 + n/N)`` (``Σ`` the
    judge's rows' covariance over labelled and unlabelled records, as :func:`tuned_lambda`
    pools it): the regression of the metric's linearised human value on the judge's rows.
    ``λ_k = a_k / g_k``, clipped to [0, 1] (0 where ``g_k`` is 0). For one component this is
    :func:`tuned_lambda`. A ratio gains most: a rate whose numerator and denominator move
    together keeps the human-only ratio's advantage, which per-component λ throws away.

    Clipping can take a joint optimum far from itself, so the λ returned is whichever of this
    one, the per-component PPI++ λ and 0 (the labels alone) gives the smallest estimated
    variance of the metric; the per-component λ where the gradient is undefined."""
    start = corrected_mean(strata, None)
    at = start.mean
    try:
        gradient = _gradient(finalize, at)
    except (ArithmeticError, ValueError):
        return start.lambdas
    if not np.isfinite(gradient).all():
        return start.lambdas
    out = []
    for stratum, fallback in zip(strata, start.lambdas, strict=True):
        n, size = stratum.n, stratum.unlabelled.shape[0]
        if n < 2 or size < 1:
            out.append(fallback)
            continue
        together = np.concatenate([stratum.judge, stratum.unlabelled], axis=0)
        pooled = np.cov(together, rowvar=False, ddof=1).reshape(at.size, at.size)
        target = stratum.human @ gradient
        centred = stratum.judge - stratum.judge.mean(axis=0)
        cross = centred.T @ (target - target.mean()) / n
        a = np.linalg.lstsq(pooled, cross, rcond=None)[0] / (1 + n / size)
        with np.errstate(invalid="ignore", divide="ignore"):
            lam = np.where(gradient != 0, a / np.where(gradient != 0, gradient, 1.0), 0.0)
        out.append(np.clip(lam, 0.0, 1.0))
    zero = [np.zeros(at.size) for _ in strata]
    candidates = [out, start.lambdas, zero]
    spreads = [
        float(gradient @ corrected_mean(strata, c).covariance @ gradient) for c in candidates
    ]
    return candidates[int(np.argmin(spreads))]


def delta_interval(
    finalize: Callable[[np.ndarray], float], corrected: Corrected, level: float = 0.95
) -> tuple[float, float, float]:
    """A metric's corrected value ``finalize(m)`` and its normal interval by the delta method
    (``finalize``'s gradient at ``m`` with the covariance of ``m``): ``(value, low, high)``,
    NaN where the value is undefined."""
    value = float(finalize(corrected.mean))
    if not np.isfinite(value):
        return value, float("nan"), float("nan")
    gradient = _gradient(finalize, corrected.mean)
    spread = float(np.sqrt(max(0.0, gradient @ corrected.covariance @ gradient)))
    z = ndtri(0.5 + level / 2)
    return value, value - z * spread, value + z * spread


FOLDS = 5
"""Folds of each stratum's labelled records in :func:`crossfit_lambda`."""


@dataclass(frozen=True)
class _Unlabelled:
    """A stratum's unlabelled rows as the sums a fold's λ needs: their count, sum, ``U'U`` and
    covariance (divided by their count)."""

    size: int
    total: np.ndarray
    scatter: np.ndarray
    covariance: np.ndarray

    @classmethod
    def of(cls, rows: np.ndarray) -> _Unlabelled:
        size, total, scatter = rows.shape[0], rows.sum(axis=0), rows.T @ rows
        mean = total / size
        return cls(size, total, scatter, scatter / size - np.outer(mean, mean))


def _fold_lambda(
    human: np.ndarray, judge: np.ndarray, rest: _Unlabelled, gradient: np.ndarray
) -> np.ndarray:
    """:func:`metric_lambda` for one stratum from its training rows (``human``, ``judge``) and
    its unlabelled rows' sums, at a given ``gradient``: of the metric's regression λ, PPI++'s
    per-component λ and 0, the one whose variance of the metric in this stratum is least (the
    strata are independent: least in each is least in all)."""
    n, d = human.shape
    if n < 2:
        return np.zeros(d)
    together = n + rest.size
    mean = (judge.sum(axis=0) + rest.total) / together
    pooled = (judge.T @ judge + rest.scatter - together * np.outer(mean, mean)) / (together - 1)
    centred = judge - judge.mean(axis=0)
    target = human @ gradient
    cross = centred.T @ (target - target.mean()) / n
    shrink = 1 + n / rest.size
    a = np.linalg.lstsq(pooled, cross, rcond=None)[0] / shrink
    with np.errstate(invalid="ignore", divide="ignore"):
        joint = np.where(gradient != 0, a / np.where(gradient != 0, gradient, 1.0), 0.0)
        variance = np.diag(pooled)
        own = (centred * (human - human.mean(axis=0))).sum(axis=0) / n
        element = np.where(variance > 0, own / (shrink * variance), 0.0)
    candidates = [np.clip(joint, 0.0, 1.0), np.clip(element, 0.0, 1.0), np.zeros(d)]

    def spread(lam: np.ndarray) -> float:
        rectified = (human - lam * judge) @ gradient
        imputed = gradient * lam
        return float(rectified.var() / n + imputed @ rest.covariance @ imputed / rest.size)

    return candidates[int(np.argmin([spread(c) for c in candidates]))]


def crossfit_lambda(
    strata: Sequence[Stratum],
    finalize: Callable[[np.ndarray], float],
    folds: int = FOLDS,
) -> list[np.ndarray]:
    """Per stratum, a λ for each labelled row (``(n_h, d)``), cross-fitted: the stratum's
    labelled records are dealt into ``folds`` folds (a seeded permutation, the same every
    time), and a fold's rows take the λ tuned for the metric, as :func:`metric_lambda` tunes it,
    on the stratum's other folds (and its unlabelled rows; the gradient of ``finalize`` at the
    PPI++ estimate of all the rows). A row's λ then does not depend on the row's labels, so
    ``mean(S - λ Ŝ)`` over the fold is unbiased for ``E[S] - λ E[Ŝ]`` and the estimate for
    ``E[S]``; λ tuned on the same rows it corrects (PPI++) is biased by O(1/n), which a
    near-perfect judge with a rare class makes half a standard error at 40 labelled records
    (benchmarks/README.md). A stratum with fewer labelled rows than two folds of two keeps the
    λ tuned on all of them (a fold tuned on one row would get 0, the labels alone); ``folds``
    1 is :func:`metric_lambda`, PPI++ for a mean."""
    whole = metric_lambda(strata, finalize)
    if folds < 2:
        return whole
    at = corrected_mean(strata, None).mean
    try:
        gradient = _gradient(finalize, at)
    except (ArithmeticError, ValueError):
        gradient = np.full(at.size, np.nan)
    out = []
    for h, stratum in enumerate(strata):
        n = stratum.n
        k = min(folds, n // 2)
        if k < 2 or stratum.unlabelled.shape[0] == 0:
            out.append(np.broadcast_to(whole[h], stratum.human.shape).copy())
            continue
        fold = np.empty(n, dtype=np.intp)
        fold[np.random.default_rng([34, n]).permutation(n)] = np.arange(n) % k
        rest = _Unlabelled.of(stratum.unlabelled)
        rows = np.empty(stratum.human.shape)
        for f in range(k):
            keep = fold != f
            human, judge = stratum.human[keep], stratum.judge[keep]
            if np.isfinite(gradient).all():
                rows[~keep] = _fold_lambda(human, judge, rest, gradient)
            else:  # no gradient: PPI++'s per-component λ, as metric_lambda falls back to
                rows[~keep] = tuned_lambda(human, judge, stratum.unlabelled)
        out.append(rows)
    return out
