"""Issue 13, gates for CI: ``--fail-under``/``--fail-over`` exit 4 naming each metric that fell
short (on the value, or with ``--gate-on-interval`` on the pessimistic end of the interval); a
gate on a metric the suite lacks is an option error before the run; ``pingce.testing``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import accuracy_score

import pingce
from pingce.errors import OptionError
from pingce.testing import assert_metrics
from tests.cli_run import run_pingce

EXAMPLE = Path(pingce.__file__).parent / "examples" / "contract_risk" / "records.jsonl"
LEVELS = {"high": "高", "medium": "中", "low": "低"}


@pytest.fixture(scope="module")
def accuracy() -> float:
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    gold = [r["gold_level"] for r in rows]
    return float(accuracy_score(gold, [LEVELS.get(r["pred_level"], r["pred_level"]) for r in rows]))


def run(tmp_path: Path, *args: str) -> Any:
    return run_pingce(
        "run", "contract-risk", "--data", str(EXAMPLE), "--out", str(tmp_path / "o"), *args
    )


def test_a_gate_below_the_value_passes_and_above_it_fails(tmp_path: Path, accuracy: float) -> None:
    passed = run(tmp_path, "--bootstrap", "0", f"--fail-under=accuracy={accuracy - 0.01}")
    assert passed.returncode == 0, passed.stderr
    failed = run(
        tmp_path,
        "--bootstrap", "0",
        f"--fail-under=accuracy={accuracy + 0.01}",
        "--fail-over=hallucination_rate=0.01",
        "--fail-under=qwk=0.1",
    )  # fmt: skip
    assert failed.returncode == 4
    lines = [line for line in failed.stderr.splitlines() if line.startswith("gate failed:")]
    assert len(lines) == 2  # qwk passes
    assert f"accuracy value {accuracy:.4f} is below {accuracy + 0.01:g}" in lines[0]
    assert "hallucination_rate value" in lines[1] and "is above 0.01" in lines[1]
    assert (tmp_path / "o" / "results.json").is_file()  # the outputs are written all the same


def test_a_gate_on_the_interval_reads_its_pessimistic_end(tmp_path: Path, accuracy: float) -> None:
    bound = accuracy - 0.02  # the value clears it, the lower end of the interval does not
    on_value = run(tmp_path, "--bootstrap", "500", f"--fail-under=accuracy={bound}")
    assert on_value.returncode == 0, on_value.stderr
    on_interval = run(
        tmp_path, "--bootstrap", "500", f"--fail-under=accuracy={bound}", "--gate-on-interval"
    )
    assert on_interval.returncode == 4
    saved = json.loads((tmp_path / "o" / "results.json").read_text())["metrics"]["accuracy"]
    assert saved["ci_low"] < bound
    assert f"lower end of its interval {saved['ci_low']:.4f}" in on_interval.stderr


def test_bad_gates_stop_before_the_run(tmp_path: Path) -> None:
    typo = run(tmp_path, "--fail-under=acuracy=0.8")
    assert typo.returncode == 2 and "did you mean 'accuracy'?" in typo.stderr
    assert not (tmp_path / "o").exists()
    malformed = run(tmp_path, "--fail-under=accuracy")
    assert malformed.returncode == 2 and "expected METRIC=NUMBER" in malformed.stderr
    no_interval = run(
        tmp_path, "--bootstrap", "0", "--fail-under=accuracy=0.5", "--gate-on-interval"
    )
    assert no_interval.returncode == 2 and "needs --bootstrap > 0" in no_interval.stderr


def test_a_null_metric_never_passes(tmp_path: Path) -> None:
    rows = [{"id": "a", "gold_level": "高", "pred_level": "高"}]  # no latency, no evidence
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n", encoding="utf-8")
    done = run_pingce(
        "run", "contract-risk", "--data", str(data), "--bootstrap", "0",
        "--fail-over=avg_latency_sec=10", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert done.returncode == 4
    assert "avg_latency_sec is null" in done.stderr and "no number to pass" in done.stderr


def test_assert_metrics_for_pytest(accuracy: float) -> None:
    result = pingce.evaluate("contract-risk", EXAMPLE, bootstrap=200)
    assert_metrics(result, accuracy=accuracy - 0.01, at_most={"hallucination_rate": 0.5})
    with pytest.raises(AssertionError, match=r"accuracy value .* is below"):
        assert_metrics(result, accuracy=accuracy + 0.01)
    with pytest.raises(AssertionError, match="lower end of its interval"):
        assert_metrics(result, accuracy=accuracy - 0.01, on_interval=True)
    with pytest.raises(OptionError, match="no metric 'acc'"):
        assert_metrics(result, acc=0.5)


def worse_records(tmp_path: Path) -> Path:
    """The example with every other prediction made wrong: clearly worse."""
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    wrong = {"高": "低", "中": "高", "低": "中"}
    out = tmp_path / "worse.jsonl"
    with open(out, "w", encoding="utf-8") as handle:
        for i, r in enumerate(rows):
            if i % 2 == 0:
                r = dict(r, pred_level=wrong[r["gold_level"]])
            handle.write(json.dumps(r, ensure_ascii=False) + "\n")
    return out


def test_compare_fails_on_a_significant_regression(tmp_path: Path) -> None:
    worse = worse_records(tmp_path)
    args = ["compare", "contract-risk", "--bootstrap", "500", "--out", str(tmp_path / "c")]
    done = run_pingce(
        *args, "--data", str(worse), "--baseline", str(EXAMPLE),
        "--fail-on-regression", "accuracy", "--fail-on-regression", "qwk:0.05",
    )  # fmt: skip
    assert done.returncode == 4, done.stderr
    compared = json.loads((tmp_path / "c" / "comparison.json").read_text())["metrics"]
    assert compared["accuracy"]["significant"] and compared["accuracy"]["delta"] < 0
    assert "accuracy: candidate significantly worse" in done.stderr
    assert f"qwk: the interval of delta [{compared['qwk']['ci_low']:.4f}," in done.stderr
    # the same system against itself: no regression, within any margin
    same = run_pingce(
        *args, "--data", str(EXAMPLE), "--baseline", str(EXAMPLE),
        "--fail-on-regression", "all", "--fail-on-regression", "accuracy:0.01",
    )  # fmt: skip
    assert same.returncode == 0, same.stderr
    # the better system against the worse one: improvements never fail the gate
    better = run_pingce(
        *args, "--data", str(EXAMPLE), "--baseline", str(worse), "--fail-on-regression", "all"
    )
    assert better.returncode == 0, better.stderr


def test_a_margin_gate_reads_the_worse_end_of_the_interval() -> None:
    from pingce.gates import parse_regression_gates, regressions
    from pingce.results import MetricComparison

    def entry(low: float, high: float, higher_is_better: bool = True) -> MetricComparison:
        return MetricComparison(
            candidate=0.5, baseline=0.5, delta=(low + high) / 2, ci_low=low, ci_high=high,
            n=10, n_baseline=10, higher_is_better=higher_is_better, significant=False,
        )  # fmt: skip

    (gate,) = parse_regression_gates(["m:0.02"])
    assert regressions({"m": entry(-0.019, 0.05)}, [gate]) == []
    assert regressions({"m": entry(-0.021, 0.05)}, [gate])  # a drop of 0.021 is not excluded
    # lower is better (a hallucination rate): a rise is the regression
    assert regressions({"m": entry(-0.05, 0.019, False)}, [gate]) == []
    assert regressions({"m": entry(-0.05, 0.021, False)}, [gate])
    with pytest.raises(OptionError, match="margin after ':' must be a number"):
        parse_regression_gates(["m:-1"])


def test_comparison_md_says_what_the_tests_mean_in_words(tmp_path: Path) -> None:
    """Issue 13: comparison.md beside comparison.json: the table, then each metric's verdict
    in words (never by colour alone), equal to comparison.json's."""
    worse = worse_records(tmp_path)
    done = run_pingce(
        "compare", "contract-risk", "--data", str(worse), "--baseline", str(EXAMPLE),
        "--bootstrap", "300", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    compared = json.loads((tmp_path / "c" / "comparison.json").read_text())["metrics"]
    text = (tmp_path / "c" / "comparison.md").read_text(encoding="utf-8")
    for name, entry in compared.items():
        if entry.get("verdict"):
            assert f"- `{name}`: {entry['verdict']}" in text, name
    assert "candidate worse" in text and "significant after Holm" in text
    assert (tmp_path / "c" / "comparison.html").is_file()
