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
its own ``zh`` tokenizer. pingce's ``jieba`` tokenizer gives the same words; it cuts text of Han
characters and punctuation with rjieba (jieba-rs) where that is proven identical
(``pingce.text.jieba_fast``), as users' runs do. Every suite runs with ``--bootstrap 0`` (the
libraries compute no intervals); ``all`` also runs with the default 1,000 resamples, to show
what the intervals cost.

Every value is checked in the same run, read from the files pingce wrote: each pair's ROUGE
P/R/F and sentence BLEU in records.jsonl, corpus BLEU and chrF in results.json, to 1e-9.

Data: sentences of jieba dictionary words drawn by frequency (8-35 words, about 15-70
characters, with punctuation); predictions are edits of the references (substitutions,
deletions, insertions, swaps). Written, seeded, to ``benchmarks/data/`` on first use.

Besides wall seconds, the CPU seconds of both sides (pingce's child process and this process's
parts; the imports measured in a fresh interpreter) and their ratio, for runs on a loaded machine.

Run: ``.venv/bin/python benchmarks/bench_text_overlap.py [pairs] [--suites=rouge,bleu]`` (the
suites to run, of ``all,rouge,bleu,sacrebleu,chrf``; every one by default).
"""

from __future__ import annotations

import json
import logging
import os
import resource
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

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
    worst,
)
from _data import ROUGE_PRF, chinese_text, chinese_words, data_file, edit_words, write_suite

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
N = int(ARGS[0]) if ARGS else 100_000
ONLY = next(
    (a.split("=", 1)[1].split(",") for a in sys.argv[1:] if a.startswith("--suites=")),
    ["all", "rouge", "bleu", "sacrebleu", "chrf"],
)
SEED = 0
TOL = 1e-9
T = TypeVar("T")

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


def _import_cpu_seconds(statement: str, repeat: int = 3) -> float:
    """The CPU seconds ``statement`` adds to a fresh interpreter's (best of ``repeat``)."""

    def best(code: str) -> float:
        spent = []
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        return min(spent)

    return max(0.0, best(statement) - best("pass"))


def _reference(path: Path, wanted: set[str]) -> dict[str, Any]:
    """The libraries' numbers and the seconds (wall, and this process's CPU) of each part."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def part(name: str, fn: Callable[[], T]) -> T:
        start, start_cpu = time.perf_counter(), time.process_time()
        value = fn()
        wall[name] = time.perf_counter() - start
        cpu[name] = time.process_time() - start_cpu
        return value

    def read() -> list[dict[str, Any]]:
        with open(path, encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    rows = part("json_load", read)
    preds = [r["pred_text"] for r in rows]
    golds = [r["gold_text"] for r in rows]

    import jieba
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU, CHRF

    # measured in a fresh interpreter (best of 3)
    statement = (
        "import jieba, nltk.translate.bleu_score, rouge_score.rouge_scorer, sacrebleu.metrics; "
        "jieba.setLogLevel(60); jieba.initialize()"
    )
    wall["imports_and_jieba_init"] = import_seconds(statement)
    cpu["imports_and_jieba_init"] = _import_cpu_seconds(statement)
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()  # counted in imports_and_jieba_init
    out: dict[str, Any] = {"wall": wall, "cpu": cpu}
    if wanted & {"rouge", "bleu", "all"}:
        pred_tokens, gold_tokens = part(
            "jieba_tokenize",
            lambda: ([jieba.lcut(t) for t in preds], [jieba.lcut(t) for t in golds]),
        )
        lookup = dict(zip(preds, pred_tokens, strict=True))
        lookup.update(zip(golds, gold_tokens, strict=True))

        class Pretokenized:
            def tokenize(self, text: str) -> list[str]:
                return lookup[text]

    if wanted & {"rouge", "all"}:
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=Pretokenized())
        out["rouge"] = part(
            "rouge_score",
            lambda: [scorer.score(g, p) for p, g in zip(preds, golds, strict=True)],
        )
    if wanted & {"bleu", "all"}:
        method1 = SmoothingFunction().method1

        def nltk_all() -> list[float]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [
                    sentence_bleu([g], p, smoothing_function=method1)
                    for p, g in zip(pred_tokens, gold_tokens, strict=True)
                ]

        out["bleu"] = part("nltk", nltk_all)
    if wanted & {"sacrebleu", "all"}:
        out["sacrebleu"] = part(
            "sacrebleu_bleu", lambda: BLEU(tokenize="zh").corpus_score(preds, [golds]).score
        )
    if wanted & {"chrf", "all"}:
        out["chrf"] = part("sacrebleu_chrf", lambda: CHRF().corpus_score(preds, [golds]).score)
    return out


PARTS = {
    "rouge": ("json_load", "imports_and_jieba_init", "jieba_tokenize", "rouge_score"),
    "bleu": ("json_load", "imports_and_jieba_init", "jieba_tokenize", "nltk"),
    "sacrebleu": ("json_load", "imports_and_jieba_init", "sacrebleu_bleu"),
    "chrf": ("json_load", "imports_and_jieba_init", "sacrebleu_chrf"),
    "all": (
        "json_load",
        "imports_and_jieba_init",
        "jieba_tokenize",
        "rouge_score",
        "nltk",
        "sacrebleu_bleu",
        "sacrebleu_chrf",
    ),
}
"""The reference's parts each suite's end-to-end time adds up."""


def _problems(runs: dict[str, CliRun], ref: dict[str, Any], with_ci: CliRun | None) -> list[str]:
    """Where pingce's numbers differ from the libraries' (none expected)."""
    problems: list[str] = []
    rouge_names = list(ROUGE_PRF)
    for label in ("all", "rouge"):
        if label not in runs:
            continue
        values = per_record(runs[label], rouge_names)
        for name in rouge_names:
            key, stat = name.split("_")
            field = {"p": "precision", "r": "recall", "f": "fmeasure"}[stat]
            gap = worst(values[name], [getattr(s[key], field) for s in ref["rouge"]])
            if gap > TOL:
                problems.append(f"{label}: {name} differs from rouge-score by up to {gap:.3g}")
    for label in ("all", "bleu"):
        if label not in runs:
            continue
        gap = worst(per_record(runs[label], ["bleu4"])["bleu4"], ref["bleu"])
        if gap > TOL:
            problems.append(f"{label}: bleu4 differs from nltk by up to {gap:.3g}")
    for label, name, key in (
        ("all", "corpus_bleu", "sacrebleu"),
        ("sacrebleu", "corpus_bleu", "sacrebleu"),
        ("all", "chrf", "chrf"),
        ("chrf", "chrf", "chrf"),
    ):
        if label not in runs:
            continue
        got, expected = runs[label].metric(name), ref[key]
        if got is None or abs(got - expected) > TOL:
            problems.append(f"{label}: {name} pingce {got!r}, sacrebleu {expected!r}")
    if with_ci is not None and abs((with_ci.metric("chrf") or 0.0) - ref["chrf"]) > TOL:
        problems.append("the run with intervals gives another chrF")
    return problems


def main() -> None:
    info = machine(["jieba", "rjieba", "rouge-score", "nltk", "sacrebleu", "rapidfuzz"])
    path = data_file(f"text_pairs_{N}_{SEED}.jsonl", lambda: chinese_pairs(N, SEED))
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {N:,} pairs)", flush=True)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    suites = {name: suite_file(name) for name in SUITES}

    # 1. pingce, as users run it
    runs: dict[str, CliRun] = {}
    for name in [s for s in ("all", "rouge", "bleu", "sacrebleu", "chrf") if s in ONLY]:
        runs[name] = run_cli(
            f"`pingce run text_overlap_{name}.yaml --bootstrap 0`",
            ["run", suites[name], "--data", path, "--bootstrap", "0"],
            out=out_dir("text_overlap", f"{name}-bootstrap0"),
        )
    with_ci = None
    if "all" in ONLY:
        with_ci = run_cli(
            "`pingce run text_overlap_all.yaml` (1,000 resamples)",
            ["run", suites["all"], "--data", path],
            out=out_dir("text_overlap", "all-default"),
        )

    # 2. the reference libraries in this process
    ref = _reference(path, set(ONLY))
    wall, cpu = ref["wall"], ref["cpu"]

    # 3. identical numbers
    problems = _problems(runs, ref, with_ci)
    reference = {name: sum(wall[p] for p in PARTS[name]) for name in runs}
    reference_cpu = {name: sum(cpu[p] for p in PARTS[name]) for name in runs}
    what = {
        "rouge": "rouge-score (+ jieba)",
        "bleu": "nltk sentence_bleu (+ jieba)",
        "sacrebleu": "sacrebleu BLEU, zh",
        "chrf": "sacrebleu CHRF",
        "all": "all four (jieba once)",
    }
    labels = {
        "json_load": "json.loads of the file",
        "imports_and_jieba_init": "import jieba, rouge-score, nltk, sacrebleu + jieba dictionary",
        "jieba_tokenize": f"jieba.lcut of the {2 * N:,} texts (shared)",
        "rouge_score": "rouge-score ROUGE-1/2/L",
        "nltk": "nltk sentence_bleu, method 1",
        "sacrebleu_bleu": "sacrebleu BLEU(tokenize='zh').corpus_score",
        "sacrebleu_chrf": "sacrebleu CHRF().corpus_score",
    }
    print_table(
        ["reference, in this process", "wall", "CPU"],
        [[labels[k], f"{wall[k]:.2f} s", f"{cpu[k]:.2f} s"] for k in labels if k in wall],
        title=f"\ntext overlap, {N:,} Chinese pairs, same run:",
    )
    table = []
    for name, run in runs.items():
        ratio = reference[name] / run.wall_s
        table.append(
            [
                name,
                f"{run.wall_s:.2f} s",
                f"{(run.user_s + run.sys_s):.2f} s",
                f"{run.peak_rss_mb:.0f} MB",
                what[name],
                f"{reference[name]:.2f} s",
                f"{reference_cpu[name]:.2f} s",
                f"{ratio:.2f}x",
                f"{reference_cpu[name] / (run.user_s + run.sys_s):.2f}x",
            ]
        )
    print_table(
        ["suite", "pingce", "CPU", "peak RSS", "reference", "wall", "CPU", "ratio", "CPU ratio"],
        table,
        title="\nend to end, --bootstrap 0 (ratio = reference / pingce):",
    )
    if with_ci is not None:
        print(
            f"with the default 1,000 resamples the `all` run takes {with_ci.wall_s:.2f} s "
            f"(intervals phase {with_ci.phases.get('intervals', 0.0):.2f} s): "
            f"{reference['all'] / with_ci.wall_s:.1f}x the reference's time, which has no "
            "intervals"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print_checks(
        (*runs.values(), *([with_ci] if with_ci else [])),
        problems,
        "numbers identical: every pair's ROUGE-1/2/L P/R/F and sentence BLEU in records.jsonl, "
        "corpus BLEU and chrF in results.json, to 1e-9",
    )
    save_and_exit(
        "bench_text_overlap",
        {
            "machine": info,
            "pairs": N,
            "suites": list(runs),
            "reference_parts_s": wall,
            "reference_parts_cpu_s": cpu,
            "reference_end_to_end_s": reference,
            "reference_end_to_end_cpu_s": reference_cpu,
            "pingce": {name: run.summary() for name, run in runs.items()},
            "pingce_all_with_intervals": with_ci.summary() if with_ci else None,
            "ratios": {name: reference[name] / runs[name].wall_s for name in runs},
            "cpu_ratios": {
                name: reference_cpu[name] / (runs[name].user_s + runs[name].sys_s) for name in runs
            },
            "identical": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
