"""A backend without a model, for tests and dry runs (as httpx ships a mock transport).

``FakeBackend(score)`` scores a pair with a function or looks it up in a mapping, can make chosen
pairs fail (NaN, counted as failures like a judge call that failed after its retries), and keeps
the pairs it was asked in :attr:`FakeBackend.asked`, so a test can check what a real backend
would have been sent::

    backend = FakeBackend(lambda a, b: 0.9, fail={("订单表", "客户")})
    result = pingce.evaluate("function-points", records, similarity=backend)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from ..progress import Advance
from .base import BackendStats, Pair, SimilarityBackend

__all__ = ["FakeBackend"]


class FakeBackend(SimilarityBackend):
    """Scores from a function ``(a, b) -> float`` or a mapping of pairs; no model, no network."""

    name = "fake"

    def __init__(
        self,
        score: Callable[[str, str], float] | Mapping[Pair, float],
        *,
        fail: Iterable[Pair] = (),
        label: str = "fake",
    ):
        self._score = score
        self.fail = frozenset(fail)
        self.label = label
        self.asked: list[Pair] = []
        """Every distinct pair asked, in order (identical strings are never asked)."""

    def signature(self) -> str:
        return self.label

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        self.asked.extend(pairs)
        out = np.full(len(pairs), np.nan)
        for i, pair in enumerate(pairs):
            if pair in self.fail:
                stats.fail("fake failure")
                continue
            if callable(self._score):
                value = float(self._score(*pair))
            else:
                try:
                    value = float(self._score[pair])
                except KeyError:
                    raise KeyError(f"FakeBackend has no score for the pair {pair!r}") from None
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"FakeBackend score {value!r} for {pair!r} is outside [0, 1]")
            out[i] = value
        stats.requests += len(pairs) - sum(p in self.fail for p in pairs)
        if progress is not None:
            progress(len(pairs))
        return out
