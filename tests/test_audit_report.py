"""Where an audit goes (issue 34): ``pingce audit RUN --labels SHEET`` records it in the run's
own folder, all or nothing: audit.json and audit.md, records.jsonl with exactly the records
people checked marked ``audit`` (their labels beside the judge's), every other byte as it was,
report.html and report.md with an Audit section whose corrected values are audit.json's; a
second audit replaces the first; a failed one leaves the folder as it was, byte for byte; ``--out
DIR`` leaves the run alone; ``pingce report RUN`` draws the audit again; a new run over the
folder removes it; ``pingce view`` shows it, the checked records marked and filtered, in
chromium. On the bundled function-points and contract-risk examples and their hand-labelled
sheets."""

from __future__ import annotations

import csv
import hashlib
import html
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import pingce
from pingce.history import runs
from pingce.report.format import fmt_number
from pingce.runfolder.reader import read_run
from pingce.runfolder.records import write_records
from pingce.viewer import make_server, run_href

from .cli_run import loopback_pingce, run_pingce

EXAMPLES = Path(pingce.__file__).resolve().parent / "examples"
SHEET = EXAMPLES / "function_points" / "audit_sheet.csv"
RISK_SHEET = EXAMPLES / "contract_risk" / "audit_sheet.csv"


def _run(tmp_path: Path, suite: str, example: str, *extra: str) -> Path:
    data = tmp_path / f"{example}.jsonl"
    shutil.copy(EXAMPLES / example / "records.jsonl", data)
    out = tmp_path / f"run-{example}"
    done = run_pingce("run", suite, "--data", str(data), "--out", str(out), *extra)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def fp_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("audit-report"), "function-points", "function_points")


def _files(folder: Path) -> dict[str, str]:
    """Every file of the folder by name with the sha256 of its bytes."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def _copy(run: Path, tmp_path: Path) -> Path:
    folder = tmp_path / run.name
    shutil.copytree(run, folder)
    return folder


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _sheet_rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _write_sheet(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _check_recorded(folder: Path, before: dict[str, str], sheet: Path) -> dict[str, Any]:
    """The audit recorded in ``folder``: what changed, the marks, the report's section."""
    audit = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    after = _files(folder)
    assert set(after) == set(before) | {"audit.json", "audit.md"}
    for name in ("results.json", "stats.npz"):  # the run's numbers are the run's
        assert after[name] == before[name]
    rows = _lines(folder / "records.jsonl")
    marked = {r["line"]: r["audit"] for r in rows if "audit" in r}
    assert set(marked) == {v["line"] for v in audit["verified"]} and marked
    labels = {(r["a"], r["b"]): float(r["human"]) for r in _sheet_rows(sheet) if r["human"]}
    for entry in audit["verified"]:
        mark = marked[entry["line"]]
        assert mark["verified"] is True and mark["stratum"] == entry["stratum"]
        assert mark["pairs"] == entry["pairs"] and mark["pairs"]
        for pair in mark["pairs"]:
            assert pair["human"] == labels[(pair["a"], pair["b"])]
    # the marks are what the records.jsonl writer makes of the rows read back
    again = folder.parent / "again.jsonl"
    write_records(read_run(folder).records, again)
    assert again.read_bytes() == (folder / "records.jsonl").read_bytes()
    page = (folder / "report.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="audit">') : page.index('<section id="records">')]
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Audit of the judge by people" in report_md
    for name, m in audit["metrics"].items():
        if m["depends_on_judge"] and not m["measures_the_judge"]:
            shown = html.escape(fmt_number(m["value"]))
            assert f'<td class="num corrected"><b>{shown}</b></td>' in section, name
            interval = f"[{fmt_number(m['ci_low'])}, {fmt_number(m['ci_high'])}]"
            assert html.escape(interval) in section
            # beside the judge's value in the metrics table, and in report.md
            assert f"<b>{shown}</b> <small>{html.escape(interval)}</small>" in page
            assert f"| {fmt_number(m['value'])} | {interval} |" in report_md
        elif not m["depends_on_judge"]:
            assert f"<code>{html.escape(name)}</code>" in section.split("Unchanged")[1]
    agreement = audit["agreement"]
    assert f"labelled pairs: {agreement['pairs']}" in section
    if "accuracy" in agreement:  # a judge with a τ
        assert f"accuracy at τ: {fmt_number(agreement['accuracy'])}" in section
    return audit


def test_the_audit_is_recorded_in_the_run_folder(fp_run: Path, tmp_path: Path) -> None:
    folder = _copy(fp_run, tmp_path)
    before = _files(folder)
    original = (folder / "records.jsonl").read_bytes()
    done = run_pingce("audit", str(folder), "--labels", str(SHEET))
    assert done.returncode == 0, done.stderr
    assert f"recorded in the run's folder {folder}/" in done.stdout
    audit = _check_recorded(folder, before, SHEET)
    assert {v["id"] for v in audit["verified"]} == {r["id"] for r in _sheet_rows(SHEET)}
    # every line but the marked ones as it was, and those as they were up to their mark
    now = (folder / "records.jsonl").read_bytes().splitlines()
    for old, new in zip(original.splitlines(), now, strict=True):
        assert new == old or (new.startswith(old[:-1] + b',"audit":{') and new.endswith(b"}}"))
    # `pingce report RUN` draws the same page again from the folder
    page = (folder / "report.html").read_bytes()
    assert run_pingce("report", str(folder)).returncode == 0
    assert (folder / "report.html").read_bytes() == page

    # a second audit, of another draw (labelled: the shipped labels, else the judge's verdict),
    # replaces the first: its records marked, the first's marks gone
    other = tmp_path / "other.csv"
    done = run_pingce(
        "audit", "sample", str(folder), "--budget", "6", "--strata", "2", "--out", str(other)
    )
    assert done.returncode == 0, done.stderr
    shipped = {(r["a"], r["b"]): r["human"] for r in _sheet_rows(SHEET)}
    rows = _sheet_rows(other)
    for row in rows:
        row["human"] = shipped.get((row["a"], row["b"]), row["judge_verdict"])
    _write_sheet(other, rows)
    done = run_pingce("audit", str(folder), "--labels", str(other))
    assert done.returncode == 0, done.stderr
    second = _check_recorded(folder, before, other)
    assert {v["id"] for v in second["verified"]} == {r["id"] for r in rows}
    assert len(second["verified"]) == 6 and second != audit


def test_a_failed_audit_leaves_the_folder_byte_for_byte(fp_run: Path, tmp_path: Path) -> None:
    folder = _copy(fp_run, tmp_path)
    assert run_pingce("audit", str(folder), "--labels", str(SHEET)).returncode == 0
    before = _files(folder)
    rows = _sheet_rows(SHEET)
    rows[3]["human"] = "maybe"
    bad = _write_sheet(tmp_path / "bad.csv", rows)
    done = run_pingce("audit", str(folder), "--labels", str(bad))
    assert done.returncode == 2 and "'maybe' is not a label" in done.stderr
    assert _files(folder) == before
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]  # no staging left


def test_out_writes_elsewhere_and_leaves_the_run_alone(fp_run: Path, tmp_path: Path) -> None:
    folder = _copy(fp_run, tmp_path)
    before = _files(folder)
    elsewhere = tmp_path / "elsewhere"
    done = run_pingce("audit", str(folder), "--labels", str(SHEET), "--out", str(elsewhere))
    assert done.returncode == 0, done.stderr
    assert _files(folder) == before
    assert set(_files(elsewhere)) == {"audit.json", "audit.html", "audit.md"}
    helped = run_pingce("audit", "correct", "--help")
    assert "leave the run's folder as it is" in " ".join(helped.stdout.split())


def test_a_new_run_over_the_folder_removes_the_audit(fp_run: Path, tmp_path: Path) -> None:
    folder = _copy(fp_run, tmp_path)
    assert run_pingce("audit", str(folder), "--labels", str(SHEET)).returncode == 0
    data = tmp_path / "again.jsonl"
    shutil.copy(EXAMPLES / "function_points" / "records.jsonl", data)
    done = run_pingce("run", "function-points", "--data", str(data), "--out", str(folder))
    assert done.returncode == 0, done.stderr
    assert not (folder / "audit.json").exists() and not (folder / "audit.md").exists()
    assert b'"audit"' not in (folder / "records.jsonl").read_bytes()
    assert '<section id="audit">' not in (folder / "report.html").read_text(encoding="utf-8")


def test_the_python_api_records_when_asked(fp_run: Path, tmp_path: Path) -> None:
    folder = _copy(fp_run, tmp_path)
    before = _files(folder)
    result = pingce.audit(folder, SHEET)
    assert _files(folder) == before  # from Python, a result and nothing written
    pingce.audit(folder, SHEET, record=True)
    audit = _check_recorded(folder, before, SHEET)
    assert audit == json.loads(json.dumps(result.to_dict()))


def test_contract_risk_and_records_parquet(tmp_path: Path) -> None:
    folder = _run(tmp_path, "contract-risk", "contract_risk")
    before = _files(folder)
    done = run_pingce("audit", str(folder), "--labels", str(RISK_SHEET))
    assert done.returncode == 0, done.stderr
    audit = _check_recorded(folder, before, RISK_SHEET)
    assert len(audit["verified"]) == 4
    # a run that keeps its rows as records.parquet gets the marks there
    pytest.importorskip("pyarrow")
    (tmp_path / "pq").mkdir()
    parquet = _run(tmp_path / "pq", "contract-risk", "contract_risk", "--records", "parquet")
    done = run_pingce("audit", str(parquet), "--labels", str(RISK_SHEET))
    assert done.returncode == 0, done.stderr
    rows = read_run(parquet).records
    assert rows is not None
    marked = {
        int(line): mark
        for line, mark in zip(rows.lines, rows.audit["verified"], strict=True)
        if mark
    }
    assert set(marked) == {v["line"] for v in audit["verified"]}
    assert '<section id="audit">' in (parquet / "report.html").read_text(encoding="utf-8")


def _js(value: float) -> str:
    """A number as report.js shows it (four decimals, no trailing zeros)."""
    rounded = round(value * 1e4) / 1e4
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def test_the_viewer_shows_the_audit(browser: Any, tmp_path: Path) -> None:
    pingce_ = loopback_pingce(tmp_path)
    data = tmp_path / "records.jsonl"
    shutil.copy(EXAMPLES / "function_points" / "records.jsonl", data)
    folder = tmp_path / "run"
    done = pingce_("run", "function-points", "--data", str(data), "--out", str(folder))
    assert done.returncode == 0, done.stderr
    done = pingce_("audit", str(folder), "--labels", str(SHEET))
    assert done.returncode == 0, done.stderr
    audit = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    store = tmp_path / "runs.db"
    name = runs(store=store)[0].name
    served = make_server(store, port=0)
    thread = threading.Thread(target=served.serve_forever, daemon=True)
    thread.start()
    errors: list[str] = []
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(served.url)  # the list says which run was audited, and leads to its audit
        page.locator("small.audited a", has_text="audited by people").click()
        page.wait_for_selector("html[data-ready]", timeout=15_000)
        assert page.url == served.url.rstrip("/") + run_href(name) + "#audit"
        assert page.locator("a", has_text="audited by people").count() == 1
        table = page.locator("#audit table.audit tbody tr[data-metric]")
        assert table.count() == 3  # sem_precision, sem_recall, sem_f1
        f1 = page.locator('#audit tr[data-metric="sem_f1"] td.corrected').text_content()
        assert f1 == fmt_number(audit["metrics"]["sem_f1"]["value"])
        # the checked records marked in the list, and a filter for them
        assert page.locator("#r-body tr.rec.verified").count() == len(audit["verified"])
        page.locator("#f-verified").check()
        shown = page.locator("#r-body tr.rec")
        assert shown.count() == len(audit["verified"])
        assert shown.locator("span.checked").count() == len(audit["verified"])
        # a checked record shows the people's labels beside the judge's scores
        shown.first.click()
        labels = page.locator("tr.detail table.audit-labels tbody tr")
        first = audit["verified"][0]
        assert labels.count() == len(first["pairs"])
        cells = labels.first.locator("td").all_text_contents()
        pair = first["pairs"][0]
        assert cells[:2] == [pair["a"], pair["b"]]
        assert cells[2:] == [_js(pair["judge"]), _js(pair["human"])]
        shot = tmp_path / "audit.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        page.locator("#f-verified").uncheck()
        assert page.locator("#r-body tr.rec").count() == 20
        page.close()
    finally:
        served.shutdown()
        served.server_close()
        thread.join(5)
    assert errors == []


def test_a_dialogue_suite_marks_every_checked_turn(tmp_path: Path) -> None:
    """tcm-dialogue draws whole dialogues: every judged turn of a checked dialogue is marked
    (its records have no id: the line finds them)."""
    folder = _run(tmp_path, "tcm-dialogue", "tcm_dialogue")
    before = _files(folder)
    sheet = tmp_path / "sheet.csv"
    done = run_pingce(
        "audit", "sample", str(folder), "--budget", "4", "--strata", "2", "--out", str(sheet)
    )
    assert done.returncode == 0, done.stderr
    rows = _sheet_rows(sheet)
    for row in rows:  # a person who calls a match what the judge scores above one half
        row["human"] = str(int(float(row["judge_score"]) > 0.5))
    _write_sheet(sheet, rows)
    done = run_pingce("audit", str(folder), "--labels", str(sheet))
    assert done.returncode == 0, done.stderr
    audit = _check_recorded(folder, before, sheet)
    assert {v["line"] for v in audit["verified"]} == {int(r["line"]) for r in rows}
    assert all(v["id"] is None for v in audit["verified"])


def test_pingce_report_of_a_folder_with_a_broken_audit_json_says_so(
    fp_run: Path, tmp_path: Path
) -> None:
    folder = _copy(fp_run, tmp_path)
    (folder / "audit.json").write_text('{"metrics": {}}', encoding="utf-8")
    done = run_pingce("report", str(folder))
    assert done.returncode == 2 and "audit.json is not pingce audit's: no 'run'" in done.stderr
