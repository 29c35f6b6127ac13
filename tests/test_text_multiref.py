"""Several references per record and the peers' options (issue 14), against the libraries.

Every expected value comes from the reference library run in the test, or from a table the
library publishes (each such case names its source): rouge-score's ``score_multi`` and
``split_summaries``, nltk's ``sentence_bleu`` / ``corpus_bleu`` with several references, several
weight tuples, ``auto_reweigh`` and ``SmoothingFunction(epsilon, alpha, k)``, sacrebleu's ``BLEU``
and ``CHRF`` with reference streams holding ``None`` where a segment has fewer references. Random
cases are seeded Chinese, English and mixed texts with one to four references per record (and
some records with a plain string), compared to 1e-9.
"""

from __future__ import annotations

import json
import math
import random
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU, CHRF

import pingce
from pingce.errors import InputError, SuiteError
from pingce.metrics import Context, Metric, create_metric
from pingce.metrics.overlap import clear_text_cache
from pingce.records import load_records
from pingce.suites import load_suite
from pingce.suites.spec import SuiteSpec
from pingce.text import bleu as B
from pingce.text.chrf import corpus_chrf, sentence_chrf
from pingce.text.pairs import PairIds, first_best, flatten_references
from pingce.text.rouge_google import summary_sentences
from pingce.text.sentences import split_sentences as chinese_sentences
from pingce.text.tokenize import get_tokenizer

from .test_text_generic import WrappedTokenizer, random_pairs

TOL = 1e-9

# ----------------------------------------------------------------------------------------------
# data: 1-4 references per record
# ----------------------------------------------------------------------------------------------


def multi_records(n: int, seed: int) -> list[tuple[str, str | list[str]]]:
    """Seeded (prediction, references): the reference of a random pair, then 0-3 more drawn from
    edits of it, other records' texts, the prediction itself, a duplicate or an empty string; a
    fifth of the records keep a plain string."""
    base = random_pairs(n, seed)
    rng = random.Random(seed + 1)
    pool = [g for _, g in base] + [p for p, _ in base]
    out: list[tuple[str, str | list[str]]] = []
    for pred, gold in base:
        if rng.random() < 0.2:
            out.append((pred, gold))
            continue
        refs = [gold]
        for _ in range(rng.randint(0, 3)):
            u = rng.random()
            if u < 0.5:
                refs.append(rng.choice(pool))
            elif u < 0.65:
                refs.append(pred)
            elif u < 0.8:
                refs.append(rng.choice(refs))
            elif u < 0.88:
                refs.append("")
            else:
                words = gold.split(" ")
                refs.append(" ".join(words[: max(1, len(words) // 2)]))
        rng.shuffle(refs)
        out.append((pred, refs))
    return out


RECORDS = multi_records(1500, seed=20261124)
HYPS = [p for p, _ in RECORDS]
REFS = [r for _, r in RECORDS]
GROUPS = [[r] if isinstance(r, str) else r for r in REFS]


def streams(groups: list[list[str]]) -> list[list[str | None]]:
    """sacrebleu's reference streams: stream j holds each segment's j-th reference or None."""
    k = max(map(len, groups))
    return [[g[j] if j < len(g) else None for g in groups] for j in range(k)]


def test_the_data_has_what_the_rules_decide_on() -> None:
    counts = Counter(len(g) for g in GROUPS)
    assert set(counts) == {1, 2, 3, 4} and min(counts.values()) > 100
    assert sum(isinstance(r, str) for r in REFS) > 200
    assert sum("" in g for g in GROUPS) > 30
    assert sum(len(set(g)) < len(g) for g in GROUPS) > 50  # duplicates: ties
    assert sum("\n" in t for g in GROUPS for t in g) > 200


def close(a: float, b: float, tol: float = TOL) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tol


def assert_all_close(ours: Any, expected: list[float], what: str) -> None:
    got = np.asarray(ours, dtype=np.float64).tolist()
    bad = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if not close(a, b)]
    assert not bad, f"{what}: {len(bad)} mismatches, first at {bad[0]}: {got[bad[0]]!r} != " + (
        f"{expected[bad[0]]!r}"
    )


def _nltk(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except AssertionError:  # method 6 without a trigram match
            return None


def run_metric(
    metric: Metric, records: list[tuple[str, str | list[str]]] = RECORDS
) -> tuple[float, np.ndarray]:
    """(corpus value, per-record values) of a metric over (pred_text, gold_text) records."""
    rows = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(records)]
    statistic = metric.statistic()
    table = load_records(rows, statistic.fields())
    block = statistic.compute(table, Context())
    corpus = float(metric.finalize(block.total()[None, :])[0])
    return corpus, np.asarray(metric.finalize(block.per_record()), dtype=np.float64)


# ----------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def test_multi_reference_clipping_and_lengths_by_brute_force() -> None:
    fn = get_tokenizer("cjk")
    texts, owner = flatten_references(REFS)
    assert owner is not None
    hyps = [fn(h) for h in HYPS]
    refs = [fn(t) for t in texts]
    pairs = PairIds.from_tokens(hyps, refs, owner)
    groups = [[refs[j] for j in np.flatnonzero(owner == i)] for i in range(len(hyps))]
    for n in range(1, 6):
        expected = []
        for hyp, group in zip(hyps, groups, strict=True):
            most: Counter[tuple[str, ...]] = Counter()
            for ref in group:
                most |= _ngrams(ref, n)
            expected.append(sum(min(c, most[g]) for g, c in _ngrams(hyp, n).items()))
        assert pairs.matches(n).tolist() == expected, n
    closest = []
    for hyp, group in zip(hyps, groups, strict=True):
        size = len(hyp)
        closest.append(min((len(r) for r in group), key=lambda r: (abs(r - size), r)))
    assert pairs.closest_ref_lengths().tolist() == closest
    wide = pairs.expanded()
    assert wide.n == len(refs)
    assert wide.pred_lengths.tolist() == [len(hyps[o]) for o in owner]
    assert wide.matches(2).tolist() == [
        sum((_ngrams(hyps[o], 2) & _ngrams(r, 2)).values())
        for o, r in zip(owner, refs, strict=True)
    ]


def test_first_best_takes_the_first_of_equals() -> None:
    owner = np.array([0, 0, 0, 1, 2, 2])
    assert first_best(np.array([0.5, 0.7, 0.7, 0.0, 0.0, 0.0]), owner, 3).tolist() == [1, 3, 4]
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 3, size=owner.size).astype(float)
    expected = [int(np.flatnonzero(owner == i)[np.argmax(scores[owner == i])]) for i in range(3)]
    assert first_best(scores, owner, 3).tolist() == expected
    with pytest.raises(ValueError, match="NaN"):
        first_best(np.array([np.nan]), np.array([0]), 1)


def test_reference_owners_are_checked() -> None:
    with pytest.raises(ValueError, match="no reference"):
        PairIds.from_tokens([["a"], ["b"], ["c"]], [["a"], ["b"], ["c"]], np.array([0, 0, 2]))
    with pytest.raises(ValueError, match="record order"):
        PairIds.from_tokens([["a"], ["b"]], [["a"], ["b"], ["c"]], np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="3 references but 2"):
        PairIds.from_tokens([["a"], ["b"]], [["a"], ["b"], ["c"]], np.array([0, 1]))
    with pytest.raises(ValueError, match="expanded"):
        PairIds.from_tokens([["a"]], [["a"], ["b"]], np.array([0, 0])).lcs()
    with pytest.raises(ValueError, match="empty list"):
        flatten_references(["a", []])


# ----------------------------------------------------------------------------------------------
# rouge-score: score_multi
# ----------------------------------------------------------------------------------------------

ROUGE_TYPES = ["rouge1", "rouge2", "rouge3", "rougeL", "rougeLsum"]


@pytest.fixture(scope="module")
def rouge_multi() -> dict[str, list[dict[str, Any]]]:
    """rouge-score's score_multi(references, prediction) of every record, per tokenizer."""
    out = {}
    for name, size in (("jieba", len(RECORDS)), ("cjk", 800), ("whitespace", 800)):
        scorer = rouge_scorer.RougeScorer(ROUGE_TYPES, tokenizer=WrappedTokenizer(name))
        out[name] = [scorer.score_multi(g, p) for p, g in zip(HYPS[:size], GROUPS, strict=False)]
    return out


ROUGE_METRICS: list[tuple[str, dict[str, Any], str]] = [
    ("text_rouge_n", {"n": 1}, "rouge1"),
    ("text_rouge_n", {"n": 2}, "rouge2"),
    ("text_rouge_n", {"n": 3}, "rouge3"),
    ("text_rouge_l", {}, "rougeL"),
    ("text_rouge_lsum", {}, "rougeLsum"),
]


@pytest.mark.parametrize("tokenizer", ["jieba", "cjk", "whitespace"])
def test_rouge_equals_score_multi(
    tokenizer: str, rouge_multi: dict[str, list[dict[str, Any]]]
) -> None:
    """Per record the P, R and F of the reference with the best F (first of equals), separately
    for each ROUGE type; the corpus value is their mean."""
    oracle = rouge_multi[tokenizer]
    records = RECORDS[: len(oracle)]
    for name, args, key in ROUGE_METRICS:
        for stat, field in (("f", "fmeasure"), ("p", "precision"), ("r", "recall")):
            metric = create_metric(name, tokenizer=tokenizer, stat=stat, **args)
            corpus, per_record = run_metric(metric, records)
            expected = [getattr(o[key], field) for o in oracle]
            assert_all_close(per_record, expected, f"{tokenizer} {name} {args} {stat}")
            assert close(corpus, float(np.mean(expected)))


def test_score_multi_ties_report_the_first_references_precision_and_recall() -> None:
    """pred 'a b': ref 'a' gives P 1/2, R 1; ref 'a b c d' gives P 1, R 1/2; both F = 2/3.
    rouge-score's np.argmax keeps the first, so the reported P depends on the order."""
    scorer = rouge_scorer.RougeScorer(["rouge1"], tokenizer=WrappedTokenizer("whitespace"))
    for refs in (["a", "a b c d"], ["a b c d", "a"]):
        expected = scorer.score_multi(refs, "a b")["rouge1"]
        for stat, field in (("p", "precision"), ("r", "recall"), ("f", "fmeasure")):
            metric = create_metric("text_rouge_n", tokenizer="whitespace", stat=stat)
            _, per_record = run_metric(metric, [("a b", refs)])
            assert per_record[0] == getattr(expected, field)
    assert scorer.score_multi(["a", "a b c d"], "a b")["rouge1"].precision == 0.5


# rouge-score's own score_multi tests (rouge_score/rouge_scorer_test.py, testRouge1Multi and
# testRougeAllMulti): (references, prediction, rouge type, precision, recall, F); None where the
# test does not state it. Its default tokenizer lowercases and keeps [a-z0-9] words, which on
# these texts is a whitespace split.
ROUGE_SCORE_MULTI_TABLE: list[tuple[list[str], str, str, float | None, float | None, float]] = [
    (["testing one two"], "testing", "rouge1", 1.0, 1 / 3, 1 / 2),
    (["first text", "first something"], "text first", "rouge1", None, None, 1.0),
    (["first text", "first something"], "text first", "rouge2", None, None, 0.0),
    (["first text", "first something"], "text first", "rougeL", None, None, 0.5),
]


@pytest.mark.parametrize(("refs", "pred", "key", "p", "r", "f"), ROUGE_SCORE_MULTI_TABLE)
def test_rouge_score_published_multi_cases(
    refs: list[str], pred: str, key: str, p: float | None, r: float | None, f: float
) -> None:
    name, args = {
        "rouge1": ("text_rouge_n", {"n": 1}),
        "rouge2": ("text_rouge_n", {"n": 2}),
        "rougeL": ("text_rouge_l", {}),
    }[key]
    for stat, want in (("p", p), ("r", r), ("f", f)):
        if want is None:
            continue
        metric = create_metric(name, tokenizer="whitespace", stat=stat, **args)
        _, per_record = run_metric(metric, [(pred, refs)])
        assert abs(per_record[0] - want) < 1e-7, (key, stat)


# ----------------------------------------------------------------------------------------------
# rouge-score: split_summaries
# ----------------------------------------------------------------------------------------------


@pytest.fixture
def punkt_model(tmp_path: Path) -> Iterator[Path]:
    """A small English Punkt model (nltk's punkt_tab layout) in a throwaway nltk_data folder,
    the only one nltk looks in: the machine has no Punkt model and the tests download nothing.
    The same nltk.sent_tokenize is called by rouge-score and by pingce, so it stands in for the
    real model: what is tested is which sentences each side scores, not Punkt itself."""
    import nltk
    from nltk import tokenize

    folder = tmp_path / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    (folder / "abbrev_types.txt").write_text("dr\nmr\nmrs\ne.g\ni.e\netc\nvs\n", encoding="utf-8")
    (folder / "sent_starters.txt").write_text("the\nit\nwe\n", encoding="utf-8")
    (folder / "collocations.tab").write_text("", encoding="utf-8")
    (folder / "ortho_context.tab").write_text("", encoding="utf-8")
    saved = list(nltk.data.path)
    nltk.data.path[:] = [str(tmp_path / "nltk_data")]
    tokenize._get_punkt_tokenizer.cache_clear()
    clear_text_cache()
    try:
        yield folder
    finally:
        nltk.data.path[:] = saved
        tokenize._get_punkt_tokenizer.cache_clear()
        clear_text_cache()


def sentence_texts(n: int, seed: int) -> list[tuple[str, list[str]]]:
    """English and mixed texts with several sentences (periods, abbreviations, question marks,
    newlines), 1-3 references each."""
    rng = random.Random(seed)
    pieces = [
        "The cat sat on the mat.",
        "It was not unexpected.",
        "Dr. Smith met Mr. Jones, e.g. at noon.",
        "We went home?",
        "the dog bit the man!",
        "今天天气很好。",
        "Prices rose 3.5% in 2024.",
        "It is a guide to action",
        "\n",
        "合同 条款 already signed.",
    ]

    def text() -> str:
        return " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))

    return [(text(), [text() for _ in range(rng.randint(1, 3))]) for _ in range(n)]


@pytest.mark.parametrize("tokenizer", ["whitespace", "cjk"])
def test_split_summaries_equals_rouge_score_with_nltk(punkt_model: Path, tokenizer: str) -> None:
    cases = sentence_texts(500, seed=3)
    scorer = rouge_scorer.RougeScorer(
        ["rougeLsum"], split_summaries=True, tokenizer=WrappedTokenizer(tokenizer)
    )
    oracle = [scorer.score_multi(refs, pred)["rougeLsum"] for pred, refs in cases]
    for value in (True, "nltk"):
        for stat, field in (("f", "fmeasure"), ("p", "precision"), ("r", "recall")):
            metric = create_metric(
                "text_rouge_lsum", tokenizer=tokenizer, stat=stat, split_summaries=value
            )
            assert metric.args["split_summaries"] == "nltk"
            _, per_record = run_metric(metric, cases)  # type: ignore[arg-type]
            assert_all_close(per_record, [getattr(o, field) for o in oracle], f"{value} {stat}")
    split = [summary_sentences(t, "nltk") for pred, refs in cases for t in [pred, *refs]]
    assert sum(len(s) > 1 for s in split) > 300  # the splitter did split


def test_split_summaries_chinese_is_lines_of_pingces_sentences() -> None:
    """``chinese``: rouge-score's ROUGE-Lsum of the texts with each of pingce's sentences on its
    own line."""
    scorer = rouge_scorer.RougeScorer(["rougeLsum"], tokenizer=WrappedTokenizer("jieba"))
    cases = RECORDS[:600]

    def lines(text: str) -> str:
        return "\n".join(chinese_sentences(text))

    oracle = [
        scorer.score_multi([lines(r) for r in g], lines(p))
        for p, g in zip(HYPS, GROUPS, strict=False)
    ]
    metric = create_metric("text_rouge_lsum", split_summaries="chinese")
    _, per_record = run_metric(metric, cases)
    assert_all_close(per_record, [o["rougeLsum"].fmeasure for o in oracle[:600]], "chinese")


def test_split_summaries_without_punkt_is_a_clear_error(tmp_path: Path) -> None:
    import nltk
    from nltk import tokenize

    saved = list(nltk.data.path)
    nltk.data.path[:] = [str(tmp_path)]  # no model there
    tokenize._get_punkt_tokenizer.cache_clear()
    try:
        with pytest.raises(SuiteError, match=r"punkt_tab.*downloads nothing"):
            create_metric("text_rouge_lsum", split_summaries=True)
        spec = SuiteSpec.model_validate(
            {"name": "s", "metrics": {"lsum": {"metric": "text_rouge_lsum", "split_summaries": 1}}}
        )
        with pytest.raises(SuiteError, match=r"metrics\.lsum.*split_summaries must be"):
            load_suite(spec)
    finally:
        nltk.data.path[:] = saved
        tokenize._get_punkt_tokenizer.cache_clear()
    assert create_metric("text_rouge_lsum", split_summaries=False).args["split_summaries"] == (
        "lines"
    )


# ----------------------------------------------------------------------------------------------
# nltk
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def jieba_groups() -> tuple[list[list[str]], list[list[list[str]]]]:
    fn = get_tokenizer("jieba")
    return [fn(h) for h in HYPS], [[fn(t) for t in g] for g in GROUPS]


@pytest.mark.parametrize("method", range(8))
def test_text_bleu_equals_sentence_bleu_with_several_references(
    method: int, jieba_groups: tuple[list[list[str]], list[list[list[str]]]]
) -> None:
    hyps, groups = jieba_groups
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    expected = [
        _nltk(sentence_bleu, g, h, smoothing_function=smoothing)
        for h, g in zip(hyps, groups, strict=True)
    ]
    metric = create_metric("text_bleu", smoothing=method)
    corpus, per_record = run_metric(metric)
    assert_all_close(per_record, [math.nan if e is None else e for e in expected], f"m{method}")
    defined = [e for e in expected if e is not None]
    assert close(corpus, float(np.mean(defined)))


CONSTANTS: list[tuple[int, dict[str, float]]] = [
    (1, {"epsilon": 0.01}),
    (1, {"epsilon": 1.0}),
    (4, {"k": 2.0}),
    (6, {"alpha": 1.5}),
    (7, {"k": 10.0}),
]


@pytest.mark.parametrize(("method", "constants"), CONSTANTS)
def test_smoothing_constants_equal_smoothingfunction(
    method: int,
    constants: dict[str, float],
    jieba_groups: tuple[list[list[str]], list[list[list[str]]]],
) -> None:
    hyps, groups = jieba_groups
    smoothing = getattr(SmoothingFunction(**constants), f"method{method}")  # type: ignore[arg-type]
    expected = [
        _nltk(sentence_bleu, g, h, smoothing_function=smoothing)
        for h, g in zip(hyps[:600], groups, strict=False)
    ]
    metric = create_metric("text_bleu", smoothing=method, **constants)
    _, per_record = run_metric(metric, RECORDS[:600])
    assert_all_close(per_record, [math.nan if e is None else e for e in expected], str(constants))


def test_auto_reweigh_equals_nltk() -> None:
    """Short hypotheses (under 4 tokens) with the default quarter weights: nltk re-weighs them
    uniformly over the hypothesis length."""
    fn = get_tokenizer("cjk")
    short = [(p, g) for p, g in RECORDS if 0 < len(fn(p)) < 6][:400]
    assert sum(len(fn(p)) < 4 for p, _ in short) > 100
    for weights in (None, [0.25, 0.25, 0.25, 0.25]):
        expected = [
            _nltk(
                sentence_bleu,
                [fn(t) for t in ([g] if isinstance(g, str) else g)],
                fn(p),
                auto_reweigh=True,
                smoothing_function=SmoothingFunction().method1,
            )
            for p, g in short
        ]
        metric = create_metric(
            "text_bleu", tokenizer="cjk", smoothing=1, auto_reweigh=True, weights=weights
        )
        _, per_record = run_metric(metric, short)
        assert_all_close(per_record, expected, f"auto_reweigh {weights}")


WEIGHT_LISTS = [
    [[1.0], [0.5, 0.5], [1 / 3, 1 / 3, 1 / 3], [0.25, 0.25, 0.25, 0.25]],
    [[0.1, 0.9], [0.2, 0.2, 0.2, 0.2, 0.2]],
]


@pytest.mark.parametrize("weights", WEIGHT_LISTS)
@pytest.mark.parametrize("method", [0, 2, 5, 7])
def test_several_weight_tuples_make_one_metric_each(
    weights: list[list[float]],
    method: int,
    jieba_groups: tuple[list[list[str]], list[list[list[str]]]],
) -> None:
    """A suite entry with several weight tuples: bleu_1, bleu_2, ... each equal to the matching
    score of one nltk call with all the tuples (methods 5 and 7 smooth over the longest)."""
    hyps, groups = jieba_groups
    n = 400
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    expected = [
        _nltk(sentence_bleu, g, h, [tuple(w) for w in weights], smoothing)
        for h, g in zip(hyps[:n], groups, strict=False)
    ]
    expected_corpus = _nltk(corpus_bleu, groups[:n], hyps[:n], [tuple(w) for w in weights])
    spec = SuiteSpec.model_validate(
        {
            "name": "bleus",
            "metrics": {
                "bleu": {"metric": "text_bleu", "weights": weights, "smoothing": method},
                "nltk": {"metric": "text_nltk_corpus_bleu", "weights": weights},
            },
        }
    )
    records = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(RECORDS[:n])]
    result = pingce.evaluate(spec, records, bootstrap=0)
    names = [f"bleu_{i}" for i in range(1, len(weights) + 1)]
    assert list(result.metrics) == [*names, *(f"nltk_{i}" for i in range(1, len(weights) + 1))]
    rows = result.record_values()
    for k, name in enumerate(names):
        got = [row["values"][name] for row in rows]
        want = [math.nan if e is None else e[k] for e in expected]
        assert_all_close(
            [math.nan if g is None else g for g in got], want, f"{name} method {method}"
        )
        described = result.signature.metrics[name]
        shown = "[" + ",".join(str(float(w)) for w in weights[k]) + "]"
        assert f"weights={shown}" in described, described
        assert f"max_order={max(map(len, weights))}" in described
        assert close(result.value(f"nltk_{k + 1}") or 0.0, expected_corpus[k])


@pytest.mark.parametrize("method", range(5))
@pytest.mark.parametrize("weights", [None, [0.5, 0.5], [0.1, 0.2, 0.3, 0.2, 0.2]])
def test_nltk_corpus_bleu_equals_corpus_bleu(
    method: int,
    weights: list[float] | None,
    jieba_groups: tuple[list[list[str]], list[list[list[str]]]],
) -> None:
    """Summed counts, smoothing once on the corpus precisions (method 4 with the corpus
    hypothesis length); a record's own value is its sentence_bleu."""
    hyps, groups = jieba_groups
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    args: dict[str, Any] = {} if weights is None else {"weights": tuple(weights)}
    expected = corpus_bleu(groups, hyps, smoothing_function=smoothing, **args)
    metric = create_metric("text_nltk_corpus_bleu", smoothing=method, weights=weights)
    corpus, per_record = run_metric(metric)
    assert close(corpus, expected)
    sentences = [
        _nltk(sentence_bleu, g, h, smoothing_function=smoothing, **args)
        for h, g in zip(hyps[:300], groups, strict=False)
    ]
    assert_all_close(per_record[:300], sentences, f"per record, method {method}")


def test_nltk_corpus_bleu_auto_reweigh_on_a_short_corpus() -> None:
    """auto_reweigh reads the corpus hypothesis length: under 4 tokens in all, it re-weighs."""
    cases = [("好 的", ["好 的 呢", "好"]), ("a", "a b")]
    fn = get_tokenizer("whitespace")
    refs = [[fn(t) for t in ([g] if isinstance(g, str) else g)] for _, g in cases]
    hyps = [fn(p) for p, _ in cases]
    expected = _nltk(corpus_bleu, refs, hyps, auto_reweigh=True)
    metric = create_metric("text_nltk_corpus_bleu", tokenizer="whitespace", auto_reweigh=True)
    corpus, _ = run_metric(metric, cases)  # type: ignore[arg-type]
    assert expected > 0 and close(corpus, expected)


# nltk's published BLEU numbers: the doctests of nltk/translate/bleu_score.py (sentence_bleu and
# corpus_bleu) and nltk/test/bleu.doctest, and nltk/test/unit/translate/test_bleu.py (the BLEU
# paper's examples). Texts are nltk's; tokens are whitespace-split as in nltk's examples.
HYP1 = (
    "It is a guide to action which ensures that the military always obeys the commands of the party"
)
HYP2 = "It is to insure the troops forever hearing the activity guidebook that party direct"
REF1 = "It is a guide to action that ensures that the military will forever heed Party commands"
REF2 = (
    "It is the guiding principle which guarantees the military forces always being under the "
    "command of the Party"
)
REF3 = "It is the practical guide for the army always to heed the directions of the party"
HYP3 = "he read the book because he was interested in world history"
REF4 = "he was interested in world history because he read the book"
THIRD = 1 / 3
THREE = [REF1, REF2, REF3]
NO_ALIGNMENT = ["The candidate has no alignment to any of the references"]
THE_STAR = ["the cat is on the mat", "there is a cat on the mat"]
BLEU_1_2_3 = [[0.5, 0.5], [THIRD] * 3, [0.25] * 4]
BLEU_2_3_4_5 = [[0.5, 0.5], [0.333, 0.333, 0.334], [0.25] * 4, [0.2] * 5]
NLTK_SENTENCE_TABLE: list[tuple[str, list[str], dict[str, Any], Any]] = [
    (HYP1, THREE, {}, 0.5045),
    (HYP2, THREE, {}, 0.0),
    (HYP2, THREE, {"smoothing": 1}, 0.0370),
    (HYP1, THREE, {"weights": [0.2] * 5}, 0.3920),
    (HYP1, THREE, {"weights": BLEU_1_2_3}, [0.7453, 0.6240, 0.5045]),
    ("John loves Mary", NO_ALIGNMENT, {"weights": [1.0]}, 0.0),
    ("It is .", ["It is a place of quiet contemplation ."], {"smoothing": 4}, 0.044267),
    ("the the the the the the the", THE_STAR, {"weights": [1.0]}, 0.2857),
]
NLTK_CORPUS_TABLE: list[tuple[dict[str, Any], Any]] = [
    ({}, 0.5920),
    ({"weights": [0.1, 0.3, 0.5, 0.1]}, 0.5818),
    ({"weights": BLEU_2_3_4_5}, [0.8242, 0.7067, 0.5920, 0.4719]),
]


def _evaluate(cases: list[tuple[str, Any]], metric: dict[str, Any]) -> dict[str, Any]:
    spec = SuiteSpec.model_validate({"name": "nltk", "metrics": {"m": metric}})
    records = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(cases)]
    result = pingce.evaluate(spec, records, bootstrap=0)
    return {name: (result.value(name), result.record_values()) for name in result.metrics}


@pytest.mark.parametrize(("hyp", "refs", "args", "published"), NLTK_SENTENCE_TABLE)
def test_nltk_published_sentence_cases(
    hyp: str, refs: list[str], args: dict[str, Any], published: Any
) -> None:
    metric = {"metric": "text_bleu", "tokenizer": "whitespace", **args}
    values = _evaluate([(hyp, refs)], metric)
    got = [v[1][0]["values"][name] for name, v in values.items()]
    theirs = _nltk(
        sentence_bleu,
        [r.split() for r in refs],
        hyp.split(),
        *([] if "weights" not in args else [_tuples(args["weights"])]),
        smoothing_function=getattr(SmoothingFunction(), f"method{args.get('smoothing', 0)}"),
    )
    theirs = theirs if isinstance(theirs, list) else [theirs]
    assert_all_close(got, theirs, "against nltk")
    wanted = published if isinstance(published, list) else [published]
    for value, want in zip(got, wanted, strict=True):
        digits = len(str(want).split(".")[1])
        assert math.floor(value * 10**digits + 1e-9) / 10**digits == want


def test_nltk_published_modified_precision_and_brevity_penalty() -> None:
    """test_bleu.py: modified unigram precision of 'the the ...' is 2/7, of HYP1 17/18 and HYP2
    8/14 against the three references, bigram 10/17 and 1/13; the brevity penalty of a 7-token
    hypothesis with references of 11 and 8 tokens is 0.8669, and 1 when one has 7 tokens."""
    tok = str.split
    row = B.nltk_bleu_stats(
        tok("the the the the the the the"),
        [tok(r) for r in ("the cat is on the mat", "there is a cat on the mat")],
    )
    assert row[2] / row[6] == 2 / 7 and row[3] == 0
    for hyp, unigram, bigram in (
        (HYP1, 17 / 18, 10 / 17),
        (HYP2, 8 / 14, 1 / 13),
        ("of the", 1, 1),
    ):
        row = B.nltk_bleu_stats(tok(hyp), [tok(r) for r in (REF1, REF2, REF3)])
        assert row[2] / row[6] == unigram and row[3] / row[7] == bigram
    pairs = PairIds.from_tokens([["a"] * 7], [["a"] * 11, ["a"] * 8], np.array([0, 0]))
    row = B.nltk_bleu_stats_batch(pairs)
    assert row[0, 1] == 8
    assert round(float(B.nltk_bleu(row[0], weights=[1.0])), 4) == 0.8669
    pairs = PairIds.from_tokens([["a"] * 7], [["a"] * n for n in (11, 8, 6, 7)], np.zeros(4, int))
    assert float(B.nltk_bleu(B.nltk_bleu_stats_batch(pairs)[0], weights=[1.0])) == 1.0


def _tuples(weights: Any) -> Any:
    if weights and isinstance(weights[0], list):
        return [tuple(w) for w in weights]
    return tuple(weights)


@pytest.mark.parametrize(("args", "published"), NLTK_CORPUS_TABLE)
def test_nltk_published_corpus_cases(args: dict[str, Any], published: Any) -> None:
    cases = [(HYP1, [REF1, REF2, REF3]), (HYP3, [REF4])]
    values = _evaluate(
        cases, {"metric": "text_nltk_corpus_bleu", "tokenizer": "whitespace", **args}
    )
    got = [v[0] for v in values.values()]
    theirs = corpus_bleu(
        [[r.split() for r in refs] for _, refs in cases],
        [h.split() for h, _ in cases],
        *([] if "weights" not in args else [_tuples(args["weights"])]),
    )
    theirs = theirs if isinstance(theirs, list) else [theirs]
    assert_all_close(got, theirs, "against nltk")
    wanted = published if isinstance(published, list) else [published]
    for value, want in zip(got, wanted, strict=True):
        assert math.floor(value * 10**4 + 1e-9) / 10**4 == want


def test_nltk_test_bleu_multiple_weights_case() -> None:
    """test_bleu.py TestBLEUWithMultipleWeights: weights (1,0,0,0), quarters and (0,0,0,0,1)
    together give what each gives alone (method 0)."""
    cases = [(HYP1, THREE), (HYP3, [REF4])]
    refs = [[r.split() for r in g] for _, g in cases]
    hyps = [h.split() for h, _ in cases]
    weights = [[1, 0, 0, 0], [0.25] * 4, [0, 0, 0, 0, 1]]
    metric = {"metric": "text_nltk_corpus_bleu", "tokenizer": "whitespace"}
    together = _evaluate(cases, {**metric, "weights": weights})
    for k, w in enumerate(weights):
        alone = _evaluate(cases, {**metric, "weights": w})
        assert together[f"m_{k + 1}"][0] == alone["m"][0]
        assert close(alone["m"][0], corpus_bleu(refs, hyps, tuple(w)))


# ----------------------------------------------------------------------------------------------
# sacrebleu
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tokenize", ["zh", "13a", "char", "none"])
def test_sacrebleu_bleu_with_a_variable_number_of_references(tokenize: str) -> None:
    """Reference streams hold None where a segment has fewer references (sacrebleu drops them);
    the statistics are sacrebleu's own, number for number; per record: sentence_score."""
    bleu = BLEU(tokenize=tokenize)
    refs = streams(GROUPS)
    theirs = np.asarray(bleu._extract_corpus_statistics(HYPS, refs))
    metric = create_metric("text_corpus_bleu", tokenize=tokenize)
    statistic = metric.statistic()
    rows = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(RECORDS)]
    block = statistic.compute(load_records(rows, statistic.fields()), Context())
    assert np.array_equal(block.per_record()[:, :-1], theirs)
    corpus, per_record = run_metric(metric)
    assert close(corpus, bleu.corpus_score(HYPS, refs).score)
    assert close(B.sacrebleu_corpus_bleu(HYPS, REFS, tokenize), corpus)
    sentence = BLEU(tokenize=tokenize)
    expected = [
        sentence.sentence_score(h, g).score for h, g in zip(HYPS[:300], GROUPS, strict=False)
    ]
    assert_all_close(per_record[:300], expected, f"sentence {tokenize}")


CHRF_OPTIONS: list[dict[str, Any]] = [
    {},
    {"word_order": 2},
    {"beta": 1, "eps_smoothing": True},
    {"beta": 3, "word_order": 1, "lowercase": True},
    {"char_order": 3, "whitespace": True},
]


@pytest.mark.parametrize("options", CHRF_OPTIONS, ids=lambda o: str(o) or "defaults")
def test_chrf_keeps_the_best_reference_as_sacrebleu(options: dict[str, Any]) -> None:
    chrf = CHRF(**options)
    refs = streams(GROUPS)
    theirs = np.asarray(chrf._extract_corpus_statistics(HYPS, refs))
    metric = create_metric("text_chrf", **options)
    statistic = metric.statistic()
    rows = [{"id": i, "pred_text": p, "gold_text": g} for i, (p, g) in enumerate(RECORDS)]
    block = statistic.compute(load_records(rows, statistic.fields()), Context())
    assert np.array_equal(block.per_record()[:, :-1], theirs)
    corpus, per_record = run_metric(metric)
    assert close(corpus, chrf.corpus_score(HYPS, refs).score)
    assert close(corpus_chrf(HYPS, REFS, **options), corpus)
    expected = [
        CHRF(**options).sentence_score(h, g).score for h, g in zip(HYPS[:300], GROUPS, strict=False)
    ]
    assert_all_close(per_record[:300], expected, f"chrF {options}")
    assert_all_close(sentence_chrf(HYPS[:300], REFS[:300], **options), expected, "sentence_chrf")


def test_an_empty_reference_string_is_a_reference_as_in_sacrebleu() -> None:
    """sacrebleu drops None but keeps '' (an empty reference: length 0, no n-grams): a one-token
    hypothesis then finds '' the closest length, and chrF may keep it."""
    cases = [("a", ["", "a b c"]), ("x", ["", "y"]), ("a b", ["a b", ""])]
    refs = streams([g for _, g in cases])
    hyps = [h for h, _ in cases]
    for bleu_args in ({"tokenize": "13a"}, {"tokenize": "13a", "smooth_method": "floor"}):
        corpus, _ = run_metric(create_metric("text_corpus_bleu", **bleu_args), cases)  # type: ignore[arg-type]
        assert close(corpus, BLEU(**bleu_args).corpus_score(hyps, refs).score)
    corpus, _ = run_metric(create_metric("text_chrf"), cases)  # type: ignore[arg-type]
    assert close(corpus, CHRF().corpus_score(hyps, refs).score)


# sacrebleu's published multi-reference numbers: README ("Using SacreBLEU from Python": 2
# reference streams; "Variable Number of References": the first segment's first reference
# removed) and test/test_bleu.py (test_corpus_bleu_cases, test_bleu_max_order).
SACRE_HYPS = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."]
SACRE_REFS = [
    ["The dog bit the man.", "It was not unexpected.", "The man bit him first."],
    ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."],
]
SACRE_VAR = [[None, *SACRE_REFS[0][1:]], SACRE_REFS[1]]
SACRE_TABLE: list[tuple[str, list[list[str | None]], dict[str, Any], float, float]] = [
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a"}, 48.530827, 1e-6),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "none"}, 49.1919566, 1e-6),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "smooth_method": "none"}, 48.530827, 1e-6),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "max_order": 1}, 77.65, 0.005),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "max_order": 2}, 60.50, 0.005),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "max_order": 3}, 53.93, 0.005),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "max_order": 5}, 46.14, 0.005),
    ("text_corpus_bleu", SACRE_REFS, {"tokenize": "13a", "max_order": 6}, 43.28, 0.005),
    ("text_corpus_bleu", SACRE_VAR, {"tokenize": "13a"}, 29.44, 0.005),
    ("text_chrf", SACRE_REFS, {}, 59.73, 0.005),
]  # fmt: skip


@pytest.mark.parametrize(("name", "refs", "args", "published", "tol"), SACRE_TABLE)
def test_sacrebleu_published_multi_reference_cases(
    name: str, refs: list[list[str | None]], args: dict[str, Any], published: float, tol: float
) -> None:
    groups = [[s[i] for s in refs if s[i] is not None] for i in range(len(SACRE_HYPS))]
    corpus, _ = run_metric(create_metric(name, **args), list(zip(SACRE_HYPS, groups, strict=True)))  # type: ignore[arg-type]
    assert abs(corpus - published) <= tol
    if name == "text_chrf":
        theirs = CHRF(**args).corpus_score(SACRE_HYPS, refs).score
    else:
        options = {("max_ngram_order" if k == "max_order" else k): v for k, v in args.items()}
        theirs = BLEU(**options).corpus_score(SACRE_HYPS, refs).score
    assert close(corpus, theirs)


# ----------------------------------------------------------------------------------------------
# inputs, arguments, suites, the command line
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ([], "empty list of references"),
        (["好", 3], "reference 1 of the list is int 3"),
        (["好", None], "reference 1 of the list is NoneType"),
        ({"text": "好"}, "a reference text or a list of reference texts"),
        (7, "a reference text or a list of reference texts"),
    ],
)
def test_bad_references_are_input_errors_naming_line_and_field(
    gold: Any, message: str, tmp_path: Path
) -> None:
    data = tmp_path / "data.jsonl"
    lines = [
        {"id": 1, "pred_text": "好", "gold_text": "好"},
        {"id": 2, "pred_text": "好", "gold_text": gold},
    ]
    data.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines), encoding="utf-8")
    spec = SuiteSpec.model_validate({"name": "s", "metrics": {"bleu": {"metric": "text_bleu"}}})
    with pytest.raises(InputError) as caught:
        pingce.evaluate(spec, data, bootstrap=0)
    text = str(caught.value)
    assert "data.jsonl:2" in text and "gold_text" in text and message in text
    assert json.dumps(gold, ensure_ascii=False) in text or repr(gold) in text


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("text_bleu", {"weights": [[1.0], [0.5, 0.5]]}, "one metric per tuple"),
        ("text_bleu", {"weights": []}, "non-empty list"),
        ("text_bleu", {"weights": [0.5, "x"]}, "finite numbers"),
        ("text_bleu", {"weights": [0.5, 0.5], "max_order": 1}, "at least the number of weights"),
        ("text_bleu", {"epsilon": 0.2}, "method 1 only"),
        ("text_bleu", {"k": 3, "smoothing": 1}, "method 4 and 7 only"),
        ("text_bleu", {"alpha": 0, "smoothing": 6}, "alpha must be a finite number > 0"),
        ("text_bleu", {"auto_reweigh": "yes"}, "auto_reweigh"),
        ("text_nltk_corpus_bleu", {"smoothing": 5}, "not offered at corpus level"),
        ("text_nltk_corpus_bleu", {"smoothing": 6, "max_order": 2}, "not offered"),
        ("text_rouge_lsum", {"split_summaries": "sentences"}, "split_summaries must be"),
    ],
)
def test_argument_errors(name: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        create_metric(name, **args)


def test_expanded_names_must_not_collide() -> None:
    spec = SuiteSpec.model_validate(
        {
            "name": "s",
            "metrics": {
                "bleu": {"metric": "text_bleu", "weights": [[1], [0.5, 0.5]]},
                "bleu_2": {"metric": "text_chrf"},
            },
        }
    )
    with pytest.raises(SuiteError, match=r"metrics\.bleu.*'bleu_2'"):
        load_suite(spec)


def test_split_summaries_is_an_argument_of_rouge_lsum_only() -> None:
    with pytest.raises(SuiteError, match="unknown argument"):
        create_metric("text_rouge_l", split_summaries="chinese")


def test_options_from_the_command_line(tmp_path: Path) -> None:
    """A suite file sets every new option; `pingce run` writes the values the libraries give,
    per record and in results.json, with intervals from the summed rows."""
    from .cli_run import run_pingce

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: multiref\n"
        "metrics:\n"
        "  r2: {metric: text_rouge_n, n: 2, tokenizer: cjk}\n"
        "  lsum: {metric: text_rouge_lsum, tokenizer: cjk, split_summaries: chinese}\n"
        "  bleu: {metric: text_bleu, tokenizer: cjk, smoothing: 4, k: 3,"
        " weights: [[1], [0.5, 0.5]]}\n"
        "  nltk: {metric: text_nltk_corpus_bleu, tokenizer: cjk, smoothing: 1, epsilon: 0.5}\n"
        "  sacre: {metric: text_corpus_bleu, tokenize: zh}\n"
        "  chrf: {metric: text_chrf, word_order: 2}\n",
        encoding="utf-8",
    )
    cases = RECORDS[:200]
    data = tmp_path / "data.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"id": i, "pred_text": p, "gold_text": g}, ensure_ascii=False)
            for i, (p, g) in enumerate(cases)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = run_pingce(
        "run",
        str(suite),
        "--data",
        str(data),
        "--out",
        str(out),
        "--bootstrap",
        "200",
        "--records-fields",
        "all",
    )
    assert result.returncode == 0, result.stderr
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    metrics = document["metrics"]
    assert list(metrics) == ["r2", "lsum", "bleu_1", "bleu_2", "nltk", "sacre", "chrf"]
    fn = get_tokenizer("cjk")
    groups = [[fn(t) for t in g] for g in GROUPS[:200]]
    hyps = [fn(h) for h in HYPS[:200]]
    scorer = rouge_scorer.RougeScorer(["rouge2"], tokenizer=WrappedTokenizer("cjk"))
    r2 = np.mean(
        [
            scorer.score_multi(g, h)["rouge2"].fmeasure
            for h, g in zip(HYPS, GROUPS[:200], strict=False)
        ]
    )
    method4 = SmoothingFunction(k=3).method4
    bleus = [
        sentence_bleu(g, h, [(1.0,), (0.5, 0.5)], method4)
        for h, g in zip(hyps, groups, strict=False)
    ]
    nltk = corpus_bleu(groups, hyps, smoothing_function=SmoothingFunction(epsilon=0.5).method1)
    refs = streams(GROUPS[:200])
    expected = {
        "r2": r2,
        "bleu_1": np.mean([b[0] for b in bleus]),
        "bleu_2": np.mean([b[1] for b in bleus]),
        "nltk": nltk,
        "sacre": BLEU(tokenize="zh").corpus_score(HYPS[:200], refs).score,
        "chrf": CHRF(word_order=2).corpus_score(HYPS[:200], refs).score,
    }
    for name, value in expected.items():
        assert close(metrics[name]["value"], float(value)), name
        assert metrics[name]["ci_low"] <= metrics[name]["value"] <= metrics[name]["ci_high"]
    described = document["signature"]["metrics"]
    assert "weights=[0.5,0.5]" in described["bleu_2"] and "k=3.0" in described["bleu_2"]
    assert "split_summaries=chinese" in described["lsum"]
    first = json.loads((out / "records.jsonl").read_text(encoding="utf-8").splitlines()[1])
    assert first["fields"]["gold_text"] == cases[1][1]
    assert close(first["values"]["bleu_2"], bleus[1][1])


def test_the_readme_example_suite_loads() -> None:
    """The suite of docs/suites/text-overlap.md loads, its `bleu` entry as bleu_1..bleu_4."""
    import yaml

    section = (Path(__file__).parents[1] / "docs" / "suites" / "text-overlap.md").read_text(
        encoding="utf-8"
    )
    start = section.index("```yaml") + len("```yaml")
    block = section[start : section.index("```\n", start)]
    spec = SuiteSpec.model_validate({"name": "readme", **yaml.safe_load(block)})
    built = load_suite(spec)
    assert [name for name in built.metrics if name.startswith("bleu")] == [
        "bleu_1",
        "bleu_2",
        "bleu_3",
        "bleu_4",
    ]
    assert built.metrics["bleu_4"].args["weights"] == [0.25] * 4
    assert all(
        metric.statistic().fields()[1].path == "references" for metric in built.metrics.values()
    )


def test_references_from_a_data_frame() -> None:
    """A frame's list cells (lists, tuples, or the arrays pandas reads Parquet lists as) are
    several references; the values equal sacrebleu's chrF with None-padded streams."""
    pd = pytest.importorskip("pandas")
    cases = RECORDS[:60]
    cells: list[Any] = []
    for i, (_, gold) in enumerate(cases):
        if isinstance(gold, str):
            cells.append(gold)
        else:
            cells.append([list, tuple, lambda g: np.array(g, dtype=object)][i % 3](gold))
    frame = pd.DataFrame({"id": range(60), "pred_text": [p for p, _ in cases], "gold_text": cells})
    spec = SuiteSpec.model_validate({"name": "s", "metrics": {"chrf": {"metric": "text_chrf"}}})
    result = pingce.evaluate(spec, frame, bootstrap=0)
    expected = CHRF().corpus_score(HYPS[:60], streams(GROUPS[:60])).score
    assert close(result.value("chrf") or 0.0, expected)


@pytest.mark.parametrize("many", [False, True], ids=["few references", "one record with 40"])
def test_each_references_own_matches_equal_the_expanded_pairs(many: bool) -> None:
    """PairIds.ref_matches (each reference against its record's prediction, counted beside the
    record's clipped matches) equals the matches of the expanded pairs; one record with many
    references takes the sorting path instead of the (n-gram, place) cells."""
    rng = random.Random(8)
    preds, refs, owner = [], [], []
    for i in range(400):
        preds.append([rng.choice("abcde") for _ in range(rng.randint(0, 15))])
        k = 40 if many and i == 7 else rng.randint(1, 4)
        for _ in range(k):
            refs.append([rng.choice("abcdef") for _ in range(rng.randint(0, 15))])
            owner.append(i)
    pairs = PairIds.from_tokens(preds, refs, np.array(owner))
    wide = PairIds.from_tokens([preds[o] for o in owner], refs)
    for n in (3, 1, 2, 5):  # out of order: the engine state is set up again
        assert pairs.ref_matches(n).tolist() == wide.matches(n).tolist(), n
        expected = [
            sum(min(c, max(_ngrams(refs[j], n)[g] for j in np.flatnonzero(np.array(owner) == i)))
                for g, c in _ngrams(p, n).items())
            for i, p in enumerate(preds)
        ]  # fmt: skip
        assert pairs.matches(n).tolist() == expected, n
