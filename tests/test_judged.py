"""Answers graded by a model (issue 33): the judged suite and metric family against loopback judges
with planted answers, so every expected number is computed here from what was planted.

- A judge that answers a known score per record: rubric_score is their mean (normalised too),
  correctness the mean of C/P/I as 1/0.5/0, score_length_correlation scipy's Pearson r; the
  bootstrap interval brackets the value.
- A jury of two judges: each record's score is their mean.
- Garbage, out-of-scale, refusals and failed calls: counted, kept raw in records.jsonl, never a
  score; ``--on-judge-failure skip`` computes over the rest.
- G-Eval: with logprobs, the probability-weighted score equals the hand computation to 1e-12.
- The cache: a rerun asks nothing, a changed rubric asks everything again.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import pingce
from pingce.errors import OptionError
from tests.loopback import LoopbackServer, Request, keep_local

RUBRIC = "RUBRIC-MARK: is the answer helpful and correct?"
N = 12
SCORES = [1, 2, 3, 4, 5, 3, 4, 2, 5, 1, 4, 3]
GRADES = ["C", "P", "I", "C", "C", "P", "I", "C", "P", "C", "I", "C"]
VALUE = {"C": 1.0, "P": 0.5, "I": 0.0}


def _output(i: int) -> str:
    return f"answer-{i:02d} " + "word " * (3 + (i * 7) % 11)


def _records(path: Path) -> Path:
    lines = [
        {
            "id": f"q{i}",
            "input": f"question {i}?",
            "output": _output(i),
            "reference": f"reference {i}",
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def _which(request: Request) -> int:
    found = re.search(r"answer-(\d\d)", request.prompt or "")
    assert found is not None, request.prompt
    return int(found.group(1))


class Planted:
    """A judge's answers: the planted score (or C/P/I grade) of the record the prompt is about;
    ``bad`` maps a record to the raw text answered instead; ``shift`` is added to every score
    (a second, harsher or kinder judge)."""

    def __init__(self, bad: dict[int, str] | None = None, shift: int = 0):
        self.bad = bad or {}
        self.shift = shift

    def __call__(self, request: Request) -> dict[str, Any]:
        i = _which(request)
        if i in self.bad:
            return {"content": self.bad[i]}
        if RUBRIC in (request.prompt or ""):
            score = min(5, max(1, SCORES[i] + self.shift))
            return {"content": json.dumps({"reasoning": f"record {i}", "score": score})}
        return {"content": json.dumps({"reasoning": f"record {i}", "label": GRADES[i]})}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    keep_local(monkeypatch, tmp_path / "cache")
    with LoopbackServer() as running:
        running.answer = Planted()
        yield running


def _run(server: LoopbackServer, data: Path, **options: Any) -> pingce.EvaluationResult:
    given: dict[str, Any] = {
        "judges": ["openai:judge-a"],
        "base_url": server.url,
        "rubric": RUBRIC,
        "scale": "1-5",
        "bootstrap": 200,
    }
    given.update(options)
    return pingce.evaluate("judged", data, **given)


def test_scores_are_the_planted_ones(server: LoopbackServer, tmp_path: Path) -> None:
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data)
    assert result.value("rubric_score") == pytest.approx(np.mean(SCORES), abs=1e-12)
    expected_correct = np.mean([VALUE[g] for g in GRADES])
    assert result.value("correctness") == pytest.approx(expected_correct, abs=1e-12)
    lengths = [len(_output(i)) for i in range(N)]
    r = stats.pearsonr([(s - 1) / 4 for s in SCORES], lengths).statistic
    assert result.value("score_length_correlation") == pytest.approx(r, abs=1e-12)
    score = result.metrics["rubric_score"]
    assert score.ci_low is not None and score.ci_high is not None
    assert score.ci_low <= score.value <= score.ci_high
    assert result.n_records == N and score.n_scored == N
    assert len(server.chat()) == 2 * N  # one rubric and one correctness prompt per record
    assert result.judge is not None and result.judge["openai:judge-a"]["failures"] == 0
    assert "judge" in result.signature.model_dump() or result.signature.model_extra
    per_record = {r["id"]: r["values"]["rubric_score"] for r in _records_of(result, tmp_path)}
    assert per_record == {f"q{i}": float(SCORES[i]) for i in range(N)}


def _records_of(result: pingce.EvaluationResult, tmp_path: Path) -> list[dict[str, Any]]:
    out = tmp_path / "out"
    pingce.report.write_outputs(result, out)
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_normalised_scores_map_the_scale_to_0_1(server: LoopbackServer, tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: graded\nmetrics:\n  rubric_score: {normalize: true}\n"
        f"judge:\n  rubric: '{RUBRIC}'\n  scale: 1-5\n  judges: [openai:judge-a]\n",
        encoding="utf-8",
    )
    data = _records(tmp_path / "r.jsonl")
    result = pingce.evaluate(suite, data, base_url=server.url, bootstrap=0)
    assert result.value("rubric_score") == pytest.approx(np.mean([(s - 1) / 4 for s in SCORES]))


def test_a_jury_averages_its_judges(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, kind = Planted(), Planted(shift=1)
    server.answer = lambda req: (kind if req.json["model"] == "judge-b" else plain)(req)
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data, judges=["openai:judge-a", "openai:judge-b"])
    expected = np.mean([(s + min(5, s + 1)) / 2 for s in SCORES])
    assert result.value("rubric_score") == pytest.approx(expected, abs=1e-12)
    assert set(result.judge or {}) == {"openai:judge-a", "openai:judge-b"}


@pytest.mark.parametrize(
    "raw",
    [
        "I'm sorry, I can't grade this.",
        '{"score": 7}',  # out of the 1-5 scale
        '{"score": 3',  # truncated JSON
        "",
    ],
)
def test_an_answer_without_a_grade_is_counted_never_scored(
    server: LoopbackServer, tmp_path: Path, raw: str
) -> None:
    server.answer = Planted(bad={3: raw})
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data)
    score = result.metrics["rubric_score"]
    assert score.value is None and score.failed_records == 1
    skip = _run(server, data, on_judge_failure="skip")
    kept = [s for i, s in enumerate(SCORES) if i != 3]
    assert skip.value("rubric_score") == pytest.approx(np.mean(kept), abs=1e-12)
    assert skip.judge is not None
    assert skip.judge["openai:judge-a"]["unparsed_answers"] >= 1
    rows = {r["id"]: r for r in _records_of(skip, tmp_path)}
    grades = rows["q3"]["judge"]["grades"]
    rubric = next(g for g in grades if g["task"] == "rubric")
    assert rubric["answer"] == raw and "score" not in rubric and rubric["failure"]
    assert "rubric_score" not in rows["q3"].get("values", {}) or (
        rows["q3"]["values"]["rubric_score"] is None
    )


def test_a_failed_call_is_counted(server: LoopbackServer, tmp_path: Path) -> None:
    from tests.loopback import Fault

    server.rule = lambda req: Fault("500", seconds=-1) if _which(req) == 5 else None
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data, on_judge_failure="skip")
    assert result.metrics["rubric_score"].failed_records == 1
    kept = [s for i, s in enumerate(SCORES) if i != 5]
    assert result.value("rubric_score") == pytest.approx(np.mean(kept), abs=1e-12)


def test_a_rerun_asks_nothing_and_a_new_rubric_asks_again(
    server: LoopbackServer, tmp_path: Path
) -> None:
    data = _records(tmp_path / "r.jsonl")
    first = _run(server, data)
    asked = len(server.chat())
    again = _run(server, data)
    assert len(server.chat()) == asked  # every answer from the cache
    assert again.value("rubric_score") == first.value("rubric_score")
    assert again.judge is not None and again.judge["openai:judge-a"]["cache_hits"] == 2 * N
    _run(server, data, rubric=RUBRIC + " Be strict.")
    assert len(server.chat()) == asked + N  # the rubric prompts again; correctness unchanged
    changed = _run(server, data, scale="1-10")
    assert changed.signature.model_extra is not None
    assert re.search(r"\|scale=[^|]*1-10\|", changed.signature.model_extra["judge"])


def test_geval_weighs_the_score_tokens(server: LoopbackServer, tmp_path: Path) -> None:
    """With logprobs, each record's score is sum p(k) k over the scale's points among the score
    token's alternatives, renormalised (G-Eval); the hand computation here."""
    probabilities = {"3": 0.5, "4": 0.3, "2": 0.15, "x": 0.05}

    def answer(request: Request) -> dict[str, Any]:
        if RUBRIC not in (request.prompt or ""):
            return {"content": '{"label": "C"}'}
        top = [{"token": t, "logprob": math.log(p)} for t, p in probabilities.items()]
        tokens = [
            {"token": '{"', "logprob": 0.0, "top_logprobs": []},
            {"token": "score", "logprob": 0.0, "top_logprobs": []},
            {"token": '":', "logprob": 0.0, "top_logprobs": []},
            {"token": "3", "logprob": math.log(0.5), "top_logprobs": top},
            {"token": "}", "logprob": 0.0, "top_logprobs": []},
        ]
        return {"content": '{"score":3}', "logprobs": {"content": tokens}}

    server.answer = answer
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: geval\nmetrics:\n  rubric_score: {}\n"
        f"judge:\n  rubric: '{RUBRIC}'\n  scale: 1-5\n  logprobs: true\n"
        "  judges: [openai:judge-a]\n",
        encoding="utf-8",
    )
    data = _records(tmp_path / "r.jsonl")
    result = pingce.evaluate(suite, data, base_url=server.url, bootstrap=0)
    points = {k: v for k, v in probabilities.items() if k in {"1", "2", "3", "4", "5"}}
    expected = sum(int(k) * p for k, p in points.items()) / sum(points.values())
    assert result.value("rubric_score") == pytest.approx(expected, abs=1e-12)
    sent = server.chat()[0].json
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20


def test_without_a_judge_or_a_rubric_the_error_says_what_to_give(tmp_path: Path) -> None:
    data = _records(tmp_path / "r.jsonl")
    with pytest.raises(OptionError, match="--judge openai:MODEL"):
        pingce.evaluate("judged", data, bootstrap=0, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(OptionError, match="--rubric"):
        pingce.evaluate(
            "judged",
            data,
            bootstrap=0,
            judges=["openai:a"],
            base_url="http://127.0.0.1:9/v1",
        )
    with pytest.raises(OptionError, match="--judge 'gpt'"):
        pingce.evaluate("judged", data, judges=["gpt"])


def test_the_command_line_grades_with_the_judges_given(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """``pingce run judged --data FILE --judge openai:M --base-url URL --rubric FILE --scale``:
    the numbers, results.json's judge and signature, records.jsonl's grades."""
    from tests.cli_run import run_pingce

    data = _records(tmp_path / "r.jsonl")
    rubric = tmp_path / "rubric.txt"
    rubric.write_text(RUBRIC + "\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["run", "judged", "--data", str(data), "--judge", "openai:judge-a"]
    args += ["--base-url", server.url, "--rubric", str(rubric), "--scale", "1-5"]
    args += ["--cache", str(tmp_path / "cache.db"), "--out", str(out), "--bootstrap", "100"]
    done = run_pingce(*args)
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["metrics"]["rubric_score"]["value"] == pytest.approx(np.mean(SCORES))
    assert results["judge"]["openai:judge-a"]["prompts"] == 2 * N
    assert "openai:judge-a" in results["signature"]["judge"]
    first = json.loads((out / "records.jsonl").read_text(encoding="utf-8").splitlines()[0])
    grades = {g["task"]: g for g in first["judge"]["grades"]}
    assert grades["rubric"]["score"] == SCORES[0] and grades["rubric"]["reasoning"] == "record 0"
    assert grades["correctness"]["label"] in ("correct", "C")
    assert "rubric_score" in done.stdout


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "judged"


def test_the_bundled_bilingual_example(server: LoopbackServer, tmp_path: Path) -> None:
    """examples/judged: twelve open answers (English and Chinese) with references, graded by a
    judge planted per answer; the Chinese prompts with ``language: zh``."""
    records = [
        json.loads(line)
        for line in (EXAMPLE / "records.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    planted = {r["output"]: (1 + i % 5, "CPI"[i % 3]) for i, r in enumerate(records)}

    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt or ""
        ((score, grade),) = [v for out, v in planted.items() if out in prompt]
        if "RUBRIC" in prompt or "Grade how well" in prompt:
            return {"content": json.dumps({"reasoning": "planted", "score": score})}
        return {"content": json.dumps({"reasoning": "planted", "label": grade})}

    server.answer = answer
    rubric = str(EXAMPLE / "rubric.txt")
    result = _run(server, EXAMPLE / "records.jsonl", rubric=rubric, bootstrap=0)
    assert result.value("rubric_score") == pytest.approx(np.mean([s for s, _ in planted.values()]))
    assert result.value("correctness") == pytest.approx(
        np.mean([VALUE[g] for _, g in planted.values()])
    )
    suite = tmp_path / "zh.yaml"
    suite.write_text(
        "name: judged-zh\ncontext: [input]\nmetrics:\n  rubric_score: {reference: reference}\n"
        "judge:\n  language: zh\n  scale: 1-5\n  judges: [openai:judge-a]\n",
        encoding="utf-8",
    )
    server.reset()
    chinese = pingce.evaluate(
        suite, EXAMPLE / "records.jsonl", base_url=server.url, rubric=rubric, bootstrap=0
    )
    assert chinese.value("rubric_score") == result.value("rubric_score")
    assert all(re.search(r"[\u4e00-\u9fff]{4}", r.prompt or "") for r in server.chat())


def test_the_value_note_says_the_judge_gave_no_grade(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.answer = Planted(bad={0: "no idea"})
    result = _run(server, _records(tmp_path / "r.jsonl"), bootstrap=0)
    reason = result.metrics["rubric_score"].undefined_reason or ""
    assert "1 of 12 records had no grade from a judge" in reason
    skip = _run(server, _records(tmp_path / "r.jsonl"), bootstrap=0, on_judge_failure="skip")
    assert "no grade from a judge" in (skip.metrics["rubric_score"].value_note or "")


JURY = ("judge-a", "judge-b", "judge-c")
LABELS = ["good", "fair", "poor"]


def _planted_jury(scale: str, seed: int = 3) -> dict[str, list[Any]]:
    """Each judge's grade of each record on ``scale`` (None: an answer without a grade): a
    true grade per record, each judge off by a little now and then, judge-c silent on record
    7."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, size=N)
    grades: dict[str, list[Any]] = {}
    for j, judge in enumerate(JURY):
        off = rng.integers(-1, 2, size=N) * (rng.random(N) < 0.4)
        points = np.clip(truth + off + (j == 1), 0, 4).tolist()
        if scale == "1-5":
            mine: list[Any] = [int(p) + 1 for p in points]
        elif scale == "0-1":
            mine = [p / 4 for p in points]
        else:
            mine = [LABELS[min(2, int(p) // 2)] for p in points]
        if judge == "judge-c":
            mine[7] = None
        grades[judge] = mine
    return grades


def _answer_as(grades: dict[str, list[Any]]) -> Any:
    """The loopback's answers of the planted jury (every correctness prompt a C)."""

    def answer(request: Request) -> dict[str, Any]:
        if RUBRIC not in (request.prompt or ""):
            return {"content": json.dumps({"label": "C"})}
        grade = grades[request.json["model"]][_which(request)]
        if grade is None:
            return {"content": "no grade"}
        key = "label" if isinstance(grade, str) else "score"
        return {"content": json.dumps({"reasoning": "planted", key: grade})}

    return answer


def _jury_suite(tmp_path: Path, metrics: dict[str, dict[str, Any]]) -> Path:
    suite = tmp_path / "jury.yaml"
    spec = {
        "name": "jury",
        "metrics": metrics,
        "judge": {"rubric": RUBRIC, "judges": [f"openai:{j}" for j in JURY]},
    }
    suite.write_text(json.dumps(spec), encoding="utf-8")
    return suite


def _matrix(grades: dict[str, list[Any]], number: Any) -> np.ndarray:
    """The judges x records matrix of the package, ``number`` of each grade (NaN: none)."""
    return np.array([[np.nan if g is None else float(number(g)) for g in grades[j]] for j in JURY])


def _fleiss(grades: dict[str, list[Any]], values: list[Any]) -> float:
    """statsmodels' Fleiss' kappa over the records every judge graded."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    rows = [
        [sum(grades[j][i] == v for j in JURY) for v in values]
        for i in range(N)
        if all(grades[j][i] is not None for j in JURY)
    ]
    return float(fleiss_kappa(np.array(rows), method="fleiss"))


AT_LEVELS: dict[str, dict[str, str]] = {
    "1-5": {"alpha": "ordinal", "interval": "interval", "nominal": "nominal"},
    "good/fair/poor": {"alpha": "nominal", "ordinal": "ordinal", "interval": "interval"},
    "0-1": {"alpha": "interval"},
}
"""Per scale, the suite's judge_agreement metrics and the level each is measured at (the
first, ``alpha``, gives no level: the scale's)."""


@pytest.mark.parametrize("scale", list(AT_LEVELS))
def test_a_jury_s_agreement_is_at_the_scale_s_level(
    server: LoopbackServer, tmp_path: Path, scale: str
) -> None:
    """judge_agreement over a planted jury of three (one a grade higher, one silent on a
    record) equals the krippendorff package's alpha at the scale's level (1-5 ordinal, labels
    nominal, 0-1 interval) and at any level the suite gives, on the judges x records matrix,
    a grade not given missing; judge_fleiss_kappa equals statsmodels' Fleiss' kappa over the
    records every judge graded, and is null with the reason on a continuous scale."""
    import krippendorff

    grades = _planted_jury(scale)
    server.answer = _answer_as(grades)
    metrics: dict[str, dict[str, Any]] = {
        name: {"metric": "judge_agreement", **({"level": level} if name != "alpha" else {})}
        for name, level in AT_LEVELS[scale].items()
    }
    metrics["kappa"] = {"metric": "judge_fleiss_kappa"}
    suite = _jury_suite(tmp_path, metrics)
    data = _records(tmp_path / "r.jsonl")
    result = pingce.evaluate(
        suite, data, base_url=server.url, scale=scale, bootstrap=200, on_judge_failure="skip"
    )
    labelled = scale == "good/fair/poor"
    value = {"good": 1.0, "fair": 0.5, "poor": 0.0}
    code = (lambda g: LABELS.index(g)) if labelled else float
    domain = list(range(3)) if labelled else [1, 2, 3, 4, 5]
    for name, level in AT_LEVELS[scale].items():
        number = value.get if labelled and level == "interval" else code
        extra = {"value_domain": domain} if level != "interval" else {}
        expected = krippendorff.alpha(
            reliability_data=_matrix(grades, number), level_of_measurement=level, **extra
        )
        assert result.value(name) == pytest.approx(expected, abs=1e-9), (name, level)
        alpha = result.metrics[name]
        assert alpha.ci_low is not None and alpha.ci_low <= alpha.value <= (alpha.ci_high or 0)
    kappa = result.metrics["kappa"]
    if scale == "0-1":
        assert kappa.value is None and "continuous" in (kappa.undefined_reason or "")
    else:
        values: list[Any] = LABELS if labelled else [1, 2, 3, 4, 5]
        assert kappa.value == pytest.approx(_fleiss(grades, values), abs=1e-9)
        assert kappa.failed_records == 1  # record 7, left out: not every judge graded it


def test_the_layout_is_the_scale_s_whatever_grades_occur(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """A jury's ordinal rows are coded by the scale's declared points, not by the grades the
    records use: two runs whose judges use different grades (one never gives a 5) compare
    record by record, from the files and from the stored runs, the delta the difference of the
    two alphas; one judge gives null with the reason; a level the scale cannot have says so."""
    harsh = {
        j: [None if g is None else min(g, 4) for g in gs] for j, gs in _planted_jury("1-5").items()
    }
    kind = _planted_jury("1-5", seed=5)
    base = _records(tmp_path / "base.jsonl")
    cand = tmp_path / "cand.jsonl"
    rows = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    cand.write_text(
        "".join(json.dumps({**r, "output": r["output"] + " v2"}) + "\n" for r in rows),
        encoding="utf-8",
    )
    answers = {"harsh": _answer_as(harsh), "kind": _answer_as(kind)}
    server.answer = lambda req: answers["kind" if " v2" in (req.prompt or "") else "harsh"](req)
    suite = _jury_suite(tmp_path, {"alpha": {"metric": "judge_agreement"}})
    a = pingce.evaluate(suite, cand, base_url=server.url, bootstrap=100)
    b = pingce.evaluate(suite, base, base_url=server.url, bootstrap=100)
    assert a.value("alpha") is not None and b.value("alpha") is not None
    expected = a.value("alpha") - b.value("alpha")
    files = pingce.compare(suite, cand, base, base_url=server.url, bootstrap=100)
    assert files.metrics["alpha"].delta == pytest.approx(expected, abs=1e-12)
    pingce.report.write_outputs(a, tmp_path / "a")
    pingce.report.write_outputs(b, tmp_path / "b")
    stored = pingce.compare_runs(tmp_path / "a", tmp_path / "b", suite=suite, bootstrap=100)
    assert stored.metrics["alpha"].delta == pytest.approx(expected, abs=1e-12)
    one = pingce.evaluate(suite, base, base_url=server.url, bootstrap=0, judges=["openai:judge-a"])
    assert one.value("alpha") is None
    assert "two or more judges" in (one.metrics["alpha"].undefined_reason or "")
    ordinal = _jury_suite(tmp_path, {"alpha": {"metric": "judge_agreement", "level": "ordinal"}})
    with pytest.raises(pingce.SuiteError, match="continuous"):
        pingce.evaluate(ordinal, base, base_url=server.url, scale="0-1")


def test_the_statistic_s_width_is_the_scale_s() -> None:
    """Ordinal rows over 1-5 have 1 + 5 x 5 columns and nominal rows over three labels 2 + 3,
    whichever of the values the records' grades use."""
    from pingce.engine.judgements import Graded
    from pingce.judged import parse_scale
    from pingce.metrics.judged import JudgeAgreement
    from pingce.metrics.protocol import Context
    from pingce.records import load_records

    for spec, level, width in (("1-5", "ordinal", 26), ("good/fair/poor", "nominal", 5)):
        scale = parse_scale(spec)
        metric = JudgeAgreement()
        metric.grade_on(scale)
        statistic = metric.statistic()
        table = load_records([{"output": "x"}, {"output": "y"}], statistic.fields())
        for used in ([0, 0], [1, 1]):
            codes = np.array([used, used], dtype=np.intp)
            values = np.array([[1.0, 1.0], [1.0, 1.0]])
            failures = np.full((2, 2), None, dtype=object)
            graded = Graded(values, scale, ("a", "b"), failures, codes, [[], []])
            block = statistic.compute(table, Context(judged={statistic.key: graded}))
            assert block.width == width and metric._level == level


def _pairs(path: Path) -> Path:
    lines = [
        {
            "id": f"p{i}",
            "input": f"question {i}?",
            "output_a": f"answer-{i:02d} {'GOOD' if i % 3 else 'bad'} a",
            "output_b": f"answer-{i:02d} {'bad' if i % 3 else 'GOOD'} b",
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path


def test_pairwise_asks_both_orders_and_measures_position_bias(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """A judge that prefers the GOOD answer wherever it stands, except on records 0, 5 and 9
    where it always picks whatever is shown first: those verdicts flip with the order, so they
    are ties and the position bias is 3/12; the win rate counts output_a's clean wins."""
    sways = {0, 5, 9}

    def answer(request: Request) -> dict[str, Any]:
        i = _which(request)
        prompt = request.prompt or ""
        first = prompt.index("<output_a>")
        shown_a = prompt[first : prompt.index("</output_a>")]
        label = "A" if i in sways or "GOOD" in shown_a else "B"
        return {"content": json.dumps({"reasoning": "planted", "label": label})}

    server.answer = answer
    data = _pairs(tmp_path / "pairs.jsonl")
    result = pingce.evaluate(
        "judged-pairwise", data, judges=["openai:judge-a"], base_url=server.url, bootstrap=200
    )
    wins = [0.5 if i in sways else (1.0 if i % 3 else 0.0) for i in range(N)]
    assert result.value("win_rate") == pytest.approx(np.mean(wins), abs=1e-12)
    assert result.value("position_bias") == pytest.approx(len(sways) / N, abs=1e-12)
    bias = result.metrics["position_bias"]
    assert bias.ci_low is not None and bias.ci_low <= bias.value <= (bias.ci_high or 0)
    assert len(server.chat()) == 2 * N
    rows = {r["id"]: r for r in _records_of(result, tmp_path)}
    orders = sorted(g["order"] for g in rows["p0"]["judge"]["grades"])
    assert orders == ["output_a first", "output_b first"]


def test_report_html_shows_each_grade_with_the_judge_s_answer(
    server: LoopbackServer, tmp_path: Path, browser: Any
) -> None:
    """A record's view in report.html lists the judges' grades: who, which task, the raw answer
    (as text: a payload in it stays text), the grade and the reasoning; a record without a
    grade says why."""
    from tests._browser import MISSING, browser_available
    from tests.test_report_records import Page

    if not browser_available():
        pytest.skip(MISSING)
    payload = '<img src=x onerror="window.__xss=true">'
    server.answer = Planted(bad={0: payload})
    result = _run(server, _records(tmp_path / "r.jsonl"), bootstrap=0, on_judge_failure="skip")
    out = tmp_path / "out"
    pingce.report.write_outputs(result, out)
    page = Page(browser, out / "report.html")
    p = page.page
    p.locator("#r-body tr.rec", has_text="q0").first.click()
    part = p.locator("#r-body tr.detail section.grades")
    assert part.locator("h4").text_content() == "grades"
    who = part.locator(".grade-who").all_text_contents()
    assert who == ["openai:judge-a · rubric", "openai:judge-a · correctness"]
    facts = part.locator(".grade-facts").all_text_contents()
    assert all(f.startswith("no grade: no ") for f in facts), facts
    assert part.locator(".msg pre").all_text_contents() == [payload, payload]
    assert p.evaluate("window.__xss") is None and p.evaluate("document.images.length") == 0
    p.locator("#r-body tr.rec", has_text="q1").first.click()
    second = p.locator("#r-body tr.detail section.grades").last
    facts = second.locator(".grade-facts").all_text_contents()
    assert facts[0].startswith(f"grade {SCORES[1]}") and facts[1].startswith("grade 0.5 (")
    assert "record 1" in (second.locator(".grade-reasoning").first.text_content() or "")
    assert not page.errors
    page.close()


def test_report_html_has_a_judges_section_with_the_bias_diagnostics(
    server: LoopbackServer, tmp_path: Path
) -> None:
    server.answer = Planted(bad={2: "no grade here"})
    result = _run(server, _records(tmp_path / "r.jsonl"), on_judge_failure="skip")
    out = tmp_path / "out"
    pingce.report.write_outputs(result, out)
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="judges">') :]
    section = section[: section.index("</section>")]
    assert "<code>openai:judge-a</code>" in section and "answers without a grade" in section
    assert "verbosity: correlation of score and answer length" in section
    r = result.metrics["score_length_correlation"]
    assert f"<b>{r.value:.4f}</b> [{r.ci_low:.4f}, {r.ci_high:.4f}]" in section
    assert "agreement of the jury" in section and "two or more judges" in section
    assert '<a href="#judges">judges</a>' in html
    assert "the judges&#x27; calls are under judges" in html or "the judges' calls" in html


def test_a_judge_that_is_the_model_under_test_is_flagged() -> None:
    from pingce.engine.judgements import Judgements
    from pingce.options import ModelCall
    from pingce.remote.usage import BackendStats

    judged = Judgements({}, {"openai:qwen": BackendStats(), "openai:other": BackendStats()}, "")
    model = ModelCall("openai:qwen", "qwen", None, None, {}, None, "openai")
    (note,) = judged.self_preference(model)
    assert note.startswith("self-preference: the judge openai:qwen is also the model under test")
    assert judged.self_preference(None) == []


def test_an_ungraded_answer_two_statistics_read_is_counted_once(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """rubric_score and judge_agreement read the same rubric prompt: its answer without a grade
    is one answer without a grade (and one request), not two."""
    server.answer = Planted(bad={4: "nothing to say"})
    result = _run(server, _records(tmp_path / "r.jsonl"), bootstrap=0)
    judge = (result.judge or {})["openai:judge-a"]
    assert judge["unparsed_answers"] == 2  # the rubric prompt and the correctness prompt
    assert judge["requests"] == judge["prompts"] == 2 * N


def test_two_judged_runs_compare_record_by_record(server: LoopbackServer, tmp_path: Path) -> None:
    """pingce compare of two stored judged runs pairs the records by id from stats.npz (no judge
    is asked again): the rubric score's delta is the difference of the planted means, and the
    paired interval brackets it. pingce.compare of the two files grades both sides."""
    base = _records(tmp_path / "base.jsonl")
    cand = tmp_path / "cand.jsonl"
    rows = [json.loads(line) for line in base.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["output"] += " better"
    cand.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    better = Planted(shift=1)
    server.answer = lambda req: (better if "better" in (req.prompt or "") else Planted())(req)
    a = _run(server, cand, bootstrap=200)
    b = _run(server, base, bootstrap=200)
    pingce.report.write_outputs(a, tmp_path / "a")
    pingce.report.write_outputs(b, tmp_path / "b")
    asked = len(server.chat())
    stored = pingce.compare_runs(tmp_path / "a", tmp_path / "b", bootstrap=200)
    assert len(server.chat()) == asked
    delta = stored.metrics["rubric_score"].delta
    expected = np.mean([min(5, s + 1) for s in SCORES]) - np.mean(SCORES)
    assert delta == pytest.approx(expected, abs=1e-12)
    files = pingce.compare(
        "judged",
        cand,
        base,
        judges=["openai:judge-a"],
        base_url=server.url,
        rubric=RUBRIC,
        bootstrap=200,
    )
    assert files.metrics["rubric_score"].delta == pytest.approx(expected, abs=1e-12)
    assert len(server.chat()) == asked  # both sides' answers were in the cache


def test_the_judges_section_finds_a_diagnostic_under_the_suite_s_own_name(
    server: LoopbackServer, tmp_path: Path
) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: named\nmetrics:\n  rubric_score: {}\n"
        "  verbosity: {metric: score_length_correlation}\n"
        f"judge:\n  rubric: '{RUBRIC}'\n  judges: [openai:judge-a]\n",
        encoding="utf-8",
    )
    result = pingce.evaluate(
        suite, _records(tmp_path / "r.jsonl"), base_url=server.url, bootstrap=0
    )
    out = tmp_path / "out"
    pingce.report.write_outputs(result, out)
    html = (out / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="judges">') :]
    r = result.metrics["verbosity"].value
    assert (
        r is not None
        and f"verbosity: correlation of score and answer length: <b>{r:.4f}</b>" in section
    )


def _suite(tmp_path: Path, judge: str = "", metrics: str = "  rubric_score: {}\n") -> Path:
    """A suite of ``metrics`` graded on the rubric, 1-5, by judge-a, with ``judge`` lines
    added to its judge block."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"name: graded\nmetrics:\n{metrics}"
        f"judge:\n  rubric: '{RUBRIC}'\n  scale: 1-5\n  judges: [openai:judge-a]\n{judge}",
        encoding="utf-8",
    )
    return suite


def test_structured_output_is_asked_and_refused_once(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """``structured: auto`` (the default) sends the answer's JSON schema; an endpoint that
    refuses response_format (a 400 naming it) is asked again without it, and the judge never
    sends it again that run: one refused request, no failed call, the scores the strict parser
    reads; a rerun asks nothing (the answers are cached under the requests as given)."""
    data = _records(tmp_path / "r.jsonl")
    first = pingce.evaluate(_suite(tmp_path), data, base_url=server.url, bootstrap=0)
    schema = server.chat()[0].json["response_format"]
    assert schema["type"] == "json_schema"
    assert schema["json_schema"]["schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert "structured=auto" in (first.signature.model_extra or {})["judge"]
    server.reset()
    server.formats = "reject"
    rubric = RUBRIC + " (refused)"
    result = _run(server, data, judges=["openai:judge-a", "openai:judge-b"], rubric=rubric)
    asked = server.chat()
    for judge in ("judge-a", "judge-b"):
        mine = [r for r in asked if r.json["model"] == judge]
        refused = [r for r in mine if r.status == 400]
        assert len(refused) == 1 and refused[0].response_format is not None
        assert len(mine) == 2 * N + 1  # every prompt answered once, plus the one refused
        assert all(r.response_format is None for r in mine if r.status == 200)
        stats = (result.judge or {})[f"openai:{judge}"]
        assert stats["failures"] == 0 and stats["unparsed_answers"] == 0
    assert result.value("rubric_score") == pytest.approx(np.mean(SCORES), abs=1e-12)
    _run(server, data, judges=["openai:judge-a", "openai:judge-b"], rubric=rubric)
    assert len(server.chat()) == len(asked)
    strict = _suite(tmp_path, "  structured: true\n")
    always = pingce.evaluate(strict, data, base_url=server.url, bootstrap=0, rubric=rubric + "!")
    assert always.metrics["rubric_score"].failed_records == N  # true: a refusal is a failure


def test_a_model_s_refusal_is_a_counted_failure_with_its_text(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """An answer carrying OpenAI's ``message.refusal`` is never a score: a counted answer
    without a grade, the refusal's text kept in records.jsonl."""
    plain = Planted()

    def answer(request: Request) -> dict[str, Any]:
        if _which(request) == 3:
            return {"content": None, "refusal": "I can't assist with grading this."}
        return plain(request)

    server.answer = answer
    data = _records(tmp_path / "r.jsonl")
    result = _run(server, data, on_judge_failure="skip", bootstrap=0)
    kept = [s for i, s in enumerate(SCORES) if i != 3]
    assert result.value("rubric_score") == pytest.approx(np.mean(kept), abs=1e-12)
    assert result.metrics["rubric_score"].failed_records == 1
    assert (result.judge or {})["openai:judge-a"]["unparsed_answers"] == 2
    rows = {r["id"]: r for r in _records_of(result, tmp_path)}
    grade = next(g for g in rows["q3"]["judge"]["grades"] if g["task"] == "rubric")
    assert grade["refusal"] == "I can't assist with grading this."
    assert grade["failure"] == "refusal: I can't assist with grading this."
    assert "score" not in grade


def test_geval_counts_the_answers_graded_by_their_stated_score(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """With logprobs, an answer without usable probabilities is graded by its stated score,
    counted per judge (results.json's ``stated_score_fallbacks``), marked ``"weighted": false``
    in its grade, and shown in report.html's Judges section."""
    bare = {2, 7, 9}  # records answered without logprobs

    def answer(request: Request) -> dict[str, Any]:
        i = _which(request)
        content = json.dumps({"score": SCORES[i]})
        if i in bare:
            return {"content": content}
        token = {"token": str(SCORES[i]), "logprob": 0.0, "top_logprobs": []}
        tokens = [{"token": '{"score": ', "logprob": 0.0}, token, {"token": "}", "logprob": 0.0}]
        return {"content": content, "logprobs": {"content": tokens}}

    server.answer = answer
    data = _records(tmp_path / "r.jsonl")
    result = pingce.evaluate(
        _suite(tmp_path, "  logprobs: true\n"), data, base_url=server.url, bootstrap=0
    )
    assert result.value("rubric_score") == pytest.approx(np.mean(SCORES), abs=1e-12)
    assert (result.judge or {})["openai:judge-a"]["stated_score_fallbacks"] == len(bare)
    rows = _records_of(result, tmp_path)
    for i, row in enumerate(rows):
        (grade,) = row["judge"]["grades"]
        assert grade.get("weighted") is (False if i in bare else None)
        assert ("weighted_score" in grade) is (i not in bare)
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="judges">') :]
    assert 'stated scores: no usable logprobs (G-Eval)</th><td class="num">3</td>' in section
    plain = _run(server, data, bootstrap=0)
    assert "stated_score_fallbacks" not in (plain.judge or {})["openai:judge-a"]


def test_a_jury_s_judges_are_asked_at_the_same_time(server: LoopbackServer, tmp_path: Path) -> None:
    """Two judges, each answering in 0.2 s with one request at a time, five prompts each: the
    jury takes about one judge's second, not the two seconds of one judge after the other; the
    numbers are those of the judges asked alone, and each judge has its progress bar."""
    import time

    from pingce.engine.evaluate import evaluate_suite
    from pingce.options import RunOptions
    from tests.loopback import Fault

    kind = Planted(shift=1)
    server.answer = lambda req: (kind if req.json["model"] == "judge-b" else Planted())(req)
    lines = _records(tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    data = tmp_path / "five.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    suite = _suite(tmp_path, "  concurrency: 1\n")
    both = ["openai:judge-a", "openai:judge-b"]
    done: dict[str, list[float]] = {}

    def hook(name: str, total: float | None) -> Any:
        done[name] = [total or 0.0, 0.0]
        return lambda amount: done[name].__setitem__(1, done[name][1] + amount)

    options = RunOptions(base_url=server.url, bootstrap=0, judges=both, rubric=RUBRIC + "!")
    evaluate_suite(suite, data, options, progress=hook)  # also the warm-up: imports, caches
    assert done["judge judge-a"] == done["judge judge-b"] == [5.0, 5.0]  # a bar per judge
    server.rule = lambda req: Fault("ok", seconds=0.2)
    start = time.perf_counter()
    result = pingce.evaluate(suite, data, base_url=server.url, bootstrap=0, judges=both)
    seconds = time.perf_counter() - start
    assert seconds < 1.6, seconds
    assert server.max_in_flight == 2
    expected = np.mean([(s + min(5, s + 1)) / 2 for s in SCORES[:5]])
    assert result.value("rubric_score") == pytest.approx(expected, abs=1e-12)


def test_ordinal_agreement_too_large_for_memory_says_so_before_asking(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ordinal rows hold the scale's K x K coincidences per record: past the memory limit the
    run stops with an input error that names level interval, before any judge is asked."""
    from pingce.metrics import agreement

    monkeypatch.setattr(agreement, "_ORDINAL_CELLS", N * 25 - 1)  # 1-5: 25 cells a record
    suite = _jury_suite(tmp_path, {"alpha": {"metric": "judge_agreement"}})
    with pytest.raises(pingce.InputError, match="level interval"):
        pingce.evaluate(suite, _records(tmp_path / "r.jsonl"), base_url=server.url)
    assert server.chat() == []
    interval = _jury_suite(tmp_path, {"alpha": {"metric": "judge_agreement", "level": "interval"}})
    server.answer = _answer_as(_planted_jury("1-5"))
    result = pingce.evaluate(interval, _records(tmp_path / "r.jsonl"), base_url=server.url)
    assert result.value("alpha") is not None


def test_stored_runs_of_another_scale_compare_with_it(
    server: LoopbackServer, tmp_path: Path
) -> None:
    """Two stored runs graded on --scale good/fair/poor (not the suite's 1-5): compared with the
    same --scale, their jury agreement pairs record by record; without it, the plan's layout is
    1-5's and the comparison says the runs were made with other options."""
    grades = _planted_jury("good/fair/poor")
    server.answer = _answer_as(grades)
    suite = _jury_suite(tmp_path, {"alpha": {"metric": "judge_agreement"}})
    data = _records(tmp_path / "r.jsonl")
    run = pingce.evaluate(suite, data, base_url=server.url, scale="good/fair/poor", bootstrap=0)
    pingce.report.write_outputs(run, tmp_path / "a")
    pingce.report.write_outputs(run, tmp_path / "b")
    same = pingce.compare_runs(
        tmp_path / "a", tmp_path / "b", suite=suite, scale="good/fair/poor", bootstrap=0
    )
    assert same.metrics["alpha"].delta == 0.0
    with pytest.raises(pingce.OptionError, match="other options"):
        pingce.compare_runs(tmp_path / "a", tmp_path / "b", suite=suite, bootstrap=0)
