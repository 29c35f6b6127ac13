"""report.html at 100,000 records: written in under 3 s, opened by Chromium in under 2 s (issue 13).

1. As users run it: ``pingce run SUITE --data FILE --out DIR --bootstrap 0 --profile`` in a child
   process (the ``write`` phase writes results.json, records.jsonl, report.md and report.html).
2. report.html alone, in this process: :func:`pingce.report.html.write_html` of the run's result
   (what ``pingce run`` calls), median of 5.
3. Opening it: Debian's chromium driven by Playwright (``--no-sandbox``,
   ``--disable-background-networking``), a fresh page each time: wall time from ``goto`` to the
   page's script having rendered the first page of records (median of 3, the first cold), and
   the page's own navigation timings; then, inside the page, the time of each filter over all
   records (misses only, a reason, a slice value, a text search, the next page), of sorting
   them (by a metric, again the other way, by a text field, by the latency column's head) and
   of opening a record's detail view.

Checked: the page holds every record (its embedded JSON's ``n``), shows the first 50, its
count of records that missed equals records.jsonl's, and a click opens one record.

Data: seeded records (id, gold and predicted level, latency, a contract type, a Chinese answer
and reference), a suite of accuracy, weighted accuracy, macro-F1, QWK, latency and ROUGE-L.

Run: ``.venv/bin/python benchmarks/bench_report_html.py [records]``.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, out_dir, print_checks, print_table, run_cli, save_and_exit
from _data import data_file, write_yaml

sys.path.insert(0, str(ROOT))
from tests._browser import MISSING, browser_available, chromium

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
WRITE_TARGET_S = 3.0
OPEN_TARGET_S = 2.0
LEVELS = ["高", "中", "低"]
SUITE = """\
name: report-html-bench
id_field: id
labels:
  values: [高, 中, 低]
inputs:
  gold: gold_level
  pred: pred_level
  latency: latency_sec
metrics:
  accuracy: {}
  weighted_accuracy: {}
  macro_f1: {}
  qwk: {}
  avg_latency_sec: {}
  text_rouge_l: {pred: answer, gold: reference}
tables:
  confusion_matrix: {}
  per_class: {}
"""


def records_file(n: int) -> Path:
    def lines() -> Iterable[dict[str, Any]]:
        rng = np.random.default_rng(13)
        gold = rng.integers(0, 3, size=n)
        pred = np.where(rng.random(n) < 0.75, gold, rng.integers(0, 3, size=n))
        latency = np.round(rng.lognormal(1.2, 0.35, size=n), 3)
        for i in range(n):
            yield {
                "id": f"r{i}",
                "gold_level": LEVELS[gold[i]],
                "pred_level": LEVELS[pred[i]],
                "latency_sec": float(latency[i]),
                "contract_type": f"类型{i % 7}",
                "answer": f"甲方应当在{i % 90 + 1}日内支付货款，逾期按日万分之五支付违约金",
                "reference": "甲方应当在三十日内支付全部货款，逾期按日万分之五支付违约金",
            }

    return data_file(f"report_html_{n}.jsonl", lines)


FILTERS = """async () => {
  const $ = (id) => document.getElementById(id);
  const time = (fn) => { const t = performance.now(); fn(); return performance.now() - t; };
  const fire = (id, type) => $(id).dispatchEvent(new Event(type));
  const out = {};
  out.misses_only = time(() => { $("f-misses").checked = true; fire("f-misses", "change"); });
  out.misses_info = $("p-info").textContent;
  out.reason = time(() => { $("f-reason").value = "predicted 低"; fire("f-reason", "change"); });
  $("f-misses").checked = false; $("f-reason").value = "";
  out.slice = time(() => { $("f-slice").selectedIndex = 2; fire("f-slice", "change"); });
  $("f-slice").selectedIndex = 0;
  out.search_first = time(() => { $("f-search").value = "r4242"; fire("f-search", "change"); });
  out.search_again = time(() => { $("f-search").value = "r99"; fire("f-search", "change"); });
  $("f-search").value = ""; fire("f-search", "change");
  out.next_page = time(() => $("p-next").click());
  out.rows = document.querySelectorAll("#r-body tr[data-index]").length;
  const sortBy = (key) => { $("s-by").value = key; fire("s-by", "change"); };
  out.sort_metric = time(() => sortBy("v:text_rouge_l"));
  out.sort_metric_again = time(() => $("s-dir").click());
  out.sort_text = time(() => sortBy("f:answer"));
  out.sort_latency = time(() => document.querySelector("th[data-col='m:latency'] button").click());
  sortBy("");
  out.open_record = time(() => document.querySelector("#r-body tr.rec").click());
  out.detail_shown = document.querySelectorAll("#r-body tr.detail").length;
  return out;
}"""


def open_in_chromium(path: Path, repeat: int = 3) -> dict[str, Any]:
    if not browser_available():
        raise SystemExit(MISSING)
    opens, navigations, filters = [], [], []
    with chromium() as browser:
        for _ in range(repeat):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            started = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_selector("html[data-ready]", timeout=60_000)
            opens.append(time.perf_counter() - started)
            navigations.append(
                page.evaluate(
                    "(() => { const n = performance.getEntriesByType('navigation')[0];"
                    " return {response_end: n.responseEnd, dom_interactive: n.domInteractive,"
                    " load_end: n.loadEventEnd}; })()"
                )
            )
            filters.append(page.evaluate(FILTERS))
            page.close()
    return {
        "open_s": opens,
        "open_median_s": statistics.median(opens),
        "navigation_ms": navigations[-1],
        "filters_ms": {
            k: statistics.median(f[k] for f in filters)
            for k in filters[0]
            if isinstance(filters[0][k], float | int) and k not in ("rows", "detail_shown")
        },
        "rows_after_next": filters[-1]["rows"],
        "details_opened": filters[-1]["detail_shown"],
        "misses_info": filters[-1]["misses_info"],
    }


def main() -> None:
    from pingce import evaluate
    from pingce.report.html import write_html

    info = machine(["playwright"])
    data = records_file(N)
    suite = write_yaml("report_html_suite.yaml", SUITE)
    print(f"data: {data} ({N:,} records)", flush=True)
    out = out_dir("report_html", "run")
    run = run_cli(
        f"`pingce run` ({N:,} records, --bootstrap 0)",
        # every record embedded (issue 32 bounds the page to 2,000 by default)
        [
            *["run", suite, "--data", data, "--bootstrap", "0", "--slice", "contract_type"],
            *["--report-records", str(N)],
        ],
        out=out,
    )
    page = out / "report.html"
    size_mb = page.stat().st_size / 1e6

    result = evaluate(suite, data, bootstrap=0, slices=["contract_type"])
    writes = []
    target = out_dir("report_html", "alone.html")
    for _ in range(5):
        started = time.perf_counter()
        write_html(result, target, bound=N)
        writes.append(time.perf_counter() - started)
    write_s = statistics.median(writes)

    opened = open_in_chromium(page)

    text = page.read_text(encoding="utf-8")
    block = re.search(r'id="pingce-data">(.*?)</script>', text, re.S)
    embedded = json.loads(block.group(1)) if block else {}
    missed = sum(1 for row in run.records() if row.get("misses"))
    shown = re.search(r"of ([\d,]+) \(filtered", opened["misses_info"])
    problems = []
    if embedded.get("n") != N:
        problems.append(f"the page holds {embedded.get('n')} records, not {N}")
    if shown is None or int(shown.group(1).replace(",", "")) != missed:
        problems.append(f"misses only shows {opened['misses_info']!r}; records.jsonl: {missed}")
    if opened["rows_after_next"] != 50:
        problems.append(f"{opened['rows_after_next']} rows on a page, not 50")
    if opened["details_opened"] != 1:
        problems.append(f"a click opened {opened['details_opened']} records, not 1")

    print_table(
        ["what", "seconds", "target"],
        [
            ["`pingce run`, wall", f"{run.wall_s:.2f}", ""],
            ["`pingce run`, write phase (all four files)", f"{run.phases.get('write', 0):.2f}", ""],
            ["report.html alone (write_html, median of 5)", f"{write_s:.3f}", "< 3"],
            [
                "Chromium: open to first page drawn (median of 3)",
                f"{opened['open_median_s']:.3f}",
                "< 2",
            ],
        ],
        title=f"report.html, {N:,} records, {size_mb:.1f} MB",
    )
    print_table(
        ["in the page", "ms"],
        [[k, f"{v:.1f}"] for k, v in opened["filters_ms"].items()]
        + [[f"navigation: {k}", f"{v:.0f}"] for k, v in opened["navigation_ms"].items()],
        title="Chromium (median of 3 pages)",
    )
    print_checks(
        [run],
        problems,
        "checked: the page holds every record, shows 50 a page, and counts the records that "
        "missed as records.jsonl does",
    )
    met = write_s < WRITE_TARGET_S and opened["open_median_s"] < OPEN_TARGET_S
    print(
        f"targets (write < {WRITE_TARGET_S} s, open < {OPEN_TARGET_S} s): "
        f"{'met' if met else 'NOT met'}"
    )
    save_and_exit(
        "bench_report_html",
        {
            "machine": info,
            "records": N,
            "file_mb": size_mb,
            "cli": run.summary(),
            "render_and_write_s": writes,
            "render_and_write_median_s": write_s,
            "chromium": opened,
            "targets_met": met,
        },
        problems,
    )


if __name__ == "__main__":
    main()
