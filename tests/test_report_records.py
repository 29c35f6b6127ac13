"""report.html's records, read in Debian's chromium (Playwright): a record's detail view (every
field whole, JSON pretty-printed, every metric's value and reason), a tcm-dialogue dialogue as a
transcript, sorting by any column, the latency column, the direction marks beside every metric,
and the page at 800 px; untrusted text in a long field stays text in the page and in the
browser, in the detail view too."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

import pingce
from pingce.report import render_html
from pingce.report.records_json import FIELD_CHARS
from pingce.runfolder.records import jsonl_lines, read_jsonl

from ._browser import MISSING, browser_available
from ._pages import embedded

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
browser_needed = pytest.mark.skipif(not browser_available(), reason=MISSING)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The contract-risk (sliced by contract type) and tcm-dialogue examples, each run into a
    folder of its own."""
    folder = tmp_path_factory.mktemp("records")
    out = {}
    for suite, slices in (("contract-risk", ["contract_type"]), ("tcm-dialogue", [])):
        data = EXAMPLES / suite.replace("-", "_") / "records.jsonl"
        pingce.evaluate(  # records.jsonl with the input fields: what the page is checked against
            suite, data, bootstrap=200, slices=slices, out=folder / suite, records_fields="all"
        )
        out[suite] = folder / suite
    return out


def lines(folder: Path) -> list[dict[str, Any]]:
    text = (folder / "records.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


class Page:
    """A report.html opened in chromium, its errors, dialogs and requests kept."""

    def __init__(self, browser: Any, path: Path, width: int = 1280) -> None:
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("html[data-ready]", timeout=15_000)

    def ids(self) -> list[str]:
        texts: list[str] = self.page.eval_on_selector_all(
            "#r-body tr.rec", "rows => rows.map(r => r.children[1].textContent)"
        )
        return texts

    def close(self) -> None:
        assert self.errors == [] and self.dialogs == []
        assert all(url.startswith("file:") for url in self.requests), self.requests
        self.page.close()


@pytest.fixture
def opened(browser: Any, runs: dict[str, Path]) -> Iterator[dict[str, Page]]:
    pages: dict[str, Page] = {}

    def open_page(suite: str, width: int = 1280) -> Page:
        pages[suite] = Page(browser, runs[suite] / "report.html", width)
        return pages[suite]

    yield open_page  # type: ignore[misc]
    for page in pages.values():
        page.close()


# --- the page as written ------------------------------------------------------------------------


def test_every_metric_is_marked_with_its_direction(runs: dict[str, Path]) -> None:
    folder = runs["contract-risk"]
    text = (folder / "report.html").read_text(encoding="utf-8")
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert {m["higher_is_better"] for m in results["metrics"].values()} == {True, False}
    metrics = text[text.index('<table class="metrics">') : text.index("</table>")]
    for name, m in results["metrics"].items():
        word = "higher" if m["higher_is_better"] else "lower"
        mark = f'<span class="better" title="{word} is better" aria-label="{word} is better">'
        assert re.search(rf"<code[^>]*>{name}</code>{re.escape(mark)}[↑↓]</span>", metrics), name
    assert '<code>avg_latency_sec</code><span class="better" title="lower' in text  # slices too
    data = embedded(text)
    by_name = dict(zip(data["metrics"], data["higher"], strict=True))
    assert by_name == {k: results["metrics"][k]["higher_is_better"] for k in by_name}
    assert data["measures"] == {"latency": "latency_sec"}
    contract = lines(folder)[0]["fields"]["contract"]
    assert len(contract) > FIELD_CHARS and data["fields"]["contract"][0] == contract  # whole


# --- in the browser -----------------------------------------------------------------------------


@browser_needed
def test_a_record_opens_whole(opened: Any, runs: dict[str, Path]) -> None:
    page = opened("contract-risk")
    p = page.page
    record = lines(runs["contract-risk"])[1]
    row = p.locator("#r-body tr.rec").nth(1)
    cut = row.locator("td.fields .kv", has_text="contract 第一条").locator(".v").text_content()
    assert cut is not None
    assert len(cut) == FIELD_CHARS and cut.endswith("…")  # the table cuts it
    row.click()
    detail = p.locator("#r-body tr.detail")
    assert detail.count() == 1 and row.get_attribute("aria-expanded") == "true"
    fields = detail.locator("section.part", has=p.locator("h4", has_text="fields"))
    values = dict(
        zip(
            fields.locator("dt").all_text_contents(),
            fields.locator("dd").all_text_contents(),
            strict=True,
        )
    )
    contract = record["fields"]["contract"]
    assert len(contract) > FIELD_CHARS and values["contract"] == contract  # whole, Chinese intact
    assert values["evidence"] == json.dumps(
        record["fields"]["evidence"], indent=2, ensure_ascii=False
    )
    assert values["gold_level"] == record["fields"]["gold_level"]
    table = detail.locator("table.rvalues tr")
    rows = {
        (r.locator("th").text_content() or "").split(" ")[0]: r.locator("td").all_text_contents()
        for r in table.all()
    }
    assert set(rows) == set(record["values"])
    for name, (value, why) in rows.items():
        expected = record["values"][name]
        assert value == ("null" if expected is None else f"{round(expected, 4):g}")
        assert why == record.get("misses", {}).get(name, "")
    assert "avg_latency_sec ↓" in (detail.locator("table.rvalues").text_content() or "")
    detail.locator("button.close").click()
    assert p.locator("#r-body tr.detail").count() == 0
    assert row.get_attribute("aria-expanded") == "false"


def test_the_statistic_rows_are_embedded_compactly(runs: dict[str, Path]) -> None:
    folder = runs["contract-risk"]
    data = embedded((folder / "report.html").read_text(encoding="utf-8"))
    with np.load(folder / "stats.npz") as saved:
        arrays = {name: saved[name] for name in saved.files}
    manifest = json.loads(str(arrays["manifest"]))
    stats = data["stats"]
    assert len(stats) == len(manifest["statistics"])
    for entry, (name, info) in zip(stats, manifest["statistics"].items(), strict=True):
        fed = [m for m, s in manifest["metrics"].items() if s == name]
        assert entry["metrics"] == fed and entry["width"] == info["width"]
        if f"{name}.codes" in arrays:
            assert entry["codes"] == arrays[f"{name}.codes"].tolist()
            continue
        rows = arrays[f"{name}.rows"].reshape(data["n"], -1)
        for c, column in zip(entry["shown"], entry["data"], strict=True):
            assert np.allclose(column, np.round(rows[:, c], 4), equal_nan=True)
            assert len(set(column)) > 1  # a column that varies
        for c, value in entry["same"].items():  # written once: the same for every record
            assert (rows[:, int(c)] == value).all()
    confusion = next(e for e in stats if "accuracy" in e["metrics"])
    assert "confusion_matrix" in confusion["metrics"]  # the tables it feeds too
    assert confusion["columns"][:2] == ["gold 高 · pred 高", "gold 高 · pred 中"]
    assert confusion["columns"][3] == "gold 高 · pred invalid"
    latency = next(e for e in stats if e["metrics"] == ["avg_latency_sec"])
    assert latency["columns"] == ["latency_sec", "has latency"] and latency["same"] == {"1": 1}


def test_a_wide_statistic_keeps_each_record_s_non_zero_columns() -> None:
    from pingce.report.records_json import STAT_COLUMNS, stat_rows
    from pingce.results import RecordRows
    from pingce.runfolder.stats import SavedStats

    n, width = 4, 3 * STAT_COLUMNS
    rows = np.zeros((n, width))
    rows[0, [1, 50]] = [2.0, 0.123456]
    rows[1, : STAT_COLUMNS + 5] = 1.0  # more than the page keeps
    rows[:, width - 1] = 7.0  # the same for every record
    saved = SavedStats(
        {
            "n": n,
            "statistics": {"s0": {"width": width}, "s1": {"width": 2}},
            "metrics": {"m": "s0", "b": "s1"},
        },
        {
            "lines": np.arange(1, n + 1),
            "s0.rows": rows,
            "s1.row": np.array([1.0, 0.0]),  # a broadcast block: its row once
            "s1.scope": np.array([True, False, True, True]),
        },
    )
    records = RecordRows(ids=list("abcd"), lines=np.arange(1, n + 1))
    data = json.loads(b'{"x":0' + b"".join(stat_rows(saved, records)) + b"}")
    wide, broadcast = data["stats"]
    assert wide["metrics"] == ["m"] and wide["columns"] is None
    assert wide["same"] == {str(width - 1): 7} and wide["cut"] is True
    assert wide["nonzero"][0] == [1, 2, 50, 0.1235]
    assert len(wide["nonzero"][1]) == 2 * STAT_COLUMNS and wide["nonzero"][2] == []
    assert broadcast == {"metrics": ["b"], "width": 2, "columns": None, "outside": [1],
                         "same": {"0": 1, "1": 0}}  # fmt: skip
    other = RecordRows(ids=list("abcd"), lines=np.array([1, 2, 4, 3]))  # not these records
    assert list(stat_rows(saved, other)) == []


@browser_needed
def test_a_record_shows_the_statistic_rows_that_fed_its_values(
    opened: Any, runs: dict[str, Path]
) -> None:
    record = lines(runs["contract-risk"])[2]
    p = opened("contract-risk").page
    p.locator("#r-body tr.rec").nth(2).click()
    section = p.locator("#r-body tr.detail section.stats")
    assert "statistic rows" in (section.locator("h4").text_content() or "")
    blocks = section.locator(".stat")
    confusion = blocks.filter(has_text="feeds accuracy")
    gold, pred = record["fields"]["gold_level"], record["fields"]["pred_level"]
    pred = pred if pred in ("高", "中", "低") else "invalid"
    cell = confusion.locator(".cell").text_content() or ""
    assert cell.startswith(f"cell gold {gold} · pred {pred} · 1 (the other 11 cells 0)")
    latency = blocks.filter(has_text="feeds avg_latency_sec")
    heads = latency.locator(".statrow .h").all_text_contents()
    values = latency.locator(".statrow .v").all_text_contents()
    assert heads == ["latency_sec", "has latency"]
    assert values == [f"{round(record['fields']['latency_sec'], 4):g}", "1"]
    assert latency.locator(".col.same").count() == 1  # has latency: the same for every record


@browser_needed
def test_the_keyboard_opens_and_closes_a_record(opened: Any) -> None:
    p = opened("contract-risk").page
    row = p.locator("#r-body tr.rec").first
    assert row.get_attribute("tabindex") == "0"
    p.focus("#p-size")
    p.keyboard.press("Tab")  # the first column head's button, then on through the heads
    for _ in range(12):  # past the heads' buttons, to the first record
        if p.evaluate("document.activeElement.matches('#r-body tr.rec')"):
            break
        p.keyboard.press("Tab")
    assert p.evaluate("document.activeElement.dataset.index") == "0"
    p.keyboard.press("Enter")
    assert p.locator("#r-body tr.detail").count() == 1
    p.keyboard.press("Escape")
    assert p.locator("#r-body tr.detail").count() == 0
    p.keyboard.press(" ")
    assert p.locator("#r-body tr.detail").count() == 1


@browser_needed
def test_a_dialogue_shows_as_a_transcript(opened: Any, runs: dict[str, Path]) -> None:
    records = lines(runs["tcm-dialogue"])
    page = opened("tcm-dialogue")
    p = page.page
    row = p.locator("#r-body tr.rec").nth(1)  # line 2: dialogue d1, turn 2
    row.click()
    dialogue = p.locator("#r-body tr.detail section.dialogue")
    d1 = [r for r in records if r["fields"]["dialogue_id"] == "d1"]
    assert len(d1) > 2
    assert f"dialogue_id d1: {len(d1)} records, turn by turn" in (dialogue.text_content() or "")
    turns = dialogue.locator(".turn")
    assert turns.count() == len(d1)
    order = sorted(d1, key=lambda r: r["fields"]["turn"])
    for k, record in enumerate(order):
        turn = turns.nth(k)
        head = turn.locator(".thead").text_content() or ""
        assert head.startswith(f"turn {record['fields']['turn']} · line {record['line']}")
        said = turn.locator(".said").text_content() or ""
        assert record["fields"]["pred_text"] in said and record["fields"]["gt_text"] in said
        shown = turn.locator("table.tvalues tr").count()
        assert shown == len(record["values"])  # each turn's values beside it
        for name, why in record.get("misses", {}).items():
            assert why in (turn.locator("table.tvalues").text_content() or ""), name
    assert (
        dialogue.locator(".turn.current .thead").text_content()
        == "turn 2 · line 2 · id d1 · 2 (this record)"
    )


@browser_needed
def test_sorting_by_a_metric_a_measure_and_a_field(opened: Any, runs: dict[str, Path]) -> None:
    records = lines(runs["contract-risk"])
    ids = [r["id"] for r in records]
    page = opened("contract-risk")
    p = page.page
    p.select_option("#p-size", "100")

    def order(key: Any, descending: bool = False) -> list[str]:
        sign = -1 if descending else 1
        known = [i for i in range(len(records)) if key(records[i]) is not None]
        nulls = [i for i in range(len(records)) if key(records[i]) is None]
        return [ids[i] for i in sorted(known, key=lambda i: sign * key(records[i])) + nulls]

    # a metric: from the sort list, both ways; ties (0s and 1s) keep the records' order
    accuracy = lambda r: r["values"]["accuracy"]  # noqa: E731
    p.select_option("#s-by", "v:accuracy")
    assert page.ids() == order(accuracy)
    p.click("#s-dir")
    assert page.ids() == order(accuracy, descending=True)
    assert p.get_attribute("th[data-col=values]", "aria-sort") == "descending"
    # the values column's head sorts by the metric the filter shows, nulls last
    p.select_option("#f-metric", "rule_precision")
    p.click("th[data-col=values] button")
    precision = lambda r: r["values"]["rule_precision"]  # noqa: E731
    assert page.ids() == order(precision)
    first = p.locator("#r-body tr.rec").first.locator("td.values .kv").first
    assert (first.text_content() or "").startswith("rule_precision")
    p.select_option("#f-metric", "")
    # the latency column: its head, once ascending, twice descending
    p.click("th[data-col='m:latency'] button")
    latency = lambda r: r["fields"]["latency_sec"]  # noqa: E731
    assert page.ids() == order(latency)
    p.click("th[data-col='m:latency'] button")
    assert page.ids() == order(latency, descending=True)
    assert p.get_attribute("th[data-col='m:latency']", "aria-sort") == "descending"
    cells = p.locator("#r-body tr.rec td:nth-child(3)").all_text_contents()
    assert cells[0] == f"{max(latency(r) for r in records):g}"
    # an id (as text, digits as numbers), then the records' own order again
    p.click("th[data-col=id] button")
    assert page.ids() == sorted(ids, key=lambda t: (re.sub(r"\d+", "", t), int(t[3:])))
    p.select_option("#s-by", "")
    assert page.ids() == ids


@browser_needed
def test_the_page_at_800_px(opened: Any, tmp_path: Path) -> None:
    p = opened("tcm-dialogue", width=800).page
    assert p.evaluate("document.documentElement.scrollWidth") <= 800  # nothing cut off
    table = p.locator("table.metrics")
    box = table.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 800
    for cell in p.locator("table.metrics svg.forest").all():
        b = cell.bounding_box()
        assert b is not None and b["x"] + b["width"] <= 800
    note = p.locator("table.metrics td.note", has_text="resamples undefined").first
    b = note.bounding_box()
    assert b is not None and b["width"] > 400  # the note has a line of its own
    p.screenshot(path=str(tmp_path / "report-800.png"), full_page=True)
    assert (tmp_path / "report-800.png").stat().st_size > 20_000


# --- untrusted text -----------------------------------------------------------------------------

SUITE = """\
name: xss-lite
id_field: id
metrics:
  text_rouge_l: {pred: answer, gold: reference}
"""
SCRIPT = "<script>window.__xss=1;alert(1)</script>"
LINK = '<a href="javascript:window.__xss=2">click</a>'
IMG = '<img src=x onerror="window.__xss=3;alert(3)">'
LONG = "甲方" * 40 + SCRIPT + LINK + IMG + "\u2028</script><script>window.__xss=4</script>"


def test_payloads_in_a_long_field_stay_text_in_the_page(tmp_path: Path) -> None:
    path = xss_page(tmp_path)
    text = path.read_text(encoding="utf-8")
    body = text[: text.index('<script type="application/json"')]
    data = text[text.index('id="pingce-data">') : text.rindex("<script>")]
    for payload in (SCRIPT, LINK, IMG, "</script><script>"):
        assert payload not in data and payload not in body
    assert "<img" not in text and "javascript:" not in body
    assert html.escape(SCRIPT) not in body  # the records are the script's to draw
    assert embedded(text)["fields"]["answer"][0] == LONG  # whole, not cut


def xss_page(folder: Path) -> Path:
    """A page whose first record's long answer, messages, model answer and context field
    hold script payloads."""
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    records = [
        {"id": SCRIPT, "answer": LONG, "reference": "甲方应当支付"},
        {"id": "r2", "answer": "甲方应当支付货款", "reference": "甲方应当支付"},
    ]
    result = pingce.evaluate(suite, records, bootstrap=0)
    rows = result.records
    assert rows is not None
    completion = {
        "model": IMG,
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": SCRIPT,
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": LINK, "arguments": json.dumps({"x": IMG})},
                        }
                    ],
                }
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    rows.fields["messages"] = [
        [{"role": "system", "content": IMG}, {"role": "user", "content": LONG}],
        None,
    ]
    rows.fields["raw"] = [completion, None]
    rows.context["query"] = [LINK + IMG, "普通的问题"]
    text = render_html(result, rows)
    path = folder / "report.html"
    path.write_text(text, encoding="utf-8")
    return path


@browser_needed
def test_payloads_stay_text_in_the_detail_view(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, xss_page(tmp_path))
    p = page.page
    assert p.locator("th[data-col='m:tokens']").count() == 1
    row = p.locator("#r-body tr.rec").first
    assert row.locator("td").nth(1).text_content() == SCRIPT
    heads = p.locator("table.records thead th").evaluate_all("ths => ths.map(t => t.dataset.col)")
    tokens = heads.index("m:tokens")
    assert row.locator("td").nth(tokens).text_content() == "15"  # tokens from the usage
    assert LINK + IMG in (row.locator("td.context").text_content() or "")  # the context, as text
    row.click()
    detail = p.locator("#r-body tr.detail")
    text = detail.text_content() or ""
    assert LONG.replace("\u2028", "") in text.replace("\u2028", "")  # whole
    transcript = detail.locator(".transcript").first
    assert transcript.locator(".msg").count() == 2
    assert transcript.locator(".msg .role").all_text_contents() == ["system", "user"]
    assert (transcript.locator(".msg pre").first.text_content() or "") == IMG
    answer = detail.locator(".answer")
    assert (answer.locator(".msg pre.text").text_content() or "") == SCRIPT
    assert (answer.locator(".call code.fn").text_content() or "") == LINK
    arguments = json.dumps({"x": IMG}, separators=(",", ":"))  # parsed, shown as JSON
    assert answer.locator(".call pre").text_content() == arguments
    assert "prompt tokens 12 · completion tokens 3 · total tokens 15" in text
    context = detail.locator("section.part", has=p.locator("h4", has_text="context"))
    assert context.locator("dd").text_content() == LINK + IMG
    assert p.locator("#records img, #records script, #records a, #records iframe").count() == 0
    assert p.evaluate("window.__xss") is None
    assert p.evaluate("document.images.length") == 0
    page.close()


def test_the_tokens_come_from_a_field_or_the_model_s_answers() -> None:
    from pingce.report.records_json import record_measures
    from pingce.results import RecordRows

    rows = RecordRows(
        ids=["a", "b"],
        lines=np.array([1, 2]),
        fields={
            "answer": [{"choices": [], "usage": {"total_tokens": 7}}, {"choices": []}],
            "latency_ms": np.array([3.0, 4.0]),
            "latency_note": ["slow", "fast"],  # not a number: no column
            "cost": [0.1, None],
        },
    )
    measures = record_measures(rows)
    assert measures["latency"] == "latency_ms" and measures["cost"] == "cost"
    tokens = measures["tokens"]
    assert isinstance(tokens, np.ndarray) and tokens[0] == 7 and np.isnan(tokens[1])
    rows.fields["n_tokens"] = [5, 6]
    assert record_measures(rows)["tokens"] == "n_tokens"


# --- the model call (--model) -------------------------------------------------------------------

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
MODEL_RECORDS: list[dict[str, Any]] = [
    {
        "id": "w1",
        "query": "北京今天天气怎么样？",
        "tools": [WEATHER],
        "gold_fn": [{"name": "get_weather", "arguments": {"city": "北京"}}],
    },
    {"id": "x1", "query": "讲个笑话 " + IMG, "tools": [WEATHER], "gold_fn": []},
]


def model_answer(request: Any) -> dict[str, Any]:
    """The loopback model: a tool call for the weather, else an answer full of payloads."""
    if "天气" in (request.prompt or ""):
        call = {"name": "get_weather", "arguments": json.dumps({"city": "北京"})}
        return {"tool_calls": [{"id": "c0", "type": "function", "function": call}]}
    call = {"name": LINK, "arguments": json.dumps({"x": IMG})}
    return {
        "content": SCRIPT + LINK,
        "tool_calls": [{"id": "c1", "type": "function", "function": call}],
    }


@pytest.fixture(scope="module")
def model_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Any]]]:
    """`pingce run function-call --model` against the loopback OpenAI-compatible server: the
    run's folder and the chat requests the server answered."""
    from tests import cli_run
    from tests.cli_run import run_pingce
    from tests.loopback import LoopbackServer

    folder = tmp_path_factory.mktemp("model")
    data = folder / "cases.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in MODEL_RECORDS))
    with pytest.MonkeyPatch.context() as patch, LoopbackServer(latency=0.05) as server:
        for key in list(cli_run.ENV):
            if key.upper().endswith("_PROXY") or key.upper().startswith("OPENAI_"):
                patch.delitem(cli_run.ENV, key)
        patch.setitem(cli_run.ENV, "NO_PROXY", "127.0.0.1,localhost")
        server.answer = model_answer
        done = run_pingce(
            "run", "function-call", "--data", str(data), "--out", str(folder / "out"),
            "--model", "openai:tiny-model", "--base-url", server.url, "--no-store",
            "--cache", str(folder / "cache.sqlite3"), "--bootstrap", "0",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert server.errors == []
        yield folder / "out", server.chat()


def test_a_model_run_keeps_each_call_in_records_jsonl(model_run: tuple[Path, list[Any]]) -> None:
    out, requests = model_run
    sent = {r.json["messages"][0]["content"]: r for r in requests}
    records = lines(out)
    for k, (record, given) in enumerate(zip(records, MODEL_RECORDS, strict=True)):
        call = record["model"]
        request = sent[given["query"]]
        assert (
            call["messages"]
            == request.json["messages"]
            == [{"role": "user", "content": given["query"]}]
        )
        assert call["tools"] == ["get_weather"]
        assert call["answer"]["object"] == "chat.completion"
        assert call["answer"]["usage"] == request.usage
        assert call["prompt_tokens"] == request.usage["prompt_tokens"]
        assert call["completion_tokens"] == request.usage["completion_tokens"]
        assert call["latency_sec"] >= 0.05 and call["cached"] is False
        assert "cost" not in call and "error" not in call  # no price set: no cost
        assert call["predictions_line"] == k + 1
    predictions = [
        json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()
    ]
    filled = {"pred_fn", "latency_sec"}  # the suite's prediction and latency fields: unchanged
    assert [set(p) for p in predictions] == [{*r, *filled} for r in MODEL_RECORDS]
    assert predictions[1]["pred_fn"] == records[1]["model"]["answer"]  # what the link points at
    from pingce.runfolder.reader import read_run

    rows = read_run(out).records
    assert rows is not None and rows.model["messages"][0] == records[0]["model"]["messages"]


def test_payloads_in_the_model_s_answer_stay_text_in_the_page(
    model_run: tuple[Path, list[Any]],
) -> None:
    text = (model_run[0] / "report.html").read_text(encoding="utf-8")
    for payload in (SCRIPT, LINK, IMG, "</script><script>"):
        assert payload not in text
    assert "<img" not in text
    assert embedded(text)["model"]["answer"][1]["choices"][0]["message"]["content"] == SCRIPT + LINK


@browser_needed
def test_a_record_shows_its_model_call(browser: Any, model_run: tuple[Path, list[Any]]) -> None:
    out = model_run[0]
    records = lines(out)
    page = Page(browser, out / "report.html")
    p = page.page
    heads = p.locator("table.records thead th").evaluate_all("ths => ths.map(t => t.dataset.col)")
    assert "m:cost" not in heads  # no price: no cost column
    first = p.locator("#r-body tr.rec").first.locator("td")
    call = records[0]["model"]
    assert first.nth(heads.index("m:tokens")).text_content() == str(
        call["prompt_tokens"] + call["completion_tokens"]
    )
    assert (
        first.nth(heads.index("m:latency")).text_content() == f"{round(call['latency_sec'], 4):g}"
    )
    for k in (0, 1):
        p.locator("#r-body tr.rec").nth(k).click()
    details = p.locator("#r-body tr.detail")
    weather, joke = (details.nth(k).locator("section.model") for k in (0, 1))
    assert "model call" in (weather.locator("h4").text_content() or "")
    sent = weather.locator(".transcript").first
    assert sent.locator(".msg .role").all_text_contents() == ["user"]
    assert sent.locator(".msg pre").text_content() == "北京今天天气怎么样？"
    answer = weather.locator(".answer")
    assert answer.locator(".call code.fn").text_content() == "get_weather"
    assert answer.locator(".call pre").text_content() == '{"city":"北京"}'
    call = records[0]["model"]
    facts = weather.locator(".call-facts").text_content() or ""
    assert facts == (
        f"latency {round(call['latency_sec'], 4):g} s · prompt tokens {call['prompt_tokens']} · "
        f"completion tokens {call['completion_tokens']} · cost unknown · predictions.jsonl line 1"
    )
    assert "tools sent: get_weather" in (weather.text_content() or "")
    # the payloads: text in the messages sent, in the answer's content and its call
    assert joke.locator(".transcript .msg pre").first.text_content() == "讲个笑话 " + IMG
    reply = joke.locator(".answer")
    assert reply.locator(".msg pre.text").text_content() == SCRIPT + LINK
    assert reply.locator(".call code.fn").text_content() == LINK
    assert reply.locator(".call pre").text_content() == json.dumps(
        {"x": IMG}, separators=(",", ":")
    )
    assert p.locator("#records img, #records script, #records a, #records iframe").count() == 0
    assert p.evaluate("window.__xss") is None and p.evaluate("document.images.length") == 0
    page.close()


def test_a_cached_answer_says_so_and_a_price_gives_a_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pingce.suites import __file__ as suites_init
    from tests.loopback import LoopbackServer, keep_local

    keep_local(monkeypatch, tmp_path / "default-cache")
    text = (Path(suites_init).parent / "function-call.yaml").read_text(encoding="utf-8")
    suite = tmp_path / "priced.yaml"  # 2 per 1,000 prompt tokens, 10 per 1,000 completion
    suite.write_text(
        text.replace(
            "  prompt: query", "  price_prompt: 2\n  price_completion: 10\n  prompt: query"
        ),
        encoding="utf-8",
    )
    with LoopbackServer() as server:
        server.answer = model_answer
        runs = [
            pingce.evaluate(
                str(suite),
                MODEL_RECORDS,
                model="openai:tiny-model",
                base_url=server.url,
                cache=str(tmp_path / "c.sqlite3"),
                bootstrap=0,
            )
            for _ in range(2)
        ]
        assert server.count() == 2  # the second run asked nothing
    first, again = (run.records.model for run in runs if run.records is not None)
    assert first["cached"] == [False, False] and again["cached"] == [True, True]
    assert again["latency_sec"] == first["latency_sec"]  # measured when first asked
    for k in (0, 1):
        pt, ct = first["prompt_tokens"][k], first["completion_tokens"][k]
        assert first["cost"][k] == pytest.approx(pt / 1000 * 2 + ct / 1000 * 10)
    from pingce.report.records_json import record_measures

    assert runs[0].records is not None
    measures = record_measures(runs[0].records)  # the records table's columns
    assert np.allclose(measures["cost"], first["cost"])
    assert np.allclose(measures["latency"], first["latency_sec"])


@pytest.mark.parametrize("suite", ["contract-risk", "function-call", "function-points", "tool-use"])
def test_every_statistic_of_these_suites_names_its_columns(suite: str) -> None:
    data = EXAMPLES / suite.replace("-", "_") / "records.jsonl"
    result = pingce.evaluate(suite, data, bootstrap=0)
    saved = result.outputs.stats if result.outputs is not None else None
    assert saved is not None
    statistics = saved.manifest["statistics"]
    assert set(saved.columns) == set(statistics)
    for name, names in saved.columns.items():
        assert len(names) == statistics[name]["width"] and len(set(names)) == len(names)


def test_a_failed_call_keeps_its_messages_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.loopback import Fault, LoopbackServer, keep_local

    keep_local(monkeypatch, tmp_path / "default-cache")
    with LoopbackServer() as server:
        server.answer = model_answer
        server.rule = lambda r: Fault("400") if "笑话" in (r.prompt or "") else None
        result = pingce.evaluate(
            "function-call", MODEL_RECORDS, model="openai:tiny-model", base_url=server.url,
            cache=str(tmp_path / "c.sqlite3"), bootstrap=0,
        )  # fmt: skip
    rows = result.records
    assert rows is not None
    lines = [json.loads(line) for line in b"".join(jsonl_lines(rows)).splitlines()]
    failed = lines[1]["model"]
    assert failed["messages"] == [{"role": "user", "content": MODEL_RECORDS[1]["query"]}]
    assert failed["error"] == "http 400" and "answer" not in failed and "cost" not in failed
    assert "prompt_tokens" not in failed and failed["cached"] is False
    assert lines[0]["model"]["answer"]["choices"][0]["finish_reason"] == "tool_calls"
    # records.jsonl's text is iter_rows' line by line, and reads back to the same calls
    assert b"".join(jsonl_lines(rows, fields=True)) == b"".join(
        orjson.dumps(r) + b"\n" for r in rows.iter_rows()
    )
    again = read_jsonl(b"".join(jsonl_lines(rows)).splitlines(), "records.jsonl")
    assert again.model["error"] == [None, "http 400"]
    assert again.model["messages"] == rows.model["messages"]
