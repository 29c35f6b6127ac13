"""Number formatting shared by the console and markdown reports (results.json is never rounded)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..results import MetricResult

__all__ = ["fmt_interval", "fmt_number", "fmt_p", "fmt_value", "model_line", "similarity_line"]


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


def _usage(stats: Mapping[str, Any]) -> list[str]:
    """The tokens and the cost of a run's model calls, as parts of a line (none when zero)."""
    parts = []
    prompt, completion = stats.get("prompt_tokens", 0), stats.get("completion_tokens", 0)
    if prompt or completion:
        parts.append(f"{prompt:,} prompt + {completion:,} completion tokens")
    if stats.get("cost"):
        parts.append(f"cost {stats['cost']:.4f}")
    return parts


def similarity_line(signature: str | None, stats: Mapping[str, Any] | None) -> str | None:
    """One line of what a model-backed similarity cost: pairs, requests, cache hits, failures,
    tokens and cost (None for backends that call no model and had nothing cached)."""
    if not stats or not (stats.get("requests") or stats.get("cache_hits")):
        return None
    parts = [
        f"{stats.get('pairs', 0):,} pairs",
        f"{stats.get('requests', 0):,} requests",
        f"{stats.get('cache_hits', 0):,} from the cache",
    ]
    if stats.get("failures"):
        parts.append(f"{stats['failures']:,} failed")
    parts += _usage(stats)
    name = (signature or "").split("|")[0]
    return f"similarity {name}: " + ", ".join(parts)


def model_line(stats: Mapping[str, Any] | None) -> str | None:
    """One line of what ``--model`` did: records, requests, answers from the cache, failed
    calls, tokens, cost and the median latency (None when the model was not run)."""
    if not stats:
        return None
    parts = [
        f"{stats.get('records', 0):,} records",
        f"{stats.get('requests', 0):,} requests",
        f"{stats.get('cached_answers', 0):,} answers from the cache",
    ]
    if stats.get("failures"):
        parts.append(f"{stats['failures']:,} failed calls")
    parts += _usage(stats)
    latency = stats.get("latency_sec")
    if isinstance(latency, Mapping) and latency.get("p50") is not None:
        parts.append(f"median latency {latency['p50']:.3f} s")
    return f"model {stats.get('model', '')}: " + ", ".join(parts)


def fmt_p(p: float | None) -> str:
    """A p-value for a table: four decimals, ``<0.0001`` below them, empty when missing."""
    if p is None:
        return ""
    if 0 < p < 1e-4 or p == 0:
        return "<0.0001"
    return f"{p:.4f}"
