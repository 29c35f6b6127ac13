"""The similarity protocol: score text pairs to floats in [0, 1], with a signature.

Metrics that need meaning never call a model themselves (DESIGN.md, "Two phases"): the runner
collects every pair the metrics will need, removes duplicates, asks a backend once, and hands the
resulting :class:`SimilarityTable` to the metrics. A backend's :meth:`SimilarityBackend.signature`
(name, model, template hash, parameters) keys the cache and goes into results.json.

A pair whose score could not be obtained (a judge call that failed after its retries) is NaN in
the table and counted in :class:`BackendStats.failures`; it is never read as 0.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..progress import Advance, show_note

__all__ = [
    "BackendStats",
    "Pair",
    "SimilarityBackend",
    "SimilarityTable",
    "noting",
]

Pair = tuple[str, str]


@dataclass
class BackendStats:
    """What a backend did in a run: reported in results.json under ``similarity``."""

    pairs: int = 0
    """Distinct pairs asked for."""
    requests: int = 0
    """Calls that went to a model or server (retries included)."""
    cache_hits: int = 0
    failures: int = 0
    """Pairs without a score after all retries."""
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_sec: list[float] = field(default_factory=list)
    encoded_texts: int = 0
    """Embedding backends: distinct texts encoded."""
    failure_reasons: dict[str, int] = field(default_factory=dict)
    cache_errors: int = 0
    """Cache writes that failed (retried at the next flush; scores stay in memory, but a rerun
    may ask those pairs again)."""

    last_error: str | None = None
    """The reason of the last failed attempt (kept for the progress line, not reported)."""
    watch: Callable[[BackendStats], None] | None = None
    """Called after each failed attempt or pair (the progress line shows the counts)."""

    def fail(self, reason: str) -> None:
        """Count a pair that failed, by reason."""
        self.failures += 1
        self.failure_reasons[reason] = self.failure_reasons.get(reason, 0) + 1
        self.last_error = reason
        if self.watch is not None:
            self.watch(self)

    def retry(self, reason: str) -> None:
        """Count an attempt that failed and will be tried again."""
        self.retries += 1
        self.last_error = reason
        if self.watch is not None:
            self.watch(self)

    def trouble(self) -> str:
        """The failures so far in words, for the progress line."""
        parts = []
        if self.failures:
            parts.append(f"{self.failures:,} failed")
        if self.retries:
            parts.append(f"{self.retries:,} retried")
        return ", ".join(parts) + (f"; last error: {self.last_error}" if self.last_error else "")

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary (latency as mean and percentiles)."""
        latency = np.asarray(self.latency_sec, dtype=np.float64)
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "failures": self.failures,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }
        if self.encoded_texts:
            out["encoded_texts"] = self.encoded_texts
        if latency.size:
            out["latency_sec"] = {
                "mean": float(latency.mean()),
                "p50": float(np.percentile(latency, 50)),
                "p95": float(np.percentile(latency, 95)),
                "max": float(latency.max()),
            }
        if self.failure_reasons:
            out["failure_reasons"] = dict(sorted(self.failure_reasons.items()))
        if self.cache_errors:
            out["cache_errors"] = self.cache_errors
        return out


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


def noting(progress: Advance, every: float = 0.1) -> Callable[[BackendStats], None]:
    """A watcher that shows the failures on the progress line: at most every ``every`` s for
    retries, and always when a pair has failed for good (so the count shown is never stale)."""
    shown = [-math.inf, 0.0]  # when, and the failures counted then

    def watch(stats: BackendStats) -> None:
        now = time.monotonic()
        if now - shown[0] >= every or stats.failures != shown[1]:
            shown[0], shown[1] = now, stats.failures
            show_note(progress, stats.trouble())

    return watch


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
