"""Simulation study of the audit's corrected intervals (issue 34, "Oracles and guarantees"): not a
speed benchmark and not through the command line (a study of the statistics, which the command
line would only feed from files); the engine is ``tests/audit_simulation.py``, whose few cells
``tests/test_audit_coverage.py`` runs as a test.

For a synthetic judge of known true positive and true negative rates, a prevalence, a labelled
fraction (a uniform random sample) and a number of records, it replicates the audit on fresh
populations and reports, per metric (a mean, ``sem_f1``'s F1 of rows [tp, fp, fn], and
``clause_hallucination_rate``'s rate of rows [hallucinated, cited]):

- the coverage of the nominal 95% interval of the corrected value (λ tuned for the metric and
  cross-fitted, as ``pingce audit`` does by default) by the delta method and the bootstrap's
  percentile and BCa intervals (labelled and unlabelled records resampled separately), of the
  human-only interval (the labelled records alone), and of the delta method's with λ tuned on
  all the labels (``ppi++``, per component; ``metric``);
- the corrected estimate's bias in standard errors (its spread over the replications), cross-
  fitted and PPI++'s;
- the corrected normal interval's mean width over the human-only one's.

Then the stratified draw (``pingce.audits.sample.draw``, Neyman allocation over 4 or 8 strata
of a calibrated judge's scores, its point masses apart, 10,000 records) against a uniform
sample of the same budget: mean widths of the corrected mean's normal interval, the spread of
the estimates, and both coverages.

Run: ``.venv/bin/python benchmarks/bench_audit_coverage.py [replications] [resamples]`` (1,000
and 500 by default; ``--small``: 100 and 200). The n = 100,000 cells use a sixth of the
replications (their populations cost 30 times more to draw), the allocation study a sixth.

``--speed [SIZES]``: instead, ``pingce audit RUN --labels SHEET`` through the command line on the
function-points example repeated to 20,000 and 200,000 records (new ids; a sheet of 400 drawn
records labelled by flipping a tenth of the judge's verdicts), with the default interval
(BCa bootstrap, 1,000 resamples, λ cross-fitted) against ``--ci-method percentile`` and
``--ci-method normal``, each timed twice, alternately.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, out_dir, print_table, run_cli, save_summary

sys.path.insert(0, str(ROOT))
from tests.audit_simulation import ESTIMATORS, METHODS, Cell, allocation_study, run_cell

JUDGES = ((0.6, 0.6), (0.8, 0.9), (0.99, 0.99))
"""(true positive rate, true negative rate)."""
PREVALENCES = (0.05, 0.5, 0.95)
FRACTIONS = (0.02, 0.2)
SIZES = (200, 2_000, 100_000)
LOW, HIGH = 0.935, 0.965


def allocation_table(replications: int) -> list[dict[str, float]]:
    """Neyman against uniform samples of the same budget (``allocation_study``)."""
    allocations = []
    scenarios = itertools.product(((0.0, 1.0), (0.0, 3.0), (0.5, 1.0), (0.8, 1.0)), (4, 8))
    for (easy, spread), strata in scenarios:
        for budget in (100, 400):
            found = allocation_study(
                easy, spread, 10_000, budget, max(2, replications // 6), 34, strata
            )
            allocations.append(
                {
                    "easy": easy,
                    "spread": spread,
                    "strata": strata,
                    "budget": budget,
                    "neyman": found.neyman,
                    "uniform": found.uniform,
                    "narrower": found.narrower,
                    "coverage": found.coverage,
                    "tighter": found.tighter,
                    "coverage_uniform": found.coverage_uniform,
                }
            )
            print(allocations[-1], flush=True)
    return allocations


def _labelled_sheet(sheet: Path) -> None:
    """The sheet's human column: the judge's verdict, a tenth of them flipped (seeded)."""
    rng = random.Random(34)
    with open(sheet, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        verdict = int(row["judge_verdict"])
        row["human"] = str(1 - verdict if rng.random() < 0.1 else verdict)
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def speed(sizes: list[int]) -> None:
    """``pingce audit`` with the default interval against ``--ci-method normal``."""
    print(machine(["numpy"]), flush=True)
    lines = (ROOT / "examples/function_points/records.jsonl").read_text("utf-8").splitlines()
    rows, found = [], []
    for size in sizes:
        folder = out_dir("audit_speed", str(size))
        folder.mkdir(parents=True, exist_ok=True)
        data = folder / "records.jsonl"
        with open(data, "w", encoding="utf-8") as handle:
            for k in range(size):
                record = json.loads(lines[k % len(lines)])
                record["id"] = f"{record['id']}-{k}"
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        run = folder / "run"
        run_cli(
            "run",
            ["run", "function-points", "--data", data, "--bootstrap", "0"],
            out=run,
            profile=False,
        )
        sheet = folder / "sheet.csv"
        run_cli(
            "sample", ["audit", "sample", run, "--budget", "400", "--out", sheet], profile=False
        )
        _labelled_sheet(sheet)
        variants: dict[str, list[str]] = {
            "default": [],
            "percentile": ["--ci-method", "percentile"],
            "normal": ["--ci-method", "normal"],
        }
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in variants}
        for _ in range(2):
            for name, extra in variants.items():
                done = run_cli(name, ["audit", run, "--labels", sheet, *extra], profile=False)
                times[name].append((done.wall_s, done.user_s + done.sys_s))
        best = {k: min(v, key=lambda t: t[1]) for k, v in times.items()}
        found.append({"records": size, "times": times})
        rows.append(
            [
                f"{size:,}",
                *(f"{best[k][0]:.2f} / {best[k][1]:.2f}" for k in variants),
                f"{best['default'][1] - best['normal'][1]:+.2f}",
            ]
        )
    print_table(
        [
            *("records", "default (bca): wall / CPU s", "percentile: wall / CPU s"),
            *("normal: wall / CPU s", "CPU default - normal"),
        ],
        rows,
        "pingce audit RUN --labels SHEET (the least CPU of two runs each)",
    )
    save_summary("bench_audit_speed", {"runs": found})


def main() -> None:
    if "--speed" in sys.argv[1:]:
        given = [int(a) for a in sys.argv[1:] if a.isdigit()]
        speed(given or [20_000, 200_000])
        return
    args = [a for a in sys.argv[1:] if a != "--small"]
    small = "--small" in sys.argv[1:]
    replications = int(args[0]) if args else (100 if small else 1_000)
    resamples = int(args[1]) if len(args) > 1 else (200 if small else 500)
    print(machine(["numpy"]), flush=True)
    started = time.perf_counter()
    rows, cells = [], []
    grid = itertools.product(("mean", "f1", "rate"), JUDGES, PREVALENCES, FRACTIONS, SIZES)
    for metric, (tpr, tnr), prevalence, fraction, n in grid:
        cell = Cell(metric, tpr, tnr, prevalence, fraction, n)
        reps = replications if n < 100_000 else max(1, replications // 6)
        tally = run_cell(cell, reps, seed=34, resamples=resamples)
        coverage = {m: tally.coverage(m) for m in METHODS}
        human = tally.width("human")
        ratio = tally.width("normal") / human if human > 0 else float("nan")
        flags = [m for m in ("normal", "percentile", "bca") if not LOW <= coverage[m] <= HIGH]
        if abs(tally.bias()) >= 0.1:
            flags.append("bias")
        if ratio > 1.05:
            flags.append("wider")
        cells.append(
            {
                "metric": metric,
                "tpr": tpr,
                "tnr": tnr,
                "prevalence": prevalence,
                "fraction": fraction,
                "n": n,
                "labelled": cell.labelled,
                "replications": reps,
                "undefined": tally.undefined,
                "coverage": coverage,
                "bias_se": tally.bias(),
                "bias_se_by_estimator": {e: tally.bias(e) for e in ESTIMATORS},
                "width": {m: tally.width(m) for m in METHODS},
                "width_ratio": ratio,
                "flags": flags,
            }
        )
        rows.append(
            [
                metric,
                f"{tpr}/{tnr}",
                prevalence,
                f"{n:,}",
                cell.labelled,
                *(f"{100 * coverage[m]:.1f}" for m in METHODS),
                f"{tally.bias():+.2f}",
                f"{tally.bias('ppi++'):+.2f}",
                f"{tally.width('normal'):.4f}",
                f"{ratio:.2f}",
                " ".join(flags),
            ]
        )
        print(" | ".join(str(c) for c in rows[-1]), flush=True)
    headers = [
        *("metric", "TPR/TNR", "prev.", "n", "labelled", *METHODS),
        *("bias/SE", "bias/SE ppi++", "width", "ratio"),
    ]
    print_table([*headers, "outside"], rows, "coverage of the nominal 95% interval (%)")
    allocations = allocation_table(replications)
    save_summary(
        "bench_audit_coverage",
        {
            "replications": replications,
            "resamples": resamples,
            "seconds": time.perf_counter() - started,
            "cells": cells,
            "allocation": allocations,
        },
    )


if __name__ == "__main__":
    main()
