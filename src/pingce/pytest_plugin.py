"""pingce's pytest plugin (an entry point: installed with pingce, active in every pytest run).

A ``pingce_run`` fixture runs a suite over records, or reads another tool's file, and keeps
each result; a ``pingce_gate`` marker checks the results of its test against bounds after the
test's body, so ``pytest`` in CI fails with the gate's message::

    @pytest.mark.pingce_gate(accuracy=0.8, at_most={"p95_latency_sec": 2.0})
    def test_release(pingce_run):
        pingce_run("contract-risk", "outputs/records.jsonl")

    def test_inspect_log(pingce_run):
        result = pingce_run("logs/arithmetic.eval")   # another tool's file: its own suite
        assert result.metrics["match"].ci_low > 0.5

The gate is :func:`pingce.testing.assert_metrics` (a null metric never passes;
``on_interval=True`` reads the pessimistic end of the interval). The terminal summary lists
each run's metrics with their intervals.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from typing import Any

import pytest

__all__ = ["pingce_run"]

_RESULTS = pytest.StashKey[list[tuple[str, Any]]]()
"""A test's pingce_run results."""
_SHOWN = pytest.StashKey[list[tuple[str, Any]]]()
"""Every test's, for the terminal summary."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "pingce_gate(**at_least, at_most=None, on_interval=False): after the test, every "
        "pingce_run result of the test must meet these bounds (pingce.testing.assert_metrics)",
    )


@pytest.fixture
def pingce_run(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Run pingce in a test: ``pingce_run(SUITE, DATA, **options)`` (as :func:`pingce.evaluate`)
    or ``pingce_run(LOG, **options)`` (another tool's file, as ``pingce run LOG``); the result
    is returned and kept for the test's ``pingce_gate`` and the summary."""
    import pingce

    kept = request.node.stash.setdefault(_RESULTS, [])

    def run(suite: str | os.PathLike[str], data: Any = None, **options: Any) -> Any:
        if data is None:
            from .options import run_options
            from .tool_logs.evaluate import evaluate_tool_file

            tool = options.pop("tool", None)
            result = evaluate_tool_file(suite, run_options(options, "run"), tool=tool)
        else:
            result = pingce.evaluate(suite, data, **options)
        kept.append((os.fspath(suite) if not isinstance(suite, str) else suite, result))
        return result

    return run


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test's body: its ``pingce_gate`` checked on every result it made."""
    yield
    marker = item.get_closest_marker("pingce_gate")
    if marker is None:
        return
    results = item.stash.get(_RESULTS, [])
    if not results:
        raise AssertionError("pingce_gate: the test made no pingce_run result to gate")
    from .testing import assert_metrics

    bounds = dict(marker.kwargs)
    at_most = bounds.pop("at_most", None)
    on_interval = bool(bounds.pop("on_interval", False))
    failed = []
    for name, result in results:
        try:
            assert_metrics(result, at_most=at_most, on_interval=on_interval, **bounds)
        except AssertionError as exc:
            failed.append(f"{name}: {exc}")
    if failed:
        raise AssertionError("pingce gate failed: " + "; ".join(failed))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each pingce_run result's metrics, with their intervals."""
    shown = terminalreporter.config.stash.get(_SHOWN, [])
    if not shown:
        return
    terminalreporter.section("pingce")
    for name, result in shown:
        values = ", ".join(_shown(metric, m) for metric, m in result.metrics.items())
        terminalreporter.write_line(f"{name}: {values}")


def _shown(name: str, metric: Any) -> str:
    if metric.value is None:
        return f"{name} null"
    if metric.ci_low is None or metric.ci_high is None:
        return f"{name} {metric.value:.4g}"
    return f"{name} {metric.value:.4g} [{metric.ci_low:.4g}, {metric.ci_high:.4g}]"


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """The test's results kept for the summary."""
    results = item.stash.get(_RESULTS, [])
    if results:
        item.config.stash.setdefault(_SHOWN, []).extend(results)
