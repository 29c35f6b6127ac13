"""``pingce compare``: paired bootstrap of metric differences between two systems.

Oracles: ``scipy.stats.bootstrap(..., paired=True)`` on the per-record correctness of both
systems (the same index stream, so the intervals agree exactly), scikit-learn recomputing the
difference on each resample (for the p-value and for a metric that is not a mean), and brute
force over resampled dialogues for a suite with a unit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats
from sklearn.metrics import accuracy_score, f1_score

import pingce
from pingce.errors import InputError
from pingce.stats import resample_indices
from tests.loopback import Fault, LoopbackServer

LEVELS = ["高", "中", "低"]


def systems(n: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two systems over the same records: the candidate right ~80 %, the baseline ~70 %."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, size=n)
    candidate, baseline = [], []
    for i, g in enumerate(gold):
        a = g if rng.random() < 0.8 else rng.integers(0, 3)
        b = g if rng.random() < 0.7 else rng.integers(0, 3)
        base = {"id": f"r{i}", "gold_level": LEVELS[g]}
        candidate.append({**base, "pred_level": LEVELS[a]})
        baseline.append({**base, "pred_level": LEVELS[b]})
    return candidate, baseline


def correct(records: list[dict[str, Any]]) -> np.ndarray:
    return np.asarray([r["gold_level"] == r["pred_level"] for r in records], dtype=np.float64)


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_accuracy_difference_equals_scipy_paired_bootstrap(method: str) -> None:
    candidate, baseline = systems(150, seed=3)
    a, b = correct(candidate), correct(baseline)
    result = pingce.compare(
        "contract-risk",
        candidate,
        baseline,
        bootstrap=500,
        seed=11,
        ci_method=method.lower(),
        bootstrap_stream="indices",  # scipy's resamples: n indices (the per-block stream: in law)
    )
    got = result.metrics["accuracy"]
    assert got.delta == pytest.approx(a.mean() - b.mean(), abs=1e-15)
    assert (got.candidate, got.baseline) == pytest.approx((a.mean(), b.mean()), abs=1e-15)

    def statistic(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return x.mean(axis=axis) - y.mean(axis=axis)

    ref = scipy.stats.bootstrap(
        (a, b),
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=500,
        method=method,
        rng=np.random.default_rng(11),
    ).confidence_interval
    assert got.ci_low == pytest.approx(ref.low, abs=1e-12)
    assert got.ci_high == pytest.approx(ref.high, abs=1e-12)


def test_p_value_and_macro_f1_interval_from_recomputed_resamples() -> None:
    candidate, baseline = systems(120, seed=5)
    gold = np.asarray([r["gold_level"] for r in candidate])
    pa = np.asarray([r["pred_level"] for r in candidate])
    pb = np.asarray([r["pred_level"] for r in baseline])
    result = pingce.compare(
        "contract-risk",
        candidate,
        baseline,
        bootstrap=300,
        seed=2,
        ci_method="percentile",
        bootstrap_stream="indices",
    )

    def macro(pred: np.ndarray, index: np.ndarray) -> float:
        return float(
            f1_score(gold[index], pred[index], labels=LEVELS, average="macro", zero_division=0)
        )

    deltas = []
    acc = []
    for index in resample_indices(len(gold), 300, 2):
        deltas.append(macro(pa, index) - macro(pb, index))
        acc.append(accuracy_score(gold[index], pa[index]) - accuracy_score(gold[index], pb[index]))
    got = result.metrics["macro_f1"]
    assert got.ci_low == pytest.approx(float(np.quantile(deltas, 0.025)), abs=1e-12)
    assert got.ci_high == pytest.approx(float(np.quantile(deltas, 0.975)), abs=1e-12)
    expected_p = percentile_p_value(np.asarray(acc))
    assert result.metrics["accuracy"].p_value == pytest.approx(expected_p, rel=1e-9)
    assert result.metrics["accuracy"].p_method == "paired-bootstrap-percentile"


def percentile_p_value(deltas: np.ndarray) -> float:
    """The p-value that inverts the percentile interval, in closed form: twice the level at
    which numpy's linearly interpolated quantile of the resampled differences crosses 0."""

    def edge(x: np.ndarray) -> float:  # the level above which the quantile of sorted x is > 0
        k = int(np.count_nonzero(x <= 0))
        if k == 0:
            return 0.0
        if k == x.size:
            return 1.0
        h = k - 1 + (0.0 - x[k - 1]) / (x[k] - x[k - 1])
        return float(h / (x.size - 1))

    x = np.sort(deltas)
    return min(1.0, 2 * min(edge(x), edge(np.sort(-x))))


def test_same_system_twice_differs_by_nothing() -> None:
    candidate, _ = systems(60, seed=1)
    result = pingce.compare("contract-risk", candidate, candidate, bootstrap=200)
    for name, m in result.metrics.items():
        if m.delta is not None:
            assert m.delta == 0.0, name
            assert m.p_value == 1.0, name


def test_records_are_matched_by_id_not_by_position() -> None:
    candidate, baseline = systems(80, seed=4)
    shuffled = list(reversed(baseline))
    a = pingce.compare("contract-risk", candidate, baseline, bootstrap=100, seed=1)
    b = pingce.compare("contract-risk", candidate, shuffled, bootstrap=100, seed=1)
    assert a.metrics == b.metrics


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def test_an_id_missing_from_either_side_is_an_input_error(tmp_path: Path) -> None:
    candidate, baseline = systems(10, seed=2)
    cand = write(tmp_path / "cand.jsonl", candidate)
    short = write(tmp_path / "base.jsonl", baseline[:7] + baseline[8:])
    with pytest.raises(InputError) as info:
        pingce.compare("contract-risk", cand, short, bootstrap=0)
    assert info.value.source == str(cand) and info.value.line == 8
    assert info.value.field == "id" and info.value.value == "r7"
    extra = write(tmp_path / "extra.jsonl", [*baseline, {**baseline[0], "id": "r99"}])
    with pytest.raises(InputError) as info:
        pingce.compare("contract-risk", cand, extra, bootstrap=0)
    assert info.value.source == str(extra) and info.value.value == "r99"
    twice = write(tmp_path / "twice.jsonl", [*baseline, baseline[3]])
    with pytest.raises(InputError, match="duplicate id"):
        pingce.compare("contract-risk", cand, twice, bootstrap=0)


def test_dialogues_are_resampled_together_in_a_comparison() -> None:
    rng = np.random.default_rng(8)
    candidate, baseline = [], []
    for d in range(30):
        for t in range(4):
            base = {"dialogue_id": f"d{d:02d}", "turn": t + 1, "gt_is_emergency": True}
            candidate.append(
                {**base, "status": "EMERGENCY_ABORT" if rng.random() < 0.8 else "INQUIRY_ONLY"}
            )
            baseline.append(
                {**base, "status": "EMERGENCY_ABORT" if rng.random() < 0.6 else "INQUIRY_ONLY"}
            )
    result = pingce.compare(
        "tcm-dialogue", candidate, baseline, bootstrap=200, seed=4, ci_method="percentile"
    )
    assert result.signature.unit == "dialogue_id"

    def per_dialogue(records: list[dict[str, Any]]) -> np.ndarray:
        out = np.zeros(30)
        for r in records:
            out[int(r["dialogue_id"][1:])] += r["status"] != "EMERGENCY_ABORT"
        return out

    ia, ib = per_dialogue(candidate), per_dialogue(baseline)
    deltas = [(ib[i].sum() - ia[i].sum()) / (4 * 30) for i in resample_indices(30, 200, 4)]
    got = result.metrics["funnel_adherence"]
    assert got.delta == pytest.approx((ib.sum() - ia.sum()) / 120, abs=1e-15)
    assert got.ci_low == pytest.approx(float(np.quantile(deltas, 0.025)), abs=1e-12)
    assert got.ci_high == pytest.approx(float(np.quantile(deltas, 0.975)), abs=1e-12)


def test_cli_compare_writes_comparison_json(tmp_path: Path) -> None:
    candidate, baseline = systems(40, seed=9)
    cand = write(tmp_path / "cand.jsonl", candidate)
    base = write(tmp_path / "base.jsonl", baseline)
    args = [sys.executable, "-m", "pingce", "compare", "contract-risk", "--data", str(cand)]
    args += ["--baseline", str(base), "--out", str(tmp_path / "out"), "--bootstrap", "200"]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    data = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    expected = correct(candidate).mean() - correct(baseline).mean()
    assert data["metrics"]["accuracy"]["delta"] == pytest.approx(expected, abs=1e-15)
    assert data["n_records"] == 40 and "accuracy" in run.stdout
    missing = subprocess.run(
        [*args[:-4], "--baseline", str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr


def test_turns_without_ids_match_by_dialogue_and_turn() -> None:
    examples = Path(__file__).resolve().parent.parent / "examples" / "tcm_dialogue"
    records = [json.loads(line) for line in (examples / "records.jsonl").read_text().splitlines()]
    same = pingce.compare("tcm-dialogue", records, list(reversed(records)), bootstrap=200)
    for name, m in same.metrics.items():
        if m.delta is not None:  # identical systems, listed in another order: no difference
            assert (m.delta, m.ci_low, m.ci_high, m.p_value) == (0.0, 0.0, 0.0, 1.0), name


def test_a_record_in_another_unit_on_the_other_side_is_an_input_error(tmp_path: Path) -> None:
    records = [
        {"id": f"t{i}", "dialogue_id": f"d{i // 2}", "turn": i % 2, "status": "DEFINITIVE"}
        for i in range(6)
    ]
    moved = [dict(r) for r in records]
    moved[3]["dialogue_id"] = "d9"
    base = write(tmp_path / "base.jsonl", moved)
    with pytest.raises(InputError) as info:
        pingce.compare("tcm-dialogue", records, base, bootstrap=0)
    assert info.value.source == str(base) and info.value.line == 4
    assert info.value.field == "dialogue_id" and info.value.value == "d9"


def test_records_without_ids_need_match_by(tmp_path: Path) -> None:
    candidate, baseline = systems(5, seed=1)
    for r in candidate:
        del r["id"]
    cand = write(tmp_path / "cand.jsonl", candidate)
    with pytest.raises(InputError, match="matches records by id") as info:
        pingce.compare("contract-risk", cand, baseline, bootstrap=0)
    assert info.value.source == str(cand) and info.value.line == 1


def test_failed_similarity_is_counted_per_side_and_exits_3(tmp_path: Path) -> None:
    from pingce.similarity.fake import FakeBackend

    examples = Path(__file__).resolve().parent.parent / "examples" / "function_points"
    records = [json.loads(line) for line in (examples / "records.jsonl").read_text().splitlines()]
    backend = FakeBackend(lambda a, b: 0.9, fail={("员工信息表", "员工信息")})
    result = pingce.compare("function-points", records, records, similarity=backend, bootstrap=0)
    for side in ("candidate", "baseline"):
        assert result.failures[side].judge == 1
        assert result.failures[side].similarity_failed_records == 1
    suite = tmp_path / "fp.yaml"
    builtin = Path(pingce.__file__).parent / "suites" / "function-points.yaml"
    suite.write_text(
        builtin.read_text(encoding="utf-8").replace(
            "concurrency: 16", "concurrency: 4\n  max_retries: 0\n  timeout: 2"
        ),
        encoding="utf-8",
    )
    data = str(examples / "records.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY")}
    env["NO_PROXY"] = "127.0.0.1,localhost"
    with LoopbackServer(lifetime=120) as server:  # answers, except for one prediction's pairs
        server.rule = lambda r: Fault("500", 0) if r.x == "员工信息表" else None
        args = [sys.executable, "-m", "pingce", "compare", str(suite), "--data", data]
        args += ["--baseline", data, "--similarity", "openai:m", "--base-url", server.url]
        args += ["--bootstrap", "0", "--no-cache"]
        run = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 3, run.stderr
    assert "candidate failures: judge" in run.stdout
