"""Classification metrics on an ordered label scale, all computed from one confusion matrix.

Every metric here reads the same statistic: each record adds 1 to cell ``(gold, predicted)`` of a
``k x k`` confusion matrix (rows gold, columns predicted, labels in scale order). Summed, that
matrix is all that accuracy, weighted accuracy, precision/recall/F1 in every averaging mode and
Cohen's kappa (unweighted, linear, quadratic) need, so a bootstrap resample costs one
``np.bincount``. Definitions and the zero-division policy follow scikit-learn's, and the tests
check every value against it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..labels import RISK_LEVELS, LabelScale
from ..records import FieldSpec, Table
from ._policy import ZeroDivision, check_zero_division, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic, TableMetric
from .registry import register_metric, register_table

__all__ = [
    "Accuracy",
    "CohenKappa",
    "ConfusionMatrixTable",
    "ConfusionStatistic",
    "PerClassTable",
    "PrecisionRecallF1",
    "WeightedAccuracy",
]

Average = Literal["binary", "macro", "micro", "weighted"]
KappaWeights = Literal["none", "linear", "quadratic"]
Kind = Literal["precision", "recall", "f1"]


class ConfusionStatistic(Statistic):
    """Each record is one cell ``gold * k + pred`` of the flattened confusion matrix.

    Reasons (one text per cell, looked up by code): ``label`` says "gold 高, predicted 中",
    ``level`` adds how many levels apart and the credit of weighted accuracy."""

    def __init__(self, gold: str, pred: str, scale: LabelScale):
        self.gold = gold
        self.pred = pred
        self.scale = scale

    @property
    def key(self) -> Hashable:
        return ("confusion", self.gold, self.pred, self.scale.labels)

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.gold, "label", scale=self.scale),
            FieldSpec(self.pred, "label", scale=self.scale),
        ]

    def _cell_reasons(self) -> dict[str, np.ndarray]:
        k, labels = self.scale.k, self.scale.labels
        label = np.empty(k * k, dtype=object)
        level = np.empty(k * k, dtype=object)
        for g in range(k):
            for p in range(k):
                if g == p:
                    continue
                text = f"gold {labels[g]}, predicted {labels[p]}"
                d = abs(g - p)
                apart = "one level apart" if d == 1 else f"{d} levels apart"
                label[g * k + p] = text
                level[g * k + p] = f"{text}: {apart} (credit {1.0 - d / (k - 1):g})"
        return {"label": label, "level": level}

    def compute(self, table: Table, context: Context) -> StatBlock:
        k = self.scale.k
        dtype = np.int8 if k * k <= 127 else np.int16 if k * k <= 32767 else np.int64
        gold = table.column(self.gold).astype(dtype)
        pred = table.column(self.pred).astype(dtype)
        codes = gold * dtype(k) + pred
        reasons = {name: cells[codes] for name, cells in self._cell_reasons().items()}
        return StatBlock(width=k * k, codes=codes, reasons=reasons)


def _nanmean(values: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean over the last axis ignoring NaN (scikit-learn's ``_nanaverage``); all-NaN gives NaN.

    With weights, NaN entries drop out with their weights; if the remaining weights sum to 0
    the plain mean of the remaining values is used, as scikit-learn does.
    """
    valid = ~np.isnan(values)
    filled = np.where(valid, values, 0.0)
    count = valid.sum(axis=-1)
    plain = safe_divide(filled.sum(axis=-1), count, None)
    if weights is None:
        return plain
    w = np.where(valid, weights, 0.0)
    wsum = w.sum(axis=-1)
    weighted = safe_divide((filled * w).sum(axis=-1), wsum, None)
    return np.asarray(np.where(wsum > 0, weighted, plain), dtype=np.float64)


@dataclass(eq=False)
class ConfusionMetric(Metric):
    """Base of the metrics computed from the confusion matrix."""

    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        self.k = self.scale.k
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        return ConfusionStatistic(self.gold, self.pred, self.scale)

    def matrix(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return summed.reshape(*summed.shape[:-1], self.k, self.k)

    def total(self, summed: np.ndarray) -> np.ndarray:
        total: np.ndarray = np.asarray(summed, dtype=np.float64).sum(axis=-1)
        return total

    def count(self, summed: np.ndarray) -> np.ndarray:
        return self.total(summed)

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no records"


@register_metric("accuracy")
@dataclass(eq=False)
class Accuracy(ConfusionMetric):
    """Share of records whose predicted label equals the gold label."""

    definition = "correct / total: share of records whose predicted label equals the gold label"
    reason = "label"

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        return safe_divide(np.trace(c, axis1=-2, axis2=-1), self.total(summed), self.zero_division)


@register_metric("weighted_accuracy")
@dataclass(eq=False)
class WeightedAccuracy(ConfusionMetric):
    """Mean of 1 - |gold - pred| / (k - 1) over records: 1 / 0.5 / 0 on a three-level scale."""

    definition = (
        "mean of 1 - |gold - pred|/(k - 1) over records (three levels: exact 1, one apart 0.5, "
        "two apart 0)"
    )
    reason = "level"

    def __post_init__(self) -> None:
        super().__post_init__()
        idx = np.arange(self.k)
        self.credit = 1.0 - np.abs(idx[:, None] - idx[None, :]) / (self.k - 1)
        """Credit of cell (gold i, predicted j): 1 - |i - j| / (k - 1)."""

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        return safe_divide(
            (c * self.credit).sum(axis=(-2, -1)), self.total(summed), self.zero_division
        )


@dataclass(eq=False)
class PrecisionRecallF1(ConfusionMetric):
    """Precision, recall or F1: of the positive labels (binary) or averaged over classes."""

    per_record = False

    average: Average = "binary"
    positive: Sequence[str] | None = None
    kind: Kind = "precision"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.average not in ("binary", "macro", "micro", "weighted"):
            raise ValueError(
                f"average must be one of binary, macro, micro, weighted; got {self.average!r}"
            )
        if self.kind not in ("precision", "recall", "f1"):
            raise ValueError(f"kind must be precision, recall or f1; got {self.kind!r}")
        scale = self.scale
        positive = self.positive
        if positive is None:
            positive = list(scale.labels[:-1])
        if isinstance(positive, str):
            positive = [positive]
        codes = []
        for label in positive:
            code = scale.code(label)
            if code is None:
                raise ValueError(f"positive label {label!r} is not {scale.describe()}")
            codes.append(code)
        if not codes or len(set(codes)) == self.k:
            raise ValueError(
                f"positive labels must be a non-empty proper subset of {list(scale.labels)}, "
                f"got {list(positive)}"
            )
        self.positive_codes = sorted(set(codes))
        self.positive_names = [scale.labels[c] for c in self.positive_codes]
        mask = np.zeros(self.k, dtype=bool)
        mask[self.positive_codes] = True
        self.mask = mask

    def _binary_counts(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m = self.mask
        tp = c[..., m, :][..., :, m].sum(axis=(-2, -1))
        pred_pos = c[..., :, m].sum(axis=(-2, -1))
        true_pos = c[..., m, :].sum(axis=(-2, -1))
        return tp, pred_pos, true_pos

    def _score(self, tp: np.ndarray, pred: np.ndarray, true: np.ndarray) -> np.ndarray:
        zd = self.zero_division
        if self.kind == "precision":
            return safe_divide(tp, pred, zd)
        if self.kind == "recall":
            return safe_divide(tp, true, zd)
        return safe_divide(2 * tp, pred + true, zd)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        if self.average == "binary":
            return self._score(*self._binary_counts(c))
        tp = np.diagonal(c, axis1=-2, axis2=-1)
        pred = c.sum(axis=-2)
        true = c.sum(axis=-1)
        if self.average == "micro":
            return self._score(tp.sum(axis=-1), pred.sum(axis=-1), true.sum(axis=-1))
        per_class = self._score(tp, pred, true)
        if self.average == "macro":
            return _nanmean(per_class)
        return _nanmean(per_class, weights=true)

    def count(self, summed: np.ndarray) -> np.ndarray:
        if self.average != "binary":
            return self.total(summed)
        tp, pred, true = self._binary_counts(self.matrix(summed))
        if self.kind == "precision":
            return pred
        if self.kind == "recall":
            return true
        involved: np.ndarray = pred + true - tp
        return involved

    def undefined_reason(self, summed: np.ndarray) -> str:
        pos = "/".join(self.positive_names)
        if self.average == "binary":
            if self.kind == "precision":
                return f"no record was predicted positive ({pos}): precision is 0/0"
            if self.kind == "recall":
                return f"no gold positive ({pos}) records: recall is 0/0"
            return f"no gold or predicted positive ({pos}) records: F1 is 0/0"
        if float(self.total(summed)) == 0:
            return "no records"
        return f"{self.kind} is 0/0 for every class"


_KIND_TEXT = {
    "precision": "TP / (TP + FP)",
    "recall": "TP / (TP + FN)",
    "f1": "2TP / (2TP + FP + FN)",
}
_AVERAGE_TEXT = {
    "macro": "per class, unweighted mean over the classes where it is defined",
    "micro": "from TP, FP, FN summed over classes (equals accuracy for single-label data)",
    "weighted": "per class, mean weighted by gold support",
}

for _kind in ("precision", "recall", "f1"):
    register_metric(
        _kind,
        definition=f"{_KIND_TEXT[_kind]} with the positive labels as one class (default: every "
        "label but the last, i.e. 高 and 中), or averaged over classes with `average`",
        kind=_kind,
    )(PrecisionRecallF1)
    for _average in ("macro", "micro", "weighted"):
        register_metric(
            f"{_average}_{_kind}",
            definition=f"{_kind} {_AVERAGE_TEXT[_average]}",
            kind=_kind,
            average=_average,
            positive=None,
        )(PrecisionRecallF1)


@dataclass(eq=False)
class CohenKappa(ConfusionMetric):
    """Cohen's kappa 1 - sum(w*O)/sum(w*E); weights none, linear |i-j| or quadratic (i-j)^2."""

    per_record = False
    definition = (
        "Cohen's kappa: 1 - sum(w*O)/sum(w*E), O observed and E chance confusion; weights none, "
        "linear |i-j| or quadratic (i-j)^2 over scale positions"
    )

    weights: KappaWeights = "none"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weights not in ("none", "linear", "quadratic"):
            raise ValueError(f"weights must be none, linear or quadratic; got {self.weights!r}")
        idx = np.arange(self.k, dtype=np.float64)
        diff = idx[None, :] - idx[:, None]
        if self.weights == "none":
            self.w = (diff != 0).astype(np.float64)
        elif self.weights == "linear":
            self.w = np.abs(diff)
        else:
            self.w = diff**2

    def _parts(self, summed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self.matrix(summed)
        n = c.sum(axis=(-2, -1))
        pred = c.sum(axis=-2)
        true = c.sum(axis=-1)
        expected = safe_divide(pred[..., :, None] * true[..., None, :], n[..., None, None], 0.0)
        observed_w = (self.w * c).sum(axis=(-2, -1))
        expected_w = (self.w * expected).sum(axis=(-2, -1))
        return observed_w, expected_w

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        observed_w, expected_w = self._parts(summed)
        # kappa is 1 - O/E; a 0/0 ratio is undefined whatever the policy (it is not a ratio
        # metric whose convention users choose)
        return 1.0 - safe_divide(observed_w, expected_w, None)

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(self.total(summed)) == 0:
            return "no records"
        return (
            "chance disagreement is 0 (gold and predictions all use the same single label): "
            "kappa is 0/0"
        )


register_metric("cohen_kappa", zero_division=None)(CohenKappa)
register_metric(
    "qwk",
    definition="Quadratic weighted kappa: Cohen's kappa with weights (i-j)^2 over scale positions",
    weights="quadratic",
    zero_division=None,
)(CohenKappa)
register_metric(
    "linear_kappa",
    definition="Linear weighted kappa: Cohen's kappa with weights |i-j| over scale positions",
    weights="linear",
    zero_division=None,
)(CohenKappa)


@register_table("confusion_matrix")
@dataclass(eq=False)
class ConfusionMatrixTable(TableMetric):
    """Counts of (gold, predicted) pairs; rows gold, columns predicted, in scale order."""

    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS

    def statistic(self) -> Statistic:
        return ConfusionStatistic(self.gold, self.pred, self.scale)

    def build(self, summed: np.ndarray) -> dict[str, Any]:
        k = self.scale.k
        matrix = np.asarray(summed).reshape(k, k)
        return {
            "labels": list(self.scale.labels),
            "matrix": [[round(float(x)) for x in row] for row in matrix],
        }


@register_table("per_class")
@dataclass(eq=False)
class PerClassTable(TableMetric):
    """Precision, recall, F1 and gold support of each label (one-vs-rest)."""

    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        return ConfusionStatistic(self.gold, self.pred, self.scale)

    def build(self, summed: np.ndarray) -> dict[str, Any]:
        k = self.scale.k
        c = np.asarray(summed, dtype=np.float64).reshape(k, k)
        tp = np.diag(c)
        pred = c.sum(axis=0)
        true = c.sum(axis=1)
        zd = self.zero_division

        def clean(values: np.ndarray) -> list[float | None]:
            return [None if np.isnan(v) else float(v) for v in values]

        return {
            "labels": list(self.scale.labels),
            "precision": clean(safe_divide(tp, pred, zd)),
            "recall": clean(safe_divide(tp, true, zd)),
            "f1": clean(safe_divide(2 * tp, pred + true, zd)),
            "support": [int(x) for x in true],
            "predicted": [int(x) for x in pred],
        }
