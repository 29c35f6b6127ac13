"""Latency metrics: the mean (decomposable) and percentiles (not decomposable).

Records without a latency are left out of these metrics (``n`` says how many had one).
Percentiles use numpy's default ("linear") definition; under resampling they are computed from
per-record counts on a sort made once, so a bootstrap resample costs no sort (and, where latencies
repeat, counts per run of equal values: one weighted bincount and a cumsum over the runs).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from .._constraints import Range
from ..records import FieldSpec, Table
from ._policy import ZeroDivision
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import register_metric
from .scores import PresentMean

__all__ = ["LatencyMean", "LatencyPercentile", "LatencyStatistic"]


class LatencyStatistic(Statistic):
    """Per record ``[latency, 1]``, or ``[0, 0]`` without a latency (``raw``: the latency/NaN)."""

    def __init__(self, field: str, raw: bool = False):
        self.field = field
        self.raw = raw

    @property
    def key(self) -> Hashable:
        return ("latency", self.field, self.raw)

    def fields(self) -> list[FieldSpec]:
        return [FieldSpec(self.field, "number", required=False, minimum=0.0)]

    def column_names(self, width: int) -> list[str]:
        return [self.field] if self.raw else [self.field, "has latency"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        values = np.asarray(table.column(self.field), dtype=np.float64)
        if self.raw:
            return StatBlock(width=1, rows=values[:, None], decomposable=False)
        present = ~np.isnan(values)
        rows = np.stack([np.where(present, values, 0.0), present.astype(np.float64)], axis=1)
        return StatBlock(width=2, rows=rows)


@register_metric("avg_latency_sec")
@dataclass(eq=False)
class LatencyMean(PresentMean):
    """Mean latency in seconds over the records that report one."""

    definition = "mean of latency_sec over the records that have one."
    higher_is_better = False

    latency: str = "latency_sec"
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.field = self.latency

    def statistic(self) -> Statistic:
        return LatencyStatistic(self.field)


@dataclass(eq=False)
class LatencyPercentile(Metric):
    """The q-th percentile of latency (numpy's linear interpolation)."""

    decomposable = False
    per_record = False
    higher_is_better = False

    latency: str = "latency_sec"
    q: Annotated[float, Range(0, 100)] = 95.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.field = self.latency
        self.q = float(self.q)

    def statistic(self) -> Statistic:
        return LatencyStatistic(self.field, raw=True)

    def _prepare(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Indices of the records with a latency, sorted by it, and the sorted values."""
        return _SORTS.get(rows)

    def _cumulative(
        self, rows: np.ndarray, weights: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The sorted values and the cumulative counts of the expanded sample they stand for:
        each record once, or with a resample's ``weights`` (then, where latencies repeat, per
        run of equal values: the same expanded sample, hence the same percentiles)."""
        _, sorted_values = self._prepare(rows)
        if weights is None:
            return sorted_values, np.arange(1, sorted_values.shape[0] + 1, dtype=np.float64)
        return _CUMULATIVE.get(rows, weights)

    def _at(self, sorted_values: np.ndarray, cumulative: np.ndarray, position: float) -> float:
        """Value at 0-based ``position`` of the expanded sorted sample (``cumulative`` counts)."""
        lo = math.floor(position)
        frac = position - lo
        i = int(np.searchsorted(cumulative, lo, side="right"))
        a = float(sorted_values[i])
        if frac == 0.0:
            return a
        j = int(np.searchsorted(cumulative, lo + 1, side="right"))
        b = float(sorted_values[j])
        return _lerp(a, b, frac)

    def finalize_rows(self, rows: np.ndarray, weights: np.ndarray | None = None) -> float:
        sorted_values, cumulative = self._cumulative(rows, weights)
        m = float(cumulative[-1]) if cumulative.size else 0.0
        if m == 0:
            return math.nan
        return self._at(sorted_values, cumulative, self.q / 100.0 * (m - 1))

    def count_rows(self, rows: np.ndarray) -> int:
        return int(np.count_nonzero(~np.isnan(rows[:, 0])))

    def undefined_rows_reason(self, rows: np.ndarray) -> str:
        return f"no record has {self.field}"

    def jackknife_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Leaving out one record changes the percentile in at most three ways (closed form)."""
        _, a = self._prepare(rows)
        m = a.shape[0]
        n = rows.shape[0]
        full = self.finalize_rows(rows)
        values: list[float] = []
        counts: list[float] = []
        if n - m:
            values.append(full)
            counts.append(float(n - m))
        if m <= 1:
            values.append(math.nan)
            counts.append(float(m))
            return np.asarray(values), np.asarray(counts)
        h = self.q / 100.0 * (m - 2)
        lo = math.floor(h)
        frac = h - lo

        def without(r: int) -> float:
            def at(j: int) -> float:
                return float(a[j] if j < r else a[j + 1])

            if frac == 0.0:
                return at(lo)
            return _lerp(at(lo), at(lo + 1), frac)

        groups = [(0, lo + 1), (lo + 1, 1), (lo + 2, m - lo - 2)]
        for r, c in groups:
            if c > 0 and r < m:
                values.append(without(r))
                counts.append(float(c))
        return np.asarray(values), np.asarray(counts)


class _SortCache:
    """The sort of the latest raw rows, shared by every percentile metric (one argsort a run).
    The rows are held weakly and the sort dropped with them, so a finished run's latencies and
    their order do not stay in memory."""

    def __init__(self) -> None:
        self.rows: weakref.ref[np.ndarray] | None = None
        self.result = _NO_SORT
        self.runs: tuple[np.ndarray, np.ndarray] | None = None

    def get(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.rows is None or self.rows() is not rows:
            values = rows[:, 0]
            finite = np.flatnonzero(~np.isnan(values))
            order = finite[np.argsort(values[finite], kind="stable")]
            self.rows, self.result = weakref.ref(rows, self._drop), (order, values[order])
            self.runs = _runs(rows.shape[0], order, self.result[1])
        return self.result

    def _drop(self, ref: weakref.ref[np.ndarray]) -> None:
        if self.rows is ref:
            self.rows, self.result, self.runs = None, _NO_SORT, None


def _runs(
    n: int, order: np.ndarray, sorted_values: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Where latencies repeat (rounded to the millisecond), the runs of equal values (bit for
    bit) in sorted order: each record's run (records without a latency in an extra last run)
    and each run's value; None where runs would save little (fewer than 4 records a run)."""
    if sorted_values.size == 0:
        return None
    bits = sorted_values.view(np.int64)
    first = np.concatenate(([True], bits[1:] != bits[:-1]))
    starts = np.flatnonzero(first)
    if starts.size * 4 > sorted_values.size:
        return None
    run_of = np.full(n, starts.size, dtype=np.intp)
    run_of[order] = np.cumsum(first) - 1
    return run_of, sorted_values[starts]


_NO_SORT = (np.empty(0, dtype=np.int64), np.empty(0))


class _CumulativeCache:
    """Cumulative resample counts in sorted order for the latest (rows, weights): p50, p95 and
    p99 of one bootstrap resample share one count and one cumsum. Where latencies repeat, the
    counts are per run of equal values (one weighted ``bincount``, a cumsum over the runs:
    the same expanded sample as a gather and a cumsum over every record, in whole numbers, so
    the same percentiles). The rows and weights are held weakly and the cumsum dropped with the
    weights, so a finished resample's arrays do not live on into the next one."""

    def __init__(self) -> None:
        self.rows: weakref.ref[np.ndarray] | None = None
        self.weights: weakref.ref[np.ndarray] | None = None
        self.value = (np.empty(0), np.empty(0))

    def get(self, rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        held = None if self.rows is None else self.rows()
        if held is not rows or self.weights is None or self.weights() is not weights:
            order, sorted_values = _SORTS.get(rows)
            self.rows, self.weights = weakref.ref(rows), weakref.ref(weights, self._drop)
            if _SORTS.runs is None:
                gathered = weights[order]
                self.value = (sorted_values, np.cumsum(gathered, out=gathered))
            else:
                run_of, values = _SORTS.runs
                counts = np.bincount(run_of, weights=weights, minlength=values.size + 1)
                self.value = (values, np.cumsum(counts[:-1]))
        return self.value

    def _drop(self, ref: weakref.ref[np.ndarray]) -> None:
        if self.weights is ref:
            self.weights, self.value = None, (np.empty(0), np.empty(0))


_SORTS = _SortCache()
_CUMULATIVE = _CumulativeCache()


def _lerp(a: float, b: float, t: float) -> float:
    """numpy's interpolation, including its form for t >= 0.5."""
    diff = b - a
    return b - diff * (1.0 - t) if t >= 0.5 else a + diff * t


register_metric(
    "latency_percentile",
    definition="the q-th percentile of latency_sec (numpy's linear interpolation).",
)(LatencyPercentile)
for _q in (50, 95, 99):
    register_metric(
        f"p{_q}_latency_sec",
        definition=f"The {_q}th percentile of latency_sec (numpy linear interpolation).",
        q=float(_q),
    )(LatencyPercentile)
