"""``pingce compare`` at scale: a paired bootstrap of every contract-risk metric.

200,000 seeded records, two systems (80 % and 75 % right). pingce's paired bootstrap (1,000
resamples, BCa, all 16 metrics of the suite) against:
- scipy.stats.bootstrap(paired=True, vectorized=True) for the accuracy difference alone (one
  metric, percentile, batches of 20 resamples to keep the index matrix in memory);
- the naive way: recompute accuracy, macro-F1 and Cohen's kappa of both systems with
  scikit-learn on each resample (timed on 5 resamples, extrapolated to 1,000).

Run: ``.venv/bin/python benchmarks/bench_compare.py [records]``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
B = 1000
LEVELS = ["高", "中", "低"]


def systems(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], np.ndarray]:
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, size=n)
    a = np.where(rng.random(n) < 0.8, gold, rng.integers(0, 3, size=n))
    b = np.where(rng.random(n) < 0.75, gold, rng.integers(0, 3, size=n))
    cand = [
        {"id": f"r{i}", "gold_level": LEVELS[g], "pred_level": LEVELS[p]}
        for i, (g, p) in enumerate(zip(gold, a, strict=True))
    ]
    base = [
        {"id": f"r{i}", "gold_level": LEVELS[g], "pred_level": LEVELS[p]}
        for i, (g, p) in enumerate(zip(gold, b, strict=True))
    ]
    return cand, base, np.stack([gold, a, b])


def main() -> None:
    import scipy.stats
    from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score

    import pingce

    cand, base, arrays = systems(N)
    gold, a, b = arrays
    pingce.compare("contract-risk", cand[:1000], base[:1000], bootstrap=10)  # warm up imports

    started = time.perf_counter()
    result = pingce.compare("contract-risk", cand, base, bootstrap=B, seed=0)
    ours = time.perf_counter() - started
    metrics = len(result.metrics)

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
    for _ in range(5):
        index = rng.integers(0, N, size=N)
        for pred in (a, b):
            accuracy_score(gold[index], pred[index])
            f1_score(gold[index], pred[index], average="macro")
            cohen_kappa_score(gold[index], pred[index])
    naive_sec = (time.perf_counter() - started) / 5 * B

    accuracy = result.metrics["accuracy"]
    print(
        json.dumps(
            {
                "records": N,
                "resamples": B,
                "pingce_metrics": metrics,
                "pingce_sec": ours,
                "pingce_accuracy_delta_ci": [accuracy.ci_low, accuracy.ci_high],
                "scipy_accuracy_only_sec": scipy_sec,
                "scipy_accuracy_ci": [ref.confidence_interval.low, ref.confidence_interval.high],
                "naive_sklearn_3_metrics_sec_extrapolated": naive_sec,
            },
            indent=2,
        )
    )
    print(
        f"compare: {N:,} records, {B:,} paired resamples: pingce {ours:.1f} s for {metrics} "
        f"metrics (BCa); scipy {scipy_sec:.1f} s for accuracy alone (percentile) = "
        f"{scipy_sec / ours:.1f}x pingce's time; scikit-learn recomputing 3 metrics per resample "
        f"~{naive_sec:,.0f} s = {naive_sec / ours:,.0f}x"
    )


if __name__ == "__main__":
    main()
