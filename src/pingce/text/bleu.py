"""BLEU from per-record statistics: nltk's flavour and sacrebleu's flavour.

Both flavours split BLEU into statistics that add up over records and a finaliser, so a corpus
score is the finaliser of the summed statistics and a sentence score the finaliser of one row
(vectorised over any leading axes: every record, every bootstrap resample).

**nltk** (``nltk.translate.bleu_score``). Per record, :func:`nltk_bleu_stats` gives
``[hyp_len, ref_len, m_1..m_N, d_1..d_N, c_1..c_N, m_5x, d_5x]``: the hypothesis length, the
closest reference length (ties to the shorter), clipped n-gram matches ``m_n`` (each hypothesis
n-gram clipped by its largest count in any one reference), nltk's precision denominators
``d_n = max(1, c_n)`` and the plain hypothesis n-gram counts ``c_n``, and the clipped matches and
denominator of 5-grams (smoothing method 5 looks one order past the last weight and nltk always
takes that order to be 5). :func:`nltk_bleu` implements ``sentence_bleu`` / ``corpus_bleu`` with
weights and every ``SmoothingFunction`` method 0-7 (``epsilon`` 0.1, ``alpha`` 5, ``k`` 5 by
default), without nltk's warnings. The statistics' orders ``1..N`` are the precisions nltk
computes and smooths (its longest weight tuple); weights shorter than ``N`` read the first of
them, as one tuple among several in an nltk call does. Two nltk behaviours are kept on purpose:

* method 0 replaces a zero precision by ``sys.float_info.min``, so a sentence without, say,
  4-gram matches scores about 1e-77, not 0; a corpus without unigram matches scores 0;
* method 6 is undefined (nltk raises ``AssertionError``) when there are no trigram matches:
  the value is NaN here.

nltk's ``corpus_bleu`` hands smoothing methods 5, 6 and 7 the *last* pair of the corpus (a leaked
loop variable) for their 5-gram precision and hypothesis n-gram counts; :func:`nltk_corpus_bleu`
reproduces that for parity, while :func:`nltk_bleu` of summed statistics uses the summed counts
(the decomposable reading, identical for methods 0-4).

**sacrebleu** (``sacrebleu.metrics.BLEU``). :func:`sacrebleu_tokenize` reproduces its tokenisers
``13a``, ``zh``, ``char`` and ``none`` (faster than calling sacrebleu's classes: one regular
expression replaces the per-character loop of ``zh``); per record the statistics are sacrebleu's
own ``[hyp_len, ref_len, correct_1..4, total_1..4]`` and :func:`sacrebleu_bleu` is its
``compute_bleu`` (smoothing ``exp``, ``floor``, ``add-k``, ``none``; effective order), on the
0-100 scale sacrebleu reports.

Several references per record: the batch functions take all references in record order and
``ref_owner``, the record of each (see :class:`pingce.text.pairs.PairIds`); both libraries clip by
the largest count in any one reference and take the closest reference length, ties to the
shorter. A record with fewer references than others is what sacrebleu makes of ``None`` in a
reference stream (it drops it); an empty string stays an (empty) reference in sacrebleu, and so
here.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from .._collector import collector_paused
from ._mteval import split_numbers, unescape_entities
from .intl import tokenize_intl
from .pairs import PairIds, flatten_references
from .tokenize import TOKENIZERS

__all__ = [
    "SACREBLEU_ONLY",
    "SACREBLEU_TOKENIZERS",
    "SMOOTH_DEFAULTS",
    "SmoothMethod",
    "bleu_stats_parts",
    "check_tokenize",
    "nltk_bleu",
    "nltk_bleu_stats",
    "nltk_bleu_stats_batch",
    "nltk_corpus_bleu",
    "nltk_stats_from_matches",
    "nltk_width",
    "sacrebleu_bleu",
    "sacrebleu_bleu_stats",
    "sacrebleu_bleu_stats_batch",
    "sacrebleu_corpus_bleu",
    "sacrebleu_sentence_bleu",
    "sacrebleu_tokenize",
    "sacrebleu_tokenize_all",
]

SmoothMethod = Literal["exp", "floor", "add-k", "none"]
SMOOTH_DEFAULTS: dict[str, float | None] = {"exp": None, "floor": 0.1, "add-k": 1.0, "none": None}
"""sacrebleu's default smoothing value of each method."""

SACREBLEU_TOKENIZERS = ("13a", "zh", "intl", "char", "none")

_FIVE = 5  # the order nltk's smoothing method 5 always looks at past the last weight
_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)


# ----------------------------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------------------------


def _ngrams(tokens: Sequence[Hashable], n: int) -> Counter[tuple[Hashable, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _clipped(
    hypothesis: Sequence[Hashable], references: Sequence[Sequence[Hashable]], n: int
) -> int:
    """Hypothesis n-grams clipped by their largest count in any one reference."""
    counts = _ngrams(hypothesis, n)
    if not counts:
        return 0
    best: Counter[tuple[Hashable, ...]] = Counter()
    for reference in references:
        best |= _ngrams(reference, n)
    return sum(min(c, best[g]) for g, c in counts.items())


def _closest(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to the hypothesis length; ties go to the shorter."""
    if not ref_lens:
        raise ValueError("at least one reference is needed")
    return min(ref_lens, key=lambda r: (abs(r - hyp_len), r))


def _check_order(max_order: int) -> None:
    if not isinstance(max_order, int) or isinstance(max_order, bool) or max_order < 1:
        raise ValueError(f"max_order must be a positive integer, got {max_order!r}")


# ----------------------------------------------------------------------------------------------
# nltk
# ----------------------------------------------------------------------------------------------


def nltk_width(max_order: int) -> int:
    """Width of an nltk statistics row for ``max_order``: ``3 * max_order + 4``."""
    return 3 * max_order + 4


def nltk_bleu_stats(
    hypothesis: Sequence[Hashable],
    references: Sequence[Sequence[Hashable]],
    max_order: int = 4,
) -> np.ndarray:
    """nltk BLEU statistics of one hypothesis against one or more references (see the module)."""
    _check_order(max_order)
    hyp_len = len(hypothesis)
    row = np.zeros(nltk_width(max_order), dtype=np.float64)
    row[0] = hyp_len
    row[1] = _closest(hyp_len, [len(r) for r in references])
    for n in range(1, max_order + 1):
        count = max(0, hyp_len - n + 1)
        row[1 + n] = _clipped(hypothesis, references, n)
        row[1 + max_order + n] = max(1, count)
        row[1 + 2 * max_order + n] = count
    row[-2] = _clipped(hypothesis, references, _FIVE)
    row[-1] = max(1, hyp_len - _FIVE + 1)
    return row


def nltk_bleu_stats_batch(
    hypotheses: Sequence[Sequence[Hashable]] | PairIds,
    references: Sequence[Sequence[Hashable]] | None = None,
    max_order: int = 4,
    *,
    fivegrams: bool = True,
    ref_owner: np.ndarray | None = None,
) -> np.ndarray:
    """nltk BLEU statistics of every hypothesis, shape ``(n, width)``: against its one reference,
    or with ``ref_owner`` (the record of each reference) against all of its references.

    ``fivegrams=False`` skips the 5-gram columns (left 0), which only smoothing methods 5 and 7
    read.
    """
    _check_order(max_order)
    pairs = _as_pairs(hypotheses, references, ref_owner)
    matches = np.zeros((pairs.n, max_order), dtype=np.int64)
    for n in range(1, max_order + 1):
        matches[:, n - 1] = pairs.matches(n)
    five = pairs.matches(_FIVE) if fivegrams else None
    return nltk_stats_from_matches(pairs.pred_lengths, pairs.closest_ref_lengths(), matches, five)


def nltk_stats_from_matches(
    hyp_lengths: np.ndarray,
    ref_lengths: np.ndarray,
    matches: np.ndarray,
    fivegram_matches: np.ndarray | None = None,
) -> np.ndarray:
    """nltk BLEU statistics, shape ``(n, 3N + 4)``, from the hypothesis lengths, the (closest)
    reference lengths and clipped n-gram matches ``matches[:, k]`` of order ``k + 1`` (N orders).

    Without ``fivegram_matches`` the 5-gram columns are left 0 (only smoothing methods 5 and 7
    read them)."""
    hyp = np.asarray(hyp_lengths, dtype=np.int64)
    matched = np.asarray(matches, dtype=np.float64)
    max_order = int(matched.shape[1])
    _check_order(max_order)
    out = np.zeros((hyp.shape[0], nltk_width(max_order)), dtype=np.float64)
    out[:, 0] = hyp
    out[:, 1] = ref_lengths
    for n in range(1, max_order + 1):
        count = np.maximum(hyp - (n - 1), 0)
        out[:, 1 + n] = matched[:, n - 1]
        out[:, 1 + max_order + n] = np.maximum(count, 1)
        out[:, 1 + 2 * max_order + n] = count
    if fivegram_matches is not None:
        out[:, -2] = fivegram_matches
        out[:, -1] = np.maximum(hyp - (_FIVE - 1), 1)
    return out


def _as_pairs(
    hypotheses: Sequence[Sequence[Hashable]] | PairIds,
    references: Sequence[Sequence[Hashable]] | None,
    ref_owner: np.ndarray | None = None,
) -> PairIds:
    if isinstance(hypotheses, PairIds):
        return hypotheses
    if references is None:
        raise ValueError("references are required unless the hypotheses are a PairIds")
    return PairIds.from_tokens(hypotheses, references, ref_owner)


def _weights(weights: Sequence[float] | None, max_order: int) -> np.ndarray:
    if weights is None:
        return np.full(max_order, 1.0 / max_order)
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.size < 1 or w.size > max_order:
        raise ValueError(
            f"{w.size} weights given but the statistics hold n-gram orders 1..{max_order}"
        )
    return w


def nltk_bleu(
    stats: np.ndarray,
    weights: Sequence[float] | None = None,
    smoothing: int = 0,
    *,
    epsilon: float = 0.1,
    alpha: float = 5.0,
    k: float = 5.0,
    auto_reweigh: bool = False,
    tail: np.ndarray | None = None,
) -> np.ndarray:
    """nltk's BLEU from (summed) statistics of shape ``(..., 3N + 4)``; NaN where undefined.

    The ``N`` orders of the statistics are the precisions nltk computes and smooths: the length
    of its longest weight tuple. ``weights`` defaults to ``1/N`` for orders ``1..N``; fewer weights
    read the first orders of the smoothed precisions, as that tuple does in an nltk call with
    several weight tuples, the longest of length ``N`` (only smoothing methods 5 and 7 tell the
    difference from a call with that tuple alone, whose method 5 looks at the 5-gram precision
    past its last order). ``smoothing`` is the number of the ``SmoothingFunction`` method and
    ``epsilon``, ``alpha``, ``k`` its constants. ``tail`` supplies the statistics smoothing methods
    5-7 read for the 5-gram precision and the hypothesis n-gram counts (nltk's ``corpus_bleu``
    passes the last pair; by default the same ``stats``).
    """
    if smoothing not in range(8) or isinstance(smoothing, bool):
        raise ValueError(f"smoothing must be a method number 0..7, got {smoothing!r}")
    s = np.asarray(stats, dtype=np.float64)
    width = s.shape[-1]
    if width < 7 or (width - 4) % 3:
        raise ValueError(f"nltk BLEU statistics have width 3N + 4, got {width}")
    order = (width - 4) // 3
    w = _weights(weights, order)
    size = w.size
    if smoothing == 6 and order < 3:
        raise ValueError("smoothing method 6 needs at least 3 n-gram orders")
    t = s if tail is None else np.broadcast_to(np.asarray(tail, dtype=np.float64), s.shape)

    hyp = s[..., 0]
    ref = s[..., 1]
    num = s[..., 2 : 2 + order]
    den = s[..., 2 + order : 2 + 2 * order]
    zero = num == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        safe_hyp = np.where(hyp > 0, hyp, 1.0)
        bp = np.where(hyp > ref, 1.0, np.where(hyp == 0, 0.0, np.exp(1.0 - ref / safe_hyp)))
        p = num / den
        if smoothing == 0:
            p = np.where(zero, sys.float_info.min, p)
        elif smoothing == 1:
            p = np.where(zero, (num + epsilon) / den, p)
        elif smoothing == 2:
            p = np.concatenate([p[..., :1], (num[..., 1:] + 1) / (den[..., 1:] + 1)], axis=-1)
        elif smoothing == 3:
            p = _nist(p, zero, den)
        elif smoothing in (4, 7):
            p = _method4(p, zero, den, hyp, k)
        if smoothing in (5, 7):
            if bool(np.any(t[..., -1] == 0)):
                raise ValueError("smoothing methods 5 and 7 need the 5-gram statistics")
            p5 = t[..., -2] / t[..., -1]
            p = _method5(p, p5)
        if smoothing == 6:
            counts = t[..., 2 + 2 * order : 2 + 3 * order]
            p = _method6(p, num, counts, alpha)
        p = p[..., :size]

        w_row = np.broadcast_to(w, p.shape)
        if auto_reweigh and size == 4 and bool(np.all(w == 0.25)):
            short = (hyp < 4)[..., None]
            reweighed = np.where(
                np.arange(size) < hyp[..., None], 1.0 / np.where(hyp > 0, hyp, 1.0)[..., None], 0
            )
            w_row = np.where(short, reweighed, w_row)
        positive = p > 0
        terms = np.where(positive, w_row * np.log(np.where(positive, p, 1.0)), 0.0)
        total = np.zeros(p.shape[:-1])
        for i in range(size):
            total = total + terms[..., i]
        score = bp * np.exp(total)
    score = np.where(num[..., 0] == 0, 0.0, score)
    if smoothing == 6:
        score = np.where((num[..., 0] != 0) & (num[..., 2] == 0), np.nan, score)
    return np.asarray(score, dtype=np.float64)


def _nist(p: np.ndarray, zero: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Method 3: the k-th zero precision becomes ``1 / (2**k * denominator)``."""
    k = np.cumsum(zero, axis=-1)
    return np.where(zero, 1.0 / (np.power(2.0, k) * den), p)


def _method4(
    p: np.ndarray, zero: np.ndarray, den: np.ndarray, hyp: np.ndarray, k: float
) -> np.ndarray:
    """Method 4: the i-th zero precision becomes ``1 / (2**i * k / ln(hyp_len)) / denominator``
    (only when the hypothesis length exceeds 1)."""
    apply = zero & (hyp > 1)[..., None]
    count = np.cumsum(apply, axis=-1)
    log_len = np.log(np.where(hyp > 1, hyp, np.e))[..., None]
    smoothed = 1.0 / (np.power(2.0, count) * k / log_len) / den
    return np.where(apply, smoothed, p)


def _method5(p: np.ndarray, p5: np.ndarray) -> np.ndarray:
    """Method 5: ``p_i <- (m_{i-1} + p_i + p_{i+1}) / 3`` with ``m_{-1} = p_1 + 1``; the order past
    the last is the 5-gram precision."""
    size = p.shape[-1]
    following = np.concatenate([p[..., 1:], p5[..., None]], axis=-1)
    out = np.empty_like(p)
    previous = p[..., 0] + 1
    for i in range(size):
        previous = (previous + p[..., i] + following[..., i]) / 3
        out[..., i] = previous
    return out


def _method6(p: np.ndarray, num: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """Method 6 (Gao and He): from the third order on, interpolate with the prior
    ``p_{i-1}^2 / p_{i-2}`` (0 when ``p_{i-2}`` is 0)."""
    out = p.copy()
    for i in range(2, p.shape[-1]):
        before = out[..., i - 2]
        safe = np.where(before == 0, 1.0, before)
        prior = np.where(before == 0, 0.0, out[..., i - 1] ** 2 / safe)
        out[..., i] = (num[..., i] + alpha * prior) / (counts[..., i] + alpha)
    return out


def nltk_corpus_bleu(
    rows: np.ndarray,
    weights: Sequence[float] | None = None,
    smoothing: int = 0,
    *,
    epsilon: float = 0.1,
    alpha: float = 5.0,
    k: float = 5.0,
    auto_reweigh: bool = False,
) -> float:
    """``nltk.translate.bleu_score.corpus_bleu`` from per-record statistics (``rows[i]`` of pair
    ``i``), including its use of the last pair by smoothing methods 5-7."""
    rows = np.asarray(rows, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError("nltk_corpus_bleu needs a non-empty (records, width) array")
    value = nltk_bleu(
        rows.sum(axis=0),
        weights,
        smoothing,
        epsilon=epsilon,
        alpha=alpha,
        k=k,
        auto_reweigh=auto_reweigh,
        tail=rows[-1],
    )
    return float(value)


# ----------------------------------------------------------------------------------------------
# sacrebleu tokenisers
# ----------------------------------------------------------------------------------------------

# mteval-v13a's tokenisation (sacrebleu's TokenizerRegexp), in order: (1) ASCII punctuation and
# symbols other than ' , - . apart; (2) '.' and ',' apart unless after a digit; (3) '.' and ','
# apart unless before a digit; (4) '-' after a digit apart; then split on whitespace.
# sacrebleu's class in step (1) also pads every space with two more; that only lengthens runs of
# whitespace, which neither the later steps (a space is one non-digit like any other) nor the
# final split can tell apart, so spaces are left alone here (far fewer substitutions). Steps
# (2)-(4) (:func:`._mteval.split_numbers`, which TER shares) are skipped when their characters are
# absent.
_PUNCT = re.compile(r"[!-&(-+/:-@\[-`{-~]")

# The characters sacrebleu's TokenizerZh puts spaces around. Two of its ranges are written
# '\u20000'-'\u2a6d6' and '\u2f800'-'\u2fa1d', which Python reads as two-character strings, so
# they compare as U+2001-U+2A6D and U+2F81-U+2FA1 (and no character outside the BMP matches).
_ZH_RANGES = (
    (0x3400, 0x4DB5),
    (0x4E00, 0x9FA5),
    (0x9FA6, 0x9FBB),
    (0xF900, 0xFA2D),
    (0xFA30, 0xFA6A),
    (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D),
    (0x2F81, 0x2FA1),
    (0xFF00, 0xFFEF),
    (0x2E80, 0x2EFF),
    (0x3000, 0x303F),
    (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF),
    (0x2FF0, 0x2FFF),
    (0x3100, 0x312F),
    (0x31A0, 0x31BF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0x2600, 0x26FF),
    (0x2700, 0x27BF),
    (0x3200, 0x32FF),
    (0x3300, 0x33FF),
)
_ZH = re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in _ZH_RANGES) + "]")


_ZH_RUN = re.compile(_ZH.pattern + "+")


def _pad_run(match: re.Match[str]) -> str:
    return " " + " ".join(match.group()) + " "


def _v13a_post(line: str) -> list[str]:
    return split_numbers(_PUNCT.sub(r" \g<0> ", line)).split()


def _tok_13a(line: str) -> list[str]:
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    return _v13a_post(f" {unescape_entities(line)} ")


def _tok_zh(line: str) -> list[str]:
    return _v13a_post(_ZH_RUN.sub(_pad_run, line.strip()))


def _tok_char(line: str) -> list[str]:
    return list("".join(line.split()))


def _tok_none(line: str) -> list[str]:
    return line.split()


_SACRE = {
    "13a": _tok_13a,
    "zh": _tok_zh,
    "intl": tokenize_intl,
    "char": _tok_char,
    "none": _tok_none,
}

SACREBLEU_ONLY: dict[str, str] = {
    "ja-mecab": "it needs MeCab and a Japanese dictionary",
    "ko-mecab": "it needs MeCab and a Korean dictionary",
    "spm": "it needs a SentencePiece model (FLORES-101's), which pingce does not download",
    "flores101": "it needs FLORES-101's SentencePiece model, which pingce does not download",
    "flores200": "it needs FLORES-200's SentencePiece model, which pingce does not download",
    "spBLEU-1K": "it needs spBLEU-1K's SentencePiece model, which pingce does not download",
}
"""sacrebleu's tokenizers that pingce does not have, and why."""


def check_tokenize(name: object) -> str:
    """``name`` if it is one of :data:`SACREBLEU_TOKENIZERS`; otherwise a ValueError that lists
    the tokenizers pingce has, says why a sacrebleu tokenizer is not among them and suggests a
    close name."""
    if isinstance(name, str) and name in _SACRE:
        return name
    have = "tokenize must be one of " + ", ".join(SACREBLEU_TOKENIZERS)
    if isinstance(name, str) and name in SACREBLEU_ONLY:
        raise ValueError(
            f"{have}: {name!r} is a sacrebleu tokenizer that pingce does not have "
            f"({SACREBLEU_ONLY[name]})"
        )
    hint = ""
    if isinstance(name, str):
        names = {n.lower(): n for n in (*SACREBLEU_TOKENIZERS, *SACREBLEU_ONLY)}
        close = difflib.get_close_matches(name.strip().lower(), list(names), n=1, cutoff=0.6)
        if close and names[close[0]] in _SACRE:
            hint = f" (did you mean {names[close[0]]!r}?)"
        elif close:
            other = names[close[0]]
            hint = f" (sacrebleu's {other!r} is not in pingce: {SACREBLEU_ONLY[other]})"
        elif name in TOKENIZERS:
            hint = (
                f" ({name!r} is a `tokenizer` of text_rouge_* and text_bleu; for Chinese, "
                "sacrebleu's BLEU uses 'zh')"
            )
    raise ValueError(f"{have}, got {name!r}{hint}")


def sacrebleu_tokenize(text: str, tokenize: str = "13a", lowercase: bool = False) -> list[str]:
    """The tokens sacrebleu's BLEU counts n-grams over: optional lowercasing, trailing whitespace
    removed, the tokeniser, then a whitespace split."""
    tokenizer = _SACRE[check_tokenize(tokenize)]
    if lowercase:
        text = text.lower()
    return tokenizer(text.rstrip())


def sacrebleu_tokenize_all(
    texts: Sequence[str], tokenize: str = "13a", lowercase: bool = False
) -> list[list[str]]:
    """:func:`sacrebleu_tokenize` of every text."""
    tokenizer = _SACRE[check_tokenize(tokenize)]
    with collector_paused():
        if lowercase:
            return [tokenizer(t.lower().rstrip()) for t in texts]
        return [tokenizer(t.rstrip()) for t in texts]


# ----------------------------------------------------------------------------------------------
# sacrebleu statistics and score
# ----------------------------------------------------------------------------------------------


def sacrebleu_bleu_stats(
    hypothesis: Sequence[Hashable],
    references: Sequence[Sequence[Hashable]],
    max_order: int = 4,
) -> np.ndarray:
    """sacrebleu's segment statistics ``[hyp_len, ref_len, correct_1..N, total_1..N]`` of one
    tokenised hypothesis against one or more tokenised references."""
    _check_order(max_order)
    hyp_len = len(hypothesis)
    row = np.zeros(2 + 2 * max_order, dtype=np.float64)
    row[0] = hyp_len
    row[1] = _closest(hyp_len, [len(r) for r in references])
    for n in range(1, max_order + 1):
        row[1 + n] = _clipped(hypothesis, references, n)
        row[1 + max_order + n] = max(0, hyp_len - n + 1)
    return row


def sacrebleu_bleu_stats_batch(
    hypotheses: Sequence[Sequence[Hashable]] | PairIds,
    references: Sequence[Sequence[Hashable]] | None = None,
    max_order: int = 4,
    *,
    ref_owner: np.ndarray | None = None,
) -> np.ndarray:
    """sacrebleu segment statistics of every tokenised hypothesis against its one reference, or
    with ``ref_owner`` (the record of each reference) against all of its references."""
    _check_order(max_order)
    pairs = _as_pairs(hypotheses, references, ref_owner)
    out = np.zeros((pairs.n, 2 + 2 * max_order), dtype=np.float64)
    out[:, 0] = pairs.pred_lengths
    out[:, 1] = pairs.closest_ref_lengths()
    for n in range(1, max_order + 1):
        out[:, 1 + n] = pairs.matches(n)
        out[:, 1 + max_order + n] = np.maximum(pairs.pred_lengths - (n - 1), 0)
    return out


def bleu_stats_parts(stats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(hypothesis lengths, reference lengths, matches, possible)`` of (summed) BLEU statistics
    ``(..., 2 + 2N)`` as sacrebleu and nmt lay them out, ``[hyp_len, ref_len, matches_1..N,
    possible_1..N]`` (``matches`` and ``possible`` of shape ``(..., N)``); ``ValueError`` for
    another width."""
    s = np.asarray(stats, dtype=np.float64)
    width = s.shape[-1]
    if width < 4 or width % 2:
        raise ValueError(f"BLEU statistics have width 2 + 2N, got {width}")
    order = (width - 2) // 2
    return s[..., 0], s[..., 1], s[..., 2 : 2 + order], s[..., 2 + order :]


def sacrebleu_bleu(
    stats: np.ndarray,
    smooth_method: SmoothMethod = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> np.ndarray:
    """sacrebleu's ``BLEU.compute_bleu`` (0-100) from (summed) statistics ``(..., 2 + 2N)``."""
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(
            f"smooth_method must be one of {list(SMOOTH_DEFAULTS)}, got {smooth_method!r}"
        )
    value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else float(smooth_value)
    sys_len, ref_len, correct, total = bleu_stats_parts(stats)
    order = correct.shape[-1]
    shape = sys_len.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1.0 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
            1.0,
        )
        alive = np.ones(shape, dtype=np.bool_)
        eff = np.full(shape, float(order))
        mteval = np.ones(shape)
        logs = []
        for n in range(1, order + 1):
            c = correct[..., n - 1]
            t = total[..., n - 1]
            if smooth_method == "add-k" and n > 1:
                assert value is not None
                c = c + value
                t = t + value
            alive = alive & (t != 0)
            if effective_order:
                eff = np.where(alive, float(n), eff)
            safe_t = np.where(t != 0, t, 1.0)
            if smooth_method == "exp":
                mteval = np.where(alive & (c == 0), mteval * 2, mteval)
                smoothed = 100.0 / (mteval * safe_t)
            elif smooth_method == "floor":
                assert value is not None
                smoothed = 100.0 * value / safe_t
            else:
                smoothed = np.zeros(shape)
            precision = np.where(c == 0, smoothed, 100.0 * c / safe_t)
            precision = np.where(alive, precision, 0.0)
            positive = precision > 0
            logs.append(np.where(positive, np.log(np.where(positive, precision, 1.0)), _LOG_ZERO))
        acc = np.zeros(shape)
        for n, log in enumerate(logs, start=1):
            acc = acc + np.where(n <= eff, log, 0.0)
        score = bp * np.exp(acc / eff)
    score = np.where((correct != 0).any(axis=-1), score, 0.0)
    return np.asarray(score, dtype=np.float64)


def sacrebleu_corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    tokenize: str = "13a",
    smooth_method: SmoothMethod = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    effective_order: bool = False,
    max_order: int = 4,
) -> float:
    """sacrebleu's corpus BLEU (``BLEU(...).corpus_score(hyps, [refs]).score``); ``references[i]``
    is the reference of hypothesis ``i`` or a list of its references (any number, at least one)."""
    stats = _sacre_stats(hypotheses, references, tokenize, lowercase, max_order)
    return float(sacrebleu_bleu(stats.sum(axis=0), smooth_method, smooth_value, effective_order))


def sacrebleu_sentence_bleu(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    tokenize: str = "13a",
    smooth_method: SmoothMethod = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    effective_order: bool = True,
    max_order: int = 4,
) -> np.ndarray:
    """sacrebleu's ``sentence_bleu`` of every hypothesis against its reference(s) (effective
    order on, as its default)."""
    stats = _sacre_stats(hypotheses, references, tokenize, lowercase, max_order)
    return sacrebleu_bleu(stats, smooth_method, smooth_value, effective_order)


def _sacre_stats(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    tokenize: str,
    lowercase: bool,
    max_order: int,
) -> np.ndarray:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    texts, owner = flatten_references(references)
    hyps = sacrebleu_tokenize_all(hypotheses, tokenize, lowercase)
    refs = sacrebleu_tokenize_all(texts, tokenize, lowercase)
    return sacrebleu_bleu_stats_batch(hyps, refs, max_order, ref_owner=owner)
