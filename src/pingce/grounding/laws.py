"""Does a cited law article exist? Chinese law citations, parsed and checked against a law list.

An LLM reviewing a contract cites laws as evidence: ``《中华人民共和国民法典》第五百八十五条``,
``民法典第585条``, ``《劳动合同法》第 39 条第一款``, ``《民法典》第五百七十七条、第五百八十四条``.
A citation is a hallucination when its law is not in the list (``unknown_law``) or one of its
articles is not in the law (``no_such_article``); a text in which no law and article can be read
is ``malformed``.

Normalising (:func:`normalize_citation`): NFKC (full-width digits, letters, brackets and spaces
become ASCII), all whitespace removed, quotes and title marks 《》〈〉“”"'‘’「」『』 removed, a
version note such as ``(2012修正)`` removed, and brackets around the law name at the start
(``【民法典】第585条``, ``根据(民法典)第585条``) removed. Brackets inside a name
(``...的解释(一)``) are kept.

Parsing (:func:`parse_citation`), on the normalised text:

* The articles start at the first ``第N条`` (the ``第`` may be missing: ``民法典585条``). ``N`` is
  Arabic or a Chinese numeral of the standard form (``五百八十五``, ``一百零五``, ``十``,
  ``二十一``; ``两`` before 百/千/万 and ``〇`` for 零 are accepted), read by cn2an's strict mode:
  colloquial or digit-by-digit forms (``一百十``, ``五百八``, ``一二三``) are malformed rather
  than guessed.
* An article may carry a sub-article ``之N`` (``第二十条之一`` is ``Article(20, 1)``) and paragraph
  and item parts (``第一款``, ``第一、二款``, ``第(三)项``), which are read and ignored.
* Several articles may follow one law, separated by 、 , ; 和 及 以及 与 或 至 到. For a range
  (``第1条至第5条``) both ends are checked, not the articles between them.
* After the last article only ``规定`` (``的规定``, ``之规定``, ``相关规定``, ``等规定``) and final
  punctuation may follow. Anything else (a second law, a comment) makes the citation malformed,
  so that an article of a second law is never passed unchecked.
* The law is the text before the first article without a leading 根据/依据/依照/按照, without
  the ``中华人民共和国`` prefix, and without the parts of the law named before the article:
  ``第三编``, ``第一分编``, ``第四章``, ``第二节``, and named books such as ``合同编`` or
  ``合同编通则`` after a law name ending in 法, 法典, 条例, 规定, 办法, 解释, 决定, 规则, 细则
  or ``)``.
* ``第零条`` (like ``第0条``) is a well-formed citation of article 0, which no law has: the check
  says ``no_such_article``, the answer for any article number outside the law.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "Article",
    "Citation",
    "Malformed",
    "normalize_citation",
    "parse_citation",
]

_PRC = "中华人民共和国"

# ----------------------------------------------------------------------------- citations


class Article(NamedTuple):
    """An article number and its sub-article: ``第二十条之一`` is ``Article(20, 1)``."""

    number: int
    sub: int | None = None

    def __str__(self) -> str:
        return f"第{self.number}条" + ("" if self.sub is None else f"之{self.sub}")


@dataclass(frozen=True, slots=True)
class Citation:
    """A law (as written, normalised, without the 中华人民共和国 prefix) and its articles."""

    law: str
    articles: tuple[Article, ...]


@dataclass(frozen=True, slots=True)
class Malformed:
    """A text in which no law and article could be read; ``reason`` says what is missing."""

    reason: str


_DROP = str.maketrans("", "", "《》〈〉“”\"'‘’「」『』")
_SPACE = re.compile(r"[\s\u200b\u200c\u200d\u2060\ufeff]+")
_VERSION = re.compile(r"\((?:\d{4}年?(?:修正|修订|修改)?(?:本|版)?|修正本?|修订本?)\)")
_LEADING_GROUP = re.compile(r"^(根据|依据|依照|按照)?[(\[【〔]([^()\[\]【】〔〕]+)[)\]】〕]")

_N = "[0-9零〇一二两三四五六七八九十百千万]+"
_SEP = "(?:、|,|;|和|及|以及|与|或|至|到)"
_ITEM = rf"\(?{_N}\)?"
_ARTICLE = re.compile(
    rf"第?({_N})条(?!例)(?:之({_N}))?"
    rf"(?:第?{_N}(?:{_SEP}第?{_N})*款(?:{_SEP}第?{_N}款)*)?"
    rf"(?:第?{_ITEM}(?:{_SEP}{_ITEM})*项(?:{_SEP}第?{_ITEM}项)*)?"
)
_SEPARATOR = re.compile(f"{_SEP}")
_TAIL = re.compile(r"等?(?:(?:的|之)?(?:相关)?规定)?[。.,;:!]*")
_PREAMBLE = re.compile(r"^(?:根据|依据|依照|按照)")
_NUMBERED_PART = re.compile(rf"第{_N}(?:分编|编|章|节)$")
_NAMED_PART = re.compile(
    r"^(.*(?:法典|法|条例|规定|办法|解释|决定|规则|细则|\)))[\u4e00-\u9fff]{1,8}?分?编(?:通则)?$"
)
_TWO = re.compile("两(?=[百千万])")


def normalize_citation(text: str) -> str:
    """The citation with the differences that do not matter removed (see the module text):
    NFKC, no whitespace, no quotes or title marks, no version note, no brackets around the
    leading law name."""
    text = _SPACE.sub("", unicodedata.normalize("NFKC", text)).translate(_DROP)
    if "(" in text:
        text = _VERSION.sub("", text)
    return _LEADING_GROUP.sub(r"\1\2", text)


@lru_cache(maxsize=4096)
def _number(numeral: str) -> int | None:
    """The integer of an Arabic or standard Chinese numeral; None when it is not one."""
    if numeral.isascii():
        return int(numeral)  # the pattern admits only the digits 0-9 among ASCII characters
    text = _TWO.sub("二", numeral.replace("〇", "零"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import cn2an  # 0.2 s: only when a Chinese numeral is read

        try:
            value = cn2an.cn2an(text, "strict")
        except ValueError:
            return None
    return value if isinstance(value, int) else None


def _law_name(head: str) -> str:
    """The law of the text before the first article: no preamble, no PRC prefix, no parts."""
    law = _PREAMBLE.sub("", head)
    if law.startswith(_PRC):
        law = law[len(_PRC) :]
    while True:
        stripped = _NAMED_PART.sub(r"\1", _NUMBERED_PART.sub("", law))
        if stripped == law:
            return law.rstrip(",:;、")
        law = stripped


def _law_key(name: str) -> str:
    """The key a law list files a name under: normalised, without the PRC prefix."""
    key = normalize_citation(name)
    return key[len(_PRC) :] if key.startswith(_PRC) else key


def parse_citation(text: str) -> Citation | Malformed:
    """The law and the articles of a citation (rules in the module text), or why there are
    none."""
    normal = normalize_citation(text)
    if not normal:
        return Malformed("empty citation")
    match = _ARTICLE.search(normal)
    if match is None:
        return Malformed(f"no article number in {text.strip()!r}")
    start = match.start()
    articles: list[Article] = []
    while True:
        number, sub = _number(match.group(1)), match.group(2)
        if number is None:
            return Malformed(
                f"article number {match.group(1)!r} is not an Arabic or standard Chinese numeral"
            )
        sub_number = None if sub is None else _number(sub)
        if sub is not None and sub_number is None:
            return Malformed(f"sub-article {'之' + sub!r} is not an Arabic or Chinese numeral")
        articles.append(Article(number, sub_number))
        end = match.end()
        separator = _SEPARATOR.match(normal, end)
        following = separator and _ARTICLE.match(normal, separator.end())
        if not following:
            break
        match = following
    cited = normal[start:end]
    rest = normal[end:]
    if not _TAIL.fullmatch(rest):
        return Malformed(f"unexpected text {rest!r} after {cited!r}")
    law = _law_name(normal[:start])
    if not law:
        return Malformed(f"no law name before {cited!r}")
    return Citation(law, tuple(articles))
