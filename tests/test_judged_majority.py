"""A jury's grades by majority and the rate of one grade (issue 33: "a jury ... aggregated by
mean or majority"; "metric the mean (or rate per label)"), against loopback judges with planted
grades: every expected number is computed here with Python's ``statistics.multimode`` and
``statistics.median`` from what was planted."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.errors import SuiteError
from tests.loopback import LoopbackServer, Request, keep_local

N = 15
JUDGES = ("judge-a", "judge-b", "judge-c")
# planted grades per judge and record: on 1-5, and on the labels good / fair / poor
POINTS = {
    "judge-a": [1, 2, 3, 4, 5, 3, 4, 2, 5, 1, 4, 3, 2, 5, 1],
    "judge-b": [1, 3, 3, 5, 5, 2, 4, 2, 4, 2, 3, 3, 2, 5, 4],
    "judge-c": [2, 2, 4, 4, 5, 1, 5, 3, 4, 1, 2, 1, 2, 4, 3],
}
LABELS = {
    "judge-a": ["good", "fair", "poor", "good", "good", "fair", "poor", "good", "fair"] * 2,
    "judge-b": ["good", "poor", "poor", "fair", "good", "good", "fair", "good", "poor"] * 2,
    "judge-c": ["fair", "fair", "good", "fair", "poor", "good", "poor", "poor", "good"] * 2,
}
VALUES = {"good": 1.0, "fair": 0.5, "poor": 0.0}
CPI = {"judge-a": "CPICCPICP" * 2, "judge-b": "CIICPCPCI" * 2, "judge-c": "PPCPICIIC" * 2}


def _which(request: Request) -> int:
    found = re.search(r"answer-(\d\d)", request.prompt or "")
    assert found is not None, request.prompt
    return int(found.group(1))


def _answer(request: Request) -> dict[str, Any]:
    judge, i = request.json["model"], _which(request)
    prompt = request.prompt or ""
    if '"C" | "P" | "I"' in prompt:
        return {"content": json.dumps({"reasoning": "r", "label": CPI[judge][i]})}
    if '"good"' in prompt:
        return {"content": json.dumps({"reasoning": "r", "label": LABELS[judge][i]})}
    return {"content": json.dumps({"reasoning": "r", "score": POINTS[judge][i]})}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    keep_local(monkeypatch, tmp_path / "cache")
    with LoopbackServer() as running:
        running.answer = _answer
        yield running


def _records(path: Path) -> Path:
    rows = [
        {"id": f"q{i}", "input": f"question {i}?", "output": f"answer-{i:02d}", "reference": "r"}
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _suite(tmp_path: Path, metrics: str, scale: str = "1-5") -> Path:
    suite = tmp_path / "suite.yaml"
    judges = ", ".join(f"openai:{j}" for j in JUDGES)
    suite.write_text(
        f"name: jury\nmetrics:\n{metrics}"
        f"judge:\n  rubric: grade it\n  scale: {scale}\n  judges: [{judges}]\n",
        encoding="utf-8",
    )
    return suite


def _majority(grades: list[float]) -> float:
    return float(statistics.median(statistics.multimode(grades)))


def _share(grades: list[Any], grade: Any) -> float:
    modes = statistics.multimode(grades)
    return 1 / len(modes) if grade in modes else 0.0


def test_majority_and_mean_of_a_jury_on_points(server: LoopbackServer, tmp_path: Path) -> None:
    suite = _suite(
        tmp_path,
        "  mean_score: {metric: rubric_score}\n"
        "  majority_score: {metric: rubric_score, aggregate: majority}\n"
        "  fives: {metric: label_rate, label: '5'}\n"
        "  twos: {metric: label_rate, label: 2}\n",
    )
    result = pingce.evaluate(suite, _records(tmp_path / "r.jsonl"), base_url=server.url)
    per_record = [[POINTS[j][i] for j in JUDGES] for i in range(N)]
    assert result.value("mean_score") == pytest.approx(
        statistics.fmean(statistics.fmean(g) for g in per_record), abs=1e-12
    )
    majority = statistics.fmean(_majority(g) for g in per_record)
    assert result.value("majority_score") == pytest.approx(majority, abs=1e-12)
    assert result.value("majority_score") != pytest.approx(result.value("mean_score"))
    for name, grade in (("fives", 5), ("twos", 2)):
        want = statistics.fmean(_share(g, grade) for g in per_record)
        assert result.value(name) == pytest.approx(want, abs=1e-12), name
        metric = result.metrics[name]
        assert metric.ci_low is not None and metric.ci_high is not None
        assert metric.ci_low <= metric.value <= metric.ci_high
    # the three metrics read one set of answers: one rubric prompt per record and judge
    assert len(server.chat()) == N * len(JUDGES)


def test_label_rates_on_a_labels_scale_and_on_correctness(
    server: LoopbackServer, tmp_path: Path
) -> None:
    suite = _suite(
        tmp_path,
        "  quality: {metric: rubric_score, aggregate: majority}\n"
        "  good: {metric: label_rate, label: good}\n"
        "  poor: {metric: label_rate, label: poor}\n"
        "  correct: {metric: label_rate, label: C, grading: correctness}\n"
        "  correct_long_name: {metric: label_rate, label: correct, grading: correctness}\n",
        scale="good,fair,poor",
    )
    result = pingce.evaluate(suite, _records(tmp_path / "r.jsonl"), base_url=server.url)
    labels = [[LABELS[j][i] for j in JUDGES] for i in range(N)]
    quality = statistics.fmean(_majority([VALUES[x] for x in g]) for g in labels)
    assert result.value("quality") == pytest.approx(quality, abs=1e-12)
    for name in ("good", "poor"):
        want = statistics.fmean(_share(g, name) for g in labels)
        assert result.value(name) == pytest.approx(want, abs=1e-12), name
    cpi = [[CPI[j][i] for j in JUDGES] for i in range(N)]
    correct = statistics.fmean(_share(g, "C") for g in cpi)
    assert result.value("correct") == pytest.approx(correct, abs=1e-12)
    assert result.value("correct_long_name") == pytest.approx(correct, abs=1e-12)


def test_a_grade_off_the_scale_or_an_unknown_aggregate_is_an_error(
    server: LoopbackServer, tmp_path: Path
) -> None:
    data = _records(tmp_path / "r.jsonl")
    suite = _suite(tmp_path, "  sixes: {metric: label_rate, label: '6'}\n")
    with pytest.raises(SuiteError, match=r"'6' is not a grade of the judge's scale.*'5'"):
        pingce.evaluate(suite, data, base_url=server.url, bootstrap=0)
    suite = _suite(tmp_path, "  s: {metric: rubric_score, aggregate: median}\n")
    with pytest.raises(SuiteError, match="aggregate"):
        pingce.evaluate(suite, data, base_url=server.url, bootstrap=0)
    suite = _suite(tmp_path, "  r: {metric: label_rate}\n")
    with pytest.raises(SuiteError, match=r"needs argument\(s\) \['label'\]"):
        pingce.evaluate(suite, data, base_url=server.url, bootstrap=0)
