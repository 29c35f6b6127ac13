"""pingce's pytest plugin (issue 36): installed with pingce as a ``pytest11`` entry point, a
``pingce_run`` fixture and a ``pingce_gate`` marker that fails the test with the gate's
message; run here in a separate pytest process, as a user's CI runs it."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import pingce

pytest_plugins = ["pytester"]

EXAMPLES = Path(pingce.__file__).parent / "examples"
RECORDS = EXAMPLES / "contract_risk" / "records.jsonl"
BFCL = (
    EXAMPLES
    / "other_tools/bfcl/claude/score/claude-sonnet-4-5-20250929-FC/non_live"
    / "BFCL_v4_simple_python_score.json"
)


def test_the_plugin_is_an_entry_point() -> None:
    found = {e.name: e.value for e in entry_points(group="pytest11")}
    assert found.get("pingce") == "pingce.pytest_plugin"


def _suite(pytester: pytest.Pytester) -> pytest.RunResult:
    pytester.makepyfile(
        test_release=f"""
        import pytest

        @pytest.mark.pingce_gate(accuracy=0.5)
        def test_passes(pingce_run):
            pingce_run("contract-risk", {str(RECORDS)!r}, bootstrap=0)

        @pytest.mark.pingce_gate(accuracy=0.99, at_most={{"p95_latency_sec": 0.001}})
        def test_falls_short(pingce_run):
            pingce_run("contract-risk", {str(RECORDS)!r}, bootstrap=0)

        @pytest.mark.pingce_gate(accuracy=0.95, on_interval=True)
        def test_a_log(pingce_run):
            result = pingce_run({str(BFCL)!r}, bootstrap=200)
            assert result.metrics["accuracy"].value == 0.975

        @pytest.mark.pingce_gate(accuracy=0.5)
        def test_without_a_run():
            pass
        """
    )
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")


def test_gates_fail_the_test_with_their_message(pytester: pytest.Pytester) -> None:
    result = _suite(pytester)
    result.assert_outcomes(passed=1, failed=3)
    text = result.stdout.str()
    assert "test_passes PASSED" in text or "PASSED test_release.py::test_passes" in text
    # the gate's own words: each metric that fell short, with its value and bound
    assert "pingce gate failed" in text
    assert "accuracy" in text and "0.99" in text and "p95_latency_sec" in text
    # BFCL's 39 of 40 (0.975) has an interval reaching below 0.95: its pessimistic end fails
    assert "FAILED test_release.py::test_a_log" in text
    assert "made no pingce_run result" in text
    assert re.search(r"=+ pingce =+", text)  # the summary section: each run's metrics
    assert re.search(r"BFCL_v4_simple_python_score.json: accuracy 0.975 \[", text)
