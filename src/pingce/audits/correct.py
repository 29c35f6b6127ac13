"""Every metric of a run corrected by a human audit of its judge: the statistics computed once
with the judge's similarity scores (as the run computed them) and once with the human labels in
place of the judge's scores on the pairs people labelled; the rows of both go into
:func:`pingce.audits.ppi.corrected_mean` and each metric's own ``finalize`` makes the value.

A record counts as labelled when every pair the judge decided for it has a human label (a
record's rows depend on all its pairs). A metric whose statistic reads no similarity does not
depend on the judge and is reported unchanged. A statistic whose rows do not add up (latency
percentiles) cannot be corrected this way and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..engine.groups import unit_codes
from ..engine.judgements import Judgements
from ..engine.phases import statistics
from ..engine.plan import Plan
from ..engine.similarities import Scored
from ..errors import InputError
from ..metrics.protocol import Metric, StatBlock
from ..records import Table
from ..similarity import Pair, SimilarityTable
from .bootstrap import AuditCIMethod, corrected_interval
from .ppi import (
    FOLDS,
    Corrected,
    Stratum,
    corrected_mean,
    crossfit_lambda,
    delta_interval,
)

__all__ = [
    "FAIR_LABELLED",
    "AuditedMetric",
    "Grades",
    "Intervals",
    "correct",
    "dense_rows",
    "graded_task",
    "judged_tasks",
    "labelled_records",
    "planned_half_widths",
    "record_pairs",
    "regime_notes",
]


@dataclass(frozen=True)
class Intervals:
    """How the corrected values and intervals are made. ``method`` (``--ci-method``):
    ``bca`` (the default) or ``percentile``, a bootstrap of the labelled and unlabelled records
    apart in each stratum (:mod:`pingce.audits.bootstrap`), or ``normal``, the delta method's;
    the simulation study (benchmarks/README.md) found BCa's coverage the closer to nominal of
    the bootstrap's two from 100 labelled records on. ``folds`` (``--folds``): a tuned λ is
    cross-fitted over this many folds of the labelled records
    (:func:`pingce.audits.ppi.crossfit_lambda`, unbiased); 1 tunes it on all of them (PPI++: for
    a mean with ``normal``, ``ppi_py.ppi_mean_ci``)."""

    method: AuditCIMethod = "bca"
    resamples: int = 1000
    seed: int = 0
    folds: int = FOLDS


@dataclass(frozen=True)
class AuditedMetric:
    """One metric before and after the audit."""

    judge: float | None
    """The run's value: the judge's scores on every record."""
    human: float | None
    """The labelled records alone, with the human labels (weighted by stratum)."""
    value: float | None
    """The corrected (prediction-powered) value."""
    ci_low: float | None
    ci_high: float | None
    labelled: int
    """Records people labelled (every pair the judge decided for them)."""
    unlabelled: int
    """Records with pairs the judge decided that no one labelled."""
    exact: int = 0
    """Records the judge decided nothing for (the same with or without it)."""
    effective_n: float | None = None
    """The labelled records that would give the human-only value the corrected one's variance:
    ``labelled * var(human) / var(corrected)``."""
    depends_on_judge: bool = True
    measures_the_judge: bool = False
    """A metric of the judge itself (position bias, verbosity, a jury's agreement): reported as
    the run has it, with nothing to correct."""
    notes: list[str] = field(default_factory=list)


def record_pairs(plan: Plan, table: Table, indices: np.ndarray) -> list[list[Pair]]:
    """The distinct pairs the judge decided for each of the records ``indices``."""
    needing = [s for s in plan.statistics.values() if s.needs_similarity]
    out = []
    for i in np.asarray(indices, dtype=np.intp).tolist():
        one = table.take(np.array([i], dtype=np.intp))
        out.append(list(dict.fromkeys(p for s in needing for p in s.pairs(one) if p[0] != p[1])))
    return out


def labelled_records(
    plan: Plan, table: Table, labels: Mapping[Pair, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Which records have a human label on every pair the judge decided for them, and which
    records the judge decided nothing for (their rows are the same with or without it)."""
    pairs = record_pairs(plan, table, np.arange(table.n))
    judged = np.array([bool(p) for p in pairs], dtype=bool)
    labelled = np.array([bool(p) and all(q in labels for q in p) for p in pairs], dtype=bool)
    return labelled, ~judged


def dense_rows(block: StatBlock) -> np.ndarray | None:
    """A block's per-record rows as an ``(n, width)`` array (one-hot cells spread out); None
    for rows that do not add up."""
    if block.codes is not None:
        rows = np.zeros((block.codes.shape[0], block.width))
        rows[np.arange(block.codes.shape[0]), block.codes] = 1.0
        return rows
    if block.rows is None or not block.decomposable:
        return None
    return np.asarray(block.rows, dtype=np.float64).reshape(block.rows.shape[0], -1)


def _strata(
    human: np.ndarray, judge: np.ndarray, labelled: np.ndarray, codes: np.ndarray
) -> list[Stratum]:
    return [
        Stratum(
            human[labelled & (codes == h)],
            judge[labelled & (codes == h)],
            judge[~labelled & (codes == h)],
        )
        for h in np.unique(codes).tolist()
    ]


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def _audited(
    metric: Metric,
    human: np.ndarray,
    judge: np.ndarray,
    labelled: np.ndarray,
    codes: np.ndarray,
    lam: float | None,
    level: float,
    exact: bool = False,
    ci: Intervals | None = None,
) -> AuditedMetric:
    """One metric's values; ``exact``: the highest stratum code is the records the judge
    decided nothing for."""
    ci = ci or Intervals()
    size = judge.shape[0]

    def finalize(mean: np.ndarray) -> float:
        with np.errstate(invalid="ignore", divide="ignore"):
            return float(np.asarray(metric.finalize(mean * size), dtype=np.float64))

    def finalize_all(mean: np.ndarray) -> np.ndarray:  # (k, d) means to k values
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(metric.finalize(np.asarray(mean) * size), dtype=np.float64)

    judge_value = finalize(judge.mean(axis=0))
    strata = _strata(human, judge, labelled, codes)
    # λ tuned for the metric (for a mean, PPI++'s own: per statistic, a ratio's interval could
    # come out wider than the labels alone give), cross-fitted (tuned on the rows it corrects,
    # it is biased)
    tuned = crossfit_lambda(strata, finalize, ci.folds) if lam is None else lam
    corrected = corrected_mean(strata, tuned)
    if ci.method == "normal":
        value, low, high = delta_interval(finalize, corrected, level)
    else:
        value, low, high = corrected_interval(
            strata,
            finalize_all,
            tuned,
            method=ci.method,
            level=level,
            resamples=ci.resamples,
            seed=ci.seed,
        )
    alone: Corrected = corrected_mean(strata, 0.0)
    human_value, h_low, h_high = delta_interval(finalize, alone, level)
    normal = delta_interval(finalize, corrected, level)
    effective = None
    spread = normal[2] - normal[1]
    if np.isfinite(spread) and spread > 0 and np.isfinite(h_high - h_low):
        # the records people labelled (not those the judge decided nothing for) times the
        # variance the correction saves (both by the delta method)
        people = int((labelled & (codes != codes.max())).sum()) if exact else int(labelled.sum())
        effective = people * ((h_high - h_low) / spread) ** 2
    return AuditedMetric(
        judge=_finite(judge_value),
        human=_finite(human_value),
        value=_finite(value),
        ci_low=_finite(low),
        ci_high=_finite(high),
        labelled=corrected.labelled,
        unlabelled=corrected.unlabelled,
        effective_n=effective,
    )


FAIR_LABELLED = 400
"""Labelled records (units in a unit suite) from which the simulation study
(benchmarks/README.md, ``bench_audit_coverage.py``) found the default 95% interval covering
93.5-96.5% of the time across its judges, prevalences and metrics; with fewer, coverage fell
short, most with a rare class."""


def regime_notes(metrics: Mapping[str, AuditedMetric]) -> list[str]:
    """A note when the audit has fewer labelled records than :data:`FAIR_LABELLED`."""
    judged = [m for m in metrics.values() if m.depends_on_judge and not m.measures_the_judge]
    if not judged or judged[0].labelled >= FAIR_LABELLED:
        return []
    return [
        f"{judged[0].labelled} labelled records: the simulation study found the 95% intervals "
        f"covering 93.5-96.5% of the time from about {FAIR_LABELLED} labelled records (86-97% "
        "with 100-200, 64-95% with 40, the least with a rare outcome; nothing usable with a "
        "handful): label more before trusting them"
    ]


Grades = Mapping[tuple[int, str], float]
"""Human grades of model-judged records: by (record index, task: ``rubric``, ``correctness``
or ``pairwise``), a value on the task's scale (correctness: C 1, P 0.5, I 0; a preference:
A 1, B 0, tie 0.5)."""


def graded_task(graded: Any) -> str:
    """The task a judged statistic's grades are of (``rubric``, ``correctness``, ``pairwise``),
    as its grade entries record it; "" for grades without entries."""
    return str(graded.entries[0][0]["task"]) if graded.entries and graded.entries[0] else ""


def _human_judgements(judged: Judgements, grades: Grades) -> Judgements:
    """The judge phase's grades with the human's in place on the graded records (every judge
    of a jury given the human's value, so the record's grade is the human's)."""
    graded = {}
    for key, one in judged.graded.items():
        task = graded_task(one)
        values, failures = one.values.copy(), one.failures.copy()
        for (i, which), value in grades.items():
            if which != task:
                continue
            if task == "pairwise":  # two prompts a record: A first, then B first (A's win: 1 - x)
                values[2 * i, :], values[2 * i + 1, :] = value, 1.0 - value
                failures[2 * i : 2 * i + 2, :] = None
            else:
                values[i, :] = value
                failures[i, :] = None
        graded[key] = replace(one, values=values, failures=failures)
    return replace(judged, graded=graded)


def judged_tasks(judged: Judgements | None) -> list[str]:
    """The tasks a run's judges graded (``rubric``, ``correctness``, ``pairwise``), in order."""
    if judged is None:
        return []
    tasks = [graded_task(one) for one in judged.graded.values()]
    return [t for t in dict.fromkeys(tasks) if t in ("rubric", "correctness", "pairwise")]


def _by_unit(
    units: np.ndarray, labelled: np.ndarray, undecided: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit: labelled when all its records are (or need no label), decided by nothing when
    none of its records was, and its stratum (that of its first decided record)."""
    count = int(units.max()) + 1
    unlabelled = np.bincount(units, weights=~labelled, minlength=count) > 0
    decided = np.bincount(units, weights=~undecided, minlength=count) > 0
    stratum = np.full(count, int(codes.max(initial=0)) + 1, dtype=np.intp)
    order = np.flatnonzero(~undecided)[::-1]  # the first decided record of a unit wins
    stratum[units[order]] = codes[order]
    return ~unlabelled, ~decided, stratum


def _unit_sums(units: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The rows of each unit's records added up."""
    out = np.zeros((int(units.max()) + 1, rows.shape[1]))
    np.add.at(out, units, rows)
    return out


def correct(
    plan: Plan,
    table: Table,
    scored: Scored | None,
    labels: Mapping[Pair, float],
    *,
    judged: Judgements | None = None,
    grades: Grades | None = None,
    strata: np.ndarray | None = None,
    drawn: np.ndarray | None = None,
    lam: float | None = None,
    level: float = 0.95,
    ci: Intervals | None = None,
) -> dict[str, AuditedMetric]:
    """Each metric of ``plan`` on ``table`` corrected by the human ``labels`` (a score in [0, 1]
    per pair, as the similarity judge's) and ``grades`` (of the model-judged records, with the
    run's ``judged`` grades): PPI++ (``lam`` None) or a fixed λ, within ``strata`` (a stratum
    code per record: the audit sample's strata; None: one), with normal intervals at
    ``level``. A record is labelled when every pair and every task the judges decided for it
    has a human label, and (with ``drawn``, a mask) it was drawn: a label that happens to cover
    a record outside the random sample is not used for it (that would bias the estimate)."""
    grades = grades or {}
    if scored is not None:
        labelled, undecided = labelled_records(plan, table, labels)
    else:
        labelled, undecided = np.ones(table.n, bool), np.ones(table.n, bool)
    tasks = judged_tasks(judged)
    if tasks:
        graded = np.array([all((i, t) in grades for t in tasks) for i in range(table.n)])
        labelled = (labelled | undecided) & graded
        undecided = np.zeros(table.n, bool)  # every record was graded by the judges
    if drawn is not None:
        labelled = labelled & (np.asarray(drawn, dtype=bool) | undecided)
    if not labelled.any():
        raise InputError("no record has a human label on every pair the judge decided for it")
    human_scored = None
    if scored is not None:
        values = {**scored.table.values, **{p: float(v) for p, v in labels.items()}}
        human_scored = Scored(
            SimilarityTable(values, scored.table.signature), scored.stats, "human"
        )
    human_judged = None if judged is None else _human_judgements(judged, grades)
    judge_blocks = statistics(plan, table, scored, judged=judged)
    human_blocks = statistics(plan, table, human_scored, judged=human_judged)
    codes = np.zeros(table.n, dtype=np.intp) if strata is None else np.asarray(strata).copy()
    # the records the judge decided nothing for are known exactly: a stratum of their own,
    # all of it "labelled" (the judge's rows are the human ones); the audit's random sample is
    # of the others
    codes[undecided] = int(codes.max(initial=0)) + 1
    labelled = labelled | undecided
    units = unit_codes(table, plan.unit)
    if units is not None:  # a unit suite: the units (dialogues) are what was sampled
        labelled, undecided, codes = _by_unit(units, labelled, undecided, codes)
    counts = (int((labelled & ~undecided).sum()), int((~labelled).sum()), int(undecided.sum()))
    present = np.bincount(codes[labelled & ~undecided], minlength=int(codes.max()) + 1)
    for h in sorted(set(codes[~labelled].tolist())):
        if present[h] < 2:
            raise InputError(
                f"stratum {h} of the sheet has {present[h]} record(s) labelled whole: label at "
                "least two records of every stratum (every pair of each), or draw the sheet "
                "again with fewer --strata"
            )
    out: dict[str, AuditedMetric] = {}
    for name, metric in plan.metrics.items():
        key = plan.keys[name]
        statistic = plan.statistics[key]
        judge_rows = dense_rows(judge_blocks[key])
        human_rows = dense_rows(human_blocks[key])
        if judge_rows is None or human_rows is None:
            out[name] = AuditedMetric(
                None,
                None,
                None,
                None,
                None,
                *counts,
                depends_on_judge=statistic.needs_similarity or statistic.needs_judge,
                notes=["its per-record rows do not add up: it cannot be corrected"],
            )
            continue
        if metric.measures_the_judge:
            value = _finite(float(metric.finalize(judge_rows.sum(axis=0))))
            out[name] = AuditedMetric(
                value, None, None, None, None, *counts, measures_the_judge=True
            )
            continue
        if not (statistic.needs_similarity or statistic.needs_judge):
            value = _finite(float(metric.finalize(judge_rows.sum(axis=0))))
            out[name] = AuditedMetric(
                value, value, value, None, None, *counts, depends_on_judge=False
            )
            continue
        if units is not None:
            human_rows, judge_rows = _unit_sums(units, human_rows), _unit_sums(units, judge_rows)
        audited = _audited(
            metric, human_rows, judge_rows, labelled, codes, lam, level, bool(undecided.any()), ci
        )
        notes = []
        if audited.ci_low is not None and audited.ci_low == audited.ci_high:
            notes.append(
                "the interval has no width: the labelled records (or those left to the judge) "
                "are too few to show any spread; label more before trusting it"
            )
        out[name] = replace(
            audited, labelled=counts[0], unlabelled=counts[1], exact=counts[2], notes=notes
        )
    return out


def planned_half_widths(
    plan: Plan,
    table: Table,
    scored: Scored | None,
    judged: Judgements | None,
    codes: np.ndarray,
    quotas: np.ndarray,
    level: float = 0.95,
) -> dict[str, float]:
    """Before anyone labels: the half-width of each judge-dependent metric's interval with the
    labels alone (the interval ``pingce audit`` reports with ``--lambda 0``), were the people
    to agree with the judge (its rows standing in for theirs), from a stratified sample of
    ``quotas[h]`` records of each stratum ``codes`` (-1: a record the judge decided nothing for,
    known exactly). PPI++ narrows it the more the judge agrees with the people."""
    blocks = statistics(plan, table, scored, judged=judged)
    size = table.n
    out: dict[str, float] = {}
    for name, metric in plan.metrics.items():
        statistic = plan.statistics[plan.keys[name]]
        rows = dense_rows(blocks[plan.keys[name]])
        if rows is None or not (statistic.needs_similarity or statistic.needs_judge):
            continue
        if metric.measures_the_judge:
            continue
        mean = np.zeros(rows.shape[1])
        covariance = np.zeros((rows.shape[1], rows.shape[1]))
        for h in np.unique(codes).tolist():
            part = rows[codes == h]
            share = part.shape[0] / size
            mean += share * part.mean(axis=0)
            n = part.shape[0] if h < 0 else int(quotas[h])
            if n >= 1 and part.shape[0] > 1:
                spread = np.cov(part, rowvar=False, ddof=1).reshape(rows.shape[1], -1)
                covariance += share**2 * spread / n

        def finalize(m: np.ndarray, metric: Metric = metric) -> float:
            with np.errstate(invalid="ignore", divide="ignore"):
                return float(np.asarray(metric.finalize(m * size), dtype=np.float64))

        _, low, high = delta_interval(
            finalize, Corrected(mean, covariance, [], int(quotas.sum()), 0), level
        )
        if np.isfinite(high - low):
            out[name] = (high - low) / 2
    return out
