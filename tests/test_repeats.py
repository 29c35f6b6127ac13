"""pass@k, pass^k, variance components and repeat planning (issue 35, :mod:`pingce.repeats`).

Oracles: the definitions themselves (every k-subset of a record's attempts enumerated), the
formulas of Chen et al. (2021) and τ-bench's ``pass_hat_ks`` written out with ``math.comb``,
statsmodels' MixedLM (REML) on balanced nested data, and simulations with planted components."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import beta as beta_function

from pingce.repeats import decompose, pass_at_k, pass_curves, pass_hat_k, plan_repeats
from pingce.repeats.components import expected_se


def test_pass_at_k_and_pass_hat_k_are_their_definitions() -> None:
    """Over every k-subset of a record's n attempts: the share with a success (pass@k) and
    the share of all successes (pass^k)."""
    rng = np.random.default_rng(0)
    for _ in range(40):
        n = int(rng.integers(1, 9))
        attempts = rng.random(n) < rng.random()
        c = int(attempts.sum())
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(attempts.tolist(), k))
            some = sum(any(s) for s in subsets) / len(subsets)
            every = sum(all(s) for s in subsets) / len(subsets)
            assert pass_at_k(np.array([n]), np.array([c]), k)[0] == pytest.approx(some, abs=1e-12)
            assert pass_hat_k(np.array([n]), np.array([c]), k)[0] == pytest.approx(every, abs=1e-12)


def test_the_published_formulas() -> None:
    """Chen et al.'s numerically stable estimator and τ-bench's ``comb(c, k) / comb(n, k)``."""
    n = np.array([10, 10, 20, 7, 50, 3])
    c = np.array([0, 10, 3, 4, 25, 1])
    for k in (1, 2, 3, 5):
        chen = [
            1.0 if ni - ci < k else 1.0 - float(np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1)))
            for ni, ci in zip(n, c, strict=True)
        ]
        tau = [
            math.comb(int(ci), k) / math.comb(int(ni), k) if ni >= k else math.nan
            for ni, ci in zip(n, c, strict=True)
        ]
        got_at, got_hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
        keep = n >= k
        assert got_at[keep] == pytest.approx(np.array(chen)[keep], abs=1e-12)
        assert got_hat[keep] == pytest.approx(np.array(tau)[keep], abs=1e-12)
        assert np.isnan(got_at[~keep]).all() and np.isnan(got_hat[~keep]).all()


def test_one_attempt_is_the_success_rate() -> None:
    n = np.ones(6, dtype=int)
    c = np.array([1, 0, 1, 1, 0, 1])
    first = pass_curves(n, c)[0]
    assert first.k == 1 and first.records == 6
    assert first.pass_at == first.pass_hat == pytest.approx(4 / 6)


@pytest.mark.parametrize("what", ["pass_at", "pass_hat"])
def test_pass_intervals_cover_the_population_value(what: str) -> None:
    """Records whose success chance is Beta(0.6, 0.8), 5 attempts each, 300 records: the 95%
    interval of pass@3 and pass^3 covers E[1 - (1 - p)^3] and E[p^3] (Beta moments) in
    95% ± 1.5 of 2,000 draws."""
    a, b, k, attempts, records, reps = 0.6, 0.8, 3, 5, 300, 2000
    if what == "pass_at":
        true = 1 - beta_function(a, b + k) / beta_function(a, b)
    else:
        true = beta_function(a + k, b) / beta_function(a, b)
    rng = np.random.default_rng(5)
    covered = 0
    for _ in range(reps):
        p = rng.beta(a, b, records)
        c = rng.binomial(attempts, p)
        one = pass_curves(np.full(records, attempts), c)[k - 1]
        low, high = getattr(one, f"{what}_low"), getattr(one, f"{what}_high")
        covered += low <= true <= high
    assert 0.935 <= covered / reps <= 0.965, covered / reps


def _nested(
    rng: np.random.Generator, n: int, k: int, j: int, sigmas: tuple[float, float, float]
) -> np.ndarray:
    r = rng.normal(0, sigmas[0], (n, 1, 1))
    g = rng.normal(0, sigmas[1], (n, k, 1))
    e = rng.normal(0, sigmas[2], (n, k, j))
    out: np.ndarray = 0.5 + r + g + e
    return out


def test_components_are_statsmodels_reml_on_a_balanced_design() -> None:
    import pandas as pd
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(2)
    values = _nested(rng, 80, 3, 2, (0.3, 0.2, 0.1))
    got = decompose(values, resamples=0)
    n, k, j = values.shape
    frame = pd.DataFrame(
        {
            "y": values.ravel(),
            "record": np.repeat(np.arange(n), k * j),
            "generation": np.tile(np.repeat(np.arange(k), j), n),
        }
    )
    model = smf.mixedlm(
        "y ~ 1", frame, groups="record", re_formula="1", vc_formula={"g": "0 + C(generation)"}
    )
    fit = model.fit(reml=True, method="lbfgs")
    assert got.variance["judge"] == pytest.approx(fit.scale, rel=1e-3)
    assert got.variance["records"] == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-3)
    assert got.variance["generations"] == pytest.approx(float(fit.vcomp[0]), rel=1e-3)
    # the mean's standard error is the records' spread of their means (balanced)
    means = values.mean(axis=(1, 2))
    assert got.standard_error == pytest.approx(means.std(ddof=1) / math.sqrt(n), rel=1e-12)


def test_planted_shares_are_recovered() -> None:
    """σ² 0.04 / 0.06 / 0.09 (records / generations / judge), 400 records × 4 × 3: the median
    over 40 replications of each share within 10% (relative) of the planted share, and the
    share intervals cover it."""
    sigmas = (0.2, math.sqrt(0.06), 0.3)
    n, k, j = 400, 4, 3
    parts = np.array([0.04 / n, 0.06 / (n * k), 0.09 / (n * k * j)])
    planted = parts / parts.sum()
    rng = np.random.default_rng(8)
    shares, covered = [], 0
    for rep in range(40):
        got = decompose(_nested(rng, n, k, j, sigmas), resamples=400, seed=rep)
        shares.append([got.share[s] for s in ("records", "generations", "judge")])
        covered += got.share_low["records"] <= planted[0] <= got.share_high["records"]
    median = np.median(np.array(shares), axis=0)
    assert median == pytest.approx(planted, rel=0.10)
    assert covered >= 34  # 95% intervals: about 38 of 40


def test_a_design_without_repeats_says_what_it_cannot_separate() -> None:
    rng = np.random.default_rng(1)
    got = decompose(_nested(rng, 50, 1, 1, (0.3, 0.2, 0.1)), resamples=100)
    assert got.variance["generations"] is None and got.variance["judge"] is None
    assert got.share == {"records": 1.0, "generations": None, "judge": None}
    with pytest.raises(ValueError, match="no missing value"):
        decompose(np.array([[[1.0]], [[np.nan]]]))


def test_the_plan_reaches_the_target_in_reruns() -> None:
    """From a pilot of 300 records × 2 × 2, the cheapest (K', J') for a target SE; its true SE
    (from the planted components) within 10% of the target in at least 90% of 100 pilots."""
    sigmas = (0.15, 0.3, 0.25)
    truth = decompose(_nested(np.random.default_rng(0), 2, 2, 2, sigmas), resamples=0)
    true = type(truth)(
        **{
            **truth.__dict__,
            "variance": {"records": 0.15**2, "generations": 0.3**2, "judge": 0.25**2},
        }
    )
    n, target = 300, 0.015
    rng = np.random.default_rng(4)
    hits = 0
    for _ in range(100):
        pilot = decompose(_nested(rng, n, 2, 2, sigmas), resamples=0)
        plan = plan_repeats(pilot, target)
        assert plan.reachable and plan.repeats is not None and plan.judge_calls is not None
        hits += expected_se(true, n, plan.repeats, plan.judge_calls) <= target * 1.10
    assert hits >= 90
    unreachable = plan_repeats(true, 0.005, records=n)
    assert not unreachable.reachable
    assert unreachable.records_needed is not None
    assert expected_se(true, unreachable.records_needed, 100, 20) <= 0.005 + 1e-12
