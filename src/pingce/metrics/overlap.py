"""Text-overlap metrics for any suite: ROUGE-N/L/Lsum, BLEU (nltk and sacrebleu) and chrF.

Each metric reads a prediction and a reference text field (``pred_text`` and ``gold_text`` by
default) and follows one reference library exactly (the tests check the values against it). The
reference field holds a text or a non-empty list of texts (any number per record), with each
library's rule for several references:

* ``rouge_n``, ``rouge_l``, ``rouge_lsum``: Google's rouge-score with our tokeniser (its own
  tokeniser drops every Chinese character), as the plain mean over records (rouge-score's
  ``BootstrapAggregator`` reports the median of bootstrap means as "mid", close to it).
  rouge-score's convention for empty texts applies: precision, recall and F are 0, not undefined.
  Several references: ``score_multi``, the reference with the best F (first of equals) with its
  own P and R. ROUGE-Lsum's sentences: lines, ``nltk.sent_tokenize`` (``split_summaries``) or
  pingce's Chinese-aware splitter;
* ``bleu``: nltk's ``sentence_bleu`` (weights, smoothing method 0-7 and its constants,
  ``auto_reweigh``), averaged over records; ``nltk_corpus_bleu``: nltk's ``corpus_bleu`` from
  summed statistics (smoothing 0-4, applied once to the corpus precisions). Several references:
  clipped by the largest count in any one, the closest reference length (ties to the shorter).
  Several weight tuples in a suite entry make one metric per tuple (``bleu_1``, ``bleu_2``, ...);
* ``corpus_bleu``: sacrebleu's corpus BLEU (its tokenisers, default ``zh``; smoothing and
  effective order; 0-100), several references as sacrebleu's reference streams (a record with
  fewer is sacrebleu's ``None``);
* ``chrf``: sacrebleu's corpus chrF / chrF++ (0-100); several references: the statistics of the
  one with the best sentence chrF (first of equals).

Statistics: records averaged metrics keep dense rows ``[precision, recall, F, 1]`` (ROUGE) or
``[score, defined, 1]`` (nltk BLEU); corpus metrics keep the library's own summable segment
statistics plus a record count, so their bootstrap intervals come from summed rows. Tokens (and
the encoded pairs with their n-gram counts) are cached per table, field and tokeniser for as long
as the table lives, so ROUGE-1, ROUGE-2, ROUGE-L and BLEU over the same fields tokenise (and count
n-grams of) each text once.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Annotated, Any, Literal, TypeVar

import numpy as np

from .._collector import collector_paused
from .._constraints import ArgumentError, Range
from ..records import FieldSpec, Table
from ..text.bleu import (
    SmoothMethod,
    check_tokenize,
    nltk_bleu,
    nltk_bleu_stats_batch,
    sacrebleu_bleu,
    sacrebleu_bleu_stats_batch,
    sacrebleu_tokenize_all,
)
from ..text.chrf import chrf, chrf_stats_batch, chrf_width
from ..text.pairs import PairIds, first_best, flatten_references
from ..text.rouge_google import (
    RougeScores,
    SplitSummaries,
    check_split_summaries,
    prf,
    rouge_lsum_counts,
    summary_sentences,
)
from ..text.tokenize import get_tokenizer, stemmer_available, warn_if_empty
from ._policy import ZeroDivision, fill_value, safe_divide
from .protocol import Context, Metric, RecordMap, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "REFERENCES",
    "Chrf",
    "ChrfStatistic",
    "CorpusBleu",
    "CorpusMetric",
    "NltkBleu",
    "NltkBleuStatistic",
    "NltkCorpusBleu",
    "NltkCorpusBleuStatistic",
    "NltkOptions",
    "Rouge",
    "RougeLsum",
    "RougeStatistic",
    "SacreBleuStatistic",
    "TextMetric",
    "clear_text_cache",
    "text_references",
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


def text_references(raw: Any) -> str | list[str]:
    """A reference field's value: a text, or a non-empty list of texts (several references);
    anything else is a ValueError that the loader reports with file, line, field and value."""
    if type(raw) is str:
        return raw
    if isinstance(raw, tuple) or (isinstance(raw, np.ndarray) and raw.ndim == 1):
        raw = list(raw)  # a frame's list cell (pandas reads Parquet lists as arrays)
    if isinstance(raw, list):
        if not raw:
            raise ValueError("an empty list of references: give at least one reference text")
        for i, item in enumerate(raw):
            if not isinstance(item, str):
                raise ValueError(
                    f"reference {i} of the list is {type(item).__name__} {item!r}, not a text"
                )
        return raw
    raise ValueError("expected a reference text or a list of reference texts")


text_references.identity_types = frozenset({str})  # type: ignore[attr-defined]


def _flat(table: Table, path: str) -> tuple[list[str], np.ndarray | None]:
    """The texts of a text or reference column in record order, and the record of each (None
    when every record has exactly one)."""
    return _CACHE.get(table, ("texts", path), lambda: flatten_references(table.column(path)))


def _texts(table: Table, path: str) -> list[str]:
    return _flat(table, path)[0]


def _owner(table: Table, path: str) -> np.ndarray | None:
    return _flat(table, path)[1]


def _tokens(table: Table, path: str, tokenizer: str, map_records: RecordMap) -> list[list[str]]:
    def build() -> list[list[str]]:
        texts = _texts(table, path)
        tokenize = get_tokenizer(tokenizer)
        # the first text here: it loads the tokenizer (jieba's dictionary) before any fork
        first = [tokenize(texts[0])] if texts else []

        def work(part: Sequence[str]) -> list[list[str]]:
            with collector_paused():
                return [tokenize(t) for t in part]

        # jieba is most of a text metric's time: the executor's map may give the second half of
        # the other texts to a second process (same tokens either way)
        tokens = first + list(chain.from_iterable(map_records(work, texts[1:])))
        warn_if_empty(texts, tokens, tokenizer)
        return tokens

    return _CACHE.get(table, ("tokens", path, tokenizer), build)


def _sentences(
    table: Table, path: str, tokenizer: str, split: SplitSummaries = "lines"
) -> list[list[list[str]]]:
    def build() -> list[list[list[str]]]:
        tokenize = get_tokenizer(tokenizer)
        texts = _texts(table, path)
        with collector_paused():
            return [[tokenize(s) for s in summary_sentences(t, split)] for t in texts]

    return _CACHE.get(table, ("sentences", path, tokenizer, split), build)


def _pairs(table: Table, pred: str, gold: str, tokenizer: str, context: Context) -> PairIds:
    def build() -> PairIds:
        return PairIds.from_tokens(
            _tokens(table, pred, tokenizer, context.map_records),
            _tokens(table, gold, tokenizer, context.map_records),
            _owner(table, gold),
        )

    return _CACHE.get(table, ("pairs", pred, gold, tokenizer), build)


def _sacre_pairs(table: Table, pred: str, gold: str, tokenize: str, lowercase: bool) -> PairIds:
    def tokens(path: str) -> list[list[str]]:
        return _CACHE.get(
            table,
            ("sacrebleu", path, tokenize, lowercase),
            lambda: sacrebleu_tokenize_all(_texts(table, path), tokenize, lowercase),
        )

    def build() -> PairIds:
        return PairIds.from_tokens(tokens(pred), tokens(gold), _owner(table, gold))

    return _CACHE.get(table, ("sacrebleu-pairs", pred, gold, tokenize, lowercase), build)


# ----------------------------------------------------------------------------------------------
# statistics
# ----------------------------------------------------------------------------------------------


REFERENCES = "a reference text or a list of reference texts"


class _TextStatistic(Statistic):
    """A statistic over a prediction text field and a reference field (a text or a list)."""

    def __init__(self, pred: str, gold: str) -> None:
        self.pred = pred
        self.gold = gold

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.pred, "string"),
            FieldSpec(self.gold, "json", parser=text_references, what=REFERENCES),
        ]


class RougeStatistic(_TextStatistic):
    """Per record ``[precision, recall, F, 1]`` of ROUGE-N (``kind="n"``), ROUGE-L or ROUGE-Lsum;
    with several references, those of the reference with the best F (rouge-score's
    ``score_multi``)."""

    def __init__(
        self,
        pred: str,
        gold: str,
        tokenizer: str,
        kind: Literal["n", "l", "lsum"],
        n: int = 0,
        split: SplitSummaries = "lines",
    ) -> None:
        super().__init__(pred, gold)
        self.tokenizer = tokenizer
        self.kind = kind
        self.n = n
        self.split = split

    @property
    def key(self) -> Hashable:
        return ("rouge", self.kind, self.n, self.pred, self.gold, self.tokenizer, self.split)

    def column_names(self, width: int) -> list[str]:
        return ["precision", "recall", "F", "records"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        overlap: np.ndarray
        pred_total: np.ndarray
        gold_total: np.ndarray
        owner = _owner(table, self.gold)
        if self.kind == "lsum":
            preds = _sentences(table, self.pred, self.tokenizer, self.split)
            golds = _sentences(table, self.gold, self.tokenizer, self.split)
            hyps = preds if owner is None else [preds[i] for i in owner.tolist()]
            counts = np.array(
                [rouge_lsum_counts(p, g) for p, g in zip(hyps, golds, strict=True)],
                dtype=np.float64,
            ).reshape(-1, 3)
            overlap, pred_total, gold_total = counts[:, 0], counts[:, 1], counts[:, 2]
        else:
            pairs = _pairs(table, self.pred, self.gold, self.tokenizer, context)
            if self.kind == "n":  # a value per reference: against its record's prediction
                overlap = pairs.ref_matches(self.n)
                pred_total, gold_total = pairs.totals(self.n)
                pred_total = pred_total[pairs.owners()]
            else:
                pairs = pairs.expanded()
                overlap, pred_total, gold_total = pairs.lcs(), pairs.pred_lengths, pairs.ref_lengths
        scores = prf(overlap, pred_total, gold_total)
        if owner is not None:  # score_multi: the reference with the best F, first of equals
            best = first_best(scores.fmeasure, owner, table.n)
            scores = RougeScores(scores.precision[best], scores.recall[best], scores.fmeasure[best])
        rows = np.stack(
            [scores.precision, scores.recall, scores.fmeasure, np.ones(table.n)], axis=1
        )
        return StatBlock(width=4, rows=rows)


@dataclass(frozen=True)
class NltkOptions:
    """The arguments of nltk's ``sentence_bleu`` / ``corpus_bleu`` other than the texts: one
    weight tuple (None: uniform over ``max_order``), the ``SmoothingFunction`` method and its
    constants, ``auto_reweigh``; ``max_order`` is the number of orders nltk computes and smooths
    (its longest weight tuple)."""

    max_order: int = 4
    weights: tuple[float, ...] | None = None
    smoothing: int = 0
    epsilon: float = 0.1
    alpha: float = 5.0
    k: float = 5.0
    auto_reweigh: bool = False

    def bleu(self, stats: np.ndarray) -> np.ndarray:
        """nltk's BLEU of (summed) statistics, NaN where nltk raises."""
        return nltk_bleu(
            stats,
            self.weights,
            self.smoothing,
            epsilon=self.epsilon,
            alpha=self.alpha,
            k=self.k,
            auto_reweigh=self.auto_reweigh,
        )


class NltkBleuStatistic(_TextStatistic):
    """Per record ``[nltk sentence BLEU, 1, 1]``, or ``[0, 0, 1]`` where it is undefined."""

    def __init__(self, pred: str, gold: str, tokenizer: str, options: NltkOptions) -> None:
        super().__init__(pred, gold)
        self.tokenizer = tokenizer
        self.options = options

    @property
    def key(self) -> Hashable:
        return ("nltk-bleu", self.pred, self.gold, self.tokenizer, self.options)

    def column_names(self, width: int) -> list[str]:
        return ["BLEU", "defined", "records"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = _pairs(table, self.pred, self.gold, self.tokenizer, context)
        stats = nltk_bleu_stats_batch(
            pairs, max_order=self.options.max_order, fivegrams=self.options.smoothing in (5, 7)
        )
        scores = self.options.bleu(stats)
        defined = ~np.isnan(scores)
        rows = np.stack(
            [np.where(defined, scores, 0.0), defined.astype(np.float64), np.ones(table.n)], axis=1
        )
        return StatBlock(width=3, rows=rows)


class NltkCorpusBleuStatistic(_TextStatistic):
    """Per record nltk's BLEU statistics ``[hyp_len, closest ref_len, m_1..N, d_1..N, c_1..N,
    0, 0]`` (see :mod:`pingce.text.bleu`) and a 1: summed, they are ``corpus_bleu``'s counts."""

    def __init__(self, pred: str, gold: str, tokenizer: str, max_order: int) -> None:
        super().__init__(pred, gold)
        self.tokenizer = tokenizer
        self.max_order = max_order

    @property
    def key(self) -> Hashable:
        return ("nltk-corpus-bleu", self.pred, self.gold, self.tokenizer, self.max_order)

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = _pairs(table, self.pred, self.gold, self.tokenizer, context)
        stats = nltk_bleu_stats_batch(pairs, max_order=self.max_order, fivegrams=False)
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=rows.shape[1], rows=rows)


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

    def column_names(self, width: int) -> list[str]:
        orders = range(1, self.max_order + 1)
        return [
            "hyp_len",
            "ref_len",
            *(f"correct_{n}" for n in orders),
            *(f"total_{n}" for n in orders),
            "records",
        ]

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = _sacre_pairs(table, self.pred, self.gold, self.tokenize, self.lowercase)
        stats = sacrebleu_bleu_stats_batch(pairs, max_order=self.max_order)
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=rows.shape[1], rows=rows)


class ChrfStatistic(_TextStatistic):
    """Per record sacrebleu's chrF ``[hyp, ref, match]`` of every order and a 1; with several
    references, those of the reference with the best sentence chrF under ``beta`` and
    ``eps_smoothing`` (sacrebleu's choice)."""

    def __init__(
        self,
        pred: str,
        gold: str,
        char_order: int,
        word_order: int,
        lowercase: bool,
        whitespace: bool,
        beta: float = 2.0,
        eps_smoothing: bool = False,
    ) -> None:
        super().__init__(pred, gold)
        self.char_order = char_order
        self.word_order = word_order
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.beta = beta
        self.eps_smoothing = eps_smoothing

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
            self.beta,
            self.eps_smoothing,
        )

    def compute(self, table: Table, context: Context) -> StatBlock:
        stats = chrf_stats_batch(
            _texts(table, self.pred),
            _texts(table, self.gold),
            self.char_order,
            self.word_order,
            self.lowercase,
            self.whitespace,
            ref_owner=_owner(table, self.gold),
            beta=self.beta,
            eps_smoothing=self.eps_smoothing,
        )
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=rows.shape[1], rows=rows)


# ----------------------------------------------------------------------------------------------
# metrics
# ----------------------------------------------------------------------------------------------


def _check_tokenizer(tokenizer: str) -> None:
    get_tokenizer(tokenizer)  # raises ValueError naming the choices


def _check_stemmer(tokenizer: str, use_stemmer: bool) -> None:
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


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)


def _several(weights: Any) -> bool:
    """Whether ``weights`` is a list of weight tuples (several BLEU scores at once)."""
    return (
        isinstance(weights, list | tuple)
        and len(weights) > 0
        and all(isinstance(w, list | tuple) for w in weights)
    )


def _check_weights(weights: Any) -> list[float] | None:
    if weights is None:
        return None
    if _several(weights):
        raise ValueError(
            "several weight tuples give several BLEU scores: a suite entry with them becomes one "
            "metric per tuple (NAME_1, NAME_2, ...); build one metric per tuple here"
        )
    if not isinstance(weights, list | tuple) or not weights:
        raise ValueError(f"weights must be a non-empty list of numbers, got {weights!r}")
    bad = [w for w in weights if not _is_number(w)]
    if bad:
        raise ValueError(f"weights must be finite numbers, got {bad[0]!r} in {list(weights)!r}")
    return [float(w) for w in weights]


def _expand_weights(args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
    """Several weight tuples in one suite entry: one metric per tuple, named ``1``, ``2``, ... after
    the entry, all computing and smoothing the orders of the longest tuple (as one nltk call with
    all of them does)."""
    weights = args.get("weights")
    if not _several(weights):
        return None
    tuples: list[Any] = list(weights or [])
    longest = max(len(w) for w in tuples)
    max_order = args.get("max_order") or longest
    return [
        (str(i), {**args, "weights": list(w), "max_order": max_order})
        for i, w in enumerate(tuples, start=1)
    ]


_SMOOTHING_CONSTANTS = (("epsilon", 0.1, (1,)), ("alpha", 5.0, (6,)), ("k", 5.0, (4, 7)))


@dataclass(eq=False)
class _NltkArguments:
    """nltk's BLEU arguments shared by ``text_bleu`` and ``text_nltk_corpus_bleu`` (checked by
    :meth:`_nltk_options`)."""

    tokenizer: str = "jieba"
    smoothing: Annotated[int, Range(0, 7)] = 0
    max_order: Annotated[int, Range(1, 100)] | None = None
    weights: list[float] | None = None
    auto_reweigh: bool = False
    epsilon: Annotated[float, Range(0)] = 0.1
    k: Annotated[float, Range(0, low_open=True)] = 5.0

    @classmethod
    def expand_arguments(cls, args: dict[str, Any]) -> list[tuple[str, dict[str, Any]]] | None:
        """Suite entries whose ``weights`` hold several tuples make one metric per tuple."""
        return _expand_weights(args)

    def _nltk_options(self, alpha: float = 5.0) -> NltkOptions:
        _check_tokenizer(self.tokenizer)
        self.weights = _check_weights(self.weights)
        longest = len(self.weights) if self.weights else 4
        if self.max_order is None:
            self.max_order = longest
        if self.weights is not None and len(self.weights) > self.max_order:
            raise ValueError(
                f"max_order ({self.max_order}) must be at least the number of weights "
                f"({len(self.weights)})"
            )
        if self.smoothing == 6 and self.max_order < 3:
            raise ValueError("smoothing method 6 needs max_order >= 3")
        self.epsilon = float(self.epsilon)
        self.k = float(self.k)
        values = {"epsilon": self.epsilon, "alpha": alpha, "k": self.k}
        for name, default, methods in _SMOOTHING_CONSTANTS:
            if values[name] != default and self.smoothing not in methods:
                used = " and ".join(str(m) for m in methods)
                raise ValueError(
                    f"{name} is a constant of smoothing method {used} only (smoothing is "
                    f"{self.smoothing}): leave it out or choose that method"
                )
        return NltkOptions(
            max_order=self.max_order,
            weights=None if self.weights is None else tuple(self.weights),
            smoothing=self.smoothing,
            epsilon=self.epsilon,
            alpha=alpha,
            k=self.k,
            auto_reweigh=self.auto_reweigh,
        )


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

    n: Annotated[int, Range(1, 100)] | None = 1
    """The n of ROUGE-N (None for ROUGE-L and ROUGE-Lsum, which have none)."""
    tokenizer: str = "jieba"
    stat: RougeStat = "f"
    zero_division: ZeroDivision = None
    kind: Literal["n", "l", "lsum"] = "n"
    use_stemmer: bool = False
    """rouge-score's ``use_stemmer``: only with ``tokenizer: rouge_score`` (its own tokeniser
    is the one that stems); tokens then come from ``rouge_score_stemmed``."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.kind == "n" and self.n is None:
            raise ArgumentError("n", "must be an integer in 1..100 for ROUGE-N, got null")
        _check_tokenizer(self.tokenizer)
        _check_stemmer(self.tokenizer, self.use_stemmer)
        self.n = self.n if self.kind == "n" else 0

    def statistic(self) -> Statistic:
        tokenizer = "rouge_score_stemmed" if self.use_stemmer else self.tokenizer
        return RougeStatistic(
            self.pred, self.gold, tokenizer, self.kind, self.n or 0, self._split()
        )

    def _split(self) -> SplitSummaries:
        return "lines"

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        column = {"p": 0, "r": 1, "f": 2}[self.stat]
        return safe_divide(s[..., column], s[..., 3], self.zero_division)


@dataclass(eq=False)
class RougeLsum(Rouge):
    """ROUGE-Lsum with rouge-score's ``split_summaries``: sentences on newlines (``lines``, its
    default, or ``false``), by ``nltk.sent_tokenize`` (``nltk`` or ``true``: nltk's Punkt model
    must be installed; nothing is downloaded), or by pingce's Chinese-aware splitter
    (``chinese``)."""

    split_summaries: SplitSummaries | bool = "lines"

    def __post_init__(self) -> None:
        super().__post_init__()
        self.split_summaries = check_split_summaries(self.split_summaries)

    def _split(self) -> SplitSummaries:
        assert not isinstance(self.split_summaries, bool)
        return self.split_summaries


register_metric(
    "text_rouge_n",
    definition="mean over records of rouge-score's ROUGE-N: clipped n-gram overlap, "
    "P = overlap/pred n-grams, R = overlap/ref n-grams, F = 2PR/(P+R) (stat f, p or r).",
    kind="n",
)(Rouge)
register_metric(
    "text_rouge_l",
    definition="mean over records of rouge-score's ROUGE-L: P = LCS/pred tokens, "
    "R = LCS/ref tokens, F = 2PR/(P+R) (stat f, p or r).",
    kind="l",
    n=None,
)(Rouge)
register_metric(
    "text_rouge_lsum",
    definition="mean over records of rouge-score's ROUGE-Lsum: union LCS of each reference "
    "sentence with the predicted sentences, P = hits/pred tokens, R = hits/ref tokens (stat f, "
    "p or r).",
    kind="lsum",
    n=None,
)(RougeLsum)


@register_metric("text_bleu")
@dataclass(eq=False)
class NltkBleu(_NltkArguments, TextMetric):
    """Mean over records of nltk's sentence BLEU: ``weights`` (one tuple; several in a suite
    entry make one metric each), smoothing method 0-7 with its constants ``epsilon`` (method 1),
    ``alpha`` (6) and ``k`` (4, 7), ``auto_reweigh``."""

    definition = (
        "mean over records of nltk sentence_bleu: brevity penalty x weighted geometric mean of "
        "clipped n-gram precisions (weights, default uniform over 1..max_order), "
        "SmoothingFunction(epsilon, alpha, k) method `smoothing` (0-7)."
    )

    alpha: Annotated[float, Range(0, low_open=True)] = 5.0
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.alpha = float(self.alpha)
        self.options = self._nltk_options(self.alpha)

    def statistic(self) -> Statistic:
        return NltkBleuStatistic(self.pred, self.gold, self.tokenizer, self.options)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        return safe_divide(s[..., 0], s[..., 1], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        return np.asarray(summed, dtype=np.float64)[..., 1]

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(np.asarray(summed)[..., 2]) == 0:
            return "no records"
        return "smoothing method 6 is undefined for every record (it needs a trigram match)"


@register_metric("text_nltk_corpus_bleu")
@dataclass(eq=False)
class NltkCorpusBleu(_NltkArguments, TextMetric):
    """nltk's ``corpus_bleu`` (0-1) from statistics summed over records: matches and denominators
    of every order, hypothesis and closest reference lengths; smoothing (method 0-4) is applied
    once, to the corpus precisions, with the corpus hypothesis length (method 4), as nltk does.

    Methods 5-7 are refused: nltk's ``corpus_bleu`` hands them the last hypothesis and its
    references (a loop variable left over), so their value depends on the order of the records and
    does not add up; ``text_bleu`` has them per sentence. A record's own value is nltk's
    ``sentence_bleu`` of it.
    """

    definition = (
        "nltk corpus_bleu (0-1): brevity penalty x weighted geometric mean of n-gram precisions "
        "from counts summed over records, smoothing (0-4) applied to the corpus precisions."
    )

    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.smoothing > 4:
            raise ValueError(
                f"smoothing method {self.smoothing} is not offered at corpus level: nltk's "
                "corpus_bleu gives methods 5-7 the last record's texts (a leftover loop "
                "variable), so the value depends on record order and does not add up over "
                "records; use a method 0-4, or text_bleu for sentence scores with 5-7"
            )
        self.options = self._nltk_options()

    def statistic(self) -> Statistic:
        assert self.max_order is not None
        return NltkCorpusBleuStatistic(self.pred, self.gold, self.tokenizer, self.max_order)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        value = self.options.bleu(s[..., :-1])
        fill = fill_value(self.zero_division)
        return np.asarray(np.where(s[..., -1] > 0, value, fill), dtype=np.float64)


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
        "from statistics summed over records; sacrebleu tokenizer and smoothing."
    )

    tokenize: str = "zh"
    smooth_method: SmoothMethod = "exp"
    smooth_value: Annotated[float, Range(0)] | None = None
    lowercase: bool = False
    effective_order: bool = False
    max_order: Annotated[int, Range(1, 100)] = 4
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_tokenize(self.tokenize)
        self.smooth_value = None if self.smooth_value is None else float(self.smooth_value)

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
        "and recall averaged over orders, from statistics summed over records."
    )

    char_order: Annotated[int, Range(1, 100)] = 6
    word_order: Annotated[int, Range(0, 100)] = 0
    beta: Annotated[float, Range(0)] = 2.0
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self.beta = float(self.beta)

    def statistic(self) -> Statistic:
        return ChrfStatistic(
            self.pred,
            self.gold,
            self.char_order,
            self.word_order,
            self.lowercase,
            self.whitespace,
            self.beta,
            self.eps_smoothing,
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        width = chrf_width(self.char_order, self.word_order)
        return self._finish(
            s, chrf(s[..., :width], self.beta, self.eps_smoothing), self.zero_division
        )
