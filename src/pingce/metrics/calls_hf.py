"""The reference's second function-call computation, ``hf_fc_score`` (Hugging Face ``evaluate``).

The records, their validation and the call statistics are :mod:`.calls`' (``fn_acc_name`` and
``fn_acc_all`` are the same metrics: ``evaluate``'s accuracy of "name score is 1" against 1 is
the mean of ``fn_acc_name``, and ``fn_acc_all`` is ``np.mean`` of the records' argument
scores). The text metrics read the same texts, the reference's ``fns2str`` of the gold and predicted
calls (:func:`pingce.metrics.calls.serialize_calls`), and compute what ``evaluate`` computes
(:mod:`pingce.text.hf`):

* ``hf_rouge-1``, ``hf_rouge-2``, ``hf_rouge-l``: rouge-score's ROUGE-1/2/L F-measure
  (``RougeScorer.score(gold_text, pred_text)``) with rouge-score's default tokeniser
  (:func:`pingce.text.tokenize.rouge_score_tokens`: lowercase ASCII letters and digits only,
  so a Chinese argument value is dropped whole), ``use_stemmer`` as ``evaluate``'s option. The
  value is the exact mean over records (``aggregate: mean``); ``evaluate`` by default reports
  the mid of rouge-score's ``BootstrapAggregator``, a median of 1000 bootstrap means drawn
  with a numpy seed that, unless given, changes from run to run: ``aggregate: bootstrap`` reports
  that mid as ``evaluate.load("rouge", seed=seed)`` computes it (the draws of ``rouge1``, then
  ``rouge2``, then ``rougeL``; the same as ``np.random.seed(seed)`` just before the reference's
  ``hf_fc_score``), with a note giving the exact mean and the difference.
* ``hf_bleu-4``: nmt's corpus BLEU (0-1) on ``tokenizer_13a`` tokens, max order 4, no
  smoothing, from statistics summed over records. Unsmoothed, one n-gram order without a match
  over the records makes it exactly 0; such a 0 comes with a note naming the orders.

A prediction that does not parse scores as the empty answer (its text is ``""``), as a
prediction that calls nothing: ROUGE 0, and for BLEU no predicted tokens (its reference length
still counts). When the ROUGE tokeniser drops letters or digits (Chinese values) of some
records' texts, the run's notes say how many.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np

from .._constraints import Range
from .._defaults import MAX_BOOTSTRAP
from ..records import ParseFailure, Table
from ..text.bleu import bleu_stats_parts, sacrebleu_tokenize_all
from ..text.hf import ROUGE_TYPES, bootstrap_aggregate, nmt_bleu
from ..text.pairs import PairIds
from ..text.rouge_google import prf
from ..text.tokenize import drops_letters, get_tokenizer, stemmer_available
from ._policy import ZeroDivision, fill_value, safe_divide
from .calls import (
    CallFieldsStatistic,
    CallPair,
    NormalizeOptions,
    Normalizer,
    serialize_calls,
)
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = [
    "CallBleu13aStatistic",
    "CallRougeScoreStatistic",
    "HfBleu",
    "HfRouge",
    "call_texts",
    "tokens_13a",
]

Aggregate = Literal["mean", "bootstrap"]
RougeType = Literal["rouge1", "rouge2", "rougeL"]
"""The ROUGE an ``hf_rouge-*`` metric reports (fixed by its name)."""
_ROUGE_WIDTH = 10  # [P, R, F] of rouge1, rouge2, rougeL, then 1


def call_texts(records: Sequence[CallPair]) -> tuple[list[str], list[str]]:
    """The reference's ``fns2str`` of each record's predicted and gold calls; a prediction that did
    not parse is the empty text (no call)."""
    preds = ["" if isinstance(p, ParseFailure) else serialize_calls(p) for _, p in records]
    golds = [serialize_calls(g) for g, _ in records]
    return preds, golds


def tokens_13a(texts: Sequence[str]) -> list[list[str]]:
    """sacrebleu's 13a tokens of each text, the distinct pieces between ``", "`` tokenised once.

    13a pads the text with a space at each end, its replacements (``<skipped>``, ``-\\n``,
    ``\\n``, four entities) hold no space, and its pair rules never let a space decide a match
    on its other side: in step 2 a space can only be the first of a pair (before ``.`` or
    ``,``), in step 3 only the second (after them), in step 4 neither. So a text split at a space
    tokenises as its two parts padded alone (with more spaces, which the final split ignores).
    Call texts repeat their ``"key": value`` pieces between json's ``", "`` across records.
    """
    heads: list[list[str]] = []
    for text in texts:
        parts = text.split(", ")
        heads.append([part + "," for part in parts[:-1]] + [parts[-1]])
    distinct = list({piece for pieces in heads for piece in pieces})
    known = dict(zip(distinct, sacrebleu_tokenize_all(distinct, "13a"), strict=True))
    return [[token for piece in pieces for token in known[piece]] for pieces in heads]


def _distinct(preds: list[str], golds: list[str]) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The distinct (prediction, gold) text pairs and each record's index among them."""
    index: dict[tuple[str, str], int] = {}
    slots = np.fromiter(
        (index.setdefault(pair, len(index)) for pair in zip(preds, golds, strict=True)),
        np.int64,
        len(preds),
    )
    return list(index), slots


def _encoded(
    records: Sequence[CallPair], tokenize_all: Callable[[list[str]], list[list[str]]]
) -> tuple[PairIds, list[tuple[str, str]], np.ndarray]:
    """The distinct (prediction, gold) call-text pairs of the records encoded for counting (each
    distinct text tokenised once by ``tokenize_all``), the pairs, and each record's index among
    them."""
    preds, golds = call_texts(records)
    pairs, slots = _distinct(preds, golds)
    texts = list({t for pair in pairs for t in pair})
    tokens = dict(zip(texts, tokenize_all(texts), strict=True))
    encoded = PairIds.from_tokens([tokens[p] for p, _ in pairs], [tokens[g] for _, g in pairs])
    return encoded, pairs, slots


class CallRougeScoreStatistic(CallFieldsStatistic):
    """Per record ``[P, R, F]`` of rouge-score's ROUGE-1, ROUGE-2 and ROUGE-L on the reference's
    call texts (rouge-score's tokeniser), then a 1; notes how many records lose letters to it."""

    def __init__(
        self, gold: str, pred: str, normalize: Mapping[str, Any] | None, use_stemmer: bool
    ):
        super().__init__(gold, pred, normalize)
        self.use_stemmer = use_stemmer
        self.tokenizer = "rouge_score_stemmed" if use_stemmer else "rouge_score"

    @property
    def key(self) -> Hashable:
        return ("call-rouge-score", self.gold, self.pred, self.normalizer.key(), self.use_stemmer)

    def compute(self, table: Table, context: Context) -> StatBlock:
        tokenize = get_tokenizer(self.tokenizer)
        encoded, pairs, slots = _encoded(
            self.calls(table), lambda texts: [tokenize(t) for t in texts]
        )
        scored = np.empty((len(pairs), _ROUGE_WIDTH))
        for k, (overlap, pred_total, gold_total) in enumerate(
            (
                (encoded.matches(1), *encoded.totals(1)),
                (encoded.matches(2), *encoded.totals(2)),
                (encoded.lcs(), encoded.pred_lengths, encoded.ref_lengths),
            )
        ):
            scores = prf(overlap, pred_total, gold_total)
            scored[:, 3 * k] = scores.precision
            scored[:, 3 * k + 1] = scores.recall
            scored[:, 3 * k + 2] = scores.fmeasure
        scored[:, -1] = 1.0
        rows = scored[slots].reshape(-1, _ROUGE_WIDTH)
        return StatBlock(width=_ROUGE_WIDTH, rows=rows, notes=self._notes(pairs, slots))

    def _notes(self, pairs: list[tuple[str, str]], slots: np.ndarray) -> list[str]:
        dropping = {text for pair in pairs for text in pair if drops_letters(text)}
        losing = np.fromiter(
            (p in dropping or g in dropping for p, g in pairs), np.bool_, len(pairs)
        )
        count = int(np.count_nonzero(losing[slots])) if slots.size else 0
        if not count:
            return []
        return [
            f"{count} of {slots.shape[0]} records have letters or digits outside ASCII (Chinese "
            "argument values, say) in their call texts, which rouge-score's tokeniser (Hugging "
            "Face evaluate's ROUGE) drops: its ROUGE of them reads function names, argument "
            "keys and ASCII values only (the function-call suite scores them in jieba words)"
        ]


class CallBleu13aStatistic(CallFieldsStatistic):
    """Per record nmt's BLEU statistics ``[translation_length, reference_length,
    matches_1..N, possible_1..N]`` on the reference's call texts in ``tokenizer_13a`` tokens,
    then 1.

    ``tokenizer_13a`` is sacrebleu's 13a (:func:`pingce.text.bleu.sacrebleu_tokenize_all`),
    which strips trailing whitespace first, as ``evaluate``'s copy does not; a call text ends in
    ``}`` or ``null`` (or is empty), so the tokens are the same. Texts are tokenised piece by
    piece (:func:`tokens_13a`)."""

    def __init__(self, gold: str, pred: str, normalize: Mapping[str, Any] | None, max_order: int):
        super().__init__(gold, pred, normalize)
        self.max_order = max_order

    @property
    def key(self) -> Hashable:
        return ("call-bleu-13a", self.gold, self.pred, self.normalizer.key(), self.max_order)

    def compute(self, table: Table, context: Context) -> StatBlock:
        encoded, pairs, slots = _encoded(self.calls(table), tokens_13a)
        order = self.max_order
        width = 3 + 2 * order
        scored = np.empty((len(pairs), width))
        scored[:, 0] = encoded.pred_lengths
        scored[:, 1] = encoded.ref_lengths
        for n in range(1, order + 1):
            scored[:, 1 + n] = encoded.matches(n)
            scored[:, 1 + order + n] = encoded.totals(n)[0]
        scored[:, -1] = 1.0
        return StatBlock(width=width, rows=scored[slots].reshape(-1, width))


@dataclass(eq=False)
class _HfCallMetric(Metric):
    gold: str = "gold_fn"
    pred: str = "pred_fn"
    normalize: NormalizeOptions | None = None

    def count(self, summed: np.ndarray) -> np.ndarray:
        counted: np.ndarray = np.asarray(summed, dtype=np.float64)[..., -1]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no records"


@dataclass(eq=False)
class HfRouge(_HfCallMetric):
    """Mean over records (or ``evaluate``'s bootstrap mid) of rouge-score's ROUGE F-measure on
    the reference's call texts, rouge-score's tokeniser."""

    use_stemmer: bool = False
    aggregate: Aggregate = "mean"
    seed: Annotated[int, Range(0, 2**32 - 1)] = 0
    """numpy's legacy seed (``np.random.seed``), below 2**32."""
    n_samples: Annotated[int, Range(1, MAX_BOOTSTRAP)] = 1000
    zero_division: ZeroDivision = None
    rouge_type: RougeType = "rouge1"

    def __post_init__(self) -> None:
        super().__post_init__()
        Normalizer.from_spec(self.normalize)
        if self.use_stemmer and not stemmer_available():
            raise ValueError(
                "use_stemmer needs nltk (rouge-score's Porter stemmer): pip install "
                "'pingce[stem]' (or pip install nltk)"
            )
        self.column = 3 * ROUGE_TYPES.index(self.rouge_type)

    def statistic(self) -> Statistic:
        return CallRougeScoreStatistic(self.gold, self.pred, self.normalize, self.use_stemmer)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        return safe_divide(s[..., self.column + 2], s[..., -1], self.zero_division)

    def reported_value(self, block: StatBlock, value: float) -> tuple[float, str | None]:
        """``aggregate: bootstrap``: the mid F of rouge-score's ``BootstrapAggregator`` over the
        block's records, as ``evaluate.load("rouge", seed=seed)`` reports it."""
        if self.aggregate == "mean" or block.rows is None or block.n == 0:
            return value, None
        matrix = np.ascontiguousarray(block.rows[:, self.column : self.column + 3])
        low, mid, high = bootstrap_aggregate(
            matrix,
            seed=self.seed,
            n_samples=self.n_samples,
            skip=ROUGE_TYPES.index(self.rouge_type),
        )[:, 2]
        note = (
            f"aggregate bootstrap: the mid of rouge-score's BootstrapAggregator, as Hugging Face "
            f"evaluate.load('rouge', seed={self.seed}) reports it ({self.n_samples} bootstrap "
            "means; "
            f"its 95% low {low:.6g}, high {high:.6g}); the exact mean over records is "
            f"{value:.6g}, mid - mean = {mid - value:+.3g}; the interval and tests resample "
            "the mean"
        )
        return float(mid), note


def _rouge(name: str, rouge_type: RougeType, what: str) -> None:
    register_metric(
        name,
        definition=f"rouge-score's {what} F on the reference's call texts (fns2str), rouge-score's "
        "tokeniser (ASCII letters and digits only), as Hugging Face evaluate's rouge; mean over "
        "records, or with aggregate: bootstrap the BootstrapAggregator's seeded mid.",
        rouge_type=rouge_type,
    )(HfRouge)


_rouge("hf_rouge-1", "rouge1", "ROUGE-1")
_rouge("hf_rouge-2", "rouge2", "ROUGE-2")
_rouge("hf_rouge-l", "rougeL", "ROUGE-L (LCS)")


@register_metric("hf_bleu-4")
@dataclass(eq=False)
class HfBleu(_HfCallMetric):
    """nmt's corpus BLEU (0-1) on the reference's call texts in ``tokenizer_13a`` tokens, as Hugging
    Face ``evaluate``'s bleu (``max_order`` 4, no smoothing), from summed statistics."""

    definition = (
        "corpus BLEU (0-1) of tensorflow/nmt's compute_bleu, as Hugging Face evaluate's bleu: "
        "tokenizer_13a, n-gram precisions 1..4 from summed counts, no smoothing (any zero "
        "precision gives 0), brevity penalty exp(1 - reference/translation length)."
    )

    max_order: Annotated[int, Range(1, 100)] = 4
    smooth: bool = False
    zero_division: ZeroDivision = None

    def __post_init__(self) -> None:
        super().__post_init__()
        Normalizer.from_spec(self.normalize)

    def statistic(self) -> Statistic:
        return CallBleu13aStatistic(self.gold, self.pred, self.normalize, self.max_order)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        value = nmt_bleu(s[..., :-1], self.smooth)
        return np.asarray(
            np.where(np.isnan(value), fill_value(self.zero_division), value), dtype=np.float64
        )

    def reported_value(self, block: StatBlock, value: float) -> tuple[float, str | None]:
        """The value itself; when it is 0 because, unsmoothed, some n-gram order has no match
        over the block's records, a note naming those orders."""
        if value != 0 or self.smooth or block.rows is None or block.n == 0:
            return value, None
        pred_len, gold_len, matches, possible = bleu_stats_parts(block.total()[:-1])
        if pred_len == 0 and gold_len == 0:  # no token at all: the zero-division policy's note
            return value, None
        unmatched = [n for n in range(1, self.max_order + 1) if matches[n - 1] == 0]
        if not unmatched:
            return value, None
        absent = [n for n in unmatched if possible[n - 1] == 0]
        note = f"0: no {_orders(unmatched)} of the predictions matches a reference"
        if absent:
            note += f" (the predictions have no {_orders(absent)})"
        note += (
            "; the reference's BLEU (nmt's, as Hugging Face evaluate's bleu) is unsmoothed, so an "
            "n-gram order without a match makes it 0"
        )
        return value, note

    def undefined_reason(self, summed: np.ndarray) -> str:
        if float(np.asarray(summed)[..., -1]) == 0:
            return "no records"
        return (
            "no prediction and no gold has a token (every record calls nothing on both sides): "
            "BLEU's length ratio is 0/0 (evaluate's bleu raises ZeroDivisionError)"
        )

    def filled_by_policy(self, summed: np.ndarray) -> bool:
        s = np.asarray(summed, dtype=np.float64)
        return bool(s[-1] == 0 or (s[0] == 0 and s[1] == 0))


def _orders(orders: list[int]) -> str:
    """``[3, 4]`` as ``"3-gram or 4-gram"``."""
    names = [f"{n}-gram" for n in orders]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
