"""Translation edit rate for any suite: ``text_ter``, sacrebleu's TER from summed statistics.

The metric reads a prediction text field (``pred_text``) and a reference field (``gold_text``)
holding one reference text or a list of them (any number per record, at least one). Per record
the statistic is sacrebleu's ``[edits, average reference length]`` (:mod:`pingce.text.ter`) and a
1; the corpus value is ``100 * sum(edits) / sum(average reference lengths)`` (100 when the summed
length is 0 and there are edits, 0 when there are none), a record's value the same of its own row,
so bootstrap intervals, slices and comparisons come from summed rows as for every metric. Lower
is better: the metric says so (``higher_is_better = False``) for ``compare`` and the gates.
Records are independent: they are scored through the context's per-record map
(:attr:`pingce.metrics.protocol.Context.map_records`; locally, a large run's second half may go to
a second process), with the same numbers.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from .._collector import collector_paused
from ..records import FieldSpec, Table
from ..text.ter import ter, ter_stats_batch
from ._policy import ZeroDivision
from .overlap import REFERENCES, CorpusMetric, text_references
from .protocol import Context, StatBlock, Statistic
from .registry import register_metric

__all__ = ["Ter", "TerStatistic"]


class TerStatistic(Statistic):
    """Per record sacrebleu's TER statistics ``[edits, average reference length]`` and a 1."""

    def __init__(
        self,
        pred: str,
        gold: str,
        normalized: bool,
        no_punct: bool,
        asian_support: bool,
        case_sensitive: bool,
    ) -> None:
        self.pred = pred
        self.gold = gold
        self.options = {
            "normalized": normalized,
            "no_punct": no_punct,
            "asian_support": asian_support,
            "case_sensitive": case_sensitive,
        }

    @property
    def key(self) -> Hashable:
        return ("ter", self.pred, self.gold, *self.options.values())

    def fields(self) -> list[FieldSpec]:
        return [
            FieldSpec(self.pred, "string"),
            FieldSpec(
                self.gold,
                "json",
                parser=text_references,
                what=REFERENCES,
            ),
        ]

    def column_names(self, width: int) -> list[str]:
        return ["edits", "ref_len", "records"]

    def compute(self, table: Table, context: Context) -> StatBlock:
        pairs = list(zip(table.column(self.pred), table.column(self.gold), strict=True))
        stats = np.concatenate(context.map_records(self.rows, pairs))
        rows = np.concatenate([stats, np.ones((table.n, 1))], axis=1)
        return StatBlock(width=3, rows=rows)

    def rows(self, pairs: Sequence[tuple[str, str | list[str]]]) -> np.ndarray:
        """The statistics of (prediction, references) pairs (records are independent: the
        context's per-record map may split them)."""
        with collector_paused():
            return ter_stats_batch([p for p, _ in pairs], [g for _, g in pairs], **self.options)


@register_metric("text_ter")
@dataclass(eq=False)
class Ter(CorpusMetric):
    """sacrebleu's TER (0-100 and above, lower is better) from summed statistics."""

    definition = (
        "sacrebleu TER (lower is better): 100 x (shifts + word insertions, deletions and "
        "substitutions to the closest reference) / average reference length, summed over records."
    )
    higher_is_better = False

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False
    zero_division: ZeroDivision = None

    def statistic(self) -> Statistic:
        return TerStatistic(
            self.pred,
            self.gold,
            self.normalized,
            self.no_punct,
            self.asian_support,
            self.case_sensitive,
        )

    def finalize(self, summed: np.ndarray) -> np.ndarray:
        s = np.asarray(summed, dtype=np.float64)
        return self._finish(s, ter(s[..., :2]), self.zero_division)
