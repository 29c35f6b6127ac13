"""Run every benchmark in this folder (``make bench``); each prints its own comparison and keeps a
JSON summary in ``benchmarks/out/<script>.json``.

``run_all.py [NAME ...]`` runs the scripts whose file name contains a NAME (all by default) at
their full sizes; ``--small`` runs them at the small sizes used to check that they work (about 5
minutes in all on a quiet 2-core machine; the ratios at these sizes are dominated by start-up and
mean little).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

SMALL = {
    "bench_audit.py": ["--small"],
    "bench_audit_coverage.py": ["--small"],
    "bench_compare.py": ["20000"],
    "bench_contract_risk.py": ["100000"],
    "bench_decisions.py": ["--small"],
    "bench_evidence.py": ["300"],
    "bench_formats.py": ["100000"],
    "bench_function_call.py": ["2000"],
    "bench_records_outputs.py": ["--small"],
    "bench_repeats.py": ["--small"],
    "bench_report_html.py": ["5000"],
    "bench_ray.py": ["200000"],
    "bench_similarity.py": ["1000"],
    "bench_startup.py": ["10"],
    "bench_tcm_dialogue.py": ["3000"],
    "bench_ter.py": ["500"],
    "bench_text_multiref.py": ["2000"],
    "bench_text_overlap.py": ["2000"],
    "bench_tool_use.py": ["20000"],
}


def main() -> None:
    args = sys.argv[1:]
    small = "--small" in args
    names = [a for a in args if a != "--small"]
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if any(name in s.name for name in names)]
    for script in scripts:
        extra = SMALL.get(script.name, []) if small else []
        print(f"=== {script.name} {' '.join(extra)}".rstrip(), flush=True)
        subprocess.run([sys.executable, str(script), *extra], check=True)


if __name__ == "__main__":
    main()
