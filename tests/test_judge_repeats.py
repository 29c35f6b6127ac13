"""``--judge-repeats J`` (issue 35): each judge asked J times about each answer, each call cached
apart; the rows are record x repeat x judge call, the judge's share of the variance measured
beside the records' (a loopback judge whose grade of a record moves by a known step from one
call to the next, so every expected number is computed here)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import OptionError
from pingce.repeats import decompose
from tests.loopback import LoopbackServer, Request, keep_local

RUBRIC = "RUBRIC-MARK: is the answer helpful and correct?"
TASKS = 2  # the judged suite asks each answer two things: the rubric and correctness
N = 12
SCORES = [1, 2, 3, 4, 5, 3, 4, 2, 5, 1, 4, 3]
STEP = [0, 1, -1]  # the judge's n-th grade of a record: its planted score moved by STEP[n % 3]


def _which(request: Request) -> int:
    found = re.search(r"answer-(\d\d)", request.prompt or "")
    assert found is not None, request.prompt
    return int(found.group(1))


def _grade(i: int, call: int) -> int:
    return min(5, max(1, SCORES[i] + STEP[call % 3]))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LoopbackServer]:
    keep_local(monkeypatch, tmp_path / "cache")
    asked: Counter[int] = Counter()

    def answer(request: Request) -> dict[str, Any]:
        i = _which(request)
        if RUBRIC not in (request.prompt or ""):  # the correctness task: always correct
            return {"content": json.dumps({"reasoning": f"record {i}", "label": "C"})}
        score = _grade(i, asked[i])
        asked[i] += 1
        return {"content": json.dumps({"reasoning": f"record {i}", "score": score})}

    with LoopbackServer() as running:
        running.answer = answer
        yield running


def _records(path: Path) -> Path:
    lines = [
        {
            "id": f"q{i}",
            "input": f"question {i}?",
            "output": f"answer-{i:02d} " + "word " * (3 + i),
            "reference": f"reference {i}",
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def _run(server: LoopbackServer, data: Path, calls: int, **options: Any) -> Any:
    return pingce.evaluate(
        "judged",
        data,
        judges=["openai:judge-a"],
        base_url=server.url,
        rubric=RUBRIC,
        scale="1-5",
        bootstrap=200,
        judge_repeats=calls,
        **options,
    )


def test_each_answer_is_judged_j_times_and_each_call_cached(
    server: LoopbackServer, tmp_path: Path
) -> None:
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data, 3, target_se=0.05)
    assert server.count() == TASKS * 3 * N
    assert result.n_records == 3 * N
    grades = np.array([[_grade(i, c) for c in range(3)] for i in range(N)], dtype=float)
    # rubric_score: the mean grade over every record x call row, on the scale's units
    assert result.metrics["rubric_score"].value == pytest.approx(grades.mean(), abs=1e-12)
    assert result.repeats is not None and result.repeats["judge_calls"] == 3
    found = result.repeats["metrics"]["rubric_score"]["components"]
    expected = decompose(grades[:, None, :], seed=0)
    assert found["variance"]["judge"] == pytest.approx(expected.variance["judge"])
    assert found["variance"]["records"] == pytest.approx(expected.variance["records"])
    assert found["variance"]["generations"] is None  # one generation: not separable
    # by hand: the judge's variance is the within-record mean square
    within = ((grades - grades.mean(1, keepdims=True)) ** 2).sum() / (N * 2)
    assert found["variance"]["judge"] == pytest.approx(within)
    assert found["share"]["judge"] > 0 and found["share"]["records"] > 0
    assert found["plan"]["target_se"] == 0.05
    # a rerun asks nothing; four calls ask only the fourth
    _run(server, data, 3)
    assert server.count() == TASKS * 3 * N
    _run(server, data, 4)
    assert server.count() == TASKS * 4 * N
    # one call is the request of a run without --judge-repeats: from the cache
    plain = _run(server, data, 1)
    assert server.count() == TASKS * 4 * N and plain.repeats is None


def test_records_jsonl_numbers_each_call(server: LoopbackServer, tmp_path: Path) -> None:
    data = _records(tmp_path / "r.jsonl")
    _run(server, data, 2, out=str(tmp_path / "out"))
    lines = [json.loads(x) for x in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert [(x["id"], x["judge_call"]) for x in lines[:4]] == [
        ("q0", 1),
        ("q0", 2),
        ("q1", 1),
        ("q1", 2),
    ]
    report = (tmp_path / "out" / "report.md").read_text()
    assert "x 2 judge calls" in report and "from the judge" in report


def test_judge_repeats_need_a_judged_metric_and_ids(tmp_path: Path) -> None:
    records = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
    with pytest.raises(OptionError, match="no metric graded by a model judge"):
        pingce.evaluate("contract-risk", str(records), judge_repeats=2, bootstrap=0)


def test_judge_repeats_are_not_for_ray() -> None:
    from pingce.option_table import OPTIONS

    (option,) = [o for o in OPTIONS if o.name == "judge_repeats"]
    assert option.ray is False
