"""``pingce compare --pairwise`` (issue 33): the two systems' answers judged against each other,
against a loopback judge with planted preferences, so every expected number is computed here.

The judge prefers the candidate's answer on some records and the baseline's on others wherever
each is shown, calls a tie on some, and on others picks whatever it reads first (a planted
position bias: those verdicts flip with the order, so they are ties). The win rate, the position
bias, both orders asked, the answer cache, a failed call counted (never a verdict), and two
stored runs (their answers kept with ``--records-fields all``, else a clear error).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import OptionError
from tests.loopback import Fault, LoopbackServer, Request, keep_local

N = 16
WINS = {1, 2, 4, 7, 8, 10, 11, 13}
"""The candidate's answer is better, in both orders."""
LOSSES = {3, 6, 14}
"""The baseline's is."""
TIES = {5}
"""The judge says "tie" in both orders."""
SWAYED = {0, 9, 12, 15}
"""The judge picks whichever answer it reads first."""
RUBRIC = "RUBRIC-MARK: is the answer helpful?"


def _expected_wins() -> list[float]:
    return [1.0 if i in WINS else 0.0 if i in LOSSES else 0.5 for i in range(N)]


def _write(path: Path, side: str) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "input": f"question {i}?",
            "output": f"answer-{i:02d} from the {side} " + "word " * (i % 4),
            "reference": f"reference {i}",
        }
        for i in range(N)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _fenced(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>(.*?)</{tag}>", prompt, re.S)
    assert found is not None, prompt
    return found.group(1)


def _record(prompt: str) -> int:
    found = re.search(r"answer-(\d\d)", prompt)
    assert found is not None, prompt
    return int(found.group(1))


def planted(request: Request) -> dict[str, Any]:
    """A pairwise prompt: the planted preference; a rubric prompt: 3 for the candidate's answer,
    2 for the baseline's; a correctness prompt: C."""
    prompt = request.prompt or ""
    i = _record(prompt)
    if "<output_a>" not in prompt:
        if RUBRIC in prompt and "<output>" in prompt:
            score = 3 if "candidate" in _fenced(prompt, "output") else 2
            return {"content": json.dumps({"reasoning": "planted", "score": score})}
        return {"content": json.dumps({"reasoning": "planted", "label": "C"})}
    first_is_candidate = "candidate" in _fenced(prompt, "output_a")
    if i in SWAYED:
        label = "A"
    elif i in TIES:
        label = "tie"
    else:
        label = "A" if (i in WINS) == first_is_candidate else "B"
    return {"content": json.dumps({"reasoning": f"record {i}", "label": label})}


def _pairwise_prompts(server: LoopbackServer) -> list[Request]:
    return [r for r in server.chat() if "<output_a>" in (r.prompt or "")]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    keep_local(monkeypatch, tmp_path / "cache")
    with LoopbackServer() as running:
        running.answer = planted
        yield running


@pytest.fixture
def sides(tmp_path: Path) -> tuple[Path, Path]:
    return _write(tmp_path / "cand.jsonl", "candidate"), _write(tmp_path / "base.jsonl", "baseline")


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "graded.yaml"
    suite.write_text(
        "name: graded\nid_field: id\nmetrics:\n  rubric_score: {}\n"
        f"judge:\n  rubric: '{RUBRIC}'\n  judges: [openai:judge-a]\n",
        encoding="utf-8",
    )
    return suite


def _compare(
    server: LoopbackServer, suite: Any, sides: tuple[Path, Path], **options: Any
) -> pingce.ComparisonResult:
    given: dict[str, Any] = {"base_url": server.url, "pairwise": True, "bootstrap": 300}
    given.update(options)
    return pingce.compare(suite, sides[0], sides[1], **given)


def test_the_win_rate_and_the_position_bias_are_the_planted_ones(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    result = _compare(server, _suite(tmp_path), sides)
    pairwise = result.pairwise
    assert pairwise is not None
    win, bias = pairwise.win_rate, pairwise.position_bias
    assert win.value == pytest.approx(np.mean(_expected_wins()), abs=1e-12)
    assert bias.value == pytest.approx(len(SWAYED) / N, abs=1e-12)
    for m in (win, bias):
        assert m.ci_low is not None and m.ci_high is not None
        assert m.ci_low <= (m.value or 0) <= m.ci_high and m.n == N
    assert (pairwise.output, pairwise.input) == ("output", "input")
    assert pairwise.judge["openai:judge-a"]["prompts"] == 2 * N
    assert pairwise.signature.startswith("openai:judge-a|url=")
    assert pairwise.verdict is not None and "interval" in pairwise.verdict
    # the rubric score of each side is compared as always, beside it
    assert result.metrics["rubric_score"].delta == pytest.approx(1.0, abs=1e-12)
    verdicts = {r["id"]: r["verdict"] for r in pairwise.records}
    assert verdicts == {
        f"q{i}": "candidate"
        if i in WINS
        else "baseline"
        if i in LOSSES
        else "tie"
        if i in TIES
        else "order-dependent"
        for i in range(N)
    }
    said = next(r for r in pairwise.records if r["id"] == "q3")["answers"]
    assert said == [
        "openai:judge-a (candidate's answer first): baseline's answer: record 3",
        "openai:judge-a (baseline's answer first): baseline's answer: record 3",
    ]
    saved = json.loads(result.to_json())["pairwise"]
    assert "records" not in saved
    poisson = _compare(server, _suite(tmp_path), sides, bootstrap_method="poisson").pairwise
    assert poisson is not None and poisson.win_rate.value == win.value  # from the cache
    low, high = poisson.win_rate.ci_low, poisson.win_rate.ci_high
    assert low is not None and high is not None and low <= (win.value or 0) <= high
    assert (low, high) != (win.ci_low, win.ci_high)  # its own resamples: Poisson weights
    assert saved["win_rate"]["value"] == pytest.approx(win.value)
    assert set(saved) >= {"win_rate", "position_bias", "judge", "signature", "verdict"}


def test_every_pair_is_asked_in_both_orders(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    result = _compare(server, _suite(tmp_path), sides, bootstrap=0)
    assert result.pairwise is not None
    assert result.pairwise.verdict == "not tested (--bootstrap 0)"
    assert result.pairwise.win_rate.ci_low is None
    asked = _pairwise_prompts(server)
    assert len(asked) == 2 * N
    orders: dict[int, list[bool]] = {}
    for request in asked:
        prompt = request.prompt or ""
        orders.setdefault(_record(prompt), []).append("candidate" in _fenced(prompt, "output_a"))
        assert _fenced(prompt, "input").strip() == f"question {_record(prompt)}?"
    assert {i: sorted(o) for i, o in orders.items()} == {i: [False, True] for i in range(N)}


def test_a_rerun_asks_the_judge_nothing(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    first = _compare(server, _suite(tmp_path), sides)
    asked = len(server.chat())
    again = _compare(server, _suite(tmp_path), sides)
    assert len(server.chat()) == asked
    assert again.pairwise is not None and first.pairwise is not None
    assert again.pairwise.judge["openai:judge-a"]["cache_hits"] == 2 * N
    assert again.pairwise.win_rate == first.pairwise.win_rate
    other = _compare(server, _suite(tmp_path), sides, rubric="Which answer is shorter?")
    assert len(_pairwise_prompts(server)) == 4 * N  # a changed criterion asks again
    assert other.pairwise is not None and other.pairwise.signature != first.pairwise.signature
    read = pingce.ComparisonResult.model_validate_json(first.to_json())
    assert read.pairwise is not None
    assert read.pairwise.model_dump() == first.pairwise.model_dump()
    assert read.pairwise.records == []  # the verdicts per record are the page's, not the file's


def test_a_judge_that_prefers_the_baseline_is_said_so(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    """Swapping the sides: the baseline's wins become the candidate's losses, and the win rate
    is 1 minus the other; the position bias is the judge's, whichever side is which."""
    there = _compare(server, _suite(tmp_path), sides).pairwise
    back = _compare(server, _suite(tmp_path), (sides[1], sides[0])).pairwise
    assert there is not None and back is not None
    assert back.win_rate.value == pytest.approx(1 - (there.win_rate.value or 0), abs=1e-12)
    assert back.position_bias.value == pytest.approx(there.position_bias.value or 0, abs=1e-12)
    assert (there.verdict or "").startswith("no clear preference (95% interval [")

    def candidate_better(request: Request) -> dict[str, Any]:  # but on the swayed records
        prompt = request.prompt or ""
        if "<output_a>" not in prompt or _record(prompt) in SWAYED:
            return planted(request)
        first = "A" if "candidate" in _fenced(prompt, "output_a") else "B"
        return {"content": json.dumps({"reasoning": "planted", "label": first})}

    server.answer = candidate_better  # another judge: the cache holds judge-a's answers
    clear = _compare(server, _suite(tmp_path), sides, judges=["openai:judge-b"]).pairwise
    assert clear is not None and clear.win_rate.value == pytest.approx((12 + 2) / N)
    assert (clear.verdict or "").startswith("the judges prefer the candidate's answers")
    reverse = _compare(
        server, _suite(tmp_path), (sides[1], sides[0]), judges=["openai:judge-b"]
    ).pairwise
    assert reverse is not None and reverse.win_rate.value == pytest.approx(2 / N)
    assert (reverse.verdict or "").startswith("the judges prefer the baseline's answers")


def test_a_failed_call_is_counted_never_a_verdict(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    def rule(request: Request) -> Fault | None:
        prompt = request.prompt or ""
        if "<output_a>" in prompt and _record(prompt) == 2:  # a win, lost to a failure
            return Fault("500", seconds=-1)
        return None

    server.rule = rule
    held = _compare(server, _suite(tmp_path), sides)
    assert held.pairwise is not None
    win = held.pairwise.win_rate
    assert win.value is None and win.failed_records == 1  # --on-judge-failure null
    (lost,) = [r for r in held.pairwise.records if r["verdict"] == "none"]
    assert lost["id"] == "q2" and all("judge call failed" in a for a in lost["answers"])
    assert held.pairwise.judge["openai:judge-a"]["failures"] >= 1
    skip = _compare(server, _suite(tmp_path), sides, on_judge_failure="skip")
    assert skip.pairwise is not None
    kept = [w for i, w in enumerate(_expected_wins()) if i != 2]
    assert skip.pairwise.win_rate.value == pytest.approx(np.mean(kept), abs=1e-12)
    assert skip.pairwise.win_rate.n == N - 1


def test_a_garbled_answer_is_counted_never_a_verdict(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt or ""
        if "<output_a>" in prompt and _record(prompt) == 3:
            return {"content": "both are fine I guess"}
        return planted(request)

    server.answer = answer
    result = _compare(server, _suite(tmp_path), sides, on_judge_failure="skip")
    assert result.pairwise is not None
    assert result.pairwise.judge["openai:judge-a"]["unparsed_answers"] == 2
    kept = [w for i, w in enumerate(_expected_wins()) if i != 3]
    assert result.pairwise.win_rate.value == pytest.approx(np.mean(kept), abs=1e-12)


def test_each_slice_has_its_win_rate(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    """--slice half: the win rate and position bias over each half's records."""
    for path in sides:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for i, row in enumerate(rows):
            row["half"] = "first" if i < N // 2 else "second"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    suite = tmp_path / "sliced.yaml"
    suite.write_text(
        _suite(tmp_path).read_text(encoding="utf-8") + "context: [half]\n", encoding="utf-8"
    )
    result = _compare(server, suite, sides, slices=["half"])
    assert result.pairwise is not None and result.pairwise.slices is not None
    wins = _expected_wins()
    for key, part in result.pairwise.slices.items():
        rows = range(N // 2) if key == "half=first" else range(N // 2, N)
        assert part.n_records == N // 2
        assert part.win_rate.value == pytest.approx(np.mean([wins[i] for i in rows]), abs=1e-12)
        bias = sum(1 for i in rows if i in SWAYED) / (N // 2)
        assert part.position_bias.value == pytest.approx(bias, abs=1e-12)
        assert part.win_rate.ci_low is not None
    assert sorted(result.pairwise.slices) == ["half=first", "half=second"]


def test_a_jury_averages_its_judges_verdicts(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    """judge-b calls every pair a tie in both orders: each record's win is the mean of the two
    judges' (a half for judge-b), and only judge-a's swayed verdicts depend on the order."""

    def answer(request: Request) -> dict[str, Any]:
        prompt = request.prompt or ""
        if request.json["model"] == "judge-b" and "<output_a>" in prompt:
            return {"content": json.dumps({"reasoning": "same", "label": "tie"})}
        return planted(request)

    server.answer = answer
    result = _compare(server, _suite(tmp_path), sides, judges=["openai:judge-a", "openai:judge-b"])
    assert result.pairwise is not None
    expected = np.mean([(w + 0.5) / 2 for w in _expected_wins()])
    assert result.pairwise.win_rate.value == pytest.approx(expected, abs=1e-12)
    assert result.pairwise.position_bias.value == pytest.approx(len(SWAYED) / N / 2, abs=1e-12)
    assert set(result.pairwise.judge) == {"openai:judge-a", "openai:judge-b"}


def test_a_suite_without_a_judged_answer_is_refused(sides: tuple[Path, Path]) -> None:
    with pytest.raises(OptionError, match="--pairwise compares the answers"):
        pingce.compare(
            "judged-pairwise",
            sides[0],
            sides[1],
            pairwise=True,
            judges=["openai:j"],
            base_url="http://127.0.0.1:9/v1",
        )


def _stored(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path, fields: str
) -> tuple[Path, Path]:
    folders = []
    for data, name in zip(sides, ("a", "b"), strict=True):
        result = pingce.evaluate(
            _suite(tmp_path), data, base_url=server.url, bootstrap=0, records_fields=fields
        )
        pingce.report.write_outputs(result, tmp_path / f"{name}-{fields}")
        folders.append(tmp_path / f"{name}-{fields}")
    return folders[0], folders[1]


def test_two_stored_runs_that_kept_their_answers(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = _stored(server, sides, tmp_path, "all")
    result = pingce.compare_runs(
        a, b, suite=_suite(tmp_path), pairwise=True, base_url=server.url, bootstrap=300
    )
    assert result.pairwise is not None
    assert result.pairwise.win_rate.value == pytest.approx(np.mean(_expected_wins()), abs=1e-12)
    assert result.pairwise.position_bias.value == pytest.approx(len(SWAYED) / N, abs=1e-12)
    assert len(_pairwise_prompts(server)) == 2 * N
    from_files = _compare(server, _suite(tmp_path), sides)
    assert from_files.pairwise is not None
    assert from_files.pairwise.win_rate == result.pairwise.win_rate  # the same bootstrap
    assert len(_pairwise_prompts(server)) == 2 * N  # the same prompts: from the cache
    assert "the judges asked only for --pairwise" in result.notes[0]
    plain = pingce.compare_runs(a, b, suite=_suite(tmp_path), bootstrap=0)
    assert plain.pairwise is None and "no model called" in plain.notes[0]


def test_two_stored_runs_without_their_answers_say_how_to_keep_them(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = _stored(server, sides, tmp_path, "none")
    asked = len(server.chat())
    with pytest.raises(OptionError, match="--records-fields all"):
        pingce.compare_runs(a, b, suite=_suite(tmp_path), pairwise=True, base_url=server.url)
    assert len(server.chat()) == asked


def test_the_command_line_reports_the_win_rate(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    """``pingce compare judged --data B --baseline A --judge ... --rubric ... --pairwise``: the
    console's table, comparison.json, comparison.md and comparison.html."""
    from tests.cli_run import run_pingce

    out = tmp_path / "cmp"
    args = ["compare", "judged", "--data", str(sides[0]), "--baseline", str(sides[1])]
    args += ["--judge", "openai:judge-a", "--base-url", server.url, "--rubric", RUBRIC]
    args += ["--pairwise", "--bootstrap", "200", "--out", str(out), "--no-progress"]
    done = run_pingce(*args, "--cache", str(tmp_path / "cache.db"))
    assert done.returncode == 0, done.stderr
    win = np.mean(_expected_wins())
    assert "pairwise preference" in done.stdout and "win_rate" in done.stdout
    assert f"{win:.4f}" in done.stdout and "judge openai:judge-a: 32 prompts" in done.stdout
    saved = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    assert saved["pairwise"]["win_rate"]["value"] == pytest.approx(win, abs=1e-12)
    html = (out / "comparison.html").read_text(encoding="utf-8")
    assert 'id="pairwise"' in html and "<code>position_bias</code>" in html
    assert f"the baseline&#x27;s answer preferred: {len(LOSSES)}</summary>" in html
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    assert "## Pairwise preference" in markdown and f"| {win:.4f} |" in markdown


def test_a_failed_pairwise_call_exits_3(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    from tests.cli_run import run_pingce

    server.rule = lambda req: (
        Fault("500", seconds=-1)
        if "<output_a>" in (req.prompt or "") and _record(req.prompt or "") == 1
        else None
    )
    args = ["compare", str(_suite(tmp_path)), "--data", str(sides[0]), "--baseline"]
    args += [str(sides[1]), "--base-url", server.url, "--pairwise", "--bootstrap", "0"]
    done = run_pingce(*args, "--no-cache", "--no-progress")
    assert done.returncode == 3, done.stderr
    assert "failed calls" in done.stdout


def test_judge_options_without_pairwise_are_noted_unused_for_stored_runs(
    server: LoopbackServer, sides: tuple[Path, Path], tmp_path: Path
) -> None:
    from tests.cli_run import run_pingce

    a, b = _stored(server, sides, tmp_path, "none")
    args = ["compare", str(a), str(b), "--suite", str(_suite(tmp_path)), "--judge", "openai:j"]
    done = run_pingce(*args, "--bootstrap", "0", "--no-progress", "--out", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    assert "--judge not used: " in done.stdout
    assert "two stored runs ask a judge only with --pairwise" in (
        tmp_path / "o" / "comparison.md"
    ).read_text(encoding="utf-8")
