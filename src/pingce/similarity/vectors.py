"""Cosine scores from unit vectors of distinct texts: the one place the embedding backends
(``embedding:<model>``, ``embedding``, ``embedding-api:<model>``) turn vectors into scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Pair

__all__ = ["pair_cosines", "unit_rows"]


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """The rows scaled to length 1 (a zero row stays zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = vectors / norms
    return unit


def pair_cosines(pairs: Sequence[Pair], texts: list[str], vectors: np.ndarray) -> np.ndarray:
    """The cosine of each pair, from the unit ``vectors`` of ``texts`` (row i is text i);
    negative cosines count as 0, and a NaN row gives NaN."""
    index = {t: i for i, t in enumerate(texts)}
    a = vectors[[index[p[0]] for p in pairs]]
    b = vectors[[index[p[1]] for p in pairs]]
    cosine = np.einsum("ij,ij->i", a, b)
    clipped: np.ndarray = np.clip(cosine, 0.0, 1.0)
    return clipped
