"""Choosing the similarity threshold τ from human-labelled pairs (``pingce calibrate``).

The seed chose τ = 0.7 "by a parameter search on a validation set". Given pairs labelled by people
(``{"a": ..., "b": ..., "match": true}``), this scores them with a backend and, for every candidate
threshold, counts the pairs the rule ``Sim > τ`` (identical strings always match) gets right:
precision, recall, F1 and Cohen's kappa with the labels. The best τ maximises F1 (ties: higher
kappa, then the higher τ).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from .engine.similarities import BackendChoice, score_pairs
from .errors import InputError
from .progress import ProgressHook, no_progress
from .records import FieldSpec, load_records

__all__ = ["CalibrationPoint", "CalibrationResult", "calibrate", "threshold_curve"]


@dataclass(frozen=True)
class CalibrationPoint:
    """Agreement of the rule ``Sim > threshold`` with the labels."""

    threshold: float
    precision: float | None
    recall: float | None
    f1: float | None
    kappa: float | None
    tp: int
    fp: int
    fn: int
    tn: int


@dataclass(frozen=True)
class CalibrationResult:
    """The curve, the best point, the backend signature and the number of pairs."""

    signature: str
    n_pairs: int
    curve: list[CalibrationPoint]
    best: CalibrationPoint
    failures: int


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def _point(
    threshold: float, scores: np.ndarray, labels: np.ndarray, same: np.ndarray
) -> CalibrationPoint:
    said = same | (scores > threshold)
    tp = int(np.sum(said & labels))
    fp = int(np.sum(said & ~labels))
    fn = int(np.sum(~said & labels))
    tn = int(np.sum(~said & ~labels))
    n = tp + fp + fn + tn
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    observed = (tp + tn) / n if n else math.nan
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n) if n else math.nan
    kappa = None if n == 0 or expected == 1 else (observed - expected) / (1 - expected)
    return CalibrationPoint(threshold, precision, recall, f1, kappa, tp, fp, fn, tn)


def threshold_curve(
    scores: np.ndarray, labels: np.ndarray, same: np.ndarray
) -> list[CalibrationPoint]:
    """One point per distinct score (the rule changes only there), plus 0."""
    candidates = np.unique(np.concatenate([[0.0], scores[~np.isnan(scores)]]))
    return [_point(float(t), scores, labels, same) for t in candidates]


def calibrate(
    pairs_file: str | os.PathLike[str],
    similarity: str,
    *,
    base_url: str | None = None,
    cache: str | bool | None = None,
    progress: ProgressHook | None = None,
) -> CalibrationResult:
    """Score the labelled pairs with the backend (the engine's similarity phase: distinct pairs,
    one backend, the cache) and choose τ by F1."""
    specs = [
        FieldSpec("a", "string"),
        FieldSpec("b", "string"),
        FieldSpec("match", "json", parser=_boolean),
    ]
    table = load_records(pairs_file, specs)
    a, b = table.column("a"), table.column("b")
    labels = np.asarray(table.column("match"), dtype=bool)
    scored = score_pairs(
        zip(a, b, strict=True),
        BackendChoice(similarity, base_url=base_url, cache=cache),
        progress or no_progress,
    )
    scores = np.array([scored.table.get(x, y) for x, y in zip(a, b, strict=True)])
    same = np.array([x == y for x, y in zip(a, b, strict=True)])
    ok = ~np.isnan(scores)
    curve = threshold_curve(scores[ok], labels[ok], same[ok])
    if not curve or labels[ok].sum() == 0:
        raise InputError("need at least one pair labelled match: true", source=str(pairs_file))
    best = max(
        curve,
        key=lambda p: (
            -1.0 if p.f1 is None else p.f1,
            -2.0 if p.kappa is None else p.kappa,
            p.threshold,
        ),
    )
    return CalibrationResult(scored.signature, int(table.n), curve, best, scored.stats.failures)


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")
