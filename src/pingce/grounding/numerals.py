"""Standard Chinese integer numerals read without cn2an (whose import compiles its regular
expressions twice: 1.3 G instructions, a third of ``pingce run`` on the example records).

:func:`standard_integer` reads a numeral only when it is exactly the standard spelling of its
integer below 10^12 (``十``, ``十五``, ``一百一十``, ``一千零一``, ``十万零一十``,
``一亿零一千``), or that spelling with ``一`` before a leading ``十`` (``一十五``). For any other
text it returns None, and the callers (``details._numeral``, ``laws._number``) ask cn2an as
before: decimals, colloquial forms (``一百十``, ``五百八``), digit by digit (``一二三``), and
whatever cn2an's mode makes of them stay cn2an's. tests/test_numerals.py holds every accepted
spelling of 0..100,000 and seeded random integers below 10^12 equal to cn2an's value in its
strict and smart modes, so that a numeral read here is one cn2an reads the same.
:func:`arabic_with_unit` reads ``3万`` and ``1.5亿`` by the smart mode's own rule.
"""

from __future__ import annotations

import re

__all__ = ["LIMIT", "SMART_EQUIVALENTS", "arabic_with_unit", "spell", "standard_integer"]

LIMIT = 10**12
"""Numerals of this value and above are left to cn2an."""

_DIGIT = "零一二三四五六七八九"
_VALUE = {c: k for k, c in enumerate(_DIGIT)}
_UNIT = {"十": 10, "百": 100, "千": 1000}
_GROUP_UNITS = ("千", "百", "十", "")

_ARABIC_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)([十拾百佰千仟万亿])")
_UNIT_VALUE = {
    "十": 10,
    "拾": 10,
    "百": 100,
    "佰": 100,
    "千": 1000,
    "仟": 1000,
    "万": 10**4,
    "亿": 10**8,
}

SMART_EQUIVALENTS = str.maketrans("〇两壹贰叁肆伍陆柒捌玖拾佰仟", "零二一二三四五六七八九十百千")
"""Characters cn2an's normal and smart modes read exactly as the standard ones (the same class
in its patterns, the same value in its tables); its strict mode refuses 〇 and 两."""


def _group(n: int) -> str:
    """The standard spelling of 0 < n < 10,000 (``一千零一十``), 一 before 十 kept."""
    out = []
    pending_zero = started = False
    for k, unit in enumerate(_GROUP_UNITS):
        digit = n // 10 ** (3 - k) % 10
        if digit == 0:
            pending_zero = started
            continue
        if pending_zero:
            out.append("零")
            pending_zero = False
        out.append(_DIGIT[digit] + unit)
        started = True
    return "".join(out)


def spell(n: int) -> str:
    """The standard spelling of 0 <= n < 10^12: ``十``, ``一百一十``, ``十万零一十``."""
    if n == 0:
        return "零"
    out = ""
    gap = False  # a zero group between two non-zero ones
    for group, unit in ((n // 10**8, "亿"), (n // 10**4 % 10**4, "万"), (n % 10**4, "")):
        if group == 0:
            gap = bool(out)
            continue
        if out and (gap or group < 1000):
            out += "零"
        out += _group(group) + unit
        gap = False
    return out[1:] if out.startswith("一十") else out


def _read(text: str) -> int | None:
    """The value of ``text`` read as a standard numeral, right only where ``text`` is one."""
    total = wan = section = number = 0
    for char in text:
        if char in _VALUE:
            number = _VALUE[char]
        elif char in _UNIT:
            section += (number or 1) * _UNIT[char]
            number = 0
        elif char == "万":
            wan = (section + number) * 10**4
            section = number = 0
        elif char == "亿":
            total = (wan + section + number) * 10**8
            wan = section = number = 0
        else:
            return None
    return total + wan + section + number


def standard_integer(text: str) -> int | None:
    """The integer ``text`` spells in the standard form below :data:`LIMIT` (``一`` before a
    leading ``十`` allowed), or None: then it is not one this module vouches for."""
    if not text or len(text) > 24:
        return None
    value = _read(text)
    if value is None or value >= LIMIT:
        return None
    standard = spell(value)
    if text == standard or (text[:2] == "一十" and text[1:] == standard):
        return value
    return None


def arabic_with_unit(text: str) -> int | None:
    """``3万``, ``1.5亿``: an Arabic number and one unit character, as cn2an's smart mode reads
    it (``int(Decimal(number) * unit)``, truncated), or None for any other text."""
    match = _ARABIC_UNIT.fullmatch(text)
    if match is None:
        return None
    from decimal import Decimal

    return int(Decimal(match.group(1)) * _UNIT_VALUE[match.group(2)])
