"""Reading records as users have them (issue 12): a million records in seconds, whatever the file.

The same seeded contract-risk records (id, gold and predicted level, latency, contract type) are
written as JSONL, JSONL.gz, Parquet, UTF-8 CSV and GBK CSV. For each file:

1. ``pingce run contract-risk --data FILE --bootstrap 0 --profile`` in a child process, as users
   run it: the wall time and the ``load`` phase;
2. the peer, in this process and the same run: pandas reading the same file into a DataFrame
   (``read_json(lines=True)``, ``read_parquet``, ``read_csv``), which reads every column and
   checks nothing.

Checked: every format gives the same accuracy, equal to the share of records whose two levels
agree (counted with numpy on the generated codes).

Run: ``.venv/bin/python benchmarks/bench_formats.py [records]`` (needs pyarrow and pandas).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _cli import machine, out_dir, print_checks, print_table, run_cli, save_and_exit
from _data import DATA_DIR, contract_risk_file, risk_labels

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000


def formats(n: int) -> dict[str, Path]:
    """The records in every format (made once, kept in benchmarks/data/)."""
    import pandas as pd

    jsonl = contract_risk_file(n)
    paths = {
        "jsonl": jsonl,
        "jsonl.gz": DATA_DIR / f"{jsonl.stem}.jsonl.gz",
        "parquet": DATA_DIR / f"{jsonl.stem}.parquet",
        "csv (utf-8)": DATA_DIR / f"{jsonl.stem}.csv",
        "csv (gbk)": DATA_DIR / f"{jsonl.stem}.gbk.csv",
    }
    if not all(path.exists() for path in paths.values()):
        frame = pd.read_json(jsonl, lines=True, dtype={"id": str})
        with open(jsonl, "rb") as src, gzip.open(paths["jsonl.gz"], "wb") as dst:
            shutil.copyfileobj(src, dst)
        frame.to_parquet(paths["parquet"], index=False)
        frame.to_csv(paths["csv (utf-8)"], index=False, encoding="utf-8")
        frame.to_csv(paths["csv (gbk)"], index=False, encoding="gbk")
    return paths


def pandas_read(kind: str, path: Path) -> float:
    """Seconds pandas takes to read ``path`` whole."""
    import pandas as pd

    start = time.perf_counter()
    if kind.startswith("jsonl"):
        pd.read_json(path, lines=True, compression="infer")
    elif kind == "parquet":
        pd.read_parquet(path)
    else:
        pd.read_csv(path, encoding="gbk" if "gbk" in kind else "utf-8")
    return time.perf_counter() - start


def main() -> None:
    info = machine(("pandas", "pyarrow"))
    gold, pred, _ = risk_labels(N)
    expected = float(np.mean(gold == pred))
    rows: list[list[Any]] = []
    runs = []
    problems: list[str] = []
    summary: dict[str, Any] = {"machine": info, "records": N, "formats": {}}
    for kind, path in formats(N).items():
        run = run_cli(
            f"pingce run ({kind})",
            ["run", "contract-risk", "--data", str(path), "--bootstrap", "0", "--no-store"],
            out=out_dir("formats", kind.replace(" ", "_").replace("(", "").replace(")", "")),
        )
        runs.append(run)
        assert run.out is not None
        accuracy = json.loads((run.out / "results.json").read_text())["metrics"]["accuracy"]
        if accuracy["value"] is None or abs(accuracy["value"] - expected) > 1e-12:
            problems.append(f"{kind}: accuracy {accuracy['value']} != {expected}")
        peer = pandas_read(kind, path)
        load = run.phases.get("load", float("nan"))
        size = f"{path.stat().st_size / 1e6:.0f} MB"
        rows.append(
            [kind, size, f"{run.wall_s:.2f}", f"{load:.2f}", f"{peer:.2f}", f"{peer / load:.2f}x"]
        )
        summary["formats"][kind] = {
            "bytes": path.stat().st_size,
            "pingce_wall_s": run.wall_s,
            "pingce_load_s": load,
            "pandas_read_s": peer,
            "peak_rss_mb": run.peak_rss_mb,
        }
    print_table(
        ["format", "size", "pingce run wall s", "pingce load s", "pandas read s", "pandas/pingce"],
        rows,
        title=f"{N:,} contract-risk records (levels, latency, contract type)",
    )
    print_checks(runs, problems, f"checked: accuracy {expected:.6f} in every format")
    save_and_exit("bench_formats", summary, problems)


if __name__ == "__main__":
    main()
