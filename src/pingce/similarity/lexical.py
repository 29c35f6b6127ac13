"""Offline backends without a model: exact match, Levenshtein, character n-gram count cosine."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..progress import Advance
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


class LexicalBackend(SimilarityBackend):
    """Cosine of character n-gram count vectors (n = 1..3 by default).

    Works for Chinese and mixed text without a tokenizer (text is case-folded, whitespace
    collapsed). The score of a pair depends on the pair alone, not on the other texts of the run
    (no corpus IDF), so a slice, a rerun or a cache gives the same number. Each distinct text is
    vectorised once; cosines are sparse dot products of L2-normalised rows.
    """

    name = "lexical"

    def __init__(self, min_n: int = 1, max_n: int = 3):
        if not 1 <= min_n <= max_n:
            raise ValueError(f"need 1 <= min_n <= max_n, got {min_n}, {max_n}")
        self.min_n = min_n
        self.max_n = max_n

    def signature(self) -> str:
        return f"lexical:char-{self.min_n}-{self.max_n}"

    def _grams(self, text: str) -> list[str]:
        text = " ".join(text.casefold().split())
        return [
            text[i : i + n]
            for n in range(self.min_n, self.max_n + 1)
            for i in range(len(text) - n + 1)
        ]

    def score_distinct(
        self, pairs: Sequence[Pair], stats: BackendStats, progress: Advance | None = None
    ) -> np.ndarray:
        from scipy import sparse  # imported when used: exact and levenshtein runs skip it

        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for i, text in enumerate(texts):
            for gram in self._grams(text):
                cols.append(vocab.setdefault(gram, len(vocab)))
                rows.append(i)
        counts = sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(texts), max(1, len(vocab)))
        )
        counts.sum_duplicates()
        norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        unit = sparse.diags(1.0 / norms) @ counts
        a = unit[[index[p[0]] for p in pairs]]
        b = unit[[index[p[1]] for p in pairs]]
        cosine = np.asarray(a.multiply(b).sum(axis=1)).ravel()
        if progress is not None:
            progress(len(pairs))
        clipped: np.ndarray = np.clip(cosine, 0.0, 1.0)
        return clipped
