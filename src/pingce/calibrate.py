"""Choosing the similarity threshold τ from human-labelled pairs (``pingce calibrate``).

The reference chose τ = 0.7 "by a parameter search on a validation set". Given pairs labelled by
people (``{"a": ..., "b": ..., "match": true}``), this scores them with a backend and, for every
candidate threshold, counts the pairs the rule ``Sim > τ`` (identical strings always match) gets
right: precision, recall, F1 and Cohen's kappa with the labels. The best τ maximises F1 (ties:
higher kappa, then the higher τ). The ROC AUC of the scores against the labels (the chance that a
matching pair scores above a non-matching one, ties counting half) compares backends whatever
τ each needs. A pair the backend could not score (NaN) is left out of both and counted.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ._defaults import DEFAULT_SIMILARITY
from ._json import dumps_indented
from .engine.similarities import BackendChoice, score_pairs
from .errors import InputError
from .progress import ProgressHook, no_progress
from .records import FieldSpec, load_records
from .runfolder.atomic import atomic_files

if TYPE_CHECKING:
    from .similarity.base import SimilarityBackend

__all__ = [
    "CalibrationPoint",
    "CalibrationResult",
    "best_point",
    "calibrate",
    "roc_auc",
    "threshold_curve",
    "threshold_point",
    "write_calibration",
]


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
    """The curve, the best point, the ROC AUC, the backend signature and the number of pairs."""

    signature: str
    n_pairs: int
    """Labelled pairs in the file (lines), the failed ones included."""
    curve: list[CalibrationPoint]
    best: CalibrationPoint
    failures: int
    """Pairs left out because the backend could not score them."""
    auc: float | None
    """ROC AUC of the scores against the labels (None without both a match and a non-match)."""

    def to_dict(self) -> dict[str, Any]:
        """What ``pingce calibrate --out FILE`` writes."""
        return {
            "signature": self.signature,
            "n_pairs": self.n_pairs,
            "failures": self.failures,
            "auc": self.auc,
            "best": dataclasses.asdict(self.best),
            "curve": [dataclasses.asdict(p) for p in self.curve],
        }


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else num / den


def threshold_point(
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
    return [threshold_point(float(t), scores, labels, same) for t in candidates]


def best_point(curve: list[CalibrationPoint]) -> CalibrationPoint:
    """The threshold that agrees best with the labels: the highest F1, ties broken by the
    higher kappa, then the higher threshold."""
    return max(
        curve,
        key=lambda p: (
            -1.0 if p.f1 is None else p.f1,
            -2.0 if p.kappa is None else p.kappa,
            p.threshold,
        ),
    )


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float | None:
    """Area under the ROC curve of ``scores`` against the boolean ``labels``: the Mann-Whitney U
    of the matching pairs over (matches x non-matches), from the ranks of all scores (tied scores
    share their average rank, so a tie between a match and a non-match counts half). None when
    one of the two classes is empty."""
    from scipy.stats import rankdata

    labels = np.asarray(labels, dtype=bool)
    positives = int(labels.sum())
    negatives = labels.size - positives
    if positives == 0 or negatives == 0:
        return None
    ranks = rankdata(np.asarray(scores, dtype=np.float64))
    u = float(ranks[labels].sum()) - positives * (positives + 1) / 2
    return u / (positives * negatives)


def calibrate(
    pairs_file: str | os.PathLike[str],
    similarity: str | SimilarityBackend = DEFAULT_SIMILARITY,
    *,
    base_url: str | None = None,
    cache: str | bool | None = None,
    progress: ProgressHook | None = None,
) -> CalibrationResult:
    """Score the labelled pairs with the backend (the engine's similarity phase: distinct pairs,
    one backend, the cache), choose τ by F1 and measure the ROC AUC. ``similarity``: a backend
    name (``--similarity``) or a backend object (the caller keeps it open and closes it)."""
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
    best = best_point(curve)
    auc = roc_auc(scores[ok], labels[ok])
    failures = int(np.sum(~ok))
    return CalibrationResult(scored.signature, int(table.n), curve, best, failures, auc)


def write_calibration(result: CalibrationResult, path: str | os.PathLike[str]) -> Path:
    """Write ``result`` as JSON to ``path``, all or nothing (:mod:`pingce.runfolder.atomic`: a
    staging folder beside it, named after this process, then a rename): an interrupted write
    leaves the old file, or none; a path that cannot be written is an
    :class:`~pingce.errors.OutputError` (path, reason)."""
    target = Path(path)
    text = dumps_indented(result.to_dict()) + "\n"
    with atomic_files(target, file=True) as staging:
        staging.write_text(target.name, text)
    return target


def _boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")


_boolean.cell = "boolean"  # type: ignore[attr-defined]  # a CSV cell true/false (FieldSpec.cell_kind)
