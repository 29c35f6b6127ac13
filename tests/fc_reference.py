"""The reference's function-call scorer, as the test oracle.

This is ``fc_score.py``, the function-call protocol's reference implementation, on its libraries:
``jieba.cut`` words, ``rouge.Rouge().get_scores`` (pltrdy's ``rouge`` 1.0.1) F-measures with any
exception it raises scored 0, and nltk's ``sentence_bleu`` with ``SmoothingFunction().method3``.
Serialisation (``fn2str``/``fns2str``), pairing (``score_fn``: both lists sorted by ``fn2str``)
and argument comparison (whole ``arguments`` dicts with Python ``==``) are the reference's, line for
line. Nothing here is taken from pingce.

Differences from the reference, none of which changes a number:

* per-record values are returned unrounded, beside the reference's summary (means rounded to 5
  decimals, summed in record order with ``sum`` as the reference does);
* the reference prints ``[ROUGE ERROR] ...``/``[BLEU ERROR] ...`` and scores 0; here the exception
  is
  recorded per record (``rouge_error``/``bleu_error``) and nothing is printed;
* jieba's logger and nltk's warnings are silenced.

``pred_fn`` must already be a list of call dictionaries (the reference cannot read raw model text or
arguments given as JSON text); :func:`parse_calls` turns those forms into the parsed form with
the standard library's ``json``.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jieba
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge.rouge import Rouge

__all__ = [
    "METRICS",
    "RecordScore",
    "Reference",
    "common_score_arguments",
    "compute_rouge_bleu",
    "fc_reference",
    "fc_score",
    "fn2str",
    "fns2str",
    "parse_calls",
    "score_fn",
    "score_record",
]

# The reference's summary keys, in the order fc_score prints them.
METRICS = ("fn_acc_name", "fn_acc_all", "rouge-1", "rouge-2", "rouge-l", "bleu-4")

jieba.setLogLevel(logging.WARNING)
logging.getLogger("jieba").setLevel(logging.WARNING)


# --- the reference's functions, verbatim in behaviour -------------------------------------------


def common_score_arguments(fn_gold: Mapping[str, Any], fn_pred: Mapping[str, Any]) -> float:
    """比较函数参数是否完全一致,完全一致返回1,否则0"""
    return 1.0 if fn_gold.get("arguments", {}) == fn_pred.get("arguments", {}) else 0.0


def fn2str(fn: Mapping[str, Any]) -> str:
    """将函数调用转为字符串"""
    return fn["name"] + json.dumps(fn.get("arguments", {}), sort_keys=True, ensure_ascii=False)


def fns2str(fn_list: Iterable[Mapping[str, Any]]) -> str:
    """将函数调用列表序列化为字符串"""
    return ";".join(sorted(fn2str(f) for f in fn_list))


def score_fn(
    fn_gold: Sequence[Mapping[str, Any]],
    fn_pred: Sequence[Mapping[str, Any]],
    score_fn_args_func: Callable[
        [Mapping[str, Any], Mapping[str, Any]], float
    ] = common_score_arguments,
) -> tuple[float, float]:
    """计算函数名准确率(fn_acc_name)和参数准确率(fn_acc_all)"""
    if not fn_gold and not fn_pred:
        return 1.0, 1.0
    if len(fn_gold) != len(fn_pred):
        return 0.0, 0.0
    fn_gold_sorted = sorted(fn_gold, key=fn2str)
    fn_pred_sorted = sorted(fn_pred, key=fn2str)
    fn_acc_name = (
        1.0 if [g["name"] for g in fn_gold_sorted] == [p["name"] for p in fn_pred_sorted] else 0.0
    )
    fn_acc_all = 0.0
    if fn_acc_name:
        arg_scores = [
            score_fn_args_func(g, p) for g, p in zip(fn_gold_sorted, fn_pred_sorted, strict=True)
        ]
        fn_acc_all = sum(arg_scores) / len(arg_scores)
    return fn_acc_name, fn_acc_all


@dataclass
class _NlgScores:
    values: dict[str, float]
    rouge_error: str | None = None
    bleu_error: str | None = None


def compute_rouge_bleu(gold_text: str, pred_text: str) -> _NlgScores:
    """计算 ROUGE 和 BLEU-4 指标 (the reference's, recording instead of printing its exceptions)."""
    hypothesis = list(jieba.cut(pred_text))
    reference = list(jieba.cut(gold_text))
    out = _NlgScores(values={})
    try:
        rouge = Rouge()
        rouge_scores = rouge.get_scores(" ".join(hypothesis), " ".join(reference))[0]
        out.values["rouge-1"] = rouge_scores["rouge-1"]["f"]
        out.values["rouge-2"] = rouge_scores["rouge-2"]["f"]
        out.values["rouge-l"] = rouge_scores["rouge-l"]["f"]
    except Exception as exc:  # the reference: print(f"[ROUGE ERROR] {e}") and score 0
        out.rouge_error = f"{type(exc).__name__}: {exc}"
        out.values.update({"rouge-1": 0.0, "rouge-2": 0.0, "rouge-l": 0.0})
    try:
        smooth_func = SmoothingFunction().method3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bleu = sentence_bleu([reference], hypothesis, smoothing_function=smooth_func)
        out.values["bleu-4"] = bleu
    except Exception as exc:  # the reference: print(f"[BLEU ERROR] {e}") and score 0
        out.bleu_error = f"{type(exc).__name__}: {exc}"
        out.values["bleu-4"] = 0.0
    return out


# --- per-record scores and the reference's summary -----------------------------------------------


@dataclass
class RecordScore:
    """One record as the reference scores it, unrounded, with the exceptions it swallowed."""

    query: str
    values: dict[str, float]
    gold_text: str
    pred_text: str
    rouge_error: str | None = None
    bleu_error: str | None = None
    nlg_error: str | None = None

    @property
    def rouge_raised(self) -> bool:
        return self.rouge_error is not None or self.nlg_error is not None

    @property
    def bleu_raised(self) -> bool:
        return self.bleu_error is not None or self.nlg_error is not None


@dataclass
class Reference:
    """All records' scores, their unrounded means and the reference's printed summary."""

    records: list[RecordScore]
    means: dict[str, float]
    summary: dict[str, int | float] = field(default_factory=dict)

    @property
    def rouge_raised(self) -> int:
        return sum(r.rouge_raised for r in self.records)

    @property
    def bleu_raised(self) -> int:
        return sum(r.bleu_raised for r in self.records)


def score_record(item: Mapping[str, Any]) -> RecordScore:
    """One record, exactly as the loop body of the reference's ``fc_score``."""
    fn_gold = item.get("gold_fn", [])
    fn_pred = item.get("pred_fn", [])
    fn_acc_name, fn_acc_all = score_fn(fn_gold, fn_pred)
    values: dict[str, float] = {"fn_acc_name": fn_acc_name, "fn_acc_all": fn_acc_all}
    score = RecordScore(query=item.get("query", ""), values=values, gold_text="", pred_text="")
    try:
        score.gold_text = fns2str(fn_gold)
        score.pred_text = fns2str(fn_pred)
        nlg = compute_rouge_bleu(score.gold_text, score.pred_text)
        values.update(nlg.values)
        score.rouge_error = nlg.rouge_error
        score.bleu_error = nlg.bleu_error
    except Exception as exc:  # the reference: print(f"[NLG SCORE ERROR] {e}") and score 0
        score.nlg_error = f"{type(exc).__name__}: {exc}"
        values.update({"rouge-1": 0.0, "rouge-2": 0.0, "rouge-l": 0.0, "bleu-4": 0.0})
    return score


def fc_reference(score_data: Sequence[Mapping[str, Any]]) -> Reference:
    """Per-record values, unrounded means and the reference's rounded summary of ``score_data``."""
    if not score_data:
        raise ValueError("score_data 不能为空")
    records = [score_record(item) for item in score_data]
    n = len(records)
    means: dict[str, float] = {}
    summary: dict[str, int | float] = {"eval_size": n}
    for key in METRICS:
        # The reference: round(sum(float(r[key]) for r in results) / len(results), 5)
        mean = sum(float(r.values[key]) for r in records) / n
        means[key] = mean
        summary[key] = round(mean, 5)
    return Reference(records=records, means=means, summary=summary)


def fc_score(score_data: Sequence[Mapping[str, Any]]) -> dict[str, int | float]:
    """The reference's ``fc_score`` result (without its print)."""
    return fc_reference(score_data).summary


# --- input forms the reference cannot read, turned into its parsed form --------------------------


def _parse_call(call: Mapping[str, Any]) -> dict[str, Any]:
    if "function" in call and isinstance(call["function"], Mapping):
        call = call["function"]  # OpenAI tool_calls: {"type": "function", "function": {...}}
    out = dict(call)
    if isinstance(out.get("arguments"), str):
        out["arguments"] = json.loads(out["arguments"])
    return {k: out[k] for k in ("name", "arguments") if k in out}


def parse_calls(value: Any) -> list[dict[str, Any]]:
    """The parsed form of a call list given as JSON text (alone or in a fenced block), with
    JSON-text arguments, or in OpenAI's ``tool_calls`` shape (standard-library ``json``; raises on
    text that is not JSON)."""
    if isinstance(value, str):
        fenced = re.search(r"```(?:json)?\n(.*)\n```", value, re.S)
        value = json.loads(fenced.group(1) if fenced else value)
    if isinstance(value, Mapping):
        value = [value]
    return [_parse_call(call) for call in value]
