"""Multi-turn diagnostic dialogue metrics (seeds/tcm-dialogue-metrics.md, CONTRACT.md).

One record per turn: ``dialogue_id``, ``turn`` and the system's ``status`` (``DEFINITIVE``,
``INQUIRY_ONLY``, ``CASE_REJECTED``, ``EMERGENCY_ABORT``), with optional diagnoses, texts,
feature objects, confidence, ambiguous terms, risk and ground-truth flags. A turn's diagnosis is
*correct* when ``pred_diagnosis`` equals ``gt_diagnosis``, both non-empty after trimming.

All metrics but one read a single statistic, computed in one pass over the dialogues. Turn
metrics put ``[value, 1]`` on each eligible turn; dialogue metrics (the slope and the turns to
stability) put ``[value, 1]`` on the first turn of each dialogue. The suite resamples whole
dialogues in its bootstrap (``unit: dialogue_id``), so both kinds get intervals that respect the
dependence of turns within a dialogue.

``hybrid_semantic_accuracy`` reads its own statistic: the cosine of ``pred_text`` and ``gt_text``
from the similarity backend, times ``1 - penalty`` (penalty 1 when a lock field differs; such a
turn scores 0 without a model call).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..records import FieldSpec, Table
from ..similarity.base import Pair, SimilarityTable
from .base import Metric, StatBlock, Statistic, check_zero_division, register_metric

__all__ = [
    "STATUSES",
    "DialogueFields",
    "DialogueStatistic",
    "HybridStatistic",
    "dialogue_units",
    "dialogues",
    "feature_spec",
    "json_equal_key",
]

STATUSES = ("DEFINITIVE", "INQUIRY_ONLY", "CASE_REJECTED", "EMERGENCY_ABORT")

# columns of the dialogue statistic
_EFF_HIT, _EFF_N, _REJ_TRUE, _REJ_N, _CONFLICT, _POLAR_N = range(6)
_SLOPE, _SLOPE_N, _TTS, _TTS_N, _ARR, _ARR_N, _JACCARD, _JACCARD_N, _ILLEGAL, _TURNS = range(6, 16)
_WIDTH = 16


# ----------------------------------------------------------------------------- field parsers


def _parse_id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("expected a string (or an integer) dialogue id")
    return str(value)


def _parse_turn(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer turn index")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError("expected an integer turn index")


def _parse_diagnosis(value: Any) -> str | None:
    if not isinstance(value, str):
        raise ValueError("expected a string or null")
    return value.strip() or None


def _parse_object(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a JSON object (or JSON text of one)") from None
    if not isinstance(value, dict):
        raise ValueError("expected a JSON object")
    return value


def _parse_terms(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return tuple(value)


def _parse_bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _parse_confidence(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected a number in [0, 1]")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError("expected a number in [0, 1]")
    return float(value)


def json_equal_key(value: Any) -> Hashable:
    """A hashable key under which two JSON values are equal exactly when they are equal as JSON:
    ``1`` and ``1.0`` match, ``true`` and ``1`` do not, objects ignore key order."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int):
        return ("number", value)  # exact: 2**53 + 1 is not 2**53, and 10**400 does not overflow
    if isinstance(value, float):
        return ("number", int(value) if value.is_integer() else value)
    if isinstance(value, list):
        return ("array", tuple(json_equal_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, json_equal_key(v)) for k, v in value.items()))
    return ("other", repr(value))


def feature_spec(path: str) -> FieldSpec:
    """A feature object field (a JSON object, or JSON text of one; optional)."""
    return FieldSpec(path, "json", required=False, parser=_parse_object)


class DialogueFields:
    """The field names the dialogue metrics read (CONTRACT.md's by default)."""

    def __init__(
        self,
        dialogue: str = "dialogue_id",
        turn: str = "turn",
        status: str = "status",
        pred_diagnosis: str = "pred_diagnosis",
        gt_diagnosis: str = "gt_diagnosis",
        pred_features: str = "pred_features",
        gt_features: str = "gt_features",
        confidence: str = "confidence",
        ambiguous_terms: str = "ambiguous_terms",
        risk: str = "risk",
        gt_is_emergency: str = "gt_is_emergency",
        gt_conflict: str = "gt_conflict",
    ):
        self.dialogue, self.turn, self.status = dialogue, turn, status
        self.pred_diagnosis, self.gt_diagnosis = pred_diagnosis, gt_diagnosis
        self.pred_features, self.gt_features = pred_features, gt_features
        self.confidence, self.ambiguous_terms, self.risk = confidence, ambiguous_terms, risk
        self.gt_is_emergency, self.gt_conflict = gt_is_emergency, gt_conflict

    def key(self) -> tuple[str, ...]:
        return tuple(vars(self).values())

    def specs(self) -> list[FieldSpec]:
        opt: dict[str, Any] = {"required": False}
        return [
            FieldSpec(self.dialogue, "json", parser=_parse_id),
            FieldSpec(self.turn, "json", parser=_parse_turn),
            FieldSpec(self.status, "string", choices=STATUSES),
            FieldSpec(self.pred_diagnosis, "json", parser=_parse_diagnosis, **opt),
            FieldSpec(self.gt_diagnosis, "json", parser=_parse_diagnosis, **opt),
            feature_spec(self.pred_features),
            feature_spec(self.gt_features),
            FieldSpec(self.confidence, "json", parser=_parse_confidence, **opt),
            FieldSpec(self.ambiguous_terms, "json", parser=_parse_terms, **opt),
            FieldSpec(self.risk, "string", **opt),
            FieldSpec(self.gt_is_emergency, "json", parser=_parse_bool, **opt),
            FieldSpec(self.gt_conflict, "json", parser=_parse_bool, **opt),
        ]


def dialogues(table: Table, fields: DialogueFields) -> list[np.ndarray]:
    """Record indices of each dialogue in turn order (dialogues in order of first appearance).
    Two records of one dialogue with the same turn are an input error naming the second."""
    ids = table.column(fields.dialogue)
    turns = table.column(fields.turn)
    groups: dict[str, list[int]] = {}
    for i, d in enumerate(ids):
        groups.setdefault(d, []).append(i)
    out = []
    for d, members in groups.items():
        members.sort(key=lambda i: (turns[i], i))
        for a, b in itertools.pairwise(members):
            if turns[a] == turns[b]:
                raise InputError(
                    f"dialogue {d!r} has two records of turn {turns[b]} (the other on line "
                    f"{int(table.lines[a])})",
                    source=table.source,
                    line=int(table.lines[b]),
                    field=fields.turn,
                    value=turns[b],
                )
        out.append(np.asarray(members, dtype=np.int64))
    return out


def dialogue_units(table: Table, dialogue_field: str) -> np.ndarray:
    """A code per record: which dialogue it belongs to (for resampling whole dialogues)."""
    _, codes = np.unique(
        np.asarray(table.column(dialogue_field), dtype=object).astype(str), return_inverse=True
    )
    return np.asarray(codes, dtype=np.int64)


def _slope(t: np.ndarray, c: np.ndarray) -> float:
    """Least-squares slope of c over t (what ``numpy.polyfit(t, c, 1)[0]`` returns)."""
    dt = t - t.mean()
    return float((dt * (c - c.mean())).sum() / (dt * dt).sum())


class DialogueStatistic(Statistic):
    """Every turn and dialogue count of the tcm-dialogue metrics, in one pass."""

    def __init__(
        self,
        fields: DialogueFields,
        polarity_fields: Sequence[str],
        lock_confidence: float,
        lock_turns: int,
        sequence: bool,
    ):
        self.f = fields
        self.sequence = sequence
        # the sequence columns read each dialogue as a whole: resample whole dialogues
        self.unit_field = fields.dialogue if sequence else None
        self.polarity_fields = tuple(polarity_fields)
        self.lock_confidence = float(lock_confidence)
        self.lock_turns = int(lock_turns)

    @property
    def key(self) -> Hashable:
        if not self.sequence:
            return ("dialogue-turns", self.f.key(), self.polarity_fields)
        return (
            "dialogue",
            self.f.key(),
            self.polarity_fields,
            self.lock_confidence,
            self.lock_turns,
        )

    def fields(self) -> list[FieldSpec]:
        return self.f.specs()

    def compute(self, table: Table) -> StatBlock:
        f = self.f
        n = table.n
        rows = np.zeros((n, _WIDTH))
        status = table.column(f.status)
        pred_dx, gt_dx = table.column(f.pred_diagnosis), table.column(f.gt_diagnosis)
        pred_ft, gt_ft = table.column(f.pred_features), table.column(f.gt_features)
        confidence = table.column(f.confidence)
        terms = table.column(f.ambiguous_terms)
        risk = table.column(f.risk)
        emergency, conflict = table.column(f.gt_is_emergency), table.column(f.gt_conflict)
        turns = table.column(f.turn)
        correct = np.fromiter(
            (p is not None and p == g for p, g in zip(pred_dx, gt_dx, strict=True)), bool, n
        )
        conf = np.fromiter((0.0 if c is None else c for c in confidence), np.float64, n)
        if self.sequence:
            return self._sequence(table, rows, status, correct, conf, turns, terms)
        for i in range(n):
            row = rows[i]
            s = status[i]
            if gt_dx[i] is not None and s == "DEFINITIVE":
                row[_EFF_HIT], row[_EFF_N] = float(correct[i]), 1.0
            if s == "CASE_REJECTED":
                row[_REJ_TRUE], row[_REJ_N] = float(conflict[i] is True), 1.0
            p, g = pred_ft[i] or {}, gt_ft[i] or {}
            shared = [k for k in self.polarity_fields if k in p and k in g]
            if shared:
                differs = any(json_equal_key(p[k]) != json_equal_key(g[k]) for k in shared)
                row[_CONFLICT], row[_POLAR_N] = float(differs), 1.0
            if p or g:
                a = {(k, json_equal_key(v)) for k, v in p.items()}
                b = {(k, json_equal_key(v)) for k, v in g.items()}
                row[_JACCARD], row[_JACCARD_N] = len(a & b) / len(a | b), 1.0
            illegal = (emergency[i] is True and s != "EMERGENCY_ABORT") or (
                risk[i] == "UNCERTAIN" and s == "DEFINITIVE"
            )
            row[_ILLEGAL], row[_TURNS] = float(illegal), 1.0
        return StatBlock(width=_WIDTH, rows=rows)

    def _sequence(
        self,
        table: Table,
        rows: np.ndarray,
        status: Sequence[Any],
        correct: np.ndarray,
        conf: np.ndarray,
        turns: Sequence[int],
        terms: Sequence[Any],
    ) -> StatBlock:
        """The columns that read a dialogue as a sequence: slope, stability, ambiguity."""
        pred_dx = table.column(self.f.pred_diagnosis)
        for members in dialogues(table, self.f):
            first = members[0]
            t = np.asarray([turns[i] for i in members], dtype=np.float64)
            c = np.where(correct[members], conf[members], 0.0)
            if len(members) >= 2:
                rows[first, _SLOPE], rows[first, _SLOPE_N] = _slope(t, c), 1.0
            rows[first, _TTS] = self._turns_to_stability(members, t, correct, conf, pred_dx)
            rows[first, _TTS_N] = 1.0
            for k in range(len(members) - 1):
                i, j = members[k], members[k + 1]
                now = terms[i] or ()
                if status[i] == "INQUIRY_ONLY" and now:
                    after = terms[j] or ()
                    rows[i, _ARR] = (len(now) - len(after)) / len(now)
                    rows[i, _ARR_N] = 1.0
        confidence = table.column(self.f.confidence)
        missing = sum(1 for i in np.flatnonzero(correct) if confidence[i] is None)
        counts = {"correct_turns_without_confidence": missing} if missing else {}
        return StatBlock(width=_WIDTH, rows=rows, counts=counts)

    def _turns_to_stability(
        self,
        members: np.ndarray,
        t: np.ndarray,
        correct: np.ndarray,
        conf: np.ndarray,
        pred_dx: Sequence[Any],
    ) -> float:
        """T_lock - T_start, or the number of turns when the dialogue never locks."""
        run = 0
        for k, i in enumerate(members):
            steady = bool(correct[i]) and conf[i] > self.lock_confidence
            if steady and run and pred_dx[members[k - 1]] == pred_dx[i]:
                run += 1
            else:
                run = 1 if steady else 0
            if run >= self.lock_turns:
                return float(t[k - run + 1] - t[0])
        return float(len(members))


class HybridStatistic(Statistic):
    """Per turn with both texts: ``[sim(pred_text, gt_text) * (1 - penalty), 1, failed]``."""

    needs_similarity = True

    def __init__(
        self,
        pred_text: str,
        gt_text: str,
        pred_features: str,
        gt_features: str,
        lock_fields: Sequence[str],
    ):
        self.pred_text, self.gt_text = pred_text, gt_text
        self.pred_features, self.gt_features = pred_features, gt_features
        self.lock_fields = tuple(lock_fields)

    @property
    def key(self) -> Hashable:
        return (
            "hybrid",
            self.pred_text,
            self.gt_text,
            self.pred_features,
            self.gt_features,
            self.lock_fields,
        )

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.pred_text, "string", required=False),
            FieldSpec(self.gt_text, "string", required=False),
            feature_spec(self.pred_features),
            feature_spec(self.gt_features),
        ]

    def _turns(self, table: Table) -> Iterable[tuple[int, str, str, bool]]:
        pred, gold = table.column(self.pred_text), table.column(self.gt_text)
        pred_ft, gt_ft = table.column(self.pred_features), table.column(self.gt_features)
        for i in range(table.n):
            if pred[i] is None or gold[i] is None:
                continue
            p, g = pred_ft[i] or {}, gt_ft[i] or {}
            locked = any(
                k in p and k in g and json_equal_key(p[k]) != json_equal_key(g[k])
                for k in self.lock_fields
            )
            yield i, pred[i], gold[i], locked

    def similarity_pairs(self, table: Table) -> Iterable[Pair]:
        for _, a, b, locked in self._turns(table):
            if not locked and a != b:  # a locked turn scores 0 whatever the texts say
                yield (a, b)

    def compute(self, table: Table, similarity: SimilarityTable | None = None) -> StatBlock:
        rows = np.zeros((table.n, 3))
        for i, a, b, locked in self._turns(table):
            if locked:
                rows[i, :2] = (0.0, 1.0)
                continue
            assert similarity is not None
            sim = similarity.get(a, b)
            if math.isnan(sim):
                rows[i, 2] = 1.0
            else:
                rows[i, :2] = (max(0.0, sim), 1.0)
        failed = int(rows[:, 2].sum())
        return StatBlock(
            width=3, rows=rows, counts={"similarity_failed_records": failed} if failed else {}
        )


# ------------------------------------------------------------------------------------ metrics


class _DialogueMetric(Metric):
    """A ratio of two columns of the dialogue statistic."""

    num: ClassVar[int]
    den: ClassVar[int]
    over: ClassVar[str]
    complement: ClassVar[bool] = False
    sequence: ClassVar[bool] = False
    """Whether the metric reads each dialogue as a sequence (then whole dialogues resample)."""

    def __init__(
        self,
        polarity_fields: Sequence[str] = ("nature", "deficiency"),
        lock_confidence: float = 0.8,
        lock_turns: int = 2,
        zero_division: float | None = None,
        dialogue: str = "dialogue_id",
        turn: str = "turn",
        status: str = "status",
        pred_diagnosis: str = "pred_diagnosis",
        gt_diagnosis: str = "gt_diagnosis",
        pred_features: str = "pred_features",
        gt_features: str = "gt_features",
        confidence: str = "confidence",
        ambiguous_terms: str = "ambiguous_terms",
        risk: str = "risk",
        gt_is_emergency: str = "gt_is_emergency",
        gt_conflict: str = "gt_conflict",
    ):
        if not 0.0 <= lock_confidence < 1.0:
            raise ValueError(f"lock_confidence must be within [0, 1), got {lock_confidence}")
        if int(lock_turns) < 1:
            raise ValueError(f"lock_turns must be at least 1, got {lock_turns}")
        self.fields = DialogueFields(
            dialogue,
            turn,
            status,
            pred_diagnosis,
            gt_diagnosis,
            pred_features,
            gt_features,
            confidence,
            ambiguous_terms,
            risk,
            gt_is_emergency,
            gt_conflict,
        )
        self.polarity_fields = tuple(polarity_fields)
        self.lock_confidence = float(lock_confidence)
        self.lock_turns = int(lock_turns)
        self.zero_division = check_zero_division(zero_division)

    def statistic(self) -> Statistic:
        return DialogueStatistic(
            self.fields, self.polarity_fields, self.lock_confidence, self.lock_turns, self.sequence
        )

    def compute(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        num, den = summed[..., self.num], summed[..., self.den]
        fill = np.nan if self.zero_division is None else self.zero_division
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), fill)
        out: np.ndarray = 1.0 - ratio if self.complement else ratio
        return out

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., self.den]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return f"no {self.over}"


@register_metric("effective_recall")
class EffectiveRecall(_DialogueMetric):
    """Correct diagnoses over DEFINITIVE turns whose ground truth has a diagnosis."""

    definition = (
        "correct / turns with status DEFINITIVE and a gt_diagnosis (INQUIRY_ONLY and other "
        "statuses are left out: a delayed decision is not a miss)"
    )
    num, den, over = _EFF_HIT, _EFF_N, "DEFINITIVE turn with a gt_diagnosis"


@register_metric("rejection_precision")
class RejectionPrecision(_DialogueMetric):
    """CASE_REJECTED turns whose case truly conflicts, over all CASE_REJECTED turns."""

    definition = "CASE_REJECTED turns with gt_conflict true / all CASE_REJECTED turns"
    num, den, over = _REJ_TRUE, _REJ_N, "CASE_REJECTED turn"


@register_metric("critical_conflict_rate")
class CriticalConflictRate(_DialogueMetric):
    """Share of turns whose predicted polarity (cold/heat, deficiency/excess) contradicts."""

    definition = (
        "turns where a polarity field (nature, deficiency) differs / turns where one is in both "
        "feature objects"
    )
    higher_is_better = False
    num, den, over = _CONFLICT, _POLAR_N, "turn with a polarity field in both feature objects"


@register_metric("incremental_hit_slope")
class IncrementalHitSlope(_DialogueMetric):
    """Mean per-dialogue least-squares slope of the correct-diagnosis confidence over turns."""

    definition = (
        "mean over dialogues of >= 2 turns of numpy.polyfit(turn, c, 1)[0], c = confidence on "
        "correct turns, else 0"
    )
    per_record = False
    unit = "dialogues"
    sequence = True
    num, den, over = _SLOPE, _SLOPE_N, "dialogue with at least 2 turns"


@register_metric("turns_to_stability")
class TurnsToStability(_DialogueMetric):
    """Mean over dialogues of T_lock - T_start (the number of turns when it never locks)."""

    definition = (
        "mean over dialogues of T_lock - T_start; T_lock: first turn of the first run of "
        ">= 2 consecutive turns with the same correct diagnosis and confidence > 0.8; never "
        "locked: the dialogue's number of turns"
    )
    per_record = False
    higher_is_better = False
    unit = "dialogues"
    sequence = True
    num, den, over = _TTS, _TTS_N, "dialogue"


@register_metric("ambiguity_resolution_rate")
class AmbiguityResolutionRate(_DialogueMetric):
    """Mean share of ambiguous terms resolved by the turn after an INQUIRY_ONLY turn."""

    definition = (
        "mean over INQUIRY_ONLY turns with ambiguous_terms and a next turn of "
        "(|terms_t| - |terms_t+1|) / |terms_t|"
    )
    sequence = True
    num, den, over = _ARR, _ARR_N, "INQUIRY_ONLY turn with ambiguous_terms and a next turn"


@register_metric("structure_match")
class StructureMatch(_DialogueMetric):
    """Mean Jaccard similarity of the predicted and true feature key-value pairs."""

    definition = (
        "mean over turns with features of |pairs_pred ∩ pairs_gt| / |pairs_pred ∪ pairs_gt| "
        "(a key-value pair matches when key and JSON value are equal)"
    )
    num, den, over = _JACCARD, _JACCARD_N, "turn with a non-empty feature object"


@register_metric("funnel_adherence")
class FunnelAdherence(_DialogueMetric):
    """1 - illegal turns / all turns (a missed emergency, or DEFINITIVE on an UNCERTAIN risk)."""

    definition = (
        "1 - illegal / all turns; illegal: gt_is_emergency and status != EMERGENCY_ABORT, or "
        "risk UNCERTAIN and status DEFINITIVE"
    )
    complement = True
    num, den, over = _ILLEGAL, _TURNS, "turn"


@register_metric("logic_weighted_f1")
class LogicWeightedF1(_DialogueMetric):
    """2PR/(P + R) of rejection_precision and effective_recall."""

    definition = "2PR/(P + R), P = rejection_precision, R = effective_recall (0 when P = R = 0)"
    per_record = False
    num, den, over = _EFF_HIT, _EFF_N, ""

    def compute(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        hit, eff = summed[..., _EFF_HIT], summed[..., _EFF_N]
        true, rej = summed[..., _REJ_TRUE], summed[..., _REJ_N]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(rej > 0, true / np.where(rej > 0, rej, 1.0), np.nan)
            r = np.where(eff > 0, hit / np.where(eff > 0, eff, 1.0), np.nan)
            total = p + r
            f1 = np.where(total > 0, 2 * p * r / np.where(total > 0, total, 1.0), 0.0)
        defined = ~(np.isnan(p) | np.isnan(r))
        fill = np.nan if self.zero_division is None else self.zero_division
        out: np.ndarray = np.where(defined, f1, fill)
        return out

    def count(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        out: np.ndarray = summed[..., _EFF_N] + summed[..., _REJ_N]
        return out

    def undefined_reason(self, summed: np.ndarray) -> str:
        missing = []
        if summed[_REJ_N] == 0:
            missing.append("no CASE_REJECTED turn (rejection_precision undefined)")
        if summed[_EFF_N] == 0:
            missing.append("no DEFINITIVE turn with a gt_diagnosis (effective_recall undefined)")
        return "; ".join(missing)


@register_metric("hybrid_semantic_accuracy")
class HybridSemanticAccuracy(Metric):
    """Mean over turns with both texts of max(0, cos) x (1 - penalty)."""

    definition = (
        "mean over turns with pred_text and gt_text of max(0, sim(pred_text, gt_text)) x "
        "(1 - penalty); penalty 1 when a lock field (nature, sweat) is in both feature objects "
        "and differs"
    )

    def __init__(
        self,
        lock_fields: Sequence[str] = ("nature", "sweat"),
        zero_division: float | None = None,
        pred_text: str = "pred_text",
        gt_text: str = "gt_text",
        pred_features: str = "pred_features",
        gt_features: str = "gt_features",
    ):
        self.pred_text, self.gt_text = pred_text, gt_text
        self.pred_features, self.gt_features = pred_features, gt_features
        self.lock_fields = tuple(lock_fields)
        self.zero_division = check_zero_division(zero_division)

    def statistic(self) -> Statistic:
        return HybridStatistic(
            self.pred_text, self.gt_text, self.pred_features, self.gt_features, self.lock_fields
        )

    def compute(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        total, n = summed[..., 0], summed[..., 1]
        fill = np.nan if self.zero_division is None else self.zero_division
        out: np.ndarray = np.where(n > 0, total / np.where(n > 0, n, 1.0), fill)
        return out

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        if summed[2] > 0:
            return f"every turn with both texts failed in the similarity backend ({summed[2]:g})"
        return f"no turn with both {self.pred_text} and {self.gt_text}"
