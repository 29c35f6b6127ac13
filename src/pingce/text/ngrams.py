"""Character n-gram counts of many texts at once, exact, without a Python loop over characters.

Texts are read as arrays of code points (one UTF-32 encoding of all of them); an n-gram of up to
three characters is one 64-bit key (21 bits a code point, so keys of different orders never
collide), longer n-grams are compared as rows of code points. :func:`count_matrix` numbers the
distinct n-grams and returns a sparse text x n-gram count matrix; :func:`pair_cosines` gives the
cosine of the count vectors of many (a, b) pairs. Both give exactly the numbers of counting
n-grams with a dictionary (tested against scikit-learn's ``CountVectorizer(analyzer="char")``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["code_points", "count_matrix", "normalize_text", "pair_cosines"]

_BITS = 21  # every Unicode code point fits in 21 bits


def normalize_text(text: str) -> str:
    """Case-folded, whitespace runs collapsed to one space, stripped."""
    return " ".join(text.casefold().split())


def code_points(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """All texts' code points in one array (uint64) and the start offset of each text (with the
    total length appended, so text ``i`` is ``codes[starts[i]:starts[i + 1]]``)."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    starts = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    return codes, starts


def _grams(codes: np.ndarray, starts: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row (text index) and position of every n-gram that lies inside one text."""
    lengths = np.diff(starts)
    counts = np.maximum(lengths - n + 1, 0)
    rows = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), counts)
    first = np.repeat(starts[:-1] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    positions = first + np.arange(rows.shape[0], dtype=np.int64)
    return rows, positions


def _keys(codes: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
    """One comparable key per n-gram: a uint64 for n <= 3, else a row of n code points viewed as
    one opaque (void) item."""
    if n <= 3:
        key: np.ndarray = codes[positions]
        for k in range(1, n):
            key = (key << np.uint64(_BITS)) | codes[positions + k]
        return key
    block = np.stack([codes[positions + k].astype(np.uint32) for k in range(n)], axis=1)
    items: np.ndarray = np.ascontiguousarray(block).view(np.dtype((np.void, 4 * n))).ravel()
    return items


def count_matrix(texts: Sequence[str], min_n: int = 1, max_n: int = 3) -> sparse.csr_matrix:
    """Text x n-gram counts (orders ``min_n..max_n``; the texts as given, not normalised)."""
    from scipy import sparse

    codes, starts = code_points(texts)
    all_rows, all_cols = [], []
    offset = 0
    for n in range(min_n, max_n + 1):
        rows, positions = _grams(codes, starts, n)
        if rows.shape[0] == 0:
            continue
        vocabulary, columns = np.unique(_keys(codes, positions, n), return_inverse=True)
        all_rows.append(rows)
        all_cols.append(columns.ravel() + offset)
        offset += vocabulary.shape[0]
    rows = np.concatenate(all_rows) if all_rows else np.zeros(0, dtype=np.int64)
    cols = np.concatenate(all_cols) if all_cols else np.zeros(0, dtype=np.int64)
    matrix = sparse.csr_matrix(
        (np.ones(rows.shape[0]), (rows, cols)), shape=(len(texts), max(1, offset))
    )
    matrix.sum_duplicates()
    return matrix


def pair_cosines(
    texts: Sequence[str],
    left: np.ndarray,
    right: np.ndarray,
    min_n: int = 1,
    max_n: int = 3,
) -> np.ndarray:
    """Cosine of the n-gram count vectors of ``texts[left[i]]`` and ``texts[right[i]]`` (0 when
    either text has no n-gram)."""
    counts = count_matrix(texts, min_n, max_n)
    norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
    dots = np.asarray(counts[left].multiply(counts[right]).sum(axis=1)).ravel()
    denominator = norms[left] * norms[right]
    out = np.zeros(left.shape[0])
    np.divide(dots, denominator, out=out, where=denominator > 0)
    clipped: np.ndarray = np.clip(out, 0.0, 1.0)
    return clipped
