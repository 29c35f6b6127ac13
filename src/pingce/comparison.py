"""Paired comparison of two systems on the same records: ``pingce compare``.

Both outputs are loaded with the suite's fields and matched by record id (every id must be in
both files). Each side's statistics are computed once; the paired bootstrap then draws the same
records (or, in a suite with ``unit``, the same units) from both sides on every resample, so the
interval of ``candidate - baseline`` reflects only how the systems differ, not how hard the
records are. This is how sacrebleu compares systems (paired bootstrap on summed statistics).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, model_serializer

from ._version import __version__
from .errors import InputError
from .records import FieldSpec, Table, load_records
from .runner import ProgressHook, RunOptions, _Evaluator, _no_progress, _units, _value, _versions
from .stats import paired_intervals
from .suites import load_suite
from .suites.spec import BuiltSuite, SuiteSpec

__all__ = [
    "ComparisonResult",
    "MetricComparison",
    "compare_suite",
    "print_comparison",
    "write_comparison",
]


class MetricComparison(BaseModel):
    """One metric of both systems, their difference and its paired bootstrap interval."""

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

    @model_serializer(mode="wrap")
    def _drop_empty_note(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("note") is None:
            data.pop("note", None)
        return data


class ComparisonResult(BaseModel):
    """The content of comparison.json."""

    pingce_version: str
    suite: str
    n_records: int
    candidate: str
    baseline: str
    metrics: dict[str, MetricComparison]
    signature: dict[str, Any]


def _load(suite: BuiltSuite, data: Any) -> Table:
    fields = suite.fields()
    known = {f.path for f in fields}
    if suite.spec.unit is not None and suite.spec.unit not in known:
        fields.append(FieldSpec(suite.spec.unit, "value", required=False))
    return load_records(data, fields, id_path=suite.spec.id_field)


def _align(candidate: Table, baseline: Table, id_field: str) -> np.ndarray:
    """Indices of the baseline's records in the candidate's order (ids must match one to one;
    the loader has already refused a duplicate id)."""
    where = {record_id: i for i, record_id in enumerate(baseline.ids)}
    for i, record_id in enumerate(candidate.ids):
        if record_id not in where:
            raise InputError(
                f"record id {record_id!r} is not in the baseline {baseline.source}",
                source=candidate.source,
                line=int(candidate.lines[i]),
                field=id_field,
                value=record_id,
            )
    if baseline.n != candidate.n:
        ours = set(candidate.ids)
        extra = next(i for i, r in enumerate(baseline.ids) if r not in ours)
        raise InputError(
            f"record id {baseline.ids[extra]!r} is not in the candidate {candidate.source}",
            source=baseline.source,
            line=int(baseline.lines[extra]),
            field=id_field,
            value=baseline.ids[extra],
        )
    return np.asarray([where[r] for r in candidate.ids], dtype=np.int64)


def compare_suite(
    suite: str | os.PathLike[str] | SuiteSpec | BuiltSuite,
    candidate: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    baseline: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
    options: RunOptions | None = None,
    *,
    progress: ProgressHook | None = None,
) -> ComparisonResult:
    """Compare ``candidate`` with ``baseline`` (two outputs over the same records) on ``suite``.

    Uses ``options``' similarity, bootstrap, seed, ci_method and ci_level; sampling and slices
    do not apply to a comparison.
    """
    options = options or RunOptions()
    options.validate()
    progress = progress or _no_progress
    built = suite if isinstance(suite, BuiltSuite) else load_suite(suite)
    table_c = _load(built, candidate)
    loaded_b = _load(built, baseline)
    table_b = loaded_b.take(_align(table_c, loaded_b, built.spec.id_field))
    sides = {}
    for side, table in (("candidate", table_c), ("baseline", table_b)):
        evaluator = _Evaluator(built, options, progress)
        sides[side] = (evaluator, evaluator.blocks(table))
    evaluator_c, blocks_c = sides["candidate"]
    _, blocks_b = sides["baseline"]
    units = _units(table_c, built.spec.unit)
    resampled_c, resampled_b = dict(blocks_c), dict(blocks_b)
    if units is not None:
        codes, dense = np.unique(units, return_inverse=True)
        resampled_c = {k: b.grouped(dense, len(codes)) for k, b in blocks_c.items()}
        resampled_b = {k: b.grouped(dense, len(codes)) for k, b in blocks_b.items()}

    results: dict[str, MetricComparison] = {}
    deltas: dict[str, float | None] = {}
    for name, metric in built.metrics.items():
        key = evaluator_c.keys[name]
        c, b = _value(metric, blocks_c[key]), _value(metric, blocks_b[key])
        delta = None if c.value is None or b.value is None else c.value - b.value
        deltas[name] = delta
        reasons = [f"{s}: {r.undefined_reason}" for s, r in (("candidate", c), ("baseline", b))]
        results[name] = MetricComparison(
            candidate=c.value,
            baseline=b.value,
            delta=delta,
            n=c.n,
            n_baseline=b.n,
            higher_is_better=metric.higher_is_better,
            note=None
            if delta is not None
            else "; ".join(r for r in reasons if not r.endswith(": None")),
        )
    if options.bootstrap > 0:
        advance = progress("paired bootstrap", float(options.bootstrap))
        intervals = paired_intervals(
            resampled_c,
            resampled_b,
            {name: (m, evaluator_c.keys[name]) for name, m in built.metrics.items()},
            deltas,
            resamples=options.bootstrap,
            seed=options.seed,
            method=options.ci_method,
            level=options.ci_level,
            progress=advance,
        )
        for name, interval in intervals.items():
            results[name] = results[name].model_copy(
                update={
                    "ci_low": interval.low,
                    "ci_high": interval.high,
                    "p_value": interval.p_value,
                    "note": interval.note,
                }
            )
    signature = {
        "seed": options.seed,
        "bootstrap": options.bootstrap,
        "ci_method": options.ci_method,
        "ci_level": options.ci_level,
        "unit": built.spec.unit,
        "similarity": evaluator_c.backend_signature,
        "metrics": {name: item.describe() for name, item in built.metrics.items()},
        "versions": _versions(),
    }
    return ComparisonResult(
        pingce_version=__version__,
        suite=built.spec.name,
        n_records=table_c.n,
        candidate=table_c.source,
        baseline=table_b.source,
        metrics=results,
        signature=signature,
    )


def write_comparison(result: ComparisonResult, out: str | os.PathLike[str]) -> Path:
    """Write comparison.json into ``out`` (atomically: a temporary file, then a rename)."""
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    path = target / "comparison.json"
    temporary = target / ".comparison.json.tmp"
    temporary.write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)
    return path


def print_comparison(result: ComparisonResult, console: Any) -> None:
    """The comparison table: both values, the difference, its interval and p-value."""
    from rich.table import Table as RichTable

    from .report.format import fmt_number

    signature = result.signature
    by = f", by {signature['unit']}" if signature.get("unit") else ""
    title = f"{result.suite}: candidate {result.candidate} vs baseline {result.baseline}, "
    title += f"{result.n_records} records"
    table = RichTable(title=title, title_justify="left")
    for column in ("metric", "candidate", "baseline", "delta"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    head = f"{signature['ci_level']:.0%} CI of delta ({signature['ci_method']}{by})"
    table.add_column(head if signature["bootstrap"] else "CI (off)", justify="right")
    table.add_column("p", justify="right")
    table.add_column("note", overflow="fold", max_width=50)
    for name, m in result.metrics.items():
        delta = fmt_number(m.delta)
        excludes_zero = (
            m.ci_low is not None and m.ci_high is not None and (m.ci_low > 0 or m.ci_high < 0)
        )
        if m.delta is not None and excludes_zero:  # green: better, red: worse
            better = (m.delta > 0) == m.higher_is_better
            delta = f"[{'green' if better else 'red'}]{delta}[/]"
        interval = (
            f"[{fmt_number(m.ci_low)}, {fmt_number(m.ci_high)}]"
            if m.ci_low is not None and m.ci_high is not None
            else ""
        )
        p_value = "" if m.p_value is None else f"{m.p_value:.4f}"
        table.add_row(
            name,
            fmt_number(m.candidate),
            fmt_number(m.baseline),
            delta,
            interval,
            p_value,
            m.note or "",
        )
    console.print(table)
