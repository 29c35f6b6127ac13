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
from .records import FieldSpec, Table, json_equal_key, load_records
from .results import Failures
from .runner import (
    ProgressHook,
    RunOptions,
    _Evaluator,
    _failures,
    _no_progress,
    _units,
    _value,
    _versions,
)
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
    failures: dict[str, Failures] = Field(
        default_factory=dict,
        description="Per side: parse failures, failed judge calls, records left out.",
    )
    signature: dict[str, Any]


def _load(suite: BuiltSuite, data: Any, side: str) -> Table:
    fields = suite.fields()
    known = {f.path for f in fields}
    for path in [suite.spec.unit, *(suite.spec.match_by or [])]:
        if path is not None and path not in known:
            fields.append(FieldSpec(path, "json", required=True))
            known.add(path)
    table = load_records(data, fields, id_path=suite.spec.id_field)
    if not isinstance(data, str | os.PathLike):
        table.source = f"<{side} records>"  # two lists of dicts: say which is which
    return table


def _has_ids(table: Table) -> bool:
    """Whether every record carried an id (the loader names the others ``line-N``)."""
    return not any(i == f"line-{int(n)}" for i, n in zip(table.ids, table.lines, strict=True))


def _keys(table: Table, suite: BuiltSuite, by_id: bool) -> list[Any]:
    if by_id:
        return list(table.ids)
    columns = [table.column(path) for path in suite.spec.match_by or []]
    return [tuple(json_equal_key(c[i]) for c in columns) for i in range(table.n)]


def _show(key: Any) -> Any:
    return key if isinstance(key, str) else list(key)


def _align(candidate: Table, baseline: Table, suite: BuiltSuite) -> np.ndarray:
    """Indices of the baseline's records in the candidate's order. Records match by id, or by
    the suite's ``match_by`` fields when a side has records without an id; every record must
    have exactly one counterpart, in the same unit."""
    id_field = suite.spec.id_field
    by_id = _has_ids(candidate) and _has_ids(baseline)
    if not by_id and not suite.spec.match_by:
        table = candidate if not _has_ids(candidate) else baseline
        first = next(
            i
            for i, (r, n) in enumerate(zip(table.ids, table.lines, strict=True))
            if r == f"line-{int(n)}"
        )
        raise InputError(
            "pingce compare matches records by id and this record has none: add the id field "
            "to both files (or `match_by:` fields to the suite)",
            source=table.source,
            line=int(table.lines[first]),
            field=id_field,
        )
    what = id_field if by_id else ", ".join(suite.spec.match_by or [])
    keys_c, keys_b = _keys(candidate, suite, by_id), _keys(baseline, suite, by_id)
    where: dict[Any, int] = {}
    for table, keys in ((baseline, keys_b), (candidate, keys_c)):
        seen: dict[Any, int] = {}
        for i, key in enumerate(keys):
            if key in seen:
                raise InputError(
                    f"two records with {what} {_show(key)!r} (also line "
                    f"{int(table.lines[seen[key]])}); a comparison needs one per record",
                    source=table.source,
                    line=int(table.lines[i]),
                    field=what,
                    value=_show(key),
                )
            seen[key] = i
        if table is baseline:
            where = seen
    for i, key in enumerate(keys_c):
        if key not in where:
            raise InputError(
                f"no record with {what} {_show(key)!r} in the baseline {baseline.source}",
                source=candidate.source,
                line=int(candidate.lines[i]),
                field=what,
                value=_show(key),
            )
    if baseline.n != candidate.n:
        ours = set(keys_c)
        extra = next(i for i, key in enumerate(keys_b) if key not in ours)
        raise InputError(
            f"no record with {what} {_show(keys_b[extra])!r} in the candidate {candidate.source}",
            source=baseline.source,
            line=int(baseline.lines[extra]),
            field=what,
            value=_show(keys_b[extra]),
        )
    index = np.asarray([where[key] for key in keys_c], dtype=np.int64)
    unit = suite.spec.unit
    if unit is not None:  # the same record must sit in the same unit on both sides
        units_c, units_b = candidate.column(unit), baseline.column(unit)
        for i, j in enumerate(index):
            if json_equal_key(units_c[i]) != json_equal_key(units_b[j]):
                raise InputError(
                    f"this record is in {unit} {units_c[i]!r} in the candidate "
                    f"({candidate.source}:{int(candidate.lines[i])}) but here in another",
                    source=baseline.source,
                    line=int(baseline.lines[j]),
                    field=unit,
                    value=units_b[j],
                )
    return index


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
    table_c = _load(built, candidate, "candidate")
    loaded_b = _load(built, baseline, "baseline")
    table_b = loaded_b.take(_align(table_c, loaded_b, built))
    sides = {}
    for side, table in (("candidate", table_c), ("baseline", table_b)):
        evaluator = _Evaluator(built, options, progress)
        sides[side] = (evaluator, evaluator.blocks(table))
    evaluator_c, blocks_c = sides["candidate"]
    evaluator_b, blocks_b = sides["baseline"]
    failures = {
        "candidate": _failures(table_c, evaluator_c, blocks_c),
        "baseline": _failures(table_b, evaluator_b, blocks_b),
    }
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
        failures=failures,
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
    for side, failed in result.failures.items():
        counts = {k: v for k, v in failed.model_dump().items() if v}
        if counts:
            shown = ", ".join(f"{k} {v}" for k, v in counts.items())
            console.print(f"[yellow]{side} failures: {shown}[/yellow]")
