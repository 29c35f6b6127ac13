"""From statistic blocks to results: corpus values, tables, per-record values and reasons, and
the failures counted on the way. Every function here reads blocks; none recomputes a statistic.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from ..metrics.protocol import LEFT_OUT, Metric, StatBlock
from ..records import FieldSpec, ParseFailure, Table
from ..results import Failures, MetricResult, RecordRows
from .plan import Plan, StatBlocks
from .slices import unit_split_reason

if TYPE_CHECKING:
    from ..stats import Interval

__all__ = [
    "block_totals",
    "count_failures",
    "finalised_number",
    "finalised_numbers",
    "invalid_predictions",
    "left_out_records",
    "metric_result",
    "metric_results",
    "model_failed_records",
    "null_where_units_split",
    "policed_result",
    "record_rows",
    "statistic_notes",
    "table_results",
    "unparsed_rows",
    "with_failed_records",
    "with_intervals",
]

_OVERFLOW = (
    "not a finite number: the records' values add up beyond the largest 64-bit float (about "
    "1.8e308)"
)
"""Why a value is null when its finaliser gave an infinity: the summed statistics overflowed
(latencies near 1e308), and an infinity is no more a value than 0/0 is."""


def metric_result(
    metric: Metric, block: StatBlock, summed: np.ndarray | None = None
) -> MetricResult:
    """A metric's value on a block, with n and the reason when undefined, and a note when the
    zero-division policy made the value (or a part of it) instead of the data (``summed``: the
    block's :meth:`~StatBlock.total`, when the caller has it)."""
    note = None
    if metric.decomposable:
        summed = block.total() if summed is None else summed
        value = float(metric.finalize(summed[None, :])[0])
        n = round(float(metric.count(summed[None, :])[0]))
        reason = metric.undefined_reason(summed) if math.isnan(value) else None
        policy = getattr(metric, "zero_division", None)  # only ratio metrics have one
        if policy is not None and not math.isnan(value) and metric.filled_by_policy(summed):
            note = f"{metric.undefined_reason(summed)}: {value:g} by the zero-division policy"
        if not math.isnan(value):
            value, reported = metric.reported_value(block, value)
            note = "; ".join(x for x in (note, reported) if x) or None
    else:
        assert block.rows is not None
        value = metric.finalize_rows(block.rows)
        n = metric.count_rows(block.rows)
        reason = metric.undefined_rows_reason(block.rows) if math.isnan(value) else None
    if math.isinf(value):
        value, reason = math.nan, _OVERFLOW
    return MetricResult(
        value=None if math.isnan(value) else value,
        n=n,
        undefined_reason=reason,
        value_note=note,
        higher_is_better=metric.higher_is_better,
    )


def finalised_number(
    metric: Metric, block: StatBlock, value: float | None, summed: np.ndarray | None = None
) -> float | None:
    """The value that intervals and tests resample around: the finaliser of the block's summed
    statistics, before :meth:`Metric.reported_value` may replace it for the report (the exact
    mean, where ``aggregate: bootstrap`` reports rouge-score's bootstrap mid); None when the
    reported ``value`` is None (undefined, or withheld by the judge-failure policy)."""
    if value is None or not metric.decomposable:
        return value
    summed = block.total() if summed is None else summed
    finalised = float(metric.finalize(summed[None, :])[0])
    return finalised if math.isfinite(finalised) else None


def finalised_numbers(
    plan: Plan, blocks: StatBlocks, results: Mapping[str, MetricResult]
) -> dict[str, float | None]:
    """Each metric's :func:`finalised_number` over ``blocks`` (``results``: their values)."""
    totals = block_totals(plan, blocks)
    return {
        name: finalised_number(
            plan.metrics[name], blocks[plan.keys[name]], r.value, totals.get(plan.keys[name])
        )
        for name, r in results.items()
    }


def block_totals(plan: Plan, blocks: StatBlocks) -> dict[object, np.ndarray]:
    """Each decomposable block's :meth:`~StatBlock.total`, summed once however many metrics
    read it (the evidence block: a million rows of ten columns, read by five metrics)."""
    keys = {plan.keys[name] for name in plan.metrics}
    return {key: blocks[key].total() for key in keys if blocks[key].decomposable}


def with_intervals(
    results: dict[str, MetricResult], intervals: Mapping[str, Interval]
) -> dict[str, MetricResult]:
    """The values with their intervals (in place, and returned)."""
    for name, interval in intervals.items():
        results[name] = results[name].model_copy(
            update={"ci_low": interval.low, "ci_high": interval.high, "ci_note": interval.note}
        )
    return results


def metric_results(plan: Plan, blocks: StatBlocks) -> dict[str, MetricResult]:
    """Every metric's value over the blocks' records, under the run's judge-failure policy."""
    policy = plan.options.on_judge_failure
    totals = block_totals(plan, blocks)
    return {
        name: policed_result(metric, blocks[key], policy, totals.get(key))
        for name, metric in plan.metrics.items()
        for key in (plan.keys[name],)
    }


def policed_result(
    metric: Metric, block: StatBlock, policy: str, summed: np.ndarray | None = None
) -> MetricResult:
    """:func:`metric_result` under the judge-failure policy (``--on-judge-failure``), with the
    records the metric covers, those it was computed over and those whose prediction did not
    parse (scored as wrong)."""
    result = metric_result(metric, block, summed)
    covered = block.covered()
    failed = left_out_records(block)
    if failed:
        model = model_failed_records(block)
        graded = "judge_failed_records" in block.counts  # a judged metric: no grade
        result = with_failed_records(result, failed, covered, policy, model=model, graded=graded)
    unparsed = block.unparsed_covered()
    return result.model_copy(
        update={
            "n_records": covered,
            "n_scored": covered - failed,
            "unparsed_records": unparsed or None,
        }
    )


def left_out_records(block: StatBlock) -> int:
    """Records the block's statistic left out after failed similarity calls."""
    return block.left_out_count()


def model_failed_records(block: StatBlock) -> int:
    """Records the block's statistic left out because the model under test gave no answer."""
    return block.model_failed_count()


def with_failed_records(
    result: MetricResult,
    failed: int,
    total: int,
    policy: str,
    *,
    model: int = 0,
    graded: bool = False,
) -> MetricResult:
    """The judge-failure policy on one value: ``null`` (the default) makes the value null with
    the count in words; ``skip`` keeps the value over the other records, with a note. Either
    way the count is in ``failed_records`` (and, of them, those whose call to the model under
    test failed in ``model_failed_records``); a failure is never a score."""
    parts = []
    if model:
        parts.append(f"{model} of {total} records had failed model calls")
    if failed - model:
        calls = "no grade from a judge" if graded else "failed similarity calls"
        parts.append(f"{failed - model} of {total} records had {calls}")
    said = "; ".join(parts)
    if policy == "skip":
        note = f"{said}, left out (--on-judge-failure skip)"
        if result.value_note:
            note = f"{note}; {result.value_note}"
        return result.model_copy(
            update={
                "failed_records": failed,
                "model_failed_records": model or None,
                "value_note": note,
            }
        )
    return MetricResult(
        value=None,
        n=result.n,
        undefined_reason=f"{said} (--on-judge-failure skip computes it over the others)",
        failed_records=failed,
        model_failed_records=model or None,
        higher_is_better=result.higher_is_better,
    )


def null_where_units_split(plan: Plan, path: str, metrics: dict[str, MetricResult]) -> None:
    """A slice by ``path``, a field that varies within units: the metrics that read a unit as a
    whole (a dialogue's slope) get no value there, rather than a misleading one (in place)."""
    for name in plan.metrics:
        reason = unit_split_reason(plan, name=name, path=path)
        if reason is not None:
            metrics[name] = MetricResult(
                value=None,
                n=0,
                undefined_reason=reason,
                higher_is_better=plan.metrics[name].higher_is_better,
            )


def table_results(plan: Plan, blocks: StatBlocks) -> dict[str, dict[str, object]]:
    """Every table metric over the blocks' records."""
    return {name: t.build(blocks[plan.keys[name]].total()) for name, t in plan.tables.items()}


def per_record_finalised(metric: Metric, block: StatBlock) -> np.ndarray:
    """The metric on each record alone: its finaliser over the record's own statistics, and
    null for a record the metric does not count (a judge record for a set metric, a record
    predicted No for precision, a record left out after a failed call), whatever the
    zero-division policy: the policy fills corpus and slice values, it invents no record's."""
    if block.codes is not None:  # one finalisation per cell, looked up by code
        cells = np.eye(block.width)
        per_cell = np.asarray(metric.finalize(cells), dtype=np.float64)
        per_cell[np.asarray(metric.count(cells)) == 0] = np.nan
        return np.asarray(per_cell[block.codes], dtype=np.float64)
    assert block.rows is not None
    rows = np.asarray(block.rows, dtype=np.float64)
    if rows.ndim == 2 and rows.shape[0] > 1 and rows.strides[0] == 0:  # the same row for all
        return np.broadcast_to(per_record_finalised(metric, replace(block, rows=rows[:1])), block.n)
    values = np.asarray(metric.finalize(rows), dtype=np.float64)
    values[np.asarray(metric.count(rows)) == 0] = np.nan
    return values


def worse_than_best(metric: Metric, values: np.ndarray) -> np.ndarray:
    """Where a record's value is below the best (above it for lower-is-better metrics)."""
    with np.errstate(invalid="ignore"):
        return values < metric.best if metric.higher_is_better else values > metric.best


def record_rows(plan: Plan, table: Table, blocks: StatBlocks) -> RecordRows:
    """Per-record values of every metric that has one, and the reason each record missed."""
    values: dict[str, np.ndarray] = {}
    misses: dict[str, np.ndarray] = {}
    for name, metric in plan.metrics.items():
        if not (metric.per_record and metric.decomposable):
            continue
        block = blocks[plan.keys[name]]
        column = _one_value_for_all(per_record_finalised(metric, block))
        values[name] = column
        reasons = block.reasons.get(metric.reason) if metric.reason else None
        left_out = block.reasons.get(LEFT_OUT)
        if reasons is not None or left_out is not None:
            explained = np.empty(table.n, dtype=object)
            if reasons is not None:  # why a record scored below the best
                worse = worse_than_best(metric, column)
                if left_out is None and not (reasons[~worse] != None).any():  # noqa: E711
                    misses[name] = reasons  # explains exactly the misses: shared, not copied
                    continue
                explained[worse] = reasons[worse]
            if left_out is not None:  # why a record has no value at all
                gone = np.isnan(column) & (left_out != None)  # noqa: E711  (object array)
                explained[gone] = left_out[gone]
            if (explained != None).any():  # noqa: E711  (object array)
                misses[name] = explained
    fields: dict[str, object] = {}
    context: dict[str, list[Any]] = {}
    hidden = {spec.path for spec in plan.fields if not spec.echo}
    shown = {spec.path for spec in plan.fields if spec.context}
    for path, column in table.columns.items():
        if path in hidden or _absent_everywhere(column):
            continue
        if path in shown:
            context[path] = column
            continue
        scale = plan.label_scales.get(path)
        if scale is not None:  # a prediction off the scale: (invalid)
            fields[path] = np.asarray(scale.names(np.arange(scale.k + 1)), dtype=object)[
                np.asarray(column, np.int64)
            ]
        else:
            fields[path] = column
    return RecordRows(table.ids, table.lines, fields, values, misses, context)


def _one_value_for_all(column: np.ndarray) -> np.ndarray:
    """``column`` as one value broadcast (a read-only view) when every record has the same, such
    as null on every record for a rate of evidence that no record cited: what records.jsonl
    writes is unchanged, the memory per record is gone."""
    if column.ndim != 1 or column.size < 2 or column.strides[0] == 0:
        return column
    first = column[0]
    same = np.isnan(column).all() if np.isnan(first) else (column == first).all()
    return np.broadcast_to(column[:1].copy(), column.shape) if same else column


def _absent_everywhere(column: object) -> bool:
    """Whether a column of Python values holds no value at all (a field no record has, such as
    BFCL's ``ground_truth`` beside pingce's ``gold``): nothing worth repeating on every line."""
    # (mapped in C: no Python step per value)
    return (
        isinstance(column, list)
        and bool(column)
        and not any(map(operator.is_not, column, repeat(None)))
    )


def unparsed_rows(table: Table, specs: Iterable[FieldSpec]) -> np.ndarray | None:
    """Which records have a value of a lenient field in ``specs`` that its parser rejected (a
    prediction that did not parse); None when no record has one."""
    failed = np.zeros(table.n, dtype=bool)
    lenient = {spec.path for spec in specs if spec.lenient and spec.kind == "json"}
    for path in lenient & set(table.columns):
        failed |= table.derived(("unparsed", path), partial(_unparsed, table, path))
    return failed if failed.any() else None


def _unparsed(table: Table, path: str) -> np.ndarray:
    column = table.column(path)
    return np.fromiter((isinstance(v, ParseFailure) for v in column), bool, table.n)


def parse_failures(table: Table) -> int:
    """Records with a value that its parser rejected (a prediction that did not parse)."""
    failed = unparsed_rows(table, table.specs.values())
    return 0 if failed is None else int(failed.sum())


def invalid_predictions(table: Table) -> int | None:
    """Records with a prediction off its label scale, blank or null (code ``k`` of a lenient
    label field: scored as wrong); None when the table has no such field."""
    paths = [
        spec.path
        for spec in table.specs.values()
        if spec.kind == "label" and spec.lenient and spec.scale is not None
    ]
    if not paths:
        return None
    invalid = np.zeros(table.n, dtype=bool)
    for path in paths:
        scale = table.specs[path].scale
        assert scale is not None
        invalid |= np.asarray(table.column(path)) == scale.k
    return int(invalid.sum())


def statistic_notes(blocks: Iterable[StatBlocks]) -> list[str]:
    """The notes of every block (of one run, or of both sides of a comparison), each once."""
    return list(dict.fromkeys(note for group in blocks for b in group.values() for note in b.notes))


def count_failures(table: Table, blocks: StatBlocks, judge: int) -> Failures:
    """Parse failures, failed similarity pairs, predictions off their label scale (a count
    that suites with a label scale always show) and the events the statistics counted."""
    failures = Failures(parse=parse_failures(table), judge=judge)
    invalid = invalid_predictions(table)
    if invalid is not None:
        failures.invalid_prediction = invalid  # type: ignore[attr-defined]  # an extra count
    for block in blocks.values():
        for name, count in block.counts.items():
            setattr(failures, name, getattr(failures, name, 0) + count)
    return failures
