"""Function-point metrics (seeds/function-points-metrics.md): a binary judge task and a set
selection task, the latter matched exactly or by meaning through a similarity backend.

Records of both tasks share a file; ``task`` says which (``judge`` or ``selection``).

* Judge: ``gold`` and ``pred`` are booleans or ``Yes``/``No`` (also ``是``/``否``, ``true``/
  ``false``, any case). Per record ``[TP, FP, FN, TN]``; a prediction that does not parse is
  counted in ``failures.parse`` and scored as the wrong answer.
* Selection: ``gold_items`` and ``pred_items`` are lists of strings (duplicates ignored). Exact
  set metrics sum ``|P ∩ T|``, ``|P|``, ``|T|`` over records (micro average). Semantic metrics sum
  the seed's fuzzy score ``Σ_p max_t I(p, t)·Sim(p, t)`` where ``I = 1`` for identical strings
  (similarity 1, no model call) or ``Sim > τ`` (τ = 0.7); ``P_sem = ΣScore/Σ|P|``,
  ``R_sem = ΣScore/Σ|T|``. With ``assignment: one-to-one`` each truth is matched at most once, by
  an optimal assignment (scipy ``linear_sum_assignment``), so recall cannot exceed 1.
  With ``max``, a prediction identical to a truth is not compared with the other truths (its best
  match is already 1): no model call is made for it, so a failing backend cannot drop a record
  whose predictions are all exact.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, ClassVar, Literal

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import InputError
from ..records import FieldSpec, ParseFailure, Table
from ..similarity.base import Pair, SimilarityTable
from .base import Metric, StatBlock, Statistic, check_zero_division, register_metric

__all__ = [
    "JudgeStatistic",
    "SelectionStatistic",
    "parse_items",
    "parse_yes_no",
]

SetAssignment = Literal["max", "one-to-one"]

_YES = {"yes", "y", "true", "1", "是", "对"}
_NO = {"no", "n", "false", "0", "否", "不是"}


def parse_yes_no(value: Any) -> bool:
    """A boolean from ``true``/``false`` or Yes/No text (是/否; any case). Else ValueError."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().strip(".。!！").casefold()
        if text in _YES:
            return True
        if text in _NO:
            return False
    raise ValueError("expected true/false or Yes/No")


def parse_items(value: Any) -> tuple[str, ...]:
    """A list of strings (or JSON text of one), duplicates removed, order kept."""
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a list of strings (or JSON text of one)") from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return tuple(dict.fromkeys(value))


def _task_rows(table: Table, task_field: str, task: str) -> np.ndarray:
    return np.fromiter((t == task for t in table.column(task_field)), bool, table.n)


def _require(table: Table, mask: np.ndarray, field: str, task: str) -> None:
    """Stop with an input error when a record of ``task`` lacks ``field``."""
    column = table.column(field)
    for i in np.flatnonzero(mask):
        if column[i] is None:
            raise InputError(
                f"required for task {task!r} records: field is missing",
                source=table.source,
                line=int(table.lines[i]),
                field=field,
            )


class JudgeStatistic(Statistic):
    """Per record ``[TP, FP, FN, TN]`` of the judge task (zeros for other records)."""

    def __init__(self, task: str, gold: str, pred: str):
        self.task, self.gold, self.pred = task, gold, pred

    @property
    def key(self) -> Hashable:
        return ("judge", self.task, self.gold, self.pred)

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.task, "string", choices=("judge", "selection")),
            FieldSpec(self.gold, "json", required=False, parser=parse_yes_no),
            FieldSpec(self.pred, "json", required=False, parser=parse_yes_no, lenient=True),
        ]

    def compute(self, table: Table) -> StatBlock:
        mask = _task_rows(table, self.task, "judge")
        _require(table, mask, self.gold, "judge")
        _require(table, mask, self.pred, "judge")
        rows = np.zeros((table.n, 4))
        gold_column, pred_column = table.column(self.gold), table.column(self.pred)
        for i in np.flatnonzero(mask):
            gold = bool(gold_column[i])
            pred = pred_column[i]
            said = (not gold) if isinstance(pred, ParseFailure) else bool(pred)
            cell = 0 if gold and said else 1 if said else 2 if gold else 3
            rows[i, cell] = 1.0
        return StatBlock(width=4, rows=rows)


class SelectionStatistic(Statistic):
    """Per record ``[score, |P|, |T|, failed]`` of the selection task.

    ``matcher`` ``exact`` scores ``|P ∩ T|``; ``semantic`` scores the seed's fuzzy score from the
    similarity table (``assignment`` ``max``: the seed's sum of best matches; ``one-to-one``:
    optimal assignment). ``failed`` is 1 for a record with a pair whose similarity failed; such
    records are left out of the semantic sums (never scored 0)."""

    def __init__(
        self,
        task: str,
        gold: str,
        pred: str,
        matcher: Literal["exact", "semantic"],
        threshold: float = 0.7,
        assignment: SetAssignment = "max",
    ):
        self.task, self.gold, self.pred = task, gold, pred
        self.matcher = matcher
        self.threshold = threshold
        self.assignment = assignment
        self.needs_similarity = matcher == "semantic"

    @property
    def key(self) -> Hashable:
        return (
            "selection",
            self.task,
            self.gold,
            self.pred,
            self.matcher,
            self.threshold,
            self.assignment,
        )

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.task, "string", choices=("judge", "selection")),
            FieldSpec(self.gold, "json", required=False, parser=parse_items),
            FieldSpec(self.pred, "json", required=False, parser=parse_items, lenient=True),
        ]

    def _records(self, table: Table) -> Iterable[tuple[int, tuple[str, ...], tuple[str, ...]]]:
        mask = _task_rows(table, self.task, "selection")
        _require(table, mask, self.gold, "selection")
        _require(table, mask, self.pred, "selection")
        gold_column, pred_column = table.column(self.gold), table.column(self.pred)
        for i in np.flatnonzero(mask):
            pred = pred_column[i]
            yield int(i), gold_column[i], (() if isinstance(pred, ParseFailure) else pred)

    def similarity_pairs(self, table: Table) -> Iterable[Pair]:
        if self.matcher != "semantic":
            return
        for _, gold, pred in self._records(table):
            truths = set(gold)
            for p in pred:
                if self.assignment == "max" and p in truths:
                    continue  # its best match is the exact one (1.0): no call needed
                for t in gold:
                    if p != t:
                        yield (p, t)

    def compute(self, table: Table, similarity: SimilarityTable | None = None) -> StatBlock:
        rows = np.zeros((table.n, 4))
        for i, gold, pred in self._records(table):
            rows[i, 1], rows[i, 2] = len(pred), len(gold)
            if self.matcher == "exact":
                rows[i, 0] = len(set(pred) & set(gold))
                continue
            assert similarity is not None
            if not pred or not gold:
                continue
            weights = np.zeros((len(pred), len(gold)))
            failed = False
            truths = set(gold)
            for a, p in enumerate(pred):
                if self.assignment == "max" and p in truths:
                    weights[a, 0] = 1.0  # the best match of an exact prediction, never asked
                    continue
                for b, t in enumerate(gold):
                    if p == t:
                        weights[a, b] = 1.0
                        continue
                    sim = similarity.get(p, t)
                    if np.isnan(sim):
                        failed = True
                    elif sim > self.threshold:
                        weights[a, b] = sim
            if failed:
                rows[i] = (0.0, 0.0, 0.0, 1.0)
                continue
            if self.assignment == "max":
                rows[i, 0] = weights.max(axis=1).sum()
            else:
                r, c = linear_sum_assignment(weights, maximize=True)
                rows[i, 0] = weights[r, c].sum()
        failed_records = int(rows[:, 3].sum())
        counts = {"similarity_failed_records": failed_records} if failed_records else {}
        return StatBlock(width=4, rows=rows, counts=counts)


def _divide(num: np.ndarray, den: np.ndarray, zero_division: float | None) -> np.ndarray:
    fill = np.nan if zero_division is None else float(zero_division)
    safe = np.where(den == 0, 1.0, den)
    out: np.ndarray = np.where(den == 0, fill, num / safe)
    return out


class _JudgeMetric(Metric):
    per_record = False
    kind: ClassVar[str]

    def __init__(
        self,
        task: str = "task",
        gold: str = "gold",
        pred: str = "pred",
        zero_division: float | None = None,
    ):
        self.task, self.gold, self.pred = task, gold, pred
        self.zero_division = check_zero_division(zero_division)

    def statistic(self) -> Statistic:
        return JudgeStatistic(self.task, self.gold, self.pred)

    def compute(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        tp, fp, fn, tn = s[..., 0], s[..., 1], s[..., 2], s[..., 3]
        zd = self.zero_division
        if self.kind == "accuracy":
            return _divide(tp + tn, tp + fp + fn + tn, zd)
        if self.kind == "precision":
            return _divide(tp, tp + fp, zd)
        if self.kind == "recall":
            return _divide(tp, tp + fn, zd)
        return _divide(2 * tp, 2 * tp + fp + fn, zd)

    def count(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        tp, fp, fn = s[..., 0], s[..., 1], s[..., 2]
        if self.kind == "precision":
            return np.asarray(tp + fp)
        if self.kind == "recall":
            return np.asarray(tp + fn)
        if self.kind == "f1":
            return np.asarray(tp + fp + fn)
        total: np.ndarray = s.sum(axis=-1)
        return total

    def undefined_reason(self, summed: np.ndarray) -> str:
        return {
            "accuracy": "no judge records",
            "precision": "no judge record was predicted Yes: precision is 0/0",
            "recall": "no judge record has gold Yes: recall is 0/0",
            "f1": "no gold or predicted Yes among judge records: F1 is 0/0",
        }[self.kind]


class _SetMetric(Metric):
    per_record = False
    kind: ClassVar[str]
    matcher: ClassVar[Literal["exact", "semantic"]]

    def __init__(
        self,
        task: str = "task",
        gold: str = "gold_items",
        pred: str = "pred_items",
        threshold: float = 0.7,
        assignment: SetAssignment = "max",
        zero_division: float | None = None,
    ):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within [0, 1], got {threshold}")
        if assignment not in ("max", "one-to-one"):
            raise ValueError(f"assignment must be max or one-to-one, got {assignment!r}")
        self.task, self.gold, self.pred = task, gold, pred
        self.threshold = float(threshold)
        self.assignment: SetAssignment = assignment
        self.zero_division = check_zero_division(zero_division)

    def statistic(self) -> Statistic:
        if self.matcher == "exact":
            return SelectionStatistic(self.task, self.gold, self.pred, "exact")
        return SelectionStatistic(
            self.task, self.gold, self.pred, "semantic", self.threshold, self.assignment
        )

    def compute(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        score, n_pred, n_gold = s[..., 0], s[..., 1], s[..., 2]
        zd = self.zero_division
        precision = _divide(score, n_pred, zd)
        recall = _divide(score, n_gold, zd)
        if self.kind == "precision":
            return precision
        if self.kind == "recall":
            return recall
        # 2PR/(P + R) with P = S/|P|, R = S/|T| is 2S/(|P| + |T|): 0 when nothing matched
        return _divide(2 * score, n_pred + n_gold, zd)

    def count(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        column = {"precision": 1, "recall": 2}.get(self.kind)
        if column is None:
            return np.asarray(s[..., 1] + s[..., 2])
        counted: np.ndarray = s[..., column]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return {
            "precision": "no predicted items in selection records: precision is 0/0",
            "recall": "no gold items in selection records: recall is 0/0",
            "f1": "no predicted or gold items in selection records: F1 is 0/0",
        }[self.kind]


_JUDGE_TEXT = {
    "accuracy": "(TP + TN) / all, over judge records",
    "precision": "TP / (TP + FP), over judge records (positive = Yes)",
    "recall": "TP / (TP + FN), over judge records (positive = Yes)",
    "f1": "2TP / (2TP + FP + FN), over judge records (positive = Yes)",
}
for _kind, _text in _JUDGE_TEXT.items():
    register_metric(f"judge_{_kind}", _text)(
        type(f"Judge{_kind.title()}", (_JudgeMetric,), {"kind": _kind, "__doc__": _text})
    )

_SET_TEXT = {
    ("set", "precision"): "Σ|P ∩ T| / Σ|P| over selection records (exact strings)",
    ("set", "recall"): "Σ|P ∩ T| / Σ|T| over selection records (exact strings)",
    ("set", "f1"): "2PR/(P + R) of set_precision and set_recall = 2Σ|P ∩ T| / (Σ|P| + Σ|T|)",
    ("sem", "precision"): "ΣScore_fuzzy / Σ|P|: identical = 1, else Sim counts if > τ (0.7); "
    "seed's sum of best matches, or one-to-one",
    ("sem", "recall"): "ΣScore_fuzzy / Σ|T| (the seed's formula can exceed 1; use "
    "assignment: one-to-one)",
    ("sem", "f1"): "2PR/(P + R) of sem_precision and sem_recall = 2ΣScore / (Σ|P| + Σ|T|)",
}
for (_prefix, _kind), _text in _SET_TEXT.items():
    register_metric(f"{_prefix}_{_kind}", _text)(
        type(
            f"{_prefix.title()}{_kind.title()}",
            (_SetMetric,),
            {
                "kind": _kind,
                "matcher": "exact" if _prefix == "set" else "semantic",
                "__doc__": _text,
            },
        )
    )
