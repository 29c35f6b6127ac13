"""Law citations (pingce.grounding.laws): hand-written parses of real citation forms and Chinese
numerals against an independent converter."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pingce.grounding.laws import (
    Article,
    Citation,
    Malformed,
    normalize_citation,
    parse_citation,
)

HYPOTHESIS = settings(max_examples=400, derandomize=True, database=None, deadline=None)

# ----------------------------------------------------------------------------- parsing

# (citation as an LLM writes it, law, article numbers; a pair is (article, 之N))
PARSES: list[tuple[str, str, list[int | tuple[int, int]]]] = [
    ("《中华人民共和国民法典》第五百八十五条", "民法典", [585]),
    ("民法典第585条", "民法典", [585]),
    ("《劳动合同法》第 39 条第一款", "劳动合同法", [39]),
    ("《民法典》第五百七十七条、第五百八十四条", "民法典", [577, 584]),
    ("“民法典”第585条", "民法典", [585]),
    ("「劳动法」第四十四条", "劳动法", [44]),
    ("『数据安全法』第二十一条", "数据安全法", [21]),
    ("民法典第５８５条", "民法典", [585]),
    ("《民法典》　第 一千二百六十 条", "民法典", [1260]),
    ("中华人民共和国劳动法第一百零七条", "劳动法", [107]),
    ("《中华人民共和国刑法》第二十条之一", "刑法", [(20, 1)]),
    ("《刑法》第一百二十条之二、第一百二十条之三", "刑法", [(120, 2), (120, 3)]),
    ("《劳动合同法》第三十九条第一款第（二）项", "劳动合同法", [39]),
    ("《劳动合同法》第39条第1款第(三)、(四)项", "劳动合同法", [39]),
    ("《消费者权益保护法》第五十五条第一款、第二款", "消费者权益保护法", [55]),
    ("《民法典》第577条和第584条", "民法典", [577, 584]),
    ("《民法典》第五百七十七条及第五百八十四条", "民法典", [577, 584]),
    ("《民法典》 第 577 条、 第 584 条", "民法典", [577, 584]),
    (
        "《中华人民共和国民法典》第四百九十六条、第四百九十七条、第四百九十八条",
        "民法典",
        [496, 497, 498],
    ),
    ("民法典585条", "民法典", [585]),
    ("《民法典》第577条、584条", "民法典", [577, 584]),
    ("《民法典》合同编第五百零九条", "民法典", [509]),
    ("民法典第三编第五百零九条", "民法典", [509]),
    ("《民法典》合同编通则第五百零九条", "民法典", [509]),
    ("《民法典》第三编第一分编第四章第五百零九条", "民法典", [509]),
    ("《民法典》第五百八十五条的规定", "民法典", [585]),
    ("《民法典》第五百八十五条规定", "民法典", [585]),
    ("民法典第585条相关规定", "民法典", [585]),
    ("根据《民法典》第五百八十五条第二款之规定。", "民法典", [585]),
    ("【民法典】第585条", "民法典", [585]),
    ("《劳动合同法（2012修正）》第四十六条", "劳动合同法", [46]),
    ("《个人信息保护法》第十条", "个人信息保护法", [10]),
    ("《民法典》第一百零五条", "民法典", [105]),
    ("《民法典》第两百条", "民法典", [200]),
    ("《民法典》第一千零五条", "民法典", [1005]),
    ("《民法典》第一百一十条", "民法典", [110]),
    ("《民法典》第五百七十七条至第五百八十四条", "民法典", [577, 584]),
    ("《劳动合同法实施条例》第十条", "劳动合同法实施条例", [10]),
    ("《民法总则》第十条", "民法总则", [10]),  # a law ending in 总则 is not a part of a law
]


@pytest.mark.parametrize(("text", "law", "numbers"), PARSES)
def test_real_citation_forms_parse(
    text: str, law: str, numbers: list[int | tuple[int, int]]
) -> None:
    articles = tuple(Article(*n) if isinstance(n, tuple) else Article(n) for n in numbers)
    assert parse_citation(text) == Citation(law, articles)


def test_the_table_has_at_least_25_forms() -> None:
    assert len(PARSES) >= 25


NOT_NUMERAL = "article number '{}' is not an Arabic or standard Chinese numeral"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("相关法律规定", "no article number in '相关法律规定'"),
        ("第五百条", "no law name before '第五百条'"),
        ("民法典", "no article number in '民法典'"),
        ("Civil Code art. 5", "no article number in 'Civil Code art. 5'"),
        ("  ", "empty citation"),
        ("民法典第五百八十五", "no article number in '民法典第五百八十五'"),
        (
            "民法典第一百十条",
            NOT_NUMERAL.format("一百十"),
        ),
        (
            "民法典第五百八条",
            NOT_NUMERAL.format("五百八"),
        ),
        (
            "民法典第一二三条",
            NOT_NUMERAL.format("一二三"),
        ),
        ("民法典第585条、劳动法第3条", "unexpected text '、劳动法第3条' after '第585条'"),
        ("民法典第585条关于违约金", "unexpected text '关于违约金' after '第585条'"),
    ],
)
def test_malformed_citations_say_what_is_missing(text: str, reason: str) -> None:
    assert parse_citation(text) == Malformed(reason)


def test_normalising_removes_width_spaces_quotes_and_brackets_around_the_law() -> None:
    assert normalize_citation("《民法典》 第５８５条") == "民法典第585条"
    assert normalize_citation("“劳动法”\u3000第 4 条") == "劳动法第4条"
    assert normalize_citation("【民法典】第1条") == "民法典第1条"
    assert normalize_citation("根据（民法典）第1条") == "根据民法典第1条"
    assert normalize_citation("《劳动合同法》（2012修正）第1条") == "劳动合同法第1条"
    # brackets inside a name are part of it
    assert normalize_citation("《关于某某问题的解释（一）》第3条") == "关于某某问题的解释(一)第3条"


_DIGITS = "零一二三四五六七八九"


def chinese_numeral(n: int) -> str:
    """1..9999 in standard Chinese: 十一 (not 一十一), 一百一十, 一千零五; never 两."""
    assert 1 <= n <= 9999
    if n < 20:
        return ("十" if n >= 10 else "") + (_DIGITS[n % 10] if n % 10 or n < 10 else "")
    text, gap = "", False
    for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // value % 10
        if digit == 0:
            gap = bool(text)  # a zero between digits is read as one 零
            continue
        if gap:
            text += "零"
            gap = False
        text += _DIGITS[digit] + unit
    return text


def test_the_independent_numeral_writer_follows_the_standard_forms() -> None:
    expected = {1: "一", 10: "十", 11: "十一", 20: "二十", 101: "一百零一", 110: "一百一十",
                1005: "一千零五", 1010: "一千零一十", 1260: "一千二百六十", 2000: "二千",
                9999: "九千九百九十九"}  # fmt: skip
    assert {n: chinese_numeral(n) for n in expected} == expected


@HYPOTHESIS
@given(st.integers(min_value=1, max_value=9999))
def test_chinese_arabic_and_full_width_numbers_parse_to_the_article(n: int) -> None:
    full_width = str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    for numeral in (chinese_numeral(n), str(n), full_width):
        assert parse_citation(f"民法典第{numeral}条") == Citation("民法典", (Article(n),))
    sub = parse_citation(f"《中华人民共和国刑法》第{chinese_numeral(n)}条之{chinese_numeral(n)}")
    assert sub == Citation("刑法", (Article(n, n),))


@HYPOTHESIS
@given(st.text(alphabet="0123456789零〇一二两三四五六七八九十百千万之条第款项、和及至()规定编章"))
def test_any_text_parses_or_is_malformed_without_raising(tail: str) -> None:
    assert isinstance(parse_citation("民法典" + tail), Citation | Malformed)


def test_the_numeral_library_is_imported_only_for_a_chinese_numeral() -> None:
    code = (
        "import sys\nfrom pingce.grounding.laws import parse_citation\n"
        "parse_citation('民法典第585条')\nprint('cn2an' in sys.modules)\n"
        "parse_citation('民法典第五条')\nprint('cn2an' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
