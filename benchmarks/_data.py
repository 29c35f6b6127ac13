"""Synthetic data of the benchmarks: seeded, written once into ``benchmarks/data/`` (ignored by
git) and reused by later runs."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DATA_DIR",
    "ROUGE_PRF",
    "chinese_text",
    "chinese_words",
    "contract_risk_file",
    "data_file",
    "edit_words",
    "risk_labels",
    "risk_systems",
    "risk_systems_files",
    "write_suite",
    "write_yaml",
]

DATA_DIR = Path(__file__).parent / "data"
LEVELS = np.array(["高", "中", "低"])

ROUGE_PRF = {
    f"{name}_{stat}": f"{{metric: {metric}, {arg}stat: {stat}}}"
    for name, metric, arg in (
        ("rouge1", "text_rouge_n", "n: 1, "),
        ("rouge2", "text_rouge_n", "n: 2, "),
        ("rougeL", "text_rouge_l", ""),
    )
    for stat in ("p", "r", "f")
}
"""A suite's metrics ``rouge1_p`` ... ``rougeL_f``: ROUGE-1, ROUGE-2 and ROUGE-L precision,
recall and F, as flow-style YAML lines of :func:`write_suite`."""


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


def write_suite(file: str, name: str, description: str, metrics: dict[str, str]) -> Path:
    """A suite ``name`` with an ``id`` field and ``metrics`` (name to a flow-style YAML mapping),
    written by :func:`write_yaml` as ``file``."""
    lines = [
        f"name: {name}",
        f"description: {description}",
        "id_field: id",
        "metrics:",
        *(f"  {k}: {v}" for k, v in metrics.items()),
    ]
    return write_yaml(file, "\n".join(lines) + "\n")


def chinese_words() -> tuple[list[str], np.ndarray]:
    """jieba's dictionary words of 1-4 Chinese characters with a frequency of at least 50, and
    their weights (frequency ** 0.8) for drawing sentences."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    words = [
        w
        for w, f in jieba.dt.FREQ.items()
        if f >= 50 and 1 <= len(w) <= 4 and all("\u4e00" <= c <= "\u9fa5" for c in w)
    ]
    freq = np.array([jieba.dt.FREQ[w] for w in words], dtype=np.float64)
    return words, freq**0.8


def chinese_text(rng: np.random.Generator, words: list[str], punct: list[str]) -> str:
    """``words`` run together, a mark of ``punct`` after 12 % of them (never the last), and
    a final ``。``."""
    out = []
    for j, w in enumerate(words):
        out.append(w)
        if j < len(words) - 1 and rng.random() < 0.12:
            out.append(punct[int(rng.integers(0, len(punct)))])
    return "".join(out) + "。"


def edit_words(
    rng: np.random.Generator, words: list[str], k: int, draw: Callable[[], str]
) -> list[str]:
    """A paraphrase-like edit of ``words`` (``k`` words long when drawn): up to ``k // 3``
    substitutions, deletions, insertions (a new word from ``draw``, drawn for every edit) and
    swaps of two neighbours."""
    out = list(words)
    for _ in range(int(rng.integers(0, max(2, k // 3)))):
        u = rng.random()
        pos = int(rng.integers(0, len(out))) if out else 0
        new = draw()
        if u < 0.45 and out:
            out[pos] = new
        elif u < 0.65 and out:
            del out[pos]
        elif u < 0.9:
            out.insert(pos, new)
        elif len(out) > 2:
            out[pos : pos + 2] = out[pos : pos + 2][::-1]
    return out


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
