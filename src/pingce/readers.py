"""Reading records: one reader per format, each yielding :class:`Block` s of records.

:mod:`pingce.records` checks the blocks and keeps the declared fields by column; what a reader
does is turn bytes (or a data frame) into records with their line numbers:

- JSONL (``.jsonl``, ``.ndjson``, a ``.json`` file of one object a line): blocks of whole lines
  parsed together by orjson, the bytes as they are when the file is UTF-8;
- JSON (``.json``): an array of records, or an object holding one list of records;
- CSV (``.csv``, delimiter sniffed from the header line among ``, ; tab |``) and TSV (``.tsv``);
- any of those compressed (``.gz``);
- Parquet (``.parquet``, pyarrow) and Arrow-backed frames (a pyarrow Table, a polars
  DataFrame, a Hugging Face ``datasets.Dataset``): only the columns the suite reads, a batch at a
  time, as columns (:attr:`Block.columns`); a pandas DataFrame column by column;
- Excel (``.xlsx``, openpyxl, the first sheet or ``FILE.xlsx#Sheet``);
- standard input (``-``): an array if it starts with ``[``, JSONL with ``{``, else CSV.

Text is UTF-8 unless a byte-order mark says UTF-16/32 or the first 64 KB are not UTF-8, in which
case charset-normalizer guesses (GB18030 or cp1252 when they read as well as the guess; only a
code page in which the text is plausible); bytes that are UTF-8 but for a few are UTF-8 with bad
bytes; ``encoding`` forces one. A byte that does not decode is an :class:`InputError` naming
the byte offset and the line. A reading records its encoding (:attr:`Reading.encoding`).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import datetime
import gzip
import io
import json
import math
import os
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import orjson

from .errors import InputError
from .progress import Advance

__all__ = [
    "CSV_FIELD_LIMIT",
    "RECORDS_PER_BLOCK",
    "Block",
    "BlockStream",
    "Reading",
    "TextKind",
    "Unit",
    "Wanted",
    "detect_encoding",
    "frame_reading",
    "is_frame",
    "iterable_reading",
    "jsonl_range_reading",
    "parquet_groups_reading",
    "path_reading",
    "text_cell",
]

TextKind = Literal["label", "number", "string", "value", "json", "boolean"]
"""How a cell of text is read (:func:`text_cell`): a field's kind, or for a JSON field whose
parser takes numbers or booleans, ``number`` or ``boolean``."""
Unit = Literal["line", "row", "record"]

RECORDS_PER_BLOCK = 16384
"""Records of an iterable, a CSV or Excel file, a frame or a Parquet file checked together (JSONL is
read in blocks of bytes)."""
CSV_FIELD_LIMIT = 16 * 1024 * 1024
"""The longest CSV field read (characters): a whole contract or dialogue fits."""
_BLOCK_BYTES = 1 << 18
"""JSONL is read about this many bytes at a time; the lines of a block are parsed and checked
together (a list comprehension per field instead of a method call per record)."""
_PREFIX_BYTES = 1 << 16
"""How much of a text file is looked at to tell its encoding (and a CSV file's delimiter)."""
_DELIMITERS = ",;\t|"

_BOM = b"\xef\xbb\xbf"
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),  # before UTF-16 LE, whose mark it starts with
    (b"\x00\x00\xfe\xff", "utf-32"),
    (_BOM, "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_UTF8_SHARE = 0.8
"""A text whose bytes beyond ASCII are at least this share in valid UTF-8 sequences is UTF-8
with a few bad bytes, not another encoding. Text in a legacy code page seldom forms UTF-8
sequences: Latin-1 or cp1252 almost never (an accented letter is followed by ASCII), GBK for
about a quarter of its bytes (at most 0.72 over 2,000 random runs of 16 Chinese characters)."""
_PREFERRED = {
    "gb18030": frozenset({"gb18030", "gbk", "gb2312", "cp936"}),
    "cp1252": frozenset({"cp1252"}),
}
"""Readings preferred when charset-normalizer finds them about as good as its best (within
:data:`_AS_GOOD`), with the code pages they stand for: GB18030 (a superset of GBK and GB2312:
Excel's CSV on a Chinese Windows; rarer characters later in the file still read) and cp1252
(Excel's on a Western one; French text reads about as well in cp1257 or cp1250, with ``è`` as
``č``). With a few Chinese characters among ASCII, or a short Chinese file, many code pages
read the bytes about as well (cp949, Latin ones), and pingce's users write Chinese far more
often."""
_AS_GOOD = 0.05
"""How much more "chaos" (charset-normalizer's measure of unlikely characters) a preferred
reading may have than the best."""
_LETTERS = frozenset({"Lu", "Ll", "Lt", "Lo", "Mn", "Mc"})
"""Letters and their combining marks (not modifier letters such as ``ˇ``, which mojibake in
Central European pages is full of)."""
_MOSTLY = 0.8
"""What "mostly" means in :func:`_plausible`: CJK characters among those beyond ASCII, Latin
letters within ASCII words among the letters."""
_OTHER_CJK = ("cp932", "euc_jp", "big5", "cp949")
"""CJK code pages whose text may break GB18030's byte pairs (Shift-JIS's half-width katakana):
a text that is whole in one of them is not GB18030 with a damaged byte."""
_FEW_BAD = 0.01
"""At most this share of a text's bytes beyond ASCII may be bad (or three, a byte put into a pair
leaving the pair unread too, when they are at most a tenth) for :func:`_nearly_cjk` to call it
GB18030 with a damaged byte."""
_CJK_NAMES = ("CJK ", "HIRAGANA", "KATAKANA", "HANGUL", "BOPOMOFO", "IDEOGRAPHIC")
_TYPOGRAPHIC = frozenset(
    chr(code)
    for low, high in ((0xA0, 0xBF), (0xD7, 0xD7), (0xF7, 0xF7), (0x2010, 0x2044),
                      (0x20A0, 0x20CF), (0x2122, 0x2122))
    for code in range(low, high + 1)
)  # fmt: skip
"""Punctuation and signs people type beyond ASCII: Latin-1's (no-break space, ¡ ¿ « » ° ±
§ ©, ×, ÷), dashes, quotes, ellipsis and bullets, currency signs (€), ™."""
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]")
_IN_A_WORD = re.compile(r"(?<=[A-Za-z])[^\x00-\x7f]|[^\x00-\x7f](?=[A-Za-z])")
"""A character beyond ASCII next to an ASCII letter."""
_ASCII = bytes(range(0x80))
_DIGITS = b"0123456789"
_DIGITS_AS_ZEROS = bytes.maketrans(_DIGITS, b"0" * len(_DIGITS))
_LONG_DIGIT_RUN = b"0" * 19


@dataclass
class Block:
    """Records read together, with their line numbers; ``error`` is the error of the line that
    stopped the reading (after the last of these records), None when there is none.

    A columnar block (Parquet, frames, CSV, Excel) has ``columns`` instead of ``records``: the
    values of each column read, in record order (a column the source lacks is not a key)."""

    numbers: Sequence[int]
    records: list[Any]
    error: InputError | None = None
    columns: dict[str, list[Any]] | None = None
    found: Sequence[str] | None = None
    """A columnar block's source columns, all of them (what a missing field's error lists)."""


BlockStream = Generator[Block, None, None]
"""What a reader yields: a stream of record blocks (a generator, so that stopping early closes
its file; not the statistic blocks of `engine.plan.StatBlocks`)."""


@dataclass(frozen=True)
class Wanted:
    """What a suite reads from each record: the columns (the first key of each field's path and
    of the id's path) and the kind of cell of each field read whole from a column (how a cell
    of text is read: :func:`text_cell`)."""

    columns: frozenset[str]
    kinds: Mapping[str, TextKind]

    def typed(self, name: str, values: list[Any]) -> list[Any]:
        """The values of column ``name`` of a source with types (Parquet, a frame): as they are,
        but for a JSON field's strings that hold a JSON array or object, which are read as that
        value (how lists of calls of varying arguments fit in a column)."""
        if self.kinds.get(name) != "json" or str not in set(map(type, values)):
            return values
        return [_json_text(value) if type(value) is str else value for value in values]


def _json_text(text: str) -> Any:
    """``text`` as the JSON array or object it holds, else as it is."""
    if text.lstrip()[:1] in ("[", "{"):
        try:
            return _json_line(text.encode("utf-8"))  # integers beyond 64 bits kept exact
        except json.JSONDecodeError:  # orjson's error is one too
            pass  # the field's parser says what is wrong with it (or reads it leniently)
        except RecursionError:  # the json module on text nested too deep for it
            pass
    return text


@dataclass
class Reading:
    """A source opened for reading: its name in messages, what its numbers count, its blocks."""

    label: str
    blocks: BlockStream
    """The blocks; closed (which closes the file) when the reading stops, done or not."""
    unit: Unit = "line"
    """``line`` (JSONL, CSV, an iterable's positions), ``row`` (Excel rows, frame rows) or
    ``record`` (the records of a JSON array or a Parquet file, from 1)."""
    own_objects: bool = True
    """Whether every object made while reading is pingce's (the garbage collector may be paused:
    pingce's readers make no reference cycles); False for a caller's iterable."""
    encoding: str | None = None
    """The text encoding read (Python's name: ``utf-8``, ``gb18030``, ...); None for a source
    that is not text (Parquet, Excel, a frame, an iterable)."""
    detected: bool = True
    """Whether ``encoding`` was detected (else forced by ``--encoding``)."""
    reads_as_utf8: bool = False
    """Whether the text, read in a forced encoding other than UTF-8, holds characters beyond
    ASCII that UTF-8 reads as well (its first 64 KB): the usual sign of a UTF-8 file forced into
    a legacy code page, every such character then changed."""

    def encoding_note(self) -> str | None:
        """What to say of the encoding: nothing for UTF-8, else which one was read (a detected
        code page may be wrong, and everything read follows from it)."""
        if self.encoding is None or self.encoding in ("utf-8", "utf-8-sig"):
            return None
        how = "detected" if self.detected else "as --encoding asked"
        note = f"{self.label}: text read as {self.encoding} ({how})"
        if self.reads_as_utf8:
            note += (
                "; its characters beyond ASCII read as UTF-8 too, so if the text in the "
                "outputs looks wrong, leave --encoding out"
            )
        return note


# ----------------------------------------------------------------------------------- encodings


def detect_encoding(prefix: bytes, complete: bool, source: str) -> str:
    """The encoding of a text whose first bytes are ``prefix`` (all of it when ``complete``):
    the one its byte-order mark names, else UTF-8 when the prefix is UTF-8, else a legacy code
    page that reads it plausibly (:func:`_guess_encoding`).

    A prefix that is UTF-8 but for a few bytes (:data:`_UTF8_SHARE`) is UTF-8 with bad bytes, an
    :class:`InputError` naming the first one: another code page would read every byte, and every
    character beyond ASCII wrongly (Chinese as Cyrillic letters), without an error."""
    for mark, name in _BOMS:
        if prefix.startswith(mark):
            return name
    try:
        prefix.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        cut_short = exc.reason == "unexpected end of data" and exc.end == len(prefix)
        if cut_short and not complete:
            return "utf-8"  # a character cut by the end of the prefix
        not_utf8 = exc
    sample = prefix
    if not complete:
        end = prefix.rfind(b"\n") + 1
        sample = prefix[:end] if end else prefix
    line = prefix.count(b"\n", 0, not_utf8.start) + 1
    where = f"byte 0x{prefix[not_utf8.start]:02x} at byte offset {not_utf8.start}"
    if _mostly_utf8(sample):
        raise InputError(
            f"not UTF-8: {where} ({not_utf8.reason}), where the other bytes beyond ASCII of the "
            "first 64 KB are UTF-8; mend that byte, or pass --encoding NAME if the file is in "
            "another encoding",
            source=source,
            line=line,
        )
    nearly = _nearly_cjk(sample)
    if nearly is not None:
        encoding, bad = nearly
        raise InputError(
            f"not UTF-8, and not {encoding.upper()} but for byte 0x{sample[bad.start]:02x} at "
            f"byte offset {bad.start} ({bad.reason}): the other bytes read as Chinese text in "
            f"{encoding.upper()} (a legacy code page would read every byte, and every Chinese "
            "character wrongly); mend that byte, or pass --encoding NAME if the file is in "
            "another encoding",
            source=source,
            line=sample.count(b"\n", 0, bad.start) + 1,
        )
    guess = _guess_encoding(sample)
    if guess is None:
        raise InputError(
            f"cannot tell the text encoding: not UTF-8 ({where}) and no other encoding reads it "
            "plausibly; pass --encoding NAME (for example gb18030, utf-16) if it is text",
            source=source,
            line=line,
        )
    return guess


def _mostly_utf8(sample: bytes) -> bool:
    """Whether at least :data:`_UTF8_SHARE` of the bytes beyond ASCII of ``sample`` are in valid
    UTF-8 sequences (the bytes a decoding that ignores errors keeps)."""
    high = len(sample.translate(None, _ASCII))
    bad = len(sample) - len(sample.decode("utf-8", "ignore").encode("utf-8"))
    return high > 0 and high - bad >= _UTF8_SHARE * high


def _nearly_cjk(sample: bytes) -> tuple[str, UnicodeDecodeError] | None:
    """GB18030 and its first bad byte when ``sample`` is GB18030 text but for a few bytes (at
    most :data:`_FEW_BAD` of its bytes beyond ASCII; read without them, mostly CJK characters
    or letters, the pairs a damaged byte shifts being mostly CJK too): a file with a damaged
    byte, which a single-byte code page would read without an error and every character
    wrongly. Text in another code page breaks GB18030's byte pairs far more often (a Cyrillic
    word ending before a space, ``я`` as 0xff)."""
    high = len(sample.translate(None, _ASCII))
    try:
        sample.decode("gb18030")
        return None
    except UnicodeDecodeError as exc:
        first = exc
    for other in _OTHER_CJK:
        with contextlib.suppress(UnicodeDecodeError):
            sample.decode(other)
            return None  # whole in another CJK code page: charset-normalizer tells which
    kept = sample.decode("gb18030", "ignore")
    bad = len(sample) - len(kept.encode("gb18030"))
    if not high or bad > max(_FEW_BAD * high, min(3.0, high / 10)):
        return None
    beyond = _BEYOND_ASCII.findall(kept)
    words = sum(_is_cjk(char) or unicodedata.category(char) in _LETTERS for char in beyond)
    return ("gb18030", first) if beyond and words >= _MOSTLY * len(beyond) else None


def _guess_encoding(sample: bytes) -> str | None:
    """charset-normalizer's reading of ``sample``: among its readings within :data:`_AS_GOOD`
    of the best, one of :data:`_PREFERRED` first, else the best; and only a reading that is
    plausible (:func:`_plausible`). None when there is none."""
    from charset_normalizer import from_bytes

    matches = list(from_bytes(sample))
    if not matches:
        return None
    close = [m for m in matches if m.chaos <= matches[0].chaos + _AS_GOOD]
    for preferred, family in _PREFERRED.items():
        for match in close:
            names = {_codec_name(name) for name in match.could_be_from_charset}
            if names & family and _plausible(sample, preferred, match.coherence):
                return preferred
    for match in matches:
        if _plausible(sample, match.encoding, match.coherence):
            return _codec_name(match.encoding)
    return None


def _codec_name(name: str) -> str:
    return codecs.lookup(name).name


def _plausible(sample: bytes, encoding: str, coherence: float) -> bool:
    """Whether ``sample`` read in ``encoding`` looks like text someone wrote: every byte a
    character, no control, private or unassigned character beyond ASCII, and those characters

    - mostly CJK (Chinese, Japanese, Korean; charset-normalizer's language model says little
      of them), or
    - only typographic punctuation (quotes, dashes, currency signs), or
    - mostly letters or punctuation, and: Latin letters mostly within words of ASCII letters
      (``café``, ``Größe``: a wrong code page's mojibake makes runs of accented letters), or
      letters of another alphabet in a language charset-normalizer recognises (``coherence`` >
      0: a language's letter frequencies, which mojibake has not)."""
    try:
        text = sample.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    text = text.lstrip("\ufeff")
    counts = Counter(_BEYOND_ASCII.findall(text))
    total = sum(counts.values())
    letters = latin = cjk = typographic = 0
    for char, count in counts.items():
        category = unicodedata.category(char)
        if category in ("Cc", "Co", "Cn", "Cs"):
            return False
        if _is_cjk(char):
            cjk += count
        elif category in _LETTERS:
            letters += count
            latin += count if unicodedata.name(char, "").startswith("LATIN") else 0
        elif char in _TYPOGRAPHIC:
            typographic += count
    if cjk >= _MOSTLY * total or typographic == total:
        return True
    if letters + typographic < total / 2:
        return False
    if latin == letters:
        within = sum(1 for char in _IN_A_WORD.findall(text) if char.isalpha())
        return within >= _MOSTLY * letters
    return coherence > 0


def _is_cjk(char: str) -> bool:
    code = ord(char)
    if 0x3000 <= code <= 0x303F or 0xFF00 <= code <= 0xFFEF:  # CJK punctuation, full width
        return True
    return unicodedata.name(char, "").startswith(_CJK_NAMES)


def _decode_error(
    exc: UnicodeDecodeError,
    encoding: str,
    offset: int,
    newlines: int,
    source: str,
    forced: bool,
) -> InputError:
    """The error of a byte that does not decode: ``exc`` from decoding a chunk that starts at byte
    ``offset`` of the text, after ``newlines`` line ends."""
    before = codecs.decode(exc.object[: exc.start], encoding, "replace")
    line = newlines + before.count("\n") + 1
    bad = exc.object[exc.start]
    how = "" if forced else " (as the first 64 KB read); pass --encoding NAME (e.g. gb18030)"
    return InputError(
        f"cannot be read as {encoding}: byte 0x{bad:02x} at byte offset {offset + exc.start} "
        f"({exc.reason}){how}",
        source=source,
        line=line,
    )


def _text_chunks(
    read: Callable[[int], bytes], encoding: str, source: str, forced: bool
) -> Iterator[str]:
    """The text of a byte stream in ``encoding``, a chunk at a time, without a byte-order mark."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    offset = 0  # bytes given to the decoder so far
    newlines = 0
    first = True
    while True:
        data = read(_BLOCK_BYTES)
        pending = decoder.getstate()[0]
        try:
            text = decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise _decode_error(
                exc, encoding, offset - len(pending), newlines, source, forced
            ) from None
        except UnicodeError as exc:  # UTF-16 or UTF-32 without a byte-order mark
            name = codecs.lookup(encoding).name
            raise InputError(
                f"cannot be read as {name}: {exc}; the file has no byte-order mark, so name the "
                f"byte order: --encoding {name}-le or {name}-be",
                source=source,
                line=newlines + 1,
            ) from None
        offset += len(data)
        if first and text:
            first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        if text:
            newlines += text.count("\n")
            yield text
        if not data:
            return


def _text_lines(chunks: Iterable[str]) -> Iterator[str]:
    """Lines with their ends (``\\n``, ``\\r\\n`` or ``\\r``, as a file opened with
    ``newline=""`` gives them) of text given in chunks."""
    pending: list[str] = []  # the start of a line that did not end in the last chunk
    for chunk in chunks:
        if "\n" not in chunk and "\r" not in chunk:  # a long field: one join, not one per chunk
            pending.append(chunk)
            continue
        lines = io.StringIO("".join([*pending, chunk]), newline="").readlines()
        last = lines.pop()  # perhaps cut (or a "\r" whose "\n" comes next)
        pending = [last] if last else []
        yield from lines
    if pending:
        yield "".join(pending)


class _Stream:
    """A binary stream whose first bytes have been read to tell its encoding or format; ``read``
    gives them again first. ``tick`` reports the bytes read from the file to a progress bar."""

    def __init__(
        self, raw: IO[bytes], counted: IO[bytes] | None = None, advance: Advance | None = None
    ) -> None:
        self.raw = raw
        parts: list[bytes] = []
        size = 0
        while size < _PREFIX_BYTES:
            part = raw.read(_PREFIX_BYTES - size)
            if not part:
                break
            parts.append(part)
            size += len(part)
        self.prefix = b"".join(parts)
        self.complete = size < _PREFIX_BYTES
        self._pending = self.prefix
        self._counted = counted
        self._advance = advance
        self._done = 0

    def read(self, size: int) -> bytes:
        if self._pending:
            head, self._pending = self._pending[:size], self._pending[size:]
            if len(head) < size and not self.complete:
                head += self.raw.read(size - len(head))
            return head
        return self.raw.read(size)

    def tick(self) -> None:
        if self._advance is None or self._counted is None:
            return
        position = self._counted.tell()
        self._advance(position - self._done)
        self._done = position


# ---------------------------------------------------------------------------------------- JSONL


def _jsonl_blocks(
    chunks: Iterable[bytes], source: str, tick: Callable[[], None], first: int = 1
) -> BlockStream:
    """The records of JSONL text given in chunks of UTF-8 bytes, a block of whole lines at a
    time, the first line numbered ``first``; the block with a bad line ends at it and is the
    last."""
    number = first  # line number of the first line of the next block
    pending: list[bytes] = []  # the start of a line that did not end in the last chunk
    for data in chain(chunks, (b"",)):
        end = data.rfind(b"\n") + 1
        if data and not end:
            pending.append(data)
            continue
        text = b"".join([*pending, data[:end]]) if data else b"".join(pending)
        pending = [data[end:]] if data else []
        if not text:
            break
        if number == 1 and text.startswith(_BOM):
            text = text[3:]  # a UTF-8 byte-order mark
        lines = text.split(b"\n")
        terminated = not lines[-1]
        if terminated:
            lines.pop()
        block = _jsonl_block(lines, number, terminated, source, _may_hold_long_int(text))
        number += len(lines)
        tick()
        yield block
        if block.error is not None:
            break


def _may_hold_long_int(text: bytes) -> bool:
    """Whether ``text`` has a run of 19 digits or more: an integer there may be too long for
    orjson (which reads integers beyond 64 bits as floats; json keeps them exact)."""
    return _LONG_DIGIT_RUN in text.translate(_DIGITS_AS_ZEROS)


def _jsonl_block(
    lines: list[bytes], first: int, terminated: bool, source: str, long_ints: bool
) -> Block:
    """Parse ``lines`` (line ``first`` onwards; the last one ended by a newline when
    ``terminated``): all at once while they are plain, else one at a time."""
    if not long_ints:
        loads = orjson.loads
        try:
            return Block(range(first, first + len(lines)), [loads(line) for line in lines])
        except orjson.JSONDecodeError:
            kept = [i for i, line in enumerate(lines) if line.strip()]  # blank lines are skipped
            try:
                if len(kept) < len(lines):
                    return Block([first + i for i in kept], [loads(lines[i]) for i in kept])
            except orjson.JSONDecodeError:
                pass
    return _jsonl_lines_one_by_one(lines, first, terminated, source)


def _jsonl_lines_one_by_one(lines: list[bytes], first: int, terminated: bool, source: str) -> Block:
    numbers: list[int] = []
    records: list[Any] = []
    last = len(lines) - 1
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        whole = line + b"\n" if i < last or terminated else line  # the line as in the file
        try:
            records.append(_json_line(whole))
        except (orjson.JSONDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            return Block(numbers, records, _json_error(exc, whole, source, first + i))
        numbers.append(first + i)
    return Block(numbers, records)


_LONG_INT_DIGITS = 19


def _json_line(line: bytes) -> Any:
    # orjson reads integers beyond 64 bits as floats; json keeps them exact (a line with fewer
    # than 19 digits in all cannot hold one: skip the search)
    if len(line) - len(line.translate(None, _DIGITS)) >= _LONG_INT_DIGITS and _may_hold_long_int(
        line
    ):
        return json.loads(line)
    return orjson.loads(line)


_PASS_ENCODING = "pass --encoding NAME (for example gb18030)"
_CONVERT = (
    "the ray engine reads UTF-8: convert the file (iconv -f GB18030 -t UTF-8, say) or run it "
    "with the local engine and --encoding NAME"
)


def _json_error(exc: ValueError, line: bytes, source: str, number: int) -> InputError:
    try:
        snippet = line.decode("utf-8").strip()
    except UnicodeDecodeError as bad:
        return InputError(
            f"not UTF-8 text (byte 0x{line[bad.start]:02x} at byte {bad.start + 1} of the line); "
            + _PASS_ENCODING,
            source=source,
            line=number,
        )
    return InputError(
        "not valid JSON: "
        + (
            f"{exc.msg} at character {exc.pos + 1}"
            if isinstance(exc, json.JSONDecodeError)
            else str(exc)
        ),
        source=source,
        line=number,
        value=snippet,
    )


def _utf8_chunks(stream: _Stream, encoding: str, source: str, forced: bool) -> Iterator[bytes]:
    """The stream's bytes as UTF-8: as they are when they are UTF-8, else decoded and encoded
    again."""
    if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
        return iter(lambda: stream.read(_BLOCK_BYTES), b"")
    return (text.encode("utf-8") for text in _text_chunks(stream.read, encoding, source, forced))


# ----------------------------------------------------------------------------------------- JSON


def _json_document(
    stream: _Stream, encoding: str, source: str, forced: bool
) -> tuple[Any, bytes | None]:
    """The one JSON value of a whole stream, or (None, its UTF-8 text) when the text holds more
    than one value (JSON lines)."""
    text = b"".join(_utf8_chunks(stream, encoding, source, forced))
    skipped = 0  # bytes of a byte-order mark before the text (for byte offsets in errors)
    if text.startswith(_BOM):
        text, skipped = text[3:], 3
    if not text.strip():
        return [], None  # no records (the loader says the input is empty)
    try:
        if _may_hold_long_int(text):  # orjson reads integers beyond 64 bits as floats
            return json.loads(text), None
        return orjson.loads(text), None
    except json.JSONDecodeError as exc:  # orjson's error is one too
        if exc.msg.startswith(("unexpected content after document", "Extra data")):
            return None, text
        try:
            json.loads(text)
        except UnicodeDecodeError as err:  # UTF-8 by its byte-order mark, but for a byte
            line = text.count(b"\n", 0, err.start) + 1
            raise InputError(
                f"cannot be read as utf-8: byte 0x{text[err.start]:02x} at byte offset "
                f"{err.start + skipped} ({err.reason})",
                source=source,
                line=line,
            ) from None
        except json.JSONDecodeError as err:
            raise InputError(
                f"not valid JSON: {err.msg} at line {err.lineno} column {err.colno}", source=source
            ) from None
        except RecursionError:
            pass
        raise InputError(f"not valid JSON: {exc.msg}", source=source) from None


def _array_blocks(records: list[Any]) -> BlockStream:
    for start in range(0, len(records), RECORDS_PER_BLOCK):
        part = records[start : start + RECORDS_PER_BLOCK]
        yield Block(range(start + 1, start + 1 + len(part)), part)


def _records_in(
    document: dict[str, Any], key: str | None, wanted: frozenset[str], source: str
) -> Any:
    """The list of records an object holds: under ``key`` if given, else under its one key whose
    value is a list of objects. An object with a field the suite reads is itself a record."""
    if key is not None:
        if key not in document:
            raise InputError(
                f"no key {key!r} in the JSON object (its keys: {', '.join(map(repr, document))})",
                source=source,
            )
        found = document[key]
        if not isinstance(found, list):
            raise InputError(f"key {key!r} does not hold a list of records", source=source)
        return found
    if wanted & set(document):
        return [document]
    lists = [k for k, v in document.items() if isinstance(v, list) and v and _objects(v)]
    if len(lists) == 1:
        return document[lists[0]]
    if not lists:
        raise InputError(
            "the JSON object is not a record (it has no field the suite reads) and holds no list "
            "of records",
            source=source,
        )
    raise InputError(
        f"the JSON object holds several lists of records (under {', '.join(map(repr, lists))}); "
        f"name one as FILE#KEY (e.g. {source}#{lists[0]})",
        source=source,
    )


def _objects(values: list[Any]) -> bool:
    return all(isinstance(value, dict) for value in values)


# ------------------------------------------------------------------------------------ CSV, Excel


_BOOLEANS = {"true": True, "false": False}


def text_cell(text: str, kind: TextKind | None) -> Any:
    """A cell of text (CSV, or a text cell of a spreadsheet) as a record's value, by the kind of
    cell its field reads (:attr:`Wanted.kinds`; the one rule for every suite): an empty cell is
    missing (None); a ``number`` cell is parsed (a turn, a confidence, a latency; left as text
    when it is not a number, so that the error shows it); a ``boolean`` cell's ``true`` or
    ``false`` (any case: Excel writes ``TRUE``, pandas ``True``) is that boolean; a JSON field's
    cell that holds a JSON array or object is that value (a cell has no other way to hold a
    list); anything else stays text."""
    if text == "":
        return None
    if kind == "number":
        try:
            return float(text)
        except ValueError:
            return text
    if kind == "boolean":
        return _BOOLEANS.get(text.strip().casefold(), text)
    if kind == "json":
        return _json_text(text)
    return text


def _sniff_delimiter(header: str) -> str:
    try:
        return csv.Sniffer().sniff(header, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _csv_blocks(
    lines: Iterator[str],
    delimiter: str | None,
    wanted: Wanted,
    source: str,
    tick: Callable[[], None],
) -> BlockStream:
    first = next(lines, None)
    if first is None:
        return
    csv.field_size_limit(CSV_FIELD_LIMIT)  # the csv module's default is 131,072 characters
    row: list[str] = []
    text = _kept(chain((first,), lines), row)
    # strict: a quoted cell that never closes, or text after a closing quote, is an error (the
    # lenient reader takes the rest of the file into the cell, or joins the text to it)
    reader = csv.reader(text, delimiter=delimiter or _sniff_delimiter(first), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise _csv_error(exc, row, reader, source) from None
    if header is None:
        return
    row.clear()
    yield from _row_blocks(header, _numbered_csv_rows(reader, row, source), wanted, tick, source)


def _kept(lines: Iterable[str], row: list[str]) -> Iterator[str]:
    """``lines``, each also put in ``row`` (the CSV reader's row being read: one line, unless a
    quoted cell holds line breaks; cleared at each row's end), so that an error can find where
    a quote that never closes opened."""
    for line in lines:
        row.append(line)
        yield line


def _numbered_csv_rows(
    reader: Any, lines: list[str], source: str
) -> Iterator[tuple[int, Sequence[Any] | InputError]]:
    """The rows of a CSV reader with the line each ends on, then the error that stopped it (if
    any) in place of a row; a row whose cells are all empty is skipped, as a blank line is
    (",,," is what a spreadsheet writes for an empty row). ``lines``: the lines of the row
    being read (:func:`_kept`)."""
    clear = lines.clear
    try:
        for row in reader:
            clear()
            if any(row):
                yield reader.line_num, row
    except csv.Error as exc:
        yield reader.line_num, _csv_error(exc, lines, reader, source)


def _csv_error(exc: csv.Error, lines: list[str], reader: Any, source: str) -> InputError:
    """The error of a CSV reader, at the line where the quoted cell it is about opened (a quote
    that never closes is found at the end of the file, or of the longest cell read); ``lines``:
    the lines of the row it stopped in."""
    first = reader.line_num - len(lines) + 1  # the line the row starts on
    opened = _quote_opened(lines, reader.dialect.delimiter)
    if opened is None:
        return InputError(f"not valid CSV: {exc}", source=source, line=reader.line_num)
    index, column, still_open = opened
    cell = lines[index][column:].rstrip("\r\n")
    line = first + index
    if still_open:
        return InputError(
            "a quoted cell opens here and is never closed (an unterminated quote: the rest of "
            f"the file would be one cell; {exc})",
            source=source,
            line=line,
            value=cell,
        )
    closes = f" on line {reader.line_num}, where the quoted cell opened here closes" * (
        reader.line_num > line
    )
    return InputError(
        f'not valid CSV: {exc}{closes} (a quote inside a cell is written twice: "")',
        source=source,
        line=line,
        value=cell,
    )


def _quote_opened(lines: Sequence[str], delimiter: str) -> tuple[int, int, bool] | None:
    """Where the last quoted cell of a row's ``lines`` opens (the line's index and the column of
    its quote) and whether it is still open at their end; None without a quoted cell."""
    opened = None
    quoted = False
    for index, line in enumerate(lines):
        start = index == 0 or not quoted  # at the start of a cell
        i = 0
        while i < len(line):
            char = line[i]
            if quoted:
                if char == '"':
                    if line[i + 1 : i + 2] == '"':
                        i += 2
                        continue
                    quoted = False
            elif char == '"' and start:
                quoted, opened = True, (index, i)
            start = not quoted and char in (delimiter, "\r", "\n")
            i += 1
    return None if opened is None else (*opened, quoted)


def _row_blocks(
    header: Sequence[Any],
    rows: Iterator[tuple[int, Sequence[Any] | InputError]],
    wanted: Wanted,
    tick: Callable[[], None],
    source: str | None = None,
) -> BlockStream:
    """Columnar blocks of the rows (none of them blank) of a table whose first row is
    ``header``: the columns the suite reads, text cells by :func:`text_cell` (the last column of
    a name wins when two have it). An error in place of a row ends the last block. With
    ``source`` (a CSV file), a row with a value beyond the header's columns is an error naming
    it: a delimiter in an unquoted cell moves the cells after it, and a value in no column is
    read by nothing."""
    names = ["" if name is None else str(name) for name in header]
    where = {name: i for i, name in enumerate(names) if name in wanted.columns}
    width = max(where.values(), default=-1) + 1
    while True:
        block = list(islice(rows, RECORDS_PER_BLOCK))
        last = block[-1][1] if block else None
        error = last if isinstance(last, InputError) else None
        if error is not None:
            block.pop()
        if not block and error is None:
            tick()
            return
        numbers, cells = (list(part) for part in zip(*block, strict=True)) if block else ([], [])
        if source is not None and max(map(len, cells), default=0) > len(names):
            extra = _extra_cell(cells, len(names))
            if extra is not None:
                j, k = extra
                error = InputError(
                    f"more cells than the header's {len(names)} columns: cell {k + 1} holds a "
                    "value (a delimiter in a cell that is not quoted?)",
                    source=source,
                    line=numbers[j],
                    value=cells[j][k],
                )
                numbers, cells = numbers[:j], cells[:j]
        for j, row in enumerate(cells):
            if len(row) < width:  # a short row: the cells it lacks are empty
                cells[j] = [*row, *[None] * (width - len(row))]
        columns = {
            name: _cells(list(map(itemgetter(i), cells)), wanted.kinds.get(name))
            for name, i in where.items()
        }
        tick()
        yield Block(numbers, [], error=error, columns=columns, found=names)
        if error is not None:
            return


def _extra_cell(cells: Sequence[Sequence[Any]], width: int) -> tuple[int, int] | None:
    """(row, cell) of the first value beyond ``width`` cells (an empty cell there is none: a
    spreadsheet may end its rows with a delimiter)."""
    for j, row in enumerate(cells):
        for k in range(width, len(row)):
            if row[k] not in ("", None):
                return j, k
    return None


def _cells(cells: list[Any], kind: TextKind | None) -> list[Any]:
    types = set(map(type, cells))
    if types <= {str} and kind not in ("number", "json", "boolean"):
        return [text or None for text in cells]
    if types <= {str} and kind == "number":
        try:
            return [float(text) if text else None for text in cells]
        except ValueError:
            pass  # one by one: the cell that is not a number stays text, for the error
    out: list[Any] = []
    for cell in cells:
        if type(cell) is str:
            out.append(text_cell(cell, kind))
        elif isinstance(cell, datetime.datetime | datetime.date | datetime.time):
            out.append(cell.isoformat())
        elif isinstance(cell, datetime.timedelta):
            out.append(cell.total_seconds())
        else:
            out.append(cell)
    return out


def _xlsx_reading(
    path: Path, sheet: str | None, label: str, wanted: Wanted, advance: Advance | None
) -> Reading:
    try:
        import openpyxl
    except ImportError:
        raise InputError(
            "reading Excel files needs openpyxl: pip install 'pingce[files]'", source=label
        ) from None
    from zipfile import BadZipFile

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (BadZipFile, OSError, KeyError, ValueError) as exc:
        raise InputError(f"not an Excel .xlsx workbook ({exc})", source=label) from None
    if sheet is None:
        worksheet = book.worksheets[0]
    elif sheet in book.sheetnames:
        worksheet = book[sheet]
    else:
        book.close()
        raise InputError(
            f"no sheet {sheet!r} (sheets: {', '.join(map(repr, book.sheetnames))})", source=label
        )

    progress = _Share(advance, os.path.getsize(path), worksheet.max_row or 0)

    def rows(numbered: Iterator[tuple[int, Sequence[Any]]]) -> Iterator[tuple[int, Sequence[Any]]]:
        for number, row in numbered:
            progress.done = number
            if any(cell is not None and cell != "" for cell in row):  # trailing formatted rows
                yield number, row

    def blocks() -> BlockStream:
        try:
            numbered = enumerate(worksheet.iter_rows(values_only=True), start=1)
            first = next(numbered, None)
            if first is None:
                return
            header = list(first[1])
            while header and header[-1] is None:
                header.pop()
            yield from _row_blocks(header, rows(numbered), wanted, progress.tick)
        finally:
            book.close()

    return Reading(label, blocks(), unit="row")


class _Share:
    """Progress over a file's bytes in proportion to the rows (or records) read of ``total``."""

    def __init__(self, advance: Advance | None, size: int, total: int) -> None:
        self.advance = advance
        self.size = size
        self.total = total
        self.done = 0
        self.reported = 0

    def tick(self) -> None:
        if self.advance is None:
            return
        share = min(1.0, self.done / self.total) if self.total else 1.0
        amount = int(self.size * share) - self.reported
        if amount > 0:
            self.advance(amount)
            self.reported += amount


# ------------------------------------------------------------------------------- Arrow, frames


def _import_pyarrow(label: str, what: str) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise InputError(
            f"reading {what} needs pyarrow: pip install 'pingce[files]'", source=label
        ) from None
    return pyarrow


def _arrow_values(column: Any) -> list[Any]:
    """The values of an Arrow array as Python values a JSON reader would give: NaN as None
    (pandas' and polars' missing value), times as ISO text, decimals as floats, maps as
    dictionaries; the null fields of a struct are left out (Arrow gives every record of a column
    every key any record has, so an absent key and a null one look alike)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_floating(kind):
        if pc.any(pc.is_nan(column)).as_py():
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, kind), column)
    elif pa.types.is_decimal(kind):
        column = column.cast(pa.float64())
    elif pa.types.is_temporal(kind) and not pa.types.is_duration(kind):
        column = column.cast(pa.string())
    elif pa.types.is_dictionary(kind):
        return _arrow_values(column.cast(kind.value_type))
    nested = _nested(kind)
    values: list[Any] = column.to_pylist(maps_as_pydicts="strict") if nested else column.to_pylist()
    if nested and _has_struct(kind):
        values = [_without_nulls(value) for value in values]
    return values


def _nested(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_nested(kind))


def _has_struct(kind: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_struct(kind):
        return True
    if pa.types.is_map(kind):
        return _has_struct(kind.item_type)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _has_struct(kind.value_type)
    if hasattr(pa.types, "is_list_view") and (
        pa.types.is_list_view(kind) or pa.types.is_large_list_view(kind)
    ):
        return _has_struct(kind.value_type)
    return False


def _without_nulls(value: Any) -> Any:
    if type(value) is dict:
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if type(value) is list:
        return [_without_nulls(v) for v in value]
    return value


def _arrow_blocks(
    batches: Iterable[Any],
    wanted: Wanted,
    tick: Callable[[int], None],
    found: Sequence[str] | None = None,
    first: int = 1,
) -> BlockStream:
    """Columnar blocks of Arrow record batches (or tables), numbered from ``first``; ``found``:
    the source's columns, when the batches hold only some of them."""
    number = first
    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        columns = {
            name: wanted.typed(name, _arrow_values(batch.column(i)))
            for i, name in enumerate(batch.schema.names)
        }
        yield Block(range(number, number + n), [], columns=columns, found=found)
        number += n
        tick(number - 1)


def _parquet_reading(path: Path, label: str, wanted: Wanted, advance: Advance | None) -> Reading:
    _import_pyarrow(label, "Parquet files")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
        raise InputError(f"not a Parquet file ({exc})", source=label) from None
    names = parquet.schema_arrow.names
    columns = [name for name in names if name in wanted.columns] or names[:1]  # for the count
    progress = _Share(advance, os.path.getsize(path), parquet.metadata.num_rows)

    def tick(done: int) -> None:
        progress.done = done
        progress.tick()

    def blocks() -> BlockStream:
        try:
            batches = parquet.iter_batches(batch_size=RECORDS_PER_BLOCK, columns=columns)
            yield from _arrow_blocks(batches, wanted, tick, names)
        except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read the Parquet file ({exc})", source=label) from None
        finally:
            parquet.close()

    return Reading(label, blocks(), unit="record")


_FRAMES = {
    ("pandas", "DataFrame"): "pandas DataFrame",
    ("polars", "DataFrame"): "polars DataFrame",
    ("pyarrow", "Table"): "pyarrow Table",
    ("pyarrow", "RecordBatch"): "pyarrow RecordBatch",
    ("datasets", "Dataset"): "datasets Dataset",
}


def _frame_kind(value: Any) -> str | None:
    """What kind of data frame ``value`` is, from its type's module and name (nothing is
    imported), or None."""
    for cls in type(value).__mro__:
        package = cls.__module__.partition(".")[0]
        name = _FRAMES.get((package, cls.__name__))
        if name is not None:
            return name
    return None


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a data frame pingce reads by column: a pandas or polars DataFrame, a
    pyarrow Table or RecordBatch, or a Hugging Face ``datasets.Dataset``."""
    return _frame_kind(value) is not None


def frame_reading(frame: Any, wanted: Wanted) -> Reading:
    """The records of a data frame, one per row (numbered from 1), the columns the suite reads."""
    kind = _frame_kind(frame)
    assert kind is not None
    label = f"<{kind}>"
    blocks: BlockStream
    if kind == "pandas DataFrame":
        blocks = _pandas_blocks(frame, wanted)
    elif kind == "datasets Dataset":
        _import_pyarrow(label, "a Dataset")
        present = [name for name in frame.column_names if name in wanted.columns]
        if present:
            arrow = frame.select_columns(present).with_format("arrow")
            blocks = _arrow_blocks(arrow.iter(batch_size=RECORDS_PER_BLOCK), wanted, _no_tick)
        else:  # the rows still count: a record each, without the fields
            blocks = _empty_blocks(len(frame))
    else:
        _import_pyarrow(label, f"a {kind}")
        table = frame.to_arrow() if kind == "polars DataFrame" else frame
        names = [str(name) for name in table.schema.names]
        present = [i for i, name in enumerate(names) if name in wanted.columns]
        table = table.select(present)
        if not present:  # the rows still count: a record each, without the fields
            blocks = _empty_blocks(table.num_rows)
        elif kind == "pyarrow RecordBatch":
            blocks = _arrow_blocks(_slices(table), wanted, _no_tick, names)
        else:
            batches = table.to_batches(max_chunksize=RECORDS_PER_BLOCK)
            blocks = _arrow_blocks(batches, wanted, _no_tick, names)
    return Reading(label, blocks, unit="row")


def _no_tick(done: int) -> None:
    """Frames have no progress bar."""


def _slices(batch: Any) -> Iterator[Any]:
    for start in range(0, batch.num_rows, RECORDS_PER_BLOCK):
        yield batch.slice(start, RECORDS_PER_BLOCK)


def _empty_blocks(n: int) -> BlockStream:
    for start in range(0, n, RECORDS_PER_BLOCK):
        stop = min(n, start + RECORDS_PER_BLOCK)
        yield Block(range(start + 1, stop + 1), [], columns={})


def _pandas_blocks(frame: Any, wanted: Wanted) -> BlockStream:
    """A pandas DataFrame column by column: ``Series.tolist`` (Python scalars), missing values
    (NaN, None, pd.NA, NaT) as None, numpy arrays and numbers in cells as lists and Python
    numbers. Not through Arrow: a column of Python objects (lists of calls, say) would be
    unified by Arrow into one type (the integers of a column of numbers become floats, the keys
    of a column of objects every key of every row), or refused when its rows differ in type."""
    names = [str(name) for name in frame.columns]
    present = [i for i, name in enumerate(names) if name in wanted.columns]
    n = len(frame)
    for start in range(0, n, RECORDS_PER_BLOCK):
        part = frame.iloc[start : start + RECORDS_PER_BLOCK, present]
        columns: dict[str, list[Any]] = {}
        for j, i in enumerate(present):
            series = part.iloc[:, j]
            columns[names[i]] = wanted.typed(names[i], _series_values(series))
        yield Block(range(start + 1, start + 1 + len(part)), [], columns=columns, found=names)


def _series_values(series: Any) -> list[Any]:
    values: list[Any] = series.tolist()
    missing = np.flatnonzero(np.asarray(series.isna(), dtype=bool))
    for i in missing.tolist():
        values[i] = None
    if set(map(type, values)) <= {str, int, float, bool, type(None)}:
        return values
    return [_python_value(value) for value in values]


def _python_value(value: Any) -> Any:
    """A cell of a frame as the value a JSON reader would give: numpy arrays as lists, numpy
    numbers as Python numbers, times as ISO text, pandas' missing values as None, inside lists
    and objects too."""
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if kind is dict:
        return {k: _python_value(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_python_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_python_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        item = value.item()
        return None if isinstance(item, float) and math.isnan(item) else _python_value(item)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if kind.__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, Mapping):
        return {k: _python_value(v) for k, v in value.items()}
    return value


# -------------------------------------------------------------------------------- opening files


def iterable_reading(records: Iterable[Any]) -> Reading:
    """A caller's iterable of dictionaries, a block of records at a time (read once, and at most
    one block past a bad record); line numbers are 1-based positions."""

    def blocks() -> BlockStream:
        pairs = enumerate(records, start=1)
        while True:
            block = list(islice(pairs, RECORDS_PER_BLOCK))
            if not block:
                return
            yield Block([number for number, _ in block], [record for _, record in block])

    return Reading("<records>", blocks(), own_objects=False)


_TEXT_FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    "": "jsonl",
}
_BINARY_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx", ".xlsm": "xlsx"}
SUPPORTED = ".jsonl, .json, .csv, .tsv (each also .gz), .parquet, .xlsx, or - for standard input"


def path_reading(
    source: str | os.PathLike[str],
    *,
    wanted: Wanted,
    encoding: str | None = None,
    advance: Advance | None = None,
) -> Reading:
    """Open a file (or ``-``, standard input) for reading what the suite reads; ``encoding``
    forces the encoding of a text file. ``FILE.xlsx#Sheet`` names a sheet, ``FILE.json#key``
    the key of the list of records."""
    label = str(source)
    if label == "-":
        return _stdin_reading(wanted, encoding)
    path = Path(source)
    part: str | None = None
    if not path.is_file() and "#" in label:
        base, _, part = label.rpartition("#")
        if Path(base).is_file() and Path(base).suffix.lower() in (".xlsx", ".xlsm", ".json"):
            path = Path(base)
        else:
            part = None
    if not path.is_file():
        raise InputError("no such file", source=label)
    name = path.name.lower()
    compressed = name.endswith(".gz")
    suffix = Path(name[:-3] if compressed else name).suffix
    if suffix in _BINARY_FORMATS and not compressed:
        if _BINARY_FORMATS[suffix] == "parquet":
            return _parquet_reading(path, label, wanted, advance)
        return _xlsx_reading(path, part, label, wanted, advance)
    if suffix == ".xls":
        raise InputError(
            "the old Excel format (.xls) is not read; save the sheet as .xlsx or CSV", source=label
        )
    fmt = _TEXT_FORMATS.get(suffix)
    if fmt is None or (compressed and suffix == ""):
        raise InputError(f"unsupported file type {suffix!r}; use {SUPPORTED}", source=label)
    handle = open(path, "rb")  # noqa: SIM115 (closed when the blocks are done)
    try:
        raw: Any = gzip.GzipFile(fileobj=handle, mode="rb") if compressed else handle
        stream = _Stream(raw, handle, advance)
    except (OSError, EOFError) as exc:
        handle.close()
        raise InputError(f"cannot read the compressed file ({exc})", source=label) from None
    try:
        reading = _text_reading(stream, fmt, part, label, wanted, encoding)
    except BaseException:
        handle.close()
        raise
    reading.blocks = _closing(reading.blocks, handle, label)
    return reading


def _closing(blocks: Iterator[Block], handle: IO[bytes], label: str) -> BlockStream:
    try:
        yield from blocks
    except (OSError, EOFError) as exc:  # a truncated or corrupt .gz file
        raise InputError(f"cannot read the file ({exc})", source=label) from None
    finally:
        handle.close()


def _stdin_reading(wanted: Wanted, encoding: str | None) -> Reading:
    label = "<stdin>"
    stream = _Stream(sys.stdin.buffer)
    name = encoding or detect_encoding(stream.prefix, stream.complete, label)
    text = stream.prefix[:_PREFIX_BYTES].decode(name, errors="replace")
    start = text.lstrip("\ufeff \t\r\n")[:1]
    fmt = "array" if start == "[" else "jsonl" if start in ("{", "") else "csv"
    return _text_reading(stream, fmt, None, label, wanted, encoding, name)


def _text_reading(
    stream: _Stream,
    fmt: str,
    part: str | None,
    label: str,
    wanted: Wanted,
    encoding: str | None,
    detected: str | None = None,
) -> Reading:
    """A reading of a text stream in ``encoding`` (else ``detected``, else as detected here),
    which it records."""
    name = encoding or detected or detect_encoding(stream.prefix, stream.complete, label)
    reading = _text_blocks(stream, fmt, part, label, wanted, name, encoding is not None)
    reading.encoding = _codec_name(name)
    reading.detected = encoding is None
    if not reading.detected and reading.encoding not in ("utf-8", "utf-8-sig"):
        reading.reads_as_utf8 = _utf8_beyond_ascii(stream.prefix, stream.complete)
    return reading


def _utf8_beyond_ascii(prefix: bytes, complete: bool) -> bool:
    """Whether ``prefix`` has bytes beyond ASCII and reads as UTF-8 (a character cut by the
    end of an incomplete prefix aside)."""
    if prefix.isascii():
        return False
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError as exc:
        cut = exc.reason == "unexpected end of data" and exc.end == len(prefix)
        return cut and not complete
    return True


def _text_blocks(
    stream: _Stream,
    fmt: str,
    part: str | None,
    label: str,
    wanted: Wanted,
    name: str,
    forced: bool,
) -> Reading:
    if fmt == "jsonl":
        return Reading(label, _jsonl_blocks(_utf8_chunks(stream, name, label, forced), label,
                                            stream.tick))  # fmt: skip
    if fmt in ("csv", "tsv"):
        lines = _text_lines(_text_chunks(stream.read, name, label, forced))
        delimiter = "\t" if fmt == "tsv" else None
        return Reading(label, _csv_blocks(lines, delimiter, wanted, label, stream.tick))
    if fmt == "json" and _looks_like_jsonl(stream, name, wanted.columns):
        return Reading(label, _jsonl_blocks(_utf8_chunks(stream, name, label, forced), label,
                                            stream.tick))  # fmt: skip
    document, several = _json_document(stream, name, label, forced)
    stream.tick()
    if several is not None:  # more than one value: JSON lines after all
        return Reading(label, _jsonl_blocks((several,), label, _nothing))
    if isinstance(document, dict) and fmt == "json":
        document = _records_in(document, part, wanted.columns, label)
    elif part is not None:
        raise InputError(f"#{part}: the file holds no JSON object", source=label)
    if not isinstance(document, list):
        raise InputError(
            "a JSON file must hold an array of records, an object holding one, or one record a "
            "line",
            source=label,
        )
    return Reading(label, _array_blocks(document), unit="record")


def _nothing() -> None:
    """No progress to report."""


def jsonl_range_reading(path: str, start: int, stop: int, first_line: int) -> Reading:
    """The lines of a UTF-8 JSONL file from byte ``start`` to byte ``stop`` (both at the start
    of a line, or the end), the first numbered ``first_line``: one shard of a file, read with the
    same records, line numbers and errors as in a reading of the whole file."""

    def chunks() -> Iterator[bytes]:
        with open(path, "rb") as handle:
            handle.seek(start)
            left = stop - start
            while left > 0:
                data = handle.read(min(_BLOCK_BYTES, left))
                if not data:
                    break
                left -= len(data)
                yield data

    def blocks() -> BlockStream:
        for block in _jsonl_blocks(chunks(), path, _nothing, first_line):
            error = block.error
            if error is not None and error.reason.endswith(_PASS_ENCODING):  # not on ray
                reason = error.reason.removesuffix(_PASS_ENCODING) + _CONVERT
                block.error = InputError(reason, source=error.source, line=error.line)
            yield block

    return Reading(path, blocks())


def parquet_groups_reading(
    path: str, groups: Sequence[int], first_record: int, wanted: Wanted
) -> Reading:
    """Row groups ``groups`` (consecutive) of a Parquet file, the first record numbered
    ``first_record``: one shard of a file, as in a reading of the whole file."""
    _import_pyarrow(path, "Parquet files")
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    names = parquet.schema_arrow.names
    columns = [name for name in names if name in wanted.columns] or names[:1]

    def blocks() -> BlockStream:
        try:
            batches = parquet.iter_batches(
                batch_size=RECORDS_PER_BLOCK, row_groups=list(groups), columns=columns
            )
            yield from _arrow_blocks(batches, wanted, _no_tick, names, first_record)
        except (pa.ArrowInvalid, pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read the Parquet file ({exc})", source=path) from None
        finally:
            parquet.close()

    return Reading(path, blocks(), unit="record")


def _looks_like_jsonl(stream: _Stream, encoding: str, wanted: frozenset[str]) -> bool:
    """Whether a ``.json`` file is JSON lines: its first line is a whole object with a field the
    suite reads (a pretty-printed or wrapped document is read whole instead)."""
    try:
        text = stream.prefix.decode(encoding, errors="replace")
    except LookupError:
        return False
    text = text.lstrip("\ufeff \t\r\n")
    if not text.startswith("{"):
        return False
    first = text.split("\n", 1)[0]
    try:
        value = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    return isinstance(value, dict) and bool(wanted & set(value))
