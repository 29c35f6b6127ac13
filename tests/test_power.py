"""``pingce plan``: a decision's power before the run (issue 35, :mod:`pingce.power`).

Oracles: statsmodels' ``NormalIndPower`` (one sample: ``ratio=0``) for the power and the records
needed; the jackknife standard error of a proportion, ``sqrt(p (1 - p) / (n - 1))``; and a
simulation in which the margin ``pingce plan`` says is reached with 80% power is reached by the
paired bootstrap's gate about 80% of the time."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower

from pingce.power import gate_power, jackknife_se
from pingce.stats import _Bounds, margin_p_value

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("margin", [0.02, 0.05, 0.1])
def test_power_and_records_are_statsmodels(margin: float) -> None:
    se, n, alpha = 0.03, 400, 0.025
    achieved, detectable, needed = gate_power(se, margin, alpha, 0.8, n, equivalent=False)
    effect = margin / (se * math.sqrt(n))  # the per-record effect size, in per-record SDs
    want = NormalIndPower().power(effect, nobs1=n, alpha=alpha, ratio=0, alternative="larger")
    assert achieved == pytest.approx(want, abs=1e-9)
    solved = NormalIndPower().solve_power(
        effect, nobs1=None, alpha=alpha, power=0.8, ratio=0, alternative="larger"
    )
    assert needed == math.ceil(solved - 1e-6) or needed == math.ceil(solved)
    at_detectable, _, _ = gate_power(se, detectable, alpha, 0.8, n, equivalent=False)
    assert at_detectable == pytest.approx(0.8, abs=1e-9)
    equivalent, detectable_eq, _ = gate_power(se, margin, alpha, 0.8, n, equivalent=True)
    assert equivalent == pytest.approx(max(0.0, 2 * want - 1), abs=1e-9)
    assert gate_power(se, detectable_eq, alpha, 0.8, n, equivalent=True)[0] == pytest.approx(0.8)


def test_the_jackknife_se_of_a_proportion() -> None:
    rng = np.random.default_rng(0)
    hits = rng.random(250) < 0.3
    n, p = hits.size, hits.mean()
    leave_one_out = (hits.sum() - hits) / (n - 1)
    assert jackknife_se(leave_one_out) == pytest.approx(math.sqrt(p * (1 - p) / (n - 1)))
    assert jackknife_se(np.array([0.5])) is None


def test_the_detectable_margin_is_reached_with_the_power_said() -> None:
    """Two independent systems, each right 70% of the time on 400 records: the margin
    gate_power gives for 80% power (from one pilot's standard error) is cleared by the paired
    bootstrap's non-inferiority gate in 80% ± 6 of 300 fresh comparisons."""
    rng = np.random.default_rng(3)
    n, p = 400, 0.7
    pilot = rng.random(n) < p
    se = jackknife_se((pilot.sum() - pilot) / (n - 1))
    assert se is not None
    _, detectable, _ = gate_power(se * math.sqrt(2), 0.1, 0.025, 0.8, n, equivalent=False)
    passes = 0
    for _ in range(300):
        diff = (rng.random(n) < p).astype(float) - (rng.random(n) < p)
        theta = diff[rng.integers(0, n, (500, n))].mean(axis=1)
        bounds = _Bounds(float(diff.mean()), theta, "percentile", lambda: (np.ones(1), np.ones(1)))
        passes += margin_p_value(bounds, -detectable, None) < 0.025
    assert 0.74 <= passes / 300 <= 0.86, passes


def test_pingce_plan_on_two_stored_runs(tmp_path: Path) -> None:
    data = EXAMPLES / "contract_risk" / "records.jsonl"
    old = tmp_path / "old.jsonl"
    old.write_text(
        data.read_text(encoding="utf-8").replace('"pred_level": "中"', '"pred_level": "低"'),
        encoding="utf-8",
    )
    for name, source in (("base", old), ("cand", data)):
        done = run_pingce(
            "run", "contract-risk", "--data", str(source), "--out", str(tmp_path / name)
        )
        assert done.returncode == 0, done.stderr
    base = str(tmp_path / "base")
    done = run_pingce(
        "plan", "contract-risk", "--baseline", base, "--non-inferior", "accuracy=0.05"
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "base" / "results.json").read_text(encoding="utf-8"))
    p = results["metrics"]["accuracy"]["value"]
    se = math.sqrt(p * (1 - p) / 59)
    assert f"SE {se:.4f}" in done.stdout
    assert f"the paired difference's SE {se * math.sqrt(2):.4f}" in done.stdout
    assert "correlation 0.00, assumed" in done.stdout
    _, detectable, needed = gate_power(se * math.sqrt(2), 0.05, 0.025, 0.8, 60, equivalent=False)
    assert f"clears a margin of {detectable:.4f}, or this margin with {needed} records" in (
        " ".join(done.stdout.split())
    )
    done = run_pingce(
        *("plan", "contract-risk", "--baseline", base, "--candidate", str(tmp_path / "cand")),
        *("--non-inferior", "accuracy=0.05"),
    )
    assert done.returncode == 0 and "measured" in done.stdout, done.stderr
    done = run_pingce("plan", "contract-risk", "--baseline", base, "--non-inferior", "acc=0.05")
    assert done.returncode == 2 and "no metric 'acc'" in done.stderr
    done = run_pingce("plan", "contract-risk", "--baseline", base)
    assert done.returncode == 2 and "give the gates to plan" in done.stderr
    done = run_pingce("plan", "tcm-dialogue", "--baseline", base, "--non-inferior", "qwk=0.1")
    assert done.returncode == 2 and "not of 'tcm-dialogue'" in done.stderr
