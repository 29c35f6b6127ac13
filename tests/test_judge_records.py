"""A run scored by the LLM judge keeps, per record, what the judge was asked and answered
(records.jsonl's sparse ``"judge"``), and report.html's record detail view shows it as a part
"judge", its text escaped; against the loopback server (tests/loopback.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.suites import load_suite

from ._browser import MISSING, browser_available
from .loopback import LoopbackServer, char_jaccard, keep_local
from .test_report_records import IMG, LINK, SCRIPT, Page, embedded, lines

FAST: dict[str, Any] = {"backoff": 0.01, "max_backoff": 1.0, "timeout": 5.0}
PAIRS = [("员工信息", "员工信息表"), ("订单", "订单明细"), ("Payroll", "payroll run")]
RECORDS = [
    {"id": f"r{i}", "task": "selection", "gold_items": [b], "pred_items": [a]}
    for i, (a, b) in enumerate(PAIRS)
]
RECORDS.append({"id": "same", "task": "selection", "gold_items": ["x"], "pred_items": ["x"]})
PROSE = SCRIPT + LINK + IMG + " score: {score}"
"""The judge's answer (the server ignores response_format): payloads around the score."""


def run(server: LoopbackServer, out: Path, cache: Path) -> Any:
    suite = load_suite("function-points").spec
    spec = suite.model_copy(update={"similarity": FAST})
    return pingce.evaluate(
        spec, RECORDS, similarity="openai:m", base_url=server.url, cache=str(cache),
        bootstrap=0, out=out,
    )  # fmt: skip


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, list[Any]]]:
    """The run asked (its folder and the server's chat requests), and the same run again,
    answered from the cache (its folder)."""
    folder = tmp_path_factory.mktemp("judged")
    with pytest.MonkeyPatch.context() as patch, LoopbackServer(lifetime=120) as server:
        keep_local(patch, folder / "default-cache")
        server.formats, server.prose = "ignore", PROSE
        run(server, folder / "asked", folder / "cache.sqlite3")
        requests = server.chat()
        run(server, folder / "cached", folder / "cache.sqlite3")
        assert len(server.chat()) == len(requests)  # the second run asked nothing
        assert not server.errors
    yield folder / "asked", folder / "cached", requests


def test_each_record_keeps_what_the_judge_was_asked_and_answered(
    judged: tuple[Path, Path, list[Any]],
) -> None:
    asked, cached, requests = judged
    by_pair = {(r.x, r.y): r for r in requests}
    records = lines(asked)
    for record, (a, b) in zip(records, PAIRS, strict=False):
        [pair] = record["judge"]["pairs"]
        request = by_pair[(a, b)]
        assert (pair["a"], pair["b"]) == (a, b)
        assert pair["score"] == pytest.approx(char_jaccard(a, b), abs=1e-12)
        assert pair["answer"] == request.content
        assert SCRIPT in pair["answer"]
        assert pair["prompt_tokens"] == request.usage["prompt_tokens"]
        assert pair["completion_tokens"] == request.usage["completion_tokens"]
        assert pair["latency_sec"] >= 0 and "cached" not in pair
    assert "judge" not in records[-1]  # equal texts: nothing asked
    for record, (a, b) in zip(lines(cached), PAIRS, strict=False):
        [pair] = record["judge"]["pairs"]
        assert pair == {"a": a, "b": b, "score": pytest.approx(char_jaccard(a, b)), "cached": True}
    from pingce.runfolder.reader import read_run

    rows = read_run(asked).records
    assert rows is not None and rows.judge["pairs"][0] == records[0]["judge"]["pairs"]


def test_a_run_without_the_judge_has_no_judge(tmp_path: Path) -> None:
    pingce.evaluate("function-points", RECORDS, bootstrap=0, out=tmp_path / "out")
    assert all("judge" not in record for record in lines(tmp_path / "out"))


def test_payloads_in_the_judge_s_answer_stay_text_in_the_page(
    judged: tuple[Path, Path, list[Any]],
) -> None:
    text = (judged[0] / "report.html").read_text(encoding="utf-8")
    for payload in (SCRIPT, LINK, IMG, "</script><script>"):
        assert payload not in text
    assert "<img" not in text
    assert embedded(text)["judge"]["pairs"][0][0]["answer"].startswith(SCRIPT)


@pytest.mark.skipif(not browser_available(), reason=MISSING)
def test_a_record_shows_the_judge_s_answer(
    browser: Any, judged: tuple[Path, Path, list[Any]]
) -> None:
    for folder, cached in ((judged[0], False), (judged[1], True)):
        pair = lines(folder)[0]["judge"]["pairs"][0]
        page = Page(browser, folder / "report.html")
        p = page.page
        p.locator("#r-body tr.rec").first.click()
        part = p.locator("#r-body tr.detail section.judge")
        assert part.locator("h4").text_content() == "judge"
        roles = part.locator(".msg .role").all_text_contents()
        texts = part.locator(".msg pre").all_text_contents()
        facts = part.locator(".judge-facts").text_content() or ""
        if cached:
            assert roles == ["x", "y"] and texts == [pair["a"], pair["b"]]
            assert facts == f"score {round(pair['score'], 4):g} · answered from the cache"
        else:
            assert roles == ["x", "y", "judge"]
            assert texts == [pair["a"], pair["b"], pair["answer"]]
            assert facts.startswith(f"score {round(pair['score'], 4):g} · latency ")
            assert f"prompt tokens {pair['prompt_tokens']}" in facts
        assert p.locator("#records img, #records script, #records a, #records iframe").count() == 0
        assert p.evaluate("window.__xss") is None and p.evaluate("document.images.length") == 0
        page.close()


def test_the_judge_s_answer_is_json_data(judged: tuple[Path, Path, list[Any]]) -> None:
    line = (judged[0] / "records.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert json.loads(line)["judge"]["pairs"][0]["a"] == PAIRS[0][0]
