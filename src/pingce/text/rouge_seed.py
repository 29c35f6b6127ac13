"""The seed's text scores, exactly: the ``rouge`` package's F-measures and nltk's sentence BLEU.

seeds/function-call-metrics.md scores a record with ``Rouge().get_scores(" ".join(hyp_words),
" ".join(ref_words))`` from the ``rouge`` package (pltrdy, 1.0.1) and
``sentence_bleu([ref_words], hyp_words, smoothing_function=SmoothingFunction().method3)`` from
nltk. This module computes the same numbers with its own code:

``rouge`` package flavour
    The joined text is split into sentences on ``"."`` (empty parts dropped, whitespace in each
    part collapsed), words are ``sentence.split(" ")`` over all sentences. ROUGE-N counts *sets*
    of n-grams (each distinct n-gram once); ROUGE-L is its summary-level union-LCS, where the
    LCS of each (reference sentence, candidate sentence) pair is the one recovered by its
    traceback and the union is a set of words. F = 2·P·R/(P + R + 1e-8). An empty hypothesis or
    reference raises in the package; the seed then scores 0 (:class:`SeedEmptyText`).

nltk ``sentence_bleu`` with smoothing method 3
    Clipped n-gram precisions for n = 1..4 (denominator max(1, count)), brevity penalty against
    the reference length, uniform weights; a zero count of order n is replaced by
    1/(2^k · denominator), k = 1, 2, ... (NIST geometric smoothing); no unigram match gives 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

__all__ = ["SeedEmptyText", "rouge_package_scores", "rouge_sentences", "sentence_bleu_method3"]


class SeedEmptyText(ValueError):
    """The ``rouge`` package raises on an empty hypothesis or reference; the seed scores 0."""


def rouge_sentences(text: str) -> list[list[str]]:
    """Sentences of the ``rouge`` package: split on '.', whitespace collapsed, words on ' '."""
    return [" ".join(part.split()).split(" ") for part in text.split(".") if len(part) > 0]


def _ngram_set(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*[words[k:] for k in range(n)], strict=False))


def _f(overlap: int, hyp_count: int, ref_count: int) -> float:
    precision = 0.0 if hyp_count == 0 else overlap / hyp_count
    recall = 0.0 if ref_count == 0 else overlap / ref_count
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def _traceback_lcs_words(x: Sequence[str], y: Sequence[str]) -> set[str]:
    """Words of the LCS of ``x`` (reference) and ``y`` recovered by the package's traceback:
    a match goes diagonally; otherwise up when the cell above is strictly larger, else left.

    The DP table is kept as bit-parallel rows (Allison-Dix / Hyyro): row ``i`` is an integer
    ``V`` whose low ``j`` bits hold ``j - L[i][j]`` ones, so a row costs a few big-integer
    operations and any cell is a masked popcount. Equal sequences skip the table.
    """
    n, m = len(x), len(y)
    if n == 0 or m == 0:
        return set()
    if n == m and list(x) == list(y):
        return set(x)
    masks: dict[str, int] = {}
    for j, token in enumerate(y):
        masks[token] = masks.get(token, 0) | (1 << j)
    full = (1 << m) - 1
    row = full
    rows = [row]
    for token in x:
        match = row & masks.get(token, 0)
        row = ((row + match) | (row - match)) & full
        rows.append(row)
    words: set[str] = set()
    i, j = n, m
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            words.add(x[i - 1])
            i -= 1
            j -= 1
            continue
        low = (1 << (j - 1)) - 1
        up = j - (rows[i - 1] & (low | (1 << (j - 1)))).bit_count()  # L[i-1][j]
        left = (j - 1) - (rows[i] & low).bit_count()  # L[i][j-1]
        if up > left:
            i -= 1
        else:
            j -= 1
    return words


def rouge_package_scores(
    hyp_text: str, ref_text: str, orders: Sequence[int] = (1, 2)
) -> dict[str, float]:
    """F-measures ``rouge-1``, ``rouge-2`` (``orders``) and ``rouge-l`` of the ``rouge`` package.

    Raises :class:`SeedEmptyText` where the package raises (no sentence in either text).
    """
    hyp = rouge_sentences(hyp_text)
    ref = rouge_sentences(ref_text)
    if not hyp:
        raise SeedEmptyText("Hypothesis is empty.")
    if not ref:
        raise SeedEmptyText("Reference is empty.")
    hyp_words = [w for s in hyp for w in s]
    ref_words = [w for s in ref for w in s]
    out: dict[str, float] = {}
    for n in orders:
        hyp_ngrams = _ngram_set(hyp_words, n)
        ref_ngrams = _ngram_set(ref_words, n)
        out[f"rouge-{n}"] = _f(len(hyp_ngrams & ref_ngrams), len(hyp_ngrams), len(ref_ngrams))
    union: set[str] = set()
    for ref_sentence in ref:
        for hyp_sentence in hyp:
            union |= _traceback_lcs_words(ref_sentence, hyp_sentence)
    llcs = len(union)
    m = len(set(ref_words))
    n_hyp = len(set(hyp_words))
    r_lcs = llcs / m
    p_lcs = llcs / n_hyp
    out["rouge-l"] = 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8))
    return out


def sentence_bleu_method3(hyp: Sequence[str], ref: Sequence[str], max_order: int = 4) -> float:
    """nltk's ``sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method3)``."""
    hyp_len = len(hyp)
    ref_len = len(ref)
    precisions: list[tuple[int, int]] = []
    if hyp is ref or (hyp_len == ref_len and list(hyp) == list(ref)):
        # identical: every n-gram is matched, up to the length of the text
        precisions = [
            (hyp_len - n + 1, hyp_len - n + 1) if hyp_len >= n else (0, 1)
            for n in range(1, max_order + 1)
        ]
        return _bleu(precisions, hyp_len, ref_len, max_order)
    for n in range(1, max_order + 1):
        counts = Counter(zip(*[hyp[k:] for k in range(n)], strict=False))
        if not counts:
            precisions.append((0, 1))
            continue
        ref_counts = Counter(zip(*[ref[k:] for k in range(n)], strict=False))
        clipped = sum((counts & ref_counts).values())  # min of the two counts per n-gram
        precisions.append((clipped, max(1, hyp_len - n + 1)))
    return _bleu(precisions, hyp_len, ref_len, max_order)


def _bleu(precisions: list[tuple[int, int]], hyp_len: int, ref_len: int, max_order: int) -> float:
    """Brevity penalty times the geometric mean of the method-3 smoothed precisions."""
    if precisions[0][0] == 0:
        return 0.0
    if hyp_len > ref_len:
        bp = 1.0
    elif hyp_len == 0:
        bp = 0.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    logs = []
    k = 1
    weight = 1.0 / max_order
    for num, den in precisions:
        if num == 0:
            p = 1 / (2**k * den)
            k += 1
        else:
            p = num / den
        logs.append(weight * math.log(p))
    return bp * math.exp(math.fsum(logs))
