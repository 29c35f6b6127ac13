"""Classification metrics on an ordered label scale, all computed from one confusion matrix.

Every metric here reads the same statistic: each record adds 1 to cell ``(gold, predicted)`` of a
``k x (k + 1)`` confusion matrix (rows gold, columns predicted, labels in scale order; the last
column holds the predictions off the scale, :data:`~pingce.labels.INVALID`). Summed, that matrix
is all that accuracy, weighted accuracy, precision/recall/F1/F-beta in every averaging mode and
Cohen's kappa (unweighted, linear, quadratic) need, so a bootstrap resample costs one
``np.bincount``. Definitions and the zero-division policy follow scikit-learn's, and the tests
check every value against it.

A prediction off the scale is a wrong answer, scored as scikit-learn scores a predicted label
that is none of ``labels`` (the invalid prediction kept as a class of its own): wrong for
accuracy (and no credit in weighted accuracy), never a predicted positive (a gold positive is a
false negative; a gold negative, as in scikit-learn, a true negative), in the gold support of
its row. The kappas need a position on the scale: they leave such records out and say how many.

scikit-learn's options, with the same meaning:

* ``sample_weight: FIELD`` (every metric and table here): record ``i`` adds its weight ``w_i``
  (a finite number >= 0 read from ``FIELD``) to its cell instead of 1. The rows are then dense:
  ``k*(k+1)`` weighted cells followed by as many cells of ``[w_i > 0]``, which still add up, so
  bootstrap, slices and comparisons are unchanged. Values come from the weighted cells; ``n``
  (how many units a value is computed over) from the indicator cells: a record of weight 0
  counts for nothing, as in scikit-learn, and is not counted in ``n``.
* ``labels`` (precision/recall/F1/F-beta averaged ``macro``/``micro``/``weighted``, the kappas,
  ``confusion_matrix``, ``per_class``): the labels averaged over (labels absent from the data
  included, through ``zero_division``), or the rows and columns of the matrix kept, in the order
  given. Accuracy has no ``labels`` (in scikit-learn neither); a binary metric has its
  ``positive`` labels instead.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

import numpy as np

from .._constraints import Checked, Range
from ..labels import INVALID, RISK_LEVELS, LabelScale
from ..records import FieldSpec, Table
from ._policy import ZeroDivision, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic, TableMetric
from .registry import REQUIRED, register_metric, register_table

__all__ = [
    "Accuracy",
    "CohenKappa",
    "ConfusionMatrixTable",
    "ConfusionStatistic",
    "FBeta",
    "PerClassTable",
    "PrecisionRecallF1",
    "WeightedAccuracy",
    "parse_labels",
]

Average = Literal["binary", "macro", "micro", "weighted"]
KappaWeights = Literal["none", "linear", "quadratic"]
Kind = Literal["precision", "recall", "f1"]

LabelList = Sequence[str | int]

_WEIGHT_TEXT = "a sample weight (a finite number >= 0)"


class ConfusionStatistic(Statistic):
    """Each record is one cell ``gold * (k + 1) + pred`` of the flattened ``k x (k + 1)``
    confusion matrix; ``pred`` is ``k`` for a prediction off the scale (the field is read
    leniently: a model's answer is never an input error; a gold label off the scale is).

    Without a weight field the block is one-hot (``codes``). With one (``weight``), each row is
    ``k*(k+1)`` cells holding the record's weight in its cell, then as many cells holding
    ``[weight > 0]`` in its cell: the weighted matrix and the matrix of records that count.

    Reasons (one text per cell, looked up by code): ``label`` says "gold 高, predicted 中",
    ``level`` adds how many levels apart and the credit of weighted accuracy."""

    def __init__(self, gold: str, pred: str, scale: LabelScale, weight: str | None = None):
        self.gold = gold
        self.pred = pred
        self.scale = scale
        self.weight = weight

    @property
    def key(self) -> Hashable:
        # the columns, the invalid one included (a saved run of k x k cells does not match)
        columns = (*self.scale.labels, INVALID)
        return ("confusion", self.gold, self.pred, columns, self.weight)

    def fields(self) -> list[FieldSpec]:
        specs = [
            FieldSpec(self.gold, "label", scale=self.scale),
            FieldSpec(self.pred, "label", scale=self.scale, lenient=True),
        ]
        if self.weight is not None:
            specs.append(FieldSpec(self.weight, "number", minimum=0.0, what=_WEIGHT_TEXT))
        return specs

    def column_names(self, width: int) -> list[str]:
        """The cells ``gold G · pred P`` (``P`` off the scale: ``invalid``); weighted: the
        weighted cells, then the same cells counting the records of weight above 0."""
        k, labels = self.scale.k, self.scale.labels
        cells = [
            f"gold {labels[g]} · pred {labels[p] if p < k else 'invalid'}"
            for g in range(k)
            for p in range(k + 1)
        ]
        if self.weight is None:
            return cells
        return [f"{cell} (weight)" for cell in cells] + [f"{cell} (counted)" for cell in cells]

    def _cell_reasons(self) -> dict[str, np.ndarray]:
        k, labels = self.scale.k, self.scale.labels
        columns = k + 1
        label = np.empty(k * columns, dtype=object)
        level = np.empty(k * columns, dtype=object)
        for g in range(k):
            for p in range(k):
                if g == p:
                    continue
                text = f"gold {labels[g]}, predicted {labels[p]}"
                d = abs(g - p)
                apart = "one level apart" if d == 1 else f"{d} levels apart"
                label[g * columns + p] = text
                level[g * columns + p] = f"{text}: {apart} (credit {1.0 - d / (k - 1):g})"
            text = f"gold {labels[g]}, prediction not on the scale ({'/'.join(labels)}) or empty"
            label[g * columns + k] = text
            level[g * columns + k] = f"{text}: no level (credit 0)"
        return {"label": label, "level": level}

    def compute(self, table: Table, context: Context) -> StatBlock:
        k = self.scale.k
        cells = k * (k + 1)
        dtype = np.int8 if cells <= 127 else np.int16 if cells <= 32767 else np.int64
        gold = table.column(self.gold).astype(dtype)
        pred = table.column(self.pred).astype(dtype)
        codes = gold * dtype(k + 1) + pred
        reasons = {name: texts[codes] for name, texts in self._cell_reasons().items()}
        if self.weight is None:
            return StatBlock(width=cells, codes=codes, reasons=reasons)
        weights = np.asarray(table.column(self.weight), dtype=np.float64)
        n = codes.shape[0]
        rows = np.zeros((n, 2 * cells), dtype=np.float64)
        at = np.arange(n)
        cell = codes.astype(np.intp)
        rows[at, cell] = weights
        rows[at, cells + cell] = weights > 0
        return StatBlock(width=2 * cells, rows=rows, reasons=reasons)


def parse_labels(labels: object, scale: LabelScale) -> tuple[list[str], np.ndarray]:
    """The scale's names and codes of a ``labels`` argument, in the order given; ``ValueError``
    naming the value for anything but a non-empty list of distinct labels of the scale."""
    if not isinstance(labels, list | tuple):
        raise ValueError(
            f"labels must be a list of labels of the scale ({scale.describe()}), got {labels!r}"
        )
    if not labels:
        raise ValueError(f"labels must name at least one label ({scale.describe()})")
    codes: list[int] = []
    given: dict[int, object] = {}
    for raw in labels:
        code = scale.code(raw)
        if code is None:
            raise ValueError(f"label {raw!r} in labels is not {scale.describe()}")
        if code in given:
            raise ValueError(
                f"labels names {scale.labels[code]!r} twice ({given[code]!r} and {raw!r})"
            )
        given[code] = raw
        codes.append(code)
    return [scale.labels[c] for c in codes], np.asarray(codes, dtype=np.intp)


def _check_weight_field(value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"not a field name: {value!r}")


SampleWeight = Annotated[
    str | None,
    Checked(
        _check_weight_field,
        "the name of the record field that holds each record's weight (a field path such as "
        "`weight`) or null",
    ),
]
"""The record field holding each record's weight (None: every record weighs 1)."""


def _split(summed: np.ndarray, k: int, weighted: bool) -> tuple[np.ndarray, np.ndarray]:
    """The weighted matrix and the matrix of records that count (the same matrix when the
    statistic is unweighted), each of shape ``(..., k, k + 1)``: the last column holds the
    predictions off the scale."""
    summed = np.asarray(summed, dtype=np.float64)
    cells = k * (k + 1)
    expected = 2 * cells if weighted else cells
    if summed.shape[-1] != expected:
        raise ValueError(f"expected {expected} summed cells, got {summed.shape[-1]}")
    lead = summed.shape[:-1]
    if not weighted:
        values = summed.reshape(*lead, k, k + 1)
        return values, values
    # contiguous copies: a stack of vectors is then summed exactly as each one alone
    values = np.ascontiguousarray(summed[..., :cells]).reshape(*lead, k, k + 1)
    counted = np.ascontiguousarray(summed[..., cells:]).reshape(*lead, k, k + 1)
    return values, counted


def _on_scale(c: np.ndarray) -> np.ndarray:
    """The ``k x k`` part of a ``(..., k, k + 1)`` matrix: the records whose prediction is on
    the scale (C-contiguous, so that a stack of matrices sums each one as it would alone)."""
    return np.ascontiguousarray(c[..., :, :-1])


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


_NO_LABELS = (
    "scikit-learn's accuracy_score has no `labels`: accuracy counts every record (restrict the "
    "records with --slice, or use micro_recall with `labels`, which is accuracy over the records "
    "whose gold label is among them)"
)


@dataclass(eq=False)
class ConfusionMetric(Metric):
    """Base of the metrics computed from the confusion matrix."""

    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS
    zero_division: ZeroDivision = None
    sample_weight: SampleWeight = None
    """The record field holding each record's weight (None: every record weighs 1)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.k = self.scale.k

    def statistic(self) -> Statistic:
        return ConfusionStatistic(self.gold, self.pred, self.scale, self.sample_weight)

    def matrices(self, summed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (weighted) confusion matrix and the matrix of records that count, ``k x (k + 1)``
        (the last column: predictions off the scale)."""
        return _split(summed, self.k, self.sample_weight is not None)

    def matrix(self, summed: np.ndarray) -> np.ndarray:
        """The confusion matrix, weighted when the metric has a ``sample_weight``."""
        return self.matrices(summed)[0]

    def total(self, summed: np.ndarray) -> np.ndarray:
        """Sum of the (weighted) confusion matrix."""
        total: np.ndarray = self.matrix(summed).sum(axis=(-2, -1))
        return total

    def count(self, summed: np.ndarray) -> np.ndarray:
        counted: np.ndarray = self.matrices(summed)[1].sum(axis=(-2, -1))
        return counted

    def _no_records(self) -> str:
        return "no records" if self.sample_weight is None else "no records of weight above 0"

    def undefined_reason(self, summed: np.ndarray) -> str:
        return self._no_records()


@register_metric("accuracy")
@dataclass(eq=False)
class Accuracy(ConfusionMetric):
    """Share of records whose predicted label equals the gold label."""

    definition = "correct / total: share of records whose predicted label equals the gold label."
    reason = "label"
    refused_arguments: ClassVar[Mapping[str, str]] = {"labels": _NO_LABELS}

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        return safe_divide(np.trace(c, axis1=-2, axis2=-1), self.total(summed), self.zero_division)


@register_metric("weighted_accuracy")
@dataclass(eq=False)
class WeightedAccuracy(ConfusionMetric):
    """Mean of 1 - |gold - pred| / (k - 1) over records: 1 / 0.5 / 0 on a three-level scale."""

    definition = (
        "mean of 1 - |gold - pred|/(k - 1) over records (three levels: exact 1, one apart 0.5, "
        "two apart 0)."
    )
    reason = "level"
    refused_arguments: ClassVar[Mapping[str, str]] = {
        "labels": "weighted accuracy credits every record by its distance on the whole scale; "
        "it has no `labels` (as accuracy has none in scikit-learn)"
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        idx = np.arange(self.k)
        credit = 1.0 - np.abs(idx[:, None] - idx[None, :]) / (self.k - 1)
        self.credit = np.hstack([credit, np.zeros((self.k, 1))])
        """Credit of cell (gold i, predicted j): 1 - |i - j| / (k - 1); 0 off the scale."""

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        return safe_divide(
            (c * self.credit).sum(axis=(-2, -1)), self.total(summed), self.zero_division
        )


@dataclass(eq=False)
class PrecisionRecallF1(ConfusionMetric):
    """Precision, recall or F1: of the positive labels (binary) or averaged over classes."""

    per_record = False
    refused_arguments: ClassVar[Mapping[str, str]] = {
        "beta": "F-beta is the metric `fbeta` (or macro_fbeta, micro_fbeta, weighted_fbeta)"
    }

    average: Average = "binary"
    positive: Sequence[str] | None = None
    kind: Kind = "precision"
    labels: LabelList | None = None
    """Averaged metrics: the labels averaged over, in any order (None: the whole scale)."""

    @classmethod
    def takes_default(cls, param: str, args: Mapping[str, Any]) -> bool:
        """Whether a suite default of ``param`` reaches the metric with these ``args``: a
        default ``labels`` reaches averaged metrics only (a binary metric counts its ``positive``
        labels as one class; scikit-learn ignores ``labels`` there)."""
        return not (param == "labels" and args.get("average", "binary") == "binary")

    def __post_init__(self) -> None:
        super().__post_init__()
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
        self.predicted_mask = np.append(mask, False)
        """The positive columns: a prediction off the scale is never a predicted positive."""
        if self.labels is not None:
            if self.average == "binary":
                raise ValueError(
                    f"labels {self.labels!r} apply to average macro, micro or weighted; a binary "
                    "metric counts its `positive` labels as one class (set `positive`, or "
                    "`average`)"
                )
            names, self.label_codes = parse_labels(self.labels, scale)
            self.labels = names
        else:
            self.label_codes = np.arange(self.k, dtype=np.intp)
        among = np.zeros(self.k + 1, dtype=bool)
        among[self.label_codes] = True
        self.involved = among[:-1, None] | among[None, :]
        """Cells whose gold or predicted label is averaged over: the records that count."""

    def _binary_counts(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        m, pm = self.mask, self.predicted_mask
        tp = c[..., m, :][..., :, pm].sum(axis=(-2, -1))
        pred_pos = c[..., :, pm].sum(axis=(-2, -1))
        true_pos = c[..., m, :].sum(axis=(-2, -1))
        return tp, pred_pos, true_pos

    def _score(self, tp: np.ndarray, pred: np.ndarray, true: np.ndarray) -> np.ndarray:
        zd = self.zero_division
        if self.kind == "precision":
            return safe_divide(tp, pred, zd)
        if self.kind == "recall":
            return safe_divide(tp, true, zd)
        return safe_divide(2 * tp, pred + true, zd)

    def _class_counts(self, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per-class TP, predicted and gold sums of the averaged labels, shape ``(..., m)``; the
        gold sums count the records predicted off the scale (a miss of their gold class)."""
        tp = np.diagonal(c, axis1=-2, axis2=-1)
        pred = _on_scale(c).sum(axis=-2)
        true = c.sum(axis=-1)
        if self.labels is None:
            return tp, pred, true
        codes = self.label_codes
        return (
            np.ascontiguousarray(tp[..., codes]),
            np.ascontiguousarray(pred[..., codes]),
            np.ascontiguousarray(true[..., codes]),
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        c = self.matrix(summed)
        if self.average == "binary":
            return self._score(*self._binary_counts(c))
        tp, pred, true = self._class_counts(c)
        if self.average == "micro":
            return self._score(tp.sum(axis=-1), pred.sum(axis=-1), true.sum(axis=-1))
        per_class = self._score(tp, pred, true)
        if self.average == "macro":
            return _nanmean(per_class)
        return _nanmean(per_class, weights=true)

    def count(self, summed: np.ndarray) -> np.ndarray:
        counted = self.matrices(summed)[1]
        if self.average != "binary":
            involved: np.ndarray = (counted * self.involved).sum(axis=(-2, -1))
            return involved
        tp, pred, true = self._binary_counts(counted)
        if self.kind == "precision":
            return pred
        if self.kind == "recall":
            return true
        either: np.ndarray = pred + true - tp
        return either

    def _name(self) -> str:
        return "F1" if self.kind == "f1" else self.kind

    def undefined_reason(self, summed: np.ndarray) -> str:
        pos = "/".join(self.positive_names)
        weighted = "" if self.sample_weight is None else " of weight above 0"
        if self.average == "binary":
            if self.kind == "precision":
                return f"no record{weighted} was predicted positive ({pos}): precision is 0/0"
            if self.kind == "recall":
                return f"no gold positive ({pos}) records{weighted}: recall is 0/0"
            return f"no gold or predicted positive ({pos}) records{weighted}: {self._name()} is 0/0"
        if float(self.count(summed[None, :])[0]) == 0:
            if self.labels is None:
                return self._no_records()
            return f"no record{weighted} has a gold or predicted label among {self.labels}"
        among = "" if self.labels is None else f" of {self.labels}"
        return f"{self._name()} is 0/0 for every class{among}"


@dataclass(eq=False)
class FBeta(PrecisionRecallF1):
    """F-beta: (1 + beta²) TP / ((1 + beta²) TP + beta² FN + FP), scikit-learn's fbeta_score."""

    refused_arguments: ClassVar[Mapping[str, str]] = {}

    kind: Literal["fbeta"] = "fbeta"  # type: ignore[assignment]  # the one kind of F-beta
    beta: Annotated[float, Range(0, low_open=True)] = REQUIRED
    """The weight of recall: beta > 1 favours recall, beta < 1 precision, 1 is F1."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.beta = float(self.beta)

    def _score(self, tp: np.ndarray, pred: np.ndarray, true: np.ndarray) -> np.ndarray:
        b2 = self.beta * self.beta
        return safe_divide((1.0 + b2) * tp, b2 * true + pred, self.zero_division)

    def _name(self) -> str:
        return f"F-beta (beta={self.beta:g})"


_KIND_TEXT = {
    "precision": "TP / (TP + FP)",
    "recall": "TP / (TP + FN)",
    "f1": "2TP / (2TP + FP + FN)",
    "fbeta": "(1 + beta²)TP / ((1 + beta²)TP + beta²FN + FP)",
}
_AVERAGE_TEXT = {
    "macro": "per class, unweighted mean over the classes where it is defined.",
    "micro": "from TP, FP, FN summed over classes (over the whole scale: accuracy).",
    "weighted": "per class, mean weighted by gold support.",
}

for _kind in ("precision", "recall", "f1", "fbeta"):
    _class: type[PrecisionRecallF1] = FBeta if _kind == "fbeta" else PrecisionRecallF1
    register_metric(
        _kind,
        definition=f"{_KIND_TEXT[_kind]} with the positive labels as one class (default: every "
        "label but the last, i.e. 高 and 中), or averaged over classes with `average`.",
        kind=_kind,
    )(_class)
    for _average in ("macro", "micro", "weighted"):
        register_metric(
            f"{_average}_{_kind}",
            definition=f"{_kind} {_AVERAGE_TEXT[_average]}",
            kind=_kind,
            average=_average,
            positive=None,
        )(_class)


@dataclass(eq=False)
class CohenKappa(ConfusionMetric):
    """Cohen's kappa 1 - sum(w*O)/sum(w*E); weights none, linear |i-j| or quadratic (i-j)^2."""

    per_record = False
    definition = (
        "Cohen's kappa: 1 - sum(w*O)/sum(w*E), O observed and E chance confusion; weights none, "
        "linear |i-j| or quadratic (i-j)^2 over scale positions."
    )

    weights: KappaWeights = "none"
    labels: LabelList | None = None
    """The labels kept, in the order whose positions ``linear``/``quadratic`` weigh (None: the
    scale); records whose gold or predicted label is not among them are left out, and so are
    the records predicted off the scale (kappa needs a position on it), with a note."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.labels is not None:
            names, self.label_codes = parse_labels(self.labels, self.scale)
            self.labels = names
        else:
            self.label_codes = np.arange(self.k, dtype=np.intp)
        idx = np.arange(self.label_codes.size, dtype=np.float64)
        diff = idx[None, :] - idx[:, None]
        if self.weights == "none":
            self.w = (diff != 0).astype(np.float64)
        elif self.weights == "linear":
            self.w = np.abs(diff)
        else:
            self.w = diff**2

    def _kept(self, c: np.ndarray) -> np.ndarray:
        """The rows and columns of ``labels``, in their order (C-contiguous, so that a stack of
        matrices sums each one as it would alone); never the column off the scale."""
        if self.labels is None:
            return _on_scale(c)
        codes = self.label_codes
        return np.ascontiguousarray(c[..., codes, :][..., :, codes])

    def _left_out(self, summed: np.ndarray) -> str:
        """How many records (of weight above 0) whose gold label is kept were left out because
        their prediction is off the scale, in words ("" when none was)."""
        counted = self.matrices(np.asarray(summed, dtype=np.float64))[1][self.label_codes]
        off = round(float(counted[:, self.k].sum()))
        if not off:
            return ""
        return (
            f"{off} of {round(float(counted.sum()))} records left out: predicted off the scale "
            "(kappa needs a position on it)"
        )

    def reported_value(self, block: StatBlock, value: float) -> tuple[float, str | None]:
        """The value, with a note of the records left out for a prediction off the scale."""
        return value, self._left_out(block.total()) or None

    def count(self, summed: np.ndarray) -> np.ndarray:
        kept: np.ndarray = self._kept(self.matrices(summed)[1]).sum(axis=(-2, -1))
        return kept

    def _parts(self, summed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self._kept(self.matrix(summed))
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
        left_out = self._left_out(summed)
        left_out = f" ({left_out})" if left_out else ""
        if float(self.count(summed[None, :])[0]) == 0:
            if self.labels is None:
                return self._no_records() + left_out
            weighted = "" if self.sample_weight is None else " of weight above 0"
            return (
                f"no record{weighted} has both its gold and predicted label among "
                f"{self.labels}{left_out}"
            )
        return (
            "chance disagreement is 0 (gold and predictions all use the same single label): "
            f"kappa is 0/0{left_out}"
        )


register_metric("cohen_kappa", zero_division=None)(CohenKappa)
register_metric(
    "qwk",
    definition="Quadratic weighted kappa: Cohen's kappa with weights (i-j)^2 over scale positions.",
    weights="quadratic",
    zero_division=None,
)(CohenKappa)
register_metric(
    "linear_kappa",
    definition="Linear weighted kappa: Cohen's kappa with weights |i-j| over scale positions.",
    weights="linear",
    zero_division=None,
)(CohenKappa)


def _numbers(values: np.ndarray, weighted: bool) -> list[Any]:
    """Counts as integers; weighted sums as floats (scikit-learn's dtypes)."""
    if weighted:
        return [float(x) for x in values]
    return [round(float(x)) for x in values]


@dataclass(eq=False)
class _ConfusionTable(TableMetric):
    gold: str = "gold"
    pred: str = "pred"
    scale: LabelScale = RISK_LEVELS
    sample_weight: SampleWeight = None
    """The record field holding each record's weight (None: every record weighs 1)."""
    labels: LabelList | None = None
    """The labels shown, in this order (None: the scale)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.labels is not None:
            names, self.label_codes = parse_labels(self.labels, self.scale)
            self.labels = names
        else:
            self.label_codes = np.arange(self.scale.k, dtype=np.intp)

    def statistic(self) -> Statistic:
        return ConfusionStatistic(self.gold, self.pred, self.scale, self.sample_weight)

    def _matrix(self, summed: np.ndarray) -> np.ndarray:
        return _split(summed, self.scale.k, self.sample_weight is not None)[0]

    def _names(self) -> list[str]:
        return [self.scale.labels[c] for c in self.label_codes]


@register_table("confusion_matrix")
@dataclass(eq=False)
class ConfusionMatrixTable(_ConfusionTable):
    """Counts of (gold, predicted) pairs; rows gold, columns predicted, in scale order (or the
    order of ``labels``); summed weights with ``sample_weight``.

    When some prediction is off the scale, the matrix has one more column, named in
    ``columns`` (the labels, then :data:`~pingce.labels.INVALID`): scikit-learn's
    ``confusion_matrix(gold, pred)`` keeps every predicted value as a class of its own, and so
    does this, rather than drop the records (the row of the invalid class, all zeros since a gold
    label is never off the scale, is left out). Each row then still adds up to its gold
    support. Without such predictions the matrix is square and ``columns`` absent."""

    def build(self, summed: np.ndarray) -> dict[str, Any]:
        codes = self.label_codes
        full = self._matrix(summed)
        matrix = full[np.ix_(codes, codes)]
        weighted = self.sample_weight is not None
        names = self._names()
        off_scale = full[codes, self.scale.k]
        if not off_scale.any():
            return {"labels": names, "matrix": [_numbers(row, weighted) for row in matrix]}
        return {
            "labels": names,
            "columns": [*names, INVALID],
            "matrix": [_numbers(row, weighted) for row in np.hstack([matrix, off_scale[:, None]])],
        }


@register_table("per_class")
@dataclass(eq=False)
class PerClassTable(_ConfusionTable):
    """Precision, recall, F1 and gold support of each label (one-vs-rest); a prediction off the
    scale is in the support of its gold label (a miss) and predicts no label."""

    zero_division: ZeroDivision = None

    def build(self, summed: np.ndarray) -> dict[str, Any]:
        c = self._matrix(summed)
        codes = self.label_codes
        tp = np.diag(c)[codes]
        pred = c.sum(axis=0)[codes]
        true = c.sum(axis=1)[codes]
        zd = self.zero_division
        weighted = self.sample_weight is not None

        def clean(values: np.ndarray) -> list[float | None]:
            return [None if np.isnan(v) else float(v) for v in values]

        return {
            "labels": self._names(),
            "precision": clean(safe_divide(tp, pred, zd)),
            "recall": clean(safe_divide(tp, true, zd)),
            "f1": clean(safe_divide(2 * tp, pred + true, zd)),
            "support": _numbers(true, weighted),
            "predicted": _numbers(pred, weighted),
        }
