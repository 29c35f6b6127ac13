"""The results of a run and of a comparison: plain data that reports only read.

``pingce.evaluate`` returns an :class:`EvaluationResult`; ``result.model_dump_json()`` is the
content of results.json (see CONTRACT.md). Values are full-precision floats or ``None`` (null)
with an ``undefined_reason``; nothing is rounded here, only in reports. The per-record values
and miss reasons (records.jsonl) are :class:`RecordRows`: arrays made by the engine in its one
pass over the statistics, never a callback into the metrics. ``pingce.compare`` returns a
:class:`ComparisonResult` (comparison.json).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
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
    "ComparisonResult",
    "DataInfo",
    "EvaluationResult",
    "Failures",
    "MetricComparison",
    "MetricResult",
    "RecordRows",
    "Signature",
    "SliceResult",
]


class _Plain(BaseModel):
    """A result model whose keys in ``OMIT_WHEN_NONE`` are left out of its JSON when None."""

    OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in self.OMIT_WHEN_NONE:
            if data.get(key) is None:
                data.pop(key, None)
        return data


class MetricResult(_Plain):
    """One metric's value, its confidence interval and the units it was computed over."""

    OMIT_WHEN_NONE = ("undefined_reason", "value_note", "ci_note")

    value: float | None = Field(
        description="The metric; null when undefined (see undefined_reason)."
    )
    ci_low: float | None = Field(None, description="Lower end of the bootstrap interval.")
    ci_high: float | None = Field(None, description="Upper end of the bootstrap interval.")
    n: int = Field(description="Units (records, predicted positives, ...) it was computed over.")
    undefined_reason: str | None = Field(None, description="Why the value is null.")
    value_note: str | None = Field(
        None,
        description="Where the value comes from a convention rather than the data (a 0/0 "
        "filled by the zero-division policy).",
    )
    ci_note: str | None = Field(None, description="Anything to know about the interval.")

    def note(self) -> str:
        """The one remark a report shows beside the value (empty when there is none)."""
        return self.undefined_reason or self.value_note or self.ci_note or ""


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


@dataclass
class RecordRows:
    """Per-record values and miss reasons, by column (what records.jsonl holds).

    ``ids`` are the records' ids (None for a record without one), ``lines`` their line numbers,
    ``fields`` the values of the fields the suite read (labels as their names), ``values`` one
    float array per metric (NaN where undefined) and ``misses`` one object array per metric (the
    reason a record missed, None where it did not or nothing is known)."""

    ids: list[str | None]
    lines: np.ndarray
    fields: dict[str, Any] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    misses: dict[str, np.ndarray] = field(default_factory=dict)

    CHUNK = 65536

    @property
    def n(self) -> int:
        """Number of records."""
        return len(self.ids)

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """One dictionary per record: id, line, the fields read, values and miss reasons; made a
        chunk at a time, so a million records never sit in memory as a million dictionaries."""
        for start in range(0, self.n, self.CHUNK):
            stop = min(start + self.CHUNK, self.n)
            fields = [(path, _plain(column[start:stop])) for path, column in self.fields.items()]
            values = [(name, _plain(column[start:stop])) for name, column in self.values.items()]
            misses = [(name, column[start:stop]) for name, column in self.misses.items()]
            ids, lines = self.ids[start:stop], self.lines[start:stop].tolist()
            for i in range(stop - start):
                row: dict[str, Any] = {
                    "id": ids[i],
                    "line": lines[i],
                    "fields": {path: column[i] for path, column in fields},
                    "values": {name: column[i] for name, column in values},
                }
                missed = {name: column[i] for name, column in misses if column[i] is not None}
                if missed:
                    row["misses"] = missed
                yield row


def _plain(values: Any) -> list[Any]:
    """A column as a list: numeric arrays with NaN as None, object arrays as they are."""
    if not isinstance(values, np.ndarray):
        return list(values)
    out: list[Any] = values.tolist()
    if values.dtype.kind == "f":
        for i in np.flatnonzero(np.isnan(values)):
            out[i] = None
    return out


class EvaluationResult(_Plain):
    """The whole result of a run (the content of results.json)."""

    OMIT_WHEN_NONE = ("profile",)

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
    notes: list[str] = Field(
        default_factory=list, description="Things to know about this run (deprecated names...)."
    )
    profile: dict[str, float] | None = Field(
        None, description="Seconds spent in each phase of the run (with --profile)."
    )

    _records: RecordRows | None = PrivateAttr(default=None)

    def value(self, name: str) -> float | None:
        """Shortcut: the value of metric ``name``."""
        return self.metrics[name].value

    def attach_records(self, rows: RecordRows) -> None:
        """Attach the per-record values and reasons (the engine does, once per run)."""
        self._records = rows

    @property
    def records(self) -> RecordRows | None:
        """Per-record values and miss reasons, by column (None for a result read from JSON)."""
        return self._records

    def record_values(self) -> list[dict[str, Any]]:
        """Per-record values and miss reasons (what records.jsonl holds), as dictionaries."""
        return list(self.record_values_iter())

    def record_values_iter(self) -> Iterator[dict[str, Any]]:
        """The rows of records.jsonl, one at a time."""
        if self._records is None:
            return iter(())
        return self._records.iter_rows()

    def to_json(self) -> str:
        """results.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)


class MetricComparison(_Plain):
    """One metric of both systems, their difference and its paired bootstrap interval."""

    OMIT_WHEN_NONE = ("note",)

    candidate: float | None = Field(description="The candidate's value (null when undefined).")
    baseline: float | None = Field(description="The baseline's value (null when undefined).")
    delta: float | None = Field(description="candidate - baseline; null if either is.")
    ci_low: float | None = Field(None, description="Lower end of the interval of delta.")
    ci_high: float | None = Field(None, description="Upper end of the interval of delta.")
    p_value: float | None = Field(
        None, description="Two-sided paired bootstrap p-value of 'no difference'."
    )
    n: int = Field(description="Units the candidate's value was computed over.")
    n_baseline: int = Field(description="Units the baseline's value was computed over.")
    higher_is_better: bool = True
    note: str | None = Field(None, description="Why a value is null, or about the interval.")


class ComparisonResult(_Plain):
    """The content of comparison.json."""

    OMIT_WHEN_NONE = ("profile",)

    pingce_version: str
    suite: str
    n_records: int
    candidate: str
    baseline: str
    metrics: dict[str, MetricComparison]
    failures: dict[str, Failures] = Field(
        default_factory=dict,
        description="Per side: parse failures, failed judge calls, records left out.",
    )
    signature: Signature
    notes: list[str] = Field(default_factory=list)
    profile: dict[str, float] | None = None

    def to_json(self) -> str:
        """comparison.json text: indented, UTF-8 characters kept as they are."""
        return self.model_dump_json(indent=2)
