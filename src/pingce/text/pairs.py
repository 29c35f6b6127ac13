"""Clipped n-gram matches of aligned (prediction, reference) pairs: the counting that ROUGE-N,
BLEU and chrF share.

* :class:`PairIds` (batch): the pairs of ``n`` records as integer token ids; n-gram counts of
  every record come from one packed integer sort per order (the (record, n-gram) ids of order
  ``n`` are the dense ranks of (id of the (n-1)-gram, next token)), so there is no Python loop per
  record, and n-grams whose prefix is missing from the other side are dropped before the next
  order. Its ``lcs`` is rapidfuzz's bit-parallel ``LCSseq`` on the id lists (exact: ids, not
  string hashes).
* :func:`clipped_matches`: ``sum over n-grams g of min(count_hyp(g), count_ref(g))`` of every
  pair for orders ``1..N``, counting only around where the two token lists differ (a
  :class:`PairIds` of the windows). Pairs that share most of their tokens (a prediction with one
  wrong value) cost a few n-grams, not the whole text.

Several references per record (``ref_owner``: the record of each reference, in record order, at
least one each): :meth:`PairIds.matches` clips each hypothesis n-gram by its largest count in any
one of the record's references (nltk's ``modified_precision``, sacrebleu's BLEU), and
:meth:`PairIds.closest_ref_lengths` is the reference length closest to the hypothesis length, ties
to the shorter (both libraries' rule). Metrics that score each reference apart and keep the best
(rouge-score's ``score_multi``, sacrebleu's chrF) use :meth:`PairIds.expanded`, one pair per
(hypothesis, reference), and :func:`first_best` to pick a reference per record.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from itertools import chain, count, pairwise
from operator import ne

import numpy as np
from rapidfuzz.distance import LCSseq

from .._collector import collector_paused

__all__ = [
    "PairIds",
    "clipped_matches",
    "common_ends",
    "dense_rank",
    "first_best",
    "flatten_references",
    "owner_starts",
]


def common_ends(x: Sequence[Hashable], y: Sequence[Hashable]) -> tuple[int, int]:
    """``(prefix, suffix)``: the length of the common prefix of ``x`` and ``y``, and of the
    common suffix of what is left after it (so ``prefix + suffix <= min(len(x), len(y))``)."""
    shortest = min(len(x), len(y))
    try:
        prefix = list(map(ne, x, y)).index(True)  # compares the first ``shortest`` items, in C
    except ValueError:
        prefix = shortest
    room = shortest - prefix
    if room == 0:
        return prefix, 0
    try:
        suffix = list(map(ne, reversed(x), reversed(y))).index(True, 0, room)
    except ValueError:
        suffix = room
    return prefix, suffix


def clipped_matches(
    hyps: Sequence[Sequence[Hashable]], refs: Sequence[Sequence[Hashable]], max_order: int = 4
) -> np.ndarray:
    """Clipped n-gram matches ``sum_g min(count_hyp(g), count_ref(g))`` of every pair for orders
    ``1..max_order``, shape ``(pairs, max_order)``, counting only around where each pair differs.

    With ``hyp = P + H + S`` and ``ref = P + R + S`` (``P``, ``S`` the common prefix and suffix),
    cut each side to a window ``W``: ``H`` (``R``) with the last ``max_order - 1`` tokens of ``P``
    before it and the first ``max_order - 1`` of ``S`` after it. An n-gram (``n <= max_order``)
    not wholly inside the window lies wholly in ``P`` or wholly in ``S``, at the same place on
    both sides, so it is matched, and
    ``matches_n = (n-grams of hyp) - (n-grams of W_hyp) + matches_n(W_hyp, W_ref)``; the windows'
    matches are counted by :class:`PairIds`. A prediction with one wrong value costs a few
    n-grams, not the whole text.
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    margin = max_order - 1
    hyp_windows: list[Sequence[Hashable]] = []
    ref_windows: list[Sequence[Hashable]] = []
    for hyp, ref in zip(hyps, refs, strict=True):
        prefix, suffix = common_ends(hyp, ref)
        start = max(0, prefix - margin)
        cut = max(0, suffix - margin)
        hyp_windows.append(hyp[start : len(hyp) - cut])
        ref_windows.append(ref[start : len(ref) - cut])
    windows = PairIds.from_tokens(hyp_windows, ref_windows)
    hyp_lengths = np.fromiter(map(len, hyps), np.int64, len(hyps))
    out = np.empty((len(hyps), max_order), dtype=np.int64)
    for n in range(1, max_order + 1):
        outside = np.maximum(hyp_lengths - (n - 1), 0) - np.maximum(
            windows.pred_lengths - (n - 1), 0
        )
        out[:, n - 1] = outside + windows.matches(n)
    return out


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


def owner_starts(owner: np.ndarray, n: int) -> np.ndarray:
    """Where each record's references start in ``owner`` (the record of each reference, in record
    order, every record at least once): ``n`` offsets."""
    counts = np.bincount(owner, minlength=n)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def first_best(scores: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """Per record, the index (into ``scores``) of its reference with the highest score, the first
    of equals (``np.argmax`` as rouge-score's ``score_multi`` uses it; sacrebleu's chrF keeps a
    reference only when its score is strictly greater than the best so far: the same choice).

    ``owner`` is the record of each score, in record order, every record at least once."""
    values = np.asarray(scores, dtype=np.float64)
    owner = np.asarray(owner, dtype=np.int64)
    if values.shape != owner.shape:
        raise ValueError(f"{values.shape[0]} scores but {owner.shape[0]} owners")
    best = np.maximum.reduceat(values, owner_starts(owner, n)) if n else values[:0]
    winners = np.flatnonzero(values == best[owner])
    first = np.ones(winners.shape[0], dtype=np.bool_)
    np.not_equal(owner[winners[1:]], owner[winners[:-1]], out=first[1:])
    chosen: np.ndarray = winners[first]
    if chosen.shape[0] != n:  # NaN scores: no reference equals the maximum
        raise ValueError("scores must not be NaN")
    return chosen


class PairIds:
    """Aligned predictions and references of ``n`` records as integer token ids.

    ``pred_ids`` / ``ref_ids`` are the concatenated ids, ``pred_lengths`` / ``ref_lengths`` the
    number of tokens of each prediction and each reference. Equal tokens have equal ids across
    both sides. Clipped n-gram matches are computed order by order and cached, so ROUGE-1,
    ROUGE-2 and BLEU on the same pairs share the work.

    With ``ref_owner`` (the record of each reference: non-decreasing, every record at least once)
    a record has several references; ``None`` means one each, reference ``i`` for record ``i``.
    """

    def __init__(
        self,
        pred_ids: np.ndarray,
        pred_lengths: np.ndarray,
        ref_ids: np.ndarray,
        ref_lengths: np.ndarray,
        ref_owner: np.ndarray | None = None,
    ) -> None:
        self.pred_ids = np.asarray(pred_ids, dtype=np.int64)
        self.ref_ids = np.asarray(ref_ids, dtype=np.int64)
        self.pred_lengths = np.asarray(pred_lengths, dtype=np.int64)
        self.ref_lengths = np.asarray(ref_lengths, dtype=np.int64)
        self.n = int(self.pred_lengths.shape[0])
        self.ref_owner = _check_owner(ref_owner, self.n, int(self.ref_lengths.shape[0]))
        if int(self.pred_lengths.sum()) != self.pred_ids.shape[0] or int(
            self.ref_lengths.sum()
        ) != int(self.ref_ids.shape[0]):
            raise ValueError("token lengths do not add up to the number of token ids")
        if min(self.pred_ids.min(initial=0), self.ref_ids.min(initial=0)) < 0:
            raise ValueError("token ids must be non-negative")
        self._matches: dict[int, np.ndarray] = {}
        self._order = 0  # n-gram order of the engine state (0: not set up)
        self._pos = np.empty(0, dtype=np.int64)
        self._g = np.empty(0, dtype=np.int64)
        self._shared: np.ndarray | None = None
        self._lcs: np.ndarray | None = None
        self._expanded: PairIds | None = None
        self._ref_matches: dict[int, np.ndarray] = {}

    @property
    def multi(self) -> bool:
        """Whether some record has another number of references than one."""
        return self.ref_owner is not None

    def owners(self) -> np.ndarray:
        """The record of each reference."""
        if self.ref_owner is None:
            return np.arange(self.n, dtype=np.int64)
        return self.ref_owner

    @classmethod
    def from_tokens(
        cls,
        preds: Sequence[Sequence[Hashable]],
        refs: Sequence[Sequence[Hashable]],
        ref_owner: np.ndarray | None = None,
    ) -> PairIds:
        """Encode token lists (one vocabulary for both sides, built at C speed); ``ref_owner``
        as in the class (None: ``refs[i]`` is the one reference of ``preds[i]``)."""
        if ref_owner is None and len(preds) != len(refs):
            raise ValueError(f"{len(preds)} predictions but {len(refs)} references")
        with collector_paused():
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
        return cls(pred_ids, pred_lengths, ref_ids, ref_lengths, ref_owner)

    def totals(self, order: int) -> tuple[np.ndarray, np.ndarray]:
        """Number of n-grams of ``order`` in each prediction and each reference."""
        return (
            np.maximum(self.pred_lengths - (order - 1), 0),
            np.maximum(self.ref_lengths - (order - 1), 0),
        )

    def closest_ref_lengths(self) -> np.ndarray:
        """Per record, the length of its reference closest to the prediction's length, ties to
        the shorter (nltk's ``closest_ref_length``, sacrebleu's ``_get_closest_ref_len``)."""
        if self.ref_owner is None:
            return self.ref_lengths
        owner = self.ref_owner
        bound = int(self.ref_lengths.max(initial=0)) + 1
        key = np.abs(self.ref_lengths - self.pred_lengths[owner]) * bound + self.ref_lengths
        best = np.minimum.reduceat(key, owner_starts(owner, self.n)) if self.n else key[:0]
        out: np.ndarray = best % bound
        return out

    def expanded(self) -> PairIds:
        """One pair per (prediction, reference): the prediction of record ``ref_owner[j]`` with
        reference ``j`` (this object itself when every record has one reference)."""
        if self.ref_owner is None:
            return self
        if self._expanded is None:
            owner = self.ref_owner
            starts = np.cumsum(self.pred_lengths) - self.pred_lengths
            lengths = self.pred_lengths[owner]
            total = int(lengths.sum())
            offsets = np.cumsum(lengths) - lengths
            index = np.repeat(starts[owner] - offsets, lengths) + np.arange(total, dtype=np.int64)
            self._expanded = PairIds(self.pred_ids[index], lengths, self.ref_ids, self.ref_lengths)
        return self._expanded

    # -- n-gram matches ----------------------------------------------------------------------

    def _setup(self) -> None:
        n = self.n
        tokens = np.concatenate([self.pred_ids, self.ref_ids])
        lengths = np.concatenate([self.pred_lengths, self.ref_lengths])
        records = np.concatenate([np.arange(n, dtype=np.int64), self.owners()])
        rec = np.repeat(records, lengths)
        if self.ref_owner is not None:  # each reference token's place among its record's refs
            owner = self.ref_owner
            place = np.arange(owner.shape[0], dtype=np.int64) - owner_starts(owner, n)[owner]
            self._slots = int(place.max(initial=0)) + 1
            self._doc = np.repeat(place, self.ref_lengths)
            self._first_ref = owner_starts(owner, n)
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
        """Clipped matches of the current order; marks the n-grams found on both sides (with
        several references, also each reference's own clipped matches)."""
        pos, g = self._pos, self._g
        n = self.n
        multi = self.ref_owner is not None
        if g.size == 0:
            self._shared = np.zeros(0, dtype=np.bool_)
            if multi:
                self._ref_matches[self._order] = np.zeros(self.ref_lengths.shape[0], np.int64)
            return np.zeros(n, dtype=np.int64)
        split = int(np.searchsorted(pos, self._boundary))
        size = int(g.max()) + 1
        in_pred = np.bincount(g[:split], minlength=size)
        owner = np.zeros(size, dtype=np.int64)
        owner[g] = self._rec[pos]
        if not multi:
            in_ref = np.bincount(g[split:], minlength=size)
        else:
            place = self._doc[pos[split:] - self._boundary]
            in_ref, ids, places, counts = self._ref_counts(g[split:], place, size)
            own = np.minimum(in_pred[ids], counts)  # each reference's own clipped matches
            refs = self._first_ref[owner[ids]] + places
            self._ref_matches[self._order] = np.bincount(
                refs, weights=own, minlength=self.ref_lengths.shape[0]
            ).astype(np.int64)
        both = np.minimum(in_pred, in_ref)
        self._shared = both > 0
        hit = np.flatnonzero(self._shared)
        return np.bincount(owner[hit], weights=both[hit], minlength=n).astype(np.int64)

    def _ref_counts(
        self, g: np.ndarray, place: np.ndarray, size: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Counts of the n-gram ids in the references (their ids are per record, so only the
        record's own references hold them; ``place`` is each position's place among them):
        per id its largest count in any one reference, and the (id, place, count) of every
        id found in a reference. One ``bincount`` over (id, place) cells when they are few (the
        usual few references per record), else a sort."""
        slots = self._slots
        if size * slots <= 4 * g.shape[0] + size:
            cells = np.bincount(g * np.int64(slots) + place, minlength=size * slots)
            largest: np.ndarray = cells.reshape(size, slots).max(axis=1)
            found = np.flatnonzero(cells)
            return largest, found // slots, found % slots, cells[found]
        key = g * np.int64(slots) + place
        key.sort()
        largest = np.zeros(size, dtype=np.int64)
        if key.size == 0:
            empty = np.zeros(0, dtype=np.int64)
            return largest, empty, empty, empty
        new = np.empty(key.shape[0], dtype=np.bool_)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        counts = np.diff(np.append(starts, key.shape[0]))
        ids = key[starts] // slots
        first = np.ones(ids.shape[0], dtype=np.bool_)
        np.not_equal(ids[1:], ids[:-1], out=first[1:])
        at = np.flatnonzero(first)
        largest[ids[at]] = np.maximum.reduceat(counts, at)
        return largest, ids, key[starts] % slots, counts

    def ref_matches(self, order: int) -> np.ndarray:
        """Per reference, its own clipped matches with its record's prediction (``order``):
        what :meth:`matches` of :meth:`expanded` gives, without repeating the predictions."""
        if self.ref_owner is None:
            return self.matches(order)
        if order not in self._ref_matches:
            self.matches(order)  # counts both
        return self._ref_matches[order]

    def matches(self, order: int) -> np.ndarray:
        """Clipped matches of n-grams of ``order`` per record: ``sum_g min(pred(g), ref(g))``,
        with ``ref(g)`` the largest count of ``g`` in any one of the record's references."""
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
        """Length of the longest common subsequence of each pair (rapidfuzz ``LCSseq``); with
        several references per record, use :meth:`expanded` first."""
        if self.ref_owner is not None:
            raise ValueError("the LCS is of one pair: use expanded() for several references")
        if self._lcs is None:
            similarity = LCSseq.similarity
            with collector_paused():
                preds = self._lists(self.pred_ids, self.pred_lengths)
                refs = self._lists(self.ref_ids, self.ref_lengths)
                self._lcs = np.fromiter(map(similarity, preds, refs), np.int64, self.n)
        return self._lcs


def _check_owner(owner: np.ndarray | None, n: int, refs: int) -> np.ndarray | None:
    """``ref_owner`` checked (non-decreasing, each of the ``n`` records at least once); None when
    every record has exactly one reference."""
    if owner is None:
        if refs != n:
            raise ValueError(f"{n} predictions but {refs} references")
        return None
    out = np.asarray(owner, dtype=np.int64).reshape(-1)
    if out.shape[0] != refs:
        raise ValueError(f"{refs} references but {out.shape[0]} reference owners")
    if refs and (out[0] != 0 or out[-1] != n - 1 or bool(np.any(np.diff(out) < 0))):
        raise ValueError("reference owners must be in record order from 0 to n - 1")
    counts = np.bincount(out, minlength=n)
    if n and int(counts.min()) < 1:
        raise ValueError(f"record {int(np.argmin(counts))} has no reference")
    if refs == n:
        return None  # one each, in order
    return out


def flatten_references(
    references: Sequence[str | Sequence[str]],
) -> tuple[list[str], np.ndarray | None]:
    """Per record a reference text or a non-empty list of them, as all the texts in record order
    and the record of each (None when every record has exactly one)."""
    if all(type(r) is str for r in references):
        return list(references), None  # type: ignore[arg-type]
    texts: list[str] = []
    counts = np.empty(len(references), dtype=np.int64)
    for i, item in enumerate(references):
        group = [item] if isinstance(item, str) else list(item)
        if not group:
            raise ValueError(f"record {i} has an empty list of references")
        if not all(isinstance(t, str) for t in group):
            raise ValueError(f"record {i}: every reference must be a string, got {item!r}")
        texts.extend(group)
        counts[i] = len(group)
    owner = np.repeat(np.arange(len(references), dtype=np.int64), counts)
    return texts, (None if len(texts) == len(references) else owner)
