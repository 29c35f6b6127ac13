"""sacrebleu's ``intl`` tokenizer: mteval-v14's international tokenisation.

The rules (``mteval-v14.pl``, ``tokenization_international``), applied in order to the whole line,
each substitution running left to right over non-overlapping matches:

1. a punctuation character (Unicode category P*) preceded by a character that is not a number
   (not N*) is split off: ``x.`` -> ``x . `` (the pair is consumed: in ``a..`` only the first
   ``.`` is split by this rule);
2. a punctuation character followed by a character that is not a number is split off:
   ``.x`` -> `` . x``;
3. every symbol (category S*: math, currency, modifier and other symbols, emoji) is split off;

then the line is split on whitespace. A point or comma between two digits (``3.5``, ``2,000``)
stays inside its number; so does a point after a number at the very end of a line (the original
script's own quirk, kept by sacrebleu).

The categories are those of the ``regex`` module's ``\\p{P}``, ``\\p{S}`` and ``\\p{N}``, the
module sacrebleu itself uses, so both agree on every code point whatever Unicode version that
module carries. Python's :mod:`unicodedata` is older (Unicode 14.0 on Python 3.11): built from it,
the same classes would miss about 1,500 code points that ``regex`` knows (recent emoji and
currency signs among them), and the same rules written for :mod:`re` with those classes ran about
2.5x slower than ``regex`` in our measurement. ``regex`` is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["tokenize_intl"]

_RULES: list[tuple[Callable[[str, str], str], str]] = []


def _rules() -> list[tuple[Callable[[str, str], str], str]]:
    if not _RULES:
        import regex

        patterns: list[tuple[Any, str]] = [
            (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
            (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
            (regex.compile(r"(\p{S})"), r" \1 "),
        ]
        _RULES.extend((pattern.sub, replacement) for pattern, replacement in patterns)
    return _RULES


def tokenize_intl(line: str) -> list[str]:
    """The tokens of sacrebleu's ``TokenizerV14International`` (``tokenize="intl"``)."""
    for substitute, replacement in _rules():
        line = substitute(replacement, line)
    return line.split()
