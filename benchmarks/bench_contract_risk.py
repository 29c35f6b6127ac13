"""Benchmark: contract-risk at one million records (issue 2).

1. The whole pipeline in a fresh process: load 1,000,000 JSONL records, compute every metric of
   the built-in suite, 1,000 bootstrap resamples; wall time per phase and peak memory (RSS).
2. Per bootstrap resample: pingce (one bincount per statistic block, all metrics finalised from
   the summed statistics) against scikit-learn computing the same metrics on each resample
   (timed on 20 resamples in the same run).
3. Metrics alone on 1,000,000 labels against the floor: a bare ``numpy.bincount`` confusion
   matrix.

Run with ``make bench`` (or ``.venv/bin/python benchmarks/bench_contract_risk.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _data import contract_risk_file, risk_labels

N = 1_000_000
RESAMPLES = 1000
SKLEARN_RESAMPLES = 20

CHILD = r"""
import json, resource, sys, time
from pingce.engine import evaluate_suite
from pingce.options import RunOptions
marks = []
def hook(description, total):
    marks.append((description, time.perf_counter()))
    return lambda amount: None
start = time.perf_counter()
result = evaluate_suite("contract-risk", sys.argv[1], RunOptions(bootstrap=int(sys.argv[2])),
                        progress=hook)
end = time.perf_counter()
phases = dict(marks)
boot = phases.get("bootstrap", end)
print(json.dumps({
    "total": end - start,
    "load_and_metrics": boot - start,
    "bootstrap": end - boot if "bootstrap" in phases else 0.0,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "accuracy": result.metrics["accuracy"].value,
    "n": result.n_records,
}))
"""


def pipeline(path: Path, resamples: int) -> dict[str, float]:
    """Run the suite in a fresh interpreter and return its timings and peak memory."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(resamples)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout))


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
    label_metrics = {
        name: m for name, m in suite.metrics.items() if not name.endswith("latency_sec")
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
    path = contract_risk_file(N)
    gold, pred, latency = risk_labels(N)
    print(f"data: {path} ({path.stat().st_size / 1e6:.0f} MB, {N:,} records)")

    base = pipeline(path, 0)
    full = pipeline(path, RESAMPLES)
    per_resample = full["bootstrap"] / RESAMPLES
    print(
        f"pingce pipeline, bootstrap 0:    {base['total']:.2f} s (load+metrics), "
        f"peak RSS {base['peak_rss_mb']:.0f} MB"
    )
    print(
        f"pingce pipeline, bootstrap {RESAMPLES}: {full['total']:.2f} s total, "
        f"{full['bootstrap']:.2f} s bootstrap, peak RSS {full['peak_rss_mb']:.0f} MB"
    )

    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sklearn_resample(gold, pred, latency, rng.integers(0, N, N))  # warm-up
        t = time.perf_counter()
        for _ in range(SKLEARN_RESAMPLES):
            sklearn_resample(gold, pred, latency, rng.integers(0, N, N))
        sk_per_resample = (time.perf_counter() - t) / SKLEARN_RESAMPLES
    print(
        f"per resample: pingce {per_resample * 1e3:.1f} ms, scikit-learn "
        f"{sk_per_resample * 1e3:.0f} ms -> pingce {sk_per_resample / per_resample:.0f}x faster"
    )

    ours, floor = metrics_alone(gold, pred)
    print(
        f"label metrics alone on {N:,} labels: pingce {ours * 1e3:.1f} ms, bare np.bincount "
        f"{floor * 1e3:.1f} ms -> {ours / floor:.2f}x the floor"
    )
    summary = {
        "pipeline_total_s": full["total"],
        "pipeline_bootstrap_s": full["bootstrap"],
        "pipeline_no_bootstrap_s": base["total"],
        "peak_rss_mb": full["peak_rss_mb"],
        "per_resample_ms": per_resample * 1e3,
        "sklearn_per_resample_ms": sk_per_resample * 1e3,
        "speedup_vs_sklearn": sk_per_resample / per_resample,
        "metrics_alone_ms": ours * 1e3,
        "bincount_floor_ms": floor * 1e3,
        "ratio_to_floor": ours / floor,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
