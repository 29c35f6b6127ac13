"""Scores another tool already gave each record: the mean of a numeric field.

An Inspect scorer's value, a promptfoo assertion's score, an lm-eval metric's per-sample value,
a BFCL verdict: each record carries the number the tool recorded, and the metric is their mean
over the records that have one (``n`` says how many). A record without one (``null`` or absent)
is left out and counted, never read as 0. When every value is 0 or 1 the mean is a rate, and a
comparison of two runs adds McNemar's exact test (:func:`pingce.stats.mcnemar_exact`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..records import FieldSpec, Table
from ._policy import ZeroDivision, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import REQUIRED, register_metric

__all__ = ["MeanScore", "MeanScoreLower", "PresentMean", "ScoreStatistic"]


class ScoreStatistic(Statistic):
    """Per record ``[value, 1]``, or ``[0, 0]`` without a value."""

    def __init__(self, field: str):
        self.field = field

    @property
    def key(self) -> Hashable:
        return ("score", self.field)

    def fields(self) -> list[FieldSpec]:
        return [FieldSpec(self.field, "number", required=False)]

    def column_names(self, width: int) -> list[str]:
        return [self.field, "has a score"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        values = np.asarray(table.column(self.field), dtype=np.float64)
        present = ~np.isnan(values)
        rows = np.stack([np.where(present, values, 0.0), present.astype(np.float64)], axis=1)
        return StatBlock(width=2, rows=rows)


@dataclass(eq=False)
class PresentMean(Metric):
    """The mean of a per-record value over the records that have one: rows ``[value, 1]`` or
    ``[0, 0]`` summed, their ratio (the zero-division policy when no record has one). Its
    subclasses say which field (``field``) and how it is read (:meth:`statistic`)."""

    if TYPE_CHECKING:  # the subclasses' arguments, declared there (the order they show in)
        field: str
        zero_division: ZeroDivision

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return safe_divide(summed[..., 0], summed[..., 1], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return f"no record has {self.field}"


@register_metric("mean_score")
@dataclass(eq=False)
class MeanScore(PresentMean):
    """The mean of a per-record score (``field``) over the records that have one."""

    definition = "mean of the field over the records that have a value."

    field: str = REQUIRED
    zero_division: ZeroDivision = None

    def statistic(self) -> Statistic:
        return ScoreStatistic(self.field)


@register_metric("mean_score_lower")
@dataclass(eq=False)
class MeanScoreLower(MeanScore):
    """:class:`MeanScore` of a score where lower is better (a perplexity, an error rate)."""

    higher_is_better: ClassVar[bool] = False
