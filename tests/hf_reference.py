"""The reference's second function-call scorer, ``hf_fc_score`` (Hugging Face ``evaluate``), as the
test oracle, built from the libraries ``evaluate`` wraps.

Why not ``evaluate`` itself: ``pip install evaluate`` (0.4.6) works, but the package holds no
metric: ``evaluate.load("rouge")`` fetches the metric script from the Hugging Face Hub at run
time, so offline (``HF_HUB_OFFLINE=1``, or a machine without the Hub, as the one pingce is tested
on) it raises ``FileNotFoundError: Couldn't find a module script ... rouge.py``; and the
``bleu`` script imports tensorflow/nmt's ``bleu.py``, which ``evaluate`` downloads from GitHub
when it loads the script. So this module computes what those scripts compute
(huggingface/evaluate, ``metrics/{rouge,bleu,accuracy}``), with the libraries they call:

* ``accuracy``: ``sklearn.metrics.accuracy_score(references, predictions)``;
* ``rouge``: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL",
  "rougeLsum"], use_stemmer=...)`` on ``(reference, prediction)``, and with the default
  ``use_aggregator=True`` rouge-score's ``scoring.BootstrapAggregator()`` reporting
  ``mid.fmeasure``. The aggregator draws from numpy's global random state, which ``evaluate``
  seeds with ``np.random.seed(module.seed)`` around ``_compute`` (``module.seed``: the ``seed`` of
  ``evaluate.load``, by default a word of numpy's state at load time, so ``np.random.seed(s)``
  before the reference's ``hf_fc_score``, which loads its metrics inside, makes it ``s``). Here
  :func:`hf_fc_score` calls ``np.random.seed(seed)`` just before ``aggregate()`` (and puts the
  previous state back), or, with ``seed=None``, reports the exact mean (``use_aggregator=False``,
  then ``np.mean``) that pingce reports by default;
* ``bleu``: ``Tokenizer13a`` (``evaluate``'s copy of sacrebleu's; here sacrebleu's own
  ``Tokenizer13a``, whose ``" ".join`` of tokens is split again) and tensorflow/nmt's
  ``compute_bleu`` (``max_order=4``, ``smooth=False``), written out below from its published
  source (tensorflow/nmt, ``nmt/scripts/bleu.py``).

``score_fn`` and ``fns2str`` are the reference's (:mod:`tests.fc_reference`; its two files
define them identically). Values are returned unrounded; the reference rounds them to 5 decimals.

A one-off cross-check with the real ``evaluate`` 0.4.6 (its three scripts and nmt's ``bleu.py``
taken from copies of their repositories and loaded from local paths in a throwaway virtual
environment, with the Hub off; the reference's ``hf_fc_score`` otherwise verbatim, unrounded) agreed
with pingce on the 21 bundled examples and on 828 seeded random records: the bootstrap mids (numpy
seeds 0, 7 and 2024), BLEU and ``fn_acc_name`` bit for bit, the means within 4e-16 (summation
order); see the README, "Suite: function-call-hf".
"""

from __future__ import annotations

import collections
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rouge_score import rouge_scorer, scoring
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sklearn.metrics import accuracy_score

from tests.fc_reference import fns2str, score_fn

__all__ = ["HF_METRICS", "compute_bleu", "hf_fc_score", "tokenizer_13a"]

HF_METRICS = ("fn_acc_name", "fn_acc_all", "rouge-1", "rouge-2", "rouge-l", "bleu-4")
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]  # evaluate's default rouge_types

_SACRE_13A = Tokenizer13a()


def tokenizer_13a(line: str) -> list[str]:
    """``evaluate``'s ``Tokenizer13a``: sacrebleu's 13a, returning the tokens (not joined)."""
    return str(_SACRE_13A(line)).split()


def _get_ngrams(segment: Sequence[str], max_order: int) -> collections.Counter[tuple[str, ...]]:
    counts: collections.Counter[tuple[str, ...]] = collections.Counter()
    for order in range(1, max_order + 1):
        for i in range(0, len(segment) - order + 1):
            counts[tuple(segment[i : i + order])] += 1
    return counts


def compute_bleu(
    reference_corpus: Sequence[Sequence[Sequence[str]]],
    translation_corpus: Sequence[Sequence[str]],
    max_order: int = 4,
    smooth: bool = False,
) -> tuple[float, list[float], float, float, int, int]:
    """tensorflow/nmt's ``compute_bleu``: ``(bleu, precisions, bp, ratio, translation_length,
    reference_length)``; raises ``ZeroDivisionError`` where nmt does (no tokens on a side)."""
    matches_by_order = [0] * max_order
    possible_matches_by_order = [0] * max_order
    reference_length = 0
    translation_length = 0
    for references, translation in zip(reference_corpus, translation_corpus, strict=True):
        reference_length += min(len(r) for r in references)
        translation_length += len(translation)
        merged_ref_ngram_counts: collections.Counter[tuple[str, ...]] = collections.Counter()
        for reference in references:
            merged_ref_ngram_counts |= _get_ngrams(reference, max_order)
        translation_ngram_counts = _get_ngrams(translation, max_order)
        overlap = translation_ngram_counts & merged_ref_ngram_counts
        for ngram in overlap:
            matches_by_order[len(ngram) - 1] += overlap[ngram]
        for order in range(1, max_order + 1):
            possible_matches = len(translation) - order + 1
            if possible_matches > 0:
                possible_matches_by_order[order - 1] += possible_matches
    precisions = [0.0] * max_order
    for i in range(0, max_order):
        if smooth:
            precisions[i] = (matches_by_order[i] + 1.0) / (possible_matches_by_order[i] + 1.0)
        elif possible_matches_by_order[i] > 0:
            precisions[i] = float(matches_by_order[i]) / possible_matches_by_order[i]
        else:
            precisions[i] = 0.0
    if min(precisions) > 0:
        p_log_sum = sum((1.0 / max_order) * math.log(p) for p in precisions)
        geo_mean = math.exp(p_log_sum)
    else:
        geo_mean = 0.0
    ratio = float(translation_length) / reference_length
    bp = 1.0 if ratio > 1.0 else math.exp(1 - 1.0 / ratio)
    bleu = geo_mean * bp
    return bleu, precisions, bp, ratio, translation_length, reference_length


def _rouge(
    references: list[str], predictions: list[str], use_stemmer: bool, seed: int | None
) -> dict[str, float]:
    """``evaluate``'s rouge ``_compute``, with the aggregator seeded (or the exact mean)."""
    scorer = rouge_scorer.RougeScorer(rouge_types=ROUGE_TYPES, use_stemmer=use_stemmer)
    scores = [scorer.score(ref, pred) for ref, pred in zip(references, predictions, strict=True)]
    if seed is None:
        return {t: float(np.mean([s[t].fmeasure for s in scores])) for t in ROUGE_TYPES}
    aggregator = scoring.BootstrapAggregator()
    for score in scores:
        aggregator.add_scores(score)
    # rouge-score draws from numpy's legacy global state, as evaluate seeds it: so must the oracle
    state = np.random.get_state()  # noqa: NPY002
    try:
        np.random.seed(seed)  # noqa: NPY002
        result = aggregator.aggregate()
    finally:
        np.random.set_state(state)  # noqa: NPY002
    return {t: float(result[t].mid.fmeasure) for t in ROUGE_TYPES}


def hf_fc_score(
    score_data: Sequence[Mapping[str, Any]], *, seed: int | None = None, use_stemmer: bool = False
) -> dict[str, float]:
    """``hf_fc_score`` of the reference, unrounded; ROUGE as the exact mean (``seed=None``) or as
    ``evaluate`` reports it after ``np.random.seed(seed)``."""
    if not score_data:
        raise ValueError("score_data 不能为空")
    fn_acc_name_list: list[int] = []
    fn_acc_all_list: list[float] = []
    refs: list[str] = []
    preds: list[str] = []
    for item in score_data:
        gold_fns = item.get("gold_fn", [])
        pred_fns = item.get("pred_fn", [])
        fn_name_score, fn_arg_score = score_fn(gold_fns, pred_fns)
        fn_acc_name_list.append(1 if fn_name_score == 1.0 else 0)
        fn_acc_all_list.append(fn_arg_score)
        refs.append(fns2str(gold_fns))
        preds.append(fns2str(pred_fns))
    accuracy = float(accuracy_score([1] * len(fn_acc_name_list), fn_acc_name_list))
    rouge = _rouge(refs, preds, use_stemmer, seed)
    bleu = compute_bleu([[tokenizer_13a(r)] for r in refs], [tokenizer_13a(p) for p in preds])[0]
    return {
        "fn_acc_name": accuracy,
        "fn_acc_all": float(np.mean(fn_acc_all_list)),
        "rouge-1": rouge["rouge1"],
        "rouge-2": rouge["rouge2"],
        "rouge-l": rouge["rougeL"],
        "bleu-4": float(bleu),
    }
