"""Benchmark: contract-risk at one million records through the command line (issue 2, issue 10).

1. As users run it: ``pingce run contract-risk --data FILE --out DIR --profile`` in a child
   process, with the default 1,000 bootstrap resamples (BCa, all 17 metrics) and with
   ``--bootstrap 0``: wall clock, peak RSS, seconds per phase. Target (measured earlier through
   the command line): no worse than 311 MB and about 67 s with the resamples, judged on the work
   the target was set on (``contract_risk_levels.yaml``: the 17 level and latency metrics); the
   built-in suite's evidence and rule metrics, added since, are reported beside it.
   Issue 32's targets: the whole run with 1,000 resamples at most 2x the ``--bootstrap 0`` run,
   its intervals phase at most 3 s (per-block multinomial draws, ``--bootstrap-stream``).
2. Per bootstrap resample: pingce's ``intervals`` phase / 1,000 against scikit-learn computing the
   same metrics on each resample (timed on 20 resamples in this process); and the run again with
   ``--bootstrap-method poisson`` (keyed Poisson weights, issue 16): its cost per resample and
   how far its interval ends fall from the multinomial bootstrap's (Monte Carlo error only).
3. Metrics alone on 1,000,000 labels against the floor: a bare ``numpy.bincount`` confusion
   matrix (in this process).

The values pingce wrote to results.json must equal scikit-learn's on the full data (to 1e-9;
latency percentiles: numpy's default linear interpolation).

Data: seeded records (id, gold and predicted level with a realistic confusion, latency, a
contract type), written once to ``benchmarks/data/``.

Run: ``.venv/bin/python benchmarks/bench_contract_risk.py [records]``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import machine, out_dir, print_checks, print_table, run_cli, save_and_exit
from _data import contract_risk_file, risk_labels

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
RESAMPLES = 1000
SKLEARN_RESAMPLES = 20
TARGET_RSS_MB = 311
TARGET_WALL_S = 67
TOL = 1e-9
TARGET_RATIO = 2.0
"""Issue 32: the run with 1,000 resamples at most twice the ``--bootstrap 0`` run (wall)."""
TARGET_INTERVALS_S = 3.0
"""Issue 32: its intervals phase at most 3 s (the per-block multinomial draws)."""


def sklearn_resample(
    gold: np.ndarray, pred: np.ndarray, latency: np.ndarray, idx: np.ndarray
) -> dict[str, float]:
    """The contract-risk metrics on one resample, the way a scikit-learn user computes them."""
    from sklearn import metrics as skm

    g, p, lat = gold[idx], pred[idx], latency[idx]
    labels = [0, 1, 2]
    gb, pb = (g < 2).astype(int), (p < 2).astype(int)
    out = {
        "accuracy": skm.accuracy_score(g, p),
        "weighted_accuracy": float(np.mean(1 - np.abs(g - p) / 2)),
        "precision": skm.precision_score(gb, pb),
        "recall": skm.recall_score(gb, pb),
        "f1": skm.f1_score(gb, pb),
        "macro_f1": skm.f1_score(g, p, labels=labels, average="macro"),
        "micro_f1": skm.f1_score(g, p, labels=labels, average="micro"),
        "weighted_f1": skm.f1_score(g, p, labels=labels, average="weighted"),
        "macro_precision": skm.precision_score(g, p, labels=labels, average="macro"),
        "macro_recall": skm.recall_score(g, p, labels=labels, average="macro"),
        "cohen_kappa": skm.cohen_kappa_score(g, p, labels=labels),
        "linear_kappa": skm.cohen_kappa_score(g, p, labels=labels, weights="linear"),
        "qwk": skm.cohen_kappa_score(g, p, labels=labels, weights="quadratic"),
        "avg_latency_sec": float(np.mean(lat)),
        "p50_latency_sec": float(np.percentile(lat, 50)),
        "p95_latency_sec": float(np.percentile(lat, 95)),
        "p99_latency_sec": float(np.percentile(lat, 99)),
    }
    skm.confusion_matrix(g, p, labels=labels)
    skm.precision_recall_fscore_support(g, p, labels=labels, average=None)
    return out


def metrics_alone(gold: np.ndarray, pred: np.ndarray) -> tuple[float, float]:
    """Seconds for pingce's label metrics on 1M labels, and for a bare bincount."""
    from pingce.labels import RISK_LEVELS
    from pingce.metrics import Context
    from pingce.records import Table
    from pingce.suites import load_suite

    suite = load_suite("contract-risk")
    label_metrics = {  # the metrics of the two label fields (not latency, evidence, rules)
        name: m
        for name, m in suite.metrics.items()
        if {f.path for f in m.statistic().fields()} <= {"gold_level", "pred_level"}
    }
    table = Table(
        source="bench",
        ids=[],
        lines=np.empty(0, dtype=np.int64),
        columns={"gold_level": gold.astype(np.int16), "pred_level": pred.astype(np.int16)},
    )
    assert RISK_LEVELS.k == 3

    def ours() -> dict[str, float]:
        blocks = {}
        values = {}
        for name, metric in label_metrics.items():
            statistic = metric.statistic()
            if statistic.key not in blocks:
                blocks[statistic.key] = statistic.compute(table, Context()).total()
            values[name] = float(metric.finalize(blocks[statistic.key][None, :])[0])
        return values

    def floor() -> np.ndarray:
        return np.bincount(gold * 3 + pred, minlength=9)

    def best(fn: object, repeat: int = 15) -> float:
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - t)
        return min(times)

    return best(ours), best(floor)


def main() -> None:
    info = machine(["scikit-learn", "scipy"])
    path = contract_risk_file(N)
    gold, pred, latency = risk_labels(N)
    print(f"data: {path} ({path.stat().st_size / 1e6:.0f} MB, {N:,} records)", flush=True)

    full = run_cli(
        f"`pingce run contract-risk` ({N:,}, {RESAMPLES:,} resamples)",
        ["run", "contract-risk", "--data", path, "--bootstrap", RESAMPLES],
        out=out_dir("contract_risk", "default"),
    )
    base = run_cli(
        f"`pingce run contract-risk --bootstrap 0` ({N:,})",
        ["run", "contract-risk", "--data", path, "--bootstrap", "0"],
        out=out_dir("contract_risk", "bootstrap0"),
    )
    poisson = run_cli(
        f"`pingce run contract-risk --bootstrap-method poisson` ({N:,}, {RESAMPLES:,} resamples)",
        [
            *["run", "contract-risk", "--data", path, "--bootstrap", RESAMPLES],
            *["--bootstrap-method", "poisson"],
        ],
        out=out_dir("contract_risk", "poisson"),
    )
    levels = run_cli(
        f"`pingce run contract_risk_levels.yaml` (17 metrics; {N:,}, {RESAMPLES:,} resamples)",
        [
            "run",
            Path(__file__).parent / "contract_risk_levels.yaml",
            "--data",
            path,
            "--bootstrap",
            RESAMPLES,
        ],
        out=out_dir("contract_risk", "levels"),
    )
    intervals = full.phases.get("intervals", 0.0)
    per_resample = intervals / RESAMPLES
    poisson_per_resample = poisson.phases.get("intervals", 0.0) / RESAMPLES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = sklearn_resample(gold, pred, latency, np.arange(N))
        rng = np.random.default_rng(1)
        sklearn_resample(gold, pred, latency, rng.integers(0, N, N))  # warm-up
        t = time.perf_counter()
        for _ in range(SKLEARN_RESAMPLES):
            sklearn_resample(gold, pred, latency, rng.integers(0, N, N))
        sk_per_resample = (time.perf_counter() - t) / SKLEARN_RESAMPLES
    ours, floor = metrics_alone(gold, pred)

    problems = []
    # the Poisson bootstrap's ends against the multinomial's: Monte Carlo error only (an end's
    # standard error with 1,000 resamples is about 0.1 of the estimate's sd; 0.5 sd is ~3.5 SE
    # for a difference of two independent ends)
    widest = 0.0
    multinomial_metrics = full.results()["metrics"]
    for name, entry in poisson.results()["metrics"].items():
        other = multinomial_metrics[name]
        if None in (entry["ci_low"], other["ci_low"], entry["ci_high"], other["ci_high"]):
            continue
        sd = (other["ci_high"] - other["ci_low"]) / (2 * 1.96)
        if sd > 0:
            for end in ("ci_low", "ci_high"):
                widest = max(widest, abs(entry[end] - other[end]) / sd)
    if widest > 0.5:
        problems.append(f"Poisson interval ends differ from the multinomial's by {widest:.2f} sd")
    for run in (full, base, poisson, levels):
        metrics = run.results()["metrics"]
        for name, value in expected.items():
            got = metrics[name]["value"]
            if got is None or abs(got - value) > TOL:
                problems.append(f"{run.label}: {name} pingce {got!r}, scikit-learn/numpy {value!r}")

    intervals_ok = intervals <= TARGET_INTERVALS_S
    ratio = full.wall_s / base.wall_s
    ratio_ok = ratio <= TARGET_RATIO
    wall_ok = levels.wall_s <= TARGET_WALL_S
    rss_ok = levels.peak_rss_mb <= TARGET_RSS_MB
    print_table(
        ["measurement", "result", "target"],
        [
            [
                base.label,
                f"{base.wall_s:.2f} s, {base.peak_rss_mb:.0f} MB",
                "",
            ],
            [
                levels.label,
                f"{levels.wall_s:.2f} s",
                f"~{TARGET_WALL_S} s: {'met' if wall_ok else 'NOT met'}",
            ],
            [
                "  its peak RSS",
                f"{levels.peak_rss_mb:.0f} MB",
                f"<= {TARGET_RSS_MB} MB: {'met' if rss_ok else 'NOT met'}",
            ],
            [
                f"{full.label} (+ evidence and rule metrics)",
                f"{full.wall_s:.2f} s, {full.peak_rss_mb:.0f} MB",
                "",
            ],
            [
                "  its intervals phase",
                f"{intervals:.2f} s",
                f"<= {TARGET_INTERVALS_S:.0f} s (issue 32): {'met' if intervals_ok else 'NOT met'}",
            ],
            [
                "  its wall / the --bootstrap 0 run's",
                f"{ratio:.2f}x",
                f"<= {TARGET_RATIO:.0f}x (issue 32): {'met' if ratio_ok else 'NOT met'}",
            ],
            ["per resample: pingce (intervals phase / 1,000)", f"{per_resample * 1e3:.1f} ms", ""],
            [
                f"per resample: scikit-learn, same metrics ({SKLEARN_RESAMPLES} timed)",
                f"{sk_per_resample * 1e3:,.0f} ms",
                "",
            ],
            [
                "ratio per resample",
                f"pingce {sk_per_resample / per_resample:.0f}x faster",
                ">= 20x",
            ],
            [
                poisson.label,
                f"{poisson.wall_s:.2f} s, {poisson.peak_rss_mb:.0f} MB",
                "",
            ],
            [
                "per resample: Poisson / multinomial",
                f"{poisson_per_resample * 1e3:.1f} ms / {per_resample * 1e3:.1f} ms",
                "",
            ],
            [
                "Poisson ends - multinomial ends (largest, in sd of the estimate)",
                f"{widest:.3f}",
                "< 0.5 (Monte Carlo error)",
            ],
            [f"label metrics alone on {N:,} labels (in process)", f"{ours * 1e3:.1f} ms", ""],
            ["bare np.bincount confusion matrix (the floor)", f"{floor * 1e3:.1f} ms", ""],
            ["ratio to the floor", f"{ours / floor:.2f}x", "<= 3x"],
        ],
        title=f"\ncontract-risk, {N:,} records:",
    )
    print_checks(
        (full, base, poisson, levels),
        problems,
        f"numbers identical: all {len(expected)} metrics in both runs' results.json equal "
        "scikit-learn's (and numpy's percentiles) on the full data to 1e-9",
        mismatch="MISMATCH with scikit-learn",
    )
    save_and_exit(
        "bench_contract_risk",
        {
            "machine": info,
            "records": N,
            "file_mb": path.stat().st_size / 1e6,
            "with_bootstrap": full.summary(),
            "no_bootstrap": base.summary(),
            "poisson": poisson.summary(),
            "levels_suite": levels.summary(),
            "poisson_per_resample_ms": poisson_per_resample * 1e3,
            "poisson_vs_multinomial_ends_sd": widest,
            "target_wall_met": wall_ok,
            "target_rss_met": rss_ok,
            "per_resample_ms": per_resample * 1e3,
            "sklearn_per_resample_ms": sk_per_resample * 1e3,
            "speedup_vs_sklearn": sk_per_resample / per_resample if per_resample else None,
            "metrics_alone_ms": ours * 1e3,
            "bincount_floor_ms": floor * 1e3,
            "ratio_to_floor": ours / floor,
            "identical": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
