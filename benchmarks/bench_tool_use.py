"""Benchmark: ``pingce run tool-use`` against a per-record Python checker of the same rules.

The peer is ``tests/tool_reference.py``: BFCL's AST-checking rules written record by record in
plain Python, in BFCL's own structure (a result dict per check, strings standardised each time
they are compared), which is how the leaderboard's checker and most in-house copies of it run.
Its time covers ``json.loads`` of every line and the checks. Records are the seeded random cases
of ``tests/test_tool_use.py`` (1-3 functions of four schemas in both formats, 0-3 gold calls
with one or two acceptable values, ``""`` options, predictions right, wrong, reordered,
underscored or short of a call), written once into ``benchmarks/data/``.

The same checker is also timed with orjson's ``loads`` (the fastest a per-record checker reads).

pingce runs as users run it, ``pingce run tool-use --data FILE --out DIR --profile``, with
``--bootstrap 0`` (the peer computes no intervals) and with the default 1,000 resamples. The
verdicts must be equal: every record's ``tool_call_accuracy`` in records.jsonl against the
peer's, and the corpus accuracy.

Issue 32's peer is BFCL's own checker (``_bfcl.py``: the installed ``bfcl_eval`` or the copy of
``ast_checker.py`` that ``$BFCL_AST_CHECKER`` names; skipped when neither is there), run per
record with ``json.loads`` over the same cases written in BFCL's fields (``function``,
``ground_truth``, ``category``, ``question``, the decoded ``pred``), beside ``pingce run
tool-use`` with the default resamples on that file (the CPU ratio also printed with the write
phase taken out, in proportion to its share of the profiled wall time). Verdicts are counted
where they differ (BFCL pairs parallel calls greedily, pingce finds a pairing whenever one
exists). Peers run in this process and are timed in wall and CPU seconds; on a loaded machine
the CPU ratio is the one to quote.

The same file also goes through BFCL's own evaluation runner as ``bfcl evaluate`` runs it
(``_bfcl.bfcl_runner``: BFCL's ``load_file``, ``ast_file_runner`` / ``relevance_file_runner``
per category and ``save_eval_results``, which writes each category's score file with every
failing entry, its prompt and its error): the checker with the work BFCL does to give its user
a result, as pingce's time includes its records.jsonl and report. It needs BFCL's source
(``$BFCL_EVAL_DIR``: a checkout's ``berkeley-function-call-leaderboard/bfcl_eval``, or the
installed ``bfcl_eval``); its failed entries, read back from the score files, are compared with
pingce's verdicts.

Run: ``BFCL_EVAL_DIR=... .venv/bin/python benchmarks/bench_tool_use.py [N ...]`` (default
1,000,000).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).parent))
from _bfcl import bfcl_checker, bfcl_failed_ids, bfcl_record, bfcl_runner
from _cli import ROOT, CliRun, machine, out_dir, phase_lines, print_table, run_cli, save_summary
from _data import data_file

sys.path.insert(0, str(ROOT))
from tests.test_tool_use import _random_case
from tests.tool_reference import check_record

SIZES = [int(a) for a in sys.argv[1:]] or [1_000_000]
SEED = 0
TARGET = 10.0


def records(n: int) -> Any:
    rng = random.Random(SEED)
    for i in range(n):
        docs, gold, pred = _random_case(rng)
        yield {"id": f"r{i}", "functions": docs, "gold": gold, "pred": pred}


def bfcl_records(n: int) -> Any:
    rng = random.Random(SEED)
    for i in range(n):
        docs, gold, pred = _random_case(rng)
        yield bfcl_record(i, docs, gold, pred, f"question {i}")


def _reference(record: dict[str, Any]) -> bool:
    return bool(check_record(record["functions"], record["pred"], record["gold"])["valid"])


def peer(
    path: Path, loads: Callable[[Any], Any] = json.loads, check: Callable[[Any], bool] = _reference
) -> tuple[list[float], float, float]:
    """A per-record checker over the file: verdicts, wall and CPU seconds."""
    start, cpu = time.perf_counter(), time.process_time()
    verdicts = []
    with open(path, "rb") as handle:
        for line in handle:
            verdicts.append(1.0 if check(loads(line)) else 0.0)
    return verdicts, time.perf_counter() - start, time.process_time() - cpu


def bfcl_part(n: int, summary: dict[str, Any]) -> None:
    """BFCL's checker with json.loads against ``pingce run tool-use`` on BFCL-format records."""
    check = bfcl_checker()
    if check is None:
        print("BFCL's checker: not installed and $BFCL_AST_CHECKER unset; skipped")
        return
    path = data_file(f"tool_use_bfcl_{n}_{SEED}.jsonl", lambda: bfcl_records(n))
    expected, wall, cpu = peer(path, json.loads, check)
    run = run_cli(
        f"pingce {n:,} BFCL-format, default",
        ["run", "tool-use", "--data", path],
        out=out_dir("tool_use", f"{n}-bfcl"),
    )
    records = list(run.records())
    got = [row["values"]["tool_call_accuracy"] for row in records]
    differ = sum(1 for a, b in zip(got, expected, strict=True) if a != b)
    run_cpu = run.user_s + run.sys_s
    rows = [
        ["BFCL ast_checker, json.loads", f"{wall:.2f}", f"{cpu:.2f}", "1.0", "1.0"],
        [
            run.label,
            f"{run.wall_s:.2f}",
            f"{run_cpu:.2f}",
            f"{wall / run.wall_s:.2f}",
            f"{cpu / run_cpu:.2f}",
        ],
    ]
    runner = _bfcl_runner_part(path, n, records, summary)
    if runner is not None:
        runner_wall, runner_cpu = runner
        rows.append(
            ["BFCL's runner (score files)", f"{runner_wall:.2f}", f"{runner_cpu:.2f}", "-", "-"]
        )
        rows.append(
            [
                f"{run.label} vs BFCL's runner",
                f"{run.wall_s:.2f}",
                f"{run_cpu:.2f}",
                f"{runner_wall / run.wall_s:.2f}",
                f"{runner_cpu / run_cpu:.2f}",
            ]
        )
        summary["ratio_bfcl_runner_wall"] = runner_wall / run.wall_s
        summary["ratio_bfcl_runner_cpu"] = runner_cpu / run_cpu
    head = ["run", "wall s", "CPU s", "peer / run (wall)", "peer / run (CPU)"]
    print_table(head, rows, f"{n:,} BFCL-format records ({differ} verdicts differ)")
    for line in phase_lines(run):
        print(line)
    kept = _without_write(run)
    print(f"  without the write phase (estimate): peer / run (CPU) {cpu / (run_cpu * kept):.2f}")
    summary["bfcl_peer_s"] = wall
    summary["bfcl_peer_cpu_s"] = cpu
    summary["bfcl_format"] = run.summary()
    summary["bfcl_verdicts_differ"] = differ
    summary["ratio_bfcl_wall"] = wall / run.wall_s
    summary["ratio_bfcl_cpu"] = cpu / run_cpu
    summary["ratio_bfcl_cpu_without_write"] = cpu / (run_cpu * kept)


def _bfcl_runner_part(
    path: Path, n: int, records: list[dict[str, Any]], summary: dict[str, Any]
) -> tuple[float, float] | None:
    """BFCL's own evaluation runner on the file, score files written as ``bfcl evaluate``
    writes them (``_bfcl.bfcl_runner``): wall and CPU seconds, or None without BFCL's source.
    Its failed entries are read back and compared with pingce's verdicts."""
    runner = bfcl_runner()
    if runner is None:
        print(
            "BFCL's runner: no bfcl_eval source ($BFCL_EVAL_DIR or the installed package); skipped"
        )
        return None
    scores = out_dir("tool_use", f"{n}-bfcl-scores")
    shutil.rmtree(scores, ignore_errors=True)
    start, cpu = time.perf_counter(), time.process_time()
    accuracy = runner(path, scores)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    failed = bfcl_failed_ids(scores)
    differ = sum(
        1
        for row in records
        if (row["id"] in failed) == (row["values"]["tool_call_accuracy"] == 1.0)
    )
    print(f"BFCL's runner: accuracy {accuracy:.5f}, {differ} verdicts differ from pingce's")
    summary["bfcl_runner_s"] = wall
    summary["bfcl_runner_cpu_s"] = cpu
    summary["bfcl_runner_accuracy"] = accuracy
    summary["bfcl_runner_verdicts_differ"] = differ
    return wall, cpu


def _without_write(run: CliRun) -> float:
    """The share of a run left without its write phase (records.jsonl, report.html): one less
    the write's share of the profiled wall seconds, an estimate of its CPU share."""
    total = sum(run.phases.values())
    return 1.0 - run.phases.get("write", 0.0) / total if total else 1.0


def main() -> None:
    info = machine()
    summary: dict[str, Any] = {"machine": info, "sizes": {}}
    problems: list[str] = []
    for n in SIZES:
        path = data_file(f"tool_use_{n}_{SEED}.jsonl", lambda n=n: records(n))
        expected, peer_s, peer_cpu = peer(path)
        _, orjson_s, orjson_cpu = peer(path, orjson.loads)
        fast = run_cli(
            f"pingce {n:,} --bootstrap 0",
            ["run", "tool-use", "--data", path, "--bootstrap", "0"],
            out=out_dir("tool_use", f"{n}-bootstrap0"),
        )
        full = run_cli(
            f"pingce {n:,} default",
            ["run", "tool-use", "--data", path],
            out=out_dir("tool_use", f"{n}-default"),
        )
        got = [row["values"]["tool_call_accuracy"] for row in fast.records()]
        if got != expected:
            bad = sum(1 for a, b in zip(got, expected, strict=False) if a != b)
            problems.append(f"{n}: {bad} verdict(s) differ (or {len(got)} rows, not {n})")
        value = fast.metric("tool_call_accuracy")
        if value is None or abs(value - sum(expected) / n) > 1e-12:
            problems.append(f"{n}: accuracy {value} vs peer {sum(expected) / n}")
        rows = [
            ["peer (tool_reference, json.loads)", f"{peer_s:.2f}", f"{peer_cpu:.2f}", "1.0", "-"],
            ["tool_reference, orjson", f"{orjson_s:.2f}", f"{orjson_cpu:.2f}", "-", "-"],
        ]
        for run in (fast, full):
            run_cpu = run.user_s + run.sys_s
            rows.append(
                [
                    run.label,
                    f"{run.wall_s:.2f}",
                    f"{run_cpu:.2f}",
                    f"{peer_s / run.wall_s:.2f} (orjson {orjson_cpu / run_cpu:.2f} CPU)",
                    f"{run.peak_rss_mb:.0f}",
                ]
            )
        head = ["run", "wall s", "CPU s", "peer / run", "peak MB"]
        print_table(head, rows, f"{n:,} tool-use records")
        for run in (fast, full):
            for line in phase_lines(run):
                print(line)
        summary["sizes"][str(n)] = {
            "peer_s": peer_s,
            "peer_cpu_s": peer_cpu,
            "orjson_peer_s": orjson_s,
            "orjson_peer_cpu_s": orjson_cpu,
            "ratio_orjson_cpu": orjson_cpu / (full.user_s + full.sys_s),
            "accuracy": sum(expected) / n,
            "bootstrap0": fast.summary(),
            "default": full.summary(),
            "ratio_bootstrap0": peer_s / fast.wall_s,
            "ratio_default": peer_s / full.wall_s,
        }
        bfcl_part(n, summary["sizes"][str(n)])
    save_summary("bench_tool_use", summary)
    for problem in problems:
        print("MISMATCH", problem)
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
