"""Text-overlap metrics for any suite: ROUGE-N/L/Lsum, BLEU (nltk and sacrebleu) and chrF.

Each metric reads a prediction and a reference text field (``pred_text`` and ``gold_text`` by
default) and follows one reference library exactly (the tests check the values against it):

* ``rouge_n``, ``rouge_l``, ``rouge_lsum``: Google's rouge-score with our tokeniser (its own
  tokeniser drops every Chinese character), as the plain mean over records (rouge-score's
  ``BootstrapAggregator`` reports the median of bootstrap means as "mid", close to it).
  rouge-score's convention for empty texts applies: precision, recall and F are 0, not undefined;
* ``bleu``: nltk's ``sentence_bleu`` with smoothing method 0-7, averaged over records;
* ``corpus_bleu``: sacrebleu's corpus BLEU (its tokenisers, default ``zh``; smoothing and
  effective order; 0-100);
* ``chrf``: sacrebleu's corpus chrF / chrF++ (0-100).

Statistics: records averaged metrics keep dense rows ``[precision, recall, F, 1]`` (ROUGE) or
``[score, defined, 1]`` (nltk BLEU); corpus metrics keep the library's own summable segment
statistics plus a record count, so their bootstrap intervals come from summed rows. Tokens (and
the encoded pairs with their n-gram counts) are cached per table, field and tokeniser for as long
as the table lives, so ROUGE-1, ROUGE-2, ROUGE-L and BLEU over the same fields tokenise (and count
n-grams of) each text once.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from .._collector import collector_paused
from ..records import FieldSpec, Table
from ..text.bleu import (
    SMOOTH_DEFAULTS,
    SmoothMethod,
    check_tokenize,
    nltk_bleu,
    nltk_bleu_stats_batch,
    sacrebleu_bleu,
    sacrebleu_bleu_stats_batch,
    sacrebleu_tokenize_all,
)
from ..text.chrf import chrf, chrf_stats_batch, chrf_width
from ..text.pairs import PairIds
from ..text.rouge_google import prf, rouge_lsum_counts, split_sentences
from ..text.tokenize import get_tokenizer, stemmer_available, warn_if_empty
from ._policy import ZeroDivision, check_zero_division, fill_value, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "Chrf",
    "ChrfStatistic",
    "CorpusBleu",
    "CorpusMetric",
    "NltkBleu",
    "NltkBleuStatistic",
    "Rouge",
    "RougeStatistic",
    "SacreBleuStatistic",
    "TextMetric",
    "clear_text_cache",
]

RougeStat = Literal["f", "p", "r"]
T = TypeVar("T")


# ----------------------------------------------------------------------------------------------
# tokenisation, once per text column and tokeniser
# ----------------------------------------------------------------------------------------------


class _TableCache:
    """Values derived from a table's text columns (tokens, encoded pairs), kept while the table
    lives: a weak reference to the table drops its entries when it is collected (single ``dict``
    pops, safe whenever the callback runs)."""

    def __init__(self) -> None:
        self.entries: dict[int, dict[Hashable, object]] = {}
        self.tables: dict[int, weakref.ref[Table]] = {}

    def get(self, table: Table, tag: Hashable, build: Callable[[], T]) -> T:
        tid = id(table)
        ref = self.tables.get(tid)
        if ref is None or ref() is not table:
            self.drop(tid)
            self.tables[tid] = weakref.ref(table, lambda _, tid=tid: self.drop(tid))  # type: ignore[misc]
            self.entries[tid] = {}
        store = self.entries[tid]
        if tag in store:
            value: T = store[tag]  # type: ignore[assignment]
            return value
        value = build()
        store[tag] = value
        return value

    def drop(self, tid: int) -> None:
        self.tables.pop(tid, None)
        self.entries.pop(tid, None)

    def clear(self) -> None:
        self.entries.clear()
        self.tables.clear()


_CACHE = _TableCache()


def clear_text_cache() -> None:
    """Forget every cached tokenisation now (entries otherwise go with their table)."""
    _CACHE.clear()


def _texts(table: Table, path: str) -> list[str]:
    column: list[str] = table.column(path)
    return column


def _tokens(table: Table, path: str, tokenizer: str) -> list[list[str]]:
    def build() -> list[list[str]]:
        texts = _texts(table, path)
        tokenize = get_tokenizer(tokenizer)
        with collector_paused():
            tokens = [tokenize(t) for t in texts]
        warn_if_empty(texts, tokens, tokenizer)
        return tokens

    return _CACHE.get(table, ("tokens", path, tokenizer), build)


def _sentences(table: Table, path: str, tokenizer: str) -> list[list[list[str]]]:
    def build() -> list[list[list[str]]]:
        tokenize = get_tokenizer(tokenizer)
        with collector_paused():
            return [[tokenize(s) for s in split_sentences(t)] for t in _texts(table, path)]

    return _CACHE.get(table, ("sentences", path, tokenizer), build)


def _pairs(table: Table, pred: str, gold: str, tokenizer: str) -> PairIds:
    def build() -> PairIds:
        return PairIds.from_tokens(_tokens(table, pred, tokenizer), _tokens(table, gold, tokenizer))

    return _CACHE.get(table, ("pairs", pred, gold, tokenizer), build)


def _sacre_pairs(table: Table, pred: str, gold: str, tokenize: str, lowercase: bool) -> PairIds:
    def tokens(path: str) -> list[list[str]]:
        return _CACHE.get(
            table,
            ("sacrebleu", path, tokenize, lowercase),
            lambda: sacrebleu_tokenize_all(_texts(table, path), tokenize, lowercase),
        )

    def build() -> PairIds:
        return PairIds.from_tokens(tokens(pred), tokens(gold))

    return _CACHE.get(table, ("sacrebleu-pairs", pred, gold, tokenize, lowercase), build)


# ----------------------------------------------------------------------------------------------
# statistics
# ----------------------------------------------------------------------------------------------


class _TextStatistic(Statistic):
    """A statistic over a prediction and a reference text field."""

    def __init__(self, pred: str, gold: str) -> None:
        self.pred = pred
        self.gold = gold

    def fields(self) -> list[FieldSpec]:
        return [FieldSpec(self.pred, "string"), FieldSpec(self.gold, "string")]


class RougeStatistic(_TextStatistic):
    """Per record ``[precision, recall, F, 1]`` of ROUGE-N (``kind="n"``), ROUGE-L or ROUGE-Lsum."""

    def __init__(
        self, pred: str, gold: str, tokenizer: str, kind: Literal["n", "l", "lsum"], n: int = 0
    ) -> None:
        super().__init__(pred, gold)
        self.tokenizer = tokenizer
        self.kind = kind
        self.n = n

    @property
    def key(self) -> Hashable:
        return ("rouge", self.kind, self.n, self.pred, self.gold, self.tokenizer)

    def compute(self, table: Table, context: Context) -> StatBlock:
        overlap: np.ndarray
        pred_total: np.ndarray
        gold_total: np.ndarray
        if self.kind == "lsum":
            preds = _sentences(table, self.pred, self.tokenizer)
            golds = _sentences(table, self.gold, self.tokenizer)
            counts = np.array(
                [rouge_lsum_counts(p, g) for p, g in zip(preds, golds, strict=True)],
                dtype=np.float64,
            ).reshape(-1, 3)
            overlap, pred_total, gold_total = counts[:, 0], counts[:, 1], counts[:, 2]
        else:
            pairs = _pairs(table, self.pred, self.gold, self.tokenizer)
            if self.kind == "n":
                overlap = pairs.matches(self.n)
                pred_total, gold_total = pairs.totals(self.n)
            else:
                overlap, pred_total, gold_total = pairs.lcs(), pairs.pred_lengths, pairs.ref_lengths
        scores = prf(overlap, pred_total, gold_total)
        rows = np.stack(
            [scores.precision, scores.recall, scores.fmeasure, np.ones(table.n)], axis=1
        )
        return StatBlock(width=4, rows=rows)


class NltkBleuStatistic(_TextStatistic):
    """Per record ``[nltk sentence BLEU, 1, 1]``, or ``[0, 0, 1]`` where it is undefined."""

    def __init__(
        self, pred: str, gold: str, tokenizer: str, smoothing: int, max_order: int
    ) -> None:
        super().__init__(pred, gold)
        self.tokenizer = tokenizer
        self.smoothing = smoothing
        self.max_order = max_order

    @property
    def key(self) -> Hashable:
        return ("nltk-bleu", self.pred, self.gold, self.tokenizer, self.smoothing, self.max_order)

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = _pairs(table, self.pred, self.gold, self.tokenizer)
        stats = nltk_bleu_stats_batch(
            pairs, max_order=self.max_order, fivegrams=self.smoothing in (5, 7)
        )
        scores = nltk_bleu(stats, smoothing=self.smoothing)
        defined = ~np.isnan(scores)
        rows = np.stack(
            [np.where(defined, scores, 0.0), defined.astype(np.float64), np.ones(table.n)], axis=1
        )
        return StatBlock(width=3, rows=rows)


class SacreBleuStatistic(_TextStatistic):
    """Per record sacrebleu's ``[hyp_len, ref_len, correct_1..N, total_1..N]`` and a 1."""

    def __init__(self, pred: str, gold: str, tokenize: str, lowercase: bool, max_order: int):
        super().__init__(pred, gold)
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.max_order = max_order

    @property
    def key(self) -> Hashable:
        return (
            "sacrebleu-bleu",
            self.pred,
            self.gold,
            self.tokenize,
            self.lowercase,
            self.max_order,
        )

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = _sacre_pairs(table, self.pred, self.gold, self.tokenize, self.lowercase)
        stats = sacrebleu_bleu_stats_batch(pairs, max_order=self.max_order)
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=rows.shape[1], rows=rows)


class ChrfStatistic(_TextStatistic):
    """Per record sacrebleu's chrF ``[hyp, ref, match]`` of every order and a 1."""

    def __init__(
        self,
        pred: str,
        gold: str,
        char_order: int,
        word_order: int,
        lowercase: bool,
        whitespace: bool,
    ) -> None:
        super().__init__(pred, gold)
        self.char_order = char_order
        self.word_order = word_order
        self.lowercase = lowercase
        self.whitespace = whitespace

    @property
    def key(self) -> Hashable:
        return (
            "chrf",
            self.pred,
            self.gold,
            self.char_order,
            self.word_order,
            self.lowercase,
            self.whitespace,
        )

    def compute(self, table: Table, context: Context) -> StatBlock:
        stats = chrf_stats_batch(
            _texts(table, self.pred),
            _texts(table, self.gold),
            self.char_order,
            self.word_order,
            self.lowercase,
            self.whitespace,
        )
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=rows.shape[1], rows=rows)


# ----------------------------------------------------------------------------------------------
# metrics
# ----------------------------------------------------------------------------------------------


def _check_tokenizer(tokenizer: str) -> None:
    get_tokenizer(tokenizer)  # raises ValueError naming the choices


def _check_stemmer(tokenizer: str, use_stemmer: Any) -> None:
    if not isinstance(use_stemmer, bool):
        raise ValueError(f"use_stemmer must be true or false, got {use_stemmer!r}")
    if not use_stemmer:
        return
    if tokenizer != "rouge_score":
        raise ValueError(
            f"use_stemmer stems rouge-score's own tokens: set tokenizer: rouge_score (got "
            f"{tokenizer!r})"
        )
    if not stemmer_available():
        raise ValueError(
            "use_stemmer needs nltk (rouge-score's Porter stemmer): pip install 'pingce[stem]' "
            "(or pip install nltk)"
        )


def _check_int(name: str, value: Any, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
    return value


@dataclass(eq=False)
class TextMetric(Metric):
    """A metric over a prediction and a reference text field."""

    pred: str = "pred_text"
    gold: str = "gold_text"

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., -1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no records"


@dataclass(eq=False)
class Rouge(TextMetric):
    """Mean over records of a rouge-score precision, recall or F-measure (``kind`` n, l or
    lsum)."""

    n: int = 1
    tokenizer: str = "jieba"
    stat: RougeStat = "f"
    zero_division: ZeroDivision = None
    kind: Literal["n", "l", "lsum"] = "n"
    use_stemmer: bool = False
    """rouge-score's ``use_stemmer``: only with ``tokenizer: rouge_score`` (its own tokeniser
    is the one that stems); tokens then come from ``rouge_score_stemmed``."""

    def __post_init__(self) -> None:
        _check_tokenizer(self.tokenizer)
        _check_stemmer(self.tokenizer, self.use_stemmer)
        if self.stat not in ("f", "p", "r"):
            raise ValueError(f"stat must be 'f', 'p' or 'r', got {self.stat!r}")
        if self.kind not in ("n", "l", "lsum"):
            raise ValueError(f"kind must be n, l or lsum, got {self.kind!r}")
        self.n = _check_int("n", self.n, 1) if self.kind == "n" else 0
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        tokenizer = "rouge_score_stemmed" if self.use_stemmer else self.tokenizer
        return RougeStatistic(self.pred, self.gold, tokenizer, self.kind, self.n)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        column = {"p": 0, "r": 1, "f": 2}[self.stat]
        return safe_divide(s[..., column], s[..., 3], self.zero_division)


register_metric(
    "text_rouge_n",
    definition="mean over records of rouge-score's ROUGE-N: clipped n-gram overlap, "
    "P = overlap/pred n-grams, R = overlap/ref n-grams, F = 2PR/(P+R) (stat f, p or r)",
    kind="n",
)(Rouge)
register_metric(
    "text_rouge_l",
    definition="mean over records of rouge-score's ROUGE-L: P = LCS/pred tokens, "
    "R = LCS/ref tokens, F = 2PR/(P+R) (stat f, p or r)",
    kind="l",
    n=0,
)(Rouge)
register_metric(
    "text_rouge_lsum",
    definition="mean over records of rouge-score's ROUGE-Lsum: union LCS of each reference "
    "line with the predicted lines, P = hits/pred tokens, R = hits/ref tokens (stat f, p or r)",
    kind="lsum",
    n=0,
)(Rouge)


@register_metric("text_bleu")
@dataclass(eq=False)
class NltkBleu(TextMetric):
    """Mean over records of nltk's sentence BLEU (uniform weights, smoothing method 0-7)."""

    definition = (
        "mean over records of nltk sentence_bleu: brevity penalty x geometric mean of clipped "
        "n-gram precisions 1..max_order, SmoothingFunction method `smoothing` (0-7)"
    )

    tokenizer: str = "jieba"
    smoothing: int = 0
    max_order: int = 4
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        _check_tokenizer(self.tokenizer)
        _check_int("smoothing", self.smoothing, 0, 7)
        _check_int("max_order", self.max_order, 1)
        if self.smoothing == 6 and self.max_order < 3:
            raise ValueError("smoothing method 6 needs max_order >= 3")
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        return NltkBleuStatistic(
            self.pred, self.gold, self.tokenizer, self.smoothing, self.max_order
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        return safe_divide(s[..., 0], s[..., 1], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(np.asarray(summed)[..., 2]) == 0:
            return "no records"
        return "smoothing method 6 is undefined for every record (it needs a trigram match)"


@dataclass(eq=False)
class CorpusMetric(TextMetric):
    """A corpus score (0-100, as sacrebleu's) from summed library statistics; the last column
    counts records."""

    maximum = 100.0

    def _finish(
        self, summed: np.ndarray, value: np.ndarray, zero_division: ZeroDivision
    ) -> np.ndarray:
        count = np.asarray(summed, dtype=np.float64)[..., -1]
        fill = self.maximum * fill_value(zero_division)  # the policy's 0 or 1 on a 0-100 scale
        return np.asarray(np.where(count > 0, value, fill), dtype=np.float64)


@register_metric("text_corpus_bleu")
@dataclass(eq=False)
class CorpusBleu(CorpusMetric):
    """sacrebleu's corpus BLEU (0-100) from summed segment statistics.

    ``tokenize`` defaults to ``"zh"`` (Chinese characters apart, the rest as ``13a``), not to
    sacrebleu's own default ``"13a"``, which keeps a Chinese sentence without spaces as one token.
    Per-record values are sacrebleu's sentence BLEU with the same settings (``effective_order``
    False unless set, unlike ``sacrebleu.sentence_bleu``).
    """

    definition = (
        "sacrebleu corpus BLEU (0-100): brevity penalty x geometric mean of n-gram precisions "
        "from statistics summed over records; sacrebleu tokenizer and smoothing"
    )

    tokenize: str = "zh"
    smooth_method: SmoothMethod = "exp"
    smooth_value: float | None = None
    lowercase: bool = False
    effective_order: bool = False
    max_order: int = 4
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        check_tokenize(self.tokenize)
        if self.smooth_method not in SMOOTH_DEFAULTS:
            raise ValueError(
                f"smooth_method must be one of {list(SMOOTH_DEFAULTS)}, got {self.smooth_method!r}"
            )
        self.smooth_value = None if self.smooth_value is None else float(self.smooth_value)
        self.lowercase = bool(self.lowercase)
        self.effective_order = bool(self.effective_order)
        _check_int("max_order", self.max_order, 1)
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        return SacreBleuStatistic(
            self.pred, self.gold, self.tokenize, self.lowercase, self.max_order
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        value = sacrebleu_bleu(
            s[..., :-1], self.smooth_method, self.smooth_value, self.effective_order
        )
        return self._finish(s, value, self.zero_division)


@register_metric("text_chrf")
@dataclass(eq=False)
class Chrf(CorpusMetric):
    """sacrebleu's corpus chrF (chrF++ with word_order=2), 0-100, from summed statistics."""

    definition = (
        "sacrebleu corpus chrF (0-100): F-beta of character (and word, chrF++) n-gram precision "
        "and recall averaged over orders, from statistics summed over records"
    )

    char_order: int = 6
    word_order: int = 0
    beta: float = 2.0
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        _check_int("char_order", self.char_order, 1)
        _check_int("word_order", self.word_order, 0)
        beta = self.beta
        if not isinstance(beta, int | float) or isinstance(beta, bool) or beta < 0:
            raise ValueError(f"beta must be a number >= 0, got {beta!r}")
        self.beta = float(beta)
        self.lowercase = bool(self.lowercase)
        self.whitespace = bool(self.whitespace)
        self.eps_smoothing = bool(self.eps_smoothing)
        self.zero_division = check_zero_division(self.zero_division)

    def statistic(self) -> Statistic:
        return ChrfStatistic(
            self.pred, self.gold, self.char_order, self.word_order, self.lowercase, self.whitespace
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        width = chrf_width(self.char_order, self.word_order)
        return self._finish(
            s, chrf(s[..., :width], self.beta, self.eps_smoothing), self.zero_division
        )
