"""Offline backends without a model: exact match, Levenshtein, character n-gram count cosine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import numpy as np

from .._constraints import Range
from ..progress import Advance
from ..text.ngrams import normalize_text, pair_cosines
from .base import BackendStats, Pair, SimilarityBackend

__all__ = ["ExactBackend", "LevenshteinBackend", "LexicalBackend"]


class ExactBackend(SimilarityBackend):
    """1 for identical texts, else 0."""

    name = "exact"

    def signature(self) -> str:
        return "exact"

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        if progress is not None:
            progress(len(pairs))
        return np.array([1.0 if a == b else 0.0 for a, b in pairs])


class LevenshteinBackend(SimilarityBackend):
    """rapidfuzz's normalised Levenshtein similarity: 1 - distance / max(len(a), len(b))."""

    name = "levenshtein"

    def signature(self) -> str:
        return "levenshtein:normalized"

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        from rapidfuzz.distance import Levenshtein

        out = np.array([Levenshtein.normalized_similarity(a, b) for a, b in pairs])
        if progress is not None:
            progress(len(pairs))
        return out


Order = Annotated[int, Range(1, 20)]
"""An n-gram order."""


class LexicalBackend(SimilarityBackend):
    """Cosine of character n-gram count vectors (n = 1..3 by default).

    Works for Chinese and mixed text without a tokenizer (text is case-folded, whitespace
    collapsed). The score of a pair depends on the pair alone, not on the other texts of the run
    (no corpus IDF), so a slice, a rerun or a cache gives the same number. Each distinct text is
    vectorised once; cosines are sparse dot products of L2-normalised rows.
    """

    name = "lexical"

    def __init__(self, min_n: Order = 1, max_n: Order = 3):
        if not 1 <= min_n <= max_n:
            raise ValueError(f"need 1 <= min_n <= max_n, got {min_n}, {max_n}")
        self.min_n = min_n
        self.max_n = max_n

    def signature(self) -> str:
        return f"lexical:char-{self.min_n}-{self.max_n}"

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        left = np.fromiter((index[a] for a, _ in pairs), dtype=np.int64, count=len(pairs))
        right = np.fromiter((index[b] for _, b in pairs), dtype=np.int64, count=len(pairs))
        normalized = [normalize_text(t) for t in texts]
        cosine = pair_cosines(normalized, left, right, self.min_n, self.max_n)
        if progress is not None:
            progress(len(pairs))
        return cosine
