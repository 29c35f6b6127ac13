"""The judge's agreement with people on the labelled pairs, with bootstrap intervals: accuracy,
Cohen's kappa, the true and false positive rates of its verdicts at τ (``score > τ``, as
``pingce calibrate`` counts them) and the ROC AUC of its scores.

The intervals resample the labelled pairs with replacement (a percentile interval of
``resamples`` draws, seeded). Each resample is a vector of counts, so every statistic is a
product with the counts: the confusion cells ``counts @ cell``, and the AUC ``w_pos · C · w_neg /
(Σ w_pos Σ w_neg)`` with ``C[i, j] = [s_i > s_j] + ½ [s_i = s_j]`` over the positive and
negative pairs (the Mann-Whitney form, ties counted half, as scikit-learn's ``roc_auc_score``)."""

from __future__ import annotations

import numpy as np

__all__ = ["AGREEMENT_INTERVALS", "agreement_intervals", "agreement_resamples"]

AGREEMENT_INTERVALS = ("accuracy", "kappa", "true_positive_rate", "false_positive_rate", "roc_auc")
"""The agreement statistics given an interval, as audit.json names them."""

_CHUNK = 1 << 22
"""Cells of the AUC's product computed at once."""


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
        positive, negative = scores[human], scores[~human]
        above = (positive[:, None] > negative[None, :]).astype(np.float64)
        above += 0.5 * (positive[:, None] == negative[None, :])
        w_pos, w_neg = counts[:, human], counts[:, ~human]
        step = max(1, _CHUNK // max(1, above.size))
        wins = np.concatenate(
            [
                np.einsum("bi,ij,bj->b", w_pos[k : k + step], above, w_neg[k : k + step])
                for k in range(0, counts.shape[0], step)
            ]
        )
        out["roc_auc"] = wins / (w_pos.sum(axis=1) * w_neg.sum(axis=1))
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
