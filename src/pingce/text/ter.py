"""Translation edit rate (TER) as sacrebleu computes it, from summed per-record statistics.

**Statistics.** Per record, sacrebleu's two numbers: the fewest edits that turn the hypothesis into
one of the references (word insertions, deletions, substitutions, and shifts of a block of words,
each costing 1), and the *average* length of the references in words. A corpus score is
``100 * sum(edits) / sum(average reference lengths)``; where the summed reference length is 0 it is
100 when there are edits and 0 when there are none (an empty hypothesis against empty references),
sacrebleu's own rule. A sentence score is the same finaliser on one record's row.

**Words.** :func:`ter_words` is sacrebleu's Tercom normalisation (``TercomTokenizer``) of the text
with its trailing whitespace removed: lowercased unless ``case_sensitive``; with ``normalized``,
lines joined (a line break before ``-`` removed), the XML entities ``&quot; &amp; &lt; &gt;``
decoded, ASCII punctuation and symbols other than ``' , - .`` split off, ``'s`` split off, ``.`` and
``,`` split off unless between digits, ``-`` after a digit split off, and with ``asian_support``
also every CJK ideograph, stroke, radical, compatibility form, enclosed letter and CJK or
full-width punctuation mark split off (kana are not); with ``no_punct``, the ASCII marks
``. , ? : ; ! " ( )`` removed (with ``asian_support`` also the CJK and full-width punctuation);
then a split on whitespace. Without ``normalized`` (sacrebleu's default) a Chinese sentence
without spaces is one word: use ``normalized`` with ``asian_support`` for Chinese. sacrebleu
normalises a reference twice (:func:`ter_reference_words`), and so does pingce.

**Edits** (:func:`ter_edits_batch`): Tercom's greedy search as sacrebleu implements it
(``metrics/lib_ter.py``), with the same limits and the same choices, so the numbers are equal:

* the edit distance is a Levenshtein distance over words restricted to a beam of 25 cells on each
  side of the "pseudo-diagonal" ``j = floor(i * len(ref) / len(hyp))`` (wider when the lengths
  differ more than 50-fold; the last row whole); its trace prefers, on ties, a match or
  substitution, then a hypothesis word left out, then a reference word added;
* a shift moves a block of at most 10 hypothesis words that equals a block of the reference
  starting at most 50 positions away, where the hypothesis block holds an error, the reference
  block holds an error and the reference block is not aligned inside the hypothesis block; it is
  tried at each distinct position just after the hypothesis words aligned to the reference block
  and to the word before it; the best shift reduces the edit distance most, then is longest, then
  starts earliest, then goes to the earliest position; shifts are applied while they reduce the
  distance;
* after 1,000 tried shifts (counted over the whole search of a pair, checked after each block)
  the search stops and the last round's best shift is not applied.

The search runs for many pairs at once: each round, the beam edit distances and their traces of
every pair still searching are one vectorised dynamic programme (numpy, row by row, a row's
insertions a running minimum), the blocks to shift are found from a matrix of equal words, and
every tried shift's edit distance is rapidfuzz's Levenshtein distance, which equals the beam's
whenever it is smaller than the cheapest possible path through a cell outside the beam (a path
through cell ``(i, j)`` costs at least ``|i - j| + |(m - i) - (n - j)|``). Above that bound the
Levenshtein distance only bounds the shift's gain from above: the shifts that could still be
chosen, best bound first, go through the beam programme, from the rows they share with the
unshifted hypothesis, until the best is known. Long, very different pairs are where this
happens; the numbers are the same either way.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from functools import lru_cache
from itertools import chain, count

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

from .._collector import collector_paused
from ._mteval import split_numbers, unescape_entities

__all__ = [
    "BEAM_WIDTH",
    "MAX_SHIFT_CANDIDATES",
    "MAX_SHIFT_DIST",
    "MAX_SHIFT_SIZE",
    "ter",
    "ter_corpus",
    "ter_edits",
    "ter_edits_batch",
    "ter_reference_words",
    "ter_sentence",
    "ter_stats",
    "ter_stats_batch",
    "ter_words",
]

BEAM_WIDTH = 25
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
MAX_SHIFT_CANDIDATES = 1000
"""Tercom's beam and shift limits, and sacrebleu's cap on the shifts tried per pair."""

_INF = np.int32(1 << 29)  # a cell outside the beam (sums of it and a few edits stay in int32)
_CELLS = 1 << 22  # dynamic-programme cells per batch of pairs (16 MB of int32)
_CANDIDATE_CELLS = 1 << 22  # words of tried shifts encoded at once
_NO_TABLE = np.zeros((0, 1, 1), dtype=np.int32)


# ----------------------------------------------------------------------------------------------
# Tercom normalisation
# ----------------------------------------------------------------------------------------------


def _chars(*ranges: tuple[int, int]) -> list[str]:
    return [chr(c) for low, high in ranges for c in range(low, high + 1)]


def _padding(chars: list[str]) -> dict[int, str]:
    return {ord(c): f" {c} " for c in chars}


# Tercom's rules that pad single characters with spaces, or remove them, are translation tables
# (one pass in C): ASCII punctuation and symbols other than ' , - . (the original also pads the
# space, which only lengthens runs of spaces: nothing before the final split counts them)
_WESTERN = str.maketrans(
    _padding(_chars((0x21, 0x26), (0x28, 0x2B), (0x2F, 0x2F), (0x3A, 0x40), (0x5B, 0x60)))
    | _padding(_chars((0x7B, 0x7E)))
)
_POSSESSIVE = re.compile(r"'s ")
_POSSESSIVE_END = re.compile(r"'s$")

_ASIAN_PUNCT = _chars(
    (0x3001, 0x3002), (0x3008, 0x3011), (0x3014, 0x301F), (0xFF61, 0xFF65), (0x30FB, 0x30FB)
)
_FULL_WIDTH_PUNCT = list("\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09")
# ideographs (and Extension A), strokes, radicals, compatibility characters and forms, enclosed
# letters (the original's range U+3200-U+3F22 reaches into Extension A), then the punctuation.
# The original also pads runs of kana that make up the whole line, which never happens after the
# line is padded with a space at each end.
_ASIAN_CHARS = _chars(
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x31C0, 0x31EF),
    (0x2E80, 0x2EFF),
    (0x3300, 0x33FF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0x3200, 0x3F22),
)
_ASIAN: dict[int, str] = {}  # built on first use (about 30,000 entries)
_REMOVE_PUNCT = str.maketrans("", "", '.,?:;!"()')
_REMOVE_ASIAN_PUNCT = str.maketrans("", "", "".join(_ASIAN_PUNCT + _FULL_WIDTH_PUNCT))


def _asian() -> dict[int, str]:
    if not _ASIAN:
        _ASIAN.update(_padding(_ASIAN_CHARS + _ASIAN_PUNCT + _FULL_WIDTH_PUNCT))
    return _ASIAN


def _normalize(text: str) -> str:
    text = unescape_entities(text.replace("\n-", "").replace("\n", " "))
    text = f" {text} ".translate(_WESTERN)
    if "'s" in text:
        text = _POSSESSIVE_END.sub(" 's", _POSSESSIVE.sub(" 's ", text))
    return split_numbers(text)


def ter_words(
    text: str,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> list[str]:
    """The words sacrebleu's TER aligns: ``TercomTokenizer`` of ``text.rstrip()``, split."""
    text = text.rstrip()
    if not text:
        return []
    if not case_sensitive:
        text = text.lower()
    if normalized:
        text = _normalize(text)
        if asian_support:
            text = text.translate(_asian())
    if no_punct:
        text = text.translate(_REMOVE_PUNCT)
        if asian_support:
            text = text.translate(_REMOVE_ASIAN_PUNCT)
    return text.split()


def ter_reference_words(
    text: str,
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> list[str]:
    """The words of a reference as sacrebleu's TER aligns them: :func:`ter_words` applied twice.

    sacrebleu's ``TER`` normalises each reference when it reads the references
    (``Metric._cache_references``) and again when it splits them into words
    (``TER._extract_reference_info``); hypotheses are normalised once. The second pass changes
    nothing unless ``normalized`` meets text that its first pass made anew: ``'s`` right before
    a CJK character (``dog's一``: the first pass puts a space after ``'s``, the second splits it
    off), entities written twice (``&amp;lt;``), and the like. pingce follows sacrebleu."""
    options = {
        "normalized": normalized,
        "no_punct": no_punct,
        "asian_support": asian_support,
        "case_sensitive": case_sensitive,
    }
    return ter_words(" ".join(ter_words(text, **options)), **options)


# ----------------------------------------------------------------------------------------------
# the beam edit distance, many pairs at once
# ----------------------------------------------------------------------------------------------


def _beam_widths(ratio: np.ndarray) -> np.ndarray:
    half = ratio / 2
    return np.where(half > BEAM_WIDTH, np.ceil(half + BEAM_WIDTH), BEAM_WIDTH).astype(np.int64)


def _beam_table(
    hyp: np.ndarray,
    ref: np.ndarray,
    hyp_len: np.ndarray,
    ref_len: np.ndarray,
    keep: bool,
    start: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> np.ndarray:
    """The beam edit distance table of every pair, row by row to the longest hypothesis: the
    whole table ``(pairs, A + 1, B + 1)`` with ``keep`` (cells outside the beam are ``_INF``),
    else each pair's own last row, ``(pairs, B + 1)``.

    ``hyp`` is ``(pairs, A)`` word ids padded with -1, ``ref`` ``(pairs, B)`` padded with -2; every
    ``hyp_len`` is at least 1. Row ``i`` of pair ``k`` holds columns ``max(0, d - w)`` to
    ``min(n, d + w - 1)``, ``d = floor(i * n / m)`` (``m``, ``n`` the lengths, ``w`` the beam
    width), the row ``m`` all columns. A row's value is ``min(substitution or match, deletion)``
    then, along the row, ``min(that, left + 1)``: a running minimum of ``value - column``.

    Without ``keep``, pair ``k`` may start from a known row ``initial[k]`` of number
    ``start[k]`` (pairs sorted by ``start``; a shifted hypothesis shares the rows of the words
    before the shift with the unshifted one): a row is computed only for the pairs past their
    start, a leading slice of them.
    """
    pairs, longest = hyp.shape
    width = ref.shape[1] + 1
    columns = np.arange(width, dtype=np.int32)
    ratio = ref_len / hyp_len
    beam = _beam_widths(ratio)
    last_col = ref_len + 1
    if initial is None:
        previous = np.broadcast_to(columns, (pairs, width)).copy()
    else:
        previous = np.ascontiguousarray(initial, dtype=np.int32)
    first = 0 if start is None else int(start[0])
    current = previous.copy()
    table = np.empty((pairs, longest + 1, width), dtype=np.int32) if keep else None
    final = np.empty((pairs, width), dtype=np.int32) if not keep else None
    if table is not None:
        table[:, 0] = previous
    scratch = np.empty((pairs, width - 1), dtype=np.int32)
    live = pairs
    for i in range(first + 1, longest + 1):
        if start is not None:
            live = int(np.searchsorted(start, i, side="left"))
        diagonal = np.floor(i * ratio[:live]).astype(np.int64)
        low = np.maximum(diagonal - beam[:live], 0)
        length = hyp_len[:live]
        high = np.where(
            length == i, last_col[:live], np.minimum(last_col[:live], diagonal + beam[:live])
        )
        before, row, cost = previous[:live], current[:live], scratch[:live]
        np.add(before, 1, out=row)
        np.not_equal(hyp[:live, i - 1 : i], ref[:live], out=cost, casting="unsafe")
        cost += before[:, :-1]
        np.minimum(row[:, 1:], cost, out=row[:, 1:])
        # columns past a pair's reference never reach its own (values flow rightwards): the
        # beam needs marking only where it leaves out a column of the reference
        narrow = bool(np.any(low > 0) or np.any(high < last_col[:live]))
        if narrow:
            outside = (columns < low[:, None]) | (columns >= high[:, None])
            np.putmask(row, outside, _INF)
        row -= columns
        np.minimum.accumulate(row, axis=1, out=row)
        row += columns
        if narrow:
            np.minimum(row, _INF, out=row)
            np.putmask(row, outside, _INF)
        if table is not None:
            table[:, i] = row
        else:
            assert final is not None
            done = np.flatnonzero(length == i)
            final[done] = row[done]
        previous, current = current, previous
    if table is not None:
        return table
    assert final is not None
    return final


def _beam_distances(
    hyp: np.ndarray,
    ref: np.ndarray,
    hyp_len: np.ndarray,
    ref_len: np.ndarray,
    start: np.ndarray | None = None,
    initial: np.ndarray | None = None,
) -> np.ndarray:
    """The beam edit distance of every pair (no trace; ``start``, ``initial`` as
    :func:`_beam_table`)."""
    last = _beam_table(hyp, ref, hyp_len, ref_len, False, start, initial)
    return np.asarray(last[np.arange(last.shape[0]), ref_len], dtype=np.int64)


def _trace(
    table: np.ndarray, hyp: np.ndarray, ref: np.ndarray, hyp_len: np.ndarray, ref_len: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The alignment of every pair from its table, walking back from the last cell: a match or
    substitution where it gives the cell's value, else a hypothesis word left out, else a
    reference word added (sacrebleu's stored choices).

    Returns ``align`` ``(pairs, B)``: the hypothesis position aligned to each reference word (the
    last hypothesis position before it, -1 for none, when the reference word is added),
    ``hyp_err`` ``(pairs, A)`` and ``ref_err`` ``(pairs, B)``: 1 where a word is not matched.
    """
    pairs, rows, width = table.shape
    flat = table.reshape(-1)
    longest, widest = hyp.shape[1], ref.shape[1]
    align = np.full((pairs, max(widest, 1)), -1, dtype=np.int64)
    hyp_err = np.zeros((pairs, max(longest, 1)), dtype=np.int64)
    ref_err = np.zeros((pairs, max(widest, 1)), dtype=np.int64)
    i = hyp_len.astype(np.int64).copy()
    j = ref_len.astype(np.int64).copy()
    k = np.arange(pairs, dtype=np.int64)
    live = (i > 0) | (j > 0)
    while live.any():
        k, i, j = k[live], i[live], j[live]
        cell = (k * rows + i) * width + j
        value = flat[cell]
        up = i > 0
        both = up & (j > 0)
        h = np.maximum(i - 1, 0)
        r = np.maximum(j - 1, 0)
        cost = (hyp[k, h] != ref[k, r]).astype(np.int64)
        diagonal = both & (flat[np.where(both, cell - width - 1, 0)] + cost == value)
        deletion = ~diagonal & up & (flat[np.where(up, cell - width, 0)] + 1 == value)
        insertion = ~diagonal & ~deletion
        kd, hd, rd = k[diagonal], h[diagonal], r[diagonal]
        hyp_err[kd, hd] = cost[diagonal]
        ref_err[kd, rd] = cost[diagonal]
        align[kd, rd] = hd
        hyp_err[k[deletion], h[deletion]] = 1
        ki, ri = k[insertion], r[insertion]
        ref_err[ki, ri] = 1
        align[ki, ri] = i[insertion] - 1
        i = i - (diagonal | deletion)
        j = j - (diagonal | insertion)
        live = (i > 0) | (j > 0)
    return align, hyp_err, ref_err


@lru_cache(maxsize=4096)
def _exact_below(hyp_len: int, ref_len: int) -> int:
    """A distance below which the beam distance of two sequences of these lengths equals their
    Levenshtein distance: the smallest lower bound ``|i - j| + |(m - i) - (n - j)|`` on a path
    through a cell outside the beam (rows 1 to m - 1; rows 0 and m are whole)."""
    if hyp_len < 2:
        return 1 << 30
    ratio = np.float64(ref_len) / np.float64(hyp_len)
    beam = int(_beam_widths(np.asarray([ratio]))[0])
    i = np.arange(1, hyp_len, dtype=np.int64)[:, None]
    j = np.arange(ref_len + 1, dtype=np.int64)[None, :]
    diagonal = np.floor(i * ratio).astype(np.int64)
    outside = (j < np.maximum(diagonal - beam, 0)) | (j >= np.minimum(ref_len + 1, diagonal + beam))
    if not outside.any():
        return 1 << 30
    bound = np.abs(i - j) + np.abs((hyp_len - i) - (ref_len - j))
    return int(bound[outside].min())


# ----------------------------------------------------------------------------------------------
# the shift search
# ----------------------------------------------------------------------------------------------


def _insert_at(
    start: np.ndarray, size: np.ndarray, to: np.ndarray, hyp_len: np.ndarray
) -> np.ndarray:
    """Where sacrebleu's ``_perform_shift`` puts a block ``[start, start + size)`` moved to
    target ``to``, as a position in the words without the block: ``to`` before the block,
    ``to - size`` after it, ``min(to, m - size)`` for a target inside it or just after it."""
    return np.where(
        to < start, to, np.where(to > start + size, to - size, np.minimum(to, hyp_len - size))
    )


def _shifted(
    hyp: np.ndarray, start: np.ndarray, size: np.ndarray, to: np.ndarray, hyp_len: np.ndarray
) -> np.ndarray:
    """``hyp`` rows ``(rows, A)`` with the block ``[start, start + size)`` moved to target
    ``to`` (:func:`_insert_at`)."""
    q = _insert_at(start, size, to, hyp_len)[:, None]
    s, n = start[:, None], size[:, None]
    p = np.arange(hyp.shape[1], dtype=np.int64)[None, :]
    rest = np.where(p < q, p, p - n)
    source = np.where((p >= q) & (p < q + n), s + (p - q), np.where(rest < s, rest, rest + n))
    source = np.where(p < hyp_len[:, None], source, p)
    return np.take_along_axis(hyp, source, axis=1)


def _strings(ids: np.ndarray, lengths: np.ndarray) -> list[str]:
    """Each row of word ids ``(rows, A)`` as a string of ``lengths[row]`` code points."""
    if ids.size == 0:
        return ["" for _ in range(ids.shape[0])]
    points = ids.astype(np.uint32)
    points += (points >= 0xD800).astype(np.uint32) * np.uint32(0x800)  # no surrogates
    text = np.ascontiguousarray(points).tobytes().decode("utf-32-le")
    width = ids.shape[1]
    return [text[r * width : r * width + m] for r, m in enumerate(lengths.tolist())]


class _Search:
    """The shift search of a batch of pairs (word ids local to each pair, all lengths >= 1)."""

    def __init__(
        self, hyp: np.ndarray, ref: np.ndarray, hyp_len: np.ndarray, ref_len: np.ndarray
    ) -> None:
        self.hyp = hyp
        self.ref = ref
        self.hyp_len = hyp_len
        self.ref_len = ref_len
        self.ref_strings = _strings(np.where(ref >= 0, ref, 0), ref_len)
        self.exact = np.fromiter(
            map(_exact_below, hyp_len.tolist(), ref_len.tolist()), np.int64, hyp_len.shape[0]
        )
        self.checked = np.zeros(hyp_len.shape[0], dtype=np.int64)
        self.table = _NO_TABLE

    def run(self) -> np.ndarray:
        pairs = self.hyp.shape[0]
        checked = self.checked = np.zeros(pairs, dtype=np.int64)
        shifts = np.zeros(pairs, dtype=np.int64)
        edits = np.zeros(pairs, dtype=np.int64)
        active = np.arange(pairs, dtype=np.int64)
        while active.size:
            longest = int(self.hyp_len[active].max())
            widest = int(self.ref_len[active].max())
            hyp = self.hyp[active, :longest]
            ref = self.ref[active, :widest]
            hyp_len, ref_len = self.hyp_len[active], self.ref_len[active]
            table = _beam_table(hyp, ref, hyp_len, ref_len, keep=True)
            distance = table[np.arange(active.size), hyp_len, ref_len].astype(np.int64)
            align, hyp_err, ref_err = _trace(table, hyp, ref, hyp_len, ref_len)
            self.table = table  # the rows a shifted hypothesis shares with this one
            found = self._candidates(hyp, ref, hyp_len, ref_len, align, hyp_err, ref_err, active)
            owner, start, size, to, tried = found
            checked[active] += tried
            gain = np.zeros(active.size, dtype=np.int64)
            best = np.zeros((active.size, 3), dtype=np.int64)
            if owner.size:
                delta = self._gains(active, distance, owner, start, size, to)
                order = np.lexsort((-to, -start, size, delta, owner))
                last = order[np.r_[owner[order][1:] != owner[order][:-1], True]]
                winners = owner[last]
                gain[winners] = delta[last]
                best[winners] = np.stack([start[last], size[last], to[last]], axis=1)
            move = (gain > 0) & (checked[active] < MAX_SHIFT_CANDIDATES)
            stop = ~move
            edits[active[stop]] = distance[stop] + shifts[active[stop]]
            if move.any():
                rows = active[move]
                moved = _shifted(
                    self.hyp[rows], best[move, 0], best[move, 1], best[move, 2], self.hyp_len[rows]
                )
                self.hyp[rows] = moved
                shifts[rows] += 1
            active = active[move]
        self.table = _NO_TABLE
        return edits

    def _candidates(
        self,
        hyp: np.ndarray,
        ref: np.ndarray,
        hyp_len: np.ndarray,
        ref_len: np.ndarray,
        align: np.ndarray,
        hyp_err: np.ndarray,
        ref_err: np.ndarray,
        active: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The shifts sacrebleu tries this round, in its order, within each pair's remaining
        budget: ``(pair, start, size, target)`` arrays and the number tried per pair."""
        pairs, longest = hyp.shape
        widest = ref.shape[1]
        tried = np.zeros(pairs, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int64)
        # equal words within the shift distance, padded by a row and a column of False
        equal = np.zeros((pairs, longest + 1, widest + 1), dtype=np.bool_)
        equal[:, :longest, :widest] = hyp[:, :, None] == ref[:, None, :]
        h_pos = np.arange(longest + 1)[:, None]
        r_pos = np.arange(widest + 1)[None, :]
        equal &= np.abs(h_pos - r_pos) <= MAX_SHIFT_DIST
        flat = equal.reshape(-1)
        starts = np.flatnonzero(flat)
        if starts.size == 0:
            return empty, empty, empty, empty, tried
        run = np.ones(starts.size, dtype=np.int64)
        alive = np.ones(starts.size, dtype=np.bool_)
        step = widest + 2
        top = flat.size - 1
        for m in range(1, MAX_SHIFT_SIZE):
            alive &= flat[np.minimum(starts + m * step, top)]
            if not alive.any():
                break
            run += alive
        plane = (longest + 1) * (widest + 1)
        owner = starts // plane
        h = (starts % plane) // (widest + 1)
        r = starts % (widest + 1)
        # every (h, r, size) with size 1..run, in sacrebleu's order (h, r, size)
        first = np.cumsum(run) - run
        group = np.repeat(np.arange(starts.size), run)
        size = np.arange(group.size) - first[group] + 1
        owner, h, r = owner[group], h[group], r[group]
        hyp_cum = np.concatenate([np.zeros((pairs, 1), np.int64), hyp_err.cumsum(axis=1)], axis=1)
        ref_cum = np.concatenate([np.zeros((pairs, 1), np.int64), ref_err.cumsum(axis=1)], axis=1)
        aligned = align[owner, r]
        keep = (
            (hyp_cum[owner, h + size] > hyp_cum[owner, h])
            & (ref_cum[owner, r + size] > ref_cum[owner, r])
            & ~((h <= aligned) & (aligned < h + size))
        )
        owner, h, r, size = owner[keep], h[keep], r[keep], size[keep]
        if owner.size == 0:
            return empty, empty, empty, empty, tried
        # targets: after the word aligned to each reference position r - 1 .. r + size - 1
        count_t = size + 1
        first_t = np.cumsum(count_t) - count_t
        block = np.repeat(np.arange(owner.size), count_t)
        offset = np.arange(block.size) - first_t[block] - 1
        position = r[block] + offset
        target = np.where(position < 0, 0, align[owner[block], np.maximum(position, 0)] + 1)
        new = np.ones(block.size, dtype=np.bool_)
        new[1:] = (offset[1:] == -1) | (target[1:] != target[:-1])
        per_block = np.add.reduceat(new.astype(np.int64), first_t)
        # the budget: a pair stops after the block that reaches its remaining number of tries
        done = np.cumsum(per_block)
        before = done - per_block
        base = np.zeros(pairs, dtype=np.int64)
        firsts = np.r_[True, owner[1:] != owner[:-1]]
        base[owner[firsts]] = before[firsts]
        remaining = MAX_SHIFT_CANDIDATES - self.checked[active]
        taken = (before - base[owner]) < remaining[owner]
        np.add.at(tried, owner[taken], per_block[taken])
        pick = new & taken[block]
        chosen = block[pick]
        return owner[chosen], h[chosen], size[chosen], target[pick], tried

    def _gains(
        self,
        active: np.ndarray,
        distance: np.ndarray,
        owner: np.ndarray,
        start: np.ndarray,
        size: np.ndarray,
        to: np.ndarray,
    ) -> np.ndarray:
        """How much each tried shift lowers its pair's beam edit distance, exactly wherever it
        can decide the pair's best shift.

        rapidfuzz's Levenshtein distance ``d`` of a shifted hypothesis is its beam distance when
        ``d`` is below the pair's bound (:func:`_exact_below`); above it, the beam distance is
        at least ``d``, so ``distance - d`` is an upper bound of the gain. A shift whose bound
        is not positive, or whose rank with the bound in place of its gain, ``(gain, size,
        -start, -target)``, is below the best exact shift of its pair, cannot be chosen; the
        others get their beam distance, best-ranked first, until none is left."""
        found = self._levenshtein(active, owner, start, size, to)
        pair = active[owner]
        exact = found < self.exact[pair]
        gain = np.asarray(distance[owner] - found, dtype=np.int64)
        if exact.all():
            return gain
        longest = int(self.hyp_len[pair].max())
        key = self._rank(gain, size, start, to, longest)
        if key is None:  # too long to rank in one integer: every shift exactly
            unsure = np.flatnonzero(~exact)
            gain[unsure] = distance[owner[unsure]] - self._beam(
                active, owner, start, size, to, unsure
            )
            return gain
        pairs = distance.shape[0]
        while True:
            best = np.full(pairs, -1, dtype=np.int64)
            settled = exact & (gain > 0)
            np.maximum.at(best, owner[settled], key[settled])
            open_ = np.flatnonzero(~exact & (gain > 0) & (key > best[owner]))
            if open_.size == 0:
                return gain
            # the best-ranked few of each pair first: their exact gains prune the rest
            order = open_[np.lexsort((-key[open_], owner[open_]))]
            first = np.r_[True, owner[order][1:] != owner[order][:-1]]
            starts = np.flatnonzero(first)
            rank = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
            pick = order[rank < 16]
            gain[pick] = distance[owner[pick]] - self._beam(active, owner, start, size, to, pick)
            exact[pick] = True
            key[pick] = self._rank(gain[pick], size[pick], start[pick], to[pick], longest)

    def _rank(
        self, gain: np.ndarray, size: np.ndarray, start: np.ndarray, to: np.ndarray, longest: int
    ) -> np.ndarray | None:
        """``(gain, size, -start, -target)`` as one increasing integer (None if it would not fit
        in 63 bits)."""
        bits = (longest + 1).bit_length()
        span = int(self.hyp_len.max() + self.ref_len.max())
        if (2 * span + 1).bit_length() + 4 + 2 * bits > 62:
            return None
        key = ((gain + span) * 16 + size) << (2 * bits)
        return np.asarray(key + ((longest - start) << bits) + (longest - to), dtype=np.int64)

    def _levenshtein(
        self,
        active: np.ndarray,
        owner: np.ndarray,
        start: np.ndarray,
        size: np.ndarray,
        to: np.ndarray,
    ) -> np.ndarray:
        """rapidfuzz's Levenshtein distance of every shifted hypothesis to its reference."""
        out = np.empty(owner.size, dtype=np.int64)
        pair = active[owner]
        longest = int(self.hyp_len[pair].max())
        per = max(1, _CANDIDATE_CELLS // max(longest, 1))
        for lo in range(0, owner.size, per):
            sl = slice(lo, lo + per)
            rows = pair[sl]
            hyp_len = self.hyp_len[rows]
            words = _shifted(self.hyp[rows, :longest], start[sl], size[sl], to[sl], hyp_len)
            queries = _strings(np.where(words >= 0, words, 0), hyp_len)
            choices = [self.ref_strings[p] for p in rows.tolist()]
            found = cpdist(queries, choices, scorer=Levenshtein.distance, dtype=np.int64)
            out[sl] = np.asarray(found, dtype=np.int64).reshape(-1)
        return out

    def _beam(
        self,
        active: np.ndarray,
        owner: np.ndarray,
        start: np.ndarray,
        size: np.ndarray,
        to: np.ndarray,
        which: np.ndarray,
    ) -> np.ndarray:
        """The beam edit distance of the shifts at ``which``, each from the last row it shares
        with its unshifted hypothesis (the row of the first word it moves)."""
        q = _insert_at(start[which], size[which], to[which], self.hyp_len[active[owner[which]]])
        first = np.minimum(start[which], q)
        order = np.argsort(first, kind="stable")
        which, first = which[order], first[order]
        out = np.empty(which.size, dtype=np.int64)
        rows_all = active[owner[which]]
        longest = int(self.hyp_len[rows_all].max())
        widest = int(self.ref_len[rows_all].max())
        per = max(1, _CELLS // ((longest + 1) * (widest + 1)) * 4)
        for lo in range(0, which.size, per):
            pick = which[lo : lo + per]
            rows = rows_all[lo : lo + per]
            hyp_len = self.hyp_len[rows]
            words = _shifted(self.hyp[rows, :longest], start[pick], size[pick], to[pick], hyp_len)
            head = first[lo : lo + per]
            initial = self.table[owner[pick], head, : widest + 1]
            out[lo : lo + per] = _beam_distances(
                words, self.ref[rows, :widest], hyp_len, self.ref_len[rows], head, initial
            )
        result = np.empty_like(out)
        result[order] = out
        return result


# ----------------------------------------------------------------------------------------------
# edits of many pairs
# ----------------------------------------------------------------------------------------------


def _padded(
    ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int, fill: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``ids[starts[k] : starts[k] + lengths[k]]`` padded with ``fill`` to ``width``, and
    the row and column of every word."""
    rows = np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    column = np.arange(rows.shape[0], dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    out = np.full((lengths.shape[0], max(width, 1)), fill, dtype=np.int64)
    out[rows, column] = ids[np.repeat(starts, lengths) + column]
    return out, rows, column


def _batches(size: np.ndarray) -> list[tuple[int, int]]:
    """Cut pairs sorted by ``size`` (ascending) into runs of at most ``_CELLS`` table cells."""
    out = []
    lo, n = 0, int(size.shape[0])
    while lo < n:
        hi = min(n, lo + max(1, _CELLS // (int(size[lo]) + 1) ** 2))
        while hi > lo + 1 and (hi - lo) * (int(size[hi - 1]) + 1) ** 2 > _CELLS:
            hi = lo + max(1, _CELLS // (int(size[hi - 1]) + 1) ** 2)
        out.append((lo, hi))
        lo = hi
    return out


def _edits_of_ids(
    hyp_ids: np.ndarray, hyp_len: np.ndarray, ref_ids: np.ndarray, ref_len: np.ndarray
) -> np.ndarray:
    edits = np.where(ref_len == 0, hyp_len, np.where(hyp_len == 0, ref_len, 0)).astype(np.int64)
    work = np.flatnonzero((hyp_len > 0) & (ref_len > 0))
    if work.size == 0:
        return edits
    hyp_start = np.cumsum(hyp_len) - hyp_len
    ref_start = np.cumsum(ref_len) - ref_len
    size = np.maximum(hyp_len[work], ref_len[work])
    order = np.argsort(size, kind="stable")
    work, size = work[order], size[order]
    vocab = int(max(hyp_ids.max(initial=0), ref_ids.max(initial=0))) + 1
    for lo, hi in _batches(size):
        rows = work[lo:hi]
        m, n = hyp_len[rows], ref_len[rows]
        hyp, h_rows, h_cols = _padded(hyp_ids, hyp_start[rows], m, int(m.max()), -1)
        ref, r_rows, r_cols = _padded(ref_ids, ref_start[rows], n, int(n.max()), -2)
        # word ids local to each pair: 0, 1, 2, ... (short strings for rapidfuzz)
        keys = np.concatenate(
            [h_rows * vocab + hyp[h_rows, h_cols], r_rows * vocab + ref[r_rows, r_cols]]
        )
        distinct, inverse = np.unique(keys, return_inverse=True)
        local = inverse.reshape(-1) - np.searchsorted(
            distinct, np.concatenate([h_rows, r_rows]) * vocab
        )
        split = h_rows.shape[0]
        hyp[h_rows, h_cols] = local[:split]
        ref[r_rows, r_cols] = local[split:]
        edits[rows] = _Search(hyp, ref, m.astype(np.int64), n.astype(np.int64)).run()
    return edits


def _ids(
    hyps: Sequence[Sequence[Hashable]], refs: Sequence[Sequence[Hashable]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    with collector_paused():
        vocab: dict[Hashable, int] = {}
        numbers = count()
        hyp_ids = np.fromiter(map(vocab.setdefault, chain.from_iterable(hyps), numbers), np.int64)
        ref_ids = np.fromiter(map(vocab.setdefault, chain.from_iterable(refs), numbers), np.int64)
    hyp_len = np.fromiter(map(len, hyps), np.int64, len(hyps))
    ref_len = np.fromiter(map(len, refs), np.int64, len(refs))
    return hyp_ids, hyp_len, ref_ids, ref_len


def ter_edits_batch(
    hypotheses: Sequence[Sequence[Hashable]], references: Sequence[Sequence[Hashable]]
) -> np.ndarray:
    """TER edits (shifts plus beam edit distance) of every (hypothesis words, reference words)
    pair: sacrebleu's ``translation_edit_rate(hyp, ref)[0]`` of each."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    return _edits_of_ids(*_ids(hypotheses, references))


def ter_edits(hypothesis: Sequence[Hashable], reference: Sequence[Hashable]) -> int:
    """TER edits of one pair of word lists."""
    return int(ter_edits_batch([hypothesis], [reference])[0])


# ----------------------------------------------------------------------------------------------
# statistics and scores
# ----------------------------------------------------------------------------------------------


def _reference_lists(references: Sequence[str | Sequence[str]]) -> list[Sequence[str]]:
    out: list[Sequence[str]] = []
    for i, refs in enumerate(references):
        if isinstance(refs, str):
            out.append((refs,))
            continue
        if len(refs) == 0:
            raise ValueError(f"record {i} has no reference")
        out.append(refs)
    return out


def ter_stats_batch(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> np.ndarray:
    """sacrebleu's TER statistics ``[edits, average reference length]`` of every hypothesis,
    shape ``(n, 2)``. ``references[i]`` is one reference text or a list of them (any number, at
    least one): the edits are those of the closest reference, the length the mean of all."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    options = {
        "normalized": normalized,
        "no_punct": no_punct,
        "asian_support": asian_support,
        "case_sensitive": case_sensitive,
    }
    ref_lists = _reference_lists(references)
    counts = np.fromiter(map(len, ref_lists), np.int64, len(ref_lists))
    with collector_paused():
        hyp_words = [ter_words(h, **options) for h in hypotheses]
        ref_words = [ter_reference_words(r, **options) for r in chain.from_iterable(ref_lists)]
    owner = np.repeat(np.arange(len(hyp_words)), counts)
    paired = [hyp_words[i] for i in owner.tolist()]
    edits = ter_edits_batch(paired, ref_words)
    lengths = np.fromiter(map(len, ref_words), np.float64, len(ref_words))
    out = np.zeros((len(hyp_words), 2), dtype=np.float64)
    if owner.size:
        first = np.cumsum(counts) - counts
        out[:, 0] = np.minimum.reduceat(edits, first)
        out[:, 1] = np.add.reduceat(lengths, first) / counts
    return out


def ter_stats(
    hypothesis: str,
    references: str | Sequence[str],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> np.ndarray:
    """TER statistics ``[edits, average reference length]`` of one hypothesis."""
    rows = ter_stats_batch(
        [hypothesis],
        [references],
        normalized=normalized,
        no_punct=no_punct,
        asian_support=asian_support,
        case_sensitive=case_sensitive,
    )
    return np.asarray(rows[0], dtype=np.float64)


def ter(stats: np.ndarray) -> np.ndarray:
    """sacrebleu's TER (0-100 and above; lower is better) from (summed) statistics
    ``(..., 2)``: ``100 * edits / length``, or 100 (edits against empty references) or 0 (none)
    where the length is 0."""
    s = np.asarray(stats, dtype=np.float64)
    if s.shape[-1] < 2:
        raise ValueError(f"TER statistics have width 2, got {s.shape[-1]}")
    edits, length = s[..., 0], s[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(
            length > 0, edits / np.where(length > 0, length, 1.0), np.where(edits > 0, 1.0, 0.0)
        )
    return np.asarray(100 * value, dtype=np.float64)


def ter_corpus(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> float:
    """sacrebleu's corpus TER (``TER(...).corpus_score(hyps, refs).score``)."""
    stats = ter_stats_batch(
        hypotheses,
        references,
        normalized=normalized,
        no_punct=no_punct,
        asian_support=asian_support,
        case_sensitive=case_sensitive,
    )
    return float(ter(stats.sum(axis=0)))


def ter_sentence(
    hypotheses: Sequence[str],
    references: Sequence[str | Sequence[str]],
    *,
    normalized: bool = False,
    no_punct: bool = False,
    asian_support: bool = False,
    case_sensitive: bool = False,
) -> np.ndarray:
    """sacrebleu's sentence TER of every hypothesis."""
    stats = ter_stats_batch(
        hypotheses,
        references,
        normalized=normalized,
        no_punct=no_punct,
        asian_support=asian_support,
        case_sensitive=case_sensitive,
    )
    return ter(stats)
