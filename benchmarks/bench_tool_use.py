"""Benchmark: ``pingce run tool-use`` against a per-record Python checker of the same rules.

The peer is ``tests/tool_reference.py``: BFCL's AST-checking rules written record by record in
plain Python, in BFCL's own structure (a result dict per check, strings standardised each time
they are compared), which is how the leaderboard's checker and most in-house copies of it run.
Its time covers ``json.loads`` of every line and the checks. Records are the seeded random cases
of ``tests/test_tool_use.py`` (1-3 functions of four schemas in both formats, 0-3 gold calls
with one or two acceptable values, ``""`` options, predictions right, wrong, reordered,
underscored or short of a call), written once into ``benchmarks/data/``.

pingce runs as users run it, ``pingce run tool-use --data FILE --out DIR --profile``, with
``--bootstrap 0`` (the peer computes no intervals) and with the default 1,000 resamples. The
verdicts must be equal: every record's ``tool_call_accuracy`` in records.jsonl against the
peer's, and the corpus accuracy.

Run: ``.venv/bin/python benchmarks/bench_tool_use.py [N ...]`` (default 1,000,000).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, out_dir, phase_lines, print_table, run_cli, save_summary
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


def peer(path: Path) -> tuple[list[float], float]:
    """The per-record checker over the file: verdicts and seconds."""
    start = time.perf_counter()
    verdicts = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            found = check_record(record["functions"], record["pred"], record["gold"])
            verdicts.append(1.0 if found["valid"] else 0.0)
    return verdicts, time.perf_counter() - start


def main() -> None:
    info = machine()
    summary: dict[str, Any] = {"machine": info, "sizes": {}}
    problems: list[str] = []
    for n in SIZES:
        path = data_file(f"tool_use_{n}_{SEED}.jsonl", lambda n=n: records(n))
        expected, peer_s = peer(path)
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
        rows = [["peer (per-record Python checker)", f"{peer_s:.1f}", "1.0", "-"]]
        for run in (fast, full):
            rows.append(
                [
                    run.label,
                    f"{run.wall_s:.1f}",
                    f"{peer_s / run.wall_s:.2f}",
                    f"{run.peak_rss_mb:.0f}",
                ]
            )
        print_table(["run", "seconds", "peer / run", "peak MB"], rows, f"{n:,} tool-use records")
        for run in (fast, full):
            for line in phase_lines(run):
                print(line)
        summary["sizes"][str(n)] = {
            "peer_s": peer_s,
            "accuracy": sum(expected) / n,
            "bootstrap0": fast.summary(),
            "default": full.summary(),
            "ratio_bootstrap0": peer_s / fast.wall_s,
            "ratio_default": peer_s / full.wall_s,
        }
    save_summary("bench_tool_use", summary)
    for problem in problems:
        print("MISMATCH", problem)
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
