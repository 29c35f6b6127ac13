"""Benchmark: the function-call suite against the seed's own pipeline, same data, same run.

100,000 records of realistic size (1-3 calls of 2-6 arguments, mostly Chinese values; generated
with a seed into ``benchmarks/data/``) are scored twice:

1. the seed's ``fc_score`` pipeline (tests/fc_reference.py: the seed's code on jieba, the
   ``rouge`` package and nltk, record by record), after reading the JSONL with ``json``;
2. ``pingce.evaluate("function-call", path, bootstrap=0)`` in a fresh interpreter (so nothing the
   seed's run warmed up is reused).

The numbers must be identical: every metric's mean rounded to 5 decimals as the seed prints it,
the unrounded means and every record's values to 1e-9. jieba's segmentation alone is timed
separately (``list(jieba.cut(text))`` over every serialised text the seed segments).

Run with ``make bench`` (or ``.venv/bin/python benchmarks/bench_function_call.py [N]``).
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fc_data import realistic_records  # noqa: E402
from tests.fc_reference import METRICS, fc_reference  # noqa: E402

N = 100_000
SEED = 0
TOL = 1e-9
DATA_DIR = Path(__file__).parent / "data"

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import pingce
t1 = time.perf_counter()
result = pingce.evaluate("function-call", sys.argv[1], bootstrap=0)
t2 = time.perf_counter()
names = sys.argv[3].split(",")
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    for row in result.record_values_iter():
        handle.write(json.dumps([row["id"]] + [row["values"][m] for m in names]) + "\n")
print(json.dumps({
    "import_s": t1 - t0,
    "evaluate_s": t2 - t1,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "means": {m: result.metrics[m].value for m in names},
    "n_records": result.n_records,
    "failures": result.failures.model_dump(),
}))
"""


def data_file(n: int, seed: int = SEED) -> Path:
    """The benchmark's JSONL (created on first use)."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / f"function_call_{n}_{seed}.jsonl"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in realistic_records(n, seed=seed):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.rename(path)
    return path


def run_pingce(path: Path) -> tuple[dict[str, Any], list[list[Any]]]:
    """``pingce.evaluate`` in a fresh interpreter: its timings, means and per-record values."""
    with tempfile.TemporaryDirectory() as tmp:
        values_path = Path(tmp) / "values.jsonl"
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), str(values_path), ",".join(METRICS)],
            check=True,
            capture_output=True,
            text=True,
        )
        with open(values_path, encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle]
    return dict(json.loads(out.stdout.strip().splitlines()[-1])), rows


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else N
    path = data_file(n)
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {n:,} records)", flush=True)

    # 1. pingce, fresh process
    ours, rows = run_pingce(path)
    print(
        f"pingce: evaluate {ours['evaluate_s']:.2f} s (+ import {ours['import_s']:.2f} s), "
        f"peak RSS {ours['peak_rss_mb']:.0f} MB",
        flush=True,
    )

    # 2. the seed's pipeline in this process
    import jieba

    jieba.setLogLevel(logging.WARNING)
    t = time.perf_counter()
    jieba.initialize()
    seed_init = time.perf_counter() - t
    t = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    seed_load = time.perf_counter() - t
    t = time.perf_counter()
    reference = fc_reference(records)
    seed_score = time.perf_counter() - t
    seed_total = seed_init + seed_load + seed_score
    print(
        f"seed:   fc_score {seed_score:.1f} s (+ json load {seed_load:.2f} s, jieba init "
        f"{seed_init:.2f} s)",
        flush=True,
    )

    # jieba alone: every text the seed segments (gold and prediction of each record)
    texts = [t for r in reference.records for t in (r.pred_text, r.gold_text)]
    t = time.perf_counter()
    n_words = sum(len(list(jieba.cut(text))) for text in texts)
    jieba_s = time.perf_counter() - t
    print(
        f"jieba:  list(jieba.cut) over {len(texts):,} texts ({n_words:,} words): {jieba_s:.1f} s "
        f"= {jieba_s / seed_score:.0%} of the seed's scoring time; "
        f"{len(set(texts)):,} distinct texts",
        flush=True,
    )

    # 3. identical numbers
    problems: list[str] = []
    if ours["n_records"] != n or len(rows) != n:
        problems.append(f"pingce scored {ours['n_records']} records ({len(rows)} rows), not {n}")
    for name in METRICS:
        value = ours["means"][name]
        if abs(value - reference.means[name]) > TOL:
            problems.append(f"mean {name}: pingce {value!r}, seed {reference.means[name]!r}")
        if round(value, 5) != reference.summary[name]:
            problems.append(
                f"summary {name}: pingce {round(value, 5)!r}, seed {reference.summary[name]!r}"
            )
    bad_records = 0
    for record, row, ref in zip(records, rows, reference.records, strict=False):
        if row[0] != record["id"]:
            problems.append(f"record order: {row[0]!r} where {record['id']!r} belongs")
            break
        wrong = [
            f"{name} pingce {got!r} seed {ref.values[name]!r}"
            for name, got in zip(METRICS, row[1:], strict=True)
            if abs(got - ref.values[name]) > TOL
        ]
        if wrong:
            bad_records += 1
            if bad_records <= 5:
                problems.append(f"record {record['id']}: " + "; ".join(wrong))
    if bad_records:
        problems.append(f"{bad_records} record(s) differ")
    empty = ours["failures"].get("empty_text")
    if empty != reference.rouge_raised:
        problems.append(f"empty_text {empty}, seed's rouge raised on {reference.rouge_raised}")

    print("seed summary:  ", reference.summary)
    print("pingce rounded:", {"eval_size": n, **{m: round(ours["means"][m], 5) for m in METRICS}})
    pingce_total = ours["evaluate_s"]
    summary = {
        "n_records": n,
        "seed_score_s": seed_score,
        "seed_json_load_s": seed_load,
        "seed_jieba_init_s": seed_init,
        "seed_total_s": seed_total,
        "jieba_cut_s": jieba_s,
        "pingce_evaluate_s": pingce_total,
        "pingce_import_s": ours["import_s"],
        "pingce_peak_rss_mb": ours["peak_rss_mb"],
        "speedup_end_to_end": seed_total / pingce_total,
        "speedup_vs_jieba_alone": jieba_s / pingce_total,
        "identical": not problems,
    }
    print(json.dumps(summary, indent=2))
    print(
        f"end to end: seed {seed_total:.1f} s, pingce {pingce_total:.2f} s -> pingce "
        f"{seed_total / pingce_total:.1f}x faster (target >= 10x)"
    )
    if problems:
        print("MISMATCH between pingce and the seed:\n  " + "\n  ".join(problems))
        raise SystemExit(1)
    print("numbers identical: rounded to 5 like the seed, and unrounded to 1e-9 per record")


if __name__ == "__main__":
    main()
