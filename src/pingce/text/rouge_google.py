"""ROUGE as Google's ``rouge-score`` computes it, from integer token ids, vectorised.

Definitions (``rouge_score.rouge_scorer`` and ``rouge_score.scoring``; the tests check every
value against the library):

* ROUGE-N: ``overlap = sum over n-grams g of min(count_pred(g), count_ref(g))`` (clipped counts,
  a Counter intersection); ``precision = overlap / max(pred_ngrams, 1)``,
  ``recall = overlap / max(ref_ngrams, 1)``;
* ROUGE-L: ``overlap`` is the length of the longest common subsequence of the two token lists,
  over the lengths of the lists (0 when either is empty);
* ROUGE-Lsum: the texts are split into sentences on ``"\\n"`` (empty lines dropped; with
  rouge-score's ``split_summaries=True``, by ``nltk.sent_tokenize`` instead, see
  :func:`summary_sentences`) and each sentence is tokenised on its own; for every reference
  sentence the union of the LCS positions against each predicted sentence (the LCS that
  rouge-score's backtrack picks) is taken, and a token of that union is a hit while both texts
  still have an unused occurrence of it;
* F-measure ``2PR / (P + R)``, 0 when ``P + R = 0``.

Every flavour reduces to three numbers per pair, ``(overlap, pred_total, ref_total)``, from which
:func:`prf` gives precision, recall and F-measure; the statistics are computed once per corpus.
Several references (rouge-score's ``score_multi``): each reference is scored on its own and the
one with the highest F-measure is kept, the first of equals (``np.argmax``), with its own
precision and recall, separately for each ROUGE type.

Speed: tokens are mapped once to integer ids and n-gram matches and LCS lengths of every record
are computed in batch by :class:`pingce.text.pairs.PairIds` (the clipped n-gram engine ROUGE
shares with BLEU and chrF); the LCS of each pair is rapidfuzz's bit-parallel ``LCSseq`` on the id
lists (equal to rouge-score's table). ROUGE-Lsum needs the particular LCS rouge-score's backtrack
reads out, so it keeps that backtrack, over LCS rows computed as bit vectors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Literal

import numpy as np
from rapidfuzz.distance import LCSseq

from .pairs import PairIds
from .sentences import split_sentences as chinese_sentences

__all__ = [
    "SPLIT_SUMMARIES",
    "RougeScores",
    "SplitSummaries",
    "check_split_summaries",
    "lcs_indices",
    "lcs_length",
    "prf",
    "rouge_l_batch",
    "rouge_lsum_batch",
    "rouge_lsum_counts",
    "rouge_n_batch",
    "rouge_n_counts",
    "split_sentences",
    "summary_sentences",
]

SplitSummaries = Literal["lines", "nltk", "chinese"]
SPLIT_SUMMARIES: tuple[SplitSummaries, ...] = ("lines", "nltk", "chinese")
"""How ROUGE-Lsum finds sentences: ``lines`` (rouge-score's default: on newlines), ``nltk``
(rouge-score's ``split_summaries=True``: ``nltk.sent_tokenize``) or ``chinese`` (pingce's
Chinese-aware splitter, :func:`pingce.text.sentences.split_sentences`; not rouge-score's)."""


# ----------------------------------------------------------------------------------------------
# per-pair statistics (plain Python, any hashable tokens)
# ----------------------------------------------------------------------------------------------


def _ngram_counter(tokens: Sequence[Hashable], n: int) -> Counter[tuple[Hashable, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def rouge_n_counts(
    pred_tokens: Sequence[Hashable], ref_tokens: Sequence[Hashable], n: int
) -> tuple[int, int, int]:
    """``(overlap, pred_total, ref_total)`` of ROUGE-N for one pair: clipped n-gram matches and the
    number of n-grams on each side."""
    if n < 1:
        raise ValueError(f"ROUGE-N needs n >= 1, got {n}")
    pred = _ngram_counter(pred_tokens, n)
    ref = _ngram_counter(ref_tokens, n)
    overlap = sum((pred & ref).values())
    return overlap, max(0, len(pred_tokens) - n + 1), max(0, len(ref_tokens) - n + 1)


def _as_ids(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[int], list[int]]:
    """Both sequences as integer ids of one vocabulary (exact equality, no hash collisions)."""
    vocab: dict[Hashable, int] = {}
    ids_a = [vocab.setdefault(t, len(vocab)) for t in a]
    ids_b = [vocab.setdefault(t, len(vocab)) for t in b]
    return ids_a, ids_b


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Length of the longest common subsequence of two token sequences (rapidfuzz ``LCSseq``)."""
    ids_a, ids_b = _as_ids(a, b)
    return int(LCSseq.similarity(ids_a, ids_b))


def _lcs_rows(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[int]:
    """Rows of the LCS table as bit vectors (Hyyrö's bit-parallel recurrence).

    After ``i`` reference tokens, ``table[i][j] = j - popcount(rows[i] & (2**j - 1))``.
    """
    masks: dict[Hashable, int] = {}
    for j, token in enumerate(can):
        masks[token] = masks.get(token, 0) | (1 << j)
    full = (1 << len(can)) - 1
    v = full
    rows = [v]
    for token in ref:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)
    return rows


def lcs_indices(ref: Sequence[Hashable], can: Sequence[Hashable]) -> list[int]:
    """Positions in ``ref`` of the longest common subsequence that rouge-score's backtrack reads
    out (diagonal on a match, else left when ``table[i][j-1] > table[i-1][j]``, else up)."""
    rows = _lcs_rows(ref, can)
    i, j = len(ref), len(can)
    out: list[int] = []
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            out.append(i - 1)
            i -= 1
            j -= 1
        else:
            left = (j - 1) - (rows[i] & ((1 << (j - 1)) - 1)).bit_count()
            up = j - (rows[i - 1] & ((1 << j) - 1)).bit_count()
            if left > up:
                j -= 1
            else:
                i -= 1
    out.reverse()
    return out


def split_sentences(text: str) -> list[str]:
    """rouge-score's ROUGE-Lsum sentences: the lines of ``text``, empty lines dropped."""
    return [line for line in text.split("\n") if line]


_PUNKT_MISSING = (
    "split_summaries: nltk splits sentences with nltk.sent_tokenize, as rouge-score does with "
    "split_summaries=True; {what}. pingce downloads nothing at run time: install it once "
    "(pip install nltk; python -m nltk.downloader punkt_tab, or copy an nltk_data folder and set "
    "NLTK_DATA), put each sentence on its own line and keep the default split_summaries: lines, "
    "or use split_summaries: chinese"
)


def _nltk_sent_tokenize() -> Any:
    """``nltk.sent_tokenize`` when nltk and its English Punkt model (``punkt_tab``) are installed;
    else a ValueError that says what to install (nothing is downloaded)."""
    try:
        import nltk
    except ImportError:
        raise ValueError(_PUNKT_MISSING.format(what="nltk is not installed")) from None
    try:
        nltk.sent_tokenize("A sentence.")  # loads (and caches) the English model, as rouge-score
    except LookupError:
        raise ValueError(
            _PUNKT_MISSING.format(what="nltk's Punkt model 'punkt_tab' (English) is not installed")
        ) from None
    return nltk.sent_tokenize


def check_split_summaries(how: object) -> SplitSummaries:
    """The sentence splitting named by ``how``: ``False``/``"lines"``, ``True``/``"nltk"`` or
    ``"chinese"``; for ``nltk``, its model must be installed (ValueError otherwise)."""
    if how is False or how is None:
        return "lines"
    if how is True:
        how = "nltk"
    if how not in SPLIT_SUMMARIES:
        raise ValueError(
            "split_summaries must be false (lines), true (nltk), or one of "
            f"{list(SPLIT_SUMMARIES)}, got {how!r}"
        )
    if how == "nltk":
        _nltk_sent_tokenize()
    return how


def summary_sentences(text: str, how: SplitSummaries = "lines") -> list[str]:
    """The sentences ROUGE-Lsum reads: rouge-score's ``get_sents`` (``lines``: the text split on
    ``"\\n"``; ``nltk``: ``nltk.sent_tokenize(text)``), empty ones dropped; or pingce's
    Chinese-aware sentences (``chinese``: at 。！？；!?; line breaks and ". ")."""
    if how == "lines":
        return split_sentences(text)
    if how == "nltk":
        sentences: list[str] = _nltk_sent_tokenize()(text)
        return [sentence for sentence in sentences if sentence]
    if how == "chinese":
        return chinese_sentences(text)
    raise ValueError(f"unknown sentence splitting {how!r}; choose one of {list(SPLIT_SUMMARIES)}")


def rouge_lsum_counts(
    pred_sentences: Sequence[Sequence[Hashable]], ref_sentences: Sequence[Sequence[Hashable]]
) -> tuple[int, int, int]:
    """``(hits, pred_total, ref_total)`` of summary-level ROUGE-Lsum for one pair of tokenised
    sentence lists (rouge-score's union-LCS with its 1.5.5 double-counting guard)."""
    pred_total = sum(map(len, pred_sentences))
    ref_total = sum(map(len, ref_sentences))
    if not pred_sentences or not ref_sentences or not pred_total or not ref_total:
        return 0, pred_total, ref_total
    left_pred = Counter(chain.from_iterable(pred_sentences))
    left_ref = Counter(chain.from_iterable(ref_sentences))
    hits = 0
    for ref in ref_sentences:
        union: set[int] = set()
        for can in pred_sentences:
            union.update(lcs_indices(ref, can))
        for i in sorted(union):
            token = ref[i]
            if left_pred[token] > 0 and left_ref[token] > 0:
                hits += 1
                left_pred[token] -= 1
                left_ref[token] -= 1
    return hits, pred_total, ref_total


@dataclass(frozen=True)
class RougeScores:
    """Per-record precision, recall and F-measure (float64 arrays of equal length)."""

    precision: np.ndarray
    recall: np.ndarray
    fmeasure: np.ndarray

    def stat(self, name: str) -> np.ndarray:
        """One of the three by its short name: ``"p"``, ``"r"`` or ``"f"``."""
        try:
            return {"p": self.precision, "r": self.recall, "f": self.fmeasure}[name]
        except KeyError:
            raise ValueError(f"stat must be 'p', 'r' or 'f', got {name!r}") from None


def prf(overlap: np.ndarray, pred_total: np.ndarray, ref_total: np.ndarray) -> RougeScores:
    """rouge-score's precision ``overlap / max(pred, 1)``, recall ``overlap / max(ref, 1)`` and
    F-measure ``2PR / (P + R)`` (0 when ``P + R = 0``), elementwise."""
    overlap = np.asarray(overlap, dtype=np.float64)
    precision = overlap / np.maximum(np.asarray(pred_total, dtype=np.float64), 1.0)
    recall = overlap / np.maximum(np.asarray(ref_total, dtype=np.float64), 1.0)
    total = precision + recall
    positive = total > 0
    fmeasure = np.where(positive, 2 * precision * recall / np.where(positive, total, 1.0), 0.0)
    return RougeScores(precision, recall, np.asarray(fmeasure, dtype=np.float64))


# ----------------------------------------------------------------------------------------------
# batch scores
# ----------------------------------------------------------------------------------------------


def _pairs(
    preds: Sequence[Sequence[Hashable]] | PairIds, refs: Sequence[Sequence[Hashable]] | None
) -> PairIds:
    if isinstance(preds, PairIds):
        return preds
    if refs is None:
        raise ValueError("references are required unless the predictions are a PairIds")
    return PairIds.from_tokens(preds, refs)


def rouge_n_batch(
    preds: Sequence[Sequence[Hashable]] | PairIds,
    refs: Sequence[Sequence[Hashable]] | None = None,
    n: int = 1,
) -> RougeScores:
    """ROUGE-N of every (prediction, reference) token-list pair, as rouge-score scores them."""
    pairs = _pairs(preds, refs)
    pred_total, ref_total = pairs.totals(n)
    return prf(pairs.matches(n), pred_total, ref_total)


def rouge_l_batch(
    preds: Sequence[Sequence[Hashable]] | PairIds,
    refs: Sequence[Sequence[Hashable]] | None = None,
) -> RougeScores:
    """Sentence-level ROUGE-L of every pair (LCS over the whole token lists)."""
    pairs = _pairs(preds, refs)
    return prf(pairs.lcs(), pairs.pred_lengths, pairs.ref_lengths)


def rouge_lsum_batch(
    preds: Sequence[Sequence[Sequence[Hashable]]], refs: Sequence[Sequence[Sequence[Hashable]]]
) -> RougeScores:
    """Summary-level ROUGE-Lsum of every pair of tokenised sentence lists."""
    if len(preds) != len(refs):
        raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
    counts = np.array(
        [rouge_lsum_counts(p, r) for p, r in zip(preds, refs, strict=True)], dtype=np.int64
    ).reshape(-1, 3)
    return prf(counts[:, 0], counts[:, 1], counts[:, 2])
