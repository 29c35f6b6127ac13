"""Splitting a document into sentences, Chinese-aware, and the windows of adjacent sentences a
quotation may span.

A sentence ends at 。！？； (or their ASCII forms !?;), at a line break, or at an ASCII period
followed by white space; closing quotes and brackets after the end mark stay with the sentence.
A period inside a number (3.5) or an abbreviation without a following space does not end one.
"""

from __future__ import annotations

import re

__all__ = ["join_sentences", "split_sentences"]

_SENTENCE = re.compile(
    r"""[^。！？；!?;\n]+?(?:[。！？；!?;]+|\.(?=\s)|$)[」』”’）)"']*"""
    r"""|[。！？；!?;]+[」』”’）)"']*""",
)


_MARKS = "。！？；!?;.」』”’）)\"' \t\r\f\v"


def split_sentences(text: str) -> list[str]:
    """The non-empty sentences of ``text``, stripped, in order (a piece made only of end marks
    and closing quotes is not a sentence)."""
    return [
        piece.strip()
        for line in text.splitlines()
        for piece in _SENTENCE.findall(line)
        if piece.strip(_MARKS)
    ]


def join_sentences(sentences: list[str]) -> str:
    """Adjacent sentences as one text: joined directly, or by a space after a sentence that
    ends with an ASCII character (English)."""
    out = sentences[0]
    for sentence in sentences[1:]:
        out += (" " if out[-1:].isascii() else "") + sentence
    return out
