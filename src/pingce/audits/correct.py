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

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..engine.groups import repeat_clusters
from ..engine.judgements import Judgements
from ..engine.phases import statistics
from ..engine.plan import Plan, StatBlocks
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
    "Design",
    "Entry",
    "Grades",
    "Intervals",
    "RunRows",
    "correct",
    "correct_entries",
    "dense_rows",
    "entries",
    "graded_task",
    "judged_tasks",
    "labelled_records",
    "pair_counts",
    "planned_half_widths",
    "record_pairs",
    "regime_notes",
    "run_rows",
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
    """The distinct pairs the judge decided for each of the records ``indices`` (of every
    record: made once per table and kept, as the sheet, the draw and the labels all read
    them)."""
    indices = np.asarray(indices, dtype=np.intp)
    if np.array_equal(indices, np.arange(table.n)):
        keys = tuple(k for k, s in plan.statistics.items() if s.needs_similarity)
        made = table.derived(("audit record pairs", keys), lambda: _pairs_by_record(plan, table))
        return made  # type: ignore[no-any-return]
    return _pairs_by_record(plan, table.take(indices))


def _pairs_by_record(plan: Plan, table: Table) -> list[list[Pair]]:
    found: list[dict[Pair, None]] = [{} for _ in range(table.n)]  # ordered sets
    for statistic in plan.statistics.values():
        if statistic.needs_similarity:
            for i, pair in statistic.indexed_pairs(table):  # every record at once
                if pair[0] != pair[1]:
                    found[i][pair] = None
    return [list(pairs) for pairs in found]


def pair_counts(pairs: list[list[Pair]]) -> tuple[np.ndarray, list[Pair]]:
    """How many pairs each record has, and all the pairs one record after another."""
    counts = np.fromiter(map(len, pairs), dtype=np.intp, count=len(pairs))
    return counts, [pair for one in pairs for pair in one]


def labelled_records(
    plan: Plan, table: Table, labels: Mapping[Pair, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Which records have a human label on every pair the judge decided for them, and which
    records the judge decided nothing for (their rows are the same with or without it)."""
    counts, flat = pair_counts(record_pairs(plan, table, np.arange(table.n)))
    unlabelled = np.fromiter((p not in labels for p in flat), dtype=bool, count=len(flat))
    owner = np.repeat(np.arange(table.n), counts)
    missing = np.bincount(owner, weights=unlabelled, minlength=table.n)
    judged = counts > 0
    return judged & (missing == 0), ~judged


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
        "handful): label more before trusting them; with fewer, --ci-method normal came "
        "closest to 95%"
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


def _human_rows(
    plan: Plan,
    table: Table,
    judge_blocks: StatBlocks,
    scores: tuple[Scored | None, Scored | None],
    checked: np.ndarray,
    judged: Judgements | None,
) -> dict[Hashable, np.ndarray | None]:
    """Each statistic's rows with the human labels in place on the records ``checked`` (dense;
    None for rows that do not add up): ``scores`` the similarity judge's and the human's,
    ``judged`` the model judges' grades with the human's in place. Only the checked records'
    human rows are read (the corrected mean's labelled term): without model judges, a statistic
    whose rows of those records, computed on them alone, are the rows the whole table gave them
    (each record's rows its own) is computed on them alone, the judge's rows standing for the
    other records'; any other over every record. A statistic that reads no judge keeps the
    judge's rows."""
    judge, human = scores
    reading = [k for k, s in plan.statistics.items() if s.needs_similarity or s.needs_judge]
    out = {k: dense_rows(b) for k, b in judge_blocks.items() if k not in reading}
    whole = list(reading)
    changed = checked if judged is None and judge is not None else None
    if changed is not None and changed.size == 0:
        return {**out, **{k: dense_rows(judge_blocks[k]) for k in reading}}
    if changed is not None and changed.size < table.n:
        part = table.take(changed)
        again = statistics(plan, part, judge, only=reading)
        labelled = statistics(plan, part, human, only=reading)
        for key in reading:
            rows, alone, mine = (dense_rows(b[key]) for b in (judge_blocks, again, labelled))
            if rows is None or alone is None or mine is None:
                continue
            if np.array_equal(rows[changed], alone, equal_nan=True):  # each record's own rows
                rows = rows.copy()
                rows[changed] = mine
                out[key] = rows
                whole.remove(key)
    if whole:
        blocks = statistics(plan, table, human, judged=judged, only=whole)
        out.update({k: dense_rows(blocks[k]) for k in whole})
    return out


def _graded(n: int, grades: Grades, tasks: list[str]) -> np.ndarray:
    """Which of the ``n`` records a person graded on every task."""
    graded = np.ones(n, dtype=bool)
    for task in tasks:
        mask = np.zeros(n, dtype=bool)
        mask[[i for i, t in grades if t == task]] = True
        graded &= mask
    return graded


@dataclass
class RunRows:
    """One run's statistics with the judge's scores and with the people's labels in place, and
    which records count as labelled (every pair and task the judges decided for them has a
    label, and the record was drawn) and which the judges decided nothing for."""

    labelled: np.ndarray
    undecided: np.ndarray
    judge: Mapping[Hashable, StatBlock]
    """By statistic key: its block with the judge's scores (the run's own)."""
    human: Mapping[Hashable, np.ndarray | None]
    """By statistic key: its rows with the human labels in place on the labelled records
    (dense; None for rows that do not add up; only the labelled records' are read:
    :func:`_human_rows`)."""


def run_rows(
    plan: Plan,
    table: Table,
    scored: Scored | None,
    labels: Mapping[Pair, float],
    *,
    judged: Judgements | None = None,
    grades: Grades | None = None,
    drawn: np.ndarray | None = None,
) -> RunRows:
    """The statistics of ``plan`` on ``table`` with the judge's scores and with the human
    ``labels`` and ``grades`` in place (see :func:`correct`)."""
    grades = grades or {}
    if scored is not None:
        labelled, undecided = labelled_records(plan, table, labels)
    else:
        labelled, undecided = np.ones(table.n, bool), np.ones(table.n, bool)
    tasks = judged_tasks(judged)
    if tasks:
        labelled = (labelled | undecided) & _graded(table.n, grades, tasks)
        undecided = np.zeros(table.n, bool)  # every record was graded by the judges
    if drawn is not None:
        labelled = labelled & (np.asarray(drawn, dtype=bool) | undecided)
    human_scored = None
    if scored is not None:
        values = {**scored.table.values, **{p: float(v) for p, v in labels.items()}}
        human_scored = Scored(
            SimilarityTable(values, scored.table.signature), scored.stats, "human"
        )
    human_judged = None if judged is None else _human_judgements(judged, grades)
    judge_blocks = statistics(plan, table, scored, judged=judged)
    checked = np.flatnonzero(labelled & ~undecided)  # the records whose human rows are read
    human = _human_rows(plan, table, judge_blocks, (scored, human_scored), checked, human_judged)
    return RunRows(labelled, undecided, judge_blocks, human)


@dataclass(frozen=True)
class Entry:
    """What is corrected for one metric: its ``finalize`` (any object with the metric
    protocol's ``finalize`` and ``measures_the_judge``), its per-record rows with the judge's
    scores and with the labels in place (None: rows that do not add up), and whether its
    statistic reads a judge."""

    metric: Any
    judge: np.ndarray | None
    human: np.ndarray | None
    depends_on_judge: bool


def entries(plan: Plan, rows: RunRows) -> dict[str, Entry]:
    """Each metric of ``plan`` with its rows from ``rows``."""
    out = {}
    for name, metric in plan.metrics.items():
        key = plan.keys[name]
        statistic = plan.statistics[key]
        out[name] = Entry(
            metric,
            dense_rows(rows.judge[key]),
            rows.human[key],
            statistic.needs_similarity or statistic.needs_judge,
        )
    return out


@dataclass(frozen=True)
class Design:
    """The sample the labels are: which records (or units) count as labelled, which the judges
    decided nothing for (known exactly: a stratum of their own), each one's stratum, and the
    records' units in a unit suite (rows are added up per unit; None: records)."""

    labelled: np.ndarray
    undecided: np.ndarray
    codes: np.ndarray
    units: np.ndarray | None

    @classmethod
    def of(
        cls,
        labelled: np.ndarray,
        undecided: np.ndarray,
        strata: np.ndarray | None,
        units: np.ndarray | None,
    ) -> Design:
        """Per record ``labelled`` and ``undecided`` masks and ``strata`` codes (None: one
        stratum), grouped by ``units`` when given; an error when a stratum with records left
        to the judge has fewer than two labelled."""
        n = labelled.shape[0]
        codes = np.zeros(n, dtype=np.intp) if strata is None else np.asarray(strata).copy()
        # the records the judge decided nothing for are known exactly: a stratum of their own,
        # all of it "labelled" (the judge's rows are the human ones); the audit's random sample
        # is of the others
        codes[undecided] = int(codes.max(initial=0)) + 1
        labelled = labelled | undecided
        if units is not None:  # a unit suite: the units (dialogues) are what was sampled
            labelled, undecided, codes = _by_unit(units, labelled, undecided, codes)
        present = np.bincount(codes[labelled & ~undecided], minlength=int(codes.max()) + 1)
        for h in sorted(set(codes[~labelled].tolist())):
            if present[h] < 2:
                raise InputError(
                    f"stratum {h} of the sheet has {present[h]} record(s) labelled whole: label "
                    "at least two records of every stratum (every pair of each), or draw the "
                    "sheet again with fewer --strata"
                )
        return cls(labelled, undecided, codes, units)

    @property
    def counts(self) -> tuple[int, int, int]:
        """Labelled, unlabelled, and decided-by-nothing records (or units)."""
        labelled, undecided = self.labelled, self.undecided
        return (
            int((labelled & ~undecided).sum()),
            int((~labelled).sum()),
            int(undecided.sum()),
        )


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
    rows = run_rows(plan, table, scored, labels, judged=judged, grades=grades, drawn=drawn)
    if not rows.labelled.any():
        raise InputError("no record has a human label on every pair the judge decided for it")
    design = Design.of(rows.labelled, rows.undecided, strata, repeat_clusters(table, plan.unit))
    return correct_entries(entries(plan, rows), design, lam=lam, level=level, ci=ci)


def correct_entries(
    metrics: Mapping[str, Entry],
    design: Design,
    *,
    lam: float | None = None,
    level: float = 0.95,
    ci: Intervals | None = None,
) -> dict[str, AuditedMetric]:
    """Each of ``metrics`` corrected over the sample ``design``."""
    counts = design.counts
    units = design.units
    exact = bool(design.undecided.any())
    out: dict[str, AuditedMetric] = {}
    for name, entry in metrics.items():
        metric, judge_rows, human_rows = entry.metric, entry.judge, entry.human
        if judge_rows is None or human_rows is None:
            out[name] = AuditedMetric(
                None,
                None,
                None,
                None,
                None,
                *counts,
                depends_on_judge=entry.depends_on_judge,
                notes=["its per-record rows do not add up: it cannot be corrected"],
            )
            continue
        if metric.measures_the_judge:
            value = _finite(float(metric.finalize(judge_rows.sum(axis=0))))
            out[name] = AuditedMetric(
                value, None, None, None, None, *counts, measures_the_judge=True
            )
            continue
        if not entry.depends_on_judge:
            value = _finite(float(metric.finalize(judge_rows.sum(axis=0))))
            out[name] = AuditedMetric(
                value, value, value, None, None, *counts, depends_on_judge=False
            )
            continue
        if units is not None:
            human_rows, judge_rows = _unit_sums(units, human_rows), _unit_sums(units, judge_rows)
        audited = _audited(
            metric, human_rows, judge_rows, design.labelled, design.codes, lam, level, exact, ci
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
    units: np.ndarray | None = None,
) -> dict[str, float]:
    """Before anyone labels: the half-width of each judge-dependent metric's interval with the
    labels alone (the interval ``pingce audit`` reports with ``--lambda 0``), were the people
    to agree with the judge (its rows standing in for theirs), from a stratified sample of
    ``quotas[h]`` records of each stratum ``codes`` (-1: a record the judge decided nothing for,
    known exactly). In a unit suite (``units``: each record's unit, a dialogue) the units are
    what is drawn: their rows summed, each unit in its records' stratum. PPI++ narrows it the
    more the judge agrees with the people."""
    reading = [k for k, s in plan.statistics.items() if s.needs_similarity or s.needs_judge]
    blocks = statistics(plan, table, scored, judged=judged, only=reading)
    codes = np.asarray(codes)
    if units is not None:  # a unit's records share its stratum
        by_unit = np.full(int(units.max()) + 1, -1, dtype=np.intp)
        by_unit[units] = codes
        codes = by_unit
    out: dict[str, float] = {}
    for name, metric in plan.metrics.items():
        statistic = plan.statistics[plan.keys[name]]
        if metric.measures_the_judge or not (statistic.needs_similarity or statistic.needs_judge):
            continue
        rows = dense_rows(blocks[plan.keys[name]])
        if rows is None:
            continue
        if units is not None:
            rows = _unit_sums(units, rows)
        size = rows.shape[0]

        def finalize(m: np.ndarray, metric: Metric = metric, size: int = size) -> float:
            with np.errstate(invalid="ignore", divide="ignore"):
                return float(np.asarray(metric.finalize(m * size), dtype=np.float64))

        _, low, high = delta_interval(finalize, _planned(rows, codes, quotas), level)
        if np.isfinite(high - low):
            out[name] = (high - low) / 2
    return out


def _planned(rows: np.ndarray, codes: np.ndarray, quotas: np.ndarray) -> Corrected:
    """The mean row and its covariance for a stratified sample of ``quotas[h]`` rows of each
    stratum ``codes`` (-1: known exactly, all of it)."""
    size, width = rows.shape
    mean = np.zeros(width)
    covariance = np.zeros((width, width))
    for h in np.unique(codes).tolist():
        part = rows[codes == h]
        share = part.shape[0] / size
        mean += share * part.mean(axis=0)
        n = part.shape[0] if h < 0 else int(quotas[h])
        if n >= 1 and part.shape[0] > 1:
            spread = np.cov(part, rowvar=False, ddof=1).reshape(width, -1)
            covariance += share**2 * spread / n
    return Corrected(mean, covariance, [], int(quotas.sum()), 0)
