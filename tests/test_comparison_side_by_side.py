"""Both systems' records side by side in comparison.html and the viewer's paired page
(:mod:`pingce.report.side_by_side`): the diff of a text and of a function call argument by
argument, the status of each record on each metric, each record's context fields, the metrics'
direction marks, the filters (in Chromium), untrusted text (in the outputs and in the context)
escaped in the page and harmless in the browser. The screenshot in the documentation is
tests/test_docs_images.py's."""

from __future__ import annotations

import html
import json
import re
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import numpy as np
import pytest

import pingce
from pingce.report import write_comparison
from pingce.report.side_by_side import diff_html, flat_paths, statuses
from pingce.results import RecordRows

from .cli_run import run_pingce
from .test_docs_images import FUNCTION_CALL, function_call_candidate

SUITE = """\
name: answers
id_field: id
context: [question]
labels:
  values: [是, 否]
inputs:
  gold: gold
  pred: pred
metrics:
  accuracy: {}
  text_rouge_l: {pred: answer, gold: reference}
"""

SCRIPT = "<script>window.__xss=1;alert(1)</script>"
IMG = '<img src=x onerror="window.__xss=2;alert(2)">'
LINK = '<a href="javascript:window.__xss=3;alert(3)">open</a>'
JS = "javascript:window.__xss=4"
CLOSE = "</script><script>window.__xss=5</script>\u2028"


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- the pieces ---------------------------------------------------------------------------------


def test_a_text_diff_marks_what_changed_and_escapes_it() -> None:
    left, right = diff_html("调节厨房温度到22度 now", "调节卧室温度到23度 later")
    assert left == "调节<del>厨房</del>温度到<del>22</del>度 <del>now</del>"
    assert right == "调节<ins>卧室</ins>温度到<ins>23</ins>度 <ins>later</ins>"
    left, right = diff_html(SCRIPT, IMG)
    assert "<script" not in left and "<img" not in right
    assert html.unescape(re.sub(r"</?(del|ins)>", "", left)) == SCRIPT
    assert html.unescape(re.sub(r"</?(del|ins)>", "", right)) == IMG


def test_a_structured_value_flattens_path_by_path() -> None:
    call = [{"name": "light_control", "arguments": {"room": "客厅", "level": 3}}]
    assert list(flat_paths(call)) == [
        ("[0].name", "light_control"),
        ("[0].arguments.room", "客厅"),
        ("[0].arguments.level", "3"),
    ]
    assert list(flat_paths([])) == [("", "[]")]
    assert list(flat_paths("x")) == [("", "x")]


def test_statuses_by_the_miss_reasons() -> None:
    lines = np.arange(1, 5)
    candidate = RecordRows(
        ["a", "b", "c", "d"], lines, misses={"m": np.array([None, "x", "x", None], object)}
    )
    baseline = RecordRows(
        ["a", "b", "c", "d"], lines, misses={"m": np.array(["y", None, "y", None], object)}
    )
    codes = statuses(candidate, baseline, np.arange(4), ["m", "unjudged"])
    assert list(codes) == ["m"]
    assert codes["m"].tolist() == ["f", "b", "w", "r"]


# --- the page -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def function_call_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("side-by-side")
    result = pingce.compare("function-call", function_call_candidate(), FUNCTION_CALL)
    write_comparison(result, folder)
    return folder / "comparison.html"


def test_a_flipped_call_shows_both_systems_argument_by_argument(function_call_page: Path) -> None:
    text = function_call_page.read_text(encoding="utf-8")
    pairs = re.findall(r'<article class="pair".*?</article>', text, re.S)
    assert len(pairs) == len(read(FUNCTION_CALL))
    fixed = next(p for p in pairs if "seed-03" in p)
    assert "fixed" in fixed and "fn_acc_all" in fixed
    # the changed argument diffed on each side, the unchanged ones shown plainly
    assert '<code class="path">[0].arguments.temperature</code> <del>23</del>' in fixed
    assert '<code class="path">[0].arguments.temperature</code> <ins>22</ins>' in fixed
    assert re.search(r'<tr class="same">.*?\[0\]\.name</code> temperature_set</td>', fixed)
    broken = next(p for p in pairs if "seed-01" in p)
    assert "<del>客厅</del>" in broken and "<ins>卧室</ins>" in broken
    unchanged = next(p for p in pairs if "seed-02" in p)
    assert "Every field is the same on both sides." in unchanged
    # what each record asked, above its statuses; the metrics with their direction marks
    query = '<th scope="row"><code>query</code></th><td class="side" colspan="2">调节厨房温度到22度'
    assert query in fixed and fixed.index("调节厨房温度到22度") < fixed.index("fn_acc_all")
    mark = '<span class="better" title="higher is better" aria-label="higher is better">↑</span>'
    assert f"<code>fn_acc_all</code>{mark}" in fixed
    assert f'<th scope="row"><code>fn_acc_all</code>{mark}</th>' in text  # the differences
    # a record both systems missed alike gives its reason once
    both = re.findall(r'<li class="st-w">.*?</li>', text)
    assert both and all('<span class="why">both: ' in li for li in both)


@pytest.fixture(scope="module")
def payload_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A comparison whose two systems answer with script, ``javascript:`` and ``onerror``
    payloads, in ids, labels and text."""
    folder = tmp_path_factory.mktemp("payloads")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    base = [
        {"id": f"r{i}", "gold": "是", "pred": "是", "answer": "甲方", "reference": "甲方"}
        for i in range(8)
    ]
    for k, payload in enumerate((SCRIPT, IMG, LINK, CLOSE + JS)):
        base[k]["question"] = payload  # the context, the same on both sides
    candidate = [dict(r) for r in base]
    baseline = [dict(r) for r in base]
    baseline[4]["question"] = SCRIPT  # a context that differs: both shown
    candidate[4]["question"] = {"text": IMG, "link": JS}
    candidate[4]["pred"] = "否"
    candidate[0].update(id=SCRIPT, answer=IMG, pred="否")
    baseline[0].update(id=SCRIPT, answer=SCRIPT + LINK)
    candidate[1].update(id=JS, answer=CLOSE + JS)
    baseline[1].update(id=JS, answer=LINK, pred="否")
    candidate[2].update(answer=f"{{{IMG}: {JS}}}", reference=CLOSE)
    baseline[2].update(answer=LINK, reference=CLOSE)
    result = pingce.compare(suite, candidate, baseline, bootstrap=0)
    write_comparison(result, folder / "out")
    return folder / "out" / "comparison.html"


def test_payloads_in_both_systems_are_escaped_in_the_page(payload_page: Path) -> None:
    text = payload_page.read_text(encoding="utf-8")
    section = text[text.index('<section id="pairs">') : text.index('<section id="signature">')]
    for payload in (SCRIPT, IMG, LINK, CLOSE):
        assert payload not in text
    for tag in ("<script", "<img", "<a "):
        assert tag not in section
    assert not re.search(r"<[^>]*(onerror|javascript:)", section)  # never inside a tag
    plain = html.unescape(re.sub(r"<[^>]+>", "", section))  # the text a reader sees
    for payload in (SCRIPT, IMG, LINK, JS, CLOSE.strip("\u2028")):
        assert payload in plain, payload


def test_payloads_are_text_in_chromium(browser: Any, payload_page: Path) -> None:
    dialogs: list[str] = []
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(payload_page.as_uri())
    assert page.locator("#pairs script, #pairs img, #pairs a, #pairs [onerror]").count() == 0
    assert page.locator("script").count() == 1  # comparison.js
    shown = page.locator("#pairs").inner_text()
    for payload in (SCRIPT, IMG, LINK, JS):
        assert payload in shown, payload
    contexts = page.locator("article.pair table.context")
    assert SCRIPT in contexts.nth(0).inner_text() and IMG in contexts.nth(1).inner_text()
    assert LINK in contexts.nth(2).inner_text() and JS in contexts.nth(3).inner_text()
    differs = contexts.nth(4)
    assert SCRIPT in differs.locator("td.side.b").inner_text()
    assert json.loads(differs.locator("td.side.c").inner_text()) == {"text": IMG, "link": JS}
    page.select_option("#sbs-status", "fb")
    assert page.locator("article.pair:visible").count() == 3  # records r0, r1 and r4 flipped
    assert page.evaluate("window.__xss") is None and dialogs == [] and errors == []
    page.close()


def test_a_filter_hides_the_unchanged_records_in_chromium(
    browser: Any, function_call_page: Path
) -> None:
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(function_call_page.as_uri())
    total = len(read(FUNCTION_CALL))
    assert page.locator("article.pair:visible").count() == total
    assert page.locator("#sbs-info").text_content() == f"{total} of {total} records shown"
    page.select_option("#sbs-status", "fb")
    visible = page.locator("article.pair:visible")
    assert visible.count() == 2
    assert "seed-01" in visible.nth(0).inner_text() and "seed-03" in visible.nth(1).inner_text()
    # both systems' outputs of the fixed record, read off the page
    fixed = visible.nth(1)
    row = fixed.locator("tr.changed")
    assert row.locator("td.side.b").inner_text() == "[0].arguments.temperature 23"
    assert row.locator("td.side.c").inner_text() == "[0].arguments.temperature 22"
    assert row.locator("td.side.b del").inner_text() == "23"
    assert row.locator("td.side.c ins").inner_text() == "22"
    page.select_option("#sbs-status", "f")
    page.select_option("#sbs-metric", label="fn_acc_all ↑")  # the filter by metric
    assert page.locator("article.pair:visible").count() == 1
    flipped = page.locator("article.pair:visible")
    context = flipped.locator("table.context")
    assert context.locator("th").inner_text() == "query"
    assert context.locator("td").inner_text() == "调节厨房温度到22度"
    both = flipped.locator("tr.changed").first  # both systems' outputs, side by side
    assert both.locator("td.side.b").inner_text() == "[0].arguments.temperature 23"
    assert both.locator("td.side.c").inner_text() == "[0].arguments.temperature 22"
    assert flipped.locator("li.st-f .better").first.get_attribute("title") == "higher is better"
    page.select_option("#sbs-metric", label="fn_acc_name ↑")  # nothing fixed on the name
    assert page.locator("article.pair:visible").count() == 0
    assert page.locator("#sbs-none").is_visible()
    assert errors == []
    page.close()


# --- the viewer's paired page -------------------------------------------------------------------


def test_the_viewers_paired_page_puts_both_runs_side_by_side(browser: Any, tmp_path: Path) -> None:
    from pingce.viewer import Viewer, make_server

    candidate = tmp_path / "candidate.jsonl"
    candidate.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in function_call_candidate()),
        encoding="utf-8",
    )
    db = tmp_path / "runs.db"
    for name, path in (("new", candidate), ("old", FUNCTION_CALL)):
        done = run_pingce(
            "run", "function-call", "--data", str(path), "--name", name, "--store", str(db),
            "--bootstrap", "0", "--out", str(tmp_path / name), "--quiet",
            "--records-fields", "all",  # the field diff of stored runs needs their fields
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    response = Viewer(db).respond("/paired?" + urlencode({"a": "new", "b": "old"}))
    assert response.status == 200 and b'<section id="pairs">' in response.body
    mark = '<span class="better" title="higher is better" aria-label="higher is better">↑</span>'
    assert f'<th scope="row"><code>fn_acc_all</code>{mark}</th>' in response.body.decode("utf-8")
    served = make_server(db, port=0)  # served, under the viewer's policy header as well
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    errors: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(served.url.rstrip("/") + "/paired?" + urlencode({"a": "new", "b": "old"}))
        assert page.locator("#sbs-controls").is_visible()  # the script ran
        page.select_option("#sbs-status", "f")
        visible = page.locator("article.pair:visible")
        assert visible.count() == 1 and "seed-03" in visible.inner_text()
        assert visible.locator("td.side.c ins").inner_text() == "22"
        assert "调节厨房温度到22度" in visible.locator("table.context").inner_text()
        page.close()
    finally:
        served.shutdown()
        served.server_close()
        thread.join(5)
    assert errors == []


def test_at_most_pairs_shown_records_the_flipped_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from pingce.report import side_by_side

    monkeypatch.setattr(side_by_side, "PAIRS_SHOWN", 3)
    result = pingce.compare("function-call", function_call_candidate(), FUNCTION_CALL, bootstrap=0)
    write_comparison(result, tmp_path)
    text = (tmp_path / "comparison.html").read_text(encoding="utf-8")
    shown = re.findall(r'<article class="pair".*?id <code>([^<]*)</code>', text)
    assert shown == ["seed-01", "seed-02", "seed-03"]  # both flipped ones, then the first other
    total = len(read(FUNCTION_CALL))
    assert f"3 of the {total:,} records are shown here, those that flipped first" in text
