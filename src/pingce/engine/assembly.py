"""The one assembly of results: every executor's run (:mod:`.local`, :mod:`.distributed`) ends in
:func:`run_result`, and both comparisons (two record files, :mod:`.compare`; two stored runs,
:mod:`.stored_runs`) in :func:`comparison_result`; the notes every result starts with, the note for
records without ids, the data's description and a slice's result are written here once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._version import __version__
from ..results import (
    ComparisonResult,
    ComparisonSlice,
    DataInfo,
    EvaluationResult,
    Failures,
    MetricComparison,
    MetricResult,
    Signature,
    SliceResult,
)
from ..sampling import SamplingInfo
from .fields import field_map
from .plan import Plan
from .values import null_where_units_split

__all__ = ["comparison_result", "data_info", "id_notes", "run_result", "slice_result"]

Values = tuple[dict[str, MetricResult], dict[str, dict[str, Any]], dict[str, SliceResult]]
"""A run's metrics, tables and slices."""


def id_notes(plan: Plan, with_id: bool, source: str) -> list[str]:
    """A note when no record has the suite's id field (``with_id``: whether any has): not an
    error (a record is then known by its line), but likely a misspelt ``id_field`` or a column
    under another name."""
    if plan.suite.spec.match_by or with_id:
        return []  # a suite with match_by knows its records by those fields
    id_field = plan.suite.spec.id_field
    return [
        f"no record of {source} has the id field {id_field!r}: records are identified by "
        f"their line numbers (set the suite's id_field, or --map {id_field}=COLUMN)"
    ]


def data_info(plan: Plan, source: str, n_loaded: int, encoding: str | None = None) -> DataInfo:
    """What the run read: where, how many records, by which id field and field map."""
    return DataInfo(
        source=source,
        n_loaded=n_loaded,
        id_field=plan.suite.spec.id_field,
        field_map=field_map(plan.suite.spec.fields, plan.options.field_map),
        encoding=encoding,
    )


def slice_result(
    plan: Plan,
    path: str,
    n: int,
    splits_units: bool,
    values: tuple[dict[str, MetricResult], dict[str, dict[str, Any]]],
) -> SliceResult:
    """One slice's result (``splits_units``: the unit-split rule of :mod:`.slices` applies)."""
    metrics, tables = values
    if splits_units:
        null_where_units_split(plan, path, metrics)
    return SliceResult(n_records=n, metrics=metrics, tables=tables)


def run_result(
    plan: Plan,
    values: Values,
    *,
    n_records: int,
    failures: Failures,
    signature: Signature,
    data: DataInfo,
    notes: Sequence[str],
    sampling: SamplingInfo | None = None,
    similarity: dict[str, Any] | None = None,
) -> EvaluationResult:
    """A run's result: its values, counts and description; ``notes`` follow the suite's own."""
    metrics, tables, slices = values
    result = EvaluationResult(
        pingce_version=__version__,
        suite=plan.suite.spec.name,
        n_records=n_records,
        metrics=metrics,
        tables=tables,
        slices=slices,
        failures=failures,
        signature=signature,
        data=data,
        sampling=sampling,
        definitions={name: item.definition for name, item in plan.suite.items().items()},
        notes=[*plan.suite.notes, *notes],
    )
    if similarity is not None:
        result.similarity = similarity
    return result


def comparison_result(
    plan: Plan,
    compared: tuple[dict[str, MetricComparison], dict[str, ComparisonSlice] | None],
    *,
    n_records: int,
    labels: tuple[str, str],
    failures: Mapping[str, Failures],
    signature: Signature,
    notes: Sequence[str],
) -> ComparisonResult:
    """A comparison's result (of two record files or two stored runs); ``labels``: how the
    candidate and the baseline are named; ``notes`` follow the suite's own."""
    from ..decisions import decide

    metrics, slices = compared
    gating = plan.options.gating
    decision = decide(
        metrics,
        slices,
        gating.margin_gates,
        level=plan.options.resampling.level,
        multiplicity=gating.multiplicity,
        resamples=plan.options.resampling.resamples,
    )
    return ComparisonResult(
        pingce_version=__version__,
        suite=plan.suite.spec.name,
        n_records=n_records,
        candidate=labels[0],
        baseline=labels[1],
        metrics=metrics,
        failures=dict(failures),
        signature=signature,
        slices=slices,
        decision=decision,
        notes=[*plan.suite.notes, *notes],
    )
