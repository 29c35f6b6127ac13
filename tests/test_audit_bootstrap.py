"""Bootstrap intervals of prediction-powered values (:mod:`pingce.audits.bootstrap`): against
``ppi_py``'s CLT interval on large samples, the delta method for ``normal``, a brute-force
jackknife for BCa's acceleration over several strata, and the draw's determinism (the seed, the
memory bound). Seeded random data throughout."""

from __future__ import annotations

import numpy as np
import pytest

from pingce.audits import Stratum, corrected_mean, delta_interval
from pingce.audits.bootstrap import (
    bootstrap_interval,
    corrected_interval,
    jackknife_acceleration,
    resampled_values,
)
from pingce.audits.ppi import crossfit_lambda
from pingce.stats import ndtr, ndtri

ppi_py = pytest.importorskip("ppi_py")

Z = 1.959963984540054


def _mean(m: np.ndarray) -> np.ndarray:
    return np.asarray(m[..., 0])


def _f1(m: np.ndarray) -> np.ndarray:
    return np.asarray(2 * m[..., 0] / (2 * m[..., 0] + m[..., 1] + m[..., 2]))


def _judged(rng: np.random.Generator, size: int, continuous: bool) -> tuple[np.ndarray, ...]:
    human = (rng.random(size) < 0.4).astype(float)
    if continuous:
        judge = np.clip(0.7 * human + 0.2 + rng.normal(0.15, 0.3, size), 0, 1)
    else:  # a verdict: true positive rate 0.85, false positive rate 0.1
        judge = np.where(human == 1, rng.random(size) < 0.85, rng.random(size) < 0.1) * 1.0
    return human, judge


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("lam", [None, 1.0])
def test_a_mean_s_bootstrap_interval_is_ppi_py_s_clt_interval_on_large_samples(
    continuous: bool, lam: float | None
) -> None:
    """2,000 labelled of 40,000 records, 2,000 resamples: the percentile and BCa endpoints are
    ``ppi_py.ppi_mean_ci``'s within 0.2 standard errors (Monte Carlo error of a 2.5% quantile
    of 2,000 resamples: about 0.06), and the resampled values' spread is its standard error
    within 5%."""
    rng = np.random.default_rng(1 if continuous else 2)
    human, judge = _judged(rng, 40_000, continuous)
    n = 2_000
    strata = [Stratum(human[:n], judge[:n], judge[n:])]
    low, high = ppi_py.ppi_mean_ci(human[:n], judge[:n], judge[n:], alpha=0.05, lam=lam)
    low, high = float(np.squeeze(low)), float(np.squeeze(high))
    se = (high - low) / (2 * Z)
    for method in ("percentile", "bca"):
        value, ours_low, ours_high = corrected_interval(
            strata, _mean, lam, method=method, resamples=2_000, seed=7
        )
        assert value == pytest.approx((low + high) / 2, abs=1e-9)
        assert abs(ours_low - low) < 0.2 * se, (method, ours_low, low, se)
        assert abs(ours_high - high) < 0.2 * se, (method, ours_high, high, se)
    theta = resampled_values(strata, _mean, lam, resamples=2_000, seed=7)
    assert float(theta.std(ddof=1)) == pytest.approx(se, rel=0.05)


def test_normal_is_the_delta_method_and_ppi_py() -> None:
    rng = np.random.default_rng(3)
    human, judge = _judged(rng, 5_000, True)
    strata = [Stratum(human[:300], judge[:300], judge[300:])]
    got = corrected_interval(strata, _mean, None, method="normal")
    want = delta_interval(lambda m: float(m[0]), corrected_mean(strata, None))
    assert got == want
    low, high = ppi_py.ppi_mean_ci(human[:300], judge[:300], judge[300:], alpha=0.05)
    assert got[1] == pytest.approx(float(np.squeeze(low)), abs=1e-9)
    assert got[2] == pytest.approx(float(np.squeeze(high)), abs=1e-9)


def _rows(rng: np.random.Generator, size: int, continuous: bool) -> tuple[np.ndarray, np.ndarray]:
    """F1 rows [tp, fp, fn] with the human's match and the judge's (binary verdicts or, with
    ``continuous``, a similarity in place of the match)."""
    gold = rng.random(size) < 0.4
    pred = np.where(gold, rng.random(size) < 0.8, rng.random(size) < 0.15)
    right = pred & gold
    says = np.where(rng.random(size) < 0.9, right, ~right) & pred
    match = rng.beta(2 + 5 * says, 2 + 5 * ~says) if continuous else says * 1.0
    human = np.stack([right, pred & ~right, gold & ~right], axis=1) * 1.0
    judge = np.stack([match, pred - match, gold * (1 - match)], axis=1)
    return human, judge


def _strata(rng: np.random.Generator, continuous: bool) -> list[Stratum]:
    out = []
    for size, n in ((3_000, 60), (800, 90), (40, 40)):  # the last: every record labelled
        human, judge = _rows(rng, size, continuous)
        out.append(Stratum(human[:n], judge[:n], judge[n:]))
    return out


@pytest.mark.parametrize("continuous", [True, False])
@pytest.mark.parametrize("lam", [None, 0.6])
def test_chunks_of_any_size_give_the_same_bits(continuous: bool, lam: float | None) -> None:
    """The memory bound only changes how many resamples are drawn at once (the index draw of
    continuous rows and the Multinomial counts of binary ones alike) and how many leave-one-out
    values are computed at once."""
    strata = _strata(np.random.default_rng(4), continuous)
    whole = resampled_values(strata, _f1, lam, resamples=301, seed=[5, 6])
    for memory in (1, 5_000, 300_000):
        chunked = resampled_values(strata, _f1, lam, resamples=301, seed=[5, 6], memory=memory)
        assert np.array_equal(whole, chunked)
        assert jackknife_acceleration(strata, _f1, lam, memory=memory) == jackknife_acceleration(
            strata, _f1, lam
        )


def test_the_same_seed_gives_the_same_interval_and_another_seed_another() -> None:
    strata = _strata(np.random.default_rng(8), False)
    first = corrected_interval(strata, _f1, resamples=500, seed=11)
    assert corrected_interval(strata, _f1, resamples=500, seed=11) == first
    other = corrected_interval(strata, _f1, resamples=500, seed=12)
    assert other[0] == first[0] and other[1:] != first[1:]


@pytest.mark.parametrize("lam", [None, 0.5, "cross"])
def test_bca_s_acceleration_is_the_jackknife_over_every_part_of_every_stratum(
    lam: float | str | None,
) -> None:
    """Davison and Hinkley's several-sample acceleration from leave-one-out values computed
    by brute force (each row dropped, ``corrected_mean`` again, the strata's shares kept; a
    cross-fitted λ, one a labelled row, dropped with its row)."""
    rng = np.random.default_rng(9)
    strata = []
    for size, n in ((70, 25), (45, 15)):
        human, judge = _rows(rng, size, True)
        strata.append(Stratum(human[:n], judge[:n], judge[n:]))
    rows = crossfit_lambda(strata, lambda m: float(_f1(m))) if lam == "cross" else None
    total = sum(s.size for s in strata)
    third = second = 0.0
    for h, stratum in enumerate(strata):
        for part in ("human", "unlabelled"):
            k = stratum.n if part == "human" else stratum.unlabelled.shape[0]
            values = []
            for i in range(k):
                keep = np.arange(k) != i
                if part == "human":
                    less = Stratum(stratum.human[keep], stratum.judge[keep], stratum.unlabelled)
                else:
                    less = Stratum(stratum.human, stratum.judge, stratum.unlabelled[keep])
                mean = sum(
                    s.size
                    / total
                    * corrected_mean(
                        [less if g == h else s],
                        lam
                        if rows is None
                        else [rows[g][keep] if g == h and part == "human" else rows[g]],
                    ).mean
                    for g, s in enumerate(strata)
                )
                values.append(float(_f1(np.asarray(mean))))
            jack = np.array(values)
            influence = (k - 1) * (jack.mean() - jack)
            third += float((influence**3).sum()) / k**3
            second += float((influence**2).sum()) / k**2
    want = third / (6 * second**1.5)
    got = jackknife_acceleration(strata, _f1, lam if rows is None else rows)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    if rows is not None:  # the resamples centre on the whole sample's value
        theta = resampled_values(strata, _f1, rows, resamples=2_000)
        value = float(_f1(corrected_mean(strata, rows).mean))
        assert abs(float(np.median(theta)) - value) < 0.2 * float(theta.std())


def test_bca_on_a_skewed_ratio_corrects_the_percentile_interval_for_bias_and_skew() -> None:
    """A ratio of means whose denominator is a rare event (rows [a, b], value a / b, 50 of
    4,000 records labelled): its resampled values lie mostly above the estimate (the ratio's
    upward bias: BCa's ``z0 < 0``) with a long right tail (a positive jackknife acceleration).
    BCa's ends are the same resamples' quantiles at the levels its formula gives from those two
    (not the percentile interval's 2.5% and 97.5%), the bias pulling both ends down."""
    rng = np.random.default_rng(10)
    size, n = 4_000, 50
    b = (rng.random(size) < 0.2) * 1.0
    a = rng.exponential(1.0, size) * 0.2
    human = np.stack([a, b], axis=1)
    scaled = a * rng.uniform(0.8, 1.2, size)
    judge = np.stack([scaled, np.where(rng.random(size) < 0.9, b, 1 - b)], axis=1)
    strata = [Stratum(human[:n], judge[:n], judge[n:])]

    def ratio(m: np.ndarray) -> np.ndarray:
        return np.asarray(m[..., 0] / m[..., 1])

    value, percentile = bootstrap_interval(
        strata, ratio, method="percentile", resamples=4_000, seed=1
    )
    _, bca = bootstrap_interval(strata, ratio, method="bca", resamples=4_000, seed=1)
    theta = resampled_values(strata, ratio, resamples=4_000, seed=1)
    assert np.isfinite(theta).all()
    z0 = ndtri(float(np.mean(theta < value)))
    acceleration = jackknife_acceleration(strata, ratio)
    assert z0 < -0.1 and acceleration > 0.01
    assert percentile.low == pytest.approx(float(np.quantile(theta, 0.025)), rel=1e-12)
    assert bca.low is not None and bca.high is not None
    for end, z, other in ((bca.low, -Z, percentile.low), (bca.high, Z, percentile.high)):
        level = ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))
        assert abs(level - ndtr(z)) > 0.005
        assert end == pytest.approx(float(np.quantile(theta, level)), rel=1e-9)
        assert other is not None and end < other * 0.99


def test_an_undefined_value_has_no_interval_and_finalize_must_take_rows() -> None:
    strata = [Stratum(np.zeros((20, 3)), np.zeros((20, 3)), np.zeros((100, 3)))]
    value, low, high = corrected_interval(strata, _f1, resamples=50)
    assert np.isnan(value) and np.isnan(low) and np.isnan(high)
    rng = np.random.default_rng(0)
    human, judge = _rows(rng, 200, False)
    strata = [Stratum(human[:50], judge[:50], judge[50:])]
    with pytest.raises(ValueError, match=r"map \(k, d\) rows to k values"):
        corrected_interval(strata, lambda m: np.float64(m.sum()), resamples=50)
