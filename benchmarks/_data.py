"""Synthetic contract-risk records for the benchmarks (seeded, written once, reused)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["DATA_DIR", "contract_risk_file", "risk_labels"]

DATA_DIR = Path(__file__).parent / "data"
LEVELS = np.array(["高", "中", "低"])


def risk_labels(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold and predicted level codes (0 = 高) with a realistic confusion, and latencies."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, size=n)
    confusion = np.array([[0.82, 0.15, 0.03], [0.22, 0.63, 0.15], [0.04, 0.14, 0.82]])
    u = rng.random(n)
    pred = (u[:, None] > np.cumsum(confusion[gold], axis=1)).sum(axis=1)
    latency = np.round(rng.lognormal(1.2, 0.35, size=n), 3)
    return gold, pred, latency


def contract_risk_file(n: int, seed: int = 0) -> Path:
    """A JSONL file of ``n`` contract-risk records (created on first use)."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / f"contract_risk_{n}_{seed}.jsonl"
    if path.exists():
        return path
    gold, pred, latency = risk_labels(n, seed)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(
                f'{{"id": "r{i}", "gold_level": "{LEVELS[gold[i]]}", '
                f'"pred_level": "{LEVELS[pred[i]]}", "latency_sec": {latency[i]}, '
                f'"contract_type": "type{i % 7}"}}\n'
            )
    tmp.rename(path)
    return path
