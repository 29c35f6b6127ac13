"""report.html: the page as written (escaping, the embedded JSON, all-or-nothing with the other
outputs) and as a browser shows it (Debian's chromium driven by Playwright: the DOM after the
page's script ran, the filters, paging, an XSS payload, Chinese text, a screenshot)."""

from __future__ import annotations

import base64
import html
import json
import re
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.report import render_html, write_outputs
from pingce.report.charts import PLOT_WIDTH
from pingce.report.page import direction, script_hash
from pingce.report.records_json import script_json
from pingce.results import EvaluationResult

from ._browser import MISSING, browser_available
from .cli_run import run_pingce

SUITE = """\
name: risk-lite
id_field: id
labels:
  values: [高, 中, 低]
inputs:
  gold: gold_level
  pred: pred_level
  latency: latency_sec
metrics:
  accuracy: {}
  macro_f1: {}
  qwk: {}
  avg_latency_sec: {}
  text_rouge_l: {pred: answer, gold: reference}
tables:
  confusion_matrix: {}
  per_class: {}
"""

SCRIPT_ID = "<script>window.__xss=1;alert(1)</script>"
IMG_ANSWER = '<img src=x onerror="window.__xss=2;alert(2)">'
CLOSE_ANSWER = "</script><script>window.__xss=3</script>\u2028"
TYPES = ["买卖合同", "劳动合同", "技术服务合同", "<b>租赁</b>合同"]
LEVELS = ["高", "中", "低"]
N = 157


def make_records() -> list[dict[str, Any]]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(N):
        gold = LEVELS[int(rng.integers(0, 3))]
        pred = gold if rng.random() < 0.7 else LEVELS[int(rng.integers(0, 3))]
        out.append(
            {
                "id": f"r{i:03d}",
                "gold_level": gold,
                "pred_level": pred,
                "latency_sec": round(float(rng.lognormal(1.0, 0.3)), 3),
                "answer": "甲方应当在三十日内支付货款",
                "reference": "甲方应当在三十日内支付全部货款",
                "contract_type": TYPES[i % len(TYPES)],
            }
        )
    out[0].update(id=SCRIPT_ID, answer=IMG_ANSWER, gold_level="高", pred_level="低")
    out[1].update(id="唯一的编号-一", answer=CLOSE_ANSWER)
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvaluationResult, Path]:
    folder = tmp_path_factory.mktemp("html")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    result = pingce.evaluate(
        suite, make_records(), slices=["contract_type"], bootstrap=200, out=folder / "out"
    )
    return result, folder / "out" / "report.html"


# --- the page as written ------------------------------------------------------------------------


def embedded(text: str) -> dict[str, Any]:
    opening = r"<script type=\"application/json\" id=\"pingce-data\">"
    found = re.search(opening + r"(.*?)</script>", text, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_written_beside_results_json(run: tuple[EvaluationResult, Path]) -> None:
    result, path = run
    assert path.is_file()
    assert (path.parent / "results.json").is_file()
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert text == render_html(result)


def test_self_contained_and_no_network(run: tuple[EvaluationResult, Path]) -> None:
    text = run[1].read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "@font-face" not in text and "@import" not in text
    assert "default-src 'none'" in html.unescape(text)
    assert "WenQuanYi Micro Hei" in text


def test_untrusted_text_is_escaped(run: tuple[EvaluationResult, Path]) -> None:
    text = run[1].read_text(encoding="utf-8")
    # two script elements: the data and the page's own script; nothing from the records
    assert len(re.findall(r"<script", text)) == 2
    assert "window.__xss" in text  # present, but only as escaped text
    assert "<img" not in text and "<b>租赁" not in text
    assert "&lt;b&gt;租赁&lt;/b&gt;合同" in text  # the slice value, escaped on the server
    assert "\u2028" not in text.split('id="pingce-data">', 1)[1].split("</script>", 1)[0]


def test_embedded_json_holds_the_records(run: tuple[EvaluationResult, Path]) -> None:
    result, path = run
    data = embedded(path.read_text(encoding="utf-8"))
    rows = result.records
    assert rows is not None
    assert data["n"] == rows.n == N
    assert data["ids"][0] == SCRIPT_ID
    assert data["fields"]["answer"][0] == IMG_ANSWER
    assert data["fields"]["answer"][1] == CLOSE_ANSWER
    assert data["lines"] == rows.lines.tolist()
    accuracy = np.asarray(data["values"]["accuracy"], dtype=float)
    assert np.array_equal(accuracy, rows.values["accuracy"])
    missed, codes = data["misses"]["accuracy"]
    expected = [i for i, r in enumerate(rows.misses["accuracy"]) if r is not None]
    assert missed == expected
    assert [data["reasons"][c] for c in codes] == [rows.misses["accuracy"][i] for i in missed]
    counts = Counter(r for column in rows.misses.values() for r in column if r is not None)
    offered = [counts[data["reasons"][k]] for k in data["frequent"]]
    assert offered == sorted(counts.values(), reverse=True)[: len(offered)]
    assert set(data["reasons"]) == set(counts)
    (slice_codes,) = data["slices"]
    labels = [key.split("=", 1)[1] for key in result.slices]
    assert [labels[c] for c in slice_codes] == [r["contract_type"] for r in make_records()]


def test_script_json_cannot_close_the_block() -> None:
    raw = json.dumps(["</script><!--", "a & b", "\u2028\u2029"], ensure_ascii=False).encode()
    safe = script_json(raw)
    assert "<" not in safe and ">" not in safe and "&" not in safe
    assert "\u2028" not in safe and "\u2029" not in safe
    assert json.loads(safe) == json.loads(raw)


def test_result_read_from_json_has_no_records_but_a_page(
    run: tuple[EvaluationResult, Path],
) -> None:
    result = EvaluationResult.model_validate_json(run[0].to_json())
    text = render_html(result)
    assert "holds no per-record rows" in text
    assert "pingce-data" not in text
    assert "<svg" in text


def test_outputs_all_or_nothing_include_the_page(
    run: tuple[EvaluationResult, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pingce.report import files

    def broken(*_: Any, **__: Any) -> str:
        raise RuntimeError("no page")

    monkeypatch.setattr(files, "write_html", broken)
    with pytest.raises(RuntimeError):
        write_outputs(run[0], tmp_path / "o")
    assert not (tmp_path / "o").exists()  # nothing: not even the folder made for it
    (tmp_path / "kept").mkdir()
    with pytest.raises(RuntimeError):
        write_outputs(run[0], tmp_path / "kept")
    assert [p.name for p in (tmp_path / "kept").iterdir()] == []


LATENCY_SUITE = """\
name: latency
id_field: id
labels:
  values: [a, b]
inputs:
  gold: g
  pred: p
  latency: t
metrics:
  accuracy: {}
  avg_latency_sec: {}
"""


def _latency_files(tmp_path: Path, *rows: str) -> tuple[Path, Path]:
    suite = tmp_path / "latency.yaml"
    suite.write_text(LATENCY_SUITE, encoding="utf-8")
    data = tmp_path / f"data-{len(list(tmp_path.iterdir()))}.jsonl"
    lines = [
        f'{{"id": "{i}", "g": "a", "p": "{"ab"[i % 2]}", "t": {t}}}' for i, t in enumerate(rows)
    ]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return suite, data


def _svg_numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r'\b(?:x1|x2|cx)="([^"]*)"', text)]


def test_a_latency_near_the_largest_float_gives_a_page_with_a_sensible_axis(
    tmp_path: Path,
) -> None:
    """Issue 28: a latency of 1e308 or more made the axis's round number beyond the floats (a
    traceback after the work, an empty --out). The axis ends at the value itself."""
    from pingce.report.charts import axis_range

    assert axis_range([1.5e308]) == (0.0, 1.5e308)
    assert axis_range([1e308]) == (0.0, 1e308)
    assert axis_range([3e307]) == (0.0, 5e307)  # round numbers while they are floats
    assert axis_range([-1.7e308, 1.7e308]) == (-1.7e308, 1.7e308)
    assert axis_range([float("inf"), 2.0, float("nan")]) == (0.0, 2.0)
    suite, data = _latency_files(tmp_path, "1.5e308")
    out = tmp_path / "o"
    done = run_pingce("run", str(suite), "--data", str(data), "--out", str(out), "--no-store")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    page = (out / "report.html").read_text(encoding="utf-8")
    assert '<span class="scale">0 – 1.5e+308</span>' in page
    numbers = _svg_numbers(page)
    assert numbers and all(0 <= x <= PLOT_WIDTH for x in numbers)


def test_infinite_and_nan_latencies_are_refused_as_input(tmp_path: Path) -> None:
    """What inf and NaN latencies do: JSON has no such numbers, and a CSV's (or a Python
    record's) are refused naming the file, line and field, before any output."""
    suite, _ = _latency_files(tmp_path, "1")
    data = tmp_path / "t.csv"
    data.write_text("id,g,p,t\n1,a,a,1\n2,a,b,inf\n3,a,a,nan\n", encoding="utf-8")
    out = tmp_path / "o"
    done = run_pingce("run", str(suite), "--data", str(data), "--out", str(out), "--no-store")
    assert done.returncode == 2, done.stderr
    assert f"{data}:3: field 't': expected a finite number (got inf)" in done.stderr
    assert not out.exists()
    for value in (float("inf"), float("nan")):
        with pytest.raises(pingce.InputError, match="field 't': expected a finite number"):
            pingce.evaluate(suite, [{"id": "1", "g": "a", "p": "a", "t": value}], bootstrap=0)


def test_a_comparison_of_latencies_beyond_the_floats_gives_a_page(tmp_path: Path) -> None:
    """The candidate's mean latency overflows (two latencies of 1.5e308 sum to inf): the
    comparison page was a traceback (an infinite difference's axis)."""
    suite, candidate = _latency_files(tmp_path, "1.5e308", "1.6e308")
    _, baseline = _latency_files(tmp_path, "1", "2")
    out = tmp_path / "c"
    done = run_pingce("compare", str(suite), "--data", str(candidate), "--baseline",
                      str(baseline), "--bootstrap", "200", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    page = (out / "comparison.html").read_text(encoding="utf-8")
    numbers = _svg_numbers(page)
    assert numbers and all(0 <= x <= PLOT_WIDTH for x in numbers)


# --- the page in a browser ----------------------------------------------------------------------

browser_needed = pytest.mark.skipif(not browser_available(), reason=MISSING)


class Page:
    """A page of report.html with what it logged: dialogs, errors, requests."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("html[data-ready]", timeout=15_000)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def rows(self) -> list[str]:
        texts: list[str] = self.page.eval_on_selector_all(
            "#r-body tr[data-index]", "rows => rows.map(r => r.children[1].textContent)"
        )
        return texts

    def info(self) -> str:
        text: str = self.page.text_content("#p-info") or ""
        return text

    def settle(self) -> None:
        self.page.wait_for_timeout(350)  # the text filters wait 150 ms for typing to stop


@pytest.fixture
def page(browser: Any, run: tuple[EvaluationResult, Path]) -> Iterator[Page]:
    opened = Page(browser, run[1])
    yield opened
    assert opened.errors == []
    assert opened.dialogs == []
    assert all(url.startswith("file:") for url in opened.requests), opened.requests
    opened.page.close()


@browser_needed
def test_charts_and_tables_after_the_script_ran(
    page: Page, run: tuple[EvaluationResult, Path]
) -> None:
    result = run[0]
    p = page.page
    assert p.locator("table.metrics tbody tr").count() == len(result.metrics)
    assert p.locator("table.metrics svg.forest").count() == len(result.metrics)
    assert p.locator("table.metrics svg.forest circle.pt").count() == len(result.metrics)
    matrix = result.tables["confusion_matrix"]["matrix"]
    assert p.locator(".heat g.cell").count() == len(matrix) ** 2
    assert p.locator(".heat g.cell.diag").count() == len(matrix)
    first = p.locator(".heat g.cell").first
    assert first.get_attribute("data-gold") == "高"
    assert first.locator("text").text_content() == str(matrix[0][0])
    assert p.locator(".multiples .panel").count() == len(result.metrics)
    assert p.locator(".multiples .panel").first.locator(".mrow").count() == len(result.slices)
    assert p.locator("#metrics").is_visible()


@browser_needed
def test_paging(page: Page) -> None:
    assert len(page.rows()) == 50
    assert page.info().startswith(f"records 1–50 of {N}")
    page.page.click("#p-next")
    assert page.rows()[0] == "r050"
    page.page.click("#p-last")
    assert len(page.rows()) == N - 150
    assert page.info().startswith(f"records 151–{N} of {N}")
    assert page.page.is_disabled("#p-next")
    page.page.select_option("#p-size", "100")
    assert len(page.rows()) == 100


@browser_needed
def test_filters(page: Page, run: tuple[EvaluationResult, Path]) -> None:
    result = run[0]
    rows = result.records
    assert rows is not None
    missed_any = sum(
        any(column[i] is not None for column in rows.misses.values()) for i in range(rows.n)
    )
    p = page.page
    p.check("#f-misses")
    assert page.info().startswith(f"records 1–{min(50, missed_any)} of {missed_any} (filtered")
    assert p.locator("#r-body tr[data-index]:not(.miss)").count() == 0

    # misses of one metric, then by the reason's text
    p.select_option("#f-metric", "accuracy")
    accuracy_misses = [r for r in rows.misses["accuracy"] if r is not None]
    assert f"of {len(accuracy_misses)} " in page.info()
    p.fill("#f-reason", "predicted 低")
    page.settle()
    wanted = sum("predicted 低" in r for r in accuracy_misses)
    assert f"of {wanted} " in page.info()
    for reason in p.locator("#r-body .why").all_text_contents():
        assert "predicted 低" in reason

    # a slice value (a Chinese one), with the other filters off
    p.fill("#f-reason", "")
    p.uncheck("#f-misses")
    p.select_option("#f-slice", label="劳动合同")
    page.settle()
    n_slice = result.slices["contract_type=劳动合同"].n_records
    assert f"of {n_slice} " in page.info()
    assert p.locator("#r-body .kv", has_text="劳动合同").count() == min(n_slice, 50)

    # text search: an id, then text no record holds
    p.select_option("#f-slice", "")
    p.fill("#f-search", "R1 2 3")  # no match
    page.settle()
    assert page.rows() == []
    assert "No record matches" in (p.text_content("#r-body") or "")
    p.fill("#f-search", "r042")
    page.settle()
    assert page.rows() == ["r042"]
    p.fill("#f-search", "唯一的编号")
    page.settle()
    assert page.rows() == ["唯一的编号-一"]


@browser_needed
def test_xss_payloads_stay_text(page: Page) -> None:
    p = page.page
    assert p.evaluate("window.__xss") is None
    first = p.locator("#r-body tr[data-index='0']")
    assert first.locator("td").nth(1).text_content() == SCRIPT_ID
    assert IMG_ANSWER in (first.locator("td.fields").text_content() or "")
    assert p.locator("#r-body img, #r-body script, #r-body b").count() == 0
    second = p.locator("#r-body tr[data-index='1']")
    assert CLOSE_ANSWER.strip("\u2028") in (second.locator("td.fields").text_content() or "")
    # the slice value "<b>租赁</b>合同" is text on the server-drawn parts too
    assert p.locator("#slices b, #records select b").count() == 0
    assert p.locator(".mlab", has_text="<b>租赁</b>合同").count() > 0
    page.page.fill("#f-search", "onerror")
    page.settle()
    assert page.rows() == [SCRIPT_ID]
    assert p.evaluate("window.__xss") is None
    assert p.evaluate("document.images.length") == 0


@browser_needed
def test_chinese_renders_and_screenshot(page: Page, tmp_path: Path) -> None:
    p = page.page
    assert p.locator(".heat text", has_text="高").first.is_visible()
    label = p.locator(".mlab", has_text="技术服务合同").first
    assert label.is_visible()
    box = label.bounding_box()
    assert box is not None and box["width"] > 30  # drawn with a CJK font, not as empty boxes
    shot = tmp_path / "report.png"
    p.screenshot(path=str(shot), full_page=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == 1280 and height > 1500
    assert len(data) > 50_000
    # not blank: the pixels' spread, decoded by the browser from the PNG itself
    stats = p.evaluate(
        """async (b64) => {
            const img = new Image();
            img.src = "data:image/png;base64," + b64;
            await img.decode();
            const c = document.createElement("canvas");
            c.width = img.width; c.height = Math.min(img.height, 2000);
            const g = c.getContext("2d");
            g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, c.width, c.height).data;
            let s = 0, s2 = 0, dark = 0, n = d.length / 4;
            for (let i = 0; i < d.length; i += 4) {
              const v = (d[i] + d[i + 1] + d[i + 2]) / 3;
              s += v; s2 += v * v; if (v < 128) dark++;
            }
            const mean = s / n;
            return {variance: s2 / n - mean * mean, dark: dark / n};
        }""",
        base64.b64encode(data).decode(),
    )
    assert stats["variance"] > 100
    assert 0.005 < stats["dark"] < 0.5


# --- the page of a comparison -------------------------------------------------------------------


def baseline_records() -> list[dict[str, Any]]:
    """The same records, another system: right on every third record, wrong on every fifth
    (and right on the first, which the candidate missed)."""
    out = []
    for i, record in enumerate(make_records()):
        record = dict(record)
        if i % 3 == 0:
            record["pred_level"] = record["gold_level"]
        if i % 5 == 0:
            record["pred_level"] = "低" if record["gold_level"] != "低" else "中"
        out.append(record)
    out[0]["pred_level"] = out[0]["gold_level"]  # the record with the <script> id flips
    return out


@pytest.fixture(scope="module")
def compared(
    tmp_path_factory: pytest.TempPathFactory, run: tuple[EvaluationResult, Path]
) -> tuple[Any, EvaluationResult, EvaluationResult, Path]:
    from pingce.report import write_comparison

    folder = tmp_path_factory.mktemp("compare")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    comparison = pingce.compare(suite, make_records(), baseline_records(), bootstrap=200)
    candidate = run[0]
    baseline = pingce.evaluate(suite, baseline_records(), bootstrap=0)
    assert candidate.records is not None and baseline.records is not None
    write_comparison(
        comparison, folder / "out", candidate=candidate.records, baseline=baseline.records
    )
    return comparison, candidate, baseline, folder / "out" / "comparison.html"


def test_comparison_page_lists_flips(
    compared: tuple[Any, EvaluationResult, EvaluationResult, Path],
) -> None:
    comparison, candidate, baseline, path = compared
    text = path.read_text(encoding="utf-8")
    assert text.count("<script") == 1  # comparison.js only, allowed by its hash
    assert html.escape(script_hash("comparison.js")) in text
    assert (path.parent / "comparison.json").is_file()
    rows_c, rows_b = candidate.records, baseline.records
    assert rows_c is not None and rows_b is not None
    missed_c = [r is not None for r in rows_c.misses["accuracy"]]
    missed_b = [r is not None for r in rows_b.misses["accuracy"]]
    fixed = sum(b and not c for c, b in zip(missed_c, missed_b, strict=True))
    broken = sum(c and not b for c, b in zip(missed_c, missed_b, strict=True))
    assert fixed and broken
    mark = direction(True)  # accuracy: higher is better
    assert (
        f"<code>accuracy</code>{mark}: {fixed:,} fixed by the candidate, {broken:,} broken" in text
    )
    assert f"{fixed:,} / {broken:,}" in text
    assert html.escape(SCRIPT_ID) in text and SCRIPT_ID not in text  # a flipped record's id
    for name, m in comparison.metrics.items():
        assert f"<code>{name}</code>" in text
        if m.p_value is not None:
            assert "p=" in text


def test_comparison_page_without_rows(
    compared: tuple[Any, EvaluationResult, EvaluationResult, Path], tmp_path: Path
) -> None:
    from pingce.report import write_comparison
    from pingce.results import ComparisonResult

    read = ComparisonResult.model_validate_json(compared[0].to_json())  # comparison.json only
    assert read.records is None
    write_comparison(read, tmp_path)
    assert {p.name for p in tmp_path.iterdir()} == {
        "comparison.json",
        "comparison.html",
        "comparison.md",
    }
    text = (tmp_path / "comparison.html").read_text(encoding="utf-8")
    assert "holds no per-record rows" in text
    assert any(m.verdict and html.escape(m.verdict) in text for m in read.metrics.values())


@browser_needed
def test_comparison_page_in_the_browser(
    browser: Any, compared: tuple[Any, EvaluationResult, EvaluationResult, Path], tmp_path: Path
) -> None:
    comparison, _, _, path = compared
    dialogs: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.as_uri())
    assert page.locator("table.compare tbody tr").count() == len(comparison.metrics)
    assert page.locator("table.compare svg.forest line.ref").count() == len(comparison.metrics)
    # the page says what the console and comparison.md say: the engine's verdict, Holm included
    verdicts = page.locator("td.verdict").all_text_contents()
    assert verdicts == [
        (m.verdict or "undefined") + (m.note or "") for m in comparison.metrics.values()
    ]
    assert any("after Holm" in v for v in verdicts), verdicts
    holm = page.locator("table.compare tbody tr td:nth-child(8)").all_text_contents()
    assert holm == [
        "" if m.p_holm is None else f"{m.p_holm:.4f}" if m.p_holm >= 1e-4 else "<0.0001"
        for m in comparison.metrics.values()
    ]
    page.locator("#flipped details summary").first.click()
    assert page.locator("#flipped table.flips tbody tr").first.is_visible()
    assert page.locator("#flipped img, #flipped script").count() == 0
    assert page.evaluate("window.__xss") is None and dialogs == []
    shot = tmp_path / "comparison.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    page.close()


# --- fields that hold objects -------------------------------------------------------------------


def test_field_values_go_in_whole_up_to_value_chars_and_beyond_it_as_cut_texts() -> None:
    """Values go into the page whole (objects as objects) for the detail view; a value (an
    object's JSON text) longer than VALUE_CHARS is its text cut there, ending in an ellipsis."""
    from pingce.report.records_json import FIELD_CHARS, VALUE_CHARS, _field_texts

    small = [{"nature": "寒"}, None, [1, 2.5], "x", float("nan")]
    assert json.loads(_field_texts(small)) == [{"nature": "寒"}, None, [1, 2.5], "x", None]
    long = ["甲" * (3 * FIELD_CHARS)] + ["a"] * 10  # longer than the table shows: kept whole
    assert json.loads(_field_texts(long)) == long
    objects = [{"k": "v" * (2 * FIELD_CHARS)}] * 3 + [None, 7]
    assert json.loads(_field_texts(objects)) == objects
    big = [{"k": "v" * VALUE_CHARS}, "甲" * (VALUE_CHARS + 1), "甲" * VALUE_CHARS, None, 7]
    got = json.loads(_field_texts(big))
    expected = json.dumps(big[0], separators=(",", ":"))[: VALUE_CHARS - 1] + "…"
    assert got == [expected, "甲" * (VALUE_CHARS - 1) + "…", big[2], None, 7]
    assert json.loads(_field_texts([2**70, 1])) == [str(2**70), 1]
    nested = [{"n": 2**70, "t": "x" * VALUE_CHARS}, {"n": 2**70}]  # orjson writes neither
    got = json.loads(_field_texts(nested))
    assert len(got[0]) == VALUE_CHARS and got[0].endswith("…")
    assert got[1] == f'{{"n":{2**70}}}'  # its JSON text: orjson cannot read it back


@browser_needed
def test_object_fields_show_as_json_text_and_are_searched_so(browser: Any, tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    pingce.evaluate(
        "tool-use",
        root / "examples/tool_use/records.jsonl",
        bootstrap=0,
        out=tmp_path / "o",
        records_fields="all",
    )
    data = embedded((tmp_path / "o" / "report.html").read_text(encoding="utf-8"))
    lines = (tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    assert data["fields"]["gold"][0] == json.loads(lines[0])["fields"]["gold"]  # as values
    opened = Page(browser, tmp_path / "o" / "report.html")
    p = opened.page
    shown = p.locator("#r-body tr[data-index]").first.locator("td.fields").text_content() or ""
    assert "[object Object]" not in shown
    assert 'gold [{"name":"calculate_triangle_area","answers":{"base":[10]' in shown
    values = p.eval_on_selector_all("#r-body td.fields span.v", "s => s.map(x => x.textContent)")
    from pingce.report.records_json import FIELD_CHARS

    assert max(map(len, values)) == FIELD_CHARS  # long ones cut, ending in an ellipsis
    assert all(v.endswith("…") for v in values if len(v) == FIELD_CHARS)
    p.fill("#f-search", '"answers":{"city":["北京"')  # text inside an object-valued field
    opened.settle()
    wanted = [json.loads(x)["id"] for x in lines if '"answers":{"city":["北京"' in x]
    assert wanted and opened.rows() == wanted
    assert opened.errors == []
    p.close()
