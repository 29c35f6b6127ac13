"""First stage of a grounding check: for every cited passage, the few sentences (or windows of
adjacent sentences) of its own source document most like it, found without comparing all pairs
in Python.

Every sentence of every document and every query is a vector of character bigram counts,
hashed into 2^22 columns salted by the record; the dot product of a query and a sentence of
its own record counts the pairs of their n-grams that share a hashed column. Large blocks take
it from one sparse matrix product (queries x sentences, the products between records that share
a column dropped); blocks of fewer than ``text.ngrams.JOIN_NGRAMS`` n-grams from a join on (record,
column) in numpy (:func:`_joined_dots`), which gives the same integers without importing
scipy.sparse (0.15 s, most of a small run's start-up) and is slower beyond that size.
A window of ``w`` adjacent
sentences is scored from its sentences' products (its dot product is their sum; its norm is
taken as the root of their n-gram totals' sum, the n-grams across the joins left out). The score
is a cosine (each vector's norm taken as the root of its n-gram total) used only to rank; the
second stage scores the top ``k`` with the run's backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..text.ngrams import JOIN_NGRAMS, code_points, normalize_text

__all__ = ["BLOCK_SENTENCES", "Candidates", "top_candidates"]

_COLUMNS_BITS = 22
BLOCK_SENTENCES = 50_000
"""About how many sentences one product takes (whole records)."""
_SALT = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xBF58476D1CE4E5B9)


@dataclass(frozen=True)
class Candidates:
    """For query ``i``: its ``k`` best candidates, as (first sentence, number of sentences)
    into the flat sentence list, best first (``first[i, j] = -1`` where there are fewer)."""

    first: np.ndarray
    length: np.ndarray
    score: np.ndarray

    @classmethod
    def empty(cls, n_queries: int, k: int) -> Candidates:
        """No candidate yet for any of ``n_queries`` queries."""
        return cls(
            np.full((n_queries, k), -1, dtype=np.int64),
            np.zeros((n_queries, k), dtype=np.int64),
            np.zeros((n_queries, k)),
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, length, score)``, to fill in place."""
        return self.first, self.length, self.score


def _hashed(texts: Sequence[str], records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, hashed column) of every character bigram of each text (a one-character text: its
    character)."""
    codes, starts = code_points(texts)
    lengths = np.diff(starts)
    ends = np.repeat(starts[1:], lengths)
    first = np.flatnonzero(np.arange(codes.shape[0]) + 1 < ends)  # bigrams inside one text
    keys = (codes[first] << np.uint64(21)) | codes[first + 1]
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), np.maximum(lengths - 1, 0))
    single = np.flatnonzero(lengths == 1)
    if single.shape[0]:
        rows = np.concatenate([rows, single])
        keys = np.concatenate([keys, codes[starts[single]]])
    salted = (keys ^ (records[rows].astype(np.uint64) * _SALT)) * _MIX
    columns = (salted >> np.uint64(64 - _COLUMNS_BITS)).astype(np.int64)
    return rows, columns


def _joined_dots(
    s_rows: np.ndarray,
    s_keys: np.ndarray,
    q_rows: np.ndarray,
    q_keys: np.ndarray,
    n_sentences: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(query, sentence, dot)`` of every query and sentence sharing a key, in query then
    sentence order: the dot product of their key counts (an n-gram given twice counts twice),
    from one join of the sorted keys: each side's entries first counted per (row, key), so a
    key repeated in a text adds its count once, not a pair of entries per repeat."""
    s_rows, s_keys, s_counts = _counted(s_rows, s_keys)
    q_rows, q_keys, q_counts = _counted(q_rows, q_keys)
    shared = np.intersect1d(s_keys, q_keys)
    s_low = np.searchsorted(s_keys, shared, side="left")
    s_count = np.searchsorted(s_keys, shared, side="right") - s_low
    q_low = np.searchsorted(q_keys, shared, side="left")
    q_count = np.searchsorted(q_keys, shared, side="right") - q_low
    pairs = s_count * q_count
    group = np.repeat(np.arange(shared.shape[0]), pairs)
    offset = np.arange(int(pairs.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(pairs) - pairs, pairs
    )
    s_at = s_low[group] + offset // q_count[group]
    q_at = q_low[group] + offset % q_count[group]
    products = s_counts[s_at] * q_counts[q_at]
    pair, where = np.unique(q_rows[q_at] * n_sentences + s_rows[s_at], return_inverse=True)
    dots = np.bincount(where, weights=products, minlength=pair.shape[0])
    return pair // n_sentences, pair % n_sentences, dots.astype(np.float64)


def _counted(rows: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct (row, key) entry once, sorted by key (then row), with its count."""
    order = np.lexsort((rows, keys))
    rows, keys = rows[order], keys[order]
    start = np.ones(rows.shape[0], dtype=bool)
    start[1:] = (keys[1:] != keys[:-1]) | (rows[1:] != rows[:-1])
    first = np.flatnonzero(start)
    counts = np.diff(np.append(first, rows.shape[0])).astype(np.float64)
    return rows[first], keys[first], counts


def _product_dots(
    s_rows: np.ndarray,
    s_keys: np.ndarray,
    q_rows: np.ndarray,
    q_keys: np.ndarray,
    n_sentences: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_joined_dots` by one sparse product of the hashed columns' counts (duplicates not
    merged: the product sums them), keeping the pairs of one record."""
    from scipy import sparse

    width = 1 << _COLUMNS_BITS
    s_matrix = sparse.csr_matrix(
        (np.ones(s_rows.shape[0], dtype=np.float32), (s_rows, s_keys & (width - 1))),
        shape=(n_sentences, width),
    )
    n_queries = int(q_rows.max()) + 1 if q_rows.shape[0] else 0
    q_matrix = sparse.csr_matrix(
        (np.ones(q_rows.shape[0], dtype=np.float32), (q_rows, q_keys & (width - 1))),
        shape=(n_queries, width),
    )
    product = (s_matrix @ q_matrix.T).tocoo()
    s_record = np.zeros(n_sentences, dtype=np.int64)
    s_record[s_rows] = s_keys >> _COLUMNS_BITS
    q_record = np.zeros(n_queries, dtype=np.int64)
    q_record[q_rows] = q_keys >> _COLUMNS_BITS
    own = q_record[product.col] == s_record[product.row]
    query = product.col[own].astype(np.int64)
    sentence = product.row[own].astype(np.int64)
    dots = product.data[own].astype(np.float64)
    order = np.lexsort((sentence, query))
    return query[order], sentence[order], dots[order]


def _keys(texts: Sequence[str], records: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each n-gram's row and join key (its record and hashed column), and each row's n-gram
    total (its squared norm were every n-gram distinct)."""
    rows, columns = _hashed(texts, records)
    keys = (records[rows].astype(np.int64) << _COLUMNS_BITS) | columns
    totals = np.bincount(rows, minlength=len(texts)).astype(np.float64)
    return rows, keys, totals


def top_candidates(
    sentences: Sequence[str],
    sentence_record: np.ndarray,
    queries: Sequence[str],
    query_record: np.ndarray,
    *,
    k: int = 5,
    window: int = 2,
) -> Candidates:
    """The ``k`` best sentences or windows (of up to ``window`` adjacent sentences of one
    record) for each query, among the sentences of the query's own record.

    ``sentences`` are all records' sentences, each record's contiguous and in order;
    ``sentence_record[j]`` (ascending) and ``query_record[i]`` say whose they are. A query
    that shares no n-gram with its record's sentences gets that record's first sentences
    (scored 0), so that it still has a closest sentence to report.

    Records are taken in blocks of about :data:`BLOCK_SENTENCES` sentences, so that the
    join's arrays (and memory) stay flat whatever the number of records."""
    n_queries = len(queries)
    first, length, score = Candidates.empty(n_queries, k).arrays()
    if n_queries == 0 or len(sentences) == 0:
        return Candidates(first, length, score)
    if np.any(np.diff(sentence_record) < 0):
        raise ValueError("sentence_record must be in ascending order")
    if np.any(np.diff(query_record) < 0):  # take the queries by record, answer in their order
        order = np.argsort(query_record, kind="stable")
        found = top_candidates(
            sentences,
            sentence_record,
            [queries[i] for i in order],
            query_record[order],
            k=k,
            window=window,
        )
        first[order], length[order], score[order] = found.first, found.length, found.score
        return Candidates(first, length, score)
    start = 0
    while start < len(sentences):
        end = min(len(sentences), start + BLOCK_SENTENCES)
        if end < len(sentences):  # end the block at a record boundary
            end = int(np.searchsorted(sentence_record, sentence_record[end - 1], side="right"))
        low, high = sentence_record[start], sentence_record[end - 1]
        q_start = int(np.searchsorted(query_record, low, side="left"))
        q_end = int(np.searchsorted(query_record, high, side="right"))
        if q_end > q_start:
            block = _block(
                sentences[start:end],
                sentence_record[start:end],
                queries[q_start:q_end],
                query_record[q_start:q_end],
                k,
                window,
            )
            matched = block.first >= 0
            first[q_start:q_end] = np.where(matched, block.first + start, -1)
            length[q_start:q_end] = block.length
            score[q_start:q_end] = block.score
        start = end
    _fill_unmatched(first, length, sentence_record, query_record)
    return Candidates(first, length, score)


def _block(
    sentences: Sequence[str],
    sentence_record: np.ndarray,
    queries: Sequence[str],
    query_record: np.ndarray,
    k: int,
    window: int,
) -> Candidates:
    """:func:`top_candidates` on one block of records (indices local to the block)."""
    n_queries = len(queries)
    first, length, score = Candidates.empty(n_queries, k).arrays()
    if n_queries == 0 or len(sentences) == 0:
        return Candidates(first, length, score)
    q_rows, q_keys, q_squared = _keys([normalize_text(t) for t in queries], query_record)
    s_rows, s_keys, s_squared = _keys([normalize_text(t) for t in sentences], sentence_record)
    n_sentences = len(sentences)
    if s_keys.shape[0] + q_keys.shape[0] < JOIN_NGRAMS:
        q_index, s_index, dots = _joined_dots(s_rows, s_keys, q_rows, q_keys, n_sentences)
    else:
        q_index, s_index, dots = _product_dots(s_rows, s_keys, q_rows, q_keys, n_sentences)
    key = q_index * n_sentences + s_index

    all_q, all_first, all_length, all_score = [], [], [], []
    for width in range(1, max(1, window) + 1):
        dot = dots.copy()
        squared = s_squared[s_index].copy()
        valid = np.ones(dot.shape[0], dtype=bool)
        for t in range(1, width):
            following = s_index + t
            inside = following < n_sentences
            inside[inside] = sentence_record[following[inside]] == sentence_record[s_index[inside]]
            valid &= inside
            position = np.searchsorted(key, key + t)
            position = np.minimum(position, key.shape[0] - 1)
            found = valid & (key[position] == key + t)
            dot += np.where(found, dots[position], 0.0)
            squared += np.where(valid, s_squared[np.minimum(following, n_sentences - 1)], 0.0)
        norm = np.sqrt(squared * q_squared[q_index])
        cosine = np.divide(dot, norm, out=np.zeros_like(dot), where=norm > 0)
        all_q.append(q_index[valid])
        all_first.append(s_index[valid])
        all_length.append(np.full(int(valid.sum()), width, dtype=np.int64))
        all_score.append(cosine[valid])
    q_all = np.concatenate(all_q)
    first_all = np.concatenate(all_first)
    length_all = np.concatenate(all_length)
    score_all = np.concatenate(all_score)
    # best first within each query; ties: the shorter, then the earlier candidate
    order = np.lexsort((first_all, length_all, -score_all, q_all))
    q_all, first_all = q_all[order], first_all[order]
    length_all, score_all = length_all[order], score_all[order]
    group_start = np.searchsorted(q_all, np.arange(n_queries))
    rank = np.arange(q_all.shape[0]) - group_start[q_all]
    keep = rank < k
    first[q_all[keep], rank[keep]] = first_all[keep]
    length[q_all[keep], rank[keep]] = length_all[keep]
    score[q_all[keep], rank[keep]] = score_all[keep]
    return Candidates(first, length, score)


def _fill_unmatched(
    first: np.ndarray, length: np.ndarray, sentence_record: np.ndarray, query_record: np.ndarray
) -> None:
    """Queries without any candidate get their record's first sentences (score 0)."""
    empty = np.flatnonzero(first[:, 0] < 0)
    if empty.shape[0] == 0:
        return
    record_start = np.searchsorted(sentence_record, query_record[empty])
    record_end = np.searchsorted(sentence_record, query_record[empty], side="right")
    k = first.shape[1]
    for i, start, end in zip(empty, record_start, record_end, strict=True):
        for j, sentence in enumerate(range(int(start), min(int(end), int(start) + k))):
            first[i, j] = sentence
            length[i, j] = 1
