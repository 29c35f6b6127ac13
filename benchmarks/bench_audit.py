"""``pingce audit sample`` and ``pingce audit`` (issue 34) on function-points-like records: how
long drawing the sheet and correcting the metrics take once the run is made, through the command
line, end to end.

For each size (20,000 and 200,000 selection records by default: ``bench_similarity``'s
:func:`selection_records`, scored by the lexical judge), ``pingce run function-points
--bootstrap 0`` makes the run once; then ``pingce audit sample RUN --budget 400`` draws the sheet,
its ``human`` column is filled with the judge's verdicts, and ``pingce audit RUN --labels SHEET``
corrects the metrics. Both audit commands are timed (wall, and the child's user + sys CPU
seconds). With ``--before SRC`` (a ``src`` folder, e.g. ``git archive main src | tar -x -C
/tmp/before``) the same commands run on that code too, beside this checkout's, and their sheets
and audit.json must be identical.

Run: ``.venv/bin/python benchmarks/bench_audit.py [--small] [--before SRC] [N ...]``
(``--small``: 2,000 records).
"""

from __future__ import annotations

import csv
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import CliRun, machine, out_dir, print_table, run_cli, save_and_exit
from _data import data_file
from bench_similarity import selection_records

ARGS = sys.argv[1:]
BEFORE = ARGS[ARGS.index("--before") + 1] if "--before" in ARGS else None
SIZES = [int(a) for a in ARGS if a.isdigit()] or (
    [2_000] if "--small" in ARGS else [20_000, 200_000]
)
BUDGET = 400


def _fill(sheet: Path) -> None:
    """The sheet's human column: the judge's verdict at τ (people who agree with it)."""
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["human"] = row["judge_verdict"]
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _side(label: str, run: Path, n: int, env: dict[str, str] | None) -> dict[str, Any]:
    sheet = out_dir("audit", f"sheet-{n}-{label}.csv")
    drawn = run_cli(
        f"sample {label}",
        ["audit", "sample", run, "--budget", BUDGET, "--out", sheet],
        profile=False,
        env=env,
    )
    _fill(sheet)
    audited = out_dir("audit", f"audited-{n}-{label}")
    corrected = run_cli(
        f"audit {label}",
        ["audit", run, "--labels", sheet, "--out", audited],
        profile=False,
        env=env,
    )

    def cpu(one: CliRun) -> float:
        return one.user_s + one.sys_s

    return {
        "sample_wall_s": drawn.wall_s,
        "sample_cpu_s": cpu(drawn),
        "audit_wall_s": corrected.wall_s,
        "audit_cpu_s": cpu(corrected),
        "sheet": sheet.read_bytes(),
        "audit_json": (audited / "audit.json").read_bytes(),
    }


def bench(n: int) -> tuple[dict[str, Any], list[str]]:
    data = data_file(f"audit_selection_{n}.jsonl", lambda: selection_records(n))
    run = out_dir("audit", f"run-{n}")
    made = run_cli(
        f"run {n}", ["run", "function-points", "--data", data, "--bootstrap", "0"], out=run
    )
    sides = {"after": _side("after", run, n, None)}
    if BEFORE is not None:
        sides["before"] = _side("before", run, n, {"PYTHONPATH": BEFORE})
    problems = []
    if "before" in sides:
        for key in ("sheet", "audit_json"):
            if sides["before"][key] != sides["after"][key]:
                problems.append(f"{n} records: the {key} differs before and after")
    row: dict[str, Any] = {"records": n, "run_wall_s": made.wall_s}
    for side, found in sides.items():
        for key, value in found.items():
            if key.endswith("_s"):
                row[f"{side}_{key}"] = round(value, 2)
    return row, problems


def main() -> None:
    os.environ["PINGCE_STORE"] = str(out_dir("audit", "runs.db"))  # not the user's store
    info = machine()
    rows, problems = [], []
    for n in SIZES:
        row, found = bench(n)
        rows.append(row)
        problems += found
    headers = list(rows[0])
    print_table(headers, [[r.get(h) for h in headers] for r in rows], "pingce audit")
    save_and_exit("bench_audit", {"machine": info, "rows": rows, "problems": problems}, problems)


if __name__ == "__main__":
    main()
