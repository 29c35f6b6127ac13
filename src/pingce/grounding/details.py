"""Second look at a cited passage that matched its source: are the details that carry legal
meaning the same?

Semantic similarity does not see a changed detail (embeddings score 十日/五日 or 甲方/乙方
variants of one sentence above true paraphrases), so a citation that passed the similarity test
is compared with the part of its closest source sentence it aligns with (rapidfuzz's best
partial alignment) on the following, when it quotes that sentence (partial ratio at least
:data:`QUOTE_RATIO`; a paraphrase in other words cannot be compared detail by detail):

* numbers with their unit (amounts, dates, periods, percentages, counts): Arabic or Chinese
  numerals (十, 二十一, 两, 伍万), 万/千/亿 multipliers, 百分之五 = 5%, 千分之一 = 0.1%. Every
  such number in the citation must be in the aligned source with the same value and unit;
* the parties (甲方 to 丁方 and the roles contracts name: 出租人/承租人, 出卖人/买受人,
  用人单位/劳动者, 发包人/承包人, ...): the citation's parties, in order, must appear in that
  order in the aligned source (compared within the naming systems both use);
* negation (不, 未, 无, 非, 不得, 禁止, 严禁; fixed phrases such as 不可抗力 or 无论 are not
  negations) and modality (obligation 应/须/必须, permission 可以/有权, prohibition 不得/禁止):
  the citation and the aligned source must have as many negations (无法 and 不能 are one each)
  and the same modalities.

:func:`altered_details` returns the contradictions in words ("number: cited 十日, source 五日");
an empty list means none was found, None that the citation does not quote the sentence.
Unit-less numbers and article numbers (第五条) are not compared.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

from .numerals import SMART_EQUIVALENTS, arabic_with_unit, standard_integer

__all__ = ["QUOTE_RATIO", "altered_details"]

_NUMERAL = "0-9０-９.,，零〇一二两三四五六七八九十百千万亿壹贰贰叁肆伍陆柒捌玖拾佰仟"
_UNITS = (
    "个工作日|工作日|个自然日|自然日|个月|小时|分钟|周|星期|年|月|日|号|天|"
    "万元|亿元|千元|元|美元|欧元|块|%|％|倍|次|人|份|件|台|套|吨|公斤|千克|平方米|米|公里"
)
_NUMBER = re.compile(
    rf"(?P<prefix>百分之|千分之|万分之)(?P<fraction>[{_NUMERAL}]+)"
    rf"|(?<![第{_NUMERAL}])(?P<value>[{_NUMERAL}]+)(?P<unit>{_UNITS})"
)
_PARTY_FAMILIES = (
    ("甲方", "乙方", "丙方", "丁方"),
    ("出租人", "承租人"),
    ("出卖人", "买受人", "卖方", "买方"),
    ("发包人", "承包人"),
    ("委托人", "受托人"),
    ("用人单位", "劳动者"),
    ("借款人", "贷款人", "出借人"),
    ("转让人", "受让人"),
    ("许可人", "被许可人"),
)
_FAMILY = {name: k for k, family in enumerate(_PARTY_FAMILIES) for name in family}
_PARTY = re.compile("|".join(sorted(_FAMILY, key=len, reverse=True)))
QUOTE_RATIO = 60.0
"""rapidfuzz's partial ratio (0-100) from which a citation counts as a quotation of its
sentence; a paraphrase in other words is judged by the similarity alone."""
_NOT_NEGATION = (
    "不可抗力",
    "无论",
    "不论",
    "不限于",
    "不仅",
    "无须",
    "毫无",
    "无条件",
    "并无",
)
_NEGATION = re.compile(r"不得|不应|不能|不予|禁止|严禁|不|未|无|非")
_MODALITY = {
    "prohibition": re.compile(r"不得|禁止|严禁|不应"),
    "obligation": re.compile(r"(?<!不)应当|(?<!不)应(?!当)|必须|须|负责"),
    "permission": re.compile(r"可以|有权|(?<!不)可(?!抗力|以)"),
}
_MULTIPLIER = {"万元": ("元", 10_000), "亿元": ("元", 100_000_000), "千元": ("元", 1_000)}
_SAME_UNIT = {
    "号": "日",
    "天": "日",
    "自然日": "日",
    "个自然日": "日",
    "个工作日": "工作日",
    "星期": "周",
    "％": "%",
    "块": "元",
}


@lru_cache(maxsize=65_536)
def _numeral(text: str) -> float | None:
    """The value of an Arabic or Chinese numeral (cn2an, smart mode), or None; standard
    integers and ``3万`` are read by :mod:`.numerals` with the same value."""
    text = text.replace(",", "").replace("，", "")
    if not text or text in ".":
        return None
    try:
        return float(text)
    except ValueError:
        pass
    value = standard_integer(text.translate(SMART_EQUIVALENTS))
    if value is None:
        value = arabic_with_unit(text.translate(_FULL_WIDTH))
    if value is not None:  # cn2an's value, without its import (1.3 G instructions)
        return float(value)
    import cn2an  # costs 0.27 s: imported for the numerals the standard form does not cover

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(cn2an.cn2an(text.translate(_FULL_WIDTH), "smart"))
        except (ValueError, KeyError, IndexError, TypeError):
            return None


_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")


def _numbers(
    text: str, start: int = 0, end: int | None = None
) -> list[tuple[tuple[str, float], str]]:
    """(unit, value) keys of the numbers with units in ``text`` (those that overlap
    ``text[start:end]``), each with the text as written."""
    out = []
    end = len(text) if end is None else end
    for match in _NUMBER.finditer(text):
        if match.end() <= start or match.start() >= end:
            continue
        if match.group("prefix"):
            value = _numeral(match.group("fraction"))
            scale = {"百分之": 1.0, "千分之": 0.1, "万分之": 0.01}[match.group("prefix")]
            if value is not None:
                out.append((("%", round(value * scale, 9)), match.group()))
            continue
        value = _numeral(match.group("value"))
        if value is None:
            continue
        unit = match.group("unit")
        unit, factor = _MULTIPLIER.get(unit, (_SAME_UNIT.get(unit, unit), 1))
        out.append(((unit, round(value * factor, 9)), match.group()))
    return out


def _negations(text: str) -> list[str]:
    for phrase in _NOT_NEGATION:
        text = text.replace(phrase, "□" * len(phrase))
    return _NEGATION.findall(text)


def _modalities(text: str) -> set[str]:
    return {name for name, pattern in _MODALITY.items() if pattern.search(text)}


def _subsequence(short: list[str], long: list[str]) -> bool:
    remaining = iter(long)
    return all(any(item == other for other in remaining) for item in short)


def _aligned(cited: str, source: str) -> tuple[int, int]:
    """Where in ``source`` the citation aligns best (all of it when the citation is the longer
    text), widened each side by a quarter of the citation's length (at least two characters):
    the alignment is a window as long as the citation, so a paraphrase that adds or drops a
    few characters shifts it."""
    if len(cited) >= len(source):
        return 0, len(source)
    from rapidfuzz import fuzz

    alignment = fuzz.partial_ratio_alignment(cited, source)
    if alignment is None:
        return 0, len(source)
    margin = max(2, len(cited) // 4)
    return max(0, alignment.dest_start - margin), alignment.dest_end + margin


def _parties(text: str, families: set[int]) -> list[str]:
    return [p for p in _PARTY.findall(text) if _FAMILY[p] in families]


def altered_details(cited: str, source: str) -> list[str] | None:
    """The details of ``cited`` that contradict ``source`` (its closest sentence), in words
    (empty: none); None when the citation does not quote that sentence (a paraphrase in other
    words cannot be compared detail by detail)."""
    from rapidfuzz import fuzz

    if fuzz.partial_ratio(cited, source) < QUOTE_RATIO:
        return None
    start, end = _aligned(cited, source)
    span = source[start:end]
    reasons = []
    cited_numbers = _numbers(cited)
    if cited_numbers:  # a number that overlaps the aligned part is read whole
        source_numbers = _numbers(source, start, end)
        present = {key for key, _ in source_numbers}
        for key, written in cited_numbers:
            if key not in present:
                same_unit = [w for k, w in source_numbers if k[0] == key[0]]
                found = "、".join(same_unit) if same_unit else "none"
                reasons.append(f"number: cited {written}, source {found}")
    # parties are compared within one naming system (甲方/乙方, 出租人/承租人, ...): a citation
    # that says 买方 where the contract says 甲方 names the parties differently, not wrongly
    families = {_FAMILY[p] for p in _PARTY.findall(cited)} & {
        _FAMILY[p] for p in _PARTY.findall(span)
    }
    cited_parties = _parties(cited, families)
    if cited_parties:
        source_parties = _parties(span, families)
        if not _subsequence(cited_parties, source_parties):
            shown = "…".join(source_parties) or "none"
            reasons.append(f"party: cited {'…'.join(cited_parties)}, source {shown}")
    cited_negations, source_negations = _negations(cited), _negations(span)
    if len(cited_negations) != len(source_negations):  # 无法 and 不能 are both one negation
        reasons.append(
            f"negation: cited {'、'.join(cited_negations) or 'none'}, "
            f"source {'、'.join(source_negations) or 'none'}"
        )
    cited_modality, source_modality = _modalities(cited), _modalities(span)
    if cited_modality != source_modality and not (
        reasons
        and reasons[-1].startswith("negation")
        and "prohibition" in (cited_modality ^ source_modality)
    ):
        reasons.append(
            f"modality: cited {'/'.join(sorted(cited_modality)) or 'none'}, "
            f"source {'/'.join(sorted(source_modality)) or 'none'}"
        )
    return reasons
