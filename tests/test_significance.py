"""Tests of the difference in ``pingce compare``.

Oracles: the paired interval itself (its p-value must agree with it at every level, on many
seeded data sets, for every method), ``scipy.stats.binomtest`` (exact McNemar), sacrebleu's
``_paired_ar_test`` on the same seed and a direct implementation of approximate randomisation
(one swap per record or per dialogue), and ``statsmodels``' ``multipletests(method="holm")``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.stats
from rich.console import Console
from statsmodels.stats.multitest import multipletests

import pingce
from pingce.metrics import StatBlock
from pingce.metrics.protocol import Metric
from pingce.report import print_comparison
from pingce.stats import (
    _Bounds,
    approximate_randomisation,
    binomial_two_sided,
    excludes_zero,
    holm,
    inverted_p_value,
    mcnemar_exact,
    paired_intervals,
    swap_masks,
)
from tests.test_compare import systems

# --- a metric made of two sums (a ratio), to drive stats.py directly ------------------------


class Ratio(Metric):
    """sum(x) / sum(w): with w = 1 per record and x in {0, 1} a proportion of records."""

    def statistic(self) -> Any:
        raise NotImplementedError

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        with np.errstate(all="ignore"):
            return np.asarray(summed[..., 0] / summed[..., 1])

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]


def blocks(x: np.ndarray, w: np.ndarray | None = None) -> dict[object, StatBlock]:
    w = np.ones_like(x) if w is None else w
    return {"k": StatBlock(width=2, rows=np.stack([x, w], axis=1).astype(np.float64))}


def delta_of(c: dict[object, StatBlock], b: dict[object, StatBlock]) -> float:
    m = Ratio()
    return float(m.finalize(c["k"].total()) - m.finalize(b["k"].total()))


def random_pair(seed: int) -> tuple[dict[object, StatBlock], dict[object, StatBlock], float]:
    """Two systems over 8-80 records: a mean of 0/1 values or of skewed floats, with a shift
    from none to large, so that p-values land everywhere in [0, 1]."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 80))
    shift = float(rng.choice([0.0, 0.05, 0.15, 0.3, 0.6]))
    if seed % 2:
        base = rng.random(n) < 0.6
        cand = np.where(rng.random(n) < shift, True, base) & (rng.random(n) > 0.1)
        x, y = cand.astype(np.float64), base.astype(np.float64)
    else:
        y = rng.lognormal(0.0, 1.0, size=n)
        x = y + rng.normal(shift, 0.5, size=n) * rng.lognormal(0.0, 0.7, size=n)
    c, b = blocks(x), blocks(y)
    return c, b, delta_of(c, b)


# --- 1. the paired bootstrap: its p-value inverts its interval --------------------------------


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_interval_and_p_value_never_disagree(method: str, level: float) -> None:
    """On 150 seeded data sets: the interval excludes 0 exactly when p < 1 - level."""
    agree = {True: 0, False: 0}
    for seed in range(150):
        c, b, delta = random_pair(seed)
        out = paired_intervals(
            c,
            b,
            {"r": (Ratio(), "k")},
            {"r": delta},
            resamples=199,
            seed=seed,
            method=method,  # type: ignore[arg-type]
            level=level,
        )["r"]
        assert out.p_value is not None and 0.0 <= out.p_value <= 1.0
        excluded = excludes_zero(out.low, out.high)
        assert excluded == (out.p_value < 1 - level), (seed, out)
        agree[excluded] += 1
    assert min(agree.values()) >= 10, agree  # both outcomes were exercised


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
def test_p_value_is_the_edge_of_the_levels_that_exclude_zero(method: str) -> None:
    """Just above p the interval of the same method excludes 0, just below it does not, at
    every level (not only the one reported)."""
    rng = np.random.default_rng(1)
    for seed in range(40):
        c, _, delta = random_pair(seed)
        theta = np.asarray(rng.normal(delta, 0.1 + abs(delta), size=301))

        def jack(n: int = c["k"].n) -> tuple[np.ndarray, np.ndarray]:
            return np.linspace(-1, 1, n) ** 3, np.ones(n)

        bounds = _Bounds(delta, theta, method, jack)  # type: ignore[arg-type]
        p = inverted_p_value(bounds, 0.95)
        if 0.0 < p < 1.0:
            assert excludes_zero(*bounds(min(1.0, p * (1 + 1e-9) + 1e-15))), seed
            assert not excludes_zero(*bounds(p * (1 - 1e-9))), seed
        for alpha in np.linspace(0.001, 0.999, 37):
            if abs(alpha - p) > 1e-9:
                assert excludes_zero(*bounds(alpha)) == (p < alpha), (seed, alpha, p)


def test_p_value_of_a_system_against_itself_is_one_and_of_a_sweep_is_zero() -> None:
    x = np.r_[np.ones(20), np.zeros(20)]
    same = paired_intervals(
        blocks(x), blocks(x), {"r": (Ratio(), "k")}, {"r": 0.0}, resamples=200, seed=1
    )["r"]
    assert (same.low, same.high, same.p_value) == (0.0, 0.0, 1.0)
    sweep = paired_intervals(
        blocks(np.ones(40)), blocks(np.zeros(40)), {"r": (Ratio(), "k")}, {"r": 1.0},
        resamples=200, seed=1,
    )["r"]  # fmt: skip
    assert sweep.p_value == 0.0 and sweep.note is not None and "every level" in sweep.note


# --- 2. exact McNemar --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(30))
def test_mcnemar_equals_scipy_binomtest(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    x = (rng.random(n) < rng.random()).astype(np.float64)
    y = (rng.random(n) < rng.random()).astype(np.float64)
    got = mcnemar_exact(Ratio(), blocks(x)["k"], blocks(y)["k"])
    assert got is not None
    b = int(np.sum((x == 1) & (y == 0)))
    c = int(np.sum((x == 0) & (y == 1)))
    assert (got.candidate_only, got.baseline_only) == (b, c)
    expected = 1.0 if b + c == 0 else scipy.stats.binomtest(b, b + c).pvalue
    assert got.p_value == pytest.approx(expected, rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 11, 100, 1001, 20000])
def test_binomial_two_sided_equals_scipy_on_every_k(n: int) -> None:
    for k in sorted({0, 1, n // 3, n // 2, max(0, n // 2 - 1)}):
        expected = scipy.stats.binomtest(k, n).pvalue
        assert binomial_two_sided(min(k, n - k), n) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_only_for_proportions_of_the_same_units() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.random(50) < 0.5, rng.random(50) < 0.5
    # not 0/1 per record: no McNemar
    assert mcnemar_exact(Ratio(), blocks(rng.random(50))["k"], blocks(y * 1.0)["k"]) is None
    # a record counted twice: not a proportion of records
    w = np.ones(50)
    w[0] = 2.0
    assert mcnemar_exact(Ratio(), blocks(x * 2.0, w)["k"], blocks(y * 2.0, w)["k"]) is None
    # records counted by one side only (precision over each side's positives): not paired
    wx, wy = (rng.random(50) < 0.7) * 1.0, (rng.random(50) < 0.7) * 1.0
    assert mcnemar_exact(Ratio(), blocks(x * wx, wx)["k"], blocks(y * wy, wy)["k"]) is None
    # the same records uncounted on both sides (recall over gold positives): paired
    got = mcnemar_exact(Ratio(), blocks(x * wx, wx)["k"], blocks(y * wx, wx)["k"])
    assert got is not None
    assert got.candidate_only == int(np.sum(x & ~y & (wx == 1)))


def test_compare_reports_mcnemar_for_accuracy_not_for_macro_f1() -> None:
    candidate, baseline = systems(200, seed=7)
    result = pingce.compare("contract-risk", candidate, baseline, bootstrap=300, seed=2)
    gold = [r["gold_level"] for r in candidate]
    a = np.asarray([r["pred_level"] == g for r, g in zip(candidate, gold, strict=True)])
    b = np.asarray([r["pred_level"] == g for r, g in zip(baseline, gold, strict=True)])
    acc = result.metrics["accuracy"]
    tests = {t.test: t for t in acc.tests}
    assert set(tests) == {"paired-bootstrap-bca", "mcnemar-exact", "approximate-randomisation"}
    assert acc.p_method == "paired-bootstrap-bca" and acc.tests[0].test == acc.p_method
    k, m = int(np.sum(a & ~b)), int(np.sum(~a & b))
    assert (tests["mcnemar-exact"].candidate_only, tests["mcnemar-exact"].baseline_only) == (k, m)
    assert tests["mcnemar-exact"].p_value == pytest.approx(
        scipy.stats.binomtest(k, k + m).pvalue, rel=1e-10
    )
    names = {t.test for t in result.metrics["macro_f1"].tests}
    assert "mcnemar-exact" not in names and "approximate-randomisation" in names


# --- 3. approximate randomisation --------------------------------------------------------------


def reference_ar(x: np.ndarray, y: np.ndarray, trials: int, seed: int) -> float:
    """Approximate randomisation as written in the literature: swap each record's pair of
    statistics with probability 1/2 (the draws of default_rng(seed).integers(2, (R, n), bool)),
    recompute both ratios from the sums, count |delta*| >= |delta|."""
    masks = np.random.default_rng(seed).integers(2, size=(trials, x.shape[0]), dtype=bool)
    delta = abs(x[:, 0].sum() / x[:, 1].sum() - y[:, 0].sum() / y[:, 1].sum())
    hits = 0
    for mask in masks:
        a = np.where(mask[:, None], y, x).sum(axis=0)
        b = np.where(mask[:, None], x, y).sum(axis=0)
        hits += abs(a[0] / a[1] - b[0] / b[1]) >= delta - 1e-12 * delta
    return (1 + hits) / (trials + 1)


@pytest.mark.parametrize("n", [1, 7, 32, 50, 333])
def test_swap_masks_continue_one_stream(n: int) -> None:
    got = np.stack(list(swap_masks(n, 257, 12345)))
    expected = np.random.default_rng(12345).integers(2, size=(257, n), dtype=bool)
    assert np.array_equal(got, expected)


@pytest.mark.parametrize("seed", range(12))
def test_approximate_randomisation_equals_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 120))
    x = np.stack([rng.random(n) < 0.7, rng.integers(1, 3, n)], axis=1).astype(np.float64)
    y = np.stack([rng.random(n) < 0.55, x[:, 1]], axis=1).astype(np.float64)
    c, b = {"k": StatBlock(width=2, rows=x)}, {"k": StatBlock(width=2, rows=y)}
    got = approximate_randomisation(
        c, b, {"r": (Ratio(), "k")}, {"r": delta_of(c, b)}, trials=500, seed=seed
    )["r"]
    assert got == reference_ar(x, y, 500, seed)


@dataclass
class _Score:
    score: float


class _SacreRatio:
    """What sacrebleu's _paired_ar_test asks of a metric, for the ratio of two sums."""

    def __init__(self, stats: np.ndarray) -> None:
        self.stats = stats

    def _extract_corpus_statistics(self, hypotheses: Any, references: Any) -> np.ndarray:
        return self.stats

    def _aggregate_and_compute(self, stats: np.ndarray) -> _Score:
        total = np.asarray(stats).sum(axis=0)
        return _Score(float(total[0] / total[1]))


@pytest.mark.parametrize("seed", range(6))
def test_approximate_randomisation_equals_sacrebleu_on_the_same_seed(seed: int) -> None:
    """sacrebleu's own paired AR, with our statistics: the same draws and p-value (on
    continuous statistics, where sacrebleu's strict ``>`` and our ``>=`` cannot differ)."""
    from sacrebleu.significance import Result, _paired_ar_test

    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 150))
    y = np.stack([rng.lognormal(0, 1, n), rng.integers(1, 4, n)], axis=1).astype(np.float64)
    x = y.copy()
    x[:, 0] += rng.normal(0.15 * seed, 0.6, n)
    c, b = {"k": StatBlock(width=2, rows=x)}, {"k": StatBlock(width=2, rows=y)}
    delta = delta_of(c, b)
    ours = approximate_randomisation(
        c, b, {"r": (Ratio(), "k")}, {"r": delta}, trials=1000, seed=seed
    )["r"]
    base = _SacreRatio(y)._aggregate_and_compute(y).score
    _, theirs = _paired_ar_test(
        {"r": (y, Result(base))},  # type: ignore[dict-item]
        "candidate",
        [""] * n,
        None,
        {"r": _SacreRatio(x)},  # type: ignore[dict-item]
        n_samples=1000,
        seed=seed,
    )
    assert ours == pytest.approx(theirs["r"].p_value, abs=1e-15)


def test_approximate_randomisation_of_identical_systems_is_one() -> None:
    x = blocks((np.arange(30) % 3 == 0) * 1.0)
    got = approximate_randomisation(x, x, {"r": (Ratio(), "k")}, {"r": 0.0}, trials=99, seed=0)
    assert got["r"] == 1.0


def test_approximate_randomisation_is_uniform_under_the_null() -> None:
    """Exchangeable systems: P(p <= a) <= a (the +1 keeps it valid), and not far below."""
    ps = []
    for seed in range(300):
        rng = np.random.default_rng(seed)
        pairs = rng.random((40, 2)) < 0.6
        c, b = blocks(pairs[:, 0] * 1.0), blocks(pairs[:, 1] * 1.0)
        p = approximate_randomisation(
            c, b, {"r": (Ratio(), "k")}, {"r": delta_of(c, b)}, trials=199, seed=seed
        )["r"]
        ps.append(p)
    ps = np.asarray(ps)
    for a in (0.05, 0.1, 0.25, 0.5):
        assert np.mean(ps <= a) <= a + 0.05, a
    assert np.mean(ps <= 0.5) >= 0.3


def test_dialogues_swap_whole_in_approximate_randomisation() -> None:
    rng = np.random.default_rng(8)
    candidate, baseline = [], []
    for d in range(25):
        for t in range(3):
            base = {"dialogue_id": f"d{d:02d}", "turn": t + 1, "gt_is_emergency": True}
            candidate.append(
                {**base, "status": "EMERGENCY_ABORT" if rng.random() < 0.8 else "INQUIRY_ONLY"}
            )
            baseline.append(
                {**base, "status": "EMERGENCY_ABORT" if rng.random() < 0.5 else "INQUIRY_ONLY"}
            )
    result = pingce.compare("tcm-dialogue", candidate, baseline, bootstrap=300, seed=4)
    got = next(
        t.p_value
        for t in result.metrics["funnel_adherence"].tests
        if t.test == "approximate-randomisation"
    )

    def per_dialogue(records: list[dict[str, Any]]) -> np.ndarray:
        out = np.zeros((25, 2))
        for r in records:
            out[int(r["dialogue_id"][1:])] += [r["status"] != "EMERGENCY_ABORT", 1.0]
        return out

    # funnel_adherence counts non-aborts over turns: a ratio of per-dialogue sums
    assert got == reference_ar(per_dialogue(candidate), per_dialogue(baseline), 300, 4)
    # McNemar pairs dialogues only where a dialogue's value is 0 or 1: not here
    assert "mcnemar-exact" not in {t.test for t in result.metrics["funnel_adherence"].tests}


# --- 4. Holm -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_holm_equals_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 30))
    p = rng.random(m) ** rng.uniform(0.5, 4)
    if seed % 3 == 0:
        p[: m // 2] = p[0]  # ties
    expected = multipletests(p, method="holm")[1]
    got = holm({f"m{i}": float(v) for i, v in enumerate(p)})
    assert list(got) == [f"m{i}" for i in range(m)]
    assert np.allclose(list(got.values()), expected, rtol=1e-12, atol=0)


def test_compare_applies_holm_across_its_metrics() -> None:
    candidate, baseline = systems(150, seed=3)
    result = pingce.compare("contract-risk", candidate, baseline, bootstrap=200, seed=5)
    tested = {n: m for n, m in result.metrics.items() if m.p_value is not None}
    expected = multipletests([m.p_value for m in tested.values()], method="holm")[1]
    assert [m.p_holm for m in tested.values()] == pytest.approx(list(expected), rel=1e-12)
    for m in tested.values():
        assert m.significant == (m.p_holm is not None and m.p_holm < 0.05)


# --- 5. in words -------------------------------------------------------------------------------


def test_verdicts_in_words_in_json_and_console() -> None:
    candidate, baseline = systems(400, seed=2)
    for r in candidate:  # a clearly better candidate
        r["pred_level"] = r["gold_level"]
    result = pingce.compare("contract-risk", candidate, baseline, bootstrap=300, seed=1)
    acc = result.metrics["accuracy"]
    assert acc.significant is True and acc.p_holm is not None and acc.p_holm < 0.05
    assert acc.verdict is not None
    assert acc.verdict.startswith("candidate better, p<")
    assert "significant after Holm" in acc.verdict
    same = pingce.compare("contract-risk", baseline, baseline, bootstrap=100, seed=1)
    assert same.metrics["accuracy"].verdict == "no significant difference (p=1)"
    assert same.metrics["accuracy"].significant is False
    console = Console(width=200, record=True, color_system=None, file=sys.stderr)
    print_comparison(result, console)
    text = console.export_text()
    assert "accuracy: candidate better, p<" in text and "significant after Holm" in text
    assert "mcnemar-exact p=" in text
    data = result.model_dump(mode="json")["metrics"]["accuracy"]
    for key in ("p_value", "p_method", "p_holm", "significant", "verdict", "tests"):
        assert key in data


def test_worse_and_not_after_holm_are_said() -> None:
    candidate, baseline = systems(300, seed=4)
    result = pingce.compare("contract-risk", baseline, candidate, bootstrap=300, seed=1)
    for m in result.metrics.values():
        if m.verdict is None or m.p_value is None:
            continue
        assert m.delta is not None
        if m.p_value < 0.05:
            better = (m.delta > 0) == m.higher_is_better
            assert m.verdict.startswith(f"candidate {'better' if better else 'worse'}")
            assert ("not significant after Holm" in m.verdict) == (not m.significant)
        else:
            assert m.verdict.startswith("no significant difference")
    assert any(m.verdict and "worse" in m.verdict for m in result.metrics.values())


# --- 6. slices ---------------------------------------------------------------------------------


def test_compare_by_slice_equals_compare_of_the_slice() -> None:
    candidate, baseline = systems(240, seed=6)
    for i, (c, b) in enumerate(zip(candidate, baseline, strict=True)):
        c["source"] = b["source"] = ["a", "b", "c"][i % 3]
    result = pingce.compare(
        "contract-risk", candidate, baseline, bootstrap=200, seed=3, slice="source"
    )
    assert result.slices is not None and list(result.slices) == [
        "source=a",
        "source=b",
        "source=c",
    ]
    only_b = pingce.compare(
        "contract-risk",
        [r for r in candidate if r["source"] == "b"],
        [r for r in baseline if r["source"] == "b"],
        bootstrap=0,
    )
    sliced = result.slices["source=b"]
    assert sliced.n_records == 80
    for name, m in sliced.metrics.items():
        assert (m.candidate, m.baseline, m.delta) == (
            only_b.metrics[name].candidate,
            only_b.metrics[name].baseline,
            only_b.metrics[name].delta,
        ), name
    flat = [m for sl in result.slices.values() for m in sl.metrics.values() if m.p_value]
    expected = multipletests([m.p_value for m in flat], method="holm")[1]
    assert [m.p_holm for m in flat] == pytest.approx(list(expected), rel=1e-12)


def test_a_slice_field_that_differs_between_sides_is_an_input_error() -> None:
    candidate, baseline = systems(20, seed=6)
    for i, (c, b) in enumerate(zip(candidate, baseline, strict=True)):
        c["source"] = "a"
        b["source"] = "a" if i != 4 else "z"
    with pytest.raises(pingce.InputError) as info:
        pingce.compare("contract-risk", candidate, baseline, bootstrap=0, slice="source")
    assert info.value.field == "source" and info.value.value == "z"
