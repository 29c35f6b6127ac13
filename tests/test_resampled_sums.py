"""Resampled sums of statistic blocks (``StatBlock.weighted_total`` with a resample's per-record
counts, as ``pingce.stats`` calls it) against the formulas they replaced: ``np.bincount`` of the
codes gathered at the resample's index, and the BLAS product ``counts @ rows`` (on one BLAS
thread, as the bootstrap runs it); the latency percentiles' cache of cumulative counts, which
holds a resample's counts only weakly; and the dense jackknife in batches and BCa's acceleration
with reused temporaries against one batch and the formula as written before."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest

from pingce import stats
from pingce.metrics import StatBlock
from pingce.metrics.timing import LatencyMean, LatencyPercentile
from pingce.stats import (
    _acceleration,
    _interval,
    _jackknife,
    bootstrap_intervals,
    resample_indices,
)
from pingce.threads import one_blas_thread


def counts_of(index: np.ndarray, n: int) -> np.ndarray:
    """A resample's per-record counts, as the bootstrap makes them."""
    return np.bincount(index, minlength=n).astype(np.float64)


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 20_011])
@pytest.mark.parametrize("width", [1, 4, 9, 25])
def test_one_hot_sums_equal_bincount_of_gathered_codes(n: int, width: int) -> None:
    rng = np.random.default_rng([n, width])
    codes = rng.integers(0, width, size=n).astype(np.int8 if width < 127 else np.int64)
    block = StatBlock(width=width, codes=codes)
    for index in resample_indices(n, 20, [n, width]):
        previous = np.bincount(codes[index], minlength=width).astype(np.float64)
        ours = block.weighted_total(counts_of(index, n))
        assert ours.dtype == np.float64 and ours.shape == (width,)
        np.testing.assert_array_equal(ours, previous)


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 4607, 4608, 100_003])
@pytest.mark.parametrize("width", [1, 2, 5])
def test_dense_sums_equal_single_thread_blas_product(n: int, width: int) -> None:
    """Real-valued rows: exactly the one-thread ``counts @ rows``, on both sides of the size
    from which OpenBLAS threads a product (2304 * 4 elements); whole-number rows: also the
    gathered rows' sum, and the product on any number of threads."""
    rng = np.random.default_rng([n, width, 1])
    real = np.round(rng.lognormal(1.2, 0.35, size=(n, width)), 3)
    whole = rng.integers(0, 50, size=(n, width)).astype(np.float64)
    for index in resample_indices(n, 10, [n, width, 2]):
        counts = counts_of(index, n)
        with one_blas_thread():
            ours = StatBlock(width=width, rows=real).weighted_total(counts)
            expected = counts @ real
        assert ours.dtype == np.float64 and ours.shape == (width,)
        np.testing.assert_array_equal(ours, expected)
        np.testing.assert_allclose(ours, counts @ real, rtol=1e-13, atol=0)
        exact = StatBlock(width=width, rows=whole).weighted_total(counts)
        np.testing.assert_array_equal(exact, counts @ whole)
        np.testing.assert_array_equal(exact, whole[index].sum(axis=0))


def test_one_blas_thread_limits_and_restores() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    with one_blas_thread():
        assert all(t == 1 for t in blas_threads())
        with one_blas_thread():  # nested: still one, and the outer limit survives the inner
            pass
        assert all(t == 1 for t in blas_threads())
    assert blas_threads() == before


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_intervals_equal_those_from_the_previous_sums(method: str) -> None:
    """bootstrap_intervals on a one-hot and a dense block against the interval formulas applied
    to resampled sums made the previous way: gathered codes, and ``counts @ rows`` on one BLAS
    thread (real-valued rows, where ties with the estimate hang on the last bits)."""
    n, resamples, seed = 3000, 400, 11
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 4, size=n).astype(np.int8)
    rows = np.stack([np.round(rng.random(n), 2), rng.integers(1, 3, size=n)], axis=1)
    blocks = {"c": StatBlock(width=4, codes=codes), "d": StatBlock(width=2, rows=rows * 1.0)}

    class Share(LatencyPercentile):
        decomposable = True

        def finalize(self, summed: np.ndarray) -> np.ndarray:
            return np.asarray(summed[..., 0] / summed[..., 1:].sum(axis=-1))

    metrics = {"c": (Share(), "c"), "d": (Share(), "d")}
    values = {"c": float(Share().finalize(blocks["c"].total())), "d": 0.0}
    values["d"] = float(Share().finalize(blocks["d"].total()))
    ours = bootstrap_intervals(
        blocks,
        metrics,
        values,
        resamples=resamples,
        seed=seed,
        method=method,  # type: ignore[arg-type]
        stream="indices",
    )
    summed_c, summed_d = [], []
    for index in resample_indices(n, resamples, seed):
        summed_c.append(np.bincount(codes[index], minlength=4).astype(np.float64))
        with one_blas_thread():
            summed_d.append(counts_of(index, n) @ (rows * 1.0))
    theta = {"c": Share().finalize(np.array(summed_c)), "d": Share().finalize(np.array(summed_d))}
    for name in ("c", "d"):
        metric, block = metrics[name][0], blocks[name]
        reference = _interval(
            values[name],
            theta[name],
            method,
            0.95,
            lambda m=metric, b=block: _jackknife(m, b),  # type: ignore[arg-type]
        )
        assert ours[name] == reference
        if method == "percentile":
            assert ours[name].low == float(np.quantile(theta[name], 0.025))
            assert ours[name].high == float(np.quantile(theta[name], 0.975))


def test_percentile_cache_drops_a_finished_resamples_counts() -> None:
    """The cumulative counts live as long as the counts they came from, and new counts (even at
    a freed array's address) are never answered from an earlier resample's cumsum."""
    n = 2001
    rng = np.random.default_rng(8)
    rows = np.round(rng.lognormal(1.2, 0.35, size=(n, 1)), 3)
    rows[::50] = np.nan
    p95 = LatencyPercentile(q=95.0)
    for index in resample_indices(n, 30, 4):
        counts = counts_of(index, n)
        expected = float(np.percentile(rows[index][~np.isnan(rows[index, 0])], 95))
        assert p95.finalize_rows(rows, counts) == expected
        assert p95.finalize_rows(rows, counts) == expected  # from the cache
        del counts
        gc.collect()
    assert p95.finalize_rows(rows) == float(np.nanpercentile(rows, 95))


def previous_acceleration(values: np.ndarray, counts: np.ndarray) -> float:
    """BCa's acceleration as pingce.stats computed it before it reused its temporaries."""
    keep = ~np.isnan(values)
    values, counts = values[keep], counts[keep]
    n = float(counts.sum())
    if n < 2:
        return math.nan
    mean = float((values * counts).sum() / n)
    u = (n - 1) * (mean - values)
    num = float((counts * u**3).sum()) / n**3
    den = float((counts * u**2).sum()) / n**2
    if den == 0:
        return 0.0
    return float(num / (6.0 * den**1.5))


@pytest.mark.parametrize("seed", range(40))
def test_acceleration_equals_previous_formula_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    values = rng.random(n) * [1.0, 1e-3, 1e6][seed % 3]
    if seed % 4 == 0:
        values[rng.random(n) < 0.1] = np.nan
    counts = rng.integers(1, 5, size=n).astype(np.float64) if seed % 2 else np.ones(n)
    expected = previous_acceleration(values.copy(), counts.copy())
    got = _acceleration(values, counts)
    assert got == expected or (math.isnan(got) and math.isnan(expected))


@pytest.mark.parametrize("n", [1, 6, 7, 8, 13, 14, 15, 100])
def test_dense_jackknife_in_chunks_equals_one_batch(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leave-one-out values of a dense block computed in batches of 7 records (chunk
    boundaries at and around n) equal the single batch ``finalize(total - rows)``."""
    monkeypatch.setattr(stats, "_JACKKNIFE_CHUNK", 7)
    rng = np.random.default_rng(n)
    rows = np.stack([np.round(rng.random(n), 3), rng.integers(0, 2, size=n)], axis=1) * 1.0
    block = StatBlock(width=2, rows=rows)
    metric = LatencyMean()
    values, counts = _jackknife(metric, block)
    expected = metric.finalize(block.total()[None, :] - rows)
    np.testing.assert_array_equal(values, expected)
    np.testing.assert_array_equal(counts, np.ones(n))


def few_row_blocks(n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Dense blocks whose rows take a handful of values (and one that does not): whole numbers,
    dyadic fractions, real values (no short route is exact), a negative zero, a NaN."""
    whole = np.array([[0, 1, 0, 2, 0, 0, 0, 0, 1, 0], [1, 0, 0, 0, 3, 0, 0, 5, 0, 1]], float)
    dyadic = np.array([[0.5, -0.25, 3.0], [1.125, 0.0, -7.5], [2.0**-20, 2.0**40, 1.0]])
    real = np.array([[0.1, 1 / 3], [0.7, 2.0]])
    signed = np.array([[-0.0, 1.0], [0.0, 2.0]])
    nan = np.array([[np.nan, 1.0], [0.0, 1.0]])
    out = {
        name: table[rng.integers(0, table.shape[0], size=n)]
        for name, table in {
            "whole": whole,
            "dyadic": dyadic,
            "real": real,
            "signed": signed,
            "nan": nan,
        }.items()
    }
    out["many"] = np.round(rng.random((n, 3)), 2)
    return out


@pytest.mark.parametrize("n", [2, 7, 1000, 20_011])
def test_short_route_sums_equal_weighted_totals_bit_for_bit(n: int) -> None:
    """block_sums.summer (over distinct rows, or the total weight times a broadcast row) against
    StatBlock.weighted_total, on multinomial and Poisson weights, as the bootstrap calls it."""
    from pingce.block_sums import summer

    rng = np.random.default_rng(n)
    blocks = {
        name: StatBlock(width=r.shape[1], rows=r) for name, r in few_row_blocks(n, rng).items()
    }
    blocks["broadcast"] = StatBlock(width=3, rows=np.broadcast_to(np.array([[2.5, 0, 1]]), (n, 3)))
    blocks["broadcast real"] = StatBlock(width=1, rows=np.broadcast_to(np.array([[0.1]]), (n, 1)))
    summers = {name: summer(block) for name, block in blocks.items()}
    draws = [counts_of(index, n) for index in resample_indices(n, 5, 3)]
    draws += list(stats.poisson_counts(np.arange(n, dtype=np.uint64), 5, 4))
    with one_blas_thread():
        for weights in draws:
            for name, block in blocks.items():
                ours, expected = summers[name](weights), block.weighted_total(weights)
                assert ours.tobytes() == expected.tobytes(), name


def test_short_route_taken_only_where_exact() -> None:
    from pingce.block_sums import distinct_rows, exact_bound, summer

    rng = np.random.default_rng(0)
    rows = few_row_blocks(5000, rng)
    for name in ("whole", "dyadic"):
        block = StatBlock(width=rows[name].shape[1], rows=rows[name])
        assert summer(block) != block.weighted_total
        found = distinct_rows(rows[name])
        assert found is not None and exact_bound(found[1]) is not None
        codes, distinct = found
        np.testing.assert_array_equal(distinct[codes], rows[name])
    real = distinct_rows(rows["real"])
    assert real is not None and (exact_bound(real[1]) or 0) < 1  # no whole weight passes it
    for name in ("signed", "nan"):
        found = distinct_rows(rows[name])
        assert found is not None and exact_bound(found[1]) is None, name
    assert distinct_rows(rows["many"]) is None
    block = StatBlock(width=3, rows=rows["many"])
    assert summer(block) == block.weighted_total  # record by record
    assert exact_bound(np.array([[3.0, 0.5], [1.0, 0.75]])) == pytest.approx(2.0**53 / 3)
    whole = rows["whole"]
    assert distinct_rows(whole, limit=1) is None
    # a weight total beyond the bound: the record-by-record sum, never a rounded short one
    huge = StatBlock(width=2, rows=np.array([[2.0**52, 1.0], [1.0, 1.0]])[rng.integers(0, 2, 100)])
    weights = np.full(100, 3.0)
    assert summer(huge)(weights).tobytes() == huge.weighted_total(weights).tobytes()


@pytest.mark.parametrize("q", [0.0, 37.3, 50.0, 95.0, 99.0, 100.0])
def test_percentiles_over_runs_of_equal_latencies_equal_the_gathered_cumsum(q: float) -> None:
    """Latencies that repeat are counted per run of equal values (a weighted bincount), which
    must give the percentile of the expanded sample bit for bit as the gather and cumsum over
    every record did (a negative zero included), and numpy's value."""
    from pingce.metrics import timing

    n = 20_000
    rng = np.random.default_rng(int(q * 10))
    rows = np.round(rng.lognormal(1.2, 0.35, size=(n, 1)), 2)
    rows[rng.random(n) < 0.02] = np.nan
    rows[:3] = -0.0
    metric = LatencyPercentile(q=q)
    metric.finalize_rows(rows)
    assert timing._SORTS.runs is not None  # the runs path is the one under test
    runs = timing._SORTS.runs
    for index in resample_indices(n, 10, 9):
        counts = counts_of(index, n)
        ours = metric.finalize_rows(rows, counts)
        timing._SORTS.runs = None  # the gather and cumsum over every record, as before
        timing._CUMULATIVE.weights = None
        gathered = metric.finalize_rows(rows, counts)
        timing._SORTS.runs, timing._CUMULATIVE.weights = runs, None
        assert np.float64(ours).tobytes() == np.float64(gathered).tobytes()
        assert ours == float(np.percentile(rows[index][~np.isnan(rows[index, 0]), 0], q))
    distinct = rng.random((n, 1))
    metric.finalize_rows(distinct)
    assert timing._SORTS.runs is None  # nearly all distinct: gathered and summed per record
