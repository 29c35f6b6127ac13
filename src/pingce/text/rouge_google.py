"""ROUGE as Google's ``rouge-score`` computes it, from integer token ids, vectorised.

Definitions (``rouge_score.rouge_scorer`` and ``rouge_score.scoring``; the tests check every
value against the library):

* ROUGE-N: ``overlap = sum over n-grams g of min(count_pred(g), count_ref(g))`` (clipped counts,
  a Counter intersection); ``precision = overlap / max(pred_ngrams, 1)``,
  ``recall = overlap / max(ref_ngrams, 1)``;
* ROUGE-L: ``overlap`` is the length of the longest common subsequence of the two token lists,
  over the lengths of the lists (0 when either is empty);
* ROUGE-Lsum: the texts are split into sentences on ``"\\n"`` (empty lines dropped) and each
  sentence is tokenised on its own; for every reference sentence the union of the LCS positions
  against each predicted sentence (the LCS that rouge-score's backtrack picks) is taken, and a
  token of that union is a hit while both texts still have an unused occurrence of it;
* F-measure ``2PR / (P + R)``, 0 when ``P + R = 0``.

Every flavour reduces to three numbers per pair, ``(overlap, pred_total, ref_total)``, from which
:func:`prf` gives precision, recall and F-measure; the statistics are computed once per corpus.

Speed: tokens are mapped once to integer ids (:class:`PairIds`); n-gram counts of every record
come from one packed integer sort per order (the (record, n-gram) ids of order ``n`` are the dense
ranks of (id of the (n-1)-gram, next token)), so there is no Python loop per record, and n-grams
whose prefix is missing from the other side are dropped before the next order; the LCS of each
pair is rapidfuzz's bit-parallel ``LCSseq`` on the id lists (equal to rouge-score's table, and
exact: ids, not string hashes). ROUGE-Lsum needs the particular LCS rouge-score's backtrack reads
out, so it keeps that backtrack, over LCS rows computed as bit vectors. The clipped n-gram engine
is shared with BLEU and chrF (:mod:`pingce.text.bleu`, :mod:`pingce.text.chrf`).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, count, pairwise

import numpy as np
from rapidfuzz.distance import LCSseq

__all__ = [
    "PairIds",
    "RougeScores",
    "dense_rank",
    "lcs_indices",
    "lcs_length",
    "paused_gc",
    "prf",
    "rouge_l_batch",
    "rouge_lsum_batch",
    "rouge_lsum_counts",
    "rouge_n_batch",
    "rouge_n_counts",
    "split_sentences",
]


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
# the vectorised engine
# ----------------------------------------------------------------------------------------------


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of small objects are built.

    Building 100,000 token lists otherwise triggers full collections that walk every object
    alive (the loaded records included) and cost more than the work itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def dense_rank(keys: np.ndarray, bound: int) -> np.ndarray:
    """Dense ranks of non-negative int64 ``keys`` (all ``< bound``): equal keys, equal ranks.

    The positions are packed into the low bits of the keys so that one ``np.sort`` does the work
    of an argsort (several times faster); when the bits do not fit, ``np.unique`` is used.
    """
    size = int(keys.shape[0])
    if size == 0:
        return np.empty(0, dtype=np.int64)
    bits = max(1, (size - 1).bit_length())
    if max(1, bound - 1).bit_length() + bits > 63:
        _, inverse = np.unique(keys, return_inverse=True)
        return np.asarray(inverse, dtype=np.int64).reshape(-1)
    packed = (keys.astype(np.int64) << np.int64(bits)) | np.arange(size, dtype=np.int64)
    packed.sort()
    position = packed & np.int64((1 << bits) - 1)
    packed >>= np.int64(bits)
    new = np.empty(size, dtype=np.bool_)
    new[0] = False
    np.not_equal(packed[1:], packed[:-1], out=new[1:])
    rank = np.cumsum(new, dtype=np.int64)
    out = np.empty(size, dtype=np.int64)
    out[position] = rank
    return out


class PairIds:
    """Aligned predictions and references of ``n`` records as integer token ids.

    ``pred_ids`` / ``ref_ids`` are the concatenated ids, ``pred_lengths`` / ``ref_lengths`` the
    number of tokens of each record. Equal tokens have equal ids across both sides. Clipped n-gram
    matches are computed order by order and cached, so ROUGE-1, ROUGE-2 and BLEU on the same pairs
    share the work.
    """

    def __init__(
        self,
        pred_ids: np.ndarray,
        pred_lengths: np.ndarray,
        ref_ids: np.ndarray,
        ref_lengths: np.ndarray,
    ) -> None:
        self.pred_ids = np.asarray(pred_ids, dtype=np.int64)
        self.ref_ids = np.asarray(ref_ids, dtype=np.int64)
        self.pred_lengths = np.asarray(pred_lengths, dtype=np.int64)
        self.ref_lengths = np.asarray(ref_lengths, dtype=np.int64)
        if self.pred_lengths.shape != self.ref_lengths.shape:
            raise ValueError(
                f"{self.pred_lengths.shape[0]} predictions but {self.ref_lengths.shape[0]} "
                "references"
            )
        if int(self.pred_lengths.sum()) != self.pred_ids.shape[0] or int(
            self.ref_lengths.sum()
        ) != int(self.ref_ids.shape[0]):
            raise ValueError("token lengths do not add up to the number of token ids")
        if min(self.pred_ids.min(initial=0), self.ref_ids.min(initial=0)) < 0:
            raise ValueError("token ids must be non-negative")
        self.n = int(self.pred_lengths.shape[0])
        self._matches: dict[int, np.ndarray] = {}
        self._order = 0  # n-gram order of the engine state (0: not set up)
        self._pos = np.empty(0, dtype=np.int64)
        self._g = np.empty(0, dtype=np.int64)
        self._shared: np.ndarray | None = None
        self._lcs: np.ndarray | None = None

    @classmethod
    def from_tokens(
        cls, preds: Sequence[Sequence[Hashable]], refs: Sequence[Sequence[Hashable]]
    ) -> PairIds:
        """Encode token lists (one vocabulary for both sides, built at C speed)."""
        if len(preds) != len(refs):
            raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
        with paused_gc():
            # one C-level pass: a new token takes the next number, a known one keeps its own
            vocab: dict[Hashable, int] = {}
            numbers = count()
            pred_ids = np.fromiter(
                map(vocab.setdefault, chain.from_iterable(preds), numbers), np.int64
            )
            ref_ids = np.fromiter(
                map(vocab.setdefault, chain.from_iterable(refs), numbers), np.int64
            )
        if pred_ids.size or ref_ids.size:  # renumber densely (numbers were used up by repeats)
            top = max(int(pred_ids.max(initial=0)), int(ref_ids.max(initial=0))) + 1
            present = np.zeros(top, dtype=np.bool_)
            present[pred_ids] = True
            present[ref_ids] = True
            dense = np.cumsum(present, dtype=np.int64) - 1
            pred_ids, ref_ids = dense[pred_ids], dense[ref_ids]
        pred_lengths = np.fromiter(map(len, preds), np.int64, len(preds))
        ref_lengths = np.fromiter(map(len, refs), np.int64, len(refs))
        return cls(pred_ids, pred_lengths, ref_ids, ref_lengths)

    def totals(self, order: int) -> tuple[np.ndarray, np.ndarray]:
        """Number of n-grams of ``order`` in each prediction and each reference."""
        return (
            np.maximum(self.pred_lengths - (order - 1), 0),
            np.maximum(self.ref_lengths - (order - 1), 0),
        )

    # -- n-gram matches ----------------------------------------------------------------------

    def _setup(self) -> None:
        n = self.n
        tokens = np.concatenate([self.pred_ids, self.ref_ids])
        lengths = np.concatenate([self.pred_lengths, self.ref_lengths])
        records = np.concatenate([np.arange(n, dtype=np.int64)] * 2)
        rec = np.repeat(records, lengths)
        ends = np.cumsum(lengths)
        self._rem = np.repeat(ends, lengths) - np.arange(tokens.shape[0], dtype=np.int64)
        self._rec = rec
        self._boundary = int(self.pred_ids.shape[0])
        vocab = int(tokens.max()) + 1 if tokens.size else 1
        g = dense_rank(rec * np.int64(vocab) + tokens, max(1, n) * vocab)
        # local id of a token within its record: its (record, token) rank minus the record's first
        distinct = self._per_group(g, rec, n)
        starts = np.cumsum(distinct) - distinct
        self._local = g - starts[rec]
        self._width = max(1, int(distinct.max()) if n else 1)
        self._order = 1
        self._pos = np.arange(tokens.shape[0], dtype=np.int64)
        self._g = g
        self._shared = None

    @staticmethod
    def _per_group(g: np.ndarray, rec: np.ndarray, n: int) -> np.ndarray:
        """How many distinct ids of ``g`` each record has."""
        size = int(g.max()) + 1 if g.size else 0
        owner = np.zeros(size, dtype=np.int64)
        owner[g] = rec
        return np.bincount(owner, minlength=n)

    def _advance(self) -> None:
        """From order ``k`` to ``k + 1``. Only n-grams whose prefix occurs on both sides of its
        record can match, so the others are dropped first (exact: every occurrence of an n-gram
        shares its prefix, so its counts on both sides are kept whole or are both irrelevant)."""
        assert self._shared is not None
        order = self._order + 1
        keep = (self._rem[self._pos] >= order) & self._shared[self._g]
        pos = self._pos[keep]
        kept = self._g[keep]
        bound = (int(kept.max()) + 1 if kept.size else 1) * self._width
        self._g = dense_rank(kept * np.int64(self._width) + self._local[pos + (order - 1)], bound)
        self._pos = pos
        self._order = order
        self._shared = None

    def _count(self) -> np.ndarray:
        """Clipped matches of the current order; marks the n-grams found on both sides."""
        pos, g = self._pos, self._g
        n = self.n
        if g.size == 0:
            self._shared = np.zeros(0, dtype=np.bool_)
            return np.zeros(n, dtype=np.int64)
        split = int(np.searchsorted(pos, self._boundary))
        size = int(g.max()) + 1
        in_pred = np.bincount(g[:split], minlength=size)
        in_ref = np.bincount(g[split:], minlength=size)
        both = np.minimum(in_pred, in_ref)
        self._shared = both > 0
        owner = np.zeros(size, dtype=np.int64)
        owner[g] = self._rec[pos]
        hit = np.flatnonzero(self._shared)
        return np.bincount(owner[hit], weights=both[hit], minlength=n).astype(np.int64)

    def matches(self, order: int) -> np.ndarray:
        """Clipped matches of n-grams of ``order`` per record: ``sum_g min(pred(g), ref(g))``."""
        if order < 1:
            raise ValueError(f"n-gram order must be >= 1, got {order}")
        cached = self._matches.get(order)
        if cached is not None:
            return cached
        if self._order == 0 or self._order > order:
            self._setup()
        while True:
            if self._shared is None:
                self._matches[self._order] = self._count()
            if self._order == order:
                return self._matches[order]
            self._advance()

    # -- longest common subsequence ----------------------------------------------------------

    def _lists(self, ids: np.ndarray, lengths: np.ndarray) -> list[list[int]]:
        flat = ids.tolist()
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        return [flat[a:b] for a, b in pairwise(bounds)]

    def lcs(self) -> np.ndarray:
        """Length of the longest common subsequence of each pair (rapidfuzz ``LCSseq``)."""
        if self._lcs is None:
            similarity = LCSseq.similarity
            with paused_gc():
                preds = self._lists(self.pred_ids, self.pred_lengths)
                refs = self._lists(self.ref_ids, self.ref_lengths)
                self._lcs = np.fromiter(map(similarity, preds, refs), np.int64, self.n)
        return self._lcs


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
