"""Bootstrap intervals (pingce.stats) against scipy.stats.bootstrap and brute-force oracles.

Two kinds of checks:

* Monte-Carlo agreement with ``scipy.stats.bootstrap`` (independent resamples, so the interval
  ends agree only up to Monte-Carlo error; the tolerance is derived below and shown to be tight
  enough to reject a deliberately wrong interval);
* exact agreement, resample for resample, with the statistic recomputed by brute force on the
  rows of ``resample_indices(n, B, seed)`` (the index matrix pingce documents it uses), with the
  percentile/basic/BCa formulas of scipy written out by hand.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
import scipy.stats
from scipy.special import ndtr, ndtri

import pingce
from pingce.engine.plan import make_plan
from pingce.metrics import Context, StatBlock
from pingce.options import RunOptions
from pingce.records import load_records
from pingce.stats import (
    Interval,
    _acceleration,
    _interval,
    _jackknife,
    bootstrap_intervals,
    resample_indices,
)
from pingce.suites import SuiteSpec, load_suite

LABELS = ["高", "中", "低"]


def make_spec(*metrics: str) -> SuiteSpec:
    return SuiteSpec(
        name="stats-test",
        labels={"values": LABELS, "aliases": {"high": "高", "medium": "中", "low": "低"}},
        inputs={"gold": "gold_level", "pred": "pred_level", "latency": "latency_sec"},
        metrics={name: {} for name in metrics},
    )


SPEC = make_spec("accuracy", "avg_latency_sec", "p95_latency_sec")
MEAN_SPEC = make_spec("accuracy", "avg_latency_sec")


def make_records(
    seed: int, n: int, p_correct: float = 0.7, latency: np.ndarray | None = None
) -> tuple[list[dict[str, object]], np.ndarray, np.ndarray]:
    """Records with random gold labels; returns (records, correct 0/1, latency or NaN)."""
    rng = np.random.default_rng(seed)
    correct = (rng.random(n) < p_correct).astype(np.float64)
    if latency is None:
        latency = rng.lognormal(0.0, 0.8, size=n)
    records: list[dict[str, object]] = []
    for i in range(n):
        gold = int(rng.integers(3))
        pred = gold if correct[i] else (gold + 1 + int(rng.integers(2))) % 3
        record: dict[str, object] = {
            "id": f"r{i}",
            "gold_level": LABELS[gold],
            "pred_level": LABELS[pred],
        }
        if not math.isnan(latency[i]):
            record["latency_sec"] = float(latency[i])
        records.append(record)
    return records, correct, np.asarray(latency, dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Brute-force oracles (scipy's definitions, written out)


def _mean_defined(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(np.mean(x)) if x.size else math.nan


def _p95(x: np.ndarray) -> float:
    x = x[~np.isnan(x)]
    return float(np.percentile(x, 95)) if x.size else math.nan


def brute_thetas(data: np.ndarray, stat, n: int, resamples: int, seed: int) -> np.ndarray:
    return np.array([stat(data[rows]) for rows in resample_indices(n, resamples, seed)])


def brute_jackknife(data: np.ndarray, stat) -> np.ndarray:
    n = data.shape[0]
    return np.array([stat(np.delete(data, i)) for i in range(n)])


def scipy_acceleration(theta_i: np.ndarray) -> float:
    """scipy's ``_bca_interval`` acceleration on a plain (one value per record) jackknife."""
    n = float(theta_i.shape[0])
    u = (n - 1) * (theta_i.mean() - theta_i)
    num = np.sum(u**3) / n**3
    den = np.sum(u**2) / n**2
    return float(num / (6.0 * den**1.5))


def oracle_interval(
    theta_hat: float, theta: np.ndarray, method: str, level: float, jack: np.ndarray
) -> tuple[float, float]:
    alpha = (1 - level) / 2
    theta = theta[~np.isnan(theta)]
    if method == "percentile":
        return float(np.quantile(theta, alpha)), float(np.quantile(theta, 1 - alpha))
    if method == "basic":
        return (
            2 * theta_hat - float(np.quantile(theta, 1 - alpha)),
            2 * theta_hat - float(np.quantile(theta, alpha)),
        )
    # BCa: z0 from scipy's "mean" percentile of score, a from the jackknife.
    p = scipy.stats.percentileofscore(theta, theta_hat, kind="mean") / 100.0
    z0 = float(ndtri(p))
    a = scipy_acceleration(jack[~np.isnan(jack)])
    z = float(ndtri(alpha))
    a1 = float(ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))))
    a2 = float(ndtr(z0 + (z0 - z) / (1 - a * (z0 - z))))
    return float(np.quantile(theta, a1)), float(np.quantile(theta, a2))


# --------------------------------------------------------------------------------------------
# Monte-Carlo agreement with scipy.stats.bootstrap

B_MC = 9999
N_ACC, N_LAT = 300, 150


@cache
def mc_data() -> tuple[list[dict[str, object]], np.ndarray, np.ndarray]:
    records, correct, _ = make_records(11, N_ACC)
    latency = np.random.default_rng(12).lognormal(0.0, 0.8, size=N_LAT)
    for record, value in zip(records, latency, strict=False):
        record["latency_sec"] = float(value)
    for record in records[N_LAT:]:
        del record["latency_sec"]
    return records, correct, latency


def mc_tolerance(se: float, lattice: float) -> float:
    """Allowed |ours - scipy| for an interval end.

    An end is a sample quantile of B bootstrap values at level ~alpha; its standard error is
    about se * sqrt(alpha (1 - alpha) / B) / phi(z_alpha) = 0.027 se for alpha = 0.025 and
    B = 9999 (0.021 se at alpha = 0.05); BCa adds the Monte-Carlo error of z0 (~0.0125 in z,
    ~0.025 se at the ends). The difference of two independent runs thus has sd <= ~0.05 se; an
    empirical check over 20 scipy seeds gave sd 0.023-0.054 se per end. 0.25 se is ~5 sd. For
    accuracy the values lie on the lattice k/n, so one lattice step is added.
    """
    return 0.25 * se + lattice


@pytest.mark.parametrize("level", [0.9, 0.95])
@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_mean_metrics_agree_with_scipy_bootstrap(method: str, level: float) -> None:
    records, correct, latency = mc_data()
    ours = pingce.evaluate(
        MEAN_SPEC,
        records,
        bootstrap=B_MC,
        seed=2024,
        ci_method=method.lower(),
        ci_level=level,
    )
    cases = [
        ("accuracy", correct, 1.0 / N_ACC),
        ("avg_latency_sec", latency, 0.0),
    ]
    for name, data, lattice in cases:
        result = ours.metrics[name]
        assert result.value == pytest.approx(float(np.mean(data)), rel=1e-12)
        assert result.n == data.shape[0]
        ref = scipy.stats.bootstrap(
            (data,),
            np.mean,
            n_resamples=B_MC,
            confidence_level=level,
            method=method,
            rng=np.random.default_rng(99),
        )
        tol = mc_tolerance(float(ref.standard_error), lattice)
        assert result.ci_low is not None and result.ci_high is not None
        assert result.ci_low < result.value < result.ci_high
        assert abs(result.ci_low - ref.confidence_interval.low) <= tol, (name, ref, result, tol)
        assert abs(result.ci_high - ref.confidence_interval.high) <= tol, (name, ref, result, tol)
        # The tolerance is tight enough to tell a wrong interval apart: the same method at a
        # 0.70 level (ends ~0.6 se or more closer to the estimate) must not pass as ours.
        wrong = scipy.stats.bootstrap(
            (data,),
            np.mean,
            n_resamples=B_MC,
            confidence_level=0.70,
            method=method,
            rng=np.random.default_rng(98),
        ).confidence_interval
        gap = max(abs(result.ci_low - wrong.low), abs(result.ci_high - wrong.high))
        assert gap > tol, (name, wrong, result, tol)


# --------------------------------------------------------------------------------------------
# Exact agreement with brute force on the same resamples


@cache
def exact_data() -> tuple[list[dict[str, object]], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    latency = rng.gamma(2.0, 1.5, size=90)
    latency[rng.random(90) < 0.2] = np.nan  # some records without a latency
    latency[:3] = [1.0, 1.0, 2.5]  # ties
    return make_records(6, 90, latency=latency)


def exact_cases(correct: np.ndarray, latency: np.ndarray):
    return [
        ("accuracy", correct, lambda x: float(np.mean(x))),
        ("avg_latency_sec", latency, _mean_defined),
        ("p95_latency_sec", latency, _p95),
    ]


@pytest.mark.parametrize("level", [0.9, 0.95])
@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_exact_against_brute_force_on_same_resamples(method: str, level: float) -> None:
    records, correct, latency = exact_data()
    n, resamples, seed = len(records), 1500, 77
    result = pingce.evaluate(
        SPEC,
        records,
        bootstrap=resamples,
        seed=seed,
        ci_method=method,
        ci_level=level,
        bootstrap_stream="indices",  # the index stream, which brute_thetas draws again
    )
    for name, data, stat in exact_cases(correct, latency):
        theta_hat = stat(data)
        got = result.metrics[name]
        assert got.value == pytest.approx(theta_hat, rel=1e-12)
        theta = brute_thetas(data, stat, n, resamples, seed)
        jack = brute_jackknife(data, stat)
        low, high = oracle_interval(theta_hat, theta, method, level, jack)
        assert got.ci_low == pytest.approx(low, rel=1e-12, abs=1e-12), name
        assert got.ci_high == pytest.approx(high, rel=1e-12, abs=1e-12), name
        assert got.ci_note is None


def test_percentile_interval_is_quantile_of_resampled_statistic_direct_call() -> None:
    """bootstrap_intervals called directly, on blocks built from the suite's statistics."""
    records, correct, latency = exact_data()
    built = load_suite(SPEC)
    table = load_records(records, make_plan(built, RunOptions()).fields)
    blocks: dict[object, StatBlock] = {}
    metrics = {}
    for name, metric in built.metrics.items():
        statistic = metric.statistic()
        blocks.setdefault(statistic.key, statistic.compute(table, Context()))
        metrics[name] = (metric, statistic.key)
    cases = exact_cases(correct, latency)
    values = {name: stat(data) for name, data, stat in cases}
    n, resamples, seed, level = len(records), 2000, [3, 1, 4], 0.9
    out = bootstrap_intervals(
        blocks,
        metrics,
        values,
        resamples=resamples,
        seed=seed,
        method="percentile",
        level=level,
        stream="indices",
    )
    assert set(out) == set(values)
    for name, data, stat in cases:
        theta = np.array([stat(data[rows]) for rows in resample_indices(n, resamples, seed)])
        expected = np.quantile(theta, [0.05, 0.95])
        np.testing.assert_allclose([out[name].low, out[name].high], expected, rtol=1e-12)
        # And not the 0.80 interval of the same resamples.
        assert not np.allclose([out[name].low, out[name].high], np.quantile(theta, [0.1, 0.9]))


def test_resample_indices_rows() -> None:
    rows = list(resample_indices(17, 5, 8))
    assert len(rows) == 5
    rng = np.random.default_rng(8)
    for row in rows:
        assert row.shape == (17,)
        assert row.min() >= 0 and row.max() < 17
        np.testing.assert_array_equal(row, rng.integers(0, 17, size=17))
    again = list(resample_indices(17, 5, 8))
    assert all(np.array_equal(a, b) for a, b in zip(rows, again, strict=True))
    other = list(resample_indices(17, 5, 9))
    assert not all(np.array_equal(a, b) for a, b in zip(rows, other, strict=True))


# --------------------------------------------------------------------------------------------
# BCa ingredients


def test_acceleration_matches_scipy_formula_on_plain_jackknife() -> None:
    rng = np.random.default_rng(21)
    x = rng.lognormal(0.0, 1.0, size=60)  # skewed: acceleration clearly non-zero
    theta_i = (x.sum() - x) / (x.size - 1)  # leave-one-out means
    expected = scipy_acceleration(theta_i)
    assert abs(expected) > 1e-3
    assert _acceleration(theta_i, np.ones_like(theta_i)) == pytest.approx(expected, rel=1e-10)
    # NaN jackknife values (metric undefined without that record) are dropped.
    with_nan = np.concatenate([theta_i, [np.nan, np.nan]])
    assert _acceleration(with_nan, np.ones_like(with_nan)) == pytest.approx(expected, rel=1e-10)


def test_acceleration_weighted_form_equals_expanded_jackknife() -> None:
    rng = np.random.default_rng(22)
    x = rng.integers(0, 5, size=80).astype(np.float64) ** 2  # few distinct values, skewed
    theta_i = (x.sum() - x) / (x.size - 1)
    values, counts = np.unique(theta_i, return_counts=True)
    assert values.size < 10
    expected = scipy_acceleration(theta_i)
    got = _acceleration(values, counts.astype(np.float64))
    assert got == pytest.approx(expected, rel=1e-10)
    assert abs(expected) > 1e-3


def _multiset(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts)
    assert np.all(counts == np.round(counts)) and np.all(counts >= 0)
    return np.sort(np.repeat(np.asarray(values, dtype=np.float64), counts.astype(np.int64)))


def test_jackknife_of_suite_metrics_equals_leave_one_out() -> None:
    records, correct, latency = exact_data()
    built = load_suite(SPEC)
    table = load_records(records, make_plan(built, RunOptions()).fields)
    for name, data, stat in exact_cases(correct, latency):
        metric = built.metrics[name]
        block = metric.statistic().compute(table, Context())
        values, counts = _jackknife(metric, block)
        got = _multiset(values, counts)
        expected = np.sort(brute_jackknife(data, stat))
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_z0_uses_mean_percentile_of_score() -> None:
    """Many resamples equal the estimate: z0 counts them as half below (scipy's 'mean' kind)."""
    rng = np.random.default_rng(31)
    theta_hat = 0.3
    theta = rng.normal(0.0, 1.0, size=2000)
    theta[:400] = theta_hat
    level = 0.95
    jack_values = np.full(10, 0.7)  # constant jackknife: acceleration 0

    def jack() -> tuple[np.ndarray, np.ndarray]:
        return jack_values, np.ones(10)

    got = _interval(theta_hat, theta, "bca", level, jack)
    z = float(ndtri(0.025))

    def bca_with(p: float) -> tuple[float, float]:
        z0 = float(ndtri(p))
        a1, a2 = float(ndtr(2 * z0 + z)), float(ndtr(2 * z0 - z))
        return float(np.quantile(theta, a1)), float(np.quantile(theta, a2))

    below = np.count_nonzero(theta < theta_hat)
    at_or_below = np.count_nonzero(theta <= theta_hat)
    p_mean = scipy.stats.percentileofscore(theta, theta_hat, kind="mean") / 100
    assert p_mean == pytest.approx((below + at_or_below) / (2 * theta.size), rel=1e-12)
    expected = bca_with(p_mean)
    assert (got.low, got.high) == pytest.approx(expected, rel=1e-12)
    # The other conventions give clearly different intervals here.
    for p in (below / theta.size, at_or_below / theta.size):
        other = bca_with(p)
        assert abs(other[0] - expected[0]) + abs(other[1] - expected[1]) > 0.05


# --------------------------------------------------------------------------------------------
# Degenerate and partly undefined bootstrap distributions


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_degenerate_distribution_all_correct(method: str) -> None:
    records, _, _ = make_records(41, 40, p_correct=1.0)
    result = pingce.evaluate(SPEC, records, bootstrap=300, seed=4, ci_method=method)
    acc = result.metrics["accuracy"]
    assert acc.value == 1.0
    assert acc.ci_low == 1.0 and acc.ci_high == 1.0
    assert acc.ci_note is not None and "same value" in acc.ci_note
    # A non-degenerate metric of the same run has a proper interval and no such note.
    lat = result.metrics["avg_latency_sec"]
    assert lat.ci_low is not None and lat.ci_high is not None and lat.ci_low < lat.ci_high
    assert lat.ci_note is None


def test_undefined_resamples_are_left_out_and_counted() -> None:
    n, resamples, seed = 20, 500, 3
    latency = np.full(n, np.nan)
    latency[4], latency[13] = 1.0, 3.0  # only two records have a latency
    records, _, _ = make_records(42, n, latency=latency)
    result = pingce.evaluate(
        SPEC,
        records,
        bootstrap=resamples,
        seed=seed,
        ci_method="percentile",
        ci_level=0.9,
        bootstrap_stream="indices",
    )
    theta = brute_thetas(latency, _mean_defined, n, resamples, seed)
    undefined = int(np.count_nonzero(np.isnan(theta)))
    assert 20 < undefined < 200  # P(neither drawn) = 0.9**20 ~ 0.12
    defined = theta[~np.isnan(theta)]
    for name in ("avg_latency_sec", "p95_latency_sec"):
        got = result.metrics[name]
        assert got.n == 2
        assert got.ci_note is not None
        assert f"{undefined} of {resamples} resamples undefined" in got.ci_note, got.ci_note
    avg = result.metrics["avg_latency_sec"]
    assert avg.value == pytest.approx(2.0)
    expected = np.quantile(defined, [0.05, 0.95])
    np.testing.assert_allclose([avg.ci_low, avg.ci_high], expected, rtol=1e-12)
    # Had the undefined resamples been kept as NaN or as 0, the quantiles would differ.
    assert not np.allclose(expected, np.quantile(np.nan_to_num(theta), [0.05, 0.95]))


def test_too_few_defined_resamples_gives_no_interval() -> None:
    theta = np.full(50, np.nan)
    theta[7] = 1.0
    got = _interval(1.0, theta, "percentile", 0.95, lambda: (np.ones(1), np.ones(1)))
    assert got == Interval(None, None, got.note)
    assert got.note is not None and "too few" in got.note


# --------------------------------------------------------------------------------------------
# Determinism and switching the bootstrap off


def test_same_seed_same_interval_other_seed_different() -> None:
    records, _, _ = make_records(51, 60)
    kwargs = {"bootstrap": 400, "ci_method": "bca"}
    a = pingce.evaluate(SPEC, records, seed=10, **kwargs)
    b = pingce.evaluate(SPEC, records, seed=10, **kwargs)
    c = pingce.evaluate(SPEC, records, seed=11, **kwargs)
    for name in ("accuracy", "avg_latency_sec", "p95_latency_sec"):
        ends_a = (a.metrics[name].ci_low, a.metrics[name].ci_high)
        assert ends_a == (b.metrics[name].ci_low, b.metrics[name].ci_high)
        assert None not in ends_a
    name = "avg_latency_sec"  # continuous: another seed moves the ends
    assert (a.metrics[name].ci_low, a.metrics[name].ci_high) != (
        c.metrics[name].ci_low,
        c.metrics[name].ci_high,
    )


def test_bootstrap_zero_gives_no_interval() -> None:
    records, correct, _ = make_records(61, 30)
    result = pingce.evaluate(SPEC, records, bootstrap=0)
    assert result.metrics["accuracy"].value == pytest.approx(correct.mean())
    for name, metric in result.metrics.items():
        assert metric.value is not None, name
        assert metric.ci_low is None and metric.ci_high is None, name
        assert metric.ci_note is None, name
    assert result.signature.bootstrap == 0
    with_ci = pingce.evaluate(SPEC, records, bootstrap=50)
    assert with_ci.metrics["accuracy"].ci_low is not None


def test_bootstrap_intervals_with_zero_resamples_is_empty() -> None:
    built = load_suite(SPEC)
    metric = built.metrics["accuracy"]
    block = StatBlock(width=9, codes=np.array([0, 4, 8, 1]))
    got = bootstrap_intervals(
        {"k": block}, {"accuracy": (metric, "k")}, {"accuracy": 0.75}, resamples=0, seed=0
    )
    assert got == {}


def test_normal_cdf_and_quantile_equal_scipys() -> None:
    """BCa's normal functions come from the standard library (no scipy import at run time);
    they agree with scipy.special.ndtr/ndtri, edge values included."""
    from scipy.special import ndtr as scipy_ndtr
    from scipy.special import ndtri as scipy_ndtri

    from pingce.stats import ndtr, ndtri

    rng = np.random.default_rng(7)
    levels = [0.0, 1.0, 0.5, 0.025, 0.975, 1e-300, 1 - 1e-16, *rng.random(2000).tolist()]
    for p in levels:
        want = float(scipy_ndtri(p))
        got = ndtri(p)
        assert got == want or abs(got - want) <= 2e-15 * max(1.0, abs(want)), p
    for p in (-0.1, 1.5, math.nan):
        assert math.isnan(ndtri(p))
    points = [-math.inf, math.inf, 0.0, -40.0, 40.0, *rng.normal(0, 4, 2000).tolist()]
    for x in points:
        assert abs(ndtr(x) - float(scipy_ndtr(x))) <= 1e-15, x
    assert math.isnan(ndtr(math.nan))
