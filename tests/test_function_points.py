"""The function-points suite: judge metrics against scikit-learn, set metrics against hand
arithmetic, the reference's semantic score against an independent implementation, calibration."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    f1_score,
    precision_score,
    recall_score,
)

import pingce
from pingce.calibrate import calibrate
from pingce.errors import InputError
from pingce.similarity.fake import FakeBackend
from pingce.similarity.lexical import LexicalBackend

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "function_points" / "records.jsonl"


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines()]


def yes(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in {"yes", "是"})


def test_judge_metrics_equal_scikit_learn() -> None:
    records = rows()
    judge = [r for r in records if r["task"] == "judge"]
    gold = [yes(r["gold"]) for r in judge]
    pred = [yes(r["pred"]) for r in judge]
    result = pingce.evaluate("function-points", records, bootstrap=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = {
            "judge_accuracy": accuracy_score(gold, pred),
            "judge_precision": precision_score(gold, pred),
            "judge_recall": recall_score(gold, pred),
            "judge_f1": f1_score(gold, pred),
        }
    for name, value in expected.items():
        assert result.metrics[name].value == pytest.approx(value, abs=1e-12), name
    assert result.metrics["judge_accuracy"].n == len(judge)


def test_exact_set_metrics_by_hand() -> None:
    records = [
        {"id": "a", "task": "selection", "gold_items": ["x", "y", "z"], "pred_items": ["x", "q"]},
        {"id": "b", "task": "selection", "gold_items": ["m"], "pred_items": ["m", "m", "n"]},
    ]
    result = pingce.evaluate("function-points", records, bootstrap=0, similarity="exact")
    # matches 1 + 1 = 2; predicted 2 + 2 (duplicates ignored) = 4; gold 3 + 1 = 4
    assert result.metrics["set_precision"].value == pytest.approx(2 / 4)
    assert result.metrics["set_recall"].value == pytest.approx(2 / 4)
    assert result.metrics["set_f1"].value == pytest.approx(2 * 2 / (4 + 4))
    # with the exact backend the semantic metrics are the exact ones
    assert result.metrics["sem_f1"].value == pytest.approx(result.metrics["set_f1"].value)
    assert result.metrics["judge_accuracy"].value is None
    assert result.metrics["judge_accuracy"].undefined_reason


def seed_fuzzy(pred: list[str], gold: list[str], sim: dict[tuple[str, str], float]) -> float:
    """Score_fuzzy of the reference, written out independently: sum over predictions of the best
    I(p, t)·Sim(p, t), I = 1 for identical strings (Sim 1) or Sim > 0.7."""
    total = 0.0
    for p in dict.fromkeys(pred):
        best = 0.0
        for t in dict.fromkeys(gold):
            s = 1.0 if p == t else sim[(p, t)]
            if p == t or s > 0.7:
                best = max(best, s)
        total += best
    return total


def test_semantic_metrics_follow_the_seed_formula_with_lexical_scores() -> None:
    records = rows()
    selection = [r for r in records if r["task"] == "selection"]
    pairs = [
        (p, t)
        for r in selection
        for p in dict.fromkeys(r["pred_items"])
        for t in dict.fromkeys(r["gold_items"])
        if p != t
    ]
    table, _ = LexicalBackend().score(pairs)
    sim = {pair: table.get(*pair) for pair in pairs}
    score = sum(seed_fuzzy(r["pred_items"], r["gold_items"], sim) for r in selection)
    n_pred = sum(len(set(r["pred_items"])) for r in selection)
    n_gold = sum(len(set(r["gold_items"])) for r in selection)
    result = pingce.evaluate("function-points", records, bootstrap=0, similarity="lexical")
    assert result.metrics["sem_precision"].value == pytest.approx(score / n_pred, abs=1e-12)
    assert result.metrics["sem_recall"].value == pytest.approx(score / n_gold, abs=1e-12)
    assert result.signature.similarity == "lexical:char-1-3"
    # a prediction identical to a truth is never compared with the other truths
    asked = {
        (p, t)
        for r in selection
        for p in r["pred_items"]
        if p not in r["gold_items"]
        for t in r["gold_items"]
    }
    assert len(asked) < len(set(pairs))
    assert result.similarity is not None and result.similarity["pairs"] == len(asked)


def test_exact_predictions_are_not_asked_so_a_failing_backend_keeps_their_record() -> None:
    records = [
        {"task": "selection", "gold_items": ["订单", "客户"], "pred_items": ["订单", "客户"]},
        {"task": "selection", "gold_items": ["订单", "客户"], "pred_items": ["订单", "订单表"]},
    ]
    backend = FakeBackend(lambda a, b: 0.9, fail={("订单表", "客户"), ("订单表", "订单")})
    # only the non-exact prediction of record 2 is asked about
    result = pingce.evaluate(
        "function-points", records, bootstrap=0, similarity=backend, on_judge_failure="skip"
    )
    assert sorted(backend.asked) == [("订单表", "客户"), ("订单表", "订单")]
    # record 1 (all exact) is scored: P = R = 2/2; record 2 has a failed pair and is left out
    # (on_judge_failure="skip"; by default the metric would be null)
    assert result.metrics["sem_precision"].value == 1.0
    assert result.metrics["sem_recall"].value == 1.0
    assert result.failures.similarity_failed_records == 1


def test_seed_recall_can_exceed_one_and_one_to_one_cannot() -> None:
    records = [
        {"task": "selection", "gold_items": ["员工信息"], "pred_items": ["员工信息", "员工信息表"]}
    ]
    seed = pingce.evaluate("function-points", records, bootstrap=0, similarity="lexical")
    sim = LexicalBackend().score([("员工信息表", "员工信息")])[0].get("员工信息表", "员工信息")
    assert sim > 0.7
    assert seed.metrics["sem_recall"].value == pytest.approx(1.0 + sim)
    spec = pingce.suites.load_suite("function-points").spec.model_copy(deep=True)
    spec.defaults = spec.defaults.model_copy(update={"assignment": "one-to-one"})
    one = pingce.evaluate(spec, records, bootstrap=0, similarity="lexical")
    assert one.metrics["sem_recall"].value == pytest.approx(1.0)
    assert one.metrics["sem_precision"].value == pytest.approx(1.0 / 2)


def test_unknown_task_is_an_input_error() -> None:
    with pytest.raises(InputError) as info:
        pingce.evaluate("function-points", [{"task": "judgement", "gold": True, "pred": True}])
    assert info.value.field == "task" and info.value.line == 1
    assert "judge" in str(info.value)


def test_judge_record_without_pred_is_an_input_error() -> None:
    with pytest.raises(InputError) as info:
        pingce.evaluate(
            "function-points", [{"task": "judge", "gold": True}, {"task": "judge", "gold": "No"}]
        )
    assert info.value.field == "pred" and info.value.line == 1


def test_unparseable_judge_answer_is_a_counted_wrong_answer() -> None:
    records = [
        {"task": "judge", "gold": True, "pred": "maybe"},
        {"task": "judge", "gold": False, "pred": "No"},
    ]
    result = pingce.evaluate("function-points", records, bootstrap=0)
    assert result.failures.parse == 1
    assert result.metrics["judge_accuracy"].value == pytest.approx(0.5)


def test_unparseable_judge_answer_is_never_a_predicted_positive() -> None:
    """Issue 12: before, an unparseable answer to a gold No was scored as a Yes (a false
    positive), which lowered precision. It predicted nothing: wrong for accuracy, a miss for
    recall on gold Yes, outside precision. Checked against scikit-learn on the parsed answers
    with each unparseable one written as the answer that is wrong and not Yes where one exists
    (gold Yes -> No) and left out of precision otherwise."""
    records = [
        {"task": "judge", "gold": True, "pred": "Yes"},
        {"task": "judge", "gold": True, "pred": "不确定"},
        {"task": "judge", "gold": False, "pred": "maybe"},
        {"task": "judge", "gold": False, "pred": "No"},
        {"task": "judge", "gold": False, "pred": "Yes"},
    ]
    result = pingce.evaluate("function-points", records, bootstrap=0)
    assert result.failures.parse == 2
    # precision over the answers that said Yes: records 1 and 5
    assert result.value("judge_precision") == pytest.approx(
        precision_score([True, False], [True, True])
    )
    # recall over gold Yes: record 1 said Yes, record 2 said nothing usable (a miss)
    assert result.value("judge_recall") == pytest.approx(recall_score([True, True], [True, False]))
    assert result.value("judge_accuracy") == pytest.approx(2 / 5)  # records 1 and 4
    # F1 from that precision and recall
    p, r = 1 / 2, 1 / 2
    assert result.value("judge_f1") == pytest.approx(2 * p * r / (p + r))
    why = [row.get("misses", {}).get("judge_accuracy") for row in result.record_values()]
    assert "could not be parsed" in str(why[1]) and "could not be parsed" in str(why[2])


def test_calibrate_agrees_with_scikit_learn(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    words = ["员工信息", "员工信息表", "部门", "部门表", "订单", "订单明细", "客户", "客户信息"]
    pairs = []
    for _ in range(60):
        a, b = rng.choice(words, size=2)
        pairs.append({"a": str(a), "b": str(b), "match": bool(str(a)[:2] == str(b)[:2])})
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(p, ensure_ascii=False) for p in pairs), encoding="utf-8")
    result = calibrate(path, "lexical")
    table, _ = LexicalBackend().score((p["a"], p["b"]) for p in pairs)
    scores = np.array([table.get(p["a"], p["b"]) for p in pairs])
    labels = np.array([p["match"] for p in pairs])
    said = np.array([p["a"] == p["b"] for p in pairs]) | (scores > result.best.threshold)
    assert result.best.f1 == pytest.approx(f1_score(labels, said), abs=1e-12)
    assert result.best.kappa == pytest.approx(cohen_kappa_score(labels, said), abs=1e-12)
    # no other candidate threshold gives a higher F1
    for t in np.unique(np.concatenate([[0.0], scores])):
        other = np.array([p["a"] == p["b"] for p in pairs]) | (scores > t)
        assert f1_score(labels, other) <= result.best.f1 + 1e-12
