"""The demo's stand-in judge (:mod:`pingce.cli.stand_in`): its rule on hand-made texts, its
answers read by the judge phase as a model's are (G-Eval's weighted score from its token
probabilities by hand); ``pingce demo`` runs the judged examples with it (tests/test_cli.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import pingce
from pingce.cli.stand_in import LENIENT, MODEL, grade_prompt, overlap, serving
from pingce.judged import parse_scale
from tests.loopback import keep_local

FIVE = parse_scale("1-5")


def test_overlap_is_the_f1_of_words() -> None:
    # 2 words shared of 3 and 3: precision = recall = 2/3
    assert overlap("the cat sat", "the cat ran") == pytest.approx(2 / 3, abs=1e-15)
    # each Han character a word: 北京 shares 2 of 4 (中国北京) and 2 of 2
    assert overlap("北京", "中国北京") == pytest.approx(2 * 0.5 * 1 / 1.5, abs=1e-15)
    assert overlap("Jupiter.", "jupiter") == 1.0  # case and punctuation do not count
    assert overlap("", "x") == 0.0 and overlap("a", "b") == 0.0


def _prompt(**texts: str) -> str:
    return "grade this\n" + "\n".join(f"<{k}>{v}</{k}>" for k, v in texts.items())


def test_the_rule_of_each_task() -> None:
    # rubric: F1 2/3 on 1-5 -> the point at index int(2/3 * 5) = 3, i.e. 4
    answer, score = grade_prompt(_prompt(output="the cat sat", reference="the cat ran"), FIVE)
    assert answer["score"] == 4 and score == 4
    # the lenient judge's square root: sqrt(1/9)=1/3 -> index 1, point 2 (strict: index 0)
    texts = {"output": "a b c", "reference": "a x y z w v u"}  # F1 = 2*(1/3)(1/7)/(10/21) = 0.2
    assert grade_prompt(_prompt(**texts), FIVE)[0]["score"] == 2  # int(0.2*5)=1
    assert grade_prompt(_prompt(**texts), FIVE, lenient=True)[0]["score"] == 3  # sqrt .2=.447
    # correctness: C from 0.6, P from 0.25
    form = 'answer "C" | "P" | "I"\n'
    assert grade_prompt(form + _prompt(output="a b", reference="a b"), FIVE)[0]["label"] == "C"
    assert grade_prompt(form + _prompt(output="a b c", reference="a x"), FIVE)[0]["label"] == "P"
    assert grade_prompt(form + _prompt(output="q", reference="a"), FIVE)[0]["label"] == "I"
    # pairwise: the larger overlap with the question; a near tie goes to the answer shown first
    pair = _prompt(input="capital of France", output_a="Berlin", output_b="capital: Paris")
    assert grade_prompt(pair, FIVE)[0]["label"] == "B"
    tie = _prompt(input="capital of France", output_a="Paris", output_b="Lyon")
    assert grade_prompt(tie, FIVE)[0]["label"] == "A"
    swapped = _prompt(input="capital of France", output_a="Lyon", output_b="Paris")
    assert grade_prompt(swapped, FIVE)[0]["label"] == "A"  # the position bias on purpose


def _records(path: Path) -> Path:
    rows = [
        ("q0", "the cat sat", "the cat ran"),  # F1 2/3 -> 4
        ("q1", "a b c", "a x y z w v u"),  # F1 0.2 -> 2
        ("q2", "北京", "北京"),  # F1 1 -> 5
        ("q3", "nothing", "else"),  # F1 0 -> 1
    ]
    lines = [json.dumps({"id": i, "input": "?", "output": o, "reference": r}) for i, o, r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _weighted(score: int) -> float:
    """G-Eval's sum of p * point with the stand-in's 0.7, 0.2 below, 0.1 above, renormalised."""
    weights = {score: 0.7, score - 1: 0.2, score + 1: 0.1}
    weights = {p: w for p, w in weights.items() if 1 <= p <= 5}
    return sum(p * w for p, w in weights.items()) / sum(weights.values())


def test_the_judge_phase_reads_the_stand_in_as_a_model(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    keep_local(monkeypatch, tmp_path / "cache")
    data = _records(tmp_path / "r.jsonl")
    suite = tmp_path / "graded.yaml"
    suite.write_text(
        "name: graded\nid_field: id\nmetrics:\n  rubric_score: {reference: reference}\n"
        "judge: {scale: 1-5, rubric: overlap, logprobs: true}\n",
        encoding="utf-8",
    )
    with serving(FIVE) as url:
        result = pingce.evaluate(
            suite, data, judges=[f"openai:{MODEL}"], base_url=url, bootstrap=0, cache=False
        )
    expected = [_weighted(s) for s in (4, 2, 5, 1)]
    assert result.metrics["rubric_score"].value == pytest.approx(sum(expected) / 4, abs=1e-12)
    assert result.failures.judge == 0
    assert math.isclose(_weighted(4), 3.9)  # the weighted score is not the stated one
    assert math.isclose(_weighted(1), (0.7 * 1 + 0.1 * 2) / 0.8)


def test_a_jury_of_the_two_stand_ins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    keep_local(monkeypatch, tmp_path / "cache")
    data = _records(tmp_path / "r.jsonl")
    with serving(FIVE) as url:
        result = pingce.evaluate(
            "judged",
            data,
            judges=[f"openai:{MODEL}", f"openai:{LENIENT}"],
            base_url=url,
            rubric="overlap",
            bootstrap=0,
            cache=False,
        )
    # strict 4, 2, 5, 1; lenient (square roots .816, .447, 1, 0) 5, 3, 5, 1: the mean of both
    assert result.metrics["rubric_score"].value == pytest.approx((4.5 + 2.5 + 5 + 1) / 4)
    assert result.metrics["judge_agreement"].value is not None


def test_runs_graded_by_other_judges_or_rubrics_do_not_compare(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two stored runs of one suite whose judges, rubric or scale differ: their difference would
    be the judges' as much as the systems', so pingce.compare_runs refuses them, naming both
    gradings (as it refuses two --similarity backends); the same grading compares."""
    keep_local(monkeypatch, tmp_path / "cache")
    data = _records(tmp_path / "r.jsonl")
    with serving(FIVE) as url:
        given = {"judges": [f"openai:{MODEL}"], "base_url": url, "bootstrap": 0}
        pingce.evaluate("judged", data, rubric="overlap", out=tmp_path / "a", **given)
        pingce.evaluate("judged", data, rubric="overlap", out=tmp_path / "b", **given)
        pingce.evaluate("judged", data, rubric="another rubric", out=tmp_path / "c", **given)
    same = pingce.compare_runs(tmp_path / "a", tmp_path / "b", bootstrap=0)
    assert same.metrics["rubric_score"].delta == 0
    with pytest.raises(pingce.OptionError, match="was graded by openai:stand-in-overlap"):
        pingce.compare_runs(tmp_path / "c", tmp_path / "a", bootstrap=0)


def test_a_judge_that_gives_no_grade_makes_the_run_exit_3(tmp_path: Path) -> None:
    """A judged run whose judge answers without a grade: the outputs are written, the answers
    counted, and the command exits 3 as for failed similarity calls."""
    from tests.cli_run import loopback_pingce
    from tests.loopback import LoopbackServer

    pingce_cli = loopback_pingce(tmp_path)
    data = _records(tmp_path / "r.jsonl")
    with LoopbackServer() as server:
        server.answer = lambda request: {"content": "I cannot grade this."}
        done = pingce_cli(
            *("run", "judged", "--data", str(data), "--judge", "openai:j"),
            *("--base-url", server.url, "--rubric", "r", "--out", str(tmp_path / "o")),
        )
    assert done.returncode == 3, done.stderr
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["judge"]["openai:j"]["unparsed_answers"] == 8  # 4 rubric + 4 correctness
