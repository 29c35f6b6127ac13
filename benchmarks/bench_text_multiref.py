"""Benchmark: several references per record (issue 14): 100,000 Chinese predictions with three
references each, pingce against each peer in the same run, every value asserted equal.

Two measurements:

1. **From shared tokens** (the issue's >= 5x target): both sides get the same jieba tokens
   (``jieba.lcut``, accurate mode, done once and not counted); pingce's statistics and values
   (``Statistic.compute`` and ``finalize`` of its metric objects, in this process, with a tokenizer
   that looks the tokens up) against rouge-score's ``score_multi`` (ROUGE-1/2/L), nltk's
   ``sentence_bleu`` (method 1) and ``corpus_bleu`` with three references each; sacrebleu's BLEU
   (``zh``) and chrF tokenise for themselves, so both sides start from the raw strings.
2. **End to end**: ``pingce run SUITE --data FILE --bootstrap 0`` in a child process per suite
   (suite files written to ``benchmarks/data/text_multiref_*.yaml``), against the peer timed from
   ``json.loads`` of the file and its imports (a fresh interpreter) to its numbers, with jieba
   segmentation (``jieba.lcut`` of the 400,000 texts) on the peer's side of ``rouge``, ``bleu`` and
   ``nltk``: jieba is most of both sides' time there, which bounds those ratios.

============  ================================================  ====================================
suite         pingce metrics                                    peer
============  ================================================  ====================================
``rouge``     ``text_rouge_n`` (n 1, 2), ``text_rouge_l``: P,R,F  rouge-score ``score_multi``
``bleu``      ``text_bleu``, smoothing method 1                 nltk ``sentence_bleu``, 3 references
``nltk``      ``text_nltk_corpus_bleu``                         nltk ``corpus_bleu``, 3 references
``sacrebleu`` ``text_corpus_bleu``, ``tokenize: zh``            sacrebleu ``BLEU``, 3 streams
``chrf``      ``text_chrf``                                     sacrebleu ``CHRF``, 3 streams
============  ================================================  ====================================

Checked in the same run, to 1e-9: every record's ROUGE P/R/F and sentence BLEU (records.jsonl of
the runs and the in-process values), the nltk corpus BLEU, sacrebleu's BLEU and chrF
(results.json and in process).

Data: a reference of 8-35 jieba dictionary words drawn by frequency (with punctuation); the
prediction and the two other references are independent edits of it (substitutions, deletions,
insertions, swaps), so the references differ from each other as paraphrases do and the best one
varies. Written, seeded, to ``benchmarks/data/`` on first use.

Run: ``.venv/bin/python benchmarks/bench_text_multiref.py [records]``.
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
from _data import ROUGE_PRF, chinese_words, data_file, edit_words, write_suite

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
REFS = 3
SEED = 0
TOL = 1e-9
TARGET = 5.0

SUITES: dict[str, dict[str, str]] = {
    "rouge": ROUGE_PRF,
    "bleu": {"bleu4": "{metric: text_bleu, smoothing: 1}"},
    "nltk": {"nltk_corpus": "{metric: text_nltk_corpus_bleu}"},
    "sacrebleu": {"corpus_bleu": "{metric: text_corpus_bleu, tokenize: zh}"},
    "chrf": {"chrf": "{metric: text_chrf}"},
}
PEERS = {
    "rouge": "rouge-score score_multi",
    "bleu": "nltk sentence_bleu",
    "nltk": "nltk corpus_bleu",
    "sacrebleu": "sacrebleu BLEU, zh",
    "chrf": "sacrebleu CHRF",
}


def suite_file(name: str) -> Path:
    return write_suite(
        f"text_multiref_{name}.yaml",
        f"text-multiref-{name}",
        "text metrics with three references per record (bench_text_multiref.py)",
        SUITES[name],
    )


def multiref_records(n: int, seed: int, refs: int = REFS) -> Iterator[dict[str, Any]]:
    """``n`` Chinese predictions with ``refs`` references each (see the module)."""
    words, weights = chinese_words()
    cdf = np.cumsum(weights) / weights.sum()
    rng = np.random.default_rng(seed)
    punct = ["，", "，", "。", "、", "；", "！", "？"]

    def draw(k: int) -> list[str]:
        return [words[j] for j in np.searchsorted(cdf, rng.random(k))]

    def text(seq: list[str]) -> str:
        out = []
        marks = rng.random(len(seq)) < 0.12
        for j, w in enumerate(seq):
            out.append(w)
            if j < len(seq) - 1 and marks[j]:
                out.append(punct[int(rng.integers(0, len(punct)))])
        out.append("。")
        return "".join(out)

    for i in range(n):
        k = int(rng.integers(8, 36))
        gold = draw(k)
        pred = edit_words(rng, gold, k, lambda: draw(1)[0])
        golds = [gold] + [edit_words(rng, gold, k, lambda: draw(1)[0]) for _ in range(refs - 1)]
        yield {"id": f"r{i}", "pred_text": text(pred), "gold_text": [text(g) for g in golds]}


def pingce_in_process(
    preds: list[str], golds: list[list[str]], lookup: dict[str, list[str]]
) -> tuple[dict[str, float], dict[str, Any]]:
    """pingce's statistics and values from the shared tokens (a tokenizer that looks them up);
    seconds per peer's counterpart, and the values."""
    from pingce.metrics import Context, create_metric, overlap
    from pingce.records import load_records
    from pingce.text.tokenize import TOKENIZERS

    TOKENIZERS["shared"] = lookup.__getitem__
    rows = [
        {"id": i, "pred_text": p, "gold_text": g}
        for i, (p, g) in enumerate(zip(preds, golds, strict=True))
    ]
    groups: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
        "rouge": [
            (f"{key}_{stat}", name, {**args, "stat": stat, "tokenizer": "shared"})
            for key, name, args in (
                ("rouge1", "text_rouge_n", {"n": 1}),
                ("rouge2", "text_rouge_n", {"n": 2}),
                ("rougeL", "text_rouge_l", {}),
            )
            for stat in ("p", "r", "f")
        ],
        "bleu": [("bleu4", "text_bleu", {"smoothing": 1, "tokenizer": "shared"})],
        "nltk": [("nltk_corpus", "text_nltk_corpus_bleu", {"tokenizer": "shared"})],
        "sacrebleu": [("corpus_bleu", "text_corpus_bleu", {"tokenize": "zh"})],
        "chrf": [("chrf", "text_chrf", {})],
    }
    seconds: dict[str, float] = {}
    values: dict[str, Any] = {}
    for group, entries in groups.items():
        metrics = [(key, create_metric(name, **args)) for key, name, args in entries]
        table = load_records(rows, metrics[0][1].statistic().fields())
        overlap.clear_text_cache()
        start = time.perf_counter()
        blocks: dict[Any, Any] = {}
        for key, metric in metrics:
            statistic = metric.statistic()
            if statistic.key not in blocks:
                blocks[statistic.key] = statistic.compute(table, Context())
            block = blocks[statistic.key]
            values[key] = (
                float(metric.finalize(block.total()[None, :])[0]),
                metric.finalize(block.per_record()),
            )
        seconds[group] = time.perf_counter() - start
        del table
        overlap.clear_text_cache()
    del TOKENIZERS["shared"]
    return seconds, values


def main() -> None:
    info = machine(["jieba", "rouge-score", "nltk", "sacrebleu", "rapidfuzz"])
    path = data_file(f"text_multiref_{N}_{REFS}_{SEED}.jsonl", lambda: multiref_records(N, SEED))
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {N:,} records, {REFS} refs)")
    suites = {name: suite_file(name) for name in SUITES}

    # 1. pingce end to end, as users run it
    runs: dict[str, CliRun] = {}
    for name in SUITES:
        runs[name] = run_cli(
            f"`pingce run text_multiref_{name}.yaml --bootstrap 0`",
            ["run", suites[name], "--data", path, "--bootstrap", "0"],
            out=out_dir("text_multiref", f"{name}-bootstrap0"),
        )

    # 2. the peers in this process
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    preds = [r["pred_text"] for r in rows]
    golds = [r["gold_text"] for r in rows]
    load_s = time.perf_counter() - start
    streams = [[g[j] for g in golds] for j in range(REFS)]

    import jieba
    from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU, CHRF

    import_s = import_seconds(
        "import jieba, nltk.translate.bleu_score, rouge_score.rouge_scorer, sacrebleu.metrics; "
        "jieba.setLogLevel(60); jieba.initialize()"
    )
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()

    def tokenize() -> dict[str, list[str]]:
        lookup = {p: jieba.lcut(p) for p in preds}
        for group in golds:
            for text in group:
                lookup[text] = jieba.lcut(text)
        return lookup

    lookup, tokenize_s = timed(tokenize)
    hyp_tokens = [lookup[p] for p in preds]
    ref_tokens = [[lookup[t] for t in g] for g in golds]

    class Pretokenized:
        def tokenize(self, text: str) -> list[str]:
            return lookup[text]

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Pretokenized())
    rouge_scores, rouge_s = timed(
        lambda: [scorer.score_multi(g, p) for p, g in zip(preds, golds, strict=True)]
    )
    method1 = SmoothingFunction().method1

    def nltk_sentences() -> list[float]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [
                sentence_bleu(r, h, smoothing_function=method1)
                for h, r in zip(hyp_tokens, ref_tokens, strict=True)
            ]

    def nltk_corpus() -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(corpus_bleu(ref_tokens, hyp_tokens))

    nltk_scores, nltk_s = timed(nltk_sentences)
    corpus_score, corpus_s = timed(nltk_corpus)
    sacre_score, sacre_s = timed(lambda: BLEU(tokenize="zh").corpus_score(preds, streams).score)
    chrf_score, chrf_s = timed(lambda: CHRF().corpus_score(preds, streams).score)
    peer_s = {"rouge": rouge_s, "bleu": nltk_s, "nltk": corpus_s, "sacrebleu": sacre_s}
    peer_s["chrf"] = chrf_s

    # 3. pingce in this process, from the same tokens
    ours_s, ours = pingce_in_process(preds, golds, lookup)

    # 4. identical numbers
    problems: list[str] = []
    rouge_names = list(ROUGE_PRF)
    cli_rouge = per_record(runs["rouge"], rouge_names)
    for name in rouge_names:
        key, stat = name.split("_")
        field = {"p": "precision", "r": "recall", "f": "fmeasure"}[stat]
        expected = [getattr(s[key], field) for s in rouge_scores]
        for label, got in (("pingce run", cli_rouge[name]), ("in process", ours[name][1])):
            gap = worst(got, expected)
            if gap > TOL:
                problems.append(f"{label}: {name} differs from score_multi by up to {gap:.3g}")
    for label, got in (
        ("pingce run", per_record(runs["bleu"], ["bleu4"])["bleu4"]),
        ("in process", ours["bleu4"][1]),
    ):
        gap = worst(got, nltk_scores)
        if gap > TOL:
            problems.append(f"{label}: bleu4 differs from nltk sentence_bleu by up to {gap:.3g}")
    for name, run, expected in (
        ("nltk_corpus", "nltk", corpus_score),
        ("corpus_bleu", "sacrebleu", sacre_score),
        ("chrf", "chrf", chrf_score),
    ):
        for label, got in (("pingce run", runs[run].metric(name)), ("in process", ours[name][0])):
            if got is None or abs(got - expected) > TOL:
                problems.append(f"{label}: {name} pingce {got!r}, peer {expected!r}")

    shared = load_s + import_s
    peer_end = {
        "rouge": shared + tokenize_s + rouge_s,
        "bleu": shared + tokenize_s + nltk_s,
        "nltk": shared + tokenize_s + corpus_s,
        "sacrebleu": shared + sacre_s,
        "chrf": shared + chrf_s,
    }
    print_table(
        ["peer, in this process", "seconds"],
        [
            ["json.loads of the file", f"{load_s:.2f} s"],
            ["imports + jieba dictionary load (fresh interpreter)", f"{import_s:.2f} s"],
            [f"jieba.lcut of the {N * (REFS + 1):,} texts (shared)", f"{tokenize_s:.2f} s"],
            ["rouge-score score_multi, ROUGE-1/2/L", f"{rouge_s:.2f} s"],
            ["nltk sentence_bleu, method 1", f"{nltk_s:.2f} s"],
            ["nltk corpus_bleu", f"{corpus_s:.2f} s"],
            ["sacrebleu BLEU(tokenize='zh').corpus_score", f"{sacre_s:.2f} s"],
            ["sacrebleu CHRF().corpus_score", f"{chrf_s:.2f} s"],
        ],
        title=f"\n{N:,} Chinese records, {REFS} references each, same run:",
    )
    table = []
    for name in SUITES:
        ratio = peer_s[name] / ours_s[name]
        table.append(
            [
                name,
                f"{ours_s[name]:.2f} s",
                PEERS[name],
                f"{peer_s[name]:.2f} s",
                f"{ratio:.1f}x",
                f">= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'}",
            ]
        )
    print_table(
        ["metric", "pingce", "peer", "peer time", "ratio", "target"],
        table,
        title="\nfrom shared tokens (sacrebleu: from the strings), in this process:",
    )
    table = []
    for name in SUITES:
        run = runs[name]
        ratio = peer_end[name] / run.wall_s
        table.append(
            [
                name,
                f"{run.wall_s:.2f} s",
                f"{run.peak_rss_mb:.0f} MB",
                PEERS[name] + (" + jieba" if name in ("rouge", "bleu", "nltk") else ""),
                f"{peer_end[name]:.2f} s",
                f"{ratio:.2f}x",
            ]
        )
    print_table(
        ["suite", "pingce run", "peak RSS", "peer", "end to end", "ratio"],
        table,
        title="\nend to end, `pingce run --bootstrap 0` (ratio = peer / pingce):",
    )
    print_checks(
        runs.values(),
        problems,
        "numbers identical: every record's ROUGE-1/2/L P/R/F and sentence BLEU, nltk corpus "
        "BLEU, sacrebleu BLEU and chrF, from the runs' files and in process, to 1e-9",
    )
    save_and_exit(
        "bench_text_multiref",
        {
            "machine": info,
            "records": N,
            "references": REFS,
            "peer_parts_s": {
                "json_load": load_s,
                "imports_and_jieba_init": import_s,
                "jieba_tokenize": tokenize_s,
                **{f"peer_{k}": v for k, v in peer_s.items()},
            },
            "pingce_from_shared_tokens_s": ours_s,
            "ratios_from_shared_tokens": {k: peer_s[k] / ours_s[k] for k in SUITES},
            "peer_end_to_end_s": peer_end,
            "pingce": {name: run.summary() for name, run in runs.items()},
            "ratios_end_to_end": {k: peer_end[k] / runs[k].wall_s for k in SUITES},
            "identical": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
