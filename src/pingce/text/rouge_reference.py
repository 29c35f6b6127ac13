"""The ROUGE of the function-call protocol's reference implementation, exactly: the ``rouge``
package's F-measures.

The reference scores a record with ``Rouge().get_scores(" ".join(hyp_words), " ".join(ref_words))``
from the ``rouge`` package (pltrdy, 1.0.1). This module computes the same numbers with its own
code (its BLEU, nltk's ``sentence_bleu`` with smoothing 3, is :func:`pingce.text.bleu.nltk_bleu`
of the statistics of :func:`pingce.text.pairs.clipped_matches`):

* The joined text is split into sentences on ``"."`` (empty parts dropped, whitespace in each
  part collapsed), words are ``sentence.split(" ")`` over all sentences (:func:`rouge_sentences`).
  An empty hypothesis or reference raises in the package; the reference then scores 0
  (:class:`SeedEmptyText`).
* ROUGE-N counts *sets* of n-grams over the words of all sentences (each distinct n-gram once,
  bigrams across a sentence end included): :func:`rouge_counts`.
* ROUGE-L is the summary-level union-LCS: for each (reference sentence, candidate sentence) pair
  the LCS is the one the package's recursive traceback recovers (a match goes diagonally;
  otherwise up when the cell above is strictly larger, else left), and the union of the *words*
  of those LCSs over all pairs is a set (:func:`union_lcs_count`).
* F = 2·P·R/(P + R + 1e-8), with P or R 0 when its count is 0 (:func:`package_f`).

The package's traceback is recursive and raises ``RecursionError`` on a sentence pair of many
hundreds of words (the reference then scores 0); this module computes the value the package would
give without the limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from .pairs import common_ends

__all__ = [
    "SeedEmptyText",
    "package_f",
    "package_f_batch",
    "rouge_counts",
    "rouge_package_batch",
    "rouge_package_scores",
    "rouge_sentences",
    "traceback_lcs_words",
    "union_lcs_count",
]


class SeedEmptyText(ValueError):
    """The ``rouge`` package raises on an empty hypothesis or reference; the reference scores 0."""


def rouge_sentences(text: str) -> list[list[str]]:
    """Sentences of the ``rouge`` package: split on '.', whitespace collapsed, words on ' '.

    The package's ``" ".join(part.split()).split(" ")`` is ``part.split()``, or ``[""]`` for a
    part that is only whitespace (the package then has one empty word).
    """
    return [part.split() or [""] for part in text.split(".") if part]


def package_f(overlap: int, hyp_count: int, ref_count: int) -> float:
    """The package's F: ``2PR / (P + R + 1e-8)``, P (R) 0 when the hypothesis (reference) count
    is 0."""
    precision = 0.0 if hyp_count == 0 else overlap / hyp_count
    recall = 0.0 if ref_count == 0 else overlap / ref_count
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))


def package_f_batch(
    overlap: np.ndarray, hyp_count: np.ndarray, ref_count: np.ndarray
) -> np.ndarray:
    """:func:`package_f` elementwise (the same floating-point operations, so the same values)."""
    overlap = np.asarray(overlap, dtype=np.float64)
    hyp = np.asarray(hyp_count, dtype=np.float64)
    ref = np.asarray(ref_count, dtype=np.float64)
    precision = np.where(hyp == 0, 0.0, overlap / np.where(hyp == 0, 1.0, hyp))
    recall = np.where(ref == 0, 0.0, overlap / np.where(ref == 0, 1.0, ref))
    f: np.ndarray = 2.0 * ((precision * recall) / (precision + recall + 1e-8))
    return f


def rouge_counts(
    hyp: Sequence[Sequence[str]], ref: Sequence[Sequence[str]]
) -> tuple[int, int, int, int, int, int, int]:
    """The package's counts of one pair of texts split by :func:`rouge_sentences` (both with a
    sentence): distinct words both have, of the hypothesis and of the reference; the same for
    bigrams (over the words of all sentences, so across sentence ends); and the size of the
    union of traced-LCS words."""
    hyp_words = [w for s in hyp for w in s]
    ref_words = [w for s in ref for w in s]
    hyp_unigrams = set(hyp_words)
    ref_unigrams = set(ref_words)
    shared = hyp_unigrams & ref_unigrams
    hyp_bigrams = set(pairwise(hyp_words))
    ref_bigrams = set(pairwise(ref_words))
    return (
        len(shared),
        len(hyp_unigrams),
        len(ref_unigrams),
        len(hyp_bigrams & ref_bigrams),
        len(hyp_bigrams),
        len(ref_bigrams),
        union_lcs_count(hyp, ref, shared),
    )


def traceback_lcs_words(x: Sequence[str], y: Sequence[str]) -> set[str]:
    """Words of the LCS of ``x`` (reference) and ``y`` recovered by the package's traceback.

    The common suffix is matched first (the traceback starts at the end and goes diagonally on a
    match), so its words are in. For the common prefix ``P``, ``L[i][j] = |P| + L'(i, j)`` beyond
    it, so the traceback takes the same steps as on the rest alone until it reaches row or column
    ``|P|``; from there the LCS length left is ``|P|``, which only all of ``P`` can give. The rest
    is traced on bit-parallel rows (Allison-Dix / Hyyro): row ``i`` is an integer ``V`` whose low
    ``j`` bits hold ``j - L[i][j]`` ones, so a row costs a few big-integer operations and any cell
    is a masked popcount.
    """
    prefix, suffix = common_ends(x, y)
    words = set(x[:prefix])
    if suffix:
        words.update(x[len(x) - suffix :])
    core_x = x[prefix : len(x) - suffix]
    core_y = y[prefix : len(y) - suffix]
    if core_x and core_y:
        _trace_core(core_x, core_y, words)
    return words


def _trace_core(x: Sequence[str], y: Sequence[str], words: set[str]) -> None:
    """Add the words of the traced LCS of ``x`` and ``y`` to ``words``."""
    n, m = len(x), len(y)
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


def union_lcs_count(
    hyp_sentences: Sequence[Sequence[str]],
    ref_sentences: Sequence[Sequence[str]],
    shared: set[str] | None = None,
) -> int:
    """Size of the package's union of traced-LCS words over every (reference sentence, candidate
    sentence) pair. ``shared``: the words both texts have, if known.

    A pair's LCS words are words both of its sentences have, so a pair whose common words are
    all in the union already cannot add to it and is not traced; once the union holds every word
    the two texts share, no pair can add to it.
    """
    hyp_sets = [set(s) for s in hyp_sentences]
    if shared is None:
        shared = set().union(*hyp_sets) & {w for s in ref_sentences for w in s}
    union: set[str] = set()
    for ref_sentence in ref_sentences:
        ref_set = set(ref_sentence)
        for hyp_sentence, hyp_set in zip(hyp_sentences, hyp_sets, strict=True):
            if (ref_set & hyp_set) <= union:
                continue
            union |= traceback_lcs_words(ref_sentence, hyp_sentence)
            if len(union) == len(shared):
                return len(union)
    return len(union)


def rouge_package_batch(
    hyps: Sequence[Sequence[Sequence[str]]], refs: Sequence[Sequence[Sequence[str]]]
) -> np.ndarray:
    """The package's ROUGE of many pairs of texts split by :func:`rouge_sentences`: rows
    ``[rouge-1 F, rouge-2 F, rouge-l F, empty]``, where ``empty`` is 1 (and the F values 0) for
    a pair on which the package raises (a side without sentences). Counts pair by pair
    (:func:`rouge_counts`), the F-measures for all pairs at once (:func:`package_f_batch`).
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    n = len(hyps)
    counts = np.zeros((n, 7), dtype=np.int64)
    empty = np.zeros(n, dtype=bool)
    for i, (hyp, ref) in enumerate(zip(hyps, refs, strict=True)):
        if hyp and ref:
            counts[i] = rouge_counts(hyp, ref)
        else:
            empty[i] = True
    out = np.zeros((n, 4))
    out[:, 0] = package_f_batch(counts[:, 0], counts[:, 1], counts[:, 2])
    out[:, 1] = package_f_batch(counts[:, 3], counts[:, 4], counts[:, 5])
    out[:, 2] = package_f_batch(counts[:, 6], counts[:, 1], counts[:, 2])
    out[empty, :3] = 0.0
    out[:, 3] = empty
    return out


def rouge_package_scores(hyp_text: str, ref_text: str) -> dict[str, float]:
    """``Rouge().get_scores(hyp_text, ref_text)[0]``'s F-measures: ``rouge-1``, ``rouge-2`` and
    ``rouge-l``. Raises :class:`SeedEmptyText` where the package raises (no sentence in a text).
    """
    hyp = rouge_sentences(hyp_text)
    ref = rouge_sentences(ref_text)
    if not hyp:
        raise SeedEmptyText("Hypothesis is empty.")
    if not ref:
        raise SeedEmptyText("Reference is empty.")
    rouge_1, rouge_2, rouge_l, _ = rouge_package_batch([hyp], [ref])[0].tolist()
    return {"rouge-1": rouge_1, "rouge-2": rouge_2, "rouge-l": rouge_l}
