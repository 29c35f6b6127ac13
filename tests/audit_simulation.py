"""The simulation study of issue 34's guarantees ("Oracles and guarantees"): a synthetic judge of
known true and false positive rates corrected by a uniform random sample of human labels, and a
calibrated judge's scores stratified by :func:`pingce.audits.sample.draw`. It is the engine of
``tests/test_audit_coverage.py`` (a few cells) and ``benchmarks/bench_audit_coverage.py`` (the
grid); it calls the estimator directly (:func:`pingce.audits.corrected_mean`, the delta interval,
:mod:`pingce.audits.bootstrap`), not the command line: a study of the statistics, in which the
command line would add only reading files.

Each record is a population draw, and the truth is the population's value (what PPI's interval
is for), known in closed form:

- ``mean``: a record's human value ``Y ~ Bernoulli(π)``, the judge's verdict ``Ŷ`` 1 with
  probability TPR when ``Y`` is 1 and ``1 - TNR`` when it is 0; rows ``[Y]``; truth ``π``.
- ``f1`` (``sem_f1``'s rows ``[tp, fp, fn]``): ``m = 1 + Poisson(2)`` predicted items, each
  truly matching its gold item with probability ``π`` (``T`` of them) and judged matching by the
  judge as above (``T̂``), and ``Poisson(1)`` gold items nothing predicted; rows ``[T, m - T, m
  + E - T]``; F1 ``2 tp / (2 tp + fp + fn)``, truth ``2π·3 / (2·3 + 1) = 6π/7``.
- ``rate`` (``clause_hallucination_rate``'s rows ``[hallucinated, cited]``): ``K = 1 +
  Poisson(2)`` cited clauses, each hallucinated with probability ``π`` and judged so as above;
  rate ``hallucinated / cited``, truth ``π``.

The labelled records are a uniform random sample of ``round(fraction · n)`` (at least 2).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from pingce.audits import Stratum, corrected_mean, delta_interval
from pingce.audits.bootstrap import jackknife_acceleration, resampled_values
from pingce.audits.ppi import Lambda, crossfit_lambda, metric_lambda
from pingce.audits.sample import draw
from pingce.stats import replicate_interval

MetricName = Literal["mean", "f1", "rate"]
METHODS = ("normal", "percentile", "bca", "human", "ppi++", "metric")
"""The intervals compared: the default estimator's (λ tuned for the metric and cross-fitted,
:func:`pingce.audits.ppi.crossfit_lambda`) by the delta method and by the bootstrap's percentile
and BCa intervals; the delta method's on the labelled records alone (λ = 0); and the delta
method's with λ tuned on all the labels, per component (``ppi++``, ``ppi_py``'s) and for the
metric (:func:`pingce.audits.ppi.metric_lambda`)."""
ESTIMATORS = ("normal", "ppi++", "metric")
"""The point estimates whose bias is tallied: cross-fitted λ (the default), PPI++'s, the
metric's tuned on all the labels."""


def _first(m: np.ndarray) -> np.ndarray:
    return np.asarray(m[..., 0])


def _f1(m: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(2 * m[..., 0] / (2 * m[..., 0] + m[..., 1] + m[..., 2]))


def _rate(m: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(m[..., 0] / m[..., 1])


FINALIZE: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "mean": _first,
    "f1": _f1,
    "rate": _rate,
}


@dataclass(frozen=True)
class Cell:
    """One setting of the study."""

    metric: MetricName
    tpr: float
    tnr: float
    prevalence: float
    fraction: float
    n: int

    @property
    def truth(self) -> float:
        return 6 * self.prevalence / 7 if self.metric == "f1" else self.prevalence

    @property
    def labelled(self) -> int:
        return max(2, round(self.fraction * self.n))


def _verdicts(
    rng: np.random.Generator, true: np.ndarray, false: np.ndarray, cell: Cell
) -> np.ndarray:
    """How many of ``true`` positive and ``false`` negative items the judge calls positive."""
    called: np.ndarray = rng.binomial(true, cell.tpr) + rng.binomial(false, 1 - cell.tnr)
    return called


def population(cell: Cell, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The human rows and the judge's rows of ``cell.n`` records."""
    n, pi = cell.n, cell.prevalence
    if cell.metric == "mean":
        y = rng.binomial(1, pi, n)
        return y[:, None] * 1.0, _verdicts(rng, y, 1 - y, cell)[:, None] * 1.0
    items = 1 + rng.poisson(2.0, n)
    true = rng.binomial(items, pi)
    judged = _verdicts(rng, true, items - true, cell)
    if cell.metric == "rate":
        return np.stack([true, items], 1) * 1.0, np.stack([judged, items], 1) * 1.0
    extra = rng.poisson(1.0, n)
    rows = [np.stack([t, items - t, items + extra - t], 1) * 1.0 for t in (true, judged)]
    return rows[0], rows[1]


@dataclass
class Tally:
    """One cell's replications: per method the intervals that held the truth and their widths,
    and per estimator its estimates."""

    cell: Cell
    covered: dict[str, int] = field(default_factory=lambda: dict.fromkeys(METHODS, 0))
    widths: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METHODS})
    misses_low: dict[str, int] = field(default_factory=lambda: dict.fromkeys(METHODS, 0))
    estimates: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in ESTIMATORS})
    undefined: int = 0
    replications: int = 0

    def add(self, estimates: dict[str, float], intervals: dict[str, tuple[float, float]]) -> None:
        self.replications += 1
        if not math.isfinite(estimates["normal"]):
            self.undefined += 1
            return
        for name, value in estimates.items():
            self.estimates[name].append(value)
        truth = self.cell.truth
        for method, (low, high) in intervals.items():
            self.covered[method] += bool(low <= truth <= high)
            self.misses_low[method] += bool(truth < low)
            self.widths[method].append(high - low if math.isfinite(high - low) else math.nan)

    def coverage(self, method: str) -> float:
        """Intervals that held the truth, of the replications (an undefined one holds nothing)."""
        return self.covered[method] / self.replications

    def bias(self, estimator: str = "normal") -> float:
        """Mean error of an estimator in standard errors (its spread over the replications)."""
        values = np.array([v for v in self.estimates[estimator] if math.isfinite(v)])
        spread = float(values.std(ddof=1)) if values.size > 1 else math.nan
        if spread == 0:
            return 0.0 if float(values.mean()) == self.cell.truth else math.inf
        return (float(values.mean()) - self.cell.truth) / spread

    def width(self, method: str) -> float:
        return float(np.nanmean(self.widths[method])) if self.widths[method] else math.nan


def _bootstrap(
    strata: list[Stratum],
    finalize: Callable[[np.ndarray], np.ndarray],
    lam: Lambda,
    value: float,
    seed: int,
    resamples: int,
) -> dict[str, tuple[float, float]]:
    theta = resampled_values(strata, finalize, lam, resamples=resamples, seed=seed)
    out = {}
    methods: tuple[Literal["percentile", "bca"], ...] = ("percentile", "bca")
    for method in methods:

        def acceleration() -> float:
            return jackknife_acceleration(strata, finalize, lam)

        interval = replicate_interval(value, theta, method=method, jackknife=acceleration)
        out[method] = (
            math.nan if interval.low is None else interval.low,
            math.nan if interval.high is None else interval.high,
        )
    return out


def replicate(cell: Cell, rng: np.random.Generator, tally: Tally, *, resamples: int = 0) -> None:
    """One audit of a fresh population: every method's interval, added to ``tally``."""
    human, judge = population(cell, rng)
    chosen = np.zeros(cell.n, dtype=bool)
    chosen[rng.choice(cell.n, size=cell.labelled, replace=False)] = True
    strata = [Stratum(human[chosen], judge[chosen], judge[~chosen])]
    finalize = FINALIZE[cell.metric]

    def scalar(m: np.ndarray) -> float:
        return float(finalize(m))

    lambdas: dict[str, Lambda] = {
        "normal": crossfit_lambda(strata, scalar),
        "human": 0.0,
        "ppi++": None,
        "metric": metric_lambda(strata, scalar),
    }
    intervals, estimates = {}, {}
    for name, lam in lambdas.items():
        value, low, high = delta_interval(scalar, corrected_mean(strata, lam))
        intervals[name] = (low, high)
        estimates[name] = value
    del estimates["human"]  # the labels alone: its bias is not the estimator's
    value = estimates["normal"]
    if resamples and math.isfinite(value):
        seed = int(rng.integers(2**31))
        intervals.update(_bootstrap(strata, finalize, lambdas["normal"], value, seed, resamples))
    tally.add(estimates, intervals)


def run_cell(cell: Cell, replications: int, seed: int, resamples: int = 0) -> Tally:
    rng = np.random.default_rng([seed, round(cell.prevalence * 100), cell.n])
    tally = Tally(cell)
    for _ in range(replications):
        replicate(cell, rng, tally, resamples=resamples)
    return tally


@dataclass(frozen=True)
class Allocated:
    """Mean widths of the corrected mean's normal interval under a Neyman-allocated stratified
    sample and a uniform one of the same budget, the spread of each one's estimates over the
    replications (the true standard error), and each one's coverage."""

    neyman: float
    uniform: float
    coverage: float
    spread_neyman: float = math.nan
    spread_uniform: float = math.nan
    coverage_uniform: float = math.nan

    @property
    def narrower(self) -> float:
        """How much narrower the stratified interval is (0.2: 20%)."""
        return 1 - self.neyman / self.uniform

    @property
    def tighter(self) -> float:
        """How much smaller the stratified estimate's true standard error is."""
        return 1 - self.spread_neyman / self.spread_uniform


def allocation_study(
    easy: float,
    spread: float,
    n: int,
    budget: int,
    replications: int,
    seed: int,
    strata: int = 4,
) -> Allocated:
    """A calibrated judge (each record's human value ``Y ~ Bernoulli(p)`` of its score ``p``,
    the judge's row): a share ``easy`` of the records it is sure of (``p`` 0.01 or 0.99, half
    each), the others ``p = sigmoid(spread · z)``. The labelled records are drawn by
    :func:`pingce.audits.sample.draw` (its strata of the scores, Neyman allocation; uniform
    allocation for the other side, analysed as one stratum). The truth is 0.5 (both parts are
    symmetric about it)."""
    rng = np.random.default_rng([seed, n, budget])
    widths: dict[str, list[float]] = {"neyman": [], "uniform": []}
    errors: dict[str, list[float]] = {"neyman": [], "uniform": []}
    covered = dict.fromkeys(widths, 0)
    truth = 0.5
    for r in range(replications):
        score = 1 / (1 + np.exp(-spread * rng.standard_normal(n)))
        sure = rng.random(n) < easy
        score[sure] = np.where(rng.random(int(sure.sum())) < 0.5, 0.01, 0.99)
        y = (rng.random(n) < score) * 1.0
        for allocation in ("neyman", "uniform"):
            drawn = draw(
                [np.array([s]) for s in score],
                budget,
                seed=r,
                strata=strata,
                allocation=allocation,
            )
            chosen = np.zeros(n, dtype=bool)
            chosen[drawn.indices] = True
            codes = drawn.codes if allocation == "neyman" else np.zeros(n, dtype=np.intp)
            parts = [
                Stratum(
                    y[chosen & (codes == h)],
                    score[chosen & (codes == h)],
                    score[~chosen & (codes == h)],
                )
                for h in np.unique(codes).tolist()
            ]
            value, low, high = delta_interval(lambda m: float(m[0]), corrected_mean(parts))
            widths[allocation].append(high - low)
            errors[allocation].append(value - truth)
            covered[allocation] += bool(low <= truth <= high)
    return Allocated(
        float(np.mean(widths["neyman"])),
        float(np.mean(widths["uniform"])),
        covered["neyman"] / replications,
        float(np.std(errors["neyman"], ddof=1)),
        float(np.std(errors["uniform"], ddof=1)),
        covered["uniform"] / replications,
    )
