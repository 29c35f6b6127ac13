"""Issue 32, point 3: the per-record outputs written once and no larger than a reader needs.

records.jsonl keeps ids, lines, context, values and reasons, not the input fields the data file
holds (``--records-fields all`` echoes them); ``--records parquet`` writes records.parquet
(zstd) instead, read back to the same rows by every reader of a run folder; report.html embeds
the first ``--report-records`` records with their input fields and says where the rest are; a
comparison of stored runs that kept no fields says how to get the field diff."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import InputError
from pingce.report import write_outputs
from pingce.results import RecordRows
from pingce.runfolder import layout
from pingce.runfolder.reader import read_run
from pingce.runfolder.records import jsonl_lines, read_jsonl
from pingce.runfolder.records_parquet import read_records_parquet, write_records_parquet
from tests._pages import embedded
from tests.cli_run import run_pingce

EXAMPLES = Path(pingce.__file__).parent / "examples"
RISK = EXAMPLES / "contract_risk" / "records.jsonl"
SUITES = {
    "contract-risk": RISK,
    "tcm-dialogue": EXAMPLES / "tcm_dialogue" / "records.jsonl",
    "function-call": EXAMPLES / "function_call" / "records.jsonl",
    "tool-use": EXAMPLES / "tool_use" / "records.jsonl",
    "function-points": EXAMPLES / "function_points" / "records.jsonl",
}


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_same_rows(got: RecordRows, want: RecordRows) -> None:
    """Every column of two RecordRows equal (NaN equal to NaN)."""
    assert got.ids == want.ids
    np.testing.assert_array_equal(got.lines, want.lines)
    for part in ("fields", "misses", "context", "model", "judge"):
        a, b = getattr(got, part), getattr(want, part)
        assert list(a) == list(b), part
        for name in a:
            assert list(a[name]) == list(b[name]), (part, name)
    assert list(got.values) == list(want.values)
    for name, column in got.values.items():
        np.testing.assert_array_equal(column, want.values[name], err_msg=name)


# ------------------------------------------------------------------ 1. fields echoed when asked


def test_records_jsonl_echoes_the_input_fields_only_when_asked(tmp_path: Path) -> None:
    """By default records.jsonl has no "fields"; --records-fields all adds them, and the lines
    differ by nothing else (the option is declared once: the CLI flag and the keyword)."""
    plain = pingce.evaluate("contract-risk", RISK, bootstrap=0, out=tmp_path / "plain")
    every = pingce.evaluate(
        "contract-risk", RISK, bootstrap=0, out=tmp_path / "all", records_fields="all"
    )
    assert plain.model_dump() == every.model_dump()
    without, full = (
        lines_of(tmp_path / "plain" / layout.RECORDS),
        lines_of(tmp_path / "all" / layout.RECORDS),
    )
    assert without and all("fields" not in row for row in without)
    assert all(row["fields"]["gold_level"] for row in full)
    assert [{k: v for k, v in row.items() if k != "fields"} for row in full] == without
    assert {"id", "line", "values"} <= set(without[0])  # what a reader needs stays
    calls = pingce.evaluate("function-call", SUITES["function-call"], bootstrap=0, out=tmp_path)
    assert calls.records is not None
    kept = lines_of(tmp_path / layout.RECORDS)  # the context: what each record asked
    assert [row["context"]["query"] for row in kept] == list(calls.records.context["query"])
    done = run_pingce(
        "run", "contract-risk", "--data", str(RISK), "--out", str(tmp_path / "cli"),
        "--no-store", "--bootstrap", "0", "--records-fields", "all",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert lines_of(tmp_path / "cli" / layout.RECORDS) == full
    helped = run_pingce("run", "--help")
    assert "--records-fields" in helped.stdout and "--report-records" in helped.stdout
    bad = run_pingce("run", "contract-risk", "--data", str(RISK), "--records-fields", "some")
    assert bad.returncode != 0 and "--records-fields" in bad.stderr


# --------------------------------------------------------------------- 4. records.parquet


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("fields", [False, True])
def test_records_parquet_reads_back_to_the_rows_of_records_jsonl(
    suite: str, fields: bool, tmp_path: Path
) -> None:
    result = pingce.evaluate(suite, SUITES[suite], bootstrap=0)
    rows = result.records
    assert rows is not None
    text = b"".join(jsonl_lines(rows, fields=fields))
    from_jsonl = read_jsonl(text.splitlines(), "records.jsonl")
    write_records_parquet(rows, tmp_path / "r.parquet", fields=fields)
    from_parquet = read_records_parquet(tmp_path / "r.parquet")
    assert_same_rows(from_parquet, from_jsonl)
    again = b"".join(jsonl_lines(from_jsonl, fields=fields))
    assert b"".join(jsonl_lines(from_parquet, fields=fields)) == again
    assert bool(from_parquet.fields) is fields


def test_records_parquet_is_zstd_and_replaces_records_jsonl(tmp_path: Path) -> None:
    """--records parquet: records.parquet instead of records.jsonl (a folder written again the
    other way keeps one of them), read back by read_run, the page saying where the rows are."""
    import pyarrow.parquet as pq

    out = tmp_path / "run"
    result = pingce.evaluate("contract-risk", RISK, bootstrap=0, records_format="parquet", out=out)
    assert (out / layout.RECORDS_PARQUET).is_file() and not (out / layout.RECORDS).exists()
    meta = pq.ParquetFile(out / layout.RECORDS_PARQUET).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"
    back = read_run(out)
    assert back.records is not None and result.records is not None
    assert b"".join(jsonl_lines(back.records)) == b"".join(jsonl_lines(result.records))
    page = embedded((out / layout.REPORT_HTML).read_text(encoding="utf-8"))
    assert page["n"] == page["total"] == result.n_records
    assert page["rest"] == layout.RECORDS_PARQUET
    pingce.evaluate("contract-risk", RISK, bootstrap=0, out=out)  # jsonl over it
    assert (out / layout.RECORDS).is_file() and not (out / layout.RECORDS_PARQUET).exists()


@pytest.mark.parametrize(("records_format", "fields"), [("jsonl", True), ("parquet", False)])
def test_a_run_read_back_and_written_elsewhere_keeps_its_rows_alike(
    tmp_path: Path, records_format: str, fields: bool
) -> None:
    """write_outputs(read_run(folder), other): the rows keep the folder's format and, where the
    run kept them (--records-fields all), the input fields: a copy loses nothing. Before, the
    copy dropped the fields, and a field of one-element lists read back (contract-risk's
    gold_rules) became a 2-D array written as the text "['R102']"."""

    first, copy = tmp_path / "run", tmp_path / "copy"
    pingce.evaluate(
        "contract-risk",
        RISK,
        bootstrap=0,
        records_format=records_format,
        records_fields="all" if fields else "none",
        out=first,
    )
    write_outputs(read_run(first), copy)
    name = layout.RECORDS if records_format == "jsonl" else layout.RECORDS_PARQUET
    assert layout.rows_in(copy) == name
    again = read_run(copy).records
    assert again is not None and bool(again.fields) is fields
    original = read_run(first).records
    assert original is not None
    assert b"".join(jsonl_lines(again, fields=fields)) == b"".join(
        jsonl_lines(original, fields=fields)
    )
    if records_format == "jsonl":  # the file itself, byte for byte (gold_rules stays a list)
        assert (copy / name).read_bytes() == (first / name).read_bytes()


def test_records_parquet_without_pyarrow_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = RecordRows(["a"], np.array([1]), values={"m": np.array([1.0])})
    real = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(InputError, match=r"pingce\[files\]"):
        write_records_parquet(rows, tmp_path / "r.parquet")


# ------------------------------------------------------------ 3. report.html embeds a bound


def contracts(n: int) -> list[dict[str, Any]]:
    """n contract-risk records (the example's, repeated with new ids)."""
    base = lines_of(RISK)
    return [dict(base[i % len(base)], id=f"r{i:04d}") for i in range(n)]


@pytest.mark.parametrize("records_format", ["jsonl", "parquet"])
def test_report_html_embeds_the_first_records_and_says_where_the_rest_are(
    tmp_path: Path, records_format: str
) -> None:
    records = contracts(75)
    out = tmp_path / "run"
    result = pingce.evaluate(
        "contract-risk", records, bootstrap=0, out=out, report_records=30,
        records_format=records_format,
    )  # fmt: skip
    text = (out / layout.REPORT_HTML).read_text(encoding="utf-8")
    page = embedded(text)
    rest = layout.RECORDS if records_format == "jsonl" else layout.RECORDS_PARQUET
    assert (page["n"], page["total"], page["rest"]) == (30, 75, rest)
    assert page["ids"] == [r["id"] for r in records[:30]]
    assert all(len(column) == 30 for column in page["values"].values())
    # the embedded records keep their input fields, though the rows file does not
    assert page["fields"]["gold_level"] == [r["gold_level"] for r in records[:30]]
    assert page["fields"]["contract"][0] == records[0]["contract"]
    assert "first 30 of the 75 records" in text and f"<code>{rest}</code>" in text
    # the statistic rows of the embedded records only (stats.npz has all of them)
    columns = [s["codes"] for s in page["stats"] if "codes" in s]
    columns += [column for s in page["stats"] for column in s.get("data", [])]
    assert columns and all(len(column) == 30 for column in columns)
    # every record is in the rows file
    back = read_run(out)
    assert back.records is not None and back.records.n == 75 == result.n_records
    # the default bound, and a run under it: every record embedded, no "first N" words
    small = pingce.evaluate("contract-risk", RISK, bootstrap=0)
    write_outputs(small, tmp_path / "small")
    whole = (tmp_path / "small" / layout.REPORT_HTML).read_text(encoding="utf-8")
    assert embedded(whole)["n"] == embedded(whole)["total"] == small.n_records
    assert 'id="r-bounded"' not in whole


def test_pingce_report_writes_the_page_again_from_records_parquet(tmp_path: Path) -> None:
    out = tmp_path / "run"
    pingce.evaluate(
        "contract-risk", contracts(40), bootstrap=0, out=out, records_format="parquet",
        slices=["contract_type"],
    )  # fmt: skip
    before = embedded((out / layout.REPORT_HTML).read_text(encoding="utf-8"))
    assert before["slices"] and before["slices"][0] is not None
    done = run_pingce("report", str(out), "--out", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    again = embedded((tmp_path / "again" / layout.REPORT_HTML).read_text(encoding="utf-8"))
    assert again["ids"] == before["ids"] and again["values"] == before["values"]
    assert again["misses"] == before["misses"] and again["rest"] == layout.RECORDS_PARQUET
    assert again["fields"] == {}  # records.parquet kept none: the page shows what it has
    assert again["slices"] == before["slices"]  # the slice filter, from stats.npz's codes


# -------------------------------------------- 5. stored runs compared side by side, parquet too


def two_systems(folder: Path) -> tuple[Path, Path]:
    rows = lines_of(RISK)
    wrong = {"高": "低", "中": "高", "低": "中"}
    worse = [dict(r, pred_level=wrong[r["gold_level"]]) if i % 3 == 0 else r for i, r in
             enumerate(rows)]  # fmt: skip
    paths = folder / "good.jsonl", folder / "worse.jsonl"
    for path, records in zip(paths, (rows, worse), strict=True):
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
        )
    return paths


@pytest.mark.parametrize("records_format", ["jsonl", "parquet"])
def test_stored_runs_compare_side_by_side_with_the_fields_they_kept(
    tmp_path: Path, records_format: str
) -> None:
    """pingce compare RUN_A RUN_B over runs that kept no input fields: the comparison is the
    same, the page shows context, values and reasons, and says how to get the field diff; runs
    with --records-fields all show the fields side by side; the viewer's paired page reads the
    parquet runs too."""
    from urllib.parse import urlencode

    from pingce.viewer import Viewer

    good, worse = two_systems(tmp_path)
    db = tmp_path / "runs.db"
    for fields in ("none", "all"):
        for name, data in (("good", good), ("worse", worse)):
            done = run_pingce(
                "run", "contract-risk", "--data", str(data), "--out",
                str(tmp_path / f"{name}-{fields}"), "--name", f"{name}-{fields}", "--store",
                str(db), "--bootstrap", "0", "--records", records_format,
                "--records-fields", fields,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
    pages = {}
    for fields in ("none", "all"):
        out = tmp_path / f"cmp-{fields}"
        # by the names the run store keeps (pingce runs), and by the folders
        runs = [f"worse-{fields}", f"good-{fields}"]
        refs = runs if fields == "none" else [str(tmp_path / name) for name in runs]
        done = run_pingce(
            "compare", *refs, "--bootstrap", "0", "--out", str(out), "--store", str(db),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        pages[fields] = (out / layout.COMPARISON_HTML).read_text(encoding="utf-8")
        metrics = json.loads((out / layout.COMPARISON_JSON).read_text("utf-8"))["metrics"]
        pages[fields + ".json"] = json.dumps(metrics)
    assert pages["none.json"] == pages["all.json"]
    assert 'id="sbs-no-fields"' in pages["none"] and "--records-fields all" in pages["none"]
    assert "id <code>cr-008</code>" in pages["none"]  # the record, its values and reasons
    assert 'id="sbs-no-fields"' not in pages["all"]
    assert (
        "<code>pred_level</code>" in pages["all"] and "<code>pred_level</code>" not in pages["none"]
    )
    paired = Viewer(db).respond("/paired?" + urlencode({"a": "worse-none", "b": "good-none"}))
    assert paired.status == 200 and 'id="sbs-no-fields"' in paired.body.decode("utf-8")
    listed = run_pingce("runs", "--store", str(db))
    assert listed.returncode == 0 and "worse-none" in listed.stdout


def test_a_comparison_of_record_files_keeps_the_fields_in_memory(tmp_path: Path) -> None:
    good, worse = two_systems(tmp_path)
    result = pingce.compare("contract-risk", worse, good, bootstrap=0, out=tmp_path / "o")
    assert result.records is not None and result.records[0].fields
    page = (tmp_path / "o" / layout.COMPARISON_HTML).read_text(encoding="utf-8")
    assert 'id="sbs-no-fields"' not in page and "<code>pred_level</code>" in page


# ------------------------------------------------- 2. one serialisation for the rows and the page


@pytest.mark.parametrize("suite", list(SUITES))
def test_the_page_and_records_jsonl_share_the_fields_texts_and_bytes_stay_the_same(
    suite: str, tmp_path: Path
) -> None:
    """With --records-fields all, the embedded records' field texts are made once (FieldTexts)
    and used by both files: records.jsonl is the text each row serialises to, the page the one
    made without sharing, byte for byte."""
    from pingce.report.html import render_html
    from pingce.runfolder.records import FieldTexts

    result = pingce.evaluate(suite, SUITES[suite], bootstrap=0, records_fields="all")
    rows = result.records
    assert rows is not None
    bound = max(1, rows.n // 2)
    assert result.outputs is not None
    result.outputs.kept = type(result.outputs.kept)(fields=True, report_records=bound)
    write_outputs(result, tmp_path)
    made = (tmp_path / layout.RECORDS).read_bytes()
    assert made == b"".join(jsonl_lines(rows, fields=True))
    page = (tmp_path / layout.REPORT_HTML).read_text(encoding="utf-8")
    assert page == render_html(result, bound=bound)
    shared = FieldTexts(rows, bound)
    assert b"".join(jsonl_lines(rows, chunk=3, fields=True, shared=shared)) == made
    assert shared._texts  # the texts were made (and then read again by the page)


def test_shared_texts_keep_the_page_as_it_was_for_long_values_and_big_integers() -> None:
    from pingce.report.html import render_html
    from pingce.runfolder.records import FieldTexts

    long = "长" * 25_000
    rows = RecordRows(
        ["a", "b", "c", "d"],
        np.array([1, 2, 3, 4]),
        fields={
            "text": np.array([long, "short", None, "x"], dtype=object),
            "obj": [{"n": 2**70}, {"k": [1, 2]}, None, {"f": float("nan")}],
            "num": np.array([1.23456789, np.nan, 3.0, -0.0]),
            "plain": [{"a": 1}, ["b"], "c", None],
        },
        values={"m": np.array([1.0, 0.0, np.nan, 1.0])},
    )
    result = pingce.evaluate("contract-risk", RISK, bootstrap=0)
    shared = FieldTexts(rows, 3)
    text = b"".join(jsonl_lines(rows, fields=True, shared=shared, chunk=2))
    assert text == b"".join(jsonl_lines(rows, fields=True))
    from pingce.report import html

    pieces = list(html._page(result, rows, 3, "records.jsonl", shared))
    assert b"".join(pieces).decode("utf-8") == render_html(result, rows, bound=3)


def test_the_bounded_page_opens_in_chromium_with_its_records_and_their_fields(
    browser: Any, tmp_path: Path
) -> None:
    """The page of a run larger than its bound: the hint says where the rest are, the pager
    counts the embedded records, a record opens with its input fields (records.jsonl has none)
    and nothing of the page's own header (total, rest) is shown as a record's data."""
    records = contracts(75)
    out = tmp_path / "run"
    pingce.evaluate("contract-risk", records, bootstrap=0, out=out, report_records=30)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((out / layout.REPORT_HTML).as_uri())
    page.wait_for_selector("html[data-ready]", timeout=15_000)
    hint = page.locator("#r-bounded").inner_text()
    assert "first 30 of the 75 records" in hint and layout.RECORDS in hint
    assert "30" in page.locator("#p-info").inner_text()
    row = page.locator("#r-body tr.rec").first
    row.click()
    detail = page.locator("#r-body tr.detail")
    fields = detail.locator("section.part", has=page.locator("h4", has_text="fields"))
    names, texts = fields.locator("dt"), fields.locator("dd")
    shown = dict(zip(names.all_text_contents(), texts.all_text_contents(), strict=True))
    assert shown["gold_level"] == records[0]["gold_level"]
    assert shown["contract"] == records[0]["contract"]
    heads = detail.locator("section.part h4").all_text_contents()
    assert not {"total", "rest"} & set(heads)
    page.close()
    assert errors == []


def test_records_parquet_keeps_model_and_judge_calls_and_odd_values(tmp_path: Path) -> None:
    """The sparse objects of --model and the LLM judge (lists, objects, flags, integers with
    gaps, floats), ids without a value, big integers and NaN read back as records.jsonl's."""
    answer = {"choices": [{"message": {"content": "好", "tool_calls": []}}], "usage": {"n": 3}}
    rows = RecordRows(
        ["a", None, "c"],
        np.array([1, 2, 5]),
        fields={"big": [2**70, 1, None], "flag": [True, False, None], "f": [1.5, np.nan, 2.0]},
        values={"m": np.array([1.0, np.nan, 0.0]), "n": np.array([0.5, 0.25, -0.0])},
        misses={"m": np.array([None, None, "why"], dtype=object), "n": np.full(3, None, object)},
        context={"q": ["问", None, {"k": [1, None]}], "empty": [None, None, None]},
        model={
            "messages": [[{"role": "user", "content": "问"}], None, []],
            "answer": [answer, None, None],
            "cached": [False, None, True],
            "prompt_tokens": [12, None, 7],
            "latency_sec": [0.25, None, 1.0],
        },
        judge={"pairs": [[{"a": "x", "b": "y", "score": 0.5}], None, None]},
    )
    for fields in (False, True):
        text = b"".join(jsonl_lines(rows, fields=fields))
        want = read_jsonl(text.splitlines(), "records.jsonl")
        write_records_parquet(rows, tmp_path / "r.parquet", fields=fields)
        got = read_records_parquet(tmp_path / "r.parquet")
        assert_same_rows(got, want)
        assert b"".join(jsonl_lines(got, fields=fields)) == b"".join(
            jsonl_lines(want, fields=fields)
        )


def test_report_records_zero_embeds_none_and_says_where_they_are(tmp_path: Path) -> None:
    tcm = EXAMPLES / "tcm_dialogue" / "records.jsonl"
    result = pingce.evaluate("tcm-dialogue", tcm, bootstrap=0, out=tmp_path, report_records=0)
    text = (tmp_path / layout.REPORT_HTML).read_text(encoding="utf-8")
    page = embedded(text)
    assert (page["n"], page["total"], page["ids"]) == (0, result.n_records, [])
    assert "stats" not in page and f"first 0 of the {result.n_records:,} records" in text
    with pytest.raises(pingce.errors.OptionError, match="--report-records"):
        pingce.evaluate("tcm-dialogue", tcm, bootstrap=0, report_records=-1)


def test_coded_miss_reasons_write_what_row_by_row_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """records.jsonl's miss reasons coded from their distinct texts (``_coded_entries``) are the
    bytes the row-by-row writer gives, for reasons repeated and for a few misses that each have
    their own reason among many rows (which the coding now takes too)."""
    import numpy as np

    from pingce.runfolder import records as writer

    rng = np.random.default_rng(9)
    for n, kinds in ((400, 3), (400, 40), (12, 5)):
        reasons = np.empty(n, dtype=object)
        missed = rng.random(n) < 0.3
        reasons[missed] = [
            f'reason "{int(k)}" 原因' for k in rng.integers(kinds, size=missed.sum())
        ]
        some = rng.random(n) < 0.5
        coded = writer._entries(reasons, missed, some, b'"m":')
        with monkeypatch.context() as patched:
            patched.setattr(writer, "_coded_entries", lambda *args: None)
            plain = writer._entries(reasons, missed, some, b'"m":')
        assert writer._rows(coded) == writer._rows(plain), (n, kinds)
