"""Function-point metrics (the function-point protocol, docs/suites/function-points.md): a
binary judge task and a set selection task, the latter matched exactly or by meaning through a
similarity backend.

Records of both tasks share a file; ``task`` says which (``judge`` or ``selection``).

* Judge: ``gold`` and ``pred`` are booleans or ``Yes``/``No`` (also ``是``/``否``, ``true``/
  ``false``, any case). Per record ``[TP, FP, FN, TN, unparsed gold Yes, unparsed gold No]``;
  a prediction that does not parse (or is null) is counted in ``failures.parse``: wrong for
  accuracy, a miss for recall when the gold is Yes, and never a predicted positive (precision
  leaves it out); an absent one on a judge record is an input error, as an unreadable gold.
* Selection: ``gold_items`` and ``pred_items`` are lists of strings (duplicates ignored). Exact
  set metrics sum ``|P ∩ T|``, ``|P|``, ``|T|`` over records (micro average). Semantic metrics sum
  the reference's fuzzy score ``Σ_p max_t I(p, t)·Sim(p, t)`` where ``I = 1`` for identical strings
  (similarity 1, no model call) or ``Sim > τ`` (τ = 0.7); ``P_sem = ΣScore/Σ|P|``,
  ``R_sem = ΣScore/Σ|T|``. With ``assignment: one-to-one`` each truth is matched at most once, by
  an optimal assignment (scipy ``linear_sum_assignment``), so recall cannot exceed 1.
  With ``max``, a prediction identical to a truth is not compared with the other truths (its best
  match is already 1): no model call is made for it, so a failing backend cannot drop a record
  whose predictions are all exact.

Every metric here has a value per record (records.jsonl): a judge record's own TP/FP/FN/TN cell,
a selection record's own sums; the reason a record missed is made in the same pass (``judge``:
gold and predicted answer; ``set``: missed and extra items; ``sem``: each prediction's best
match and its similarity against τ).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np

from .._constraints import Range
from ..records import FieldSpec, ParseFailure, Table
from ..similarity.base import Pair, SimilarityTable
from ._assignment import max_weight_assignment
from ._policy import ZeroDivision, safe_divide
from .protocol import LEFT_OUT, Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "JudgeMetric",
    "JudgeStatistic",
    "SelectionStatistic",
    "SetMetric",
    "parse_items",
    "parse_yes_no",
]

SetAssignment = Literal["max", "one-to-one"]

JUDGE_WIDTH = 6
UNPARSED_YES, UNPARSED_NO = 4, 5

_YES = {"yes", "y", "true", "1", "是", "对"}
_NO = {"no", "n", "false", "0", "否", "不是"}


def parse_yes_no(value: Any) -> bool:
    """A boolean from ``true``/``false`` or Yes/No text (是/否; any case). Else ValueError (null
    too: a prediction of null is no answer, counted and scored wrong; an absent one is an input
    error, see :meth:`JudgeStatistic.check`)."""
    if value is None:
        raise ValueError("no answer (null)")
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().strip(".。!！").casefold()
        if text in _YES:
            return True
        if text in _NO:
            return False
    raise ValueError("expected true/false or Yes/No")


parse_yes_no.reads_null = True  # type: ignore[attr-defined]  # a lenient field gives it null


def parse_items(value: Any) -> tuple[str, ...]:
    """A list of strings (or JSON text of one), duplicates removed, order kept."""
    if isinstance(value, str):
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
            raise table.missing(int(i), field, f"task {task!r} records need it")


def _yes_no(value: bool) -> str:
    return "Yes" if value else "No"


class JudgeStatistic(Statistic):
    """Per record ``[TP, FP, FN, TN, unparsed gold Yes, unparsed gold No]`` of the judge task
    (zeros for other records). A prediction that does not parse is wrong, but it predicted
    nothing: it counts against accuracy, and against recall when the gold is Yes, never as a
    predicted positive (it does not enter precision). Reasons ``judge``: the gold and the
    predicted answer of a wrong record."""

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

    def check(self, table: Table) -> None:
        mask = _task_rows(table, self.task, "judge")
        _require(table, mask, self.gold, "judge")
        _require(table, mask, self.pred, "judge")

    def column_names(self, width: int) -> list[str]:
        return ["TP", "FP", "FN", "TN", "unparsed gold Yes", "unparsed gold No"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        mask = _task_rows(table, self.task, "judge")
        rows = np.zeros((table.n, JUDGE_WIDTH))
        reasons = np.empty(table.n, dtype=object)
        gold_column, pred_column = table.column(self.gold), table.column(self.pred)
        for i in np.flatnonzero(mask):
            gold = bool(gold_column[i])
            pred = pred_column[i]
            if isinstance(pred, ParseFailure):
                rows[i, UNPARSED_YES if gold else UNPARSED_NO] = 1.0
                reasons[i] = f"gold {_yes_no(gold)}, prediction could not be parsed: {pred}"
                continue
            said = bool(pred)
            cell = 0 if gold and said else 1 if said else 2 if gold else 3
            rows[i, cell] = 1.0
            if said != gold:
                reasons[i] = f"gold {_yes_no(gold)}, predicted {_yes_no(said)}"
        return StatBlock(width=JUDGE_WIDTH, rows=rows, reasons={"judge": reasons}, scope=mask)


class SelectionStatistic(Statistic):
    """Per record ``[score, |P|, |T|, failed]`` of the selection task.

    ``matcher`` ``exact`` scores ``|P ∩ T|``; ``semantic`` scores the reference's fuzzy score from
    the similarity table (``assignment`` ``max``: the reference's sum of best matches;
    ``one-to-one``: optimal assignment). ``failed`` is 1 for a record with a pair whose similarity
    failed; such records are left out of the semantic sums (never scored 0). Reasons: ``set``
    (exact: missed and extra items) or ``sem`` (each prediction's best match and whether it
    counted)."""

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

    def check(self, table: Table) -> None:
        mask = _task_rows(table, self.task, "selection")
        _require(table, mask, self.gold, "selection")
        _require(table, mask, self.pred, "selection")

    def _records(self, table: Table) -> Iterator[tuple[int, tuple[str, ...], Any]]:
        mask = _task_rows(table, self.task, "selection")
        gold_column, pred_column = table.column(self.gold), table.column(self.pred)
        for i in np.flatnonzero(mask):
            yield int(i), gold_column[i], pred_column[i]

    def pairs(self, table: Table) -> Iterable[Pair]:
        return (pair for _, pair in self.indexed_pairs(table))

    def indexed_pairs(self, table: Table) -> Iterable[tuple[int, Pair]]:
        if self.matcher != "semantic":
            return
        for i, gold, pred in self._records(table):
            if isinstance(pred, ParseFailure):
                continue
            truths = set(gold)
            for p in pred:
                if self.assignment == "max" and p in truths:
                    continue  # its best match is the exact one (1.0): no call needed
                for t in gold:
                    if p != t:
                        yield i, (p, t)

    def column_names(self, width: int) -> list[str]:
        return ["score", "|P|", "|T|", "failed"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        rows = np.zeros((table.n, 4))
        reasons = np.empty(table.n, dtype=object)
        left_out = np.empty(table.n, dtype=object)
        similarity = context.scores() if self.matcher == "semantic" else None
        for i, gold, raw in self._records(table):
            pred: tuple[str, ...] = () if isinstance(raw, ParseFailure) else raw
            rows[i, 1], rows[i, 2] = len(pred), len(gold)
            parse = f"prediction could not be parsed: {raw}" if pred is not raw else None
            if similarity is None:
                common = set(pred) & set(gold)
                rows[i, 0] = len(common)
                reasons[i] = parse or _set_reason(pred, gold, common)
                continue
            if not pred or not gold:
                reasons[i] = parse or _set_reason(pred, gold, set())
                continue
            score, why = self._semantic(pred, gold, similarity)
            if score is None:
                rows[i] = (0.0, 0.0, 0.0, 1.0)
                left_out[i] = why
            else:
                rows[i, 0] = score
                reasons[i] = why
        failed_records = int(rows[:, 3].sum())
        counts = {"similarity_failed_records": failed_records} if failed_records else {}
        key = "sem" if self.matcher == "semantic" else "set"
        explained = {key: reasons, LEFT_OUT: left_out} if failed_records else {key: reasons}
        scope = _task_rows(table, self.task, "selection")
        return StatBlock(width=4, rows=rows, counts=counts, reasons=explained, scope=scope)

    def _semantic(
        self, pred: tuple[str, ...], gold: tuple[str, ...], similarity: SimilarityTable
    ) -> tuple[float | None, str | None]:
        """The record's fuzzy score (None when a pair failed) and what kept it below best."""
        weights = np.zeros((len(pred), len(gold)))
        sims = np.zeros((len(pred), len(gold)))
        failed = 0
        truths = set(gold)
        for a, p in enumerate(pred):
            if self.assignment == "max" and p in truths:
                b = gold.index(p)  # its best match is itself: no other truth is asked
                weights[a, b] = sims[a, b] = 1.0
                continue
            for b, t in enumerate(gold):
                sim = 1.0 if p == t else similarity.get(p, t)
                sims[a, b] = sim
                if np.isnan(sim):
                    failed += 1
                elif p == t or sim > self.threshold:
                    weights[a, b] = sim
        if failed:
            return None, f"similarity failed for {failed} pair(s): record left out"
        if self.assignment == "max":
            score = float(weights.max(axis=1).sum())
        else:
            r, c = max_weight_assignment(weights)
            score = float(weights[r, c].sum())
        notes = []
        for a, p in enumerate(pred):
            if weights[a].max() >= 1.0:
                continue
            b = int(np.argmax(sims[a]))
            sim, tau = sims[a, b], self.threshold
            verdict = f"> τ {tau:g}, counts {sim:.3g}" if sim > tau else f"≤ τ {tau:g}, counts 0"
            notes.append(f"{p!r} ~ {gold[b]!r}: {sim:.3g} ({verdict})")
        matched = {b for b in range(len(gold)) if weights[:, b].max() > 0}
        unmatched = [gold[b] for b in range(len(gold)) if b not in matched]
        if unmatched:
            notes.append("no match for " + ", ".join(repr(t) for t in unmatched))
        return score, "; ".join(notes) or None


def _set_reason(pred: tuple[str, ...], gold: tuple[str, ...], common: set[str]) -> str | None:
    missed = [t for t in gold if t not in common]
    extra = [p for p in pred if p not in common]
    parts = []
    if missed:
        parts.append("missed " + ", ".join(repr(t) for t in missed))
    if extra:
        parts.append("extra " + ", ".join(repr(p) for p in extra))
    return "; ".join(parts) or None


@dataclass(eq=False)
class JudgeMetric(Metric):
    """Accuracy, precision, recall or F1 of the judge task (positive = Yes)."""

    reason = "judge"

    task: str = "task"
    gold: str = "gold"
    pred: str = "pred"
    zero_division: ZeroDivision = None
    kind: Literal["accuracy", "precision", "recall", "f1"] = "accuracy"

    def statistic(self) -> Statistic:
        return JudgeStatistic(self.task, self.gold, self.pred)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        tp, fp, tn = s[..., 0], s[..., 1], s[..., 3]
        missed = s[..., 2] + s[..., UNPARSED_YES]  # gold Yes not said Yes, parsed or not
        zd = self.zero_division
        if self.kind == "accuracy":
            return safe_divide(tp + tn, s.sum(axis=-1), zd)
        if self.kind == "precision":
            return safe_divide(tp, tp + fp, zd)
        if self.kind == "recall":
            return safe_divide(tp, tp + missed, zd)
        return safe_divide(2 * tp, 2 * tp + fp + missed, zd)

    def count(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        tp, fp = s[..., 0], s[..., 1]
        missed = s[..., 2] + s[..., UNPARSED_YES]
        if self.kind == "precision":
            return np.asarray(tp + fp)
        if self.kind == "recall":
            return np.asarray(tp + missed)
        if self.kind == "f1":
            return np.asarray(tp + fp + missed)
        total: np.ndarray = s.sum(axis=-1)
        return total

    def undefined_reason(self, summed: np.ndarray) -> str:
        return {
            "accuracy": "no judge records",
            "precision": "no judge record was predicted Yes: precision is 0/0",
            "recall": "no judge record has gold Yes: recall is 0/0",
            "f1": "no gold or predicted Yes among judge records: F1 is 0/0",
        }[self.kind]


@dataclass(eq=False)
class SetMetric(Metric):
    """Precision, recall or F1 of the selection task, exact or semantic (micro-averaged)."""

    task: str = "task"
    gold: str = "gold_items"
    pred: str = "pred_items"
    threshold: Annotated[float, Range(0, 1)] = 0.7
    assignment: SetAssignment = "max"
    zero_division: ZeroDivision = None
    kind: Literal["precision", "recall", "f1"] = "precision"
    matcher: Literal["exact", "semantic"] = "exact"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.threshold = float(self.threshold)
        self.reason = "set" if self.matcher == "exact" else "sem"

    def statistic(self) -> Statistic:
        if self.matcher == "exact":
            return SelectionStatistic(self.task, self.gold, self.pred, "exact")
        return SelectionStatistic(
            self.task, self.gold, self.pred, "semantic", self.threshold, self.assignment
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        score, n_pred, n_gold = s[..., 0], s[..., 1], s[..., 2]
        zd = self.zero_division
        if self.kind == "precision":
            return safe_divide(score, n_pred, zd)
        if self.kind == "recall":
            return safe_divide(score, n_gold, zd)
        # 2PR/(P + R) with P = S/|P|, R = S/|T| is 2S/(|P| + |T|): 0 when nothing matched
        return safe_divide(2 * score, n_pred + n_gold, zd)

    def count(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        column = {"precision": 1, "recall": 2}.get(self.kind)
        if column is None:
            return np.asarray(s[..., 1] + s[..., 2])
        counted: np.ndarray = s[..., column]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        failed = int(np.asarray(summed)[..., 3].sum())
        if failed:
            return (
                f"{failed} selection record(s) had failed similarity calls and were left out; "
                f"no other record has {'predicted' if self.kind == 'precision' else 'gold'} items"
            )
        return {
            "precision": "no predicted items in selection records: precision is 0/0",
            "recall": "no gold items in selection records: recall is 0/0",
            "f1": "no predicted or gold items in selection records: F1 is 0/0",
        }[self.kind]


_JUDGE_TEXT = {
    "accuracy": "(TP + TN) / all, over judge records (an unparseable answer is wrong).",
    "precision": "TP / (TP + FP), over judge records (positive = Yes; an unparseable answer "
    "predicted nothing).",
    "recall": "TP / (TP + FN), over judge records (positive = Yes; FN includes unparseable "
    "answers to gold Yes).",
    "f1": "2TP / (2TP + FP + FN), over judge records (positive = Yes; FN as in recall).",
}
for _kind, _text in _JUDGE_TEXT.items():
    register_metric(f"judge_{_kind}", definition=_text, kind=_kind)(JudgeMetric)

_SET_TEXT = {
    ("set", "precision"): "Σ|P ∩ T| / Σ|P| over selection records (exact strings).",
    ("set", "recall"): "Σ|P ∩ T| / Σ|T| over selection records (exact strings).",
    ("set", "f1"): "2PR/(P + R) of set_precision and set_recall = 2Σ|P ∩ T| / (Σ|P| + Σ|T|).",
    ("sem", "precision"): "ΣScore_fuzzy / Σ|P|: identical = 1, else Sim counts if > τ (0.7); "
    "reference's sum of best matches, or one-to-one.",
    ("sem", "recall"): "ΣScore_fuzzy / Σ|T| (the reference's formula can exceed 1; use "
    "assignment: one-to-one).",
    ("sem", "f1"): "2PR/(P + R) of sem_precision and sem_recall = 2ΣScore / (Σ|P| + Σ|T|).",
}
for (_prefix, _kind), _text in _SET_TEXT.items():
    if _prefix == "set":  # exact matching has no threshold or assignment
        register_metric(
            f"set_{_kind}",
            definition=_text,
            kind=_kind,
            matcher="exact",
            threshold=0.7,
            assignment="max",
        )(SetMetric)
    else:
        register_metric(f"sem_{_kind}", definition=_text, kind=_kind, matcher="semantic")(SetMetric)
