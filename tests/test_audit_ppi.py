"""Prediction-powered corrections (issue 34's estimator, :mod:`pingce.audits.ppi`) against the
``ppi-python`` package (``ppi_py``), the Rogan-Gladen estimator of a prevalence, and a small
coverage study of a ratio metric through the delta method. Seeded random data throughout."""

from __future__ import annotations

import numpy as np
import pytest

from pingce.audits import Stratum, corrected_mean, delta_interval, tuned_lambda
from pingce.audits.ppi import crossfit_lambda, metric_lambda

ppi_py = pytest.importorskip("ppi_py")


def _judged(rng: np.random.Generator, size: int, d: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Human values and a judge that is right most of the time, biased upwards."""
    human = rng.binomial(1, 0.4, size=(size, d)).astype(float)
    noise = rng.normal(0.15, 0.3, size=(size, d))
    judge = np.clip(0.7 * human + 0.2 + noise, 0, 1)
    return human, judge


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.37])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_mean_equals_ppi_py(lam: float | None, seed: int) -> None:
    rng = np.random.default_rng(seed)
    human, judge = _judged(rng, 2_000)
    labelled = rng.choice(2_000, size=150, replace=False)
    mask = np.zeros(2_000, bool)
    mask[labelled] = True
    y, yhat, unlabelled = human[mask, 0], judge[mask, 0], judge[~mask, 0]
    got = corrected_mean([Stratum(y, yhat, unlabelled)], lam)
    want = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)
    assert got.mean[0] == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=lam)
    value, ours_low, ours_high = delta_interval(lambda m: float(m[0]), got)
    assert value == pytest.approx(float(np.squeeze(want)), abs=1e-9)
    assert ours_low == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert ours_high == pytest.approx(float(np.squeeze(high)), abs=1e-9)
    if lam is None:
        assert 0.0 < got.lambdas[0][0] <= 1.0


def test_each_component_is_tuned_as_ppi_py_element_mode() -> None:
    rng = np.random.default_rng(7)
    human, judge = _judged(rng, 3_000, d=3)
    judge[:, 2] = rng.random(3_000)  # a judge that knows nothing here: λ near 0
    y, yhat, unlabelled = human[:300], judge[:300], judge[300:]
    got = corrected_mean([Stratum(y, yhat, unlabelled)])
    want = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam_optim_mode="element")
    np.testing.assert_allclose(got.mean, np.squeeze(want), atol=1e-9, rtol=0)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam_optim_mode="element")
    z = 1.959963984540054
    np.testing.assert_allclose(got.mean - z * got.standard_error, np.squeeze(low), atol=1e-9)
    np.testing.assert_allclose(got.mean + z * got.standard_error, np.squeeze(high), atol=1e-9)
    lam = tuned_lambda(y, yhat, unlabelled)
    assert lam[2] < 0.2 < lam[0]


def test_strata_combine_by_their_share_of_the_records() -> None:
    rng = np.random.default_rng(11)
    parts = []
    for size, labelled in ((4_000, 100), (1_000, 200)):  # the second stratum oversampled
        human, judge = _judged(rng, size)
        parts.append(Stratum(human[:labelled], judge[:labelled], judge[labelled:]))
    got = corrected_mean(parts, lam=1.0)
    total = 5_000
    want, variance = 0.0, 0.0
    for part in parts:
        point = float(
            np.squeeze(
                ppi_py.ppi_mean_pointestimate(part.human, part.judge, part.unlabelled, lam=1)
            )
        )
        low, high = ppi_py.ppi_mean_ci(part.human, part.judge, part.unlabelled, alpha=0.05, lam=1)
        se = (float(np.squeeze(high)) - float(np.squeeze(low))) / (2 * 1.959963984540054)
        want += part.size / total * point
        variance += (part.size / total) ** 2 * se**2
    assert got.mean[0] == pytest.approx(want, abs=1e-9)
    assert got.standard_error[0] == pytest.approx(np.sqrt(variance), abs=1e-9)
    assert (got.labelled, got.unlabelled) == (300, 4_700)


def test_a_binary_prevalence_agrees_with_rogan_gladen() -> None:
    """A judge with sensitivity 0.85 and specificity 0.9 on a prevalence of 0.3: the corrected
    prevalence's interval holds the Rogan-Gladen estimate from the same labelled records."""
    rng = np.random.default_rng(3)
    size, labelled = 50_000, 1_000
    truth = rng.random(size) < 0.3
    verdict = np.where(truth, rng.random(size) < 0.85, rng.random(size) < 0.10)
    human, judge = truth.astype(float), verdict.astype(float)
    got = corrected_mean([Stratum(human[:labelled], judge[:labelled], judge[labelled:])])
    _, low, high = delta_interval(lambda m: float(m[0]), got)
    sens = judge[:labelled][truth[:labelled]].mean()
    spec = 1 - judge[:labelled][~truth[:labelled]].mean()
    rogan_gladen = (judge.mean() + spec - 1) / (sens + spec - 1)
    assert low <= rogan_gladen <= high
    assert low <= 0.3 <= high
    assert not low <= judge.mean() <= high  # the judge alone is off


def test_a_ratio_metric_s_delta_interval_covers() -> None:
    """F1 from summed rows [tp, fp, fn] (finalize 2tp / (2tp + fp + fn)): over 400 simulated
    audits of 3,000 records with 250 labelled, the 95% delta-method interval of the corrected F1
    covers the true F1 of the population's human rows between 92% and 98% of the time."""
    rng = np.random.default_rng(5)

    def f1(m: np.ndarray) -> float:
        return float(2 * m[0] / (2 * m[0] + m[1] + m[2]))

    size, labelled, trials = 3_000, 250, 400
    covered = 0
    for _ in range(trials):
        gold = rng.random(size) < 0.4
        pred = np.where(gold, rng.random(size) < 0.8, rng.random(size) < 0.15)
        judge_says = np.where(pred == gold, rng.random(size) < 0.9, rng.random(size) < 0.3)
        # the judge decides whether a prediction matches: the rows it gives
        match_j = np.where(pred, judge_says, False)
        human_rows = np.stack([pred & gold, pred & ~gold, ~pred & gold], axis=1).astype(float)
        judge_rows = np.stack([match_j, pred & ~match_j, gold & ~match_j], axis=1).astype(float)
        truth = f1(human_rows.mean(axis=0))
        order = rng.permutation(size)
        lab, unlab = order[:labelled], order[labelled:]
        got = corrected_mean([Stratum(human_rows[lab], judge_rows[lab], judge_rows[unlab])])
        _, low, high = delta_interval(f1, got)
        covered += low <= truth <= high
    assert 0.92 <= covered / trials <= 0.98, covered / trials


def test_a_stratum_labelled_whole_is_its_human_mean_whatever_lambda() -> None:
    rng = np.random.default_rng(2)
    human, judge = _judged(rng, 50, d=2)
    for lam in (None, 1.0, 0.5):
        got = corrected_mean([Stratum(human, judge, np.empty((0, 2)))], lam)
        np.testing.assert_allclose(got.mean, human.mean(axis=0), atol=1e-15)
        assert (got.labelled, got.unlabelled) == (50, 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_lambda_tuned_for_a_mean_is_ppi_plus_plus_s(seed: int) -> None:
    """For one component the metric's λ is PPI++'s (the same regression), so ``ppi_py`` still
    agrees; the strata each get their own."""
    rng = np.random.default_rng(seed)
    parts = []
    for size, labelled in ((3_000, 150), (1_000, 120)):
        human, judge = _judged(rng, size)
        parts.append(Stratum(human[:labelled], judge[:labelled], judge[labelled:]))
    got = metric_lambda(parts, lambda m: float(m[0]))
    for part, lam in zip(parts, got, strict=True):
        np.testing.assert_allclose(lam, tuned_lambda(part.human, part.judge, part.unlabelled))
    assert corrected_mean(parts, got).mean == pytest.approx(corrected_mean(parts).mean, abs=1e-12)


def test_lambda_tuned_for_a_ratio_keeps_the_labels_advantage() -> None:
    """A rate whose numerator and denominator move together (19 of 20 cited clauses
    hallucinated; a judge right 60% of the time): per-component λ leans on the judge's exact
    denominator and loses the labelled ratio's correlation, giving an interval over twice the
    labels' own; the metric's λ is never wider than either."""
    rng = np.random.default_rng(4)
    size, labelled = 4_000, 400
    cited = 1 + rng.poisson(2.0, size)
    true = rng.binomial(cited, 0.95)
    judged = rng.binomial(true, 0.6) + rng.binomial(cited - true, 0.4)
    human = np.stack([true, cited], axis=1) * 1.0
    judge = np.stack([judged, cited], axis=1) * 1.0
    parts = [Stratum(human[:labelled], judge[:labelled], judge[labelled:])]

    def rate(m: np.ndarray) -> float:
        return float(m[0] / m[1])

    widths = {}
    for name, lam in (("element", None), ("human", 0.0), ("metric", metric_lambda(parts, rate))):
        _, low, high = delta_interval(rate, corrected_mean(parts, lam))
        widths[name] = high - low
    assert widths["element"] > 2 * widths["human"]
    assert widths["metric"] <= min(widths["element"], widths["human"]) + 1e-12


def test_a_cross_fitted_lambda_does_not_depend_on_its_own_row() -> None:
    """Each labelled row's λ is tuned on the other folds: changing a row's human value (or its
    judge's) leaves its own λ as it was, and moves some other rows'; one fold is the λ tuned on
    all the rows, :func:`metric_lambda`'s."""
    rng = np.random.default_rng(21)
    human, judge = _judged(rng, 2_000)
    parts = [Stratum(human[:60], judge[:60], judge[60:])]

    def mean(m: np.ndarray) -> float:
        return float(m[0])

    before = crossfit_lambda(parts, mean)[0]
    assert before.shape == (60, 1) and np.unique(before).size == 5  # five folds
    for i in (0, 17, 59):
        changed = Stratum(parts[0].human.copy(), parts[0].judge.copy(), parts[0].unlabelled)
        changed.human[i, 0] = 1 - changed.human[i, 0]
        changed.judge[i, 0] = 1 - changed.judge[i, 0]
        after = crossfit_lambda([changed], mean)[0]
        assert after[i, 0] == before[i, 0]
        assert not np.array_equal(after, before)
    np.testing.assert_array_equal(crossfit_lambda(parts, mean, 1)[0], metric_lambda(parts, mean)[0])
    for value in np.unique(before):  # a fold's λ: metric_lambda's on the other folds' rows
        fold = before[:, 0] == value
        rest = Stratum(parts[0].human[~fold], parts[0].judge[~fold], parts[0].unlabelled)
        assert metric_lambda([rest], mean)[0][0] == pytest.approx(value, abs=1e-12)


def test_a_cross_fitted_lambda_removes_ppi_plus_plus_s_bias_on_a_rare_class() -> None:
    """A near-perfect judge (TPR = TNR = 0.99) of a class of prevalence 0.05, 40 of 2,000
    records labelled, 600 audits: PPI++'s estimate (λ tuned on the labels it corrects, as
    ``ppi_py``) is biased by about half its standard error; cross-fitted, the bias is within
    the Monte Carlo error (0.04 standard errors) of 0, and the interval narrower than the labels
    alone give."""
    rng = np.random.default_rng(34)
    errors: dict[str, list[float]] = {"ppi++": [], "cross": [], "human": []}
    widths: dict[str, list[float]] = {"ppi++": [], "cross": [], "human": []}

    def mean(m: np.ndarray) -> float:
        return float(m[0])

    for _ in range(600):
        truth = (rng.random(2_000) < 0.05) * 1.0
        judge = np.where(rng.random(2_000) < 0.99, truth, 1 - truth)
        parts = [Stratum(truth[:40], judge[:40], judge[40:])]
        lambdas = (("ppi++", None), ("cross", crossfit_lambda(parts, mean)), ("human", 0.0))
        for name, lam in lambdas:
            value, low, high = delta_interval(mean, corrected_mean(parts, lam))
            errors[name].append(value - 0.05)
            widths[name].append(high - low)
    bias = {k: float(np.mean(v) / np.std(v, ddof=1)) for k, v in errors.items()}
    assert bias["ppi++"] < -0.3, bias
    assert abs(bias["cross"]) < 0.12, bias
    assert np.mean(widths["cross"]) < 0.8 * np.mean(widths["human"])
