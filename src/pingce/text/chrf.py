"""chrF and chrF++ as sacrebleu computes them, from summed per-record statistics.

Definitions (``sacrebleu.metrics.CHRF``; the tests check every value against it): character
n-grams of orders ``1..char_order`` over the text with its whitespace removed (kept with
``whitespace=True``), and for chrF++ word n-grams of orders ``1..word_order`` over the words with
one leading or trailing ASCII punctuation mark split off. Per record and order the statistics are
``[hyp n-grams (0 when the reference has none), ref n-grams, clipped matches]``; a corpus score is
the F-beta of the precision and recall averaged over the orders where both sides have n-grams
(``eps_smoothing=True``: the average of per-order F-scores with epsilon for empty orders), on
sacrebleu's 0-100 scale. A sentence score is the same finaliser on one record's row.

Several references per record: the statistics of the reference whose sentence chrF (with the
metric's ``beta`` and ``eps_smoothing``) is highest, the first of equals, as sacrebleu's
``_compute_segment_statistics`` keeps them; the finaliser repeats sacrebleu's ``_compute_f_score``
operation for operation, so the same reference wins.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from .._collector import collector_paused
from .pairs import PairIds, first_best, flatten_references

__all__ = [
    "chrf",
    "chrf_stats",
    "chrf_stats_batch",
    "chrf_width",
    "corpus_chrf",
    "sentence_chrf",
    "split_punctuation",
]

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_EPS = 1e-16


def split_punctuation(text: str) -> list[str]:
    """chrF++'s words: whitespace-split words, one trailing (else leading) ASCII punctuation
    mark of a word longer than one character split off as a word of its own."""
    words: list[str] = []
    for word in text.split():
        if len(word) == 1:
            words.append(word)
        elif word[-1] in _PUNCTUATION:
            words += [word[:-1], word[-1]]
        elif word[0] in _PUNCTUATION:
            words += [word[0], word[1:]]
        else:
            words.append(word)
    return words


def chrf_width(char_order: int = 6, word_order: int = 0) -> int:
    """Width of a chrF statistics row: three numbers per order."""
    return 3 * (char_order + word_order)


def _check(char_order: int, word_order: int, beta: float) -> None:
    if char_order < 1:
        raise ValueError(f"char_order must be >= 1, got {char_order}")
    if word_order < 0:
        raise ValueError(f"word_order must be >= 0, got {word_order}")
    if beta < 0:
        raise ValueError(f"beta must be >= 0, got {beta}")


def _chars(text: str, whitespace: bool) -> str:
    return text if whitespace else "".join(text.split())


def _order_stats(hyp: Counter[str], ref: Counter[str]) -> list[int]:
    match = sum(min(c, ref[g]) for g, c in hyp.items() if g in ref)
    return [sum(hyp.values()) if ref else 0, sum(ref.values()), match]


def _char_ngrams(text: str, n: int) -> Counter[str]:
    return Counter(text[i : i + n] for i in range(len(text) - n + 1))


def _word_ngrams(words: Sequence[str], n: int) -> Counter[str]:
    return Counter(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))


def chrf_stats(
    hypothesis: str,
    references: Sequence[str],
    char_order: int = 6,
    word_order: int = 0,
    beta: float = 2.0,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> np.ndarray:
    """chrF statistics of one hypothesis; with several references, those of the reference with
    the best sentence score (the first of equals), as sacrebleu picks them."""
    _check(char_order, word_order, beta)
    if not references:
        raise ValueError("at least one reference is needed")
    if lowercase:
        hypothesis = hypothesis.lower()
        references = [r.lower() for r in references]
    hyp_chars = _chars(hypothesis, whitespace)
    hyp_words = split_punctuation(hypothesis)
    best: list[int] = []
    best_score = -1.0
    for reference in references:
        ref_chars = _chars(reference, whitespace)
        ref_words = split_punctuation(reference)
        row: list[int] = []
        for n in range(1, char_order + 1):
            row += _order_stats(_char_ngrams(hyp_chars, n), _char_ngrams(ref_chars, n))
        for n in range(1, word_order + 1):
            row += _order_stats(_word_ngrams(hyp_words, n), _word_ngrams(ref_words, n))
        score = float(chrf(np.asarray(row, dtype=np.float64), beta, eps_smoothing))
        if score > best_score:
            best_score, best = score, row
    return np.asarray(best, dtype=np.float64)


def _char_pairs(
    hyps: Sequence[str], refs: Sequence[str], ref_owner: np.ndarray | None = None
) -> PairIds:
    """Characters of both sides as ids: code points mapped to a dense range by a lookup table."""
    joined = "".join(hyps) + "".join(refs)
    points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    present = np.zeros(0x110000, dtype=np.bool_)
    present[points] = True
    dense = np.cumsum(present, dtype=np.int64) - 1
    ids = dense[points]
    hyp_lengths = np.fromiter(map(len, hyps), np.int64, len(hyps))
    ref_lengths = np.fromiter(map(len, refs), np.int64, len(refs))
    split = int(hyp_lengths.sum())
    return PairIds(ids[:split], hyp_lengths, ids[split:], ref_lengths, ref_owner)


def chrf_stats_batch(
    hypotheses: Sequence[str],
    references: Sequence[str],
    char_order: int = 6,
    word_order: int = 0,
    lowercase: bool = False,
    whitespace: bool = False,
    *,
    ref_owner: np.ndarray | None = None,
    beta: float = 2.0,
    eps_smoothing: bool = False,
) -> np.ndarray:
    """chrF statistics of every hypothesis, shape ``(n, width)``: against its one reference, or
    with ``ref_owner`` (the record of each reference, in record order) those of its reference with
    the best sentence chrF under ``beta`` and ``eps_smoothing`` (the first of equals)."""
    _check(char_order, word_order, beta)
    if ref_owner is None and len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    with collector_paused():
        if lowercase:
            hypotheses = [h.lower() for h in hypotheses]
            references = [r.lower() for r in references]
        hyp_chars = [_chars(h, whitespace) for h in hypotheses]
        ref_chars = [_chars(r, whitespace) for r in references]
    out = np.zeros((len(references), chrf_width(char_order, word_order)), dtype=np.float64)
    column = 0
    chars = _char_pairs(hyp_chars, ref_chars, ref_owner)
    groups: list[tuple[PairIds, int]] = [(chars, char_order)]
    if word_order:
        with collector_paused():
            hyp_words = [split_punctuation(h) for h in hypotheses]
            ref_words = [split_punctuation(r) for r in references]
        groups.append((PairIds.from_tokens(hyp_words, ref_words, chars.ref_owner), word_order))
    owner = chars.owners()
    for pairs, orders in groups:
        for n in range(1, orders + 1):  # a row per reference: against its own prediction
            hyp_total, ref_total = pairs.totals(n)
            out[:, column] = np.where(ref_total > 0, hyp_total[owner], 0)
            out[:, column + 1] = ref_total
            out[:, column + 2] = pairs.ref_matches(n)
            column += 3
    if chars.ref_owner is None:
        return out
    best = first_best(chrf(out, beta, eps_smoothing), chars.ref_owner, len(hypotheses))
    chosen: np.ndarray = out[best]
    return chosen


def chrf(stats: np.ndarray, beta: float = 2.0, eps_smoothing: bool = False) -> np.ndarray:
    """sacrebleu's chrF (0-100) from (summed) statistics of shape ``(..., 3 * orders)``."""
    s = np.asarray(stats, dtype=np.float64)
    width = s.shape[-1]
    if width < 3 or width % 3:
        raise ValueError(f"chrF statistics have three numbers per order, got width {width}")
    orders = width // 3
    factor = float(beta) ** 2
    shape = s.shape[:-1]
    score = np.zeros(shape)
    avg_prec = np.zeros(shape)
    avg_rec = np.zeros(shape)
    effective = np.zeros(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(orders):
            n_hyp = s[..., 3 * i]
            n_ref = s[..., 3 * i + 1]
            n_match = s[..., 3 * i + 2]
            prec = np.where(n_hyp > 0, n_match / np.where(n_hyp > 0, n_hyp, 1.0), _EPS)
            rec = np.where(n_ref > 0, n_match / np.where(n_ref > 0, n_ref, 1.0), _EPS)
            denom = factor * prec + rec
            f = (1 + factor) * prec * rec / np.where(denom > 0, denom, 1.0)
            score = score + np.where(denom > 0, f, _EPS)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec = avg_prec + np.where(both, prec, 0.0)
            avg_rec = avg_rec + np.where(both, rec, 0.0)
            effective = effective + both
        if eps_smoothing:
            return np.asarray(100 * score / orders, dtype=np.float64)
        some = effective > 0
        avg_prec = np.where(some, avg_prec / np.where(some, effective, 1.0), 0.0)
        avg_rec = np.where(some, avg_rec / np.where(some, effective, 1.0), 0.0)
        total = avg_prec + avg_rec
        value = (1 + factor) * avg_prec * avg_rec
        value = value / (factor * avg_prec + avg_rec)
        value = np.where(total != 0, 100 * value, 0.0)
    return np.asarray(value, dtype=np.float64)


def corpus_chrf(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    char_order: int = 6,
    word_order: int = 0,
    beta: float = 2.0,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> float:
    """sacrebleu's corpus chrF (``CHRF(...).corpus_score(hyps, [refs]).score``); ``references[i]``
    is the reference of hypothesis ``i`` or a list of its references."""
    stats = _stats(
        hypotheses, references, char_order, word_order, beta, lowercase, whitespace, eps_smoothing
    )
    return float(chrf(stats.sum(axis=0), beta, eps_smoothing))


def sentence_chrf(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    char_order: int = 6,
    word_order: int = 0,
    beta: float = 2.0,
    lowercase: bool = False,
    whitespace: bool = False,
    eps_smoothing: bool = False,
) -> np.ndarray:
    """sacrebleu's sentence chrF of every hypothesis against its reference(s)."""
    stats = _stats(
        hypotheses, references, char_order, word_order, beta, lowercase, whitespace, eps_smoothing
    )
    return chrf(stats, beta, eps_smoothing)


def _stats(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    char_order: int,
    word_order: int,
    beta: float,
    lowercase: bool,
    whitespace: bool,
    eps_smoothing: bool,
) -> np.ndarray:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    texts, owner = flatten_references(references)
    return chrf_stats_batch(
        hypotheses,
        texts,
        char_order,
        word_order,
        lowercase,
        whitespace,
        ref_owner=owner,
        beta=beta,
        eps_smoothing=eps_smoothing,
    )
