"""The similarity phase: collect every pair any statistic needs (over every table of the
invocation), drop duplicates, and ask one backend, with one cache, once.

A run, a comparison (both sides at once) and a calibration all go through :func:`score_pairs`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..metrics.protocol import Statistic
from ..progress import Advance, ProgressHook
from ..records import Table
from ..similarity import BackendStats, Pair, SimilarityBackend, SimilarityTable, make_backend
from ..similarity.names import BackendName

__all__ = ["BackendChoice", "Scored", "judge_columns", "score_pairs"]


@dataclass(frozen=True)
class BackendChoice:
    """Which backend to open: a name (``--similarity``; a run's options carry it parsed) or an
    instance the caller owns."""

    backend: str | BackendName | SimilarityBackend
    base_url: str | None = None
    cache: str | bool | None = None
    options: Mapping[str, Any] | None = None
    """The suite's backend options (judge template, concurrency, prices...)."""


@dataclass
class Scored:
    """The scores of one invocation's pairs, what the backend did, and its signature."""

    table: SimilarityTable
    stats: BackendStats
    signature: str
    answers: dict[Pair, dict[str, Any]] | None = None
    """With the LLM judge: what it answered for each pair it asked
    (:attr:`pingce.similarity.judge.JudgeBackend.answers`; a pair the cache answered is not
    there); None with any other backend."""

    def failed(self, pairs: Iterable[Pair]) -> int:
        """How many of these distinct pairs have no score (failed after retries)."""
        return sum(1 for a, b in dict.fromkeys(pairs) if self.table.failed(a, b))


def score_pairs(
    pairs: Iterable[Pair],
    choice: BackendChoice,
    progress: ProgressHook,
) -> Scored:
    """Score the distinct pairs with the chosen backend (opened and closed here unless the
    caller passed an instance)."""
    distinct = list(dict.fromkeys(pairs))
    given = choice.backend
    backend = (
        given
        if isinstance(given, SimilarityBackend)
        else make_backend(
            given,
            base_url=choice.base_url,
            cache=choice.cache,
            options=dict(choice.options or {}),
        )
    )
    try:
        label = backend.signature().split("|")[0]
        advance: Advance = progress(f"similarity {label}", float(len(distinct)))
        table, stats = backend.score(distinct, advance)
        signature = backend.signature()
    finally:
        if backend is not given:
            backend.close()
    kept = getattr(backend, "answers", None)  # the LLM judge's (not imported here: it is lazy)
    answers = dict(kept) if isinstance(kept, dict) else None
    return Scored(table, stats, signature, answers)


def judge_columns(
    statistics: Sequence[Statistic], table: Table, scored: Scored | None
) -> dict[str, list[Any]]:
    """records.jsonl's ``"judge"`` of a run the LLM judge scored: per record, the pairs its
    statistics asked about (each record's pairs listed by its statistics over that record alone),
    each with its two texts ``a`` and ``b``, its score (null: the judge gave none), and the judge's
    answer, tokens, seconds and cost as :attr:`Scored.answers` has them, or ``"cached": true``
    where the cache answered (the cache keeps scores, not answers); None for a record without
    pairs. Empty (no ``"judge"``) for any other backend."""
    if scored is None or scored.answers is None:
        return {}
    column: list[Any] = []
    for i in range(table.n):
        one = table.take(np.array([i], dtype=np.int64))
        pairs = dict.fromkeys(p for s in statistics for p in s.pairs(one))
        known = [pair for pair in pairs if pair in scored.table.values]  # as scored for the run
        column.append([_judged(pair, scored) for pair in known] or None)
    return {"pairs": column} if any(v is not None for v in column) else {}


def _judged(pair: Pair, scored: Scored) -> dict[str, Any]:
    score = scored.table.values[pair]
    entry: dict[str, Any] = {"a": pair[0], "b": pair[1], "score": None}
    if not math.isnan(score):
        entry["score"] = score
    answer = (scored.answers or {}).get(pair)
    if answer is not None:
        entry.update(answer)
    elif entry["score"] is not None:
        entry["cached"] = True
    return entry
