"""Function-call metrics (the function-call protocol), equal to its reference's by default.

Records carry the gold calls and the model's answer. Gold is a required JSON list of calls
``{"name", "arguments"}`` (``arguments`` an object or JSON text; an item may also be an OpenAI
tool call ``{"type": "function", "function": {...}}``, a Responses ``function_call`` item or an
Anthropic ``tool_use`` block, whose arguments are its ``input``); ``[]`` means "no call", and a
missing, null or malformed gold is an input error. The answer (:func:`parse_calls`) may be any
of: such a list or one call; an OpenAI chat message (``tool_calls``; when null, its ``content``
text), a whole ``chat.completion`` (the first choice's message); an OpenAI Responses object or
its ``output`` list (``function_call`` items; ``message``/``reasoning`` items call nothing); an
Anthropic message or its ``content`` (``tool_use`` blocks; ``text``/``thinking`` blocks call
nothing); or model text. An answer that calls nothing is an empty list, never a failure.

Model text: whatever precedes a ``</think>`` is reasoning and is dropped. The text *tries to
call* when it has a ``<tool_call>`` tag (Qwen/Hermes; every block is read, the last may be left
open), a fenced block labelled ``json`` (or unlabelled and starting with ``{`` or ``[``), starts
with ``{`` or with ``[`` followed by ``{`` or ``]``, or holds a call key (``"name":``,
``"arguments":``, ``"function":``, ``"function_call":``, ``"tool_calls":``, double or single
quotes) in object-key position (after ``{`` or ``,``). Such text must parse: the whole text as
JSON, else the tag blocks, else the first JSON fence, else the JSON values that hold each call
key; if one does not, the prediction is a wrong answer counted in ``failures.parse`` with the
reason. Any other text is prose, which calls nothing: braces in prose (``{1, 2}``, ``{name}``,
``{"city": "北京"}``) and a bare JSON number or string do not make a call.

Per record, as the reference's ``score_fn`` and ``compute_rouge_bleu``:

* ``fn_acc_name``: both lists empty -> 1; different lengths -> 0; else calls of both sides sorted
  by their serialisation ``name + json.dumps(arguments, sort_keys=True, ensure_ascii=False)`` and
  1 if the name lists are equal.
* ``fn_acc_all``: 1 for two empty lists, 0 for different lengths or names; else the share of
  sorted pairs whose argument objects are equal (as Python compares them).
* ``rouge-1``, ``rouge-2``, ``rouge-l``, ``bleu-4``: on the serialisations joined by ``;`` (sorted),
  jieba words, the ``rouge`` package's F-measures (:mod:`pingce.text.rouge_reference`) and nltk's
  sentence BLEU with smoothing 3 (:func:`pingce.text.bleu.nltk_bleu` of clipped n-gram matches,
  :func:`pingce.text.pairs.clipped_matches`); where the ``rouge`` package raises (an empty text)
  the reference scores 0, and so does pingce, counting it in ``failures.empty_text``.

Speed (the same numbers): a distinct (prediction, gold) text pair is scored once, a prediction
whose text equals the gold text from its length alone, the others in batch, each counted only
around where its texts differ; records are scored through the context's per-record map
(:attr:`pingce.metrics.protocol.Context.map_records`: the local executor may give a large run's
second half to a second process).

Corpus values are means over records. Beyond the reference: ``fn_acc_args`` (share of gold
arguments that the paired predicted call has equal), ``assignment: optimal`` (pair calls by an
optimal assignment, scipy's ``linear_sum_assignment``, instead of the reference's sort order,
which mis-pairs parallel calls), and value normalisers.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

import numpy as np

from .._collector import collector_paused
from .._constraints import check_value
from ..records import FieldSpec, InsideError, ParseFailure, Table
from ..remote.toolcalls import Call, parse_calls, read_calls
from ..text.bleu import nltk_bleu, nltk_stats_from_matches
from ..text.pairs import clipped_matches
from ..text.rouge_reference import package_f, rouge_package_batch, rouge_sentences
from ..text.tokenize import jieba_words, load_jieba
from ._assignment import max_weight_assignment
from ._policy import ZeroDivision, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic, reason_column
from .registry import register_metric

__all__ = [
    "CallFieldsStatistic",
    "CallMatchStatistic",
    "CallTextStatistic",
    "NormalizeOptions",
    "Normalizer",
    "no_whole_message",
    "serialize_calls",
]

Assignment = Literal["sorted", "optimal"]


def serialize_calls(calls: Sequence[Call]) -> str:
    """The reference's ``fns2str``: serialised calls, sorted, joined by ``;``."""
    if len(calls) == 1:
        return calls[0].text
    return ";".join(sorted(call.text for call in calls))


class NormalizeOptions(TypedDict, total=False):
    """A metric's ``normalize:`` options (each checked by :func:`pingce._constraints.check_value`
    as the metric's arguments are: ``casefold: "false"`` is an error, not true)."""

    synonyms: Mapping[str, str] | None
    numeric_strings: bool
    strip: bool
    casefold: bool


class Normalizer:
    """Argument-value normalisation applied to gold and predicted calls before scoring.

    ``synonyms`` maps values to a canonical value (``{"开启": "打开"}``); ``numeric_strings``
    reads strings that are numbers as numbers (``"22"`` equals ``22``); ``strip`` trims strings;
    ``casefold`` ignores letter case.
    """

    def __init__(
        self,
        synonyms: Mapping[str, str] | None = None,
        numeric_strings: bool = False,
        strip: bool = False,
        casefold: bool = False,
    ):
        self.synonyms = dict(synonyms or {})
        self.numeric_strings = numeric_strings
        self.strip = strip
        self.casefold = casefold
        self.active = bool(self.synonyms or numeric_strings or strip or casefold)

    def key(self) -> Hashable:
        return (
            tuple(sorted(self.synonyms.items())),
            self.numeric_strings,
            self.strip,
            self.casefold,
        )

    def value(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if not isinstance(value, str):
            return value
        if self.strip:
            value = value.strip()
        if self.casefold:
            value = value.casefold()
        value = self.synonyms.get(value, value)
        if self.numeric_strings:
            try:
                number = float(value)
            except ValueError:
                return value
            if math.isfinite(number):
                return int(number) if number.is_integer() else number
        return value

    def calls(self, calls: Sequence[Call]) -> tuple[Call, ...]:
        if not self.active:
            return tuple(calls)
        return tuple(
            Call(c.name, None if c.arguments is None else self.value(dict(c.arguments)))
            for c in calls
        )

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any] | None) -> Normalizer:
        """The normaliser of a metric's ``normalize`` options (an ``ArgumentError``, a
        ``ValueError``, names an unknown option or a value of the wrong type)."""
        check_value("normalize", spec, NormalizeOptions | None)
        return cls(**dict(spec or {}))


def no_whole_message(value: Any) -> None:
    """Raise :class:`InsideError` when gold calls are a whole assistant message (an object whose
    ``tool_calls`` are the calls): the message names the ``--map`` that reads them."""
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        raise InsideError(
            "gold calls must be a list of calls, got a whole assistant message", "tool_calls"
        )


def _gold_parser(value: Any) -> tuple[Call, ...]:
    """Gold calls: a JSON list of call items only (no text, no wrapping message or response,
    no text blocks, no ``"arguments": null``); an empty list is a valid gold (no call)."""
    no_whole_message(value)
    if not isinstance(value, list | tuple):
        raise ValueError(f"gold calls must be a list of calls, got {type(value).__name__}")
    return read_calls(value, allow_null=False, answer=False)


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _explain_pair(gold: Call, pred: Call) -> list[str]:
    if gold.name != pred.name:
        return [f"call name: gold {gold.name}, predicted {pred.name}"]
    if pred.arguments is None or gold.arguments is None:
        return [f"{gold.name} arguments: gold {_show(gold.arguments)}, predicted null"]
    out = []
    for key, value in gold.arguments.items():
        if key not in pred.arguments:
            out.append(f"{gold.name} argument {key}: gold {_show(value)}, predicted none")
        elif pred.arguments[key] != value:
            out.append(
                f"{gold.name} argument {key}: gold {_show(value)}, "
                f"predicted {_show(pred.arguments[key])}"
            )
    for key in pred.arguments:
        if key not in gold.arguments:
            out.append(
                f"{gold.name} argument {key}: not in gold, predicted {_show(pred.arguments[key])}"
            )
    return out


def _pairs(
    gold: Sequence[Call], pred: Sequence[Call], assignment: Assignment
) -> list[tuple[int, int]]:
    """Pairs (gold index, predicted index) for lists of equal length."""
    if len(gold) == 1:
        return [(0, 0)]
    if assignment == "sorted":
        g = sorted(range(len(gold)), key=lambda i: gold[i].text)
        p = sorted(range(len(pred)), key=lambda i: pred[i].text)
        return list(zip(g, p, strict=True))
    n = len(gold)
    weight = np.zeros((n, len(pred)))
    for i, gc in enumerate(gold):
        for j, pc in enumerate(pred):
            if gc.name == pc.name:
                weight[i, j] = (n + 1) + (1.0 if gc.arguments == pc.arguments else 0.0)
    rows, cols = max_weight_assignment(weight)
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def _arg_units(call: Call) -> int:
    return max(1, len(call.arguments or {}))


def _arg_matches(gold: Call, pred: Call) -> int:
    if gold.name != pred.name:
        return 0
    given = pred.arguments
    if not gold.arguments:
        return 1 if given is not None else 0
    if given is None:
        return 0
    if given == gold.arguments:  # every argument (the common case, compared in C)
        return len(given)
    return sum(1 for k, v in gold.arguments.items() if k in given and given[k] == v)


_BRUTE_FORCE = 6
"""Up to this many calls a side, the best pairing is found by trying every one (6! = 720)."""


def _max_matching(weight: list[list[int]]) -> int:
    """Largest total weight of a matching (each row and column used at most once) of a
    non-negative integer matrix: scipy's ``linear_sum_assignment`` value, by trying every
    injective map of the shorter side when both sides are small (no scipy import, no arrays)."""
    rows, cols = len(weight), len(weight[0])
    if max(rows, cols) > _BRUTE_FORCE:
        matrix = np.array(weight, dtype=np.float64)
        chosen_rows, chosen_cols = max_weight_assignment(matrix)
        return int(matrix[chosen_rows, chosen_cols].sum())
    if rows <= cols:
        return max(
            sum(row[j] for row, j in zip(weight, chosen, strict=True))
            for chosen in itertools.permutations(range(cols), rows)
        )
    return max(
        sum(weight[i][j] for j, i in enumerate(chosen))
        for chosen in itertools.permutations(range(rows), cols)
    )


def _argument_share(gold: Sequence[Call], pred: Sequence[Call]) -> float:
    """``fn_acc_args``: gold arguments matched by the optimally paired predicted calls, over the
    gold argument units; empty gold scores 1 when the prediction is empty too."""
    if not gold:
        return 1.0 if not pred else 0.0
    units = sum(_arg_units(c) for c in gold)
    if not pred:
        return 0.0
    if len(gold) == 1 and len(pred) == 1:  # the common case needs no assignment
        return _arg_matches(gold[0], pred[0]) / units
    if len(gold) == len(pred) and sum(map(_arg_matches, gold, pred)) == units:
        return 1.0  # the calls in their own order match every gold argument: nothing is better
    return _max_matching([[_arg_matches(g, p) for p in pred] for g in gold]) / units


def _same_call(gold: Call, pred: Call) -> bool:
    return gold.name == pred.name and gold.arguments == pred.arguments


def score_record(
    gold: Sequence[Call], pred: Sequence[Call], assignment: Assignment
) -> tuple[float, float, float, list[str]]:
    """``(fn_acc_name, fn_acc_all, fn_acc_args, reasons)`` of one record."""
    if len(gold) == len(pred) == 1 and _same_call(gold[0], pred[0]):  # the common case
        return 1.0, 1.0, 1.0, []
    args = _argument_share(gold, pred)
    if len(gold) != len(pred):
        return 0.0, 0.0, args, [f"{len(gold)} gold call(s), {len(pred)} predicted"]
    if not gold:
        return 1.0, 1.0, args, []
    pairs = _pairs(gold, pred, assignment)
    wrong_names = [
        f"call name: gold {gold[i].name}, predicted {pred[j].name}"
        for i, j in pairs
        if gold[i].name != pred[j].name
    ]
    if wrong_names:
        return 0.0, 0.0, args, wrong_names
    reasons: list[str] = []
    equal = 0
    for i, j in pairs:
        if gold[i].arguments == pred[j].arguments:
            equal += 1
        else:
            reasons.extend(_explain_pair(gold[i], pred[j]))
    return 1.0, equal / len(pairs), args, reasons


CallPair = tuple[tuple[Call, ...], tuple[Call, ...] | ParseFailure]
"""A record's gold calls and its predicted calls (or why they did not parse)."""


class CallFieldsStatistic(Statistic):
    """Shared set-up of the call statistics (this module's and :mod:`.calls_hf`'s): fields,
    parsing and normalisation."""

    def __init__(self, gold: str, pred: str, normalize: Mapping[str, Any] | None):
        self.gold = gold
        self.pred = pred
        self.normalizer = Normalizer.from_spec(normalize)

    def fields(self) -> list[FieldSpec]:
        return [
            # gold is required: a missing or null gold_fn is an input error naming the line (the
            # reference's item.get("gold_fn", []) would score it as "no call"); [] is a valid
            # gold
            FieldSpec(self.gold, "json", parser=_gold_parser, what="function calls"),
            FieldSpec(
                self.pred,
                "json",
                required=False,
                parser=parse_calls,
                lenient=True,
                what="function calls",
            ),
        ]

    def calls(self, table: Table) -> list[CallPair]:
        norm = self.normalizer
        golds = table.column(self.gold)
        preds = table.column(self.pred)
        if not norm.active:
            # a missing prediction is no calls, as the reference's item.get("pred_fn", [])
            return [(g, () if p is None else p) for g, p in zip(golds, preds, strict=True)]
        out: list[CallPair] = []
        for gold, pred in zip(golds, preds, strict=True):
            g = norm.calls(gold)
            p = pred if isinstance(pred, ParseFailure) else norm.calls(() if pred is None else pred)
            out.append((g, p))
        return out


class CallMatchStatistic(CallFieldsStatistic):
    """Per record ``[fn_acc_name, fn_acc_all, fn_acc_args, 1]``; reasons ``calls``: what
    differs (names, arguments, call counts) or why the prediction did not parse."""

    def __init__(
        self, gold: str, pred: str, normalize: Mapping[str, Any] | None, assignment: Assignment
    ):
        super().__init__(gold, pred, normalize)
        self.assignment = assignment

    @property
    def key(self) -> Hashable:
        return ("calls", self.gold, self.pred, self.normalizer.key(), self.assignment)

    def column_names(self, width: int) -> list[str]:
        return ["fn_acc_name", "fn_acc_all", "fn_acc_args", "records"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        parts = context.map_records(self.rows, self.calls(table))
        rows = np.concatenate([part[0] for part in parts])
        reasons = reason_column(itertools.chain.from_iterable(p[1] for p in parts), table.n)
        return StatBlock(width=4, rows=rows, reasons={"calls": reasons})

    def rows(self, records: Sequence[CallPair]) -> tuple[np.ndarray, list[str | None]]:
        """Rows ``[fn_acc_name, fn_acc_all, fn_acc_args, 1]`` and miss reasons of records."""
        values: list[tuple[float, float, float, float]] = []
        reasons: list[str | None] = []
        with collector_paused():  # no cycles are made; collections would walk every loaded record
            for gold, pred in records:
                if isinstance(pred, ParseFailure):
                    values.append((0.0, 0.0, 0.0, 1.0))
                    reasons.append(f"prediction could not be parsed: {pred.reason}")
                    continue
                name, whole, args, why = score_record(gold, pred, self.assignment)
                values.append((name, whole, args, 1.0))
                reasons.append("; ".join(why) if why else None)
        return np.array(values, dtype=np.float64).reshape(-1, 4), reasons


_ORDER = 4  # BLEU-4
_ITEM_WORDS = [",", " "]  # jieba's words of json's item separator ", "
_TEXT_WIDTH = 6  # rouge-1, rouge-2, rouge-l, bleu-4, 1, empty


class CallTextStatistic(CallFieldsStatistic):
    """Per record ``[rouge-1, rouge-2, rouge-l, bleu-4, 1, empty]`` on the reference's
    serialisation, jieba words; ``empty`` is 1 where the ``rouge`` package would raise (scored 0,
    as the reference).
    A prediction that does not parse scores 0 throughout."""

    @property
    def key(self) -> Hashable:
        return ("call-text", self.gold, self.pred, self.normalizer.key())

    def column_names(self, width: int) -> list[str]:
        return ["rouge-1", "rouge-2", "rouge-l", "bleu-4", "records", "empty"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        load_jieba()  # once, before a child process is forked (it inherits the dictionary)
        rows = np.concatenate(context.map_records(_text_rows, self.calls(table)))
        return StatBlock(width=_TEXT_WIDTH, rows=rows, counts={"empty_text": int(rows[:, 5].sum())})


def _text_rows(records: Sequence[CallPair]) -> np.ndarray:
    """Rows ``[rouge-1, rouge-2, rouge-l, bleu-4, 1, empty]`` of records."""
    texts = _TextPairs()
    slots: list[int] = []
    with collector_paused():  # no cycles are made; collections would walk every loaded record
        for gold, pred in records:
            slots.append(-1 if isinstance(pred, ParseFailure) else texts.add(gold, pred))
        scored = np.zeros((len(texts) + 1, _TEXT_WIDTH))  # the last row: a parse failure
        scored[:-1] = texts.scores()
    scored[:, 4] = 1.0
    rows: np.ndarray = scored[np.array(slots, dtype=np.int64)].reshape(-1, _TEXT_WIDTH)
    return rows


class _TextPairs:
    """The distinct (prediction, gold) text pairs of a run and the reference's scores of each
    (``compute_rouge_bleu(fns2str(gold), fns2str(pred))``), with what repeats done once.

    A record's text is its calls' serialisations, sorted, joined by ``";"``. jieba segments a
    text block by block: a run of letters, digits, Han characters and ``+#&._%-`` is cut with the
    dictionary, any other character is a word of its own (CR LF is one word). A separator that
    starts and ends with such other characters, and neither starts with LF nor ends with CR,
    cannot join anything on its left or right into one block or word, so
    ``jieba.cut(a + sep + b) == jieba.cut(a) + jieba.cut(sep) + jieba.cut(b)``. Both ``";"``
    and ``", "`` are such separators: a record's words are its serialisations' words joined by
    ``";"``, and a serialisation's words are those of its pieces between ``", "`` joined by
    ``[",", " "]``; each distinct serialisation and each distinct piece is segmented once.

    Pairs whose texts are equal are scored from their length; the others in batch: ROUGE-1/2
    and BLEU counts for all of them at once, the ROUGE-L union-LCS per pair.
    """

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.words: dict[str, list[str]] = {}
        self.pieces: dict[str, list[str]] = {}
        self.same: list[tuple[int, list[str]]] = []
        self.different: list[tuple[int, list[str], list[str]]] = []

    def __len__(self) -> int:
        return len(self.index)

    def add(self, gold: Sequence[Call], pred: Sequence[Call]) -> int:
        """The slot of the record's text pair (a new one when the pair was not seen)."""
        ref_parts = _sorted_texts(gold)
        hyp_parts = _sorted_texts(pred)
        key = (";".join(hyp_parts), ";".join(ref_parts))
        slot = self.index.get(key)
        if slot is None:
            slot = self.index[key] = len(self.index)
            hyp = self.text_words(hyp_parts)
            if key[0] == key[1]:
                self.same.append((slot, hyp))
            else:
                self.different.append((slot, hyp, self.text_words(ref_parts)))
        return slot

    def text_words(self, parts: Sequence[str]) -> list[str]:
        """jieba words of the calls' texts joined by ``";"`` (do not change the list)."""
        if len(parts) == 1:
            return self.call_words(parts[0])
        out: list[str] = []
        for k, text in enumerate(parts):
            if k:
                out.append(";")
            out.extend(self.call_words(text))
        return out

    def call_words(self, text: str) -> list[str]:
        """jieba words of one serialisation: those of its pieces between ``", "`` (json's item
        separator, so the pieces are mostly ``"key": value``, which repeat across records and
        are segmented once), joined by ``[",", " "]``."""
        words = self.words.get(text)
        if words is None:
            words = []
            for k, piece in enumerate(text.split(", ")):
                if k:
                    words += _ITEM_WORDS
                piece_words = self.pieces.get(piece)
                if piece_words is None:
                    piece_words = self.pieces[piece] = jieba_words(piece)
                words += piece_words
            self.words[text] = words
        return words

    def scores(self) -> np.ndarray:
        """Rows ``[rouge-1, rouge-2, rouge-l, bleu-4, 1, empty]`` of the pairs, by slot."""
        out = np.zeros((len(self.index), _TEXT_WIDTH))
        bleu_counts = np.zeros((len(self.index), 2 + _ORDER), dtype=np.int64)
        if self.same:
            rouge, counts = _same_scores([words for _, words in self.same])
            slots = np.array([slot for slot, _ in self.same], dtype=np.int64)
            out[slots, :3] = rouge[:, :3]
            out[slots, 5] = rouge[:, 3]
            bleu_counts[slots] = counts
        if self.different:
            slots = np.array([slot for slot, _, _ in self.different], dtype=np.int64)
            rouge, counts = _different_scores(
                [hyp for _, hyp, _ in self.different], [ref for _, _, ref in self.different]
            )
            out[slots, :3] = rouge[:, :3]
            out[slots, 5] = rouge[:, 3]
            bleu_counts[slots] = counts
        stats = nltk_stats_from_matches(bleu_counts[:, 0], bleu_counts[:, 1], bleu_counts[:, 2:])
        out[:, 3] = nltk_bleu(stats, smoothing=3)
        return out


def _sorted_texts(calls: Sequence[Call]) -> list[str]:
    if len(calls) == 1:
        return [calls[0].text]
    return sorted(call.text for call in calls)


_SAME = package_f(1, 1, 1)  # the package's F when every n-gram matches: 2 / (2 + 1e-8)


def _same_scores(texts: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """The reference's scores of predictions whose text equals the gold text: every n-gram and LCS
    word matches, so ROUGE is F(c, c, c) for c distinct n-grams (0 when there is none) and the
    package raises only on a text without words; every BLEU n-gram up to the length matches.
    Returns ROUGE rows ``[rouge-1, rouge-2, rouge-l, empty]`` and BLEU counts."""
    rouge = np.zeros((len(texts), 4))
    for row, words in enumerate(texts):
        sentences = rouge_sentences(" ".join(words))
        if not sentences:
            rouge[row, 3] = 1.0
            continue
        rouge[row, 0] = rouge[row, 2] = _SAME
        if len(sentences) > 1 or len(sentences[0]) > 1:  # two words or more: a bigram
            rouge[row, 1] = _SAME
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    counts = np.empty((len(texts), 2 + _ORDER), dtype=np.int64)
    counts[:, 0] = counts[:, 1] = lengths
    for n in range(1, _ORDER + 1):
        counts[:, 1 + n] = np.maximum(lengths - (n - 1), 0)
    return rouge, counts


def _different_scores(
    hyps: list[list[str]], refs: list[list[str]]
) -> tuple[np.ndarray, np.ndarray]:
    """ROUGE rows ``[rouge-1, rouge-2, rouge-l, empty]`` and BLEU counts ``[hyp_len, ref_len,
    matches_1..4]`` of pairs of different texts (jieba words)."""
    n = len(hyps)
    rouge = rouge_package_batch(
        [rouge_sentences(" ".join(hyp)) for hyp in hyps],
        [rouge_sentences(" ".join(ref)) for ref in refs],
    )
    counts = np.empty((n, 2 + _ORDER), dtype=np.int64)
    counts[:, 0] = np.fromiter(map(len, hyps), np.int64, n)
    counts[:, 1] = np.fromiter(map(len, refs), np.int64, n)
    counts[:, 2:] = clipped_matches(hyps, refs, _ORDER)
    return rouge, counts


@dataclass(eq=False)
class CallMean(Metric):
    """Mean over records of one column of a call statistic (``family`` match or text)."""

    gold: str = "gold_fn"
    pred: str = "pred_fn"
    normalize: NormalizeOptions | None = None
    assignment: Assignment = "sorted"
    zero_division: ZeroDivision = None
    column: int = 0
    family: Literal["match", "text"] = "match"

    def __post_init__(self) -> None:
        super().__post_init__()
        Normalizer.from_spec(self.normalize)
        self.count_column = 3 if self.family == "match" else 4
        self.reason = "calls" if self.family == "match" else None

    def statistic(self) -> Statistic:
        if self.family == "match":
            return CallMatchStatistic(self.gold, self.pred, self.normalize, self.assignment)
        return CallTextStatistic(self.gold, self.pred, self.normalize)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        summed = np.asarray(summed, dtype=np.float64)
        return safe_divide(
            summed[..., self.column], summed[..., self.count_column], self.zero_division
        )

    def count(self, summed: np.ndarray) -> np.ndarray:
        counted: np.ndarray = np.asarray(summed, dtype=np.float64)[..., self.count_column]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return "no records"


def _column_metric(name: str, family: str, column: int, definition: str) -> None:
    register_metric(name, definition=definition, column=column, family=family)(CallMean)


_column_metric(
    "fn_acc_name",
    "match",
    0,
    "share of records whose sorted function names equal the gold ones (empty/empty = 1, "
    "different call counts = 0), as the reference's score_fn.",
)
_column_metric(
    "fn_acc_all",
    "match",
    1,
    "per record: share of paired calls with equal arguments when all names match, else 0 "
    "(the reference's score_fn); mean over records.",
)
_column_metric(
    "fn_acc_args",
    "match",
    2,
    "per record: share of gold arguments (a call without arguments counts as one) that the "
    "optimally paired predicted call has equal; mean over records.",
)
_column_metric(
    "rouge-1",
    "text",
    0,
    "the rouge package's ROUGE-1 F (set unigrams, +1e-8) on the reference's call serialisation in "
    "jieba words; mean over records.",
)
_column_metric(
    "rouge-2",
    "text",
    1,
    "the rouge package's ROUGE-2 F (set bigrams, +1e-8) on the reference's call serialisation in "
    "jieba words; mean over records.",
)
_column_metric(
    "rouge-l",
    "text",
    2,
    "the rouge package's summary-level ROUGE-L F on the reference's call serialisation in jieba "
    "words; mean over records.",
)
_column_metric(
    "bleu-4",
    "text",
    3,
    "nltk sentence_bleu (4-gram, smoothing method 3) on the reference's call serialisation in "
    "jieba words; mean over records.",
)
