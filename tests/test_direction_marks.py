"""A metric's direction mark (↑ higher is better, ↓ lower is better) beside it in every output:
one home for its text and words (:mod:`pingce.report.format`), report.md and comparison.md (a
legend under each table), the console at 80 columns (a caption), comparison.html (its metrics
table, its flipped records, its records side by side); no mark where the direction is not known,
never a guessed one. report.html's are tests/test_report_records.py's, the viewer's
tests/test_view.py's."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

import pingce
from pingce.report import print_comparison, print_result, write_comparison
from pingce.report.format import BETTER, direction_legend, direction_mark, marked
from pingce.report.markdown import render_comparison_markdown, render_markdown
from pingce.report.page import direction
from pingce.results import EvaluationResult

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ROOT / "examples" / "contract_risk" / "records.jsonl"
UP = '<span class="better" title="higher is better" aria-label="higher is better">↑</span>'
DOWN = '<span class="better" title="lower is better" aria-label="lower is better">↓</span>'


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CONTRACTS.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def run() -> EvaluationResult:
    return pingce.evaluate("contract-risk", CONTRACTS, bootstrap=0, slices=["contract_type"])


@pytest.fixture(scope="module")
def comparison() -> Any:
    old = [dict(r, pred_level="低") if r["pred_level"] == "中" else r for r in records()]
    for r in old:  # slower, so that a lower-is-better metric changed too
        r["latency_sec"] = r["latency_sec"] + 1.0
    return pingce.compare("contract-risk", CONTRACTS, old, bootstrap=200)


def test_one_home_for_the_mark_and_its_words() -> None:
    assert BETTER == {True: ("↑", "higher is better"), False: ("↓", "lower is better")}
    assert [direction_mark(h) for h in (True, False, None)] == ["↑", "↓", ""]
    assert marked("qwk", True) == "qwk ↑" and marked("p95", False) == "p95 ↓"
    assert marked("own", None) == "own"  # not known: no mark
    assert direction_legend([True, None, True]) == "↑ higher is better"
    assert direction_legend([False, True]) == "↑ higher is better, ↓ lower is better"
    assert direction_legend([None]) == ""
    assert (direction(True), direction(False), direction(None)) == (UP, DOWN, "")


def test_report_md_marks_every_metric_and_says_what_the_marks_mean(run: EvaluationResult) -> None:
    text = render_markdown(run)
    for name, m in run.metrics.items():
        mark = "↑" if m.higher_is_better else "↓"
        assert f"| `{name}` {mark} | {m.value:.4f} |" in text, name  # the metrics table
        assert text.count(f"| `{name}` {mark} |") == 3, name  # and the slice tables (4 values)
    assert "_↑ higher is better, ↓ lower is better_" in text
    # a results.json written before directions were recorded: no mark, no legend
    old = run.model_copy(
        update={
            "metrics": {
                k: m.model_copy(update={"higher_is_better": None}) for k, m in run.metrics.items()
            }
        }
    )
    table = render_markdown(old).split("## Metrics")[1].split("## Tables")[0]
    assert "| `accuracy` | 0.8333 |" in table and "↑" not in table and "better" not in table


def test_comparison_md_marks_every_metric(comparison: Any) -> None:
    text = render_comparison_markdown(comparison)
    assert re.search(r"^\| `accuracy` ↑ \| 0\.8333 \|", text, re.M)
    assert re.search(r"^\| `avg_latency_sec` ↓ \| ", text, re.M)
    assert "_↑ higher is better, ↓ lower is better_" in text


def printed(show: Any, result: Any) -> list[str]:
    out = io.StringIO()
    show(result, Console(file=out, width=80, color_system=None, legacy_windows=False))
    return out.getvalue().splitlines()


def test_the_console_marks_every_metric_at_80_columns(
    run: EvaluationResult, comparison: Any
) -> None:
    lines = printed(print_result, run)
    text = "\n".join(lines)
    for name, m in run.metrics.items():
        mark = "↑" if m.higher_is_better else "↓"
        assert text.count(f"│ {name} {mark} ") == 2, name  # the metrics table, the slices'
    captions = [line.rstrip() for line in lines if "is better" in line]
    assert captions == ["↑ higher is better, ↓ lower is better"] * 2  # each table's caption
    lines = printed(print_comparison, comparison)
    text = "\n".join(lines)
    assert "│ accuracy ↑ " in text and "│ avg_latency_sec ↓ " in text
    assert "↑ higher is better, ↓ lower is better" in [line.rstrip() for line in lines]
    for show, result in ((print_result, run), (print_comparison, comparison)):
        assert all(cell_len(line) <= 80 for line in printed(show, result))


def test_comparison_html_marks_every_metric(comparison: Any, tmp_path: Path) -> None:
    write_comparison(comparison, tmp_path)
    text = (tmp_path / "comparison.html").read_text(encoding="utf-8")
    metrics = text[text.index('<section id="metrics">') : text.index('<section id="flipped">')]
    for name, m in comparison.metrics.items():
        mark = UP if m.higher_is_better else DOWN
        assert f'<th scope="row"><code>{name}</code>{mark}</th>' in metrics, name
    assert "is better</small>" not in text  # the words are the mark's title now
    assert f"<summary><code>accuracy</code>{UP}: " in text  # the records that flipped
    pairs = text[text.index('<section id="pairs">') :]
    assert f'<th scope="row"><code>accuracy</code>{UP}</th>' in pairs  # counts by status
    assert '<option value="0">accuracy ↑</option>' in pairs  # the filter by metric
