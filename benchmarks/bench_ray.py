"""Benchmark: the ray engine against the local engine on contract-risk (issue 16).

As users run them, through the command line, on the same seeded file of ``N`` records (default
10,000,000, about 1.1 GB of JSONL; the records of ``bench_contract_risk.py``):

1. local: ``pingce run contract-risk --data FILE --bootstrap-method poisson`` (1,000 resamples,
   BCa): wall clock and peak RSS.
2. ray: a local Ray cluster started first (``ray start --head``, as a team's cluster would be
   running), then ``pingce run contract-risk --data FILE --engine ray --ray-address auto``: wall
   clock and the driver's peak RSS (the cluster's processes are not the driver's children, so
   ``ru_maxrss`` is the driver's alone), at ``N`` and at ``N / 10``: the driver's memory must not
   grow with ``N``.

Identical numbers: every metric's value in the two runs' results.json agrees to 1e-12
(relative), and the interval ends to 1e-9 (BCa's bias correction can move when a resample ties
with an estimate that the two engines round one ulp apart; the largest difference is printed).

Run: ``.venv/bin/python benchmarks/bench_ray.py [records]``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _cli import machine, out_dir, print_checks, print_table, run_cli, save_and_exit
from _data import contract_risk_file

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
RAY = str(Path(sys.executable).with_name("ray"))
ON_RAY = ["--engine", "ray", "--ray-address", "auto", "--no-store"]


def ray_cluster(command: str) -> None:
    args = [RAY, command]
    if command == "start":
        args += ["--head", "--num-cpus", "2", "--include-dashboard", "false"]
        args += ["--disable-usage-stats"]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    info = machine(["ray", "numpy"])
    big = contract_risk_file(N)
    small = contract_risk_file(N // 10)
    print(f"data: {big} ({big.stat().st_size / 1e6:,.0f} MB, {N:,} records)", flush=True)
    local = run_cli(
        f"local engine, {N:,} records (Poisson, 1,000 resamples)",
        ["run", "contract-risk", "--data", big, "--bootstrap-method", "poisson", "--no-store"],
        out=out_dir("ray", "local"),
    )
    ray_cluster("start")
    try:
        ray = run_cli(
            f"ray engine, {N:,} records",
            [
                "run",
                "contract-risk",
                "--data",
                big,
                "--engine",
                "ray",
                "--ray-address",
                "auto",
                "--no-store",
            ],
            out=out_dir("ray", "ray"),
        )
        ray_small = run_cli(
            f"ray engine, {N // 10:,} records",
            [
                "run",
                "contract-risk",
                "--data",
                small,
                "--engine",
                "ray",
                "--ray-address",
                "auto",
                "--no-store",
            ],
            out=out_dir("ray", "ray_small"),
        )
    finally:
        ray_cluster("stop")

    problems: list[str] = []
    worst_value = worst_end = 0.0
    ours, theirs = ray.results()["metrics"], local.results()["metrics"]
    for name, entry in theirs.items():
        other = ours[name]
        for key in ("value", "ci_low", "ci_high"):
            a, b = entry[key], other[key]
            if (a is None) != (b is None):
                problems.append(f"{name} {key}: local {a!r}, ray {b!r}")
                continue
            if a is None:
                continue
            gap = abs(a - b) / max(1.0, abs(a))
            if key == "value":
                worst_value = max(worst_value, gap)
            else:
                worst_end = max(worst_end, gap)
    if worst_value > 1e-12:
        problems.append(f"values differ by {worst_value:.2e} (relative)")
    if worst_end > 1e-9:
        problems.append(f"interval ends differ by {worst_end:.2e} (relative)")
    growth = ray.peak_rss_mb / ray_small.peak_rss_mb
    print_table(
        ["measurement", "result", "target"],
        [
            [local.label, f"{local.wall_s:.1f} s, {local.peak_rss_mb:,.0f} MB", ""],
            [ray.label, f"{ray.wall_s:.1f} s, driver {ray.peak_rss_mb:,.0f} MB", ""],
            [
                ray_small.label,
                f"{ray_small.wall_s:.1f} s, driver {ray_small.peak_rss_mb:,.0f} MB",
                "",
            ],
            ["ray wall / local wall", f"{ray.wall_s / local.wall_s:.2f}x", "<= 2x"],
            ["driver memory at N / at N/10", f"{growth:.2f}x", "independent of N"],
            ["largest value difference (relative)", f"{worst_value:.1e}", "<= 1e-12"],
            ["largest interval-end difference (relative)", f"{worst_end:.1e}", "<= 1e-9"],
        ],
        title=f"\ncontract-risk, {N:,} records, ray vs local:",
    )
    for run in (local, ray, ray_small):
        phases = ", ".join(f"{k} {v:.1f} s" for k, v in run.phases.items())
        print(f"  phases of {run.label}: {phases}")
    print_checks(
        (local, ray, ray_small),
        problems,
        "numbers identical: every value to 1e-12 and every interval end to 1e-9",
    )
    save_and_exit(
        "bench_ray",
        {
            "machine": info,
            "records": N,
            "local": local.summary(),
            "ray": ray.summary(),
            "ray_small": ray_small.summary(),
            "ray_over_local": ray.wall_s / local.wall_s,
            "driver_growth_10x_records": growth,
            "worst_value_difference": worst_value,
            "worst_interval_end_difference": worst_end,
        },
        problems,
    )


if __name__ == "__main__":
    main()
