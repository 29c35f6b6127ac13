"""Character n-gram counts of many texts at once, exact, without a Python loop over characters.

Texts are read as arrays of code points (one UTF-32 encoding of all of them); an n-gram of up to
three characters is one 64-bit key (21 bits a code point, so keys of different orders never
collide), longer n-grams are compared as rows of code points. :func:`_entries` numbers the
distinct n-grams; :func:`pair_cosines` gives the cosine of the count vectors of many (a, b)
pairs, in numpy alone for few texts and with scipy.sparse's count matrix for many. Both give
exactly the numbers of counting n-grams with a dictionary (tested against
scikit-learn's ``CountVectorizer(analyzer="char")``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["JOIN_NGRAMS", "code_points", "normalize_text", "pair_cosines"]

_BITS = 21  # every Unicode code point fits in 21 bits

JOIN_NGRAMS = 100_000
"""Below this many n-grams, counts are matched in numpy alone (:func:`pair_cosines`,
``grounding/retrieval``), not with scipy.sparse: as fast at that size (measured on 2 cores: equal
up to about 30,000, 25 ms slower at 130,000; scipy.sparse's import is 150 ms), and a small run
does not import scipy. Both ways give the same integers, so the same floats."""


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


def _entries(texts: Sequence[str], min_n: int, max_n: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The text and the n-gram number of every n-gram (orders ``min_n..max_n``, the distinct
    ones numbered), one entry per occurrence, and the number of distinct n-grams."""
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
    if not all_rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 1
    return np.concatenate(all_rows), np.concatenate(all_cols), offset


def pair_cosines(
    texts: Sequence[str],
    left: np.ndarray,
    right: np.ndarray,
    min_n: int = 1,
    max_n: int = 3,
) -> np.ndarray:
    """Cosine of the n-gram count vectors of ``texts[left[i]]`` and ``texts[right[i]]`` (0 when
    either text has no n-gram).

    Counts, dot products and squared norms are integers, summed exactly in float64, so the
    cosines are the same bits whichever way they are summed: texts with fewer than
    :data:`JOIN_NGRAMS` n-grams in all are counted in numpy alone (a small run then does not
    import scipy.sparse, 0.15 s), more with scipy.sparse's count matrix, faster at that size."""
    characters = sum(len(t) for t in texts)
    small = characters * (max_n - min_n + 1) < JOIN_NGRAMS
    dots_and_norms = _joined_dots if small else _sparse_dots
    dots, norms = dots_and_norms(texts, left, right, min_n, max_n)
    denominator = norms[left] * norms[right]
    out = np.zeros(left.shape[0])
    np.divide(dots, denominator, out=out, where=denominator > 0)
    clipped: np.ndarray = np.clip(out, 0.0, 1.0)
    return clipped


def _sparse_dots(
    texts: Sequence[str], left: np.ndarray, right: np.ndarray, min_n: int, max_n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's dot product and each text's norm, from scipy.sparse's text x n-gram count
    matrix."""
    from scipy import sparse

    rows, columns, vocabulary = _entries(texts, min_n, max_n)
    matrix = sparse.csr_matrix(
        (np.ones(rows.shape[0]), (rows, columns)), shape=(len(texts), vocabulary)
    )
    matrix.sum_duplicates()
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    dots = np.asarray(matrix[left].multiply(matrix[right]).sum(axis=1)).ravel()
    return dots, norms


def _joined_dots(
    texts: Sequence[str], left: np.ndarray, right: np.ndarray, min_n: int, max_n: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sparse_dots` in numpy alone: each pair's left n-grams looked up among the
    right text's sorted keys."""
    rows, columns, vocabulary = _entries(texts, min_n, max_n)
    keys, counts = np.unique(rows * vocabulary + columns, return_counts=True)
    n_texts = len(texts)
    text_of = keys // vocabulary
    bounds = np.searchsorted(text_of, np.arange(n_texts + 1))
    squares = np.bincount(text_of, weights=counts.astype(np.float64) ** 2, minlength=n_texts)
    norms = np.sqrt(squares)
    # each pair's left n-grams, looked up among the right text's
    sizes = bounds[left + 1] - bounds[left]
    pair = np.repeat(np.arange(left.shape[0], dtype=np.int64), sizes)
    entry = np.repeat(bounds[left] - np.cumsum(sizes) + sizes, sizes) + np.arange(
        int(sizes.sum()), dtype=np.int64
    )
    wanted = right[pair] * vocabulary + keys[entry] % vocabulary
    found = np.minimum(np.searchsorted(keys, wanted), max(0, keys.shape[0] - 1))
    hit = keys[found] == wanted if keys.shape[0] else np.zeros(wanted.shape[0], dtype=bool)
    products = np.where(hit, counts[entry] * counts[found], 0).astype(np.float64)
    dots = np.bincount(pair, weights=products, minlength=left.shape[0])
    return dots, norms
