"""``pingce run --baseline RUN --non-inferior METRIC=δ`` (issue 35): the run decides against a
stored baseline as ``pingce compare RUN BASELINE`` does, bit for bit, and the decision record
holds the digests of both runs' inputs (suite, data, gold, model, judge, seed)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pingce
from pingce.errors import OptionError
from tests.cli_run import run_pingce
from tests.test_repeats_run import _level, _records, _repeated, _write


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _run(tmp_path: Path, name: str, rows: list[dict[str, Any]], *extra: str) -> Any:
    data = _write(tmp_path / f"{name}.jsonl", rows)
    out = tmp_path / name
    done = run_pingce(
        "run", "contract-risk", "--data", str(data), "--out", str(out), "--no-store", *extra
    )
    return done, out, data


def test_a_run_decides_against_its_baseline_as_compare_does(tmp_path: Path) -> None:
    _, base, base_data = _run(tmp_path, "base", _repeated(3, 0.3, seed=11))
    gates = ["--non-inferior", "accuracy=0.15", "--non-inferior", "macro_f1=0.01"]
    done, cand, cand_data = _run(
        tmp_path, "cand", _repeated(2, 0.35, seed=12), "--baseline", str(base), *gates
    )
    assert done.returncode == 4, done.stderr  # macro_f1 is not shown within 0.01
    assert "gate failed: macro_f1" in done.stderr
    results = json.loads((cand / "results.json").read_text())
    decision = results["decision"]
    assert [g["passed"] for g in decision["gates"]] == [True, False]
    assert results["baseline"]["run"] == str(base)
    inputs = decision["inputs"]
    assert inputs["candidate"]["data"] == _sha(cand_data)
    assert inputs["baseline"]["data"] == _sha(base_data)
    assert inputs["candidate"]["suite"] == inputs["baseline"]["suite"]
    assert inputs["candidate"]["seed"] == "0" and inputs["candidate"]["gold"] is None
    # the stored runs compared again: the same verdict, bit for bit
    again = run_pingce("compare", str(cand), str(base), *gates, "--out", str(tmp_path / "c"))
    assert again.returncode == 4
    compared = json.loads((tmp_path / "c" / "comparison.json").read_text())
    assert compared["decision"] == decision
    report = (cand / "report.md").read_text()
    assert "## Decision against the baseline" in report and "FAILED: macro_f1" in report


def test_the_decision_is_the_margin_test_of_the_paired_interval(tmp_path: Path) -> None:
    """One gate, no family: it passes exactly when the paired interval lies above -δ. The
    delta is checked against the records counted here, and the outcomes against a paired
    bootstrap of the per-record differences computed here (percentile, 4,000 resamples): a
    margin far above its lower end passes, one far below fails, both are seen."""
    base = pingce.evaluate("contract-risk", _records(), bootstrap=2000)
    wrong = {"高": "低", "中": "高", "低": "中"}
    better = [
        {**r, "pred_level": r["gold_level"]}
        if i % 4 == 0
        else {**r, "pred_level": wrong[r["gold_level"]]}
        if i % 3 == 0
        else r
        for i, r in enumerate(_records())
    ]
    right_c = np.array([_level(r["pred_level"]) == r["gold_level"] for r in better], float)
    right_b = np.array([_level(r["pred_level"]) == r["gold_level"] for r in _records()], float)
    diff = right_c - right_b
    rng = np.random.default_rng(5)
    draws = rng.integers(0, diff.size, size=(4000, diff.size))
    low = float(np.quantile(diff[draws].mean(axis=1), 0.025))
    outcomes = []
    assert low < -0.05  # the candidate is no better for sure: some margins fail
    for margin in (0.001, -low - 0.04, -low + 0.05, 0.3):
        result = pingce.evaluate(
            "contract-risk",
            better,
            bootstrap=2000,
            baseline=base,
            margin_gates=pingce.decisions.parse_margin_gates([f"accuracy={margin}"]),
        )
        assert result.decision is not None
        gate = result.decision.gates[0]
        assert gate.delta == pytest.approx(diff.mean(), abs=1e-12)
        if margin > -low + 0.02:  # the interval clears -δ by a wide berth: passes
            assert gate.passed, margin
        if margin < -low - 0.02:  # -δ inside the interval by a wide berth: fails
            assert not gate.passed, margin
        outcomes.append(gate.passed)
    assert True in outcomes and False in outcomes


def test_baseline_and_margins_go_together() -> None:
    with pytest.raises(OptionError, match="--baseline"):
        pingce.evaluate(
            "contract-risk",
            _records(),
            margin_gates=pingce.decisions.parse_margin_gates(["accuracy=0.1"]),
        )
    with pytest.raises(OptionError, match="--non-inferior"):
        pingce.evaluate("contract-risk", _records(), baseline="somewhere")


def test_inputs_are_digests_of_what_was_read(tmp_path: Path) -> None:
    data = _write(tmp_path / "d.jsonl", _records())
    first = pingce.evaluate("contract-risk", str(data), bootstrap=0)
    assert first.inputs is not None and first.inputs["data"] == _sha(data)
    second = pingce.evaluate("contract-risk", str(data), bootstrap=0, seed=7)
    assert second.inputs is not None
    assert second.inputs["suite"] == first.inputs["suite"] and second.inputs["seed"] == "7"
    changed = pingce.evaluate("contract-risk", str(data), bootstrap=0, zero_division="1")
    assert changed.inputs is not None and changed.inputs["suite"] != first.inputs["suite"]


def test_each_gate_states_its_power_at_this_many_records() -> None:
    """The power of a gate for a candidate as good as the baseline is the normal power of the
    one-sided test at the paired interval's standard error, Φ(δ/SE − z(1 − α/m)), with m the
    gates of the family (holm: a lower bound); it grows with the margin."""
    from scipy.stats import norm

    base = pingce.evaluate("contract-risk", _records(), bootstrap=1000)
    wrong = {"高": "低", "中": "高", "低": "中"}
    other = [
        {**r, "pred_level": wrong[r["gold_level"]]} if i % 6 == 0 else r
        for i, r in enumerate(_records())
    ]
    found = []
    for margin in (0.05, 0.15):
        gates = pingce.decisions.parse_margin_gates([f"accuracy={margin}", "macro_f1=0.2"])
        result = pingce.evaluate(
            "contract-risk", other, bootstrap=1000, baseline=base, margin_gates=gates
        )
        compared = pingce.compare_runs(result, base, bootstrap=1000, margin_gates=gates)
        assert result.decision is not None and compared.decision == result.decision
        gate = result.decision.gates[0]
        entry = compared.metrics["accuracy"]
        se = (entry.ci_high - entry.ci_low) / (2 * norm.ppf(0.975))
        expected = norm.cdf(margin / se - norm.ppf(1 - 0.025 / 2))
        assert gate.power == pytest.approx(expected, rel=1e-9)
        assert gate.detectable == pytest.approx(
            (norm.ppf(1 - 0.025 / 2) + norm.ppf(0.8)) * se, rel=1e-9
        )
        found.append(gate.power)
    assert found[0] < found[1]
