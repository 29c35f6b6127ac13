"""The Poisson bootstrap (``--bootstrap-method poisson``): each record weighs Poisson(1) in each
resample, from a counter-based generator keyed on the seed, the record and the resample.

Oracles: scipy's Poisson distribution and chi-square test for the weights, hashlib for the
keys, statsmodels' normal interval of a proportion and the multinomial bootstrap for the
intervals (within Monte Carlo error on 100,000 records)."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import proportion_confint

import pingce
from pingce.metrics.protocol import StatBlock
from pingce.stats import poisson_counts, record_keys

from .cli_run import run_pingce

LEVELS = ["高", "中", "低"]


def _keys(n: int, prefix: str = "id r") -> np.ndarray:
    return record_keys(f"{prefix}{i}" for i in range(n))


def test_record_keys_are_the_first_8_bytes_of_blake2b() -> None:
    names = ["id cr-001", "line 7", "unit 对话-1", ""]
    expected = [
        int.from_bytes(hashlib.blake2b(n.encode("utf-8"), digest_size=8).digest(), "little")
        for n in names
    ]
    assert record_keys(names).tolist() == expected


def test_weights_follow_poisson_one() -> None:
    weights = np.concatenate(list(poisson_counts(_keys(50_000), 4, 3)))
    observed = np.bincount(weights.astype(np.int64))
    cells = 6  # 0..5 and a last cell for 6 and more
    counts = np.append(observed[:cells], observed[cells:].sum())
    pmf = scipy_stats.poisson.pmf(np.arange(cells), 1.0)
    expected = np.append(pmf, 1.0 - pmf.sum()) * weights.size
    assert scipy_stats.chisquare(counts, expected).pvalue > 1e-3
    assert abs(weights.mean() - 1.0) < 4 * np.sqrt(1.0 / weights.size)
    assert abs(weights.var() - 1.0) < 0.02


def test_weights_are_uncorrelated_across_records_and_resamples() -> None:
    n = 40_000
    matrix = np.array(list(poisson_counts(_keys(n), 20, 0)))
    corr = np.corrcoef(matrix)[np.triu_indices(20, 1)]
    z = corr * np.sqrt(n)  # each about N(0, 1) when independent
    assert abs(z.mean()) < 0.5 and 0.7 < z.std() < 1.3 and np.abs(z).max() < 4.5
    neighbours = np.corrcoef(matrix[:, :-1].ravel(), matrix[:, 1:].ravel())[0, 1]
    assert abs(neighbours) < 4 / np.sqrt(matrix.size)


def test_a_weight_depends_on_its_key_the_seed_and_the_resample_only() -> None:
    keys = _keys(5_000)
    whole = np.array(list(poisson_counts(keys, 6, 11)))
    order = np.random.default_rng(0).permutation(keys.size)[:1_234]
    part = np.array(list(poisson_counts(keys[order], 6, 11)))
    np.testing.assert_array_equal(part, whole[:, order])
    other_seed = np.array(list(poisson_counts(keys, 6, 12)))
    assert (other_seed != whole).mean() > 0.5
    assert (whole[0] != whole[1]).mean() > 0.5  # resamples differ


@pytest.mark.parametrize("shards", [1, 3, 17])
def test_resampled_sums_are_the_same_for_any_number_of_shards(shards: int) -> None:
    """Sums computed shard by shard, each shard with its own records' keys, add up to the sums
    over the whole data: counts exactly, sums of floats to rounding."""
    rng = np.random.default_rng(5)
    n = 20_011
    keys = _keys(n)
    codes = rng.integers(0, 9, n)
    rows = rng.normal(size=(n, 3))
    one_hot = StatBlock(width=9, codes=codes)
    dense = StatBlock(width=3, rows=rows)
    whole = [
        (one_hot.weighted_total(w), dense.weighted_total(w)) for w in poisson_counts(keys, 30, 2)
    ]
    bounds = np.linspace(0, n, shards + 1).astype(int)
    merged_counts = np.zeros((30, 9))
    merged_rows = np.zeros((30, 3))
    for start, stop in itertools.pairwise(bounds):
        part_hot = StatBlock(width=9, codes=codes[start:stop])
        part_dense = StatBlock(width=3, rows=rows[start:stop])
        for b, w in enumerate(poisson_counts(keys[start:stop], 30, 2)):
            merged_counts[b] += part_hot.weighted_total(w)
            merged_rows[b] += part_dense.weighted_total(w)
    np.testing.assert_array_equal(merged_counts, np.array([c for c, _ in whole]))
    np.testing.assert_allclose(merged_rows, np.array([r for _, r in whole]), rtol=0, atol=1e-9)


def _risk_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n)
    right = rng.random(n) < 0.8
    pred = np.where(right, gold, (gold + rng.integers(1, 3, n)) % 3)
    return [
        {"id": f"r{i}", "gold_level": LEVELS[g], "pred_level": LEVELS[p], "latency_sec": 1.0}
        for i, (g, p) in enumerate(zip(gold.tolist(), pred.tolist(), strict=True))
    ]


def test_intervals_agree_with_the_multinomial_bootstrap_and_statsmodels() -> None:
    """On 100,000 records the interval ends of both bootstraps differ by Monte Carlo error
    only: with 2,000 resamples an end's standard error is about 0.06 of the estimate's
    standard deviation (sd), so two independent ends within 0.5 sd is ~6 standard errors.
    Accuracy's percentile ends are also statsmodels' normal interval within that error."""
    records = _risk_records(100_000)
    options: dict[str, Any] = {"bootstrap": 2000, "seed": 1}
    poisson = pingce.evaluate("contract-risk", records, bootstrap_method="poisson", **options)
    multinomial = pingce.evaluate("contract-risk", records, **options)
    assert poisson.signature.bootstrap_method == "poisson"
    assert multinomial.signature.bootstrap_method == "multinomial"
    n = len(records)
    for name in ("accuracy", "macro_f1", "weighted_accuracy", "qwk", "f1"):
        a, b = poisson.metrics[name], multinomial.metrics[name]
        assert a.value == b.value
        assert a.ci_low is not None and a.ci_high is not None
        assert b.ci_low is not None and b.ci_high is not None
        sd = (b.ci_high - b.ci_low) / (2 * 1.96)
        assert abs(a.ci_low - b.ci_low) < 0.5 * sd, name
        assert abs(a.ci_high - b.ci_high) < 0.5 * sd, name
    accuracy = poisson.metrics["accuracy"]
    right = round(accuracy.value * n)  # type: ignore[operator]
    low, high = proportion_confint(right, n, alpha=0.05, method="normal")
    sd = (high - low) / (2 * 1.96)
    assert abs(accuracy.ci_low - low) < 0.5 * sd  # type: ignore[operator]
    assert abs(accuracy.ci_high - high) < 0.5 * sd  # type: ignore[operator]


def test_a_slice_of_every_record_has_the_whole_runs_interval() -> None:
    """A record weighs the same in a slice as in the whole run: a slice that holds every record
    gets exactly the whole run's interval (the multinomial bootstrap draws slices anew)."""
    records = _risk_records(3_000)
    for r in records:
        r["batch"] = "all"
    result = pingce.evaluate(
        "contract-risk", records, bootstrap=300, bootstrap_method="poisson", slices=["batch"]
    )
    sliced = result.slices["batch=all"].metrics
    for name, whole in result.metrics.items():
        if whole.ci_low is None:
            continue
        assert (sliced[name].ci_low, sliced[name].ci_high) == (whole.ci_low, whole.ci_high)


def test_dialogues_resample_whole_with_one_key_each(tmp_path: Path) -> None:
    """In a unit suite every turn of a dialogue carries its dialogue's key, so a dialogue weighs
    as a whole; the intervals agree with the multinomial dialogue bootstrap within Monte
    Carlo error."""
    from pingce.engine.groups import bootstrap_keys
    from pingce.records import Table

    rng = np.random.default_rng(3)
    lines = []
    for d in range(3_000):
        for t in range(int(rng.integers(2, 6))):
            right = rng.random() < 0.5 + 0.1 * t
            lines.append(
                {
                    "dialogue_id": f"d{d}",
                    "turn": t + 1,
                    "status": "DEFINITIVE" if t else "INQUIRY_ONLY",
                    "gt_diagnosis": "风寒表实证",
                    "pred_diagnosis": "风寒表实证" if right else "风热犯表证",
                    "confidence": 0.5,
                }
            )
    data = tmp_path / "dialogues.jsonl"
    data.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    ids = [x["dialogue_id"] for x in lines]
    table = Table("x", [None] * len(ids), np.arange(1, len(ids) + 1), {"dialogue_id": ids})
    keys = bootstrap_keys(table, "dialogue_id")
    np.testing.assert_array_equal(keys, record_keys("unit " + i for i in ids))
    records = bootstrap_keys(table, None)  # without a unit: the id, else the line
    np.testing.assert_array_equal(records, record_keys(f"line {k}" for k in range(1, len(ids) + 1)))
    poisson = pingce.evaluate("tcm-dialogue", data, bootstrap=2000, bootstrap_method="poisson")
    multinomial = pingce.evaluate("tcm-dialogue", data, bootstrap=2000)
    compared = 0
    for name, a in poisson.metrics.items():
        b = multinomial.metrics[name]
        if a.ci_low is None or b.ci_low is None or b.ci_high is None or a.ci_high is None:
            continue
        if b.ci_high == b.ci_low:
            continue
        sd = (b.ci_high - b.ci_low) / (2 * 1.96)
        assert abs(a.ci_low - b.ci_low) < 0.5 * sd, name
        assert abs(a.ci_high - b.ci_high) < 0.5 * sd, name
        compared += 1
    assert compared >= 3


def test_the_command_line_option(tmp_path: Path) -> None:
    done = run_pingce(
        "run",
        "contract-risk",
        "--data",
        "examples/contract_risk/records.jsonl",
        "--bootstrap-method",
        "poisson",
        "--out",
        str(tmp_path / "o"),
        "--no-store",
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    assert "CI (bca, poisson)" in done.stdout
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["signature"]["bootstrap_method"] == "poisson"
    assert "Poisson bootstrap" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    bad = run_pingce("run", "contract-risk", "--data", "x.jsonl", "--bootstrap-method", "gamma")
    assert bad.returncode == 2
    assert "--bootstrap-method" in bad.stderr and "gamma" in bad.stderr


def test_integer_steps_equal_the_inverse_distribution_function_on_floats() -> None:
    """The weights come from integer comparisons: on random points they are the inverse CDF of
    scipy's Poisson(1) at u = h / 2**53, and at (and beside) every step they are exactly the
    float comparison u >= P(X <= k) against the table they were made from."""
    from pingce.stats import _POISSON_CDF, _POISSON_STEPS

    rng = np.random.default_rng(9)
    h = rng.integers(0, 2**53, 200_000, dtype=np.uint64)
    u = h.astype(np.float64) * 2.0**-53
    got = np.searchsorted(_POISSON_STEPS, h, side="right")
    np.testing.assert_array_equal(got, scipy_stats.poisson.ppf(u, 1.0).astype(np.int64))
    steps = _POISSON_STEPS[:12].astype(np.int64)
    edges = (steps[:, None] + np.array([-1, 0, 1])).ravel()
    edges = edges[edges < 2**53].astype(np.uint64)
    on_floats = np.searchsorted(_POISSON_CDF, edges.astype(np.float64) * 2.0**-53, side="right")
    np.testing.assert_array_equal(np.searchsorted(_POISSON_STEPS, edges, side="right"), on_floats)


def test_paired_intervals_agree_with_the_multinomial_paired_bootstrap() -> None:
    """The paired Poisson bootstrap weighs a record alike on both sides: on 50,000 records its
    difference intervals agree with the multinomial paired bootstrap's within Monte Carlo
    error, and a system compared with itself differs by exactly 0."""
    candidate = _risk_records(50_000, seed=0)
    baseline = [dict(r) for r in candidate]
    rng = np.random.default_rng(4)
    for r, change in zip(baseline, rng.random(len(baseline)) < 0.1, strict=True):
        if change:  # the baseline misses about 10 % of records more
            r["pred_level"] = LEVELS[(LEVELS.index(r["gold_level"]) + 1) % 3]
    options: dict[str, Any] = {"bootstrap": 2000, "seed": 3}
    poisson = pingce.compare(
        "contract-risk", candidate, baseline, bootstrap_method="poisson", **options
    )
    multinomial = pingce.compare("contract-risk", candidate, baseline, **options)
    assert poisson.signature.bootstrap_method == "poisson"
    for name in ("accuracy", "macro_f1", "qwk"):
        a, b = poisson.metrics[name], multinomial.metrics[name]
        assert a.delta == b.delta and a.delta is not None and a.delta > 0
        assert None not in (a.ci_low, a.ci_high, b.ci_low, b.ci_high)
        sd = (b.ci_high - b.ci_low) / (2 * 1.96)  # type: ignore[operator]
        assert abs(a.ci_low - b.ci_low) < 0.5 * sd, name  # type: ignore[operator]
        assert abs(a.ci_high - b.ci_high) < 0.5 * sd, name  # type: ignore[operator]
    itself = pingce.compare(
        "contract-risk", candidate, candidate, bootstrap=200, bootstrap_method="poisson"
    )
    for m in itself.metrics.values():
        if m.delta is not None:
            assert m.delta == 0.0 and m.ci_low == 0.0 and m.ci_high == 0.0


def test_the_command_line_offers_the_methods_the_engine_knows() -> None:
    from typing import get_args

    from pingce._defaults import BOOTSTRAP_METHODS
    from pingce.stats import BootstrapMethod

    assert set(get_args(BootstrapMethod)) == set(BOOTSTRAP_METHODS)
    for command in ("run", "compare"):
        shown = run_pingce(command, "--help").stdout
        assert "--bootstrap-method [multinomial|poisson]" in " ".join(shown.split())
