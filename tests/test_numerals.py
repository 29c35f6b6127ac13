"""Chinese numerals read without cn2an (grounding/numerals.py) give exactly what the code that
asked cn2an for every numeral gave: ``details._numeral`` (smart mode) and ``laws._number``
(strict mode), compared with copies of the old functions on every standard spelling of
0..100,000, seeded random integers below 10^12, their variants and malformed forms."""

from __future__ import annotations

import random
import re
import warnings
from collections.abc import Iterator

import cn2an
import pytest

from pingce.grounding import details, laws
from pingce.grounding.numerals import LIMIT, spell, standard_integer

_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
_TWO = re.compile("两(?=[百千万])")
_LAW_NUMERAL = re.compile(laws._N)


def old_numeral(text: str) -> float | None:
    """details._numeral before numerals.py: every Chinese numeral through cn2an's smart mode."""
    text = text.replace(",", "").replace("，", "")
    if not text or text in ".":
        return None
    try:
        return float(text)
    except ValueError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(cn2an.cn2an(text.translate(_FULL_WIDTH), "smart"))
        except (ValueError, KeyError, IndexError, TypeError):
            return None


def old_number(numeral: str) -> int | None:
    """laws._number before numerals.py: every Chinese numeral through cn2an's strict mode."""
    if numeral.isascii():
        return int(numeral)
    text = _TWO.sub("二", numeral.replace("〇", "零"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = cn2an.cn2an(text, "strict")
        except ValueError:
            return None
    return value if isinstance(value, int) else None


def _variants(text: str, rng: random.Random, share: float = 1.0) -> Iterator[str]:
    """The forms the callers' patterns let through for one standard spelling (its variants for
    ``share`` of the spellings)."""
    yield text
    if rng.random() >= share:
        return
    if text.startswith("十"):
        yield "一" + text
    if "二" in text:
        yield text.replace("二", "两")
        yield text.replace("二", "两", 1)
    if "零" in text:
        yield text.replace("零", "〇")
    if rng.random() < 0.1:  # the financial characters, all or a random mix
        upper = str.maketrans("一二三四五六七八九十百千", "壹贰叁肆伍陆柒捌玖拾佰仟")
        yield text.translate(upper)
        yield "".join(c.translate(upper) if rng.random() < 0.5 else c for c in text)


def _assert_same(texts: Iterator[str]) -> int:
    count = 0
    for text in texts:
        details._numeral.cache_clear()
        laws._number.cache_clear()
        assert details._numeral(text) == old_numeral(text), text
        if _LAW_NUMERAL.fullmatch(text):  # what laws._ARTICLE lets through
            assert laws._number(text) == old_number(text), text
        count += 1
    return count


def test_standard_spellings_read_back_to_their_integer() -> None:
    rng = random.Random(32)
    for value in [*range(100_001), *(rng.randrange(LIMIT) for _ in range(20_000))]:
        assert standard_integer(spell(value)) == value
    assert [spell(v) for v in (10, 15, 110, 1001, 1010, 10_010, 100_000, 100_010)] == [
        "十", "十五", "一百一十", "一千零一", "一千零一十", "一万零一十", "十万", "十万零一十",
    ]  # fmt: skip
    assert [spell(v) for v in (100_001_000, 101_000_000, 110_000_000, 10**9)] == [
        "一亿零一千", "一亿零一百万", "一亿一千万", "十亿",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["", "一百十", "五百八", "一万二", "一二三", "零零", "零一", "一千零零一", "十十", "百",
     "一百零十", "二十零", "一万亿", "三点五", "两十", "十两", "一千〇一", "一十一十"],
)  # fmt: skip
def test_anything_but_a_standard_spelling_is_left_to_cn2an(text: str) -> None:
    assert standard_integer(text) is None


def test_every_integer_to_100000_reads_as_cn2an_read_it() -> None:
    rng = random.Random(0)
    texts = (v for value in range(100_001) for v in _variants(spell(value), rng, 0.1))
    assert _assert_same(texts) > 100_001


def test_random_integers_below_a_trillion_read_as_cn2an_read_them() -> None:
    rng = random.Random(1)
    values = [rng.randrange(10**k) for k in range(6, 13) for _ in range(400)]
    texts = (v for value in values for v in _variants(spell(value), rng))
    assert _assert_same(texts) > len(values)


def test_colloquial_decimal_and_malformed_forms_read_as_cn2an_read_them() -> None:
    forms = [
        "一百十", "五百八", "一万二", "两千三", "三百四", "十三万六", "一百二十五万三", "一二三",
        "二〇二四", "三点五", "零点五", "一千零十一", "一万零百一十一", "两", "两十", "十两",
        "一千〇一", "廿", "万", "亿", "零零", "一万亿", "十万亿零一", "一万零一千", "一万一百",
        "一千一十", "一百零十", "十十", "百", "3万", "10.1万", "五万5千", "1,000", "，", ".",
        "一十一十", "壹仟", "两百", "两万两千", "二百两十", "1,000", "１２", "一百零五点", "０",
    ]  # fmt: skip
    rng = random.Random(2)
    for _ in range(2_000):
        forms.append(
            "".join(rng.choice("零一二两三十百千万亿〇") for _ in range(rng.randint(1, 7)))
        )
    assert _assert_same(iter(forms)) == len(forms)


def test_arabic_numbers_with_a_unit_read_as_cn2an_read_them() -> None:
    """``3万元``, ``1.5亿元``: the smart mode's own rule (``int(Decimal(x) * unit)``)."""
    rng = random.Random(3)
    forms = ["3万", "1.5亿", "0.00001万", "10.1万", "2.5十", "７万", "1.5拾", "3佰", "3仟", "0万"]
    for _ in range(3_000):
        number = str(rng.randrange(10 ** rng.randint(1, 9)))
        if rng.random() < 0.5:
            number += "." + str(rng.randrange(10 ** rng.randint(1, 6))).zfill(rng.randint(1, 6))
        forms.append(number + rng.choice("十拾百佰千仟万亿"))
    forms += ["3万万", "万3", "3.万", ".5万", "3万5", "3.5.5万", "3十万"]
    assert _assert_same(iter(forms)) == len(forms)
