"""Simulation study of repeats (issue 35, "Oracles and guarantees"): not a speed benchmark. The
statistics of ``pingce.repeats`` on data drawn from planted models; ``tests/test_repeats.py``
runs one cell of each at a small size.

- **Components**: rows ``y[i, g, j]`` (records × generations × judge calls) from the nested
  random-effects model ``μ + r_i + g_ig + e_igj`` with planted σ²'s (normal), and 0/1 rows of a
  model that is right on record ``i`` with chance ``p_i ~ Beta(a, b)`` and a judge that flips
  each verdict with chance ``e``, whose components are closed forms (``(1 - 2e)² Var p``,
  ``(1 - 2e)² E[p (1 - p)]``, ``e (1 - e)``). Per cell, over the replications, the median of
  each estimated σ² and share over its planted value (target: within ±10%).
- **Plans**: a pilot of ``n × 2 × 2`` rows, ``plan_repeats`` for a target SE, then the true SE
  of the recommended ``(K', J')`` (the planted components) and the SE measured on a simulated
  rerun at ``(K', J')``: the share of pilots whose rerun reaches the target within +10% (the
  guarantee: at most 1.1 × target), and the share within ±10% both ways.
- **pass@k / pass^k**: records with ``p ~ Beta(a, b)``, ``m`` attempts each: the coverage of
  the 95% interval of pass@k and pass^k over the population values ``1 - B(a, b + k) / B(a,
  b)`` and ``B(a + k, b) / B(a, b)`` (target: 95% ± 1.5).

Run: ``.venv/bin/python benchmarks/bench_repeats.py [replications]`` (2,000 by default for the
coverage, a fifth of it for components and plans; ``--small``: 200).
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import beta as beta_function

sys.path.insert(0, str(Path(__file__).parent))
from _cli import machine, print_table, save_summary

from pingce.repeats import Components, decompose, pass_curves, plan_repeats
from pingce.repeats.components import SOURCES, expected_se

MODELS: dict[str, tuple[str, tuple[float, float, float]]] = {
    "normal A": ("normal", (0.04, 0.06, 0.09)),
    "normal B": ("normal", (0.09, 0.01, 0.04)),
    "normal C": ("normal", (0.0225, 0.09, 0.0625)),
    "0/1 Beta(2,2) e=0.1": ("binary", (2.0, 2.0, 0.1)),
    "0/1 Beta(0.6,0.8) e=0.05": ("binary", (0.6, 0.8, 0.05)),
}
"""Each model: ``normal`` with its planted σ² (records, generations, judge), or ``binary`` with
(a, b, the judge's flip chance)."""
RECOVERED = ("normal A", "normal B", "0/1 Beta(2,2) e=0.1", "0/1 Beta(0.6,0.8) e=0.05")
DESIGNS = ((400, 4, 3), (200, 5, 2), (1000, 2, 2))


def binary_components(a: float, b: float, e: float) -> tuple[float, float, float]:
    """σ²_R, σ²_G, σ²_J of the 0/1 model (closed forms)."""
    mean = a / (a + b)
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    shrink = (1 - 2 * e) ** 2
    return shrink * var, shrink * (mean * (1 - mean) - var), e * (1 - e)


def draw(rng: np.random.Generator, cell: str, n: int, k: int, j: int) -> np.ndarray:
    """Rows of one cell's model, ``(n, k, j)``."""
    kind, values = MODELS[cell]
    if kind == "normal":
        s = np.sqrt(values)
        out: np.ndarray = (
            0.5
            + rng.normal(0, s[0], (n, 1, 1))
            + rng.normal(0, s[1], (n, k, 1))
            + rng.normal(0, s[2], (n, k, j))
        )
        return out
    a, b, e = values
    p = rng.beta(a, b, (n, 1, 1))
    right = rng.random((n, k, 1)) < p
    flip = rng.random((n, k, j)) < e
    return (right ^ flip).astype(np.float64)


def planted(cell: str) -> np.ndarray:
    """The cell's planted σ² (records, generations, judge)."""
    kind, values = MODELS[cell]
    if kind == "normal":
        return np.array(values)
    return np.array(binary_components(*values))


def shares(sigma: np.ndarray, n: int, k: int, j: int) -> np.ndarray:
    parts = sigma / np.array([n, n * k, n * k * j])
    out: np.ndarray = parts / parts.sum()
    return out


def recovery(replications: int, seed: int) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """Median estimate over planted value, per component and share, per cell and design."""
    rng = np.random.default_rng(seed)
    found, rows = [], []
    for cell, (n, k, j) in itertools.product(RECOVERED, DESIGNS):
        truth = planted(cell)
        variances, share = [], []
        for _ in range(replications):
            got = decompose(draw(rng, cell, n, k, j), resamples=0)
            variances.append([got.variance[s] for s in SOURCES])
            share.append([got.share[s] for s in SOURCES])
        v_ratio = np.median(np.array(variances, dtype=float), axis=0) / truth
        s_ratio = np.median(np.array(share, dtype=float), axis=0) / shares(truth, n, k, j)
        worst = float(max(np.abs(v_ratio - 1).max(), np.abs(s_ratio - 1).max()))
        found.append(
            {
                "cell": cell,
                "design": [n, k, j],
                "planted": truth.tolist(),
                "variance_ratio": v_ratio.tolist(),
                "share_ratio": s_ratio.tolist(),
                "within_10": worst <= 0.10,
            }
        )
        rows.append(
            [
                cell,
                f"{n}×{k}×{j}",
                *(f"{r:.3f}" for r in v_ratio),
                *(f"{r:.3f}" for r in s_ratio),
                "yes" if worst <= 0.10 else "NO",
            ]
        )
    return found, rows


def _true(pilot: Components, sigma: np.ndarray) -> Components:
    return replace(pilot, variance=dict(zip(SOURCES, sigma.tolist(), strict=True)))


PLANS = (
    ("normal C", 300, 0.015, 1.0),
    ("normal C", 300, 0.015, 0.2),
    ("0/1 Beta(2,2) e=0.1", 300, 0.02, 1.0),
)
"""(model, records, target SE, a judge call's cost relative to a generation's)."""


def plans(replications: int, seed: int) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """How often the recommended (K', J') reaches the target on a rerun."""
    rng = np.random.default_rng(seed)
    found, rows = [], []
    for cell, n, target, judge_cost in PLANS:
        sigma = planted(cell)
        ratios, reruns, designs = [], [], []
        for _ in range(replications):
            pilot = decompose(draw(rng, cell, n, 2, 2), resamples=0)
            plan = plan_repeats(pilot, target, judge_cost=judge_cost)
            if not plan.reachable or plan.repeats is None or plan.judge_calls is None:
                ratios.append(math.inf)
                reruns.append(math.inf)
                continue
            k, j = plan.repeats, plan.judge_calls
            designs.append((k, j))
            ratios.append(expected_se(_true(pilot, sigma), n, k, j) / target)
            rerun = decompose(draw(rng, cell, n, k, j), resamples=0)
            reruns.append(rerun.standard_error / target)
        true, measured = np.array(ratios), np.array(reruns)
        common = max(set(designs), key=designs.count) if designs else None
        cells = {
            "true_at_most_110": float(np.mean(true <= 1.10)),
            "true_within_10": float(np.mean(np.abs(true - 1) <= 0.10)),
            "rerun_at_most_110": float(np.mean(measured <= 1.10)),
            "rerun_within_10": float(np.mean(np.abs(measured - 1) <= 0.10)),
            "median_true_ratio": float(np.median(true)),
        }
        found.append(
            {
                "cell": cell,
                "judge_cost": judge_cost,
                "records": n,
                "target": target,
                "design": common,
                **cells,
            }
        )
        rows.append(
            [
                cell,
                f"{judge_cost:g}",
                f"{target:g}",
                "" if common is None else f"K'={common[0]}, J'={common[1]}",
                *(f"{100 * cells[c]:.1f}" for c in list(cells)[:4]),
                f"{cells['median_true_ratio']:.3f}",
            ]
        )
    return found, rows


COVERAGE = tuple(itertools.product(((0.6, 0.8), (2.0, 2.0), (5.0, 1.0)), (5, 10), (50, 300)))


def coverage(replications: int, seed: int) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """Coverage of the 95% intervals of pass@k and pass^k, k = 1, 3 and the attempts."""
    rng = np.random.default_rng(seed)
    found, rows = [], []
    for (a, b), attempts, records in COVERAGE:
        ks = (1, 3, attempts)
        covered = {(w, k): 0 for w in ("at", "hat") for k in ks}
        for _ in range(replications):
            c = rng.binomial(attempts, rng.beta(a, b, records))
            curves = pass_curves(np.full(records, attempts), c)
            for k in ks:
                one = curves[k - 1]
                at = 1 - beta_function(a, b + k) / beta_function(a, b)
                hat = beta_function(a + k, b) / beta_function(a, b)
                covered["at", k] += one.pass_at_low <= at <= one.pass_at_high
                covered["hat", k] += one.pass_hat_low <= hat <= one.pass_hat_high
        for k in ks:
            at_cov = covered["at", k] / replications
            hat_cov = covered["hat", k] / replications
            inside = all(0.935 <= x <= 0.965 for x in (at_cov, hat_cov))
            found.append(
                {
                    "beta": [a, b],
                    "attempts": attempts,
                    "records": records,
                    "k": k,
                    "pass_at": at_cov,
                    "pass_hat": hat_cov,
                    "within_1_5": inside,
                }
            )
            rows.append(
                [
                    f"Beta({a:g},{b:g})",
                    attempts,
                    records,
                    k,
                    f"{100 * at_cov:.1f}",
                    f"{100 * hat_cov:.1f}",
                    "yes" if inside else "NO",
                ]
            )
    return found, rows


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--small"]
    small = "--small" in sys.argv[1:]
    replications = int(args[0]) if args else (200 if small else 2_000)
    print(machine(["numpy", "scipy"]), flush=True)
    started = time.perf_counter()
    summary: dict[str, Any] = {"replications": replications}
    summary["components"], rows = recovery(max(20, replications // 5), 35)
    print_table(
        [
            *("cell", "n×K×J", "σ²_R", "σ²_G", "σ²_J"),
            *("share R", "share G", "share J", "all within ±10%"),
        ],
        rows,
        "components: median estimate / planted value",
    )
    summary["plans"], rows = plans(max(20, replications // 5), 36)
    print_table(
        [
            *("cell", "judge cost", "target SE", "most chosen"),
            *("true ≤ 1.1 target %", "true ±10 %", "rerun ≤ 1.1 target %", "rerun ±10 %"),
            "median true/target",
        ],
        rows,
        "plans from a pilot of 2 × 2 repeats",
    )
    summary["coverage"], rows = coverage(replications, 37)
    print_table(
        ["p", "attempts", "records", "k", "pass@k %", "pass^k %", "95 ± 1.5"],
        rows,
        "coverage of the 95% intervals",
    )
    summary["seconds"] = time.perf_counter() - started
    save_summary("bench_repeats", summary)


if __name__ == "__main__":
    main()
