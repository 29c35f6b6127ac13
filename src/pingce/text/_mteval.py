"""The rules of mteval-v13a that sacrebleu's 13a tokeniser (:mod:`pingce.text.bleu`) and its
Tercom normaliser (:mod:`pingce.text.ter`, ``normalized``) apply alike."""

from __future__ import annotations

import re

__all__ = ["split_numbers", "unescape_entities"]

_DOT_AFTER = re.compile(r"([^0-9])([\.,])")
_DOT_BEFORE = re.compile(r"([\.,])([^0-9])")
_DIGIT_DASH = re.compile(r"([0-9])(-)")


def unescape_entities(text: str) -> str:
    """The XML entities ``&quot; &amp; &lt; &gt;`` decoded, in that order (so ``&amp;lt;`` is
    ``&lt;``)."""
    if "&" not in text:
        return text
    return (
        text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    )


def split_numbers(text: str) -> str:
    """``.`` and ``,`` spaced apart unless after a digit, then unless before a digit; ``-``
    after a digit spaced apart (each step skipped when its characters are absent)."""
    if "." in text or "," in text:
        text = _DOT_BEFORE.sub(r" \1 \2", _DOT_AFTER.sub(r"\1 \2 ", text))
    if "-" in text:
        text = _DIGIT_DASH.sub(r"\1 \2 ", text)
    return text
