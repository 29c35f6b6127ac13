"""Run every benchmark in this folder (``make bench``); each prints its own comparison."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    scripts = sorted(HERE.glob("bench_*.py"))
    if len(sys.argv) > 1:
        scripts = [s for s in scripts if any(arg in s.name for arg in sys.argv[1:])]
    for script in scripts:
        print(f"=== {script.name}", flush=True)
        subprocess.run([sys.executable, str(script)], check=True)


if __name__ == "__main__":
    main()
