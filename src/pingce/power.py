"""Power of a release decision before the run (issue 35, ``pingce plan``).

From a stored baseline run's per-record statistics (stats.npz), for each ``--non-inferior`` or
``--equivalent`` gate: the standard error of the metric's paired difference, the power of the
gate at the run's record count when the candidate is in truth as good as the baseline, the
smallest margin the gate would clear with the wanted power, and the records that margin would
need. A metric's standard error is the jackknife's over its records (or units), so ratios, F1
and kappas are covered as the bootstrap covers them. The paired difference's standard error
is ``SE · sqrt(2 (1 - ρ))`` where ρ is the correlation of the two systems' per-record
contributions: measured when a candidate run is given (its paired difference's jackknife
itself), else assumed (``--correlation``, 0 by default: independent systems, the cautious
choice; two versions of one system correlate, which only helps).

The test is the one-sided normal test at ``alpha`` per gate: ``alpha = (1 - ci_level) / 2``,
divided by the number of gates under Holm or BH (the first step of either, so the power given
is a lower bound). Non-inferiority at a true difference of 0: ``power = Φ(δ / SE_d - z_{1-α})``;
equivalence (two one-sided tests): ``2 Φ(δ / SE_d - z_{1-α}) - 1``.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .decisions import MarginGate, Multiplicity, gate_power, planned_alpha
from .metrics.protocol import Metric, StatBlock

__all__ = [
    "GatePower",
    "gate_power",
    "jackknife_se",
    "plan_power",
    "planned_alpha",
    "repeats_for_power",
]


def _leave_one_out(metric: Metric, block: StatBlock) -> np.ndarray:
    rows = block.per_record()
    return np.asarray(metric.finalize(block.total()[None, :] - rows), dtype=np.float64)


def jackknife_se(values: np.ndarray) -> float | None:
    """The jackknife standard error from leave-one-out values (None with fewer than two or
    any undefined)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size < 2 or not np.isfinite(values).all():
        return None
    n = values.size
    return math.sqrt((n - 1) / n * float(((values - values.mean()) ** 2).sum()))


@dataclass(frozen=True)
class GatePower:
    """One gate's power before the run."""

    metric: str
    test: str
    margin: float
    records: int
    """Records (or units) of the baseline."""
    value: float | None
    """The baseline's value."""
    se: float | None
    """The metric's standard error on the baseline."""
    se_difference: float | None
    """The paired difference's standard error."""
    correlation: float
    measured: bool
    """Whether ``correlation`` was measured (a candidate run given) or assumed."""
    alpha: float
    """The one-sided level of this gate."""
    power: float | None
    detectable: float | None
    """The margin this gate clears with the wanted power at this record count."""
    records_needed: int | None
    """The records the gate's margin needs for the wanted power."""
    note: str | None = None
    repeats: int | None = None
    """With a baseline of repeats: its repeats a record (K)."""
    repeats_needed: int | None = None
    """With a baseline of repeats: the fewest repeats a record (K') that give the wanted power
    at this margin and record count (None: repeats alone do not; then ``records_needed``)."""


def repeats_for_power(
    se_difference: float,
    variance: Mapping[str, float | None],
    repeats: int,
    margin: float,
    alpha: float,
    power: float,
    *,
    equivalent: bool,
    most: int = 100,
) -> int | None:
    """The fewest repeats a record (K' ≤ ``most``) whose paired difference's standard error,
    ``se_difference`` measured at ``repeats`` and scaled by the variance components of the
    per-record values (``sqrt((σ²_R + σ²_G / K') / (σ²_R + σ²_G / K))``), gives ``power`` at
    ``margin``; None when none does (the records' own variance is too large)."""
    records = variance.get("records") or 0.0
    generations = variance.get("generations") or 0.0
    now = records + generations / repeats
    if now <= 0:
        return None
    for k in range(1, most + 1):
        se = se_difference * math.sqrt((records + generations / k) / now)
        achieved, _, _ = gate_power(se, margin, alpha, power, 1, equivalent=equivalent)
        if achieved >= power:
            return k
    return None


def plan_power(
    metrics: Mapping[str, Metric],
    keys: Mapping[str, Hashable],
    baseline: Mapping[Hashable, StatBlock],
    gates: Sequence[MarginGate],
    *,
    candidate: Mapping[Hashable, StatBlock] | None = None,
    correlation: float = 0.0,
    level: float = 0.95,
    multiplicity: Multiplicity = "holm",
    power: float = 0.8,
    repeats: Mapping[str, Any] | None = None,
) -> list[GatePower]:
    """Each gate's power from the ``baseline``'s blocks (and the ``candidate``'s, paired, when
    given): the metrics by name, their statistic keys, blocks over records or units; with
    ``repeats`` (a baseline run of repeats: results.json's ``repeats``) also the repeats a
    record the wanted power needs (:func:`repeats_for_power`)."""
    alpha = planned_alpha(level, len(gates), multiplicity)
    out = []
    for gate in gates:
        metric, key = metrics[gate.metric], keys[gate.metric]
        block = baseline[key]
        value = float(np.asarray(metric.finalize(block.total()), dtype=np.float64))
        se = jackknife_se(_leave_one_out(metric, block)) if metric.decomposable else None
        rho, measured, se_d = correlation, False, None
        if se is not None and candidate is not None:
            ours = _leave_one_out(metric, candidate[key])
            theirs = _leave_one_out(metric, block)
            se_d = jackknife_se(ours - theirs)
            se_c = jackknife_se(ours)
            if se_d is not None and se_c and se:
                rho = (se**2 + se_c**2 - se_d**2) / (2 * se * se_c)
                measured = True
        elif se is not None:
            se_d = se * math.sqrt(2.0 * (1.0 - correlation))
        note = None
        if se is None or se_d is None:
            note = "no standard error (its rows do not add up, or a leave-one-out is undefined)"
            achieved = detectable = needed = None
        else:
            achieved, detectable, needed = gate_power(
                se_d, gate.margin, alpha, power, block.n, equivalent=gate.equivalent
            )
        k = k_needed = None
        found = (repeats or {}).get("metrics", {}).get(gate.metric, {}).get("components")
        if repeats is not None and found is not None and se_d is not None:
            k = int(repeats["repeats"])
            k_needed = repeats_for_power(
                se_d, found["variance"], k, gate.margin, alpha, power, equivalent=gate.equivalent
            )
        out.append(
            GatePower(
                gate.metric,
                gate.test,
                gate.margin,
                block.n,
                value if math.isfinite(value) else None,
                se,
                se_d,
                rho,
                measured,
                alpha,
                achieved,
                detectable,
                needed,
                note,
                k,
                k_needed,
            )
        )
    return out
