"""Latency metrics against numpy: mean, percentiles (numpy's default linear definition),
weighted percentiles (= percentiles of the explicitly repeated sample), jackknife values, and
input validation of latency_sec."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import pingce
from pingce.errors import InputError, SuiteError
from pingce.metrics import create_metric
from pingce.metrics.timing import LatencyPercentile
from pingce.suites.spec import SuiteSpec

QS = [0.0, 1.0, 37.5, 50.0, 95.0, 99.0, 100.0]

SPEC = SuiteSpec(
    name="timing-test",
    inputs={"latency": "latency_sec"},
    metrics={
        "avg_latency_sec": {},
        "p50_latency_sec": {},
        "p95_latency_sec": {},
        "p99_latency_sec": {},
        **{f"q{q:g}": {"metric": "latency_percentile", "q": q} for q in QS},
    },
)
NAMED = {"p50_latency_sec": 50.0, "p95_latency_sec": 95.0, "p99_latency_sec": 99.0}


def records_from(latency: np.ndarray) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i, value in enumerate(latency):
        record: dict[str, object] = {"id": f"r{i}"}
        if not math.isnan(value):
            record["latency_sec"] = float(value)
        out.append(record)
    return out


def random_latency(seed: int, n: int, missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = rng.lognormal(0.3, 0.9, size=n)
    values[rng.random(n) < 0.15] = 1.5  # ties
    values[: n // 10] = np.round(values[: n // 10], 1)
    values[rng.random(n) < missing] = np.nan
    return values


# --------------------------------------------------------------------------------------------
# Corpus values vs numpy


@pytest.mark.parametrize(("seed", "n", "missing"), [(1, 200, 0.3), (2, 57, 0.0), (3, 31, 0.8)])
def test_latency_metrics_match_numpy(seed: int, n: int, missing: float) -> None:
    latency = random_latency(seed, n, missing)
    present = latency[~np.isnan(latency)]
    assert present.size > 0
    result = pingce.evaluate(SPEC, records_from(latency), bootstrap=0)

    avg = result.metrics["avg_latency_sec"]
    assert avg.value == pytest.approx(float(np.mean(present)), rel=1e-12)
    assert avg.n == present.size
    assert avg.undefined_reason is None
    for name, q in [*NAMED.items(), *((f"q{q:g}", q) for q in QS)]:
        got = result.metrics[name]
        expected = float(np.percentile(present, q))
        assert got.value == pytest.approx(expected, rel=1e-12, abs=1e-15), (name, q)
        assert got.n == present.size, name
        assert got.undefined_reason is None
    # The missing values are really excluded (not counted as 0): the mean over all records
    # with 0 for the missing ones differs whenever something is missing.
    if missing:
        assert avg.value != pytest.approx(float(np.nan_to_num(latency).mean()), rel=1e-6)


def test_integer_latencies_and_single_record() -> None:
    result = pingce.evaluate(
        SPEC, [{"id": "a", "latency_sec": 3}, {"id": "b"}, {"id": "c", "latency_sec": None}]
    )
    for name, metric in result.metrics.items():
        assert metric.value == 3.0, name
        assert metric.n == 1, name


def test_all_missing_is_null_with_reason() -> None:
    records = [{"id": f"r{i}", "latency_sec": None} if i % 2 else {"id": f"r{i}"} for i in range(8)]
    result = pingce.evaluate(SPEC, records, bootstrap=100)
    assert result.n_records == 8
    for name, metric in result.metrics.items():
        assert metric.value is None, name
        assert metric.n == 0, name
        assert metric.undefined_reason is not None and "latency_sec" in metric.undefined_reason
        assert metric.ci_low is None and metric.ci_high is None
    dumped = json.loads(result.model_dump_json())
    assert dumped["metrics"]["p95_latency_sec"]["value"] is None
    assert "latency_sec" in dumped["metrics"]["p95_latency_sec"]["undefined_reason"]


def test_a_mean_that_overflows_is_null_with_reason_never_inf() -> None:
    """Two latencies of 9e307 s add up beyond the largest float: the mean is null with the
    reason (it was inf in the console and null without a reason in results.json), and so is
    its interval; the percentiles, which add nothing up, keep numpy's values."""
    latency = np.array([9e307, 9e307, 1.0])
    result = pingce.evaluate(SPEC, records_from(latency), bootstrap=50)
    mean = result.metrics["avg_latency_sec"]
    assert mean.value is None and mean.n == 3
    assert mean.undefined_reason is not None and "64-bit float" in mean.undefined_reason
    assert mean.ci_low is None and mean.ci_high is None
    with np.errstate(over="ignore"):
        assert math.isinf(float(np.mean(latency)))  # numpy overflows the same way
    for name, q in NAMED.items():
        assert result.metrics[name].value == pytest.approx(float(np.percentile(latency, q)))
    comparison = pingce.compare(SPEC, records_from(latency), records_from(latency), bootstrap=50)
    overflowed = comparison.metrics["avg_latency_sec"]
    assert overflowed.delta is None and overflowed.p_value is None and not overflowed.significant


def test_latency_percentile_rejects_q_outside_0_100() -> None:
    assert create_metric("latency_percentile", q=37.5).q == 37.5
    for q in (-1.0, 100.5):
        with pytest.raises(SuiteError, match="q must be a number within"):
            create_metric("latency_percentile", q=q)


# --------------------------------------------------------------------------------------------
# Weighted percentiles (what a bootstrap resample computes)


@pytest.mark.parametrize("q", QS)
def test_compute_rows_with_integer_weights_equals_repeated_sample(q: float) -> None:
    rng = np.random.default_rng(int(q * 10) + 7)
    metric = create_metric("latency_percentile", q=q)
    assert isinstance(metric, LatencyPercentile)
    checked = 0
    for trial in range(300):
        n = int(rng.integers(1, 25))
        values = np.round(rng.lognormal(0.0, 1.0, size=n), int(rng.integers(0, 3)))  # ties
        values[rng.random(n) < 0.15] = np.nan
        weights = rng.integers(0, 4, size=n).astype(np.float64)
        if trial % 3 == 0:
            weights[rng.random(n) < 0.5] = 0.0  # many zero weights
        rows = values[:, None]
        present = ~np.isnan(values)
        repeated = np.repeat(values[present], weights[present].astype(np.int64))
        got = metric.finalize_rows(rows, weights)
        if repeated.size == 0:
            assert math.isnan(got)
            continue
        expected = float(np.percentile(repeated, q))
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), (values, weights)
        # Unweighted: the percentile of the records that have a latency.
        unweighted = float(np.percentile(values[present], q))
        assert metric.finalize_rows(rows) == pytest.approx(unweighted, rel=1e-12, abs=1e-15)
        checked += 1
    assert checked > 200


def test_compute_rows_weights_are_record_counts_not_positions() -> None:
    """Weights follow records even when the latencies are not in sorted order."""
    metric = create_metric("latency_percentile", q=50.0)
    rows = np.array([[5.0], [1.0], [np.nan], [3.0]])
    weights = np.array([3.0, 1.0, 7.0, 0.0])
    assert metric.finalize_rows(rows, weights) == float(np.percentile([5.0, 5.0, 5.0, 1.0], 50))
    assert metric.finalize_rows(rows) == 3.0


# --------------------------------------------------------------------------------------------
# Jackknife closed form vs brute-force leave-one-out


def brute_leave_one_out(values: np.ndarray, q: float) -> np.ndarray:
    out = []
    for i in range(values.size):
        rest = np.delete(values, i)
        rest = rest[~np.isnan(rest)]
        out.append(float(np.percentile(rest, q)) if rest.size else math.nan)
    return np.sort(np.asarray(out))


def expand(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.float64)
    assert np.all(counts >= 0) and np.all(counts == np.round(counts))
    return np.sort(np.repeat(np.asarray(values, dtype=np.float64), counts.astype(np.int64)))


@pytest.mark.parametrize("q", QS)
def test_jackknife_rows_equals_brute_force_leave_one_out(q: float) -> None:
    rng = np.random.default_rng(1000 + int(q * 10))
    metric = create_metric("latency_percentile", q=q)
    cases = [
        np.array([np.nan, np.nan]),  # no latency at all
        np.array([2.0]),  # one record
        np.array([2.0, np.nan, np.nan]),  # one latency among missing ones
        np.array([4.0, 1.0]),
        np.array([1.0, 1.0, 1.0, 2.0]),
    ]
    for _ in range(150):
        n = int(rng.integers(1, 30))
        values = np.round(rng.gamma(2.0, 1.0, size=n), int(rng.integers(0, 3)))
        values[rng.random(n) < rng.random() * 0.5] = np.nan
        cases.append(values)
    for values in cases:
        got_values, got_counts = metric.jackknife_rows(values[:, None].copy())
        got = expand(got_values, got_counts)
        expected = brute_leave_one_out(values, q)
        assert got.shape == expected.shape, values
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15, err_msg=str(values))


# --------------------------------------------------------------------------------------------
# Invalid latencies are input errors naming the line and the field


@pytest.mark.parametrize(
    ("bad", "message"),
    [(-0.5, "expected a number >= 0"), ("1.2", "expected a number"), (True, "expected a number")],
)
def test_bad_latency_in_dict_records(bad: object, message: str) -> None:
    records: list[dict[str, object]] = [
        {"id": "a", "latency_sec": 1.0},
        {"id": "b"},
        {"id": "c", "latency_sec": bad},
        {"id": "d", "latency_sec": 2.0},
    ]
    with pytest.raises(InputError) as info:
        pingce.evaluate(SPEC, records, bootstrap=0)
    err = info.value
    assert err.line == 3
    assert err.field == "latency_sec"
    text = str(err)
    assert ":3" in text and "latency_sec" in text and message in text, text


@pytest.mark.parametrize(("bad", "message"), [(-2, "expected a number >= 0"), ("fast", "number")])
def test_bad_latency_in_jsonl_file(tmp_path: Path, bad: object, message: str) -> None:
    lines = [
        {"id": "x1", "gold_level": "高", "pred_level": "高", "latency_sec": 1.5},
        {"id": "x2", "gold_level": "中", "pred_level": "低", "latency_sec": 0.0},
        {"id": "x3", "gold_level": "低", "pred_level": "低"},
        {"id": "x4", "gold_level": "低", "pred_level": "中", "latency_sec": bad},
        {"id": "x5", "gold_level": "高", "pred_level": "高", "latency_sec": 2.0},
    ]
    path = tmp_path / "records.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8"
    )
    with pytest.raises(InputError) as info:
        pingce.evaluate("contract-risk", path, bootstrap=0)
    err = info.value
    assert err.line == 4 and err.field == "latency_sec"
    text = str(err)
    assert f"{path}:4" in text and "'latency_sec'" in text and message in text, text
    # Without the bad record the file loads, and 0.0 is a valid latency.
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines[:3]), encoding="utf-8"
    )
    result = pingce.evaluate("contract-risk", path, bootstrap=0)
    assert result.metrics["avg_latency_sec"].value == pytest.approx(0.75)
    assert result.metrics["avg_latency_sec"].n == 2


def test_bad_latency_in_csv_file(tmp_path: Path) -> None:
    path = tmp_path / "records.csv"
    path.write_text(
        "id,gold_level,pred_level,latency_sec\na,高,高,1.0\nb,中,中,\nc,低,低,slow\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        pingce.evaluate("contract-risk", path, bootstrap=0)
    assert info.value.line == 4 and info.value.field == "latency_sec"
    assert f"{path}:4" in str(info.value) and "slow" in str(info.value)
