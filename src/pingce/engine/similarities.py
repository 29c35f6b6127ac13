"""The similarity phase: collect every pair any statistic needs (over every table of the
invocation), drop duplicates, and ask one backend, with one cache, once.

A run, a comparison (both sides at once) and a calibration all go through :func:`score_pairs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..progress import Advance, ProgressHook
from ..similarity import BackendStats, Pair, SimilarityBackend, SimilarityTable, make_backend
from ..similarity.names import BackendName

__all__ = ["BackendChoice", "Scored", "score_pairs"]


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
    return Scored(table, stats, signature)
