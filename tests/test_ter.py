"""``text_ter`` and :mod:`pingce.text.ter` against sacrebleu's TER.

Every expected value comes from sacrebleu run in the test (``TER``, its ``TercomTokenizer`` and
``lib_ter.translation_edit_rate``) or from sacrebleu's own published test cases (its files
``test/test_ter.py`` and ``test/test_tokenizer_ter.py``, kept here as data), never from pingce's
output. Cases: those published cases, seeded random Chinese, English and mixed texts with one to
three references under every option, and seeded random word lists in the regimes where the
shift search is hard (long hypotheses of a few distinct words that exhaust the 1,000 tried
shifts, lengths far apart where the beam cuts the optimal path, unrelated long texts).
"""

from __future__ import annotations

import itertools
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rapidfuzz.distance import Levenshtein
from sacrebleu.metrics import TER, lib_ter
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

import pingce
from pingce.errors import InputError, SuiteError
from pingce.gates import parse_regression_gates, regressions
from pingce.metrics import Context, create_metric
from pingce.records import load_records
from pingce.suites import load_suite
from pingce.text.ter import (
    BEAM_WIDTH,
    MAX_SHIFT_CANDIDATES,
    MAX_SHIFT_DIST,
    MAX_SHIFT_SIZE,
    ter,
    ter_corpus,
    ter_edits,
    ter_edits_batch,
    ter_reference_words,
    ter_sentence,
    ter_stats,
    ter_stats_batch,
    ter_words,
)

TOL = 1e-9
OPTION_NAMES = ("normalized", "no_punct", "asian_support", "case_sensitive")
ALL_OPTIONS = [
    dict(zip(OPTION_NAMES, combo, strict=True))
    for combo in itertools.product((False, True), repeat=4)
]

# ----------------------------------------------------------------------------------------------
# sacrebleu's published cases
# ----------------------------------------------------------------------------------------------

# sacrebleu, test/test_ter.py (mjpost/sacrebleu): (hypotheses, references, expected TER / 100),
# compared there with a tolerance of 1e-3 on the 0-100 score.
PUBLISHED_TER = [
    (["aaaa bbbb cccc dddd"], ["aaaa bbbb cccc dddd"], 0),  # perfect match
    (["dddd eeee ffff"], ["aaaa bbbb cccc"], 1),  # no overlap
    ([""], ["a"], 1),  # corner case, empty hypothesis
    (["a"], [""], 1),  # corner case, empty reference
    ([""], [""], 0),  # corner case, both reference and hypothesis empty, we define it as 0.0
    (["d e f g h a b c"], ["a b c d e f g h"], 1 / 8),  # a single shift fixes MT
    (
        [
            'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit das Bild ungefähr dieselbe Größe aufweist wie die andere Größe .',  # noqa: E501
            'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',  # noqa: E501
            'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie Werte für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " ein .',  # noqa: E501
            'Sie können beispielsweise ein Dokument erstellen , das ein Auto über die Bühne enthält .',  # noqa: E501
            'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',  # noqa: E501
        ],
        [
            'wählen Sie " Bild neu berechnen , " um beim Ändern der Bildgröße Pixel hinzuzufügen oder zu entfernen , damit die Darstellung des Bildes in einer anderen Größe beibehalten wird .',  # noqa: E501
            'wenn Sie alle Aufgaben im aktuellen Dokument aktualisieren möchten , wählen Sie im Menü des Aufgabenbedienfelds die Option " Alle Aufgaben aktualisieren . "',  # noqa: E501
            'klicken Sie auf der Registerkarte " Optionen " auf die Schaltfläche " Benutzerdefiniert " und geben Sie für " Fehlerkorrektur-Level " und " Y / X-Verhältnis " niedrigere Werte ein .',  # noqa: E501
            'Sie können beispielsweise ein Dokument erstellen , das ein Auto enthalt , das sich über die Bühne bewegt .',  # noqa: E501
            'wählen Sie im Dialogfeld " Neu aus Vorlage " eine Vorlage aus und klicken Sie auf " Neu . "',  # noqa: E501
        ],
        0.136,  # realistic example from WMT dev data (2019)
    ),
]  # fmt: skip

# sacrebleu, test/test_tokenizer_ter.py: (options, text, TercomTokenizer's output)
PUBLISHED_TOKENS = [
    ({}, "a b c d", "a b c d"),
    ({}, "", ""),
    ({}, "a b c d.", "a b c d."),
    ({}, "A B C D.", "a b c d."),
    ({"no_punct": True}, "a b c d.", "a b c d"),
    ({"no_punct": True}, "A ; B ) C : D.", "a b c d"),
    ({"normalized": True}, "a b (c) d.", "a b ( c ) d ."),
    ({"normalized": True}, "Jim's car.", "jim 's car ."),
    ({"normalized": True}, "4.2", "4.2"),
    ({"normalized": True, "asian_support": True}, "美众院公布对特", "美 众 院 公 布 对 特"),
    # Japanese, the first two letters Hiragana
    ({"normalized": True, "asian_support": True}, "りの拳銃を持", "りの 拳 銃 を 持"),
]


@pytest.mark.parametrize(("hypotheses", "references", "expected"), PUBLISHED_TER)
def test_published_ter_cases(hypotheses: list[str], references: list[str], expected: float) -> None:
    ours = ter_corpus(hypotheses, references)
    assert abs(ours - 100 * expected) < 1e-3  # sacrebleu's own tolerance on its rounded values
    assert abs(ours - TER().corpus_score(hypotheses, [references]).score) <= TOL


@pytest.mark.parametrize(("options", "text", "expected"), PUBLISHED_TOKENS)
def test_published_tokenizer_cases(options: dict[str, bool], text: str, expected: str) -> None:
    assert ter_words(text, **options) == expected.split()


# ----------------------------------------------------------------------------------------------
# seeded random texts
# ----------------------------------------------------------------------------------------------

ZH = list("今天天气很好我们一起去公园散步然后回家吃饭合同条款风险甲方乙方违约责任付款期限患者症状")
ZH += list("的了是在和也不很都美众院公布对特拳銃")
EN = ["the", "a", "of", "to", "and", "in", "is", "it", "that", "for", "on", "with", "as", "The"]
EN += ["Dog's", "cat's", "API", "JSON", "Jim's", "TER", "it's"]
MARKS = [*".,?:;!\"()'-/&<>[]{}|~`^_@#$%*+=", "&quot;", "&amp;", "&amp;lt;", "&lt;", "&gt;"]
MARKS += ["\n-", "\n", "'s", "'s ", "-\n", *"，。！？、：；（）《》「」【】〔〕・｡､．＂"]
KANA = list("ひらがなカタカナㇰㇱ")
OTHER = [*"㈠㍿丽ﹰ︰⺀㇀３５½€©→㐀㠀\u3f22\u3f23", "\U00020000", "\U0002a6d6"]
NUMBERS = ["3.5", "0.25", "1,000", "2024-01-15", "7", "99.9%", "4.2"]


def _token(rng: random.Random) -> str:
    u = rng.random()
    pool = (
        ZH if u < 0.35 else EN if u < 0.6 else MARKS if u < 0.75 else NUMBERS if u < 0.85 else KANA
    )
    if u >= 0.93:
        pool = OTHER
    return rng.choice(pool)


def _edited(rng: random.Random, tokens: list[str]) -> list[str]:
    """Substitutions, deletions, insertions and block moves (the shifts TER looks for)."""
    out = list(tokens)
    for _ in range(rng.randint(0, max(1, len(out) // 3))):
        u = rng.random()
        if out and u < 0.3:
            out[rng.randrange(len(out))] = _token(rng)
        elif out and u < 0.45:
            del out[rng.randrange(len(out))]
        elif u < 0.6:
            out.insert(rng.randint(0, len(out)), _token(rng))
        elif len(out) > 3:
            a = rng.randrange(len(out) - 1)
            size = rng.randint(1, min(4, len(out) - a))
            block = out[a : a + size]
            del out[a : a + size]
            b = rng.randint(0, len(out))
            out[b:b] = block
    return out


def _join(rng: random.Random, tokens: list[str]) -> str:
    text = "".join(t + (" " if rng.random() < 0.6 else "") for t in tokens)
    if rng.random() < 0.3:
        text = text.upper() if rng.random() < 0.3 else text.title()
    return text + rng.choice(["", "", " ", "\n", " \t"])


def random_records(n: int, seed: int) -> list[tuple[str, list[str]]]:
    """(hypothesis, 1-3 references): references are edits of a base text (some unrelated, some
    empty), the hypothesis an edit of the base (or unrelated)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        base = [_token(rng) for _ in range(rng.choice([0, 1, 2, 4, 8, 12, 20, 30]))]
        refs = [
            _join(rng, _edited(rng, base) if rng.random() < 0.9 else base[:0])
            for _ in range(rng.choice([1, 1, 2, 3]))
        ]
        hyp = _edited(rng, base) if rng.random() < 0.9 else [_token(rng) for _ in range(9)]
        out.append((_join(rng, hyp), refs))
    return out


RECORDS = random_records(900, seed=20261124)
TEXTS = [h for h, _ in RECORDS] + [r for _, refs in RECORDS for r in refs]


def _streams(refs: list[list[str]]) -> list[list[str | None]]:
    """sacrebleu's reference streams; a record with fewer references has None in the others."""
    most = max(map(len, refs))
    return [[r[k] if k < len(r) else None for r in refs] for k in range(most)]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL


@pytest.mark.parametrize(
    "options", ALL_OPTIONS, ids=lambda o: ",".join(k for k, v in o.items() if v) or "defaults"
)
def test_words_equal_tercom_tokenizer(options: dict[str, bool]) -> None:
    """Hypothesis words: TercomTokenizer of the text without trailing whitespace; reference
    words: what sacrebleu's TER keeps for a reference (it normalises references twice)."""
    tokenizer = TercomTokenizer(**options)
    wrong = [t for t in TEXTS if ter_words(t, **options) != tokenizer(t.rstrip()).split()]
    assert not wrong, wrong[:3]
    cached = TER(**options)._cache_references([TEXTS])
    theirs = [entry["ref_words"][0] for entry in cached]
    ours = [ter_reference_words(t, **options) for t in TEXTS]
    assert ours == theirs
    if options["normalized"]:  # the second pass matters somewhere in these texts
        assert any(ter_words(t, **options) != w for t, w in zip(TEXTS, ours, strict=True))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"normalized": True, "asian_support": True},
        {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True},
        {"no_punct": True, "case_sensitive": True},
    ],
    ids=["defaults", "normalized,asian", "all", "no_punct,case"],
)
def test_statistics_and_scores_equal_sacrebleu(options: dict[str, bool]) -> None:
    """Per-record statistics, corpus TER and sentence TER, with a variable number of references
    (sacrebleu: None in the shorter streams)."""
    hyps = [h for h, _ in RECORDS]
    refs = [r for _, r in RECORDS]
    metric = TER(**options)
    theirs = np.asarray(metric._extract_corpus_statistics(hyps, _streams(refs)), dtype=np.float64)
    ours = ter_stats_batch(hyps, refs, **options)
    assert np.array_equal(ours[:, 0], theirs[:, 0])
    assert np.abs(ours[:, 1] - theirs[:, 1]).max() <= TOL
    assert _close(
        ter_corpus(hyps, refs, **options), metric.corpus_score(hyps, _streams(refs)).score
    )
    expected = [metric._compute_score_from_stats(list(row)).score for row in theirs]
    assert np.abs(ter_sentence(hyps, refs, **options) - expected).max() <= TOL
    for h, r in RECORDS[:60]:  # the public sentence API, end to end
        assert _close(float(ter(ter_stats(h, r, **options))), metric.sentence_score(h, r).score)
    assert sum(len(r) > 1 for r in refs) > 200 and (theirs[:, 1] == 0).any()


def test_finaliser_equals_sacrebleu_on_edge_statistics() -> None:
    """0 edits against empty references is 0, edits against them 100 (sacrebleu's rule)."""
    metric = TER()
    rows = [[0, 0.0], [3, 0.0], [0, 4.0], [5, 2.5], [7, 3.0], [1, 1e-9]]
    for row in rows:
        assert _close(float(ter(np.asarray(row))), metric._compute_score_from_stats(row).score)


# ----------------------------------------------------------------------------------------------
# the shift search, regime by regime
# ----------------------------------------------------------------------------------------------


def _word_pairs(
    n: int, seed: int, vocab: int, hyp_len: tuple[int, int], ref_len: tuple[int, int] | None
) -> list[tuple[list[str], list[str]]]:
    """Reference of ``ref_len`` words from ``vocab`` distinct ones; hypothesis an edit of it
    (with block moves), or, with ``ref_len`` given, independent of ``hyp_len`` words."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    out = []
    for _ in range(n):
        if ref_len is not None:
            hyp = [rng.choice(words) for _ in range(rng.randint(*hyp_len))]
            ref = [rng.choice(words) for _ in range(rng.randint(*ref_len))]
            out.append((hyp, ref))
            continue
        ref = [rng.choice(words) for _ in range(rng.randint(*hyp_len))]
        hyp = list(ref)
        for _ in range(rng.randint(0, max(1, len(ref) // 2))):
            u = rng.random()
            if hyp and u < 0.3:
                hyp[rng.randrange(len(hyp))] = rng.choice(words)
            elif hyp and u < 0.5:
                del hyp[rng.randrange(len(hyp))]
            elif u < 0.7:
                hyp.insert(rng.randint(0, len(hyp)), rng.choice(words))
            elif len(hyp) > 4:
                a = rng.randrange(len(hyp) - 3)
                size = rng.randint(1, 5)
                block = hyp[a : a + size]
                del hyp[a : a + size]
                b = rng.randint(0, len(hyp))
                hyp[b:b] = block
        out.append((hyp, ref))
    return out


REGIMES = {
    # name: (pairs, seed, distinct words, hypothesis (or reference) lengths, reference lengths)
    "short, few words": (1500, 1, 5, (0, 12), None),
    "medium": (300, 2, 20, (1, 30), None),
    "long, many words": (60, 3, 300, (5, 60), None),
    "long, four words (the 1,000-shift cap)": (4, 4, 4, (40, 60), None),
    "long, unrelated": (6, 5, 1000, (60, 140), (60, 140)),
    "hypothesis much longer": (10, 6, 10, (60, 110), (20, 40)),
    "reference much longer": (16, 7, 10, (20, 40), (60, 110)),
    "lengths 50-fold apart": (40, 8, 30, (1, 3), (100, 200)),
    "lengths 50-fold apart, reversed": (40, 9, 30, (100, 200), (1, 3)),
}


def test_limits_are_sacrebleus() -> None:
    ours = (BEAM_WIDTH, MAX_SHIFT_SIZE, MAX_SHIFT_DIST, MAX_SHIFT_CANDIDATES)
    theirs = (
        lib_ter._BEAM_WIDTH,
        lib_ter._MAX_SHIFT_SIZE,
        lib_ter._MAX_SHIFT_DIST,
        lib_ter._MAX_SHIFT_CANDIDATES,
    )
    assert ours == theirs


@pytest.mark.parametrize("regime", list(REGIMES))
def test_edits_equal_sacrebleu(regime: str) -> None:
    n, seed, vocab, first, second = REGIMES[regime]
    pairs = _word_pairs(n, seed, vocab, first, second)
    expected = [lib_ter.translation_edit_rate(h, r)[0] for h, r in pairs]
    ours = ter_edits_batch([h for h, _ in pairs], [r for _, r in pairs])
    wrong = [i for i, (a, b) in enumerate(zip(ours.tolist(), expected, strict=True)) if a != b]
    assert not wrong, [(i, pairs[i], ours[i], expected[i]) for i in wrong[:2]]
    assert ter_edits(*pairs[0]) == expected[0]


def test_regimes_reach_the_shift_cap_and_the_beam(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hard regimes do what they are there for, in sacrebleu itself: some pair stops at the
    cap of 1,000 tried shifts, and some pair's beam distance exceeds its Levenshtein distance."""
    tried: list[int] = []
    original = lib_ter._shift

    def counting(*args: Any) -> Any:
        result = original(*args)
        tried.append(result[2])
        return result

    monkeypatch.setattr(lib_ter, "_shift", counting)
    n, seed, vocab, first, second = REGIMES["long, four words (the 1,000-shift cap)"]
    for hyp, ref in _word_pairs(n, seed, vocab, first, second):
        lib_ter.translation_edit_rate(hyp, ref)
    assert max(tried) >= lib_ter._MAX_SHIFT_CANDIDATES
    beam_cut = 0
    for regime in ("hypothesis much longer", "reference much longer", "long, unrelated"):
        n, seed, vocab, first, second = REGIMES[regime]
        for hyp, ref in _word_pairs(n, seed, vocab, first, second):
            beam = lib_ter.BeamEditDistance(ref)(hyp)[0]
            beam_cut += beam > Levenshtein.distance(hyp, ref)
    assert beam_cut > 0


# ----------------------------------------------------------------------------------------------
# the metric
# ----------------------------------------------------------------------------------------------

FIELDS = {"pred": "output.answer", "gold": "reference"}


def _table_records(records: list[tuple[str, list[str]]]) -> list[dict[str, Any]]:
    """Records with one reference as a string, several as a list (some single ones as a list)."""
    out = []
    for i, (hyp, refs) in enumerate(records):
        gold: str | list[str] = refs[0] if len(refs) == 1 and i % 2 else refs
        out.append({"id": f"r{i}", "output": {"answer": hyp}, "reference": gold})
    return out


@pytest.mark.parametrize(
    "options", [{}, {"normalized": True, "asian_support": True}], ids=["defaults", "asian"]
)
def test_metric_equals_sacrebleu(options: dict[str, bool]) -> None:
    metric = create_metric("text_ter", **FIELDS, **options)
    assert metric.higher_is_better is False and metric.best == 0.0
    statistic = metric.statistic()
    table = load_records(_table_records(RECORDS), statistic.fields())
    block = statistic.compute(table, Context())
    corpus = float(metric.finalize(block.total()[None, :])[0])
    per_record = metric.finalize(block.per_record())
    hyps = [h for h, _ in RECORDS]
    refs = [r for _, r in RECORDS]
    sacre = TER(**options)
    assert _close(corpus, sacre.corpus_score(hyps, _streams(refs)).score)
    stats = sacre._extract_corpus_statistics(hyps, _streams(refs))
    expected = [sacre._compute_score_from_stats(row).score for row in stats]
    assert np.abs(per_record - expected).max() <= TOL


def test_one_reference_field_feeds_ter_bleu_and_chrf() -> None:
    """text_ter reads its references as the other text metrics do (one reader), so one field
    of texts or lists feeds TER, sacrebleu's BLEU and chrF in one suite, each equal to sacrebleu."""
    from sacrebleu.metrics import BLEU, CHRF

    from pingce.suites import SuiteSpec

    spec = SuiteSpec.model_validate(
        {
            "name": "shared",
            "metrics": {
                "ter": {"metric": "text_ter"},
                "bleu": {"metric": "text_corpus_bleu", "tokenize": "13a"},
                "chrf": {"metric": "text_chrf"},
            },
            "inputs": FIELDS,
        }
    )
    records = RECORDS[:200]
    result = pingce.evaluate(spec, _table_records(records), bootstrap=0)
    hyps = [h for h, _ in records]
    streams = _streams([r for _, r in records])
    assert _close(result.metrics["ter"].value, TER().corpus_score(hyps, streams).score)
    bleu = BLEU(tokenize="13a").corpus_score(hyps, streams).score
    assert abs(result.metrics["bleu"].value - bleu) <= 1e-9
    assert abs(result.metrics["chrf"].value - CHRF().corpus_score(hyps, streams).score) <= 1e-9


SUITE = """name: ter
description: text_ter through the engine
metrics:
  ter: {metric: text_ter, normalized: true, asian_support: true}
inputs: {pred: output.answer, gold: reference}
"""


def test_intervals_slices_and_compare_through_the_engine(tmp_path: Path) -> None:
    """Bootstrap intervals around the value, slices equal to sacrebleu on each part, and a
    comparison (and its regression gate) that calls the lower TER the better one."""
    suite = tmp_path / "ter.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    records = _table_records(RECORDS[:400])
    for i, record in enumerate(records):
        record["lang"] = ("zh", "en", "mixed")[i % 3]
    result = pingce.evaluate(suite, records, bootstrap=300, seed=5, slices=["lang"])
    value = result.metrics["ter"]
    sacre = TER(normalized=True, asian_support=True)
    hyps = [h for h, _ in RECORDS[:400]]
    refs = [r for _, r in RECORDS[:400]]
    assert _close(value.value, sacre.corpus_score(hyps, _streams(refs)).score)
    assert value.ci_low is not None and value.ci_high is not None
    assert value.ci_low < value.value < value.ci_high
    for lang, offset in (("zh", 0), ("en", 1), ("mixed", 2)):
        part = result.slices[f"lang={lang}"].metrics["ter"].value
        expected = sacre.corpus_score(hyps[offset::3], _streams(refs[offset::3])).score
        assert _close(part, expected), lang
    # a candidate that copies the first reference wherever the baseline's output is long
    candidate = [dict(r) for r in records]
    for record, (_, rs) in zip(candidate, RECORDS[:400], strict=True):
        if len(record["output"]["answer"]) > 20:
            record["output"] = {"answer": rs[0]}
    compared = pingce.compare(suite, candidate, records, bootstrap=300, seed=5)
    entry = compared.metrics["ter"]
    assert entry.higher_is_better is False
    assert entry.delta is not None and entry.delta < 0
    assert entry.verdict is not None and entry.verdict.startswith("candidate better")
    gate = parse_regression_gates(["ter"])
    assert regressions(compared.metrics, gate) == []
    reverse = pingce.compare(suite, records, candidate, bootstrap=300, seed=5)
    assert reverse.metrics["ter"].verdict.startswith("candidate worse")
    assert "candidate significantly worse" in regressions(reverse.metrics, gate)[0]


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ([], "empty list"),
        (["ok", 3], "reference 1 of the list is int 3, not a text"),
        ({"text": "a"}, "a reference text or a list"),
    ],
)
def test_bad_references_are_input_errors(gold: Any, message: str) -> None:
    metric = create_metric("text_ter")
    records = [
        {"id": 1, "pred_text": "a b", "gold_text": "a b"},
        {"id": 2, "pred_text": "a", "gold_text": gold},
    ]
    with pytest.raises(InputError, match=message) as info:
        load_records(records, metric.statistic().fields())
    assert info.value.field == "gold_text"


@pytest.mark.parametrize("value", ["true", 1, None])
def test_options_must_be_booleans(tmp_path: Path, value: Any) -> None:
    suite = tmp_path / "s.yaml"
    shown = "null" if value is None else repr(value) if isinstance(value, str) else value
    suite.write_text(
        f"name: s\nmetrics:\n  t: {{metric: text_ter, normalized: {shown}}}\n", encoding="utf-8"
    )
    with pytest.raises(SuiteError, match="normalized must be true or false") as info:
        load_suite(suite)
    assert info.value.key == "metrics.t"


def test_empty_metric_value_follows_the_policy() -> None:
    for policy, expected in ((None, math.nan), (0.0, 0.0), (1.0, 100.0)):
        metric = create_metric("text_ter", zero_division=policy)
        value = float(metric.finalize(np.zeros((1, 3)))[0])
        assert (math.isnan(value) and math.isnan(expected)) or value == expected
