"""Synthetic data of the benchmarks: seeded, written once into ``benchmarks/data/`` (ignored by
git) and reused by later runs."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DATA_DIR",
    "contract_risk_file",
    "data_file",
    "risk_labels",
    "risk_systems",
    "risk_systems_files",
    "write_yaml",
]

DATA_DIR = Path(__file__).parent / "data"
LEVELS = np.array(["高", "中", "低"])


def data_file(name: str, make: Callable[[], Iterable[dict[str, Any] | str]]) -> Path:
    """``benchmarks/data/NAME``, written from ``make()`` on first use (one JSON object or one
    ready line per item) through a temporary file, so an interrupted run leaves nothing."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / name
    if path.exists():
        return path
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for item in make():
            if isinstance(item, str):
                handle.write(item if item.endswith("\n") else item + "\n")
            else:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    tmp.rename(path)
    return path


def write_yaml(name: str, text: str) -> Path:
    """A suite file written by a benchmark into ``benchmarks/data/`` (rewritten every run)."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / name
    path.write_text(text, encoding="utf-8")
    return path


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

    def lines() -> Iterable[str]:
        gold, pred, latency = risk_labels(n, seed)
        for i in range(n):
            yield (
                f'{{"id": "r{i}", "gold_level": "{LEVELS[gold[i]]}", '
                f'"pred_level": "{LEVELS[pred[i]]}", "latency_sec": {latency[i]}, '
                f'"contract_type": "type{i % 7}"}}'
            )

    return data_file(f"contract_risk_{n}_{seed}.jsonl", lines)


def risk_systems(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold levels and two systems' predictions over the same records (80 % and 75 % right,
    the rest uniform over the three levels)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, size=n)
    a = np.where(rng.random(n) < 0.8, gold, rng.integers(0, 3, size=n))
    b = np.where(rng.random(n) < 0.75, gold, rng.integers(0, 3, size=n))
    return gold, a, b


def risk_systems_files(n: int, seed: int = 0) -> tuple[Path, Path]:
    """The candidate's and the baseline's JSONL files of :func:`risk_systems` (same ids)."""
    gold, a, b = risk_systems(n, seed)

    def lines(pred: np.ndarray) -> Callable[[], Iterable[str]]:
        def make() -> Iterable[str]:
            for i in range(n):
                yield (
                    f'{{"id": "r{i}", "gold_level": "{LEVELS[gold[i]]}", '
                    f'"pred_level": "{LEVELS[pred[i]]}"}}'
                )

        return make

    return (
        data_file(f"compare_candidate_{n}_{seed}.jsonl", lines(a)),
        data_file(f"compare_baseline_{n}_{seed}.jsonl", lines(b)),
    )
