"""Number formatting shared by the console and markdown reports (results.json is never rounded),
and the one home of a metric's direction mark (↑ higher is better, ↓ lower is better) and its
words, which every page, report and console table shows beside a metric's name."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..results import MetricResult, Signature

__all__ = [
    "BETTER",
    "direction_legend",
    "direction_mark",
    "direction_words",
    "fmt_interval",
    "fmt_number",
    "fmt_p",
    "fmt_value",
    "marked",
    "model_line",
    "similarity_line",
    "stream_tag",
    "stream_words",
]

BETTER = {True: ("↑", "higher is better"), False: ("↓", "lower is better")}
"""A metric's direction (``higher_is_better``) -> its mark and the words that explain it (the
mark's title and aria-label on a page, the legend under a text table). A direction not known (a
results.json or stored run written before it was recorded) has no mark, never a guessed one."""


def direction_mark(higher: bool | None) -> str:
    """``↑`` when a higher value is better, ``↓`` when a lower one is, ``""`` when not known."""
    return "" if higher is None else BETTER[higher][0]


def direction_words(higher: bool | None) -> str:
    """``higher is better``, ``lower is better``, or ``""`` when not known."""
    return "" if higher is None else BETTER[higher][1]


def marked(name: str, higher: bool | None) -> str:
    """A metric's name and its direction mark after a space (the name alone when not known)."""
    mark = direction_mark(higher)
    return f"{name} {mark}" if mark else name


def direction_legend(directions: Iterable[bool | None]) -> str:
    """What the marks among ``directions`` mean, for under a text table: ``↑ higher is better,
    ↓ lower is better`` (only the marks shown; ``""`` when none is)."""
    shown = set(directions)
    return ", ".join(f"{mark} {words}" for key, (mark, words) in BETTER.items() if key in shown)


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


STREAMS = {
    "multinomial-per-block": "per-block multinomial draws",
    "multinomial-indices": "record-index draws",
    "poisson": "Poisson weights",
}
"""The signature's ``resampling`` -> how the reports name the stream the intervals came from."""


def stream_words(signature: Signature) -> str:
    """The resampling stream that made the intervals, in a few words (``per-block multinomial
    draws``, ``record-index draws`` for ``--bootstrap-stream indices`` and every run before it,
    ``Poisson weights``)."""
    return STREAMS.get(_resampling(signature), signature.resampling)


def _resampling(signature: Signature) -> str:
    """The signature's ``resampling``; ``poisson`` for a Poisson run recorded before the field
    was (whose default is the record-index draws)."""
    return "poisson" if signature.bootstrap_method == "poisson" else signature.resampling


def stream_tag(signature: Signature) -> str:
    """What a console table's interval heading adds after the method: the draws that are not
    the default (``, poisson``, ``, indices``), nothing for the per-block draws."""
    return {"poisson": ", poisson", "multinomial-indices": ", indices"}.get(
        _resampling(signature), ""
    )
