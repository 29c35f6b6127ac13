"""Benchmark: sacrebleu's TER, and BLEU with the ``intl`` tokenizer, on 20,000 segments through
the command line (issue 14).

pingce as users run it: suite files written by this script (``benchmarks/data/ter_*.yaml``), run
with ``pingce run SUITE --data FILE --out DIR --bootstrap 0 --profile`` in a child process timed
from outside. sacrebleu computes the same in this process, timed from reading the JSONL
(``json.loads`` of every line) and importing itself to its numbers:

=============  ============================================================  ==================
suite          pingce metric                                                 sacrebleu
=============  ============================================================  ==================
``ter_en``     ``text_ter`` (defaults) on English, one reference              ``TER()``
``ter_zh``     ``text_ter``, ``normalized``, ``asian_support`` on Chinese,     ``TER(normalized=
               one to three references (a list in ``gold_zh``)               True, asian_...)``
``bleu_intl``  ``text_corpus_bleu``, ``tokenize: intl``, on English            ``BLEU(tokenize=
                                                                             "intl")``
=============  ============================================================  ==================

sacrebleu's time is its ``corpus_score``: the statistics of every segment
(``_extract_corpus_statistics``) and the score from their sum (``_aggregate_and_compute``), called
apart so that its per-segment statistics can check pingce's per-record values.

Every value is checked in the same run, read from the files pingce wrote: each record's TER in
records.jsonl (sacrebleu's sentence TER of its statistics) and the corpus TER and BLEU in
results.json, to 1e-9.

Data: English sentences of 10-40 made-up words drawn by a Zipf law from 6,000 (with commas,
numbers and a final point), and Chinese sentences of 8-35 jieba dictionary words drawn by
frequency (with Chinese punctuation). Each prediction is an edit of its reference: substitutions,
deletions, insertions and moves of blocks of one to three words (the shifts TER looks for); each
Chinese reference is an edit of a common base. Written, seeded, to ``benchmarks/data/``.

Run: ``.venv/bin/python benchmarks/bench_ter.py [segments]``.
"""

from __future__ import annotations

import json
import sys
import time
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
)
from _data import chinese_text, chinese_words, data_file, write_suite

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
SEED = 0
TOL = 1e-9

SUITES: dict[str, dict[str, str]] = {
    "ter_en": {
        "ter": "{metric: text_ter, pred: pred_en, gold: gold_en}",
    },
    "ter_zh": {
        "ter": "{metric: text_ter, pred: pred_zh, gold: gold_zh, normalized: true, "
        "asian_support: true}",
    },
    "bleu_intl": {
        "bleu": "{metric: text_corpus_bleu, pred: pred_en, gold: gold_en, tokenize: intl}",
    },
}


def suite_file(name: str) -> Path:
    return write_suite(
        f"{name}.yaml",
        name.replace("_", "-"),
        "sacrebleu's TER and intl BLEU (bench_ter.py)",
        SUITES[name],
    )


def _english_words(rng: np.random.Generator, count: int) -> list[str]:
    onsets = ["", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "st", "tr", "w"]
    vowels = ["a", "e", "i", "o", "u", "ea", "ou", "ai"]
    codas = ["", "", "n", "r", "s", "t", "nd", "ng", "ck"]
    words: set[str] = set()
    while len(words) < count:
        syllables = int(rng.integers(1, 4))
        words.add(
            "".join(
                onsets[int(rng.integers(len(onsets)))]
                + vowels[int(rng.integers(len(vowels)))]
                + codas[int(rng.integers(len(codas)))]
                for _ in range(syllables)
            )
        )
    return sorted(words, key=lambda w: (len(w), w))


def _edit(rng: np.random.Generator, words: list[str], draw: Any) -> list[str]:
    """Substitutions, deletions, insertions and moves of blocks of one to three words."""
    out = list(words)
    for _ in range(int(rng.integers(0, max(2, len(words) // 3)))):
        u = rng.random()
        pos = int(rng.integers(0, len(out))) if out else 0
        if u < 0.35 and out:
            out[pos] = draw()
        elif u < 0.55 and out:
            del out[pos]
        elif u < 0.8:
            out.insert(pos, draw())
        elif len(out) > 3:
            size = int(rng.integers(1, 4))
            block = out[pos : pos + size]
            del out[pos : pos + size]
            target = int(rng.integers(0, len(out) + 1))
            out[target:target] = block
    return out


def ter_records(n: int, seed: int) -> Iterator[dict[str, Any]]:
    """``n`` records with an English pair (one reference) and a Chinese one (1-3 references)."""
    rng = np.random.default_rng(seed)
    english = _english_words(rng, 6000)
    zipf = np.cumsum(1.0 / np.arange(1, len(english) + 1) ** 1.05)
    zipf /= zipf[-1]
    chinese, weights = chinese_words()
    prob = np.cumsum(weights)
    prob /= prob[-1]
    numbers = ["3.5", "2,000", "1990", "12", "0.25", "40-50"]
    zh_punct = ["，", "，", "、", "；", "！", "？"]

    def en_word() -> str:
        if rng.random() < 0.03:
            return numbers[int(rng.integers(len(numbers)))]
        return english[min(int(np.searchsorted(zipf, rng.random())), len(english) - 1)]

    def zh_word() -> str:
        return chinese[min(int(np.searchsorted(prob, rng.random())), len(chinese) - 1)]

    def en_text(words: list[str]) -> str:
        out = [w + ("," if rng.random() < 0.07 else "") for w in words]
        return (" ".join(out).capitalize() + ".") if out else ""

    for i in range(n):
        gold_en = [en_word() for _ in range(int(rng.integers(10, 41)))]
        base = [zh_word() for _ in range(int(rng.integers(8, 36)))]
        refs = [
            chinese_text(rng, _edit(rng, base, zh_word) if k else base, zh_punct)
            for k in range(int(rng.integers(1, 4)))
        ]
        yield {
            "id": f"s{i}",
            "pred_en": en_text(_edit(rng, gold_en, en_word)),
            "gold_en": en_text(gold_en),
            "pred_zh": chinese_text(rng, _edit(rng, base, zh_word), zh_punct),
            "gold_zh": refs,
        }


def main() -> None:
    info = machine(["sacrebleu", "regex", "rapidfuzz", "jieba"])
    path = data_file(f"ter_{N}_{SEED}.jsonl", lambda: ter_records(N, SEED))
    print(f"data: {path} ({path.stat().st_size / 1e6:.1f} MB, {N:,} segments)", flush=True)
    suites = {name: suite_file(name) for name in SUITES}

    # 1. pingce, as users run it
    runs: dict[str, CliRun] = {}
    for name in SUITES:
        runs[name] = run_cli(
            f"`pingce run {name}.yaml --bootstrap 0`",
            ["run", suites[name], "--data", path, "--bootstrap", "0"],
            out=out_dir("ter", name),
        )
    with_ci = run_cli(
        "`pingce run ter_zh.yaml` (1,000 resamples)",
        ["run", suites["ter_zh"], "--data", path],
        out=out_dir("ter", "ter_zh-default"),
    )

    # 2. sacrebleu in this process
    start = time.perf_counter()
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    load_s = time.perf_counter() - start
    import_s = import_seconds("import sacrebleu.metrics")
    from sacrebleu.metrics import BLEU, TER

    pred_en = [r["pred_en"] for r in rows]
    gold_en = [r["gold_en"] for r in rows]
    pred_zh = [r["pred_zh"] for r in rows]
    most = max(len(r["gold_zh"]) for r in rows)
    streams = [
        [r["gold_zh"][k] if k < len(r["gold_zh"]) else None for r in rows] for k in range(most)
    ]

    def corpus(metric: Any, hyps: list[str], refs: list[list[Any]]) -> tuple[float, list[Any]]:
        stats = metric._extract_corpus_statistics(hyps, refs)
        return metric._aggregate_and_compute(stats).score, stats

    ter_en = TER()
    ter_zh = TER(normalized=True, asian_support=True)
    (en_score, en_stats), en_s = timed(lambda: corpus(ter_en, pred_en, [gold_en]))
    print(f"sacrebleu TER, English: {en_s:.2f} s", flush=True)
    (zh_score, zh_stats), zh_s = timed(lambda: corpus(ter_zh, pred_zh, streams))
    print(f"sacrebleu TER, Chinese: {zh_s:.2f} s", flush=True)
    bleu_score, bleu_s = timed(lambda: BLEU(tokenize="intl").corpus_score(pred_en, [gold_en]).score)

    # 3. identical numbers
    problems: list[str] = []
    for name, metric, score, stats in (
        ("ter_en", ter_en, en_score, en_stats),
        ("ter_zh", ter_zh, zh_score, zh_stats),
    ):
        got = runs[name].metric("ter")
        if got is None or abs(got - score) > TOL:
            problems.append(f"{name}: corpus TER pingce {got!r}, sacrebleu {score!r}")
        sentence = [metric._compute_score_from_stats(row).score for row in stats]
        gap = float(np.abs(per_record(runs[name], ["ter"])["ter"] - sentence).max())
        if gap > TOL:
            problems.append(f"{name}: a record's TER differs from sacrebleu's by up to {gap:.3g}")
    got = runs["bleu_intl"].metric("bleu")
    if got is None or abs(got - bleu_score) > TOL:
        problems.append(f"bleu_intl: pingce {got!r}, sacrebleu {bleu_score!r}")
    if abs((with_ci.metric("ter") or 0.0) - zh_score) > TOL:
        problems.append("the run with intervals gives another TER")

    reference = {
        "ter_en": load_s + import_s + en_s,
        "ter_zh": load_s + import_s + zh_s,
        "bleu_intl": load_s + import_s + bleu_s,
    }
    what = {
        "ter_en": "sacrebleu TER()",
        "ter_zh": "sacrebleu TER(normalized, asian_support)",
        "bleu_intl": "sacrebleu BLEU(tokenize='intl')",
    }
    print_table(
        ["sacrebleu, in this process", "seconds"],
        [
            ["json.loads of the file", f"{load_s:.2f} s"],
            ["import sacrebleu.metrics", f"{import_s:.2f} s"],
            ["TER(), English, 1 reference", f"{en_s:.2f} s"],
            ["TER(normalized, asian_support), Chinese, 1-3 references", f"{zh_s:.2f} s"],
            ["BLEU(tokenize='intl'), English", f"{bleu_s:.2f} s"],
        ],
        title=f"\nTER and intl BLEU, {N:,} segments, same run:",
    )
    table = []
    for name in SUITES:
        run = runs[name]
        table.append(
            [
                name,
                f"{run.wall_s:.2f} s",
                f"{run.user_s + run.sys_s:.2f} s",
                f"{run.peak_rss_mb:.0f} MB",
                what[name],
                f"{reference[name]:.2f} s",
                f"{reference[name] / run.wall_s:.2f}x",
            ]
        )
    print_table(
        ["suite", "pingce", "CPU", "peak RSS", "reference", "end to end", "ratio"],
        table,
        title="\nend to end, --bootstrap 0 (ratio = sacrebleu / pingce):",
    )
    ratio_ci = reference["ter_zh"] / with_ci.wall_s
    print(
        f"with the default 1,000 resamples ter_zh takes {with_ci.wall_s:.2f} s (intervals phase "
        f"{with_ci.phases.get('intervals', 0.0):.2f} s): {ratio_ci:.1f}x sacrebleu's time, "
        "which has no intervals"
    )
    print_checks(
        (*runs.values(), with_ci),
        problems,
        "numbers identical: every record's TER in records.jsonl (sacrebleu's sentence TER of its "
        "statistics), corpus TER and intl BLEU in results.json, to 1e-9",
    )
    save_and_exit(
        "bench_ter",
        {
            "machine": info,
            "segments": N,
            "reference_parts_s": {
                "json_load": load_s,
                "import": import_s,
                "ter_en": en_s,
                "ter_zh": zh_s,
                "bleu_intl": bleu_s,
            },
            "reference_end_to_end_s": reference,
            "pingce": {name: run.summary() for name, run in runs.items()},
            "pingce_ter_zh_with_intervals": with_ci.summary(),
            "ratios": {name: reference[name] / runs[name].wall_s for name in runs},
            "identical": not problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
