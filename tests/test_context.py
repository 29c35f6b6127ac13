"""Context travels with the record (issue 31): a suite's ``context:`` and ``--context`` fields,
read by no statistic, kept whole in records.jsonl (``"context": {...}``, absent where a record
lacks the field) and in report.html's records JSON (escaped), a ``--context`` field that no
record has one note; the numbers do not move."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

import pingce
from pingce.errors import SuiteError
from pingce.options import run_options
from pingce.report.records_json import page_ids
from pingce.results import RecordRows
from pingce.runfolder.records import jsonl_lines, read_jsonl
from pingce.suites.build import load_suite

from ._browser import MISSING, browser_available
from ._pages import embedded as _embedded
from .cli_run import run_pingce

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
QUERY = "调节厨房温度到22度"


def _lines(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text("utf-8").splitlines()]


def test_a_function_call_run_keeps_each_query_in_records_jsonl_and_the_page(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    data = EXAMPLES / "function_call" / "records.jsonl"
    done = run_pingce(
        *["run", "function-call", "--data", str(data), "--out", str(out)],
        *["--no-store", "--no-cache", "--no-progress", "--bootstrap", "0"],
    )
    assert done.returncode == 0, done.stderr
    rows = _lines(out)
    third = next(row for row in rows if row["id"] == "seed-03")
    assert third["context"] == {"query": QUERY}
    assert list(third)[:4] == ["id", "line", "context", "values"]
    assert "fields" not in third  # the input fields are echoed only with --records-fields all
    page = (out / "report.html").read_text("utf-8")
    data_ = _embedded(page)
    assert QUERY in data_["context"]["query"]
    assert json.loads((out / "results.json").read_text("utf-8"))["notes"] == []


def _records() -> list[dict[str, Any]]:
    long = "长" * 250 + "x" * 250
    return [
        {"id": "a", "query": "q1", "meta": {"note": long}, "gold_fn": [], "pred_fn": []},
        {"id": "b", "query": "q2", "gold_fn": [], "pred_fn": []},
        {
            "id": "c",
            "meta": {
                "note": "<script>window.__xss=1</script> javascript:alert(1) "
                '<img src=x onerror="alert(2)">'
            },
            "gold_fn": [],
            "pred_fn": [],
        },
    ]


def test_context_adds_a_field_whole_and_absent_where_a_record_lacks_it(tmp_path: Path) -> None:
    base = pingce.evaluate("function-call", _records(), bootstrap=0, out=tmp_path / "base")
    more = pingce.evaluate(
        "function-call",
        _records(),
        bootstrap=0,
        context=["meta.note", "nowhere"],
        out=tmp_path / "more",
    )
    rows = _lines(tmp_path / "more")
    assert rows[0]["context"] == {"query": "q1", "meta.note": _records()[0]["meta"]["note"]}
    assert len(rows[0]["context"]["meta.note"]) == 500  # whole
    assert rows[1]["context"] == {"query": "q2"}  # meta.note absent: simply not there
    assert "query" not in rows[2]["context"]
    # the numbers do not move; the one note names the field no record has
    for name, metric in base.metrics.items():
        assert metric.model_dump() == more.metrics[name].model_dump()
    assert more.notes == [
        "--context nowhere: no record has this field (check its spelling or path)"
    ]
    assert base.notes == []
    # whole in the page's JSON too
    page = (tmp_path / "more" / "report.html").read_text("utf-8")
    data = _embedded(page)
    assert data["context"]["meta.note"][0] == _records()[0]["meta"]["note"]
    assert data["context"]["meta.note"][1] is None


def test_context_payloads_are_escaped_in_the_page(tmp_path: Path) -> None:
    pingce.evaluate("function-call", _records(), bootstrap=0, context="meta.note", out=tmp_path)
    text = (tmp_path / "report.html").read_text("utf-8")
    assert len(re.findall(r"<script", text)) == 2  # the data and the page's own script
    assert "<img" not in text and "window.__xss" in text  # present only as escaped text
    assert "onerror" in _embedded(text)["context"]["meta.note"][2]
    assert "javascript:alert(1)" in _embedded(text)["context"]["meta.note"][2]


def test_records_jsonl_round_trips_the_context_and_matches_iter_rows() -> None:
    rows = RecordRows(
        ["a", "b", None],
        np.array([1, 2, 3]),
        {"gold": ["x", "y", "z"]},
        {"m": np.array([1.0, np.nan, 0.0])},
        {"m": np.array([None, None, "why"], dtype=object)},
        {"query": ["q", None, [1, {"k": "v"}]], "other": [None, None, "o"]},
    )
    text = b"".join(jsonl_lines(rows, fields=True))
    assert text == b"".join(orjson.dumps(row) + b"\n" for row in rows.iter_rows())
    lines = text.splitlines()
    assert b'"context"' not in lines[1]
    assert orjson.loads(lines[2])["context"] == {"query": [1, {"k": "v"}], "other": "o"}
    back = read_jsonl(lines, "records.jsonl")
    assert back.context == {"query": ["q", None, [1, {"k": "v"}]], "other": [None, None, "o"]}
    assert back.take(np.array([2])).context == {"query": [[1, {"k": "v"}]], "other": ["o"]}


def test_a_suite_context_path_is_validated_like_other_paths(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: mine\ncontext: [question, 'a..b']\nmetrics:\n  fn_acc_name: {}\n", "utf-8"
    )
    with pytest.raises(SuiteError, match=r"a\.\.b"):
        load_suite(str(suite))
    suite.write_text("name: mine\ncontext: question\nmetrics:\n  fn_acc_name: {}\n", "utf-8")
    assert load_suite(str(suite)).spec.context == ["question"]


def test_context_option_is_a_path_and_a_list() -> None:
    assert run_options({"context": "meta.note"}).context == ("meta.note",)
    with pytest.raises(pingce.OptionError, match="--context"):
        run_options({"context": ["a..b"]})


def test_every_built_in_suite_declares_its_context() -> None:
    for name in ["function-call", "function-call-hf", "function-points", "contract-risk"]:
        assert load_suite(name).spec.context, name
    assert load_suite("tcm-dialogue").spec.context
    assert load_suite("function-points").spec.context[0] == "entity"
    assert load_suite("tool-use").spec.context == ["question", "query"]


def test_tcm_dialogue_records_without_ids_show_dialogue_and_turn_in_the_page(
    tmp_path: Path,
) -> None:
    result = pingce.evaluate(
        "tcm-dialogue", str(EXAMPLES / "tcm_dialogue" / "records.jsonl"), bootstrap=0, out=tmp_path
    )
    rows = result.records
    assert rows is not None and all(i is None for i in rows.ids)  # records.jsonl: as read
    ids = page_ids(result, rows)
    assert ids[:5] == ["d1 · 1", "d1 · 2", "d1 · 3", "d1 · 4", "d2 · 1"]
    page = _embedded((tmp_path / "report.html").read_text("utf-8"))
    assert page["ids"] == ids and None not in page["ids"]


def test_a_comparison_carries_the_context_and_its_note() -> None:
    result = pingce.compare(
        "function-call", _records(), _records(), bootstrap=0, context=["meta.note", "nowhere"]
    )
    assert (
        "--context nowhere: no record has this field (check its spelling or path)" in result.notes
    )
    assert not any("meta.note" in note for note in result.notes)


def test_the_record_frame_has_the_context_with_the_fields() -> None:
    pytest.importorskip("pandas")
    result = pingce.evaluate("function-call", _records(), bootstrap=0)
    frame = result.record_frame(fields=True)
    assert list(frame["query"]) == ["q1", "q2", None]
    assert "query" not in result.record_frame().columns


@pytest.mark.skipif(not browser_available(), reason=MISSING)
def test_the_records_table_shows_the_context_folded_and_whole_in_chromium(
    browser: Any, tmp_path: Path
) -> None:
    """In the page: the query in the context column; a 500-character value folded, its whole
    text in the fold; the payloads text, never markup, and never run."""
    pingce.evaluate("function-call", _records(), bootstrap=0, context="meta.note", out=tmp_path)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(d.message), d.dismiss()))
    page.goto((tmp_path / "report.html").as_uri())
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    cells = page.locator("#r-body td.context")
    assert cells.count() == 3
    first = cells.nth(0)
    assert "q1" in (first.text_content() or "")
    fold = first.locator("details")
    assert fold.count() == 1
    assert first.locator("details .whole").text_content() == _records()[0]["meta"]["note"]
    third = cells.nth(2).text_content() or ""
    assert "<script>window.__xss=1</script>" in third and 'onerror="alert(2)"' in third
    assert page.locator("#r-body img, #r-body script").count() == 0
    assert page.evaluate("window.__xss") is None
    page.fill("#f-search", "q2")
    page.wait_for_timeout(350)
    ids = page.eval_on_selector_all(
        "#r-body tr[data-index]", "rows => rows.map(r => r.children[1].textContent)"
    )
    assert ids == ["b"]
    assert errors == []
    page.close()


def test_a_report_written_again_from_the_folder_keeps_the_context(tmp_path: Path) -> None:
    from pingce.report.rewrite import rewrite_reports

    pingce.evaluate("function-call", _records(), bootstrap=0, context="meta.note", out=tmp_path)
    first = _embedded((tmp_path / "report.html").read_text("utf-8"))
    rewrite_reports(tmp_path, tmp_path / "again")
    again = _embedded((tmp_path / "again" / "report.html").read_text("utf-8"))
    assert again["context"] == first["context"]
    assert again["context"]["meta.note"][0] == _records()[0]["meta"]["note"]
