"""Parity of the generic text-overlap family with the libraries users trust.

Every expected value comes from the reference library run in the test (rouge-score's
``RougeScorer`` with a tokenizer object wrapping ours, nltk's ``sentence_bleu``/``corpus_bleu``,
sacrebleu's ``BLEU``/``CHRF``), never from pingce's own output. Cases: hand-made edge cases
(empty texts, one token, repeated n-grams, decimal numbers, mixed Chinese/English, newlines) and
thousands of seeded random Chinese, English and mixed texts.
"""

from __future__ import annotations

import gc
import math
import random
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import sacrebleu
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from rouge_score import rouge_scorer, tokenizers
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

import pingce.metrics.overlap as overlap
from pingce.errors import SuiteError
from pingce.metrics import Context, Metric, create_metric
from pingce.records import load_records
from pingce.text import bleu as B
from pingce.text.chrf import chrf, chrf_stats, chrf_stats_batch, corpus_chrf, sentence_chrf
from pingce.text.pairs import PairIds, dense_rank
from pingce.text.rouge_google import (
    lcs_indices,
    lcs_length,
    rouge_l_batch,
    rouge_lsum_batch,
    rouge_lsum_counts,
    rouge_n_batch,
    rouge_n_counts,
    split_sentences,
)
from pingce.text.tokenize import EmptyTokensWarning, get_tokenizer, warn_if_empty

TOL = 1e-9
TOKENIZERS = ("jieba", "cjk", "whitespace")
SMOOTH_METHODS = ("exp", "floor", "add-k", "none")
SACRE_TOKENIZERS = ("13a", "zh", "char", "none")

# ----------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------

HAND_MADE: list[tuple[str, str]] = [
    ("", ""),
    ("", "今天天气很好"),
    ("今天天气很好", ""),
    ("好", "好"),
    ("好", "坏"),
    ("a", "a"),
    ("的的的的的", "的的"),
    ("好好学习天天向上好好学习", "天天向上好好学习好好"),
    ("a a a b a a", "a b a b a"),
    ("the the the the the the the", "the cat is on the mat"),
    ("价格是3.5元，涨了0.25%", "价格为3.50元，涨幅0.25%"),
    ("版本2.0.1于2024-01-15发布", "2024-01-15发布了版本2.0.1"),
    ("1,000,000 users at 99.9% uptime.", "99.9% uptime for 1,000,000 users."),
    ("我用Python写了一个API接口", "我用 python 写了 API 接口"),
    ("北京是China的首都, right?", "China的首都是北京。"),
    ("第一句话。\n第二句话很长\n\n第三句", "第一句话\n第三句话很短"),
    ("one line\ntwo lines\nthree", "two lines\none line"),
    ("  \n  ", "x"),
    ("\n", "\n\n"),
    ("A&amp;B &lt;tag&gt; <skipped> end-\nline", "A&B <tag> endline"),
    ("中文，English，混合！", "中文,English,混合!"),
    ("ｆｕｌｌ－ｗｉｄｔｈ　文字", "full-width 文字"),
]

ZH_WORDS = [
    "今天",
    "天气",
    "很好",
    "我们",
    "一起",
    "去",
    "公园",
    "散步",
    "然后",
    "回家",
    "吃饭",
    "合同",
    "条款",
    "风险",
    "甲方",
    "乙方",
    "违约",
    "责任",
    "付款",
    "期限",
    "三十",
    "日内",
    "患者",
    "症状",
    "头痛",
    "发热",
    "咳嗽",
    "舌苔",
    "脉象",
    "建议",
    "服用",
    "中药",
    "调理",
    "系统",
    "功能",
    "用户",
    "登录",
    "查询",
    "订单",
    "数据",
    "接口",
    "返回",
    "结果",
    "的",
    "了",
    "是",
    "在",
    "和",
    "也",
    "不",
    "很",
    "都",
]
EN_WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "at",
    "by",
    "this",
    "we",
    "you",
    "they",
    "patient",
    "contract",
    "risk",
    "payment",
    "order",
    "user",
    "query",
    "data",
    "system",
    "function",
    "result",
    "returns",
    "error",
    "value",
]
NUMBERS = ("3.5", "0.25", "100", "2,000", "99.9%", "1.0.2", "2024-01-15", "7")
PUNCT_ZH = ("，", "。", "！", "？", "、", "：")
PUNCT_EN = (",", ".", "!", "?", "-", "(", ")", ":")


def _words(rng: random.Random, kind: str, k: int) -> list[str]:
    out = []
    for _ in range(k):
        u = rng.random()
        if u < 0.08:
            out.append(rng.choice(NUMBERS))
        elif u < 0.15:
            out.append(rng.choice(PUNCT_ZH if kind == "zh" else PUNCT_EN))
        elif kind == "zh" or (kind == "mixed" and u < 0.6):
            out.append(rng.choice(ZH_WORDS))
        else:
            out.append(rng.choice(EN_WORDS))
    return out


def _join(words: list[str], kind: str, rng: random.Random) -> str:
    if kind == "en":
        return " ".join(words)
    return "".join(w if rng.random() < 0.8 else f" {w}" for w in words)


def random_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    """Seeded (prediction, reference) texts: a third Chinese, English, mixed; predictions are
    edits of the reference (or unrelated), some with newlines, some empty."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        kind = ("zh", "en", "mixed")[i % 3]
        gold = _words(rng, kind, rng.choice([0, 1, 2, 3, 5, 8, 12, 20, 30]))
        pred = list(gold)
        if rng.random() < 0.15:
            pred = _words(rng, kind, rng.randint(0, 20))
        for _ in range(rng.randint(0, 5)):
            u = rng.random()
            if pred and u < 0.35:
                pred[rng.randrange(len(pred))] = rng.choice(_words(rng, kind, 1))
            elif pred and u < 0.55:
                del pred[rng.randrange(len(pred))]
            elif u < 0.8:
                pred.insert(rng.randint(0, len(pred)), rng.choice(_words(rng, kind, 1)))
            elif len(pred) > 3:
                a = rng.randrange(len(pred) - 2)
                pred[a : a + 3] = pred[a : a + 3][::-1]
        texts = []
        for words in (pred, gold):
            if words and rng.random() < 0.2:  # sentences on lines, for ROUGE-Lsum
                cut = sorted(rng.sample(range(len(words) + 1), min(2, len(words) + 1)))
                parts = [words[: cut[0]], words[cut[0] : cut[-1]], words[cut[-1] :]]
                texts.append("\n".join(_join(p, kind, rng) for p in parts))
            else:
                texts.append(_join(words, kind, rng))
        pairs.append((texts[0], texts[1]))
    return pairs


RANDOM = random_pairs(3000, seed=20261122)
PREDS = [p for p, _ in RANDOM]
GOLDS = [g for _, g in RANDOM]
ALL_PAIRS = HAND_MADE + RANDOM


class WrappedTokenizer(tokenizers.Tokenizer):
    """rouge-score's tokenizer interface around one of ours (its default drops Chinese)."""

    def __init__(self, name: str) -> None:
        self.fn = get_tokenizer(name)

    def tokenize(self, text: str) -> list[str]:
        return self.fn(text)


def close(a: float, b: float, tol: float = TOL) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol


def assert_all_close(ours: np.ndarray, expected: list[float], what: str) -> None:
    bad = [
        i for i, (a, b) in enumerate(zip(ours.tolist(), expected, strict=True)) if not close(a, b)
    ]
    assert not bad, f"{what}: {len(bad)} mismatches, first at {bad[0]}: {ours[bad[0]]!r} != " + (
        f"{expected[bad[0]]!r}"
    )


@pytest.fixture(scope="module")
def tokens() -> dict[str, tuple[list[list[str]], list[list[str]]]]:
    out = {}
    for name in TOKENIZERS:
        fn = get_tokenizer(name)
        out[name] = ([fn(p) for p, _ in ALL_PAIRS], [fn(g) for _, g in ALL_PAIRS])
    return out


ROUGE_PAIRS = {"jieba": len(ALL_PAIRS), "cjk": 1500, "whitespace": 1000}


@pytest.fixture(scope="module")
def rouge_oracle() -> dict[str, list[dict[str, Any]]]:
    """rouge-score's scores of every pair, per tokenizer (score(target=gold, prediction=pred))."""
    types = ["rouge1", "rouge2", "rouge3", "rouge4", "rougeL", "rougeLsum"]
    out = {}
    for name in TOKENIZERS:
        scorer = rouge_scorer.RougeScorer(types, tokenizer=WrappedTokenizer(name))
        out[name] = [scorer.score(g, p) for p, g in ALL_PAIRS[: ROUGE_PAIRS[name]]]
    return out


# ----------------------------------------------------------------------------------------------
# ROUGE
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", TOKENIZERS)
def test_rouge_n_and_l_match_rouge_score(
    name: str,
    tokens: dict[str, tuple[list[list[str]], list[list[str]]]],
    rouge_oracle: dict[str, list[dict[str, Any]]],
) -> None:
    oracle = rouge_oracle[name]
    preds, golds = tokens[name]
    pairs = PairIds.from_tokens(preds[: len(oracle)], golds[: len(oracle)])
    for key, scores in [(f"rouge{n}", rouge_n_batch(pairs, n=n)) for n in (1, 2, 3, 4)] + [
        ("rougeL", rouge_l_batch(pairs))
    ]:
        for field, ours in (
            ("precision", scores.precision),
            ("recall", scores.recall),
            ("fmeasure", scores.fmeasure),
        ):
            expected = [getattr(o[key], field) for o in oracle]
            assert_all_close(ours, expected, f"{name} {key} {field}")


@pytest.mark.parametrize("name", TOKENIZERS)
def test_rouge_lsum_matches_rouge_score(
    name: str, rouge_oracle: dict[str, list[dict[str, Any]]]
) -> None:
    fn = get_tokenizer(name)
    oracle = [o["rougeLsum"] for o in rouge_oracle[name]]
    cases = ALL_PAIRS[: len(oracle)]
    preds = [[fn(s) for s in split_sentences(p)] for p, _ in cases]
    golds = [[fn(s) for s in split_sentences(g)] for _, g in cases]
    scores = rouge_lsum_batch(preds, golds)
    assert sum("\n" in p or "\n" in g for p, g in cases) > 300
    for field in ("precision", "recall", "fmeasure"):
        assert_all_close(
            getattr(scores, field), [getattr(o, field) for o in oracle], f"{name} Lsum {field}"
        )


def test_per_pair_rouge_functions_match_rouge_score() -> None:
    scorer = rouge_scorer.RougeScorer(
        ["rouge1", "rouge3", "rougeL"], tokenizer=WrappedTokenizer("cjk")
    )
    fn = get_tokenizer("cjk")
    for pred, gold in ALL_PAIRS[:400]:
        expected = scorer.score(gold, pred)
        p, g = fn(pred), fn(gold)
        for n in (1, 3):
            overlap_, pred_total, gold_total = rouge_n_counts(p, g, n)
            assert close(overlap_ / max(pred_total, 1), expected[f"rouge{n}"].precision)
            assert close(overlap_ / max(gold_total, 1), expected[f"rouge{n}"].recall)
        lcs = lcs_length(p, g)
        assert close(lcs / len(p) if p and g else 0.0, expected["rougeL"].precision)
        hits, pred_total, gold_total = rouge_lsum_counts([p], [g])
        assert hits == (lcs if p and g else 0)


def test_lcs_matches_rouge_score_tables() -> None:
    """Our bit-parallel LCS read-out equals rouge-score's DP table and backtrack; rapidfuzz's
    length equals the table's."""
    rng = random.Random(7)
    for _ in range(3000):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 14))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 14))]
        assert lcs_indices(a, b) == rouge_scorer.lcs_ind(a, b)
        assert lcs_length(a, b) == rouge_scorer._lcs_table(a, b)[-1][-1]


def test_default_tokenizer_trap_is_reported() -> None:
    """rouge-score's default tokenizer keeps only [a-z0-9]: Chinese becomes no tokens, and even
    identical texts score 0. warn_if_empty reports it; our tokenizers score identity 1."""
    texts = ["今天天气很好", "合同违约责任", "ok 好"]
    default = tokenizers.DefaultTokenizer()
    toks = [default.tokenize(t) for t in texts]
    with pytest.warns(EmptyTokensWarning, match="2 non-empty text"):
        assert warn_if_empty(texts, toks, "rouge-score default") == 2
    trap = rouge_scorer.RougeScorer(["rouge1"]).score(texts[0], texts[0])["rouge1"]
    assert trap.fmeasure == 0.0
    ours = rouge_n_batch([get_tokenizer("jieba")(texts[0])], [get_tokenizer("jieba")(texts[0])])
    assert ours.fmeasure[0] == 1.0


def test_dense_rank_fallback_equals_packed_sort() -> None:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 1000, size=5000)
    fast = dense_rank(keys, 1000)
    slow = dense_rank(keys, 1 << 62)  # too wide to pack: np.unique
    assert np.array_equal(fast, slow)
    assert np.array_equal(fast, np.unique(keys, return_inverse=True)[1])


def test_pair_ids_reject_misaligned_input() -> None:
    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        PairIds.from_tokens([["a"], ["b"]], [["a"]])
    with pytest.raises(ValueError, match="n >= 1"):
        rouge_n_counts(["a"], ["a"], 0)


# ----------------------------------------------------------------------------------------------
# nltk BLEU
# ----------------------------------------------------------------------------------------------


def _nltk(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(fn(*args, **kwargs))
        except AssertionError:  # method 6 without a trigram match
            return math.nan


@pytest.mark.parametrize("method", range(8))
def test_nltk_sentence_and_corpus_bleu(
    method: int, tokens: dict[str, tuple[list[list[str]], list[list[str]]]]
) -> None:
    preds, golds = tokens["jieba"]
    preds, golds = preds[:2000], golds[:2000]
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    rows = B.nltk_bleu_stats_batch(preds, golds)
    ours = B.nltk_bleu(rows, smoothing=method)
    expected = [
        _nltk(sentence_bleu, [g], p, smoothing_function=smoothing)
        for p, g in zip(preds, golds, strict=True)
    ]
    assert_all_close(ours, expected, f"sentence_bleu method{method}")
    if method == 6:
        assert np.isnan(ours).sum() > 100 and (~np.isnan(ours)).sum() > 100
    refs = [[g] for g in golds]
    expected_corpus = _nltk(corpus_bleu, refs, preds, smoothing_function=smoothing)
    assert close(B.nltk_corpus_bleu(rows, smoothing=method), expected_corpus)
    if method < 5:  # methods 5-7 in nltk read the last pair; summed statistics do not
        assert close(float(B.nltk_bleu(rows.sum(axis=0), smoothing=method)), expected_corpus)


@pytest.mark.parametrize(
    ("weights", "method"), [((0.5, 0.5), 1), ((1 / 3, 1 / 3, 1 / 3), 4), ((0.1, 0.2, 0.3, 0.4), 7)]
)
def test_nltk_weights_and_max_order(weights: tuple[float, ...], method: int) -> None:
    fn = get_tokenizer("cjk")
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    preds = [fn(p) for p in PREDS[:600]]
    golds = [fn(g) for g in GOLDS[:600]]
    rows = B.nltk_bleu_stats_batch(preds, golds, max_order=len(weights))
    ours = B.nltk_bleu(rows, weights, method)
    expected = [
        _nltk(sentence_bleu, [g], p, weights, smoothing) for p, g in zip(preds, golds, strict=True)
    ]
    assert_all_close(ours, expected, f"weights {weights}")


def test_nltk_multiple_references_and_auto_reweigh() -> None:
    fn = get_tokenizer("jieba")
    smoothing = SmoothingFunction().method2
    for i in range(0, 600, 3):
        hyp = fn(PREDS[i])
        refs = [fn(GOLDS[i]), fn(GOLDS[i + 1]), fn(PREDS[i + 2])]
        row = B.nltk_bleu_stats(hyp, refs)
        for method, auto in ((2, False), (0, True)):
            fn_ = smoothing if method == 2 else None
            expected = _nltk(sentence_bleu, refs, hyp, smoothing_function=fn_, auto_reweigh=auto)
            assert close(float(B.nltk_bleu(row, smoothing=method, auto_reweigh=auto)), expected)


def test_nltk_argument_errors() -> None:
    row = B.nltk_bleu_stats(["a"], [["a"]])
    with pytest.raises(ValueError, match=r"0\.\.7"):
        B.nltk_bleu(row, smoothing=8)
    with pytest.raises(ValueError, match="weights"):
        B.nltk_bleu(row, weights=(0.2,) * 5)
    with pytest.raises(ValueError, match="5-gram"):
        B.nltk_bleu(B.nltk_bleu_stats_batch([["a"]], [["a"]], fivegrams=False), smoothing=5)


# ----------------------------------------------------------------------------------------------
# sacrebleu BLEU
# ----------------------------------------------------------------------------------------------

SACRE_TEXTS = [p for p, _ in ALL_PAIRS] + [g for _, g in ALL_PAIRS]


@pytest.mark.parametrize("tokenize", SACRE_TOKENIZERS)
def test_sacrebleu_tokenizers(tokenize: str) -> None:
    theirs = sacrebleu.metrics.bleu._get_tokenizer(tokenize)()
    for text in SACRE_TEXTS:
        for lowercase in (False, True):
            t = text.lower() if lowercase else text
            assert B.sacrebleu_tokenize(text, tokenize, lowercase) == theirs(t.rstrip()).split()


def test_sacrebleu_tokenizers_on_punctuation_fuzz() -> None:
    """Short strings drawn from digits, '.', ',', '-', ASCII symbols, spaces, Chinese and
    full-width characters, newlines and entities: where the 13a rules interact."""
    alphabet = [*"0123456789.,.,--'\"!#$%&()*+/:;<=>?@[\\]^_`{|}~ \t\nab中文，。５"]
    alphabet += ["&amp;", "&quot;", "&lt;", "&gt;", "<skipped>", "-\n", "  "]
    rng = random.Random(11)
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    for tokenize in SACRE_TOKENIZERS:
        theirs = sacrebleu.metrics.bleu._get_tokenizer(tokenize)()
        wrong = [
            t for t in texts if B.sacrebleu_tokenize(t, tokenize) != theirs(t.rstrip()).split()
        ]
        assert not wrong, (tokenize, wrong[:5])


def test_zh_character_class_equals_sacrebleu() -> None:
    """Every BMP character and a sample beyond it (sacrebleu's ranges compare as strings)."""
    is_chinese = TokenizerZh._is_chinese_char
    points = [*range(0x10000), 0x20000, 0x20001, 0x2A6D6, 0x2F800, 0x2FA1D, 0x10FFFF]
    wrong = [hex(c) for c in points if (B._ZH.fullmatch(chr(c)) is not None) != is_chinese(chr(c))]
    assert not wrong


@pytest.mark.parametrize("tokenize", SACRE_TOKENIZERS)
def test_sacrebleu_segment_statistics(tokenize: str) -> None:
    """Our per-record statistics are sacrebleu's own segment statistics, number for number."""
    preds = [p for p, _ in ALL_PAIRS]
    golds = [g for _, g in ALL_PAIRS]
    theirs = np.asarray(BLEU(tokenize=tokenize)._extract_corpus_statistics(preds, [golds]))
    pairs = PairIds.from_tokens(
        B.sacrebleu_tokenize_all(preds, tokenize), B.sacrebleu_tokenize_all(golds, tokenize)
    )
    assert np.array_equal(B.sacrebleu_bleu_stats_batch(pairs), theirs)


@pytest.mark.parametrize("tokenize", SACRE_TOKENIZERS)
def test_sacrebleu_corpus_and_sentence_bleu(tokenize: str) -> None:
    """End to end with sacrebleu's default smoothing, then every smoothing method and effective
    order on sacrebleu's own statistics (corpus and sentence scores by its own finaliser)."""
    preds = [p for p, _ in ALL_PAIRS]
    golds = [g for _, g in ALL_PAIRS]
    expected = BLEU(tokenize=tokenize).corpus_score(preds, [golds]).score
    assert close(B.sacrebleu_corpus_bleu(preds, golds, tokenize), expected)
    theirs = BLEU(tokenize=tokenize)._extract_corpus_statistics(preds, [golds])
    ours = B.sacrebleu_bleu_stats_batch(
        B.sacrebleu_tokenize_all(preds, tokenize), B.sacrebleu_tokenize_all(golds, tokenize)
    )
    summed = [int(x) for x in np.sum(theirs, axis=0)]
    for smooth in SMOOTH_METHODS:
        for effective in (False, True):
            metric = BLEU(tokenize=tokenize, smooth_method=smooth, effective_order=effective)
            expected = metric._compute_score_from_stats(list(summed)).score
            value = float(B.sacrebleu_bleu(ours.sum(axis=0), smooth, None, effective))
            assert close(value, expected), (smooth, effective, value, expected)
            sentences = [metric._compute_score_from_stats(list(row)).score for row in theirs]
            assert_all_close(
                B.sacrebleu_bleu(ours, smooth, None, effective),
                sentences,
                f"sentence {tokenize} {smooth} effective={effective}",
            )


@pytest.mark.parametrize(("smooth", "value"), [("floor", 0.3), ("add-k", 2.0)])
def test_sacrebleu_smooth_values_and_compat_api(smooth: str, value: float) -> None:
    preds, golds = PREDS[:500], GOLDS[:500]
    expected = sacrebleu.corpus_bleu(
        preds, [golds], smooth_method=smooth, smooth_value=value, tokenize="zh"
    ).score
    assert close(B.sacrebleu_corpus_bleu(preds, golds, "zh", smooth, value), expected)
    for p, g in zip(preds[:100], golds[:100], strict=True):
        expected = sacrebleu.sentence_bleu(
            p, [g], smooth_method=smooth, smooth_value=value, tokenize="zh"
        ).score
        ours = B.sacrebleu_sentence_bleu([p], [g], "zh", smooth, value)
        assert close(float(ours[0]), expected)


def test_sacrebleu_multiple_references() -> None:
    metric = BLEU(tokenize="zh", effective_order=True)
    for i in range(0, 300, 3):
        refs = [GOLDS[i], GOLDS[i + 1], PREDS[i + 2]]
        row = B.sacrebleu_bleu_stats(
            B.sacrebleu_tokenize(PREDS[i], "zh"), [B.sacrebleu_tokenize(r, "zh") for r in refs]
        )
        theirs = metric._extract_corpus_statistics([PREDS[i]], [[r] for r in refs])[0]
        assert row.tolist() == theirs
        expected = metric.sentence_score(PREDS[i], refs).score
        assert close(float(B.sacrebleu_bleu(row, effective_order=True)), expected)


# ----------------------------------------------------------------------------------------------
# chrF
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"word_order": 2},
        {"lowercase": True, "whitespace": True},
        {"eps_smoothing": True, "word_order": 1},
        {"char_order": 3, "beta": 1},
    ],
    ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults",
)
def test_chrf_matches_sacrebleu(options: dict[str, Any]) -> None:
    preds = [p for p, _ in ALL_PAIRS]
    golds = [g for _, g in ALL_PAIRS]
    metric = CHRF(**options)
    stat_options = {k: v for k, v in options.items() if k not in ("beta", "eps_smoothing")}
    theirs = metric._extract_corpus_statistics(preds, [golds])
    assert np.array_equal(chrf_stats_batch(preds, golds, **stat_options), np.asarray(theirs))
    # corpus_score is _aggregate_and_compute of these statistics, sentence_score the same on one
    expected = metric._aggregate_and_compute(theirs).score
    assert close(corpus_chrf(preds, golds, **options), expected)
    ours = sentence_chrf(preds, golds, **options)
    expected_sentences = [metric._compute_score_from_stats(row).score for row in theirs]
    assert_all_close(ours, expected_sentences, f"chrF {options}")
    end_to_end = [metric.sentence_score(p, [g]).score for p, g in ALL_PAIRS[:100]]
    assert_all_close(ours[:100], end_to_end, f"chrF sentence_score {options}")
    for i in range(0, 150, 5):  # several references: the best one's statistics
        refs = [golds[i], golds[i + 1], preds[i + 2]]
        row = chrf_stats(preds[i], refs, **options)
        beta = options.get("beta", 2)
        value = float(chrf(row, beta, options.get("eps_smoothing", False)))
        assert close(value, metric.sentence_score(preds[i], refs).score)


# ----------------------------------------------------------------------------------------------
# through the Metric objects
# ----------------------------------------------------------------------------------------------

METRIC_PAIRS = HAND_MADE + RANDOM[:1200]


def _records() -> list[dict[str, Any]]:
    return [
        {"id": f"r{i}", "output": {"answer": p}, "reference": g}
        for i, (p, g) in enumerate(METRIC_PAIRS)
    ]


def _run(metric: Metric) -> tuple[float, np.ndarray]:
    statistic = metric.statistic()
    table = load_records(_records(), statistic.fields())
    block = statistic.compute(table, Context())
    corpus = float(metric.finalize(block.total()[None, :])[0])
    return corpus, np.asarray(metric.finalize(block.per_record()))


FIELDS = {"pred": "output.answer", "gold": "reference"}


@pytest.mark.parametrize("tokenizer", ["jieba", "whitespace"])
def test_rouge_metrics_equal_rouge_score_means(tokenizer: str) -> None:
    scorer = rouge_scorer.RougeScorer(
        ["rouge1", "rouge2", "rougeL", "rougeLsum"], tokenizer=WrappedTokenizer(tokenizer)
    )
    oracle = [scorer.score(g, p) for p, g in METRIC_PAIRS]
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("rouge_n", {"n": 1}, "rouge1"),
        ("rouge_n", {"n": 2}, "rouge2"),
        ("rouge_l", {}, "rougeL"),
        ("rouge_lsum", {}, "rougeLsum"),
    ]
    for name, args, key in cases:
        for stat, field in (("f", "fmeasure"), ("p", "precision"), ("r", "recall")):
            metric = create_metric(name, **FIELDS, tokenizer=tokenizer, stat=stat, **args)
            corpus, per_record = _run(metric)
            expected = [getattr(o[key], field) for o in oracle]
            assert close(corpus, float(np.mean(expected))), (name, stat)
            assert_all_close(per_record, expected, f"{name} {stat}")


@pytest.mark.parametrize("smoothing", [0, 3, 6, 7])
def test_bleu_metric_equals_nltk_sentence_mean(smoothing: int) -> None:
    fn = get_tokenizer("jieba")
    method = getattr(SmoothingFunction(), f"method{smoothing}")
    expected = [
        _nltk(sentence_bleu, [fn(g)], fn(p), smoothing_function=method) for p, g in METRIC_PAIRS
    ]
    corpus, per_record = _run(create_metric("bleu", **FIELDS, smoothing=smoothing))
    assert_all_close(per_record, expected, f"bleu method{smoothing}")
    assert close(corpus, float(np.nanmean(expected)))


@pytest.mark.parametrize(
    ("tokenize", "smooth"), [("zh", "exp"), ("13a", "floor"), ("char", "add-k")]
)
def test_corpus_bleu_metric_equals_sacrebleu(tokenize: str, smooth: str) -> None:
    preds = [p for p, _ in METRIC_PAIRS]
    golds = [g for _, g in METRIC_PAIRS]
    metric = create_metric("corpus_bleu", **FIELDS, tokenize=tokenize, smooth_method=smooth)
    corpus, per_record = _run(metric)
    bleu = BLEU(tokenize=tokenize, smooth_method=smooth)
    assert close(corpus, bleu.corpus_score(preds, [golds]).score)
    sentence = [bleu.sentence_score(p, [g]).score for p, g in METRIC_PAIRS[:300]]
    assert_all_close(per_record[:300], sentence, "per-record sacrebleu")


@pytest.mark.parametrize("word_order", [0, 2])
def test_chrf_metric_equals_sacrebleu(word_order: int) -> None:
    preds = [p for p, _ in METRIC_PAIRS]
    golds = [g for _, g in METRIC_PAIRS]
    corpus, _ = _run(create_metric("chrf", **FIELDS, word_order=word_order))
    assert close(corpus, CHRF(word_order=word_order).corpus_score(preds, [golds]).score)


def test_tokenisation_happens_once_per_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """ROUGE-1, ROUGE-2, ROUGE-L and BLEU over the same fields tokenise each text once."""
    calls: list[str] = []
    real = get_tokenizer("cjk")

    def counting(name: str) -> Callable[[str], list[str]]:
        def tokenize(text: str) -> list[str]:
            calls.append(text)
            return real(text)

        return tokenize

    monkeypatch.setattr(overlap, "get_tokenizer", counting)
    overlap.clear_text_cache()
    metrics = [
        create_metric("rouge_n", n=1, tokenizer="cjk"),
        create_metric("rouge_n", n=2, tokenizer="cjk"),
        create_metric("rouge_l", tokenizer="cjk"),
        create_metric("bleu", tokenizer="cjk"),
    ]
    records = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(RANDOM[:50])]
    table = load_records(records, metrics[0].statistic().fields())
    keys = {m.statistic().key for m in metrics}
    assert len(keys) == 4
    for metric in metrics:
        metric.statistic().compute(table, Context())
    assert len(calls) == 2 * table.n
    overlap.clear_text_cache()


def test_cached_tokens_go_with_their_table() -> None:
    metric = create_metric("rouge_n", tokenizer="cjk")
    records = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(RANDOM[:20])]
    table = load_records(records, metric.statistic().fields())
    first = metric.statistic().compute(table, Context()).per_record()
    tid = id(table)
    assert tid in overlap._CACHE.entries
    again = metric.statistic().compute(table, Context()).per_record()
    assert np.array_equal(first, again)
    del table
    gc.collect()
    assert tid not in overlap._CACHE.entries


def test_statistic_warns_when_a_tokenizer_drops_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tokenizer that turns Chinese into nothing (rouge-score's default) is reported once."""
    default = tokenizers.DefaultTokenizer()
    monkeypatch.setattr(overlap, "get_tokenizer", lambda name: default.tokenize)
    overlap.clear_text_cache()
    metric = create_metric("rouge_l", tokenizer="whitespace")
    records = [
        {"id": 1, "pred_text": "今天天气很好", "gold_text": "今天天气很好"},
        {"id": 2, "pred_text": "ok", "gold_text": "ok"},
    ]
    table = load_records(records, metric.statistic().fields())
    with pytest.warns(EmptyTokensWarning, match="1 non-empty text"):
        block = metric.statistic().compute(table, Context())
    assert block.per_record()[:, 2].tolist() == [0.0, 1.0]
    overlap.clear_text_cache()


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("rouge_n", {"n": 0}, "n must be"),
        ("rouge_n", {"tokenizer": "spacy"}, "unknown tokenizer"),
        ("rouge_l", {"stat": "x"}, "stat must be"),
        ("bleu", {"smoothing": 9}, "smoothing"),
        ("bleu", {"smoothing": 6, "max_order": 2}, "method 6"),
        ("corpus_bleu", {"tokenize": "jieba"}, "tokenize must be"),
        ("corpus_bleu", {"smooth_method": "add-one"}, "smooth_method"),
        ("chrf", {"char_order": 0}, "char_order"),
    ],
)
def test_metric_argument_errors(name: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        create_metric(name, **args)


def test_undefined_values_have_reasons() -> None:
    for name in ("rouge_n", "bleu", "corpus_bleu", "chrf"):
        metric = create_metric(name)
        width = {"rouge_n": 4, "bleu": 3, "corpus_bleu": 11, "chrf": 19}[name]
        empty = np.zeros(width)
        assert math.isnan(float(metric.finalize(empty[None, :])[0]))
        assert metric.undefined_reason(empty) == "no records"
    method6 = create_metric("bleu", **FIELDS, smoothing=6)
    corpus, _ = _run(method6)
    assert not math.isnan(corpus)
    assert "trigram" in method6.undefined_reason(np.array([0.0, 0.0, 5.0]))
