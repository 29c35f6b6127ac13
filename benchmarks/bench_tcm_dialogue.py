"""The tcm-dialogue suite at scale.

100,000 seeded dialogues of 2-8 turns (~500,000 records) in a JSONL file. pingce
(``pingce.evaluate("tcm-dialogue", ..., similarity="exact")``) against the seed's way: a plain
per-dialogue Python loop with ``numpy.polyfit`` for the slope (what the seed document writes),
reading the same file with ``json.loads``. Then the dialogue-level bootstrap: pingce's 1,000
resamples against the naive way, which recomputes the metrics on each resample of dialogues
(timed on 3 resamples and extrapolated).

Run: ``.venv/bin/python benchmarks/bench_tcm_dialogue.py [dialogues]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DIALOGUES = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
STATUSES = ["DEFINITIVE", "INQUIRY_ONLY", "CASE_REJECTED", "EMERGENCY_ABORT"]
DX = ["风寒表实证", "风热犯表证", "脾胃虚寒证", "肝郁气滞证"]


def make(path: Path, dialogues: int, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        for d in range(dialogues):
            truth = DX[int(rng.integers(4))]
            for t in range(int(rng.integers(2, 9))):
                status = STATUSES[int(rng.choice(4, p=[0.5, 0.35, 0.1, 0.05]))]
                record: dict[str, Any] = {
                    "dialogue_id": f"d{d}",
                    "turn": t + 1,
                    "status": status,
                    "gt_diagnosis": truth,
                    "pred_diagnosis": truth if rng.random() < 0.6 + 0.05 * t else DX[0],
                    "confidence": round(float(min(1.0, 0.3 + 0.1 * t + rng.random() * 0.3)), 3),
                    "pred_features": {
                        "nature": ["寒", "热"][int(rng.integers(2))],
                        "sweat": "无汗",
                    },
                    "gt_features": {"nature": "寒", "sweat": "无汗", "deficiency": "实"},
                    "ambiguous_terms": ["发冷", "身痛"][: int(rng.integers(0, 3))],
                    "risk": "UNCERTAIN" if rng.random() < 0.1 else "LOW",
                    "gt_is_emergency": bool(rng.random() < 0.03),
                    "gt_conflict": bool(rng.random() < 0.5),
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                n += 1
    return n


def naive(records: list[dict[str, Any]]) -> dict[str, float]:
    """The seed's way: group the turns by dialogue, loop, numpy.polyfit per dialogue."""
    by: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by.setdefault(r["dialogue_id"], []).append(r)
    eff = eff_n = rej = rej_n = conflict = polar = jac = jac_n = illegal = 0.0
    slopes, tts, arr = [], [], []
    for turns in by.values():
        turns.sort(key=lambda r: r["turn"])
        c, t = [], []
        run, lock = 0, None
        for k, r in enumerate(turns):
            correct = bool(r.get("pred_diagnosis")) and r.get("pred_diagnosis") == r.get(
                "gt_diagnosis"
            )
            if r.get("gt_diagnosis") and r["status"] == "DEFINITIVE":
                eff += correct
                eff_n += 1
            if r["status"] == "CASE_REJECTED":
                rej += r.get("gt_conflict") is True
                rej_n += 1
            p, g = r.get("pred_features") or {}, r.get("gt_features") or {}
            shared = [f for f in ("nature", "deficiency") if f in p and f in g]
            if shared:
                polar += 1
                conflict += any(p[f] != g[f] for f in shared)
            if p or g:
                a, b = set(p.items()), set(g.items())
                jac += len(a & b) / len(a | b)
                jac_n += 1
            illegal += (r.get("gt_is_emergency") is True and r["status"] != "EMERGENCY_ABORT") or (
                r.get("risk") == "UNCERTAIN" and r["status"] == "DEFINITIVE"
            )
            c.append(r.get("confidence", 0.0) if correct else 0.0)
            t.append(r["turn"])
            steady = correct and r.get("confidence", 0.0) > 0.8
            same = k and turns[k - 1].get("pred_diagnosis") == r.get("pred_diagnosis")
            run = run + 1 if steady and run and same else (1 if steady else 0)
            if lock is None and run >= 2:
                lock = turns[k - 1]["turn"] - turns[0]["turn"]
            terms = r.get("ambiguous_terms") or []
            if r["status"] == "INQUIRY_ONLY" and terms and k + 1 < len(turns):
                after = turns[k + 1].get("ambiguous_terms") or []
                arr.append((len(terms) - len(after)) / len(terms))
        if len(turns) >= 2:
            slopes.append(float(np.polyfit(t, c, 1)[0]))
        tts.append(len(turns) if lock is None else lock)
    recall, precision = eff / eff_n, rej / rej_n
    return {
        "effective_recall": recall,
        "rejection_precision": precision,
        "logic_weighted_f1": 2 * precision * recall / (precision + recall),
        "critical_conflict_rate": conflict / polar,
        "incremental_hit_slope": float(np.mean(slopes)),
        "turns_to_stability": float(np.mean(tts)),
        "ambiguity_resolution_rate": float(np.mean(arr)),
        "structure_match": jac / jac_n,
        "funnel_adherence": 1 - illegal / len(records),
    }


def main() -> None:
    import pingce

    tmp = Path(tempfile.mkdtemp(prefix="pingce-bench-tcm-"))
    path = tmp / "turns.jsonl"
    n = make(path, DIALOGUES)
    pingce.evaluate("tcm-dialogue", path, bootstrap=0, similarity="exact")  # warm up imports

    started = time.perf_counter()
    result = pingce.evaluate("tcm-dialogue", path, bootstrap=0, similarity="exact")
    ours = time.perf_counter() - started

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # polyfit on constant c warns RankWarning at times
        started = time.perf_counter()
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        reference = naive(records)
        theirs = time.perf_counter() - started
    worst = max(abs((result.metrics[k].value or 0.0) - v) for k, v in reference.items())

    started = time.perf_counter()
    pingce.evaluate("tcm-dialogue", path, bootstrap=1000, similarity="exact")
    ours_with_boot = time.perf_counter() - started
    ours_boot = max(ours_with_boot - ours, 1e-9)  # the 1,000 resamples alone (approximately)

    rng = np.random.default_rng(1)
    by: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by.setdefault(r["dialogue_id"], []).append(r)
    ids = list(by)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        for _ in range(3):
            chosen = rng.integers(0, len(ids), size=len(ids))
            sample = [
                {**r, "dialogue_id": f"{ids[i]}#{k}"}
                for k, i in enumerate(chosen)
                for r in by[ids[i]]
            ]
            naive(sample)
        naive_boot = (time.perf_counter() - started) / 3 * 1000

    print(
        json.dumps(
            {
                "dialogues": DIALOGUES,
                "records": n,
                "pingce_sec": ours,
                "seed_loop_sec": theirs,
                "speedup": theirs / ours,
                "max_abs_difference": worst,
                "pingce_with_bootstrap_1000_sec": ours_with_boot,
                "pingce_bootstrap_1000_sec": ours_boot,
                "naive_bootstrap_1000_sec_extrapolated": naive_boot,
                "bootstrap_speedup_vs_whole_run": naive_boot / ours_with_boot,
            },
            indent=2,
        )
    )
    print(
        f"tcm-dialogue: {n:,} turns in {DIALOGUES:,} dialogues: pingce {ours:.1f} s (load + 9 "
        f"metrics) vs the seed's loop {theirs:.1f} s (json.loads + loop) = {theirs / ours:.2f}x; "
        f"run with 1,000 dialogue resamples {ours_with_boot:.1f} s (resamples ~{ours_boot:.1f} s) "
        f"vs ~{naive_boot:,.0f} s recomputing per resample = {naive_boot / ours_with_boot:,.0f}x"
    )


if __name__ == "__main__":
    main()
