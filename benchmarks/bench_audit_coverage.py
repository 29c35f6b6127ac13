"""Simulation study of the audit's corrected intervals (issue 34, "Oracles and guarantees"): not a
speed benchmark and not through the command line (a study of the statistics, which the command
line would only feed from files); the engine is ``tests/audit_simulation.py``, whose few cells
``tests/test_audit_coverage.py`` runs as a test.

For a synthetic judge of known true positive and true negative rates, a prevalence, a labelled
fraction (a uniform random sample) and a number of records, it replicates the audit on fresh
populations and reports, per metric (a mean, ``sem_f1``'s F1 of rows [tp, fp, fn], and
``clause_hallucination_rate``'s rate of rows [hallucinated, cited]):

- the coverage of the nominal 95% interval of the corrected (PPI++) value by the delta method,
  the bootstrap's percentile and BCa intervals (labelled and unlabelled records resampled
  separately), and the human-only interval (the labelled records alone);
- the corrected estimate's bias in standard errors (its spread over the replications);
- the corrected normal interval's mean width over the human-only one's.

Then the stratified draw (``pingce.audits.sample.draw``, Neyman allocation over 4 or 8 quantile
strata of a calibrated judge's scores, 10,000 records) against a uniform sample of the same
budget: mean widths of the corrected mean's normal interval, and the stratified one's coverage.

Run: ``.venv/bin/python benchmarks/bench_audit_coverage.py [replications] [resamples]`` (1,000
and 500 by default; ``--small``: 100 and 200). The n = 100,000 cells use a sixth of the
replications (their populations cost 30 times more to draw), the allocation study a sixth.
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, print_table, save_summary

sys.path.insert(0, str(ROOT))
from tests.audit_simulation import METHODS, Cell, allocation_study, run_cell

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
                }
            )
            print(allocations[-1], flush=True)
    return allocations


def main() -> None:
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
        ratio = tally.width("normal") / tally.width("human")
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
                f"{tally.width('normal'):.4f}",
                f"{ratio:.2f}",
                " ".join(flags),
            ]
        )
        print(" | ".join(str(c) for c in rows[-1]), flush=True)
    headers = ["metric", "TPR/TNR", "prev.", "n", "labelled", *METHODS, "bias/SE", "width", "ratio"]
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
