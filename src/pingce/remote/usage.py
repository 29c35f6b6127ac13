"""What calls to a model server cost and how they went, for every client of one (the similarity
backends, the model under test): :class:`BackendStats` (requests, retries, failures by reason,
cache hits, tokens, cost, latency; reported in results.json), the token counts of an answer's
``usage`` and their cost at the prices per 1,000 tokens (:func:`charge_usage`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..progress import Advance, show_note

__all__ = ["BackendStats", "answer_record", "charge_usage", "noting", "token_count"]


@dataclass
class BackendStats:
    """What a backend did in a run: reported in results.json under ``similarity``."""

    pairs: int = 0
    """Distinct pairs asked for."""
    requests: int = 0
    """Calls that went to a model or server (retries included)."""
    cache_hits: int = 0
    failures: int = 0
    """Pairs without a score after all retries."""
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_sec: list[float] = field(default_factory=list)
    encoded_texts: int = 0
    """Embedding backends: distinct texts encoded."""
    failure_reasons: dict[str, int] = field(default_factory=dict)
    cache_errors: int = 0
    """Cache writes that failed (retried at the next flush; scores stay in memory, but a rerun
    may ask those pairs again)."""

    last_error: str | None = None
    """The reason of the last failed attempt (kept for the progress line, not reported)."""
    watch: Callable[[BackendStats], None] | None = None
    """Called after each failed attempt or pair (the progress line shows the counts)."""

    def fail(self, reason: str) -> None:
        """Count a pair that failed, by reason."""
        self.failures += 1
        self.failure_reasons[reason] = self.failure_reasons.get(reason, 0) + 1
        self.last_error = reason
        if self.watch is not None:
            self.watch(self)

    def retry(self, reason: str) -> None:
        """Count an attempt that failed and will be tried again."""
        self.retries += 1
        self.last_error = reason
        if self.watch is not None:
            self.watch(self)

    def trouble(self) -> str:
        """The failures so far in words, for the progress line."""
        parts = []
        if self.failures:
            parts.append(f"{self.failures:,} failed")
        if self.retries:
            parts.append(f"{self.retries:,} retried")
        return ", ".join(parts) + (f"; last error: {self.last_error}" if self.last_error else "")

    def summary(self) -> dict[str, Any]:
        """JSON-ready summary (latency as mean and percentiles)."""
        latency = np.asarray(self.latency_sec, dtype=np.float64)
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "failures": self.failures,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": self.cost,
        }
        if self.encoded_texts:
            out["encoded_texts"] = self.encoded_texts
        if latency.size:
            out["latency_sec"] = {
                "mean": float(latency.mean()),
                "p50": float(np.percentile(latency, 50)),
                "p95": float(np.percentile(latency, 95)),
                "max": float(latency.max()),
            }
        if self.failure_reasons:
            out["failure_reasons"] = dict(sorted(self.failure_reasons.items()))
        if self.cache_errors:
            out["cache_errors"] = self.cache_errors
        return out


def noting(progress: Advance, every: float = 0.1) -> Callable[[BackendStats], None]:
    """A watcher that shows the failures on the progress line: at most every ``every`` s for
    retries, and always when a pair has failed for good (so the count shown is never stale)."""
    shown = [-math.inf, 0.0]  # when, and the failures counted then

    def watch(stats: BackendStats) -> None:
        now = time.monotonic()
        if now - shown[0] >= every or stats.failures != shown[1]:
            shown[0], shown[1] = now, stats.failures
            show_note(progress, stats.trouble())

    return watch


def token_count(value: Any) -> int:
    """A token count from a usage field; anything that is not a whole number counts 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return max(0, value)
    if isinstance(value, float) and value.is_integer():
        return max(0, int(value))
    return 0


def charge_usage(
    payload: Any, stats: BackendStats, price_prompt: float, price_completion: float
) -> tuple[int, int]:
    """The prompt and completion tokens of a chat completion's ``usage`` (0 where it has none),
    added to ``stats`` with their cost at the prices per 1,000 tokens."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    usage = usage if isinstance(usage, dict) else {}
    pt = token_count(usage.get("prompt_tokens"))
    ct = token_count(usage.get("completion_tokens"))
    stats.prompt_tokens += pt
    stats.completion_tokens += ct
    stats.cost += pt / 1000 * price_prompt + ct / 1000 * price_completion
    return pt, ct


def answer_record(
    content: str, tokens: tuple[int, int], seconds: float, prices: tuple[float, float]
) -> dict[str, Any]:
    """One answer as records.jsonl keeps it (the similarity judge's pairs, the judged metrics'
    grades): its text, tokens (a count of 0, no usage in the response, left out), seconds, and
    its cost where a price is set."""
    answer: dict[str, Any] = {"answer": content}
    for key, count in zip(("prompt_tokens", "completion_tokens"), tokens, strict=True):
        if count:
            answer[key] = count
    answer["latency_sec"] = round(seconds, 6)
    if any(prices) and any(tokens):
        answer["cost"] = tokens[0] / 1000 * prices[0] + tokens[1] / 1000 * prices[1]
    return answer
