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
  ``二十一``; ``两`` before 百/千/万 and ``〇`` for 零 are accepted), read by cn2an's strict mode
  (standard spellings by :mod:`.numerals`, which tests hold equal to it):
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

A :class:`LawBook` maps law names (canonical names and aliases, normalised and without the
``中华人民共和国`` prefix) to the law's article ranges (``1-1260``) and its sub-articles
(``20之1``), which exist only when listed. ``LawBook.builtin()`` is the packaged list
(``pingce/data/laws.csv``); ``LawBook.load`` reads a user's list as CSV, JSONL or SQLite.
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ..errors import InputError
from .numerals import standard_integer

__all__ = [
    "Article",
    "Citation",
    "LawBook",
    "LawEntry",
    "LawVerdict",
    "Malformed",
    "VerdictStatus",
    "normalize_citation",
    "parse_citation",
]

VerdictStatus = Literal["ok", "unknown_law", "no_such_article", "malformed"]

BUILTIN = "builtin"
"""The name of the packaged law list among the sources of :meth:`LawBook.from_sources`."""

_BUILTIN_SOURCE = "pingce/data/laws.csv"
_PRC = "中华人民共和国"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_COLUMNS = ("law", "articles", "aliases", "sub_articles")
_REQUIRED = ("law", "articles")
_CHECK_CACHE = 1 << 17

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
    value = standard_integer(text)
    if value is not None:  # cn2an's strict value, without its import (1.3 G instructions)
        return value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import cn2an  # 0.2 s: only for a numeral that is not of the standard form

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


# ----------------------------------------------------------------------------- law lists


@dataclass(frozen=True, slots=True)
class LawEntry:
    """One law of a list: its canonical name, article ranges ``(low, high)`` (inclusive),
    aliases, listed sub-articles ``(article, sub)``, and where it was read."""

    law: str
    articles: tuple[tuple[int, int], ...]
    aliases: tuple[str, ...] = ()
    sub_articles: frozenset[tuple[int, int]] = frozenset()
    source: str | None = None
    line: int | None = None

    def __post_init__(self) -> None:
        if not self.articles:
            raise ValueError(f"{self.law}: no article ranges")
        for low, high in self.articles:
            if not 1 <= low <= high:
                raise ValueError(f"{self.law}: invalid article range ({low}, {high})")


@dataclass(frozen=True, slots=True)
class LawVerdict:
    """The check of one citation: ``law`` is the canonical name when the law is known;
    ``reason`` says in words what is wrong (None when ``ok``)."""

    status: VerdictStatus
    law: str | None
    reason: str | None = None


class _Law:
    """A law as the book keeps it: merged ranges searched by bisection."""

    __slots__ = ("description", "highs", "lows", "name", "subs", "where")

    def __init__(self, entry: LawEntry):
        merged: list[list[int]] = []
        for low, high in sorted(entry.articles):
            if merged and low <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], high)
            else:
                merged.append([low, high])
        self.lows = tuple(low for low, _ in merged)
        self.highs = tuple(high for _, high in merged)
        self.subs = entry.sub_articles
        self.name = entry.law
        self.where = entry.source or "<laws>"
        if entry.line is not None:
            self.where += f":{entry.line}"
        self.description = self._describe()

    def has(self, article: Article) -> bool:
        if article.sub is not None:
            return (article.number, article.sub) in self.subs
        i = bisect.bisect_right(self.lows, article.number) - 1
        return i >= 0 and article.number <= self.highs[i]

    def same_articles(self, other: _Law) -> bool:
        return (self.lows, self.highs, self.subs) == (other.lows, other.highs, other.subs)

    def _describe(self) -> str:
        pairs = zip(self.lows, self.highs, strict=True)
        ranges = [str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in pairs]
        text = "articles " + (", ".join(ranges[:8]) + (", ..." if len(ranges) > 8 else ""))
        if self.subs:
            text += " and " + ", ".join(str(Article(n, s)) for n, s in sorted(self.subs))
        return text


class LawBook:
    """Law names -> valid articles; :meth:`check` tells whether a cited article exists.

    Names are matched exactly after :func:`normalize_citation` and without the 中华人民共和国
    prefix. Two entries may share a name (a user list repeating a built-in law) only when they
    list the same articles; otherwise the book is not made (an :class:`InputError` naming both
    lines). The book does not change once made, so :meth:`check` keeps its answers by text.
    """

    def __init__(self, entries: Iterable[LawEntry]):
        self.entries = tuple(entries)
        self._laws: dict[str, _Law] = {}
        for entry in self.entries:
            law = _Law(entry)
            names = [(entry.law, "law"), *((alias, "aliases") for alias in entry.aliases)]
            for name, field in names:
                known = self._laws.get(_law_key(name))
                if known is None:
                    continue
                if not known.same_articles(law):
                    raise InputError(
                        f"law {name!r} has {known.description} at {known.where} but "
                        f"{law.description} at {law.where}",
                        source=entry.source,
                        line=entry.line,
                        field=field,
                        value=name,
                    )
                law = known  # the same law: its other names join the first entry
            for name, _ in names:
                self._laws.setdefault(_law_key(name), law)
        self._cached_check = lru_cache(maxsize=_CHECK_CACHE)(self._check)

    @classmethod
    def builtin(cls) -> LawBook:
        """The packaged law list (``pingce/data/laws.csv``), made once."""
        return _builtin_book()

    @classmethod
    def load(cls, path: str | Path) -> LawBook:
        """A user's law list: SQLite (by the file's first 16 bytes; a table ``laws``), JSONL
        (suffix ``.jsonl``/``.ndjson``/``.json`` or a first character ``{``) or CSV with the
        header ``law,articles,aliases`` (``sub_articles`` optional)."""
        return cls(_read_source(Path(path)))

    @classmethod
    def from_sources(cls, sources: Iterable[str | Path]) -> LawBook:
        """One book of several lists; the source ``"builtin"`` is the packaged list (a file
        named so is ``./builtin``)."""
        entries: list[LawEntry] = []
        for source in sources:
            if isinstance(source, str) and source == BUILTIN:
                entries.extend(_builtin_entries())
            else:
                entries.extend(_read_source(Path(source)))
        return cls(entries)

    def check(self, text: str) -> LawVerdict:
        """Whether the citation ``text`` names a law of the book and articles it has."""
        return self._cached_check(text)

    def _check(self, text: str) -> LawVerdict:
        parsed = parse_citation(text)
        if isinstance(parsed, Malformed):
            return LawVerdict("malformed", None, f"malformed citation: {parsed.reason}")
        law = self._laws.get(parsed.law)
        if law is None:
            return LawVerdict("unknown_law", None, f"law 《{parsed.law}》 is not in the law list")
        missing = [article for article in parsed.articles if not law.has(article)]
        if missing:
            reason = f"{parsed.law} has {law.description}; cited {', '.join(map(str, missing))}"
            if not law.subs and any(article.sub is not None for article in missing):
                reason += " (no sub-articles are listed)"
            return LawVerdict("no_such_article", law.name, reason)
        return LawVerdict("ok", law.name)


@lru_cache(maxsize=1)
def _builtin_entries() -> tuple[LawEntry, ...]:
    text = (resources.files("pingce") / "data" / "laws.csv").read_text(encoding="utf-8")
    return tuple(_read_csv(text, _BUILTIN_SOURCE))


@lru_cache(maxsize=1)
def _builtin_book() -> LawBook:
    return LawBook(_builtin_entries())


# ----------------------------------------------------------------------------- reading


def _read_source(path: Path) -> list[LawEntry]:
    source = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("law list not found", source=source) from None
    except OSError as error:
        raise InputError(
            f"cannot read the law list: {error.strerror or error}", source=source
        ) from None
    if data[:16] == _SQLITE_MAGIC:
        return _read_sqlite(path, source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError("not UTF-8 text", source=source, line=line) from None
    if path.suffix.lower() in (".jsonl", ".ndjson", ".json") or text.lstrip().startswith("{"):
        return _read_jsonl(text, source)
    return _read_csv(text, source)


def _read_csv(text: str, source: str) -> list[LawEntry]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    if not header:
        raise InputError("no header: the first line must be law,articles,aliases", source=source)
    columns = [column.strip() for column in header]
    _check_columns(columns, source, 1, "column")
    entries = []
    for row in reader:
        line = reader.line_num
        if not row:
            continue  # a blank line
        if len(row) > len(columns):
            message = f"{len(row)} fields but the header has {len(columns)}"
            raise InputError(message, source=source, line=line, value=row)
        record: dict[str, Any] = dict(zip(columns, row, strict=False))  # short rows: empty fields
        entries.append(_entry(record, source, line))
    return entries


def _read_jsonl(text: str, source: str) -> list[LawEntry]:
    entries = []
    for line, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as error:
            message = f"not valid JSON: {getattr(error, 'msg', error)}"
            raise InputError(message, source=source, line=line, value=raw.strip()) from None
        if not isinstance(record, dict):
            raise InputError("expected a JSON object", source=source, line=line, value=record)
        _check_columns(list(record), source, line, "key", required=())
        entries.append(_entry(record, source, line))
    return entries


def _read_sqlite(path: Path, source: str) -> list[LawEntry]:
    import sqlite3

    try:
        uri = path.resolve().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as db:
            found = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = 'laws'"
            ).fetchone()
            if found is None:
                message = "no table 'laws' (with columns law, articles, aliases)"
                raise InputError(message, source=source)
            present = {str(row[1]).lower() for row in db.execute("PRAGMA table_info(laws)")}
            for column in _REQUIRED:
                if column not in present:
                    raise InputError("table 'laws' has no such column", source=source, field=column)
            selected = [column for column in _COLUMNS if column in present]
            query = f"SELECT rowid, {', '.join(selected)} FROM laws ORDER BY rowid"
            rows = db.execute(query).fetchall()
    except sqlite3.Error as error:
        raise InputError(f"cannot read the SQLite database: {error}", source=source) from None
    return [_entry(dict(zip(selected, row[1:], strict=True)), source, int(row[0])) for row in rows]


def _check_columns(
    columns: Sequence[str], source: str, line: int, kind: str, required: Sequence[str] = _REQUIRED
) -> None:
    for column in columns:
        if column not in _COLUMNS:
            message = f"unknown {kind}; the {kind}s are law, articles, aliases, sub_articles"
            raise InputError(message, source=source, line=line, field=column)
    for column in required:
        if column not in columns:
            raise InputError(f"missing {kind}", source=source, line=line, field=column)


def _entry(record: dict[str, Any], source: str, line: int) -> LawEntry:
    """A :class:`LawEntry` from one row's raw values; an :class:`InputError` names the field."""

    def fail(field: str, message: str) -> InputError:
        return InputError(message, source=source, line=line, field=field, value=record.get(field))

    law = record.get("law")
    if not isinstance(law, str) or not law.strip():
        raise fail("law", "a law name is required")
    if not _law_key(law):
        raise fail("law", "the law name is empty once quotes and title marks are removed")
    try:
        articles = _ranges(record.get("articles"))
    except ValueError as error:
        raise fail("articles", str(error)) from None
    aliases = record.get("aliases")
    if aliases is None:
        aliases = []
    elif isinstance(aliases, str):
        aliases = aliases.split("|")
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise fail("aliases", "expected names separated by | (or a JSON list of strings)")
    names = tuple(a.strip() for a in aliases if a.strip())
    if any(not _law_key(a) for a in names):
        raise fail("aliases", "an alias is empty once quotes and title marks are removed")
    try:
        subs = _sub_articles(record.get("sub_articles"))
    except ValueError as error:
        raise fail("sub_articles", str(error)) from None
    return LawEntry(law.strip(), articles, names, subs, source, line)


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")
_SUB = re.compile(r"(\d+)之(\d+)")
_LIST_SPLIT = re.compile(r"[;,]")


def _ranges(value: Any) -> tuple[tuple[int, int], ...]:
    """Article ranges from ``"1-98"``/``"1-10;12-20"``, ``[[1, 98]]``, ``[1, 2, 3]`` or an
    integer; ValueError with the reason."""
    if value is None or value == "":
        raise ValueError("articles are required (like 1-98)")
    if isinstance(value, bool):
        raise ValueError("expected article ranges like 1-98")
    if isinstance(value, int):
        value = [value]
    if isinstance(value, str):
        ranges = _text_ranges(value)
    elif isinstance(value, list):
        ranges = [_listed_range(item) for item in value]
    else:
        raise ValueError("expected article ranges like 1-98 (or [[1, 98]] or [1, 2, 3])")
    if not ranges:
        raise ValueError("articles are required (like 1-98)")
    for low, high in ranges:
        if low < 1:
            raise ValueError(f"article numbers start at 1, not {low}")
        if high < low:
            raise ValueError(f"range {low}-{high} runs backwards")
    return tuple(ranges)


def _text_ranges(value: str) -> list[tuple[int, int]]:
    """The ranges of ``"1-10;12-20"`` (full-width digits and separators read as ASCII)."""
    ranges = []
    for part in _LIST_SPLIT.split(unicodedata.normalize("NFKC", value)):
        part = part.strip()
        if not part:
            continue
        match = _RANGE.fullmatch(part)
        if match is None:
            raise ValueError(f"{part!r} is not an article number or range (like 1-98)")
        low = int(match.group(1))
        ranges.append((low, low if match.group(2) is None else int(match.group(2))))
    return ranges


def _listed_range(item: Any) -> tuple[int, int]:
    """One item of a YAML list of articles: a number or a ``[low, high]`` pair."""
    if _is_int(item):
        return (item, item)
    if isinstance(item, list) and len(item) == 2 and all(_is_int(n) for n in item):
        return (item[0], item[1])
    raise ValueError(f"{item!r} is not an article number or a [low, high] pair")


def _sub_articles(value: Any) -> frozenset[tuple[int, int]]:
    """Sub-articles from ``"20之1;30之2"`` or ``["20之1"]``; ValueError with the reason."""
    if value is None or value == "":
        return frozenset()
    parts = _LIST_SPLIT.split(value) if isinstance(value, str) else value
    if not isinstance(parts, list) or not all(isinstance(p, str) for p in parts):
        raise ValueError("expected sub-articles like 20之1;30之2")
    subs = set()
    for part in parts:
        text = unicodedata.normalize("NFKC", part).strip()
        if not text:
            continue
        match = _SUB.fullmatch(text)
        if match is None or int(match.group(1)) < 1 or int(match.group(2)) < 1:
            raise ValueError(f"{part!r} is not a sub-article like 20之1")
        subs.add((int(match.group(1)), int(match.group(2))))
    return frozenset(subs)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
