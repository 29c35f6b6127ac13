"""The similarity protocol: score text pairs to floats in [0, 1], with a signature.

Metrics that need meaning never call a model themselves (pairs first, scores second): the runner
collects every pair the metrics will need, removes duplicates, asks a backend once, and hands the
resulting :class:`SimilarityTable` to the metrics. A backend's :meth:`SimilarityBackend.signature`
(name, model, template hash, parameters) keys the cache and goes into results.json.

A pair whose score could not be obtained (a judge call that failed after its retries) is NaN in
the table and counted in :class:`BackendStats.failures`; it is never read as 0.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

import numpy as np

from ..progress import Advance
from ..remote.usage import BackendStats, noting

__all__ = [
    "BackendStats",
    "Pair",
    "SimilarityBackend",
    "SimilarityTable",
    "noting",
]

Pair = tuple[str, str]


class SimilarityBackend(ABC):
    """Scores text pairs to [0, 1]. Subclasses implement :meth:`score_distinct`."""

    name: str = ""

    @abstractmethod
    def signature(self) -> str:
        """Identity of the scores: backend, model, template hash, parameters (never a key)."""

    @abstractmethod
    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        """Scores of distinct pairs, NaN where a score could not be obtained."""

    def close(self) -> None:  # noqa: B027  (optional hook)
        """Release resources (connections, models)."""

    def score(
        self, pairs: Iterable[Pair], progress: Advance | None = None
    ) -> tuple[SimilarityTable, BackendStats]:
        """Score pairs, each distinct pair once; an exact match scores 1 without a model."""
        stats = BackendStats()
        if progress is not None:
            stats.watch = noting(progress)
        distinct = list(dict.fromkeys(pairs))
        stats.pairs = len(distinct)
        values: dict[Pair, float] = {}
        todo = []
        for pair in distinct:
            if pair[0] == pair[1]:
                values[pair] = 1.0
            else:
                todo.append(pair)
        if progress is not None and len(todo) < len(distinct):
            progress(len(distinct) - len(todo))
        if todo:
            scores = self.score_distinct(todo, stats, progress)
            for pair, value in zip(todo, scores, strict=True):
                values[pair] = float(value)
        return SimilarityTable(values, self.signature()), stats


class SimilarityTable:
    """Scores by pair, as returned by a backend; NaN marks a failed pair."""

    def __init__(self, values: dict[Pair, float], signature: str):
        self.values = values
        self.signature = signature

    def get(self, a: str, b: str) -> float:
        """The score of (a, b); a missing pair is a programming error."""
        if a == b:
            return 1.0
        return self.values[(a, b)]

    def failed(self, a: str, b: str) -> bool:
        """Whether the pair has no score (its judge call failed)."""
        return a != b and math.isnan(self.values[(a, b)])

    def __len__(self) -> int:
        return len(self.values)
