"""Benchmark: the function-call suite through the CLI against the seed's own pipeline, same data,
same run (issue 10).

Records of realistic size (1-3 calls of 2-6 arguments, mostly Chinese values, about half the
predictions exactly right: ``tests/fc_data.py:realistic_records(n, seed=0, exact_share=0.5)``)
are scored by:

1. ``pingce run function-call --data FILE --out DIR --profile`` in a fresh interpreter, end to end
   (start-up, load, validate, parse, score, 1,000 bootstrap resamples, results.json,
   records.jsonl and report.md), before and after the seed's run (the machine is shared: the two
   runs bracket the seed's);
2. the seed's pipeline in this process: jieba's dictionary load, ``json.loads`` of each line and
   ``fc_score`` (tests/fc_reference.py: the seed's code on jieba, the ``rouge`` package and nltk,
   record by record).

The numbers must be identical: every record's six seed values to 1e-9 (records.jsonl), the means
(results.json) to 1e-9 and rounded to 5 decimals as the seed prints them, and
``failures.empty_text`` equal to the records on which the ``rouge`` package raised.

Run: ``.venv/bin/python benchmarks/bench_function_call.py [N ...]`` (default 100000). Data go to
``$PINGCE_BENCH_DATA`` (default ``benchmarks/data/``). ``--pingce-only`` skips the seed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fc_data import realistic_records  # noqa: E402
from tests.fc_reference import METRICS, Reference, fc_reference  # noqa: E402

N = 100_000
SEED = 0
EXACT_SHARE = 0.5
TOL = 1e-9
DATA_DIR = Path(os.environ.get("PINGCE_BENCH_DATA", Path(__file__).parent / "data"))
PHASE = re.compile(r"│\s*(\w+)\s*│\s*([0-9.]+)\s*│")
GNU_TIME = "/usr/bin/time"


def data_file(n: int) -> Path:
    """The benchmark's JSONL (created on first use)."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / f"function_call_{n}_{SEED}_exact{EXACT_SHARE}.jsonl"
    if path.exists():
        return path
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for record in realistic_records(n, seed=SEED, exact_share=EXACT_SHARE):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.rename(path)
    return path


def load_average() -> float:
    return os.getloadavg()[0]


def run_cli(path: Path, out: Path) -> dict[str, Any]:
    """``pingce run`` in a fresh interpreter: wall time, seconds per phase, peak RSS (with GNU
    time, which starts pingce from a small process: a child forked from this one, which holds
    the seed's data, would report this process's memory as its own peak)."""
    command = [sys.executable, "-m", "pingce", "run", "function-call", "--data", str(path)]
    command += ["--out", str(out), "--profile", "--quiet", "--no-progress"]
    if os.path.exists(GNU_TIME):
        command = [GNU_TIME, "-f", "peak_rss_kb %M", *command]
    before = load_average()
    start = time.perf_counter()
    proc = subprocess.run(command, check=True, capture_output=True, text=True, encoding="utf-8")
    wall = time.perf_counter() - start
    phases = {m.group(1): float(m.group(2)) for m in PHASE.finditer(proc.stdout + proc.stderr)}
    peak = re.search(r"peak_rss_kb (\d+)", proc.stderr)
    return {
        "wall_s": wall,
        "phases": phases,
        "peak_rss_mb": int(peak.group(1)) / 1024 if peak else None,
        "load_before": before,
        "load_after": load_average(),
    }


def run_seed(path: Path) -> tuple[dict[str, float], list[dict[str, Any]], Reference]:
    """The seed's pipeline in this process: jieba init, json.loads of each line, fc_score."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    timings = {"load_before": load_average()}
    start = time.perf_counter()
    jieba.initialize()
    timings["jieba_init_s"] = time.perf_counter() - start
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle]
    timings["json_load_s"] = time.perf_counter() - start
    start = time.perf_counter()
    reference = fc_reference(records)
    timings["fc_score_s"] = time.perf_counter() - start
    timings["total_s"] = timings["jieba_init_s"] + timings["json_load_s"] + timings["fc_score_s"]
    timings["load_after"] = load_average()
    return timings, records, reference


def mismatches(out: Path, records: list[dict[str, Any]], reference: Reference) -> list[str]:
    """Differences between pingce's output files and the seed's values."""
    problems: list[str] = []
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for name in METRICS:
        value = results["metrics"][name]["value"]
        if abs(value - reference.means[name]) > TOL:
            problems.append(f"mean {name}: pingce {value!r}, seed {reference.means[name]!r}")
        if round(value, 5) != reference.summary[name]:
            problems.append(f"summary {name}: {round(value, 5)!r} vs {reference.summary[name]!r}")
    if results["failures"]["empty_text"] != reference.rouge_raised:
        problems.append(
            f"empty_text {results['failures']['empty_text']}, the rouge package raised on "
            f"{reference.rouge_raised}"
        )
    bad = 0
    with open(out / "records.jsonl", encoding="utf-8") as handle:
        for record, line, ref in zip(records, handle, reference.records, strict=True):
            row = json.loads(line)
            if row["id"] != record["id"]:
                return [*problems, f"record order: {row['id']!r} where {record['id']!r} belongs"]
            wrong = [m for m in METRICS if abs(row["values"][m] - ref.values[m]) > TOL]
            if wrong:
                bad += 1
                if bad <= 5:
                    problems.append(f"record {record['id']}: {wrong}")
    if bad:
        problems.append(f"{bad} record(s) differ")
    return problems


def bench(n: int, with_seed: bool) -> dict[str, Any]:
    path = data_file(n)
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {n:,} records)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        runs = [run_cli(path, out)]
        print(f"pingce: {runs[0]['wall_s']:.2f} s {runs[0]['phases']}", flush=True)
        summary: dict[str, Any] = {"n_records": n, "exact_share": EXACT_SHARE}
        if with_seed:
            seed, records, reference = run_seed(path)
            print(f"seed:   {seed['total_s']:.1f} s {seed}", flush=True)
            problems = mismatches(out, records, reference)
            summary["seed"] = seed
            summary["seed_summary"] = reference.summary
            del records, reference
        runs.append(run_cli(path, out))
        print(f"pingce: {runs[1]['wall_s']:.2f} s {runs[1]['phases']}", flush=True)
    walls = [r["wall_s"] for r in runs]
    summary.update({"pingce_runs": runs, "pingce_wall_s": statistics.median(walls)})
    if with_seed:
        summary["ratio"] = summary["seed"]["total_s"] / summary["pingce_wall_s"]
        summary["identical"] = not problems
        print(
            f"{n:,} records: seed {summary['seed']['total_s']:.1f} s, pingce "
            f"{summary['pingce_wall_s']:.2f} s (runs {', '.join(f'{w:.2f}' for w in walls)}) "
            f"-> pingce {summary['ratio']:.1f}x faster (target >= 10x)",
            flush=True,
        )
        if problems:
            print("MISMATCH between pingce and the seed:\n  " + "\n  ".join(problems))
        else:
            print("numbers identical: per record to 1e-9, means rounded to 5 like the seed")
    return summary


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    with_seed = "--pingce-only" not in sys.argv[1:]
    sizes = [int(a) for a in args] or [N]
    summaries = [bench(n, with_seed) for n in sizes]
    print(json.dumps(summaries, indent=2))
    if any(s.get("identical") is False for s in summaries):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
