"""pingce.suites.load_suite: the built-in suite, user suites on other scales, and suite errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score

import pingce
from pingce.engine.plan import make_plan
from pingce.errors import SuiteError
from pingce.metrics import metric_registry, table_registry
from pingce.options import RunOptions
from pingce.suites import builtin_suites, load_suite

from .cli_run import run_pingce

# contract-risk: the metric and table names scripts rely on.
CONTRACT_RISK_METRICS = [
    "accuracy",
    "weighted_accuracy",
    "precision",
    "recall",
    "f1",
    "macro_f1",
    "cohen_kappa",
    "qwk",
    "avg_latency_sec",
    "p95_latency_sec",
    # the evidence half (clauses, laws, task success, rules)
    "clause_hallucination_rate",
    "altered_clause_rate",
    "law_hallucination_rate",
    "hallucination_rate",
    "task_success_rate",
    "rule_recall",
]
CONTRACT_RISK_TABLES = ["confusion_matrix", "per_class"]
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_builtin_contract_risk_has_the_contract_metrics() -> None:
    suite = load_suite("contract-risk")
    assert suite.spec.name == "contract-risk"
    missing = [name for name in CONTRACT_RISK_METRICS if name not in suite.metrics]
    assert not missing, f"contract metrics missing from the built-in suite: {missing}"
    assert set(CONTRACT_RISK_TABLES) <= set(suite.tables)
    assert suite.scale is not None
    assert suite.scale.labels == ("高", "中", "低")
    for alias, label in [("high", "高"), ("MEDIUM", "中"), (" Low ", "低")]:
        assert suite.scale.code(alias) == suite.scale.labels.index(label)


def test_builtin_contract_risk_reads_the_contract_fields() -> None:
    suite = load_suite("contract-risk")
    fields = {spec.path: spec for spec in make_plan(suite, RunOptions()).fields}
    assert fields["gold_level"].kind == "label" and fields["gold_level"].required
    assert fields["pred_level"].kind == "label" and fields["pred_level"].required
    assert fields["latency_sec"].kind == "number" and not fields["latency_sec"].required
    assert suite.spec.id_field == "id"


def test_builtin_precision_positive_is_high_and_medium() -> None:
    # positive = 高 or 中: a record gold 低 predicted 中 is a false positive, so with
    # (gold, pred) = (高,高), (低,中), (中,低), (低,低): TP 1, FP 1, FN 1.
    rows = [
        {"id": "1", "gold_level": "高", "pred_level": "高"},
        {"id": "2", "gold_level": "低", "pred_level": "中"},
        {"id": "3", "gold_level": "中", "pred_level": "低"},
        {"id": "4", "gold_level": "低", "pred_level": "low"},
    ]
    result = pingce.evaluate("contract-risk", rows, bootstrap=0)
    assert result.metrics["precision"].value == pytest.approx(1 / 2)
    assert result.metrics["recall"].value == pytest.approx(1 / 2)
    assert result.metrics["accuracy"].value == pytest.approx(2 / 4)
    # weighted accuracy: 1 + 0.5 + 0.5 + 1 over 4
    assert result.metrics["weighted_accuracy"].value == pytest.approx(3 / 4)


def test_builtin_suites_listing() -> None:
    suites = builtin_suites()
    assert "contract-risk" in suites
    assert suites["contract-risk"]  # a one-line description


# --------------------------------------------------------------------------- user suites

RATINGS_INT = [5, 4, 3, 2, 1]
RATINGS_TEXT = ["excellent", "good", "fair", "poor", "bad"]


def _ratings(labels: list, n: int = 240, seed: int = 3) -> tuple[list, list]:
    """Gold and predicted ratings that agree often and are one step off otherwise."""
    rng = np.random.default_rng(seed)
    gold_idx = rng.integers(0, len(labels), size=n)
    step = rng.choice([-2, -1, 0, 0, 0, 1, 1], size=n)
    pred_idx = np.clip(gold_idx + step, 0, len(labels) - 1)
    return [labels[i] for i in gold_idx], [labels[i] for i in pred_idx]


def _five_point_suite(tmp_path: Path, labels: list) -> Path:
    values = json.dumps(labels, ensure_ascii=False)  # JSON lists are YAML flow sequences
    path = tmp_path / "ratings.yaml"
    path.write_text(
        f"""
name: essay-ratings
description: five-point rating agreement
id_field: meta.uid
labels:
  values: {values}
inputs:
  gold: rating.human
  pred: rating.model
metrics:
  qwk: {{}}
  accuracy: {{}}
  kappa_linear: {{metric: cohen_kappa, weights: linear}}
  top_two_precision: {{metric: precision, positive: {json.dumps(labels[:2], ensure_ascii=False)}}}
tables:
  confusion_matrix: {{}}
""",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("labels", [RATINGS_INT, RATINGS_TEXT], ids=["integers", "words"])
def test_five_point_user_suite_matches_sklearn(tmp_path: Path, labels: list) -> None:
    gold, pred = _ratings(labels)
    data = tmp_path / "ratings.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
            # every 7th predicted label written as text with spaces (still the same label)
            shown = f" {p} " if i % 7 == 0 else p
            row = {"meta": {"uid": f"e{i}"}, "rating": {"human": g, "model": shown}}
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    suite_path = _five_point_suite(tmp_path, labels)

    result = pingce.evaluate(suite_path, data, bootstrap=0)

    assert result.suite == "essay-ratings"
    assert result.n_records == len(gold)
    expected_qwk = cohen_kappa_score(gold, pred, labels=labels, weights="quadratic")
    expected_linear = cohen_kappa_score(gold, pred, labels=labels, weights="linear")
    assert result.metrics["qwk"].value == pytest.approx(expected_qwk, abs=1e-12)
    assert result.metrics["kappa_linear"].value == pytest.approx(expected_linear, abs=1e-12)
    assert result.metrics["accuracy"].value == pytest.approx(accuracy_score(gold, pred))
    top = set(labels[:2])
    tp = sum(g in top and p in top for g, p in zip(gold, pred, strict=True))
    predicted_top = sum(p in top for p in pred)
    assert result.metrics["top_two_precision"].value == pytest.approx(tp / predicted_top)
    assert result.metrics["top_two_precision"].n == predicted_top
    # sanity: the data are not trivially perfect, so qwk is a real check
    assert 0.3 < expected_qwk < 0.99

    matrix = result.tables["confusion_matrix"]
    assert matrix["labels"] == [str(label) for label in labels]
    counts = [[0] * 5 for _ in range(5)]
    for g, p in zip(gold, pred, strict=True):
        counts[labels.index(g)][labels.index(p)] += 1
    assert matrix["matrix"] == counts


def test_five_point_suite_rejects_labels_off_the_scale(tmp_path: Path) -> None:
    suite_path = _five_point_suite(tmp_path, RATINGS_INT)
    rows = [
        {"meta": {"uid": "a"}, "rating": {"human": 5, "model": 4}},
        {"meta": {"uid": "b"}, "rating": {"human": 6, "model": 4}},
    ]
    with pytest.raises(pingce.InputError) as info:
        pingce.evaluate(suite_path, rows, bootstrap=0)
    assert (info.value.line, info.value.field, info.value.value) == (2, "rating.human", 6)


def test_metric_under_another_name(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: renamed\nlabels: {values: [pass, fail]}\ninputs: {gold: g, pred: p}\n"
        "metrics:\n  hit_rate: {metric: accuracy}\n",
        encoding="utf-8",
    )
    rows = [{"g": "pass", "p": "pass"}, {"g": "fail", "p": "pass"}, {"g": "fail", "p": "fail"}]
    result = pingce.evaluate(path, rows, bootstrap=0)
    assert list(result.metrics) == ["hit_rate"]
    assert result.metrics["hit_rate"].value == pytest.approx(2 / 3)


def test_unquoted_yes_no_labels_are_not_silently_turned_into_numbers(tmp_path: Path) -> None:
    # BUG (src/pingce/suites/spec.py, LabelsSpec.values: list[str | int]): YAML reads unquoted
    # yes/no as booleans and pydantic turns True/False into 1/0, so the scale silently becomes
    # ["1", "0"] and every record labelled "yes" is then rejected as an unknown label.
    # Either keep the labels the user wrote or stop with a SuiteError naming `labels`.
    path = tmp_path / "yes-no.yaml"
    path.write_text(
        "name: judge\nlabels: {values: [yes, no]}\ninputs: {gold: g, pred: p}\n"
        "metrics: {accuracy: {}}\n",
        encoding="utf-8",
    )
    try:
        suite = load_suite(path)
    except SuiteError as err:
        assert err.key is not None and err.key.startswith("labels")
        return
    assert suite.scale is not None
    assert suite.scale.labels == ("yes", "no")


# --------------------------------------------------------------------------- suite errors

BASE = """name: t
labels:
  values: [高, 中, 低]
inputs: {gold: g, pred: p}
"""

SUITE_ERRORS = [
    # (case, YAML text, expected e.key, words the message must contain)
    ("unknown top-level key", BASE + "metrics: {accuracy: {}}\nmetric_args: 1\n",
     "metric_args", ["metric_args"]),
    ("unknown metric", BASE + "metrics: {accuracy: {}, acuracy: {}}\n",
     "metrics.acuracy", ["acuracy", "accuracy"]),
    ("unknown table", BASE + "metrics: {accuracy: {}}\ntables: {confusion: {}}\n",
     "tables.confusion", ["confusion", "confusion_matrix"]),
    ("unknown argument", BASE + "metrics: {accuracy: {average: macro}}\n",
     "metrics.accuracy", ["average"]),
    ("bad argument value", BASE + "metrics: {f1: {average: sideways}}\n",
     "metrics.f1", ["average", "sideways"]),
    ("bad kappa weights", BASE + "metrics: {cohen_kappa: {weights: cubic}}\n",
     "metrics.cohen_kappa", ["weights", "cubic"]),
    ("positive label not on scale", BASE + "metrics: {precision: {positive: [极高]}}\n",
     "metrics.precision", ["positive", "极高"]),
    ("every label positive", BASE + "metrics: {recall: {positive: [高, 中, 低]}}\n",
     "metrics.recall", ["positive"]),
    ("metric needs labels", "name: t\ninputs: {gold: g, pred: p}\nmetrics: {qwk: {}}\n",
     "metrics.qwk", ["labels"]),
    ("scale given to a metric", BASE + "metrics: {accuracy: {scale: [a, b]}}\n",
     "metrics.accuracy", ["labels"]),
    ("missing metrics", BASE, "metrics", ["missing"]),
    ("empty metrics", BASE + "metrics: {}\n", "metrics", []),
    ("metrics not a mapping", BASE + "metrics: [accuracy]\n", "metrics", []),
    ("missing name", "labels: {values: [a, b]}\nmetrics: {accuracy: {}}\n", "name", []),
    ("zero_division 0.5", BASE + "defaults: {zero_division: 0.5}\nmetrics: {accuracy: {}}\n",
     "defaults.zero_division", ["0.5"]),
    ("zero_division text", BASE + "defaults: {zero_division: maybe}\nmetrics: {accuracy: {}}\n",
     "defaults.zero_division", ["maybe"]),
    ("unknown labels key", "name: t\nlabels: {values: [a, b], colour: red}\n"
     "metrics: {accuracy: {}}\n", "labels.colour", ["colour"]),
    ("duplicate labels", "name: t\nlabels: {values: [a, a]}\nmetrics: {accuracy: {}}\n",
     "labels", ["distinct"]),
    ("one label", "name: t\nlabels: {values: [a]}\nmetrics: {accuracy: {}}\n",
     "labels.values", []),
    ("bad input path", "name: t\nlabels: {values: [a, b]}\ninputs: {gold: 'x..y', pred: p}\n"
     "metrics: {accuracy: {}}\n", "inputs", ["x..y"]),
    ("misspelt similarity option", BASE + "metrics: {accuracy: {}}\n"
     "similarity: {concurrency: 8, max_retrys: 3}\n", "similarity", ["max_retrys", "max_retries"]),
    ("key in a suite file", BASE + "metrics: {accuracy: {}}\nsimilarity: {api_key: sk-1}\n",
     "similarity", ["api_key", "PINGCE_API_KEY"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [case[1:] for case in SUITE_ERRORS],
    ids=[case[0] for case in SUITE_ERRORS],
)
def test_suite_errors_name_the_key(tmp_path: Path, text: str, key: str, words: list) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    err = info.value
    message = str(err)
    assert err.source == str(path)
    assert err.key == key
    assert re.match(rf"{re.escape(str(path))}(:\d+)?: key '{re.escape(key)}': ", message)
    for word in words:
        assert word in message
    assert "Traceback" not in message
    assert "sk-1" not in message  # a key misplaced in a suite file is not echoed


def test_suite_error_message_names_only_the_real_key(tmp_path: Path) -> None:
    # BUG (src/pingce/suites/spec.py, _build): the registry's SuiteError text is re-wrapped
    # without removing its own "key '<name>': " prefix, so the message names a second, wrong
    # key: "suite.yaml: key 'metrics.accuracy': key 'accuracy': unknown argument(s) ...".
    path = tmp_path / "suite.yaml"
    path.write_text(BASE + "metrics: {accuracy: {average: macro}}\n", encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert message.count("key '") == 1, message
    assert re.match(
        rf"{re.escape(str(path))}(:\d+)?: key 'metrics.accuracy': unknown argument", message
    )


@pytest.mark.parametrize(
    "text",
    ["name: t\nmetrics: {accuracy: {}\n", "name: t\n  metrics: [\n", "name: [t\n"],
    ids=["unclosed mapping", "bad indentation", "unclosed list"],
)
def test_invalid_yaml(tmp_path: Path, text: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.source == str(path)
    assert str(info.value).startswith(str(path))
    assert "YAML" in str(info.value)
    assert "line" in str(info.value)


@pytest.mark.parametrize("text", ["- accuracy\n- qwk\n", "just a string\n", "", "42\n"])
def test_suite_file_that_is_not_a_mapping(tmp_path: Path, text: str) -> None:
    path = tmp_path / "list.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.source == str(path)
    assert "mapping" in str(info.value)


@pytest.mark.parametrize("name", ["contract-risks", "no-such-suite", "missing.yaml"])
def test_unknown_suite_lists_builtins(tmp_path: Path, name: str) -> None:
    target = name if not name.endswith(".yaml") else str(tmp_path / name)
    with pytest.raises(SuiteError) as info:
        load_suite(target)
    message = str(info.value)
    assert target in message
    for builtin in builtin_suites():
        assert builtin in message
    assert "contract-risk" in message


def test_valid_zero_division_values_are_accepted(tmp_path: Path) -> None:
    for value in ["null", "0", "1", "0.0", "1.0"]:
        path = tmp_path / f"zd-{value}.yaml"
        path.write_text(
            BASE + f"defaults: {{zero_division: {value}}}\nmetrics: {{precision: {{}}}}\n",
            encoding="utf-8",
        )
        suite = load_suite(path)
        expected = None if value == "null" else float(value)
        assert suite.spec.defaults.zero_division == expected


def test_zero_division_default_reaches_the_metric(tmp_path: Path) -> None:
    # nothing predicted positive (高/中): precision is 0/0 -> null by default, 1 with the policy
    rows = [{"g": "高", "p": "低"}, {"g": "低", "p": "低"}]
    for policy, expected in [("null", None), ("1", 1.0), ("0", 0.0)]:
        path = tmp_path / f"p-{policy}.yaml"
        path.write_text(
            BASE + f"defaults: {{zero_division: {policy}}}\nmetrics: {{precision: {{}}}}\n",
            encoding="utf-8",
        )
        result = pingce.evaluate(path, rows, bootstrap=0)
        assert result.metrics["precision"].value == expected
        if expected is None:
            assert result.metrics["precision"].undefined_reason


# -------------------------------------------------------- definitions, misspelt suite names


SENTENCE_END = re.compile(r"[.。!?][)\"'”’`]*$")


def test_every_definition_is_whole_sentences() -> None:
    # before: confusion_matrix's definition was the first line of a two-line docstring
    for registry in (metric_registry(), table_registry()):
        for name, info in registry.items():
            assert info.definition, name
            assert SENTENCE_END.search(info.definition), (name, info.definition)
            assert "\n" not in info.definition
    confusion = table_registry()["confusion_matrix"].definition
    assert confusion.startswith("Counts of (gold, predicted) pairs; rows gold, columns predicted")
    assert confusion.endswith("summed weights with ``sample_weight``.")


def test_results_json_and_the_metrics_listing_show_the_whole_definition(tmp_path: Path) -> None:
    out = tmp_path / "o"
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(out),
                      "--bootstrap", "0", "--no-store", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    text = json.dumps(results, ensure_ascii=False)
    assert table_registry()["confusion_matrix"].definition in text
    listing = run_pingce("metrics", cwd=tmp_path)
    shown: dict[str, list[str]] = {}  # the definition column of each row of the table
    name = ""
    for line in listing.stdout.splitlines():
        cells = [cell.strip() for cell in line.split("│")]
        if len(cells) == 6:
            name = cells[1] or name
            shown.setdefault(name, []).append(cells[3])
    for registry in (metric_registry(), table_registry()):
        for name, info in registry.items():
            assert " ".join(shown[name]).split() == info.definition.split(), name


def test_a_misspelt_suite_name_gets_a_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="did you mean 'contract-risk'"):
        load_suite("contract-risks")
    done = run_pingce("run", "fuction-call", "--data", "x.jsonl", cwd=tmp_path)
    assert done.returncode == 2
    assert "did you mean 'function-call'?" in done.stderr
    with pytest.raises(SuiteError, match="did you mean 'accuracy'"):
        path = tmp_path / "s.yaml"
        path.write_text(BASE + "metrics: {acuracy: {}}\n", encoding="utf-8")
        load_suite(path)
