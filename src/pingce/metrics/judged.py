"""Metrics graded by a model (issue 33): a rubric score, correctness against a reference, and the
correlation of score and answer length (a judge's verbosity bias).

The judge phase (:mod:`pingce.engine.judgements`) asks the judges and reads their answers; a
statistic here turns each record's grades into rows that add up, so the value, its bootstrap
interval, slices and paired comparisons are what they are for every other metric. A record is
left out of a judged statistic when any judge gave it no grade (a failed call, an answer without
a score on the scale): ``--on-judge-failure`` then makes the value null with the count (the
default) or computes it over the other records, with a note; a failure is never a score.

Per record, with ``v`` the record's score (the judges' mean, on the scale's own units), ``s``
the same mapped to [0, 1] and ``L`` the answer's length in characters, the rows are
``[v, s, 1, 0, L, L², s·L, s²]`` (``[0, 0, 0, 1, 0, ...]`` for a record left out).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._json import dumps
from ..errors import InputError, SuiteError
from ..records import FieldSpec, Table
from .agreement import (
    Coded,
    FleissKappa,
    KrippendorffAlpha,
    agreement_rows,
    check_ordinal_size,
    fleiss_rows,
)
from .protocol import LEFT_OUT, Context, Metric, StatBlock, Statistic
from .registry import REQUIRED, register_metric

if TYPE_CHECKING:
    from ..judged import Scale

__all__ = [
    "Aggregate",
    "Correctness",
    "JudgeAgreement",
    "JudgeAgreementStatistic",
    "JudgeFleissKappa",
    "JudgeFleissStatistic",
    "JudgedLabelStatistic",
    "JudgedStatistic",
    "JuryAgreement",
    "LabelRate",
    "PairwiseStatistic",
    "PositionBias",
    "RubricScore",
    "ScoreLengthCorrelation",
    "WinRate",
    "jury_values",
]

Aggregate = Literal["mean", "majority"]
"""How a jury's grades of one record become its grade: their mean, or the grade most of them
gave (:func:`jury_values`)."""

_V, _S, _N, _FAILED, _L, _L2, _SL, _S2 = range(8)
_WIDTH = 8


def _text(value: Any) -> str:
    """A field's value as the judge reads it: text as it is, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value).decode("utf-8")


def jury_values(values: np.ndarray, aggregate: Aggregate = "mean") -> np.ndarray:
    """Each record's grade from its ``(n, judges)`` grades (NaN where a record is not graded by
    every judge): their ``mean``, or by ``majority`` the grade most judges gave, a tie between
    the most given grades broken by their median (two tied grades: their mean, so a jury split
    evenly on pass/fail gives 0.5)."""
    complete = ~np.isnan(values).any(axis=1)
    if aggregate == "mean" or values.shape[1] == 1:
        return np.where(complete, values.mean(axis=1), np.nan)
    counts = (values[:, :, None] == values[:, None, :]).sum(axis=2)
    modal = counts == counts.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        tied = np.where(modal & complete[:, None], values, np.nan)
    out = np.full(values.shape[0], np.nan)
    rows = np.flatnonzero(complete)
    if rows.size:
        out[rows] = np.nanmedian(tied[rows], axis=1)
    return out


class JudgedStatistic(Statistic):
    """Per record, the judges' grade of its answer on one task (``rubric`` or ``correctness``),
    a jury's grades aggregated by ``aggregate``."""

    needs_judge = True

    def __init__(
        self,
        task: str,
        output: str,
        input: str | None,
        reference: str | None,
        aggregate: Aggregate = "mean",
    ):
        self.judge_task = task
        self.output = output
        self.input = input
        self.reference = reference
        self.aggregate = aggregate

    @property
    def key(self) -> Hashable:
        base = ("judged", self.judge_task, self.output, self.input, self.reference)
        return base if self.aggregate == "mean" else (*base, self.aggregate)

    def fields(self) -> list[FieldSpec]:
        specs = [FieldSpec(self.output, "json", required=False, what="the answer graded")]
        if self.input is not None:
            specs.append(FieldSpec(self.input, "json", required=False, what="what was asked"))
        if self.reference is not None:
            required = self.judge_task == "correctness"
            specs.append(FieldSpec(self.reference, "json", required=required, what="a reference"))
        return specs

    def check(self, table: Table) -> None:
        """An answer field that no record has is a misnamed field, not empty answers."""
        if table.n and all(v is None for v in table.column(self.output)):
            raise InputError(
                f"no record has the answer field {self.output!r} (or every one is null); "
                "name the field with --map output=FIELD or the metric's output argument",
                source=table.source,
                field=self.output,
            )

    def judge_reference(self) -> bool:
        return self.reference is not None

    def judge_texts(self, table: Table) -> list[dict[str, str]]:
        """Each record's texts for the prompt: ``input``, ``output``, ``reference``."""
        outputs = table.column(self.output)
        inputs = table.column(self.input) if self.input is not None else [None] * table.n
        references = (
            table.column(self.reference) if self.reference is not None else [None] * table.n
        )
        return [
            {"input": _text(i), "output": _text(o), "reference": _text(r)}
            for i, o, r in zip(inputs, outputs, references, strict=True)
        ]

    def column_names(self, width: int) -> list[str]:
        return [
            "score",
            "score 0-1",
            "graded",
            "left out",
            "length",
            "length²",
            "score·length",
            "score²",
        ]

    def compute(self, table: Table, context: Context) -> StatBlock:
        graded = context.grades(self.key)
        values, normalized = graded.values, graded.normalized()
        complete = ~np.isnan(values).any(axis=1)
        if self.aggregate == "mean":
            v = np.where(complete, values.mean(axis=1), 0.0)
            s = np.where(complete, normalized.mean(axis=1), 0.0)
        else:
            v = np.where(complete, jury_values(values, self.aggregate), 0.0)
            low, high = graded.scale.low, graded.scale.high
            s = np.where(complete, (v - low) / (high - low) if high > low else 0.0, 0.0)
        lengths = np.fromiter(
            (len(_text(o)) for o in table.column(self.output)), np.float64, table.n
        )
        rows = np.zeros((table.n, _WIDTH))
        rows[:, _V], rows[:, _S], rows[:, _N] = v, s, complete
        rows[:, _FAILED] = ~complete
        rows[:, _L] = lengths * complete
        rows[:, _L2] = lengths**2 * complete
        rows[:, _SL] = s * lengths
        rows[:, _S2] = s**2
        counts, reasons = _left_out(graded, ~complete)
        return StatBlock(width=_WIDTH, rows=rows, counts=counts, reasons=reasons)


@dataclass(eq=False)
class _Judged(Metric):
    output: str = "output"
    input: str | None = "input"
    reference: str | None = None

    task = "rubric"

    def statistic(self) -> Statistic:
        return JudgedStatistic(self.task, self.output, self.input, self.reference)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., _N]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no record was graded"


@dataclass(eq=False)
class _Aggregated(_Judged):
    aggregate: Aggregate = "mean"
    """A jury's grades of a record: their ``mean``, or the ``majority`` grade
    (:func:`jury_values`)."""

    def statistic(self) -> Statistic:
        return JudgedStatistic(self.task, self.output, self.input, self.reference, self.aggregate)


@register_metric("rubric_score")
@dataclass(eq=False)
class RubricScore(_Aggregated):
    """The mean of the judges' scores on the rubric (the scale's own units, or [0, 1])."""

    definition = (
        "mean of the judges' rubric scores over the graded records (normalize: true maps the "
        "scale to 0-1)."
    )
    maximum = math.inf  # the scale's top is the run's, not the metric's (1-5, 0-10...)

    normalize: bool = False

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        column = _S if self.normalize else _V
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(summed[..., _N] > 0, summed[..., column] / summed[..., _N], np.nan)


@register_metric("correctness")
@dataclass(eq=False)
class Correctness(_Aggregated):
    """The mean grade of the answers against their references: correct 1, partially 0.5,
    incorrect 0 (Inspect's C, P, I)."""

    definition = (
        "mean of the judges' grades of each answer against its reference: correct 1, partially "
        "correct 0.5, incorrect 0."
    )
    reference: str | None = "reference"
    task = "correctness"

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(summed[..., _N] > 0, summed[..., _S] / summed[..., _N], np.nan)


class JudgedLabelStatistic(JudgedStatistic):
    """Per record, the share of its jury's majority given to one grade of the scale (``label``:
    a label, or a point of a points scale): 1 when the majority gave it, 1/k when it is one of k
    grades tied for the majority, else 0. Rows ``[share, graded, left out]``."""

    def __init__(
        self, task: str, output: str, input: str | None, reference: str | None, label: str
    ):
        super().__init__(task, output, input, reference)
        self.label = label

    @property
    def key(self) -> Hashable:
        return (
            "judged-label",
            self.judge_task,
            self.output,
            self.input,
            self.reference,
            self.label,
        )

    def column_names(self, width: int) -> list[str]:
        return [f"share {self.label}", "graded", "left out"]

    def _value(self, scale: Any) -> float:
        """The value the scale gives ``label`` (an error naming the scale's grades if none)."""
        if scale.kind == "labels":
            found = scale.find_label(self.label)
            if found is not None:
                return float(scale.value_of(found))
            grades = list(scale.labels)
        else:
            grades = [_point(p) for p in scale.points]
            if self.label in grades:
                return float(scale.points[grades.index(self.label)])
        raise SuiteError(
            f"label_rate: {self.label!r} is not a grade of the judge's scale {scale.spec!r}"
            + (f"; its grades are {grades}" if grades else " (a continuous scale has none)")
        )

    def compute(self, table: Table, context: Context) -> StatBlock:
        graded = context.grades(self.key)
        values = graded.values
        complete = ~np.isnan(values).any(axis=1)
        target = self._value(graded.scale)
        hits = (values == target).sum(axis=1)
        counts = (values[:, :, None] == values[:, None, :]).sum(axis=2)
        top = counts.max(axis=1) if values.shape[1] else np.zeros(table.n)
        modal = counts == top[:, None]
        # the number of distinct grades tied for the majority: each modal grade appears `top`
        # times among the modal entries
        with np.errstate(invalid="ignore", divide="ignore"):
            tied = modal.sum(axis=1) / np.maximum(top, 1)
            share = np.where(hits == top, 1.0 / tied, 0.0)
        rows = np.zeros((table.n, 3))
        rows[:, 0] = np.where(complete, share, 0.0)
        rows[:, 1], rows[:, 2] = complete, ~complete
        counts_out, reasons = _left_out(graded, ~complete)
        return StatBlock(width=3, rows=rows, counts=counts_out, reasons=reasons)


def _point(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)


@register_metric("label_rate")
@dataclass(eq=False)
class LabelRate(_Judged):
    """The share of records whose grade is ``label`` (a label of the judge's scale, or a point of
    a points scale; ``task: correctness`` for the C / P / I grades against a reference); a
    jury's grade is its majority, a tie between k grades counting 1/k for each."""

    definition = (
        "share of the graded records the judges gave the grade `label` (a jury: its majority; "
        "k grades tied count 1/k each)."
    )
    maximum = 1.0

    label: str = REQUIRED
    grading: Literal["rubric", "correctness"] = "rubric"
    """What the grade is of: the ``rubric`` score (the run's scale) or ``correctness`` (C, P,
    I against ``reference``)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.grading == "correctness" and self.reference is None:
            self.reference = "reference"

    def statistic(self) -> Statistic:
        return JudgedLabelStatistic(
            self.grading, self.output, self.input, self.reference, str(self.label)
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(summed[..., 1] > 0, summed[..., 0] / summed[..., 1], np.nan)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]


@register_metric("score_length_correlation")
@dataclass(eq=False)
class ScoreLengthCorrelation(_Judged):
    """Pearson's r of the rubric score and the answer's length in characters over the graded
    records: a judge that prefers long answers (verbosity bias) shows a positive r."""

    measures_the_judge = True

    definition = (
        "Pearson correlation of the rubric score and the answer's length in characters (a "
        "judge's verbosity bias: near 0 is unbiased)."
    )
    per_record = False
    higher_is_better = False
    maximum = 1.0

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        n, s, length = summed[..., _N], summed[..., _S], summed[..., _L]
        sxx = n * summed[..., _S2] - s * s
        syy = n * summed[..., _L2] - length * length
        sxy = n * summed[..., _SL] - s * length
        with np.errstate(invalid="ignore", divide="ignore"):
            r = sxy / np.sqrt(sxx * syy)
        return np.where((n >= 3) & (sxx > 0) & (syy > 0), np.clip(r, -1.0, 1.0), np.nan)

    def undefined_reason(self, summed: np.ndarray) -> str:
        summed = np.asarray(summed, dtype=np.float64)
        if summed[_N] < 3:
            return "fewer than 3 graded records"
        return "every graded record has the same score or the same length"


AgreementLevel = Literal["nominal", "ordinal", "interval"]


def _default_scale() -> Scale:
    """The judge's scale when no run gave one (the suite's ``judge.scale`` default, 1-5)."""
    from ..judged import parse_scale

    return parse_scale("1-5")


def _left_out(graded: Any, left: np.ndarray) -> tuple[dict[str, int], dict[str, np.ndarray]]:
    """The counts and reasons of the records ``left`` out because a judge gave them no grade
    (each judge's reason), for the judge-failure policy."""
    failed = int(left.sum())
    if not failed:
        return {}, {}
    reasons = np.full(left.size, None, dtype=object)
    for i in np.flatnonzero(left).tolist():
        why = [
            f"{judge}: {reason}"
            for judge, reason in zip(graded.judges, graded.failures[i], strict=True)
            if reason is not None
        ]
        reasons[i] = "; ".join(why)
    return {"judge_failed_records": failed}, {LEFT_OUT: reasons}


class JudgeAgreementStatistic(JudgedStatistic):
    """Krippendorff's alpha rows (:mod:`pingce.metrics.agreement`) of the judges' grades of
    each record at one level of measurement: the record is the unit, each judge a rater, a
    grade a judge did not give missing. Ordinal and nominal code each judge's stated grade by
    its place among the scale's declared values (points or labels), never by the values the
    records happen to use; interval reads the grades as numbers on the scale's own units
    (G-Eval's weighted scores too). So the rows' layout is the scale's: every run, comparison
    side and Ray piece of one scale adds up column by column."""

    def __init__(
        self,
        task: str,
        output: str,
        input: str | None,
        reference: str | None,
        level: AgreementLevel,
        scale: Scale,
    ):
        super().__init__(task, output, input, reference)
        self.level, self.scale = level, scale

    @property
    def key(self) -> Hashable:
        return (
            "judged agreement",
            self.judge_task,
            self.output,
            self.input,
            self.reference,
            self.level,
            self.scale.spec,
        )

    def column_names(self, width: int) -> list[str]:
        if self.level == "interval":
            return ["pairable unit", "pairable ratings", "sum", "sum of squares", "within"]
        names = [_shown(v) for v in self.scale.declared]
        if self.level == "ordinal":
            return ["pairable unit"] + [f"o[{a},{b}]" for a in names for b in names]
        return ["pairable unit", "within"] + [f"n[{a}]" for a in names]

    def check(self, table: Table) -> None:
        super().check(table)
        if self.level == "ordinal":
            check_ordinal_size(table, len(self.scale.declared), self.output)

    def compute(self, table: Table, context: Context) -> StatBlock:
        graded = _graded(context, self.key, self.scale)
        if self.level == "interval":
            record, judge = np.nonzero(~np.isnan(graded.values))  # record by record
            numbers = graded.values[record, judge]
            coded = Coded(record.astype(np.intp), np.zeros(numbers.size, np.intp), (), numbers)
        else:
            record, judge = np.nonzero(graded.codes >= 0)
            codes = np.asarray(graded.codes[record, judge], dtype=np.intp)
            coded = Coded(record.astype(np.intp), codes, self.scale.declared, None)
        rows = agreement_rows(coded, table.n, self.level)
        return StatBlock(width=rows.shape[1], rows=rows)


def _shown(value: float | str) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _graded(context: Context, key: Hashable, scale: Scale) -> Any:
    """The grades of ``key``, read on the scale the statistic was planned with."""
    graded = context.grades(key)
    if graded.scale.spec != scale.spec:
        raise RuntimeError(
            f"the judges graded on {graded.scale.spec}, but the statistic was planned for "
            f"{scale.spec}"
        )
    return graded


@dataclass(eq=False)
class JuryAgreement(_Judged):
    """A jury's agreement over the records: the layout of its rows is the run's judge scale's,
    given at plan time (:meth:`grade_on`; :func:`pingce.engine.judge_setup.grade_on_scale`),
    the suite's default 1-5 until then."""

    measures_the_judge = True

    per_record = False

    def __post_init__(self) -> None:
        super().__post_init__()
        self.grade_on(_default_scale())

    def grade_on(self, scale: Scale) -> None:
        """Lay the statistic out on ``scale``; ValueError when the metric cannot read it."""
        self._scale = scale


@register_metric("judge_agreement")
@dataclass(eq=False)
class JudgeAgreement(JuryAgreement):
    """Krippendorff's alpha of a jury's rubric grades (each record a unit, each judge a
    rater) at the scale's level of measurement: 1 when the judges agree on every record, near
    0 when they agree no more than chance."""

    definition = (
        "Krippendorff's alpha of the judges' rubric grades over the records (a jury's "
        "agreement), at the scale's level: ordinal for points, interval for 0-1, nominal for "
        "labels."
    )
    level: AgreementLevel | None = None
    """The level of measurement; None: the scale's (points ordinal, a continuous range
    interval, labels nominal). ``interval`` reads points and labels as their values."""

    def grade_on(self, scale: Scale) -> None:
        level = self.level or scale.level
        if level != "interval" and scale.kind == "continuous":
            raise ValueError(
                f"judge_agreement at the {level} level codes the grades by the scale's values, "
                f"and the scale {scale.spec.partition(':')[2]} is continuous (any number in "
                "the range): leave level out, or give level: interval"
            )
        super().grade_on(scale)
        self._level: AgreementLevel = level
        self._alpha = KrippendorffAlpha(level=level)

    def statistic(self) -> Statistic:
        return JudgeAgreementStatistic(
            self.task, self.output, self.input, self.reference, self._level, self._scale
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        return self._alpha.finalize(summed)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return self._alpha.count(summed)

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(np.asarray(summed, dtype=np.float64)[..., 0]) == 0:
            return "no record was graded by two or more judges: give --judge more than once"
        return self._alpha.undefined_reason(summed)


class JudgeFleissStatistic(JudgedStatistic):
    """Fleiss' kappa rows (:func:`pingce.metrics.agreement.fleiss_rows`) of the records every
    judge of a jury graded, each judge's stated grade a category among the scale's declared
    values; a record some judge did not grade is left out (the judge-failure policy), and with
    one judge, or on a continuous scale, no record counts."""

    def __init__(
        self, task: str, output: str, input: str | None, reference: str | None, scale: Scale
    ):
        super().__init__(task, output, input, reference)
        self.scale = scale

    @property
    def key(self) -> Hashable:
        return (
            "judged fleiss",
            self.judge_task,
            self.output,
            self.input,
            self.reference,
            self.scale.spec,
        )

    def column_names(self, width: int) -> list[str]:
        return ["record", "P_i"] + [f"n[{_shown(v)}]" for v in self.scale.declared]

    def compute(self, table: Table, context: Context) -> StatBlock:
        graded = _graded(context, self.key, self.scale)
        judges = graded.codes.shape[1]
        failed = (graded.failures != None).any(axis=1)  # noqa: E711  (object array)
        complete = ~failed & (graded.codes >= 0).all(axis=1) & (judges >= 2)
        record, judge = np.nonzero((graded.codes >= 0) & complete[:, None])
        codes = np.asarray(graded.codes[record, judge], dtype=np.intp)
        coded = Coded(record.astype(np.intp), codes, self.scale.declared, None)
        rows = fleiss_rows(coded, table.n, max(judges, 2))
        rows[~complete] = 0.0
        counts, reasons = _left_out(graded, failed)
        return StatBlock(width=rows.shape[1], rows=rows, counts=counts, reasons=reasons)


@register_metric("judge_fleiss_kappa")
@dataclass(eq=False)
class JudgeFleissKappa(JuryAgreement):
    """Fleiss' kappa of a jury's rubric grades as categories (the scale's labels or points)
    over the records every judge graded, as statsmodels' ``fleiss_kappa``."""

    definition = (
        "Fleiss' kappa of the judges' rubric grades as categories (the scale's labels or "
        "points) over the records every judge graded (a jury's agreement on labels)."
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        self._kappa = FleissKappa()

    def statistic(self) -> Statistic:
        return JudgeFleissStatistic(self.task, self.output, self.input, self.reference, self._scale)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        return self._kappa.finalize(summed)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return self._kappa.count(summed)

    def undefined_reason(self, summed: np.ndarray) -> str:
        if self._scale.kind == "continuous":
            return (
                f"Fleiss' kappa counts grades as categories, and the scale "
                f"{self._scale.spec.partition(':')[2]} is continuous: see judge_agreement"
            )
        if float(np.asarray(summed, dtype=np.float64)[..., 0]) == 0:
            return "no record was graded by every judge of a jury: give --judge more than once"
        return self._kappa.undefined_reason(summed)


class PairwiseStatistic(Statistic):
    """Per record, the judges' preference between ``output_a`` and ``output_b``, asked in both
    orders (two prompts a record: ``output_a`` shown first, then ``output_b`` first). A verdict
    counts when both orders agree; when they disagree the record is a tie, and an
    order-dependent verdict (position bias). Rows, per record graded by every judge in both
    orders: ``[A's win (1, 0.5 tie, 0), 1, order-dependent, 0, first shown chosen twice]``,
    averaged over the judges (``[0, 0, 0, 1, 0]`` for a record left out)."""

    needs_judge = True
    judge_task = "pairwise"
    prompts_per_record = 2

    def __init__(self, output_a: str, output_b: str, input: str | None):
        self.output_a, self.output_b, self.input = output_a, output_b, input
        self.reference = None

    @property
    def key(self) -> Hashable:
        return ("judged pairwise", self.output_a, self.output_b, self.input)

    def fields(self) -> list[FieldSpec]:
        specs = [
            FieldSpec(self.output_a, "json", required=False, what="the first answer compared"),
            FieldSpec(self.output_b, "json", required=False, what="the second answer compared"),
        ]
        if self.input is not None:
            specs.append(FieldSpec(self.input, "json", required=False, what="what was asked"))
        return specs

    def judge_texts(self, table: Table) -> list[dict[str, str]]:
        """Two prompts a record: its answers as they are, then swapped."""
        inputs = table.column(self.input) if self.input is not None else [None] * table.n
        out: list[dict[str, str]] = []
        for i, a, b in zip(
            inputs, table.column(self.output_a), table.column(self.output_b), strict=True
        ):
            out.append({"input": _text(i), "output_a": _text(a), "output_b": _text(b)})
            out.append({"input": _text(i), "output_a": _text(b), "output_b": _text(a)})
        return out

    def column_names(self, width: int) -> list[str]:
        return ["A's win", "graded", "order-dependent", "left out", "first shown chosen twice"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        graded = context.grades(self.key)
        judges = len(graded.judges)
        values = graded.values.reshape(table.n, 2, judges)  # record, order, judge
        shown_first = values[:, 0, :]  # A's win with A first
        swapped = 1.0 - values[:, 1, :]  # A's win read from the swapped prompt
        complete = ~np.isnan(values).any(axis=(1, 2))
        agree = shown_first == swapped
        win = np.where(agree, shown_first, 0.5)
        first_twice = (values[:, 0, :] == 1.0) & (values[:, 1, :] == 1.0)
        rows = np.zeros((table.n, 5))
        with np.errstate(invalid="ignore"):
            rows[:, 0] = np.where(complete, win.mean(axis=1), 0.0)
            rows[:, 2] = np.where(complete, (~agree).mean(axis=1), 0.0)
            rows[:, 4] = np.where(complete, first_twice.mean(axis=1), 0.0)
        rows[:, 1], rows[:, 3] = complete, ~complete
        left_out = np.full(table.n, None, dtype=object)
        failures = graded.failures.reshape(table.n, 2, judges)
        for i in np.flatnonzero(~complete).tolist():
            why = [
                f"{graded.judges[j]} ({'output_a' if o == 0 else 'output_b'} first): {reason}"
                for o in range(2)
                for j, reason in enumerate(failures[i, o])
                if reason is not None
            ]
            left_out[i] = "; ".join(why)
        failed = int((~complete).sum())
        counts = {"judge_failed_records": failed} if failed else {}
        reasons = {LEFT_OUT: left_out} if failed else {}
        return StatBlock(width=5, rows=rows, counts=counts, reasons=reasons)


@dataclass(eq=False)
class _Pairwise(Metric):
    output_a: str = "output_a"
    output_b: str = "output_b"
    input: str | None = "input"

    def statistic(self) -> Statistic:
        return PairwiseStatistic(self.output_a, self.output_b, self.input)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no pair was judged in both orders"

    def _mean(self, summed: np.ndarray, column: int) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(summed[..., 1] > 0, summed[..., column] / summed[..., 1], np.nan)


@register_metric("win_rate")
@dataclass(eq=False)
class WinRate(_Pairwise):
    """How often ``output_a`` is preferred to ``output_b`` (a tie counts a half), each pair
    asked in both orders and a verdict that changes with the order counted as a tie."""

    definition = (
        "share of pairs where the judges prefer output_a (ties a half), asked in both orders; a "
        "verdict that flips with the order is a tie."
    )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        return self._mean(summed, 0)


@register_metric("position_bias")
@dataclass(eq=False)
class PositionBias(_Pairwise):
    """The share of pairs whose verdict changed when the answers swapped places: the judge's
    position bias (0 for a judge the order never sways)."""

    measures_the_judge = True

    definition = "share of pairs whose verdict changes when the two answers swap places."
    higher_is_better = False
    per_record = False

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        return self._mean(summed, 2)
