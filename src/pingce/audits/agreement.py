"""The judge's agreement with people on the labelled pairs, with bootstrap intervals: accuracy,
Cohen's kappa, the true and false positive rates of its verdicts at τ (``score > τ``, as
``pingce calibrate`` counts them) and the ROC AUC of its scores.

The intervals resample the labelled pairs with replacement (a percentile interval of
``resamples`` draws, seeded). Each resample is a vector of counts, so every statistic is a
product with the counts: the confusion cells ``counts @ cell``, and the AUC in its
Mann-Whitney form (ties counted half, as scikit-learn's ``roc_auc_score``) from the negatives'
weight below each score: ``O(n)`` a resample, not a positive-by-negative product."""

from __future__ import annotations

import numpy as np

__all__ = ["AGREEMENT_INTERVALS", "agreement_intervals", "agreement_resamples"]

AGREEMENT_INTERVALS = ("accuracy", "kappa", "true_positive_rate", "false_positive_rate", "roc_auc")
"""The agreement statistics given an interval, as audit.json names them."""


def _resampled_auc(scores: np.ndarray, human: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each resample's ROC AUC, ``Σ_pos w_i (W_neg(< s_i) + ½ W_neg(= s_i)) / (W_pos W_neg)``:
    the negatives' weight per distinct score summed once (``reduceat`` over the sorted
    scores), then its running total, so a resample costs ``O(n)``."""
    order = np.argsort(scores, kind="stable")
    ranked, weights = scores[order], counts[:, order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    level = np.cumsum(np.r_[True, ranked[1:] != ranked[:-1]]) - 1  # each pair's distinct score
    negative = np.add.reduceat(weights * ~human[order], starts, axis=1)
    below = np.cumsum(negative, axis=1) - negative
    positive = weights * human[order]
    wins = (positive * (below[:, level] + 0.5 * negative[:, level])).sum(axis=1)
    out: np.ndarray = wins / (positive.sum(axis=1) * negative.sum(axis=1))
    return out


def agreement_resamples(
    scores: np.ndarray, human: np.ndarray, threshold: float | None, counts: np.ndarray
) -> dict[str, np.ndarray]:
    """Each statistic of every resample (``counts``: ``(B, n)``, how often each pair is drawn);
    NaN where one is undefined (no positive, or no negative, among the drawn)."""
    scores = np.asarray(scores, dtype=np.float64)
    human = np.asarray(human, dtype=bool)
    counts = np.asarray(counts, dtype=np.float64)
    out: dict[str, np.ndarray] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        if threshold is not None:
            said = scores > threshold
            tp, fp = counts @ (said & human), counts @ (said & ~human)
            fn, tn = counts @ (~said & human), counts @ (~said & ~human)
            n = tp + fp + fn + tn
            observed = (tp + tn) / n
            expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
            out["accuracy"] = observed
            out["kappa"] = np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)
            out["true_positive_rate"] = tp / (tp + fn)
            out["false_positive_rate"] = fp / (fp + tn)
        out["roc_auc"] = _resampled_auc(scores, human, counts)
    return out


def agreement_intervals(
    scores: np.ndarray,
    human: np.ndarray,
    threshold: float | None,
    *,
    level: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, list[float] | None]:
    """The percentile interval of each statistic over ``resamples`` resamples of the pairs
    (None where fewer than two resamples define it)."""
    n = np.asarray(scores).size
    if n < 2:
        return {}
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, np.full(n, 1.0 / n), size=resamples)
    alpha = (1.0 - level) / 2.0
    out: dict[str, list[float] | None] = {}
    for key, values in agreement_resamples(scores, human, threshold, counts).items():
        defined = values[np.isfinite(values)]
        out[key] = (
            [float(np.quantile(defined, alpha)), float(np.quantile(defined, 1 - alpha))]
            if defined.size >= 2
            else None
        )
    return out
