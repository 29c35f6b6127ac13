"""Tokenisers for Chinese, English and mixed text.

* ``jieba``: jieba's accurate mode (``jieba.cut(text)``), token for token. jieba segments a text
  block by block (runs of Han characters, letters and digits; everything else a character at a
  time); this module caches the segmentation of each block, so text that repeats across records
  (argument values, function names) is segmented once. Blocks of Han characters only are cut
  with rjieba's (jieba-rs) route through the dictionary and jieba's own HMM, where that is
  proven to give jieba's words (:mod:`pingce.text.jieba_fast`: jieba's own dictionary,
  untouched; anything else, or no rjieba, stays with jieba). jieba's dictionary is loaded only
  when a block needs it. The output equals ``list(jieba.cut(t))``.
* ``cjk``: one token per CJK character, Latin words and numbers kept whole.
* ``whitespace``: ``str.split()``.
* ``rouge_score``: Google rouge-score's default tokeniser (``tokenize.tokenize`` without a
  stemmer; Hugging Face ``evaluate``'s ROUGE uses it): the text lowercased, every run of
  characters other than ``a-z`` and ``0-9`` made a space, split. Every Chinese character (and
  every other non-ASCII letter or digit, unless it lowercases to ASCII, as the Kelvin sign does)
  is dropped. ``rouge_score_stemmed`` is the same with rouge-score's ``use_stemmer=True``: tokens
  longer than 3 characters go through nltk's ``PorterStemmer()`` (its default mode, as
  rouge-score 0.1.2 builds it; nltk is imported on first use: ``pip install 'pingce[stem]'``).

A tokeniser that turns non-empty text into no tokens (rouge-score's default tokeniser on Chinese)
is a trap: :func:`warn_if_empty` reports it.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable
from itertools import chain
from typing import Any

from . import jieba_fast

__all__ = [
    "TOKENIZERS",
    "EmptyTokensWarning",
    "cjk_chars",
    "drops_letters",
    "get_tokenizer",
    "jieba_words",
    "load_jieba",
    "porter_stem",
    "rouge_score_stemmed",
    "rouge_score_tokens",
    "stemmer_available",
    "warn_if_empty",
    "whitespace",
]

Tokenizer = Callable[[str], list[str]]


class EmptyTokensWarning(UserWarning):
    """A tokeniser produced no tokens from non-empty text."""


_jieba: Any = None
_BLOCKS: dict[str, tuple[str, ...]] = {}
_BLOCK_CACHE_LIMIT = 2_000_000


_module: Any = None


def _import_jieba() -> Any:
    """The ``jieba`` module, its dictionary not necessarily loaded (jieba loads it on the first
    cut that needs it)."""
    global _module
    if _module is None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        _module = jieba
    return _module


def load_jieba() -> Any:
    """The ``jieba`` module with its dictionary loaded (about a second, once per process)."""
    global _jieba
    if _jieba is None:
        jieba = _import_jieba()
        jieba.initialize()
        _jieba = jieba
    return _jieba


def _dictionary_state(jb: Any) -> tuple[Any, ...]:
    """Changes when jieba's dictionary changes: loaded, another one set, words added, deleted
    or tuned (``add_word``, ``load_userdict``, ``del_word``, ``suggest_freq``)."""
    dt = jb.dt
    return (
        dt.dictionary,
        dt.initialized,
        id(dt.FREQ),
        int(dt.total),
        len(dt.FREQ),
        len(jb.finalseg.Force_Split_Words),
    )


_STATE: list[tuple[Any, ...]] = []
_CUTTER: list[Callable[[str], list[str]] | None] = [None]


def jieba_words(text: str) -> list[str]:
    """``list(jieba.cut(text))`` (accurate mode, HMM on), with each block's result cached.

    The cache is emptied when jieba's dictionary changes (loaded, a word added or a user
    dictionary loaded), so the result always equals a fresh ``jieba.cut``; whether rjieba may cut
    the Han-only blocks is decided anew then. When every block of ``text`` is cached already (the
    common case: argument values, names and punctuation repeat), the words are gathered without a
    Python loop.
    """
    jb = _module or _import_jieba()
    state = _dictionary_state(jb)
    if not _STATE or _STATE[0] != state:
        _BLOCKS.clear()
        _STATE[:] = [state]
        _CUTTER[0] = jieba_fast.cutter(jb)
    fast = _CUTTER[0]
    if fast is not None and jieba_fast.whole_text(text):
        return fast(text)
    blocks = jb.re_han_default.split(text)
    try:
        return list(chain.from_iterable(map(_BLOCKS.__getitem__, blocks)))
    except KeyError:
        pass
    if len(_BLOCKS) + len(blocks) > _BLOCK_CACHE_LIMIT:
        _BLOCKS.clear()
    for block in blocks:
        if block not in _BLOCKS:
            _BLOCKS[block] = _segment_block(jb, block, fast)
    return list(chain.from_iterable(map(_BLOCKS.__getitem__, blocks)))


def _segment_block(
    jb: Any, block: str, fast: Callable[[str], list[str]] | None = None
) -> tuple[str, ...]:
    """jieba's words of one block of ``re_han_default.split``: a run of Han characters, letters,
    digits and ``+#&._%-`` is cut with the dictionary and HMM (by ``fast``, when given and the
    block is Han characters only); any other block yields ``\r\n`` and each whitespace
    character whole, every other character alone."""
    if not block:
        return ()
    if jb.re_han_default.match(block):
        if fast is not None and jieba_fast.han_only(block):
            return tuple(fast(block))
        return tuple(jb.dt.cut(block))
    skip = jb.re_skip_default
    parts: list[str] = []
    for piece in skip.split(block):
        if skip.match(piece):
            parts.append(piece)
        else:
            parts.extend(piece)
    return tuple(parts)


_CJK = re.compile(
    r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]"
    r"|[\U00020000-\U0002FA1F]"
    r"|[A-Za-z0-9]+(?:[._'-][A-Za-z0-9]+)*"
    r"|\S",
)


def cjk_chars(text: str) -> list[str]:
    """One token per CJK character (and full-width punctuation); Latin words and numbers whole."""
    return _CJK.findall(text)


def whitespace(text: str) -> list[str]:
    """Tokens separated by whitespace."""
    return text.split()


_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


def rouge_score_tokens(text: str) -> list[str]:
    """rouge-score's default tokeniser without a stemmer: lowercase, every run of characters
    other than ``a-z0-9`` becomes a space, then the words between spaces (none empty)."""
    return _NON_ALNUM.sub(" ", text.lower()).split()


_STEMMER: list[Any] = []
_STEMS: dict[str, str] = {}
_STEM_CACHE_LIMIT = 1_000_000


def stemmer_available() -> bool:
    """Whether nltk (for rouge-score's Porter stemmer) can be imported."""
    import importlib.util

    return importlib.util.find_spec("nltk") is not None


def porter_stem(token: str) -> str:
    """``nltk.stem.porter.PorterStemmer().stem(token)`` (nltk imported on first use; stems
    cached: the stemmer is a pure function of the word)."""
    stem = _STEMS.get(token)
    if stem is None:
        if not _STEMMER:
            try:
                from nltk.stem import porter
            except ImportError:
                raise ImportError(
                    "rouge-score's stemmer (use_stemmer) needs nltk: pip install 'pingce[stem]' "
                    "(or pip install nltk)"
                ) from None
            _STEMMER.append(porter.PorterStemmer())
        if len(_STEMS) >= _STEM_CACHE_LIMIT:
            _STEMS.clear()
        stem = _STEMS[token] = str(_STEMMER[0].stem(token))
    return stem


def rouge_score_stemmed(text: str) -> list[str]:
    """rouge-score's default tokeniser with ``use_stemmer=True``: tokens longer than 3
    characters stemmed by nltk's Porter stemmer, then anything not ``[a-z0-9]+`` dropped."""
    tokens = [porter_stem(t) if len(t) > 3 else t for t in rouge_score_tokens(text)]
    return [t for t in tokens if _VALID_TOKEN.match(t)]


_NON_ASCII_ALNUM = re.compile(r"[^\W\x00-\x7f]")
"""An alphanumeric character outside ASCII (``\\w`` is ``str.isalnum`` plus ``_``)."""


def drops_letters(text: str) -> bool:
    """Whether rouge-score's tokeniser drops a letter or digit of ``text``: whether the text,
    lowercased as it does, has an alphanumeric character outside ASCII (a Chinese character, an
    accented letter; not the Kelvin sign, which lowercases to ``k``)."""
    lowered = text.lower()
    return not lowered.isascii() and _NON_ASCII_ALNUM.search(lowered) is not None


TOKENIZERS: dict[str, Tokenizer] = {
    "jieba": jieba_words,
    "cjk": cjk_chars,
    "whitespace": whitespace,
    "rouge_score": rouge_score_tokens,
    "rouge_score_stemmed": rouge_score_stemmed,
}


def get_tokenizer(name: str) -> Tokenizer:
    """A tokeniser by name (``jieba``, ``cjk``, ``whitespace``, ``rouge_score``,
    ``rouge_score_stemmed``)."""
    try:
        return TOKENIZERS[name]
    except KeyError:
        raise ValueError(
            f"unknown tokenizer {name!r}; choose one of {sorted(TOKENIZERS)}"
        ) from None


def warn_if_empty(texts: list[str], tokens: list[list[str]], tokenizer: str) -> int:
    """Warn once if some non-empty texts gave no tokens; return how many did."""
    empty = sum(1 for t, toks in zip(texts, tokens, strict=True) if t.strip() and not toks)
    if empty:
        warnings.warn(
            f"tokenizer {tokenizer!r} turned {empty} non-empty text(s) into no tokens; "
            "scores on them are 0 (for Chinese use 'jieba' or 'cjk')",
            EmptyTokensWarning,
            stacklevel=2,
        )
    return empty
