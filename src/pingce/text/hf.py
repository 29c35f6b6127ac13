"""What Hugging Face ``evaluate``'s ``rouge`` and ``bleu`` metrics compute, beyond the counting.

**ROUGE** (``evaluate``'s ``rouge`` wraps Google's rouge-score): per record the rouge-score
scores (:mod:`pingce.text.rouge_google` on :func:`pingce.text.tokenize.rouge_score_tokens`); by
default (``use_aggregator=True``) ``evaluate`` reports not their mean but the *mid* of
rouge-score's ``BootstrapAggregator``: for each ROUGE type in turn (``rouge1``, ``rouge2``,
``rougeL``, ``rougeLsum``), ``n_samples`` (1000) times ``np.random.choice(np.arange(n), size=n)``
from numpy's *global* random state, the mean of the resampled ``(precision, recall, F)`` rows;
then the 2.5th, 50th and 97.5th percentiles of those means (low, mid, high). ``evaluate`` runs
the metric under ``np.random.seed(module.seed)``, where ``module.seed`` is the ``seed`` given to
``evaluate.load`` or, by default, a word of numpy's global random state when the metric was
loaded: random from one process to the next, unless the caller seeds numpy before loading (the
reference's ``hf_fc_score`` loads its metrics inside, so ``np.random.seed(s)`` just before calling
it fixes ``module.seed`` to ``s``). :func:`bootstrap_aggregate` reproduces the aggregator exactly
for a given seed, with the draws of the types before it (``skip``), from a private
``numpy.random.RandomState`` (numpy's global state is left alone).

**BLEU** (``evaluate``'s ``bleu`` wraps tensorflow/nmt's ``compute_bleu`` on ``tokenizer_13a``
tokens, ``max_order=4``, ``smooth=False``): a corpus score from summed statistics
``[translation_length, reference_length, matches_1..N, possible_1..N]`` (per record the clipped
n-gram matches against its one reference and ``max(0, len - n + 1)`` possible n-grams: the same
numbers as sacrebleu's statistics, :func:`pingce.text.bleu.sacrebleu_bleu_stats_batch`).
:func:`nmt_bleu` is its finaliser, on a 0-1 scale: ``p_n = matches_n / possible_n`` (0 when
nothing is possible; with ``smooth``, ``(matches_n + 1) / (possible_n + 1)``), the geometric mean
``exp(sum(log(p_n) / N))`` (0 when any ``p_n`` is 0: no smoothing lifts it), the length ratio
``r = translation / reference`` and the brevity penalty ``1`` if ``r > 1`` else
``exp(1 - 1 / r)``. With several references nmt takes the *shortest* reference's length (not the
closest, as sacrebleu); with one reference per record, as here, the two agree.

nmt divides by zero where there is no text: a corpus with no reference tokens (``r`` is x/0) or
no predicted tokens (``1 / r`` is 1/0) raises ``ZeroDivisionError`` in ``evaluate``. Here a
corpus with tokens on one side only scores 0 (no n-gram can match; the limit of the formula), and
one with no tokens at all is undefined (NaN, for the zero-division policy).
"""

from __future__ import annotations

import numpy as np

from .bleu import bleu_stats_parts

__all__ = ["ROUGE_TYPES", "bootstrap_aggregate", "nmt_bleu", "nmt_bleu_parts"]

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")
"""``evaluate``'s default ``rouge_types``, in the order its aggregator draws their resamples."""


def bootstrap_aggregate(
    matrix: np.ndarray,
    *,
    seed: int,
    n_samples: int = 1000,
    confidence_interval: float = 0.95,
    skip: int = 0,
) -> np.ndarray:
    """rouge-score's ``BootstrapAggregator`` over one score type: ``(3, k)`` rows low, mid and
    high of the columns of ``matrix`` (``(n, k)``: one row a record, e.g. precision, recall, F).

    Equal to ``BootstrapAggregator(confidence_interval, n_samples)`` after
    ``np.random.seed(seed)``, for the type that comes after ``skip`` other types (each of
    ``n`` records) in its ``aggregate``: ``evaluate``'s ``rouge2`` has ``skip=1``. The
    computation is rouge-score's, step for step (``np.random.choice`` of the record indices,
    ``np.mean(sample, axis=0)``, ``np.percentile``), so the numbers agree bit for bit.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples <= 0:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not 0 <= confidence_interval <= 1:
        raise ValueError(f"confidence_interval must be within [0, 1], got {confidence_interval}")
    if isinstance(skip, bool) or not isinstance(skip, int) or skip < 0:
        raise ValueError(f"skip must be an integer >= 0, got {skip!r}")
    scores = np.asarray(matrix, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] == 0:
        raise ValueError("the aggregator needs a non-empty (records, measures) matrix")
    n = scores.shape[0]
    state = np.random.RandomState(seed)
    population = np.arange(n)
    # The earlier types' draws depend on n alone. ``choice(population, size=n)`` draws
    # ``randint(0, n, size=n)`` from the frozen legacy stream, so they are skipped in blocks.
    left = skip * n_samples
    block = max(1, (1 << 22) // n)
    while left > 0:
        rows = min(block, left)
        state.randint(0, n, size=(rows, n))
        left -= rows
    sample_mean = np.zeros((n_samples, scores.shape[1]))
    for i in range(n_samples):
        sample_idx = state.choice(population, size=n)
        sample_mean[i, :] = np.mean(scores[sample_idx, :], axis=0)
    percentile_delta = (1 - confidence_interval) / 2
    q = 100 * np.array([percentile_delta, 0.5, 1 - percentile_delta])
    out: np.ndarray = np.percentile(sample_mean, q, axis=0)
    return out


def nmt_bleu_parts(
    stats: np.ndarray, smooth: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(bleu, precisions, brevity_penalty, length_ratio)`` of nmt's ``compute_bleu`` from
    (summed) statistics ``(..., 2 + 2N)``: ``[translation_length, reference_length,
    matches_1..N, possible_1..N]`` (see the module for the cases nmt cannot compute)."""
    translation, reference, matches, possible = bleu_stats_parts(stats)
    order = matches.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if smooth:
            precisions = (matches + 1.0) / (possible + 1.0)
        else:
            precisions = np.where(
                possible > 0, matches / np.where(possible > 0, possible, 1.0), 0.0
            )
        positive = np.all(precisions > 0, axis=-1)
        logs = np.log(np.where(precisions > 0, precisions, 1.0))
        total = np.zeros(translation.shape)
        for n in range(order):  # nmt sums the weighted logs in order
            total = total + (1.0 / order) * logs[..., n]
        geo_mean = np.where(positive, np.exp(total), 0.0)
        ratio = translation / reference
        bp = np.where(ratio > 1.0, 1.0, np.exp(1.0 - 1.0 / ratio))
        bleu = geo_mean * bp
    nothing = (translation == 0) & (reference == 0)
    one_sided = ~nothing & ((translation == 0) | (reference == 0))
    bleu = np.where(nothing, np.nan, np.where(one_sided, 0.0, bleu))
    return np.asarray(bleu, dtype=np.float64), precisions, bp, ratio


def nmt_bleu(stats: np.ndarray, smooth: bool = False) -> np.ndarray:
    """nmt's ``compute_bleu`` (0-1) from (summed) statistics ``(..., 2 + 2N)``; NaN where there
    is no token on either side."""
    return nmt_bleu_parts(stats, smooth)[0]
