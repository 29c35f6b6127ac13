"""Issue 13: ``pingce report RUN`` writes a stored run's report.html and report.md again from
its results.json and records.jsonl, by run name or folder, without evaluating anything."""

from __future__ import annotations

import json
from pathlib import Path

import pingce
from pingce.runfolder.reader import read_run
from tests.cli_run import run_pingce

EXAMPLE = Path(pingce.__file__).parent / "examples" / "function_points" / "records.jsonl"


def test_report_again_by_name_and_by_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    first = run_pingce(
        "run", "function-points", "--data", str(EXAMPLE), "--slice", "task",
        "--name", "fp-report-test", "--out", str(out), "--records-fields", "all",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    again = run_pingce("report", "fp-report-test", "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    # the same pages as the run wrote: same markdown, same html
    original_md = (out / "report.md").read_text(encoding="utf-8")
    assert (tmp_path / "again" / "report.md").read_text(encoding="utf-8") == original_md
    html = (tmp_path / "again" / "report.html").read_text(encoding="utf-8")
    assert html == (out / "report.html").read_text(encoding="utf-8")
    by_folder = run_pingce("report", str(out), "--out", str(tmp_path / "third"))
    assert by_folder.returncode == 0, by_folder.stderr
    assert (tmp_path / "third" / "report.md").read_text(encoding="utf-8") == original_md


def test_read_run_gives_the_records_back(tmp_path: Path) -> None:
    result = pingce.evaluate("function-points", EXAMPLE, bootstrap=0, out=tmp_path / "o")
    back = read_run(tmp_path / "o")
    assert back.metrics == result.metrics
    rows, original = back.records, result.records
    assert rows is not None and original is not None
    assert rows.ids == original.ids and rows.lines.tolist() == original.lines.tolist()
    lines = (tmp_path / "o" / "records.jsonl").read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        saved = json.loads(line)
        for name, value in saved["values"].items():
            got = rows.values[name][i]
            assert (value is None and got != got) or value == got, (i, name)


def test_an_unknown_run_is_an_error(tmp_path: Path) -> None:
    done = run_pingce("report", "no-such-run")
    assert done.returncode == 2 and "no-such-run" in done.stderr and "Traceback" not in done.stderr
    # with no run store at all (the first command of a new machine), the run is still named
    empty = tmp_path / "none" / "runs.db"
    done = run_pingce("report", "no-such-run", "--store", str(empty))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "no-such-run" in done.stderr and str(empty) in done.stderr


def test_report_again_of_a_comparison_folder(tmp_path: Path) -> None:
    compared = run_pingce(
        "compare", "function-points", "--data", str(EXAMPLE), "--baseline", str(EXAMPLE),
        "--bootstrap", "100", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    again = run_pingce("report", str(tmp_path / "c"), "--out", str(tmp_path / "again"))
    assert again.returncode == 0, again.stderr
    original = (tmp_path / "c" / "comparison.md").read_text(encoding="utf-8")
    assert (tmp_path / "again" / "comparison.md").read_text(encoding="utf-8") == original
    saved = json.loads((tmp_path / "c" / "comparison.json").read_text(encoding="utf-8"))
    page = (tmp_path / "again" / "comparison.html").read_text(encoding="utf-8")
    for name in saved["metrics"]:
        assert name in page
