"""Evidence grounding at scale: cited clauses against their contracts, through the command line.

Data (``benchmarks/_contracts.py``, seeded, written once to ``benchmarks/data/``): 10,000
contract-risk records, each with a contract of about 3,000 Chinese characters (~105 sentences
drawn from pools of contract sentences filled with parties, goods, amounts in Chinese and Arabic
numerals, periods, rates, dates; ``第N条`` headings; sentences end with 。 or ；; one sub-clause
a line) and five cited clauses: a whole sentence, a fragment of one, two adjacent sentences
joined by "，", a paraphrase with one number or the parties changed, and an invented clause
(even records) or a sentence of the previous record's contract (odd records). No law
citations: the clauses alone are compared.

1. The peer, in this process: the all-pairs loop a user writes for the reference's method with a
   lexical backend. For each record, pingce's own ``split_sentences`` (both sides see the same
   candidates), candidates = the sentences and every window of two adjacent ones (joined as
   ``join_sentences`` does); for each clause the character 1-3-gram count cosine (casefold,
   whitespace collapsed: what ``LexicalBackend`` computes), in plain Python with
   ``collections.Counter``, with EVERY candidate; grounded when the best is above 0.3. It is
   linear in records, so it is timed (``json.loads`` of the lines included) on the first 1,000
   records and extrapolated. A stronger variant that vectorises each candidate once per record
   is timed on the first 200 and reported too.
2. pingce as users run it: ``pingce run SUITE --data FILE --similarity lexical --bootstrap 0
   --profile``, SUITE a copy of the built-in contract-risk.yaml with ``check_details: false``
   (the reference's method, comparable with the loop): median of 3 runs. Target: >= 20x the loop.
   Then the built-in suite with its defaults (``check_details: true``, 1,000 resamples).
3. Checks: every clause's verdict (from the miss notes in records.jsonl) equals the loop's on
   the first 1,000 records, in the full run and in a run on a file of those 1,000 records, whose
   clause_hallucination_rate must equal the loop's; the distinct pairs sent to the backend
   (results.json ``similarity.pairs``) are at most top_k (5) x the clauses not found verbatim
   (a clause found verbatim in its contract is grounded without a call), so at most 5 x
   clauses.
4. Reranker bound: the same suite with ``--similarity rerank:r --base-url URL`` on the 1,000
   records, against the loopback server of tests/loopback.py in its own process (20 ms a
   request, relevance = character Jaccard): requests and pairs against k x clauses.

Run: ``.venv/bin/python benchmarks/bench_evidence.py [records]``.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
import unicodedata
import urllib.request
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _cli import (
    ROOT,
    SRC,
    CliRun,
    machine,
    out_dir,
    print_checks,
    print_table,
    run_cli,
    save_and_exit,
)
from _contracts import KINDS, contract_records
from _data import data_file, write_yaml

sys.path.insert(0, str(SRC))
from pingce.text.sentences import join_sentences, split_sentences

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
SUBSET = min(1000, N)  # records of the timed loop, the verdict checks and the reranker run
STRONG_SUBSET = min(200, SUBSET)
THRESHOLD = 0.3
TOP_K = 5
TARGET = 20.0
REPEAT = 3
LATENCY = 0.02
RERANK_CONCURRENCY = 8  # RerankBackend's default
TOL = 1e-9


# the peer ---------------------------------------------------------------------------------------


def grams(text: str) -> Counter[str]:
    """Character 1-3-gram counts of the case-folded, whitespace-collapsed text."""
    text = " ".join(text.casefold().split())
    counts: Counter[str] = Counter()
    for n in (1, 2, 3):
        counts.update(text[i : i + n] for i in range(len(text) - n + 1))
    return counts


def cosine_of(a: Counter[str], b: Counter[str]) -> float:
    norm_a = math.sqrt(sum(v * v for v in a.values()))
    norm_b = math.sqrt(sum(v * v for v in b.values()))
    if not norm_a or not norm_b:
        return 0.0
    dot = sum(v * b[k] for k, v in a.items())
    return min(1.0, max(0.0, dot / (norm_a * norm_b)))


def lexical(a: str, b: str) -> float:
    """The similarity function of two texts a user calls for each pair."""
    return cosine_of(grams(a), grams(b))


def candidates_of(contract: str) -> list[str]:
    sentences = split_sentences(contract)
    return sentences + [join_sentences(sentences[j : j + 2]) for j in range(len(sentences) - 1)]


def naive(lines: Iterable[str]) -> tuple[list[list[bool]], dict[str, int]]:
    """Per record, each clause's verdict (True: hallucinated), and the pairs scored."""
    verdicts, pairs, candidates = [], 0, 0
    for line in lines:
        record = json.loads(line)
        cands = candidates_of(record["contract"])
        candidates += len(cands)
        row = []
        for item in record["evidence"]:
            best = max(lexical(item["clause"], c) for c in cands)
            pairs += len(cands)
            row.append(best <= THRESHOLD)
        verdicts.append(row)
    return verdicts, {"pairs": pairs, "candidates": candidates}


def naive_vectorised_once(lines: Iterable[str]) -> list[list[bool]]:
    """The stronger loop: each candidate's counts made once per record."""
    verdicts = []
    for line in lines:
        record = json.loads(line)
        vectors = [grams(c) for c in candidates_of(record["contract"])]
        row = []
        for item in record["evidence"]:
            clause = grams(item["clause"])
            row.append(max(cosine_of(clause, v) for v in vectors) <= THRESHOLD)
        verdicts.append(row)
    return verdicts


# pingce's verdicts ------------------------------------------------------------------------------


def _short(text: str, limit: int = 40) -> str:
    """As pingce.metrics.evidence shortens a clause in its notes."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


_EDGE_MARKS = "。！？；，、,.!?;:：\"'“”‘’「」『』《》()（） \t"


def _plain(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def verbatim(clause: str, contract: str) -> bool:
    """Found verbatim, as pingce decides it (width, case and space normalised, end marks
    ignored): such a clause is grounded without a backend call."""
    core = _plain(clause).strip(_EDGE_MARKS)
    return bool(core) and core in _plain(contract)


def not_verbatim(path: Path) -> int:
    """The clauses of a file that pingce must send to the backend."""
    count = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            contract = _plain(record["contract"])
            for item in record["evidence"]:
                core = _plain(item["clause"]).strip(_EDGE_MARKS)
                count += not (core and core in contract)
    return count


def pingce_verdicts(run: CliRun, limit: int) -> tuple[list[list[str]], int]:
    """Per record of the first ``limit``, each clause's verdict read from records.jsonl:
    ``ok``, ``missing`` (not in the contract) or ``altered``; and the records whose count of
    notes disagrees with their clause_hallucination_rate."""
    out, inconsistent = [], 0
    for _, row in zip(range(limit), run.records(), strict=False):
        note = (row.get("misses") or {}).get("clause_hallucination_rate") or ""
        clauses = [e["clause"] for e in row["fields"]["evidence"]]
        verdict = []
        for clause in clauses:
            head = f"clause {_short(clause)!r} "
            if head + "not in the contract" in note:
                verdict.append("missing")
            elif head + "altered:" in note:
                verdict.append("altered")
            else:
                verdict.append("ok")
        rate = row["values"].get("clause_hallucination_rate") or 0.0
        if abs(rate * len(clauses) - sum(v != "ok" for v in verdict)) > 1e-6:
            inconsistent += 1
        out.append(verdict)
    return out, inconsistent


# helpers ----------------------------------------------------------------------------------------


def seed_suite() -> Path:
    """The built-in contract-risk suite with ``check_details: false`` (the reference's method)."""
    text = (SRC / "pingce" / "suites" / "contract-risk.yaml").read_text(encoding="utf-8")
    old = "  check_details: true"
    assert old in text, "the built-in suite no longer sets check_details: true"
    text = text.replace("name: contract-risk", "name: contract-risk-seed-method", 1)
    text = text.replace(old, "  check_details: false", 1)
    return write_yaml("contract_risk_seed_method.yaml", text)


def head_lines(path: Path, n: int) -> Iterator[str]:
    with open(path, encoding="utf-8") as handle:
        for _, line in zip(range(n), handle, strict=False):
            yield line


def _local_env() -> None:
    """Every request of this benchmark goes to 127.0.0.1."""
    for key in list(os.environ):
        if key.upper().endswith("_PROXY") or key.upper().startswith(("PINGCE_", "OPENAI_")):
            del os.environ[key]
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"


def _stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/stats", timeout=10) as response:  # 127.0.0.1 only
        stats: dict[str, Any] = json.loads(response.read())
    return stats


def rerank_run(suite: Path, data: Path) -> tuple[CliRun, dict[str, Any]]:
    """The suite with the reranker of the loopback server (its own process) on ``data``."""
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
        run = run_cli(
            f"`pingce run contract_risk_seed_method.yaml --similarity rerank:r --bootstrap 0` "
            f"({SUBSET:,} records)",
            [
                *("run", suite, "--data", data, "--similarity", "rerank:r"),
                *("--base-url", url, "--bootstrap", "0"),
                *("--cache", out_dir("evidence", "rerank-cache.sqlite3")),
            ],
            out=out_dir("evidence", "rerank"),
        )
        stats = _stats(url)
        server.stdin.close()
        server.wait(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stdout is not None:
            server.stdout.close()
    return run, stats


def kind_table(kinds: list[list[str]], columns: dict[str, list[list[str]]]) -> list[list[Any]]:
    """Per clause kind: how many, and the share each column calls hallucinated."""
    rows = []
    for kind in KINDS:
        row: list[Any] = [kind]
        cells = [(r, c) for r, ks in enumerate(kinds) for c, k in enumerate(ks) if k == kind]
        row.append(len(cells))
        for verdicts in columns.values():
            bad = sum(verdicts[r][c] != "ok" for r, c in cells)
            row.append(f"{bad / len(cells):.1%}" if cells else "")
        rows.append(row)
    return rows


def main() -> None:
    _local_env()
    info = machine(["scipy", "rapidfuzz", "cn2an"])
    path = data_file(f"evidence_{N}_0.jsonl", lambda: contract_records(N))
    subset_path = (
        path
        if SUBSET == N
        else data_file(f"evidence_{N}_0_first{SUBSET}.jsonl", lambda: head_lines(path, SUBSET))
    )
    print(f"data: {path} ({path.stat().st_size / 1e6:.0f} MB, {N:,} records)", flush=True)
    suite = seed_suite()
    seed_args = ["run", suite, "--similarity", "lexical", "--bootstrap", "0"]

    # pingce, like for like (median of REPEAT)
    runs = [
        run_cli(
            "`pingce run contract_risk_seed_method.yaml --similarity lexical --bootstrap 0`",
            [*seed_args, "--data", path],
            out=out_dir("evidence", f"seed-method-{k}"),
        )
        for k in range(REPEAT)
    ]
    walls = [r.wall_s for r in runs]
    like = sorted(runs, key=lambda r: r.wall_s)[len(runs) // 2]
    defaults = run_cli(
        "`pingce run contract-risk --similarity lexical` (check_details, 1,000 resamples)",
        ["run", "contract-risk", "--data", path, "--similarity", "lexical"],
        out=out_dir("evidence", "defaults"),
    )
    subset_run = run_cli(
        f"`pingce run contract_risk_seed_method.yaml ... --bootstrap 0` ({SUBSET:,} records)",
        [*seed_args, "--data", subset_path],
        out=out_dir("evidence", "seed-method-subset"),
    )
    rerank, server = rerank_run(suite, subset_path)

    # the peer, on the first SUBSET records (json.loads included)
    lines = list(head_lines(path, SUBSET))
    started = time.perf_counter()
    reference, counted = naive(lines)
    naive_subset_s = time.perf_counter() - started
    naive_s = naive_subset_s * N / SUBSET
    started = time.perf_counter()
    strong = naive_vectorised_once(lines[:STRONG_SUBSET])
    strong_subset_s = time.perf_counter() - started
    strong_s = strong_subset_s * N / STRONG_SUBSET
    parsed = [json.loads(line) for line in lines]
    kinds = [[e["kind"] for e in r["evidence"]] for r in parsed]
    records = [r["contract"] for r in parsed]
    clause_texts = [[e["clause"] for e in r["evidence"]] for r in parsed]

    # checks
    problems: list[str] = []
    if strong != reference[:STRONG_SUBSET]:
        problems.append("the two forms of the loop disagree")
    loop_verdicts = [["missing" if bad else "ok" for bad in row] for row in reference]
    full_verdicts, inconsistent_full = pingce_verdicts(like, SUBSET)
    sub_verdicts, inconsistent_sub = pingce_verdicts(subset_run, SUBSET)
    rerank_verdicts, _ = pingce_verdicts(rerank, SUBSET)
    default_verdicts, inconsistent_default = pingce_verdicts(defaults, SUBSET)
    for name, count in (
        ("full run", inconsistent_full),
        (f"{SUBSET:,}-record run", inconsistent_sub),
        ("default run", inconsistent_default),
    ):
        if count:
            problems.append(f"{name}: {count} record(s) whose notes do not match their rate")
    disagreements = {}
    for name, verdicts in (("full run", full_verdicts), (f"{SUBSET:,}-record run", sub_verdicts)):
        differ = [
            (r, c)
            for r, (ours, theirs) in enumerate(zip(verdicts, loop_verdicts, strict=True))
            for c, (a, b) in enumerate(zip(ours, theirs, strict=True))
            if a != b
        ]
        disagreements[name] = len(differ)
        if differ:
            r, c = differ[0]
            problems.append(
                f"{name}: {len(differ)} clause verdict(s) differ from the loop's, first record "
                f"{r} clause {c} ({kinds[r][c]}): pingce {verdicts[r][c]}, "
                f"loop {loop_verdicts[r][c]}"
            )
    clauses_subset = sum(len(row) for row in reference)
    loop_rate = sum(sum(row) for row in reference) / clauses_subset
    subset_rate = subset_run.metric("clause_hallucination_rate")
    if subset_rate is None or abs(subset_rate - loop_rate) > TOL:
        problems.append(
            f"clause_hallucination_rate over {SUBSET:,} records: pingce {subset_rate}, "
            f"loop {loop_rate}"
        )
    clauses_full = like.results()["metrics"]["clause_hallucination_rate"]["n"]
    sim_full = like.results()["similarity"]
    if clauses_full != 5 * N:
        problems.append(f"pingce counted {clauses_full} clauses, the data has {5 * N}")
    scored_full = not_verbatim(path)
    if sim_full["pairs"] > TOP_K * scored_full:
        problems.append(
            f"{sim_full['pairs']} pairs sent to the backend > {TOP_K} x {scored_full} clauses "
            "not found verbatim"
        )
    sim_rerank = rerank.results()["similarity"]
    sim_subset = subset_run.results()["similarity"]
    if sim_rerank["pairs"] > TOP_K * clauses_subset:
        problems.append(f"reranker: {sim_rerank['pairs']} pairs > {TOP_K} x clauses")
    if sim_rerank["pairs"] != sim_subset["pairs"]:
        problems.append(
            f"reranker scored {sim_rerank['pairs']} pairs, the lexical run {sim_subset['pairs']}"
        )
    if server["requests"] != sim_rerank["requests"] or sim_rerank["failures"]:
        problems.append(
            f"reranker: {server['requests']} requests at the server, {sim_rerank['requests']} in "
            f"results.json, {sim_rerank['failures']} failures"
        )
    scored = sum(
        not verbatim(c, r) for r, row in zip(records, clause_texts, strict=True) for c in row
    )
    if sim_rerank["requests"] > scored or sim_rerank["pairs"] > TOP_K * scored:
        problems.append(
            f"reranker: {sim_rerank['requests']} requests, {sim_rerank['pairs']} pairs for "
            f"{scored} clauses not found verbatim"
        )

    ratio = naive_s / statistics.median(walls)
    median_wall = statistics.median(walls)
    print_table(
        ["measurement", "result", "target"],
        [
            [
                f"loop over the first {SUBSET:,} records (json.loads + all pairs)",
                f"{naive_subset_s:.2f} s; ~{naive_s:,.0f} s for {N:,} (extrapolated)",
                "",
            ],
            [
                f"  pairs scored: {counted['pairs']:,} ({counted['candidates'] / SUBSET:.0f} "
                "candidates a record x 5 clauses)",
                f"{counted['pairs'] / naive_subset_s:,.0f} pairs/s",
                "",
            ],
            [
                f"stronger loop (candidates vectorised once a record), first {STRONG_SUBSET}",
                f"{strong_subset_s:.2f} s; ~{strong_s:,.0f} s for {N:,}",
                "",
            ],
            [
                like.label + f", median of {REPEAT}",
                f"{median_wall:.2f} s ({', '.join(f'{w:.2f}' for w in walls)}), "
                f"{like.peak_rss_mb:.0f} MB",
                "",
            ],
            [
                "loop / pingce",
                f"{ratio:.1f}x (stronger loop: {strong_s / median_wall:.1f}x)",
                f">= {TARGET:.0f}x: {'met' if ratio >= TARGET else 'NOT met'}",
            ],
            [
                defaults.label,
                f"{defaults.wall_s:.2f} s, {defaults.peak_rss_mb:.0f} MB; loop / pingce "
                f"{naive_s / defaults.wall_s:.1f}x",
                "",
            ],
            [
                f"pairs sent to the backend (distinct), {clauses_full:,} clauses, "
                f"{scored_full:,} not found verbatim",
                f"{sim_full['pairs']:,} = {sim_full['pairs'] / clauses_full:.2f} a clause "
                f"({sim_full['pairs'] / max(scored_full, 1):.2f} a clause scored); the loop: "
                f"{counted['pairs'] / clauses_subset:.0f} a clause",
                f"<= {TOP_K} x clauses",
            ],
            [
                rerank.label,
                f"{rerank.wall_s:.2f} s (similarities {rerank.phases.get('similarities', 0):.2f} "
                f"s; ideal {server['requests'] * LATENCY / RERANK_CONCURRENCY:.2f} s)",
                "",
            ],
            [
                f"  clauses not found verbatim (sent to the backend), first {SUBSET:,}",
                f"{scored:,} of {clauses_subset:,}",
                "",
            ],
            [
                "  reranker requests, pairs; clauses",
                f"{server['requests']:,} requests (<= 5 documents each), "
                f"{sim_rerank['pairs']:,} pairs; {clauses_subset:,} clauses",
                f"pairs <= {TOP_K} x {clauses_subset:,} = {TOP_K * clauses_subset:,}",
            ],
        ],
        title=f"\nevidence grounding, {N:,} contracts, 5 cited clauses each, same run (ratio = "
        "the loop / pingce):",
    )
    print_table(
        ["clause kind", "clauses", "loop", "pingce", "pingce defaults", "pingce rerank"],
        kind_table(
            kinds,
            {
                "loop": loop_verdicts,
                "pingce": full_verdicts,
                "defaults": default_verdicts,
                "rerank": rerank_verdicts,
            },
        ),
        title=f"\nshare of clauses called hallucinated, first {SUBSET:,} records (defaults: "
        "not in the contract or altered):",
    )
    print_checks(
        [*runs, defaults, subset_run, rerank],
        problems,
        f"checks pass: every clause verdict of the first {SUBSET:,} records equals the loop's "
        f"(full and {SUBSET:,}-record runs), clause_hallucination_rate {loop_rate:.6f} equal, "
        f"pairs <= {TOP_K} x clauses, reranker requests counted at the server",
    )
    save_and_exit(
        "bench_evidence",
        {
            "machine": info,
            "records": N,
            "data_mb": path.stat().st_size / 1e6,
            "subset": SUBSET,
            "loop_subset_s": naive_subset_s,
            "loop_s_extrapolated": naive_s,
            "loop_pairs_subset": counted["pairs"],
            "loop_candidates_per_record": counted["candidates"] / SUBSET,
            "strong_loop_subset": STRONG_SUBSET,
            "strong_loop_subset_s": strong_subset_s,
            "strong_loop_s_extrapolated": strong_s,
            "pingce_walls_s": walls,
            "pingce": like.summary(),
            "ratio": ratio,
            "ratio_strong_loop": strong_s / median_wall,
            "defaults": defaults.summary(),
            "defaults_ratio": naive_s / defaults.wall_s,
            "subset_run": subset_run.summary(),
            "similarity_full": sim_full,
            "clauses_full": clauses_full,
            "clauses_not_verbatim_full": scored_full,
            "pairs_per_clause": sim_full["pairs"] / clauses_full,
            "rerank": rerank.summary(),
            "rerank_similarity": sim_rerank,
            "rerank_server": server,
            "clauses_not_verbatim_subset": scored,
            "clauses_subset": clauses_subset,
            "loop_clause_hallucination_rate": loop_rate,
            "pingce_subset_clause_hallucination_rate": subset_rate,
            "metrics_full": {
                k: v["value"]
                for k, v in like.results()["metrics"].items()
                if k in ("clause_hallucination_rate", "task_success_rate")
            },
            "metrics_defaults": {
                k: v["value"]
                for k, v in defaults.results()["metrics"].items()
                if k in ("clause_hallucination_rate", "altered_clause_rate", "task_success_rate")
            },
            "disagreements": disagreements,
            "by_kind": kind_table(
                kinds,
                {
                    "loop": loop_verdicts,
                    "pingce": full_verdicts,
                    "defaults": default_verdicts,
                    "rerank": rerank_verdicts,
                },
            ),
            "problems": problems,
        },
        problems,
    )


if __name__ == "__main__":
    main()
