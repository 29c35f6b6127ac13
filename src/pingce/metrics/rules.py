"""Retrieval metrics of rule ids (the contract-review protocol, §1.4 ``rule_recall``): did the
retriever find the rules that apply?

Per record, ``gold_rules`` (the rules that apply) and ``retrieved_rules`` (what the retriever
returned, best first) are lists of ids (strings or integers; duplicates count once, the first
position kept). Per record ``[hits, |gold|, |retrieved|, recall, has_gold, hit@k, precision,
has_retrieved]`` where ``hits = |retrieved ∩ gold|``.

* ``rule_recall`` (micro) = Σ hits / Σ |gold|; ``rule_recall_macro`` = mean over records with
  gold rules of hits / |gold|;
* ``rule_precision`` (micro) = Σ hits / Σ |retrieved|; ``rule_precision_macro`` = mean over
  records that retrieved something of hits / |retrieved|;
* ``rule_hit_at_k`` = share of records with gold rules where a gold rule is among the first
  ``k`` retrieved.

A record without ``gold_rules`` (absent or null) is left out of every rule metric; one with an
empty list has nothing to recall (left out of recall and hit@k, in precision). Undefined values
are null with a reason, never 0.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np

from .._constraints import Range
from ..records import FieldSpec, Table
from ._policy import ZeroDivision, safe_divide
from .protocol import Context, Metric, StatBlock, Statistic
from .registry import register_metric

__all__ = ["RuleMetric", "RuleStatistic", "parse_rule_ids"]

WIDTH = 8
HITS, GOLD, RETRIEVED, RECALL, HAS_GOLD, HIT_AT_K, PRECISION, HAS_RETRIEVED = range(WIDTH)


def parse_rule_ids(value: Any) -> tuple[str, ...]:
    """A list of rule ids (strings or integers; JSON text of one too), as strings, duplicates
    dropped (first position kept). Else ValueError."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a list of rule ids (or JSON text of one)") from None
    if not isinstance(value, list):
        raise ValueError("expected a list of rule ids")
    for item in value:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise ValueError(f"a rule id must be text or an integer, got {item!r}")
    return tuple(dict.fromkeys(str(item) for item in value))


class RuleStatistic(Statistic):
    """Per record the rule counts (see the module docstring); reasons ``rules``: the gold rules
    missed and the retrieved rules that do not apply."""

    def __init__(self, gold: str, retrieved: str, k: int):
        self.gold, self.retrieved, self.k = gold, retrieved, k

    @property
    def key(self) -> Hashable:
        return ("rules", self.gold, self.retrieved, self.k)

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(
                self.gold, "json", required=False, parser=parse_rule_ids, what="a list of rule ids"
            ),
            FieldSpec(
                self.retrieved,
                "json",
                required=False,
                parser=parse_rule_ids,
                what="a list of rule ids",
            ),
        ]

    def column_names(self, width: int) -> list[str]:
        return ["hits", "gold", "retrieved", "recall", "has_gold", "hit@k", "precision",
                "has_retrieved"]  # fmt: skip

    def compute(self, table: Table, context: Context) -> StatBlock:
        rows = np.zeros((table.n, WIDTH))
        reasons = np.empty(table.n, dtype=object)
        gold_column, retrieved_column = table.column(self.gold), table.column(self.retrieved)
        for i in range(table.n):
            gold = gold_column[i]
            if gold is None:
                continue
            retrieved = retrieved_column[i] or ()
            truth = set(gold)
            hits = sum(1 for r in retrieved if r in truth)
            row = rows[i]
            row[HITS], row[GOLD], row[RETRIEVED] = hits, len(gold), len(retrieved)
            if gold:
                row[HAS_GOLD] = 1.0
                row[RECALL] = hits / len(gold)
                row[HIT_AT_K] = float(any(r in truth for r in retrieved[: self.k]))
            if retrieved:
                row[HAS_RETRIEVED] = 1.0
                row[PRECISION] = hits / len(retrieved)
            found = set(retrieved)
            missed = [g for g in gold if g not in found]
            extra = [r for r in retrieved if r not in truth]
            parts = []
            if missed:
                parts.append("missed " + ", ".join(missed))
            if extra:
                parts.append("retrieved but not gold " + ", ".join(extra))
            if gold and not row[HIT_AT_K]:
                parts.append(f"no gold rule in the first {self.k}")
            reasons[i] = "; ".join(parts) or None
        return StatBlock(width=WIDTH, rows=rows, reasons={"rules": reasons})


Kind = Literal["recall", "recall_macro", "precision", "precision_macro", "hit_at_k"]

_PARTS = {
    "recall": (HITS, GOLD),
    "recall_macro": (RECALL, HAS_GOLD),
    "precision": (HITS, RETRIEVED),
    "precision_macro": (PRECISION, HAS_RETRIEVED),
    "hit_at_k": (HIT_AT_K, HAS_GOLD),
}
_UNDEFINED = {
    "recall": "no gold rules: recall is 0/0",
    "recall_macro": "no record has gold rules",
    "precision": "no rules retrieved: precision is 0/0",
    "precision_macro": "no record retrieved any rule",
    "hit_at_k": "no record has gold rules",
}


@dataclass(eq=False)
class RuleMetric(Metric):
    """Recall, precision or hit@k of retrieved rule ids (see the module docstring)."""

    reason = "rules"

    gold_rules: str = "gold_rules"
    retrieved_rules: str = "retrieved_rules"
    k: Annotated[int, Range(1, 1_000_000)] = 5
    zero_division: ZeroDivision = None
    kind: Kind = "recall"

    def statistic(self) -> Statistic:
        return RuleStatistic(self.gold_rules, self.retrieved_rules, self.k)

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        numerator, denominator = _PARTS[self.kind]
        return safe_divide(s[..., numerator], s[..., denominator], self.zero_division)

    def count(self, summed: np.ndarray) -> np.ndarray:
        column = {"recall": HAS_GOLD, "recall_macro": HAS_GOLD, "hit_at_k": HAS_GOLD}.get(
            self.kind, HAS_RETRIEVED
        )
        counted: np.ndarray = np.asarray(summed, dtype=np.float64)[..., column]
        return counted

    def undefined_reason(self, summed: np.ndarray) -> str:
        return _UNDEFINED[self.kind]


_DEFINITIONS = {
    "recall": ("rule_recall", "Σ|retrieved ∩ gold| / Σ|gold| over records with gold rules."),
    "recall_macro": (
        "rule_recall_macro",
        "mean over records with gold rules of |retrieved ∩ gold| / |gold|.",
    ),
    "precision": ("rule_precision", "Σ|retrieved ∩ gold| / Σ|retrieved|."),
    "precision_macro": (
        "rule_precision_macro",
        "mean over records that retrieved rules of |retrieved ∩ gold| / |retrieved|.",
    ),
    "hit_at_k": (
        "rule_hit_at_k",
        "share of records with gold rules that have one among the first k retrieved (k = 5).",
    ),
}
for _kind, (_name, _text) in _DEFINITIONS.items():
    register_metric(_name, definition=_text, kind=_kind)(RuleMetric)
