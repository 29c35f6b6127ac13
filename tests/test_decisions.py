"""Release decisions with a margin (issue 35): ``--non-inferior METRIC=δ``, ``--equivalent``,
``--multiplicity`` (:mod:`pingce.decisions`, :func:`pingce.stats.margin_p_value`).

Oracles: statsmodels' ``multipletests`` for the adjustments; for a percentile interval the
one-sided p-value is the share of resampled differences at or beyond the margin; the decision
agrees with the reported interval at ci_level; and a simulation at the margin's boundary keeps
false passes at alpha."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from pingce.decisions import parse_margin_gates
from pingce.errors import OptionError
from pingce.stats import _Bounds, benjamini_hochberg, holm, margin_p_value

from .cli_run import run_pingce

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_adjustments_are_statsmodels() -> None:
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.random(int(rng.integers(1, 12))) ** 2
        named = {f"m{i}": float(v) for i, v in enumerate(p)}
        bh = benjamini_hochberg(named)
        assert [bh[f"m{i}"] for i in range(p.size)] == pytest.approx(
            multipletests(p, method="fdr_bh")[1], abs=1e-12
        )
        hb = holm(named)
        assert [hb[f"m{i}"] for i in range(p.size)] == pytest.approx(
            multipletests(p, method="holm")[1], abs=1e-12
        )


def _no_jackknife() -> tuple[np.ndarray, np.ndarray]:
    raise AssertionError("percentile intervals need no jackknife")


def test_a_percentile_margin_p_is_the_share_of_resamples_beyond_the_margin() -> None:
    rng = np.random.default_rng(1)
    theta = rng.normal(0.01, 0.02, 4000)
    bounds = _Bounds(0.01, theta, "percentile", _no_jackknife)
    for margin in (0.005, 0.02, 0.04):
        share = float(np.mean(theta <= -margin))
        assert margin_p_value(bounds, -margin, None) == pytest.approx(share, abs=2 / theta.size)
        above = float(np.mean(theta >= margin))  # lower is better: beyond +δ
        assert margin_p_value(bounds, None, margin) == pytest.approx(above, abs=2 / theta.size)
        both = margin_p_value(bounds, -margin, margin)
        assert both == pytest.approx(max(share, above), abs=2 / theta.size)
    assert margin_p_value(bounds, -1.0, None) == 0.0  # every resample clears it
    assert margin_p_value(bounds, 0.5, None) == 1.0  # none does


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_at_the_boundary_false_passes_stay_at_alpha(method: str) -> None:
    """The true difference of two means is exactly -δ: a non-inferiority gate at ci_level 0.95
    (one-sided alpha 0.025) passes in at most 2.5% of 1,000 simulated comparisons (+ 3 SE);
    at a true difference of 0 with δ three standard errors away it passes in at least 80%."""
    rng = np.random.default_rng(2)
    n, resamples, reps, delta = 300, 400, 1000, 0.1
    passes = {"boundary": 0, "zero": 0}
    for _ in range(reps):
        for case, shift in (("boundary", -delta), ("zero", 0.0)):
            diff = rng.normal(shift, 0.5, n)  # paired per-record differences
            draws = rng.integers(0, n, (resamples, n))
            theta = diff[draws].mean(axis=1)
            point = float(diff.mean())

            def jack(diff: np.ndarray = diff) -> tuple[np.ndarray, np.ndarray]:
                values = (diff.sum() - diff) / (n - 1)
                return values, np.ones(n)

            bounds = _Bounds(point, theta, method, jack)  # type: ignore[arg-type]
            margin = delta if case == "boundary" else 3 * 0.5 / np.sqrt(n)
            passes[case] += margin_p_value(bounds, -margin, None) < 0.025
    se = np.sqrt(0.025 * 0.975 / reps)
    assert passes["boundary"] / reps <= 0.025 + 3 * se, passes
    assert passes["zero"] / reps >= 0.80, passes


def test_malformed_gates_are_refused() -> None:
    for text in ("accuracy", "accuracy=", "accuracy=0", "accuracy=-0.1", "=0.1", "accuracy=x"):
        with pytest.raises(OptionError, match="METRIC=MARGIN"):
            parse_margin_gates([text])
    with pytest.raises(OptionError, match="gated twice"):
        parse_margin_gates(["accuracy=0.1"], ["accuracy=0.2"])


def _old(tmp_path: Path) -> Path:
    old = tmp_path / "old.jsonl"
    text = (EXAMPLES / "contract_risk" / "records.jsonl").read_text(encoding="utf-8")
    old.write_text(text.replace('"pred_level": "中"', '"pred_level": "低"'), encoding="utf-8")
    return old


def test_the_decision_is_the_interval_at_ci_level(tmp_path: Path) -> None:
    """One gate: it passes exactly when the paired interval at ci_level clears the margin;
    comparison.json holds the decision; a failed gate exits 4 and says why."""
    old = _old(tmp_path)
    new = EXAMPLES / "contract_risk" / "records.jsonl"
    for candidate, baseline, passes in ((new, old, True), (old, new, False)):
        out = tmp_path / ("pass" if passes else "fail")
        done = run_pingce(
            *("compare", "contract-risk", "--data", str(candidate), "--baseline", str(baseline)),
            *("--non-inferior", "accuracy=0.05", "--out", str(out)),
        )
        assert done.returncode == (0 if passes else 4), done.stderr
        result = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
        entry = result["metrics"]["accuracy"]
        decision = result["decision"]
        assert decision["passed"] is passes and decision["alpha"] == pytest.approx(0.025)
        assert (entry["ci_low"] > -0.05) is passes
        gate = decision["gates"][0]
        assert gate["metric"] == "accuracy" and gate["test"] == "non-inferiority"
        assert gate["p_value"] == entry["margin_p_value"]
        if passes:
            assert "decision: the candidate passes" in done.stdout
        else:
            assert "gate failed: accuracy: delta" in done.stderr
        # the reports say it in words: comparison.md and comparison.html
        outcome = "passes" if passes else "does not pass"
        page = (out / "comparison.md").read_text(encoding="utf-8")
        assert f"The candidate {outcome}: 1 gate(s)" in page
        assert f"- {'passed' if passes else 'FAILED'}: {gate['reason']}" in page
        html = (out / "comparison.html").read_text(encoding="utf-8")
        assert '<section id="decision">' in html and f"The candidate {outcome}" in html


def test_a_family_of_gates_and_slices_is_adjusted(tmp_path: Path) -> None:
    old = _old(tmp_path)
    new = EXAMPLES / "contract_risk" / "records.jsonl"
    out = tmp_path / "out"
    done = run_pingce(
        *("compare", "contract-risk", "--data", str(new), "--baseline", str(old)),
        *("--non-inferior", "accuracy=0.05", "--equivalent", "hallucination_rate=0.05"),
        *("--slice", "contract_type", "--multiplicity", "bh", "--out", str(out)),
    )
    result = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    decision = result["decision"]
    assert decision["multiplicity"] == "bh"
    gates = decision["gates"]
    assert len(gates) == 2 * (1 + len(result["slices"]))  # every metric in every slice too
    tested = {(g["metric"], g.get("slice")): g for g in gates if g["p_value"] is not None}
    want = multipletests([g["p_value"] for g in tested.values()], method="fdr_bh")[1]
    assert [g["p_adjusted"] for g in tested.values()] == pytest.approx(want, abs=1e-12)
    for g in gates:
        assert g["passed"] == (g["p_adjusted"] is not None and g["p_adjusted"] < 0.025)
    assert done.returncode == (0 if decision["passed"] else 4)


def test_gates_say_what_is_wrong(tmp_path: Path) -> None:
    new = EXAMPLES / "contract_risk" / "records.jsonl"
    base = ("compare", "contract-risk", "--data", str(new), "--baseline", str(_old(tmp_path)))
    done = run_pingce(*base, "--non-inferior", "acuracy=0.05")
    assert done.returncode == 2 and "no metric 'acuracy'" in done.stderr
    done = run_pingce(*base, "--non-inferior", "accuracy=0.05", "--bootstrap", "0")
    assert done.returncode == 4
    assert "not tested (no interval (--bootstrap 0)), so --non-inferior" in done.stderr
