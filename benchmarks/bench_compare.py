"""``pingce compare`` at scale, through the command line: a paired bootstrap of every contract-risk
metric.

200,000 seeded records, two systems (80 % and 75 % right, the rest uniform over the three
levels), written once as two JSONL files in ``benchmarks/data/``. pingce as users run it:
``pingce compare contract-risk --data CANDIDATE --baseline BASELINE --out DIR --profile`` (1,000
paired resamples, BCa, every metric of the suite), a child process timed from outside, against,
in this process:
- ``scipy.stats.bootstrap(paired=True, vectorized=True)`` for the accuracy difference alone (one
  metric, percentile, batches of 20 resamples to keep the index matrix in memory);
- the naive way: recompute accuracy, macro-F1 and Cohen's kappa of both systems with
  scikit-learn on each resample (timed on 5 resamples, extrapolated to 1,000).

Checked from comparison.json: the accuracy delta equals the difference of the two systems'
accuracies, and its interval agrees with scipy's to within a few resampling errors
(independent resamples; BCa against percentile).

Run: ``.venv/bin/python benchmarks/bench_compare.py [records]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import machine, out_dir, print_checks, print_table, run_cli, save_and_exit
from _data import risk_systems, risk_systems_files

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
B = 1000
NAIVE_RESAMPLES = 5
TOL = 1e-12


def main() -> None:
    import scipy.stats
    from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

    info = machine(["scipy", "scikit-learn"])
    candidate, baseline = risk_systems_files(N)
    gold, a, b = risk_systems(N)
    print(f"data: {candidate} and {baseline} ({N:,} records each)", flush=True)

    run = run_cli(
        f"`pingce compare contract-risk` ({N:,}, {B:,} paired resamples)",
        [
            "compare",
            "contract-risk",
            "--data",
            candidate,
            "--baseline",
            baseline,
            "--bootstrap",
            B,
        ],
        out=out_dir("compare", "contract-risk"),
    )
    comparison = run.comparison()
    metrics = comparison["metrics"]
    accuracy = metrics["accuracy"]

    ca, cb = (a == gold).astype(np.float64), (b == gold).astype(np.float64)

    def diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.mean(axis=axis) - y.mean(axis=axis)

    started = time.perf_counter()
    ref = scipy.stats.bootstrap(
        (ca, cb),
        diff,
        paired=True,
        vectorized=True,
        n_resamples=B,
        batch=20,
        method="percentile",
        rng=np.random.default_rng(0),
    )
    scipy_sec = time.perf_counter() - started

    rng = np.random.default_rng(1)
    started = time.perf_counter()
    for _ in range(NAIVE_RESAMPLES):
        index = rng.integers(0, N, size=N)
        for pred in (a, b):
            accuracy_score(gold[index], pred[index])
            f1_score(gold[index], pred[index], average="macro")
            cohen_kappa_score(gold[index], pred[index])
    naive_sec = (time.perf_counter() - started) / NAIVE_RESAMPLES * B

    problems = []
    delta = float(ca.mean() - cb.mean())
    if abs(accuracy["delta"] - delta) > TOL:
        problems.append(f"accuracy delta: pingce {accuracy['delta']!r}, data {delta!r}")
    if abs(accuracy["candidate"] - ca.mean()) > TOL or abs(accuracy["baseline"] - cb.mean()) > TOL:
        problems.append("accuracy of a system differs from the data's")
    low, high = ref.confidence_interval.low, ref.confidence_interval.high
    width = high - low
    if (
        abs(accuracy["ci_low"] - low) > 0.25 * width
        or abs(accuracy["ci_high"] - high) > 0.25 * width
    ):
        problems.append(
            f"accuracy interval: pingce [{accuracy['ci_low']}, {accuracy['ci_high']}], scipy "
            f"[{low}, {high}] (more than a quarter of the width apart)"
        )

    print_table(
        ["measurement", "wall", "covers"],
        [
            [run.label, f"{run.wall_s:.2f} s", f"all {len(metrics)} metrics (BCa)"],
            ["  its peak RSS", f"{run.peak_rss_mb:.0f} MB", ""],
            ["  its intervals phase", f"{run.phases.get('intervals', 0.0):.2f} s", ""],
            [
                "scipy.stats.bootstrap(paired=True, vectorized=True), percentile",
                f"{scipy_sec:.2f} s",
                "accuracy alone",
            ],
            [
                f"scikit-learn recomputing per resample ({NAIVE_RESAMPLES} timed, extrapolated)",
                f"~{naive_sec:,.0f} s",
                "accuracy, macro-F1, kappa",
            ],
        ],
        title=f"\ncompare, {N:,} records, {B:,} paired resamples, same run:",
    )
    print(
        f"pingce (whole command, {len(metrics)} metrics) = {run.wall_s / scipy_sec:.2f}x scipy's "
        f"time for one metric; scikit-learn recomputing 3 metrics per resample = "
        f"{naive_sec / run.wall_s:,.0f}x pingce's time"
    )
    print(
        f"accuracy delta {accuracy['delta']:.5f}: pingce [{accuracy['ci_low']:.5f}, "
        f"{accuracy['ci_high']:.5f}] (BCa), scipy [{low:.5f}, {high:.5f}] (percentile, "
        "independent resamples)"
    )
    print_checks(
        [run],
        problems,
        "numbers check: accuracy of each system and the delta equal the data's (1e-12), "
        "the interval agrees with scipy's",
    )
    save_and_exit(
        "bench_compare",
        {
            "machine": info,
            "records": N,
            "resamples": B,
            "pingce": run.summary(),
            "pingce_metrics": len(metrics),
            "pingce_accuracy_delta_ci": [accuracy["ci_low"], accuracy["ci_high"]],
            "scipy_accuracy_only_s": scipy_sec,
            "scipy_accuracy_ci": [low, high],
            "naive_sklearn_3_metrics_s_extrapolated": naive_sec,
            "pingce_over_scipy_time": run.wall_s / scipy_sec,
            "naive_over_pingce_time": naive_sec / run.wall_s,
            "checks_pass": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
