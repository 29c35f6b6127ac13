"""Benchmark: the per-record outputs (issue 32, point 3) through the command line.

For each workload, ``pingce run SUITE --data FILE --bootstrap 0 --profile`` in a child process:
the code before the change (``--before DIR``: a ``src`` folder exported from main, e.g. ``git
archive main src | tar -x -C /tmp/before``) and after it with the default outputs
(records.jsonl without the input fields, report.html bounded to 2,000 records), with
``--records parquet``, and with ``--records-fields all`` (records.jsonl as before). Printed per
run: the write phase (seconds, from ``--profile``), the whole run's wall and CPU seconds (user +
sys of the child: the machine is shared), and the sizes of records.jsonl / records.parquet and
report.html. The outputs are checked: results.json equal on every side, and records.jsonl with
``--records-fields all`` equal to the one before, byte for byte.

Workloads: contract-risk (``benchmarks/_data.contract_risk_file``: id, levels, latency, a
contract type), tcm-dialogue (``bench_tcm_dialogue.turns``, dialogues of 3 turns), tool-use
(``bench_tool_use.records``: schemas, gold and predicted calls).

Run: ``.venv/bin/python benchmarks/bench_records_outputs.py [--before DIR] [--small]``
(``--small``: 100,000 contract-risk records, 5,000 dialogues, 10,000 tool-use records; default:
1,000,000, 20,000 and 100,000).
"""

from __future__ import annotations

import filecmp
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import CliRun, machine, out_dir, print_table, run_cli, save_and_exit
from _data import contract_risk_file, data_file

ARGS = sys.argv[1:]
SMALL = "--small" in ARGS
BEFORE = ARGS[ARGS.index("--before") + 1] if "--before" in ARGS else None
SIZES = (
    {"contract-risk": 100_000, "tcm-dialogue": 5_000, "tool-use": 10_000}
    if SMALL
    else {
        "contract-risk": 1_000_000,
        "tcm-dialogue": 20_000,
        "tool-use": 100_000,
    }
)


def workload(suite: str, n: int) -> Path:
    """The data file of a workload (made on first use)."""
    if suite == "contract-risk":
        return contract_risk_file(n)
    saved, sys.argv = sys.argv, sys.argv[:1]  # the scripts read their sizes from argv
    try:
        if suite == "tcm-dialogue":
            from bench_tcm_dialogue import turns

            return data_file(f"tcm_dialogue_{n}_0.jsonl", lambda: turns(n))
        from bench_tool_use import SEED, records

        return data_file(f"tool_use_{n}_{SEED}.jsonl", lambda: records(n))
    finally:
        sys.argv = saved


def size_mb(folder: Path, name: str) -> float | None:
    path = folder / name
    return path.stat().st_size / 1e6 if path.is_file() else None


def row(run: CliRun, folder: Path) -> list[Any]:
    rows = size_mb(folder, "records.jsonl") or size_mb(folder, "records.parquet")
    return [
        run.label,
        f"{run.phases.get('write', float('nan')):.2f}",
        f"{run.wall_s:.2f}",
        f"{run.user_s + run.sys_s:.2f}",
        f"{rows:.1f}" if rows is not None else "-",
        f"{size_mb(folder, 'report.html') or 0:.1f}",
    ]


def main() -> None:
    summary: dict[str, Any] = {"machine": machine(["pyarrow"]), "small": SMALL}
    problems: list[str] = []
    for suite, n in SIZES.items():
        path = workload(suite, n)
        base = ["run", suite, "--data", path, "--bootstrap", "0", "--no-store"]
        sides: list[tuple[str, list[str], dict[str, str] | None]] = []
        if BEFORE is not None:
            sides.append(("before", [], {"PYTHONPATH": str(Path(BEFORE) / "src")}))
        sides += [
            ("after, default", [], None),
            ("after, --records parquet", ["--records", "parquet"], None),
            ("after, --records-fields all", ["--records-fields", "all"], None),
        ]
        table, folders = [], {}
        for label, extra, env in sides:
            folder = out_dir("records_outputs", suite, label.split(",")[-1].strip().strip("-"))
            run = run_cli(f"{suite}: {label}", [*base, *extra], out=folder, env=env)
            folders[label] = folder
            table.append(row(run, folder))
            summary[f"{suite}/{label}"] = {
                **run.summary(),
                "records_mb": size_mb(folder, "records.jsonl")
                or size_mb(folder, "records.parquet"),
                "report_mb": size_mb(folder, "report.html"),
            }
        head = ["run", "write s", "wall s", "CPU s", "rows MB", "report.html MB"]
        unit = "dialogues" if suite == "tcm-dialogue" else "records"
        print_table(head, table, f"{suite}, {n:,} {unit}, --bootstrap 0")
        results = {
            label: json.loads((f / "results.json").read_text("utf-8"))["metrics"]
            for label, f in folders.items()
        }
        if any(r != results["after, default"] for r in results.values()):
            problems.append(f"{suite}: results.json's metrics differ between the runs")
        if BEFORE is not None and not filecmp.cmp(
            folders["before"] / "records.jsonl",
            folders["after, --records-fields all"] / "records.jsonl",
            shallow=False,
        ):
            problems.append(f"{suite}: records.jsonl with --records-fields all differs from before")
    save_and_exit("records_outputs", summary, problems)


if __name__ == "__main__":
    main()
