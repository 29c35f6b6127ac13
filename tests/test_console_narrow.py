"""The console at 80 columns (:mod:`pingce.report.console`): a note is one line, cut at the
width; a metric computed over no record (its field absent from the data) has no null row but a
place in one line saying why; a comparison prints the metrics that changed, then one line for
the unchanged ones."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.console import Console

import pingce
from pingce.report import print_comparison, print_result

ROOT = Path(__file__).resolve().parent.parent
CONTRACTS = ROOT / "examples" / "contract_risk" / "records.jsonl"


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CONTRACTS.read_text(encoding="utf-8").splitlines()]


def printed(show: Any, result: Any, **keywords: Any) -> list[str]:
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None, legacy_windows=False)
    show(result, console, **keywords)
    return out.getvalue().splitlines()


def test_metrics_whose_field_the_data_lacks_are_one_line_not_null_rows() -> None:
    data = [{k: v for k, v in r.items() if k != "latency_sec"} for r in records()]
    result = pingce.evaluate("contract-risk", data, bootstrap=0)
    lines = printed(print_result, result)
    latency = [name for name in result.metrics if "latency" in name]
    assert len(latency) == 4 and all(result.metrics[n].value is None for n in latency)
    table = [line for line in lines if line.startswith("│")]
    assert not any(name in line for line in table for name in latency)
    assert not any(" null " in line for line in table)
    text = "\n".join(lines)
    start = text.index("left out, 4 metric(s) computed over no record:")
    said = " ".join(text[start:].split("\n")[:3])
    assert ", ".join(latency) + " (no record has latency_sec)" in said
    assert all(cell_len(line) <= 80 for line in lines)
    # the report files keep them, null with the reason
    assert all(m.undefined_reason for n, m in result.metrics.items() if n in latency)


def test_a_comparison_prints_what_changed_and_one_line_for_the_rest() -> None:
    old = [
        dict(r, pred_level="低") if r["pred_level"] == "中" else r for r in records()
    ]  # the tutorial's baseline: every 中 predicted 低
    result = pingce.compare("contract-risk", CONTRACTS, old, bootstrap=200)
    lines = printed(print_comparison, result)
    same = [name for name, m in result.metrics.items() if m.delta == 0]
    changed = [name for name in result.metrics if name not in same]
    assert same and changed
    text = "\n".join(lines)
    for name in changed:
        assert f"│ {name} " in text
    for name in same:
        assert f"│ {name} " not in text and f"  {name}: " not in text
    start = text.index(f"unchanged (the same value on both sides), {len(same)} metric(s): ")
    assert " ".join(text[start:].split()).count(", ") >= len(same) - 1
    verdicts = [line for line in lines if line.startswith("  ") and ": " in line]
    assert {line.split(":")[0].strip() for line in verdicts} == {
        n for n in changed if result.metrics[n].verdict
    }
    assert all(cell_len(line) <= 80 for line in lines)
    assert any(line.endswith("…") for line in verdicts)  # a verdict cut, whole in comparison.md
    assert lines[-1] == "(the lines cut are whole in comparison.md, written with --out)"
    written = printed(print_comparison, result, written="out/comparison.md")
    assert written[-1] == "(the lines cut are whole in out/comparison.md)"
