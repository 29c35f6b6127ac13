"""The evidence half of contract-risk: sentence splitting, character n-gram cosines (against
scikit-learn), two-stage clause grounding (retrieval, then the run's backend: lexical, a loopback
reranker), altered details, law citations in records, task success and rule retrieval metrics,
and bad input through the command line."""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

import pingce
from pingce.grounding.details import altered_details
from pingce.grounding.retrieval import top_candidates
from pingce.similarity.base import BackendStats
from pingce.similarity.lexical import LexicalBackend
from pingce.suites.build import load_suite
from pingce.text.ngrams import normalize_text
from pingce.text.sentences import split_sentences
from tests.cli_run import run_pingce
from tests.loopback import LoopbackServer, char_jaccard

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "contract_risk" / "records.jsonl"

CONTRACT = (
    "第一条 甲方应于每月五日前向乙方支付货款。乙方收到货款后三日内开具发票。\n"
    "第二条 乙方不得将本合同转让给第三方。因不可抗力导致不能履行的，双方互不承担责任。\n"
    "第三条 违约金为合同总额的百分之五。"
)
CLAUSE_VERBATIM = "乙方不得将本合同转让给第三方。"
OTHER_CONTRACT = "第一条 出租人应于每年一月交付房屋。第二条 承租人应按时缴纳物业费。"


def sk_cosine(a: str, b: str, low: int = 1, high: int = 3) -> float:
    """scikit-learn's character n-gram counts of the normalised texts, cosine."""
    vectorizer = CountVectorizer(
        analyzer="char", ngram_range=(low, high), lowercase=False, preprocessor=normalize_text
    )
    try:
        counts = vectorizer.fit_transform([a, b]).toarray().astype(float)
    except ValueError:  # neither text has an n-gram of these orders
        return 0.0
    norms = np.linalg.norm(counts, axis=1)
    return 0.0 if norms.min() == 0 else float(counts[0] @ counts[1] / (norms[0] * norms[1]))


def candidates(contract: str) -> list[str]:
    """Every sentence and every two adjacent sentences (joined directly: Chinese)."""
    sentences = split_sentences(contract)
    return sentences + [a + b for a, b in itertools.pairwise(sentences)]


def record(i: str, evidence: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    return {
        "id": i,
        "gold_level": extra.pop("gold", "高"),
        "pred_level": extra.pop("pred", "高"),
        "contract": extra.pop("contract", CONTRACT),
        "evidence": evidence,
        **extra,
    }


def evaluate(records: list[dict[str, Any]], **options: Any) -> pingce.EvaluationResult:
    options.setdefault("bootstrap", 0)
    return pingce.evaluate("contract-risk", records, **options)


def misses(result: pingce.EvaluationResult, metric: str) -> list[str | None]:
    return [row.get("misses", {}).get(metric) for row in result.record_values()]


# ---------------------------------------------------------------- sentences and n-grams


def test_sentences_split_on_chinese_marks_and_line_breaks() -> None:
    text = (
        "第一条 甲方应于每月五日前支付货款。乙方收到后开具发票；逾期的，按日支付千分之一违约金！\n"
        "第二条 合同有效期3.5年？\n  \n他说：“好。”然后走了。The buyer pays. It ships in 3.5 days"
    )
    assert split_sentences(text) == [
        "第一条 甲方应于每月五日前支付货款。",
        "乙方收到后开具发票；",
        "逾期的，按日支付千分之一违约金！",
        "第二条 合同有效期3.5年？",
        "他说：“好。”",
        "然后走了。",
        "The buyer pays.",
        "It ships in 3.5 days",
    ]
    assert split_sentences("") == [] and split_sentences("。。\n；") == []


@pytest.mark.parametrize(("low", "high"), [(1, 3), (2, 2), (2, 5)])
def test_lexical_cosines_equal_scikit_learn(
    low: int, high: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both ways of counting (numpy alone below ngrams.JOIN_NGRAMS, scipy.sparse above) equal
    scikit-learn's counts, and each other bit for bit."""
    from pingce.text import ngrams

    rng = np.random.default_rng(low * 10 + high)
    alphabet = [*list("甲乙方应于五日内付款合同the cat sat on mat  ABC"), "\t", "\n"]
    texts = ["".join(rng.choice(alphabet, int(rng.integers(0, 30)))) for _ in range(120)]
    pairs = [(texts[i], texts[(i * 7 + 3) % len(texts)]) for i in range(len(texts))]
    pairs = [p for p in pairs if p[0] != p[1]]
    found = []
    for threshold in (10**9, 0):  # joined, then sparse
        monkeypatch.setattr(ngrams, "JOIN_NGRAMS", threshold)
        got = LexicalBackend(low, high).score_distinct(pairs, BackendStats())
        for (a, b), value in zip(pairs, got, strict=True):
            assert value == pytest.approx(sk_cosine(a, b, low, high), abs=1e-12), (a, b)
        found.append(np.asarray(got, dtype=np.float64))
    assert np.array_equal(found[0], found[1])


# ------------------------------------------------------------------------ retrieval


def test_retrieval_finds_the_source_sentence_within_its_own_record() -> None:
    rng = np.random.default_rng(3)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]
    records = [
        ["".join(rng.choice(alphabet, int(rng.integers(15, 40)))) + "。" for _ in range(20)]
        for _ in range(30)
    ]
    sentences = [s for sents in records for s in sents]
    owner = np.repeat(np.arange(30), 20)
    queries, query_record, truth = [], [], []
    for r, sents in enumerate(records):
        for _ in range(3):
            j = int(rng.integers(20))
            queries.append(sents[j][2:14])
            query_record.append(r)
            truth.append(r * 20 + j)
    # a query copied from another record's sentence finds nothing of that record
    queries.append(records[5][0])
    query_record.append(6)
    found = top_candidates(sentences, owner, queries, np.asarray(query_record), k=4, window=2)
    assert (found.first[:-1, 0] == np.asarray(truth)).all()
    assert (found.length[:-1, 0] == 1).all()
    chosen = found.first[found.first >= 0]
    assert (owner[chosen] == np.repeat(query_record, 4)[(found.first >= 0).ravel()]).all()
    assert found.first[-1, 0] // 20 == 6 and found.score[-1].max() < 0.2


def test_a_clause_spanning_two_sentences_is_found_as_a_window() -> None:
    sentences = ["甲方负责运输。", "运费由乙方承担。", "货到付款。"]
    clause = "甲方负责运输。运费由乙方承担。"
    found = top_candidates(sentences, np.zeros(3, np.int64), [clause], np.zeros(1, np.int64))
    assert (found.first[0, 0], found.length[0, 0]) == (0, 2)


# -------------------------------------------------------------------- altered details


@pytest.mark.parametrize(
    ("cited", "source", "expected"),
    [
        (
            "甲方应于每月十日前支付货款",
            "甲方应于每月五日前支付货款。",
            ["number: cited 十日, source 五日"],
        ),
        ("甲方应于每月五日前支付", "第三条 甲方应于每月五日前支付货款，乙方应开具发票。", []),
        ("违约金为合同总额的百分之五", "违约金为合同总额的5%。", []),
        (
            "违约金为合同总额的百分之十",
            "违约金为合同总额的5%。",
            ["number: cited 百分之十, source 5%"],
        ),
        ("逾期每日按千分之一支付违约金", "逾期每日按0.1%支付违约金。", []),
        ("合同金额为人民币伍万元", "合同金额为人民币50000元整。", []),
        (
            "合同金额为人民币6万元",
            "合同金额为人民币50000元整。",
            ["number: cited 6万元, source 50000元"],
        ),
        ("本合同有效期为二年", "本合同有效期为两年。", []),
        ("本合同自2024年3月1日起生效", "本合同自二〇二四年三月一日起生效。", []),
        ("甲方应当在三十个工作日内验收", "甲方应当在30个工作日内验收。", []),
        (
            "乙方应于每月五日前支付货款",
            "甲方应于每月五日前支付货款。",
            ["party: cited 乙方, source 甲方"],
        ),
        (
            "知识产权归乙方所有，甲方不得主张",
            "知识产权归甲方所有，乙方不得主张。",
            ["party: cited 乙方…甲方, source 甲方…乙方"],
        ),
        ("承租人可调整租金", "出租人可调整租金。", ["party: cited 承租人, source 出租人"]),
        (
            "乙方可以将本合同转让给第三方",
            "乙方不得将本合同转让给第三方。",
            ["negation: cited none, source 不得"],  # the modality change is that negation
        ),
        (
            "因不可抗力导致无法履行的，双方互不承担责任",
            "因不可抗力导致不能履行的，双方互不承担责任。",
            [],
        ),
        (
            "甲方有权解除合同",
            "甲方应当解除合同。",
            ["modality: cited permission, source obligation"],
        ),
        ("第五条 双方协商解决", "第三条 双方协商解决。", []),
        # a paraphrase in other words is not a quotation: not compared detail by detail
        ("买方每个月初要把钱打给卖方", "甲方应于每月五日前向乙方支付货款。", None),
    ],
)
def test_altered_details(cited: str, source: str, expected: list[str] | None) -> None:
    assert altered_details(cited, source) == expected


# ------------------------------------------------------------- clause hallucinations


def test_clause_checks_with_the_lexical_default() -> None:
    invented = "甲方须对乙方员工的工伤承担全部赔偿责任"
    records = [
        record("verbatim", [{"clause": "甲方应于每月五日前向乙方支付货款。"}]),
        record("fragment", [{"clause": "乙方不得将本合同转让"}]),
        record("altered", [{"clause": "甲方应于每月十日前向乙方支付货款"}]),
        record("invented", [{"clause": invented}]),
        record("copied", [{"clause": "承租人应按时缴纳物业费。"}]),
        record("other", [{"clause": "承租人应按时缴纳物业费。"}], contract=OTHER_CONTRACT),
    ]
    result = evaluate(records)
    assert result.metrics["clause_hallucination_rate"].value == pytest.approx(3 / 6)
    assert result.metrics["altered_clause_rate"].value == pytest.approx(1 / 6)
    assert result.metrics["clause_hallucination_rate"].n == 6
    ids = [r["id"] for r in records]
    why = dict(zip(ids, misses(result, "clause_hallucination_rate"), strict=True))
    assert why["verbatim"] is None and why["fragment"] is None and why["other"] is None
    assert "altered: number: cited 十日, source 五日" in str(why["altered"])
    # the invented clause names its closest sentence and the score, which is scikit-learn's
    # n-gram cosine with the best of the record's sentences and two-sentence windows
    best = max(sk_cosine(invented, s) for s in candidates(CONTRACT))
    assert f"scores {best:.3g} (≤ 0.3)" in str(why["invented"]), why["invented"]
    assert "not in the contract" in str(why["copied"])
    # one wrong clause fails the task; the level alone decides the others
    assert result.metrics["task_success_rate"].value == pytest.approx(3 / 6)


def test_threshold_edges_follow_the_score_of_the_best_sentence() -> None:
    clause = "乙方收到货款后开具正式发票"
    score = max(sk_cosine(clause, s) for s in candidates(CONTRACT))
    rows = [record("a", [{"clause": clause}])]
    spec = load_suite("contract-risk").spec

    def rate(threshold: float) -> float | None:
        suite = spec.model_copy(deep=True)
        suite.defaults = suite.defaults.model_copy(update={"threshold": threshold})
        return pingce.evaluate(suite, rows, bootstrap=0).metrics["clause_hallucination_rate"].value

    assert rate(score) == 1.0  # not above the threshold: hallucinated
    assert rate(math.nextafter(score, 0.0) - 1e-9) == 0.0
    assert 0.3 < score < 1.0


def test_no_evidence_is_null_with_a_reason_never_zero() -> None:
    result = evaluate([record("a", []), record("b", [], gold="中", pred="低")])
    for name in (
        "clause_hallucination_rate",
        "altered_clause_rate",
        "law_hallucination_rate",
        "hallucination_rate",
    ):
        entry = result.metrics[name]
        assert entry.value is None and entry.n == 0 and entry.undefined_reason, name
    assert result.metrics["task_success_rate"].value == pytest.approx(1 / 2)


@pytest.mark.parametrize("backend", ["rerank:r", "openai:judge"])
def test_second_stage_backends_ask_at_most_k_candidates_per_clause(
    backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loopback reranker (/rerank) or LLM judge (/chat/completions) as the second stage: both
    score a pair by character Jaccard, so the expected verdicts are computed here."""
    monkeypatch.setenv("PINGCE_API_KEY", "test-key")
    records = [
        record("a", [{"clause": "甲方应在每个月五号之前付款给乙方"}, {"clause": CLAUSE_VERBATIM}]),
        record("b", [{"clause": "乙方在收到货款三天内开发票"}]),
    ]
    with LoopbackServer(lifetime=120) as server:
        result = evaluate(records, similarity=backend, base_url=server.url, cache=False)
        log = server.requests()
    if backend.startswith("rerank"):
        asked = [(r.query, d) for r in log for d in (r.inputs or ())]
    else:
        asked = [r.pair for r in log if r.pair is not None]
    queries = {q for q, _ in asked}
    # the verbatim clause is grounded without a call; each other clause asks <= k = 5 texts
    assert queries == {"甲方应在每个月五号之前付款给乙方", "乙方在收到货款三天内开发票"}
    assert all(sum(1 for q, _ in asked if q == c) <= 5 for c in queries)
    assert result.similarity is not None and result.similarity["pairs"] == len(set(asked))
    # the backend's score decides: a clause is grounded when its best candidate is above 0.3
    best = {c: max(char_jaccard(q, d) for q, d in asked if q == c) for c in queries}
    expected = sum(1 for v in best.values() if v <= 0.3) / 3
    assert result.metrics["clause_hallucination_rate"].value == pytest.approx(expected)


# ----------------------------------------------------------------------------- laws


def test_law_citations_in_records() -> None:
    records = [
        record(
            "ok",
            [{"law": "《中华人民共和国民法典》第五百八十五条"}, {"law": "《劳动合同法》第３９条"}],
        ),
        record("article", [{"law": "民法典第1300条"}]),
        record("unknown", [{"law": "《合同管理法》第十二条"}]),
        record("malformed", [{"law": "相关法律规定"}]),
        record("low", [{"law": "民法典第9999条"}], gold="低", pred="低"),
    ]
    result = evaluate(records)
    assert result.metrics["law_hallucination_rate"].value == pytest.approx(3 / 5)
    assert result.metrics["law_hallucination_rate"].n == 5
    # the low-level record's citation is not checked but counts as evidence (reference: 总证据数)
    assert result.metrics["hallucination_rate"].value == pytest.approx(3 / 6)
    assert result.failures.model_dump().get("law_citations_not_checked") == 1
    why = misses(result, "law_hallucination_rate")
    assert "1-1260" in str(why[1]) and "1300" in str(why[1])
    assert "not in the law list" in str(why[2]) and "malformed" in str(why[3])
    assert why[4] is None
    assert result.metrics["task_success_rate"].value == pytest.approx(2 / 5)


def test_law_list_from_a_file_replaces_the_builtin_one(tmp_path: Path) -> None:
    laws = tmp_path / "laws.csv"
    laws.write_text("law,articles,aliases\n中华人民共和国仲裁法,1-80,仲裁法\n", encoding="utf-8")
    rows = [record("a", [{"law": "《仲裁法》第十六条"}, {"law": "民法典第五百条"}])]
    builtin = evaluate(rows)
    own = evaluate(rows, laws=str(laws))
    # one of two citations is unknown either way; which one tells the lists apart
    assert builtin.metrics["law_hallucination_rate"].value == pytest.approx(1 / 2)
    assert own.metrics["law_hallucination_rate"].value == pytest.approx(1 / 2)
    said_builtin = str(misses(builtin, "law_hallucination_rate")[0])
    said_own = str(misses(own, "law_hallucination_rate")[0])
    assert "仲裁法" in said_builtin and "民法典" not in said_builtin, said_builtin
    assert "民法典" in said_own and "仲裁法" not in said_own, said_own
    assert "not in the law list" in said_own


# ---------------------------------------------------------------------------- rules


def reference_rules(rows: list[dict[str, Any]], k: int) -> dict[str, float]:
    """An independent implementation of the rule metrics' definitions."""
    hits = gold = retrieved = 0
    recalls, precisions, tops = [], [], []
    for row in rows:
        if row.get("gold_rules") is None:
            continue
        g = list(dict.fromkeys(str(x) for x in row["gold_rules"]))
        r = list(dict.fromkeys(str(x) for x in row.get("retrieved_rules") or []))
        h = len(set(g) & set(r))
        hits, gold, retrieved = hits + h, gold + len(g), retrieved + len(r)
        if g:
            recalls.append(h / len(g))
            tops.append(float(bool(set(r[:k]) & set(g))))
        if r:
            precisions.append(h / len(r))
    return {
        "rule_recall": hits / gold,
        "rule_recall_macro": float(np.mean(recalls)),
        "rule_precision": hits / retrieved,
        "rule_precision_macro": float(np.mean(precisions)),
        "rule_hit_at_k": float(np.mean(tops)),
    }


def test_rule_metrics_equal_their_definitions_on_random_data() -> None:
    rng = np.random.default_rng(11)
    pool = [f"R{i}" for i in range(12)]
    rows = []
    for i in range(300):
        row: dict[str, Any] = {"id": str(i), "gold_level": "中", "pred_level": "中"}
        if rng.random() > 0.1:
            row["gold_rules"] = list(rng.choice(pool, int(rng.integers(0, 4)), replace=False))
        if rng.random() > 0.1:
            row["retrieved_rules"] = list(rng.choice(pool, int(rng.integers(0, 8)), replace=False))
        rows.append(row)
    result = evaluate(rows)
    for name, value in reference_rules(rows, 5).items():
        assert result.metrics[name].value == pytest.approx(value, abs=1e-12), name


def test_rule_metrics_without_gold_rules_are_null() -> None:
    result = evaluate(
        [{"id": "a", "gold_level": "高", "pred_level": "高", "retrieved_rules": ["R1"]}]
    )
    for name in ("rule_recall", "rule_recall_macro", "rule_hit_at_k", "rule_precision"):
        assert result.metrics[name].value is None and result.metrics[name].undefined_reason


# ------------------------------------------------------------------ the example, the CLI


def test_the_example_reports_every_seed_metric() -> None:
    result = pingce.evaluate("contract-risk", EXAMPLE, bootstrap=0)
    for name in (
        "accuracy",
        "weighted_accuracy",
        "precision",
        "recall",
        "f1",
        "macro_f1",
        "qwk",
        "avg_latency_sec",
        "clause_hallucination_rate",
        "altered_clause_rate",
        "law_hallucination_rate",
        "hallucination_rate",
        "task_success_rate",
        "rule_recall",
    ):
        assert result.metrics[name].value is not None, name
    why = " ".join(str(m) for m in misses(result, "hallucination_rate"))
    for needle in (
        "not in the contract",
        "altered: number",
        "altered: party",
        "negation",
        "has articles 1-1260",
        "not in the law list",
        "malformed",
    ):
        assert needle in why, needle


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        ('"clause text"', "expected a list of evidence objects"),
        ('[{"note": "x"}]', "item 0 has neither a clause nor a law"),
        ('[{"clause": 3}]', "item 0: clause must be non-empty text"),
    ],
)
def test_bad_evidence_is_an_input_error(tmp_path: Path, evidence: str, message: str) -> None:
    data = tmp_path / "bad.jsonl"
    good = json.dumps(record("a", []), ensure_ascii=False)
    bad = good.replace('"evidence": []', f'"evidence": {evidence}').replace('"a"', '"b"', 1)
    data.write_text(good + "\n" + bad + "\n", encoding="utf-8")
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(tmp_path / "o"))
    assert done.returncode == 2, done.stderr
    assert f"{data}:2" in done.stderr and "evidence" in done.stderr and message in done.stderr
    assert not (tmp_path / "o").exists()


def test_bad_law_lists_are_input_errors(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(record("a", [{"law": "民法典第1条"}]), ensure_ascii=False) + "\n")
    missing = run_pingce(
        "run",
        "contract-risk",
        "--data",
        str(data),
        "--laws",
        "nope.csv",
        "--out",
        str(tmp_path / "o1"),
    )
    assert missing.returncode == 2 and "nope.csv" in missing.stderr
    laws = tmp_path / "laws.csv"
    laws.write_text("law,articles,aliases\n民法典,1-1260,\n劳动合同法,98-1,\n", encoding="utf-8")
    bad = run_pingce(
        "run",
        "contract-risk",
        "--data",
        str(data),
        "--laws",
        str(laws),
        "--out",
        str(tmp_path / "o2"),
    )
    assert bad.returncode == 2, bad.stderr
    assert f"{laws}:3" in bad.stderr and "articles" in bad.stderr and "98-1" in bad.stderr
    assert not (tmp_path / "o1").exists() and not (tmp_path / "o2").exists()


def test_missing_contract_for_a_clause_is_an_input_error(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    row = record("a", [{"clause": "甲方付款"}])
    del row["contract"]
    data.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    done = run_pingce("run", "contract-risk", "--data", str(data), "--out", str(tmp_path / "o"))
    assert done.returncode == 2 and f"{data}:1" in done.stderr and "contract" in done.stderr
    assert os.listdir(tmp_path) == ["d.jsonl"]


def test_a_clause_against_an_empty_contract_is_hallucinated() -> None:
    result = evaluate([record("a", [{"clause": "甲方付款"}], contract="   ")])
    assert result.metrics["clause_hallucination_rate"].value == 1.0
    assert "the contract has no sentence" in str(misses(result, "clause_hallucination_rate")[0])


def test_paraphrases_need_the_multilingual_embedding() -> None:
    """Clauses that say what the contract says in other words share few characters: lexical
    cannot ground them, the multilingual embedding (`embedding`, offline) can; an unrelated
    clause stays hallucinated under both. A paraphrase is not checked detail by detail (买方 for
    甲方 is another name, not another party)."""
    paraphrases = [
        "买方每个月初要把钱打给卖方",
        "卖方拿到钱以后很快要给发票",
        "合同不允许被转手给别人",
    ]
    unrelated = "公司食堂每天提供免费午餐"
    rows = [record(str(i), [{"clause": c}]) for i, c in enumerate([*paraphrases, unrelated])]
    lexical = evaluate(rows, cache=False)
    embedding = evaluate(rows, similarity="embedding", cache=False)
    assert lexical.metrics["clause_hallucination_rate"].value == 1.0
    assert embedding.metrics["clause_hallucination_rate"].value == pytest.approx(1 / 4)
    assert embedding.metrics["altered_clause_rate"].value == 0.0
    assert misses(embedding, "clause_hallucination_rate")[:3] == [None, None, None]
    assert embedding.signature.similarity.startswith("embedding:use-multilingual-v3")


def test_retrieval_in_blocks_gives_the_candidates_of_one_product(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pingce.grounding import retrieval

    rng = np.random.default_rng(5)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 60)]  # few characters: many ties
    sizes = rng.integers(1, 9, size=40)
    sentences = [
        "".join(rng.choice(alphabet, int(rng.integers(3, 12)))) for _ in range(sizes.sum())
    ]
    owner = np.repeat(np.arange(40), sizes)
    query_record = rng.integers(0, 40, size=120)  # not in record order
    queries = ["".join(rng.choice(alphabet, int(rng.integers(2, 10)))) for _ in range(120)]
    whole = top_candidates(sentences, owner, queries, query_record, k=3, window=3)
    monkeypatch.setattr(retrieval, "BLOCK_SENTENCES", 7)
    blocks = top_candidates(sentences, owner, queries, query_record, k=3, window=3)
    assert (whole.first == blocks.first).all() and (whole.length == blocks.length).all()
    assert np.array_equal(whole.score, blocks.score)
    chosen = whole.first >= 0
    assert (owner[whole.first[chosen]] == np.repeat(query_record, 3).reshape(-1, 3)[chosen]).all()


def test_the_join_and_the_sparse_product_give_the_same_dot_products(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The retrieval's dot products of a query and the sentences of its own record: the numpy
    join (small blocks) and scipy.sparse's product (large blocks) both equal a dense count
    matrix product, pair for pair, on random records with repeated n-grams; the candidates are
    the same whichever way a run takes."""
    from pingce.grounding import retrieval

    rng = np.random.default_rng(11)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 12)]  # n-grams repeat within a text
    for trial in range(4):
        n_records = int(rng.integers(1, 60))
        sizes = rng.integers(1, 6, size=n_records)
        sentences = [
            "".join(rng.choice(alphabet, int(rng.integers(1, 15)))) for _ in range(sizes.sum())
        ]
        owner = np.repeat(np.arange(n_records), sizes) + trial * 1_000_003
        query_record = np.sort(rng.choice(owner, size=int(rng.integers(1, 80))))
        queries = ["".join(rng.choice(alphabet, int(rng.integers(1, 10)))) for _ in query_record]
        s_rows, s_keys, _ = retrieval._keys(sentences, owner)
        q_rows, q_keys, _ = retrieval._keys(queries, query_record)
        keys, index = np.unique(np.concatenate([s_keys, q_keys]), return_inverse=True)
        dense_s = np.zeros((len(sentences), keys.shape[0]))
        np.add.at(dense_s, (s_rows, index[: s_keys.shape[0]]), 1)
        dense_q = np.zeros((len(queries), keys.shape[0]))
        np.add.at(dense_q, (q_rows, index[s_keys.shape[0] :]), 1)
        dense = dense_q @ dense_s.T  # keys hold the record: no pair across records
        expected = [(int(q), int(t), dense[q, t]) for q, t in zip(*np.nonzero(dense), strict=True)]
        assert max(d for _, _, d in expected) > 1  # repeated n-grams count as products
        for dots_of in (retrieval._joined_dots, retrieval._product_dots):
            query, sentence, dots = dots_of(s_rows, s_keys, q_rows, q_keys, len(sentences))
            found = list(zip(query.tolist(), sentence.tolist(), dots.tolist(), strict=True))
            assert found == expected, dots_of.__name__
        joined = top_candidates(sentences, owner, queries, query_record, k=3, window=2)
        monkeypatch.setattr(retrieval, "JOIN_NGRAMS", 0)
        product = top_candidates(sentences, owner, queries, query_record, k=3, window=2)
        monkeypatch.undo()
        assert np.array_equal(joined.first, product.first)
        assert np.array_equal(joined.score, product.score)


def test_the_join_counts_a_repeated_n_gram_once_per_text() -> None:
    """A text of one character repeated holds each n-gram thousands of times: the numpy join
    counts (row, key) entries first, so it joins one entry a side per n-gram (it expanded
    every pair of repeats: 44.7 s for 20,000 characters) and gives the sparse product's dots."""
    from pingce.grounding import retrieval

    sentences, queries = ["哈" * 3000, "哈哈嘿" * 50], ["哈" * 2000]
    s_rows, s_keys, _ = retrieval._keys(sentences, np.array([0, 0]))
    q_rows, q_keys, _ = retrieval._keys(queries, np.array([0]))
    joined = retrieval._joined_dots(s_rows, s_keys, q_rows, q_keys, len(sentences))
    product = retrieval._product_dots(s_rows, s_keys, q_rows, q_keys, len(sentences))
    for ours, theirs in zip(joined, product, strict=True):
        np.testing.assert_array_equal(ours, theirs)
    rows, _, counts = retrieval._counted(s_rows, s_keys)
    assert counts.sum() == s_rows.shape[0] and rows.shape[0] < 10  # a few n-grams, counted


def test_verbatim_matching_normalises_like_nfkc() -> None:
    import unicodedata

    from pingce.metrics.evidence import _plain

    rng = np.random.default_rng(2)
    pool = [*list("ＡＢｃ１２３\u3000，。！abc 甲方①㈠ﬁ"), "\u3000", "Å", "ﾊﾟ"]
    for _ in range(500):
        text = "".join(rng.choice(pool, int(rng.integers(0, 12))))
        expected = "".join(unicodedata.normalize("NFKC", text).casefold().split())
        assert _plain(text) == expected, text


def test_the_task_reason_names_the_level_then_the_evidence() -> None:
    """A record fails its task by a wrong level, hallucinated evidence or both; its reason says
    which, the level first; a successful record has none."""
    bad_law = [{"law": "《合同管理法》第十二条"}]
    records = [
        record("right", []),
        record("level", [], pred="中"),
        record("law", bad_law),
        record("both", bad_law, gold="中", pred="低"),
    ]
    result = evaluate(records)
    why = misses(result, "task_success_rate")
    law = misses(result, "law_hallucination_rate")
    assert why[0] is None
    assert why[1] == "level: gold 高, predicted 中"
    assert law[2] is not None and why[2] == law[2]
    assert why[3] == f"level: gold 中, predicted 低; {law[3]}"
    assert misses(result, "hallucination_rate")[3] == law[3]
    assert result.metrics["task_success_rate"].value == pytest.approx(1 / 4)
