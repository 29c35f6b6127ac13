"""The result of a run: typed models whose JSON form is exactly ``results.json``.

``pingce.evaluate`` returns an :class:`EvaluationResult`; ``result.model_dump_json()`` is the
content of results.json (see CONTRACT.md). Values are full-precision floats or ``None`` (null)
with an ``undefined_reason``; nothing is rounded here, only in reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from .sampling import SamplingInfo

__all__ = [
    "DataInfo",
    "EvaluationResult",
    "Failures",
    "MetricResult",
    "Signature",
    "SliceResult",
]


class MetricResult(BaseModel):
    """One metric's value, its confidence interval and the units it was computed over."""

    value: float | None = Field(
        description="The metric; null when undefined (see undefined_reason)."
    )
    ci_low: float | None = Field(None, description="Lower end of the bootstrap interval.")
    ci_high: float | None = Field(None, description="Upper end of the bootstrap interval.")
    n: int = Field(description="Units (records, predicted positives, ...) it was computed over.")
    undefined_reason: str | None = Field(None, description="Why the value is null.")
    ci_note: str | None = Field(None, description="Anything to know about the interval.")

    @model_serializer(mode="wrap")
    def _drop_empty_notes(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("undefined_reason", "ci_note"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class SliceResult(BaseModel):
    """Metrics (and tables) over the records whose slice field has one value."""

    n_records: int
    metrics: dict[str, MetricResult]
    tables: dict[str, dict[str, Any]] = {}


class Failures(BaseModel):
    """Failures counted during the run; a failure is never turned into a score.

    ``judge``: similarity calls that failed after retries; ``parse``: records whose prediction
    could not be parsed (scored as wrong). Suites may add counts, such as ``empty_text``: records
    a seed-compatible text score set to 0 because the seed's library raises on them.
    """

    model_config = ConfigDict(extra="allow")

    judge: int = 0
    parse: int = 0


class Signature(BaseModel):
    """Everything needed to reproduce the numbers."""

    model_config = ConfigDict(extra="allow")

    seed: int
    bootstrap: int
    ci_method: str
    ci_level: float
    similarity: str | None
    unit: str | None = None
    """The field whose values the bootstrap resamples (whole dialogues), or None for records."""
    zero_division: float | None
    labels: list[str] | None
    metrics: dict[str, str]
    versions: dict[str, str]


class DataInfo(BaseModel):
    """Where the records came from."""

    source: str
    n_loaded: int
    id_field: str


class EvaluationResult(BaseModel):
    """The whole result of a run (the content of results.json)."""

    pingce_version: str
    suite: str
    n_records: int
    metrics: dict[str, MetricResult]
    tables: dict[str, dict[str, Any]] = {}
    slices: dict[str, SliceResult] = {}
    failures: Failures = Failures()
    signature: Signature
    data: DataInfo
    sampling: SamplingInfo | None = None
    similarity: dict[str, Any] | None = None
    """What the similarity backend did: pairs, requests, cache hits, failures, tokens, cost,
    latency (present when a metric needed similarities)."""
    definitions: dict[str, str] = {}

    _records: Any = PrivateAttr(default=None)

    def value(self, name: str) -> float | None:
        """Shortcut: the value of metric ``name``."""
        return self.metrics[name].value

    def record_values(self) -> list[dict[str, Any]]:
        """Per-record values and miss reasons (what records.jsonl holds), as dictionaries."""
        return list(self.record_values_iter())

    def record_values_iter(self) -> Iterator[dict[str, Any]]:
        """The rows of records.jsonl, one at a time."""
        if self._records is None:
            return iter(())
        rows: Iterator[dict[str, Any]] = self._records.iter_rows()
        return rows

    def to_json(self) -> str:
        """results.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)
