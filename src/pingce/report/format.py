"""Number formatting shared by the console and markdown reports (results.json is never rounded)."""

from __future__ import annotations

from ..results import MetricResult

__all__ = ["fmt_interval", "fmt_number", "fmt_value"]


def fmt_number(value: float | None, digits: int = 4) -> str:
    """A float for people: fixed digits, or an em dash for null."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}"


def fmt_value(result: MetricResult, digits: int = 4) -> str:
    """The value, or ``null`` when undefined."""
    return "null" if result.value is None else fmt_number(result.value, digits)


def fmt_interval(result: MetricResult, digits: int = 4) -> str:
    """``[low, high]`` or an em dash."""
    if result.ci_low is None or result.ci_high is None:
        return "—"
    return f"[{fmt_number(result.ci_low, digits)}, {fmt_number(result.ci_high, digits)}]"
