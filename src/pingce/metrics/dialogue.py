"""Multi-turn diagnostic dialogue metrics: the TCM dialogue protocol (docs/suites/tcm-dialogue.md).

One record per turn: ``dialogue_id``, ``turn`` and the system's ``status`` (``DEFINITIVE``,
``INQUIRY_ONLY``, ``CASE_REJECTED``, ``EMERGENCY_ABORT``), with optional diagnoses, texts,
feature objects, confidence, ambiguous terms, risk and ground-truth flags. A turn's diagnosis is
*correct* when ``pred_diagnosis`` equals ``gt_diagnosis``, both non-empty after trimming.

All metrics but one read a single statistic, computed in one pass over the dialogues. Turn
metrics put ``[value, 1]`` on each eligible turn; dialogue metrics (the slope and the turns to
stability) put ``[value, 1]`` on the first turn of each dialogue. The suite resamples whole
dialogues in its bootstrap (``unit: dialogue_id``), so both kinds get intervals that respect the
dependence of turns within a dialogue. With repeats (a ``repeat`` field, turn ids recurring)
each repeat of a dialogue is read as a dialogue of its own, and the bootstrap resamples a
dialogue with all its repeats.

``hybrid_semantic_accuracy`` reads its own statistic: the cosine of ``pred_text`` and ``gt_text``
from the similarity backend, times ``1 - penalty`` (penalty 1 when a lock field differs; such a
turn scores 0 without a model call).
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from typing import Annotated, Any, ClassVar

import numpy as np
import orjson

from .._collector import collector_paused
from .._constraints import Range
from .._json import json_texts
from ..errors import InputError
from ..records import FieldSpec, Table, json_equal_key
from ..similarity.base import Pair
from ._policy import ZeroDivision, fill_value, safe_divide
from .protocol import LEFT_OUT, Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "STATUSES",
    "DialogueFields",
    "DialogueStatistic",
    "HybridStatistic",
    "dialogue_order",
    "feature_spec",
]

STATUSES = ("DEFINITIVE", "INQUIRY_ONLY", "CASE_REJECTED", "EMERGENCY_ABORT")
_DEFINITIVE, _INQUIRY, _REJECTED, _ABORT = range(4)  # a status's code: its place in STATUSES
_STATUS_CODES = {status: code for code, status in enumerate(STATUSES)}

# columns of the dialogue statistic
_EFF_HIT, _EFF_N, _REJ_TRUE, _REJ_N, _CONFLICT, _POLAR_N = range(6)
_SLOPE, _SLOPE_N, _TTS, _TTS_N, _ARR, _ARR_N, _JACCARD, _JACCARD_N, _ILLEGAL, _TURNS = range(6, 16)
_WIDTH = 16


# ----------------------------------------------------------------------------- field parsers


def _parse_id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError("expected a string (or an integer) dialogue id")
    return str(value)


_TURN_LIMIT = 2**62  # differences of two turns must fit in int64


def _parse_turn(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer turn index")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise ValueError("expected an integer turn index")
    if not -_TURN_LIMIT < value < _TURN_LIMIT:
        raise ValueError("expected an integer turn index within ±2**62")
    return value


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
    if not 0 <= value <= 1:  # exact for integers of any size, false for NaN
        raise ValueError("expected a number in [0, 1]")
    return float(value)


def _turns_block(values: list[Any]) -> list[Any] | None:
    """``_parse_turn`` of a block of plain integers within the limit (None: parse one by one)."""
    if not values:
        return values
    if set(map(type, values)) <= {int} and min(values) > -_TURN_LIMIT and max(values) < _TURN_LIMIT:
        return values
    return None


def _diagnoses_block(values: list[Any]) -> list[Any] | None:
    """``_parse_diagnosis`` of a block of strings and nulls (None: parse one by one), each
    distinct text parsed once."""
    if not set(map(type, values)) <= {str, type(None)}:
        return None
    parsed = {v: (v.strip() or None) if v else None for v in set(values)}
    return list(map(parsed.__getitem__, values))


def _confidences_block(values: list[Any]) -> list[Any] | None:
    """``_parse_confidence`` of a block of numbers in [0, 1] and nulls (None: one by one)."""
    types = set(map(type, values))
    if not types <= {float, int, type(None)}:
        return None
    present = [v for v in values if v is not None] if type(None) in types else values
    try:
        numbers = np.fromiter(present, np.float64, len(present))
    except OverflowError:
        return None
    if not np.all((numbers >= 0.0) & (numbers <= 1.0)):  # NaN fails too
        return None
    if int in types:
        return [None if v is None else float(v) for v in values]
    return values


def _terms_block(values: list[Any]) -> list[Any] | None:
    """``_parse_terms`` of a block of lists of strings and nulls (None: parse one by one)."""
    types = set(map(type, values))
    if not types <= {list, type(None)}:
        return None
    lists = [v for v in values if v is not None] if type(None) in types else values
    if not set(map(type, chain.from_iterable(lists))) <= {str}:
        return None
    if len(lists) == len(values):
        return list(map(tuple, values))
    return [None if v is None else tuple(v) for v in values]


# values these parsers return unchanged: the loader skips them for a block of only these types
_parse_id.identity_types = frozenset({str})  # type: ignore[attr-defined]
_parse_object.identity_types = frozenset({dict})  # type: ignore[attr-defined]
_parse_bool.identity_types = frozenset({bool})  # type: ignore[attr-defined]
# a cell of text (CSV, Excel) of these is read as a number or a boolean (FieldSpec.cell_kind)
_parse_turn.cell = "number"  # type: ignore[attr-defined]
_parse_confidence.cell = "number"  # type: ignore[attr-defined]
_parse_bool.cell = "boolean"  # type: ignore[attr-defined]
# and these parse a whole block at once (or return None to have it parsed value by value)
_parse_turn.parse_block = _turns_block  # type: ignore[attr-defined]
_parse_diagnosis.parse_block = _diagnoses_block  # type: ignore[attr-defined]
_parse_confidence.parse_block = _confidences_block  # type: ignore[attr-defined]
_parse_terms.parse_block = _terms_block  # type: ignore[attr-defined]


def feature_spec(path: str) -> FieldSpec:
    """A feature object field (a JSON object, or JSON text of one; optional)."""
    return FieldSpec(path, "json", required=False, parser=_parse_object)


def _keys(name: str, value: object) -> tuple[str, ...]:
    """A list of feature keys (a metric argument), as a tuple; else ValueError."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(f"{name} must be a list of keys, got {value!r}")
    if not all(isinstance(k, str) for k in value):
        raise ValueError(f"{name} must be a list of keys, got {value!r}")
    return tuple(value)


def _differences(pred: dict[str, Any], gold: dict[str, Any], keys: Sequence[str]) -> list[str]:
    """``key value (truth value)`` for each of ``keys`` in both objects with different values."""
    return [
        f"{k} {pred[k]!r} (truth {gold[k]!r})"
        for k in keys
        if k in pred and k in gold and json_equal_key(pred[k]) != json_equal_key(gold[k])
    ]


class DialogueFields:
    """The field names the dialogue metrics read (the protocol's record fields by default)."""

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


def _codes(values: Sequence[Any]) -> np.ndarray:
    """An integer per value, equal values equal codes (in order of first appearance)."""
    index = {value: code for code, value in enumerate(dict.fromkeys(values))}
    return np.fromiter(map(index.__getitem__, values), np.int64, len(values))


def dialogue_order(table: Table, fields: DialogueFields) -> tuple[np.ndarray, np.ndarray]:
    """Record indices sorted by dialogue, then turn, and each sorted record's dialogue code.
    Two records of one dialogue with the same turn are an input error naming the later line.
    Made once per table (the check and the statistic both need it)."""
    key = ("dialogue order", fields.dialogue, fields.turn)
    return table.derived(key, lambda: _dialogue_order(table, fields))  # type: ignore[no-any-return]


def _dialogue_order(table: Table, fields: DialogueFields) -> tuple[np.ndarray, np.ndarray]:
    dialogues = table.column(fields.dialogue)
    if table.repeats is None:
        group = _codes(dialogues)
    else:  # each repeat of a dialogue is a dialogue of its own (its turns' repeat r)
        group = _codes(list(zip(dialogues, table.repeats.tolist(), strict=True)))
    turns = np.asarray(table.column(fields.turn), dtype=np.int64)
    order = _stable_order(group, turns)
    g, t = group[order], turns[order]
    clash = np.flatnonzero((g[1:] == g[:-1]) & (t[1:] == t[:-1]))
    if clash.size:
        first, second = int(order[clash[0]]), int(order[clash[0] + 1])
        dialogue = dialogues[second]
        which = "" if table.repeats is None else f" (repeat {int(table.repeats[second])})"
        raise InputError(
            f"dialogue {dialogue!r}{which} has two records of turn {int(turns[second])} (the "
            f"other on line {int(table.lines[first])})",
            source=table.source,
            line=int(table.lines[second]),
            field=fields.turn,
            value=int(turns[second]),
        )
    return order, g


def turn_columns(table: Table, fields: DialogueFields) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each record's status code (its place in :data:`STATUSES`, as int8), whether its diagnosis
    is correct, and its confidence (0 where absent). Made once per table (the turn statistic
    and the sequence statistic both read them)."""
    f = fields
    key = ("dialogue turns", f.status, f.pred_diagnosis, f.gt_diagnosis, f.confidence)
    return table.derived(key, lambda: _turn_columns(table, fields))  # type: ignore[no-any-return]


def _turn_columns(table: Table, f: DialogueFields) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    statuses = table.column(f.status)  # the loader let only the protocol's statuses in
    status = np.fromiter(map(_STATUS_CODES.__getitem__, statuses), np.int8, len(statuses))
    correct = _correct(table.column(f.pred_diagnosis), table.column(f.gt_diagnosis))
    return status, correct, _confidences(table.column(f.confidence))


def _stable_order(group: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """The indices that sort the records by group, then turn, ties in their order: one stable
    sort of ``group * span + turn`` where that fits in int64 (a turn's offset from the smallest
    below ``span``), else a lexsort with the index as the last key."""
    if not turns.size:
        return np.zeros(0, dtype=np.intp)
    low = int(turns.min())
    span = int(turns.max()) - low + 1
    if (int(group.max()) + 1) * span >= 2**63:
        return np.lexsort((np.arange(turns.size), turns, group))
    return np.argsort(group * span + (turns - low), kind="stable")


def _objects(values: Sequence[Any]) -> np.ndarray:
    """A column as an object array (comparisons with a value then run element by element in C)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _lengths(values: Sequence[Any]) -> np.ndarray:
    """The length of each value, 0 where it is None."""
    present = _present(values)
    out = np.zeros(len(values))
    out[present] = np.fromiter(map(len, compress(values, present.tolist())), np.float64)
    return out


def _is_true(values: Sequence[Any]) -> np.ndarray:
    """Where the value is ``True`` itself."""
    return np.fromiter(map(operator.is_, values, repeat(True)), bool, len(values))


def _present(values: Sequence[Any]) -> np.ndarray:
    """Where the value is not None."""
    return np.fromiter(map(operator.is_not, values, repeat(None)), bool, len(values))


def _correct(pred: Sequence[Any], gold: Sequence[Any]) -> np.ndarray:
    """Where a turn's diagnosis is correct: present and equal to the truth's."""
    correct: np.ndarray = np.fromiter(map(operator.eq, pred, gold), bool, len(pred))
    correct &= _present(pred)
    return correct


def _confidences(values: Sequence[Any]) -> np.ndarray:
    """The confidences as floats, 0 where absent."""
    out = np.array(values, dtype=np.float64)  # None: NaN (a confidence itself is never NaN)
    out[np.isnan(out)] = 0.0
    return out


def _feature_checks(
    pred: Sequence[Any],
    gold: Sequence[Any],
    polarity_fields: Sequence[str],
    from_text: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per turn: [conflict, polarity turn, Jaccard, structure turn] and the reasons of the
    conflict and of the structure mismatch. Computed once per distinct pair of feature objects
    (dictionaries compared member by member in Python), then spread to every turn.
    ``from_text``: the objects were read from text (:func:`_feature_pairs`)."""
    codes, firsts = _feature_pairs(pred, gold, from_text)
    checks = np.zeros((len(firsts), 4))
    conflicts = np.empty(len(firsts), dtype=object)
    structures = np.empty(len(firsts), dtype=object)
    for code, i in enumerate(firsts.tolist()):
        p, g = pred[i], gold[i]
        if not p and not g:
            continue
        p, g = p or {}, g or {}
        shared = [k for k in polarity_fields if k in p and k in g]
        if shared:
            differ = _differences(p, g, shared)
            checks[code, :2] = (float(bool(differ)), 1.0)
            if differ:
                conflicts[code] = "polarity contradicts: " + ", ".join(differ)
        a = {(k, json_equal_key(v)) for k, v in p.items()}
        b = {(k, json_equal_key(v)) for k, v in g.items()}
        checks[code, 2:] = (len(a & b) / len(a | b), 1.0)
        if a != b:
            structures[code] = _structure_reason(p, g)
    return checks[codes], conflicts[codes], structures[codes]


def _feature_pairs(
    pred: Sequence[Any], gold: Sequence[Any], from_text: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`_alike` gives of the two columns' :func:`_feature_keys`, a code per turn
    (numbered otherwise) and a turn of each code. Where every member of every object is a
    string, from one key per turn: the JSON text of the pair, all made by one orjson call.

    ``from_text``: the objects were read from text (JSON, JSON lines, CSV: of the JSON parser's
    types alone, which :func:`_parse_object` keeps). orjson writes a quoted string for a string
    and for nothing else of those types (NaN is ``null``, 1.0 is ``1.0``), so objects of equal
    texts have strings in the same places: the members' types are checked on one turn of each
    text, not on every turn."""
    preds = [value or _NO_FEATURES for value in pred]
    golds = [value or _NO_FEATURES for value in gold]
    if from_text:
        codes = _codes(_pair_texts(list(zip(preds, golds, strict=True))))
        firsts = _firsts(codes)
        seen = [d for i in firsts.tolist() for d in (preds[i], golds[i])]
        if set(map(type, chain.from_iterable(map(dict.values, seen)))) <= {str}:
            return codes, firsts
        return _alike(_feature_keys(pred), _feature_keys(gold))  # a member is no string
    if not set(map(type, chain.from_iterable(map(dict.values, chain(preds, golds))))) <= {str}:
        return _alike(_feature_keys(pred), _feature_keys(gold))
    codes = _codes(_pair_texts(list(zip(preds, golds, strict=True))))
    return codes, _firsts(codes)


def _firsts(codes: np.ndarray) -> np.ndarray:
    """A position of each code, where codes are numbered in order of first appearance: code k
    first where the running maximum reaches k."""
    return np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1) > 0)


def _pair_texts(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[bytes]:
    """A text per pair of objects whose members are strings, equal exactly where the pairs'
    JSON texts are: the list's JSON text cut at ``],[`` (where no string holds a ``[``, the
    pairs' boundaries and nothing else), else :func:`json_texts`."""
    try:
        text = orjson.dumps(pairs)
    except TypeError:  # a key that is not a string: the standard library's text
        return json_texts(pairs)
    if pairs and text.count(b"[") == len(pairs) + 1:
        return text[2:-2].split(b"],[")
    return json_texts(pairs)


def _feature_keys(objects: Sequence[Any]) -> list[Hashable]:
    """A key per feature object (None or a dictionary): its JSON text, equal for objects whose
    members are the same strings in the same order, so that their comparisons come out alike;
    the object's position (a key of its own) where a member's value is not a string (1 and 1.0,
    or NaN and null, would share a text but not a comparison)."""
    dicts = [value or _NO_FEATURES for value in objects]
    if set(map(type, chain.from_iterable(map(dict.values, dicts)))) <= {str}:
        return list(json_texts(dicts))
    return [
        orjson.dumps(d) if set(map(type, d.values())) <= {str} else i for i, d in enumerate(dicts)
    ]


_NO_FEATURES: dict[str, Any] = {}  # read only


def _alike(first: Sequence[Hashable], second: Sequence[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """A code per position, equal where both keys are equal, and a position of each code."""
    a, b = _codes(first), _codes(second)
    pairs = a * (int(b.max(initial=0)) + 1) + b
    _, firsts, codes = np.unique(pairs, return_index=True, return_inverse=True)
    return codes.reshape(-1), firsts


def _group_sums(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    return np.bincount(group, weights=values, minlength=n_groups)


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

    def check(self, table: Table) -> None:
        if self.sequence:
            dialogue_order(table, self.f)  # two records of one turn: an input error now

    def compute(self, table: Table, context: Context) -> StatBlock:
        with collector_paused():  # many small containers, no cycles
            return self._compute(table)

    def _compute(self, table: Table) -> StatBlock:
        f = self.f
        n = table.n
        rows = np.zeros((n, _WIDTH))
        status, correct, conf = turn_columns(table, f)
        if self.sequence:
            return self._sequence(table, rows, status, correct, conf)

        pred_dx, gt_dx = table.column(f.pred_diagnosis), table.column(f.gt_diagnosis)
        definitive, rejected = status == _DEFINITIVE, status == _REJECTED
        eff = definitive & _present(gt_dx)
        rows[:, _EFF_HIT], rows[:, _EFF_N] = eff & correct, eff
        true_rejection = _is_true(table.column(f.gt_conflict))
        rows[:, _REJ_TRUE] = rejected & true_rejection
        rows[:, _REJ_N] = rejected
        missed = _is_true(table.column(f.gt_is_emergency)) & (status != _ABORT)
        blind = (_objects(table.column(f.risk)) == "UNCERTAIN") & definitive
        rows[:, _ILLEGAL] = missed | blind
        rows[:, _TURNS] = 1.0
        reasons = {
            name: np.empty(n, dtype=object) for name in ("effective_recall", "rejection", "funnel")
        }
        for j in np.flatnonzero(eff & ~correct).tolist():
            reasons["effective_recall"][j] = (
                f"DEFINITIVE {pred_dx[j]!r}, truth {gt_dx[j]!r}"
                if pred_dx[j]
                else f"DEFINITIVE without a diagnosis, truth {gt_dx[j]!r}"
            )
        reasons["rejection"][rejected & ~true_rejection] = (
            f"CASE_REJECTED, but {f.gt_conflict} is not true: the case holds"
        )
        for j in np.flatnonzero(missed).tolist():
            reasons["funnel"][j] = (
                f"missed emergency: status {STATUSES[status[j]]}, not EMERGENCY_ABORT"
            )
        reasons["funnel"][blind & ~missed] = (
            "DEFINITIVE although risk is UNCERTAIN (a blind diagnosis)"
        )
        features, reasons["conflict"], reasons["structure"] = _feature_checks(
            table.column(f.pred_features),
            table.column(f.gt_features),
            self.polarity_fields,
            from_text=table.read_from_text,
        )
        rows[:, [_CONFLICT, _POLAR_N, _JACCARD, _JACCARD_N]] = features
        return StatBlock(width=_WIDTH, rows=rows, reasons=reasons)

    def _sequence(
        self,
        table: Table,
        rows: np.ndarray,
        status: np.ndarray,
        correct: np.ndarray,
        conf: np.ndarray,
    ) -> StatBlock:
        """The columns that read a dialogue as a sequence, vectorised over all dialogues:
        slope, turns to stability, ambiguity resolution."""
        order, g = dialogue_order(table, self.f)
        n = order.size
        n_groups = int(g[-1]) + 1 if n else 0
        new = np.ones(n, dtype=bool)
        new[1:] = g[1:] != g[:-1]  # first turn of its dialogue (in sorted order)
        starts = np.flatnonzero(new)
        firsts = order[starts]
        sizes = np.bincount(g, minlength=n_groups).astype(np.float64)
        # turns relative to each dialogue's first, in exact integers before any float: turn
        # indices of 10**17 and 10**17 + 1 stay one apart
        whole = np.asarray(table.column(self.f.turn), dtype=np.int64)[order]
        t = (whole - whole[starts][g]).astype(np.float64)
        c = np.where(correct, conf, 0.0)[order]

        # slope: least squares of c over t per dialogue (centred sums: numpy.polyfit's value)
        dt = t - (_group_sums(g, t, n_groups) / sizes)[g]
        dc = c - (_group_sums(g, c, n_groups) / sizes)[g]
        sxy, sxx = _group_sums(g, dt * dc, n_groups), _group_sums(g, dt * dt, n_groups)
        two = sizes >= 2
        rows[firsts[two], _SLOPE] = sxy[two] / sxx[two]
        rows[firsts[two], _SLOPE_N] = 1.0

        # turns to stability: runs of adjacent steady turns with the same diagnosis
        dx = _codes(table.column(self.f.pred_diagnosis))[order]
        steady = correct[order] & (conf[order] > self.lock_confidence)
        cont = np.zeros(n, dtype=bool)
        cont[1:] = steady[1:] & steady[:-1] & ~new[1:] & (dx[1:] == dx[:-1])
        position = np.arange(n)
        run_start = np.maximum.accumulate(np.where(cont, 0, position))
        run = np.where(steady, position - run_start + 1, 0)
        locked = np.flatnonzero(run >= self.lock_turns)
        tts = sizes.copy()  # never locked: the number of turns
        if locked.size:
            groups, first_lock = np.unique(g[locked], return_index=True)
            k = locked[first_lock]
            tts[groups] = t[k - self.lock_turns + 1] - t[starts[groups]]
        rows[firsts, _TTS] = tts
        rows[firsts, _TTS_N] = 1.0

        # ambiguity resolution after INQUIRY_ONLY turns that have a next turn
        length = _lengths(table.column(self.f.ambiguous_terms))[order]
        inquiry = (status == _INQUIRY)[order]
        has_next = np.zeros(n, dtype=bool)
        has_next[:-1] = ~new[1:]
        asked = np.flatnonzero(inquiry & has_next & (length > 0))
        resolved = (length[asked] - length[asked + 1]) / length[asked]
        rows[order[asked], _ARR] = resolved
        rows[order[asked], _ARR_N] = 1.0
        ambiguity = np.empty(table.n, dtype=object)
        for position in asked[length[asked + 1] > 0]:
            ambiguity[order[position]] = (
                f"after asking, {int(length[position + 1])} ambiguous term(s) remained "
                f"(of {int(length[position])})"
            )

        missing = int(np.count_nonzero(correct & ~_present(table.column(self.f.confidence))))
        counts = {"correct_turns_without_confidence": missing} if missing else {}
        return StatBlock(width=_WIDTH, rows=rows, counts=counts, reasons={"ambiguity": ambiguity})


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
        for i in np.flatnonzero(_present(pred) & _present(gold)).tolist():  # both texts
            p, g = pred_ft[i] or {}, gt_ft[i] or {}
            locked = any(
                k in p and k in g and json_equal_key(p[k]) != json_equal_key(g[k])
                for k in self.lock_fields
            )
            yield i, pred[i], gold[i], locked

    def pairs(self, table: Table) -> Iterable[Pair]:
        return (pair for _, pair in self.indexed_pairs(table))

    def indexed_pairs(self, table: Table) -> Iterable[tuple[int, Pair]]:
        for i, a, b, locked in self._turns(table):
            if not locked and a != b:  # a locked turn scores 0 whatever the texts say
                yield i, (a, b)

    def compute(self, table: Table, context: Context) -> StatBlock:
        rows = np.zeros((table.n, 3))
        reasons = np.empty(table.n, dtype=object)
        pred_ft, gt_ft = table.column(self.pred_features), table.column(self.gt_features)
        for i, a, b, locked in self._turns(table):
            if locked:
                rows[i, :2] = (0.0, 1.0)
                differ = _differences(pred_ft[i] or {}, gt_ft[i] or {}, self.lock_fields)
                reasons[i] = "logic lock, penalty 1: " + ", ".join(differ)
                continue
            sim = 1.0 if a == b else context.scores().get(a, b)
            if math.isnan(sim):
                rows[i, 2] = 1.0
            else:
                rows[i, :2] = (max(0.0, sim), 1.0)
        failed = int(rows[:, 2].sum())
        explained = {"lock": reasons}
        if failed:
            left_out = np.empty(table.n, dtype=object)
            left_out[rows[:, 2] == 1.0] = "similarity failed: turn left out"
            explained[LEFT_OUT] = left_out
        return StatBlock(
            width=3,
            rows=rows,
            counts={"similarity_failed_records": failed} if failed else {},
            reasons=explained,
        )


def _structure_reason(p: dict[str, Any], g: dict[str, Any]) -> str | None:
    parts = []
    for k in sorted(set(p) | set(g)):
        if k not in p:
            parts.append(f"{k} missing (truth {g[k]!r})")
        elif k not in g:
            parts.append(f"{k} {p[k]!r} not in the truth")
        elif json_equal_key(p[k]) != json_equal_key(g[k]):
            parts.append(f"{k} {p[k]!r} (truth {g[k]!r})")
    return "; ".join(parts) or None


# ------------------------------------------------------------------------------------ metrics


# Arguments a metric does not read are fixed at their defaults (they are not its arguments and do
# not show in its signature): turn metrics ignore the lock settings, sequence metrics the
# polarity fields, and all but turns_to_stability the lock settings.
_TURN_ONLY: dict[str, Any] = {"lock_confidence": 0.8, "lock_turns": 2}
_SEQUENCE_ONLY: dict[str, Any] = {"polarity_fields": ("nature", "deficiency")}
_SLOPE_ONLY: dict[str, Any] = {**_TURN_ONLY, **_SEQUENCE_ONLY}


@dataclass(eq=False)
class DialogueMetric(Metric):
    """A ratio of two columns of the dialogue statistic."""

    num: ClassVar[int]
    den: ClassVar[int]
    over: ClassVar[str]
    complement: ClassVar[bool] = False
    sequence: ClassVar[bool] = False
    """Whether the metric reads each dialogue as a sequence (then whole dialogues resample)."""
    unit: ClassVar[str] = "turns"

    polarity_fields: Sequence[str] = ("nature", "deficiency")
    lock_confidence: Annotated[float, Range(0, 1, high_open=True)] = 0.8
    lock_turns: Annotated[int, Range(1, 1_000_000)] = 2
    zero_division: ZeroDivision = None
    dialogue: str = "dialogue_id"
    turn: str = "turn"
    status: str = "status"
    pred_diagnosis: str = "pred_diagnosis"
    gt_diagnosis: str = "gt_diagnosis"
    pred_features: str = "pred_features"
    gt_features: str = "gt_features"
    confidence: str = "confidence"
    ambiguous_terms: str = "ambiguous_terms"
    risk: str = "risk"
    gt_is_emergency: str = "gt_is_emergency"
    gt_conflict: str = "gt_conflict"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.polarity_fields = _keys("polarity_fields", self.polarity_fields)
        self.lock_confidence = float(self.lock_confidence)
        self.lock_turns = int(self.lock_turns)
        self.field_names = DialogueFields(
            self.dialogue,
            self.turn,
            self.status,
            self.pred_diagnosis,
            self.gt_diagnosis,
            self.pred_features,
            self.gt_features,
            self.confidence,
            self.ambiguous_terms,
            self.risk,
            self.gt_is_emergency,
            self.gt_conflict,
        )

    def statistic(self) -> Statistic:
        return DialogueStatistic(
            self.field_names,
            self.polarity_fields,
            self.lock_confidence,
            self.lock_turns,
            self.sequence,
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        if not self.complement:
            return safe_divide(summed[..., self.num], summed[..., self.den], self.zero_division)
        # 1 - ratio; with nothing to count the metric itself takes the policy's value
        den = summed[..., self.den]
        value = 1.0 - safe_divide(summed[..., self.num], den, None)
        return np.asarray(np.where(den == 0, fill_value(self.zero_division), value))

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., self.den]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return f"no {self.over}"


@register_metric("effective_recall", **_TURN_ONLY)
@dataclass(eq=False)
class EffectiveRecall(DialogueMetric):
    """Correct diagnoses over DEFINITIVE turns whose ground truth has a diagnosis."""

    definition = (
        "correct / turns with status DEFINITIVE and a gt_diagnosis (INQUIRY_ONLY and other "
        "statuses are left out: a delayed decision is not a miss)."
    )
    reason = "effective_recall"
    num, den, over = _EFF_HIT, _EFF_N, "DEFINITIVE turns with a gt_diagnosis"


@register_metric("rejection_precision", **_TURN_ONLY)
@dataclass(eq=False)
class RejectionPrecision(DialogueMetric):
    """CASE_REJECTED turns whose case truly conflicts, over all CASE_REJECTED turns."""

    definition = "CASE_REJECTED turns with gt_conflict true / all CASE_REJECTED turns."
    reason = "rejection"
    num, den, over = _REJ_TRUE, _REJ_N, "CASE_REJECTED turns"


@register_metric("critical_conflict_rate", **_TURN_ONLY)
@dataclass(eq=False)
class CriticalConflictRate(DialogueMetric):
    """Share of turns whose predicted polarity (cold/heat, deficiency/excess) contradicts."""

    definition = (
        "turns where a polarity field (nature, deficiency) differs / turns where one is in both "
        "feature objects."
    )
    higher_is_better = False
    reason = "conflict"
    num, den, over = _CONFLICT, _POLAR_N, "turns with a polarity field in both feature objects"


@register_metric("incremental_hit_slope", **_SLOPE_ONLY)
@dataclass(eq=False)
class IncrementalHitSlope(DialogueMetric):
    """Mean per-dialogue least-squares slope of the correct-diagnosis confidence over turns."""

    definition = (
        "mean over dialogues of >= 2 turns of numpy.polyfit(turn, c, 1)[0], c = confidence on "
        "correct turns, else 0."
    )
    per_record = False
    unit = "dialogues"
    sequence = True
    num, den, over = _SLOPE, _SLOPE_N, "dialogues with at least 2 turns"


@register_metric("turns_to_stability", **_SEQUENCE_ONLY)
@dataclass(eq=False)
class TurnsToStability(DialogueMetric):
    """Mean over dialogues of T_lock - T_start (the number of turns when it never locks)."""

    definition = (
        "mean over dialogues of T_lock - T_start; T_lock: first turn of the first run of "
        ">= 2 consecutive turns with the same correct diagnosis and confidence > 0.8; never "
        "locked: the dialogue's number of turns."
    )
    per_record = False
    higher_is_better = False
    unit = "dialogues"
    sequence = True
    num, den, over = _TTS, _TTS_N, "dialogues"


@register_metric("ambiguity_resolution_rate", **_SLOPE_ONLY)
@dataclass(eq=False)
class AmbiguityResolutionRate(DialogueMetric):
    """Mean share of ambiguous terms resolved by the turn after an INQUIRY_ONLY turn."""

    definition = (
        "mean over INQUIRY_ONLY turns with ambiguous_terms and a next turn of "
        "(|terms_t| - |terms_t+1|) / |terms_t|."
    )
    reason = "ambiguity"
    sequence = True
    num, den, over = _ARR, _ARR_N, "INQUIRY_ONLY turns with ambiguous_terms and a next turn"


@register_metric("structure_match", **_TURN_ONLY)
@dataclass(eq=False)
class StructureMatch(DialogueMetric):
    """Mean Jaccard similarity of the predicted and true feature key-value pairs."""

    definition = (
        "mean over turns with features of |pairs_pred ∩ pairs_gt| / |pairs_pred ∪ pairs_gt| "
        "(a key-value pair matches when key and JSON value are equal)."
    )
    reason = "structure"
    num, den, over = _JACCARD, _JACCARD_N, "turns with a non-empty feature object"


@register_metric("funnel_adherence", **_TURN_ONLY)
@dataclass(eq=False)
class FunnelAdherence(DialogueMetric):
    """1 - illegal turns / all turns (a missed emergency, or DEFINITIVE on an UNCERTAIN risk)."""

    definition = (
        "1 - illegal / all turns; illegal: gt_is_emergency and status != EMERGENCY_ABORT, or "
        "risk UNCERTAIN and status DEFINITIVE."
    )
    reason = "funnel"
    complement = True
    num, den, over = _ILLEGAL, _TURNS, "turns"


@register_metric("logic_weighted_f1", **_TURN_ONLY)
@dataclass(eq=False)
class LogicWeightedF1(DialogueMetric):
    """2PR/(P + R) of rejection_precision and effective_recall."""

    definition = "2PR/(P + R), P = rejection_precision, R = effective_recall (0 when P = R = 0)."
    per_record = False
    num, den, over = _EFF_HIT, _EFF_N, ""

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        zd = self.zero_division  # P and R follow the policy; F1 of the two is then their F1
        p = safe_divide(summed[..., _REJ_TRUE], summed[..., _REJ_N], zd)
        r = safe_divide(summed[..., _EFF_HIT], summed[..., _EFF_N], zd)
        return safe_divide(2 * p * r, p + r, 0.0)  # P = R = 0 gives 0; a null P or R, null

    def count(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        out: np.ndarray = summed[..., _EFF_N] + summed[..., _REJ_N]
        return out

    def filled_by_policy(self, summed: np.ndarray) -> bool:
        return bool(summed[_REJ_N] == 0 or summed[_EFF_N] == 0)  # P or R is 0/0

    def undefined_reason(self, summed: np.ndarray) -> str:
        missing = []
        if summed[_REJ_N] == 0:
            missing.append("no CASE_REJECTED turns (rejection_precision undefined)")
        if summed[_EFF_N] == 0:
            missing.append("no DEFINITIVE turns with a gt_diagnosis (effective_recall undefined)")
        return "; ".join(missing)


@register_metric("hybrid_semantic_accuracy")
@dataclass(eq=False)
class HybridSemanticAccuracy(Metric):
    """Mean over turns with both texts of max(0, cos) x (1 - penalty)."""

    definition = (
        "mean over turns with pred_text and gt_text of max(0, sim(pred_text, gt_text)) x "
        "(1 - penalty); penalty 1 when a lock field (nature, sweat) is in both feature objects "
        "and differs."
    )
    unit = "turns"
    reason = "lock"

    lock_fields: Sequence[str] = ("nature", "sweat")
    zero_division: ZeroDivision = None
    pred_text: str = "pred_text"
    gt_text: str = "gt_text"
    pred_features: str = "pred_features"
    gt_features: str = "gt_features"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.lock_fields = _keys("lock_fields", self.lock_fields)

    def statistic(self) -> Statistic:
        return HybridStatistic(
            self.pred_text, self.gt_text, self.pred_features, self.gt_features, self.lock_fields
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return safe_divide(summed[..., 0], summed[..., 1], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        if summed[2] > 0:
            return f"every turn with both texts failed in the similarity backend ({summed[2]:g})"
        return f"no turns with both {self.pred_text} and {self.gt_text}"
