"""sacrebleu's ``intl`` tokenizer in pingce, and the error for the tokenizers pingce does not have.

Expected tokens come from sacrebleu's ``TokenizerV14International`` run in the test, and expected
scores from sacrebleu's ``BLEU`` or from its published test cases (``test/test_bleu.py`` and
``test/test_sentence_bleu.py`` of mjpost/sacrebleu, kept here as data). Texts: seeded random
strings of punctuation, symbols and numbers of many scripts (every character of those
categories that the ``regex`` module knows, drawn at random), Chinese, Latin letters, digits and
whitespace, and every code point in a few contexts.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import regex
import sacrebleu
from sacrebleu.metrics import BLEU
from sacrebleu.metrics.bleu import _TOKENIZERS
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International

from pingce.errors import SuiteError
from pingce.metrics import Context, create_metric
from pingce.records import load_records
from pingce.suites import load_suite
from pingce.text import bleu as B

TOL = 1e-9

# sacrebleu, test/test_bleu.py: corpus BLEU of the README example with tokenize="intl" (two
# reference streams), published with a tolerance of 1e-8.
PUBLISHED_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
PUBLISHED_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
PUBLISHED_CORPUS_INTL = 43.91623493
# sacrebleu, test/test_sentence_bleu.py (example from its issue #98): sentence BLEU with
# tokenize="intl", smoothing exp, effective order, published with a tolerance of 1e-3.
PUBLISHED_REF = "producţia de zahăr brut se exprimă în zahăr alb;"
PUBLISHED_SYS = "Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;"
PUBLISHED_SENTENCE_INTL = 8.493


def _theirs(text: str, lowercase: bool = False) -> list[str]:
    """The tokens sacrebleu's BLEU counts with tokenize="intl"."""
    line = text.lower() if lowercase else text
    return TokenizerV14International()(line.rstrip()).split()


def test_published_corpus_bleu() -> None:
    rows = [
        B.sacrebleu_bleu_stats(
            B.sacrebleu_tokenize(hyp, "intl"),
            [B.sacrebleu_tokenize(r[i], "intl") for r in PUBLISHED_REFS],
        )
        for i, hyp in enumerate(PUBLISHED_HYPS)
    ]
    ours = float(B.sacrebleu_bleu(np.sum(rows, axis=0)))
    assert abs(ours - PUBLISHED_CORPUS_INTL) < 1e-8
    expected = BLEU(tokenize="intl").corpus_score(PUBLISHED_HYPS, PUBLISHED_REFS).score
    assert abs(ours - expected) <= TOL


def test_published_sentence_bleu() -> None:
    row = B.sacrebleu_bleu_stats(
        B.sacrebleu_tokenize(PUBLISHED_SYS, "intl"), [B.sacrebleu_tokenize(PUBLISHED_REF, "intl")]
    )
    ours = float(B.sacrebleu_bleu(row, effective_order=True))
    assert abs(ours - PUBLISHED_SENTENCE_INTL) < 1e-3
    expected = BLEU(tokenize="intl", effective_order=True).sentence_score(
        PUBLISHED_SYS, [PUBLISHED_REF]
    )
    assert abs(ours - expected.score) <= TOL


def _category(pattern: str) -> list[str]:
    """Every character the ``regex`` module puts in a category (sacrebleu's own library)."""
    everything = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    return regex.findall(pattern, everything)


@pytest.fixture(scope="module")
def pools() -> dict[str, list[str]]:
    return {
        "punctuation": _category(r"\p{P}"),
        "symbol": _category(r"\p{S}"),
        "number": _category(r"\p{N}"),
        "chinese": list("今天天气很好我们一起去公园散步合同条款风险的了是在和"),
        "latin": list("abcXYZéßø"),
        "digit": list("0123456789"),
        "ascii": list(".,-'\"!?;:()[]{}<>/\\@#$%^&*_+=~`|"),
        "space": [" ", " ", " ", "\t", "\n", "\u3000", "\u00a0"],
    }


def _random_texts(pools: dict[str, list[str]], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names = list(pools)
    weights = [3, 3, 2, 3, 3, 3, 4, 4]
    texts = []
    for _ in range(n):
        chars = [
            rng.choice(pools[rng.choices(names, weights)[0]]) for _ in range(rng.randint(0, 30))
        ]
        texts.append("".join(chars))
    return texts


def test_tokens_equal_sacrebleu_on_random_unicode(pools: dict[str, list[str]]) -> None:
    texts = _random_texts(pools, 20000, seed=20261124)
    for lowercase in (False, True):
        wrong = [
            t for t in texts if B.sacrebleu_tokenize(t, "intl", lowercase) != _theirs(t, lowercase)
        ]
        assert not wrong, wrong[:3]
    assert B.sacrebleu_tokenize_all(texts, "intl") == [_theirs(t) for t in texts]


@pytest.mark.parametrize(
    "context", ["a{c}b", "1{c}2", "{c}", "a{c}{c}1", "x {c}. 3{c}", "{c}中文{c}"]
)
def test_every_code_point_in_context(context: str) -> None:
    """Every code point (surrogates aside) in a few contexts, 200 to a line."""
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    tokenizer = TokenizerV14International()
    for start in range(0, len(points), 200):
        line = " | ".join(context.format(c=c) for c in points[start : start + 200])
        assert B.sacrebleu_tokenize(line, "intl") == tokenizer(line).split(), start


def test_intl_follows_the_mteval_rules() -> None:
    """Documented behaviour, as sacrebleu states it: separators inside numbers stay, a number's
    final point at the end of a line stays, symbols of any script are split off."""
    assert B.sacrebleu_tokenize("It costs 1,000.50 €.", "intl") == [
        "It",
        "costs",
        "1,000.50",
        "€",
        ".",
    ]
    assert B.sacrebleu_tokenize("In 2024.", "intl") == ["In", "2024."]
    assert B.sacrebleu_tokenize("价格：3.5元😀！", "intl") == ["价格", "：", "3.5元", "😀", "！"]
    for text in ("It costs 1,000.50 €.", "In 2024.", "价格：3.5元😀！"):
        assert B.sacrebleu_tokenize(text, "intl") == _theirs(text)


def test_corpus_bleu_metric_with_intl(pools: dict[str, list[str]]) -> None:
    texts = _random_texts(pools, 1200, seed=7)
    rng = random.Random(3)
    preds = texts[:600]
    golds = [t if rng.random() < 0.3 else texts[600 + i] for i, t in enumerate(preds)]
    metric = create_metric("text_corpus_bleu", tokenize="intl")
    statistic = metric.statistic()
    records = [
        {"id": i, "pred_text": p, "gold_text": g}
        for i, (p, g) in enumerate(zip(preds, golds, strict=True))
    ]
    block = statistic.compute(load_records(records, statistic.fields()), Context())
    corpus = float(metric.finalize(block.total()[None, :])[0])
    bleu = BLEU(tokenize="intl")
    assert abs(corpus - bleu.corpus_score(preds, [golds]).score) <= TOL
    sentence = [
        bleu.sentence_score(p, [g]).score for p, g in zip(preds[:200], golds[:200], strict=True)
    ]
    assert np.abs(metric.finalize(block.per_record())[:200] - sentence).max() <= TOL


# ----------------------------------------------------------------------------------------------
# tokenizers pingce does not have
# ----------------------------------------------------------------------------------------------


def test_every_sacrebleu_tokenizer_is_either_ours_or_explained() -> None:
    """sacrebleu's own list: each name is a pingce tokenizer (same tokens on sacrebleu's README
    example) or one of the names pingce explains it does not have."""
    assert set(_TOKENIZERS) == set(B.SACREBLEU_TOKENIZERS) | set(B.SACREBLEU_ONLY)
    assert not set(B.SACREBLEU_TOKENIZERS) & set(B.SACREBLEU_ONLY)
    for name in B.SACREBLEU_TOKENIZERS:
        tokenizer = sacrebleu.metrics.bleu._get_tokenizer(name)()
        for text in PUBLISHED_HYPS + PUBLISHED_REFS[0]:
            assert B.sacrebleu_tokenize(text, name) == tokenizer(text.rstrip()).split()


def _load(tmp_path: Path, value: Any) -> SuiteError:
    path = tmp_path / "suite.yaml"
    path.write_text(
        f"name: s\nmetrics:\n  bleu_ja: {{metric: text_corpus_bleu, tokenize: {value}}}\n",
        encoding="utf-8",
    )
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.key == "metrics.bleu_ja"
    return info.value


@pytest.mark.parametrize("name", sorted(B.SACREBLEU_ONLY))
def test_sacrebleu_only_tokenizers_fail_at_suite_load(tmp_path: Path, name: str) -> None:
    message = str(_load(tmp_path, name))
    assert f"'{name}' is a sacrebleu tokenizer that pingce does not have" in message
    assert "13a, zh, intl, char, none" in message
    assert B.SACREBLEU_ONLY[name] in message


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("ZH", ["got 'ZH'", "did you mean 'zh'?"]),
        ("13A", ["did you mean '13a'?"]),
        ("intel", ["did you mean 'intl'?"]),
        ("ja_mecab", ["sacrebleu's 'ja-mecab' is not in pingce", "MeCab"]),
        ("jieba", ["'jieba' is a `tokenizer` of text_rouge_* and text_bleu"]),
        ("3", ["got 3"]),
    ],
)
def test_unknown_tokenizers_suggest_a_name(tmp_path: Path, value: str, words: list[str]) -> None:
    message = str(_load(tmp_path, value))
    assert "tokenize must be one of 13a, zh, intl, char, none" in message
    for word in words:
        assert word in message


def test_the_functions_share_the_check() -> None:
    with pytest.raises(ValueError, match="'flores200' is a sacrebleu tokenizer"):
        B.sacrebleu_tokenize("x", "flores200")
    with pytest.raises(ValueError, match="did you mean 'char'"):
        B.sacrebleu_tokenize_all(["x"], "chars")
