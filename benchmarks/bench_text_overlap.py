"""Benchmark: ROUGE and BLEU on 100,000 Chinese pairs (issue 3: the text-overlap family).

1. jieba tokenisation of the 200,000 texts, timed on its own and shared by pingce, rouge-score
   and nltk (each library gets the same token lists; rouge-score through a tokenizer object that
   looks them up).
2. ROUGE-1, ROUGE-2 and ROUGE-L (precision, recall, F of every pair): pingce's vectorised
   statistics against ``rouge_score.RougeScorer``.
3. Sentence BLEU-4 with smoothing method 1 against nltk's ``sentence_bleu``, and corpus BLEU
   with the ``zh`` tokenizer against ``sacrebleu.metrics.BLEU`` (both from raw strings, each
   library tokenising with its own ``zh`` tokenizer), plus the ``zh`` tokenizers alone.

Every value is asserted equal (to 1e-9) in the same run. Synthetic data: sentences of jieba
dictionary words drawn by frequency (8-35 words, about 15-70 characters, with punctuation);
predictions are edits of the references (substitutions, deletions, insertions, swaps).
Written, seeded, to ``benchmarks/data/`` on first use.

Run with ``.venv/bin/python benchmarks/bench_text_overlap.py`` (or ``make bench``).
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

N = 100_000
SEED = 0
DATA_DIR = Path(__file__).parent / "data"
T = TypeVar("T")


def chinese_pairs(n: int = N, seed: int = SEED) -> tuple[list[str], list[str]]:
    """``n`` (prediction, reference) Chinese texts, generated once and cached as JSONL."""
    DATA_DIR.mkdir(exist_ok=True)
    path = DATA_DIR / f"text_overlap_{n}_{seed}.jsonl"
    if not path.exists():
        import jieba

        jieba.initialize()
        words = [
            w
            for w, f in jieba.dt.FREQ.items()
            if f >= 50 and 1 <= len(w) <= 4 and all("\u4e00" <= c <= "\u9fa5" for c in w)
        ]
        freq = np.array([jieba.dt.FREQ[w] for w in words], dtype=np.float64)
        prob = freq**0.8 / (freq**0.8).sum()
        rng = np.random.default_rng(seed)
        punct = ["，", "，", "。", "、", "；", "！", "？"]
        tmp = path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            for i in range(n):
                k = int(rng.integers(8, 36))
                gold = [words[j] for j in rng.choice(len(words), size=k, p=prob)]
                pred = list(gold)
                for _ in range(int(rng.integers(0, max(2, k // 3)))):
                    u = rng.random()
                    pos = int(rng.integers(0, len(pred))) if pred else 0
                    new = words[int(rng.choice(len(words), p=prob))]
                    if u < 0.45 and pred:
                        pred[pos] = new
                    elif u < 0.65 and pred:
                        del pred[pos]
                    elif u < 0.9:
                        pred.insert(pos, new)
                    elif len(pred) > 2:
                        pred[pos : pos + 2] = pred[pos : pos + 2][::-1]
                texts = []
                for seq in (pred, gold):
                    out = []
                    for j, w in enumerate(seq):
                        out.append(w)
                        if j < len(seq) - 1 and rng.random() < 0.12:
                            out.append(punct[int(rng.integers(0, len(punct)))])
                    out.append("。")
                    texts.append("".join(out))
                record = {"id": f"r{i}", "pred": texts[0], "gold": texts[1]}
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        tmp.rename(path)
    preds, golds = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            preds.append(record["pred"])
            golds.append(record["gold"])
    return preds, golds


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def assert_equal(ours: np.ndarray, theirs: list[float], what: str, tol: float = 1e-9) -> None:
    diff = np.abs(np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64))
    worst = float(diff.max()) if diff.size else 0.0
    assert worst <= tol, f"{what}: values differ by up to {worst}"


def main() -> None:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    from pingce.text.bleu import (
        nltk_bleu,
        nltk_bleu_stats_batch,
        sacrebleu_corpus_bleu,
        sacrebleu_tokenize_all,
    )
    from pingce.text.pairs import PairIds, paused_gc
    from pingce.text.rouge_google import rouge_l_batch, rouge_n_batch
    from pingce.text.tokenize import jieba_words

    preds, golds = chinese_pairs()
    chars = np.array([len(t) for t in golds])
    print(
        f"data: {N:,} Chinese pairs, reference length {chars.mean():.0f} characters on average "
        f"(5th-95th percentile {np.percentile(chars, 5):.0f}-{np.percentile(chars, 95):.0f})"
    )
    results: dict[str, Any] = {}

    # 1. shared tokenisation ---------------------------------------------------------------
    jieba_words("预热")

    def tokenize() -> tuple[list[list[str]], list[list[str]]]:
        with paused_gc():
            return [jieba_words(t) for t in preds], [jieba_words(t) for t in golds]

    (pred_tokens, gold_tokens), t_tok = timed(tokenize)
    tokens_per_text = (sum(map(len, pred_tokens)) + sum(map(len, gold_tokens))) / (2 * N)
    print(
        f"jieba tokenisation of {2 * N:,} texts (shared): {t_tok:.2f} s, "
        f"{tokens_per_text:.1f} tokens a text"
    )
    results["tokenize_s"] = t_tok

    # 2. ROUGE-1/2/L ------------------------------------------------------------------------
    def ours_rouge() -> dict[str, Any]:
        pairs = PairIds.from_tokens(pred_tokens, gold_tokens)
        return {
            "rouge1": rouge_n_batch(pairs, n=1),
            "rouge2": rouge_n_batch(pairs, n=2),
            "rougeL": rouge_l_batch(pairs),
        }

    ours, t_ours = timed(ours_rouge)

    lookup = dict(zip(preds, pred_tokens, strict=True))
    lookup.update(zip(golds, gold_tokens, strict=True))

    class Pretokenized:
        def tokenize(self, text: str) -> list[str]:
            return lookup[text]

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Pretokenized())
    theirs, t_theirs = timed(
        lambda: [scorer.score(g, p) for p, g in zip(preds, golds, strict=True)]
    )
    for key, scores in ours.items():
        for field in ("precision", "recall", "fmeasure"):
            assert_equal(getattr(scores, field), [getattr(s[key], field) for s in theirs], key)
    ratio = t_theirs / t_ours
    print(
        f"ROUGE-1/2/L (P, R, F of {N:,} pairs): pingce {t_ours:.2f} s, rouge-score "
        f"{t_theirs:.1f} s -> pingce {ratio:.0f}x faster (values equal)"
    )
    results.update(rouge_pingce_s=t_ours, rouge_score_s=t_theirs, rouge_ratio=ratio)

    # 3a. sentence BLEU vs nltk ---------------------------------------------------------------
    def ours_bleu() -> np.ndarray:
        pairs = PairIds.from_tokens(pred_tokens, gold_tokens)
        return nltk_bleu(nltk_bleu_stats_batch(pairs, fivegrams=False), smoothing=1)

    ours_b, t_ours_b = timed(ours_bleu)
    method1 = SmoothingFunction().method1

    def nltk_all() -> list[float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [
                sentence_bleu([g], p, smoothing_function=method1)
                for p, g in zip(pred_tokens, gold_tokens, strict=True)
            ]

    theirs_b, t_nltk = timed(nltk_all)
    assert_equal(ours_b, theirs_b, "nltk sentence BLEU")
    ratio = t_nltk / t_ours_b
    print(
        f"sentence BLEU-4, smoothing method 1 ({N:,} pairs, from tokens): pingce {t_ours_b:.2f} s, "
        f"nltk {t_nltk:.1f} s -> pingce {ratio:.0f}x faster (values equal)"
    )
    results.update(bleu_pingce_s=t_ours_b, nltk_s=t_nltk, nltk_ratio=ratio)

    # 3b. corpus BLEU vs sacrebleu (zh), from raw strings --------------------------------------
    ours_c, t_ours_c = timed(lambda: sacrebleu_corpus_bleu(preds, golds, tokenize="zh"))
    theirs_c, t_sacre = timed(lambda: BLEU(tokenize="zh").corpus_score(preds, [golds]).score)
    assert abs(ours_c - theirs_c) <= 1e-9, (ours_c, theirs_c)
    ratio = t_sacre / t_ours_c
    print(
        f"corpus BLEU, tokenize='zh' ({N:,} pairs, from strings): pingce {t_ours_c:.2f} s, "
        f"sacrebleu {t_sacre:.1f} s -> pingce {ratio:.0f}x faster (BLEU {ours_c:.4f} both)"
    )
    results.update(sacre_pingce_s=t_ours_c, sacrebleu_s=t_sacre, sacrebleu_ratio=ratio)

    fresh = [f"新{t}" for t in golds]  # new strings: sacrebleu's lru_cache cannot help
    ours_t, t_tok_ours = timed(lambda: sacrebleu_tokenize_all(fresh, "zh"))
    zh = TokenizerZh()
    theirs_t, t_tok_sacre = timed(lambda: [zh(t.rstrip()).split() for t in fresh])
    assert ours_t == theirs_t
    ratio = t_tok_sacre / t_tok_ours
    print(
        f"zh tokenizer alone ({N:,} texts): pingce {t_tok_ours:.2f} s, sacrebleu "
        f"{t_tok_sacre:.2f} s -> pingce {ratio:.1f}x faster (tokens equal)"
    )
    results.update(zh_tok_pingce_s=t_tok_ours, zh_tok_sacrebleu_s=t_tok_sacre, zh_ratio=ratio)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
