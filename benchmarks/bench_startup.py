"""Benchmark: how fast the command line starts (issue 10).

1. ``pingce --help`` and ``pingce metrics``: wall clock of the whole command, median of REPEAT runs
   each (default 15), against the floor of the same interpreter doing nothing (``python -c
   pass``). Target: ``pingce --help`` under 0.1 s (issue 29; 0.3 s before).
2. ``python -X importtime -c "import pingce.cli"``, summarised: modules imported, their total,
   the largest by cumulative and by own time. The same for what ``pingce run`` imports before its
   first phase (``RUN_IMPORTS``: the names it takes from the engine, options and report), which
   every run pays.
3. ``pingce run contract-risk`` on the bundled 60 example records with ``--profile``, RUNS times
   (default 7): median wall and CPU seconds (user + sys of the child), each phase of the median
   run. Target (issue 32): at most 0.4 s. The same records without their cited evidence show
   what the evidence checks cost (since issue 32 they import neither scipy.sparse nor cn2an
   for a run this small: numpy's join and pingce's reader of standard Chinese numerals).

Children run with bytecode caching on (``_cli.child_env`` removes ``PYTHONDONTWRITEBYTECODE``;
one warm-up run first), as an installed package runs.

Run: ``.venv/bin/python benchmarks/bench_startup.py [REPEAT [RUNS]]``.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, child_env, machine, median_wall, out_dir, phase_lines, print_table, run_cli
from _cli import save_summary as save

REPEAT = int(sys.argv[1]) if len(sys.argv) > 1 else 15
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
TARGET_HELP_S = 0.1
TARGET_RUN_S = 0.4
RUN_IMPORTS = (
    "import pingce.cli\nfrom pingce.engine import evaluate_suite\n"
    "from pingce.options import command_line_options\n"
    "from pingce.report import print_result, write_outputs"
)
"""What ``pingce run`` imports before its first phase (``pingce.engine`` and ``pingce.report``
import their names on first use, so importing the packages alone says little)."""
_IMPORT = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def interpreter_floor(repeat: int) -> float:
    """Median wall seconds of ``python -c pass`` with the same environment."""
    walls = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=child_env())
        walls.append(time.perf_counter() - start)
    return statistics.median(walls)


def import_times(statement: str) -> dict[str, Any]:
    """``python -X importtime -c STATEMENT``, summarised (times in seconds)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        check=True,
        capture_output=True,
        text=True,
        env=child_env(),
    )
    rows = []
    for line in out.stderr.splitlines():
        match = _IMPORT.match(line)
        if match:
            own, cumulative, indent, name = match.groups()
            rows.append((name, int(own) / 1e6, int(cumulative) / 1e6, len(indent)))
    top_level = [r for r in rows if r[3] == min(x[3] for x in rows)]
    by_cumulative = sorted(rows, key=lambda r: -r[2])
    by_own = sorted(rows, key=lambda r: -r[1])
    installed = metadata.packages_distributions()
    third_party = sorted(
        {
            top
            for top in (name.split(".")[0] for name, *_ in rows)
            if top in installed and not top.startswith("_")
        }
        | {"pingce"}
    )
    return {
        "statement": statement,
        "modules": len(rows),
        "total_s": sum(r[1] for r in rows),
        "top_level_cumulative_s": sum(r[2] for r in top_level),
        "largest_cumulative": [(n, round(c, 4)) for n, _, c, _ in by_cumulative[:8]],
        "largest_own": [(n, round(o, 4)) for n, o, _, _ in by_own[:8]],
        "packages": third_party,
    }


def example_runs(data: Path, name: str) -> list[Any]:
    """``pingce run contract-risk`` on ``data``, RUNS times (one warm-up run first, not kept),
    each recorded as users' runs are, in a run store of its own (not the user's)."""
    args = ["run", "contract-risk", "--data", data]
    out = out_dir("startup", name)
    env = {"PINGCE_STORE": str(out_dir("startup", f"{name}-runs.db"))}
    run_cli("", args, out=out, env=env)
    label = f"pingce run contract-risk on {data.name}"
    return [run_cli(label, args, out=out, env=env) for _ in range(RUNS)]


def middle(runs: list[Any]) -> Any:
    """The run of median wall time."""
    return sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]


def no_evidence(example: Path) -> Path:
    """The example records with no cited evidence (``evidence: []``), in ``benchmarks/out/``."""
    path = out_dir("startup", "records-no-evidence.jsonl")
    lines = example.read_text(encoding="utf-8").splitlines()
    records = [{**json.loads(line), "evidence": []} for line in lines if line.strip()]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def main() -> None:
    info = machine()
    floor = interpreter_floor(REPEAT)
    help_s, help_all = median_wall(["--help"], REPEAT)
    metrics_s, metrics_all = median_wall(["metrics"], REPEAT)
    print_table(
        ["command", "median wall", "min", "max", "above `python -c pass`", "target"],
        [
            ["python -c pass", f"{floor:.3f} s", "", "", "", ""],
            [
                "pingce --help",
                f"{help_s:.3f} s",
                f"{min(help_all):.3f} s",
                f"{max(help_all):.3f} s",
                f"{help_s - floor:.3f} s",
                f"< {TARGET_HELP_S} s: {'met' if help_s < TARGET_HELP_S else 'NOT met'}",
            ],
            [
                "pingce metrics",
                f"{metrics_s:.3f} s",
                f"{min(metrics_all):.3f} s",
                f"{max(metrics_all):.3f} s",
                f"{metrics_s - floor:.3f} s",
                "",
            ],
        ],
        title=f"\nstart-up, median of {REPEAT} runs each:",
    )

    imports = {}
    for statement in ("import pingce.cli", RUN_IMPORTS):
        summary = import_times(statement)
        imports[statement] = summary
        print(
            f"\npython -X importtime -c {statement!r}: {summary['modules']} modules, "
            f"{summary['total_s']:.3f} s in all (top level {summary['top_level_cumulative_s']:.3f} "
            f"s); third-party packages: {', '.join(summary['packages']) or 'none'}"
        )
        print(
            "  largest, with what they import: "
            + ", ".join(f"{n} {s * 1e3:.0f} ms" for n, s in summary["largest_cumulative"])
        )
        print(
            "  largest on their own:           "
            + ", ".join(f"{n} {s * 1e3:.0f} ms" for n, s in summary["largest_own"])
        )

    example = ROOT / "examples" / "contract_risk" / "records.jsonl"
    runs = {
        "the 60 example records": example_runs(example, "contract-risk-example"),
        "the same without their evidence": example_runs(
            no_evidence(example), "contract-risk-no-evidence"
        ),
    }
    rows = []
    for label, done in runs.items():
        walls = [r.wall_s for r in done]
        cpus = [r.user_s + r.sys_s for r in done]
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        met = "met" if wall <= TARGET_RUN_S else "NOT met"
        rows.append(
            [
                f"pingce run contract-risk, {label}",
                f"{wall:.3f} s",
                f"{min(walls):.3f}-{max(walls):.3f} s",
                f"{cpu:.3f} s",
                f"<= {TARGET_RUN_S} s: {met}" if label.startswith("the 60") else "",
            ]
        )
    print_table(
        ["command", "median wall", "range", "median CPU (user+sys)", "target"],
        rows,
        title=f"\npingce run, {RUNS} runs each (load average {os.getloadavg()[0]:.2f} now):",
    )
    small = middle(runs["the 60 example records"])
    print(
        f"\n{small.label} (the median run): {small.wall_s:.2f} s wall, {small.startup_s:.2f} s of "
        f"it outside the profiled phases, peak RSS {small.peak_rss_mb:.0f} MB"
    )
    for line in phase_lines(small, note="60 records: start-up and plan are expected to lead"):
        print(line)

    save(
        "bench_startup",
        {
            "machine": info,
            "repeat": REPEAT,
            "python_pass_median_s": floor,
            "help_median_s": help_s,
            "help_all_s": help_all,
            "help_target_met": help_s < TARGET_HELP_S,
            "metrics_median_s": metrics_s,
            "metrics_all_s": metrics_all,
            "imports": imports,
            "example_run": small.summary(),
            "example_runs": {label: [r.summary() for r in done] for label, done in runs.items()},
        },
    )


if __name__ == "__main__":
    main()
