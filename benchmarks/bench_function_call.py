"""Benchmark: ``pingce run function-call`` against the reference's pipeline, same data, same run.

Records of realistic size (1-3 calls of 2-6 arguments, mostly Chinese values), generated with
seed 0 by ``tests/fc_data.py:realistic_records(n, exact_share=0.5)`` into ``benchmarks/data/``:
about half the predictions are exactly right, the rest carry a wrong value, a wrong name, a
missing argument, a missing call, calls in another order or nothing (the script prints the mix
it drew and what is in the file). At each size (default 50,000 and 100,000):

1. pingce as users run it: ``pingce run function-call --data FILE --out DIR --profile``, a child
   process timed from outside (wall clock, peak RSS, seconds per phase), with the default 1,000
   bootstrap resamples, and again with ``--bootstrap 0`` (the cost of the intervals);
2. the reference's pipeline in this process: import jieba, ``rouge`` and nltk, load jieba's
   dictionary, ``json.loads`` every line, then ``tests/fc_reference.py`` (its ``fc_score``
   code, record by record). The imports and the dictionary load are paid once per process and
   counted at every size.

The numbers must be identical, read from the files pingce wrote: every metric's mean in
results.json rounded to 5 decimals as the reference prints it, the unrounded means and every
record's six values in records.jsonl to 1e-9, and ``failures.empty_text`` equal to the number
of records on which the ``rouge`` package raised. At the largest size jieba's segmentation alone
is timed too (``list(jieba.cut(text))`` over every serialised text the reference segments).

Run: ``.venv/bin/python benchmarks/bench_function_call.py [N ...]`` (validate small, e.g. 2000).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, CliRun, machine, out_dir, phase_lines, print_table, run_cli, save_summary
from _data import data_file

sys.path.insert(0, str(ROOT))
from tests.fc_data import REALISTIC_ERRORS, realistic_records

SIZES = [int(a) for a in sys.argv[1:]] or [50_000, 100_000]
SEED = 0
EXACT_SHARE = 0.5
TOL = 1e-9
TARGET = 10.0
KINDS = ["exact", *(name for name, _ in REALISTIC_ERRORS)]


def fc_file(n: int) -> Path:
    tag = f"{round(EXACT_SHARE * 100)}"
    return data_file(
        f"function_call_{n}_{SEED}_exact{tag}.jsonl",
        lambda: realistic_records(n, seed=SEED, exact_share=EXACT_SHARE),
    )


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def kind(record: dict[str, Any]) -> str:
    """What is wrong with a record's prediction, read from the record itself."""
    gold, pred = record["gold_fn"], record["pred_fn"]
    if _text(pred) == _text(gold):
        return "exact"
    if not pred:
        return "empty"
    if len(pred) < len(gold):
        return "missing_call"
    if sorted(map(_text, pred)) == sorted(map(_text, gold)):
        return "shuffled_calls"
    if [c["name"] for c in pred] != [c["name"] for c in gold]:
        return "wrong_name"
    if any(set(p["arguments"]) != set(g["arguments"]) for p, g in zip(pred, gold, strict=True)):
        return "missing_argument"
    return "wrong_value"


def data_mix(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Shares drawn by the generator and shares found in the records, per kind."""
    drawn = {"exact": EXACT_SHARE}
    drawn.update({name: (1 - EXACT_SHARE) * share for name, share in REALISTIC_ERRORS})
    found = Counter(kind(r) for r in records)
    return {k: {"drawn": drawn[k], "in_data": found.get(k, 0) / len(records)} for k in KINDS}


def check(
    run: CliRun, records: list[dict[str, Any]], reference: Any, per_record: bool
) -> list[str]:
    """Differences between what pingce wrote and the reference's numbers (empty when identical)."""
    from tests.fc_reference import METRICS

    n = len(records)
    results = run.results()
    problems: list[str] = []
    if results["n_records"] != n:
        problems.append(f"pingce scored {results['n_records']} records, not {n}")
    for name in METRICS:
        value = results["metrics"][name]["value"]
        if abs(value - reference.means[name]) > TOL:
            problems.append(f"mean {name}: pingce {value!r}, seed {reference.means[name]!r}")
        if round(value, 5) != reference.summary[name]:
            problems.append(
                f"summary {name}: pingce {round(value, 5)!r}, seed {reference.summary[name]!r}"
            )
    empty = results["failures"].get("empty_text")
    if empty != reference.rouge_raised:
        problems.append(f"empty_text {empty}, reference's rouge raised on {reference.rouge_raised}")
    if not per_record:
        return problems
    bad = rows = 0
    for record, row, ref in zip(records, run.records(), reference.records, strict=False):
        rows += 1
        if row["id"] != record["id"]:
            problems.append(f"record order: {row['id']!r} where {record['id']!r} belongs")
            break
        wrong = [
            f"{name} pingce {row['values'][name]!r} seed {ref.values[name]!r}"
            for name in METRICS
            if abs(row["values"][name] - ref.values[name]) > TOL
        ]
        if wrong:
            bad += 1
            if bad <= 5:
                problems.append(f"record {record['id']}: " + "; ".join(wrong))
    if rows != n:
        problems.append(f"records.jsonl has {rows} lines, not {n}")
    if bad:
        problems.append(f"{bad} record(s) differ")
    return problems


def main() -> None:
    info = machine(["jieba", "rouge", "nltk"])
    print(f"sizes: {', '.join(f'{n:,}' for n in SIZES)} records, exact share {EXACT_SHARE}")

    processes = os.environ.get("PINGCE_PROCESSES", "unset (a second process when a core is idle)")
    print(f"PINGCE_PROCESSES for pingce: {processes}")

    # the reference's imports and jieba's dictionary: once per process, counted at every size;
    # its CPU seconds too (process_time), the measure to compare when the machine is loaded
    t, c = time.perf_counter(), time.process_time()
    import jieba

    from tests.fc_reference import METRICS, fc_reference

    seed_import = time.perf_counter() - t
    jieba.setLogLevel(logging.WARNING)
    t = time.perf_counter()
    jieba.initialize()
    seed_init = time.perf_counter() - t
    seed_setup_cpu = time.process_time() - c

    summary: dict[str, Any] = {"machine": info, "exact_share": EXACT_SHARE, "sizes": {}}
    failed = False
    for n in SIZES:
        path = fc_file(n)
        print(f"\n=== {n:,} records: {path} ({path.stat().st_size / 1e6:.1f} MB)", flush=True)

        # 1. pingce, as users run it
        default = run_cli(
            f"`pingce run function-call` ({n:,}, 1,000 resamples)",
            ["run", "function-call", "--data", path],
            out=out_dir("function_call", f"{n}-default"),
        )
        no_boot = run_cli(
            f"`pingce run function-call --bootstrap 0` ({n:,})",
            ["run", "function-call", "--data", path, "--bootstrap", "0"],
            out=out_dir("function_call", f"{n}-bootstrap0"),
        )

        # 2. the reference's pipeline in this process
        t, c = time.perf_counter(), time.process_time()
        with open(path, encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle]
        seed_load = time.perf_counter() - t
        t = time.perf_counter()
        reference = fc_reference(records)
        seed_score = time.perf_counter() - t
        seed_total = seed_import + seed_init + seed_load + seed_score
        seed_cpu = seed_setup_cpu + time.process_time() - c

        mix = data_mix(records)
        print_table(
            ["prediction", "drawn", "in the file"],
            [[k, f"{v['drawn']:.1%}", f"{v['in_data']:.1%}"] for k, v in mix.items()],
            title="data mix (a new value, name or order can equal the old one; dropping the only "
            "call leaves none):",
        )

        jieba_s = None
        if n == max(SIZES):
            texts = [t for r in reference.records for t in (r.pred_text, r.gold_text)]
            t = time.perf_counter()
            words = sum(len(list(jieba.cut(text))) for text in texts)
            jieba_s = time.perf_counter() - t
            print(
                f"jieba alone: list(jieba.cut) over {len(texts):,} texts ({words:,} words): "
                f"{jieba_s:.1f} s = {jieba_s / seed_score:.0%} of the reference's scoring time",
                flush=True,
            )

        # 3. identical numbers
        problems = check(default, records, reference, per_record=True)
        problems += [f"--bootstrap 0: {p}" for p in check(no_boot, records, reference, False)]
        print("seed summary:  ", reference.summary)
        rounded = {m: round(default.metric(m) or 0.0, 5) for m in METRICS}
        print("pingce rounded:", {"eval_size": n} | rounded)

        rows = [
            ["seed: import jieba, rouge, nltk", f"{seed_import:.2f} s", "", "", ""],
            ["seed: jieba dictionary load", f"{seed_init:.2f} s", "", "", ""],
            ["seed: json.loads of every line", f"{seed_load:.2f} s", "", "", ""],
            ["seed: fc_score record by record", f"{seed_score:.2f} s", "", "", ""],
            ["seed end to end", f"{seed_total:.2f} s", "", "", ""],
        ]
        for run in (default, no_boot):
            ratio = seed_total / run.wall_s
            rows.append(
                [
                    run.label,
                    f"{run.wall_s:.2f} s",
                    f"{run.peak_rss_mb:.0f} MB",
                    f"{ratio:.2f}x",
                    f">= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'}",
                ]
            )
        print_table(
            ["measurement", "wall", "peak RSS", "seed / pingce", "target"],
            rows,
            title=f"\nfunction-call, {n:,} records, same run:",
        )
        cpu = {run.label: run.user_s + run.sys_s for run in (default, no_boot)}
        print(
            f"CPU seconds (user+sys; pingce's with its second process, if it started one): seed "
            f"{seed_cpu:.2f} s; "
            + "; ".join(f"{label} {s:.2f} s: {seed_cpu / s:.2f}x" for label, s in cpu.items())
        )
        cost = default.wall_s - no_boot.wall_s
        print(
            f"cost of the intervals: {cost:.2f} s ({cost / default.wall_s:.0%} of the default "
            f"run; intervals phase {default.phases.get('intervals', 0.0):.2f} s)"
        )
        for run in (default, no_boot):
            for line in phase_lines(run):
                print(line)
        if problems:
            failed = True
            print("MISMATCH between pingce and the reference:\n  " + "\n  ".join(problems))
        else:
            print(
                "numbers identical: means rounded to 5 as the reference and unrounded to 1e-9, "
                "every record's six values to 1e-9, empty_text = records where rouge raised"
            )
        summary["sizes"][str(n)] = {
            "records": n,
            "file_mb": path.stat().st_size / 1e6,
            "data_mix": mix,
            "seed_import_s": seed_import,
            "seed_jieba_init_s": seed_init,
            "seed_json_load_s": seed_load,
            "seed_score_s": seed_score,
            "seed_total_s": seed_total,
            "seed_cpu_s": seed_cpu,
            "pingce_processes": processes,
            "jieba_cut_s": jieba_s,
            "pingce_default": default.summary(),
            "pingce_bootstrap0": no_boot.summary(),
            "ratio_default": seed_total / default.wall_s,
            "ratio_bootstrap0": seed_total / no_boot.wall_s,
            "ratio_cpu_default": seed_cpu / (default.user_s + default.sys_s),
            "ratio_cpu_bootstrap0": seed_cpu / (no_boot.user_s + no_boot.sys_s),
            "identical": not problems,
        }
    save_summary("bench_function_call", summary)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
