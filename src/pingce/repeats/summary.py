"""What a run with repeats says beyond its metrics (issue 35): for every metric, how its
per-record values split between the records and the repeats (:func:`.components.decompose`),
with ``--target-se`` the repeats that would reach it (:func:`.components.plan_repeats`); for a
metric of 0/1 values, pass@k and pass^k for k = 1 … K (:func:`.passk.pass_curves`) and its flaky
records.

A record is **flaky** for a 0/1 metric when its repeats disagree (some pass, some fail). Each
such record's pass rate has a Clopper–Pearson interval, and the record is *flagged* when that
interval holds 1/2: its verdict is not settled either way. The intervals are of records chosen
because they disagree, so their level is adjusted for the selection (Benjamini & Yekutieli 2005,
"False discovery rate-adjusted multiple confidence intervals for selected parameters"): with
``R`` of ``N`` records selected each interval has level ``1 - R q / N``, which keeps the
expected share of flagged records whose interval misses its pass rate (the false coverage rate)
at most ``q`` = 10%. A record passing 19 of 20 times disagrees but is not flagged: it reliably
passes.

The result is plain data, results.json's ``repeats`` (:func:`summarise`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np

from .components import decompose, plan_repeats
from .passk import pass_curves

__all__ = ["FLAKY_FCR", "clopper_pearson", "flaky_records", "summarise"]

FLAKY_FCR = 0.10
"""The false coverage rate of the flaky records' intervals."""

SHOWN_FLAKY = 50
"""How many flagged records results.json lists per metric (all are counted)."""


def clopper_pearson(
    successes: np.ndarray, attempts: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The exact (Clopper–Pearson) interval of each pass rate, as
    ``statsmodels.stats.proportion.proportion_confint(method="beta")``."""
    from scipy.special import betaincinv

    c = np.asarray(successes, dtype=np.float64)
    n = np.asarray(attempts, dtype=np.float64)
    alpha = 1.0 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(c > 0, betaincinv(c, n - c + 1, alpha / 2), 0.0)
        high = np.where(c < n, betaincinv(c + 1, n - c, 1 - alpha / 2), 1.0)
    return low, high


def flaky_records(
    successes: np.ndarray, attempts: np.ndarray, q: float = FLAKY_FCR
) -> dict[str, Any]:
    """The records whose attempts disagree, the level of their intervals and which are
    flagged (the interval holds 1/2), as arrays over all records."""
    successes = np.asarray(successes, dtype=np.int64)
    attempts = np.asarray(attempts, dtype=np.int64)
    disagree = (successes > 0) & (successes < attempts)
    n, chosen = attempts.shape[0], int(disagree.sum())
    level = 1.0 - chosen * q / n if n else 1.0
    low, high = clopper_pearson(successes, attempts, level)
    flagged = disagree & (low <= 0.5) & (high >= 0.5)
    return {"disagree": disagree, "flagged": flagged, "low": low, "high": high, "level": level}


def _binary(values: np.ndarray) -> bool:
    finite = values[np.isfinite(values)]
    return bool(finite.size) and bool(np.isin(finite, (0.0, 1.0)).all())


def _slots(clusters: np.ndarray, repeats: np.ndarray) -> np.ndarray:
    """Each row's generation within its record: the rank of its repeat among the record's
    repeats (0 for the first)."""
    pairs, code = np.unique(np.stack([clusters, repeats]), axis=1, return_inverse=True)
    first = np.unique(pairs[0], return_index=True)[1]
    start = np.repeat(first, np.diff(np.append(first, pairs.shape[1])))
    out: np.ndarray = (np.arange(pairs.shape[1]) - start)[code.reshape(-1)]
    return out


def _grid(
    values: np.ndarray, clusters: np.ndarray, slots: np.ndarray, calls: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each record's values in an ``(n, K, J)`` array (records, generations, judge calls; NaN
    where a row is missing or undefined) and how many cells each record has. In a unit suite a
    cluster is a unit (a dialogue) and a cell the mean of its records' finite values in that
    repeat (a dialogue's rate of correct turns); else a cell holds one row."""
    finite = np.isfinite(values)
    k = int(slots.max()) + 1 if slots.size else 1
    j = int(calls.max()) + 1 if calls.size else 1
    cell = (clusters[finite] * k + slots[finite]) * j + calls[finite]
    rows = np.bincount(cell, minlength=n * k * j)
    sums = np.bincount(cell, weights=values[finite], minlength=n * k * j)
    with np.errstate(invalid="ignore", divide="ignore"):
        grid = np.where(rows > 0, sums / rows, np.nan).reshape(n, k, j)
    counts = (rows > 0).reshape(n, k * j).sum(axis=1)
    return grid, counts


def _components(
    grid: np.ndarray, counts: np.ndarray, level: float, seed: int, target_se: float | None
) -> tuple[dict[str, Any] | None, str | None]:
    """The variance components over the records with every repeat and judge call (a
    balanced design)."""
    _, k, j = grid.shape
    full = counts == k * j
    if k * j < 2:
        return None, "one value a record: nothing to split between records and repeats"
    if int(full.sum()) < 2:
        return None, f"fewer than two records have all {k * j} values"
    found = decompose(grid[full], level=level, seed=seed)
    out: dict[str, Any] = asdict(found)
    if target_se is not None:
        out["plan"] = asdict(plan_repeats(found, target_se))
    note = None
    if not full.all():
        note = (
            f"{int((~full).sum()):,} record(s) with fewer than {k * j} values left out of the "
            "variance shares (they need every record's repeats)"
        )
    return out, note


def _passes(
    entry: dict[str, Any],
    name: str,
    grid: np.ndarray,
    counts: np.ndarray,
    clusters: np.ndarray,
    keys: list[str | None],
    level: float,
    lower_is_better: frozenset[str],
) -> np.ndarray:
    """A 0/1 metric's pass@k, pass^k and flaky records (into ``entry``); the rows of its
    flagged records."""
    have = counts > 0
    successes = np.nansum(grid[:, :, 0], axis=1).astype(np.int64)
    if name in lower_is_better:
        successes = counts - successes
    entry["success"] = 0 if name in lower_is_better else 1
    curves = pass_curves(counts[have], successes[have], level)
    entry["pass_k"] = [asdict(c) for c in curves]
    flaky = flaky_records(successes[have], counts[have])
    at = np.flatnonzero(have)
    flagged = at[flaky["flagged"]]
    entry["disagreeing"] = int(flaky["disagree"].sum())
    entry["flaky"] = int(flagged.shape[0])
    entry["flaky_level"] = float(flaky["level"])
    order = np.argsort(np.abs(successes[flagged] / counts[flagged] - 0.5), kind="stable")
    where = {int(a): k for k, a in enumerate(at.tolist())}
    entry["flaky_records"] = [
        {
            "id": keys[r],
            "passed": int(successes[r]),
            "attempts": int(counts[r]),
            "pass_rate": float(successes[r] / counts[r]),
            "low": float(flaky["low"][where[r]]),
            "high": float(flaky["high"][where[r]]),
        }
        for r in flagged[order][:SHOWN_FLAKY].tolist()
    ]
    out: np.ndarray = np.isin(clusters, flagged)
    return out


def summarise(
    values: Mapping[str, np.ndarray],
    ids: list[str | None],
    repeats: np.ndarray,
    *,
    level: float,
    seed: int,
    target_se: float | None = None,
    lower_is_better: frozenset[str] = frozenset(),
    judge_calls: np.ndarray | None = None,
    clusters: np.ndarray | None = None,
    unit: str | None = None,
) -> tuple[dict[str, Any], np.ndarray]:
    """results.json's ``repeats`` from each metric's per-row ``values`` (a row a record ×
    repeat × judge call, NaN where undefined), and each row's ``flaky`` mark (its record
    flagged for some metric). For a 0/1 metric in ``lower_is_better`` (a hallucination rate)
    an attempt succeeds when its value is 0. pass@k and flaky records count attempts: with
    several judge calls (``judge_calls``) an attempt's grades differ by the judge too, and they
    are left out (said in the metric's note). ``clusters``: each row's record code
    (the run's bootstrap units, :func:`pingce.engine.groups.repeat_clusters`); by default
    made from ``ids``. ``unit``: in a unit suite the field whose values ``ids`` are (a
    dialogue's turns and their repeats one cluster, each cell of the split the mean of the
    dialogue's turns in a repeat: :func:`_grid`)."""
    if clusters is None:
        _, clusters = np.unique(
            np.asarray([str(i) for i in ids], dtype=object), return_inverse=True
        )
    # numbered 0 … n - 1 (a sample's units keep the codes of the whole table's)
    clusters = np.unique(np.asarray(clusters, dtype=np.int64), return_inverse=True)[1].reshape(-1)
    n = int(clusters.max()) + 1 if clusters.size else 0
    first = np.full(n, len(ids), dtype=np.int64)
    np.minimum.at(first, clusters, np.arange(len(ids), dtype=np.int64))
    keys = [ids[i] for i in first.tolist()]
    slots = _slots(clusters, np.asarray(repeats, dtype=np.int64))
    calls = (
        np.zeros(len(ids), dtype=np.int64)
        if judge_calls is None
        else np.asarray(judge_calls, dtype=np.int64) - 1
    )
    j = int(calls.max()) + 1 if calls.size else 1
    flaky_rows = np.zeros(len(ids), dtype=bool)
    metrics: dict[str, Any] = {}
    for name, column in values.items():
        column = np.asarray(column, dtype=np.float64)
        grid, counts = _grid(column, clusters, slots, calls, n)
        entry: dict[str, Any] = {"records": int((counts > 0).sum())}
        components, note = _components(grid, counts, level, seed, target_se)
        if not counts.any():
            note = "no per-record value (a metric of the whole corpus): no split by source"
        entry["components"] = components
        entry["note"] = note
        if _binary(grid) and j == 1:
            flaky_rows |= _passes(entry, name, grid, counts, clusters, keys, level, lower_is_better)
        elif _binary(grid):
            entry["note"] = "; ".join(
                filter(
                    None,
                    [
                        note,
                        "no pass@k or flaky records with several judge calls an attempt "
                        "(an attempt's grades differ by the judge too)",
                    ],
                )
            )
        metrics[name] = entry
    per_record = np.bincount(clusters, minlength=n)
    generations = np.unique(np.stack([clusters, slots]), axis=1)
    per_generation = np.bincount(generations[0], minlength=n)
    even = per_record if unit is None else per_generation
    summary = {
        "records": n,
        "unit": unit,
        "rows": len(ids),
        "repeats": int(per_generation.max()) if n else 0,
        # a unit's rows are its records x repeats: balanced when every unit has as many repeats
        "balanced": bool(n) and bool((even == even[0]).all()),
        "judge_calls": j,
        "flaky_fcr": FLAKY_FCR,
        "metrics": metrics,
    }
    return summary, flaky_rows
