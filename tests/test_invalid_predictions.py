"""A model's answer is never bad input (issue 28): a prediction off its label scale
("medium-high" in contract-risk), blank or null is counted (``failures.invalid_prediction``),
scored as wrong and shown; the kappas leave it out and say how many. A gold label off the scale,
and a prediction field absent from a record, stay input errors (exit 2 naming file, line, field
and value). The same holds for the judge task of function-points (``failures.parse`` there).

The values are checked against scikit-learn in tests/test_classification_parity.py and
tests/test_classification_options.py (random cases with predictions off the scale); here the
whole path: loading, the command line, the reports, comparisons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, f1_score

import pingce
from pingce.errors import InputError
from pingce.labels import RISK_LEVELS, LabelScale
from pingce.records import FieldSpec, load_records

from .cli_run import run_pingce

SCALE = list(RISK_LEVELS.labels)  # 高 中 低
INVALID = "(invalid)"  # how pingce names a prediction off the scale (written out by hand)

# (gold, pred) of contract-risk records; four predictions are off the scale, blank or null
PAIRS: list[tuple[str, Any]] = [
    ("高", "高"),
    ("高", "medium-high"),
    ("中", "中"),
    ("中", None),
    ("低", "低"),
    ("低", ""),
    ("高", "中"),
    ("中", "low"),
    ("低", "HIGH"),
    ("低", "极低"),
    ("中", "medium"),
    ("高", "high"),
]
N_INVALID = 4


def _records(pairs: list[tuple[str, Any]], prefix: str = "cr") -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}-{i}", "contract_type": "买卖合同" if i % 2 else "租赁合同", **fields}
        for i, (gold, pred) in enumerate(pairs)
        for fields in [{"gold_level": gold, "pred_level": pred}]
    ]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def _as_scale(pred: Any) -> str:
    """A prediction as scikit-learn sees it: its label, or INVALID as a class of its own."""
    code = RISK_LEVELS.code(pred)
    return INVALID if code is None else RISK_LEVELS.labels[code]


GOLD = [gold for gold, _ in PAIRS]
PRED = [_as_scale(pred) for _, pred in PAIRS]


# ------------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    "raw", ["medium-high", None, "", "   ", "极高", 7, True, 2.5, {"level": "高"}, ["高"]]
)
def test_a_prediction_off_the_scale_loads_as_code_k(raw: Any) -> None:
    specs = [
        FieldSpec("gold", "label", scale=RISK_LEVELS),
        FieldSpec("pred", "label", scale=RISK_LEVELS, lenient=True),
    ]
    rows = [{"gold": "高", "pred": "high"}, {"gold": "低", "pred": raw}]
    rows.append({"gold": "中", "pred": "中"})
    table = load_records(rows, specs)
    assert table.column("pred").tolist() == [0, RISK_LEVELS.k, 1]
    assert RISK_LEVELS.names(table.column("pred")) == ["高", INVALID, "中"]


def test_a_gold_label_off_the_scale_and_an_absent_prediction_stay_input_errors() -> None:
    specs = [
        FieldSpec("gold", "label", scale=RISK_LEVELS),
        FieldSpec("pred", "label", scale=RISK_LEVELS, lenient=True),
    ]
    with pytest.raises(InputError) as info:
        load_records([{"gold": "高", "pred": "高"}, {"gold": "medium-high", "pred": "高"}], specs)
    assert (info.value.line, info.value.field, info.value.value) == (2, "gold", "medium-high")
    with pytest.raises(InputError) as info:
        load_records([{"gold": "高", "pred": "高"}, {"gold": None, "pred": "高"}], specs)
    assert (info.value.line, info.value.field) == (2, "gold")
    with pytest.raises(InputError, match="missing") as info:
        load_records([{"gold": "高", "pred": "高"}, {"gold": "低"}], specs)
    assert (info.value.line, info.value.field) == (2, "pred")


def test_a_scale_cannot_name_a_label_invalid() -> None:
    with pytest.raises(ValueError, match="off the scale"):
        LabelScale(("a", INVALID))


# ------------------------------------------------------------------------- the command line


def test_contract_risk_counts_scores_and_shows_predictions_off_the_scale(tmp_path: Path) -> None:
    data = _write(tmp_path / "risk.jsonl", _records(PAIRS))
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out),
                      "--bootstrap", "100", "--slice", "pred_level",
                      "--records-fields", "all")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert result["failures"]["invalid_prediction"] == N_INVALID
    assert result["n_records"] == len(PAIRS)

    metrics = result["metrics"]
    assert metrics["accuracy"]["value"] == pytest.approx(accuracy_score(GOLD, PRED), abs=1e-12)
    assert metrics["accuracy"]["n"] == len(PAIRS)
    macro = f1_score(GOLD, PRED, labels=SCALE, average="macro")
    assert metrics["macro_f1"]["value"] == pytest.approx(macro, abs=1e-12)
    binary = f1_score([g != "低" for g in GOLD], [p in ("高", "中") for p in PRED])
    assert metrics["f1"]["value"] == pytest.approx(binary, abs=1e-12)
    valid = [i for i, p in enumerate(PRED) if p != INVALID]
    for name, weights in (("cohen_kappa", None), ("qwk", "quadratic")):
        expected = cohen_kappa_score(
            [GOLD[i] for i in valid], [PRED[i] for i in valid], labels=SCALE, weights=weights
        )
        assert metrics[name]["value"] == pytest.approx(expected, abs=1e-12), name
        assert metrics[name]["n"] == len(valid)
        assert f"{N_INVALID} of {len(PAIRS)} records left out" in metrics[name]["value_note"]
        assert "off the scale" in metrics[name]["value_note"]

    matrix = result["tables"]["confusion_matrix"]
    assert matrix["labels"] == SCALE and matrix["columns"] == [*SCALE, INVALID]
    expected_matrix = confusion_matrix(GOLD, PRED, labels=[*SCALE, INVALID])[: len(SCALE)]
    assert matrix["matrix"] == expected_matrix.tolist()
    per_class = result["tables"]["per_class"]
    assert per_class["support"] == [GOLD.count(label) for label in SCALE]
    assert per_class["predicted"] == [PRED.count(label) for label in SCALE]
    assert list(result["slices"])[-1] == f"pred_level={INVALID}"  # after the scale's labels

    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    assert second["fields"]["pred_level"] == INVALID
    assert second["values"]["accuracy"] == 0.0
    assert "prediction not on the scale" in second["misses"]["accuracy"]

    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"invalid_prediction {N_INVALID}" in report
    assert f"| gold \\ predicted | 高 | 中 | 低 | {INVALID} | total |" in report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert f"invalid_prediction {N_INVALID}" in page
    assert f'data-predicted="{INVALID}"' in page
    assert f"invalid_prediction {N_INVALID}" in done.stdout
    assert INVALID in done.stdout  # the console's confusion matrix column


def test_without_predictions_off_the_scale_the_count_is_0_and_the_matrix_square(
    tmp_path: Path,
) -> None:
    result = pingce.evaluate("contract-risk", _records([("高", "高"), ("低", "中")]), bootstrap=0)
    assert result.failures.model_dump()["invalid_prediction"] == 0
    assert "columns" not in result.tables["confusion_matrix"]
    assert result.metrics["cohen_kappa"].value_note is None


@pytest.mark.parametrize(
    ("line", "field", "value"),
    [
        ({"id": "b", "gold_level": "medium-high", "pred_level": "高"}, "gold_level", "medium-high"),
        ({"id": "b", "gold_level": None, "pred_level": "高"}, "gold_level", "null"),
        ({"id": "b", "gold_level": "高"}, "pred_level", "missing"),
    ],
    ids=["gold off the scale", "gold null", "prediction absent"],
)
def test_a_gold_label_off_the_scale_or_an_absent_prediction_is_exit_2(
    tmp_path: Path, line: dict[str, Any], field: str, value: str
) -> None:
    first = {"id": "a", "gold_level": "高", "pred_level": "x"}  # off the scale: no error
    data = _write(tmp_path / "bad.jsonl", [first, line])
    out = tmp_path / "out"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{data}:2" in done.stderr and f"'{field}'" in done.stderr and value in done.stderr
    assert not out.exists()


def test_compare_counts_each_sides_predictions_off_the_scale(tmp_path: Path) -> None:
    candidate = _write(tmp_path / "cand.jsonl", _records(PAIRS))
    baseline = _write(tmp_path / "base.jsonl", _records([(g, g) for g, _ in PAIRS]))
    out = tmp_path / "out"
    done = run_pingce("compare", "contract-risk", "--data", str(candidate), "--baseline",
                      str(baseline), "--out", str(out), "--bootstrap", "100")  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert data["failures"]["candidate"]["invalid_prediction"] == N_INVALID
    assert data["failures"]["baseline"]["invalid_prediction"] == 0
    assert f"candidate failures: invalid_prediction {N_INVALID}" in done.stdout
    delta = accuracy_score(GOLD, PRED) - 1.0
    assert data["metrics"]["accuracy"]["delta"] == pytest.approx(delta, abs=1e-12)

    # two stored runs compared: their results' counts and their saved statistics
    runs = []
    for name, path in (("a", candidate), ("b", baseline)):
        folder = tmp_path / f"run-{name}"
        done = run_pingce("run", "contract-risk", "--data", str(path), "--out", str(folder),
                          "--bootstrap", "0")  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(str(folder))
    done = run_pingce("compare", *runs, "--out", str(tmp_path / "stored"), "--bootstrap", "100")
    assert done.returncode == 0, done.stderr
    stored = json.loads((tmp_path / "stored" / "comparison.json").read_text(encoding="utf-8"))
    assert stored["failures"]["candidate"]["invalid_prediction"] == N_INVALID
    assert stored["metrics"]["accuracy"]["delta"] == pytest.approx(delta, abs=1e-12)


# ----------------------------------------------------------------- function-points' judge


def _judge(pred: Any, gold: Any = True, **extra: Any) -> dict[str, Any]:
    record = {"task": "judge", "gold": gold, **extra}
    if pred is not ...:
        record["pred"] = pred
    return record


def test_a_judge_prediction_null_or_unreadable_is_counted_and_wrong(tmp_path: Path) -> None:
    records = [
        _judge("Yes", id="j1"),
        _judge(None, id="j2"),  # null: no answer
        _judge("maybe", gold=False, id="j3"),
        _judge("No", gold=False, id="j4"),
        {"id": "s1", "task": "selection", "gold_items": ["a"], "pred_items": ["a"]},
    ]
    result = pingce.evaluate("function-points", records, bootstrap=0, similarity="lexical")
    assert result.failures.parse == 2
    assert result.metrics["judge_accuracy"].value == pytest.approx(0.5)  # j2 and j3 wrong
    assert result.metrics["judge_recall"].value == pytest.approx(0.5)  # j2: a gold Yes missed
    assert result.metrics["judge_precision"].value == pytest.approx(1.0)  # never a predicted Yes


@pytest.mark.parametrize(
    ("record", "field", "words"),
    [
        (_judge(..., id="j2"), "pred", "missing"),
        (_judge("Yes", gold="maybe", id="j2"), "gold", "maybe"),
        (_judge("Yes", gold=None, id="j2"), "gold", "missing"),
    ],
    ids=["prediction absent", "gold unreadable", "gold null"],
)
def test_a_judge_gold_unreadable_or_a_prediction_absent_is_exit_2(
    tmp_path: Path, record: dict[str, Any], field: str, words: str
) -> None:
    data = _write(tmp_path / "fp.jsonl", [_judge("Yes", id="j1"), record])
    out = tmp_path / "out"
    done = run_pingce("run", "function-points", "--data", str(data), "--out", str(out))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{data}:2" in done.stderr and f"'{field}'" in done.stderr and words in done.stderr
    assert not out.exists()


def test_many_predictions_off_the_scale_are_counted_once_per_record() -> None:
    """Two statistics read the prediction (the confusion matrix and the evidence's task
    success): a record is counted once."""
    rng = np.random.default_rng(3)
    pairs = [
        (SCALE[int(rng.integers(3))], "?" if rng.random() < 0.3 else SCALE[int(rng.integers(3))])
        for _ in range(200)
    ]
    result = pingce.evaluate("contract-risk", _records(pairs), bootstrap=0)
    assert result.failures.model_dump()["invalid_prediction"] == sum(p == "?" for _, p in pairs)
