"""Benchmark: ROUGE, BLEU and chrF on 100,000 Chinese pairs through the command line (issue 3).

pingce as users run it: a suite file written by this script (``benchmarks/data/text_*.yaml``)
with the generic text metrics over ``pred_text``/``gold_text``, run with ``pingce run SUITE
--data FILE --out DIR --profile`` in a child process timed from outside. The reference libraries
compute the same in this process, each timed from reading the JSONL (``json.loads`` of every
line) and importing itself to its numbers:

============  ===========================================================  =====================
suite         pingce metrics                                               reference
============  ===========================================================  =====================
``rouge``     ``text_rouge_n`` (n 1, 2), ``text_rouge_l``: P, R, F          rouge-score on jieba
``bleu``      ``text_bleu``, smoothing method 1                             nltk ``sentence_bleu``
``sacrebleu`` ``text_corpus_bleu``, ``tokenize: zh``                        sacrebleu ``BLEU``
``chrf``      ``text_chrf``                                                 sacrebleu ``CHRF``
``all``       all of the above in one run                                   all of the above
============  ===========================================================  =====================

rouge-score and nltk get jieba's tokens (``jieba.lcut``, accurate mode), segmented once and shared
by both, so jieba is paid once on that side as it is in one pingce run; sacrebleu tokenises with
its own ``zh`` tokenizer. Every suite runs with ``--bootstrap 0`` (the libraries compute no
intervals); ``all`` also runs with the default 1,000 resamples, to show what the intervals cost.

Every value is checked in the same run, read from the files pingce wrote: each pair's ROUGE
P/R/F and sentence BLEU in records.jsonl, corpus BLEU and chrF in results.json, to 1e-9.

Data: sentences of jieba dictionary words drawn by frequency (8-35 words, about 15-70
characters, with punctuation); predictions are edits of the references (substitutions,
deletions, insertions, swaps). Written, seeded, to ``benchmarks/data/`` on first use.

Run: ``.venv/bin/python benchmarks/bench_text_overlap.py [pairs]``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import (
    CliRun,
    import_seconds,
    machine,
    out_dir,
    per_record,
    print_checks,
    print_table,
    run_cli,
    save_and_exit,
    timed,
    worst,
)
from _data import ROUGE_PRF, chinese_text, chinese_words, data_file, edit_words, write_suite

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
SEED = 0
TOL = 1e-9
TARGET = 5.0

SUITES: dict[str, dict[str, str]] = {
    "rouge": ROUGE_PRF,
    "bleu": {"bleu4": "{metric: text_bleu, smoothing: 1}"},
    "sacrebleu": {"corpus_bleu": "{metric: text_corpus_bleu, tokenize: zh}"},
    "chrf": {"chrf": "{metric: text_chrf}"},
}
SUITES["all"] = {k: v for suite in list(SUITES.values()) for k, v in suite.items()}


def suite_file(name: str) -> Path:
    return write_suite(
        f"text_overlap_{name}.yaml",
        f"text-overlap-{name}",
        "generic text metrics over pred_text and gold_text (bench_text_overlap.py)",
        SUITES[name],
    )


def chinese_pairs(n: int, seed: int) -> Iterator[dict[str, Any]]:
    """``n`` (prediction, reference) Chinese texts."""
    words, weights = chinese_words()
    prob = weights / weights.sum()
    rng = np.random.default_rng(seed)
    punct = ["，", "，", "。", "、", "；", "！", "？"]
    for i in range(n):
        k = int(rng.integers(8, 36))
        gold = [words[j] for j in rng.choice(len(words), size=k, p=prob)]
        pred = edit_words(rng, gold, k, lambda: words[int(rng.choice(len(words), p=prob))])
        texts = [chinese_text(rng, seq, punct) for seq in (pred, gold)]
        yield {"id": f"r{i}", "pred_text": texts[0], "gold_text": texts[1]}


def main() -> None:
    info = machine(["jieba", "rouge-score", "nltk", "sacrebleu", "rapidfuzz"])
    path = data_file(f"text_pairs_{N}_{SEED}.jsonl", lambda: chinese_pairs(N, SEED))
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {N:,} pairs)", flush=True)
    suites = {name: suite_file(name) for name in SUITES}

    # 1. pingce, as users run it
    runs: dict[str, CliRun] = {}
    for name in ("all", "rouge", "bleu", "sacrebleu", "chrf"):
        runs[name] = run_cli(
            f"`pingce run text_overlap_{name}.yaml --bootstrap 0`",
            ["run", suites[name], "--data", path, "--bootstrap", "0"],
            out=out_dir("text_overlap", f"{name}-bootstrap0"),
        )
    with_ci = run_cli(
        "`pingce run text_overlap_all.yaml` (1,000 resamples)",
        ["run", suites["all"], "--data", path],
        out=out_dir("text_overlap", "all-default"),
    )

    # 2. the reference libraries in this process
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    preds = [r["pred_text"] for r in rows]
    golds = [r["gold_text"] for r in rows]
    load_s = time.perf_counter() - start

    import jieba
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU, CHRF

    import_s = import_seconds(
        "import jieba, nltk.translate.bleu_score, rouge_score.rouge_scorer, sacrebleu.metrics; "
        "jieba.setLogLevel(60); jieba.initialize()"
    )
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()  # counted in import_s

    def tokenize() -> tuple[list[list[str]], list[list[str]]]:
        return [jieba.lcut(t) for t in preds], [jieba.lcut(t) for t in golds]

    (pred_tokens, gold_tokens), tokenize_s = timed(tokenize)
    lookup = dict(zip(preds, pred_tokens, strict=True))
    lookup.update(zip(golds, gold_tokens, strict=True))

    class Pretokenized:
        def tokenize(self, text: str) -> list[str]:
            return lookup[text]

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Pretokenized())
    rouge_scores, rouge_s = timed(
        lambda: [scorer.score(g, p) for p, g in zip(preds, golds, strict=True)]
    )
    method1 = SmoothingFunction().method1

    def nltk_all() -> list[float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [
                sentence_bleu([g], p, smoothing_function=method1)
                for p, g in zip(pred_tokens, gold_tokens, strict=True)
            ]

    nltk_scores, nltk_s = timed(nltk_all)
    sacre_score, sacre_s = timed(lambda: BLEU(tokenize="zh").corpus_score(preds, [golds]).score)
    chrf_score, chrf_s = timed(lambda: CHRF().corpus_score(preds, [golds]).score)

    # 3. identical numbers
    problems: list[str] = []
    rouge_names = list(ROUGE_PRF)
    for label in ("all", "rouge"):
        values = per_record(runs[label], rouge_names)
        for name in rouge_names:
            key, stat = name.split("_")
            field = {"p": "precision", "r": "recall", "f": "fmeasure"}[stat]
            gap = worst(values[name], [getattr(s[key], field) for s in rouge_scores])
            if gap > TOL:
                problems.append(f"{label}: {name} differs from rouge-score by up to {gap:.3g}")
    for label in ("all", "bleu"):
        gap = worst(per_record(runs[label], ["bleu4"])["bleu4"], nltk_scores)
        if gap > TOL:
            problems.append(f"{label}: bleu4 differs from nltk by up to {gap:.3g}")
    for label, name, expected in (
        ("all", "corpus_bleu", sacre_score),
        ("sacrebleu", "corpus_bleu", sacre_score),
        ("all", "chrf", chrf_score),
        ("chrf", "chrf", chrf_score),
    ):
        got = runs[label].metric(name)
        if got is None or abs(got - expected) > TOL:
            problems.append(f"{label}: {name} pingce {got!r}, sacrebleu {expected!r}")
    if abs((with_ci.metric("chrf") or 0.0) - chrf_score) > TOL:
        problems.append("the run with intervals gives another chrF")

    reference = {
        "rouge": load_s + import_s + tokenize_s + rouge_s,
        "bleu": load_s + import_s + tokenize_s + nltk_s,
        "sacrebleu": load_s + import_s + sacre_s,
        "chrf": load_s + import_s + chrf_s,
    }
    reference["all"] = load_s + import_s + tokenize_s + rouge_s + nltk_s + sacre_s + chrf_s
    what = {
        "rouge": "rouge-score (+ jieba)",
        "bleu": "nltk sentence_bleu (+ jieba)",
        "sacrebleu": "sacrebleu BLEU, zh",
        "chrf": "sacrebleu CHRF",
        "all": "all four (jieba once)",
    }
    print_table(
        ["reference, in this process", "seconds"],
        [
            ["json.loads of the file", f"{load_s:.2f} s"],
            [
                "import jieba, rouge-score, nltk, sacrebleu + jieba dictionary load",
                f"{import_s:.2f} s",
            ],
            [f"jieba.lcut of the {2 * N:,} texts (shared)", f"{tokenize_s:.2f} s"],
            ["rouge-score ROUGE-1/2/L", f"{rouge_s:.2f} s"],
            ["nltk sentence_bleu, method 1", f"{nltk_s:.2f} s"],
            ["sacrebleu BLEU(tokenize='zh').corpus_score", f"{sacre_s:.2f} s"],
            ["sacrebleu CHRF().corpus_score", f"{chrf_s:.2f} s"],
        ],
        title=f"\ntext overlap, {N:,} Chinese pairs, same run:",
    )
    table = []
    for name in ("rouge", "bleu", "sacrebleu", "chrf", "all"):
        run = runs[name]
        ratio = reference[name] / run.wall_s
        table.append(
            [
                name,
                f"{run.wall_s:.2f} s",
                f"{run.peak_rss_mb:.0f} MB",
                what[name],
                f"{reference[name]:.2f} s",
                f"{ratio:.2f}x",
                f">= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'}",
            ]
        )
    print_table(
        ["suite", "pingce", "peak RSS", "reference", "end to end", "ratio", "target"],
        table,
        title="\nend to end, --bootstrap 0 (ratio = reference / pingce):",
    )
    print(
        f"with the default 1,000 resamples the `all` run takes {with_ci.wall_s:.2f} s "
        f"(intervals phase {with_ci.phases.get('intervals', 0.0):.2f} s): "
        f"{reference['all'] / with_ci.wall_s:.1f}x the reference's time, which has no intervals"
    )
    print_checks(
        (*runs.values(), with_ci),
        problems,
        "numbers identical: every pair's ROUGE-1/2/L P/R/F and sentence BLEU in records.jsonl, "
        "corpus BLEU and chrF in results.json, to 1e-9",
    )
    save_and_exit(
        "bench_text_overlap",
        {
            "machine": info,
            "pairs": N,
            "reference_parts_s": {
                "json_load": load_s,
                "imports_and_jieba_init": import_s,
                "jieba_tokenize": tokenize_s,
                "rouge_score": rouge_s,
                "nltk": nltk_s,
                "sacrebleu_bleu": sacre_s,
                "sacrebleu_chrf": chrf_s,
            },
            "reference_end_to_end_s": reference,
            "pingce": {name: run.summary() for name, run in runs.items()},
            "pingce_all_with_intervals": with_ci.summary(),
            "ratios": {name: reference[name] / runs[name].wall_s for name in runs},
            "identical": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
